//! The URL guard (`check url`): judges an outbound request as written, without DNS.
//!
//! Order: parse the URL (authority up to the first `/ ? # \`, userinfo cut at the last `@`,
//! port after the last `:` outside brackets) → scheme (`http`, `https`, `ws`, `wss` only) →
//! private address (IP literals in every spelling, `localhost`, `*.localhost`; lifted only by
//! `AllowPrivateHosts`) → `HttpAllowedHosts` (exact names and `*.suffix`). The egress proxy repeats
//! the private check on the addresses a name resolves to (Decision 11).
//!
//! [`is_public_suffix`] answers, for the policy loader, whether a `*.name` entry would put a
//! wildcard on a public suffix (`*.co.uk`, `*.github.io`): it asks the Public Suffix List as the
//! `psl` crate compiles it in (ICANN and private sections, wildcard and exception rules), so a
//! suffix is refused whether or not anyone thought to list it here.

use super::ip::{parse_ip_literal, private_reason};
use super::Decision;
use crate::policy::{HostAllowlist, HttpPolicy};

/// The parts of a URL the guard needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub scheme: String,
    /// Lower-cased, without brackets or a trailing dot, percent-decoded.
    pub host: String,
    pub port: u16,
}

/// Parses `url`; the error says what is wrong with it.
pub fn parse(url: &str) -> Result<Target, String> {
    let url = url.trim();
    let (scheme, rest) = url.split_once("://").ok_or_else(|| format!("'{url}' has no scheme"))?;
    let scheme = scheme.to_ascii_lowercase();
    let end = rest.find(['/', '?', '#', '\\']).unwrap_or(rest.len());
    let authority = &rest[..end];
    let hostport = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let (host, port) = if let Some(inner) = hostport.strip_prefix('[') {
        let close = inner.find(']').ok_or_else(|| format!("'{url}' has an unterminated IPv6 literal"))?;
        let after = &inner[close + 1..];
        let port = match after.strip_prefix(':') {
            Some(p) => Some(p),
            None if after.is_empty() => None,
            None => return Err(format!("'{url}' has garbage after the IPv6 literal")),
        };
        (inner[..close].to_string(), port)
    } else {
        match hostport.rsplit_once(':') {
            Some((h, p)) => (h.to_string(), Some(p)),
            None => (hostport.to_string(), None),
        }
    };
    let default_port = match scheme.as_str() {
        "http" | "ws" => 80,
        "https" | "wss" => 443,
        _ => 0,
    };
    let port = match port {
        None | Some("") => default_port,
        Some(p) => p.parse::<u16>().map_err(|_| format!("'{url}' has an invalid port '{p}'"))?,
    };
    let host = percent_decode(&host)?.trim_end_matches('.').to_ascii_lowercase();
    if host.is_empty() {
        return Err(format!("'{url}' has no host"));
    }
    Ok(Target { scheme, host, port })
}

fn percent_decode(s: &str) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3).ok_or_else(|| format!("bad percent escape in '{s}'"))?;
            out.push(u8::from_str_radix(hex, 16).map_err(|_| format!("bad percent escape in '{s}'"))?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("host '{s}' is not valid UTF-8"))
}

/// Why `host` is internal (an IP literal in a private range, or a `localhost` name), if it is.
pub fn internal_host_reason(host: &str) -> Option<String> {
    if host == "localhost" || host.ends_with(".localhost") {
        return Some("a localhost name".to_string());
    }
    parse_ip_literal(host).and_then(|ip| private_reason(ip).map(|why| format!("in {why}")))
}

/// Whether `name` (lower-case, no trailing dot) is itself a public suffix: a name under which
/// unrelated owners register hosts. A single label is always one (the list's default `*` rule),
/// so an unlisted top-level name fails closed too.
pub fn is_public_suffix(name: &str) -> bool {
    psl::suffix(name.as_bytes()).is_some_and(|s| s.as_bytes() == name.as_bytes())
}

/// Decides a request to `url`.
pub fn check(http: &HttpPolicy, url: &str) -> Decision {
    if let Some((scheme, _)) = url.trim().split_once("://") {
        if !matches!(scheme.to_ascii_lowercase().as_str(), "http" | "https" | "ws" | "wss") {
            return Decision::deny(
                "url-scheme",
                format!("[DENIED] Scheme '{scheme}' is not permitted; only http and https requests are."),
            );
        }
    }
    let target = match parse(url) {
        Ok(t) => t,
        Err(why) => return Decision::deny("url-syntax", format!("[DENIED] Invalid URL: {why}.")),
    };
    check_host(http, &target.host)
}

/// Decides a request to `host` (already parsed and lower-cased).
pub fn check_host(http: &HttpPolicy, host: &str) -> Decision {
    if !http.allow_private {
        if let Some(why) = internal_host_reason(host) {
            return Decision::deny(
                "private-host",
                format!(
                    "[DENIED] Host '{host}' is {why}: requests to private, loopback and link-local addresses are blocked (AllowPrivateHosts is false)."
                ),
            );
        }
    }
    match &http.allowed {
        HostAllowlist::Unrestricted => Decision::allow("host-allowlist"),
        HostAllowlist::Only(list) if list.iter().any(|p| p.matches(host)) => Decision::allow("host-allowlist"),
        HostAllowlist::Only(list) if list.is_empty() => Decision::deny(
            "host-allowlist",
            format!("[DENIED] Host '{host}' is not permitted: HttpAllowedHosts expanded to an empty list, so no host is allowed."),
        ),
        HostAllowlist::Only(list) => Decision::deny(
            "host-allowlist",
            format!(
                "[DENIED] Host '{host}' is not in HttpAllowedHosts. Allowed: {}.",
                list.iter().map(|p| format!("'{p}'")).collect::<Vec<_>>().join(", ")
            ),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::Verdict;
    use crate::policy::HostPattern;

    fn policy(hosts: &[&str], allow_private: bool) -> HttpPolicy {
        HttpPolicy {
            allowed: if hosts.is_empty() {
                HostAllowlist::Unrestricted
            } else {
                HostAllowlist::Only(
                    hosts.iter().map(|h| crate::policy::load::parse_host_pattern(h).unwrap()).collect(),
                )
            },
            allow_private,
        }
    }

    #[test]
    fn parses_the_awkward_parts() {
        let t = parse("https://user:pw@API.GitHub.com.:8443/x?y#z").unwrap();
        assert_eq!((t.scheme.as_str(), t.host.as_str(), t.port), ("https", "api.github.com", 8443));
        assert_eq!(parse("http://allowed.example@evil.example/").unwrap().host, "evil.example");
        assert_eq!(parse("http://evil.example\\@allowed.example/").unwrap().host, "evil.example");
        assert_eq!(parse("http://[::1]:80/").unwrap().host, "::1");
        assert_eq!(parse("http://%6c%6fcalhost/").unwrap().host, "localhost");
        assert!(parse("nohost").is_err());
        assert!(parse("http://x:99999/").is_err());
    }

    #[test]
    fn allowlist_exact_and_wildcard() {
        let p = policy(&["api.github.com", "*.example.com"], false);
        assert!(check(&p, "https://api.github.com/repos").is_allowed());
        assert!(check(&p, "https://a.b.example.com/").is_allowed());
        let d = check(&p, "https://example.com/");
        assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Deny, "host-allowlist"));
        assert!(d.message.starts_with("[DENIED] Host 'example.com'"));
        assert!(!check(&p, "https://github.com/").is_allowed());
    }

    #[test]
    fn empty_list_is_unrestricted_but_private_is_still_blocked() {
        let p = policy(&[], false);
        assert!(check(&p, "https://anything.example/").is_allowed());
        for u in [
            "http://127.0.0.1/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://[::ffff:127.0.0.1]/",
            "http://169.254.169.254/latest/meta-data/",
            "http://localhost:8080/",
            "http://app.localhost/",
            "http://10.0.0.1/",
            "http://[fd00::1]/",
            "http://100.64.1.1/",
            "http://0.0.0.0/",
            "http://[::]/",
        ] {
            assert_eq!(check(&p, u).rule, "private-host", "{u}");
        }
    }

    #[test]
    fn allow_private_lifts_only_the_range_check() {
        let p = policy(&["localhost", "127.0.0.1"], true);
        assert!(check(&p, "http://localhost:3000/").is_allowed());
        assert!(check(&p, "http://127.0.0.1/").is_allowed());
        assert_eq!(check(&p, "http://10.0.0.1/").rule, "host-allowlist");
    }

    #[test]
    fn other_schemes_are_refused() {
        let p = policy(&[], false);
        for u in ["file:///etc/passwd", "ftp://example.com/", "gopher://example.com/"] {
            assert_eq!(check(&p, u).rule, "url-scheme", "{u}");
        }
    }

    #[test]
    fn public_suffixes_come_from_the_list() {
        // Listed before, and what the embedded sample used to miss: ICANN second-level names,
        // wildcard rules (`*.kawasaki.jp`), deeper names and the private section.
        for name in [
            "com",
            "co.uk",
            "gov.br",
            "ac.kr",
            "edu.pl",
            "k12.ca.us",
            "foo.kawasaki.jp",
            "github.io",
            "readthedocs.io",
            "myshopify.com",
            "s3.amazonaws.com",
            "unlistedtld",
        ] {
            assert!(is_public_suffix(name), "{name}");
        }
        // Registrable names, an exception rule (`!city.kawasaki.jp`) and a private name.
        for name in
            ["github.com", "example.co.uk", "city.kawasaki.jp", "build.internal.corp", "api.github.io"]
        {
            assert!(!is_public_suffix(name), "{name}");
        }
    }

    #[test]
    fn emptied_list_denies_everything() {
        let p = HttpPolicy { allowed: HostAllowlist::Only(vec![]), allow_private: false };
        assert_eq!(check(&p, "https://api.github.com/").verdict, Verdict::Deny);
        let p = HttpPolicy {
            allowed: HostAllowlist::Only(vec![HostPattern::Exact("x.example".into())]),
            allow_private: false,
        };
        assert!(check(&p, "http://X.Example./").is_allowed());
    }
}
