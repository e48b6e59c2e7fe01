//! The front end of a call: who approves it, where its events and output go, and what may end it
//! early. The engine ([`super::run`]) knows nothing of terminals or sockets; the CLI (`run`/`sh`)
//! and the supervisor daemon (`serve`) each implement [`Front`].
//!
//! Order of use within one call: [`Front::approve`] (once, before anything is planned) →
//! [`Front::say`]/[`Front::event`] (notices, `start`, `egress`, `protected-change`, at most one
//! `exit`) → [`Front::sink`] (twice, inside the call's runtime: stdout, stderr) and
//! [`Front::stop`] (once, inside the call's runtime).

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

use super::approval::Approval;
use super::pump::Sink;
use crate::policy::Policy;

/// One of the child's output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stream {
    Stdout,
    Stderr,
}

/// Why a call must end before its program does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// The caller cancelled it (exit code 130, reason `cancelled`).
    Cancelled,
    /// The supervisor received this signal (exit code 128+N, reason `signal`).
    Signal(i32),
}

/// A future that resolves when the call must stop.
pub type StopFuture<'a> = Pin<Box<dyn Future<Output = Stop> + Send + 'a>>;

/// What a call's front end provides to the engine.
pub trait Front: Sync {
    /// Decides whether the call may run. `needed` is true when the guard or HITL asks a human;
    /// a front end may refuse a call that needs no human too (the daemon's unattended policy).
    fn approve(&self, policy: &Policy, what: &str, needed: bool) -> Approval;
    /// A message for the human (a `[DENIED]` text, a warning, a note).
    fn say(&self, text: &str);
    /// A structured event: a JSON object whose `event` field names it.
    fn event(&self, event: Value);
    /// Where the child's filtered `stream` goes (called inside the call's runtime).
    fn sink(&self, stream: Stream) -> Sink;
    /// Resolves when the call must end early (called inside the call's runtime).
    fn stop(&self) -> StopFuture<'_>;
}
