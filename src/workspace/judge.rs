//! From an upper layer to the steps of its apply: what may land, what is refused and why.
//!
//! Refused, and kept in the call's backups instead of applied: every protected path (the same
//! walk the quarantine of `direct` calls uses, [`masks::scan`], run over the upper layer — a new
//! `.env`, a planted `.git/hooks/pre-commit`, a policy file — and the protected entries the walk
//! of the roots found before the call: masks, read-only binds, policy files, the hooks directory
//! `core.hooksPath` names, and every repository's `.git`, which a delete or a replacement must not
//! reach); every *conflict* (the host changed the entry during the call: its change time is
//! not older than the call's start, so the host's version stays); and special files. A refused
//! directory is refused whole.
//!
//! Order of the steps, parents before children: deletes (moved into the backups), directories
//! made or re-moded, files and symlinks put in place (a rename; the overwritten file is kept
//! first by a hard link), refused entries moved into the backups.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::layers::Layer;
use super::upper::{self, Kind};
use crate::policy::Policy;
use crate::sandbox::masks::{self, MaskKind, ScanSpec, Snapshot, WalkLimits};

/// One step of an apply. Every step can be taken again after a crash (see `journal`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "kebab-case")]
pub enum Step {
    /// Move the host entry (a whole directory too) into the backups: a delete.
    Remove {
        path: PathBuf,
        backup: PathBuf,
    },
    /// Rename the upper file or symlink over the host path; what it replaces is kept in `backup`
    /// first (a hard link; a directory is moved).
    Put {
        from: PathBuf,
        path: PathBuf,
        backup: Option<PathBuf>,
    },
    MakeDir {
        path: PathBuf,
        mode: u32,
    },
    SetMode {
        path: PathBuf,
        mode: u32,
        old: u32,
    },
    /// Move a refused upper entry into the backups, where the call's version is kept.
    Keep {
        from: PathBuf,
        to: PathBuf,
    },
}

/// Why an entry was not applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "why", rename_all = "kebab-case")]
pub enum Why {
    /// It is a protected path (the rule that protects it).
    Protected { rule: String },
    /// The host changed it during the call; the host's version stays.
    Conflict,
    /// A device, FIFO or socket.
    Special,
    /// A git rule (`Sandbox.Git.ProtectedBranches`, no branch deleted): what the change would do.
    Git { rule: String },
}

/// An entry that was not applied.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refused {
    pub path: PathBuf,
    #[serde(flatten)]
    pub why: Why,
    /// Where the call's version is kept (none for a refused delete).
    pub kept: Option<PathBuf>,
}

/// The judged changes of one layer.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Judged {
    pub steps: Vec<Step>,
    pub refused: Vec<Refused>,
}

/// Where the backups of a call keep things: `files/` for what the apply overwrote or deleted,
/// `refused/` for the call's versions that were not applied, both under the absolute path.
#[derive(Debug, Clone)]
pub struct BackupPaths {
    pub dir: PathBuf,
}

impl BackupPaths {
    fn under(&self, part: &str, path: &Path) -> PathBuf {
        self.dir.join(part).join(path.strip_prefix("/").unwrap_or(path))
    }
    pub fn file(&self, path: &Path) -> PathBuf {
        self.under("files", path)
    }
    pub fn refused(&self, path: &Path) -> PathBuf {
        self.under("refused", path)
    }
}

/// The protected paths of one root, before the call and in its upper layer.
pub struct Protected {
    /// (host path, covers what is below it, rule).
    entries: Vec<(PathBuf, bool, String)>,
    git_dirs: Vec<PathBuf>,
    branches: globset::GlobSet,
}

impl Protected {
    /// `lower`: the walk of the roots before the call (or now, for a held call).
    pub fn new(policy: &Policy, lower: &Snapshot, layer: &Layer) -> Result<Protected, masks::WalkError> {
        let protected_files: Vec<PathBuf> = policy
            .files
            .iter()
            .filter_map(|f| f.strip_prefix(&layer.root).ok())
            .map(|rel| layer.upper.join(rel))
            .collect();
        let roots = [layer.upper.clone()];
        let spec = ScanSpec {
            roots: &roots,
            deny: &policy.deny,
            write_protect: &policy.write_protect,
            protected_files: &protected_files,
            git_metadata: policy.sandbox.protect_git_metadata,
            hidden: &[],
            inside: &[],
            write_lists: Vec::new(),
            read: None,
            covered_files: false,
            limits: WalkLimits::default(),
        };
        let upper = masks::scan(&spec)?;
        let mut entries = Vec::new();
        for (snap, from, to) in [(lower, None, None), (&upper, Some(&layer.upper), Some(&layer.root))] {
            let dirs: std::collections::BTreeSet<&Path> = snap
                .masks
                .iter()
                .chain(&snap.read_only)
                .filter(|m| m.kind == MaskKind::Dir)
                .map(|m| m.path.as_path())
                .collect();
            for (path, stamped) in &snap.stamps {
                let is_dir = dirs.contains(path.as_path());
                let host = match (from, to) {
                    (Some(f), Some(t)) => match path.strip_prefix(f) {
                        Ok(rel) => t.join(rel),
                        Err(_) => continue,
                    },
                    _ => path.clone(),
                };
                entries.push((host, is_dir, stamped.pattern.clone()));
            }
        }
        let git_dirs = lower.git_dirs.iter().cloned().collect();
        let mut branches = globset::GlobSetBuilder::new();
        for b in &policy.sandbox.protected_branches {
            if let Ok(g) = globset::Glob::new(b) {
                branches.add(g);
            }
        }
        let branches = branches.build().unwrap_or_else(|_| globset::GlobSet::empty());
        Ok(Protected { entries, git_dirs, branches })
    }

    /// What a change of `path` (upper version `from`, none for a delete) would do to a
    /// repository's branches that the git rules forbid: move a protected branch's ref, delete a
    /// branch.
    fn git_rule(&self, path: &Path, from: Option<&Path>) -> Option<String> {
        let parts: Vec<&[u8]> = path.iter().map(|c| c.as_bytes()).collect();
        let at = parts.iter().rposition(|c| *c == b".git")?;
        let rest: Vec<String> =
            parts[at + 1..].iter().map(|c| String::from_utf8_lossy(c).into_owned()).collect();
        let protected = |name: &str| self.branches.is_match(name);
        match rest.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
            ["refs"] | ["refs", "heads"] if from.is_none() => Some("it would delete every branch".into()),
            ["refs", "heads", name @ ..] if !name.is_empty() => {
                let name = name.join("/");
                match from {
                    None => Some(format!("it would delete the branch '{name}'")),
                    Some(from) => {
                        let old = std::fs::read(path).ok()?;
                        let moved = std::fs::read(from).ok().as_deref() != Some(&old[..]);
                        (moved && protected(&name))
                            .then(|| format!("it would move the protected branch '{name}'"))
                    }
                }
            }
            ["packed-refs"] => {
                let old = packed_refs(path);
                let new = from.map(packed_refs).unwrap_or_default();
                let loose = |name: &str| path.with_file_name("refs/heads").join(name).exists();
                old.iter().find_map(|(name, sha)| match new.iter().find(|(n, _)| n == name) {
                    None if !loose(name) => Some(format!("it would delete the branch '{name}'")),
                    Some((_, new_sha)) if new_sha != sha && protected(name) => {
                        Some(format!("it would move the protected branch '{name}'"))
                    }
                    _ => None,
                })
            }
            _ => None,
        }
    }

    /// The rule that protects writing `path` (it, or a protected directory above it).
    fn writing(&self, path: &Path) -> Option<String> {
        self.entries
            .iter()
            .find(|(p, dir, _)| path == p || (*dir && path.starts_with(p)))
            .map(|(_, _, rule)| rule.clone())
    }

    /// The rule that protects removing or replacing `path` (and everything below it).
    fn removing(&self, path: &Path) -> Option<String> {
        self.writing(path)
            .or_else(|| self.entries.iter().find(|(p, _, _)| p.starts_with(path)).map(|(_, _, r)| r.clone()))
            .or_else(|| {
                self.git_dirs
                    .iter()
                    .find(|g| g.starts_with(path))
                    .map(|g| format!("git metadata: the repository '{}'", g.display()))
            })
    }
}

/// The branches a `packed-refs` file names, with their object ids.
fn packed_refs(path: &Path) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let (sha, name) = l.split_once(' ')?;
            Some((name.strip_prefix("refs/heads/")?.to_string(), sha.to_string()))
        })
        .collect()
}

fn ctime_ns(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec())
}

/// The change time the call started at: a host entry changed at or after it is a conflict.
#[derive(Debug, Clone, Copy)]
pub struct Started(pub i128);

impl Started {
    pub fn of(marker: &Path) -> std::io::Result<Started> {
        std::fs::symlink_metadata(marker).map(|m| Started(ctime_ns(&m)))
    }

    fn changed(&self, meta: &std::fs::Metadata) -> bool {
        ctime_ns(meta) >= self.0
    }

    /// Whether the host changed `path` or anything below it since the call started.
    fn changed_tree(&self, path: &Path) -> bool {
        walkdir::WalkDir::new(path)
            .follow_links(false)
            .into_iter()
            .any(|e| e.ok().and_then(|e| e.metadata().ok()).is_none_or(|m| self.changed(&m)))
    }
}

/// Whether two files have the same content and mode (a copy-up without a change).
fn same_file(a: &Path, b: &Path, a_meta: &std::fs::Metadata, b_meta: &std::fs::Metadata) -> bool {
    if a_meta.mode() != b_meta.mode() || a_meta.size() != b_meta.size() {
        return false;
    }
    if a_meta.file_type().is_symlink() {
        return std::fs::read_link(a).ok() == std::fs::read_link(b).ok();
    }
    a_meta.is_file()
        && std::fs::read(a).ok().is_some_and(|x| std::fs::read(b).ok().as_deref() == Some(&x[..]))
}

/// Judges every entry of `layer`'s upper layer. See the module documentation.
pub fn judge(
    layer: &Layer,
    protected: &Protected,
    started: Started,
    backups: &BackupPaths,
) -> std::io::Result<Judged> {
    let mut out = Judged::default();
    let mut refused_dirs: Vec<PathBuf> = Vec::new();
    for entry in upper::scan(&layer.upper)? {
        if refused_dirs.iter().any(|d| entry.rel.starts_with(d)) {
            continue;
        }
        let from = layer.upper.join(&entry.rel);
        let path = layer.root.join(&entry.rel);
        let lower = std::fs::symlink_metadata(&path).ok();
        let mut refuse = |out: &mut Judged, why: Why, keep: bool| {
            let kept = keep.then(|| backups.refused(&path));
            if let Some(to) = &kept {
                out.steps.push(Step::Keep { from: from.clone(), to: to.clone() });
            }
            out.refused.push(Refused { path: path.clone(), why, kept });
            if matches!(entry.kind, Kind::Dir { .. }) {
                refused_dirs.push(entry.rel.clone());
            }
        };
        match entry.kind {
            Kind::Special => refuse(&mut out, Why::Special, true),
            Kind::Whiteout => {
                let Some(_) = lower else { continue };
                if let Some(rule) = protected.removing(&path) {
                    refuse(&mut out, Why::Protected { rule }, false);
                } else if let Some(rule) = protected.git_rule(&path, None) {
                    refuse(&mut out, Why::Git { rule }, false);
                } else if started.changed_tree(&path) {
                    refuse(&mut out, Why::Conflict, false);
                } else {
                    out.steps.push(Step::Remove { backup: backups.file(&path), path });
                }
            }
            Kind::Dir { opaque } => {
                if let Some(rule) = protected.writing(&path) {
                    refuse(&mut out, Why::Protected { rule }, true);
                    continue;
                }
                match lower {
                    Some(m) if m.is_dir() && !opaque => {
                        if m.mode() & 0o7777 != entry.mode {
                            out.steps.push(Step::SetMode { path, mode: entry.mode, old: m.mode() & 0o7777 });
                        }
                    }
                    Some(_) => {
                        if let Some(rule) = protected.removing(&path) {
                            refuse(&mut out, Why::Protected { rule }, true);
                        } else if let Some(rule) = protected.git_rule(&path, None) {
                            refuse(&mut out, Why::Git { rule }, true);
                        } else if started.changed_tree(&path) {
                            refuse(&mut out, Why::Conflict, true);
                        } else {
                            out.steps.push(Step::Remove { backup: backups.file(&path), path: path.clone() });
                            out.steps.push(Step::MakeDir { path, mode: entry.mode });
                        }
                    }
                    None => out.steps.push(Step::MakeDir { path, mode: entry.mode }),
                }
            }
            Kind::File | Kind::Symlink => {
                if let Some(rule) = protected.writing(&path) {
                    refuse(&mut out, Why::Protected { rule }, true);
                    continue;
                }
                if let Some(rule) = protected.git_rule(&path, Some(&from)) {
                    refuse(&mut out, Why::Git { rule }, true);
                    continue;
                }
                let Some(m) = lower else {
                    out.steps.push(Step::Put { from, path, backup: None });
                    continue;
                };
                let upper_meta = from.symlink_metadata()?;
                if !m.is_dir() && same_file(&path, &from, &m, &upper_meta) {
                    continue;
                }
                if m.is_dir() {
                    if let Some(rule) = protected.removing(&path) {
                        refuse(&mut out, Why::Protected { rule }, true);
                        continue;
                    }
                }
                if started.changed_tree(&path) {
                    refuse(&mut out, Why::Conflict, true);
                    continue;
                }
                out.steps.push(Step::Put { from, backup: Some(backups.file(&path)), path });
            }
        }
    }
    Ok(out)
}

/// A path for messages: relative to its root when inside one.
pub fn shown(roots: &[PathBuf], path: &Path) -> String {
    roots.iter().find_map(|r| path.strip_prefix(r).ok()).map_or_else(
        || path.display().to_string(),
        |p| String::from_utf8_lossy(p.as_os_str().as_bytes()).into_owned(),
    )
}
