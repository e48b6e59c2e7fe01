//! Deny inside a grant without a mount namespace: Landlock-only mode's answer to the masks.
//!
//! Landlock only grants, and a rule on a directory reaches everything below it, so a grant that
//! holds a denied path cannot stay one rule. [`split`] replaces every such grant by rules on the
//! allowed entries around the denied paths: from the granted directory down to each denied path,
//! every directory on the way keeps only the right to be listed, and each of its other entries
//! (files, directories without a denied path below them) gets the grant of its own. A denied path
//! gets no rule at all.
//!
//! What this cannot do, and why (measured by tests/sandbox_landlock_only.rs): a directory on the
//! way to a denied path has no right to create, remove or rename entries (`MAKE_*`/`REMOVE_*`
//! would reach the denied file too, or leave a zero-byte file that cannot be written), so
//! creating a new file beside a `.env` fails with `EACCES`; an entry created during the call
//! beside a denied path is not reachable; a denied file created during the call elsewhere in a
//! grant is not denied (like the masks). Symlinks get no rule: following one reaches only what its
//! target is granted. Hard links of a denied inode made by the program are refused by Landlock
//! (`EXDEV`: a link may not gain rights).
//!
//! Order: the caller passes the grants and the denied paths (the walk's masks); [`split`] reads
//! each directory on the way once, sorted, and fails closed on an unreadable one or past
//! [`MAX_RULES`].

use std::path::{Path, PathBuf};

use super::landlock::{Grant, PathRule};

/// Rules the split may produce in all (each costs the ruleset and every call a little; a tree
/// that needs more is refused, not half granted).
pub const MAX_RULES: usize = 20_000;

/// Why the grants could not be split.
#[derive(Debug, thiserror::Error)]
pub enum EnumerateError {
    #[error("cannot list '{}' to grant the entries beside a denied path: {source}", path.display())]
    List { path: PathBuf, source: std::io::Error },
    #[error(
        "granting the entries beside the denied paths in '{}' needs more than {MAX_RULES} Landlock rules",
        path.display()
    )]
    TooMany { path: PathBuf },
}

/// The grants with every denied path cut out.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Split {
    pub rules: Vec<PathRule>,
    /// The directories that were split: they keep their entries but get none created, removed
    /// or renamed (reported in the plan's notes).
    pub split_dirs: Vec<PathBuf>,
}

/// Replaces each rule that reaches a path of `denied` by rules on its allowed entries.
pub fn split(rules: &[PathRule], denied: &[PathBuf]) -> Result<Split, EnumerateError> {
    let mut out = Split::default();
    for rule in rules {
        if denied.iter().any(|d| rule.path.starts_with(d)) {
            continue;
        }
        if denied.iter().any(|d| d.starts_with(&rule.path)) {
            split_dir(&rule.path, rule.grant, denied, &mut out)?;
        } else {
            out.rules.push(rule.clone());
        }
    }
    // Two grants that lead to the same denied path (a root inside a granted /tmp) split the
    // same directories: one rule each is enough.
    let mut seen = std::collections::HashSet::new();
    out.rules.retain(|r| seen.insert((r.path.clone(), r.grant)));
    let mut seen = std::collections::HashSet::new();
    out.split_dirs.retain(|d| seen.insert(d.clone()));
    Ok(out)
}

fn split_dir(dir: &Path, grant: Grant, denied: &[PathBuf], out: &mut Split) -> Result<(), EnumerateError> {
    let list = |source| EnumerateError::List { path: dir.to_path_buf(), source };
    let mut entries: Vec<(PathBuf, std::fs::FileType)> = std::fs::read_dir(dir)
        .map_err(list)?
        .map(|e| e.and_then(|e| Ok((e.path(), e.file_type()?))))
        .collect::<Result<_, _>>()
        .map_err(list)?;
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    out.split_dirs.push(dir.to_path_buf());
    out.rules.push(PathRule { path: dir.to_path_buf(), grant: Grant::List });
    for (path, kind) in entries {
        if kind.is_symlink() || denied.contains(&path) {
            continue;
        }
        if kind.is_dir() && denied.iter().any(|d| d.starts_with(&path)) {
            split_dir(&path, grant, denied, out)?;
        } else {
            out.rules.push(PathRule { path, grant });
        }
        if out.rules.len() > MAX_RULES {
            return Err(EnumerateError::TooMany { path: dir.to_path_buf() });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree() -> tempfile::TempDir {
        let t = tempfile::tempdir().unwrap();
        for d in ["a/b", "a/c", "d"] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        for f in [".env", "README", "a/b/key.pem", "a/b/ok.txt", "a/c/x", "d/y"] {
            std::fs::write(t.path().join(f), "x").unwrap();
        }
        std::os::unix::fs::symlink("/etc/hostname", t.path().join("link")).unwrap();
        t
    }

    fn paths(s: &Split, root: &Path) -> Vec<(String, Grant)> {
        s.rules.iter().map(|r| (r.path.strip_prefix(root).unwrap().display().to_string(), r.grant)).collect()
    }

    #[test]
    fn each_sibling_on_the_way_to_a_denied_path_is_granted_and_the_denied_one_is_not() {
        let t = tree();
        let root = t.path();
        let rules = vec![PathRule { path: root.into(), grant: Grant::ReadWrite }];
        let s = split(&rules, &[root.join(".env"), root.join("a/b/key.pem")]).unwrap();
        use Grant::{List, ReadWrite as Rw};
        assert_eq!(
            paths(&s, root),
            [
                ("", List),
                ("README", Rw),
                ("a", List),
                ("a/b", List),
                ("a/b/ok.txt", Rw),
                ("a/c", Rw),
                ("d", Rw)
            ]
            .map(|(p, g)| (p.to_string(), g))
        );
        assert_eq!(s.split_dirs, vec![root.to_path_buf(), root.join("a"), root.join("a/b")]);
    }

    #[test]
    fn grants_without_denied_paths_stay_whole_and_a_denied_grant_goes() {
        let t = tree();
        let root = t.path();
        let rules = vec![
            PathRule { path: root.join("d"), grant: Grant::ReadExec },
            PathRule { path: root.join("a/c"), grant: Grant::ReadWrite },
        ];
        let s = split(&rules, &[root.join("a")]).unwrap();
        assert_eq!(s.rules, vec![rules[0].clone()]);
        assert!(s.split_dirs.is_empty());
    }

    #[test]
    fn an_unreadable_directory_on_the_way_fails_closed() {
        let rules = vec![PathRule { path: "/nonexistent-hw".into(), grant: Grant::ReadWrite }];
        let e = split(&rules, &["/nonexistent-hw/.env".into()]).unwrap_err();
        assert!(e.to_string().contains("cannot list '/nonexistent-hw'"), "{e}");
    }
}
