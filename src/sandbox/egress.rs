//! `--net proxy`: the only way out of the call's network namespace is hullward's egress proxy.
//! This module owns that path from end to end.
//!
//! Order: [`Pending::open`] (before the spawn: a `SOCK_SEQPACKET` pair, one end for the child) →
//! the child, right after bringing up `lo` in its fresh network namespace, binds and listens on
//! `127.0.0.1:PORT` there and hands the listening socket back over its end with `SCM_RIGHTS`
//! ([`Sys::hand_back_listener`](super::sys::Sys::hand_back_listener), a step of
//! [`child::apply`](super::child::apply)) → [`Pending::start`] (after the spawn) receives it and
//! starts the proxy on it. A socket stays in the namespace it was created in whoever holds it, so
//! the proxy accepts connections made inside the call's namespace while it connects out from the
//! host's. Because the child binds, this works the same for root and for a caller whose
//! namespaces come with a user namespace (non-root, a container's root) — no `setns` needed.
//!
//! The child's environment gets `HTTP(S)_PROXY`/`ALL_PROXY` ([`child_env`]); Landlock (ABI 4)
//! limits its TCP connects to the proxy's port, seccomp allows it TCP sockets.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};

use tokio::sync::mpsc;

use super::sys;
use crate::proxy::{self, ProxyConfig, ProxyEvent, ProxyHandle};

/// The port the egress proxy listens on inside the child's (otherwise empty) network namespace.
pub const PROXY_PORT: u16 = 3128;

/// The variables that point the child at the proxy.
pub fn child_env(port: u16) -> Vec<(String, String)> {
    proxy::child_env(port)
}

/// Why the egress proxy could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum EgressError {
    #[error("the egress proxy's channel to the call: {0}")]
    Channel(std::io::Error),
    #[error("the call did not hand back the egress proxy's listener: {0}")]
    Receive(std::io::Error),
    #[error("{0}")]
    Proxy(String),
}

/// The channel on which the child hands back its listener.
#[derive(Debug)]
pub struct Pending {
    ours: OwnedFd,
    theirs: OwnedFd,
}

/// The running egress proxy of one call and its event stream.
pub struct Egress {
    pub proxy: ProxyHandle,
    pub events: mpsc::Receiver<ProxyEvent>,
}

impl Pending {
    /// Opens the channel (both ends close-on-exec).
    pub fn open() -> Result<Pending, EgressError> {
        let (ours, theirs) = sys::seqpacket_pair().map_err(EgressError::Channel)?;
        Ok(Pending { ours, theirs })
    }

    /// The child's end (kept across the child's close-everything step).
    pub fn child_end(&self) -> RawFd {
        self.theirs.as_raw_fd()
    }

    /// After the spawn: receives the child's listener and starts the proxy on `runtime`.
    pub fn start(
        self,
        http: &crate::policy::HttpPolicy,
        runtime: &tokio::runtime::Runtime,
    ) -> Result<Egress, EgressError> {
        drop(self.theirs);
        let listener = sys::receive_fd(self.ours.as_raw_fd()).map_err(EgressError::Receive)?;
        let listener = std::net::TcpListener::from(listener);
        let _ = sys::raise_nofile_limit();
        let (tx, events) = mpsc::channel(256);
        let _entered = runtime.enter();
        let proxy = proxy::spawn(listener, ProxyConfig::new(http.clone()), tx)
            .map_err(|e| EgressError::Proxy(e.to_string()))?;
        Ok(Egress { proxy, events })
    }
}
