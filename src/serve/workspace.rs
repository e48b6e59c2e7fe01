//! The held-call methods of a session (`review`, `apply`, `discard`): what `hullward
//! review|apply|discard CALL` does, over the socket, for a call the server ran with
//! `--workspace overlay --review`, so that a runtime can show a human the diff before it lands.
//!
//! Order of one request ([`start`], on a blocking thread of its own): `apply` on a connection
//! without a human → the unattended policy (rule `unattended`, recorded in the audit log) →
//! what supervisors that died left is finished ([`workspace::recover`]) → the held call
//! ([`workspace::held`]; none: an `error` event) → the method → one `result` event.
//!
//! `review` shows the diff the CLI shows ([`workspace::review::shown`]: protected bodies hidden,
//! secret values masked, with the server's environment); `apply` judges and applies like the
//! CLI (refused paths listed, backups kept for `hullward undo`); `discard` throws the changes
//! away. Neither `review` nor `discard` changes the host tree, so only `apply` is a mutating
//! method.

use std::sync::{Arc, Mutex};

use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::call;
use super::Server;
use crate::audit::{AuditLog, AuditRecord, Subject};
use crate::filter::SecretSet;
use crate::guard::Decision;
use crate::sandbox::masks;
use crate::supervisor::approval::Approval;
use crate::workspace::{self, judge::Why, CallRecord};

/// Which held-call method.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    Review,
    Apply,
    Discard,
}

impl Held {
    fn name(self) -> &'static str {
        match self {
            Held::Review => "review",
            Held::Apply => "apply",
            Held::Discard => "discard",
        }
    }
}

/// What a held-call request needs from its session.
pub struct Request {
    pub server: Arc<Server>,
    /// The session's name in the audit log.
    pub session: String,
    pub id: Value,
    pub human: bool,
    pub out: mpsc::Sender<Value>,
}

/// Answers `what` of held call `call` on a thread of its own.
pub fn start(request: Request, what: Held, call: String) {
    tokio::task::spawn_blocking(move || {
        let reply = match request.serve(what, &call) {
            Ok(mut result) => {
                result["id"] = request.id.clone();
                result["event"] = json!("result");
                result["call"] = json!(call);
                result
            }
            Err(message) => super::protocol::error(Some(&request.id), &message),
        };
        let _ = request.out.blocking_send(reply);
    });
}

impl Request {
    fn serve(&self, what: Held, call: &str) -> Result<Value, String> {
        if what == Held::Apply && !self.human {
            if let Approval::Refused { rule, message } = call::unattended(self.server.engine.policy()) {
                self.record(what, call, &Decision::deny(rule, message.clone()));
                return Ok(json!({"denied": {"rule": rule, "message": message}}));
            }
        }
        let policy = self.server.engine.policy();
        let said = Said::default();
        workspace::recover(policy, &|m| said.say(m));
        let (dir, record) = workspace::held(policy, call).map_err(|e| e.to_string())?;
        let mut result = match what {
            Held::Review => {
                let text = workspace::review::shown(policy, &dir, &record, self.server.engine.env())
                    .map_err(|e| e.to_string())?;
                json!({"diff": String::from_utf8_lossy(&text)})
            }
            Held::Discard => {
                workspace::discard(&dir);
                said.say(&format!("hullward: the changes of call {call} were thrown away"));
                json!({"discarded": true})
            }
            Held::Apply => self.apply(&dir, &record, &said)?,
        };
        result["report"] = json!(said.text());
        Ok(result)
    }

    /// Applies the held call: how many changes landed, which paths were refused and why, which
    /// steps failed.
    fn apply(&self, dir: &std::path::Path, record: &CallRecord, said: &Said) -> Result<Value, String> {
        let policy = self.server.engine.policy();
        self.record(
            Held::Apply,
            &record.call,
            &Decision::allow(if self.human { "human" } else { "unattended" }),
        );
        let roots: Vec<_> = record.layers.iter().map(|l| l.root.clone()).collect();
        let lower = masks::scan_policy(policy, &roots).map_err(|e| e.to_string())?;
        let applied =
            workspace::apply(policy, dir, record, &lower, &|m| said.say(m)).map_err(|e| e.to_string())?;
        let refused: Vec<Value> = applied
            .refused
            .iter()
            .map(|r| {
                let why = match &r.why {
                    Why::Protected { rule } => format!("protected ({rule})"),
                    Why::Conflict => "conflict".to_string(),
                    Why::Special => "special file".to_string(),
                    Why::Git { rule } => format!("git ({rule})"),
                };
                json!({"path": workspace::judge::shown(&roots, &r.path), "why": why})
            })
            .collect();
        Ok(json!({"applied": applied.changes, "refused": refused, "failed": applied.failed}))
    }

    fn record(&self, what: Held, call: &str, decision: &Decision) {
        let subject = Subject::Command(format!("{} {call}", what.name()));
        let record = AuditRecord::decision(self.session.clone(), subject, decision);
        let audit = &self.server.engine.policy().session.audit_path;
        let secrets = SecretSet::from_env(self.server.engine.env());
        if let Err(e) = AuditLog::open(audit).and_then(|log| log.record(&record, &secrets)) {
            tracing::warn!("cannot write the audit log: {e}");
        }
    }
}

/// The lines the workspace reports (what the CLI writes to stderr), kept for the reply.
#[derive(Default)]
struct Said(Mutex<Vec<String>>);

impl Said {
    fn say(&self, line: &str) {
        if let Ok(mut lines) = self.0.lock() {
            lines.push(line.to_string());
        }
    }

    fn text(&self) -> String {
        self.0.lock().map(|l| l.iter().map(|s| format!("{s}\n")).collect()).unwrap_or_default()
    }
}
