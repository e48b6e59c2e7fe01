//! `hullward mcp`: the supervisor's tool calls as a Model Context Protocol server on
//! stdin/stdout (INTERFACE.md, "hullward mcp"), built on the official Rust SDK (`rmcp`).
//!
//! The server has no call engine of its own: each `tools/call` is the serve request of the
//! same name on an in-process serve session ([`bridge`]), so a call through MCP passes exactly
//! the guards, approval, kernel sandbox, output filters and audit log of `hullward serve`.
//!
//! Order of [`run`]: the single-threaded runtime → the serve [`Server`] and the bridge to its
//! sessions ([`bridge::Bridge::start`]) → the MCP handshake or discovery on stdio ([`handler`];
//! protocol revisions up to 2026-07-28) → tool calls, each on the serve session with a human
//! exactly when its client offers elicitation, approvals asked mid-call or, on 2026-07-28, by
//! round trips ([`rounds`]) → until the client closes stdin or SIGTERM/SIGINT arrives → the
//! sessions close (waiting approvals refused, running calls cancelled) → up to the shutdown
//! grace for every call's exit record.

mod bridge;
mod handler;
mod reply;
mod rounds;
mod tools;

use std::io::IsTerminal;

use rmcp::ServiceExt;
use tokio::signal::unix::{signal, SignalKind};

use crate::error::Error;
use crate::serve::{Options, Server};
use crate::supervisor::Engine;

/// Serves MCP on stdin/stdout until the client goes away; returns the exit code.
pub fn run(engine: Engine, options: Options) -> Result<u8, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("tokio runtime: {e}")))?;
    runtime.block_on(serve(engine, options))
}

async fn serve(engine: Engine, options: Options) -> Result<u8, Error> {
    if std::io::stdin().is_terminal() {
        eprintln!("hullward mcp: speaking MCP (JSON-RPC) on stdin/stdout; start it from an MCP client, e.g. `claude mcp add hullward -- hullward mcp --root .`");
    }
    let root = engine.policy().root.display().to_string();
    let server = Server::new(engine, options.clone());
    let (bridge, router) = bridge::Bridge::start(server.clone());
    let handler = handler::Handler::new(bridge.clone(), root, options.approval_timeout);
    let service = match handler.serve(rmcp::transport::stdio_pipes()).await {
        Ok(service) => service,
        Err(e) => {
            bridge.close().await;
            return Err(Error::Usage(format!("mcp: no MCP client on stdin: {e}")));
        }
    };
    let stop = service.cancellation_token();
    let signals = tokio::spawn(async move {
        if let (Ok(mut term), Ok(mut int)) =
            (signal(SignalKind::terminate()), signal(SignalKind::interrupt()))
        {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
            stop.cancel();
        }
    });
    let quit = service.waiting().await;
    tracing::info!(?quit, "mcp: the client has gone");
    signals.abort();
    bridge.close().await;
    drop(bridge);
    if tokio::time::timeout(options.shutdown_grace, router).await.is_err() {
        tracing::warn!("mcp: calls still running after the shutdown grace; exiting");
    }
    server.discard_prepared();
    Ok(0)
}
