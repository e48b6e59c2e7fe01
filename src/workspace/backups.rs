//! The backups of applied calls and `hullward undo`.
//!
//! `$HULLWARD_HOME/backups/CALL/` holds `files/<absolute path>` (what the apply overwrote or
//! deleted, kept before the change), `refused/<absolute path>` (the call's versions that were
//! not applied) and `manifest.json`: every change with a stamp of what the apply left, so that
//! [`undo`] can tell whether the host changed it since. Undo checks every entry first and
//! refuses, naming them, when any changed; otherwise it walks the changes backwards: files put
//! back by rename, created entries removed, modes restored. An undone call keeps its directory
//! (`undone` in its manifest) until pruning. [`prune`] removes the oldest calls' backups while the
//! total exceeds the cap, never the newest.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::journal::{Journal, Stamp};
use super::judge::{Refused, Step};

/// One change an apply made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "kebab-case")]
pub enum Change {
    Created { path: PathBuf, after: Option<Stamp> },
    Replaced { path: PathBuf, backup: PathBuf, after: Option<Stamp> },
    Deleted { path: PathBuf, backup: PathBuf },
    MadeDir { path: PathBuf },
    ModeChanged { path: PathBuf, old: u32, new: u32 },
}

impl Change {
    pub fn path(&self) -> &Path {
        match self {
            Change::Created { path, .. }
            | Change::Replaced { path, .. }
            | Change::Deleted { path, .. }
            | Change::MadeDir { path }
            | Change::ModeChanged { path, .. } => path,
        }
    }
}

/// What `backups/CALL/manifest.json` says.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Manifest {
    pub call: String,
    /// Seconds since the epoch when the apply finished.
    pub time: u64,
    pub roots: Vec<PathBuf>,
    pub changes: Vec<Change>,
    pub refused: Vec<Refused>,
    #[serde(default)]
    pub undone: bool,
}

/// Why an undo (or reading the backups) failed.
#[derive(Debug, thiserror::Error)]
pub enum UndoError {
    #[error("no applied call to undo in '{}'", .0.display())]
    Nothing(PathBuf),
    #[error("no backups of call '{0}'")]
    Unknown(String),
    #[error("call {0} was undone already")]
    Undone(String),
    #[error("undo of call {call} refused: the host changed these files since the call applied them:\n{}", .changed.iter().map(|p| format!("  {}", p.display())).collect::<Vec<_>>().join("\n"))]
    Changed { call: String, changed: Vec<PathBuf> },
    #[error("{what} '{}': {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

fn io<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> UndoError + 'a {
    move |source| UndoError::Io { what, path: path.to_path_buf(), source }
}

/// The changes the steps of `journal` made, with stamps of what they left.
pub fn manifest(journal: &Journal, roots: &[PathBuf]) -> Manifest {
    let mut changes = Vec::new();
    for step in &journal.steps {
        changes.push(match step {
            Step::Remove { path, backup } => Change::Deleted { path: path.clone(), backup: backup.clone() },
            Step::Put { path, backup: Some(b), .. } if b.symlink_metadata().is_ok() => {
                Change::Replaced { path: path.clone(), backup: b.clone(), after: Stamp::of(path) }
            }
            Step::Put { path, .. } => Change::Created { path: path.clone(), after: Stamp::of(path) },
            Step::MakeDir { path, .. } => Change::MadeDir { path: path.clone() },
            Step::SetMode { path, mode, old } => {
                Change::ModeChanged { path: path.clone(), old: *old, new: *mode }
            }
            Step::Keep { .. } => continue,
        });
    }
    let time = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
    Manifest {
        call: journal.call.clone(),
        time,
        roots: roots.to_vec(),
        changes,
        refused: journal.refused.clone(),
        undone: false,
    }
}

fn manifest_path(dir: &Path) -> PathBuf {
    dir.join("manifest.json")
}

pub fn write_manifest(dir: &Path, m: &Manifest) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join("manifest.json.tmp");
    std::fs::write(&tmp, serde_json::to_string_pretty(m).map_err(std::io::Error::other)?)?;
    std::fs::rename(&tmp, manifest_path(dir))
}

pub fn read_manifest(dir: &Path) -> Option<Manifest> {
    serde_json::from_str(&std::fs::read_to_string(manifest_path(dir)).ok()?).ok()
}

/// One call's backups, for `hullward backups`.
#[derive(Debug, Clone)]
pub struct Listed {
    pub dir: PathBuf,
    pub manifest: Manifest,
    pub bytes: u64,
}

/// Bytes under `dir` (the backups of one call).
fn size_of(dir: &Path) -> u64 {
    walkdir::WalkDir::new(dir)
        .follow_links(false)
        .into_iter()
        .filter_map(Result::ok)
        .filter_map(|e| e.metadata().ok())
        .filter(|m| !m.is_dir())
        .map(|m| m.len())
        .sum()
}

/// Every call's backups under `backups`, oldest first.
pub fn list(backups: &Path) -> Vec<Listed> {
    let Ok(entries) = std::fs::read_dir(backups) else { return Vec::new() };
    let mut out: Vec<Listed> = entries
        .flatten()
        .filter_map(|e| {
            let dir = e.path();
            let manifest = read_manifest(&dir)?;
            Some(Listed { bytes: size_of(&dir), dir, manifest })
        })
        .collect();
    out.sort_by(|a, b| (a.manifest.time, &a.manifest.call).cmp(&(b.manifest.time, &b.manifest.call)));
    out
}

/// Removes the oldest calls' backups while all of them together exceed `cap` bytes; the newest
/// stays whatever its size. Returns the calls removed.
pub fn prune(backups: &Path, cap: u64) -> Vec<String> {
    let listed = list(backups);
    let mut total: u64 = listed.iter().map(|l| l.bytes).sum();
    let mut removed = Vec::new();
    for l in listed.iter().take(listed.len().saturating_sub(1)) {
        if total <= cap {
            break;
        }
        if std::fs::remove_dir_all(&l.dir).is_ok() {
            total -= l.bytes;
            removed.push(l.manifest.call.clone());
        }
    }
    removed
}

/// What [`undo`] did.
#[derive(Debug, Clone)]
pub struct Undone {
    pub call: String,
    pub restored: Vec<PathBuf>,
    pub removed: Vec<PathBuf>,
}

/// Which entries of `m` the host changed since the apply (each path judged by the last change
/// the apply made to it: a directory deleted and made again is checked as made).
fn changed_since(m: &Manifest) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for (i, c) in m.changes.iter().enumerate() {
        if m.changes[i + 1..].iter().any(|later| later.path() == c.path()) {
            continue;
        }
        let now = Stamp::of(c.path());
        let same = match c {
            Change::Created { after, .. } | Change::Replaced { after, .. } => now == *after,
            Change::Deleted { .. } => now.is_none(),
            Change::MadeDir { path } => path.is_dir(),
            Change::ModeChanged { new, .. } => now.is_some_and(|s| s.mode & 0o7777 == *new),
        };
        if !same {
            out.push(c.path().to_path_buf());
        }
    }
    out
}

/// Restores the backups of `call` (the newest applied call when `None`). See the module
/// documentation.
pub fn undo(backups: &Path, call: Option<&str>) -> Result<Undone, UndoError> {
    let (dir, mut m) = match call {
        Some(id) => {
            let dir = backups.join(id);
            let m = read_manifest(&dir).ok_or_else(|| UndoError::Unknown(id.to_string()))?;
            (dir, m)
        }
        None => {
            let newest = list(backups).into_iter().rev().find(|l| !l.manifest.undone);
            let l = newest.ok_or_else(|| UndoError::Nothing(backups.to_path_buf()))?;
            (l.dir, l.manifest)
        }
    };
    if m.undone {
        return Err(UndoError::Undone(m.call));
    }
    let changed = changed_since(&m);
    if !changed.is_empty() {
        return Err(UndoError::Changed { call: m.call, changed });
    }
    let mut done = Undone { call: m.call.clone(), restored: Vec::new(), removed: Vec::new() };
    for c in m.changes.iter().rev() {
        match c {
            Change::Created { path, .. } => {
                std::fs::remove_file(path).map_err(io("removing", path))?;
                done.removed.push(path.clone());
            }
            Change::Replaced { path, backup, .. } | Change::Deleted { path, backup } => {
                if backup.is_dir() && path.symlink_metadata().is_ok_and(|m| !m.is_dir()) {
                    std::fs::remove_file(path).map_err(io("removing", path))?;
                }
                std::fs::rename(backup, path).map_err(io("restoring", path))?;
                done.restored.push(path.clone());
            }
            Change::MadeDir { path } => {
                std::fs::remove_dir(path).map_err(io("removing the directory", path))?;
                done.removed.push(path.clone());
            }
            Change::ModeChanged { path, old, .. } => {
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(*old))
                    .map_err(io("restoring the mode of", path))?;
                done.restored.push(path.clone());
            }
        }
    }
    m.undone = true;
    write_manifest(&dir, &m).map_err(io("marking undone", &dir))?;
    Ok(done)
}
