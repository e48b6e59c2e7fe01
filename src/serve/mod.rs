//! `hullward serve`: the supervisor daemon (INTERFACE.md, "The supervisor protocol").
//!
//! One process, many connections, many concurrent calls. Order of [`run`]: [`listen::bind`]
//! (systemd's `LISTEN_FDS`, else a fresh 0600 socket; a stale file is replaced, a live server is
//! exit 2) → the server's single-threaded runtime → the accept loop, each connection a
//! [`session`] → on SIGTERM/SIGINT: stop accepting, let running calls finish for the grace
//! period, stop the rest ([`Stop::Signal`]), wait for every call's exit event to be written,
//! remove the socket file.
//!
//! Each call runs the engine ([`crate::supervisor::run`]) on a thread of its own, with its own
//! cgroup, namespaces, Landlock domain and filter ([`call`]); its events reach the connection
//! through a bounded queue, so a slow reader holds the call's output back (and, past its
//! budget, the call is killed) instead of making the server buffer without bound.

mod access;
mod call;
mod files;
mod listen;
mod probe;
mod protocol;
pub mod session;
mod skills;
mod tools;
mod workspace;

use std::collections::HashMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::UnixListener;
use tokio::signal::unix::{signal, SignalKind};
use tokio::sync::{watch, Notify};

use crate::error::Error;
use crate::supervisor::{Engine, Stop};

/// How the calls of every session are served.
#[derive(Debug, Clone)]
pub struct Options {
    /// An approval not answered within this long is a refusal.
    pub approval_timeout: Duration,
    /// How long running calls may go on after SIGTERM before they are stopped.
    pub shutdown_grace: Duration,
}

/// Where the server is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    Serving,
    /// A termination signal arrived: no new calls, running ones finish (or are stopped).
    Draining,
    /// Every call has ended: connections close once their events are written.
    Closed,
}

/// What every session shares: the warm engine, the running calls, the server's phase. The
/// socket daemon ([`run`]) and the in-process front ends (`hullward mcp`) both build one with
/// [`Server::new`] and hand it to each [`session::Session`].
pub struct Server {
    engine: Engine,
    options: Options,
    started: Instant,
    /// The stop switch of every running call, by a server-wide number.
    calls: Mutex<HashMap<u64, Arc<watch::Sender<Option<Stop>>>>>,
    /// Signalled whenever a call ends.
    call_ended: Notify,
    phase: watch::Sender<Phase>,
    next: AtomicU64,
}

impl Server {
    /// A server in its serving phase with no call running. The process keeps its walk indexes
    /// in memory from now on (`sandbox::index`): a call reads no index file, and walks only what
    /// the kernel reports changed since the last one (`sandbox::changes`); it keeps the values of
    /// the protected files it read while they are unchanged (`filter::secrets`), and what its
    /// plans saw of the host paths while the directories above them are (`sandbox::seen`); the
    /// last mount view is kept for a call that asks for the same one (`sandbox::view`); and a
    /// thread keeps the next call's network namespace made (`sandbox::spawn`), another the
    /// sandbox of a call like the last one (`Engine::prepare_ahead`).
    pub fn new(mut engine: Engine, options: Options) -> Arc<Server> {
        crate::sandbox::index::keep_in_memory();
        crate::sandbox::seen::keep_in_memory();
        crate::filter::secrets::keep_file_values();
        crate::sandbox::view::keep_last();
        crate::sandbox::changes::keep_drained();
        crate::sandbox::held::keep_open();
        crate::sandbox::spawn::keep_netns_ready();
        engine.prepare_ahead();
        Arc::new(Server {
            engine,
            options,
            started: Instant::now(),
            calls: Mutex::new(HashMap::new()),
            call_ended: Notify::new(),
            phase: watch::channel(Phase::Serving).0,
            next: AtomicU64::new(0),
        })
    }

    /// Kills the sandbox made ahead for the next call, and makes no other (shutdown).
    pub fn discard_prepared(&self) {
        self.engine.discard_prepared();
    }

    fn next_number(&self) -> u64 {
        self.next.fetch_add(1, Ordering::Relaxed)
    }

    fn running_calls(&self) -> usize {
        self.calls.lock().map_or(0, |c| c.len())
    }

    fn phase(&self) -> Phase {
        *self.phase.borrow()
    }
}

/// Runs the daemon until SIGTERM or SIGINT; returns its exit code.
pub fn run(engine: Engine, socket: &Path, options: Options) -> Result<u8, Error> {
    let bound = listen::bind(socket)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("tokio runtime: {e}")))?;
    let server = Server::new(engine, options);
    let result = runtime.block_on(serve(server.clone(), socket, &bound));
    bound.cleanup();
    result
}

async fn serve(server: Arc<Server>, socket: &Path, bound: &listen::Bound) -> Result<u8, Error> {
    let internal = |e: std::io::Error| Error::Internal(format!("the server socket: {e}"));
    let listener = bound.listener.try_clone().map_err(internal)?;
    listener.set_nonblocking(true).map_err(internal)?;
    let listener = UnixListener::from_std(listener).map_err(internal)?;
    let mut term = signal(SignalKind::terminate()).map_err(internal)?;
    let mut int = signal(SignalKind::interrupt()).map_err(internal)?;
    let mut connections = tokio::task::JoinSet::new();
    tracing::info!(socket = %socket.display(), "hullward serve: listening");
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    connections.spawn(session::serve_connection(server.clone(), stream));
                }
                Err(e) => tracing::warn!("accept: {e}"),
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
            _ = term.recv() => break,
            _ = int.recv() => break,
        }
    }
    drop(listener);
    shut_down(&server).await;
    while connections.join_next().await.is_some() {}
    Ok(0)
}

/// Graceful shutdown: no new calls; the running ones get the grace period, then are stopped;
/// returns once every call has ended (its exit event queued, its audit record written).
async fn shut_down(server: &Server) {
    server.phase.send_replace(Phase::Draining);
    wait_for_calls(server, Some(tokio::time::Instant::now() + server.options.shutdown_grace)).await;
    let stops: Vec<_> = server.calls.lock().map(|c| c.values().cloned().collect()).unwrap_or_default();
    for stop in stops {
        stop.send_replace(Some(Stop::Signal(libc::SIGTERM)));
    }
    wait_for_calls(server, None).await;
    server.discard_prepared();
    server.phase.send_replace(Phase::Closed);
}

/// Waits until no call runs, or until `deadline`.
async fn wait_for_calls(server: &Server, deadline: Option<tokio::time::Instant>) {
    const POLL: Duration = Duration::from_millis(50);
    while server.running_calls() > 0 {
        let now = tokio::time::Instant::now();
        let step = match deadline {
            Some(d) if d <= now => return,
            Some(d) => (d - now).min(POLL),
            None => POLL,
        };
        let _ = tokio::time::timeout(step, server.call_ended.notified()).await;
    }
}
