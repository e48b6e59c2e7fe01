//! `Security.ShellPolicy`: the configured `Deny` and `Allow` patterns (`shell-deny`,
//! `shell-allow`).
//!
//! Deny is a case-insensitive substring of the normalised command text, in every mode. Allow in
//! `substring` mode is the same test. In `segments` mode every program at the top level — each
//! pipeline stage and list member, everything inside `$( )`, backticks, `( )`, `<( )`, and what
//! `xargs` or `find -exec` runs — must start with an allow pattern on a word boundary, its
//! wrappers and assignments looked through and its redirections left out; a substitution hidden
//! in quotes or a heredoc is refused, since it is not attempted; `sh -c '…'` and `eval` are matched
//! as the outer command only. Patterns and command text get the same normalisation (Decision 15).

use crate::guard::shell::analysis::{Analysis, ConstructKind};
use crate::guard::shell::invocation::Via;
use crate::guard::shell::normalize::for_matching;
use crate::guard::Decision;
use crate::policy::{AllowMode, Policy};

/// `shell-deny`: `text` is the command as [`for_matching`] normalised it.
pub fn deny(policy: &Policy, text: &str) -> Option<Decision> {
    let pattern = policy.shell.deny.iter().find(|p| text.contains(&for_matching(p)))?;
    Some(Decision::deny(
        "shell-deny",
        format!("[DENIED] Shell command blocked: matches configured deny pattern '{pattern}'."),
    ))
}

/// `shell-allow`: `text` is the normalised command.
pub fn allow(policy: &Policy, text: &str, analysis: &Analysis) -> Option<Decision> {
    let allow = &policy.shell.allow;
    if allow.is_empty() {
        return None;
    }
    let patterns: Vec<String> = allow.iter().map(|p| for_matching(p)).collect();
    let allowed = match policy.shell.mode {
        AllowMode::Substring => patterns.iter().any(|p| text.contains(p.as_str())),
        AllowMode::Segments => segments_allowed(&patterns, analysis),
    };
    if allowed {
        return None;
    }
    let listed: Vec<String> = allow.iter().map(|p| format!("'{p}'")).collect();
    Some(Decision::deny(
        "shell-allow",
        format!(
            "[DENIED] Shell command blocked: not matched by any configured allow pattern.\n         Allowed: {}.",
            listed.join(", ")
        ),
    ))
}

fn segments_allowed(patterns: &[String], analysis: &Analysis) -> bool {
    let hidden = analysis.constructs.iter().any(|c| {
        c.level == 0 && c.quoted && matches!(c.kind, ConstructKind::Command | ConstructKind::Backtick)
    });
    if hidden {
        return false;
    }
    let mut segments = analysis
        .cmds
        .iter()
        .filter(|c| c.level == 0 && c.via != Via::Alternate)
        .map(|c| for_matching(&c.argv.iter().map(|w| w.raw()).collect::<Vec<_>>().join(" ")))
        .peekable();
    segments.peek().is_some() && segments.all(|s| patterns.iter().any(|p| starts_on_boundary(&s, p)))
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// Whether `segment` starts with `pattern`, the match ending on a word boundary.
fn starts_on_boundary(segment: &str, pattern: &str) -> bool {
    let Some(rest) = segment.strip_prefix(pattern) else {
        return false;
    };
    match (pattern.chars().next_back(), rest.chars().next()) {
        (Some(last), Some(next)) => !(is_word_char(last) && is_word_char(next)),
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn word_boundaries() {
        assert!(starts_on_boundary("go test ./...", "go test"));
        assert!(starts_on_boundary("go test", "go test"));
        assert!(!starts_on_boundary("go testing", "go test"));
        assert!(starts_on_boundary("cd src", "cd "));
        assert!(!starts_on_boundary("cd", "cd "));
        assert!(!starts_on_boundary("gotest", "go test"));
    }
}
