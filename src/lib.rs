//! hullward: kernel-enforced sandboxing and middleware for an AI agent's tool calls.
//!
//! The layers, in the order a call passes them (see `docs/architecture.md`):
//! [`policy`] loads one immutable `Policy`; [`guard`] decides requests before anything runs;
//! [`proxy`] is the egress proxy of `--net proxy`; [`cli`] wires the commands of the contract
//! to them.

pub mod audit;
pub mod cli;
pub mod error;
pub mod filter;
pub mod guard;
pub mod policy;
pub mod proxy;
pub mod sandbox;
pub mod supervisor;

pub use error::Error;
