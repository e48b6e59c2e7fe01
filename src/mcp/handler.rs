//! The MCP side: the handshake or discovery, `tools/list`, `tools/call` (rmcp's
//! [`ServerHandler`]), on every revision from 2024-11-05 to 2026-07-28.
//!
//! rmcp negotiates the revision: a client of an `initialize` revision (up to 2025-11-25) says
//! `initialize` once; a 2026-07-28 client may say `server/discover` and then carries its
//! revision, identity and capabilities in every request's `_meta`, which rmcp checks. Order of
//! one `tools/call`: the serve request of the same name ([`Bridge::request`]) on the session
//! with a human exactly when this request's client offers form elicitation → its events folded
//! into the result ([`Reply`]); a cancelled MCP request cancels the call (its tree is killed).
//! An `approval` event is asked of the human as the revision allows:
//!
//! - up to 2025-11-25, in the middle of the call: an `elicitation/create` to the client, whose
//!   answer is the serve `approve`;
//! - on 2026-07-28, which forbids server-to-client requests, the call waits ([`Rounds`]) and the
//!   request answers an `InputRequiredResult` carrying the same elicitation; the client's retry
//!   with the answer and the `requestState` approves or refuses it and drives it on.
//!
//! rmcp adds what 2026-07-28 requires of results (`resultType`, the `ttlMs` / `cacheScope` of
//! `tools/list`) on that revision only; older clients get the results in their old shape.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, ElicitRequest, ElicitRequestParams, ElicitationAction,
    ElicitationSchema, Implementation, InputRequest, InputRequests, InputRequiredResult, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

use super::bridge::{Bridge, Call};
use super::reply::Reply;
use super::rounds::{self, Parked, Rounds};
use super::tools;

/// The newest protocol revision served; rmcp answers `initialize` with the newest revision
/// that still has it (2025-11-25) when a client asks for this one there.
const NEWEST: ProtocolVersion = ProtocolVersion::V_2026_07_28;

/// The MCP server of one `hullward mcp` process.
pub struct Handler {
    bridge: Arc<Bridge>,
    rounds: Rounds,
    root: String,
    /// An elicitation not answered within this long is a refusal (`Sandbox.ApprovalTimeout`).
    approval_timeout: Duration,
}

/// How far one request drove its call.
enum Outcome {
    /// The call's last event came: its result.
    Done(Reply),
    /// The call waits for the human's approval, asked with `prompt` (2026-07-28).
    Asks { call: Call, reply: Reply, prompt: String },
}

impl Handler {
    pub fn new(bridge: Arc<Bridge>, root: String, approval_timeout: Duration) -> Handler {
        let rounds = Rounds::new(bridge.clone(), approval_timeout);
        Handler { bridge, rounds, root, approval_timeout }
    }

    /// Runs `call` on from `reply` (`answered`: an approval answer was just given) until its
    /// last event, or, unless `mid_call` approvals are allowed, until it asks for one;
    /// cancelled when the client cancels the request.
    async fn drive(
        &self,
        mut call: Call,
        mut reply: Reply,
        mut answered: bool,
        mid_call: bool,
        context: &RequestContext<RoleServer>,
    ) -> Outcome {
        let mut cancelled = false;
        loop {
            tokio::select! {
                event = call.next() => {
                    let Some(event) = event else { break };
                    match event["event"].as_str() {
                        Some("approval") => {
                            let prompt = event["prompt"].as_str().unwrap_or_default().to_string();
                            if !mid_call {
                                return Outcome::Asks { call, reply, prompt };
                            }
                            let allow = self.ask(context, &prompt).await;
                            self.bridge.approve(&call, allow).await;
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
                    self.bridge.cancel(&call).await;
                }
            }
        }
        self.bridge.forget(&call);
        Outcome::Done(reply)
    }

    /// Asks the client's human in the middle of the call; anything but an accepted answer in
    /// time is a refusal.
    async fn ask(&self, context: &RequestContext<RoleServer>, prompt: &str) -> bool {
        match context
            .peer
            .create_elicitation_with_timeout(elicitation(prompt), Some(self.approval_timeout))
            .await
        {
            Ok(answer) => answer.action == ElicitationAction::Accept,
            Err(e) => {
                tracing::warn!("mcp: the approval elicitation failed: {e}");
                false
            }
        }
    }
}

/// The dialog that asks the human to approve the call described by `prompt`.
fn elicitation(prompt: &str) -> ElicitRequestParams {
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: format!("hullward: {prompt}\nAllow this call? Accept runs it; decline refuses it."),
        requested_schema: ElicitationSchema::new(BTreeMap::new()),
    }
}

/// Whether the client of this request offers form elicitation (a bare `elicitation: {}` means
/// form): on 2026-07-28 from the request's own `_meta`, before from `initialize`.
fn offers_elicitation(context: &RequestContext<RoleServer>) -> bool {
    context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
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
        let revision = context.protocol_version().unwrap_or(ProtocolVersion::V_2025_11_25);
        let mid_call = revision.has_initialize();
        let arguments = request.arguments.unwrap_or_default();
        let (call, reply, answered) = match &request.request_state {
            Some(_) if mid_call => {
                let message =
                    format!("requestState belongs to protocol 2026-07-28; this connection speaks {revision}");
                return Err(ErrorData::invalid_params(message, None));
            }
            Some(handle) => {
                let parked = self
                    .rounds
                    .take(handle, &request.name, &arguments)
                    .map_err(|e| ErrorData::invalid_params(e.to_string(), None))?;
                let allow = rounds::accepted(request.input_responses.as_ref());
                tracing::info!(call = %parked.call.id, allow, "mcp: the approval was answered");
                self.bridge.approve(&parked.call, allow).await;
                (parked.call, parked.reply, true)
            }
            None => {
                let method = tools::method(&request.name).ok_or_else(|| {
                    ErrorData::invalid_params(format!("hullward has no tool '{}'", request.name), None)
                })?;
                let client = context.client_info().map(|i| i.name).unwrap_or_default();
                let human = offers_elicitation(&context);
                (
                    self.bridge.request(human, &client, method, arguments.clone()).await,
                    Reply::default(),
                    false,
                )
            }
        };
        match self.drive(call, reply, answered, mid_call, &context).await {
            Outcome::Done(reply) => Ok(reply.finish().into()),
            Outcome::Asks { call, reply, prompt } => {
                let handle = self
                    .rounds
                    .park(Parked::new(call, reply, &request.name, arguments))
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                let asks = InputRequest::Elicitation(ElicitRequest::new(elicitation(&prompt)));
                let requests = InputRequests::from([(rounds::APPROVAL.to_string(), asks)]);
                Ok(InputRequiredResult::new(Some(requests), Some(handle)).into())
            }
        }
    }
}
