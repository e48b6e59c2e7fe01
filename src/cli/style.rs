//! Colour on a terminal, plain everywhere else.
//!
//! [`Style::for_stdout`] is decided once per command: colour only when standard output is a
//! terminal, `NO_COLOR` is unset or empty (<https://no-color.org>) and `TERM` is not `dumb`. A
//! pipe, a file or a CI log gets the same text without escape sequences, byte for byte.

use std::io::IsTerminal;

/// Whether to paint, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    pub color: bool,
}

/// What a piece of text means, which decides its colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// Allowed, succeeded: green.
    Good,
    /// Denied, failed: red.
    Bad,
    /// Needs a human, weakened: yellow.
    Warn,
    /// Secondary detail (times, ids): dim.
    Faint,
    /// A heading: bold.
    Strong,
}

impl Style {
    /// The style for this process's standard output and environment.
    pub fn for_stdout() -> Style {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let dumb = std::env::var_os("TERM").is_some_and(|t| t == "dumb");
        Style { color: std::io::stdout().is_terminal() && !no_color && !dumb }
    }

    /// `text` in the colour of `tone`, or unchanged when not painting.
    pub fn paint(self, tone: Tone, text: &str) -> String {
        if !self.color || text.is_empty() {
            return text.to_string();
        }
        let code = match tone {
            Tone::Good => "32",
            Tone::Bad => "31",
            Tone::Warn => "33",
            Tone::Faint => "2",
            Tone::Strong => "1",
        };
        format!("\x1b[{code}m{text}\x1b[0m")
    }

    /// A `label: value` report (`explain`): each line's leading label in bold, and what weakens
    /// the sandbox (`NOT APPLIED`, `REFUSED`, `DROPPED`) in red. Plain text comes back unchanged.
    pub fn report(self, text: &str) -> String {
        if !self.color {
            return text.to_string();
        }
        let mut out = String::with_capacity(text.len() + text.len() / 4);
        for line in text.split_inclusive('\n') {
            let indent = line.len() - line.trim_start().len();
            let (lead, rest) = line.split_at(indent);
            let label_end = rest.find(':').filter(|&i| {
                i > 0
                    && i <= 60
                    && rest[..i].bytes().all(|b| b.is_ascii_lowercase() || b" -()+,'".contains(&b))
            });
            out.push_str(lead);
            let rest = match label_end {
                Some(i) => {
                    out.push_str(&self.paint(Tone::Strong, &rest[..=i]));
                    &rest[i + 1..]
                }
                None => rest,
            };
            let mut painted = rest.to_string();
            for word in ["NOT APPLIED", "REFUSED", "DROPPED"] {
                painted = painted.replace(word, &self.paint(Tone::Bad, word));
            }
            out.push_str(&painted);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_is_byte_for_byte_and_colour_wraps() {
        assert_eq!(Style { color: false }.paint(Tone::Bad, "deny"), "deny");
        assert_eq!(Style { color: true }.paint(Tone::Bad, "deny"), "\x1b[31mdeny\x1b[0m");
        assert_eq!(Style { color: true }.paint(Tone::Good, ""), "");
    }

    #[test]
    fn reports_get_bold_labels_and_red_failures() {
        let text = "root:         /w (read+write)\n  seccomp:      NOT APPLIED\n  **/.env   built-in\n";
        assert_eq!(Style { color: false }.report(text), text);
        let painted = Style { color: true }.report(text);
        assert!(painted.starts_with("\x1b[1mroot:\x1b[0m         /w"), "{painted:?}");
        assert!(
            painted.contains("  \x1b[1mseccomp:\x1b[0m      \x1b[31mNOT APPLIED\x1b[0m\n"),
            "{painted:?}"
        );
        assert!(painted.ends_with("  **/.env   built-in\n"), "{painted:?}");
    }
}
