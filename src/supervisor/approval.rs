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
    /// Refused, with the `[DENIED]` text.
    Refused(String),
}

/// Asks the human at the terminal whether `what` may run.
pub fn ask(policy: &Policy, what: &str) -> Approval {
    if !policy.session.hitl {
        return Approval::Granted;
    }
    let tty = std::fs::OpenOptions::new().read(true).write(true).open("/dev/tty");
    let Ok(mut tty) = tty else {
        return match policy.sandbox.unattended {
            Unattended::Allow => Approval::Granted,
            Unattended::Deny => Approval::Refused(
                "[DENIED] This call needs approval (HITL is on) but no human is attached; the unattended policy is deny."
                    .into(),
            ),
        };
    };
    if write!(tty, "\u{23f8} Run requested:\n  {what}\nAllow? (y/N): ").and_then(|_| tty.flush()).is_err() {
        return Approval::Refused("[DENIED] Approval prompt could not be shown.".into());
    }
    let mut answer = String::new();
    let _ = BufReader::new(&mut tty).read_line(&mut answer);
    if matches!(answer.trim().to_ascii_lowercase().as_str(), "y" | "yes") {
        Approval::Granted
    } else {
        Approval::Refused("[DENIED] The call was not approved.".into())
    }
}
