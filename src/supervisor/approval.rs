//! Human-in-the-loop approval for a call, on the controlling terminal.
//!
//! With HITL on, every call asks `Allow? (y/N)` on `/dev/tty` (not stdin, which belongs to the
//! program). When no terminal can be opened, nobody is attached: `Unattended` decides (`deny` by
//! default). A deny rule never reaches this point — approval only widens what a human may widen.

use std::io::{BufRead, BufReader, Write};

use crate::policy::{Policy, Unattended};

/// The outcome of asking.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    Granted,
    /// Refused: the rule that refused (`approval`, `unattended`) and the `[DENIED]` text.
    Refused {
        rule: &'static str,
        message: String,
    },
    /// The caller cancelled the call while it waited for an answer: it ends as cancelled (130),
    /// not as denied.
    Cancelled,
}

impl Approval {
    /// The refusal of a call nobody approved.
    pub fn not_approved() -> Approval {
        Approval::Refused { rule: "approval", message: "[DENIED] The call was not approved.".into() }
    }
}

/// Asks the human at the terminal whether `what` may run.
pub fn ask(policy: &Policy, what: &str) -> Approval {
    if !policy.session.hitl {
        return Approval::Granted;
    }
    match ask_terminal(what) {
        Some(true) => Approval::Granted,
        Some(false) => Approval::not_approved(),
        None => match policy.sandbox.unattended {
            Unattended::Allow => Approval::Granted,
            Unattended::Deny => Approval::Refused {
                rule: "approval",
                message: "[DENIED] This call needs approval (HITL is on) but no human is attached; the unattended policy is deny."
                    .into(),
            },
        },
    }
}

/// Shows `what` on `/dev/tty` and reads the answer: `None` when no terminal can be opened (or the
/// prompt cannot be shown), else whether the human typed yes.
pub fn ask_terminal(what: &str) -> Option<bool> {
    let mut tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty").ok()?;
    write!(tty, "\u{23f8} Run requested:\n  {what}\nAllow? (y/N): ").and_then(|_| tty.flush()).ok()?;
    let mut answer = String::new();
    let _ = BufReader::new(&mut tty).read_line(&mut answer);
    Some(matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes"))
}
