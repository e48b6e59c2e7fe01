//! Output pumps: the child's stdout and stderr, read asynchronously, passed through a filter,
//! written to hullward's own stdout and stderr — never buffered without bound.
//!
//! Each pump reads up to 64 KiB at a time from its pipe, counts the bytes against the call's
//! shared output budget (`Limits.OutputBytes`; when it is exhausted the pump stops and reports it,
//! and the supervisor kills the tree), runs the chunk through its [`OutputFilter`] (protected-diff
//! hiding, then secret masking) and writes the result out. At end of file the filter's held-back
//! tail is flushed; the filter's counters go to the audit log.

use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::unix::pipe;

use crate::filter::{FilterStats, OutputFilter};

/// How a pump ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PumpEnd {
    Eof,
    /// The reader of hullward's output went away; the pipe was closed so the child gets EPIPE
    /// (SIGPIPE), as it would without hullward in between.
    SinkClosed,
    /// The shared output budget ran out.
    OverBudget,
}

/// Where a pump writes.
pub enum Sink {
    Stdout(tokio::io::Stdout),
    Stderr(tokio::io::Stderr),
    /// Each filtered chunk becomes a JSON event line on stderr (`--json`).
    JsonEvents {
        stream: &'static str,
        out: tokio::io::Stderr,
    },
    /// Each filtered chunk becomes a JSON event on a bounded channel (a `serve` connection): a
    /// full channel holds the pump back, a closed one is a closed sink.
    Channel {
        stream: &'static str,
        tx: tokio::sync::mpsc::Sender<serde_json::Value>,
    },
}

impl Sink {
    async fn write(&mut self, data: &[u8]) -> std::io::Result<()> {
        match self {
            Sink::Stdout(o) => write_flush(o, data).await,
            Sink::Stderr(o) => write_flush(o, data).await,
            Sink::JsonEvents { stream, out } => {
                let line = serde_json::json!({ "event": stream, "data": String::from_utf8_lossy(data) });
                write_flush(out, format!("{line}\n").as_bytes()).await
            }
            Sink::Channel { stream, tx } => {
                let event = serde_json::json!({ "event": stream, "data": String::from_utf8_lossy(data) });
                tx.send(event).await.map_err(|_| std::io::ErrorKind::BrokenPipe.into())
            }
        }
    }
}

async fn write_flush<W: AsyncWrite + Unpin>(w: &mut W, data: &[u8]) -> std::io::Result<()> {
    w.write_all(data).await?;
    w.flush().await
}

/// Pumps `fd` into `sink` through `filter` until end of file or until `budget` bytes have been
/// read by all pumps sharing it. A write error on the sink (a closed stdout) ends the pump and
/// closes the pipe, passing the broken pipe on to the child.
pub async fn pump(
    fd: OwnedFd,
    mut filter: OutputFilter,
    sink: Sink,
    used: Arc<AtomicU64>,
    budget: u64,
) -> std::io::Result<(PumpEnd, FilterStats)> {
    let end = copy(fd, &mut filter, sink, used, budget).await?;
    Ok((end, filter.stats()))
}

async fn copy(
    fd: OwnedFd,
    filter: &mut OutputFilter,
    mut sink: Sink,
    used: Arc<AtomicU64>,
    budget: u64,
) -> std::io::Result<PumpEnd> {
    let mut rx = pipe::Receiver::from_owned_fd(fd)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut out = Vec::with_capacity(64 * 1024);
    loop {
        let n = rx.read(&mut buf).await?;
        if n == 0 {
            break;
        }
        let before = used.fetch_add(n as u64, Ordering::Relaxed);
        let allowed = budget.saturating_sub(before).min(n as u64) as usize;
        out.clear();
        filter.push(&buf[..allowed], &mut out);
        if allowed < n {
            filter.finish(&mut out);
        }
        if !out.is_empty() && sink.write(&out).await.is_err() {
            return Ok(PumpEnd::SinkClosed);
        }
        if allowed < n {
            return Ok(PumpEnd::OverBudget);
        }
    }
    out.clear();
    filter.finish(&mut out);
    if !out.is_empty() && sink.write(&out).await.is_err() {
        return Ok(PumpEnd::SinkClosed);
    }
    Ok(PumpEnd::Eof)
}
