//! Taking the steps of an apply so that a crash at any point is finished by the next hullward.
//!
//! Order: the whole list of steps is written to `apply.json` in the call's workspace directory
//! (a temporary file renamed into place: it exists whole or not at all) → each step is taken →
//! its index is appended to `progress` (one line each) → when every step is done, the call's
//! backups manifest is written and the workspace directory removed. Every step can be taken
//! again: a rename whose source is gone was made, a backup that exists was taken, a directory
//! that exists was made. So a supervisor killed between any two system calls leaves a journal
//! that the next hullward (`super::recover`) finishes from the first step not marked done; nothing is ever half-applied
//! in a way the next run cannot tell. Each file lands by one `rename(2)`: a reader sees the old
//! version or the new one, never a mix.
//!
//! `HULLWARD_TEST_KILL_APPLY_AFTER=N` makes hullward SIGKILL itself once N steps are done (the
//! crash-recovery test; the real journal path, nothing simulated).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::judge::{Refused, Step};

/// The journal of one apply.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Journal {
    pub call: String,
    pub steps: Vec<Step>,
    pub refused: Vec<Refused>,
}

/// Why a step failed.
#[derive(Debug, thiserror::Error)]
#[error("{what} '{}': {source}", path.display())]
pub struct StepFailed {
    pub what: &'static str,
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

fn fail<'a>(what: &'static str, path: &'a Path) -> impl FnOnce(std::io::Error) -> StepFailed + 'a {
    move |source| StepFailed { what, path: path.to_path_buf(), source }
}

fn exists(p: &Path) -> bool {
    p.symlink_metadata().is_ok()
}

fn parent_dirs(p: &Path) -> std::io::Result<()> {
    match p.parent() {
        Some(d) => std::fs::DirBuilder::new().recursive(true).mode(0o700).create(d),
        None => Ok(()),
    }
}

/// Keeps `path` (a file or symlink) in `backup` without touching it: a hard link, or a copy
/// when the backups are on another filesystem.
fn keep_copy(path: &Path, backup: &Path) -> std::io::Result<()> {
    parent_dirs(backup)?;
    match std::fs::hard_link(path, backup) {
        Ok(()) => Ok(()),
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) || e.raw_os_error() == Some(libc::EPERM) => {
            let meta = path.symlink_metadata()?;
            if meta.file_type().is_symlink() {
                std::os::unix::fs::symlink(std::fs::read_link(path)?, backup)
            } else {
                std::fs::copy(path, backup).map(|_| ())
            }
        }
        Err(e) => Err(e),
    }
}

/// Takes one step (again, after a crash: see the module documentation).
pub fn take(step: &Step) -> Result<(), StepFailed> {
    match step {
        Step::Remove { path, backup } => {
            if exists(path) && !exists(backup) {
                parent_dirs(backup).map_err(fail("creating the backup of", path))?;
                std::fs::rename(path, backup).map_err(fail("moving into the backups", path))?;
            }
            Ok(())
        }
        Step::Put { from, path, backup } => {
            if !exists(from) {
                return Ok(());
            }
            if let (Some(backup), Ok(meta)) = (backup, path.symlink_metadata()) {
                if !exists(backup) {
                    if meta.is_dir() {
                        parent_dirs(backup).map_err(fail("creating the backup of", path))?;
                        std::fs::rename(path, backup).map_err(fail("moving into the backups", path))?;
                    } else {
                        keep_copy(path, backup).map_err(fail("keeping a backup of", path))?;
                    }
                } else if meta.is_dir() {
                    std::fs::remove_dir(path).map_err(fail("replacing the directory", path))?;
                }
            }
            std::fs::rename(from, path).map_err(fail("putting in place", path))
        }
        Step::MakeDir { path, mode } => {
            match std::fs::DirBuilder::new().mode(*mode).create(path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && path.is_dir() => {}
                Err(e) => return Err(fail("making the directory", path)(e)),
            }
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode))
                .map_err(fail("setting the mode of", path))
        }
        Step::SetMode { path, mode, .. } => {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(*mode))
                .map_err(fail("setting the mode of", path))
        }
        Step::Keep { from, to } => {
            if exists(from) && !exists(to) {
                parent_dirs(to).map_err(fail("keeping the call's version of", from))?;
                std::fs::rename(from, to).map_err(fail("keeping the call's version of", from))?;
            }
            Ok(())
        }
    }
}

/// The files of a journal in the call's workspace directory.
pub struct JournalFiles {
    pub plan: PathBuf,
    pub progress: PathBuf,
}

impl JournalFiles {
    pub fn in_dir(dir: &Path) -> JournalFiles {
        JournalFiles { plan: dir.join("apply.json"), progress: dir.join("progress") }
    }

    /// Writes the journal whole (temporary file, rename). Not synced: the journal is for a
    /// supervisor killed mid-apply, whose writes the page cache keeps, not for a power loss.
    pub fn write(&self, journal: &Journal) -> std::io::Result<()> {
        let tmp = self.plan.with_extension("json.tmp");
        std::fs::write(&tmp, serde_json::to_string(journal).map_err(std::io::Error::other)?)?;
        std::fs::rename(&tmp, &self.plan)
    }

    pub fn read(&self) -> Option<Journal> {
        serde_json::from_str(&std::fs::read_to_string(&self.plan).ok()?).ok()
    }

    /// How many steps are marked done.
    pub fn done(&self) -> usize {
        std::fs::read_to_string(&self.progress).map_or(0, |t| t.lines().filter(|l| !l.is_empty()).count())
    }
}

/// Takes the steps of `journal` from `first` on, marking each done; returns the failures (a
/// failed step is reported and skipped: the others still land).
pub fn run(files: &JournalFiles, journal: &Journal, first: usize) -> Vec<StepFailed> {
    let kill_after: Option<usize> =
        std::env::var("HULLWARD_TEST_KILL_APPLY_AFTER").ok().and_then(|v| v.parse().ok());
    let mut progress = std::fs::OpenOptions::new().create(true).append(true).open(&files.progress).ok();
    let mut failed = Vec::new();
    for (i, step) in journal.steps.iter().enumerate().skip(first) {
        if kill_after == Some(i) {
            let _ = crate::sandbox::sys::kill(std::process::id() as libc::pid_t, libc::SIGKILL);
        }
        if let Err(e) = take(step) {
            failed.push(e);
        }
        if let Some(p) = progress.as_mut() {
            let _ = p.write_all(format!("{i}\n").as_bytes());
        }
    }
    failed
}

/// An entry's identity and content stamp, to tell later whether the host changed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stamp {
    pub ino: u64,
    pub size: u64,
    /// Nanoseconds (an `i64`: serde's tagged enums cannot carry an `i128`).
    pub mtime_ns: i64,
    pub mode: u32,
}

impl Stamp {
    pub fn of(path: &Path) -> Option<Stamp> {
        let m = path.symlink_metadata().ok()?;
        Some(Stamp {
            ino: m.ino(),
            size: m.size(),
            mtime_ns: m.mtime().saturating_mul(1_000_000_000).saturating_add(m.mtime_nsec()),
            mode: m.mode(),
        })
    }
}
