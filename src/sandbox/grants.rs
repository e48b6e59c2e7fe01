//! Write grants: `FileSystemPermissions.Write` and `ChangeEnvelope` made kernel rules.
//!
//! Both lists say "inside the roots, only these may be written" (both must allow a write when both
//! are set). The file tools check them per call (`guard::path`); for a sandboxed program the child's
//! view does the same: the roots are mounted read-only and only what the lists cover is mounted
//! read-write on top — a directory for `dir/**`, the file itself for a literal path or a glob that
//! matches existing files. What cannot be expressed as mounts fails closed: a granted directory
//! that does not exist yet cannot be created, and a new file matching a glob in a read-only
//! directory cannot be created either; [`WriteGrants::notes`] says so for `explain`.
//!
//! Call [`compute`] once per plan, after the walk of the roots ([`super::masks::scan`]) has listed the
//! files the write lists match: this module walks nothing itself.

use std::path::{Path, PathBuf};

use super::masks::Snapshot;
use crate::policy::{GlobRules, Policy};

/// The read-write places inside the read-only roots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteGrants {
    pub dirs: Vec<PathBuf>,
    pub files: Vec<PathBuf>,
    /// Patterns that grant nothing on this tree, and why.
    pub notes: Vec<String>,
}

/// A name no real directory entry can have (it contains a NUL byte): `dir/INSIDE` stands for
/// "anything inside `dir`" when asking whether a list covers a whole directory.
const INSIDE: &str = "\u{0}inside";

/// Whether the policy restricts writes inside the roots at all.
pub fn restricted(policy: &Policy) -> bool {
    !policy.write.is_empty() || policy.change_envelope.is_some()
}

/// The places both lists allow, under each root; `walked` is the walk of (at least) those roots.
pub fn compute(policy: &Policy, roots: &[PathBuf], walked: &Snapshot) -> WriteGrants {
    let lists: Vec<&GlobRules> =
        [Some(&policy.write).filter(|w| !w.is_empty()), policy.change_envelope.as_ref()]
            .into_iter()
            .flatten()
            .collect();
    let mut out = WriteGrants::default();
    out.files.extend(walked.write_matches.iter().filter(|f| roots.iter().any(|r| f.starts_with(r))).cloned());
    let allowed = |rel: &Path| lists.iter().all(|l| l.match_covering(rel).is_some());
    for root in roots {
        for list in &lists {
            for rule in list.rules() {
                let pattern = rule.pattern.trim_start_matches("./");
                let (literal, whole_dir) = match pattern.strip_suffix("/**") {
                    Some(prefix) => (prefix, true),
                    None => (pattern, false),
                };
                if literal.contains(['*', '?', '[', '{', '\\']) {
                    continue;
                }
                let path = root.join(literal);
                let rel = Path::new(literal);
                match std::fs::symlink_metadata(&path) {
                    Ok(m) if m.is_dir() && whole_dir => {
                        // The other list may be narrower inside this directory: then its own
                        // entries are the grants, found when that list is examined.
                        if allowed(&rel.join(INSIDE)) {
                            out.dirs.push(path);
                        }
                    }
                    Ok(m) if m.is_file() && !whole_dir && allowed(rel) => out.files.push(path),
                    Ok(_) => {}
                    Err(_) => out.notes.push(format!(
                        "'{}' ({}) grants nothing: '{}' does not exist, and the read-only root cannot get it",
                        rule.pattern,
                        rule.origin,
                        path.display()
                    )),
                }
            }
        }
    }
    out.dirs.sort();
    out.dirs.dedup();
    let dirs = out.dirs.clone();
    out.dirs.retain(|d| !dirs.iter().any(|o| o != d && d.starts_with(o)));
    out.files.sort();
    out.files.dedup();
    out.files.retain(|f| !out.dirs.iter().any(|d| f.starts_with(d)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::load::{load, LoadRequest};

    fn policy(root: &Path, yaml: &str) -> Policy {
        let cfg = root.join("h.yaml");
        std::fs::write(&cfg, yaml).unwrap();
        load(&LoadRequest { cwd: root.to_path_buf(), config: Some(cfg), ..Default::default() }).unwrap()
    }

    fn walk(p: &Policy, root: &Path) -> Snapshot {
        crate::sandbox::masks::scan_policy(p, std::slice::from_ref(&root.to_path_buf())).unwrap()
    }

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        for d in ["docs", "src/billing", "src/auth", "tests/billing"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in ["src/billing/a.go", "src/auth/b.go", "src/payments.go", "README.md", "docs/x.md"] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        (t, root)
    }

    #[test]
    fn directories_files_and_globs() {
        let (_t, root) = tree();
        let p = policy(&root, "Security:\n  FileSystemPermissions:\n    Write: [docs/**, src/payments.go, '*.md', missing/**]\n");
        let g = compute(&p, std::slice::from_ref(&root), &walk(&p, &root));
        assert_eq!(g.dirs, vec![root.join("docs")]);
        assert_eq!(g.files, vec![root.join("README.md"), root.join("src/payments.go")]);
        assert_eq!(g.notes.len(), 1, "{:?}", g.notes);
    }

    #[test]
    fn write_and_envelope_intersect() {
        let (_t, root) = tree();
        let p = policy(
            &root,
            "Security:\n  FileSystemPermissions:\n    Write: [src/**, tests/**]\n  ChangeEnvelope: [src/billing/**, tests/billing/**, docs/**]\n",
        );
        let g = compute(&p, std::slice::from_ref(&root), &walk(&p, &root));
        assert_eq!(g.dirs, vec![root.join("src/billing"), root.join("tests/billing")]);
        assert!(g.files.is_empty());
    }
}
