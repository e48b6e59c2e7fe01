//! The branch a repository's `HEAD` names, read from its `HEAD` file, for the `git-protected`
//! rule (`git reset`, `git branch -m NEW`, `git update-ref HEAD` move the current branch).
//!
//! [`read`] finds the repository as git does from a directory — walking up to the first
//! directory with a `.git` directory or a `.git` file (`gitdir: …`, a worktree or submodule), or
//! one that is itself a git directory (bare) — and reads its `HEAD`: `ref: refs/heads/NAME` is
//! [`Head::Branch`], an object id is [`Head::Detached`]. Anything else is [`Head::Unknown`] and the
//! rule fails closed: no repository, a `.git` or `HEAD` that is a symlink or not a regular file,
//! a `HEAD` over 4 KiB or naming something else than a branch. Nothing is followed through a
//! symlink and nothing is written.

use std::io::Read;
use std::path::{Path, PathBuf};

/// The most a `HEAD` or `.git` file is read of.
const MAX_FILE: u64 = 4096;

/// What the repository's `HEAD` names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    Branch(String),
    /// An object id: no branch moves.
    Detached,
    /// The repository or its `HEAD` could not be read safely.
    Unknown,
}

/// The `HEAD` of the repository git would find from `dir`.
pub fn read(dir: &Path) -> Head {
    let Some(git_dir) = discover(dir) else { return Head::Unknown };
    match small_file(&git_dir.join("HEAD")) {
        Some(text) => parse(&text),
        None => Head::Unknown,
    }
}

fn parse(text: &str) -> Head {
    let line = text.strip_suffix('\n').unwrap_or(text);
    if let Some(target) = line.strip_prefix("ref: ") {
        return match target.strip_prefix("refs/heads/") {
            Some(b) if !b.is_empty() && !b.contains(char::is_whitespace) => Head::Branch(b.to_string()),
            _ => Head::Unknown,
        };
    }
    if matches!(line.len(), 40 | 64) && line.bytes().all(|b| b.is_ascii_hexdigit()) {
        Head::Detached
    } else {
        Head::Unknown
    }
}

/// A regular file's text, at most [`MAX_FILE`] bytes, not through a symlink.
fn small_file(path: &Path) -> Option<String> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_FILE {
        return None;
    }
    let mut text = String::new();
    std::fs::File::open(path).ok()?.take(MAX_FILE).read_to_string(&mut text).ok()?;
    Some(text)
}

/// Whether `dir` is itself a git directory (a bare repository, or `.git` as the working directory).
fn is_git_dir(dir: &Path) -> bool {
    let is = |name: &str, dir_expected: bool| {
        std::fs::symlink_metadata(dir.join(name)).is_ok_and(|m| {
            if dir_expected {
                m.is_dir()
            } else {
                m.is_file()
            }
        })
    };
    is("HEAD", false) && is("objects", true) && is("refs", true)
}

/// The git directory git would use from `start`.
fn discover(start: &Path) -> Option<PathBuf> {
    let mut dir = Some(start);
    while let Some(d) = dir {
        let dot = d.join(".git");
        match std::fs::symlink_metadata(&dot) {
            Ok(m) if m.is_dir() => return Some(dot),
            Ok(m) if m.is_file() => {
                let text = small_file(&dot)?;
                let target = text.strip_prefix("gitdir: ")?.trim_end_matches('\n');
                let git_dir = d.join(target);
                return std::fs::symlink_metadata(&git_dir).ok().filter(|m| m.is_dir()).map(|_| git_dir);
            }
            Ok(_) => return None,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(_) => return None,
        }
        if is_git_dir(d) {
            return Some(d.to_path_buf());
        }
        dir = d.parent();
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_files_are_read_as_git_writes_them() {
        assert_eq!(parse("ref: refs/heads/main\n"), Head::Branch("main".into()));
        assert_eq!(parse("ref: refs/heads/feature/x"), Head::Branch("feature/x".into()));
        assert_eq!(parse(&"a".repeat(40)), Head::Detached);
        assert_eq!(parse("ref: refs/remotes/origin/main\n"), Head::Unknown);
        assert_eq!(parse("ref: refs/heads/\n"), Head::Unknown);
        assert_eq!(parse("garbage"), Head::Unknown);
    }

    #[test]
    fn the_repository_is_found_upwards_and_symlinks_are_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(repo.join("src/deep")).unwrap();
        std::fs::write(repo.join(".git/HEAD"), "ref: refs/heads/feature\n").unwrap();
        assert_eq!(read(&repo.join("src/deep")), Head::Branch("feature".into()));

        let wt = t.path().join("wt");
        std::fs::create_dir_all(repo.join(".git/worktrees/wt")).unwrap();
        std::fs::write(repo.join(".git/worktrees/wt/HEAD"), "ref: refs/heads/main\n").unwrap();
        std::fs::create_dir(&wt).unwrap();
        std::fs::write(wt.join(".git"), "gitdir: ../repo/.git/worktrees/wt\n").unwrap();
        assert_eq!(read(&wt), Head::Branch("main".into()));

        let linked = t.path().join("linked");
        std::fs::create_dir(&linked).unwrap();
        std::os::unix::fs::symlink(repo.join(".git"), linked.join(".git")).unwrap();
        assert_eq!(read(&linked), Head::Unknown);
        std::fs::remove_file(repo.join(".git/HEAD")).unwrap();
        std::os::unix::fs::symlink(repo.join(".git/worktrees/wt/HEAD"), repo.join(".git/HEAD")).unwrap();
        assert_eq!(read(&repo), Head::Unknown);
    }
}
