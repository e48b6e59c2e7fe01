//! The egress decision for one request: which addresses, if any, the proxy may connect to.
//!
//! Order (the first check that fails names the rule): the port (`proxy-port`), then the host as
//! written through the URL guard's [`check_host`] (`private-host` for a private IP literal or a
//! `localhost` name, `host-allowlist` for `HttpAllowedHosts`), then — for a name — one lookup
//! and the private-range check of *every* address it gave (`private-resolved`): a name with any
//! private address is refused as a whole, it is not trimmed to its public ones, because the
//! answer shows that the name points inside. `AllowPrivateHosts` lifts both private checks and
//! nothing else. What comes out is the list of addresses to try, in order; nothing else may be
//! connected to.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::ops::RangeInclusive;
use std::time::Duration;

use super::resolve::{ResolveError, Resolver};
use super::target::{Host, Target};
use crate::guard::ip::private_reason;
use crate::guard::url::check_host;
use crate::guard::Decision;
use crate::policy::HttpPolicy;

/// Why no connection may be made.
#[derive(Debug, thiserror::Error)]
pub enum Refusal {
    /// A policy denial, with the contract's `[DENIED]` text.
    #[error("{}", .0.message)]
    Denied(Decision),
    #[error("cannot resolve '{host}': {source}")]
    Unresolved {
        host: String,
        #[source]
        source: ResolveError,
    },
}

/// Decides `target`; on success, the checked addresses to connect to.
pub async fn admit(
    http: &HttpPolicy,
    ports: &[RangeInclusive<u16>],
    resolver: &Resolver,
    resolve_timeout: Duration,
    target: &Target,
) -> Result<(Decision, Vec<SocketAddr>), Refusal> {
    let host = target.host.to_string();
    if !ports.iter().any(|r| r.contains(&target.port)) {
        return Err(Refusal::Denied(Decision::deny(
            "proxy-port",
            format!(
                "[DENIED] Port {} of '{host}' is not permitted: the egress proxy allows ports {}.",
                target.port,
                describe_ports(ports)
            ),
        )));
    }
    let decision = check_host(http, &host);
    if !decision.is_allowed() {
        return Err(Refusal::Denied(decision));
    }
    let addrs = match &target.host {
        Host::Ip(ip) => vec![SocketAddr::new(*ip, target.port)],
        Host::Name(name) => resolver
            .lookup(name, target.port, resolve_timeout)
            .await
            .map_err(|source| Refusal::Unresolved { host: host.clone(), source })?,
    };
    if !http.allow_private {
        if let Some(denial) = check_resolved(&host, &addrs) {
            return Err(Refusal::Denied(denial));
        }
    }
    Ok((decision, addrs))
}

/// The denial for the first private address among those `host` resolved to, if any.
pub fn check_resolved(host: &str, addrs: &[SocketAddr]) -> Option<Decision> {
    addrs.iter().find_map(|a| private_reason(a.ip()).map(|why| (a.ip(), why))).map(|(ip, why)| {
        Decision::deny(
            "private-resolved",
            format!(
                "[DENIED] Host '{host}' resolves to {ip}, in {why}: requests to private, loopback and link-local addresses are blocked (AllowPrivateHosts is false)."
            ),
        )
    })
}

fn describe_ports(ports: &[RangeInclusive<u16>]) -> String {
    let mut out = String::new();
    for (i, r) in ports.iter().enumerate() {
        let sep = match i {
            0 => "",
            _ if i + 1 == ports.len() => " and ",
            _ => ", ",
        };
        out.push_str(sep);
        if r.start() == r.end() {
            let _ = write!(out, "{}", r.start());
        } else {
            let _ = write!(out, "{}-{}", r.start(), r.end());
        }
    }
    if out.is_empty() {
        out.push_str("none");
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::guard::Verdict;
    use crate::policy::HostAllowlist;
    use crate::proxy::DEFAULT_PORTS;

    fn http(hosts: &[&str], allow_private: bool) -> HttpPolicy {
        let list = hosts.iter().map(|h| crate::policy::load::parse_host_pattern(h).unwrap()).collect();
        HttpPolicy { allowed: HostAllowlist::Only(list), allow_private }
    }

    fn resolver() -> Resolver {
        let ips = |v: &[&str]| v.iter().map(|s| s.parse().unwrap()).collect::<Vec<_>>();
        Resolver::Static(HashMap::from([
            ("pub.lab.example".to_string(), ips(&["198.51.100.10"])),
            ("mixed.lab.example".to_string(), ips(&["198.51.100.10", "10.66.0.5"])),
            ("mapped.lab.example".to_string(), ips(&["::ffff:169.254.169.254"])),
        ]))
    }

    async fn decide(http: &HttpPolicy, target: &str) -> Result<(Decision, Vec<SocketAddr>), Refusal> {
        let t = crate::proxy::target::parse_authority(target).unwrap();
        admit(http, DEFAULT_PORTS, &resolver(), Duration::from_secs(1), &t).await
    }

    fn rule(r: Result<(Decision, Vec<SocketAddr>), Refusal>) -> String {
        match r {
            Err(Refusal::Denied(d)) => {
                assert_eq!(d.verdict, Verdict::Deny);
                assert!(d.message.starts_with("[DENIED] "), "{}", d.message);
                d.rule
            }
            Err(Refusal::Unresolved { .. }) => "unresolved".into(),
            Ok(_) => "allowed".into(),
        }
    }

    #[tokio::test]
    async fn order_of_checks() {
        let p = http(&["*.lab.example", "198.51.100.10"], false);
        let (d, addrs) = decide(&p, "pub.lab.example:443").await.unwrap();
        assert_eq!((d.rule.as_str(), addrs), ("host-allowlist", vec!["198.51.100.10:443".parse().unwrap()]));
        assert_eq!(rule(decide(&p, "pub.lab.example:25").await), "proxy-port");
        assert_eq!(rule(decide(&p, "lab.example:443").await), "host-allowlist");
        assert_eq!(rule(decide(&p, "mixed.lab.example:443").await), "private-resolved");
        assert_eq!(rule(decide(&p, "mapped.lab.example:443").await), "private-resolved");
        assert_eq!(rule(decide(&p, "gone.lab.example:443").await), "unresolved");
        assert_eq!(rule(decide(&p, "[::ffff:198.51.100.10]:443").await), "allowed");
        assert_eq!(rule(decide(&p, "0x7f.1:8080").await), "private-host");
        assert_eq!(rule(decide(&p, "localhost:8080").await), "private-host");
    }

    #[tokio::test]
    async fn allow_private_lifts_only_the_range_checks() {
        let p = http(&["mixed.lab.example", "10.66.0.5"], true);
        let (_, addrs) = decide(&p, "mixed.lab.example:80").await.unwrap();
        assert_eq!(addrs.len(), 2);
        assert_eq!(rule(decide(&p, "10.66.0.5:80").await), "allowed");
        assert_eq!(rule(decide(&p, "pub.lab.example:80").await), "host-allowlist");
        assert_eq!(rule(decide(&p, "mixed.lab.example:22").await), "proxy-port");
    }

    #[test]
    fn messages_name_the_address_and_the_range() {
        let d = check_resolved("internal.example", &["10.66.0.5:80".parse().unwrap()]).unwrap();
        assert_eq!(
            d.message,
            "[DENIED] Host 'internal.example' resolves to 10.66.0.5, in the private range 10.0.0.0/8: requests to private, loopback and link-local addresses are blocked (AllowPrivateHosts is false)."
        );
        assert_eq!(describe_ports(DEFAULT_PORTS), "80, 443 and 1024-65535");
        assert_eq!(describe_ports(&[]), "none");
    }
}
