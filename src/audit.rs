//! The audit log: one JSON object per line for every decision and every call, never a secret.
//!
//! Order of use: [`AuditLog::open`] once (the `--audit FILE`, or the policy's default
//! `$HULLWARD_HOME/audit.jsonl`); then [`AuditLog::record`] for each [`AuditRecord`] — a
//! [`decision`](AuditRecord::decision) when a guard has decided, a [`call`](AuditRecord::call) when
//! the program has ended — with the call's [`SecretSet`].
//!
//! **Files.** A missing parent folder is created with mode 0700; the log is opened
//! `O_APPEND|O_CREAT|O_CLOEXEC|O_NOFOLLOW` with mode 0600, and an existing log with a wider mode is
//! narrowed to 0600. A symlink, FIFO or anything but a regular file is refused, so a planted link
//! cannot make hullward append to another file.
//!
//! **Lines.** Each record is written with a single `write(2)` on the `O_APPEND` descriptor, so
//! records from concurrent writers (threads, or several hullward processes) never interleave; a
//! short write is reported as an error rather than followed by a second write.
//!
//! **Secrets.** Before encoding, every string of the record goes through the call's secret masker
//! and the log patterns ([`logmask`]), so a command line holding a token, a
//! URL with a password, or a denial message quoting a value is written masked.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::{json, Map, Value};

use crate::filter::{logmask, FilterStats, SecretSet};
use crate::guard::{Decision, Verdict};

/// Mode of the audit log file.
pub const FILE_MODE: u32 = 0o600;
/// Mode of a folder created for it.
pub const DIR_MODE: u32 = 0o700;

/// Why the audit log could not be opened or written.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    #[error("cannot create the audit log folder '{}': {source}", path.display())]
    CreateDir { path: PathBuf, source: io::Error },
    #[error("cannot open the audit log '{}': {source}", path.display())]
    Open { path: PathBuf, source: io::Error },
    #[error("the audit log '{}' is not a regular file", path.display())]
    NotAFile { path: PathBuf },
    #[error("cannot restrict the audit log '{}' to mode 0600: {source}", path.display())]
    Permissions { path: PathBuf, source: io::Error },
    #[error("cannot write to the audit log '{}': {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
    #[error("short write to the audit log '{}': {written} of {len} bytes", path.display())]
    ShortWrite { path: PathBuf, written: usize, len: usize },
}

/// An open audit log.
#[derive(Debug)]
pub struct AuditLog {
    file: File,
    path: PathBuf,
}

impl AuditLog {
    /// Opens (creating if needed) the log at `path`.
    pub fn open(path: &Path) -> Result<AuditLog, AuditError> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            if !parent.exists() {
                DirBuilder::new()
                    .recursive(true)
                    .mode(DIR_MODE)
                    .create(parent)
                    .map_err(|source| AuditError::CreateDir { path: parent.to_path_buf(), source })?;
            }
        }
        let file = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(FILE_MODE)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)
            .map_err(|source| AuditError::Open { path: path.to_path_buf(), source })?;
        let meta = file.metadata().map_err(|source| AuditError::Open { path: path.to_path_buf(), source })?;
        if !meta.is_file() {
            return Err(AuditError::NotAFile { path: path.to_path_buf() });
        }
        if meta.permissions().mode() & 0o7777 != FILE_MODE {
            file.set_permissions(std::fs::Permissions::from_mode(FILE_MODE))
                .map_err(|source| AuditError::Permissions { path: path.to_path_buf(), source })?;
        }
        Ok(AuditLog { file, path: path.to_path_buf() })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Appends `record` as one line, every string masked with `secrets` and the log patterns.
    pub fn record(&self, record: &AuditRecord, secrets: &SecretSet) -> Result<(), AuditError> {
        let mut value = record.to_json();
        redact(&mut value, secrets);
        let mut line = value.to_string().into_bytes();
        line.push(b'\n');
        loop {
            match (&self.file).write(&line) {
                Ok(n) if n == line.len() => return Ok(()),
                Ok(n) => {
                    return Err(AuditError::ShortWrite {
                        path: self.path.clone(),
                        written: n,
                        len: line.len(),
                    })
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(source) => return Err(AuditError::Write { path: self.path.clone(), source }),
            }
        }
    }
}

/// Whether a record is a guard's decision or a finished call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecordKind {
    Decision,
    Call,
    /// A protected path changed during a call, and what hullward did about it.
    Quarantine,
    /// A change of an overlay call that its apply did not make (a protected path, a conflict
    /// with the host, a special file, a git rule), and where the call's version is kept.
    Refused,
}

impl RecordKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RecordKind::Decision => "decision",
            RecordKind::Call => "call",
            RecordKind::Quarantine => "quarantine",
            RecordKind::Refused => "refused",
        }
    }
}

/// What a record is about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Subject {
    /// A shell command string (`sh`, `check shell`, `shell_run`).
    Command(String),
    /// A program and its arguments (`run`).
    Argv(Vec<String>),
    /// A file operation (`check path`, `check_path`).
    Path { op: String, path: String },
    /// An outbound request (`check url`, the egress proxy).
    Url(String),
}

/// One line of the audit log.
#[derive(Debug, Clone)]
pub struct AuditRecord {
    pub time: SystemTime,
    pub call_id: String,
    pub kind: RecordKind,
    pub subject: Subject,
    pub verdict: Option<Verdict>,
    pub rule: Option<String>,
    /// The `[DENIED]` text or the approval prompt.
    pub message: Option<String>,
    /// The program's exit status (128+N when killed by signal N).
    pub exit_status: Option<i32>,
    pub duration_ms: Option<u64>,
    /// What the output filters did (both streams added).
    pub filter: FilterStats,
    /// Enforcement that was asked for but could not be applied (`--no-strict`).
    pub dropped: Vec<String>,
    /// For a [`RecordKind::Quarantine`] record: the protected path and what became of it.
    pub protected: Option<ProtectedChange>,
    /// For a [`RecordKind::Refused`] record: the change that was not applied.
    pub refused: Option<RefusedChange>,
}

/// A change of an overlay call that its apply refused, as the audit log records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedChange {
    /// As the user knows it: relative to its root.
    pub path: String,
    /// `protected`, `conflict`, `special` or `git`.
    pub why: String,
    /// The deny pattern, protected entry or git rule that refused it (none for a conflict or a
    /// special file).
    pub rule: Option<String>,
    /// Where the call's version is kept (`$HULLWARD_HOME/backups/CALL/refused/…`; none for a
    /// refused delete).
    pub kept_in: Option<String>,
}

/// A protected path created, changed or removed during a call, as the audit log records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProtectedChange {
    pub path: String,
    /// `created`, `changed` or `vanished`.
    pub change: String,
    pub rule: String,
    /// Where the changed entry was moved (`$HULLWARD_HOME/quarantine/CALL/…`).
    pub quarantined_to: Option<String>,
    /// Where the original was found and moved back from.
    pub restored_from: Option<String>,
    /// Why something could not be done.
    pub error: Option<String>,
}

impl AuditRecord {
    /// A guard's decision, stamped now.
    pub fn decision(call_id: impl Into<String>, subject: Subject, decision: &Decision) -> AuditRecord {
        AuditRecord {
            time: SystemTime::now(),
            call_id: call_id.into(),
            kind: RecordKind::Decision,
            subject,
            verdict: Some(decision.verdict),
            rule: Some(decision.rule.clone()),
            message: Some(decision.message.clone()).filter(|m| !m.is_empty()),
            exit_status: None,
            duration_ms: None,
            filter: FilterStats::default(),
            dropped: Vec::new(),
            protected: None,
            refused: None,
        }
    }

    /// A protected change found after the call `call_id`, stamped now.
    pub fn quarantine(call_id: impl Into<String>, subject: Subject, change: ProtectedChange) -> AuditRecord {
        AuditRecord {
            time: SystemTime::now(),
            call_id: call_id.into(),
            kind: RecordKind::Quarantine,
            subject,
            verdict: None,
            rule: Some(change.rule.clone()),
            message: None,
            exit_status: None,
            duration_ms: None,
            filter: FilterStats::default(),
            dropped: Vec::new(),
            protected: Some(change),
            refused: None,
        }
    }

    /// A change the apply of call `call_id` refused, stamped now.
    pub fn refused(call_id: impl Into<String>, change: RefusedChange) -> AuditRecord {
        AuditRecord {
            time: SystemTime::now(),
            call_id: call_id.into(),
            kind: RecordKind::Refused,
            subject: Subject::Path { op: "apply".to_string(), path: change.path.clone() },
            verdict: None,
            rule: change.rule.clone(),
            message: None,
            exit_status: None,
            duration_ms: None,
            filter: FilterStats::default(),
            dropped: Vec::new(),
            protected: None,
            refused: Some(change),
        }
    }

    /// A finished call, stamped now.
    pub fn call(
        call_id: impl Into<String>,
        subject: Subject,
        exit_status: i32,
        duration: Duration,
        filter: FilterStats,
    ) -> AuditRecord {
        AuditRecord {
            time: SystemTime::now(),
            call_id: call_id.into(),
            kind: RecordKind::Call,
            subject,
            verdict: None,
            rule: None,
            message: None,
            exit_status: Some(exit_status),
            duration_ms: Some(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)),
            filter,
            dropped: Vec::new(),
            protected: None,
            refused: None,
        }
    }

    /// The record as its JSON object (before masking); absent fields are left out.
    pub fn to_json(&self) -> Value {
        let mut o = Map::new();
        o.insert("time".into(), rfc3339(self.time).into());
        o.insert("call_id".into(), self.call_id.clone().into());
        o.insert("kind".into(), self.kind.as_str().into());
        match &self.subject {
            Subject::Command(c) => {
                o.insert("command".into(), c.clone().into());
            }
            Subject::Argv(a) => {
                o.insert("argv".into(), json!(a));
            }
            Subject::Path { op, path } => {
                o.insert("op".into(), op.clone().into());
                o.insert("path".into(), path.clone().into());
            }
            Subject::Url(u) => {
                o.insert("url".into(), u.clone().into());
            }
        }
        if let Some(v) = self.verdict {
            o.insert("verdict".into(), json!(v));
        }
        if let Some(r) = &self.rule {
            o.insert("rule".into(), r.clone().into());
        }
        if let Some(m) = &self.message {
            o.insert("message".into(), m.clone().into());
        }
        if let Some(s) = self.exit_status {
            o.insert("exit_status".into(), s.into());
        }
        if let Some(d) = self.duration_ms {
            o.insert("duration_ms".into(), d.into());
        }
        if self.kind == RecordKind::Call {
            o.insert("masks_applied".into(), self.filter.secrets_masked.into());
            o.insert("bytes_masked".into(), self.filter.bytes_masked.into());
            o.insert("diff_bodies_hidden".into(), self.filter.diff_bodies_hidden.into());
        }
        if !self.dropped.is_empty() {
            o.insert("dropped".into(), json!(self.dropped));
        }
        if let Some(p) = &self.protected {
            o.insert("path".into(), p.path.clone().into());
            o.insert("change".into(), p.change.clone().into());
            for (key, value) in [
                ("quarantined_to", &p.quarantined_to),
                ("restored_from", &p.restored_from),
                ("error", &p.error),
            ] {
                if let Some(v) = value {
                    o.insert(key.into(), v.clone().into());
                }
            }
        }
        if let Some(r) = &self.refused {
            o.insert("why".into(), r.why.clone().into());
            if let Some(k) = &r.kept_in {
                o.insert("kept_in".into(), k.clone().into());
            }
        }
        Value::Object(o)
    }
}

/// Masks every string inside `value`.
fn redact(value: &mut Value, secrets: &SecretSet) {
    match value {
        Value::String(s) => {
            let masked = secrets.mask_str(s);
            *s = logmask::redact_str(&masked).into_owned();
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact(v, secrets)),
        Value::Object(map) => map.values_mut().for_each(|v| redact(v, secrets)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// `t` as RFC 3339 in UTC with milliseconds (`2024-02-29T23:59:59.000Z`); times before 1970 are
/// written as the epoch.
pub fn rfc3339(t: SystemTime) -> String {
    const DAYS_PER_400_YEARS: u64 = 146_097;
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let mut days = secs / 86_400;
    let rem = secs % 86_400;
    let mut year = 1970 + 400 * (days / DAYS_PER_400_YEARS);
    days %= DAYS_PER_400_YEARS;
    loop {
        let len = if is_leap(year) { 366 } else { 365 };
        if days < len {
            break;
        }
        days -= len;
        year += 1;
    }
    let february = if is_leap(year) { 29 } else { 28 };
    let mut month = 1;
    for len in [31, february, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] {
        if days < len {
            break;
        }
        days -= len;
        month += 1;
    }
    format!(
        "{year:04}-{month:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        days + 1,
        rem / 3600,
        rem / 60 % 60,
        rem % 60,
        since.subsec_millis()
    )
}

fn is_leap(y: u64) -> bool {
    (y.is_multiple_of(4) && !y.is_multiple_of(100)) || y.is_multiple_of(400)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_in_utc() {
        for (secs, want) in [
            (0, "1970-01-01T00:00:00.000Z"),
            (951_782_400, "2000-02-29T00:00:00.000Z"),
            (1_234_567_890, "2009-02-13T23:31:30.000Z"),
            (1_709_251_199, "2024-02-29T23:59:59.000Z"),
            (4_107_542_400, "2100-03-01T00:00:00.000Z"),
            (253_402_300_799, "9999-12-31T23:59:59.000Z"),
        ] {
            assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_secs(secs)), want);
        }
        assert_eq!(rfc3339(UNIX_EPOCH + Duration::from_millis(1_500)), "1970-01-01T00:00:01.500Z");
    }

    #[test]
    fn records_have_the_documented_fields() {
        let d = Decision::deny("env-file", "[DENIED] '.env': blocked".into());
        let v = AuditRecord::decision("c1", Subject::Path { op: "read".into(), path: ".env".into() }, &d)
            .to_json();
        assert_eq!(v["kind"], "decision");
        assert_eq!(v["verdict"], "deny");
        assert_eq!(v["rule"], "env-file");
        assert_eq!(v["op"], "read");
        assert!(v.get("exit_status").is_none());
        let stats = FilterStats { secrets_masked: 2, bytes_masked: 40, diff_bodies_hidden: 1 };
        let mut call =
            AuditRecord::call("c1", Subject::Argv(vec!["ls".into()]), 0, Duration::from_millis(1234), stats);
        call.dropped.push("seccomp".into());
        let v = call.to_json();
        assert_eq!(v["kind"], "call");
        assert_eq!(v["duration_ms"], 1234);
        assert_eq!(v["masks_applied"], 2);
        assert_eq!(v["bytes_masked"], 40);
        assert_eq!(v["diff_bodies_hidden"], 1);
        assert_eq!(v["dropped"][0], "seccomp");
        let change = ProtectedChange {
            path: "sub/.env".into(),
            change: "created".into(),
            rule: "**/.env".into(),
            quarantined_to: Some("/h/quarantine/c1/files/ws/sub/.env".into()),
            restored_from: None,
            error: None,
        };
        let v = AuditRecord::quarantine("c1", Subject::Argv(vec!["sh".into()]), change).to_json();
        assert_eq!(v["kind"], "quarantine");
        assert_eq!(v["path"], "sub/.env");
        assert_eq!(v["change"], "created");
        assert_eq!(v["rule"], "**/.env");
        assert_eq!(v["quarantined_to"], "/h/quarantine/c1/files/ws/sub/.env");
        let change = RefusedChange {
            path: "app/.env".into(),
            why: "protected".into(),
            rule: Some(".env".into()),
            kept_in: Some("/h/backups/c2/refused/ws/app/.env".into()),
        };
        let v = AuditRecord::refused("c2", change).to_json();
        assert_eq!((v["kind"].as_str(), v["call_id"].as_str()), (Some("refused"), Some("c2")));
        assert_eq!((v["op"].as_str(), v["path"].as_str()), (Some("apply"), Some("app/.env")));
        assert_eq!((v["why"].as_str(), v["rule"].as_str()), (Some("protected"), Some(".env")));
        assert_eq!(v["kept_in"], "/h/backups/c2/refused/ws/app/.env");
        assert!(v.get("restored_from").is_none() && v.get("exit_status").is_none());
        assert!(v["time"].as_str().unwrap().ends_with('Z'));
    }
}
