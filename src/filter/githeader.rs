//! Reading the text of git's patch output: which lines start a file's diff or a commit, and which
//! paths a `diff --git` header can name.
//!
//! [`classify`] names a line and returns its *decoration* — what precedes a header on its line:
//! the `--graph` columns (`*`, `|`, `/`, `\`, `_` and spaces; the last commit of a graph is
//! indented by spaces alone) and terminal colour sequences, the latter removed from what is
//! returned. The diff filter compares decorations so that, while hiding, an indented body line
//! (a hunk's context line ` diff --git …` or ` 1234567 x`) is never taken for a header.
//! [`header_paths`] lists every path a header could mean.
//!
//! A `diff --git A B` header is ambiguous when the names contain spaces and are not quoted: git
//! quotes a name (C-style, with octal escapes for bytes outside ASCII when `core.quotepath` is on)
//! only when it contains special bytes, and a space is not one. So every plausible reading is
//! listed — each split at a space, each side unquoted when it is one whole quoted string — and the
//! caller hides the file if any reading is protected.

/// What a line of patch output is. `decoration` is the text before the header with colour
/// sequences removed (empty for an undecorated line).
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// `diff --git A B`: the text after `diff --git `, colour sequences removed.
    GitHeader { decoration: Vec<u8>, rest: Vec<u8> },
    /// `diff --cc PATH` / `diff --combined PATH` (merges): the path as printed.
    CombinedHeader { decoration: Vec<u8>, rest: Vec<u8> },
    /// The start of the next commit or patch: `commit <sha>` (log, show), `From <sha> Mon Sep 17
    /// 00:00:00 2001` (format-patch), `tag <name>` (show of a tag), `<sha> <subject>` (`--oneline`)
    /// or a bare full sha (`--format=%H`).
    CommitHeader { decoration: Vec<u8> },
    /// Anything else.
    Other,
}

/// The `From ` line's fixed date in `git format-patch` output.
const MBOX_DATE: &[u8] = b" Mon Sep 17 00:00:00 2001";

/// A byte of the `--graph` columns (spaces included).
const fn is_graph_byte(b: u8) -> bool {
    matches!(b, b' ' | b'*' | b'|' | b'/' | b'\\' | b'_')
}

/// Bytes that may begin a decorated line.
pub const fn is_decoration_start(b: u8) -> bool {
    b == 0x1b || is_graph_byte(b)
}

/// Names a complete line (without its line terminator).
pub fn classify(line: &[u8]) -> Line {
    let Some(split) = decoration_len(line) else { return Line::Other };
    let (decoration, body) = line.split_at(split);
    if let Some(rest) = body.strip_prefix(b"diff --git ") {
        return Line::GitHeader { decoration: without_escapes(decoration), rest: without_escapes(rest) };
    }
    if let Some(rest) = body.strip_prefix(b"diff --cc ").or_else(|| body.strip_prefix(b"diff --combined ")) {
        return Line::CombinedHeader { decoration: without_escapes(decoration), rest: without_escapes(rest) };
    }
    let commit =
        if body.contains(&0x1b) { is_commit_header(&without_escapes(body)) } else { is_commit_header(body) };
    if commit {
        return Line::CommitHeader { decoration: without_escapes(decoration) };
    }
    Line::Other
}

/// Whether a line that is not complete yet could still turn out to be a file header, or with
/// `commits` also a commit header: `false` as soon as its beginning rules that out, so that
/// ordinary lines are not held back.
pub fn could_be_header(prefix: &[u8], commits: bool) -> bool {
    let Some(split) = decoration_len(prefix) else { return true };
    let body = &prefix[split..];
    const FILE_WORDS: [&[u8]; 3] = [b"diff --git ", b"diff --cc ", b"diff --combined "];
    const COMMIT_WORDS: [&[u8]; 3] = [b"commit ", b"From ", b"tag "];
    let starts = |w: &&[u8]| w.starts_with(body) || body.starts_with(w);
    if FILE_WORDS.iter().any(starts) {
        return true;
    }
    if !commits {
        return false;
    }
    if COMMIT_WORDS.iter().any(starts) {
        return true;
    }
    let hex = hex_run(body);
    hex == body.len() || (hex >= 7 && body[hex] == b' ')
}

fn is_commit_header(body: &[u8]) -> bool {
    if let Some(rest) = body.strip_prefix(b"commit ") {
        let n = hex_run(rest);
        return (7..=64).contains(&n) && matches!(rest.get(n), None | Some(b' ' | b'\t'));
    }
    if let Some(rest) = body.strip_prefix(b"From ") {
        let n = hex_run(rest);
        return (n == 40 || n == 64) && &rest[n..] == MBOX_DATE;
    }
    if let Some(rest) = body.strip_prefix(b"tag ") {
        return !rest.trim_ascii().is_empty();
    }
    let n = hex_run(body);
    match body.get(n) {
        Some(b' ') => (7..=64).contains(&n),
        None => n == 40 || n == 64,
        Some(_) => false,
    }
}

/// Length of the run of lower-case hex digits at the start of `s`.
fn hex_run(s: &[u8]) -> usize {
    s.iter().take_while(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b)).count()
}

/// Length of the decoration at the start of `line`: colour sequences, graph columns and spaces.
/// `None` when `line` ends inside a colour sequence.
pub fn decoration_len(line: &[u8]) -> Option<usize> {
    let mut i = 0;
    while let Some(&b) = line.get(i) {
        if b == 0x1b {
            i += escape_len(&line[i..])?;
        } else if is_graph_byte(b) {
            i += 1;
        } else {
            break;
        }
    }
    Some(i)
}

/// The colour sequences right before a line's first word, after its graph columns: git paints a
/// file header in one colour (`color.diff.meta`) and the words of a `--color-words` body in
/// others, so while a body is hidden only a line with the hiding header's lead can be the next
/// header. Empty for an uncoloured line; the whole decoration when the line ends inside it.
pub fn lead_escapes(line: &[u8]) -> &[u8] {
    let end = decoration_len(line).unwrap_or(line.len());
    let mut start = end;
    while start > 0 && !is_graph_byte(line[start - 1]) {
        start -= 1;
    }
    &line[start..end]
}

/// Length of the escape sequence at the start of `s` (CSI `ESC [ params final`, or a two-byte
/// `ESC x`); `None` when `s` ends before it does.
fn escape_len(s: &[u8]) -> Option<usize> {
    match s.get(1)? {
        b'[' => {
            let end = s[2..].iter().position(|b| (0x40..=0x7e).contains(b))?;
            Some(end + 3)
        }
        _ => Some(2),
    }
}

/// `s` with every escape sequence removed (a coloured header also carries a reset at its end).
fn without_escapes(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == 0x1b {
            i += escape_len(&s[i..]).unwrap_or(s.len() - i);
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}

/// The most readings of a header's names that are worth checking; past this many spaces the
/// header is treated as protected (see [`Readings::Unbounded`]).
pub const MAX_SPLITS: usize = 64;

/// The names a `diff --git` header may mean.
#[derive(Debug, PartialEq, Eq)]
pub enum Readings {
    /// Every candidate path, the most likely reading first (its `a/` side, then its `b/` side).
    Paths(Vec<Vec<u8>>),
    /// Too many ways to read it to check them all.
    Unbounded,
}

/// Every path that the rest of a `diff --git ` line can name, prefixes (`a/`, `b/`) included.
pub fn header_paths(rest: &[u8]) -> Readings {
    let rest = rest.strip_suffix(b"\r").unwrap_or(rest);
    let mut paths: Vec<Vec<u8>> = Vec::new();
    let mut add = |p: Vec<u8>| {
        if !paths.contains(&p) {
            paths.push(p);
        }
    };
    // The quoted reading: `"a/…" "b/…"` or `"a/…" b/…`.
    if let Some((first, used)) = unquote_prefix(rest) {
        if let Some(second) = rest[used..].strip_prefix(b" ") {
            add(first);
            add(unquote_whole(second).unwrap_or_else(|| second.to_vec()));
        }
    }
    let spaces: Vec<usize> = memchr::memchr_iter(b' ', rest).collect();
    if spaces.len() > MAX_SPLITS {
        return Readings::Unbounded;
    }
    // The symmetric split (same name on both sides after a one-component prefix) is git's own
    // reading of an unchanged name; put it first so that it names the hidden file.
    let mut splits: Vec<usize> = spaces.clone();
    if let Some(i) = spaces.iter().position(|&at| same_name(&rest[..at], &rest[at + 1..])) {
        splits.swap(0, i);
    }
    for at in splits {
        let (left, right) = (&rest[..at], &rest[at + 1..]);
        add(unquote_whole(left).unwrap_or_else(|| left.to_vec()));
        add(unquote_whole(right).unwrap_or_else(|| right.to_vec()));
    }
    if spaces.is_empty() {
        add(unquote_whole(rest).unwrap_or_else(|| rest.to_vec()));
    }
    Readings::Paths(paths)
}

/// The single path of a `diff --cc` / `diff --combined` header, unquoted.
pub fn combined_path(rest: &[u8]) -> Vec<u8> {
    let rest = rest.strip_suffix(b"\r").unwrap_or(rest);
    unquote_whole(rest).unwrap_or_else(|| rest.to_vec())
}

fn same_name(left: &[u8], right: &[u8]) -> bool {
    let l = unquote_whole(left).unwrap_or_else(|| left.to_vec());
    let r = unquote_whole(right).unwrap_or_else(|| right.to_vec());
    matches!((strip_prefix_component(&l), strip_prefix_component(&r)), (Some(a), Some(b)) if a == b)
}

/// `a/x` → `x`: the first path component removed, when there is one before a `/`.
pub fn strip_prefix_component(path: &[u8]) -> Option<&[u8]> {
    let slash = path.iter().position(|&b| b == b'/')?;
    (slash > 0 && slash + 1 < path.len()).then(|| &path[slash + 1..])
}

/// `s` when it is exactly one C-quoted string, unquoted.
fn unquote_whole(s: &[u8]) -> Option<Vec<u8>> {
    match unquote_prefix(s) {
        Some((v, used)) if used == s.len() => Some(v),
        _ => None,
    }
}

/// Unquotes the C-quoted string at the start of `s` (`"…"` with `\a \b \t \n \v \f \r \" \\` and
/// three-digit octal escapes); returns it and how many bytes it used.
fn unquote_prefix(s: &[u8]) -> Option<(Vec<u8>, usize)> {
    if s.first() != Some(&b'"') {
        return None;
    }
    let mut out = Vec::new();
    let mut i = 1;
    loop {
        match *s.get(i)? {
            b'"' => return Some((out, i + 1)),
            b'\\' => {
                let c = *s.get(i + 1)?;
                let (byte, used) = match c {
                    b'a' => (0x07, 2),
                    b'b' => (0x08, 2),
                    b't' => (b'\t', 2),
                    b'n' => (b'\n', 2),
                    b'v' => (0x0b, 2),
                    b'f' => (0x0c, 2),
                    b'r' => (b'\r', 2),
                    b'"' | b'\\' => (c, 2),
                    b'0'..=b'3' => {
                        let digits = s.get(i + 1..i + 4)?;
                        if !digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                            return None;
                        }
                        let v = digits.iter().fold(0u32, |acc, d| acc * 8 + u32::from(d - b'0'));
                        (u8::try_from(v).ok()?, 4)
                    }
                    _ => return None,
                };
                out.push(byte);
                i += used;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn readings(rest: &str) -> Vec<String> {
        match header_paths(rest.as_bytes()) {
            Readings::Paths(p) => p.into_iter().map(|v| String::from_utf8_lossy(&v).into_owned()).collect(),
            Readings::Unbounded => panic!("unbounded"),
        }
    }

    fn git(decoration: &str, rest: &str) -> Line {
        Line::GitHeader { decoration: decoration.into(), rest: rest.into() }
    }

    #[test]
    fn lines_are_classified() {
        assert_eq!(classify(b"diff --git a/x b/x"), git("", "a/x b/x"));
        assert_eq!(classify(b"\x1b[1mdiff --git a/x b/x\x1b[m"), git("", "a/x b/x"));
        assert_eq!(classify(b"\x1b[31m|\x1b[m diff --git a/x b/x"), git("| ", "a/x b/x"));
        assert_eq!(classify(b"  diff --git a/x b/x"), git("  ", "a/x b/x"));
        assert_eq!(
            classify(b"diff --cc f.txt"),
            Line::CombinedHeader { decoration: Vec::new(), rest: b"f.txt".to_vec() }
        );
        let sha = "0123456789abcdef0123456789abcdef01234567";
        for (header, decoration) in [
            (format!("commit {sha}"), ""),
            (format!("commit {sha} (HEAD -> main)"), ""),
            (format!("\x1b[33mcommit {sha}\x1b[m"), ""),
            (format!("* commit {sha}"), "* "),
            (format!("| * commit {sha}"), "| * "),
            (format!("From {sha} Mon Sep 17 00:00:00 2001"), ""),
            ("tag v1.0".into(), ""),
            ("0123abc subject line".into(), ""),
            (sha.into(), ""),
        ] {
            assert_eq!(
                classify(header.as_bytes()),
                Line::CommitHeader { decoration: decoration.into() },
                "{header}"
            );
        }
        for other in [
            "+diff --git a/x b/x",
            "commit",
            "commit message",
            "From someone",
            "deleted file mode 100644",
            "index 0123456..89abcde 100644",
            "dissimilarity index 90%",
            "zfoo",
            "abcdef",
            "fM9lT5bY#Q+M3E$A%)$",
            "\x1b[unterminated",
        ] {
            assert_eq!(classify(other.as_bytes()), Line::Other, "{other}");
        }
    }

    #[test]
    fn partial_lines_are_released_early() {
        for (prefix, commits) in [
            (&b"di"[..], false),
            (b"diff --g", false),
            (b"\x1b[1", false),
            (b"| | dif", false),
            (b"abc1234", true),
            (b"abc1234 subj", true),
            (b"comm", true),
        ] {
            assert!(could_be_header(prefix, commits), "{}", String::from_utf8_lossy(prefix));
        }
        for (prefix, commits) in [
            (&b"debug: x"[..], true),
            (b"diffx", true),
            (b"| a table", true),
            (b"abc1234", false),
            (b"comm", false),
        ] {
            assert!(!could_be_header(prefix, commits), "{}", String::from_utf8_lossy(prefix));
        }
    }

    #[test]
    fn plain_quoted_and_mixed_headers() {
        assert_eq!(readings("a/backend/.env b/backend/.env"), ["a/backend/.env", "b/backend/.env"]);
        assert_eq!(
            readings(r#""a/caf\303\251 .env" "b/caf\303\251 .env""#)[..2],
            ["a/café .env".to_string(), "b/café .env".to_string()]
        );
        assert_eq!(readings(r#"a/x "b/\303\251""#), ["a/x", "b/é"]);
        assert_eq!(readings(r#""a/tab\there" b/y"#)[..2], ["a/tab\there".to_string(), "b/y".to_string()]);
    }

    #[test]
    fn ambiguous_headers_list_every_split_with_the_symmetric_one_first() {
        let r = readings("a/my file.txt b/my file.txt");
        assert_eq!(r[..2], ["a/my file.txt".to_string(), "b/my file.txt".to_string()]);
        assert!(r.contains(&"a/my".to_string()) && r.contains(&"file.txt".to_string()));
        let r = readings("a/x b/.env b/y");
        assert!(r.contains(&"b/.env b/y".to_string()) && r.contains(&"a/x b/.env".to_string()));
        let many = "a/".to_string() + &" x".repeat(MAX_SPLITS + 1);
        assert_eq!(header_paths(many.as_bytes()), Readings::Unbounded);
    }

    #[test]
    fn malformed_quotes_fall_back_to_raw_text() {
        assert_eq!(readings(r#""a/x\9" b/y"#), [r#""a/x\9""#, "b/y"]);
        assert_eq!(combined_path(br#""f\303\251""#), "fé".as_bytes());
        assert_eq!(combined_path(b"plain name"), b"plain name");
    }
}
