//! The server's socket: the one systemd passes (`LISTEN_FDS`, socket activation), else a fresh
//! Unix socket created with mode 0600.
//!
//! A socket file left by a server that is gone (nothing answers a connect) is replaced; one that
//! a live server answers, or a path that is not a socket, is a usage error (exit 2). The file this
//! process created is removed at the end ([`Bound::cleanup`]); a passed socket is left to systemd.

use std::io::ErrorKind;
use std::os::unix::fs::FileTypeExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::sandbox::sys;

/// The listening socket, and the file to remove at the end (none when systemd passed it).
pub struct Bound {
    pub listener: UnixListener,
    created: Option<PathBuf>,
}

impl Bound {
    /// Removes the socket file this process created.
    pub fn cleanup(self) {
        drop(self.listener);
        if let Some(path) = self.created {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// The passed socket when `LISTEN_PID` is this process and `LISTEN_FDS` is at least 1, else a
/// socket bound at `path`.
pub fn bind(path: &Path) -> Result<Bound, Error> {
    if let Some(listener) = passed()? {
        return Ok(Bound { listener, created: None });
    }
    replace_stale(path)?;
    let previous = rustix::process::umask(rustix::fs::Mode::from_raw_mode(0o177));
    let listener = UnixListener::bind(path);
    rustix::process::umask(previous);
    let listener =
        listener.map_err(|e| Error::Usage(format!("cannot create the socket '{}': {e}", path.display())))?;
    Ok(Bound { listener, created: Some(path.to_path_buf()) })
}

/// systemd's first passed descriptor (fd 3), when it was passed to this process.
fn passed() -> Result<Option<UnixListener>, Error> {
    let for_me =
        std::env::var("LISTEN_PID").ok().and_then(|p| p.parse::<u32>().ok()) == Some(std::process::id());
    let count = std::env::var("LISTEN_FDS").ok().and_then(|n| n.parse::<u32>().ok()).unwrap_or(0);
    if !for_me || count == 0 {
        return Ok(None);
    }
    let fd = sys::take_listen_fd()
        .map_err(|e| Error::Usage(format!("LISTEN_FDS is set but descriptor 3 is not usable: {e}")))?;
    Ok(Some(UnixListener::from(fd)))
}

/// Removes a socket file nothing answers; refuses a live one and anything that is not a socket.
fn replace_stale(path: &Path) -> Result<(), Error> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::Usage(format!("cannot inspect '{}': {e}", path.display()))),
    };
    if !meta.file_type().is_socket() {
        return Err(Error::Usage(format!("'{}' exists and is not a socket", path.display())));
    }
    match UnixStream::connect(path) {
        Ok(_) => Err(Error::Usage(format!("another server answers on '{}'", path.display()))),
        Err(_) => std::fs::remove_file(path)
            .map_err(|e| Error::Usage(format!("cannot replace the stale socket '{}': {e}", path.display()))),
    }
}
