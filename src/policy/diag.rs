//! Diagnostics: configuration errors and warnings that point at `file:line`.
//!
//! Loading collects every semantic problem it finds instead of stopping at the first, so that
//! `validate` can list them all; errors then abort loading as one [`PolicyError::Invalid`](super::load::PolicyError).

use std::fmt;
use std::path::PathBuf;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// One problem found in a configuration, with its place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    /// The file, or `None` for a command-line flag.
    pub file: Option<PathBuf>,
    pub line: Option<usize>,
    /// The dotted key at fault, e.g. `Security.ShellPolicy.AllowMode`.
    pub key: String,
    pub message: String,
}

impl Diagnostic {
    /// `file:line` (or `file`, or `command line`).
    pub fn place(&self) -> String {
        match (&self.file, self.line) {
            (Some(f), Some(l)) => format!("{}:{l}", f.display()),
            (Some(f), None) => f.display().to_string(),
            (None, _) => "command line".to_string(),
        }
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match self.key.as_str() {
            "" => write!(f, "{}: {sev}: {}", self.place(), self.message),
            key => write!(f, "{}: {sev}: {key}: {}", self.place(), self.message),
        }
    }
}
