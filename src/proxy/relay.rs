//! Moving bytes: a bounded read buffer ([`Inbound`]) and the copy loops built on it — an exact
//! length, a chunked body (re-framed canonically), everything until end of stream, and the
//! CONNECT tunnel that runs two of those at once.
//!
//! Memory per connection is fixed: one buffer per direction, never grown. Every byte passes the
//! connection's [`Meter`] before it is written, so the call's byte budget and the idle clock
//! hold for tunnels and plain HTTP alike. Each direction makes progress on its own (a blocked
//! writer on one side never stops the other side from being read), which is what keeps a
//! full-duplex peer from deadlocking the relay.

use std::fmt;
use std::io;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::tcp::{ReadHalf, WriteHalf};
use tokio::net::TcpStream;

use super::http::{check_trailer_line, head_end, parse_chunk_size, HttpError};
use super::meter::{BudgetSpent, Direction, Meter};
use super::splice::Pipe;

/// Longest chunk-size line accepted (size plus extensions).
const MAX_CHUNK_LINE: usize = 4096;

/// One end of a proxied connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Client,
    Upstream,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::Client => "client",
            Side::Upstream => "upstream",
        })
    }
}

impl Direction {
    /// The side bytes are read from.
    pub fn reader(self) -> Side {
        match self {
            Direction::Up => Side::Client,
            Direction::Down => Side::Upstream,
        }
    }

    /// The side bytes are written to.
    pub fn writer(self) -> Side {
        match self {
            Direction::Up => Side::Upstream,
            Direction::Down => Side::Client,
        }
    }
}

/// Why bytes stopped moving before the exchange was complete.
#[derive(Debug, thiserror::Error)]
pub enum RelayError {
    #[error("the {0} closed the connection in the middle of a message")]
    Truncated(Side),
    #[error("{side} connection: {source}")]
    Io {
        side: Side,
        #[source]
        source: io::Error,
    },
    #[error("malformed message from the {0}: {1}")]
    Http(Side, HttpError),
    #[error("a message head from the {0} exceeds {1} bytes")]
    HeadTooLarge(Side, usize),
    #[error("[DENIED] The egress byte budget of this call ({0} bytes) is used up.")]
    Budget(u64),
    #[error("no data moved for {0:?}")]
    Idle(Duration),
    #[error("the upstream switched protocols without being asked to")]
    Upgrade,
    #[error("the upstream sent too many interim (1xx) responses")]
    Interim,
}

impl From<BudgetSpent> for RelayError {
    fn from(b: BudgetSpent) -> RelayError {
        RelayError::Budget(b.0)
    }
}

/// Something bytes are read from; a TCP socket can be spliced from.
pub trait Source: AsyncRead + Unpin {
    fn socket(&self) -> Option<&TcpStream>;
}

/// Something bytes are written to; a TCP socket can be spliced to.
pub trait Sink: AsyncWrite + Unpin {
    fn socket(&self) -> Option<&TcpStream>;
}

impl Source for ReadHalf<'_> {
    fn socket(&self) -> Option<&TcpStream> {
        Some(self.as_ref())
    }
}

impl Sink for WriteHalf<'_> {
    fn socket(&self) -> Option<&TcpStream> {
        Some(self.as_ref())
    }
}

/// A reader with a fixed buffer, for reading heads and lines and relaying what follows them;
/// with the pipe it splices through once the buffer is drained.
#[derive(Debug)]
pub struct Inbound<R> {
    io: R,
    side: Side,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    pipe: PipeState,
}

#[derive(Debug)]
enum PipeState {
    NotYet,
    Ready(Pipe),
    Unavailable,
}

impl<R: Source> Inbound<R> {
    pub fn new(io: R, side: Side, capacity: usize) -> Inbound<R> {
        let buf = vec![0; capacity].into_boxed_slice();
        Inbound { io, side, buf, start: 0, end: 0, pipe: PipeState::NotYet }
    }

    fn buffered(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Reads more into the buffer; `Ok(0)` at end of stream (or when the buffer is full).
    async fn fill(&mut self) -> Result<usize, RelayError> {
        if self.end == self.buf.len() && self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let side = self.side;
        let n = self
            .io
            .read(&mut self.buf[self.end..])
            .await
            .map_err(|source| RelayError::Io { side, source })?;
        self.end += n;
        Ok(n)
    }

    /// Reads a message head up to and including its blank line; `None` when the stream ends
    /// before its first byte. What follows the head stays buffered.
    pub async fn read_head(&mut self, max: usize) -> Result<Option<Vec<u8>>, RelayError> {
        let mut scanned: usize = 0;
        loop {
            let window = &self.buffered()[..self.buffered().len().min(max)];
            if let Some(end) = head_end(&window[scanned.saturating_sub(3)..]) {
                let end = scanned.saturating_sub(3) + end;
                let head = self.buffered()[..end].to_vec();
                self.consume(end);
                return Ok(Some(head));
            }
            scanned = window.len();
            if scanned >= max || self.end == self.buf.len() && self.start == 0 {
                return Err(RelayError::HeadTooLarge(self.side, max));
            }
            if self.fill().await? == 0 {
                return match scanned {
                    0 => Ok(None),
                    _ => Err(RelayError::Truncated(self.side)),
                };
            }
        }
    }

    /// Reads and drops what arrives, up to `max` bytes or the end of the stream.
    pub async fn discard(&mut self, max: usize) {
        self.start = 0;
        self.end = 0;
        let mut total = 0;
        while total < max {
            match self.io.read(&mut self.buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => total += n,
            }
        }
    }

    /// Reads one CRLF-terminated line of at most `max` bytes and returns it without the CRLF.
    async fn read_line(&mut self, max: usize) -> Result<Vec<u8>, RelayError> {
        loop {
            let window = &self.buffered()[..self.buffered().len().min(max + 2)];
            if let Some(i) = window.iter().position(|&b| b == b'\n') {
                if i == 0 || window[i - 1] != b'\r' || window[..i - 1].contains(&b'\r') {
                    return Err(RelayError::Http(self.side, HttpError::Chunk));
                }
                let line = window[..i - 1].to_vec();
                self.consume(i + 1);
                return Ok(line);
            }
            if window.len() >= max + 2 {
                return Err(RelayError::Http(self.side, HttpError::Chunk));
            }
            if self.fill().await? == 0 {
                return Err(RelayError::Truncated(self.side));
            }
        }
    }
}

async fn write<W: Sink>(dst: &mut W, dir: Direction, bytes: &[u8]) -> Result<(), RelayError> {
    dst.write_all(bytes).await.map_err(|source| RelayError::Io { side: dir.writer(), source })
}

/// Moves some bytes, at most `limit`, from `src` to `dst`: what is buffered first, then by
/// splicing socket to socket, else through the buffer. 0 at the end of `src`.
async fn move_some<R: Source, W: Sink>(
    src: &mut Inbound<R>,
    dst: &mut W,
    limit: u64,
    dir: Direction,
    meter: &Meter<'_>,
) -> Result<usize, RelayError> {
    if src.buffered().is_empty() {
        if let (Some(from), Some(to)) = (src.io.socket(), dst.socket()) {
            if let PipeState::NotYet = src.pipe {
                // An idle connection holds no pipe: it is made when the first bytes are there.
                from.readable().await.map_err(|source| RelayError::Io { side: dir.reader(), source })?;
                src.pipe = Pipe::new().map_or(PipeState::Unavailable, PipeState::Ready);
            }
            if let PipeState::Ready(pipe) = &mut src.pipe {
                return pipe.transfer(from, to, limit, dir, meter).await;
            }
        }
        if src.fill().await? == 0 {
            return Ok(0);
        }
    }
    let take = src.buffered().len().min(usize::try_from(limit).unwrap_or(usize::MAX));
    meter.record(dir, take)?;
    write(dst, dir, &src.buffered()[..take]).await?;
    src.consume(take);
    Ok(take)
}

/// Writes a message head (counted like any other byte).
pub async fn send_head<W: Sink>(
    dst: &mut W,
    dir: Direction,
    head: &[u8],
    meter: &Meter<'_>,
) -> Result<(), RelayError> {
    meter.record(dir, head.len())?;
    write(dst, dir, head).await
}

/// Relays exactly `n` bytes.
pub async fn copy_exact<R: Source, W: Sink>(
    src: &mut Inbound<R>,
    dst: &mut W,
    mut n: u64,
    dir: Direction,
    meter: &Meter<'_>,
) -> Result<(), RelayError> {
    while n > 0 {
        match move_some(src, dst, n, dir, meter).await? {
            0 => return Err(RelayError::Truncated(dir.reader())),
            moved => n -= moved as u64,
        }
    }
    Ok(())
}

/// Relays everything until the source ends, then half-closes the destination.
pub async fn copy_to_end<R: Source, W: Sink>(
    src: &mut Inbound<R>,
    dst: &mut W,
    dir: Direction,
    meter: &Meter<'_>,
) -> Result<(), RelayError> {
    while move_some(src, dst, u64::MAX, dir, meter).await? > 0 {}
    dst.shutdown().await.map_err(|source| RelayError::Io { side: dir.writer(), source })
}

/// Relays a chunked body, checking its syntax. With `rechunk` the destination gets it chunked
/// again, without chunk extensions and trailers; without, it gets the bare data (for an
/// HTTP/1.0 client, where the end of the body is the end of the connection).
pub async fn copy_chunked<R: Source, W: Sink>(
    src: &mut Inbound<R>,
    dst: &mut W,
    rechunk: bool,
    max_trailers: usize,
    dir: Direction,
    meter: &Meter<'_>,
) -> Result<(), RelayError> {
    let bad = |e| RelayError::Http(dir.reader(), e);
    loop {
        let size = parse_chunk_size(&src.read_line(MAX_CHUNK_LINE).await?).map_err(bad)?;
        if size == 0 {
            let mut trailers = 0;
            loop {
                let line = src.read_line(MAX_CHUNK_LINE).await?;
                if line.is_empty() {
                    break;
                }
                trailers += line.len() + 2;
                if trailers > max_trailers {
                    return Err(RelayError::HeadTooLarge(dir.reader(), max_trailers));
                }
                check_trailer_line(&line).map_err(bad)?;
            }
            return if rechunk { write(dst, dir, b"0\r\n\r\n").await } else { Ok(()) };
        }
        if rechunk {
            write(dst, dir, format!("{size:x}\r\n").as_bytes()).await?;
        }
        copy_exact(src, dst, size, dir, meter).await?;
        if !src.read_line(0).await?.is_empty() {
            return Err(bad(HttpError::Chunk));
        }
        if rechunk {
            write(dst, dir, b"\r\n").await?;
        }
    }
}

/// Both halves of one end of a proxied connection.
#[derive(Debug)]
pub struct Peer<R, W> {
    pub input: Inbound<R>,
    pub output: W,
}

/// The CONNECT tunnel: both directions at once until both have ended, one fails, or nothing
/// has moved for `idle`. Bytes the client sent after its request head go first.
pub async fn tunnel<CR, CW, UR, UW>(
    client: &mut Peer<CR, CW>,
    upstream: &mut Peer<UR, UW>,
    idle: Duration,
    meter: &Meter<'_>,
) -> Result<(), RelayError>
where
    CR: Source,
    CW: Sink,
    UR: Source,
    UW: Sink,
{
    let up = copy_to_end(&mut client.input, &mut upstream.output, Direction::Up, meter);
    let down = copy_to_end(&mut upstream.input, &mut client.output, Direction::Down, meter);
    tokio::select! {
        done = async { tokio::try_join!(up, down) } => done.map(drop),
        () = meter.idle(idle) => Err(RelayError::Idle(idle)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proxy::meter::Counters;

    impl Source for &[u8] {
        fn socket(&self) -> Option<&TcpStream> {
            None
        }
    }

    impl Sink for Vec<u8> {
        fn socket(&self) -> Option<&TcpStream> {
            None
        }
    }

    async fn chunked(input: &[u8], rechunk: bool) -> Result<Vec<u8>, RelayError> {
        let counters = Counters::default();
        let meter = Meter::new(&counters, u64::MAX);
        let mut src = Inbound::new(input, Side::Upstream, 64);
        let mut out = Vec::new();
        copy_chunked(&mut src, &mut out, rechunk, 100, Direction::Down, &meter).await?;
        Ok(out)
    }

    #[tokio::test]
    async fn chunked_bodies_are_reframed() {
        let body = b"5;ext=1\r\nhello\r\n1A\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\nX-T: 1\r\n\r\nNEXT";
        assert_eq!(
            chunked(body, true).await.unwrap(),
            b"5\r\nhello\r\n1a\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n"
        );
        assert_eq!(chunked(body, false).await.unwrap(), b"helloabcdefghijklmnopqrstuvwxyz");
        for bad in [
            &b"5\r\nhello\n0\r\n\r\n"[..],
            b"5\nhello\r\n0\r\n\r\n",
            b"5\r\nhelloX\r\n0\r\n\r\n",
            b"zz\r\n",
            b"0\r\nbad trailer\r\n\r\n",
            b"0\r\n a: b\r\n\r\n",
        ] {
            assert!(matches!(chunked(bad, true).await, Err(RelayError::Http(..))), "{bad:?}");
        }
        assert!(matches!(chunked(b"5\r\nhel", true).await, Err(RelayError::Truncated(Side::Upstream))));
        let long_trailers = format!("0\r\n{}\r\n", "X-T: 1234567890\r\n".repeat(10));
        assert!(matches!(chunked(long_trailers.as_bytes(), true).await, Err(RelayError::HeadTooLarge(..))));
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(1024))]
        #[test]
        fn chunked_input_never_panics(input in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just(b"\r\n".to_vec()),
                proptest::strategy::Just(b"0".to_vec()),
                proptest::strategy::Just(b"a;x=1".to_vec()),
                proptest::collection::vec(proptest::prelude::any::<u8>(), 0..6),
            ],
            0..16,
        )) {
            let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
            let input = input.concat();
            let out = runtime.block_on(chunked(&input, true));
            if let Ok(out) = out {
                proptest::prop_assert!(out.ends_with(b"0\r\n\r\n"));
            }
        }
    }

    #[tokio::test]
    async fn heads_are_bounded_and_keep_what_follows() {
        let mut src = Inbound::new(&b"GET / HTTP/1.1\r\nA: b\r\n\r\nbody"[..], Side::Client, 64);
        assert_eq!(src.read_head(64).await.unwrap().unwrap(), b"GET / HTTP/1.1\r\nA: b\r\n\r\n");
        assert_eq!(src.buffered(), b"body");
        let mut src = Inbound::new(&b"GET / HTTP/1.1\r\nA: bbbbbbbbbbbbbbbbb\r\n\r\n"[..], Side::Client, 64);
        assert!(matches!(src.read_head(20).await, Err(RelayError::HeadTooLarge(Side::Client, 20))));
        let mut src = Inbound::new(&b""[..], Side::Client, 64);
        assert!(src.read_head(20).await.unwrap().is_none());
        let mut src = Inbound::new(&b"GET /"[..], Side::Client, 64);
        assert!(matches!(src.read_head(20).await, Err(RelayError::Truncated(Side::Client))));
    }

    #[tokio::test]
    async fn exact_copies_stop_at_the_length() {
        let counters = Counters::default();
        let meter = Meter::new(&counters, u64::MAX);
        let mut src = Inbound::new(&b"0123456789"[..], Side::Client, 4);
        let mut out = Vec::new();
        copy_exact(&mut src, &mut out, 6, Direction::Up, &meter).await.unwrap();
        assert_eq!((out.as_slice(), meter.bytes()), (&b"012345"[..], (6, 0)));
        let budget = Meter::new(&counters, 8);
        let err = copy_exact(&mut src, &mut out, 4, Direction::Up, &budget).await.unwrap_err();
        assert!(matches!(err, RelayError::Budget(8)));
    }
}
