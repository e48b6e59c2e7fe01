//! Durations as users write them: `30s`, `5m`, `1h30m`, `250ms`, or a bare number of seconds.

use std::time::Duration;

/// Parses a duration; `None` when the text is not one. Zero is rejected (a zero timeout would
/// kill every call before it starts).
pub fn parse(text: &str) -> Option<Duration> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    if let Ok(secs) = text.parse::<u64>() {
        return (secs > 0).then(|| Duration::from_secs(secs));
    }
    let mut total = Duration::ZERO;
    let mut rest = text;
    while !rest.is_empty() {
        let digits = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
        if digits == 0 {
            return None;
        }
        let n: u64 = rest[..digits].parse().ok()?;
        rest = &rest[digits..];
        let unit_len = rest.find(|c: char| c.is_ascii_digit()).unwrap_or(rest.len());
        let unit = match &rest[..unit_len] {
            "ms" => Duration::from_millis(n),
            "s" => Duration::from_secs(n),
            "m" => Duration::from_secs(n.checked_mul(60)?),
            "h" => Duration::from_secs(n.checked_mul(3600)?),
            _ => return None,
        };
        total = total.checked_add(unit)?;
        rest = &rest[unit_len..];
    }
    (total > Duration::ZERO).then_some(total)
}

/// Formats a duration the way [`parse`] reads it.
pub fn format(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(3_600_000) {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_compounds() {
        assert_eq!(parse("30s"), Some(Duration::from_secs(30)));
        assert_eq!(parse("5m"), Some(Duration::from_secs(300)));
        assert_eq!(parse("1h30m"), Some(Duration::from_secs(5400)));
        assert_eq!(parse("250ms"), Some(Duration::from_millis(250)));
        assert_eq!(parse("600"), Some(Duration::from_secs(600)));
    }

    #[test]
    fn rejects_nonsense_and_zero() {
        for bad in ["", "0", "0s", "5x", "m5", "-5s", "1.5s", "s"] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn format_round_trips() {
        for s in ["30m", "2h", "45s", "1500ms"] {
            assert_eq!(format(parse(s).unwrap()), s);
        }
    }
}
