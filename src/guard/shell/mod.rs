//! The shell guard (`check shell`, and `sh` before it runs anything): decides a command string
//! before `/bin/sh -c` sees it.
//!
//! [`check`] is the single entry point. In order:
//! 1. [`normalize`] folds the text for the substring matchers (NFKC, invisible characters,
//!    `\`+newline, whitespace runs, case);
//! 2. [`analysis`] parses the command as written ([`parser`], `lexer`, into the tree of
//!    [`ast`]), looks through wrappers and runners ([`invocation`]), brace-expands command words
//!    ([`braces`]) and re-parses the shell code handed to `sh -c`, `eval` and friends; a command
//!    it cannot parse (or nested too deeply to follow) is denied as `parse-error`, before any
//!    other rule;
//! 3. the [`rules`] run in the order of Decision 1 — `credential-file`, `env-file`, `sudo`,
//!    `catastrophic-delete`, `raw-disk-op`, `fetch-to-exec`, `git-protected`, `shell-deny`, `subshell`,
//!    `path-scan`, `shell-allow` — and the first that fires decides;
//! 4. a command that passes is `allow`, or `ask` (rule `hitl`) when a human approves each
//!    command (Decision 14); a denial never becomes `ask`.
//!
//! The guard runs nothing. Its only I/O is canonicalising paths (the path scan's absolute paths,
//! `git config --file` paths) and reading the current branch from a repository's `HEAD` file
//! (`git-protected`, [`rules::git`]).
//!
//! Where the seed and the contract are silent, the guard decides so:
//! - a plain `$NAME` is not a subshell (agents are meant to write `$HOME/x`); `${…}`, `$( )`,
//!   backticks and `$(( ))` are; `<( )` is not, its commands being visible and checked;
//! - a glob names a credentials file when it can match it and spells two of its characters
//!   (`id_*`, `.net?c`; not `*` or `.*`, which the masks cover), or, inside `.ssh` or `.aws`,
//!   whatever it spells; a glob never names a `.env` file (`.e*`: Decision 5 — the masks hide
//!   what it reaches);
//! - the path scan accepts the harmless character devices (`/dev/null`, `/dev/std*`,
//!   `/dev/fd/N`, `/dev/zero`, `/dev/urandom`, `/dev/tty`…) and ignores a lone `/`; it reads
//!   quoted text and data heredoc bodies too, since an interpreter may run them;
//! - a heredoc or here-string fed to a shell (`sh <<EOF`, `bash <<<`, `. /dev/stdin <<EOF`) is
//!   parsed as a script; any other heredoc body is data, except that a line starting with
//!   `sudo` is still refused.

pub mod analysis;
pub mod ast;
pub mod braces;
pub mod error;
pub mod invocation;
mod lexer;
pub mod normalize;
pub mod parser;
pub mod rules;

pub use error::ParseError;
pub use parser::parse;

use std::path::Path;

use super::Decision;
use crate::policy::Policy;

/// Decides `command` as run in the sandbox root: the verdict, the rule that produced it and the
/// message for the agent.
pub fn check(policy: &Policy, command: &str) -> Decision {
    check_in(policy, command, &policy.root)
}

/// [`check`] for a command that runs in `cwd` (the `git-protected` rule reads the current branch
/// of the repository there, and takes `git config --file` paths against it).
pub fn check_in(policy: &Policy, command: &str, cwd: &Path) -> Decision {
    let decision = decide(policy, command, cwd);
    if decision.is_allowed() && policy.session.hitl {
        return Decision::ask("hitl", format!("shell_run — {command}\nApprove running this command?"));
    }
    decision
}

/// Decides a probe snippet in a language that is not shell (seed 000, "Probe": only the
/// credential-file rule, ShellPolicy and approval apply, the snippet not being shell syntax): the
/// `credential-file` rule on its text, ShellPolicy `Deny` on its text and on `invocation` (the
/// interpreter's command line, e.g. `python3 /tmp/hullward-probe-1.py`), ShellPolicy `Allow` on
/// `invocation`; `ask` (rule `hitl`) when a human approves each call.
pub fn check_snippet(policy: &Policy, invocation: &str, code: &str) -> Decision {
    use rules::{secrets, shell_policy};
    let (text, line) = (normalize::for_matching(code), normalize::for_matching(invocation));
    let decision = secrets::credential_file_in_text(policy, code)
        .or_else(|| shell_policy::deny(policy, &text))
        .or_else(|| shell_policy::deny(policy, &line))
        .or_else(|| match analysis::analyse(invocation) {
            Ok(a) => shell_policy::allow(policy, &line, &a),
            Err(e) => Some(Decision::deny(
                "parse-error",
                format!("[DENIED] The probe's command line could not be parsed ({e})."),
            )),
        })
        .unwrap_or_else(|| Decision::allow("allow"));
    if decision.is_allowed() && policy.session.hitl {
        return Decision::ask("hitl", format!("probe — {invocation}\n{code}\nApprove running this snippet?"));
    }
    decision
}

/// The guard's decision before human approval is considered.
fn decide(policy: &Policy, command: &str, cwd: &Path) -> Decision {
    use rules::{delete, disk, fetch, git, path_scan, secrets, shell_policy, subshell, sudo};

    let text = normalize::for_matching(command);
    let analysis = match analysis::analyse(command) {
        Ok(a) => a,
        Err(e) => {
            return Decision::deny(
                "parse-error",
                format!(
                    "[DENIED] Shell command could not be parsed ({e}), so it cannot be checked.\n\
                     Fix the syntax (quotes, parentheses, here-documents) and try again."
                ),
            )
        }
    };
    secrets::credential_file(policy, &analysis)
        .or_else(|| secrets::env_file(&analysis))
        .or_else(|| sudo::check(&analysis))
        .or_else(|| delete::check(policy, &analysis))
        .or_else(|| disk::check(&analysis))
        .or_else(|| fetch::check(&analysis))
        .or_else(|| git::check(policy, &analysis, cwd))
        .or_else(|| shell_policy::deny(policy, &text))
        .or_else(|| subshell::check(policy, &analysis))
        .or_else(|| path_scan::check(policy, &analysis))
        .or_else(|| shell_policy::allow(policy, &text, &analysis))
        .unwrap_or_else(|| Decision::allow("allow"))
}

#[cfg(test)]
mod robustness;
#[cfg(test)]
mod tests;
