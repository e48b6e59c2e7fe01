//! hullward's top-level error and the exit codes of the contract.
//!
//! Every command returns `Result<ExitStatus, Error>`; `main` maps an `Error` to its exit code and
//! prints it once. Module errors convert into this type with `?`, keeping their own message (which
//! names the path, rule or key at fault).

use crate::policy::load::PolicyError;

/// Exit codes fixed by the contract (INTERFACE.md, "Exit codes").
pub mod code {
    /// `check`: denied or needs approval; `validate`: invalid.
    pub const DENIED_OR_INVALID: u8 = 1;
    /// Usage or configuration error.
    pub const USAGE: u8 = 2;
    /// Strict mode refused: the kernel cannot enforce what the policy asks.
    pub const STRICT_REFUSED: u8 = 3;
    /// The timeout expired; the whole process tree was killed.
    pub const TIMEOUT: u8 = 124;
    /// hullward itself failed.
    pub const INTERNAL: u8 = 125;
    /// The command was denied before it ran.
    pub const DENIED_BEFORE_RUN: u8 = 126;
}

/// Why hullward could not do what it was asked.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Policy(#[from] PolicyError),
    #[error("{0}")]
    Usage(String),
    #[error("{0}: not implemented yet")]
    NotImplemented(&'static str),
    #[error("{0}")]
    Internal(String),
}

impl Error {
    /// The process exit code for this error.
    pub fn exit_code(&self) -> u8 {
        match self {
            Error::Policy(_) | Error::Usage(_) => code::USAGE,
            Error::NotImplemented(_) | Error::Internal(_) => code::INTERNAL,
        }
    }

    /// Whether this is hullward's own failure, worth a crash dump ([`crate::crashdump`]): not a
    /// usage or configuration error, not a command that does not exist yet.
    pub fn is_internal_failure(&self) -> bool {
        matches!(self, Error::Internal(_))
    }
}
