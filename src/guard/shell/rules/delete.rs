//! `catastrophic-delete`: a recursive delete of `/`, the home directory (`~`, `$HOME`, its
//! literal path, or an ancestor of it), another user's home (`~user`) or a top-level system
//! directory — or of everything inside one of those (`/etc/*`, `~/.*`) — by `rm -r` or by an
//! unfiltered `find … -delete`.
//!
//! Targets are judged lexically (no file system access): `~`/`$HOME` replaced by the home
//! directory, relative paths taken against the sandbox root, `.`, `..` and `//` removed, and
//! trailing all-matching wildcards (`*`, `.*`) stripped. A target with any other expansion in
//! it cannot be judged and passes (`rm -rf $HOME/project/build` is ordinary work).

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use crate::guard::shell::analysis::{Analysis, Cmd};
use crate::guard::shell::ast::{Frag, Word};
use crate::guard::shell::invocation::command_name;
use crate::guard::Decision;
use crate::policy::Policy;

/// Top-level directories whose loss breaks the system.
const SYSTEM_DIRS: &[&str] = &[
    "bin", "boot", "dev", "etc", "home", "lib", "lib32", "lib64", "libx32", "media", "mnt", "nix", "opt",
    "proc", "root", "run", "sbin", "snap", "srv", "sys", "usr", "var",
];

/// `find` tests that narrow what is deleted.
const FIND_FILTERS: &[&str] = &[
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-size",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-nouser",
    "-nogroup",
    "-perm",
    "-empty",
    "-inum",
    "-samefile",
    "-links",
    "-used",
    "-readable",
    "-writable",
    "-executable",
    "-fstype",
    "-context",
];

/// What a target word resolves to, lexically.
enum Target {
    Path(PathBuf),
    /// The home directory of someone (`~user`) or of an unknown caller, and the rest after it.
    UnknownHome(String),
    /// Holds an expansion that only the run can tell.
    Unknown,
}

fn target(word: &Word, policy: &Policy) -> Target {
    let home = policy.home();
    let frags = word.frags();
    let (base, rest): (Option<PathBuf>, String) = if let Some(user) = word.tilde_user() {
        let Some(Frag::Text(text)) = frags.first() else {
            return Target::Unknown;
        };
        let after = &text[1 + user.len()..];
        if frags.len() > 1 {
            return Target::Unknown;
        }
        match (user, home) {
            ("", Some(h)) => (Some(h.to_path_buf()), after.to_string()),
            _ => return Target::UnknownHome(after.to_string()),
        }
    } else {
        match frags.as_slice() {
            [Frag::Text(t)] => (None, t.clone()),
            [Frag::Var("HOME")] => (home.map(Path::to_path_buf), String::new()),
            [Frag::Var("HOME"), Frag::Text(t)] => (home.map(Path::to_path_buf), t.clone()),
            _ => return Target::Unknown,
        }
    };
    match base {
        Some(b) => Target::Path(b.join(rest.trim_start_matches('/'))),
        None if frags.first().is_some_and(|f| matches!(f, Frag::Var(_))) => Target::UnknownHome(rest),
        None => Target::Path(policy.root.join(rest)),
    }
}

/// Whether a path component matches (nearly) everything in its directory.
fn all_matching(component: &str) -> bool {
    !component.is_empty()
        && component.contains(['*', '?'])
        && component.chars().all(|c| matches!(c, '*' | '?' | '.'))
}

/// `.`/`..`/`//` removed, then trailing all-matching wildcards stripped.
fn normalise(path: &Path) -> PathBuf {
    let mut parts: Vec<String> = Vec::new();
    for c in path.components() {
        match c {
            Component::Normal(n) => parts.push(n.to_string_lossy().into_owned()),
            Component::ParentDir => {
                parts.pop();
            }
            _ => {}
        }
    }
    while parts.last().is_some_and(|p| all_matching(p)) {
        parts.pop();
    }
    std::iter::once("/".to_string()).chain(parts).collect()
}

fn catastrophic(word: &Word, policy: &Policy) -> bool {
    let path = match target(word, policy) {
        Target::Unknown => return false,
        Target::UnknownHome(rest) => {
            return normalise(&Path::new("/").join(rest.trim_start_matches('/'))) == Path::new("/")
        }
        Target::Path(p) => normalise(&p),
    };
    let top_level = path.parent() == Some(Path::new("/"))
        && path.file_name().is_some_and(|n| SYSTEM_DIRS.contains(&n.to_string_lossy().as_ref()));
    path == Path::new("/") || top_level || policy.home().is_some_and(|h| h.starts_with(&path))
}

/// `rm` with `-r`/`-R`/`--recursive` and a catastrophic operand.
fn rm(cmd: &Cmd, policy: &Policy) -> bool {
    let mut recursive = false;
    let mut operands = Vec::new();
    let mut options_done = false;
    for (i, word) in cmd.argv.iter().enumerate().skip(1) {
        let value = cmd.arg(i);
        match value.as_deref() {
            Some("--") if !options_done => options_done = true,
            Some(v) if !options_done && v.starts_with("--") && v.len() > 2 => {
                recursive |= v.len() >= 3 && "--recursive".starts_with(v);
            }
            Some(v) if !options_done && v.starts_with('-') && v.len() > 1 => {
                recursive |= v.contains(['r', 'R']);
            }
            _ => operands.push(word),
        }
    }
    recursive && operands.iter().any(|w| catastrophic(w, policy))
}

/// `find PATH… -delete` (or `-exec rm`) with no test narrowing what is deleted.
fn find(cmd: &Cmd, policy: &Policy) -> bool {
    let values: Vec<Option<Cow<'_, str>>> = (0..cmd.argv.len()).map(|i| cmd.arg(i)).collect();
    let mut i = 1;
    while let Some(v) = values.get(i).and_then(|v| v.as_deref()) {
        match v {
            "-H" | "-L" | "-P" => i += 1,
            "-D" => i += 2,
            v if v.starts_with("-O") => i += 1,
            _ => break,
        }
    }
    let first_expr = (i..values.len())
        .find(|&j| values[j].as_deref().is_some_and(|v| v.starts_with('-') || v == "(" || v == "!"))
        .unwrap_or(values.len());
    let expr = &values[first_expr..];
    let deletes = expr.iter().enumerate().any(|(k, v)| match v.as_deref() {
        Some("-delete") => true,
        Some("-exec" | "-execdir" | "-ok" | "-okdir") => expr
            .get(k + 1)
            .and_then(|n| n.as_deref())
            .is_some_and(|n| matches!(command_name(n).as_str(), "rm" | "shred" | "unlink")),
        _ => false,
    });
    let filtered =
        expr.iter().flatten().any(|v| FIND_FILTERS.contains(&v.as_ref()) || v.starts_with("-newer"));
    if !deletes || filtered {
        return false;
    }
    let starts = &cmd.argv[i..first_expr];
    if starts.is_empty() {
        return catastrophic(&Word::literal("."), policy);
    }
    starts.iter().any(|w| catastrophic(w, policy))
}

pub fn check(policy: &Policy, analysis: &Analysis) -> Option<Decision> {
    analysis
        .cmds
        .iter()
        .any(|cmd| {
            cmd.names().any(|name| match name {
                "rm" => rm(cmd, policy),
                "find" => find(cmd, policy),
                _ => false,
            })
        })
        .then(|| {
            Decision::deny(
                "catastrophic-delete",
                format!(
                    "[DENIED] Shell command blocked: it recursively deletes a system or home directory (catastrophic-delete).\n{}",
                    super::ASK_THE_USER
                ),
            )
        })
}
