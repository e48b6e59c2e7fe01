//! The transactional workspace (`--workspace overlay|ephemeral`, INTERFACE.md "The workspace
//! modes"): the program writes each root through an overlay whose upper layer is the call's own;
//! when it ends, the changes are judged and applied (`overlay`), held for a human (`--review`),
//! or thrown away (`ephemeral`).
//!
//! Order, per call (driven by the supervisor): [`recover`] (before anything: finishes the apply
//! of a call whose supervisor was killed mid-apply, holds the changes of one killed before it
//! ended) → [`Workspace::prepare`] (after the plan: storage, overlay mounts in the child's view,
//! see [`layers`]) → the call → [`Workspace::finish`]: the upper layer is read ([`upper`]),
//! judged against the protected paths and the host's own changes ([`judge`]), journalled and
//! applied ([`journal`]), and every overwritten or deleted file is kept in the call's backups
//! ([`backups`], `hullward undo`). A held call is shown by [`review`] and applied or discarded
//! later by the same functions.
//!
//! Layout: `$HULLWARD_HOME/workspace/CALL/{call.json, started, layer-N/{upper,work},
//! apply.json, progress}` while a call runs or is held; `$HULLWARD_HOME/backups/CALL/` once
//! applied; `$HULLWARD_HOME/discarded/CALL/` once nothing in it is to be kept, until the next
//! hullward removes it ([`discarded`]). A call whose upper layers are empty is neither judged
//! nor journalled.

pub mod backups;
pub mod discarded;
pub mod journal;
pub mod judge;
pub mod layers;
pub mod review;
pub mod upper;

use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::policy::{Policy, WorkspaceMode};
use crate::sandbox::masks::Snapshot;
use crate::sandbox::plan::SandboxPlan;
use journal::{Journal, JournalFiles, StepFailed};
use judge::{BackupPaths, Protected, Refused, Started, Why};
use layers::Layer;

/// The backups of all calls together are pruned, oldest first, above this many bytes.
pub const BACKUP_CAP_BYTES: u64 = 1 << 30;

/// Why a workspace cannot be had or used.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    /// This machine or this configuration cannot keep the call's writes apart (exit 3).
    #[error("refusing to run: the call's workspace layer cannot be had here (running in place would break the mode's promise, so --no-strict does not either): {0}")]
    Unavailable(String),
    #[error("{0}")]
    Usage(String),
    #[error("no held call '{0}' (see `hullward backups` for applied ones)")]
    NotHeld(String),
    #[error("{what} '{}': {source}", path.display())]
    Io {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}")]
    Walk(#[from] crate::sandbox::masks::WalkError),
}

impl WorkspaceError {
    fn io(what: &'static str, path: &Path, source: std::io::Error) -> WorkspaceError {
        WorkspaceError::Io { what, path: path.to_path_buf(), source }
    }

    /// The exit code the contract gives this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            WorkspaceError::Unavailable(_) => crate::error::code::STRICT_REFUSED,
            WorkspaceError::Usage(_) | WorkspaceError::NotHeld(_) => crate::error::code::USAGE,
            _ => crate::error::code::INTERNAL,
        }
    }
}

/// What `workspace/CALL/call.json` says.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CallRecord {
    pub call: String,
    pub pid: u32,
    pub ephemeral: bool,
    pub held: bool,
    pub layers: Vec<Layer>,
}

/// `$HULLWARD_HOME/workspace`.
pub fn workspace_dir(policy: &Policy) -> PathBuf {
    policy.session.state_dir.join("workspace")
}

/// `$HULLWARD_HOME/backups`.
pub fn backups_dir(policy: &Policy) -> PathBuf {
    policy.session.state_dir.join("backups")
}

fn record_path(dir: &Path) -> PathBuf {
    dir.join("call.json")
}

fn write_record(dir: &Path, r: &CallRecord) -> Result<(), WorkspaceError> {
    let tmp = dir.join("call.json.tmp");
    let text = serde_json::to_string(r)
        .map_err(|e| WorkspaceError::io("writing", &tmp, std::io::Error::other(e)))?;
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, record_path(dir)))
        .map_err(|e| WorkspaceError::io("writing the call's record", dir, e))
}

fn read_record(dir: &Path) -> Option<CallRecord> {
    serde_json::from_str(&std::fs::read_to_string(record_path(dir)).ok()?).ok()
}

/// Removes a call's storage. overlayfs leaves directories of mode 000 in its work directory
/// (`work/work`, `incompat/volatile`), which a caller without `CAP_DAC_OVERRIDE` must open up
/// before it can list them: when the plain removal fails, each directory is made 0700 before it
/// is read, and the removal is tried again.
fn remove_storage(dir: &Path) {
    if std::fs::remove_dir_all(dir).is_ok() {
        return;
    }
    fn open_up(dir: &Path) {
        let _ = std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700));
        for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                open_up(&entry.path());
            }
        }
    }
    open_up(dir);
    let _ = std::fs::remove_dir_all(dir);
}

/// The workspace of one running call.
pub struct Workspace {
    dir: PathBuf,
    record: CallRecord,
    review: bool,
    settled: bool,
    /// Empties what earlier calls discarded while this one runs.
    cleaner: discarded::Cleaner,
}

impl Workspace {
    /// The call's layers, mounted into `plan`'s view; `None` in `direct` mode.
    pub fn prepare(
        policy: &Policy,
        call_id: &str,
        plan: &mut SandboxPlan,
    ) -> Result<Option<Workspace>, WorkspaceError> {
        let mode = policy.sandbox.workspace;
        if mode == WorkspaceMode::Direct {
            return Ok(None);
        }
        if policy.session.review && mode == WorkspaceMode::Ephemeral {
            return Err(WorkspaceError::Usage(
                "--review holds an overlay call's changes; an ephemeral call has none to hold".into(),
            ));
        }
        if plan.yolo {
            return Err(WorkspaceError::Unavailable(format!(
                "--yolo has no sandbox, so --workspace {} cannot keep the writes apart",
                mode.as_str()
            )));
        }
        if !layers::overlayfs_available() {
            return Err(WorkspaceError::Unavailable(format!(
                "overlayfs is not available on this kernel (no 'overlay' in /proc/filesystems), which --workspace {} needs; load the overlay module, or use --workspace direct",
                mode.as_str()
            )));
        }
        let dir = workspace_dir(policy).join(call_id);
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| WorkspaceError::io("creating the call's workspace", &dir, e))?;
        let mut ws = Workspace {
            dir: dir.clone(),
            record: CallRecord {
                call: call_id.to_string(),
                pid: std::process::id(),
                ephemeral: mode == WorkspaceMode::Ephemeral,
                held: false,
                layers: Vec::new(),
            },
            review: policy.session.review,
            settled: false,
            cleaner: discarded::Cleaner::start(discarded::dir(&policy.session.state_dir)),
        };
        let marker = dir.join("started");
        std::fs::write(&marker, b"")
            .map_err(|e| WorkspaceError::io("marking the call's start", &marker, e))?;
        ws.record.layers = layers::create(&dir, &policy.roots())?;
        write_record(&dir, &ws.record)?;
        layers::mount_into(plan, &ws.record.layers)?;
        Ok(Some(ws))
    }

    /// After the call: apply, hold or discard (see the module documentation); `lower` is the
    /// walk of the roots before the call.
    pub fn finish(mut self, policy: &Policy, lower: &Snapshot, say: &dyn Fn(&str)) {
        self.settled = true;
        if std::env::var_os("HULLWARD_TEST_KILL_BEFORE_FINISH").is_some() {
            let _ = crate::sandbox::sys::kill(std::process::id() as libc::pid_t, libc::SIGKILL);
        }
        self.cleaner.join();
        if self.record.ephemeral {
            if self.record.layers.iter().all(Layer::untouched) {
                discarded::later(&discarded::dir(&policy.session.state_dir), &self.dir);
            } else {
                remove_storage(&self.dir);
            }
            say("hullward: ephemeral workspace: the call's changes were thrown away");
            return;
        }
        if self.review {
            self.record.held = true;
            match write_record(&self.dir, &self.record) {
                Ok(()) => say(&format!(
                    "hullward: the call's changes are held: `hullward review {id}` shows them, `hullward apply {id}` or `hullward discard {id}` decides",
                    id = self.record.call
                )),
                Err(e) => say(&format!("hullward: warning: cannot hold the call's changes: {e}")),
            }
            return;
        }
        if let Err(e) = apply(policy, &self.dir, &self.record, lower, say) {
            say(&format!(
                "hullward: warning: the call's changes were not applied ({e}); they are held: `hullward review {}`",
                self.record.call
            ));
            self.record.held = true;
            let _ = write_record(&self.dir, &self.record);
        }
    }
}

impl Drop for Workspace {
    /// A call that never ran its program leaves nothing behind.
    fn drop(&mut self) {
        if !self.settled {
            remove_storage(&self.dir);
        }
    }
}

/// What an apply did.
#[derive(Debug, Clone, Default)]
pub struct Applied {
    pub changes: usize,
    pub refused: Vec<Refused>,
    pub failed: Vec<String>,
}

/// Judges and applies the changes of the call in `dir`. See the module documentation.
pub fn apply(
    policy: &Policy,
    dir: &Path,
    record: &CallRecord,
    lower: &Snapshot,
    say: &dyn Fn(&str),
) -> Result<Applied, WorkspaceError> {
    if record.layers.iter().all(Layer::untouched) {
        discarded::later(&discarded::dir(&policy.session.state_dir), dir);
        return Ok(Applied::default());
    }
    let marker = dir.join("started");
    let started = Started::of(&marker).map_err(|e| WorkspaceError::io("reading", &marker, e))?;
    let paths = BackupPaths { dir: backups_dir(policy).join(&record.call) };
    let mut journal = Journal { call: record.call.clone(), steps: Vec::new(), refused: Vec::new() };
    for layer in &record.layers {
        let protected = Protected::new(policy, lower, layer)?;
        let judged = judge::judge(layer, &protected, started, &paths)
            .map_err(|e| WorkspaceError::io("reading the call's layer", &layer.upper, e))?;
        journal.steps.extend(judged.steps);
        journal.refused.extend(judged.refused);
    }
    if journal.steps.is_empty() && journal.refused.is_empty() {
        remove_storage(dir);
        return Ok(Applied::default());
    }
    let files = JournalFiles::in_dir(dir);
    files.write(&journal).map_err(|e| WorkspaceError::io("writing the journal", &files.plan, e))?;
    let failed = journal::run(&files, &journal, 0);
    Ok(complete(policy, dir, record, &journal, failed, say))
}

/// The end of an apply (also of one finished by [`recover`]): the backups manifest, the report,
/// the storage removed, the backups pruned.
fn complete(
    policy: &Policy,
    dir: &Path,
    record: &CallRecord,
    journal: &Journal,
    failed: Vec<StepFailed>,
    say: &dyn Fn(&str),
) -> Applied {
    let roots: Vec<PathBuf> = record.layers.iter().map(|l| l.root.clone()).collect();
    let manifest = backups::manifest(journal, &roots);
    let backup_dir = backups_dir(policy).join(&record.call);
    if let Err(e) = backups::write_manifest(&backup_dir, &manifest) {
        say(&format!(
            "hullward: warning: cannot write the backups manifest in '{}': {e}",
            backup_dir.display()
        ));
    }
    let applied = Applied {
        changes: manifest.changes.len(),
        refused: journal.refused.clone(),
        failed: failed.iter().map(ToString::to_string).collect(),
    };
    report(&roots, &record.call, &applied, say);
    audit_refused(policy, &roots, &record.call, &applied.refused, say);
    discarded::later(&discarded::dir(&policy.session.state_dir), dir);
    for pruned in backups::prune(&backups_dir(policy), BACKUP_CAP_BYTES) {
        say(&format!(
            "hullward: backups of call {pruned} removed (the backups exceed {BACKUP_CAP_BYTES} bytes)"
        ));
    }
    applied
}

fn report(roots: &[PathBuf], call: &str, applied: &Applied, say: &dyn Fn(&str)) {
    for r in &applied.refused {
        let shown = judge::shown(roots, &r.path);
        let kept = r
            .kept
            .as_ref()
            .map(|k| format!("; the call's version is kept in '{}'", k.display()))
            .unwrap_or_default();
        say(&match &r.why {
            Why::Protected { rule } => format!(
                "hullward: [DENIED] '{shown}': not applied, a protected path (matches '{rule}'){kept}"
            ),
            Why::Conflict => format!(
                "hullward: conflict: '{shown}' was changed on the host during the call; the host's version stays{kept}"
            ),
            Why::Special => format!("hullward: [DENIED] '{shown}': not applied, not a file, directory or symlink{kept}"),
            Why::Git { rule } => format!(
                "hullward: [DENIED] '{shown}': not applied, {rule} (Sandbox.Git.ProtectedBranches: no protected branch moved, no branch deleted){kept}"
            ),
        });
    }
    for f in &applied.failed {
        say(&format!("hullward: warning: apply: {f}"));
    }
    if applied.changes > 0 {
        say(&format!(
            "hullward: applied {} change(s) of call {call}; `hullward undo {call}` puts the old versions back",
            applied.changes
        ));
    }
}

/// One `refused` record in the audit log for each change the apply did not make (the call's
/// own records are the supervisor's; this one may be written by `hullward apply`, `serve` or a
/// recovering call just as well).
fn audit_refused(policy: &Policy, roots: &[PathBuf], call: &str, refused: &[Refused], say: &dyn Fn(&str)) {
    use crate::audit::{AuditLog, AuditRecord, RefusedChange};
    if refused.is_empty() {
        return;
    }
    let log = match AuditLog::open(&policy.session.audit_path) {
        Ok(log) => log,
        Err(e) => {
            return say(&format!("hullward: warning: the refused changes are not in the audit log: {e}"))
        }
    };
    for r in refused {
        let (why, rule) = match &r.why {
            Why::Protected { rule } => ("protected", Some(rule.clone())),
            Why::Conflict => ("conflict", None),
            Why::Special => ("special", None),
            Why::Git { rule } => ("git", Some(rule.clone())),
        };
        let change = RefusedChange {
            path: judge::shown(roots, &r.path),
            why: why.to_string(),
            rule,
            kept_in: r.kept.as_ref().map(|k| k.display().to_string()),
        };
        if let Err(e) = log.record(&AuditRecord::refused(call, change), &crate::filter::SecretSet::default())
        {
            return say(&format!("hullward: warning: cannot write the audit log: {e}"));
        }
    }
}

/// Finishes what supervisors that died left in the workspace: an interrupted apply is taken to
/// its end from its journal; an overlay call that died before its apply is held for review,
/// unless it wrote nothing; an ephemeral one is thrown away. What earlier calls discarded is
/// removed here, except in a call with a workspace layer, which removes it while it runs
/// ([`discarded`]).
pub fn recover(policy: &Policy, say: &dyn Fn(&str)) {
    let trash = discarded::dir(&policy.session.state_dir);
    for entry in std::fs::read_dir(workspace_dir(policy)).into_iter().flatten().flatten() {
        let dir = entry.path();
        let Some(mut record) = read_record(&dir) else { continue };
        if record.pid == std::process::id() || crate::sandbox::sys::process_exists(record.pid as libc::pid_t)
        {
            continue;
        }
        let files = JournalFiles::in_dir(&dir);
        if let Some(journal) = files.read() {
            let done = files.done();
            say(&format!(
                "hullward: call {} was killed while applying its changes ({done} of {} steps taken); finishing the apply from its journal",
                record.call,
                journal.steps.len()
            ));
            let failed = journal::run(&files, &journal, done);
            complete(policy, &dir, &record, &journal, failed, say);
            say(&format!("hullward: the apply of call {} was finished", record.call));
        } else if record.ephemeral || (!record.held && record.layers.iter().all(Layer::untouched)) {
            discarded::later(&trash, &dir);
        } else if !record.held {
            record.held = true;
            if write_record(&dir, &record).is_ok() {
                say(&format!(
                    "hullward: call {id} ended without applying its changes (its supervisor died); they are held: `hullward review {id}`",
                    id = record.call
                ));
            }
        }
    }
    if policy.sandbox.workspace == WorkspaceMode::Direct {
        discarded::empty(&trash);
    }
}

/// A held call's directory and record.
pub fn held(policy: &Policy, call: &str) -> Result<(PathBuf, CallRecord), WorkspaceError> {
    let dir = workspace_dir(policy).join(call);
    match read_record(&dir) {
        Some(r) if r.held && !call.contains('/') => Ok((dir, r)),
        _ => Err(WorkspaceError::NotHeld(call.to_string())),
    }
}

/// Every held call, oldest first by name.
pub fn held_calls(policy: &Policy) -> Vec<CallRecord> {
    let Ok(entries) = std::fs::read_dir(workspace_dir(policy)) else { return Vec::new() };
    let mut out: Vec<CallRecord> =
        entries.flatten().filter_map(|e| read_record(&e.path())).filter(|r| r.held).collect();
    out.sort_by(|a, b| a.call.cmp(&b.call));
    out
}

/// Throws a held call's changes away.
pub fn discard(dir: &Path) {
    remove_storage(dir);
}
