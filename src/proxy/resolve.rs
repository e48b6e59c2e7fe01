//! Name resolution, done once per request by the proxy itself.
//!
//! The child has no DNS of its own; the proxy resolves the name, and [`crate::proxy::policy`]
//! checks every address before any is used. The addresses returned here are the only ones the
//! connect step may use — there is no second lookup, so a name cannot answer a public address to
//! the check and a private one to the connect (DNS rebinding).
//!
//! [`Resolver::System`] is the production path: `getaddrinfo` through tokio's blocking pool, so
//! `/etc/hosts` and `/etc/resolv.conf` of the supervisor's mount namespace apply.
//! [`Resolver::Static`] answers from a fixed table, for a caller that has pinned names already.

use std::collections::HashMap;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

/// Where host names are looked up.
#[derive(Debug, Clone, Default)]
pub enum Resolver {
    /// The system resolver (`getaddrinfo`): `/etc/hosts`, then DNS per `/etc/nsswitch.conf`.
    #[default]
    System,
    /// Fixed answers; a name missing from the table does not resolve.
    Static(HashMap<String, Vec<IpAddr>>),
}

/// Why a name gave no address.
#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error("{0}")]
    Lookup(#[source] io::Error),
    #[error("no address found")]
    NoAddress,
    #[error("no answer within {0:?}")]
    Timeout(Duration),
}

impl Resolver {
    /// The addresses of `name` with `port`, canonical (IPv4-mapped IPv6 as IPv4), without
    /// duplicates, in the resolver's order of preference.
    pub async fn lookup(
        &self,
        name: &str,
        port: u16,
        limit: Duration,
    ) -> Result<Vec<SocketAddr>, ResolveError> {
        let found: Vec<SocketAddr> = match self {
            Resolver::System => {
                let lookup = tokio::net::lookup_host((name, port));
                tokio::time::timeout(limit, lookup)
                    .await
                    .map_err(|_| ResolveError::Timeout(limit))?
                    .map_err(ResolveError::Lookup)?
                    .collect()
            }
            Resolver::Static(table) => {
                table.get(name).into_iter().flatten().map(|ip| SocketAddr::new(*ip, port)).collect()
            }
        };
        let mut addrs: Vec<SocketAddr> = Vec::with_capacity(found.len());
        for addr in found {
            let addr = SocketAddr::new(addr.ip().to_canonical(), addr.port());
            if !addrs.contains(&addr) {
                addrs.push(addr);
            }
        }
        if addrs.is_empty() {
            return Err(ResolveError::NoAddress);
        }
        Ok(addrs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn static_answers_are_canonical_and_unique() {
        let table = HashMap::from([(
            "a.example".to_string(),
            vec!["::ffff:198.51.100.1".parse().unwrap(), "198.51.100.1".parse().unwrap()],
        )]);
        let r = Resolver::Static(table);
        let got = r.lookup("a.example", 443, Duration::from_secs(1)).await.unwrap();
        assert_eq!(got, vec!["198.51.100.1:443".parse::<SocketAddr>().unwrap()]);
        assert!(matches!(
            r.lookup("b.example", 443, Duration::from_secs(1)).await,
            Err(ResolveError::NoAddress)
        ));
    }

    #[tokio::test]
    async fn the_system_resolver_reads_etc_hosts() {
        let got = Resolver::System.lookup("localhost", 80, Duration::from_secs(5)).await.unwrap();
        assert!(got.iter().all(|a| a.ip().is_loopback() && a.port() == 80), "{got:?}");
    }
}
