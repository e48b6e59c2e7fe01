//! The in-process serve session behind the MCP server, and the routing of its events to the
//! tool call each belongs to.
//!
//! `hullward mcp` has no call engine of its own: every tool call is the serve request of the
//! same name on one [`Session`] ([`crate::serve`]), which runs it with the guards, approval,
//! kernel sandbox, filters and audit log of `hullward serve`. Order: [`Bridge::start`] (the
//! session and the router task that reads its single event queue) → [`Bridge::request`] for each
//! request (a fresh id; the call's events come back on its own [`Call`]) → [`Bridge::close`]
//! (waiting approvals refused, running calls cancelled) → the router ends once every call has
//! sent its last event.
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

/// Replies and events the session may have queued before the router reads them.
const SESSION_QUEUE: usize = 64;

type Routes = Arc<Mutex<HashMap<String, mpsc::UnboundedSender<Value>>>>;

/// One serve session and the routes of its requests.
pub struct Bridge {
    session: tokio::sync::Mutex<Option<Session>>,
    routes: Routes,
    next: AtomicU64,
}

/// The events of one request, until its last.
pub struct Call {
    pub id: String,
    events: mpsc::UnboundedReceiver<Value>,
}

impl Call {
    /// The next event; `None` once the session has ended.
    pub async fn next(&mut self) -> Option<Value> {
        self.events.recv().await
    }
}

impl Bridge {
    /// A session on `server` and the task that routes its events; the task ends after
    /// [`Bridge::close`], once every call has ended.
    pub fn start(server: Arc<Server>) -> (Arc<Bridge>, JoinHandle<()>) {
        let (out, queue) = mpsc::channel(SESSION_QUEUE);
        let routes = Routes::default();
        let router = tokio::spawn(route(queue, routes.clone()));
        let bridge = Bridge {
            session: tokio::sync::Mutex::new(Some(Session::new(server, out))),
            routes,
            next: AtomicU64::new(1),
        };
        (Arc::new(bridge), router)
    }

    /// Sends request `method` with `fields` under a fresh id; its events arrive on the result.
    pub async fn request(&self, method: &str, fields: Map<String, Value>) -> Call {
        let id = format!("mcp-{}", self.next.fetch_add(1, Ordering::Relaxed));
        let (tx, events) = mpsc::unbounded_channel();
        if let Ok(mut routes) = self.routes.lock() {
            routes.insert(id.clone(), tx);
        }
        let mut request = fields;
        request.insert("id".into(), json!(id));
        request.insert("method".into(), json!(method));
        self.send(&Value::Object(request)).await;
        Call { id, events }
    }

    /// Answers the approval that call `id` waits for.
    pub async fn approve(&self, id: &str, allow: bool) {
        self.send(&json!({"id": id, "method": "approve", "allow": allow})).await;
    }

    /// Cancels call `id` (its tree is killed; its exit event still comes).
    pub async fn cancel(&self, id: &str) {
        let request = self.next.fetch_add(1, Ordering::Relaxed);
        self.send(&json!({"id": format!("mcp-cancel-{request}"), "method": "cancel", "target_id": id})).await;
    }

    /// Stops routing events to call `id` (its tool call has returned).
    pub fn forget(&self, id: &str) {
        if let Ok(mut routes) = self.routes.lock() {
            routes.remove(id);
        }
    }

    /// Ends the session: what waits for approval is refused, running calls are cancelled.
    pub async fn close(&self) {
        if let Some(session) = self.session.lock().await.take() {
            session.close();
        }
    }

    async fn send(&self, request: &Value) {
        let line = request.to_string();
        match self.session.lock().await.as_mut() {
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

/// Hands each event of the session to the call whose id it carries.
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
