//! Pipe sizing: one policy for every pipe hullward moves bulk bytes through — the output pumps'
//! pipes from the child, the pipe that carries hullward's stdin to the child, and the egress
//! proxy's splice pipes.
//!
//! Why one policy: a pipe's size is counted against its user's pipe quota
//! (`/proc/sys/fs/pipe-user-pages-soft`, 16,384 pages by default) whether or not it is ever full,
//! and a user over that quota gets two-page pipes for every pipe it makes next, the sandboxed
//! child's own pipelines included. So a pipe starts at the kernel's 64 KiB and grows to
//! [`PIPE_SIZE`] only once a transfer shows that the other end is ahead of its reader. Make a
//! [`PipeGrowth`] when the pipe is made, then report each transfer through it: with
//! [`PipeGrowth::after`] when the byte count shows a full pipe, with [`PipeGrowth::grow`] when
//! something else does (a socket spliced into a pipe fills its slots with partial pages, long
//! before its bytes add up to its size).

use std::os::fd::AsFd;

use rustix::pipe::{fcntl_getpipe_size, fcntl_setpipe_size};

/// What a pipe found full is grown to: the limit an unprivileged process may set
/// (`/proc/sys/fs/pipe-max-size` by default).
pub const PIPE_SIZE: usize = 1024 * 1024;

/// Grows a pipe to [`PIPE_SIZE`] once, when a transfer finds it full. Growing may be refused (the
/// user's pipe quota): the pipe then keeps its size.
#[derive(Debug)]
pub struct PipeGrowth {
    /// The pipe's size while it may still grow; `None` once grown, refused, or not a pipe.
    capacity: Option<usize>,
}

impl PipeGrowth {
    pub fn of(pipe: impl AsFd) -> PipeGrowth {
        PipeGrowth { capacity: fcntl_getpipe_size(pipe).ok().filter(|&c| c < PIPE_SIZE) }
    }

    /// True while the pipe keeps a size it may still grow from.
    pub fn may_grow(&self) -> bool {
        self.capacity.is_some()
    }

    /// After a transfer of `n` bytes through `pipe`: grows it when the transfer moved as much as
    /// it holds.
    pub fn after(&mut self, pipe: impl AsFd, n: usize) {
        if self.capacity.is_some_and(|c| n >= c) {
            self.grow(pipe);
        }
    }

    /// Grows `pipe` now, if it may still grow.
    pub fn grow(&mut self, pipe: impl AsFd) {
        if self.capacity.take().is_some() {
            if let Err(e) = fcntl_setpipe_size(pipe, PIPE_SIZE) {
                tracing::debug!(error = %e, "a pipe was not grown");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_grows_once_a_transfer_fills_it() {
        let (_read, write) = rustix::pipe::pipe().unwrap();
        let size = || fcntl_getpipe_size(&write).unwrap();
        let start = size();
        assert!(start < PIPE_SIZE, "a new pipe holds {start} bytes");
        let mut growth = PipeGrowth::of(&write);
        growth.after(&write, start - 1);
        assert_eq!((size(), growth.may_grow()), (start, true), "a transfer that did not fill it");
        growth.after(&write, start);
        assert_eq!((size(), growth.may_grow()), (PIPE_SIZE, false));

        let (_read, write) = rustix::pipe::pipe().unwrap();
        let mut growth = PipeGrowth::of(&write);
        growth.grow(&write);
        assert_eq!((fcntl_getpipe_size(&write).unwrap(), growth.may_grow()), (PIPE_SIZE, false));
    }

    #[test]
    fn what_is_not_a_pipe_never_grows() {
        let file = tempfile::tempfile().unwrap();
        let mut growth = PipeGrowth::of(&file);
        assert!(!growth.may_grow());
        growth.grow(&file);
    }
}
