//! The egress proxy: the only way out of a `--net proxy` sandbox.
//!
//! Why it exists: the child runs in a network namespace that has only `lo`. The supervisor binds
//! a listener on the child's `127.0.0.1` (from a thread that entered the child's namespace), hands
//! it to [`spawn`], and gives the child [`child_env`]. Every outbound request then passes the same
//! `HttpAllowedHosts` / private-range policy as `check url`, and — because the proxy resolves the
//! name itself — the private-range check runs again on the addresses the name really has, which
//! are the only addresses the proxy connects to (Decision 11; no DNS rebinding).
//!
//! Order for each connection, one module per step:
//! 1. [`server`] accepts within [`ProxyLimits::max_connections`] and reads the request head
//!    within `header_timeout` and `max_header_bytes`;
//! 2. [`http`] parses it strictly and decides the body framing (smuggling shapes are refused);
//! 3. [`target`] turns the request-target into host and port: CONNECT's `host:port` or plain
//!    HTTP's `http://host[:port]/path`; IP literals canonical in every spelling;
//! 4. [`policy`] admits it: port, [`check_host`](crate::guard::url::check_host), one lookup by
//!    the [`Resolver`], then every resolved address against the private ranges;
//! 5. the proxy connects to a checked address; CONNECT gets `200` and a byte-for-byte tunnel
//!    ([`relay`], zero-copy through [`splice`]; TLS is not intercepted), plain HTTP is forwarded
//!    in origin-form ([`forward`]);
//! 6. [`meter`] counts bytes against the call's budget and the idle clock; the request ends in
//!    one [`ProxyEvent`] on the audit channel, and in the counters of [`ProxyStats`].
//!
//! One request per connection, announced with `Connection: close` both ways: every request is
//! decided and connected on its own, and no request can ride on another's decision.

mod forward;
mod http;
mod meter;
mod policy;
mod relay;
mod resolve;
mod server;
mod splice;
mod target;

use std::io;
use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

pub use resolve::{ResolveError, Resolver};

use crate::guard::Verdict;
use crate::policy::HttpPolicy;

/// The ports the proxy connects to unless configured otherwise: the web ports and every
/// unprivileged port (registries and dev servers on 8080, 8443, 3000…). The privileged ports
/// other than 80 and 443 (SSH, SMTP, DNS, SMB…) are not web egress; refusing them keeps an
/// allowed host's other services out of reach, as Squid's `Safe_ports` does.
pub const DEFAULT_PORTS: &[RangeInclusive<u16>] = &[80..=80, 443..=443, 1024..=65535];

/// What the proxy enforces.
#[derive(Debug, Clone)]
pub struct ProxyConfig {
    /// `HttpAllowedHosts` and `AllowPrivateHosts`.
    pub http: HttpPolicy,
    /// Destination ports that may be connected to.
    pub ports: Vec<RangeInclusive<u16>>,
    pub limits: ProxyLimits,
    pub resolver: Resolver,
}

impl ProxyConfig {
    /// The policy's HTTP rules with the default ports, limits and the system resolver.
    pub fn new(http: HttpPolicy) -> ProxyConfig {
        ProxyConfig {
            http,
            ports: DEFAULT_PORTS.to_vec(),
            limits: ProxyLimits::default(),
            resolver: Resolver::System,
        }
    }
}

/// Bounds that keep a slow or hostile client from exhausting the supervisor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProxyLimits {
    /// Connections served at once; one more gets `503` and is closed.
    pub max_connections: usize,
    /// Largest request or response head (and chunked trailer section).
    pub max_header_bytes: usize,
    /// Time from accept to a complete request head (slowloris); `408` after it.
    pub header_timeout: Duration,
    /// Time for one name lookup.
    pub resolve_timeout: Duration,
    /// Time to connect, over all of a name's addresses together.
    pub connect_timeout: Duration,
    /// A connection on which no byte moves in either direction for this long is closed.
    pub idle_timeout: Duration,
    /// Bytes relayed up and down over the proxy's life (one call), all connections together.
    pub max_total_bytes: u64,
}

impl Default for ProxyLimits {
    fn default() -> ProxyLimits {
        ProxyLimits {
            max_connections: 128,
            max_header_bytes: 32 * 1024,
            header_timeout: Duration::from_secs(10),
            resolve_timeout: Duration::from_secs(5),
            connect_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(120),
            max_total_bytes: 4 << 30,
        }
    }
}

/// One request through the proxy, for the audit log. Never carries a header value or a body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProxyEvent {
    /// The request method (`CONNECT`, `GET`, …); empty when no request line was read.
    pub method: String,
    /// The target host as decided on (lower-case name or canonical address); empty if unknown.
    pub host: String,
    pub port: u16,
    /// The address actually connected to.
    pub upstream: Option<SocketAddr>,
    pub verdict: Verdict,
    /// The rule that decided: a guard rule (`host-allowlist`, `private-host`), or the proxy's
    /// own `private-resolved`, `proxy-port`, `proxy-request`, `proxy-limit`,
    /// `proxy-byte-budget`, `proxy-upstream`, `proxy-shutdown`.
    pub rule: String,
    /// The `[DENIED]` text of a denial, or what went wrong; empty for a clean exchange.
    pub message: String,
    /// The status the client was sent (the upstream's for plain HTTP); 0 when none.
    pub status: u16,
    pub bytes_up: u64,
    pub bytes_down: u64,
    pub duration_ms: u64,
}

/// Counters over the proxy's life.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct ProxyStats {
    /// Connections accepted.
    pub connections: u64,
    /// Requests connected upstream.
    pub allowed: u64,
    /// Requests refused by policy (403).
    pub denied: u64,
    /// Malformed requests and requests over a limit (400, 408, 431, 503).
    pub rejected: u64,
    /// Allowed requests that could not reach their upstream (502).
    pub failed: u64,
    pub bytes_up: u64,
    pub bytes_down: u64,
    /// Events that could not be delivered during shutdown because the channel was full.
    pub events_dropped: u64,
}

/// Why the proxy could not start.
#[derive(Debug, thiserror::Error)]
pub enum ProxyError {
    #[error("the egress proxy must be started from within a tokio runtime")]
    NoRuntime,
    #[error("the egress proxy cannot use its listener: {0}")]
    Listener(#[source] io::Error),
}

/// A running proxy. Dropping it stops the proxy without waiting; [`ProxyHandle::shutdown`] stops
/// it and waits until every connection has closed and reported its event.
#[derive(Debug)]
pub struct ProxyHandle {
    port: u16,
    stop: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
    shared: Arc<server::Shared>,
}

impl ProxyHandle {
    /// The listener's port (for [`child_env`]).
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The counters so far.
    pub fn stats(&self) -> ProxyStats {
        self.shared.counters.snapshot()
    }

    /// Stops accepting, closes every connection, waits for them, and returns the final counters.
    pub async fn shutdown(mut self) -> ProxyStats {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
        self.stats()
    }
}

impl Drop for ProxyHandle {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// Starts serving on `listener` (already bound, normally on `127.0.0.1:0` inside the child's
/// network namespace) on the current tokio runtime. Outbound connections are made from the
/// runtime's threads, hence from their network namespace. Each request's [`ProxyEvent`] is sent
/// on `events` (waiting when it is full); drain it until it yields `None`, which happens once
/// the proxy has stopped.
pub fn spawn(
    listener: std::net::TcpListener,
    config: ProxyConfig,
    events: mpsc::Sender<ProxyEvent>,
) -> Result<ProxyHandle, ProxyError> {
    let runtime = tokio::runtime::Handle::try_current().map_err(|_| ProxyError::NoRuntime)?;
    let port = listener.local_addr().map_err(ProxyError::Listener)?.port();
    listener.set_nonblocking(true).map_err(ProxyError::Listener)?;
    let listener = {
        let _entered = runtime.enter();
        tokio::net::TcpListener::from_std(listener).map_err(ProxyError::Listener)?
    };
    let (stop, stopped) = watch::channel(false);
    let shared = Arc::new(server::Shared::new(config, events));
    let task = runtime.spawn(server::serve(listener, Arc::clone(&shared), stopped));
    Ok(ProxyHandle { port, stop, task: Some(task), shared })
}

/// The environment that points a child's HTTP clients at the proxy on `port`: both spellings of
/// `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` (curl reads only the lower-case `http_proxy`), and
/// `NO_PROXY` for the child's own loopback.
pub fn child_env(port: u16) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let mut env = Vec::with_capacity(8);
    for name in ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
        env.push((name.to_string(), url.clone()));
        env.push((name.to_ascii_lowercase(), url.clone()));
    }
    for name in ["NO_PROXY", "no_proxy"] {
        env.push((name.to_string(), "localhost,127.0.0.1".to_string()));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn child_env_names_every_spelling() {
        let env = child_env(4321);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        for k in ["HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "ALL_PROXY", "all_proxy"] {
            assert_eq!(get(k), Some("http://127.0.0.1:4321"), "{k}");
        }
        assert_eq!(get("NO_PROXY"), Some("localhost,127.0.0.1"));
        assert_eq!(get("no_proxy"), Some("localhost,127.0.0.1"));
        assert_eq!(env.len(), 8);
    }
}
