//! Text normalisation: what the guard compares, and how.
//!
//! Two uses, called in this order by [`super::check`]:
//! 1. [`for_matching`] turns the whole command string, and each `ShellPolicy` pattern, into the
//!    form the substring and segment matchers compare: compatibility folded (NFKC: fullwidth
//!    letters become ASCII), invisible characters removed, `\`+newline joined, whitespace runs
//!    collapsed to one space and lower-cased. A pattern gets the same treatment and keeps its own
//!    leading and trailing space, so `"ls "` never becomes `ls`.
//! 2. [`fold`] (NFKC and invisible-character removal only) is applied to single words — command
//!    names, options, path tokens — when the rules recognise them, so `ｓｕｄｏ` and `su\u{200B}do`
//!    are seen as `sudo`. The parser itself always reads the text as written: folding before
//!    parsing would turn a fullwidth `＇` (a plain letter to a real shell) into a quote and hide
//!    the command between two of them.

use std::borrow::Cow;

use unicode_normalization::UnicodeNormalization;

/// Whether `c` is invisible when displayed: the Unicode `Default_Ignorable_Code_Point` set
/// (zero-width space and joiners, word joiner, BOM, soft hyphen, bidirectional controls,
/// variation selectors, Hangul fillers, tags). Such characters are dropped before comparing.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c as u32,
        0x00AD
            | 0x034F
            | 0x061C
            | 0x115F..=0x1160
            | 0x17B4..=0x17B5
            | 0x180B..=0x180F
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x206F
            | 0x3164
            | 0xFE00..=0xFE0F
            | 0xFEFF
            | 0xFFA0
            | 0xFFF0..=0xFFF8
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF
    )
}

/// Compatibility folding (NFKC) with invisible characters removed. ASCII text is returned as is.
pub fn fold(text: &str) -> Cow<'_, str> {
    if text.is_ascii() {
        return Cow::Borrowed(text);
    }
    Cow::Owned(text.chars().filter(|c| !is_invisible(*c)).nfkc().filter(|c| !is_invisible(*c)).collect())
}

/// [`fold`] for text that may already be owned.
pub fn folded(text: Cow<'_, str>) -> Cow<'_, str> {
    if text.is_ascii() {
        text
    } else {
        Cow::Owned(fold(&text).into_owned())
    }
}

/// A word as the rules recognise it: folded and lower-cased.
pub fn word(text: &str) -> String {
    let folded = fold(text);
    if folded.is_ascii() {
        folded.to_ascii_lowercase()
    } else {
        folded.to_lowercase()
    }
}

/// The command string, or a `ShellPolicy` pattern, as the substring matchers see it. Nothing is
/// trimmed: a pattern's leading or trailing whitespace stays as one space.
pub fn for_matching(text: &str) -> String {
    collapse(&fold(text).replace("\\\n", "")).to_lowercase()
}

/// Every run of whitespace replaced by one space; nothing trimmed.
fn collapse(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_space = false;
    for c in text.chars() {
        if c.is_whitespace() {
            if !in_space {
                out.push(' ');
            }
            in_space = true;
        } else {
            out.push(c);
            in_space = false;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fullwidth_and_invisible_characters_fold_to_ascii() {
        assert_eq!(fold("ｓｕｄｏ"), "sudo");
        assert_eq!(fold("su\u{200B}do"), "sudo");
        assert_eq!(fold("r\u{00AD}m\u{2060} -rf"), "rm -rf");
        assert_eq!(fold("\u{FEFF}ls"), "ls");
        assert_eq!(word("ＲＭ"), "rm");
    }

    #[test]
    fn matching_text_joins_continuations_and_collapses_whitespace() {
        assert_eq!(for_matching("rm  \t-rf"), "rm -rf");
        assert_eq!(for_matching("rm \\\n-rf"), "rm -rf");
        assert_eq!(for_matching("RM\u{200B} -RF"), "rm -rf");
        assert_eq!(for_matching("a\n\nb"), "a b");
    }

    #[test]
    fn patterns_keep_their_leading_and_trailing_space() {
        assert_eq!(for_matching("ls "), "ls ");
        assert_eq!(for_matching("  go   test"), " go test");
        assert_eq!(for_matching("cd\t"), "cd ");
    }
}
