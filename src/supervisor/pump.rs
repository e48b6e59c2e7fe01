//! Output pumps: the child's stdout and stderr, each read on a thread of its own, passed through a
//! filter, written to hullward's own stdout and stderr — never buffered without bound.
//!
//! Each pump owns its pipe and its destination and does plain blocking I/O on them: a read of up to
//! [`READ_SIZE`] bytes into a [`ReadBuf`] (placed where the kernel's copy runs at full speed, never
//! zeroed, so a call that prints little touches few of its pages) through a [`PipeReader`] (which
//! grows the pipe (see [`crate::pipe`]) the first time a read finds it full, so a child printing a
//! lot seldom waits for the pump), counted against the call's shared output budget
//! (`Limits.OutputBytes`; when it is exhausted the pump stops and reports it, and the supervisor
//! kills the tree), the chunk through its [`OutputFilter`] (protected-diff hiding, then secret
//! masking), one write of the result. No chunk crosses to another thread; the supervisor's runtime
//! only awaits the end.
//!
//! **Honest streams.** The masker holds back only bytes that could still begin a secret; when it
//! holds some and the child prints nothing for [`IDLE`], they are released, so an unterminated
//! prompt appears at once and nothing waits longer than that. When hullward's stdout and stderr
//! are the same file (a terminal, `2>&1`), a stream that wrote part of a line owns the line until
//! it ends it (or stays silent for [`IDLE`]): the other stream's output waits, so the two are
//! never spliced mid-line and each keeps its own order. At end of file the filter's held-back tail
//! is flushed; the filter's counters go to the audit log.

use std::fs::File;
use std::io::{self, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

use super::workers::Pool;
use crate::filter::{FilterStats, OutputFilter};
use crate::pipe::PipeGrowth;
use crate::sandbox::sys;

/// Bytes asked for per `read(2)` (a pipe holds 64 KiB by default; the child may have grown it).
pub const READ_SIZE: usize = 256 * 1024;

/// The page size, and how far past a page boundary a [`ReadBuf`]'s bytes start.
const PAGE: usize = 4096;
const READ_OFFSET: usize = PAGE / 2;

/// How long held-back bytes (and a line left open on a shared terminal) wait for more output.
pub const IDLE: Duration = Duration::from_millis(100);

/// The pumps' threads, kept for the next call's (see [`super::workers`]).
static PUMPS: Pool = Pool::new("hullward-pump");

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
#[derive(Debug, Clone)]
pub enum Sink {
    Stdout,
    Stderr,
    /// Each filtered chunk becomes a JSON event line on stderr (`--json`), named by its stream.
    JsonEvents {
        stream: &'static str,
    },
    /// Each filtered chunk becomes a JSON event on a bounded channel (a `serve` connection): a
    /// full channel holds the pump back, a closed one is a closed sink.
    Channel {
        stream: &'static str,
        tx: tokio::sync::mpsc::Sender<serde_json::Value>,
    },
}

/// Which of hullward's own streams a line-sharing write comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Own {
    Stdout,
    Stderr,
}

/// Pumps `fd` into `sink` through `filter` until end of file or until `budget` bytes have been
/// read by all pumps sharing it. A write error on the sink (a closed stdout) ends the pump and
/// closes the pipe, passing the broken pipe on to the child.
pub async fn pump(
    fd: OwnedFd,
    filter: OutputFilter,
    sink: Sink,
    used: Arc<AtomicU64>,
    budget: u64,
) -> io::Result<(PumpEnd, FilterStats)> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    PUMPS.run(move || {
        let mut filter = filter;
        let end = copy(fd, &mut filter, sink, &used, budget);
        let _ = tx.send(end.map(|end| (end, filter.stats())));
    })?;
    rx.await.unwrap_or_else(|_| Err(io::Error::other("the output pump stopped without a result")))
}

fn copy(
    fd: OwnedFd,
    filter: &mut OutputFilter,
    sink: Sink,
    used: &AtomicU64,
    budget: u64,
) -> io::Result<PumpEnd> {
    let mut input = PipeReader::new(fd);
    let mut dest = Dest::open(sink)?;
    let mut buf = ReadBuf::new();
    let mut out = Vec::with_capacity(READ_SIZE + 4096);
    loop {
        if filter.holding() && !sys::wait_readable(input.as_fd(), IDLE)? {
            out.clear();
            filter.flush(&mut out);
            if dest.write(&out).is_err() {
                return Ok(PumpEnd::SinkClosed);
            }
            continue;
        }
        let read = match input.read_into(&mut buf) {
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let n = read.len();
        if n == 0 {
            break;
        }
        let before = used.fetch_add(n as u64, Ordering::Relaxed);
        let allowed = budget.saturating_sub(before).min(n as u64) as usize;
        out.clear();
        filter.push(&read[..allowed], &mut out);
        if allowed < n {
            filter.finish(&mut out);
        }
        if dest.write(&out).is_err() {
            return Ok(PumpEnd::SinkClosed);
        }
        if allowed < n {
            return Ok(PumpEnd::OverBudget);
        }
    }
    out.clear();
    filter.finish(&mut out);
    if dest.write(&out).is_err() {
        return Ok(PumpEnd::SinkClosed);
    }
    Ok(PumpEnd::Eof)
}

/// Blocking reads of a pipe (or of any file: then it only reads) that grow the pipe once a read
/// returns as much as it holds, i.e. once the writer is ahead of us.
pub struct PipeReader {
    file: File,
    growth: PipeGrowth,
}

impl PipeReader {
    pub fn new(fd: OwnedFd) -> PipeReader {
        PipeReader { growth: PipeGrowth::of(&fd), file: File::from(fd) }
    }

    pub fn as_fd(&self) -> BorrowedFd<'_> {
        self.file.as_fd()
    }

    /// One `read(2)` of up to [`READ_SIZE`] bytes into `buf`; returns the bytes read (none at end
    /// of file).
    pub fn read_into<'b>(&mut self, buf: &'b mut ReadBuf) -> io::Result<&'b [u8]> {
        let (read, _) = rustix::io::read(&self.file, buf.aligned())?;
        self.growth.after(&self.file, read.len());
        Ok(read)
    }
}

/// [`READ_SIZE`] bytes of memory for reads, never zeroed, starting half a page past a page
/// boundary ([`READ_OFFSET`]).
///
/// Why there: a copy whose destination lies a few bytes after its source, modulo 4 KiB, stalls
/// each load behind the store before it (4 KiB aliasing). A read copies out of whole pages (a
/// pipe's buffers, the page cache), and the filter then copies the read into its output buffer,
/// which the C library places 16 bytes past a page boundary. Half a page keeps both copies far
/// from aliasing. On the 2-core AMD EPYC build machine, `cat FILE |` a reader that copies each read
/// into a second buffer took 0.52 s for 512 MiB with the read buffer at offset 0 and the second at
/// 16, 0.43 s with both at 16 (where a plain allocation puts them), and 0.24 s with the read buffer
/// at 2048; a pump reading a sandboxed `cat` spent eleven times as long in `read(2)` as
/// `hullward filter` did (docs/benchmarks.md, "Output at pipe speed").
pub struct ReadBuf(Vec<u8>);

impl ReadBuf {
    pub fn new() -> ReadBuf {
        ReadBuf(Vec::with_capacity(READ_SIZE + PAGE + READ_OFFSET))
    }

    /// The [`READ_SIZE`] bytes of spare capacity that start [`READ_OFFSET`] past a page boundary.
    fn aligned(&mut self) -> &mut [MaybeUninit<u8>] {
        let spare = self.0.spare_capacity_mut();
        let to_page = spare.as_ptr().align_offset(PAGE);
        let skip = if to_page < PAGE { to_page + READ_OFFSET } else { 0 };
        &mut spare[skip..skip + READ_SIZE]
    }
}

impl Default for ReadBuf {
    fn default() -> ReadBuf {
        ReadBuf::new()
    }
}

/// A pump's destination: a duplicate of hullward's fd 1 or 2 written with blocking writes, or the
/// channel of a `serve` connection.
enum Dest {
    /// `shared`: hullward's stdout and stderr are the same file, lines are shared (module doc).
    Own {
        own: Own,
        file: File,
        shared: bool,
    },
    Json {
        stream: &'static str,
        file: File,
    },
    Channel {
        stream: &'static str,
        tx: tokio::sync::mpsc::Sender<serde_json::Value>,
    },
}

impl Dest {
    fn open(sink: Sink) -> io::Result<Dest> {
        let dup = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().map(File::from);
        Ok(match sink {
            Sink::Stdout => {
                Dest::Own { own: Own::Stdout, file: dup(io::stdout().as_fd())?, shared: same_file() }
            }
            Sink::Stderr => {
                Dest::Own { own: Own::Stderr, file: dup(io::stderr().as_fd())?, shared: same_file() }
            }
            Sink::JsonEvents { stream } => Dest::Json { stream, file: dup(io::stderr().as_fd())? },
            Sink::Channel { stream, tx } => Dest::Channel { stream, tx },
        })
    }

    fn write(&mut self, data: &[u8]) -> io::Result<()> {
        if data.is_empty() {
            return Ok(());
        }
        let event =
            |stream: &str| serde_json::json!({ "event": stream, "data": String::from_utf8_lossy(data) });
        match self {
            Dest::Own { own, file, shared: true } => LINE.write(*own, data, file),
            Dest::Own { file, .. } => file.write_all(data),
            Dest::Json { stream, file } => file.write_all(format!("{}\n", event(stream)).as_bytes()),
            Dest::Channel { stream, tx } => {
                tx.blocking_send(event(stream)).map_err(|_| io::ErrorKind::BrokenPipe.into())
            }
        }
    }
}

/// Whether hullward's stdout and stderr are one open file (same device and inode).
fn same_file() -> bool {
    let id = |f: File| f.metadata().ok().map(|m| (m.dev(), m.ino()));
    let dup = |fd: std::os::fd::BorrowedFd<'_>| fd.try_clone_to_owned().ok().map(File::from);
    match (dup(io::stdout().as_fd()).and_then(id), dup(io::stderr().as_fd()).and_then(id)) {
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}

/// The line of a shared stdout/stderr: which stream left it open, and when it last wrote.
struct SharedLine {
    open: Mutex<Option<(Own, Instant)>>,
    ended: Condvar,
}

static LINE: SharedLine = SharedLine { open: Mutex::new(None), ended: Condvar::new() };

impl SharedLine {
    /// Writes `data` for `own` once no other stream holds the line open (or it has been silent
    /// for [`IDLE`]); the line is then open for `own` when `data` does not end it.
    fn write(&self, own: Own, data: &[u8], file: &mut File) -> io::Result<()> {
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        while let Some((owner, since)) = *open {
            let left = IDLE.saturating_sub(since.elapsed());
            if owner == own || left.is_zero() {
                break;
            }
            open = self.ended.wait_timeout(open, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        let written = file.write_all(data);
        *open = (!data.ends_with(b"\n")).then(|| (own, Instant::now()));
        self.ended.notify_all();
        written
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_land_half_a_page_past_a_boundary() {
        let mut buf = ReadBuf::new();
        let spare = buf.aligned();
        assert_eq!((spare.len(), spare.as_ptr() as usize % PAGE), (READ_SIZE, READ_OFFSET));
        let (read, write) = rustix::pipe::pipe().unwrap();
        rustix::io::write(&write, b"some output").unwrap();
        drop(write);
        let mut input = PipeReader::new(read);
        let bytes = input.read_into(&mut buf).unwrap();
        assert_eq!((bytes, bytes.as_ptr() as usize % PAGE), (&b"some output"[..], READ_OFFSET));
        assert!(input.read_into(&mut buf).unwrap().is_empty());
    }
}
