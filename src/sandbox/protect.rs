//! What must not change for whatever runs after the call, outside any sandbox: the check that the
//! loaded policy files really are out of the program's reach.
//!
//! The walk ([`super::masks`]) binds every policy file inside a writable tree read-only and pins
//! the directories between its root and it; [`unprotected_policy_files`] is called by the planner
//! once that walk is done, and names each policy file the view still leaves a way to change: one
//! with a second hard link (another name in the roots rewrites the same inode, and no mount can
//! cover it), or one the walk's protections do not cover. Strict mode refuses such a call.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::masks::{MaskKind, Snapshot};

/// A policy file the child's view could not protect, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unprotected {
    pub path: PathBuf,
    pub reason: String,
}

/// The policy files among `files` that lie in one of `writable` (the trees the program may write)
/// and that `snapshot` does not protect: bound read-only (or under a read-only or masked
/// directory) with every directory between their tree and them pinned or covered, and no other
/// name for the same inode.
pub fn unprotected_policy_files(
    files: &[PathBuf],
    writable: &[PathBuf],
    snapshot: &Snapshot,
) -> Vec<Unprotected> {
    let covered = |p: &Path| {
        snapshot.masks.iter().any(|m| p.starts_with(&m.path))
            || snapshot
                .read_only
                .iter()
                .any(|r| p == r.path || (r.kind == MaskKind::Dir && p.starts_with(&r.path)))
    };
    let mut out = Vec::new();
    for file in files {
        let Some(tree) = writable.iter().find(|w| file.starts_with(w)) else { continue };
        let links = std::fs::symlink_metadata(file).map(|m| m.nlink()).unwrap_or(1);
        let reason = if links > 1 && !snapshot.masks.iter().any(|m| file.starts_with(&m.path)) {
            Some(format!("it has {links} hard links: another name inside the roots rewrites the same file"))
        } else if !covered(file) {
            Some("the walk of the roots did not bind it read-only".to_string())
        } else {
            file.ancestors()
                .skip(1)
                .take_while(|d| d.starts_with(tree) && *d != tree.as_path())
                .find(|d| !covered(d) && !snapshot.pins.iter().any(|p| p == d))
                .map(|d| format!("its directory '{}' is not pinned: it could be renamed away", d.display()))
        };
        out.extend(reason.map(|reason| Unprotected { path: file.clone(), reason }));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::masks::Mask;

    fn entry(path: &Path, kind: MaskKind) -> Mask {
        Mask { path: path.to_path_buf(), kind, pattern: "p".into(), via_symlink: None }
    }

    #[test]
    fn a_policy_file_needs_a_read_only_bind_pinned_directories_and_one_name() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let file = root.join(".agent/h.yaml");
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, "").unwrap();
        let files = [file.clone()];
        let roots = [root.clone()];
        let mut snap = Snapshot::default();
        let reasons = |snap: &Snapshot| -> Vec<String> {
            unprotected_policy_files(&files, &roots, snap).into_iter().map(|u| u.reason).collect()
        };
        assert!(reasons(&snap)[0].contains("did not bind it"), "{:?}", reasons(&snap));
        snap.read_only.push(entry(&file, MaskKind::File));
        assert!(reasons(&snap)[0].contains("not pinned"), "{:?}", reasons(&snap));
        snap.pins.push(root.join(".agent"));
        assert!(reasons(&snap).is_empty());
        // Outside the writable trees, nothing is asked of it.
        assert!(unprotected_policy_files(&files, &[], &Snapshot::default()).is_empty());
        std::fs::hard_link(&file, root.join("other-name.yaml")).unwrap();
        assert!(reasons(&snap)[0].contains("2 hard links"), "{:?}", reasons(&snap));
    }
}
