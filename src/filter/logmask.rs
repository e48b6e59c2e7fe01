//! The log patterns: credentials that look like credentials are redacted from hullward's own logs
//! and audit records even when they are in no [`SecretSet`](super::SecretSet) (a provider's key in an
//! error body, a token in a URL someone typed).
//!
//! The seed's three patterns, each replaced whole by `[REDACTED]`:
//!
//! | pattern | example |
//! |---|---|
//! | `sk-[A-Za-z0-9_-]{20,}` | `sk-ant-api03-abc123…` |
//! | `(?i)bearer <token>` | `Bearer eyJhbGc…` |
//! | `(?i)(api_key\|token\|secret)=<value>` | `api_key=supersecret` |
//!
//! A token or value runs until whitespace, a quote, `&`, `,` or `;`. The patterns are matched by a
//! small scanner rather than a regex: every process that writes an audit record would otherwise
//! pay for compiling one.

use std::borrow::Cow;

/// What a matched credential becomes.
pub const REDACTED: &[u8] = b"[REDACTED]";

/// Bytes that end a bearer token or a `key=` value: whitespace, quotes, `&`, `,`, `;`.
fn ends_value(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r' | b'\'' | b'"' | b'&' | b',' | b';')
}

fn is_key_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'-'
}

/// Length of a match of one of the patterns starting at `text[at..]`, trying them in order.
fn match_at(text: &[u8], at: usize) -> Option<usize> {
    let rest = &text[at..];
    if let Some(key) = rest.strip_prefix(b"sk-") {
        let n = key.iter().take_while(|b| is_key_char(**b)).count();
        if n >= 20 {
            return Some(3 + n);
        }
    }
    if rest.len() > 6 && rest[..6].eq_ignore_ascii_case(b"bearer") {
        let blanks = rest[6..].iter().take_while(|b| matches!(b, b' ' | b'\t')).count();
        let token = rest[6 + blanks..].iter().take_while(|b| !ends_value(**b)).count();
        if blanks > 0 && token > 0 {
            return Some(6 + blanks + token);
        }
    }
    for name in [&b"api_key="[..], b"token=", b"secret="] {
        if rest.len() > name.len() && rest[..name.len()].eq_ignore_ascii_case(name) {
            let value = rest[name.len()..].iter().take_while(|b| !ends_value(**b)).count();
            if value > 0 {
                return Some(name.len() + value);
            }
        }
    }
    None
}

/// `text` with every match of the log patterns replaced by `[REDACTED]`: scanned left to right,
/// the first pattern that matches at a position wins, matches do not overlap.
pub fn redact(text: &[u8]) -> Cow<'_, [u8]> {
    let mut out: Option<Vec<u8>> = None;
    let (mut i, mut copied) = (0, 0);
    while i < text.len() {
        // Every pattern starts with `s`, `b`, `a` or `t` (either case).
        if matches!(text[i] | 0x20, b's' | b'b' | b'a' | b't') {
            if let Some(len) = match_at(text, i) {
                let o = out.get_or_insert_with(|| Vec::with_capacity(text.len()));
                o.extend_from_slice(&text[copied..i]);
                o.extend_from_slice(REDACTED);
                i += len;
                copied = i;
                continue;
            }
        }
        i += 1;
    }
    match out {
        None => Cow::Borrowed(text),
        Some(mut o) => {
            o.extend_from_slice(&text[copied..]);
            Cow::Owned(o)
        }
    }
}

/// [`redact`] for a string. Matches start and end on ASCII bytes, so valid UTF-8 stays valid.
pub fn redact_str(text: &str) -> Cow<'_, str> {
    match redact(text.as_bytes()) {
        Cow::Borrowed(_) => Cow::Borrowed(text),
        Cow::Owned(v) => Cow::Owned(String::from_utf8_lossy(&v).into_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(s: &str) -> String {
        redact_str(s).into_owned()
    }

    #[test]
    fn the_three_patterns() {
        assert_eq!(r("key sk-ant-api03-abcdefghij0123456789 end"), "key [REDACTED] end");
        assert_eq!(r("Authorization: Bearer eyJhbGc.x.y"), "Authorization: [REDACTED]");
        assert_eq!(r("authorization: BEARER abc"), "authorization: [REDACTED]");
        assert_eq!(r("GET /x?api_key=supersecret&page=2"), "GET /x?[REDACTED]&page=2");
        assert_eq!(r("TOKEN=abc SECRET=\"x\""), "[REDACTED] SECRET=\"x\"");
        assert_eq!(r("access_token=abc"), "access_[REDACTED]");
    }

    #[test]
    fn ordinary_text_is_untouched() {
        for s in ["sk-short", "bearer", "token = spaced", "a secret plan", "café"] {
            assert!(matches!(redact_str(s), Cow::Borrowed(_)), "{s}");
        }
        assert_eq!(r("token=vålue ok"), "[REDACTED] ok");
    }

    #[test]
    fn edges_of_each_pattern() {
        assert_eq!(r("sk-0123456789012345678"), "sk-0123456789012345678", "19 characters");
        assert_eq!(
            r("task-01234567890123456789x"),
            "ta[REDACTED]",
            "no word boundary, like the seed's regex"
        );
        assert_eq!(r("bearer\tabc;next"), "[REDACTED];next");
        assert_eq!(r("bearerabc"), "bearerabc");
        assert_eq!(r("Bearer  "), "Bearer  ");
        assert_eq!(r("api_key=; token="), "api_key=; token=");
        assert_eq!(r("x SECRET=a,b"), "x [REDACTED],b");
    }
}
