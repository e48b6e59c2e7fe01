//! Zero-copy relaying: socket → pipe → socket with `splice(2)`, never through the proxy's memory.
//!
//! Why: copying every byte up into user space and back down is the proxy's main cost per byte;
//! splicing moves page references instead. Measured with scripts/bench-proxy.sh (10 × 100 MB
//! through a CONNECT tunnel, three interleaved rounds): 0.46–0.53 s of proxy CPU, against
//! 0.54–0.78 s with a 64 or 256 KiB copy buffer — about a quarter less, which is what lets one
//! supervisor relay for many calls at once. [`crate::proxy::relay`] splices once its read buffer
//! is drained and both ends are TCP sockets, with one pipe per direction made when the first
//! bytes arrive; without a pipe (out of descriptors) it copies through its buffer instead. Every
//! byte still passes the connection's meter before it is written on.
//!
//! A pipe starts at the kernel's 64 KiB and grows (see [`crate::pipe`]) once a splice leaves bytes
//! behind in the socket: the sender is ahead. A socket's bytes arrive in packets of about 1,500
//! bytes, and each fills one of the pipe's page slots, so a 64 KiB pipe takes 16 packets per
//! splice and a 1 MiB pipe 256: a bulk transfer makes a sixteenth of the system calls and wakeups.
//! `bench_plain_http_alone` (tests/proxy.rs; docs/benchmarks.md, "The proxy's pipes"), three
//! rounds of 20 × 100 MB per build: 58.5–66.0 ms of proxy CPU per 100 MB with the fixed 256 KiB
//! pipe this replaced, 51.0–56.0 ms with a pipe that grows to 1 MiB.

use std::io;
use std::os::fd::OwnedFd;

use rustix::io::ioctl_fionread;
use rustix::pipe::{pipe_with, splice, PipeFlags, SpliceFlags};
use tokio::io::Interest;
use tokio::net::TcpStream;

use super::meter::{Direction, Meter};
use super::relay::RelayError;
use crate::pipe::{PipeGrowth, PIPE_SIZE};

/// A pipe that carries one direction of one connection.
#[derive(Debug)]
pub struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
    growth: PipeGrowth,
}

impl Pipe {
    pub fn new() -> io::Result<Pipe> {
        let (read, write) = pipe_with(PipeFlags::CLOEXEC | PipeFlags::NONBLOCK)?;
        Ok(Pipe { growth: PipeGrowth::of(&write), read, write })
    }

    /// Moves what `src` has ready, at most `limit` bytes, to `dst`; 0 at the end of `src`.
    pub async fn transfer(
        &mut self,
        src: &TcpStream,
        dst: &TcpStream,
        limit: u64,
        dir: Direction,
        meter: &Meter<'_>,
    ) -> Result<usize, RelayError> {
        let want = usize::try_from(limit).unwrap_or(usize::MAX).min(PIPE_SIZE);
        let flags = SpliceFlags::NONBLOCK | SpliceFlags::MOVE;
        let failed = |side| move |source| RelayError::Io { side, source };
        let moved = loop {
            src.readable().await.map_err(failed(dir.reader()))?;
            let attempt =
                src.try_io(Interest::READABLE, || Ok(splice(src, None, &self.write, None, want, flags)?));
            match attempt {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(failed(dir.reader())(e)),
            }
        };
        if moved == 0 {
            return Ok(0);
        }
        // A nonblocking splice passes over the socket's queue once, stopping when the pipe is full.
        if self.growth.may_grow() && moved < want && ioctl_fionread(src).is_ok_and(|queued| queued > 0) {
            self.growth.grow(&self.write);
        }
        meter.record(dir, moved)?;
        let mut left = moved;
        while left > 0 {
            dst.writable().await.map_err(failed(dir.writer()))?;
            let attempt =
                dst.try_io(Interest::WRITABLE, || Ok(splice(&self.read, None, dst, None, left, flags)?));
            match attempt {
                Ok(0) => return Err(failed(dir.writer())(io::ErrorKind::WriteZero.into())),
                Ok(n) => left -= n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => return Err(failed(dir.writer())(e)),
            }
        }
        Ok(moved)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::net::{Shutdown, TcpListener};

    use rustix::pipe::fcntl_getpipe_size;

    use super::*;
    use crate::proxy::meter::Counters;

    /// A connected pair of loopback sockets: the std end for a thread, the tokio end for the pipe.
    fn pair() -> (std::net::TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let far = std::net::TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let near = listener.accept().unwrap().0;
        near.set_nonblocking(true).unwrap();
        (far, TcpStream::from_std(near).unwrap())
    }

    /// Relays `bytes`, already queued in the source socket, through one pipe; returns what the
    /// far end of the destination received and the pipe's size afterwards.
    async fn relay(bytes: Vec<u8>) -> (Vec<u8>, usize) {
        let (mut sender, src) = pair();
        let (mut receiver, dst) = pair();
        let writer = std::thread::spawn(move || {
            sender.write_all(&bytes).unwrap();
            sender.shutdown(Shutdown::Write).unwrap();
        });
        let reader = std::thread::spawn(move || {
            let mut got = Vec::new();
            receiver.read_to_end(&mut got).unwrap();
            got
        });
        // The sender runs ahead: its bytes wait in the source socket before the first splice.
        std::thread::sleep(std::time::Duration::from_millis(100));
        let counters = Counters::default();
        let meter = Meter::new(&counters, u64::MAX);
        let mut pipe = Pipe::new().unwrap();
        while pipe.transfer(&src, &dst, u64::MAX, Direction::Down, &meter).await.unwrap() > 0 {}
        writer.join().unwrap();
        let size = fcntl_getpipe_size(&pipe.write).unwrap();
        drop(dst);
        (reader.join().unwrap(), size)
    }

    #[tokio::test]
    async fn a_pipe_grows_when_the_sender_is_ahead_and_not_for_a_trickle() {
        let bulk: Vec<u8> = (0..8 << 20).map(|i: u32| (i % 251) as u8).collect();
        let (got, size) = relay(bulk.clone()).await;
        assert!(got == bulk, "the bytes arrived whole and in order");
        assert_eq!(size, PIPE_SIZE);

        let small = b"GET / HTTP/1.1\r\n\r\n".to_vec();
        let (got, size) = relay(small.clone()).await;
        assert_eq!(got, small);
        assert!(size < PIPE_SIZE, "a small message leaves the pipe at {size} bytes");
    }
}
