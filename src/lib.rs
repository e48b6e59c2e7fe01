//! hullward: kernel-enforced sandboxing and middleware for an AI agent's tool calls.
//!
//! The layers, in the order a call passes them (see `docs/architecture.md`):
//! [`policy`] loads one immutable `Policy`; [`guard`] decides requests before anything runs;
//! [`supervisor`] runs an allowed call: [`sandbox`] confines it at the kernel, [`filter`] masks
//! what it prints, [`proxy`] is its only way out with `--net proxy`, [`audit`] records it;
//! [`serve`] runs calls sent over a Unix socket, [`mcp`] the same calls for MCP clients; [`cli`] wires the commands of the contract to them.

// Module documentation explains the order in which private modules are used and links to them;
// read it with `cargo doc --document-private-items`.
#![allow(rustdoc::private_intra_doc_links)]

pub mod audit;
pub mod cli;
pub mod crashdump;
pub mod error;
pub mod filter;
pub mod guard;
pub mod mcp;
pub mod pipe;
pub mod policy;
pub mod proxy;
pub mod sandbox;
pub mod serve;
pub mod supervisor;
pub mod workspace;

pub use error::Error;
