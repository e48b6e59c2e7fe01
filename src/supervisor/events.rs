//! The events of one call, built here and handed to its [`Front`] (the CLI's `--json` stream on
//! stderr, or a `serve` connection).

use serde_json::json;

use super::front::Front;
use crate::sandbox::plan::{NetPlan, SandboxPlan};

/// Builds a call's events and passes them to its front end.
pub struct Events<'a> {
    front: &'a dyn Front,
}

impl<'a> Events<'a> {
    pub fn new(front: &'a dyn Front) -> Events<'a> {
        Events { front }
    }

    fn emit(&self, v: serde_json::Value) {
        self.front.event(v);
    }

    /// A message for the human.
    pub fn say(&self, text: &str) {
        self.front.say(text);
    }

    /// The call starts: what the walk could not expand is said first (it is masked whole).
    pub fn start(&self, plan: &SandboxPlan) {
        for b in &plan.snapshot.bounded {
            self.say(&format!(
                "hullward: warning: '{}' is masked as a whole: {}",
                b.path.display(),
                b.reason
            ));
        }
        self.emit(json!({
            "event": "start",
            "program": plan.program.display().to_string(),
            "network": match plan.net { NetPlan::Isolated => "none", NetPlan::Proxy { .. } => "proxy", NetPlan::Host => "host" },
            "masks": plan.snapshot.masks.len(),
            "masked_whole": plan.snapshot.bounded.iter().map(|b| json!({"path": b.path.display().to_string(), "reason": b.reason})).collect::<Vec<_>>(),
            "landlock_abi": plan.landlock.as_ref().map(|l| l.abi),
            "dropped": plan.dropped.iter().map(|m| json!({"promise": m.promise, "feature": m.feature, "consequence": m.consequence})).collect::<Vec<_>>(),
            "yolo": plan.yolo,
        }));
    }

    /// One request through the egress proxy.
    pub fn egress(&self, event: &crate::proxy::ProxyEvent) {
        let mut v = serde_json::to_value(event).unwrap_or_default();
        v["event"] = json!("egress");
        self.emit(v);
    }

    /// A protected path changed during a call (`call`, when it was an earlier, interrupted one)
    /// and what became of it.
    pub fn protected_change(&self, call: Option<&str>, change: &crate::audit::ProtectedChange) {
        self.emit(json!({
            "event": "protected-change",
            "call": call,
            "path": change.path,
            "created": change.change == "created",
            "change": change.change,
            "rule": change.rule,
            "quarantined_to": change.quarantined_to,
            "restored_from": change.restored_from,
            "error": change.error,
        }));
    }

    /// The final event of call `call`; `denied` is `(rule, message)` when the call never ran.
    pub fn exit(&self, call: &str, code: i32, reason: &str, denied: Option<(&str, &str)>) {
        self.emit(json!({
            "event": "exit",
            "call": call,
            "code": code,
            "reason": reason,
            "denied": denied.map(|(rule, message)| json!({ "rule": rule, "message": message })),
        }));
    }
}
