//! The other names of a denied file. A mask covers a path, not an inode: a second hard link to a
//! denied `.env` elsewhere in the trees the child sees (`cp -al` snapshots, a backup tool, a
//! user's `ln`) would show the same content under a name no deny rule matches.
//!
//! Order: the walk ([`super::masks`]) has produced the call's [`Snapshot`] →
//! [`other_names`] stats each denied regular file the walk did not already find with a single
//! link (nothing more is paid while every one has a single link) and, only when one has more
//! than one link, searches the trees for the other names of those inodes → [`add_masks`] masks
//! each name found like the file it is a name of (both the mount view and Landlock-only mode
//! take their denied paths from the masks).
//!
//! The child cannot make such a link itself: `link()` of a masked path links the mask, on
//! another filesystem (`EXDEV`). Names outside the trees do not matter: the child cannot reach
//! them.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::masks::{Mask, MaskKind, Snapshot, Stamped, WalkLimits};
use crate::policy::Policy;

/// Why the other names of a denied file could not all be looked for.
#[derive(Debug, Clone, thiserror::Error)]
#[error("'{file}' has {links} hard links, and the search of '{tree}' for its other names {reason}")]
pub struct SearchError {
    pub file: PathBuf,
    pub links: u64,
    pub tree: PathBuf,
    pub reason: String,
}

/// A name under which a denied file's inode is also reachable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OtherName {
    pub path: PathBuf,
    /// The denied file it is a name of, and that file's deny rule.
    pub of: PathBuf,
    pub pattern: String,
    pub inode: (u64, u64),
}

/// The names inside `trees` of the denied regular files of `snapshot` (their masks, and the
/// files inside denied directories) that the masks do not cover already.
pub fn other_names(
    snapshot: &Snapshot,
    trees: &[PathBuf],
    limits: &WalkLimits,
) -> Result<Vec<OtherName>, SearchError> {
    let files: Vec<&Mask> = snapshot.masks.iter().filter(|m| m.kind == MaskKind::File).collect();
    // The walk's stat of a masked file says whether it has other links; only the others are
    // stat'ed here (the masks are sorted like the stamps).
    let stamped = super::masks::in_step(files.iter().map(|m| m.path.as_path()), &snapshot.stamps);
    let single = |stamped: Option<&Stamped>| stamped.and_then(|s| s.aside).is_some_and(|a| a.links < 2);
    let denied = stamped
        .into_iter()
        .zip(&files)
        .filter(|((_, stamped), _)| !single(*stamped))
        .map(|((path, _), mask)| (path, mask.pattern.as_str()))
        .chain(snapshot.covered_files.iter().map(|f| (f.as_path(), "a denied directory")));
    let mut linked: BTreeMap<(u64, u64), (PathBuf, String, u64)> = BTreeMap::new();
    for (path, pattern) in denied {
        match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.is_file() && meta.nlink() > 1 => {
                linked.insert(
                    (meta.dev(), meta.ino()),
                    (path.to_path_buf(), pattern.to_string(), meta.nlink()),
                );
            }
            _ => {}
        }
    }
    if linked.is_empty() {
        return Ok(Vec::new());
    }
    let masked = |p: &Path| snapshot.masks.iter().any(|m| p.starts_with(&m.path));
    let mut found = Vec::new();
    for tree in trees {
        let fail = |reason: String| {
            let (file, _, links) = linked.values().next().expect("linked is not empty");
            SearchError { file: file.clone(), links: *links, tree: tree.clone(), reason }
        };
        let mut seen = 0usize;
        let mut entries = walkdir::WalkDir::new(tree).follow_links(false).into_iter();
        while let Some(entry) = entries.next() {
            let entry = entry.map_err(|e| fail(format!("could not read a directory: {e}")))?;
            seen += 1;
            if seen > limits.max_entries || entry.depth() > limits.max_depth {
                return Err(fail(format!(
                    "passed the walk's bounds ({} entries, depth {})",
                    limits.max_entries, limits.max_depth
                )));
            }
            if masked(entry.path()) {
                if entry.file_type().is_dir() {
                    entries.skip_current_dir();
                }
                continue;
            }
            if !entry.file_type().is_file() {
                continue;
            }
            let meta = entry.metadata().map_err(|e| fail(format!("could not stat an entry: {e}")))?;
            if meta.nlink() < 2 {
                continue;
            }
            if let Some((of, pattern, _)) = linked.get(&(meta.dev(), meta.ino())) {
                let inode = (meta.dev(), meta.ino());
                found.push(OtherName {
                    path: entry.into_path(),
                    of: of.clone(),
                    pattern: pattern.clone(),
                    inode,
                });
            }
        }
    }
    found.sort_by(|a, b| a.path.cmp(&b.path));
    found.dedup_by(|a, b| a.path == b.path);
    Ok(found)
}

/// Masks each of `names` as the denied file it is a name of, with the inode the child checks
/// before mounting onto it.
pub fn add_masks(snapshot: &mut Snapshot, names: &[OtherName]) {
    for n in names {
        let pattern = format!("{} (a hard link of '{}')", n.pattern, n.of.display());
        snapshot.masks.push(Mask { path: n.path.clone(), kind: MaskKind::File, pattern, via_symlink: None });
        snapshot.identities.insert(n.path.clone(), n.inode);
    }
}

/// For `check path`: the denied file `path` is another name of, when it is a regular file with
/// more than one link in the trees a call's walk covers (`None` at once for a single link).
/// A walk that fails, or a search past the bounds, counts as a match (fail closed).
pub fn denied_name(policy: &Policy, path: &Path) -> Option<PathBuf> {
    let meta = std::fs::symlink_metadata(path).ok()?;
    if !meta.is_file() || meta.nlink() < 2 {
        return None;
    }
    let trees = super::plan::walked_dirs(policy);
    if !trees.iter().any(|t| path.starts_with(t)) {
        return None;
    }
    let Ok(snapshot) = super::masks::scan_policy(policy, &trees) else { return Some(path.to_path_buf()) };
    match other_names(&snapshot, &trees, &WalkLimits::default()) {
        Ok(names) => names.into_iter().find(|n| n.path == path).map(|n| n.of),
        Err(e) => Some(e.file),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn denied(path: &Path) -> Snapshot {
        Snapshot {
            masks: vec![Mask {
                path: path.into(),
                kind: MaskKind::File,
                pattern: ".env".into(),
                via_symlink: None,
            }],
            ..Snapshot::default()
        }
    }

    #[test]
    fn every_other_name_inside_the_trees_is_found_and_a_single_link_costs_no_search() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".env"), "TOKEN=x\n").unwrap();
        std::fs::write(root.join("plain.txt"), "plain\n").unwrap();
        let trees = vec![root.to_path_buf()];
        let limits = WalkLimits::default();
        assert_eq!(other_names(&denied(&root.join(".env")), &trees, &limits).unwrap(), vec![]);

        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::hard_link(root.join(".env"), root.join("a/b/notes.txt")).unwrap();
        std::fs::hard_link(root.join("plain.txt"), root.join("a/plain-copy.txt")).unwrap();
        let names = other_names(&denied(&root.join(".env")), &trees, &limits).unwrap();
        let paths: Vec<&Path> = names.iter().map(|n| n.path.as_path()).collect();
        assert_eq!(paths, vec![root.join("a/b/notes.txt").as_path()]);
        assert_eq!(names[0].of, root.join(".env"));

        let mut snapshot = denied(&root.join(".env"));
        add_masks(&mut snapshot, &names);
        assert!(snapshot.masks.iter().any(|m| m.path == root.join("a/b/notes.txt")));
        assert!(snapshot.identities.contains_key(&root.join("a/b/notes.txt")));
    }

    #[test]
    fn a_search_past_the_bounds_fails_closed_naming_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join(".env"), "TOKEN=x\n").unwrap();
        std::fs::hard_link(root.join(".env"), root.join("other")).unwrap();
        for i in 0..10 {
            std::fs::write(root.join(format!("f{i}")), "").unwrap();
        }
        let limits = WalkLimits { max_entries: 5, ..WalkLimits::default() };
        let err = other_names(&denied(&root.join(".env")), &[root.to_path_buf()], &limits).unwrap_err();
        assert_eq!(err.file, root.join(".env"));
        assert!(err.to_string().contains("passed the walk's bounds"), "{err}");
    }
}
