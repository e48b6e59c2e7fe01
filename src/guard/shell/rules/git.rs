//! `git-protected`: the git commands that move, rewrite or remove a protected branch, or change
//! git's configuration beyond the repository (KeylessAgent's git rules, seed 003), with the branch
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
//! - `branch -f`/`--force NAME` resetting a protected branch; `branch -m`/`-M`/`--move` renaming a
//!   branch onto a protected name or a protected branch away (with one name, the current branch
//!   is the one renamed); `branch -c`/`-C`/`--copy` onto a protected name;
//! - `checkout -B NAME` and `switch -C`/`--force-create NAME` onto a protected name;
//! - `update-ref [-d] REF …` of `refs/heads/PROTECTED` (or a bare `PROTECTED`, which git would
//!   create as `$GIT_DIR/PROTECTED` and then prefer over the branch), of `HEAD` unless
//!   `--no-deref` (the current branch), and every `update-ref --stdin` (its updates are not in
//!   the command);
//! - `reset` that moves the current branch when that branch is protected or cannot be known (see
//!   below): `--hard`, `--keep`, `--merge`, `--soft`, `--mixed` or no mode, with a target that is
//!   not `HEAD`/`@`. The path forms (`git reset -- PATH`, `git reset COMMIT PATH…`, `-p`,
//!   `--pathspec-from-file`) move nothing and pass; a lone operand may be a commit or a path, so
//!   on a protected branch it is refused with a hint to write `git reset -- PATH`;
//! - `config --global` and `config --system`, and `config --file`/`-f PATH` where PATH is the
//!   user's or the system's configuration (`~/.gitconfig`, `~/.config/git/config`,
//!   `$XDG_CONFIG_HOME/git/config`, `/etc/gitconfig`, `/usr/local/etc/gitconfig`; spelled with
//!   `~`, `$HOME`, relative to the working directory or through symlinks) or an expansion only the
//!   run can tell — unless the command only reads (`--get*`, `--list`, `-l`, or the `get`/`list`
//!   subcommands): reading the user's settings changes nothing. After a `cd` (or `env -C`) in the command
//!   the base of a relative PATH is not known; then a PATH whose name is a global configuration's
//!   (`.gitconfig`, `gitconfig`, `git/config`) is refused.
//!
//! `git -c key=value …` is left alone: it changes that one command's settings, inside the sandbox.
//!
//! **The current branch.** The guard runs before the command, so it knows the current branch
//! only from the repository's `HEAD` file as it is now ([`super::git_head`], found from the
//! call's working directory and a literal `-C`). That answer is used only when nothing in the
//! command string can change it first: every program in the string is either one that writes no
//! file (`echo`, `ls`, `cat`, `grep`, …) or `git` with a subcommand that never switches the branch
//! `HEAD` names (`status`, `log`, `diff`, `add`, `commit`, `fetch`, `reset`, …) and no `-c` (which
//! could name hooks, filters or aliases that run anything); no redirection writes anything but
//! `/dev/null`; no wrapper changes directory (`env -C`) and no runner (`find -execdir`, `xargs`)
//! starts it; no word mentions a `GIT_` variable and the policy passes none through; the
//! command's `git` has no `--git-dir`, `--work-tree` or `--namespace`. Otherwise the branch
//! cannot be known and the move is refused. So `git reset --hard HEAD~1` passes on a feature
//! branch and is refused on `main`, and `git checkout main && git reset --hard HEAD~1` is refused
//! wherever it starts. What stays open: another call running at the same time in the same
//! repository (`serve`) can switch the branch between this check and the reset; an overlay call's
//! apply checks the refs again (`docs/workspace.md`).
//!
//! `git push --force origin feature`, `git branch -d feature`, `git branch -f feature`,
//! `git update-ref refs/heads/feature …` and `git config --file ./local.cfg x y` pass.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobSet, GlobSetBuilder};

use super::git_head::{self, Head};
use crate::guard::path::{lexical, resolve};
use crate::guard::shell::analysis::{Analysis, Cmd, Site};
use crate::guard::shell::ast::{Frag, Word};
use crate::guard::shell::invocation::Via;
use crate::guard::Decision;
use crate::policy::Policy;

/// Global options of `git` that take the next word as their value.
const VALUED_GLOBALS: &[&str] = &["-C", "-c", "--git-dir", "--work-tree", "--namespace", "--super-prefix"];

/// `git push` options that take the next word as their value (when not written `--opt=value`).
const VALUED_PUSH: &[&str] = &["--repo", "--receive-pack", "--exec", "--push-option", "-o"];

/// `git branch` options that take the next word as their value (when not written `--opt=value`).
const VALUED_BRANCH: &[&str] = &[
    "--set-upstream-to",
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
];

/// Programs that change no file and no working directory (without a redirection).
const INERT: &[&str] =
    &["echo", "printf", "true", "false", ":", "test", "[", "pwd", "ls", "cat", "head", "tail", "wc", "grep"];

/// git subcommands that never change which branch `HEAD` names.
const KEEPS_HEAD: &[&str] = &[
    "add",
    "blame",
    "branch",
    "commit",
    "describe",
    "diff",
    "fetch",
    "grep",
    "log",
    "ls-files",
    "mv",
    "reset",
    "restore",
    "rev-parse",
    "rm",
    "shortlog",
    "show",
    "status",
    "tag",
    "update-ref",
];

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
    /// Moves, renames or overwrites this protected branch: what it does, the branch.
    Move(&'static str, String),
    /// May move a protected branch: what it does that cannot be known.
    MoveUnknown(&'static str),
    /// `git config --global` or `--system` that may write.
    Config(&'static str),
    /// `git config --file` that may write the user's or the system's configuration at this path.
    ConfigFile(String),
    /// `git config --file` with a path only the run can tell.
    ConfigFileUnknown,
}

/// What the rule knows of the command string as a whole.
struct Context<'a> {
    policy: &'a Policy,
    protected: GlobSet,
    cwd: &'a Path,
    /// Whether nothing in the command string can change the current branch or directory.
    head_stays: bool,
    /// Whether the command string changes directory (`cd`, `pushd`, `popd`).
    changes_dir: bool,
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

/// What git's global options (before `at`) say about where the command works.
struct Globals {
    /// The working directory (`-C` applied); `None` when only the run can tell.
    dir: Option<PathBuf>,
    /// `-c`/`--config-env`: settings that may name hooks, filters or aliases.
    config: bool,
    /// `--git-dir`, `--work-tree`, `--namespace`: another repository or ref space than the one
    /// found from the directory.
    elsewhere: bool,
}

fn globals(cmd: &Cmd, args: &[Option<Cow<'_, str>>], at: usize, ctx: &Context<'_>) -> Globals {
    let mut g = Globals { dir: Some(ctx.cwd.to_path_buf()), config: false, elsewhere: false };
    let mut i = 0;
    while i < at {
        let a = args[i].as_deref().unwrap_or("");
        match a {
            "-C" => {
                let base = g.dir.take();
                g.dir = base.and_then(|b| spelled_path(&cmd.argv[i + 2], 0, ctx.policy.home(), Some(&b)));
            }
            "-c" => g.config = true,
            _ if a.starts_with("--config-env") => g.config = true,
            _ if ["--git-dir", "--work-tree", "--namespace"].iter().any(|o| a.starts_with(o)) => {
                g.elsewhere = true
            }
            _ => {}
        }
        i += if VALUED_GLOBALS.contains(&a) { 2 } else { 1 };
    }
    g
}

/// A path as `word` spells it after `skip` bytes of option text (`--file=`): `~`, `~/…`,
/// `$HOME`, `$HOME/…`, an absolute path, or a relative one against `base`. `None` when only the
/// run can tell (another expansion, `~user`, a relative path with no known base).
fn spelled_path(word: &Word, skip: usize, home: Option<&Path>, base: Option<&Path>) -> Option<PathBuf> {
    let mut frags = word.frags();
    if let Some(Frag::Text(t)) = frags.first_mut() {
        *t = t.get(skip..)?.to_string();
        if t.is_empty() {
            frags.remove(0);
        }
    }
    match frags.as_slice() {
        [Frag::Text(t)] if t == "~" => home.map(Path::to_path_buf),
        [Frag::Text(t)] if t.starts_with("~/") => home.map(|h| h.join(&t[2..])),
        [Frag::Text(t)] if t.starts_with('~') => None,
        [Frag::Text(t)] if t.starts_with('/') => Some(lexical(Path::new(t), Path::new("/"))),
        [Frag::Text(t)] => base.map(|b| lexical(Path::new(t), b)),
        [Frag::Var("HOME")] => home.map(Path::to_path_buf),
        [Frag::Var("HOME"), Frag::Text(t)] if t.starts_with('/') => home.map(|h| h.join(&t[1..])),
        _ => None,
    }
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
fn branch(after: &[Option<Cow<'_, str>>], ctx: &Context<'_>, head: &dyn Fn() -> Head) -> Option<Violation> {
    let (mut delete, mut remote, mut force, mut rename, mut copy) = (false, false, false, false, false);
    let mut names = Vec::new();
    let mut rest = after.iter();
    let mut options = true;
    while let Some(arg) = rest.next() {
        let Some(a) = arg.as_deref() else {
            names.push(None);
            continue;
        };
        if !options || !a.starts_with('-') || a == "-" {
            names.push(Some(a));
            continue;
        }
        match a {
            "--" => options = false,
            "--delete" => delete = true,
            "--remotes" => remote = true,
            "--force" => force = true,
            "--move" => rename = true,
            "--copy" => copy = true,
            _ if VALUED_BRANCH.contains(&a) => {
                rest.next();
            }
            _ if a.starts_with("--") => {}
            _ => {
                for (n, c) in a.char_indices().skip(1) {
                    match c {
                        'd' => delete = true,
                        'D' => (delete, force) = (true, true),
                        'r' => remote = true,
                        'f' => force = true,
                        'm' => rename = true,
                        'M' => (rename, force) = (true, true),
                        'c' => copy = true,
                        'C' => (copy, force) = (true, true),
                        'u' => {
                            if n + 1 == a.len() {
                                rest.next();
                            }
                            break;
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    let protected = |b: &str| ctx.protected.is_match(b);
    if delete {
        for name in names {
            let Some(name) = name else {
                return Some(Violation::DeleteUnknown);
            };
            let local = if remote { name.split_once('/').map_or(name, |(_, b)| b) } else { name };
            if protected(local) {
                return Some(Violation::Delete(name.to_string()));
            }
        }
        return None;
    }
    if rename || copy {
        let (old, new) = match names.as_slice() {
            [new] => (None, *new),
            [old, new] => (Some(*old), *new),
            _ => return None,
        };
        let onto = if rename { "renames a branch onto" } else { "copies a branch onto" };
        let Some(new) = new else {
            return Some(Violation::MoveUnknown(if rename {
                "renames a branch to a name only the run can tell"
            } else {
                "copies a branch onto a name only the run can tell"
            }));
        };
        if protected(new) {
            return Some(Violation::Move(onto, new.to_string()));
        }
        if !rename {
            return None;
        }
        return match old {
            Some(Some(old)) => protected(old).then(|| Violation::Move("renames away", old.to_string())),
            Some(None) => Some(Violation::MoveUnknown("renames a branch only the run can tell")),
            None => match head() {
                Head::Branch(b) if protected(&b) => Some(Violation::Move("renames away", b)),
                Head::Branch(_) | Head::Detached => None,
                Head::Unknown => Some(Violation::MoveUnknown("renames the current branch")),
            },
        };
    }
    if !force {
        return None;
    }
    match names.first()? {
        None => Some(Violation::MoveUnknown("resets a branch only the run can tell")),
        Some(name) => protected(name).then(|| Violation::Move("resets", name.to_string())),
    }
}

/// `git checkout -B NAME` / `git switch -C NAME` (the arguments after the subcommand): the branch
/// that is created or reset, `Some(None)` when only the run can tell. `valued` are the short
/// options that take a value, `letter` the one that force-creates, `long` its long form.
fn force_created<'a>(
    after: &'a [Option<Cow<'a, str>>],
    valued: &[char],
    letter: char,
    long: Option<&str>,
) -> Option<Option<&'a str>> {
    let mut i = 0;
    while let Some(arg) = after.get(i) {
        let next = || after.get(i + 1).map(|a| a.as_deref());
        let Some(a) = arg.as_deref() else {
            i += 1;
            continue;
        };
        if a == "--" {
            return None;
        }
        if let Some(long) = long.filter(|_| a.starts_with("--")) {
            if a == long {
                return Some(next().flatten());
            }
            if let Some(v) = a.strip_prefix(long).and_then(|v| v.strip_prefix('=')) {
                return Some(Some(v));
            }
        } else if a.starts_with('-') && !a.starts_with("--") {
            for (n, c) in a.char_indices().skip(1) {
                if valued.contains(&c) {
                    let value = if n + 1 == a.len() { next().flatten() } else { Some(&a[n + 1..]) };
                    if c == letter {
                        return Some(value);
                    }
                    if n + 1 == a.len() {
                        i += 1;
                    }
                    break;
                }
            }
        }
        i += 1;
    }
    None
}

/// `git update-ref …` (the arguments after `update-ref`).
fn update_ref(
    after: &[Option<Cow<'_, str>>],
    ctx: &Context<'_>,
    head: &dyn Fn() -> Head,
) -> Option<Violation> {
    let (mut delete, mut no_deref, mut operands) = (false, false, Vec::new());
    let mut rest = after.iter();
    let mut options = true;
    while let Some(arg) = rest.next() {
        match arg.as_deref() {
            None => operands.push(None),
            Some(a) if !options || !a.starts_with('-') => operands.push(Some(a)),
            Some("--") => options = false,
            Some("--stdin") => {
                return Some(Violation::MoveUnknown("reads its ref updates from standard input"))
            }
            Some("-d") => delete = true,
            Some("--no-deref") => no_deref = true,
            Some("-m") => {
                rest.next();
            }
            Some(_) => {}
        }
    }
    let unknown = Violation::MoveUnknown("updates a ref only the run can tell");
    let branch = match operands.first()?.as_deref() {
        None => return Some(unknown),
        Some("HEAD") if no_deref => return None,
        Some("HEAD" | "@") => match head() {
            Head::Branch(b) => b,
            Head::Detached => return None,
            Head::Unknown => return Some(Violation::MoveUnknown("updates the current branch")),
        },
        Some(r) => match branch_of(r) {
            Ok(Some(b)) => b,
            Ok(None) | Err(()) => return None,
        },
    };
    if !ctx.protected.is_match(&branch) {
        return None;
    }
    Some(if delete { Violation::Delete(branch) } else { Violation::Move("updates the ref of", branch) })
}

/// `git reset …` (the arguments after `reset`).
fn reset(after: &[Option<Cow<'_, str>>], ctx: &Context<'_>, head: &dyn Fn() -> Head) -> Option<Violation> {
    let mut operands = Vec::new();
    let mut options = true;
    for arg in after {
        match arg.as_deref() {
            _ if !options => return None,
            Some("--") => options = false,
            Some("-p" | "--patch") => return None,
            Some(a) if a.starts_with("--pathspec-from-file") => return None,
            Some(a) if a.starts_with('-') && a != "-" => {}
            a => operands.push(a),
        }
    }
    match operands.as_slice() {
        [Some("HEAD" | "@")] | [] => None,
        [_] => match head() {
            Head::Branch(b) if ctx.protected.is_match(&b) => Some(Violation::Move("resets", b)),
            Head::Branch(_) | Head::Detached => None,
            Head::Unknown => Some(Violation::MoveUnknown("resets the current branch")),
        },
        _ => None,
    }
}

/// The user's and the system's git configuration files.
fn global_configs(policy: &Policy) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = ["/etc/gitconfig", "/usr/local/etc/gitconfig", "/usr/etc/gitconfig"]
        .iter()
        .map(PathBuf::from)
        .collect();
    if let Some(h) = policy.home() {
        out.push(h.join(".gitconfig"));
        out.push(h.join(".config/git/config"));
    }
    if let Some(x) = std::env::var_os("XDG_CONFIG_HOME").map(PathBuf::from).filter(|x| x.is_absolute()) {
        out.push(x.join("git/config"));
    }
    out
}

/// Whether a relative path is named as a global configuration file is.
fn named_like_global(path: &str) -> bool {
    let p = Path::new(path);
    let name = p.file_name().map(|n| n.to_string_lossy());
    let parent = p.parent().and_then(Path::file_name).map(|n| n.to_string_lossy());
    matches!(name.as_deref(), Some(".gitconfig" | "gitconfig"))
        || (name.as_deref() == Some("config") && parent.as_deref() == Some("git"))
}

/// `git config …` (the arguments after `config`; `words` are their words).
fn config(
    after: &[Option<Cow<'_, str>>],
    words: &[Word],
    ctx: &Context<'_>,
    dir: Option<&Path>,
) -> Option<Violation> {
    let reads = after.iter().flatten().any(|a| a.starts_with("--get") || a == "--list" || a == "-l")
        || matches!(
            after.iter().flatten().find(|a| !a.starts_with('-')).map(|a| a.as_ref()),
            Some("get" | "list")
        );
    if reads {
        return None;
    }
    let flag = |f: &str| after.iter().any(|a| a.as_deref() == Some(f));
    if let Some(scope) = ["--global", "--system"].into_iter().find(|s| flag(s)) {
        return Some(Violation::Config(scope));
    }
    let base = dir.filter(|_| !ctx.changes_dir);
    let globals = global_configs(ctx.policy);
    for (i, word) in words.iter().enumerate() {
        let lead = word.literal_prefix();
        let (word, skip) = match after[i].as_deref() {
            Some("--file" | "-f") => match words.get(i + 1) {
                Some(w) => (w, 0),
                None => return None,
            },
            _ if lead.starts_with("--file=") => (word, "--file=".len()),
            _ if lead.starts_with("-f") && !lead.starts_with("--") => (word, 2),
            _ => continue,
        };
        let Some(path) = spelled_path(word, skip, ctx.policy.home(), base) else {
            let relative = word.value().map(|v| v[skip..].to_string()).filter(|v| !v.starts_with(['~', '/']));
            return match relative {
                Some(rel) if !named_like_global(&rel) => None,
                _ => Some(Violation::ConfigFileUnknown),
            };
        };
        let real = resolve(&path, Path::new("/")).ok();
        let hit = globals.iter().any(|g| {
            *g == path
                || real
                    .as_ref()
                    .is_some_and(|r| r == g || resolve(g, Path::new("/")).is_ok_and(|gr| gr == *r))
        });
        return hit.then(|| Violation::ConfigFile(path.display().to_string()));
    }
    None
}

/// Whether the command string changes directory: `cd`, `pushd`, `popd`, or a wrapper's option
/// (`env -C DIR`, `env --chdir=DIR`; wrappers are looked through, their options are texts of
/// their own).
fn changes_dir(analysis: &Analysis) -> bool {
    analysis.cmds.iter().any(|c| c.names().any(|n| matches!(n, "cd" | "pushd" | "popd")))
        || analysis.texts.iter().any(|t| {
            t.site == Site::Other
                && t.word.value().is_none_or(|v| {
                    v.starts_with("--ch") || (v.starts_with('-') && !v.starts_with("--") && v.contains('C'))
                })
        })
}

/// Whether nothing in the command string can change the current branch before a `git` in it
/// runs (see the module documentation).
fn head_stays(policy: &Policy, analysis: &Analysis) -> bool {
    let programs = analysis.cmds.iter().all(|c| {
        if c.via == Via::Runner {
            // `find -execdir`, `xargs`: run elsewhere, or more than once.
            return false;
        }
        if c.names().all(|n| INERT.contains(&n)) {
            return true;
        }
        if !c.names().all(|n| n == "git") {
            return false;
        }
        let args = args(c);
        let Some(at) = subcommand(&args) else { return false };
        let config = args[..at]
            .iter()
            .any(|a| a.as_deref().is_none_or(|a| a == "-c" || a.starts_with("--config-env")));
        !config && args[at].as_deref().is_some_and(|s| KEEPS_HEAD.contains(&s))
    });
    let writes = analysis.writes.iter().all(|w| w.value().is_some_and(|v| v == "/dev/null"));
    let chdir = changes_dir(analysis);
    let git_vars = analysis.texts.iter().any(|t| {
        t.word.literals().contains("GIT_")
            || matches!(&t.site, Site::Assignment { name } if name.starts_with("GIT_"))
    }) || policy.sandbox.env.iter().any(|e| e.starts_with("GIT_"));
    programs && writes && !chdir && !git_vars
}

/// What a `git` program does that the rule refuses.
fn violation(cmd: &Cmd, ctx: &Context<'_>) -> Option<Violation> {
    if !cmd.names().any(|n| n == "git") {
        return None;
    }
    let args = args(cmd);
    let at = subcommand(&args)?;
    let g = globals(cmd, &args, at, ctx);
    let after = &args[at + 1..];
    let head = || match &g.dir {
        Some(d) if ctx.head_stays && !g.elsewhere && !g.config => git_head::read(d),
        _ => Head::Unknown,
    };
    let force_create = |found: Option<Option<&str>>| match found? {
        None => Some(Violation::MoveUnknown("force-creates a branch only the run can tell")),
        Some(b) => ctx.protected.is_match(b).then(|| Violation::Move("resets", b.to_string())),
    };
    match args[at].as_deref()? {
        "push" => push(after, &ctx.protected),
        "branch" => branch(after, ctx, &head),
        "checkout" => force_create(force_created(after, &['b', 'B'], 'B', None)),
        "switch" => force_create(force_created(after, &['c', 'C'], 'C', Some("--force-create"))),
        "update-ref" => update_ref(after, ctx, &head),
        "reset" => reset(after, ctx, &head),
        "config" => config(after, &cmd.argv[at + 2..], ctx, g.dir.as_deref()),
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
        Violation::Move("resets", b) => format!(
            "it resets the protected branch '{b}' (to unstage files, write `git reset -- PATH`; to rework history, do it on a branch of your own)"
        ),
        Violation::Move(how, b) => format!("it {how} the protected branch '{b}'"),
        Violation::MoveUnknown(how) => {
            format!("it {how}, which cannot be known not to move a protected branch")
        }
        Violation::Config(scope) => {
            format!("it changes git's {} configuration, outside the repository (git config {scope}, git-protected)", &scope[2..])
        }
        Violation::ConfigFile(path) => format!(
            "it changes the git configuration file '{path}', which is the user's or the system's, outside the repository (git config --file, git-protected)"
        ),
        Violation::ConfigFileUnknown => "it changes a git configuration file it names through an expansion or from an unknown directory, which cannot be known not to be the user's or the system's (git config --file, git-protected)".into(),
    };
    let why = if matches!(v, Violation::Config(_) | Violation::ConfigFile(_) | Violation::ConfigFileUnknown) {
        ""
    } else {
        " (git-protected, Sandbox.Git.ProtectedBranches)"
    };
    format!("[DENIED] Shell command blocked: {what}{why}.\n{}", super::ASK_THE_USER)
}

/// The rule, for a command that runs in `cwd`.
pub fn check(policy: &Policy, analysis: &Analysis, cwd: &Path) -> Option<Decision> {
    let ctx = Context {
        policy,
        protected: globs(policy),
        cwd,
        head_stays: head_stays(policy, analysis),
        changes_dir: changes_dir(analysis),
    };
    let v = analysis.cmds.iter().find_map(|c| violation(c, &ctx))?;
    Some(Decision::deny("git-protected", message(&v)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::shell::analysis::analyse;
    use crate::guard::shell::tests::{fixture, policy, Fixture};

    /// A repository root (`.git/HEAD` on `head`) and the default policy for it.
    fn repo(head: &str) -> (Fixture, Policy) {
        let fx = fixture();
        std::fs::create_dir_all(fx.root.join(".git")).unwrap();
        std::fs::write(fx.root.join(".git/HEAD"), head).unwrap();
        let p = policy(&fx, "", false);
        (fx, p)
    }

    fn judge_at(command: &str, head: &str) -> Option<Violation> {
        let (fx, policy) = repo(head);
        let analysis = analyse(command).unwrap();
        let ctx = Context {
            policy: &policy,
            protected: globs(&policy),
            cwd: &fx.root,
            head_stays: head_stays(&policy, &analysis),
            changes_dir: changes_dir(&analysis),
        };
        analysis.cmds.iter().find_map(|c| violation(c, &ctx))
    }

    fn judge(command: &str) -> Option<Violation> {
        judge_at(command, "ref: refs/heads/feature\n")
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
    fn branch_moves_renames_and_copies() {
        use Violation::*;
        for (command, expected) in [
            ("git branch -f main HEAD~3", Some(Move("resets", "main".into()))),
            ("git branch --force release-1 abc", Some(Move("resets", "release-1".into()))),
            ("git branch -f $B", Some(MoveUnknown("resets a branch only the run can tell"))),
            ("git branch -m feature main", Some(Move("renames a branch onto", "main".into()))),
            ("git branch -M main", Some(Move("renames a branch onto", "main".into()))),
            ("git branch --move master old", Some(Move("renames away", "master".into()))),
            ("git branch -m main old", Some(Move("renames away", "main".into()))),
            ("git branch -c feature main", Some(Move("copies a branch onto", "main".into()))),
            ("git branch -C master", Some(Move("copies a branch onto", "master".into()))),
            ("git branch --copy x release-9", Some(Move("copies a branch onto", "release-9".into()))),
            ("git checkout -B main", Some(Move("resets", "main".into()))),
            ("git checkout -qB main origin/main", Some(Move("resets", "main".into()))),
            ("git checkout -Bmaster", Some(Move("resets", "master".into()))),
            ("git switch -C main", Some(Move("resets", "main".into()))),
            ("git switch --force-create=release-2", Some(Move("resets", "release-2".into()))),
            ("git switch --force-create main", Some(Move("resets", "main".into()))),
            ("git checkout -B $B", Some(MoveUnknown("force-creates a branch only the run can tell"))),
            ("git branch -f feature", None),
            ("git branch -f feature main", None),
            ("git branch -m feature2", None),
            ("git branch -m feature feature2", None),
            ("git branch -c main main-copy", None),
            ("git branch -u origin/main", None),
            ("git branch --set-upstream-to origin/main feature", None),
            ("git checkout -B feature main", None),
            ("git checkout -b main-fix main", None),
            ("git checkout main", None),
            ("git switch -c main-fix", None),
            ("git switch -C feature", None),
        ] {
            assert_eq!(judge(command), expected, "{command}");
        }
        // Renaming the current branch: read from HEAD, refused where HEAD cannot be read.
        let renames_away = Some(Move("renames away", "main".into()));
        assert_eq!(judge_at("git branch -m trunk", "ref: refs/heads/main\n"), renames_away);
        assert_eq!(judge_at("git branch -m trunk", "ref: refs/heads/feature\n"), None);
        assert_eq!(judge_at("git branch -m trunk", "junk"), Some(MoveUnknown("renames the current branch")));
    }

    #[test]
    fn update_ref() {
        use Violation::*;
        for (command, expected) in [
            ("git update-ref refs/heads/main abc", Some(Move("updates the ref of", "main".into()))),
            (
                "git update-ref -m msg refs/heads/release-3 abc def",
                Some(Move("updates the ref of", "release-3".into())),
            ),
            ("git update-ref main abc", Some(Move("updates the ref of", "main".into()))),
            ("git update-ref -d refs/heads/master", Some(Delete("master".into()))),
            ("git update-ref --stdin", Some(MoveUnknown("reads its ref updates from standard input"))),
            (
                "git update-ref -z --stdin < refs.txt",
                Some(MoveUnknown("reads its ref updates from standard input")),
            ),
            ("git update-ref $R abc", Some(MoveUnknown("updates a ref only the run can tell"))),
            ("git update-ref refs/heads/feature abc", None),
            ("git update-ref -d refs/heads/feature", None),
            ("git update-ref refs/tags/main abc", None),
            ("git update-ref --no-deref HEAD abc", None),
            ("git update-ref HEAD abc", None),
        ] {
            assert_eq!(judge(command), expected, "{command}");
        }
        assert_eq!(
            judge_at("git update-ref HEAD abc", "ref: refs/heads/main\n"),
            Some(Move("updates the ref of", "main".into()))
        );
    }

    #[test]
    fn reset_moves_the_current_branch() {
        use Violation::*;
        let (main, feature) = ("ref: refs/heads/main\n", "ref: refs/heads/feature\n");
        let resets_main = Some(Move("resets", "main".into()));
        let unknown = Some(MoveUnknown("resets the current branch"));
        for (command, head, expected) in [
            ("git reset --hard HEAD~1", main, resets_main.clone()),
            ("git reset --keep origin/main", main, resets_main.clone()),
            ("git reset --merge abc", main, resets_main.clone()),
            ("git reset --soft HEAD^", main, resets_main.clone()),
            ("git reset --mixed HEAD~2", main, resets_main.clone()),
            ("git reset HEAD~1", main, resets_main.clone()),
            ("git reset -q --hard HEAD~1 --", main, resets_main.clone()),
            ("git reset --hard $REV", main, resets_main.clone()),
            ("git status && git reset --hard HEAD~1", main, resets_main.clone()),
            ("git -C . reset --hard HEAD~1", main, resets_main.clone()),
            ("git reset --hard HEAD~1", feature, None),
            ("git status && git reset --soft HEAD~1 | cat", feature, None),
            ("git add -A && git commit -m wip && git reset --soft HEAD~1", feature, None),
            ("git reset --hard HEAD~1", &"0".repeat(40), None),
            ("git reset --hard", main, None),
            ("git reset --hard HEAD", main, None),
            ("git reset", main, None),
            ("git reset -- src/a.rs", main, None),
            ("git reset HEAD src/a.rs", main, None),
            ("git reset HEAD~1 -- src/a.rs", main, None),
            ("git reset -p", main, None),
            ("git reset --pathspec-from-file=list", main, None),
            // Where the branch could change first, or the repository is another, it is unknown.
            ("git checkout main && git reset --hard HEAD~1", feature, unknown.clone()),
            ("git reset --hard HEAD~1; git switch main", feature, unknown.clone()),
            ("cd sub && git reset --hard HEAD~1", feature, unknown.clone()),
            ("echo 'ref: refs/heads/main' > .git/HEAD; git reset --hard HEAD~1", feature, unknown.clone()),
            ("git -c core.hooksPath=h commit -m x && git reset --hard HEAD~1", feature, unknown.clone()),
            ("GIT_DIR=/other/.git git reset --hard HEAD~1", feature, unknown.clone()),
            ("git --git-dir=/other/.git reset --hard HEAD~1", feature, unknown.clone()),
            ("git -C $D reset --hard HEAD~1", feature, unknown.clone()),
            ("env -C /elsewhere git reset --hard HEAD~1", feature, unknown.clone()),
            ("sh -c 'cd /elsewhere; git reset --hard HEAD~1'", feature, unknown.clone()),
            ("find . -name x -exec git reset --hard HEAD~1 ';'", feature, unknown.clone()),
            ("git reset --hard HEAD~1", "junk\n", unknown.clone()),
        ] {
            assert_eq!(judge_at(command, head), expected, "{command} on {head:?}");
        }
        let (fx, p) = repo(feature);
        std::os::unix::fs::symlink(fx.root.join(".git"), fx.outside.join(".git")).unwrap();
        let linked = check(&p, &analyse("git reset --hard HEAD~1").unwrap(), &fx.outside);
        assert!(linked.is_some(), "a .git symlink is not followed: the branch is unknown");
    }

    #[test]
    fn config_files_of_the_user_and_the_system() {
        use Violation::*;
        let home = |rest: &str| Some(ConfigFile(format!("/home/agent/{rest}")));
        for (command, expected) in [
            ("git config --file ~/.gitconfig user.name x", home(".gitconfig")),
            ("git config -f ~/.gitconfig alias.p push", home(".gitconfig")),
            ("git config --file=~/.gitconfig user.name x", home(".gitconfig")),
            ("git config --file $HOME/.gitconfig user.name x", home(".gitconfig")),
            ("git config --file=$HOME/.config/git/config user.name x", home(".config/git/config")),
            ("git config -f /home/agent/.gitconfig user.name x", home(".gitconfig")),
            ("git config -f /home/agent/x/../.gitconfig user.name x", home(".gitconfig")),
            ("git config -f /etc/gitconfig core.pager cat", Some(ConfigFile("/etc/gitconfig".into()))),
            ("git config -f/etc/gitconfig core.pager cat", Some(ConfigFile("/etc/gitconfig".into()))),
            ("git config --file $XDG_CONFIG_HOME/git/config x y", Some(ConfigFileUnknown)),
            ("git config --file $F x y", Some(ConfigFileUnknown)),
            ("git config --file ~other/.gitconfig x y", Some(ConfigFileUnknown)),
            ("cd ~ && git config -f .gitconfig x y", Some(ConfigFileUnknown)),
            ("env -C /home/agent git config -f .gitconfig x y", Some(ConfigFileUnknown)),
            ("cd /home && git config -f agent/.config/git/config x y", Some(ConfigFileUnknown)),
            ("git config --file ./local.cfg x y", None),
            ("git config -f local.cfg x y", None),
            ("cd sub && git config -f local.cfg x y", None),
            ("git config --file ~/.gitconfig --get user.name", None),
            ("git config -f ~/.gitconfig --list", None),
            ("git config --file .git/config x y", None),
        ] {
            assert_eq!(judge(command), expected, "{command}");
        }
    }

    #[test]
    fn relative_and_symlinked_config_paths_are_resolved() {
        let fx = fixture();
        let mut p = policy(&fx, "", false);
        let home = fx.base.join("home");
        std::fs::create_dir_all(&home).unwrap();
        p.session.home = Some(home.clone());
        std::os::unix::fs::symlink(home.join(".gitconfig"), fx.root.join("cfg")).unwrap();
        let decide = |command: &str| check(&p, &analyse(command).unwrap(), &fx.root).map(|d| d.rule);
        assert_eq!(decide("git config -f ../home/.gitconfig x y").as_deref(), Some("git-protected"));
        assert_eq!(decide("git config -f cfg x y").as_deref(), Some("git-protected"));
        assert_eq!(decide("git -C .. config -f home/.gitconfig x y").as_deref(), Some("git-protected"));
        assert_eq!(decide("git config -f ../home/other.cfg x y"), None);
        assert_eq!(decide("git config -f local.cfg x y"), None);
    }

    #[test]
    fn configured_globs_decide() {
        let fx = fixture();
        let mut p = policy(&fx, "", false);
        p.sandbox.protected_branches = vec!["prod/*".into()];
        let decide = |command: &str| check(&p, &analyse(command).unwrap(), &fx.root);
        assert!(decide("git push -f origin prod/eu").is_some());
        assert!(decide("git push -f origin main").is_none());
    }
}
