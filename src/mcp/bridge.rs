//! The in-process serve sessions behind the MCP server, and the routing of their events to the
//! tool call each belongs to.
//!
//! `hullward mcp` has no call engine of its own: every tool call is the serve request of the
//! same name on a [`Session`] ([`crate::serve`]), which runs it with the guards, approval,
//! kernel sandbox, filters and audit log of `hullward serve`. A serve session declares once
//! whether a human answers its approvals, while MCP 2026-07-28 states the client's capabilities
//! on every request; so there are two sessions, opened on first use: one with a human (requests
//! whose client offers form elicitation) and one without (the unattended policy). A client of an
//! `initialize` revision states its capabilities once, and so only ever uses one of them.
//!
//! Order: [`Bridge::start`] (the router task that reads the sessions' single event queue) →
//! [`Bridge::request`] for each request (a fresh id; the session of its kind opened with a
//! `hello` if it is the first; the call's events come back on its own [`Call`]) →
//! [`Bridge::close`] (waiting approvals refused, running calls cancelled) → the router ends once
//! every call has sent its last event.
//!
//! The router never waits for a reader: each call's queue is unbounded, drained by the tool
//! call that owns it, and what a call can put there is bounded by the policy's output budget.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::serve::session::Session;
use crate::serve::Server;

/// Replies and events the sessions may have queued before the router reads them.
const SESSION_QUEUE: usize = 64;

type Routes = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>>;

/// The serve sessions and the routes of their requests.
pub struct Bridge {
    server: Arc<Server>,
    sessions: tokio::sync::Mutex<Sessions>,
    routes: Routes,
    next: AtomicU64,
}

/// The sessions opened so far, by whether a human answers their approvals; `out` is `None` once
/// the bridge is closed (no session opens after that).
struct Sessions {
    out: Option<mpsc::Sender<Value>>,
    attended: Option<Session>,
    unattended: Option<Session>,
}

impl Sessions {
    fn of(&mut self, human: bool) -> &mut Option<Session> {
        if human {
            &mut self.attended
        } else {
            &mut self.unattended
        }
    }
}

/// The events of one request, until its last.
pub struct Call {
    pub id: String,
    /// It runs on the session with a human.
    human: bool,
    events: mpsc::UnboundedReceiver<Value>,
}

impl Call {
    /// The next event; `None` once the session has ended.
    pub async fn next(&mut self) -> Option<Value> {
        self.events.recv().await
    }
}

impl Bridge {
    /// The bridge to `server` and the task that routes its sessions' events; the task ends
    /// after [`Bridge::close`], once every call has ended.
    pub fn start(server: Arc<Server>) -> (Arc<Bridge>, JoinHandle<()>) {
        let (out, queue) = mpsc::channel(SESSION_QUEUE);
        let routes = Routes::default();
        let router = tokio::spawn(route(queue, routes.clone()));
        let sessions = Sessions { out: Some(out), attended: None, unattended: None };
        let bridge =
            Bridge { server, sessions: tokio::sync::Mutex::new(sessions), routes, next: AtomicU64::new(1) };
        (Arc::new(bridge), router)
    }

    /// Sends request `method` with `fields` under a fresh id on the session with (`human`) or
    /// without a human, opening it for client `client` if it is the first request of its kind;
    /// the request's events arrive on the result.
    pub async fn request(&self, human: bool, client: &str, method: &str, fields: Map<String, Value>) -> Call {
        let id = format!("mcp-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let (tx, events) = mpsc::unbounded_channel();
        if let Ok(mut routes) = self.routes.lock() {
            routes.insert(id.clone(), tx);
        }
        let mut request = fields;
        request.insert("id".into(), json!(id));
        request.insert("method".into(), json!(method));
        self.open(human, client).await;
        self.send(human, &Value::Object(request)).await;
        Call { id, human, events }
    }

    /// Opens the session of kind `human` with its `hello`, unless it is open or the bridge closed.
    async fn open(&self, human: bool, client: &str) {
        let mut sessions = self.sessions.lock().await;
        let Some(out) = sessions.out.clone() else { return };
        let slot = sessions.of(human);
        if slot.is_some() {
            return;
        }
        let mut session = Session::new(self.server.clone(), out);
        let id = format!("mcp-hello-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let hello = json!({"id": id, "method": "hello", "human": human, "client": client});
        session.handle(hello.to_string().as_bytes()).await;
        tracing::info!(human, %client, "mcp: serve session opened");
        *slot = Some(session);
    }

    /// Answers the approval that `call` waits for.
    pub async fn approve(&self, call: &Call, allow: bool) {
        self.send(call.human, &json!({"id": call.id, "method": "approve", "allow": allow})).await;
    }

    /// Cancels `call` (its tree is killed; its exit event still comes).
    pub async fn cancel(&self, call: &Call) {
        let request = self.next.fetch_add(1, Ordering::Relaxed);
        let cancel = json!({"id": format!("mcp-cancel-{request}"), "method": "cancel", "target_id": call.id});
        self.send(call.human, &cancel).await;
    }

    /// Stops routing events to `call` (its tool call has returned).
    pub fn forget(&self, call: &Call) {
        if let Ok(mut routes) = self.routes.lock() {
            routes.remove(&call.id);
        }
    }

    /// Ends both sessions: what waits for approval is refused, running calls are cancelled.
    pub async fn close(&self) {
        let mut sessions = self.sessions.lock().await;
        sessions.out = None;
        for session in [sessions.attended.take(), sessions.unattended.take()].into_iter().flatten() {
            session.close();
        }
    }

    async fn send(&self, human: bool, request: &Value) {
        let line = request.to_string();
        match self.sessions.lock().await.of(human).as_mut() {
            Some(session) => session.handle(line.as_bytes()).await,
            None => {
                let id = request["id"].as_str().unwrap_or_default();
                let error = json!({"id": id, "event": "error", "message": "the MCP session has ended"});
                if let Some(tx) = self.routes.lock().ok().and_then(|r| r.get(id).cloned()) {
                    let _ = tx.send(error);
                }
            }
        }
    }
}

/// Hands each event of the sessions to the call whose id it carries.
async fn route(mut queue: mpsc::Receiver<Value>, routes: Routes) {
    while let Some(event) = queue.recv().await {
        let id = event["id"].as_str().unwrap_or_default().to_string();
        let tx = routes.lock().ok().and_then(|r| r.get(&id).cloned());
        match tx {
            Some(tx) => {
                let _ = tx.send(event);
            }
            None => tracing::debug!(%id, event = %event["event"], "mcp: an event nobody waits for"),
        }
    }
}
