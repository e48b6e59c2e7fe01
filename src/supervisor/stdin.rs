//! The child's standard input, and the user's terminal.
//!
//! The child never gets hullward's own fd 0: on a terminal it could write to the user's screen past
//! the output filter and the output cap, read keystrokes meant for the shell, and leave the
//! terminal in raw `-echo`; on a socket it could write back to the caller. Instead, [`feed`] gives
//! it the read end of a pipe and moves hullward's standard input into the write end on a thread of
//! its own — spliced from a file or a pipe, copied from a terminal — so input reaches the program
//! unchanged (from a terminal as lines, in the terminal's own canonical mode). Writing to fd 0
//! fails in the child (a pipe's read end), and with stdout and stderr pipes as well and `setsid` in
//! the child, it holds no descriptor of the terminal and has no controlling terminal to open as
//! `/dev/tty`.
//!
//! [`TerminalModes::save`], before the spawn, keeps the modes of every terminal among fds 0–2 and
//! puts them back when dropped, after the call, whatever happened in between.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;

use rustix::io::Errno;
use rustix::pipe::{splice, SpliceFlags};
use rustix::termios::{self, OptionalActions, Termios};

use crate::pipe::{PipeGrowth, PIPE_SIZE};
use crate::sandbox::sys;

/// Bytes copied per read when the input cannot be spliced.
const CHUNK: usize = 64 * 1024;

/// The read end of a pipe fed from hullward's standard input, for the child's fd 0. The copying
/// thread ends at end of input, or when the child closes its end (EPIPE); it is never joined (a
/// read from a terminal may block until hullward exits).
pub fn feed() -> std::io::Result<OwnedFd> {
    let (read_end, write_end) = sys::pipe_cloexec()?;
    let source = std::io::stdin().as_fd().try_clone_to_owned();
    std::thread::Builder::new().name("hullward-stdin".into()).spawn(move || {
        let Ok(source) = source else { return };
        let (source, sink) = (File::from(source), File::from(write_end));
        if !spliceable(&source) || splice_all(&source, &sink) == Spliced::Unsupported {
            copy_all(source, sink);
        }
    })?;
    Ok(read_end)
}

/// Whether `source` is a pipe or a regular file. Only these are spliced: a splice from anything
/// else (a terminal, a socket) waits for input while holding the child's pipe locked, so the
/// child could not read what was already passed on — with a terminal, until the next line.
fn spliceable(source: &File) -> bool {
    source.metadata().is_ok_and(|m| m.file_type().is_fifo() || m.file_type().is_file())
}

/// How [`splice_all`] ended.
#[derive(Debug, PartialEq, Eq)]
enum Spliced {
    /// End of input, or the child closed its end.
    Ended,
    /// The kernel cannot splice from this input; the failing call moved nothing.
    Unsupported,
}

/// Moves `source` into the pipe `sink` with `splice(2)`: the input is not filtered, so its pages
/// need not pass through this process (a file or a pipe on fd 0, the common case of
/// `… | hullward run -- tool`). The pipe is grown to [`PIPE_SIZE`] once a splice fills it, as the
/// output pumps grow theirs.
fn splice_all(source: &File, sink: &File) -> Spliced {
    let mut growth = PipeGrowth::of(sink);
    loop {
        match splice(source, None, sink, None, PIPE_SIZE, SpliceFlags::empty()) {
            Ok(0) => return Spliced::Ended,
            Ok(n) => growth.after(sink, n),
            Err(Errno::INTR) => {}
            Err(Errno::INVAL) => return Spliced::Unsupported,
            Err(_) => return Spliced::Ended,
        }
    }
}

/// Copies `source` into `sink` through a buffer, read by read.
fn copy_all(mut source: File, mut sink: File) {
    let mut buf = vec![0u8; CHUNK];
    loop {
        match source.read(&mut buf) {
            Ok(0) => return,
            Ok(n) => {
                if sink.write_all(&buf[..n]).is_err() {
                    return;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return,
        }
    }
}

/// The modes of the terminals among hullward's standard descriptors, restored on drop.
pub struct TerminalModes {
    saved: Vec<(OwnedFd, Termios)>,
}

impl TerminalModes {
    pub fn save() -> TerminalModes {
        let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
        let saved = [stdin.as_fd(), stdout.as_fd(), stderr.as_fd()]
            .into_iter()
            .filter(|fd| termios::isatty(fd))
            .filter_map(|fd| Some((fd.try_clone_to_owned().ok()?, termios::tcgetattr(fd).ok()?)))
            .collect();
        TerminalModes { saved }
    }
}

impl Drop for TerminalModes {
    /// Only a terminal whose modes differ is written (from a background process group, writing
    /// them would stop hullward with SIGTTOU).
    fn drop(&mut self) {
        for (fd, modes) in &self.saved {
            if termios::tcgetattr(fd).is_ok_and(|now| !same(&now, modes)) {
                let _ = termios::tcsetattr(fd, OptionalActions::Now, modes);
            }
        }
    }
}

fn same(a: &Termios, b: &Termios) -> bool {
    a.input_modes == b.input_modes
        && a.output_modes == b.output_modes
        && a.control_modes == b.control_modes
        && a.local_modes == b.local_modes
        && format!("{:?}", a.special_codes) == format!("{:?}", b.special_codes)
}
