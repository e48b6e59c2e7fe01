//! `git-protected`: the git commands that rewrite or remove a protected branch, or change git's
//! configuration beyond the repository (KeylessAgent's git rules, seed 003), with the branch
//! globs of `Sandbox.Git.ProtectedBranches` (default `main`, `master`, `release*`).
//!
//! Each `git` program the analysis found (through `env`, wrappers and `sh -c` alike) is read as
//! git reads it: global options first (`-C dir`, `-c k=v`, `--git-dir=…`), then the subcommand.
//! Refused:
//! - `push` that forces (`--force`, `-f`, `--force-with-lease`, a `+` refspec) onto a protected
//!   branch, or forces without naming the branch (no refspec, `HEAD`, `--all`, `--mirror`, an
//!   expansion): the branch cannot be known, so it is refused (fail closed);
//! - `push` that deletes a protected branch (`--delete`/`-d`, a `:branch` refspec), or deletes
//!   without naming it (`--prune`, an expansion);
//! - `branch -d`/`-D`/`--delete` of a protected branch (or of a name only the run can tell);
//! - `config --global` and `config --system`, unless the command only reads (`--get*`, `--list`,
//!   `-l`, or the `get`/`list` subcommands): reading the user's settings changes nothing.
//!
//! `git push --force origin feature`, `git branch -d feature` and `git config user.name x` pass.

use std::borrow::Cow;

use globset::{Glob, GlobSet, GlobSetBuilder};

use crate::guard::shell::analysis::{Analysis, Cmd};
use crate::guard::Decision;
use crate::policy::Policy;

/// Global options of `git` that take the next word as their value.
const VALUED_GLOBALS: &[&str] = &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix"];

/// `git push` options that take the next word as their value (when not written `--opt=value`).
const VALUED_PUSH: &[&str] = &["--repo", "--receive-pack", "--exec", "--push-option", "-o"];

/// What a refused git command does.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Violation {
    /// A force push onto this protected branch.
    ForcePush(String),
    /// A force push whose target branch cannot be known from the command.
    ForcePushUnknown,
    /// A push or `git branch` deleting this protected branch.
    Delete(String),
    /// A delete whose branch cannot be known from the command.
    DeleteUnknown,
    /// `git config --global` or `--system` that may write.
    Config(&'static str),
}

/// The arguments after the program name: their folded text, `None` where only the run can tell.
fn args(cmd: &Cmd) -> Vec<Option<Cow<'_, str>>> {
    (1..cmd.argv.len()).map(|i| cmd.arg(i)).collect()
}

/// The subcommand's index in `args`, past git's global options.
fn subcommand(args: &[Option<Cow<'_, str>>]) -> Option<usize> {
    let mut i = 0;
    while let Some(Some(a)) = args.get(i) {
        if !a.starts_with('-') {
            return Some(i);
        }
        i += if VALUED_GLOBALS.contains(&a.as_ref()) { 2 } else { 1 };
    }
    None
}

/// A branch as a refspec's destination names it: `Some(name)` for `main` or `refs/heads/main`,
/// `None` when only the run can tell (`HEAD`, `@`, empty), and no branch at all (`Ok(None)`)
/// for other refs (`refs/tags/v1`).
fn branch_of(dst: &str) -> Result<Option<String>, ()> {
    if dst.is_empty() || dst == "HEAD" || dst == "@" {
        return Err(());
    }
    if let Some(name) = dst.strip_prefix("refs/heads/") {
        return Ok(Some(name.to_string()));
    }
    if dst.starts_with("refs/") {
        return Ok(None);
    }
    Ok(Some(dst.to_string()))
}

/// `git push …` (the arguments after `push`).
fn push(args: &[Option<Cow<'_, str>>], protected: &GlobSet) -> Option<Violation> {
    let (mut force, mut delete, mut every, mut operands) = (false, false, false, Vec::new());
    let mut rest = args.iter();
    let mut options = true;
    while let Some(arg) = rest.next() {
        let Some(a) = arg.as_deref() else {
            operands.push(None);
            continue;
        };
        if !options || !a.starts_with('-') || a == "-" {
            operands.push(Some(a));
            continue;
        }
        match a {
            "--" => options = false,
            "--force" => force = true,
            _ if a.starts_with("--force-with-lease") => force = true,
            "--delete" => delete = true,
            "--all" | "--branches" | "--mirror" => every = true,
            "--prune" => return Some(Violation::DeleteUnknown),
            _ if VALUED_PUSH.contains(&a) => {
                rest.next();
            }
            _ if a.starts_with("--") => {}
            _ => {
                let flags = &a[1..];
                let valued = flags.find('o');
                let flags = valued.map_or(flags, |at| &flags[..at]);
                force |= flags.contains('f');
                delete |= flags.contains('d');
                if valued.is_some_and(|at| at + 2 == a.len()) {
                    rest.next();
                }
            }
        }
    }
    let refspecs = operands.get(1..).unwrap_or_default();
    if refspecs.is_empty() || every {
        return if delete {
            Some(Violation::DeleteUnknown)
        } else {
            force.then_some(Violation::ForcePushUnknown)
        };
    }
    for spec in refspecs {
        let Some(spec) = spec else {
            return (force || delete).then_some(if delete {
                Violation::DeleteUnknown
            } else {
                Violation::ForcePushUnknown
            });
        };
        let (plus, spec) = spec.strip_prefix('+').map_or((false, *spec), |s| (true, s));
        let (src, dst) = spec.split_once(':').unwrap_or((spec, spec));
        let deletes = delete || src.is_empty() && spec.contains(':');
        if !(deletes || force || plus) {
            continue;
        }
        match branch_of(if delete { spec } else { dst }) {
            Err(()) if deletes => return Some(Violation::DeleteUnknown),
            Err(()) => return Some(Violation::ForcePushUnknown),
            Ok(Some(b)) if protected.is_match(&b) => {
                return Some(if deletes { Violation::Delete(b) } else { Violation::ForcePush(b) })
            }
            Ok(_) => {}
        }
    }
    None
}

/// `git branch …` (the arguments after `branch`).
fn branch(args: &[Option<Cow<'_, str>>], protected: &GlobSet) -> Option<Violation> {
    let mut delete = false;
    let mut remote = false;
    let mut names = Vec::new();
    for arg in args {
        match arg.as_deref() {
            None => names.push(None),
            Some("--delete") => delete = true,
            Some("--remotes") => remote = true,
            Some(a) if a.starts_with("--") => {}
            Some(a) if a.starts_with('-') => {
                delete |= a.contains(['d', 'D']);
                remote |= a.contains('r');
            }
            Some(a) => names.push(Some(a)),
        }
    }
    if !delete {
        return None;
    }
    for name in names {
        let Some(name) = name else {
            return Some(Violation::DeleteUnknown);
        };
        let local = if remote { name.split_once('/').map_or(name, |(_, b)| b) } else { name };
        if protected.is_match(local) {
            return Some(Violation::Delete(name.to_string()));
        }
    }
    None
}

/// `git config …` (the arguments after `config`).
fn config(args: &[Option<Cow<'_, str>>]) -> Option<Violation> {
    let flag = |f: &str| args.iter().any(|a| a.as_deref() == Some(f));
    let scope = ["--global", "--system"].into_iter().find(|s| flag(s))?;
    let reads = args.iter().flatten().any(|a| a.starts_with("--get") || a == "--list" || a == "-l")
        || matches!(
            args.iter().flatten().find(|a| !a.starts_with('-')).map(|a| a.as_ref()),
            Some("get" | "list")
        );
    (!reads).then_some(Violation::Config(scope))
}

/// What a `git` program does that the rule refuses.
fn violation(cmd: &Cmd, protected: &GlobSet) -> Option<Violation> {
    if !cmd.names().any(|n| n == "git") {
        return None;
    }
    let args = args(cmd);
    let at = subcommand(&args)?;
    let after = &args[at + 1..];
    match args[at].as_deref()? {
        "push" => push(after, protected),
        "branch" => branch(after, protected),
        "config" => config(after),
        _ => None,
    }
}

/// The protected branch globs; an invalid glob matches its own text only.
fn globs(policy: &Policy) -> GlobSet {
    let mut set = GlobSetBuilder::new();
    for b in &policy.sandbox.protected_branches {
        let glob = Glob::new(b).or_else(|_| Glob::new(&globset::escape(b)));
        if let Ok(g) = glob {
            set.add(g);
        }
    }
    set.build().unwrap_or_else(|_| GlobSet::empty())
}

fn message(v: &Violation) -> String {
    let what = match v {
        Violation::ForcePush(b) => format!("it force-pushes the protected branch '{b}'"),
        Violation::ForcePushUnknown => {
            "it force-pushes without naming the branch, so it cannot be known not to be a protected one"
                .into()
        }
        Violation::Delete(b) => format!("it deletes the protected branch '{b}'"),
        Violation::DeleteUnknown => {
            "it deletes branches it does not name, so they cannot be known not to be protected ones".into()
        }
        Violation::Config(scope) => {
            format!("it changes git's {} configuration, outside the repository (git config {scope}, git-protected)", &scope[2..])
        }
    };
    let why = if matches!(v, Violation::Config(_)) {
        ""
    } else {
        " (git-protected, Sandbox.Git.ProtectedBranches)"
    };
    format!("[DENIED] Shell command blocked: {what}{why}.\n{}", super::ASK_THE_USER)
}

pub fn check(policy: &Policy, analysis: &Analysis) -> Option<Decision> {
    let protected = globs(policy);
    let v = analysis.cmds.iter().find_map(|c| violation(c, &protected))?;
    Some(Decision::deny("git-protected", message(&v)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::shell::analysis::analyse;

    fn default_globs() -> GlobSet {
        let mut set = GlobSetBuilder::new();
        for b in ["main", "master", "release*"] {
            set.add(Glob::new(b).unwrap());
        }
        set.build().unwrap()
    }

    fn judge(command: &str) -> Option<Violation> {
        let protected = default_globs();
        analyse(command).unwrap().cmds.iter().find_map(|c| violation(c, &protected))
    }

    #[test]
    fn force_pushes() {
        use Violation::*;
        for (command, expected) in [
            ("git push --force origin main", Some(ForcePush("main".into()))),
            ("git push -f origin master", Some(ForcePush("master".into()))),
            ("git push -uf origin release-1.2", Some(ForcePush("release-1.2".into()))),
            ("git push --force-with-lease origin main", Some(ForcePush("main".into()))),
            ("git push --force-with-lease=main:abc origin main", Some(ForcePush("main".into()))),
            ("git push origin +main", Some(ForcePush("main".into()))),
            ("git push origin +feature:refs/heads/main", Some(ForcePush("main".into()))),
            ("git push -f origin feature:main", Some(ForcePush("main".into()))),
            ("git -C repo -c user.name=x push -f origin main", Some(ForcePush("main".into()))),
            ("GIT_TRACE=1 git push -f origin main", Some(ForcePush("main".into()))),
            ("env -i git push -f origin main", Some(ForcePush("main".into()))),
            ("cd repo && git push -f origin main", Some(ForcePush("main".into()))),
            ("sh -c 'git push -f origin main'", Some(ForcePush("main".into()))),
            ("git push -o ci.skip -f origin main", Some(ForcePush("main".into()))),
            ("git push --force", Some(ForcePushUnknown)),
            ("git push -f origin", Some(ForcePushUnknown)),
            ("git push -f origin HEAD", Some(ForcePushUnknown)),
            ("git push --force --all origin", Some(ForcePushUnknown)),
            ("git push --mirror --force origin", Some(ForcePushUnknown)),
            ("git push -f origin $BRANCH", Some(ForcePushUnknown)),
            ("git push origin feature", None),
            ("git push --force origin feature", None),
            ("git push origin main", None),
            ("git push -f origin main:feature", None),
            ("git push -f origin refs/tags/v1", None),
            ("git push", None),
            ("git push -u origin HEAD", None),
            ("git log --force main", None),
            ("echo git push -f origin main", None),
        ] {
            assert_eq!(judge(command), expected, "{command}");
        }
    }

    #[test]
    fn deletes() {
        use Violation::*;
        for (command, expected) in [
            ("git push origin --delete main", Some(Delete("main".into()))),
            ("git push -d origin release-2", Some(Delete("release-2".into()))),
            ("git push origin :main", Some(Delete("main".into()))),
            ("git push origin :refs/heads/master", Some(Delete("master".into()))),
            ("git push --prune origin", Some(DeleteUnknown)),
            ("git push --delete origin", Some(DeleteUnknown)),
            ("git branch -D main", Some(Delete("main".into()))),
            ("git branch -d master", Some(Delete("master".into()))),
            ("git branch --delete --force release-x", Some(Delete("release-x".into()))),
            ("git branch -d feature main", Some(Delete("main".into()))),
            ("git branch -dr origin/main", Some(Delete("origin/main".into()))),
            ("git branch -D $B", Some(DeleteUnknown)),
            ("git push origin --delete feature", None),
            ("git push origin :feature", None),
            ("git branch -d feature", None),
            ("git branch -D feature", None),
            ("git branch main-copy", None),
            ("git branch feature main", None),
            ("git branch", None),
        ] {
            assert_eq!(judge(command), expected, "{command}");
        }
    }

    #[test]
    fn configuration() {
        use Violation::*;
        for (command, expected) in [
            ("git config --global user.name x", Some(Config("--global"))),
            ("git config --system core.editor vi", Some(Config("--system"))),
            ("git config --global --unset user.name", Some(Config("--global"))),
            ("git config --global --edit", Some(Config("--global"))),
            ("git -C repo config --global alias.p push", Some(Config("--global"))),
            ("git config set --global user.name x", Some(Config("--global"))),
            ("git config --global --get user.name", None),
            ("git config --global --list", None),
            ("git config --system -l", None),
            ("git config get --global user.name", None),
            ("git config user.name x", None),
            ("git config --local user.name x", None),
            ("git -c user.name=x commit -m m", None),
        ] {
            assert_eq!(judge(command), expected, "{command}");
        }
    }

    #[test]
    fn configured_globs_decide() {
        let (protected, other) =
            (GlobSetBuilder::new().add(Glob::new("prod/*").unwrap()).build().unwrap(), "main");
        let cmds = analyse("git push -f origin prod/eu").unwrap().cmds;
        assert_eq!(violation(&cmds[0], &protected), Some(Violation::ForcePush("prod/eu".into())));
        let cmds = analyse(&format!("git push -f origin {other}")).unwrap().cmds;
        assert_eq!(violation(&cmds[0], &protected), None);
    }
}
