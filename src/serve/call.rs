//! One call of a connection: the engine on a thread of its own, its front end, and the task that
//! forwards its events to the connection.
//!
//! Order of [`start`]: the call's bounded event queue and stop switch are made and registered
//! (server-wide for shutdown, per connection for `cancel`) → the forwarder task (adds the
//! request's `id`, scans stdout/stderr for prompt injection and flags the `exit` event) → the
//! call thread runs [`supervisor::run`] with a [`Remote`] front end and, when hullward itself
//! failed, sends the `exit` event the engine could not → the call is deregistered.

use std::collections::HashMap;
use std::sync::{mpsc as std_mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::{mpsc, watch};

use super::Server;
use crate::audit::{AuditLog, AuditRecord, Subject};
use crate::error::code;
use crate::filter::SecretSet;
use crate::guard::{Decision, Verdict};
use crate::policy::{Policy, Unattended};
use crate::supervisor::approval::Approval;
use crate::supervisor::inject::{self, Scanner};
use crate::supervisor::pump::Sink;
use crate::supervisor::workers::Pool;
use crate::supervisor::{self, CallSpec, Engine, Front, Stop, StopFuture, Stream};

/// The calls' threads, kept for the next call's (see [`supervisor::workers`]).
static CALLS: Pool = Pool::new("hullward-call");

/// Events one call may have queued before its output is held back.
const CALL_QUEUE: usize = 32;

/// Approvals waiting for an answer on one connection, by request id key.
pub type Approvals = Arc<Mutex<HashMap<String, std_mpsc::Sender<bool>>>>;

/// A running call, as its connection knows it.
pub struct Running {
    pub method: &'static str,
    pub display: String,
    pub started: Instant,
    pub stop: Arc<watch::Sender<Option<Stop>>>,
}

/// The calls of one connection, by request id key.
pub type Calls = Arc<Mutex<HashMap<String, Running>>>;

/// What a call needs from its connection.
pub struct Origin {
    pub server: Arc<Server>,
    pub id: Value,
    pub human: bool,
    pub out: mpsc::Sender<Value>,
    pub approvals: Approvals,
    pub calls: Calls,
}

/// Starts `spec` as the call answering request `origin.id` (method `method`), on the server's
/// engine or on `own` (a policy of the call's own, from [`Engine::with_policy`]).
pub fn start(origin: Origin, method: &'static str, spec: CallSpec, own: Option<Engine>) {
    let key = super::protocol::id_key(&origin.id);
    let (tx, rx) = mpsc::channel(CALL_QUEUE);
    let stop = Arc::new(watch::channel(None).0);
    let number = origin.server.next_number();
    if let Ok(mut all) = origin.server.calls.lock() {
        all.insert(number, stop.clone());
    }
    if let Ok(mut mine) = origin.calls.lock() {
        let running =
            Running { method, display: spec.display.clone(), started: Instant::now(), stop: stop.clone() };
        mine.insert(key.clone(), running);
    }
    let policy_audit = origin.server.engine.policy().session.audit_path.clone();
    let ended = Ended { calls: origin.calls.clone(), key: key.clone() };
    tokio::spawn(forward(
        rx,
        origin.out.clone(),
        origin.id.clone(),
        policy_audit,
        spec.subject.clone(),
        ended,
    ));
    let front = Remote {
        key: key.clone(),
        human: origin.human,
        tx,
        stop: stop.subscribe(),
        approvals: origin.approvals.clone(),
        approval_timeout: origin.server.options.approval_timeout,
    };
    let server = origin.server.clone();
    let calls = origin.calls;
    let spawned = CALLS.run(move || {
        let result = supervisor::run(own.as_ref().unwrap_or(&server.engine), &spec, &front);
        if let Err(e) = result {
            front.say(&format!("hullward: {e}"));
            front.event(json!({"event": "exit", "code": code::INTERNAL, "reason": "failed", "denied": null}));
        }
        drop(front);
        if let Ok(mut mine) = calls.lock() {
            mine.remove(&key);
        }
        if let Ok(mut all) = server.calls.lock() {
            all.remove(&number);
        }
        server.call_ended.notify_waiters();
    });
    if let Err(e) = spawned {
        tracing::error!("cannot start a call thread: {e}");
    }
}

/// The entry of a call in its connection's list, taken out when the call's exit event is
/// forwarded: once a client has seen the exit event, `status` no longer lists the call and
/// `cancel` answers that it is not running.
struct Ended {
    calls: Calls,
    key: String,
}

/// Forwards one call's events to its connection with the request's id; flags the exit event
/// when the output looked like a prompt injection, and records that in the audit log.
async fn forward(
    mut rx: mpsc::Receiver<Value>,
    out: mpsc::Sender<Value>,
    id: Value,
    audit: std::path::PathBuf,
    subject: Subject,
    ended: Ended,
) {
    let mut scanner = Scanner::new();
    while let Some(mut event) = rx.recv().await {
        match event["event"].as_str() {
            Some("stdout" | "stderr") => scanner.push(event["data"].as_str().unwrap_or_default().as_bytes()),
            Some("exit") => {
                if let Some(phrase) = scanner.hit() {
                    event["flagged"] = json!(inject::FLAG);
                    record_flag(&audit, event["call"].as_str().unwrap_or_default(), subject.clone(), phrase);
                }
                if let Ok(mut mine) = ended.calls.lock() {
                    mine.remove(&ended.key);
                }
            }
            _ => {}
        }
        event["id"] = id.clone();
        if out.send(event).await.is_err() {
            return;
        }
    }
}

fn record_flag(audit: &std::path::Path, call: &str, subject: Subject, phrase: &str) {
    let decision = Decision {
        verdict: Verdict::Allow,
        rule: inject::FLAG.to_string(),
        message: format!("[FLAGGED] The call's output looks like an instruction override ('{phrase}')."),
    };
    let record = AuditRecord::decision(call, subject, &decision);
    if let Err(e) = AuditLog::open(audit).and_then(|log| log.record(&record, &SecretSet::default())) {
        tracing::warn!("cannot record a prompt-injection flag: {e}");
    }
}

/// The front end of a call sent over a connection.
struct Remote {
    key: String,
    human: bool,
    tx: mpsc::Sender<Value>,
    stop: watch::Receiver<Option<Stop>>,
    approvals: Approvals,
    approval_timeout: Duration,
}

impl Remote {
    /// Asks the connection's human and waits for the `approve` with this call's id.
    fn ask_human(&self, what: &str) -> Approval {
        let event = json!({"event": "approval", "prompt": format!("Run requested: {what}"), "grant": null});
        wait_for_approval(&self.approvals, &self.key, self.approval_timeout, || self.event(event))
    }
}

/// A mutating call on a connection without a human: the unattended policy decides.
pub fn unattended(policy: &Policy) -> Approval {
    match policy.sandbox.unattended {
        Unattended::Allow => Approval::Granted,
        Unattended::Deny => Approval::Refused {
            rule: "unattended",
            message: "[DENIED] No human is attached to this session: mutating calls are denied (unattended policy deny; `--unattended-policy allow` opts in).".into(),
        },
    }
}

/// Registers request `key` as waiting, sends its approval event (`send`) and waits for the
/// connection's `approve`: a refusal when it says no, when `timeout` passes first, or when the
/// session closes (which drops what waits).
pub fn wait_for_approval(
    approvals: &Approvals,
    key: &str,
    timeout: Duration,
    send: impl FnOnce(),
) -> Approval {
    let (answer_tx, answer_rx) = std_mpsc::channel();
    if let Ok(mut waiting) = approvals.lock() {
        waiting.insert(key.to_string(), answer_tx);
    }
    send();
    let answer = answer_rx.recv_timeout(timeout);
    if let Ok(mut waiting) = approvals.lock() {
        waiting.remove(key);
    }
    match answer {
        Ok(true) => Approval::Granted,
        Ok(false) => Approval::not_approved(),
        Err(std_mpsc::RecvTimeoutError::Timeout) => Approval::Refused {
            rule: "approval",
            message: format!(
                "[DENIED] The approval was not answered within {}.",
                crate::policy::duration::format(timeout)
            ),
        },
        Err(std_mpsc::RecvTimeoutError::Disconnected) => Approval::Refused {
            rule: "approval",
            message: "[DENIED] The connection closed before the approval was answered.".into(),
        },
    }
}

impl Front for Remote {
    fn approve(&self, policy: &Policy, what: &str, needed: bool) -> Approval {
        if !self.human {
            return unattended(policy);
        }
        if needed {
            match self.ask_human(what) {
                Approval::Refused { .. } if *self.stop.borrow() == Some(Stop::Cancelled) => {
                    Approval::Cancelled
                }
                answer => answer,
            }
        } else {
            Approval::Granted
        }
    }

    fn say(&self, text: &str) {
        self.event(json!({"event": "notice", "message": text}));
    }

    /// Queued in order with the output; a full queue is waited for (backpressure), never
    /// dropped. Inside the call's own runtime (egress reports) the wait happens on a scoped
    /// thread outside it: the call's runtime holds still until the connection has room, and the
    /// connection's side never depends on that runtime.
    fn event(&self, event: Value) {
        if tokio::runtime::Handle::try_current().is_err() {
            let _ = self.tx.blocking_send(event);
            return;
        }
        if let Err(mpsc::error::TrySendError::Full(event)) = self.tx.try_send(event) {
            std::thread::scope(|s| {
                s.spawn(|| {
                    let _ = self.tx.blocking_send(event);
                });
            });
        }
    }

    fn sink(&self, stream: Stream) -> Sink {
        let stream = match stream {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        };
        Sink::Channel { stream, tx: self.tx.clone() }
    }

    fn stop(&self) -> StopFuture<'_> {
        let mut stop = self.stop.clone();
        Box::pin(async move {
            let why = stop.wait_for(Option::is_some).await.map(|why| why.unwrap_or(Stop::Cancelled));
            match why {
                Ok(why) => why,
                Err(_) => std::future::pending().await,
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_sent_from_inside_the_calls_runtime_waits_for_room_and_is_never_dropped() {
        let (tx, mut rx) = mpsc::channel(1);
        let stop = watch::channel(None).0;
        let front = Remote {
            key: "1".into(),
            human: false,
            tx,
            stop: stop.subscribe(),
            approvals: Approvals::default(),
            approval_timeout: Duration::from_secs(1),
        };
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            while let Some(e) = rx.blocking_recv() {
                std::thread::sleep(Duration::from_millis(1));
                got.push(e["n"].as_u64().unwrap());
            }
            got
        });
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        runtime.block_on(async {
            for n in 0..50 {
                front.event(json!({"event": "egress", "n": n}));
            }
        });
        drop(front);
        assert_eq!(reader.join().unwrap(), (0..50).collect::<Vec<u64>>());
    }
}
