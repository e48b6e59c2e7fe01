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
//! | 7 | `git-protected` | [`git`] |
//! | 8 | `shell-deny` | [`shell_policy`] |
//! | 9 | `subshell` | [`subshell`] |
//! | 10 | `path-scan` | [`path_scan`] |
//! | 11 | `shell-allow` | [`shell_policy`] |
//!
//! `git-protected` is not in Decision 1's list (the contract predates it): it sits with the other
//! built-in dangerous-command rules, after `fetch-to-exec` and before the configured ShellPolicy.

pub mod delete;
pub mod disk;
pub mod fetch;
pub mod git;
mod git_head;
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
