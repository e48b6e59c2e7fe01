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
//! A token or value runs until whitespace, a quote, `&`, `,` or `;`.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::bytes::{NoExpand, Regex};

/// What a matched credential becomes.
pub const REDACTED: &[u8] = b"[REDACTED]";

static PATTERNS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?-u)sk-[A-Za-z0-9_-]{20,}",
        r"|(?i-u)bearer[ \t]+[^\s'\x22&,;]+",
        r"|(?i-u)(?:api_key|token|secret)=[^\s'\x22&,;]+",
    ))
    .expect("the constant log patterns compile")
});

/// `text` with every match of the log patterns replaced by `[REDACTED]`.
pub fn redact(text: &[u8]) -> Cow<'_, [u8]> {
    PATTERNS.replace_all(text, NoExpand(REDACTED))
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
}
