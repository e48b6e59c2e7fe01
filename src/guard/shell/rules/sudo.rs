//! `sudo`: privilege escalation is never run by the agent.
//!
//! Every program the analysis found is judged by its name — as recognised after folding, through
//! the values its variables were given (`X=sudo; $X`), as a glob (`/usr/bin/su?o`), by the
//! literal text before an unquoted expansion (`sudo${IFS}id`) and by all its literal text
//! (`s$empty"udo"`). Mentioning the word is fine: only programs count, so `grep sudo`,
//! `man sudo` and `ssh host sudo …` pass. A heredoc body that is only data is still refused when
//! one of its lines starts with `sudo`: such text is usually a script about to be run.

use super::tokens::{glob_matches, has_wildcard};
use crate::guard::shell::analysis::{Analysis, Cmd};
use crate::guard::shell::invocation::command_name;
use crate::guard::Decision;

/// The commands that escalate privileges.
const ESCALATORS: &[&str] = &["sudo", "sudoedit", "doas", "pkexec"];

/// The escalator `name` is — or, when it is a glob (`/usr/bin/su?o`), can expand to.
fn escalator(name: &str) -> Option<&'static str> {
    if has_wildcard(name) {
        return ESCALATORS.iter().copied().find(|e| glob_matches(name, e));
    }
    ESCALATORS.iter().copied().find(|e| *e == name)
}

/// The escalator a program is, by any of the names it may have.
fn invoked(cmd: &Cmd) -> Option<&'static str> {
    let word = cmd.argv.first()?;
    if let Some(e) = cmd.names().find_map(escalator) {
        return Some(e);
    }
    if word.value().is_some() {
        return None;
    }
    escalator(&command_name(&word.literal_prefix())).or_else(|| escalator(&command_name(&word.literals())))
}

/// The escalator a line of a heredoc body starts with.
fn line_start(line: &str) -> Option<&'static str> {
    let first: String =
        line.split_whitespace().next()?.chars().filter(|c| !matches!(c, '\'' | '"' | '\\')).collect();
    escalator(&command_name(&first))
}

pub fn check(analysis: &Analysis) -> Option<Decision> {
    let name = analysis.cmds.iter().find_map(invoked).or_else(|| {
        analysis.data_heredocs.iter().find_map(|body| body.text_with_holes("").lines().find_map(line_start))
    })?;
    Some(Decision::deny(
        "sudo",
        format!(
            "[DENIED] {name} is not permitted. Prefer non-privileged alternatives: pip install --user,\n\
             python -m pip install --user, pipx, or a virtual environment\n\
             (python -m venv .venv && .venv/bin/pip install ...).\n\
             If elevated privileges are truly required, tell the user exactly which command to run\n\
             and they will run it themselves."
        ),
    ))
}
