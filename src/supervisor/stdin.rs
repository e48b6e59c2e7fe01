//! The child's standard input, and the user's terminal.
//!
//! The child never gets hullward's own fd 0: on a terminal it could write to the user's screen
//! past the output filter and the output cap, read keystrokes meant for the shell, and leave the
//! terminal in raw `-echo`; on a socket it could write back to the caller. Instead, [`feed`]
//! gives it the read end of a pipe and copies hullward's standard input into the write end on a
//! thread of its own (input from a file, a pipe or a terminal reaches the program unchanged, as
//! lines in the terminal's own canonical mode). Writing to fd 0 fails in the child (a pipe's read
//! end), and with stdout and stderr pipes as well and `setsid` in the child, it holds no
//! descriptor of the terminal and has no controlling terminal to open as `/dev/tty`.
//!
//! [`TerminalModes::save`], before the spawn, keeps the modes of every terminal among fds 0–2 and
//! puts them back when dropped, after the call, whatever happened in between.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};

use rustix::termios::{self, OptionalActions, Termios};

use crate::sandbox::sys;

/// Bytes copied per read.
const CHUNK: usize = 64 * 1024;

/// The read end of a pipe fed from hullward's standard input, for the child's fd 0. The copying
/// thread ends at end of input, or when the child closes its end (EPIPE); it is never joined (a
/// read from a terminal may block until hullward exits).
pub fn feed() -> std::io::Result<OwnedFd> {
    let (read_end, write_end) = sys::pipe_cloexec()?;
    let source = std::io::stdin().as_fd().try_clone_to_owned();
    std::thread::Builder::new().name("hullward-stdin".into()).spawn(move || {
        let mut sink = File::from(write_end);
        let Ok(source) = source else { return };
        let mut source = File::from(source);
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
    })?;
    Ok(read_end)
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
