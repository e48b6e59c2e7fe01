//! The request-target of a proxy request, turned into the host and port to decide on.
//!
//! Two forms reach a forward proxy (RFC 9112 §3.2): CONNECT's authority-form `host:port` and the
//! absolute-form `http://host[:port]/path` of plain HTTP. Anything else (origin-form, `*`,
//! `https://` without CONNECT, userinfo, fragments, percent-encoded or non-DNS characters in a
//! name) is refused here, before the policy sees it. An IP literal is recognised in every spelling
//! `inet_aton` accepts (`0x7f.1`, `2130706433`) and in IPv4-mapped IPv6, and is kept as the
//! address itself: it is never handed to the resolver, so the address checked is the address
//! connected to.

use std::fmt;
use std::net::{IpAddr, Ipv6Addr};

use crate::guard::ip::parse_ipv4_loose;

/// Why a request-target is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    #[error("'{0}' is not an absolute http:// URI (a proxy request needs one; use CONNECT for https)")]
    NotAbsolute(String),
    #[error("'{0}' is not host:port (CONNECT needs both)")]
    NotAuthority(String),
    #[error("'{0}' carries user information")]
    UserInfo(String),
    #[error("'{0}' carries a fragment")]
    Fragment(String),
    #[error("'{0}' is not a valid host name or IP literal")]
    Host(String),
    #[error("'{0}' is not a valid port")]
    Port(String),
}

/// The host of a target: a DNS name (lower-case, no trailing dot) or an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Host {
    Name(String),
    Ip(IpAddr),
}

impl fmt::Display for Host {
    /// The host as the URL guard and messages write it: names as they are, addresses canonical,
    /// IPv6 without brackets.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Host::Name(n) => f.write_str(n),
            Host::Ip(ip) => write!(f, "{ip}"),
        }
    }
}

/// Where a request goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub host: Host,
    pub port: u16,
    /// The origin-form (`/path?query`) for plain HTTP; empty for CONNECT.
    pub path: String,
}

impl Target {
    /// The value of the `Host` header sent upstream: the port only when not 80.
    pub fn authority(&self) -> String {
        let host = match &self.host {
            Host::Ip(IpAddr::V6(v6)) => format!("[{v6}]"),
            other => other.to_string(),
        };
        if self.port == 80 {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// Parses CONNECT's authority-form.
pub fn parse_authority(text: &str) -> Result<Target, TargetError> {
    let (host, port) = split_host_port(text).ok_or_else(|| TargetError::NotAuthority(text.to_string()))?;
    let port = port.ok_or_else(|| TargetError::NotAuthority(text.to_string()))?;
    Ok(Target { host: parse_host(host)?, port: parse_port(port)?, path: String::new() })
}

/// Parses the absolute-form of a plain-HTTP proxy request.
pub fn parse_absolute(text: &str) -> Result<Target, TargetError> {
    let scheme_end = text.find("://").ok_or_else(|| TargetError::NotAbsolute(text.to_string()))?;
    if !text[..scheme_end].eq_ignore_ascii_case("http") {
        return Err(TargetError::NotAbsolute(text.to_string()));
    }
    if text.contains('#') {
        return Err(TargetError::Fragment(text.to_string()));
    }
    let rest = &text[scheme_end + 3..];
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(split);
    if authority.contains('@') {
        return Err(TargetError::UserInfo(text.to_string()));
    }
    let (host, port) = split_host_port(authority).ok_or_else(|| TargetError::Host(authority.to_string()))?;
    let port = match port {
        None | Some("") => 80,
        Some(p) => parse_port(p)?,
    };
    let path = if path.starts_with('/') { path.to_string() } else { format!("/{path}") };
    Ok(Target { host: parse_host(host)?, port, path })
}

/// Splits `host[:port]` with a bracketed IPv6 host; `None` when the brackets are broken.
fn split_host_port(text: &str) -> Option<(&str, Option<&str>)> {
    if let Some(inner) = text.strip_prefix('[') {
        let close = inner.find(']')?;
        let after = &inner[close + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return None,
        };
        return Some((&text[..close + 2], port));
    }
    Some(match text.rsplit_once(':') {
        Some((h, p)) => (h, Some(p)),
        None => (text, None),
    })
}

fn parse_port(text: &str) -> Result<u16, TargetError> {
    match text.parse::<u16>() {
        Ok(p) if p != 0 && text.bytes().all(|b| b.is_ascii_digit()) => Ok(p),
        _ => Err(TargetError::Port(text.to_string())),
    }
}

fn parse_host(text: &str) -> Result<Host, TargetError> {
    let bad = || TargetError::Host(text.to_string());
    if let Some(inner) = text.strip_prefix('[') {
        let v6: Ipv6Addr = inner.strip_suffix(']').ok_or_else(bad)?.parse().map_err(|_| bad())?;
        return Ok(Host::Ip(IpAddr::V6(v6).to_canonical()));
    }
    let name = text.strip_suffix('.').unwrap_or(text).to_ascii_lowercase();
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    };
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(bad());
    }
    Ok(match parse_ipv4_loose(&name) {
        Some(v4) => Host::Ip(IpAddr::V4(v4)),
        None => Host::Name(name),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn ip(s: &str) -> Host {
        Host::Ip(s.parse().unwrap())
    }

    #[test]
    fn authority_form() {
        let t = parse_authority("Registry.Example.:443").unwrap();
        assert_eq!((t.host, t.port), (Host::Name("registry.example".into()), 443));
        assert_eq!(parse_authority("[::ffff:10.0.0.1]:80").unwrap().host, ip("10.0.0.1"));
        assert_eq!(parse_authority("[2001:db8::1]:443").unwrap().host, ip("2001:db8::1"));
        assert_eq!(parse_authority("0x7f.1:22").unwrap().host, Host::Ip(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        assert_eq!(parse_authority("3325256714:443").unwrap().host, ip("198.51.100.10"));
        for bad in [
            "registry.example",
            "registry.example:",
            "registry.example:0",
            "registry.example:65536",
            "registry.example:+1",
            "[::1]",
            "[::1]x:1",
            "[fe80::1%25eth0]:1",
            "a b:1",
            "a%2eb:1",
            "a..b:1",
            "user@a:1",
            ":443",
        ] {
            assert!(parse_authority(bad).is_err(), "{bad}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2048))]
        #[test]
        fn parsing_never_panics(text in "[\\[\\]:@/?#%.a-z0-9xX\\\\ -]{0,40}") {
            for t in [parse_authority(&text), parse_absolute(&format!("http://{text}"))].into_iter().flatten() {
                let _ = t.authority();
                proptest::prop_assert!(t.port != 0);
            }
        }
    }

    #[test]
    fn absolute_form() {
        let t = parse_absolute("http://Registry.example:8080/simple/?q=1").unwrap();
        assert_eq!(
            (t.port, t.path.as_str(), t.authority()),
            (8080, "/simple/?q=1", "registry.example:8080".into())
        );
        let t = parse_absolute("HTTP://registry.example?x").unwrap();
        assert_eq!((t.port, t.path.as_str(), t.authority()), (80, "/?x", "registry.example".into()));
        assert_eq!(parse_absolute("http://[::1]:81/").unwrap().authority(), "[::1]:81");
        assert_eq!(parse_absolute("http://a.example:/").unwrap().port, 80);
        assert!(matches!(parse_absolute("/relative"), Err(TargetError::NotAbsolute(_))));
        assert!(matches!(parse_absolute("https://a.example/"), Err(TargetError::NotAbsolute(_))));
        assert!(matches!(parse_absolute("http://a@evil.example/"), Err(TargetError::UserInfo(_))));
        assert!(matches!(parse_absolute("http://a.example/#x"), Err(TargetError::Fragment(_))));
        assert!(matches!(parse_absolute("http://evil.example\\@a.example/"), Err(TargetError::UserInfo(_))));
        assert!(matches!(parse_absolute("http://evil.example\\.a.example/"), Err(TargetError::Host(_))));
        assert!(matches!(parse_absolute("http:///x"), Err(TargetError::Host(_))));
    }
}
