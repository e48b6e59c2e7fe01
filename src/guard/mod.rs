//! The guards: pure decisions on a request, before anything runs.
//!
//! Each guard takes the [`Policy`](crate::policy::Policy) and one request — a file operation
//! ([`path`]), an outbound URL ([`url`]), a shell command string ([`shell`]) — and returns a
//! [`Decision`]. Guards do no I/O beyond canonicalising paths; they never run anything. The first
//! rule that fires names the decision (`rule`), and a denial carries the contract's `[DENIED]` text.

pub mod ip;
pub mod path;
pub mod shell;
pub mod url;

use serde::Serialize;

/// What a guard says about a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Allow,
    Deny,
    /// A human could grant it (HITL); without one it is a denial.
    Ask,
}

/// A verdict, the rule that produced it, and the message shown to the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    pub verdict: Verdict,
    pub rule: String,
    /// The `[DENIED]` text, the approval prompt for `ask`, or empty when allowed.
    pub message: String,
}

impl Decision {
    pub fn allow(rule: &str) -> Decision {
        Decision { verdict: Verdict::Allow, rule: rule.to_string(), message: String::new() }
    }

    pub fn deny(rule: &str, message: String) -> Decision {
        Decision { verdict: Verdict::Deny, rule: rule.to_string(), message }
    }

    pub fn ask(rule: &str, message: String) -> Decision {
        Decision { verdict: Verdict::Ask, rule: rule.to_string(), message }
    }

    pub fn is_allowed(&self) -> bool {
        self.verdict == Verdict::Allow
    }
}
