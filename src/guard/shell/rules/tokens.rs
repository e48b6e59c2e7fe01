//! Path-like tokens inside words, and the shell's own glob and brace syntax, for the rules that
//! look for file names (`credential-file`, `env-file`).
//!
//! [`tokens`] cuts a word's text at the characters that cannot be part of a path in code or
//! options (`--file=.env`, `open('.env')`, `host:.netrc`); an expansion inside a token stands for
//! any text (`*`), so `id_$KIND` still names a key. The rules spell out `id_{rsa,dsa}` with
//! [`expand_braces`](crate::guard::shell::braces::expand_braces), and [`glob_matches`] tells whether a pattern such as `.e*` can match a name,
//! following the shell's rule that a leading dot is never matched by a wildcard.

use crate::guard::shell::ast::{Part, Word};
use crate::guard::shell::normalize;

/// A token: the text matched (folded, lower-cased, expansions as `*`) and the text shown
/// (expansions as written).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub matched: String,
    pub shown: String,
}

/// Characters that cannot be part of a path token.
pub fn is_separator(c: char) -> bool {
    c.is_whitespace()
        || matches!(c, '\'' | '"' | '`' | '=' | ',' | ';' | '(' | ')' | '<' | '>' | '|' | '&' | ':')
}

/// The path-like tokens of a word.
pub fn tokens(word: &Word) -> Vec<Token> {
    let mut out = Vec::new();
    let (mut matched, mut shown) = (String::new(), String::new());
    let mut flush = |matched: &mut String, shown: &mut String| {
        if !matched.is_empty() {
            out.push(Token { matched: normalize::word(matched), shown: std::mem::take(shown) });
            matched.clear();
        }
        shown.clear();
    };
    for part in &word.parts {
        let raw = match part {
            Part::Lit { text, .. } => {
                for c in text.chars() {
                    if is_separator(c) {
                        flush(&mut matched, &mut shown);
                    } else {
                        matched.push(c);
                        shown.push(c);
                    }
                }
                continue;
            }
            Part::Param(p) => &p.raw,
            Part::Command(c) => &c.raw,
            Part::Arith(a) => &a.raw,
            Part::Process(p) => &p.raw,
        };
        matched.push('*');
        shown.push_str(raw);
    }
    flush(&mut matched, &mut shown);
    out
}

/// Whether `text` holds a glob wildcard.
pub fn has_wildcard(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// The number of characters a glob spells literally (outside `*`, `?` and `[…]`).
pub fn literal_count(pattern: &str) -> usize {
    let chars: Vec<char> = pattern.chars().collect();
    let mut n = 0;
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '*' | '?' => i += 1,
            '[' => match class_end(&chars, i) {
                Some(end) => i = end + 1,
                None => {
                    n += 1;
                    i += 1;
                }
            },
            _ => {
                n += 1;
                i += 1;
            }
        }
    }
    n
}

/// The index of the `]` closing a class opened at `open`.
fn class_end(p: &[char], open: usize) -> Option<usize> {
    let mut i = open + 1;
    if matches!(p.get(i), Some('!' | '^')) {
        i += 1;
    }
    if p.get(i) == Some(&']') {
        i += 1;
    }
    (i..p.len()).find(|&j| p[j] == ']')
}

fn class_matches(p: &[char], open: usize, end: usize, c: char) -> bool {
    let mut i = open + 1;
    let negated = matches!(p.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut found = false;
    let mut first = true;
    while i < end {
        if p[i] == ']' && !first {
            break;
        }
        if i + 2 < end && p[i + 1] == '-' {
            found |= p[i] <= c && c <= p[i + 2];
            i += 3;
        } else {
            found |= p[i] == c;
            i += 1;
        }
        first = false;
    }
    found != negated
}

/// Whether the shell glob `pattern` matches `name`. A leading `.` in `name` must be matched by
/// a literal `.`, as the shell expands it.
pub fn glob_matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    if n.first() == Some(&'.') && p.first() != Some(&'.') {
        return false;
    }
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        if pi < p.len() {
            match p[pi] {
                '*' => {
                    star = Some((pi, ni));
                    pi += 1;
                    continue;
                }
                '?' => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                '[' => {
                    if let Some(end) = class_end(&p, pi) {
                        if class_matches(&p, pi, end, n[ni]) {
                            pi = end + 1;
                            ni += 1;
                            continue;
                        }
                    } else if n[ni] == '[' {
                        pi += 1;
                        ni += 1;
                        continue;
                    }
                }
                c if c == n[ni] => {
                    pi += 1;
                    ni += 1;
                    continue;
                }
                _ => {}
            }
        }
        match star {
            Some((sp, sn)) => {
                pi = sp + 1;
                ni = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::shell::ast::Command;
    use crate::guard::shell::parser::parse;

    fn word(src: &str) -> Word {
        match &parse(&format!("x {src}")).unwrap().body.pipelines[0].stages[0] {
            Command::Simple(s) => s.words[1].clone(),
            other => panic!("{other:?}"),
        }
    }

    fn matched(src: &str) -> Vec<String> {
        tokens(&word(src)).into_iter().map(|t| t.matched).collect()
    }

    #[test]
    fn tokens_split_at_code_punctuation() {
        assert_eq!(matched("--env-file=.env"), ["--env-file", ".env"]);
        assert_eq!(matched("\"print(open('.ENV').read())\""), ["print", "open", ".env", ".read"]);
        assert_eq!(matched("host:.netrc"), ["host", ".netrc"]);
        assert_eq!(matched("~/.ssh/id_$KIND"), ["~/.ssh/id_*"]);
        let t = &tokens(&word("\"$HOME/.ssh/id_rsa\""))[0];
        assert_eq!((t.matched.as_str(), t.shown.as_str()), ("*/.ssh/id_rsa", "$HOME/.ssh/id_rsa"));
        assert_eq!(matched("ｉｄ＿ｒｓａ"), ["id_rsa"]);
    }

    #[test]
    fn globs_follow_the_shell() {
        assert!(glob_matches("id_*", "id_rsa"));
        assert!(glob_matches(".e*", ".env"));
        assert!(glob_matches(".env.*", ".env.local"));
        assert!(glob_matches("id_[re]*", "id_ed25519"));
        assert!(glob_matches("id_[!x]sa", "id_rsa"));
        assert!(glob_matches("?d_rsa", "id_rsa"));
        assert!(!glob_matches("*", ".env"));
        assert!(!glob_matches("*.env", ".env"));
        assert!(!glob_matches("id_*.pub", "id_rsa"));
        assert!(glob_matches("*", "id_rsa"));
        assert!(glob_matches("a[", "a["));
        assert_eq!(literal_count(".e*"), 2);
        assert_eq!(literal_count("*"), 0);
        assert_eq!(literal_count("id_[rd]sa"), 5);
        assert!(has_wildcard("a?") && !has_wildcard("abc"));
    }
}
