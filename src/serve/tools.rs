//! The file methods of a session (`read_file`, `write_file`, `list_files`, `check_path`): each
//! request runs on a blocking thread of its own, so that a question to the human never holds up
//! the connection's other requests (the `approve` that answers it among them).
//!
//! Order of one request ([`start`]): the access decision ([`access::decide`]) → a path just
//! outside the roots: the human is asked to grant its directory (no human: denied) → a mutating
//! operation (`write_file`): no human attached → the unattended policy; a human with HITL on →
//! asked, unless the grant question just asked about this very write → the operation
//! ([`files`]) → prompt-injection scan of what was read → the audit record(s) → one `result`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::access::{self, Access, Grants};
use super::call::{self, Approvals};
use super::files::{self, Anchored, FileError};
use super::Server;
use crate::audit::{AuditLog, AuditRecord, Subject};
use crate::filter::SecretSet;
use crate::guard::path::Op;
use crate::guard::{Decision, Verdict};
use crate::supervisor::approval::Approval;
use crate::supervisor::inject;

/// A file method and its own fields.
#[derive(Debug, Clone)]
pub enum FileOp {
    Read {
        offset: u64,
    },
    Write {
        content: String,
    },
    List,
    /// `check_path`: the decision only.
    Check(Op),
}

impl FileOp {
    fn op(&self) -> Op {
        match self {
            FileOp::Read { .. } => Op::Read,
            FileOp::Write { .. } => Op::Write,
            FileOp::List => Op::List,
            FileOp::Check(op) => *op,
        }
    }

    fn mutates(&self) -> bool {
        matches!(self, FileOp::Write { .. })
    }
}

/// What a file request needs from its session.
pub struct Tool {
    pub server: Arc<Server>,
    /// The session's name in the audit log.
    pub session: String,
    pub id: Value,
    pub human: bool,
    pub out: mpsc::Sender<Value>,
    pub approvals: Approvals,
    pub grants: Grants,
}

/// Answers the request on a thread of its own.
pub fn start(tool: Tool, op: FileOp, path: String) {
    tokio::task::spawn_blocking(move || {
        let mut reply = tool.serve(&op, &path);
        reply["id"] = tool.id.clone();
        reply["event"] = json!("result");
        let _ = tool.out.blocking_send(reply);
    });
}

impl Tool {
    fn serve(&self, op: &FileOp, path: &str) -> Value {
        let policy = self.server.engine.policy();
        let (at, decision, asked) =
            match self.settle(access::decide(policy, &self.grants, op.op(), Path::new(path))) {
                Ok(allowed) => allowed,
                Err(denied) => return self.denied(op, path, denied),
            };
        if op.mutates() {
            if let Some(refusal) = self.admit_mutation(path, asked) {
                return self.denied(op, path, refusal);
            }
        }
        self.record(op, &at.base.join(&at.rel), &decision);
        self.perform(op, path, &at, &decision)
    }

    /// The access decision settled: allowed (where, the decision to record, and whether a human
    /// was asked) or denied. A path just outside the roots is a question for the human, whose
    /// approval grants its directory; without a human it is a denial.
    fn settle(&self, access: Access) -> Result<(Anchored, Decision, bool), Decision> {
        let (grant, resolved, prompt) = match access {
            Access::Allowed { at, decision } => return Ok((at, decision, false)),
            Access::Denied(d) => return Err(d),
            Access::Ask { grant, resolved, prompt } => (grant, resolved, prompt),
        };
        if !self.human {
            return Err(crate::guard::path::outside_denial(self.server.engine.policy(), &resolved));
        }
        let event = json!({"id": self.id, "event": "approval", "prompt": prompt, "grant": grant.display().to_string()});
        if let Some(denied) = refusal(self.ask(event)) {
            return Err(denied);
        }
        self.grants.add(grant.clone());
        let (at, decision) = access::granted(grant, &resolved);
        Ok((at, decision, true))
    }

    /// The unattended policy, or the human's approval of a write (`None`: it may go on).
    fn admit_mutation(&self, path: &str, asked: bool) -> Option<Decision> {
        let policy = self.server.engine.policy();
        let approval = if !self.human {
            call::unattended(policy)
        } else if policy.session.hitl && !asked {
            let prompt = format!("Write requested: write_file {path}");
            self.ask(json!({"id": self.id, "event": "approval", "prompt": prompt, "grant": null}))
        } else {
            Approval::Granted
        };
        refusal(approval)
    }

    fn ask(&self, event: Value) -> Approval {
        let key = super::protocol::id_key(&self.id);
        let timeout = self.server.options.approval_timeout;
        call::wait_for_approval(&self.approvals, &key, timeout, || {
            let _ = self.out.blocking_send(event);
        })
    }

    fn perform(&self, op: &FileOp, path: &str, at: &Anchored, decision: &Decision) -> Value {
        let limit = usize::try_from(self.server.engine.policy().read_file_size_limit).unwrap_or(usize::MAX);
        let done = match op {
            FileOp::Check(_) => return check_result(decision),
            FileOp::Read { offset } => {
                files::read(at, *offset, limit).map(|r| self.read_result(path, *offset, r))
            }
            FileOp::Write { content } => {
                files::write(at, content.as_bytes()).map(|n| json!({"path": path, "bytes": n}))
            }
            FileOp::List => files::list(at).map(|(entries, more)| {
                let entries: Vec<Value> =
                    entries.iter().map(|e| json!({"name": e.name, "type": e.kind, "size": e.size})).collect();
                json!({"path": path, "entries": entries, "truncated": more})
            }),
        };
        match done {
            Ok(mut v) => {
                v["denied"] = Value::Null;
                v
            }
            Err(e) => self.failed(path, &e),
        }
    }

    /// The text read, with the notice how to read on when the file has more; flagged (and
    /// recorded) when it looks like a prompt injection.
    fn read_result(&self, path: &str, offset: u64, r: files::ReadOut) -> Value {
        let mut content = r.content;
        if let Some(next) = r.next_offset {
            content.push_str(&truncation_notice(path, offset, next, r.size));
        }
        let mut v = json!({
            "path": path,
            "content": content,
            "size": r.size,
            "offset": offset,
            "next_offset": r.next_offset,
            "truncated": r.next_offset.is_some(),
            "lossy": r.lossy,
        });
        if let Some(phrase) = inject::flags(content.as_bytes()) {
            v["flagged"] = json!(inject::FLAG);
            let flag = Decision {
                verdict: Verdict::Allow,
                rule: inject::FLAG.to_string(),
                message: format!(
                    "[FLAGGED] read_file '{path}' looks like an instruction override ('{phrase}')."
                ),
            };
            self.record(&FileOp::Read { offset }, Path::new(path), &flag);
        }
        v
    }

    fn failed(&self, path: &str, e: &FileError) -> Value {
        json!({"path": path, "denied": null, "error": format!("hullward: {e}")})
    }

    fn denied(&self, op: &FileOp, path: &str, decision: Decision) -> Value {
        self.record(op, &PathBuf::from(path), &decision);
        if let FileOp::Check(_) = op {
            return check_result(&decision);
        }
        json!({"path": path, "denied": {"rule": decision.rule, "message": decision.message}})
    }

    fn record(&self, op: &FileOp, path: &Path, decision: &Decision) {
        let subject = Subject::Path { op: op.op().as_str().to_string(), path: path.display().to_string() };
        let record = AuditRecord::decision(self.session.clone(), subject, decision);
        let audit = &self.server.engine.policy().session.audit_path;
        let secrets = SecretSet::from_env(self.server.engine.env());
        if let Err(e) = AuditLog::open(audit).and_then(|log| log.record(&record, &secrets)) {
            tracing::warn!("cannot write the audit log: {e}");
        }
    }
}

/// The denial an approval amounts to (`None`: granted).
fn refusal(approval: Approval) -> Option<Decision> {
    match approval {
        Approval::Granted => None,
        Approval::Refused { rule, message } => Some(Decision::deny(rule, message)),
        Approval::Cancelled => Some(Decision::deny(
            "cancelled",
            "[DENIED] The request was cancelled before it was approved.".into(),
        )),
    }
}

/// `check_path`'s reply: the decision as `check path --json` prints it.
fn check_result(decision: &Decision) -> Value {
    serde_json::to_value(decision).unwrap_or_default()
}

/// The seed's notice on a truncated read: where the next read starts, and the shell way.
fn truncation_notice(path: &str, offset: u64, next: u64, size: u64) -> String {
    format!(
        "\n\n[truncated: bytes {offset}–{next} of {size} shown (Security.ReadFileSizeLimit). Read on with read_file offset={next}, or with shell_run: tail -c +{} '{}']",
        next + 1,
        path.replace('\'', "'\\''")
    )
}
