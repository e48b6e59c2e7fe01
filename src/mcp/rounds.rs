//! Approvals on protocol revision 2026-07-28, where a server may no longer ask the client in the
//! middle of a call: a `tools/call` that needs the human's approval answers an
//! `InputRequiredResult` carrying the elicitation, and the client retries the same call with the
//! human's answer (`inputResponses`) and the `requestState` it was given (multi round-trip
//! requests, SEP-2322).
//!
//! The client echoes `requestState`, so it is untrusted. The call itself stays here, waiting in
//! its serve session (a running process tree cannot be put in a token anyway), and the state is
//! only a random handle to it: 128 bits from the kernel's CSPRNG, known to this process alone,
//! so bound to this connection (stdio: one process, one client). A handle is good once, for the
//! tool call it was issued for, until the approval timeout: anything else — unknown, forged,
//! replayed, from another connection, for other arguments, late — is an error and approves
//! nothing. rmcp's sealed `request-state` codec would add an HMAC around what is still a
//! server-side handle, and it cannot make a token single-use; it is not used.
//!
//! Order: [`Rounds::park`] (the call, the output it gave so far, the request it answers; a
//! reaper refuses it after the approval timeout) → the retry: [`Rounds::take`] (removed: one
//! use) → [`accepted`] reads the human's answer → the handler gives it to the serve session and
//! drives the call on.

use std::collections::HashMap;
use std::fs::File;
use std::io::Read;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{ElicitResult, ElicitationAction, InputResponses, JsonObject};

use super::bridge::{Bridge, Call};
use super::reply::Reply;

/// The key of the approval in `inputRequests` and `inputResponses`.
pub const APPROVAL: &str = "approval";

/// A call waiting for the human's answer, with what it answers.
pub struct Parked {
    pub call: Call,
    pub reply: Reply,
    tool: String,
    arguments: JsonObject,
}

impl Parked {
    /// Call `call` of tool `tool` with `arguments`, whose events so far made `reply`.
    pub fn new(call: Call, reply: Reply, tool: &str, arguments: JsonObject) -> Parked {
        Parked { call, reply, tool: tool.to_string(), arguments }
    }
}

/// Why a retry was refused; its text is the JSON-RPC error's message.
#[derive(Debug, thiserror::Error)]
pub enum Refused {
    #[error(
        "requestState is not an approval this connection waits for (unknown, forged, already \
         answered, from another connection, or past the approval timeout of {0}, which denied \
         the call); nothing was approved"
    )]
    Unknown(String),
    #[error(
        "requestState was issued for another tool call than '{0}' with these arguments; that \
         call is refused and nothing was approved"
    )]
    Mismatch(String),
    #[error("no random handle for the approval (/dev/urandom: {0}); the call is refused")]
    Random(std::io::Error),
}

/// The calls of this connection that wait for the human, by handle.
pub struct Rounds {
    parked: Arc<Mutex<HashMap<String, Parked>>>,
    bridge: Arc<Bridge>,
    timeout: Duration,
}

impl Rounds {
    /// No call waits yet; an approval not answered within `timeout` denies its call.
    pub fn new(bridge: Arc<Bridge>, timeout: Duration) -> Rounds {
        Rounds { parked: Arc::default(), bridge, timeout }
    }

    /// Keeps `parked` until the retry that answers it, or until the approval timeout, when the
    /// call is refused; returns its handle (the `requestState`).
    pub fn park(&self, parked: Parked) -> Result<String, Refused> {
        let handle = match handle() {
            Ok(handle) => handle,
            Err(e) => {
                refuse(self.bridge.clone(), parked.call, true);
                return Err(Refused::Random(e));
            }
        };
        if let Ok(mut waiting) = self.parked.lock() {
            waiting.insert(handle.clone(), parked);
        }
        let (waiting, bridge, key, timeout) =
            (self.parked.clone(), self.bridge.clone(), handle.clone(), self.timeout);
        tokio::spawn(async move {
            tokio::time::sleep(timeout).await;
            let expired = waiting.lock().ok().and_then(|mut w| w.remove(&key));
            if let Some(parked) = expired {
                tracing::info!(call = %parked.call.id, "mcp: the approval was not answered in time");
                refuse(bridge, parked.call, false);
            }
        });
        Ok(handle)
    }

    /// The call that `handle` was issued for, removed (a handle is good once), if the retry is
    /// of that same tool with the same arguments; a mismatch refuses that call.
    pub fn take(&self, handle: &str, tool: &str, arguments: &JsonObject) -> Result<Parked, Refused> {
        let found = self.parked.lock().ok().and_then(|mut w| w.remove(handle));
        let parked = found.ok_or_else(|| Refused::Unknown(crate::policy::duration::format(self.timeout)))?;
        if parked.tool != tool || &parked.arguments != arguments {
            refuse(self.bridge.clone(), parked.call, true);
            return Err(Refused::Mismatch(tool.to_string()));
        }
        Ok(parked)
    }
}

/// Whether the human accepted: an `ElicitResult` with action `accept` under [`APPROVAL`];
/// a missing or malformed answer is a refusal.
pub fn accepted(responses: Option<&InputResponses>) -> bool {
    responses
        .and_then(|r| r.get(APPROVAL))
        .and_then(|answer| serde_json::from_value::<ElicitResult>(answer.clone()).ok())
        .is_some_and(|answer| answer.action == ElicitationAction::Accept)
}

/// Lets `call` run to its end in the background, refusing any approval it asks for: the one
/// it waits for now too when `now`; otherwise the serve session's own approval timeout, which
/// has passed or is about to, denies it (`[DENIED] The approval was not answered within …`).
fn refuse(bridge: Arc<Bridge>, mut call: Call, now: bool) {
    tokio::spawn(async move {
        if now {
            bridge.approve(&call, false).await;
        }
        // An answer the session no longer takes comes back as an `error`; the call's end follows.
        let mut reply = Reply::default();
        while let Some(event) = call.next().await {
            if event["event"] == "approval" {
                bridge.approve(&call, false).await;
            } else if event["event"] != "error" && reply.push(&event) {
                break;
            }
        }
        bridge.forget(&call);
    });
}

/// 128 random bits, as hex.
fn handle() -> Result<String, std::io::Error> {
    let mut bytes = [0u8; 16];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_an_accepted_answer_under_the_approval_key_approves() {
        let answer = |v: serde_json::Value| serde_json::from_value::<InputResponses>(v).unwrap();
        assert!(accepted(Some(&answer(json!({"approval": {"action": "accept", "content": {}}})))));
        for refused in [
            json!({"approval": {"action": "decline"}}),
            json!({"approval": {"action": "cancel"}}),
            json!({"approval": {"action": "yes"}}),
            json!({"approval": "accept"}),
            json!({"other": {"action": "accept"}}),
            json!({}),
        ] {
            assert!(!accepted(Some(&answer(refused.clone()))), "{refused}");
        }
        assert!(!accepted(None));
    }

    #[test]
    fn handles_are_random_and_opaque() {
        let (a, b) = (handle().unwrap(), handle().unwrap());
        assert_eq!(a.len(), 32);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
