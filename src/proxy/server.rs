//! The accept loop and the life of one connection.
//!
//! [`serve`] accepts until told to stop, within `max_connections` (a client over the limit gets
//! `503` at once, from the accept loop, without a task). Each connection carries one request:
//! head read within `header_timeout` and `max_header_bytes` → [`parse_request`] →
//! [`request_framing`] → request-target → [`admit`] (port, host, one lookup, every address) →
//! connect to a checked address → CONNECT tunnel or plain-HTTP exchange. A failure before the
//! client has been sent anything becomes the proxy's own response (400, 403, 408, 431, 502);
//! every request ends in exactly one [`ProxyEvent`]. On shutdown every connection is closed where
//! it stands and still reports its event.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch, OwnedSemaphorePermit, Semaphore};
use tokio::task::JoinSet;
use tokio::time::{timeout, timeout_at, Instant};

use super::forward::{exchange, ExchangeLimits};
use super::http::{parse_request, plain_response, request_framing, HttpError};
use super::meter::{Counters, Direction, Meter};
use super::policy::{admit, Refusal};
use super::relay::{send_head, tunnel, Inbound, Peer, RelayError, Side, Sink, Source};
use super::target::{parse_absolute, parse_authority, TargetError};
use super::{ProxyConfig, ProxyEvent};
use crate::guard::{Decision, Verdict};

/// Relay buffer per direction (heads may use more, up to `max_header_bytes`).
const RELAY_BUFFER: usize = 64 * 1024;
/// After an error response, how long and how much of the rest of the request is read and
/// discarded, so that closing does not reset the connection under the response.
const LINGER: (Duration, usize) = (Duration::from_secs(1), 256 * 1024);

/// What every connection task shares.
#[derive(Debug)]
pub struct Shared {
    pub config: ProxyConfig,
    pub counters: Counters,
    events: mpsc::Sender<ProxyEvent>,
    permits: Arc<Semaphore>,
}

impl Shared {
    pub fn new(config: ProxyConfig, events: mpsc::Sender<ProxyEvent>) -> Shared {
        let permits = Arc::new(Semaphore::new(config.limits.max_connections));
        Shared { config, counters: Counters::default(), events, permits }
    }
}

/// Accepts connections until `stop` turns true (or its sender is gone), then waits for the
/// connections, which close at once.
pub async fn serve(listener: TcpListener, shared: Arc<Shared>, mut stop: watch::Receiver<bool>) {
    let mut tasks = JoinSet::new();
    let for_tasks = stop.clone();
    loop {
        tokio::select! {
            biased;
            () = stopped(&mut stop) => break,
            Some(_) = tasks.join_next() => {}
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => {
                    Counters::bump(&shared.counters.connections);
                    match shared.permits.clone().try_acquire_owned() {
                        Ok(permit) => {
                            tasks.spawn(connection(stream, Arc::clone(&shared), for_tasks.clone(), permit));
                        }
                        Err(_) => refuse_busy(&stream, &shared),
                    }
                }
                // Out of descriptors or a connection aborted while queued: let it pass.
                Err(_) => tokio::time::sleep(Duration::from_millis(20)).await,
            },
        }
    }
    while tasks.join_next().await.is_some() {}
}

/// Completes once the proxy is told to stop (or its handle is gone).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

fn refuse_busy(stream: &TcpStream, shared: &Shared) {
    let max = shared.config.limits.max_connections;
    let text = format!("hullward proxy: too many connections (at most {max} at once)");
    let _ = stream.try_write(&plain_response(503, "Service Unavailable", &format!("{text}\n")));
    Counters::bump(&shared.counters.rejected);
    let event = ProxyEvent {
        method: String::new(),
        host: String::new(),
        port: 0,
        upstream: None,
        verdict: Verdict::Deny,
        rule: "proxy-limit".into(),
        message: text,
        status: 503,
        bytes_up: 0,
        bytes_down: 0,
        duration_ms: 0,
    };
    if shared.events.try_send(event).is_err() {
        Counters::bump(&shared.counters.events_dropped);
    }
}

/// Why a request was not served to its end.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error("the client closed the connection without sending a request")]
    NoRequest,
    #[error("the client went away while sending its request: {0}")]
    Client(RelayError),
    #[error("the request head did not arrive within {0:?}")]
    HeadTimeout(Duration),
    #[error("the request head exceeds {0} bytes")]
    HeadTooLarge(usize),
    #[error("bad request: {0}")]
    Malformed(#[from] HttpError),
    #[error("bad request: {0}")]
    Target(#[from] TargetError),
    #[error("{0}")]
    Refused(#[from] Refusal),
    #[error("cannot connect to '{host}': {why}")]
    Connect { host: String, why: String },
    #[error("{0}")]
    Relay(#[from] RelayError),
    #[error("the proxy shut down")]
    Shutdown,
}

impl Failure {
    /// The status and response the client gets, when nothing has been sent to it yet.
    fn response(&self) -> Option<(u16, Vec<u8>)> {
        let own = |status, reason| {
            Some((status, plain_response(status, reason, &format!("hullward proxy: {self}\n"))))
        };
        let denied = |message: &str| Some((403, plain_response(403, "Forbidden", &format!("{message}\n"))));
        match self {
            Failure::NoRequest | Failure::Client(_) | Failure::Shutdown => None,
            Failure::HeadTimeout(_) => own(408, "Request Timeout"),
            Failure::HeadTooLarge(_) => own(431, "Request Header Fields Too Large"),
            Failure::Malformed(_)
            | Failure::Target(_)
            | Failure::Relay(RelayError::Http(Side::Client, _)) => own(400, "Bad Request"),
            Failure::Refused(Refusal::Denied(d)) => denied(&d.message),
            Failure::Relay(RelayError::Budget(_)) => denied(&self.to_string()),
            Failure::Relay(
                RelayError::Io { side: Side::Client, .. } | RelayError::Truncated(Side::Client),
            ) => None,
            Failure::Refused(Refusal::Unresolved { .. }) | Failure::Connect { .. } | Failure::Relay(_) => {
                own(502, "Bad Gateway")
            }
        }
    }
}

/// What is known about the request so far, for its event.
#[derive(Debug, Default)]
struct Record {
    method: String,
    host: String,
    port: u16,
    upstream: Option<SocketAddr>,
    allowed_by: Option<Decision>,
}

async fn connection(
    mut stream: TcpStream,
    shared: Arc<Shared>,
    mut stop: watch::Receiver<bool>,
    _permit: OwnedSemaphorePermit,
) {
    let meter = Meter::new(&shared.counters, shared.config.limits.max_total_bytes);
    let mut record = Record::default();
    let _ = stream.set_nodelay(true);
    let capacity = RELAY_BUFFER.max(shared.config.limits.max_header_bytes);
    let (r, w) = stream.split();
    let mut client = Peer { input: Inbound::new(r, Side::Client, capacity), output: w };
    let outcome = tokio::select! {
        done = serve_request(&mut client, &shared, &mut record, &meter) => done,
        () = stopped(&mut stop) => Err(Failure::Shutdown),
    };
    // A request already decided keeps its decision: the answer is sent (bounded by LINGER) even
    // when the proxy is shutting down meanwhile.
    answer(&mut client, &outcome, &meter).await;
    let Some(event) = conclude(&shared.counters, record, &meter, outcome) else { return };
    tokio::select! {
        permit = shared.events.reserve() => {
            if let Ok(permit) = permit {
                permit.send(event);
            }
        }
        () = stopped(&mut stop) => {
            if shared.events.try_send(event).is_err() {
                Counters::bump(&shared.counters.events_dropped);
            }
        }
    }
}

/// Counts the outcome and turns it into the request's event; `None` for a connection that
/// never sent a request.
fn conclude(
    counters: &Counters,
    record: Record,
    meter: &Meter<'_>,
    outcome: Result<(), Failure>,
) -> Option<ProxyEvent> {
    let connected = record.upstream.is_some();
    let allowed_rule = record.allowed_by.as_ref().map_or("host-allowlist", |d| d.rule.as_str()).to_string();
    let (verdict, rule, message, counter) = match &outcome {
        Ok(()) => (Verdict::Allow, allowed_rule, String::new(), &counters.allowed),
        Err(Failure::NoRequest) => return None,
        Err(Failure::Shutdown) if record.method.is_empty() => return None,
        Err(f @ (Failure::HeadTimeout(_) | Failure::HeadTooLarge(_))) => {
            (Verdict::Deny, "proxy-limit".into(), f.to_string(), &counters.rejected)
        }
        Err(f @ (Failure::Malformed(_) | Failure::Target(_) | Failure::Client(_))) => {
            (Verdict::Deny, "proxy-request".into(), f.to_string(), &counters.rejected)
        }
        Err(Failure::Refused(Refusal::Denied(d))) => {
            (Verdict::Deny, d.rule.clone(), d.message.clone(), &counters.denied)
        }
        Err(f @ Failure::Relay(RelayError::Budget(_))) => {
            (Verdict::Deny, "proxy-byte-budget".into(), f.to_string(), &counters.denied)
        }
        Err(f) if connected => (Verdict::Allow, allowed_rule, f.to_string(), &counters.allowed),
        Err(f @ Failure::Shutdown) => {
            (Verdict::Deny, "proxy-shutdown".into(), f.to_string(), &counters.rejected)
        }
        Err(f) => (Verdict::Allow, "proxy-upstream".into(), f.to_string(), &counters.failed),
    };
    Counters::bump(counter);
    let (bytes_up, bytes_down) = meter.bytes();
    Some(ProxyEvent {
        method: record.method,
        host: record.host,
        port: record.port,
        upstream: record.upstream,
        verdict,
        rule,
        message,
        status: meter.status(),
        bytes_up,
        bytes_down,
        duration_ms: u64::try_from(meter.elapsed().as_millis()).unwrap_or(u64::MAX),
    })
}

/// Answers a failure the client has not been answered for yet (nothing sent so far), then lets
/// the connection drain briefly so the answer is not lost to a reset.
async fn answer<R, W>(client: &mut Peer<R, W>, outcome: &Result<(), Failure>, meter: &Meter<'_>)
where
    R: Source,
    W: Sink,
{
    let Err(failure) = outcome else { return };
    if meter.status() != 0 {
        return;
    }
    if let Some((status, response)) = failure.response() {
        meter.set_status(status);
        let linger = async {
            client.output.write_all(&response).await?;
            client.output.shutdown().await?;
            client.input.discard(LINGER.1).await;
            Ok::<(), std::io::Error>(())
        };
        let _ = timeout(LINGER.0, linger).await;
    }
}

async fn serve_request<R, W>(
    client: &mut Peer<R, W>,
    shared: &Shared,
    record: &mut Record,
    meter: &Meter<'_>,
) -> Result<(), Failure>
where
    R: Source,
    W: Sink,
{
    let config = &shared.config;
    let limits = &config.limits;
    let head = match timeout(limits.header_timeout, client.input.read_head(limits.max_header_bytes)).await {
        Err(_) => return Err(Failure::HeadTimeout(limits.header_timeout)),
        Ok(Ok(Some(head))) => head,
        Ok(Ok(None)) => return Err(Failure::NoRequest),
        Ok(Err(RelayError::HeadTooLarge(_, max))) => return Err(Failure::HeadTooLarge(max)),
        Ok(Err(e)) => return Err(Failure::Client(e)),
    };
    let req = parse_request(&head)?;
    record.method.clone_from(&req.method);
    let framing = request_framing(&req)?;
    let target = if req.is_connect() { parse_authority(&req.target)? } else { parse_absolute(&req.target)? };
    record.host = target.host.to_string();
    record.port = target.port;
    if shared.counters.budget_spent(limits.max_total_bytes) {
        return Err(RelayError::Budget(limits.max_total_bytes).into());
    }
    let (decision, addrs) =
        admit(&config.http, &config.ports, &config.resolver, limits.resolve_timeout, &target).await?;
    record.allowed_by = Some(decision);
    let mut upstream = connect(&addrs, limits.connect_timeout)
        .await
        .map_err(|why| Failure::Connect { host: record.host.clone(), why })?;
    record.upstream = upstream.peer_addr().ok();
    let _ = upstream.set_nodelay(true);
    let capacity = RELAY_BUFFER.max(limits.max_header_bytes);
    let (ur, uw) = upstream.split();
    let mut upstream = Peer { input: Inbound::new(ur, Side::Upstream, capacity), output: uw };
    if req.is_connect() {
        send_head(&mut client.output, Direction::Down, b"HTTP/1.1 200 Connection established\r\n\r\n", meter)
            .await?;
        meter.set_status(200);
        tunnel(client, &mut upstream, limits.idle_timeout, meter).await?;
    } else {
        let limits = ExchangeLimits { max_head: limits.max_header_bytes, idle: limits.idle_timeout };
        exchange(&req, framing, &target, client, &mut upstream, limits, meter).await?;
    }
    Ok(())
}

/// Connects to the first of `addrs` that answers, within `limit` for all of them together.
async fn connect(addrs: &[SocketAddr], limit: Duration) -> Result<TcpStream, String> {
    let deadline = Instant::now() + limit;
    let mut errors = Vec::with_capacity(addrs.len());
    for addr in addrs {
        match timeout_at(deadline, TcpStream::connect(addr)).await {
            Ok(Ok(stream)) => return Ok(stream),
            Ok(Err(e)) => errors.push(format!("{addr}: {e}")),
            Err(_) => {
                errors.push(format!("{addr}: no answer within {limit:?}"));
                break;
            }
        }
    }
    Err(errors.join("; "))
}
