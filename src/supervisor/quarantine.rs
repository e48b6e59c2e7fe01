//! The quarantine of a `direct` call: protected paths the program created or changed anyway are
//! moved out of the roots, the originals put back, and all of it reported.
//!
//! What can change at all: in the child's view a denied file is covered by a read-only mask and a
//! write-protected one is bound read-only over itself, so neither can be rewritten in place,
//! unlinked or renamed (a mount point). What a program *can* do is create a new protected path
//! (`.env`, `git init sub`), or rename an unpinned parent directory — the mask moves with it —
//! and put something else in its place. The original then still exists, under another name,
//! with its own inode: the walk after the call finds it by inode ([`masks::rescan`]), and
//! restoring it is a rename back. No copy is kept before the call. Only without a mount view
//! (`--no-strict` on a kernel without user namespaces) can a protected file be rewritten in
//! place; that content is quarantined, and reported as having no original to restore.
//!
//! Order, per call: [`Quarantine::recover`] (before the plan: finishes calls whose supervisor
//! died) → [`Quarantine::begin`] (before the spawn: the pending record, i.e. the protected
//! entries as they were) → the call → [`Quarantine::finish`] (rescan, move, report) → the exit
//! event and the audit record → [`Quarantine::done`] (drop the pending record).
//!
//! Crash safety (against the supervisor being killed at any point, not against power loss):
//! everything after the call is derived again from the pending record and the filesystem, so a
//! later call that finds the record of a dead supervisor redoes exactly what is left. Each move
//! is written to the call's `manifest.jsonl` *before* it is made, so a path moved just before
//! the crash is still reported (by the recovering call: stderr, JSON event, audit record). The
//! record goes only once everything is reported.
//!
//! Layout: `$HULLWARD_HOME/quarantine/.pending/CALL.json`, and
//! `$HULLWARD_HOME/quarantine/CALL/{manifest.jsonl, files/<absolute path>}`. Nothing is deleted.
//! A quarantine on another filesystem than the root falls back to a sibling name in place
//! (`NAME.hullward-quarantined-CALL`), which nothing that runs later reads as the original.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use super::events::Events;
use super::record::Recorder;
use crate::audit::ProtectedChange;
use crate::policy::Policy;
use crate::sandbox::masks::{self, Change, ChangeKind, Snapshot, Stamp, Stamped};
use crate::sandbox::plan::SandboxPlan;
use crate::sandbox::sys;

/// The quarantine of one call.
pub struct Quarantine {
    /// `$HULLWARD_HOME/quarantine`.
    dir: PathBuf,
    call_id: String,
}

/// What was done about one protected change.
struct Outcome {
    change: Change,
    quarantined_to: Option<PathBuf>,
    restored_from: Option<PathBuf>,
    error: Option<String>,
}

impl Quarantine {
    pub fn new(policy: &Policy, call_id: &str) -> Quarantine {
        Quarantine { dir: policy.session.state_dir.join("quarantine"), call_id: call_id.to_string() }
    }

    fn pending_dir(&self) -> PathBuf {
        self.dir.join(".pending")
    }

    fn pending_file(&self, call_id: &str) -> PathBuf {
        self.pending_dir().join(format!("{call_id}.json"))
    }

    /// Finishes the quarantine of earlier calls whose supervisor died (SIGKILL, OOM) before it
    /// was done: their protected changes are moved and reported now, under their own call id.
    pub fn recover(&self, policy: &Policy, recorder: &Recorder, events: &Events) {
        let Ok(entries) = std::fs::read_dir(self.pending_dir()) else { return };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(call_id) = name.to_str().and_then(|n| n.strip_suffix(".json")) else { continue };
            if supervisor_alive(call_id) {
                continue;
            }
            let Some((roots, before)) = read_pending(&entry.path()) else {
                events.say(&format!(
                    "hullward: warning: unreadable record of interrupted call {call_id}: '{}' left for a human to look at",
                    entry.path().display()
                ));
                continue;
            };
            let earlier = Quarantine { dir: self.dir.clone(), call_id: call_id.to_string() };
            earlier.settle(policy, &roots, &before, Some(call_id), recorder, events);
            earlier.done();
        }
    }

    /// Records the protected entries as they are before the program runs (the plan's walk), so
    /// that a later call can finish this one's quarantine if this supervisor dies.
    pub fn begin(&self, plan: &SandboxPlan, events: &Events) {
        if plan.yolo {
            return;
        }
        let record = PendingRecord {
            call: &self.call_id,
            roots: plan.scanned.iter().map(|p| encode(p)).collect(),
            git_dirs: plan.snapshot.git_dirs.iter().map(|p| encode(p)).collect(),
            stamps: Stamps(&plan.snapshot.stamps),
        };
        let written = serde_json::to_vec(&record).map_err(std::io::Error::from).and_then(|bytes| {
            let tmp = self.pending_dir().join(format!(".{}.tmp", self.call_id));
            // The directory is made by the first call only (not a `mkdir` and a `stat` per call).
            match std::fs::write(&tmp, &bytes) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    std::fs::create_dir_all(self.pending_dir())?;
                    std::fs::write(&tmp, &bytes)?;
                }
                written => written?,
            }
            std::fs::rename(&tmp, self.pending_file(&self.call_id))
        });
        if let Err(e) = written {
            events.say(&format!(
                "hullward: warning: cannot record the call in '{}' ({e}); if hullward is killed, its protected paths are not checked later",
                self.pending_dir().display()
            ));
        }
        // The record's names are drained while the program runs, not by the post-call check.
        crate::sandbox::changes::drain_soon();
    }

    /// After the call: the protected changes are quarantined and reported (the pending record
    /// stays until [`Quarantine::done`]).
    pub fn finish(&self, policy: &Policy, plan: &SandboxPlan, recorder: &Recorder, events: &Events) {
        if plan.yolo {
            return;
        }
        self.settle(policy, &plan.scanned, &plan.snapshot, None, recorder, events);
    }

    /// Rescans `roots` against `before`, moves and restores, reports. `earlier` is the id of an
    /// interrupted call being finished.
    fn settle(
        &self,
        policy: &Policy,
        roots: &[PathBuf],
        before: &Snapshot,
        earlier: Option<&str>,
        recorder: &Recorder,
        events: &Events,
    ) {
        let done_before_crash = self.manifest_moves();
        match masks::rescan_policy(policy, roots, before) {
            Ok(after) => {
                let outcomes: Vec<Outcome> =
                    before.changes_since(&after).into_iter().map(|c| self.apply(c)).collect();
                if let Some(id) = earlier.filter(|_| !outcomes.is_empty() || !done_before_crash.is_empty()) {
                    events.say(&format!(
                        "hullward: call {id} was interrupted before its protected paths were checked; checked now"
                    ));
                }
                for (path, to) in done_before_crash {
                    self.report_recovered(policy, &path, &to, earlier, recorder, events);
                }
                for outcome in &outcomes {
                    report(policy, outcome, earlier.unwrap_or(&self.call_id), earlier, recorder, events);
                }
            }
            Err(e) => {
                events
                    .say(&format!("hullward: warning: cannot re-check protected files after the call: {e}"));
            }
        }
    }

    /// Drops the pending record. Its changes were reported (events and audit records) when they
    /// were settled; a call drops its own after its exit event, off the path a caller waits on.
    pub fn done(&self) {
        let _ = std::fs::remove_file(self.pending_file(&self.call_id));
        crate::sandbox::changes::drain_soon();
    }

    fn call_dir(&self) -> PathBuf {
        self.dir.join(&self.call_id)
    }

    /// Where `path` goes in this call's quarantine.
    fn destination(&self, path: &Path) -> PathBuf {
        let rel = path.strip_prefix("/").unwrap_or(path);
        let mut dest = self.call_dir().join("files").join(rel);
        let mut n = 1;
        while dest.symlink_metadata().is_ok() {
            let mut name = OsString::from(path.file_name().unwrap_or_default());
            name.push(format!(".{n}"));
            dest.set_file_name(name);
            n += 1;
        }
        dest
    }

    /// Moves and restores what `change` needs.
    fn apply(&self, change: Change) -> Outcome {
        let mut out = Outcome { change, quarantined_to: None, restored_from: None, error: None };
        let path = out.change.path.clone();
        if out.change.kind != ChangeKind::Vanished {
            match self.move_away(&path) {
                Ok(to) => out.quarantined_to = Some(to),
                Err(e) => {
                    out.error = Some(format!("cannot quarantine it: {e}"));
                    return out;
                }
            }
        }
        if let Some(original) = out.change.original.clone() {
            let back = path.parent().map_or(Ok(()), std::fs::create_dir_all).and_then(|()| {
                self.journal(json!({"restore": encode(&original), "to": encode(&path)}))?;
                std::fs::rename(&original, &path)
            });
            match back {
                Ok(()) => out.restored_from = Some(original),
                Err(e) => {
                    out.error =
                        Some(format!("cannot put the original back from '{}': {e}", original.display()))
                }
            }
        }
        out
    }

    /// Moves `path` into the quarantine (the move is journalled first); returns where it went.
    fn move_away(&self, path: &Path) -> std::io::Result<PathBuf> {
        let dest = self.destination(path);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)?;
        }
        self.journal(json!({"move": encode(path), "to": encode(&dest)}))?;
        match std::fs::rename(path, &dest) {
            Ok(()) => Ok(dest),
            Err(e) if e.raw_os_error() == Some(libc::EXDEV) => {
                let mut name = OsString::from(path.file_name().unwrap_or_default());
                name.push(format!(".hullward-quarantined-{}", self.call_id));
                let beside = path.with_file_name(name);
                self.journal(json!({"move": encode(path), "to": encode(&beside)}))?;
                std::fs::rename(path, &beside)?;
                Ok(beside)
            }
            Err(e) => Err(e),
        }
    }

    /// Appends one line to the call's manifest (before the step it describes is taken).
    fn journal(&self, line: Value) -> std::io::Result<()> {
        std::fs::create_dir_all(self.call_dir())?;
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.call_dir().join("manifest.jsonl"))?;
        f.write_all(format!("{line}\n").as_bytes())
    }

    /// Moves an interrupted call had made already (journalled, and the destination exists).
    fn manifest_moves(&self) -> Vec<(PathBuf, PathBuf)> {
        let Ok(text) = std::fs::read_to_string(self.call_dir().join("manifest.jsonl")) else {
            return Vec::new();
        };
        text.lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter_map(|v| Some((decode(v["move"].as_str()?), decode(v["to"].as_str()?))))
            .filter(|(_, to)| to.symlink_metadata().is_ok())
            .collect()
    }

    fn report_recovered(
        &self,
        policy: &Policy,
        path: &Path,
        to: &Path,
        earlier: Option<&str>,
        recorder: &Recorder,
        events: &Events,
    ) {
        let Some(call_id) = earlier else { return };
        let change = ProtectedChange {
            path: shown_path(policy, path),
            change: "changed".to_string(),
            rule: "protected path".to_string(),
            quarantined_to: Some(to.display().to_string()),
            restored_from: None,
            error: None,
        };
        events.say(&format!(
            "hullward: warning: protected path '{}' was quarantined to '{}' by call {call_id}",
            change.path,
            to.display()
        ));
        events.protected_change(Some(call_id), &change);
        recorder.protected(call_id, change, events);
    }
}

/// Tells the human, the event stream and the audit log what happened to one protected path.
fn report(
    policy: &Policy,
    outcome: &Outcome,
    call_id: &str,
    earlier: Option<&str>,
    recorder: &Recorder,
    events: &Events,
) {
    let c = &outcome.change;
    let shown = shown_path(policy, &c.path);
    let what = if c.write_protected { "write-protected file" } else { "protected file" };
    let how = match (c.kind, c.in_place) {
        (ChangeKind::Created, _) => "created",
        (ChangeKind::Changed, true) => "changed in place",
        (ChangeKind::Changed, false) => "replaced",
        (ChangeKind::Vanished, _) => "moved away",
    };
    let mut text =
        format!("hullward: warning: {what} '{shown}' was {how} during the call (matches '{}')", c.pattern);
    if let Some(to) = &outcome.quarantined_to {
        text.push_str(&format!("; quarantined to '{}'", to.display()));
    }
    if let Some(from) = &outcome.restored_from {
        text.push_str(&format!("; the original was put back from '{}'", shown_path(policy, from)));
    } else if c.kind != ChangeKind::Created {
        text.push_str("; no original was found to put back");
    }
    if let Some(e) = &outcome.error {
        text.push_str(&format!("; {e}"));
    }
    if let Some(id) = earlier {
        text.push_str(&format!(" (call {id})"));
    }
    events.say(&text);
    let change = ProtectedChange {
        path: shown,
        change: c.kind.as_str().to_string(),
        rule: c.pattern.clone(),
        quarantined_to: outcome.quarantined_to.as_ref().map(|p| p.display().to_string()),
        restored_from: outcome.restored_from.as_ref().map(|p| p.display().to_string()),
        error: outcome.error.clone(),
    };
    events.protected_change(earlier, &change);
    recorder.protected(call_id, change, events);
}

/// A path as the user knows it: relative to its root when inside one.
fn shown_path(policy: &Policy, path: &Path) -> String {
    policy
        .roots()
        .iter()
        .find_map(|r| path.strip_prefix(r).ok())
        .map_or_else(|| path.display().to_string(), |p| p.display().to_string())
}

/// Whether the supervisor that made `call_id` (`call-<pid>-…`) still runs (this process
/// included: in `serve`, another call of the same process is still under way).
fn supervisor_alive(call_id: &str) -> bool {
    let pid = call_id.strip_prefix("call-").and_then(|r| r.split('-').next()).and_then(|p| p.parse().ok());
    pid.is_none_or(sys::process_exists)
}

/// A pending record as [`read_pending`] reads it back, written straight from the plan (a JSON
/// value built of every stamp first cost more than the write).
#[derive(serde::Serialize)]
struct PendingRecord<'a> {
    call: &'a str,
    roots: Vec<String>,
    git_dirs: Vec<String>,
    stamps: Stamps<'a>,
}

/// The stamps of a pending record: `[path, dev, ino, size, "mtime_ns", pattern, write_protected]`.
struct Stamps<'a>(&'a BTreeMap<PathBuf, Stamped>);

impl serde::Serialize for Stamps<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.iter().map(|(p, s)| {
            let Stamp { dev, ino, size, mtime_ns } = s.stamp;
            (encode(p), dev, ino, size, mtime_ns.to_string(), &s.pattern, s.write_protected)
        }))
    }
}

/// A path as a JSON string: as is when it is UTF-8, else `\0` and its bytes in hex.
fn encode(path: &Path) -> String {
    match path.to_str() {
        Some(s) if !s.starts_with('\0') => s.to_string(),
        _ => {
            let hex: String = path.as_os_str().as_bytes().iter().map(|b| format!("{b:02x}")).collect();
            format!("\0{hex}")
        }
    }
}

fn decode(s: &str) -> PathBuf {
    match s.strip_prefix('\0') {
        Some(hex) => {
            let bytes = (0..hex.len() / 2)
                .filter_map(|i| u8::from_str_radix(hex.get(2 * i..2 * i + 2)?, 16).ok())
                .collect();
            PathBuf::from(OsString::from_vec(bytes))
        }
        None => PathBuf::from(s),
    }
}

/// The roots and the protected entries of a pending record.
fn read_pending(path: &Path) -> Option<(Vec<PathBuf>, Snapshot)> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    let paths = |key: &str| -> Option<Vec<PathBuf>> {
        v[key].as_array()?.iter().map(|p| p.as_str().map(decode)).collect()
    };
    let roots = paths("roots")?;
    let git_dirs: BTreeSet<PathBuf> = paths("git_dirs")?.into_iter().collect();
    let mut stamps = BTreeMap::new();
    for s in v["stamps"].as_array()? {
        let stamp = Stamp {
            dev: s[1].as_u64()?,
            ino: s[2].as_u64()?,
            size: s[3].as_u64()?,
            mtime_ns: s[4].as_str()?.parse().ok()?,
        };
        let (pattern, write_protected) = (s[5].as_str()?.to_string(), s[6].as_bool()?);
        let stamped = Stamped { stamp, pattern, write_protected, aside: None };
        stamps.insert(decode(s[0].as_str()?), stamped);
    }
    Some((roots, Snapshot { stamps, git_dirs, ..Snapshot::default() }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_survive_the_record_whatever_their_bytes() {
        for p in [&b"/ws/.env"[..], b"/ws/\xff\xfe/.env", b"/ws/\0odd"] {
            let path = PathBuf::from(OsString::from_vec(p.to_vec()));
            assert_eq!(decode(&encode(&path)), path);
        }
    }

    #[test]
    fn a_pending_record_reads_back_as_it_was_written() {
        let dir = std::env::temp_dir().join(format!("hullward-pending-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("call.json");
        let odd = PathBuf::from(OsString::from_vec(b"/ws/\xff/.env".to_vec()));
        let stamped = |ino, write_protected| Stamped {
            stamp: Stamp { dev: 7, ino, size: 12, mtime_ns: i128::from(i64::MAX) + 1 },
            pattern: "**/.env".to_string(),
            write_protected,
            aside: None,
        };
        let stamps =
            BTreeMap::from([(PathBuf::from("/ws/.env"), stamped(1, false)), (odd, stamped(u64::MAX, true))]);
        let record = PendingRecord {
            call: "call-1-0-0",
            roots: vec![encode(Path::new("/ws"))],
            git_dirs: vec![encode(Path::new("/ws/.git"))],
            stamps: Stamps(&stamps),
        };
        std::fs::write(&file, serde_json::to_vec(&record).unwrap()).unwrap();
        let (roots, snapshot) = read_pending(&file).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(roots, [PathBuf::from("/ws")]);
        assert_eq!(snapshot.git_dirs, BTreeSet::from([PathBuf::from("/ws/.git")]));
        assert_eq!(snapshot.stamps, stamps);
    }

    #[test]
    fn only_dead_supervisors_are_recovered() {
        assert!(supervisor_alive(&format!("call-{}-0-0", std::process::id())));
        assert!(!supervisor_alive(&format!("call-{}-0-0", i32::MAX)));
    }
}
