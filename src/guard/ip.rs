//! Which addresses are "internal": the private, loopback, link-local and otherwise non-public
//! ranges of the seed's table and Decision 11, in every spelling an attacker might use.
//!
//! Used twice: by `check url` on IP literals as written (no DNS), and by the egress proxy on every
//! address a name resolves to, just before it connects. [`parse_ipv4_loose`] reads IPv4 the way
//! `inet_aton` and URL parsers do (`127.1`, `0x7f000001`, `2130706433`, `0177.0.0.1`), so that a
//! literal cannot hide behind an unusual spelling; IPv6 forms that embed an IPv4 address
//! (mapped, compatible, NAT64, 6to4, Teredo) are judged by the embedded address.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Why an address is not public, for messages.
pub fn private_reason(ip: IpAddr) -> Option<&'static str> {
    match ip {
        IpAddr::V4(v4) => private_reason_v4(v4),
        IpAddr::V6(v6) => private_reason_v6(v6),
    }
}

/// True when the address belongs to a range that must not be reached without `AllowPrivateHosts`.
pub fn is_private(ip: IpAddr) -> bool {
    private_reason(ip).is_some()
}

fn in_v4(ip: Ipv4Addr, net: [u8; 4], prefix: u32) -> bool {
    let mask = if prefix == 0 { 0 } else { u32::MAX << (32 - prefix) };
    (u32::from(ip) & mask) == (u32::from(Ipv4Addr::from(net)) & mask)
}

fn private_reason_v4(ip: Ipv4Addr) -> Option<&'static str> {
    const RANGES: &[([u8; 4], u32, &str)] = &[
        ([0, 0, 0, 0], 8, "the unspecified / this-network range 0.0.0.0/8"),
        ([10, 0, 0, 0], 8, "the private range 10.0.0.0/8"),
        ([100, 64, 0, 0], 10, "the carrier-grade NAT range 100.64.0.0/10"),
        ([127, 0, 0, 0], 8, "the loopback range 127.0.0.0/8"),
        ([169, 254, 0, 0], 16, "the link-local range 169.254.0.0/16 (cloud metadata)"),
        ([172, 16, 0, 0], 12, "the private range 172.16.0.0/12"),
        ([192, 0, 0, 0], 24, "the IETF protocol range 192.0.0.0/24"),
        ([192, 168, 0, 0], 16, "the private range 192.168.0.0/16"),
        ([198, 18, 0, 0], 15, "the benchmarking range 198.18.0.0/15"),
        ([224, 0, 0, 0], 4, "the multicast range 224.0.0.0/4"),
        ([240, 0, 0, 0], 4, "the reserved range 240.0.0.0/4"),
    ];
    RANGES.iter().find(|(net, p, _)| in_v4(ip, *net, *p)).map(|(_, _, why)| *why)
}

fn private_reason_v6(ip: Ipv6Addr) -> Option<&'static str> {
    let seg = ip.segments();
    if ip.is_unspecified() {
        return Some("the unspecified address ::");
    }
    if ip.is_loopback() {
        return Some("the IPv6 loopback ::1");
    }
    if let Some(v4) = embedded_v4(ip) {
        return private_reason_v4(v4);
    }
    match seg[0] {
        s if s & 0xffc0 == 0xfe80 => Some("the IPv6 link-local range fe80::/10"),
        s if s & 0xffc0 == 0xfec0 => Some("the IPv6 site-local range fec0::/10"),
        s if s & 0xfe00 == 0xfc00 => Some("the IPv6 unique-local range fc00::/7"),
        s if s & 0xff00 == 0xff00 => Some("the IPv6 multicast range ff00::/8"),
        0x0100 if seg[1..4] == [0, 0, 0] => Some("the IPv6 discard range 100::/64"),
        0x2001 if seg[1] == 0x0db8 => Some("the IPv6 documentation range 2001:db8::/32"),
        _ => None,
    }
}

/// The IPv4 address carried inside an IPv6 one: IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible
/// (`::a.b.c.d`), NAT64 (`64:ff9b::/96`), 6to4 (`2002:AABB:CCDD::/48`) and Teredo (`2001::/32`,
/// client address inverted in the last 32 bits).
pub fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    let s = ip.segments();
    let last = |a: u16, b: u16| Ipv4Addr::new((a >> 8) as u8, a as u8, (b >> 8) as u8, b as u8);
    if s[..5] == [0; 5] && (s[5] == 0xffff || s[5] == 0) {
        return Some(last(s[6], s[7]));
    }
    if s[..6] == [0x64, 0xff9b, 0, 0, 0, 0] {
        return Some(last(s[6], s[7]));
    }
    if s[0] == 0x2002 {
        return Some(last(s[1], s[2]));
    }
    if s[0] == 0x2001 && s[1] == 0 {
        return Some(last(!s[6], !s[7]));
    }
    None
}

/// Parses IPv4 the way `inet_aton` does: one to four parts, each decimal, octal (leading `0`) or
/// hex (`0x`), the last part filling the remaining bytes. `None` when it is not such a literal.
pub fn parse_ipv4_loose(text: &str) -> Option<Ipv4Addr> {
    let text = text.strip_suffix('.').unwrap_or(text);
    let parts: Vec<&str> = text.split('.').collect();
    if parts.is_empty() || parts.len() > 4 {
        return None;
    }
    let mut nums = Vec::with_capacity(parts.len());
    for p in &parts {
        nums.push(parse_part(p)?);
    }
    let (head, tail) = nums.split_at(nums.len() - 1);
    let mut value: u64 = 0;
    for (i, n) in head.iter().enumerate() {
        if *n > 255 {
            return None;
        }
        value |= n << (24 - 8 * i);
    }
    let room_bits = 32 - 8 * head.len() as u32;
    if tail[0] >= (1u64 << room_bits) {
        return None;
    }
    value |= tail[0];
    Some(Ipv4Addr::from(value as u32))
}

fn parse_part(p: &str) -> Option<u64> {
    if p.is_empty() {
        return None;
    }
    let (digits, radix) = if let Some(h) = p.strip_prefix("0x").or_else(|| p.strip_prefix("0X")) {
        (h, 16)
    } else if p.len() > 1 && p.starts_with('0') {
        (&p[1..], 8)
    } else {
        (p, 10)
    };
    if digits.is_empty() {
        return (radix == 16).then_some(0);
    }
    if digits.len() > 12 {
        return None;
    }
    u64::from_str_radix(digits, radix).ok()
}

/// Parses a host as written in a URL into an address, accepting every IPv4 spelling and bracketed
/// or bare IPv6 (with a zone index removed).
pub fn parse_ip_literal(host: &str) -> Option<IpAddr> {
    let h = host.trim_start_matches('[').trim_end_matches(']');
    let h = h.split('%').next().unwrap_or(h);
    if let Ok(v6) = h.parse::<Ipv6Addr>() {
        return Some(IpAddr::V6(v6));
    }
    parse_ipv4_loose(h).map(IpAddr::V4)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn private(s: &str) -> bool {
        is_private(parse_ip_literal(s).unwrap_or_else(|| panic!("not an ip: {s}")))
    }

    #[test]
    fn seed_table_ranges_are_private() {
        for s in [
            "127.0.0.1",
            "127.255.255.254",
            "10.1.2.3",
            "172.16.0.1",
            "172.31.255.255",
            "192.168.1.1",
            "169.254.169.254",
            "::1",
            "fe80::1",
            "fc00::1",
            "fd12:3456::1",
            "100.64.0.1",
            "100.100.100.200",
            "0.0.0.0",
            "::",
            "224.0.0.1",
            "255.255.255.255",
        ] {
            assert!(private(s), "{s}");
        }
    }

    #[test]
    fn public_neighbours_are_not() {
        for s in [
            "8.8.8.8",
            "172.15.255.255",
            "172.32.0.0",
            "192.169.0.1",
            "100.63.255.255",
            "100.128.0.0",
            "169.253.255.255",
            "11.0.0.1",
            "198.51.100.7",
            "203.0.113.9",
            "2606:4700::1111",
            "fe7f::1",
        ] {
            assert!(!private(s), "{s}");
        }
    }

    #[test]
    fn every_ipv4_spelling_of_loopback_is_caught() {
        for s in [
            "2130706433",
            "0x7f000001",
            "0X7F000001",
            "017700000001",
            "0177.0.0.1",
            "127.1",
            "127.0.1",
            "0x7f.1",
            "0x7f.0.0.0x1",
            "127.0.0.1.",
            "0",
        ] {
            assert!(private(s), "{s}");
        }
        assert_eq!(parse_ipv4_loose("0x7f.1"), Some(Ipv4Addr::new(127, 0, 0, 1)));
        assert_eq!(parse_ipv4_loose("256.0.0.1"), None);
        assert_eq!(parse_ipv4_loose("1.2.3.4.5"), None);
        assert_eq!(parse_ipv4_loose("example.com"), None);
        assert_eq!(parse_ipv4_loose("08.0.0.1"), None);
    }

    #[test]
    fn ipv6_forms_that_embed_ipv4_are_judged_by_it() {
        for s in [
            "::ffff:127.0.0.1",
            "[::ffff:7f00:1]",
            "::127.0.0.1",
            "64:ff9b::a9fe:a9fe",
            "2002:c0a8:0101::1",
            "2001:0:4136:e378:8000:63bf:80ff:fffe",
            "fe80::1%eth0",
        ] {
            assert!(private(s), "{s}");
        }
        assert!(!private("::ffff:8.8.8.8"));
        assert!(!private("2002:0808:0808::1"));
    }
}
