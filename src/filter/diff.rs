//! Protected-diff hiding: a line-state machine over `git diff`, `git show`, `git log -p`,
//! `git format-patch` output (or a `cat` of a saved patch) that keeps a protected file's header and
//! replaces its body with one line (INTERFACE.md, Decision 12):
//!
//! ```text
//! diff --git a/backend/.env b/backend/.env
//! [content hidden: 'backend/.env' matches a FileSystem deny rule]
//! ```
//!
//! Order of use: [`DiffFilter::new`] once per stream, [`DiffFilter::push`] per read, then
//! [`DiffFilter::finish`]. Output goes to a callback, in slices of the input wherever possible.
//!
//! **States.** *Showing* passes lines through; a `diff --git` / `diff --cc` / `diff --combined`
//! header whose names are protected (any reading of them, either side of a rename or copy — see
//! [`githeader`] and [`protected`](super::protected)) is passed through, followed by
//! the hidden line, and the filter switches to *hiding*. *Hiding* drops every line — mode, index,
//! similarity, rename/copy, `---`/`+++`, hunks, binary payloads — until the next file header (which
//! is judged afresh) or the next commit header (`commit <sha>`, `From <sha> Mon Sep 17 00:00:00
//! 2001`, `tag …`, a `--oneline` or bare sha line), which is shown: the next commit is never
//! swallowed.
//!
//! **Speed and memory.** While showing, only a file header matters, so the filter jumps from one
//! `diff --` to the next (a SIMD substring search) and checks that only decoration precedes it on
//! its line; everything in between is passed on as one slice. While hiding, each line whose first
//! byte could begin a header (`d`, an escape, a `--graph` column, `c`, `F`, `t`, a hex digit) is
//! read, and every other line is dropped with one `memchr` for its end. A header line that does not
//! end within the current read is held — at most [`LINE_CAP`] bytes, and released as soon as its
//! beginning rules a header out. A longer line is no header git writes: it is released (or, if it
//! began like a file header, treated as a protected one), so a 1 GiB line streams in bounded memory.

use std::collections::HashMap;

use memchr::memmem::Finder;
use memchr::{memchr, memrchr};

use super::githeader::{self, combined_path, header_paths, strip_prefix_component, Line, Readings};
use super::protected::ProtectedPaths;

/// The longest line held back to be read as a header.
pub const LINE_CAP: usize = 64 * 1024;

/// Header names whose verdict is remembered (see [`DiffFilter::hidden_name`]); the memo is emptied
/// when it holds this many.
const VERDICTS_CAP: usize = 256;

/// What a header line means for the lines after it.
enum Action {
    /// An ordinary line: shown or dropped with its neighbours.
    Keep,
    /// A commit header ends a hidden body.
    Boundary,
    /// A file header: its decoration, and the name to show when the file is protected.
    FileHeader { decoration: Vec<u8>, hidden_name: Option<Vec<u8>> },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Position {
    LineStart,
    MidLine,
    /// Inside a candidate line, collected in `held`.
    Holding,
}

/// The diff-hiding state machine of one output stream.
#[derive(Clone)]
pub struct DiffFilter {
    protected: ProtectedPaths,
    /// Finds `diff --`, the only text that matters while showing.
    finder: Finder<'static>,
    hiding: bool,
    /// The decoration (graph columns) of the header that started the hidden body.
    hide_decoration: Vec<u8>,
    /// That header's colour sequences before `diff` ([`githeader::lead_escapes`]).
    hide_lead: Vec<u8>,
    at: Position,
    held: Vec<u8>,
    bodies_hidden: u64,
    /// The text after `diff --git ` of headers already judged, and the name each one hides.
    verdicts: HashMap<Vec<u8>, Option<Vec<u8>>>,
}

/// Never prints the held line (output not yet masked).
impl std::fmt::Debug for DiffFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DiffFilter")
            .field("hiding", &self.hiding)
            .field("at", &self.at)
            .field("held", &self.held.len())
            .field("bodies_hidden", &self.bodies_hidden)
            .finish_non_exhaustive()
    }
}

impl DiffFilter {
    pub fn new(protected: ProtectedPaths) -> DiffFilter {
        DiffFilter {
            protected,
            finder: Finder::new(b"diff --"),
            hiding: false,
            hide_decoration: Vec::new(),
            hide_lead: Vec::new(),
            at: Position::LineStart,
            held: Vec::new(),
            bodies_hidden: 0,
            verdicts: HashMap::new(),
        }
    }

    /// How many file bodies were hidden.
    pub fn bodies_hidden(&self) -> u64 {
        self.bodies_hidden
    }

    /// Feeds one read; calls `emit` with everything that is shown.
    pub fn push(&mut self, chunk: &[u8], emit: &mut impl FnMut(&[u8])) {
        let mut i = 0;
        if self.at == Position::Holding {
            i = self.hold(chunk, emit);
        }
        while i < chunk.len() && self.at != Position::Holding {
            i = if self.hiding { self.scan_hidden(chunk, i, emit) } else { self.scan_shown(chunk, i, emit) };
        }
    }

    /// Showing, from `start`: only a file header can change anything, so this jumps from one
    /// `diff --` to the next and checks that only decoration precedes it on its line. Returns where
    /// it stopped: after a file header (the state may have changed), or at the end of the chunk.
    fn scan_shown(&mut self, chunk: &[u8], start: usize, emit: &mut impl FnMut(&[u8])) -> usize {
        let starts_a_line = self.at == Position::LineStart;
        let line_start = |at: usize| match memrchr(b'\n', &chunk[start..at]) {
            Some(p) => Some(start + p + 1),
            None => starts_a_line.then_some(start),
        };
        let mut from = start;
        while let Some(offset) = self.finder.find(&chunk[from..]) {
            let at = from + offset;
            from = at + 1;
            let Some(begin) = line_start(at) else { continue };
            if githeader::decoration_len(&chunk[begin..at]) != Some(at - begin) {
                continue;
            }
            match memchr(b'\n', &chunk[at..]) {
                Some(n) if at + n + 1 - begin <= LINE_CAP => {
                    let end = at + n + 1;
                    let line = &chunk[begin..end];
                    if let Action::FileHeader { decoration, hidden_name } = self.action(line) {
                        emit(&chunk[start..end]);
                        self.at = Position::LineStart;
                        self.enter(hidden_name, decoration, line, emit);
                        return end;
                    }
                    from = end;
                }
                _ => return self.start_holding(chunk, start, begin, emit),
            }
        }
        // No header begins in the rest of the chunk; its unfinished last line may become one.
        if let Some(tail) = line_start(chunk.len()).filter(|&t| t < chunk.len()) {
            if githeader::could_be_header(&chunk[tail..], false) {
                return self.start_holding(chunk, start, tail, emit);
            }
        }
        emit(&chunk[start..]);
        self.at = if chunk.ends_with(b"\n") { Position::LineStart } else { Position::MidLine };
        chunk.len()
    }

    /// Shows `chunk[start..begin]` and holds the line that begins at `begin`.
    fn start_holding(
        &mut self,
        chunk: &[u8],
        start: usize,
        begin: usize,
        emit: &mut impl FnMut(&[u8]),
    ) -> usize {
        if begin > start {
            emit(&chunk[start..begin]);
        }
        self.held.clear();
        self.at = Position::Holding;
        begin + self.hold(&chunk[begin..], emit)
    }

    /// Hiding, from `start`: every line is dropped, and each one whose first byte could begin a
    /// header is read. Returns where it stopped: at a commit header, after a file header that ends
    /// the hiding, or at the end of the chunk.
    fn scan_hidden(&mut self, chunk: &[u8], start: usize, emit: &mut impl FnMut(&[u8])) -> usize {
        let mut i = start;
        while i < chunk.len() {
            if self.at != Position::LineStart {
                match memchr(b'\n', &chunk[i..]) {
                    Some(n) => {
                        i += n + 1;
                        self.at = Position::LineStart;
                        continue;
                    }
                    None => return chunk.len(),
                }
            }
            if !HIDDEN_CANDIDATES[usize::from(chunk[i])] {
                self.at = Position::MidLine;
                continue;
            }
            match memchr(b'\n', &chunk[i..]) {
                Some(n) if n < LINE_CAP => {
                    let end = i + n + 1;
                    let line = &chunk[i..end];
                    match self.action(line) {
                        Action::Keep => {}
                        Action::Boundary => {
                            self.hiding = false;
                            return i;
                        }
                        Action::FileHeader { decoration, hidden_name } => {
                            emit(line);
                            self.enter(hidden_name, decoration, line, emit);
                            if !self.hiding {
                                return end;
                            }
                        }
                    }
                    i = end;
                }
                _ => return self.start_holding(chunk, i, i, emit),
            }
        }
        i
    }

    /// Ends the stream: a held line is judged as it is.
    pub fn finish(&mut self, emit: &mut impl FnMut(&[u8])) {
        if self.at == Position::Holding {
            let line = std::mem::take(&mut self.held);
            self.judge_held(&line, emit);
        }
        self.at = Position::LineStart;
        self.hiding = false;
    }

    /// Adds `bytes` to the held line until its end, [`LINE_CAP`], or a beginning that rules a
    /// header out; returns how many bytes of `bytes` it used.
    fn hold(&mut self, bytes: &[u8], emit: &mut impl FnMut(&[u8])) -> usize {
        let room = LINE_CAP - self.held.len();
        if let Some(n) = memchr(b'\n', &bytes[..bytes.len().min(room)]) {
            self.held.extend_from_slice(&bytes[..=n]);
            let line = std::mem::take(&mut self.held);
            self.judge_held(&line, emit);
            self.held = line;
            self.held.clear();
            self.at = Position::LineStart;
            return n + 1;
        }
        let used = bytes.len().min(room);
        self.held.extend_from_slice(&bytes[..used]);
        if self.held.len() >= LINE_CAP {
            let line = std::mem::take(&mut self.held);
            self.overflow(&line, emit);
            self.at = Position::MidLine;
        } else if !githeader::could_be_header(&self.held, self.hiding) {
            let line = std::mem::take(&mut self.held);
            self.flush(&line, emit);
            self.at = Position::MidLine;
        }
        used
    }

    /// A complete held line (or the last, unterminated one).
    fn judge_held(&mut self, line: &[u8], emit: &mut impl FnMut(&[u8])) {
        match self.action(line) {
            Action::Keep => self.flush(line, emit),
            Action::Boundary => {
                self.hiding = false;
                emit(line);
            }
            Action::FileHeader { decoration, hidden_name } => {
                emit(line);
                self.enter(hidden_name, decoration, line, emit);
            }
        }
    }

    /// A candidate line longer than [`LINE_CAP`]: a file header that long is not one git writes,
    /// so it is hidden as protected; anything else goes on as an ordinary line.
    fn overflow(&mut self, head: &[u8], emit: &mut impl FnMut(&[u8])) {
        match githeader::classify(head) {
            Line::GitHeader { decoration, .. } | Line::CombinedHeader { decoration, .. }
                if self.header_allowed(&decoration, head) =>
            {
                emit(head);
                self.enter(Some(b"(header too long to read)".to_vec()), decoration, b"", emit);
                self.hide_lead = githeader::lead_escapes(head).to_vec();
            }
            _ => self.flush(head, emit),
        }
    }

    /// After a file header: hide the body when the file is protected, show it otherwise.
    fn enter(
        &mut self,
        name: Option<Vec<u8>>,
        decoration: Vec<u8>,
        header: &[u8],
        emit: &mut impl FnMut(&[u8]),
    ) {
        let Some(name) = name else {
            self.hiding = false;
            return;
        };
        self.hide_decoration = decoration;
        self.hide_lead = githeader::lead_escapes(header).to_vec();
        let (before, after): (&[u8], &[u8]) = if header.ends_with(b"\r\n") {
            (b"", b"\r\n")
        } else if header.ends_with(b"\n") {
            (b"", b"\n")
        } else {
            (b"\n", b"\n")
        };
        let mut note = Vec::with_capacity(name.len() + 64);
        note.extend_from_slice(before);
        note.extend_from_slice(b"[content hidden: '");
        note.extend_from_slice(&name);
        note.extend_from_slice(b"' matches a FileSystem deny rule]");
        note.extend_from_slice(after);
        emit(&note);
        self.hiding = true;
        self.bodies_hidden += 1;
    }

    fn action(&mut self, line: &[u8]) -> Action {
        let content = line.strip_suffix(b"\n").unwrap_or(line);
        let content = content.strip_suffix(b"\r").unwrap_or(content);
        match githeader::classify(content) {
            Line::GitHeader { decoration, rest } if self.header_allowed(&decoration, content) => {
                let hidden_name = self.hidden_name(rest);
                Action::FileHeader { decoration, hidden_name }
            }
            Line::CombinedHeader { decoration, rest } if self.header_allowed(&decoration, content) => {
                let path = combined_path(&rest);
                let hidden_name = self.protected.is_protected(&path).then(|| shown_name(&path));
                Action::FileHeader { decoration, hidden_name }
            }
            Line::CommitHeader { decoration } if self.hiding && self.boundary_allowed(&decoration) => {
                Action::Boundary
            }
            _ => Action::Keep,
        }
    }

    /// The name a `diff --git ` header hides (its text after that, `rest`), `None` when it names
    /// no protected file. The verdict depends on nothing but `rest`, and a long `git log -p` names
    /// the same few files again and again, so each verdict is remembered: the deny globs are
    /// matched once per name, not once per header.
    fn hidden_name(&mut self, rest: Vec<u8>) -> Option<Vec<u8>> {
        if let Some(known) = self.verdicts.get(&rest) {
            return known.clone();
        }
        let verdict = match header_paths(&rest) {
            Readings::Paths(paths) => {
                paths.iter().find(|p| self.protected.is_protected(p)).map(|p| shown_name(p))
            }
            Readings::Unbounded => Some(shown_name(&rest)),
        };
        if self.verdicts.len() >= VERDICTS_CAP {
            self.verdicts.clear();
        }
        self.verdicts.insert(rest, verdict.clone());
        verdict
    }

    /// While hiding, a file header must sit in the same graph columns as the one that started the
    /// hidden body (or in none) — an indented body line is not a header — and be painted like it:
    /// a `--color-words` body line has no `+`/`-`/space prefix, only its words' colour.
    fn header_allowed(&self, decoration: &[u8], line: &[u8]) -> bool {
        !self.hiding
            || ((decoration.is_empty() || decoration == self.hide_decoration.as_slice())
                && githeader::lead_escapes(line) == self.hide_lead.as_slice())
    }

    /// A commit header ends a hidden body when it is undecorated, or — in `--graph` output — when
    /// its columns hold the commit's `*`.
    fn boundary_allowed(&self, decoration: &[u8]) -> bool {
        decoration.is_empty() || (!self.hide_decoration.is_empty() && decoration.contains(&b'*'))
    }

    fn flush(&self, bytes: &[u8], emit: &mut impl FnMut(&[u8])) {
        if !self.hiding && !bytes.is_empty() {
            emit(bytes);
        }
    }
}

/// First bytes of a line worth reading while hiding: a file header's or a commit header's.
static HIDDEN_CANDIDATES: [bool; 256] = hidden_candidates();

const fn hidden_candidates() -> [bool; 256] {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c == b'd'
            || githeader::is_decoration_start(c)
            || matches!(c, b'c' | b'F' | b't' | b'0'..=b'9' | b'a'..=b'f');
        b += 1;
    }
    t
}

/// The name shown in the hidden line: without git's one-letter `a/`-style prefix, unquoted unless
/// it holds control bytes (which would break the line), then quoted as git would.
fn shown_name(path: &[u8]) -> Vec<u8> {
    let name = match strip_prefix_component(path) {
        Some(rest) if path[1] == b'/' && path[0].is_ascii_alphanumeric() => rest,
        _ => path,
    };
    if !name.iter().any(|&b| b < 0x20 || b == 0x7f) {
        return name.to_vec();
    }
    let mut out = vec![b'"'];
    for &b in name {
        match b {
            b'"' | b'\\' => out.extend_from_slice(&[b'\\', b]),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\t' => out.extend_from_slice(b"\\t"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b if b < 0x20 || b == 0x7f => out.extend_from_slice(format!("\\{b:03o}").as_bytes()),
            b => out.push(b),
        }
    }
    out.push(b'"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{GlobRule, GlobRules, Origin};

    fn filter() -> DiffFilter {
        let rules = ["**/.env", "**/.env.*", "secrets/**"]
            .iter()
            .map(|p| GlobRule { pattern: (*p).to_string(), origin: Origin::Flag("--deny") })
            .collect();
        DiffFilter::new(ProtectedPaths::new(&GlobRules::new(rules).unwrap()))
    }

    fn run(input: &[u8], cuts: &[usize]) -> Vec<u8> {
        let mut f = filter();
        let mut out = Vec::new();
        let mut prev = 0;
        for &c in cuts {
            f.push(&input[prev..c], &mut |s| out.extend_from_slice(s));
            prev = c;
        }
        f.push(&input[prev..], &mut |s| out.extend_from_slice(s));
        f.finish(&mut |s| out.extend_from_slice(s));
        out
    }

    const LOG: &str = "commit 1111111111111111111111111111111111111111\n\
Author: A <a@example.com>\n\n    add files\n\n\
diff --git a/.env b/.env\nnew file mode 100644\nindex 0000000..1234567\n--- /dev/null\n+++ b/.env\n\
@@ -0,0 +1 @@\n+API_KEY=sekrit\n\
diff --git a/src/main.rs b/src/main.rs\nindex 0000000..89abcde 100644\n--- a/src/main.rs\n+++ b/src/main.rs\n\
@@ -1 +1 @@\n-old\n+new\n\
diff --git a/secrets/x b/secrets/x\nindex 1..2 100644\n--- a/secrets/x\n+++ b/secrets/x\n@@ -1 +1 @@\n-a\n+b\n\n\
commit 2222222222222222222222222222222222222222\nAuthor: A <a@example.com>\n\n    second\n";

    const WANT: &str = "commit 1111111111111111111111111111111111111111\n\
Author: A <a@example.com>\n\n    add files\n\n\
diff --git a/.env b/.env\n[content hidden: '.env' matches a FileSystem deny rule]\n\
diff --git a/src/main.rs b/src/main.rs\nindex 0000000..89abcde 100644\n--- a/src/main.rs\n+++ b/src/main.rs\n\
@@ -1 +1 @@\n-old\n+new\n\
diff --git a/secrets/x b/secrets/x\n[content hidden: 'secrets/x' matches a FileSystem deny rule]\n\
commit 2222222222222222222222222222222222222222\nAuthor: A <a@example.com>\n\n    second\n";

    #[test]
    fn hides_protected_bodies_and_keeps_the_rest() {
        assert_eq!(String::from_utf8(run(LOG.as_bytes(), &[])).unwrap(), WANT);
    }

    #[test]
    fn remembered_verdicts_decide_as_the_first_did() {
        // Each name comes back after more other names than the memo holds, and again right away:
        // verdicts are taken from the memo, from a memo emptied when full, and afresh.
        let names: Vec<String> = (0..VERDICTS_CAP + 7)
            .map(|i| if i % 3 == 0 { format!("app{i}/.env") } else { format!("src/f{i}.rs") })
            .collect();
        let mut input = String::new();
        let mut want = String::new();
        for name in names.iter().chain(&names).flat_map(|n| [n, n]) {
            let header = format!("diff --git a/{name} b/{name}\n");
            let body = format!("--- a/{name}\n+++ b/{name}\n@@ -1 +1 @@\n-old\n+new\n");
            input += &header;
            input += &body;
            want += &header;
            if name.ends_with(".env") {
                want += &format!("[content hidden: '{name}' matches a FileSystem deny rule]\n");
            } else {
                want += &body;
            }
        }
        assert_eq!(String::from_utf8(run(input.as_bytes(), &[])).unwrap(), want);
    }

    #[test]
    fn every_split_offset_gives_the_same_output() {
        for cut in 0..=LOG.len() {
            assert_eq!(String::from_utf8(run(LOG.as_bytes(), &[cut])).unwrap(), WANT, "cut {cut}");
        }
        let all: Vec<usize> = (1..LOG.len()).collect();
        assert_eq!(String::from_utf8(run(LOG.as_bytes(), &all)).unwrap(), WANT);
    }

    #[test]
    fn indented_body_lines_never_end_a_hidden_body() {
        let input =
            "diff --git a/.env b/.env\n@@ -1,4 +1,4 @@\n diff --git a/x b/x\n commit 0123456789abcdef\n \
                     * commit 0123456789abcdef\n 0123abc not a header\n+K=leak\n";
        let out = String::from_utf8(run(input.as_bytes(), &[])).unwrap();
        assert_eq!(
            out,
            "diff --git a/.env b/.env\n[content hidden: '.env' matches a FileSystem deny rule]\n"
        );
    }

    #[test]
    fn graph_output_is_read_through_its_columns() {
        let input = "* commit 1111111111111111111111111111111111111111\n| \n| diff --git a/.env b/.env\n\
                     | +K=leak\n| diff --git a/x b/x\n| +shown\n| diff --git a/.env b/.env\n|  diff --git a/y b/y\n\
                     | +K=leak\n* commit 2222222222222222222222222222222222222222\n  diff --git a/.env b/.env\n  +K=leak\n";
        let out = String::from_utf8(run(input.as_bytes(), &[])).unwrap();
        assert_eq!(
            out,
            "* commit 1111111111111111111111111111111111111111\n| \n| diff --git a/.env b/.env\n\
             [content hidden: '.env' matches a FileSystem deny rule]\n| diff --git a/x b/x\n| +shown\n\
             | diff --git a/.env b/.env\n[content hidden: '.env' matches a FileSystem deny rule]\n\
             * commit 2222222222222222222222222222222222222222\n  diff --git a/.env b/.env\n\
             [content hidden: '.env' matches a FileSystem deny rule]\n"
        );
    }

    #[test]
    fn crlf_and_unterminated_headers_keep_their_line_shape() {
        let out = run(b"diff --git a/.env b/.env\r\n+X=1\r\n", &[]);
        assert_eq!(
            out,
            b"diff --git a/.env b/.env\r\n[content hidden: '.env' matches a FileSystem deny rule]\r\n"
        );
        let out = run(b"diff --git a/.env b/.env", &[]);
        assert_eq!(
            out,
            b"diff --git a/.env b/.env\n[content hidden: '.env' matches a FileSystem deny rule]\n"
        );
    }

    #[test]
    fn long_lines_stream_and_long_headers_hide() {
        let long = "d".repeat(3 * LINE_CAP) + "\nnext\n";
        assert_eq!(run(long.as_bytes(), &[10, LINE_CAP + 5]), long.as_bytes());
        let header = format!("diff --git a/{0} b/{0}\n+secret body\n", "x".repeat(LINE_CAP));
        let out = String::from_utf8(run(header.as_bytes(), &[100])).unwrap();
        assert!(
            out.ends_with("[content hidden: '(header too long to read)' matches a FileSystem deny rule]\n")
        );
        assert!(!out.contains("secret body"));
    }

    #[test]
    fn names_with_control_bytes_are_shown_quoted() {
        assert_eq!(shown_name(b"a/x\n.env"), b"\"x\\n.env\"");
        assert_eq!(shown_name(b"b/caf\xc3\xa9/.env"), "café/.env".as_bytes());
        assert_eq!(shown_name(b".env"), b".env");
    }

    #[test]
    fn a_colour_words_body_line_is_not_a_header() {
        let input = "\x1b[1mdiff --git a/.env b/.env\x1b[m\n\x1b[36m@@ -1 +1,3 @@\x1b[m\n\
                     \x1b[32mdiff --git a/x b/x\x1b[m\nPLAIN=leak\ndiff --git a/z b/z\nPLAIN=leak\n\
                     \x1b[1mdiff --git a/y b/y\x1b[m\nshown\n";
        let want = "\x1b[1mdiff --git a/.env b/.env\x1b[m\n[content hidden: '.env' matches a FileSystem deny rule]\n\
                    \x1b[1mdiff --git a/y b/y\x1b[m\nshown\n";
        for cut in 0..input.len() {
            assert_eq!(String::from_utf8(run(input.as_bytes(), &[cut])).unwrap(), want, "cut at {cut}");
        }
    }
}
