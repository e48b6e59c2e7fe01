//! The output middleware: what a child prints reaches the agent only after every secret value is
//! masked.
//!
//! Order of use, per call: [`SecretSet::discover`] (or [`SecretCache`] in a long-lived process)
//! finds the values to mask and compiles them; each output stream then gets a [`mask::Masker`].
//!
//! The modules: [`names`] (which names hold secrets), [`extract`] (which values inside a file
//! are secrets), [`secrets`] (discovery and the cache), [`mask`] (streaming masking).

pub mod extract;
pub mod mask;
pub mod names;
pub mod secrets;

pub use secrets::{FileSecrets, SecretCache, SecretSet};
