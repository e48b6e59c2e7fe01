//! The shell guard's rules. Each reads the [`Analysis`](super::analysis::Analysis) (and the
//! policy) and returns a denial or nothing; [`super::check`] runs them in the order of
//! Decision 1 and the first denial names the decision:
//!
//! | order | rule id | module |
//! |---|---|---|
//! | 1 | `credential-file` | [`secrets`] |
//! | 2 | `env-file` | [`secrets`] |
//! | 3 | `sudo` | [`sudo`] |
//! | 4 | `catastrophic-delete` | [`delete`] |
//! | 5 | `raw-disk-op` | [`disk`] |
//! | 6 | `fetch-to-exec` | [`fetch`] |
//! | 7 | `shell-deny` | [`shell_policy`] |
//! | 8 | `subshell` | [`subshell`] |
//! | 9 | `path-scan` | [`path_scan`] |
//! | 10 | `shell-allow` | [`shell_policy`] |

pub mod delete;
pub mod disk;
pub mod fetch;
pub mod path_scan;
pub mod secrets;
pub mod shell_policy;
pub mod subshell;
pub mod sudo;
mod tokens;

/// The closing lines of the dangerous-command guard's denials.
const ASK_THE_USER: &str =
    "Use a narrower, targeted command instead. If this is genuinely what is needed, tell the user\n\
                            exactly which command to run and they will run it themselves.";
