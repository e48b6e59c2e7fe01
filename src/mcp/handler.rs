//! The MCP side: initialize, `tools/list`, `tools/call` (rmcp's [`ServerHandler`]).
//!
//! Order within one connection: `initialize` → the serve session's `hello`, declaring a human
//! exactly when the client offers form elicitation → `tools/list` from [`tools`] → each
//! `tools/call`: the serve request of the same name ([`Bridge::request`]), its events folded into
//! the result ([`Reply`]); an `approval` event becomes an elicitation to the client, its answer
//! the serve `approve`; a cancelled MCP request cancels the call (its tree is killed).
//!
//! Only the protocol revisions with an `initialize` handshake are offered: approval asks the
//! client in the middle of a call (a server-to-client `elicitation/create`), which the stateless
//! revision 2026-07-28 forbids. Clients of that revision fall back to the handshake.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequestParams, ElicitationAction, ElicitationSchema,
    Implementation, InitializeRequestParams, InitializeResult, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::{ElicitationMode, RequestContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler};
use serde_json::{json, Map};

use super::bridge::{Bridge, Call};
use super::reply::Reply;
use super::tools;

/// The newest protocol revision with an `initialize` handshake.
const NEWEST: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// The MCP server of one `hullward mcp` process.
pub struct Handler {
    bridge: Arc<Bridge>,
    root: String,
    /// An elicitation not answered within this long is a refusal (`Sandbox.ApprovalTimeout`).
    approval_timeout: Duration,
}

impl Handler {
    pub fn new(bridge: Arc<Bridge>, root: String, approval_timeout: Duration) -> Handler {
        Handler { bridge, root, approval_timeout }
    }

    /// Runs call `call` to its last event: approvals asked through `peer`, cancelled when the
    /// client cancels the request.
    async fn drive(&self, mut call: Call, context: &RequestContext<RoleServer>) -> Reply {
        let mut reply = Reply::default();
        let mut answered = false;
        let mut cancelled = false;
        loop {
            tokio::select! {
                event = call.next() => {
                    let Some(event) = event else { break };
                    match event["event"].as_str() {
                        Some("approval") => {
                            let allow = self.ask(&context.peer, event["prompt"].as_str().unwrap_or_default()).await;
                            self.bridge.approve(&call.id, allow).await;
                            answered = true;
                        }
                        // An approval answered too late: the call's own refusal follows.
                        Some("error") if answered => {
                            tracing::debug!(message = %event["message"], "mcp: approval answer not taken");
                        }
                        _ => {
                            if reply.push(&event) {
                                break;
                            }
                        }
                    }
                }
                _ = context.ct.cancelled(), if !cancelled => {
                    cancelled = true;
                    self.bridge.cancel(&call.id).await;
                }
            }
        }
        self.bridge.forget(&call.id);
        reply
    }

    /// Asks the client's human; anything but an accepted answer in time is a refusal.
    async fn ask(&self, peer: &Peer<RoleServer>, prompt: &str) -> bool {
        let params = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: format!("hullward: {prompt}\nAllow this call? Accept runs it; decline refuses it."),
            requested_schema: ElicitationSchema::new(BTreeMap::new()),
        };
        match peer.create_elicitation_with_timeout(params, Some(self.approval_timeout)).await {
            Ok(answer) => answer.action == ElicitationAction::Accept,
            Err(e) => {
                tracing::warn!("mcp: the approval elicitation failed: {e}");
                false
            }
        }
    }
}

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        let instructions = format!(
            "hullward runs your commands and file operations under kernel enforcement, confined to \
             the sandbox root {}. Use these tools instead of a local shell. A result starting with \
             [DENIED] names the rule that refused the call: do not retry it unchanged. Secret values \
             in output appear as <secret-hidden>.",
            self.root
        );
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_protocol_version(NEWEST)
            .with_server_info(Implementation::new("hullward", crate::cli::VERSION))
            .with_instructions(instructions)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&NEWEST))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        let human = context.peer.supported_elicitation_modes().contains(&ElicitationMode::Form);
        let mut hello = Map::new();
        hello.insert("human".into(), json!(human));
        hello.insert("client".into(), json!(request.client_info.name));
        let mut call = self.bridge.request("hello", hello).await;
        let answer = call.next().await;
        self.bridge.forget(&call.id);
        match answer {
            Some(event) if event["event"] == "hello" => {
                tracing::info!(session = %event["session"], human, "mcp: session started");
                self.negotiate_initialize(&request)
            }
            other => {
                Err(ErrorData::internal_error(format!("the serve session did not start: {other:?}"), None))
            }
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools::all()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let method = tools::method(&request.name).ok_or_else(|| {
            ErrorData::invalid_params(format!("hullward has no tool '{}'", request.name), None)
        })?;
        let call = self.bridge.request(method, request.arguments.unwrap_or_default()).await;
        Ok(self.drive(call, &context).await.finish().into())
    }
}
