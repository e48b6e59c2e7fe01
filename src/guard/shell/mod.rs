//! The shell guard's front end: normalisation, the POSIX shell parser, and the analysis that
//! finds every program a command string may start.
//!
//! [`analysis::analyse`] parses the command as written ([`parser`], [`lexer`], into the tree of
//! [`ast`]), looks through wrappers and runners ([`invocation`]) and re-parses the shell code
//! handed to `sh -c`, `eval` and friends. [`normalize`] folds text for the substring matchers.

pub mod analysis;
pub mod ast;
pub mod error;
pub mod invocation;
mod lexer;
pub mod normalize;
pub mod parser;

pub use error::ParseError;
pub use parser::parse;
