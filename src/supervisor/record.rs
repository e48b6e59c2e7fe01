//! The audit trail of one call: every decision and the call's outcome, appended to the JSONL
//! audit log with every secret value masked.
//!
//! Create one [`Recorder`] per call, as soon as the call's secrets are known; it opens the log
//! (`--audit`, or `$HULLWARD_HOME/audit.jsonl`). A log that cannot be opened or written is reported
//! once and never stops the call.

use std::cell::Cell;
use std::time::Instant;

use super::events::Events;
use crate::audit::{AuditLog, AuditRecord, ProtectedChange, Subject};
use crate::filter::{FilterStats, SecretSet};
use crate::guard::Decision;
use crate::policy::Policy;
use crate::proxy::ProxyEvent;

/// Records one call's decisions and outcome.
pub struct Recorder {
    log: Option<AuditLog>,
    secrets: SecretSet,
    call_id: String,
    subject: Subject,
    started: Instant,
    warned: Cell<bool>,
}

impl Recorder {
    pub fn new(
        policy: &Policy,
        call_id: &str,
        subject: Subject,
        secrets: SecretSet,
        events: &Events,
    ) -> Recorder {
        let log = match AuditLog::open(&policy.session.audit_path) {
            Ok(log) => Some(log),
            Err(e) => {
                events.say(&format!("hullward: warning: no audit log for this call: {e}"));
                None
            }
        };
        Recorder {
            log,
            secrets,
            call_id: call_id.to_string(),
            subject,
            started: Instant::now(),
            warned: Cell::new(false),
        }
    }

    /// The secrets of the call (for the output filters).
    pub fn secrets(&self) -> &SecretSet {
        &self.secrets
    }

    /// Replaces the secret set (once the forwarded credentials are known).
    pub fn set_secrets(&mut self, secrets: SecretSet) {
        self.secrets = secrets;
    }

    fn write(&self, record: &AuditRecord, events: &Events) {
        if let Some(log) = &self.log {
            if let Err(e) = log.record(record, &self.secrets) {
                if !self.warned.replace(true) {
                    events.say(&format!("hullward: warning: cannot write the audit log: {e}"));
                }
            }
        }
    }

    /// A guard's or the approval's decision about the call.
    pub fn decision(&self, decision: &Decision, events: &Events) {
        self.write(&AuditRecord::decision(&self.call_id, self.subject.clone(), decision), events);
    }

    /// One request through the egress proxy.
    pub fn egress(&self, ev: &ProxyEvent, events: &Events) {
        let decision = Decision { verdict: ev.verdict, rule: ev.rule.clone(), message: ev.message.clone() };
        let subject = Subject::Url(format!("{} {}:{}", ev.method, ev.host, ev.port).trim().to_string());
        self.write(&AuditRecord::decision(&self.call_id, subject, &decision), events);
    }

    /// A protected change found after the call `call_id` (this call, or an earlier one that was
    /// interrupted), and what was done about it.
    pub fn protected(&self, call_id: &str, change: ProtectedChange, events: &Events) {
        let subject = if call_id == self.call_id {
            self.subject.clone()
        } else {
            Subject::Path { op: "quarantine".to_string(), path: change.path.clone() }
        };
        self.write(&AuditRecord::quarantine(call_id, subject, change), events);
    }

    /// The call's end: exit status, duration, what the filters did, what `--no-strict` dropped.
    pub fn finish(&self, exit_status: i32, filter: FilterStats, dropped: Vec<String>, events: &Events) {
        let mut record = AuditRecord::call(
            &self.call_id,
            self.subject.clone(),
            exit_status,
            self.started.elapsed(),
            filter,
        );
        record.dropped = dropped;
        self.write(&record, events);
    }
}
