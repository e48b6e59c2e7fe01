//! `path-scan` (Decision 7): absolute paths in the command must stay inside the sandbox.
//!
//! Every scanned word is searched for absolute-path tokens: a `/` at the start of a word, after
//! whitespace, a quote, `=`, `,`, `:` (not `://`), a bracket or a redirection character inside
//! the word's text (so paths inside `python -c "open('/etc/passwd')"` are found too), or after
//! `$IFS`. A path after any other expansion is relative to it (`$HOME/x`) and is left to the
//! credential-file and subshell rules. Each path is resolved (symlinks followed, `..` removed)
//! and accepted inside a root, an `Include` root, a `Writable` or `System` directory or one of
//! the seed's fixed system prefixes; the harmless character devices (`/dev/null`, `/dev/stdout`,
//! `/dev/fd/N`, `/dev/urandom`, …) are accepted as written. A lone `/` (as in `expr 4 / 2`) is not
//! a path here; deleting it is the catastrophic-delete rule's business.

use std::collections::HashSet;
use std::path::Path;

use crate::guard::path::{lexical, resolve};
use crate::guard::shell::analysis::Analysis;
use crate::guard::shell::ast::{Part, Word};
use crate::guard::Decision;
use crate::policy::Policy;

/// The seed's system prefixes, exempt whatever the policy says.
const EXEMPT: &[&str] =
    &["/usr", "/bin", "/sbin", "/lib", "/lib64", "/opt", "/nix", "/run/current-system", "/snap"];

/// Character devices that read or write nothing of the host's.
const HARMLESS_DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/stdin",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd",
];

/// Characters after which a `/` starts a path.
fn opens_path(c: char) -> bool {
    c.is_whitespace()
        || matches!(c, '\'' | '"' | '`' | '=' | ',' | ';' | '|' | '&' | '<' | '>' | '(' | '{' | '[' | ':')
}

/// Characters that end a path.
fn ends_path(c: char) -> bool {
    c.is_whitespace()
        || matches!(c, '\'' | '"' | '`' | '=' | ',' | ';' | '|' | '&' | '<' | '>' | '(' | ')' | ':' | '}')
}

/// The absolute-path tokens of a word. `$IFS` counts as a separator; any other expansion as
/// part of a relative path.
fn candidates(word: &Word) -> Vec<String> {
    let mut out = Vec::new();
    if word.value().is_some_and(|v| !v.contains('/')) {
        return out;
    }
    let mut prev = None;
    for part in &word.parts {
        prev = match part {
            Part::Lit { text, .. } => scan(text, prev, &mut out),
            Part::Param(p) if p.name == "IFS" && p.operand.is_empty() => Some(' '),
            _ => Some('$'),
        };
    }
    out
}

/// Adds the paths in `text` to `out`; `prev` is the character before it (`None` at the start of
/// the word). Returns the last character seen.
fn scan(text: &str, mut prev: Option<char>, out: &mut Vec<String>) -> Option<char> {
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '/' || !prev.is_none_or(opens_path) {
            prev = Some(c);
            continue;
        }
        let end = text[i..].find(ends_path).map_or(text.len(), |n| i + n);
        let token = &text[i..end];
        let url = prev == Some(':') && token.starts_with("//");
        if !url && token.chars().any(|c| c != '/' && c != '.') {
            out.push(token.to_string());
        }
        while chars.peek().is_some_and(|(j, _)| *j < end) {
            prev = chars.next().map(|(_, c)| c);
        }
    }
    prev
}

fn outside(policy: &Policy, shown: &Path) -> Decision {
    Decision::deny(
        "path-scan",
        format!(
            "[DENIED] Path '{}' is outside the configured sandbox '{}'.\nAll file operations must stay within the sandbox.",
            shown.display(),
            policy.root.display()
        ),
    )
}

fn judge(policy: &Policy, candidate: &str) -> Option<Decision> {
    let written = lexical(Path::new(candidate), &policy.root);
    if HARMLESS_DEVICES.iter().any(|d| written.starts_with(d)) {
        return None;
    }
    let Ok(resolved) = resolve(Path::new(candidate), &policy.root) else {
        return Some(outside(policy, &written));
    };
    let inside = policy.root_containing(&resolved).is_some()
        || policy.sandbox.writable.iter().any(|w| resolved.starts_with(w))
        || policy.sandbox.system.iter().any(|s| resolved.starts_with(s))
        || policy.sandbox.read_only_dirs.iter().any(|d| resolved.starts_with(d))
        || EXEMPT.iter().any(|e| resolved.starts_with(e));
    (!inside).then(|| outside(policy, &resolved))
}

pub fn check(policy: &Policy, analysis: &Analysis) -> Option<Decision> {
    let mut seen = HashSet::new();
    analysis
        .texts
        .iter()
        .flat_map(|t| candidates(&t.word))
        .filter(|c| seen.insert(c.clone()))
        .find_map(|c| judge(policy, &c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::shell::ast::Command;
    use crate::guard::shell::parser::parse;

    fn found(src: &str) -> Vec<String> {
        let script = parse(src).unwrap();
        let Command::Simple(s) = &script.body.pipelines[0].stages[0] else { panic!() };
        s.words.iter().flat_map(candidates).collect()
    }

    #[test]
    fn absolute_paths_are_found_where_they_start() {
        assert_eq!(found("cat /etc/passwd"), ["/etc/passwd"]);
        assert_eq!(found("x --out=/etc/x,/var/y"), ["/etc/x", "/var/y"]);
        assert_eq!(found("x PATH=/usr/bin:/etc"), ["/usr/bin", "/etc"]);
        assert_eq!(found("python3 -c \"open('/etc/shadow')\""), ["/etc/shadow"]);
        assert_eq!(found("cat$IFS/etc/passwd"), ["/etc/passwd"]);
        assert_eq!(found("dd of=/dev/sda"), ["/dev/sda"]);
        assert!(found("curl https://example.com/etc/passwd").is_empty());
        assert!(found("cat $HOME/x ~/y a/b ./c ../d").is_empty());
        assert!(found("expr 4 / 2 // x /. /..").is_empty());
        assert!(found("sed s/a/b/").is_empty());
    }
}
