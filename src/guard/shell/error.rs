//! Why a command string could not be understood. Every variant names the construct at fault, so
//! that the `parse-error` denial tells the agent what to fix.

/// A command string the guard cannot parse — and so cannot check. It is denied, never guessed at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// A quote, substitution or group that is opened and never closed.
    #[error("unterminated {what}: {near}")]
    Unterminated { what: &'static str, near: String },
    /// A token where the grammar does not allow it.
    #[error("unexpected {found} where {expected} was expected")]
    Unexpected { found: String, expected: &'static str },
    /// A here-document whose delimiter line never comes.
    #[error("here-document is not terminated by a line '{delimiter}'")]
    UnterminatedHeredoc { delimiter: String },
    /// Quotes, substitutions or compound commands nested too deeply to check.
    #[error("constructs nested more than {limit} levels deep: {near}")]
    TooDeep { limit: usize, near: String },
    /// Shell code (`sh -c`, `eval`…) or runners (`xargs`, `find -exec`) nested too deeply to
    /// follow.
    #[error("programs nested more than {limit} levels deep (via {via})")]
    NestedTooDeep { limit: usize, via: String },
}

/// Up to 24 characters of `text` from byte `at`, for an error message.
pub(super) fn near(text: &str, at: usize) -> String {
    let rest = text.get(at..).unwrap_or("");
    let mut out: String = rest.chars().take(24).collect();
    if out.len() < rest.len() {
        out.push('…');
    }
    out.replace('\n', "\\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_is_short_and_on_one_line() {
        assert_eq!(near("echo 'abc", 5), "'abc");
        assert_eq!(near("a\nb", 0), "a\\nb");
        assert_eq!(near(&"x".repeat(100), 0), format!("{}…", "x".repeat(24)));
        assert_eq!(near("abc", 10), "");
    }
}
