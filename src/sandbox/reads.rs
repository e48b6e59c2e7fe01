//! Read grants: `FileSystemPermissions.Read` made kernel rules, so that `run` and `sh` read what
//! `check path` allows and nothing more (check = run).
//!
//! `Read` says "inside the roots, only these may be read or executed" — listing is exempt, and
//! writing is the `Write` list's business. The file tools check it per call (`guard::path`); for
//! a sandboxed program Landlock does the same. Every rule on a root or inside one keeps its rights
//! but reading and executing files ([`Grant::WriteOnly`] for a writable place, [`Grant::List`] for
//! a read-only one), and what `Read` covers gets read+exec on top: a directory it covers as a
//! whole (`src/**`, or a directory a pattern matches), the file itself for a file a pattern
//! matches. Landlock's rights add up down the tree, and its rename and link check (`REFER`; at
//! ABI 1 every move between directories is EXDEV) refuses to move a file where it would gain
//! rights, so an unreadable file cannot be made readable by `mv` or `ln` into a covered
//! directory. Symlinks are judged by their targets, as `check path` judges them.
//!
//! What the walk did not see cannot be granted: a file created during the call that a pattern
//! matches, or a covered directory that does not exist yet, is readable from the next call on
//! ([`ReadGrants::notes`]). Without Landlock no layer holds the promise: strict mode refuses.
//!
//! Call [`compute`] once per plan, after the walk of the roots ([`masks::scan`]) has listed the
//! entries the list matches ([`Snapshot::read_matches`]), then [`ReadGrants::apply`] to the
//! planned rules. This module walks nothing itself.
//!
//! [`masks::scan`]: super::masks::scan

use std::path::{Path, PathBuf};

use super::landlock::{Grant, PathRule};
use super::masks::Snapshot;
use crate::policy::Policy;

/// The places inside the roots the program may read and execute.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadGrants {
    /// Directories covered as a whole and files matched, outermost only.
    pub places: Vec<PathBuf>,
    /// Patterns whose future matches the rules cannot cover, and why.
    pub notes: Vec<String>,
}

/// The first root that lies strictly inside a tree one of `rules` lets the program read, and that
/// tree. Landlock only adds rights down the tree, so such a root stays readable however its own
/// rules are narrowed: the private `/tmp` of a checkout under `/tmp`, a private HOME holding the
/// project, a Writable or `--ro` parent.
pub fn shadowing_tree<'a>(
    rules: impl Iterator<Item = &'a PathRule>,
    roots: &'a [PathBuf],
) -> Option<(&'a Path, &'a Path)> {
    let reads = |g: Grant| matches!(g, Grant::ReadExec | Grant::Read | Grant::ReadWrite);
    rules.filter(|r| reads(r.grant)).find_map(|r| {
        let root = roots.iter().find(|root| root.starts_with(&r.path) && **root != r.path)?;
        Some((root.as_path(), r.path.as_path()))
    })
}

/// Whether the policy restricts reading inside the roots at all.
pub fn restricted(policy: &Policy) -> bool {
    !policy.read.is_empty()
}

/// The places `Read` covers under `roots`; `walked` is the walk of (at least) those roots.
pub fn compute(policy: &Policy, roots: &[PathBuf], walked: &Snapshot) -> ReadGrants {
    let mut places: Vec<PathBuf> =
        walked.read_matches.iter().filter(|p| roots.iter().any(|r| p.starts_with(r))).cloned().collect();
    places.sort();
    places.dedup();
    let all = places.clone();
    places.retain(|p| !all.iter().any(|o| o != p && p.starts_with(o)));
    let notes = policy
        .read
        .rules()
        .iter()
        .map(|rule| {
            format!(
                "'{}' ({}): what it matches that is created during the call is readable from the next call on",
                rule.pattern, rule.origin
            )
        })
        .collect();
    ReadGrants { places, notes }
}

impl ReadGrants {
    /// Withdraws reading and executing files from every rule on one of `roots` or inside one,
    /// then grants them on the covered places. A file rule left without rights is dropped.
    pub fn apply(&self, rules: &mut Vec<PathRule>, roots: &[PathBuf]) {
        let inside = |p: &Path| roots.iter().any(|r| p.starts_with(r));
        rules.retain_mut(|rule| {
            if !inside(&rule.path) {
                return true;
            }
            rule.grant = match rule.grant {
                Grant::ReadWrite => Grant::WriteOnly,
                Grant::ReadExec | Grant::Read | Grant::ReadFile => Grant::List,
                other => other,
            };
            rule.grant != Grant::List || rule.path.is_dir()
        });
        rules.extend(self.places.iter().map(|p| PathRule { path: p.clone(), grant: Grant::ReadExec }));
    }
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

    #[test]
    fn covered_directories_and_matched_files_outermost_and_the_roots_lose_reading() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        for d in ["src/a", "docs", "tests", "vendor/x"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in ["src/a/m.rs", "docs/x.md", "tests/t.rs", "README.md", "vendor/x/y.md"] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        std::os::unix::fs::symlink(root.join("tests/t.rs"), root.join("link.md")).unwrap();
        let p = policy(&root, "Security:\n  FileSystemPermissions:\n    Read: [src/**, '**/*.md', vendor]\n");
        let roots = [root.clone()];
        let walked = crate::sandbox::masks::scan_policy(&p, &roots).unwrap();
        let g = compute(&p, &roots, &walked);
        let rel: Vec<String> =
            g.places.iter().map(|p| p.strip_prefix(&root).unwrap().display().to_string()).collect();
        assert_eq!(rel, ["README.md", "docs/x.md", "src", "vendor"]);
        assert_eq!(g.notes.len(), 3, "{:?}", g.notes);
        let outside = PathBuf::from("/usr");
        let mut rules = vec![
            PathRule { path: outside.clone(), grant: Grant::ReadExec },
            PathRule { path: root.clone(), grant: Grant::ReadWrite },
            PathRule { path: root.join("README.md"), grant: Grant::ReadExec },
        ];
        g.apply(&mut rules, &roots);
        assert_eq!(rules[0], PathRule { path: outside, grant: Grant::ReadExec });
        assert_eq!(rules[1], PathRule { path: root.clone(), grant: Grant::WriteOnly });
        assert!(!rules.iter().any(|r| r.grant == Grant::List), "{rules:?}");
        assert_eq!(rules.iter().filter(|r| r.grant == Grant::ReadExec).count(), 5, "{rules:?}");
    }
}
