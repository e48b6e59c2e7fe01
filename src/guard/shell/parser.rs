//! The grammar: a recursive-descent parser for POSIX shell (and the bash forms agents use)
//! from the token stream of `lexer` to the tree of [`super::ast`].
//!
//! [`parse`] is the entry point. It reads a list of and-or lists of pipelines of commands; a
//! command is a simple command, a compound command (`( )`, `{ }`, `if`, `while`/`until`,
//! `for`/`select`, `case`, `(( ))`, `[[ ]]`) or a function definition. The lexer calls back into
//! `Parser::list` for `$( )` and `<( )` bodies and starts nested parsers for backticks,
//! arithmetic and heredoc bodies, so one cursor walks the whole text once. Nesting is bounded by
//! [`MAX_DEPTH`]; anything malformed is a [`ParseError`], never a guess.

use std::borrow::Cow;
use std::sync::Arc;

use super::ast::{
    CaseArm, Command, Compound, Heredoc, List, Part, Pipeline, RedirOp, Redirect, Script, SimpleCommand,
    Target, Word,
};
use super::error::{near, ParseError};
use super::lexer::{Lexeme, Op, Token};

/// How deeply quotes, substitutions and compound commands may nest.
pub const MAX_DEPTH: usize = 64;

/// Parses a whole command string.
pub fn parse(src: &str) -> Result<Script, ParseError> {
    Parser::new(src, 0).script()
}

/// A here-document whose body starts after the next newline.
pub(super) struct Pending {
    pub(super) index: usize,
    pub(super) delimiter: String,
    pub(super) strip_tabs: bool,
    pub(super) quoted: bool,
}

/// The cursor over one source text, with the heredoc bookkeeping of the script being built.
pub(super) struct Parser<'a> {
    pub(super) src: &'a str,
    /// The same text, shared by the words read from it.
    pub(super) shared: Arc<str>,
    pub(super) pos: usize,
    pub(super) depth: usize,
    pub(super) peeked: Option<Lexeme>,
    /// The heredoc table of the [`Script`] being built.
    pub(super) heredocs: Vec<Heredoc>,
    pub(super) pending: Vec<Pending>,
}

/// Words that end a list when they stand where a command would start.
const LIST_END_KEYWORDS: &[&str] = &["then", "else", "elif", "fi", "do", "done", "esac", "}"];

impl<'a> Parser<'a> {
    pub(super) fn new(src: &'a str, depth: usize) -> Parser<'a> {
        Parser {
            src,
            shared: src.into(),
            pos: 0,
            depth,
            peeked: None,
            heredocs: Vec::new(),
            pending: Vec::new(),
        }
    }

    /// A whole script: a list, then the end of the text.
    pub(super) fn script(&mut self) -> Result<Script, ParseError> {
        let body = self.list()?;
        let end = self.next()?;
        if end.token != Token::Eof {
            return Err(self.unexpected(&end, "end of input"));
        }
        self.check_pending()?;
        Ok(Script { body, heredocs: std::mem::take(&mut self.heredocs) })
    }

    /// The body of `$( … )` or `<( … )`, up to and including the `)`. The heredocs of the body
    /// belong to it, so the outer table and pending list are set aside meanwhile.
    pub(super) fn script_until_paren(
        &mut self,
        what: &'static str,
        start: usize,
    ) -> Result<Script, ParseError> {
        self.enter(start)?;
        let outer_heredocs = std::mem::take(&mut self.heredocs);
        let outer_pending = std::mem::take(&mut self.pending);
        let body = self.list()?;
        let close = self.next()?;
        if close.token != Token::Op(Op::RParen) {
            return Err(match close.token {
                Token::Eof => ParseError::Unterminated { what, near: near(self.src, start) },
                _ => self.unexpected(&close, "')'"),
            });
        }
        self.check_pending()?;
        let heredocs = std::mem::replace(&mut self.heredocs, outer_heredocs);
        self.pending = outer_pending;
        self.leave();
        Ok(Script { body, heredocs })
    }

    fn check_pending(&self) -> Result<(), ParseError> {
        match self.pending.first() {
            Some(p) => Err(ParseError::UnterminatedHeredoc { delimiter: p.delimiter.clone() }),
            None => Ok(()),
        }
    }

    /// One more level of nesting, refused past [`MAX_DEPTH`].
    pub(super) fn enter(&mut self, at: usize) -> Result<(), ParseError> {
        if self.depth >= MAX_DEPTH {
            return Err(ParseError::TooDeep { limit: MAX_DEPTH, near: near(self.src, at) });
        }
        self.depth += 1;
        Ok(())
    }

    pub(super) fn leave(&mut self) {
        self.depth -= 1;
    }

    pub(super) fn peek(&mut self) -> Result<&Lexeme, ParseError> {
        let lexeme = match self.peeked.take() {
            Some(l) => l,
            None => self.lex()?,
        };
        Ok(self.peeked.insert(lexeme))
    }

    pub(super) fn next(&mut self) -> Result<Lexeme, ParseError> {
        match self.peeked.take() {
            Some(l) => Ok(l),
            None => self.lex(),
        }
    }

    fn peek_is(&mut self, op: Op) -> Result<bool, ParseError> {
        Ok(self.peek()?.token == Token::Op(op))
    }

    fn peek_keyword(&mut self, kw: &str) -> Result<bool, ParseError> {
        Ok(matches!(&self.peek()?.token, Token::Word(w) if w.is_keyword(kw)))
    }

    fn unexpected(&self, lexeme: &Lexeme, expected: &'static str) -> ParseError {
        let found = match &lexeme.token {
            Token::Eof => "end of input".to_string(),
            Token::Newline => "newline".to_string(),
            _ => format!("'{}'", near(&self.src[..lexeme.end], lexeme.start)),
        };
        ParseError::Unexpected { found, expected }
    }

    fn expect_op(&mut self, op: Op, expected: &'static str) -> Result<(), ParseError> {
        let l = self.next()?;
        if l.token == Token::Op(op) {
            Ok(())
        } else {
            Err(self.unexpected(&l, expected))
        }
    }

    fn expect_keyword(&mut self, kw: &'static str) -> Result<(), ParseError> {
        let l = self.next()?;
        let expected = match kw {
            "}" => "'}'",
            "then" => "'then'",
            "fi" => "'fi'",
            "do" => "'do'",
            "done" => "'done'",
            "in" => "'in'",
            other => other,
        };
        match &l.token {
            Token::Word(w) if w.is_keyword(kw) => Ok(()),
            _ => Err(self.unexpected(&l, expected)),
        }
    }

    fn skip_newlines(&mut self) -> Result<(), ParseError> {
        while self.peek()?.token == Token::Newline {
            self.next()?;
        }
        Ok(())
    }

    fn at_list_end(&mut self) -> Result<bool, ParseError> {
        Ok(match &self.peek()?.token {
            Token::Eof | Token::Op(Op::RParen | Op::DSemi | Op::SemiAmp | Op::DSemiAmp) => true,
            Token::Word(w) => LIST_END_KEYWORDS.iter().any(|kw| w.is_keyword(kw)),
            _ => false,
        })
    }

    /// Pipelines separated by `;`, `&`, `&&`, `||` and newlines, up to a word or token that
    /// closes the enclosing construct (left for the caller to check).
    pub(super) fn list(&mut self) -> Result<List, ParseError> {
        let mut pipelines = Vec::new();
        loop {
            self.skip_newlines()?;
            if self.at_list_end()? {
                break;
            }
            pipelines.push(self.pipeline()?);
            while matches!(self.peek()?.token, Token::Op(Op::AndIf | Op::OrIf)) {
                self.next()?;
                self.skip_newlines()?;
                pipelines.push(self.pipeline()?);
            }
            match self.peek()?.token {
                Token::Op(Op::Semi | Op::Amp) => {
                    self.next()?;
                }
                Token::Newline => {}
                _ => break,
            }
        }
        Ok(List { pipelines })
    }

    /// A list that must hold at least one command (the body of a compound command).
    fn nonempty_list(&mut self, expected: &'static str) -> Result<List, ParseError> {
        let list = self.list()?;
        if list.pipelines.is_empty() {
            let l = self.next()?;
            return Err(self.unexpected(&l, expected));
        }
        Ok(list)
    }

    fn pipeline(&mut self) -> Result<Pipeline, ParseError> {
        let negated = self.peek_keyword("!")?;
        if negated {
            self.next()?;
        }
        let mut stages = vec![self.command()?];
        while matches!(self.peek()?.token, Token::Op(Op::Pipe | Op::PipeAmp)) {
            self.next()?;
            self.skip_newlines()?;
            stages.push(self.command()?);
        }
        Ok(Pipeline { negated, stages })
    }

    fn command(&mut self) -> Result<Command, ParseError> {
        let (start, open_paren, keyword) = {
            let l = self.peek()?;
            let keyword = match &l.token {
                Token::Word(w) => ["{", "if", "while", "until", "for", "select", "case", "function", "[["]
                    .into_iter()
                    .find(|kw| w.is_keyword(kw)),
                _ => None,
            };
            (l.start, l.token == Token::Op(Op::LParen), keyword)
        };
        if open_paren {
            return self.paren_command(start);
        }
        let Some(keyword) = keyword else {
            return self.simple_command();
        };
        self.next()?;
        self.enter(start)?;
        let body = match keyword {
            "{" => {
                let list = self.nonempty_list("a command")?;
                self.expect_keyword("}")?;
                Compound::Group(list)
            }
            "if" => self.if_clause()?,
            "while" | "until" => {
                let condition = self.nonempty_list("a condition")?;
                self.expect_keyword("do")?;
                let body = self.nonempty_list("a command")?;
                self.expect_keyword("done")?;
                Compound::Loop { condition, body }
            }
            "for" | "select" => self.for_clause()?,
            "case" => self.case_clause()?,
            "function" => {
                let name = self.function_name()?;
                if self.peek_is(Op::LParen)? {
                    self.next()?;
                    self.expect_op(Op::RParen, "')'")?;
                }
                self.skip_newlines()?;
                let body = Box::new(self.command()?);
                self.leave();
                return Ok(Command::Function { name, body });
            }
            _ => self.test_clause(start)?,
        };
        self.leave();
        let redirects = self.redirects()?;
        Ok(Command::Compound { body, redirects })
    }

    /// `( list )`, or bash's arithmetic command `(( expr ))` when the text closes with `))`.
    fn paren_command(&mut self, start: usize) -> Result<Command, ParseError> {
        self.next()?;
        self.enter(start)?;
        let body = match self.arithmetic_body(start + 1)? {
            Some(parts) => Compound::Arith(parts),
            None => {
                let list = self.nonempty_list("a command")?;
                self.expect_op(Op::RParen, "')'")?;
                Compound::Subshell(list)
            }
        };
        self.leave();
        let redirects = self.redirects()?;
        Ok(Command::Compound { body, redirects })
    }

    fn if_clause(&mut self) -> Result<Compound, ParseError> {
        let mut branches = Vec::new();
        loop {
            let condition = self.nonempty_list("a condition")?;
            self.expect_keyword("then")?;
            let body = self.nonempty_list("a command")?;
            branches.push((condition, body));
            if self.peek_keyword("elif")? {
                self.next()?;
                continue;
            }
            break;
        }
        let otherwise = if self.peek_keyword("else")? {
            self.next()?;
            Some(self.nonempty_list("a command")?)
        } else {
            None
        };
        self.expect_keyword("fi")?;
        Ok(Compound::If { branches, otherwise })
    }

    fn for_clause(&mut self) -> Result<Compound, ParseError> {
        let l = self.peek()?;
        let (start, paren) = (l.start, l.token == Token::Op(Op::LParen));
        if paren {
            self.next()?;
            let Some(header) = self.arithmetic_body(start + 1)? else {
                let l = self.next()?;
                return Err(self.unexpected(&l, "'((' of an arithmetic for loop"));
            };
            if self.peek_is(Op::Semi)? {
                self.next()?;
            }
            self.skip_newlines()?;
            self.expect_keyword("do")?;
            let body = self.nonempty_list("a command")?;
            self.expect_keyword("done")?;
            return Ok(Compound::ArithFor { header, body });
        }
        let name_lexeme = self.next()?;
        let name = match &name_lexeme.token {
            Token::Word(w) => w.value().unwrap_or_default().into_owned(),
            _ => return Err(self.unexpected(&name_lexeme, "a loop variable")),
        };
        self.skip_newlines()?;
        let mut words = Vec::new();
        if self.peek_keyword("in")? {
            self.next()?;
            loop {
                let l = self.next()?;
                match l.token {
                    Token::Word(w) => words.push(w),
                    Token::Op(Op::Semi) | Token::Newline => break,
                    _ => return Err(self.unexpected(&l, "';' or a newline")),
                }
            }
        } else if self.peek_is(Op::Semi)? {
            self.next()?;
        }
        self.skip_newlines()?;
        self.expect_keyword("do")?;
        let body = self.nonempty_list("a command")?;
        self.expect_keyword("done")?;
        Ok(Compound::For { name, words, body })
    }

    fn case_clause(&mut self) -> Result<Compound, ParseError> {
        let l = self.next()?;
        let subject = match l.token {
            Token::Word(w) => w,
            _ => return Err(self.unexpected(&l, "a word after 'case'")),
        };
        self.skip_newlines()?;
        self.expect_keyword("in")?;
        let mut arms = Vec::new();
        loop {
            self.skip_newlines()?;
            if self.peek_keyword("esac")? {
                self.next()?;
                break;
            }
            if self.peek_is(Op::LParen)? {
                self.next()?;
            }
            let mut patterns = Vec::new();
            loop {
                let l = self.next()?;
                match l.token {
                    Token::Word(w) => patterns.push(w),
                    _ => return Err(self.unexpected(&l, "a case pattern")),
                }
                let l = self.next()?;
                match l.token {
                    Token::Op(Op::Pipe) => continue,
                    Token::Op(Op::RParen) => break,
                    _ => return Err(self.unexpected(&l, "')' after a case pattern")),
                }
            }
            let body = self.list()?;
            arms.push(CaseArm { patterns, body });
            if matches!(self.peek()?.token, Token::Op(Op::DSemi | Op::SemiAmp | Op::DSemiAmp)) {
                self.next()?;
            } else if !self.peek_keyword("esac")? {
                let l = self.next()?;
                return Err(self.unexpected(&l, "';;' or 'esac'"));
            }
        }
        Ok(Compound::Case { subject, arms })
    }

    /// `[[ … ]]`: every token up to `]]` is an operand, operators included.
    fn test_clause(&mut self, start: usize) -> Result<Compound, ParseError> {
        let mut words = Vec::new();
        loop {
            let l = self.next()?;
            match l.token {
                Token::Word(w) if w.is_keyword("]]") => break,
                Token::Word(w) => words.push(w),
                Token::Newline => {}
                Token::Eof => {
                    return Err(ParseError::Unterminated { what: "'[[' test", near: near(self.src, start) })
                }
                Token::Op(_) | Token::Redir { .. } => words.push(Word::literal(&self.src[l.start..l.end])),
            }
        }
        Ok(Compound::Test(words))
    }

    fn function_name(&mut self) -> Result<String, ParseError> {
        let l = self.next()?;
        match &l.token {
            Token::Word(w) => Ok(w.value().map_or_else(|| w.raw().to_string(), Cow::into_owned)),
            _ => Err(self.unexpected(&l, "a function name")),
        }
    }

    fn redirects(&mut self) -> Result<Vec<Redirect>, ParseError> {
        let mut out = Vec::new();
        while matches!(self.peek()?.token, Token::Redir { .. }) {
            out.push(self.redirect()?);
        }
        Ok(out)
    }

    fn redirect(&mut self) -> Result<Redirect, ParseError> {
        let l = self.next()?;
        let Token::Redir { fd, op, strip_tabs } = l.token else {
            return Err(self.unexpected(&l, "a redirection"));
        };
        let target = self.next()?;
        let Token::Word(word) = target.token else {
            return Err(self.unexpected(&target, "a redirection target"));
        };
        if op != RedirOp::Heredoc {
            return Ok(Redirect { fd, op, target: Target::Word(word) });
        }
        let quoted = word.parts.iter().any(|p| matches!(p, Part::Lit { quoted: true, .. }));
        let delimiter = word.value().map_or_else(|| word.raw().to_string(), Cow::into_owned);
        let index = self.heredocs.len();
        self.heredocs.push(Heredoc { delimiter: delimiter.clone(), quoted, body: Word::default() });
        self.pending.push(Pending { index, delimiter, strip_tabs, quoted });
        Ok(Redirect { fd, op, target: Target::Heredoc(index) })
    }

    fn simple_command(&mut self) -> Result<Command, ParseError> {
        let mut cmd = SimpleCommand::default();
        loop {
            match &self.peek()?.token {
                Token::Redir { .. } => cmd.redirects.push(self.redirect()?),
                Token::Word(_) => {
                    let l = self.next()?;
                    let Token::Word(word) = l.token else {
                        return Err(self.unexpected(&l, "a word"));
                    };
                    if cmd.words.is_empty() {
                        if let Some(assignment) = super::lexer::assignment(&word) {
                            cmd.assignments.push(assignment);
                            continue;
                        }
                        if cmd.assignments.is_empty()
                            && cmd.redirects.is_empty()
                            && self.peek_is(Op::LParen)?
                        {
                            return self.function_definition(word, l.start);
                        }
                    }
                    cmd.words.push(word);
                }
                _ => break,
            }
        }
        if cmd.words.is_empty() && cmd.assignments.is_empty() && cmd.redirects.is_empty() {
            let l = self.next()?;
            return Err(self.unexpected(&l, "a command"));
        }
        Ok(Command::Simple(cmd))
    }

    /// `name() body`, the name already read and `(` next.
    fn function_definition(&mut self, name: Word, start: usize) -> Result<Command, ParseError> {
        self.next()?;
        self.expect_op(Op::RParen, "')' of a function definition")?;
        self.skip_newlines()?;
        self.enter(start)?;
        let body = Box::new(self.command()?);
        self.leave();
        Ok(Command::Function {
            name: name.value().map_or_else(|| name.raw().to_string(), Cow::into_owned),
            body,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(cmd: &Command) -> Vec<String> {
        match cmd {
            Command::Simple(s) => s.words.iter().map(|w| w.raw().to_string()).collect(),
            _ => vec![],
        }
    }

    fn first_stage(script: &Script, i: usize) -> &Command {
        &script.body.pipelines[i].stages[0]
    }

    #[test]
    fn lists_and_pipelines_split_on_every_separator() {
        let s = parse("a 1; b && c || d & e\nf | g |& h").unwrap();
        let names: Vec<Vec<String>> =
            s.body.pipelines.iter().map(|p| p.stages.iter().flat_map(words).take(1).collect()).collect();
        assert_eq!(names.len(), 6);
        assert_eq!(s.body.pipelines[5].stages.len(), 3);
        assert_eq!(words(first_stage(&s, 0)), vec!["a", "1"]);
    }

    #[test]
    fn compound_commands_parse() {
        for src in [
            "if a; then b; elif c; then d; else e; fi",
            "while a; do b; done",
            "until a\ndo\n b\ndone",
            "for x in 1 2 3; do echo $x; done",
            "for x; do :; done",
            "for ((i=0; i<3; i++)); do echo $i; done",
            "case $x in a|b) echo a;; (c) echo c;; *) ;; esac",
            "case x in\n a) b\n ;;\nesac",
            "{ a; b; } > out",
            "(a; b) 2>&1",
            "f() { echo hi; }",
            "function g { echo hi; }",
            "function h() (echo hi)",
            "(( x = 1 + 2 ))",
            "[[ -f a && $x == b ]] && echo y",
            "! a | b",
            "select x in a b; do break; done",
            "arr=(one two three); echo ${arr[1]}",
        ] {
            parse(src).unwrap_or_else(|e| panic!("{src}: {e}"));
        }
    }

    #[test]
    fn malformed_input_is_an_error_naming_the_construct() {
        let cases: &[(&str, &str)] = &[
            ("echo 'abc", "unterminated single quote"),
            ("echo \"abc", "unterminated double quote"),
            ("echo $(ls", "unterminated command substitution"),
            ("echo `ls", "unterminated backtick"),
            ("echo ${x", "unterminated ${…} expansion"),
            ("(echo", "unexpected end of input"),
            ("echo )", "unexpected ')'"),
            ("if a; then b", "unexpected end of input where 'fi' was expected"),
            ("cat <<EOF\nbody", "here-document is not terminated by a line 'EOF'"),
            ("; ls", "unexpected ';'"),
            ("a && ", "unexpected end of input"),
            ("{ }", "unexpected '}'"),
            ("echo $'abc", "unterminated ANSI-C quote"),
        ];
        for (src, msg) in cases {
            let err = parse(src).expect_err(src).to_string();
            assert!(err.contains(msg), "{src}: {err}");
        }
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}x{}", "$(".repeat(MAX_DEPTH + 1), ")".repeat(MAX_DEPTH + 1));
        assert!(matches!(parse(&deep), Err(ParseError::TooDeep { .. })));
        let ok = format!("{}x{}", "$(".repeat(MAX_DEPTH - 1), ")".repeat(MAX_DEPTH - 1));
        parse(&ok).unwrap();
        let parens = format!("{}x{}", "( ".repeat(10_000), " )".repeat(10_000));
        assert!(matches!(parse(&parens), Err(ParseError::TooDeep { .. })));
    }

    #[test]
    fn heredoc_bodies_attach_to_their_redirections() {
        let s =
            parse("cat <<EOF; cat <<-'END'\nline $(id)\nEOF\n\tliteral $(id)\n\tEND\necho after").unwrap();
        assert_eq!(s.heredocs.len(), 2);
        assert_eq!(s.heredocs[0].delimiter, "EOF");
        assert!(!s.heredocs[0].quoted);
        assert!(s.heredocs[0].body.parts.iter().any(|p| matches!(p, Part::Command(_))));
        assert!(s.heredocs[1].quoted);
        assert_eq!(s.heredocs[1].body.value().as_deref(), Some("literal $(id)\n"));
        assert_eq!(s.body.pipelines.len(), 3);
        assert_eq!(words(first_stage(&s, 2)), vec!["echo", "after"]);
    }

    #[test]
    fn heredocs_inside_a_substitution_belong_to_it() {
        let s = parse("x=$(cat <<EOF\nhi\nEOF\n); echo $x").unwrap();
        assert!(s.heredocs.is_empty());
        let Command::Simple(cmd) = first_stage(&s, 0) else { panic!() };
        let Part::Command(sub) = &cmd.assignments[0].value.parts[0] else { panic!() };
        assert_eq!(sub.script.heredocs[0].body.value().as_deref(), Some("hi\n"));
    }
}
