//! Brace expansion (`a{b,c}d` → `abd acd`), as bash performs it before running a command: the
//! rules spell out `~/.ssh/id_{rsa,dsa}`, and the analysis runs `{sudo,id}` as `sudo id`.
//! Expansion is bounded to [`MAX_BRACE_WORDS`] words; sequences (`{1..9}`) are left as written.

/// At most this many words come out of one brace expansion.
pub const MAX_BRACE_WORDS: usize = 64;

/// The words a brace expression spells (`a{b,c}d` → `abd`, `acd`), at most [`MAX_BRACE_WORDS`];
/// text without a brace list comes back unchanged.
pub fn expand_braces(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    expand_into(text, &mut out);
    out
}

fn expand_into(text: &str, out: &mut Vec<String>) {
    if out.len() >= MAX_BRACE_WORDS {
        return;
    }
    let Some((open, close, commas)) = first_brace_list(text) else {
        out.push(text.to_string());
        return;
    };
    let (prefix, suffix) = (&text[..open], &text[close + 1..]);
    let mut from = open + 1;
    for cut in commas.into_iter().chain(std::iter::once(close)) {
        if out.len() >= MAX_BRACE_WORDS {
            return;
        }
        expand_into(&format!("{prefix}{}{suffix}", &text[from..cut]), out);
        from = cut + 1;
    }
}

/// The leftmost `{…}` holding a top-level comma: its braces and the commas' positions. One pass
/// with a stack, so unbalanced braces cost no rescans.
fn first_brace_list(text: &str) -> Option<(usize, usize, Vec<usize>)> {
    let mut open: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut best: Option<(usize, usize, Vec<usize>)> = None;
    for (i, &c) in text.as_bytes().iter().enumerate() {
        match c {
            b'{' => open.push((i, Vec::new())),
            b',' => {
                if let Some((_, commas)) = open.last_mut() {
                    commas.push(i);
                }
            }
            b'}' => {
                if let Some((start, commas)) = open.pop() {
                    if !commas.is_empty() && best.as_ref().is_none_or(|b| start < b.0) {
                        best = Some((start, i, commas));
                    }
                }
            }
            _ => {}
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_expand_within_bounds() {
        assert_eq!(expand_braces("id_{rsa,dsa}"), ["id_rsa", "id_dsa"]);
        assert_eq!(expand_braces("{a,b}{c,d}"), ["ac", "ad", "bc", "bd"]);
        assert_eq!(expand_braces(".en{v,}"), [".env", ".en"]);
        assert_eq!(expand_braces("a{b{c,d},e}"), ["abc", "abd", "ae"]);
        assert_eq!(expand_braces("{x}"), ["{x}"]);
        assert_eq!(expand_braces("plain"), ["plain"]);
        assert_eq!(expand_braces(&"{a,b}".repeat(20)).len(), MAX_BRACE_WORDS);
        assert_eq!(expand_braces("{a,b").len(), 1);
        let unbalanced = "{".repeat(100_000);
        assert_eq!(expand_braces(&unbalanced), vec![unbalanced]);
        let wide = format!("{{{}}}", "x,".repeat(100_000));
        assert_eq!(expand_braces(&wide).len(), MAX_BRACE_WORDS);
    }
}
