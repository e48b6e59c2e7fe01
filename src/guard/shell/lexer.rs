//! The tokenizer: operators, redirections and words — quotes, escapes and expansions included.
//!
//! [`Parser::lex`] is called by the grammar for each token. A word is read into [`Part`]s:
//! single quotes, double quotes, ANSI-C `$'…'` (decoded, so `$'\x73udo'` is seen as `sudo`),
//! backslash escapes and line continuations, `$NAME`, `${…}` (its operand parsed, since a
//! `${x:-$(cmd)}` runs `cmd`), `$(( ))`, `$( )`, backticks and `<( )`/`>( )`. Substitution bodies
//! are parsed on the spot by the grammar. After each newline the bodies of the heredocs begun on
//! that line are read; a body with an unquoted delimiter is parsed like a double-quoted string.
//! The lexer works on bytes and only ever splits the text at ASCII bytes, so every slice it takes
//! is valid UTF-8.

use super::ast::{Arith, Assignment, CommandSubst, Param, Part, ProcessSubst, RedirOp, Word};
use super::error::{near, ParseError};
use super::parser::Parser;

/// A control operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Op {
    Semi,
    Amp,
    AndIf,
    OrIf,
    Pipe,
    PipeAmp,
    LParen,
    RParen,
    DSemi,
    SemiAmp,
    DSemiAmp,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Token {
    Word(Word),
    Op(Op),
    Redir { fd: Option<u32>, op: RedirOp, strip_tabs: bool },
    Newline,
    Eof,
}

/// A token and where it lies in the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Lexeme {
    pub(super) token: Token,
    pub(super) start: usize,
    pub(super) end: usize,
}

/// Where a run of parts ends, and how backslashes and quotes behave inside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Inside `"…"`: ends at the closing `"`.
    Double,
    /// A heredoc body or an arithmetic expression: runs to the end of its own text.
    Body,
    /// The operand of `${name…}`: ends at the closing `}`; `dq` when the expansion is itself
    /// inside double quotes (single quotes are then plain characters).
    Operand { dq: bool },
}

/// Bytes that end an unquoted run of plain characters.
fn is_special(b: u8) -> bool {
    matches!(
        b,
        b' ' | b'\t'
            | b'\n'
            | b';'
            | b'&'
            | b'|'
            | b'<'
            | b'>'
            | b'('
            | b')'
            | b'\\'
            | b'\''
            | b'"'
            | b'$'
            | b'`'
    )
}

fn is_name_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_'
}

fn is_name_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Appends literal text, merging it with a preceding literal of the same quoting.
fn push_lit(parts: &mut Vec<Part>, text: &str, quoted: bool) {
    if let Some(Part::Lit { text: last, quoted: q }) = parts.last_mut() {
        if *q == quoted {
            last.push_str(text);
            return;
        }
    }
    parts.push(Part::Lit { text: text.to_string(), quoted });
}

/// `NAME=value` (`NAME+=`, `NAME[i]=`) as an assignment, when the word is one.
pub(super) fn assignment(word: &Word) -> Option<Assignment> {
    let Some(Part::Lit { text, quoted: false }) = word.parts.first() else {
        return None;
    };
    let eq = text.find('=')?;
    let target = text[..eq].strip_suffix('+').unwrap_or(&text[..eq]);
    let (base, subscript) = match target.find('[') {
        Some(i) => (&target[..i], Some(&target[i..])),
        None => (target, None),
    };
    let valid = base.bytes().next().is_some_and(is_name_start)
        && base.bytes().all(is_name_byte)
        && subscript.is_none_or(|s| s.ends_with(']'));
    if !valid {
        return None;
    }
    let mut parts = Vec::new();
    if eq + 1 < text.len() {
        parts.push(Part::Lit { text: text[eq + 1..].to_string(), quoted: false });
    }
    parts.extend(word.parts[1..].iter().cloned());
    let value_start = word.raw().find('=').map_or(word.span.end, |i| word.span.start + i + 1);
    Some(Assignment {
        name: base.to_string(),
        value: Word::new(word.source.clone(), value_start..word.span.end, parts),
    })
}

/// Whether the parts so far are `NAME=` or `NAME+=`, so that a `(` starts an array value.
fn is_array_start(parts: &[Part]) -> bool {
    match parts {
        [Part::Lit { text, quoted: false }] => {
            let name = text.strip_suffix("+=").or_else(|| text.strip_suffix('=')).unwrap_or("");
            name.bytes().next().is_some_and(is_name_start) && name.bytes().all(is_name_byte)
        }
        _ => false,
    }
}

/// Decodes the body of an ANSI-C `$'…'` string.
fn decode_ansi_c(body: &str) -> String {
    let b = body.as_bytes();
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'\\' || i + 1 >= b.len() {
            out.push(b[i]);
            i += 1;
            continue;
        }
        let c = b[i + 1];
        i += 2;
        let simple = match c {
            b'a' => Some(7),
            b'b' => Some(8),
            b'e' | b'E' => Some(0x1b),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            b'\\' | b'\'' | b'"' | b'?' => Some(c),
            _ => None,
        };
        if let Some(byte) = simple {
            out.push(byte);
            continue;
        }
        let digits = |i: &mut usize, max: usize, radix: u32| -> Option<u32> {
            let start = *i;
            let mut value = 0u32;
            while *i < b.len() && *i - start < max {
                match (b[*i] as char).to_digit(radix) {
                    Some(d) => value = value.wrapping_mul(radix).wrapping_add(d),
                    None => break,
                }
                *i += 1;
            }
            (*i > start).then_some(value)
        };
        match c {
            b'0'..=b'7' => {
                i -= 1;
                if let Some(v) = digits(&mut i, 3, 8) {
                    out.push(v as u8);
                }
            }
            b'x' => match digits(&mut i, 2, 16) {
                Some(v) => out.push(v as u8),
                None => out.extend_from_slice(b"\\x"),
            },
            b'u' | b'U' => {
                let max = if c == b'u' { 4 } else { 8 };
                match digits(&mut i, max, 16).and_then(char::from_u32) {
                    Some(ch) => out.extend_from_slice(ch.encode_utf8(&mut [0; 4]).as_bytes()),
                    None => out.extend_from_slice(&[b'\\', c]),
                }
            }
            b'c' if i < b.len() => {
                out.push(b[i] & 0x1f);
                i += 1;
            }
            _ => out.extend_from_slice(&[b'\\', c]),
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The index of the `))` that closes an arithmetic expression starting at `from`, if the text
/// has one before an unbalanced `)`.
fn closing_double_paren(b: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = from;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'\'' | b'"' => {
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q {
                    i += if b[i] == b'\\' && q == b'"' { 2 } else { 1 };
                }
            }
            b'(' => depth += 1,
            b')' if depth == 0 => return (b.get(i + 1) == Some(&b')')).then_some(i),
            b')' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    None
}

impl Parser<'_> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.src.as_bytes().get(at).copied()
    }

    /// The next token.
    pub(super) fn lex(&mut self) -> Result<Lexeme, ParseError> {
        loop {
            match self.byte(self.pos) {
                Some(b' ' | b'\t') => self.pos += 1,
                Some(b'\\') if self.byte(self.pos + 1) == Some(b'\n') => self.pos += 2,
                Some(b'#') => {
                    let rest = &self.src.as_bytes()[self.pos..];
                    self.pos += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                }
                _ => break,
            }
        }
        let start = self.pos;
        let token = self.token(start)?;
        Ok(Lexeme { token, start, end: self.pos })
    }

    fn token(&mut self, start: usize) -> Result<Token, ParseError> {
        let Some(b) = self.byte(start) else {
            return Ok(Token::Eof);
        };
        let next = self.byte(start + 1);
        let third = self.byte(start + 2);
        let (op, len) = match (b, next, third) {
            (b'\n', _, _) => {
                self.pos += 1;
                self.read_heredoc_bodies()?;
                return Ok(Token::Newline);
            }
            (b';', Some(b';'), Some(b'&')) => (Op::DSemiAmp, 3),
            (b';', Some(b';'), _) => (Op::DSemi, 2),
            (b';', Some(b'&'), _) => (Op::SemiAmp, 2),
            (b';', _, _) => (Op::Semi, 1),
            (b'&', Some(b'&'), _) => (Op::AndIf, 2),
            (b'&', Some(b'>'), _) => {
                self.pos += if third == Some(b'>') { 3 } else { 2 };
                return Ok(Token::Redir { fd: None, op: RedirOp::OutErr, strip_tabs: false });
            }
            (b'&', _, _) => (Op::Amp, 1),
            (b'|', Some(b'|'), _) => (Op::OrIf, 2),
            (b'|', Some(b'&'), _) => (Op::PipeAmp, 2),
            (b'|', _, _) => (Op::Pipe, 1),
            (b'(', _, _) => (Op::LParen, 1),
            (b')', _, _) => (Op::RParen, 1),
            (b'<' | b'>', Some(b'('), _) => return self.process_substitution(start).map(Token::Word),
            (b'<' | b'>', _, _) => return Ok(self.redirection(None)),
            (b'0'..=b'9', _, _) => {
                let digits = self.src.as_bytes()[start..].iter().take_while(|b| b.is_ascii_digit()).count();
                if matches!(self.byte(start + digits), Some(b'<' | b'>')) && digits <= 9 {
                    let fd = self.src[start..start + digits].parse().ok();
                    self.pos += digits;
                    return Ok(self.redirection(fd));
                }
                return self.word(start).map(Token::Word);
            }
            _ => return self.word(start).map(Token::Word),
        };
        self.pos += len;
        Ok(Token::Op(op))
    }

    /// A redirection operator at `self.pos` (`<`, `>`, `>>`, `<<`, `<<-`, `<<<`, `<&`, `>&`,
    /// `<>`, `>|`).
    fn redirection(&mut self, fd: Option<u32>) -> Token {
        let rest = &self.src.as_bytes()[self.pos..];
        let (op, len, strip_tabs) = match rest {
            [b'<', b'<', b'<', ..] => (RedirOp::HereString, 3, false),
            [b'<', b'<', b'-', ..] => (RedirOp::Heredoc, 3, true),
            [b'<', b'<', ..] => (RedirOp::Heredoc, 2, false),
            [b'<', b'&', ..] => (RedirOp::DupIn, 2, false),
            [b'<', b'>', ..] => (RedirOp::ReadWrite, 2, false),
            [b'<', ..] => (RedirOp::In, 1, false),
            [b'>', b'>', ..] => (RedirOp::Append, 2, false),
            [b'>', b'&', ..] => (RedirOp::DupOut, 2, false),
            [b'>', b'|', ..] => (RedirOp::Out, 2, false),
            _ => (RedirOp::Out, 1, false),
        };
        self.pos += len;
        Token::Redir { fd, op, strip_tabs }
    }

    /// `<( list )` or `>( list )` as a word of its own.
    fn process_substitution(&mut self, start: usize) -> Result<Word, ParseError> {
        let output = self.byte(start) == Some(b'>');
        self.pos = start + 2;
        let script = self.script_until_paren("process substitution", start)?;
        let raw = self.src[start..self.pos].to_string();
        Ok(Word::new(
            self.shared.clone(),
            start..self.pos,
            vec![Part::Process(ProcessSubst { script, output, raw })],
        ))
    }

    /// An unquoted word starting at `start`.
    fn word(&mut self, start: usize) -> Result<Word, ParseError> {
        let mut parts = Vec::new();
        while let Some(b) = self.byte(self.pos) {
            match b {
                b' ' | b'\t' | b'\n' | b';' | b'&' | b'|' | b'<' | b'>' | b')' => break,
                b'(' if is_array_start(&parts) => self.array(&mut parts)?,
                b'(' => break,
                b'\\' => self.escape(&mut parts),
                b'\'' => self.single_quoted(&mut parts)?,
                b'"' => {
                    self.pos += 1;
                    let inner = self.parts_until(Mode::Double, self.pos - 1)?;
                    if inner.is_empty() {
                        push_lit(&mut parts, "", true);
                    }
                    for p in inner {
                        match p {
                            Part::Lit { text, quoted } => push_lit(&mut parts, &text, quoted),
                            other => parts.push(other),
                        }
                    }
                }
                b'$' => self.dollar(&mut parts, false)?,
                b'`' => self.backtick(&mut parts, false)?,
                _ => {
                    let rest = &self.src.as_bytes()[self.pos..];
                    let len = rest.iter().position(|&b| is_special(b)).unwrap_or(rest.len());
                    push_lit(&mut parts, &self.src[self.pos..self.pos + len], false);
                    self.pos += len;
                }
            }
        }
        if self.pos == start {
            return Err(ParseError::Unexpected {
                found: format!("'{}'", near(self.src, start)),
                expected: "a word",
            });
        }
        Ok(Word::new(self.shared.clone(), start..self.pos, parts))
    }

    /// A backslash outside quotes: a line continuation, or the next character taken literally.
    fn escape(&mut self, parts: &mut Vec<Part>) {
        match self.src[self.pos + 1..].chars().next() {
            Some('\n') => self.pos += 2,
            Some(c) => {
                push_lit(parts, c.encode_utf8(&mut [0; 4]), true);
                self.pos += 1 + c.len_utf8();
            }
            None => {
                push_lit(parts, "\\", false);
                self.pos += 1;
            }
        }
    }

    fn single_quoted(&mut self, parts: &mut Vec<Part>) -> Result<(), ParseError> {
        let start = self.pos;
        let body_start = start + 1;
        let Some(len) = self.src[body_start..].find('\'') else {
            return Err(ParseError::Unterminated { what: "single quote", near: near(self.src, start) });
        };
        push_lit(parts, &self.src[body_start..body_start + len], true);
        self.pos = body_start + len + 1;
        Ok(())
    }

    /// `NAME=( elements… )`: the elements are words, kept as one value.
    fn array(&mut self, parts: &mut Vec<Part>) -> Result<(), ParseError> {
        let start = self.pos;
        self.enter(start)?;
        self.pos += 1;
        push_lit(parts, "(", false);
        let mut first = true;
        loop {
            match self.byte(self.pos) {
                Some(b' ' | b'\t' | b'\n') => self.pos += 1,
                Some(b'#') => {
                    let rest = &self.src.as_bytes()[self.pos..];
                    self.pos += rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
                }
                Some(b')') => {
                    self.pos += 1;
                    push_lit(parts, ")", false);
                    self.leave();
                    return Ok(());
                }
                None => {
                    return Err(ParseError::Unterminated { what: "array value", near: near(self.src, start) })
                }
                Some(_) => {
                    if !first {
                        push_lit(parts, " ", false);
                    }
                    first = false;
                    let element = self.word(self.pos)?;
                    for p in &element.parts {
                        match p {
                            Part::Lit { text, quoted } => push_lit(parts, text, *quoted),
                            other => parts.push(other.clone()),
                        }
                    }
                }
            }
        }
    }

    /// Parts up to the end of `mode`'s run; `start` is where the construct began (for errors).
    fn parts_until(&mut self, mode: Mode, start: usize) -> Result<Vec<Part>, ParseError> {
        let mut parts = Vec::new();
        loop {
            let Some(b) = self.byte(self.pos) else {
                return match mode {
                    Mode::Body => Ok(parts),
                    Mode::Double => {
                        Err(ParseError::Unterminated { what: "double quote", near: near(self.src, start) })
                    }
                    Mode::Operand { .. } => Err(ParseError::Unterminated {
                        what: "${…} expansion",
                        near: near(self.src, start),
                    }),
                };
            };
            match (b, mode) {
                (b'"', Mode::Double) | (b'}', Mode::Operand { .. }) => {
                    self.pos += 1;
                    return Ok(parts);
                }
                (b'\\', _) => {
                    let next = self.src[self.pos + 1..].chars().next();
                    let escapes = matches!(
                        (next, mode),
                        (Some('$' | '`' | '\\'), _)
                            | (Some('"'), Mode::Double | Mode::Operand { dq: true })
                            | (Some('}'), Mode::Operand { .. })
                            | (Some(_), Mode::Operand { dq: false })
                    );
                    match next {
                        Some('\n') => self.pos += 2,
                        Some(c) if escapes => {
                            push_lit(&mut parts, c.encode_utf8(&mut [0; 4]), true);
                            self.pos += 1 + c.len_utf8();
                        }
                        _ => {
                            push_lit(&mut parts, "\\", true);
                            self.pos += 1;
                        }
                    }
                }
                (b'\'', Mode::Operand { dq: false }) => self.single_quoted(&mut parts)?,
                (b'"', Mode::Operand { .. }) => {
                    self.pos += 1;
                    let inner = self.parts_until(Mode::Double, self.pos - 1)?;
                    parts.extend(inner);
                }
                (b'$', _) => self.dollar(&mut parts, true)?,
                (b'`', _) => self.backtick(&mut parts, true)?,
                _ => {
                    let rest = &self.src.as_bytes()[self.pos..];
                    let len = rest
                        .iter()
                        .position(|&b| matches!(b, b'"' | b'}' | b'\\' | b'\'' | b'$' | b'`'))
                        .unwrap_or(rest.len())
                        .max(1);
                    push_lit(&mut parts, &self.src[self.pos..self.pos + len], true);
                    self.pos += len;
                }
            }
        }
    }

    /// Everything that starts with `$`.
    fn dollar(&mut self, parts: &mut Vec<Part>, quoted: bool) -> Result<(), ParseError> {
        let start = self.pos;
        match self.byte(start + 1) {
            Some(b'(') if self.byte(start + 2) == Some(b'(') => {
                self.enter(start)?;
                let arith = self.arithmetic_body(start + 2)?;
                self.leave();
                match arith {
                    Some(inner) => {
                        let raw = self.src[start..self.pos].to_string();
                        parts.push(Part::Arith(Arith { parts: inner, quoted, raw }));
                    }
                    None => self.command_substitution(parts, quoted, start)?,
                }
            }
            Some(b'(') => self.command_substitution(parts, quoted, start)?,
            Some(b'{') => {
                self.pos = start + 2;
                self.enter(start)?;
                let prefixed = matches!(self.byte(self.pos), Some(b'#' | b'!'))
                    && !matches!(self.byte(self.pos + 1), Some(b'}') | None);
                if prefixed {
                    self.pos += 1;
                }
                let name_start = self.pos;
                match self.byte(self.pos) {
                    Some(b) if is_name_start(b) => {
                        while self.byte(self.pos).is_some_and(is_name_byte) {
                            self.pos += 1;
                        }
                    }
                    Some(b'0'..=b'9') => {
                        while self.byte(self.pos).is_some_and(|b| b.is_ascii_digit()) {
                            self.pos += 1;
                        }
                    }
                    Some(b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-') => self.pos += 1,
                    _ => {}
                }
                let name = if prefixed { String::new() } else { self.src[name_start..self.pos].to_string() };
                let operand = self.parts_until(Mode::Operand { dq: quoted }, start)?;
                self.leave();
                let raw = self.src[start..self.pos].to_string();
                parts.push(Part::Param(Param { name, braced: true, quoted, raw, operand }));
            }
            Some(b'\'') if !quoted => {
                let body_start = start + 2;
                let b = self.src.as_bytes();
                let mut i = body_start;
                while i < b.len() && b[i] != b'\'' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                if i >= b.len() {
                    return Err(ParseError::Unterminated {
                        what: "ANSI-C quote",
                        near: near(self.src, start),
                    });
                }
                push_lit(parts, &decode_ansi_c(&self.src[body_start..i]), true);
                self.pos = i + 1;
            }
            Some(b'"') if !quoted => {
                self.pos = start + 2;
                let inner = self.parts_until(Mode::Double, start)?;
                if inner.is_empty() {
                    push_lit(parts, "", true);
                }
                parts.extend(inner);
            }
            Some(b) if is_name_start(b) => {
                self.pos = start + 1;
                while self.byte(self.pos).is_some_and(is_name_byte) {
                    self.pos += 1;
                }
                self.simple_param(parts, quoted, start);
            }
            Some(b'0'..=b'9' | b'@' | b'*' | b'#' | b'?' | b'$' | b'!' | b'-') => {
                self.pos = start + 2;
                self.simple_param(parts, quoted, start);
            }
            _ => {
                push_lit(parts, "$", quoted);
                self.pos = start + 1;
            }
        }
        Ok(())
    }

    fn simple_param(&mut self, parts: &mut Vec<Part>, quoted: bool, start: usize) {
        let raw = self.src[start..self.pos].to_string();
        let name = raw[1..].to_string();
        parts.push(Part::Param(Param { name, braced: false, quoted, raw, operand: Vec::new() }));
    }

    fn command_substitution(
        &mut self,
        parts: &mut Vec<Part>,
        quoted: bool,
        start: usize,
    ) -> Result<(), ParseError> {
        self.pos = start + 2;
        let script = self.script_until_paren("command substitution", start)?;
        let raw = self.src[start..self.pos].to_string();
        parts.push(Part::Command(CommandSubst { script, backtick: false, quoted, raw }));
        Ok(())
    }

    /// `` `…` ``: the body up to the next unescaped backtick, unescaped, parsed on its own.
    fn backtick(&mut self, parts: &mut Vec<Part>, quoted: bool) -> Result<(), ParseError> {
        let start = self.pos;
        let b = self.src.as_bytes();
        let mut i = start + 1;
        while i < b.len() && b[i] != b'`' {
            i += if b[i] == b'\\' { 2 } else { 1 };
        }
        if i >= b.len() {
            return Err(ParseError::Unterminated {
                what: "backtick substitution",
                near: near(self.src, start),
            });
        }
        let mut body = String::with_capacity(i - start);
        let mut chars = self.src[start + 1..i].chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\\' {
                if let Some(&n) = chars.peek() {
                    if n == '$' || n == '`' || n == '\\' || (quoted && n == '"') {
                        body.push(n);
                        chars.next();
                        continue;
                    }
                }
            }
            body.push(c);
        }
        self.enter(start)?;
        let script = Parser::new(&body, self.depth).script()?;
        self.leave();
        self.pos = i + 1;
        let raw = self.src[start..self.pos].to_string();
        parts.push(Part::Command(CommandSubst { script, backtick: true, quoted, raw }));
        Ok(())
    }

    /// The parts of an arithmetic expression whose first `(` of `((` is at `at - 1`; `None` (and
    /// nothing consumed) when the text does not close with `))`, so it is a subshell instead.
    pub(super) fn arithmetic_body(&mut self, at: usize) -> Result<Option<Vec<Part>>, ParseError> {
        if self.byte(at) != Some(b'(') {
            return Ok(None);
        }
        let Some(end) = closing_double_paren(self.src.as_bytes(), at + 1) else {
            return Ok(None);
        };
        let mut inner = Parser::new(&self.src[at + 1..end], self.depth);
        let parts = inner.parts_until(Mode::Body, 0)?;
        self.pos = end + 2;
        Ok(Some(parts))
    }

    /// Reads the bodies of the heredocs begun on the line that just ended.
    fn read_heredoc_bodies(&mut self) -> Result<(), ParseError> {
        for pending in std::mem::take(&mut self.pending) {
            let body_start = self.pos;
            let mut stripped = String::new();
            let body_end = loop {
                if self.pos >= self.src.len() {
                    return Err(ParseError::UnterminatedHeredoc { delimiter: pending.delimiter });
                }
                let rest = &self.src[self.pos..];
                let line_len = rest.find('\n').unwrap_or(rest.len());
                let line = &rest[..line_len];
                let check = if pending.strip_tabs { line.trim_start_matches('\t') } else { line };
                let line_start = self.pos;
                self.pos = (self.pos + line_len + 1).min(self.src.len());
                if check == pending.delimiter {
                    break line_start;
                }
                if pending.strip_tabs {
                    stripped.push_str(check);
                    stripped.push('\n');
                }
            };
            let text = if pending.strip_tabs { stripped } else { self.src[body_start..body_end].to_string() };
            let body = if pending.quoted {
                Word::new(text.as_str().into(), 0..text.len(), vec![Part::Lit { text, quoted: true }])
            } else {
                let mut inner = Parser::new(&text, self.depth);
                let parts = inner.parts_until(Mode::Body, 0)?;
                Word::new(inner.shared.clone(), 0..text.len(), parts)
            };
            if let Some(heredoc) = self.heredocs.get_mut(pending.index) {
                heredoc.body = body;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::parser::parse;
    use super::*;
    use crate::guard::shell::ast::Command;

    /// The words of the first simple command.
    fn first_words(src: &str) -> Vec<Word> {
        let script = parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        match &script.body.pipelines[0].stages[0] {
            Command::Simple(s) => s.words.clone(),
            other => panic!("{src}: not a simple command: {other:?}"),
        }
    }

    fn values(src: &str) -> Vec<Option<String>> {
        first_words(src).iter().map(|w| w.value().map(|v| v.into_owned())).collect()
    }

    #[test]
    fn quotes_and_escapes_give_the_shell_value() {
        assert_eq!(
            values(r#"s''udo "su"do \sudo 'a b' "x\"y" a\ b"#),
            [
                Some("sudo".into()),
                Some("sudo".into()),
                Some("sudo".into()),
                Some("a b".into()),
                Some("x\"y".into()),
                Some("a b".into()),
            ]
        );
        assert_eq!(values("ec\\\nho hi"), [Some("echo".into()), Some("hi".into())]);
        assert_eq!(values(r#""a\nb" '\n'"#), [Some("a\\nb".into()), Some("\\n".into())]);
        assert_eq!(values("'' \"\""), [Some(String::new()), Some(String::new())]);
    }

    #[test]
    fn ansi_c_quotes_are_decoded() {
        assert_eq!(
            values(r"$'\x73udo' $'\163udo' $'su\u0064o' $'a\tb' $'it\'s' $'\cA'"),
            [
                Some("sudo".into()),
                Some("sudo".into()),
                Some("sudo".into()),
                Some("a\tb".into()),
                Some("it's".into()),
                Some("\u{1}".into()),
            ]
        );
    }

    #[test]
    fn expansions_are_parts() {
        let w = &first_words("echo ${HOME:-$(id)}/x$1\"$(pwd)\"`date`$((1+2))")[1];
        let kinds: Vec<&str> = w
            .parts
            .iter()
            .map(|p| match p {
                Part::Lit { .. } => "lit",
                Part::Param(_) => "param",
                Part::Command(c) if c.backtick => "backtick",
                Part::Command(_) => "command",
                Part::Arith(_) => "arith",
                Part::Process(_) => "process",
            })
            .collect();
        assert_eq!(kinds, ["param", "lit", "param", "command", "backtick", "arith"]);
        let Part::Param(p) = &w.parts[0] else { panic!() };
        assert_eq!((p.name.as_str(), p.braced), ("HOME", true));
        assert!(matches!(p.operand.last(), Some(Part::Command(c)) if c.quoted));
        let Part::Command(c) = &w.parts[3] else { panic!() };
        assert!(c.quoted);
        assert_eq!(c.raw, "$(pwd)");
    }

    #[test]
    fn nested_substitutions_and_backticks() {
        let w = &first_words(r#"echo "$(echo "$(sudo id)")" `echo \`sudo id\``"#)[1];
        let Part::Command(outer) = &w.parts[0] else { panic!("{w:?}") };
        let Command::Simple(inner) = &outer.script.body.pipelines[0].stages[0] else { panic!() };
        assert!(matches!(&inner.words[1].parts[0], Part::Command(_)));
        let w = &first_words(r#"echo `echo \`sudo id\``"#)[1];
        let Part::Command(outer) = &w.parts[0] else { panic!() };
        let Command::Simple(inner) = &outer.script.body.pipelines[0].stages[0] else { panic!() };
        let Part::Command(innermost) = &inner.words[1].parts[0] else { panic!("{inner:?}") };
        assert!(innermost.backtick);
    }

    #[test]
    fn arithmetic_falls_back_to_a_nested_subshell() {
        let w = &first_words("echo $((cd a; ls) )")[1];
        assert!(matches!(&w.parts[0], Part::Command(_)), "{w:?}");
        let w = &first_words("echo $(( (1+2) * 3 ))")[1];
        assert!(matches!(&w.parts[0], Part::Arith(_)), "{w:?}");
    }

    #[test]
    fn process_substitution_and_redirections() {
        let script = parse("diff <(sort a) >(tee b) 2>&1 >>log &>all <in").unwrap();
        let Command::Simple(s) = &script.body.pipelines[0].stages[0] else { panic!() };
        assert!(matches!(&s.words[1].parts[0], Part::Process(p) if !p.output));
        assert!(matches!(&s.words[2].parts[0], Part::Process(p) if p.output));
        let ops: Vec<(Option<u32>, RedirOp)> = s.redirects.iter().map(|r| (r.fd, r.op)).collect();
        assert_eq!(
            ops,
            [
                (Some(2), RedirOp::DupOut),
                (None, RedirOp::Append),
                (None, RedirOp::OutErr),
                (None, RedirOp::In)
            ]
        );
    }

    #[test]
    fn assignments_are_recognised() {
        let script = parse("A=1 B+=2 C[0]=3 D=\"x y\" cmd E=4").unwrap();
        let Command::Simple(s) = &script.body.pipelines[0].stages[0] else { panic!() };
        let names: Vec<&str> = s.assignments.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["A", "B", "C", "D"]);
        assert_eq!(s.assignments[3].value.value().as_deref(), Some("x y"));
        assert_eq!(s.words.len(), 2);
        assert!(assignment(&Word::literal("1x=2")).is_none());
        assert!(assignment(&Word::literal("=2")).is_none());
    }

    #[test]
    fn comments_are_dropped_but_hash_inside_a_word_is_kept() {
        assert_eq!(values("echo a#b # sudo rm"), [Some("echo".into()), Some("a#b".into())]);
    }
}
