//! What must not change for whatever runs after the call, outside any sandbox: the check that the
//! loaded policy files really are out of the program's reach, and the hooks directory a
//! repository's `core.hooksPath` names (husky, lefthook, a team's `tools/hooks`).
//!
//! [`hooks_path`] is called by the walk ([`super::masks`]) for every repository it finds: the
//! directory is then bound read-only like `.git/hooks`.
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

/// The hooks directory `core.hooksPath` names in the repository config `git_dir/config`,
/// resolved like git does (relative to the working tree, `git_dir`'s parent); `None` when unset.
pub fn hooks_path(git_dir: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(git_dir.join("config")).ok()?;
    let value = config_value(&text, "core", "hookspath")?;
    let path = Path::new(&value);
    Some(if path.is_absolute() { path.to_path_buf() } else { git_dir.parent()?.join(path) })
}

/// The last value of `section.key` in a git config text (names compared case-insensitively,
/// surrounding quotes removed); enough for the one key asked.
fn config_value(text: &str, section: &str, key: &str) -> Option<String> {
    let mut current = String::new();
    let mut found = None;
    for line in text.lines() {
        let line = line.trim();
        if let Some(rest) = line.strip_prefix('[') {
            let name = rest.split([']', ' ', '"']).next().unwrap_or("");
            current = name.to_ascii_lowercase();
            continue;
        }
        if current != section {
            continue;
        }
        let Some((k, v)) = line.split_once('=') else { continue };
        if k.trim().eq_ignore_ascii_case(key) {
            let v = v.split([';', '#']).next().unwrap_or("").trim();
            found = Some(v.trim_matches('"').to_string());
        }
    }
    found.filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::masks::Mask;

    #[test]
    fn core_hooks_path_is_read_like_git() {
        let t = tempfile::tempdir().unwrap();
        let git = t.path().join("repo/.git");
        std::fs::create_dir_all(&git).unwrap();
        std::fs::write(
            git.join("config"),
            "[user]\n\thooksPath = no\n[core]\n\tbare = false\n\tHooksPath = \".husky/_\" ; husky\n",
        )
        .unwrap();
        assert_eq!(hooks_path(&git), Some(t.path().join("repo/.husky/_")));
        std::fs::write(git.join("config"), "[core]\n\thookspath=/srv/hooks\n").unwrap();
        assert_eq!(hooks_path(&git), Some(PathBuf::from("/srv/hooks")));
        std::fs::write(git.join("config"), "[core]\n\tbare = false\n").unwrap();
        assert_eq!(hooks_path(&git), None);
    }

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
