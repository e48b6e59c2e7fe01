//! The syntax tree the parser builds and the analysis walks.
//!
//! It keeps what the rules need and nothing more: list separators (`;`, `&&`, `||`, `&`, newline)
//! all split commands the same way (Decision 3), so a [`List`] is just its pipelines in order. A
//! [`Word`] keeps its source text (`raw`, for the segments matcher and messages) and its parts,
//! so that quoting, expansions and substitutions stay visible to the rules. Words are shared
//! (`Arc`): the analysis keeps many of them and copying one costs a reference count.

use std::borrow::Cow;
use std::ops::{Deref, Range};
use std::sync::Arc;

/// A parsed command string (or a nested one: a `$( )` body, an `sh -c` argument, …).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Script {
    pub body: List,
    /// Heredoc bodies, indexed by [`Target::Heredoc`].
    pub heredocs: Vec<Heredoc>,
}

/// Pipelines separated by `;`, `&&`, `||`, `&` or newlines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct List {
    pub pipelines: Vec<Pipeline>,
}

/// `[!] cmd [| cmd]…` (`|&` included).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pipeline {
    pub negated: bool,
    pub stages: Vec<Command>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    Simple(SimpleCommand),
    Compound {
        body: Compound,
        redirects: Vec<Redirect>,
    },
    /// `name() body` or `function name body`.
    Function {
        name: String,
        body: Box<Command>,
    },
}

/// `VAR=x cmd args… redirections…`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SimpleCommand {
    pub assignments: Vec<Assignment>,
    pub words: Vec<Word>,
    pub redirects: Vec<Redirect>,
}

/// `NAME=value` (also `NAME+=value` and `NAME[i]=value`) before the command name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assignment {
    pub name: String,
    pub value: Word,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Compound {
    /// `( list )`.
    Subshell(List),
    /// `{ list; }`.
    Group(List),
    /// `if c; then b; [elif c; then b;]… [else b;] fi`.
    If { branches: Vec<(List, List)>, otherwise: Option<List> },
    /// `while c; do b; done` and `until c; do b; done`.
    Loop { condition: List, body: List },
    /// `for NAME [in words]; do b; done` and `select …`.
    For { name: String, words: Vec<Word>, body: List },
    /// `for ((init; cond; step)); do b; done`.
    ArithFor { header: Vec<Part>, body: List },
    /// `case word in pattern) list;; … esac`.
    Case { subject: Word, arms: Vec<CaseArm> },
    /// `(( expression ))`.
    Arith(Vec<Part>),
    /// `[[ expression ]]`.
    Test(Vec<Word>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseArm {
    pub patterns: Vec<Word>,
    pub body: List,
}

/// `[n]op target`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redirect {
    pub fd: Option<u32>,
    pub op: RedirOp,
    pub target: Target,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RedirOp {
    /// `<`
    In,
    /// `>`, `>|`
    Out,
    /// `>>`
    Append,
    /// `<>`
    ReadWrite,
    /// `<&`
    DupIn,
    /// `>&`
    DupOut,
    /// `&>`, `&>>`: stdout and stderr.
    OutErr,
    /// `<<`, `<<-`
    Heredoc,
    /// `<<<`
    HereString,
}

impl Redirect {
    /// Whether the redirection writes to its target.
    pub fn writes(&self) -> bool {
        matches!(
            self.op,
            RedirOp::Out | RedirOp::Append | RedirOp::ReadWrite | RedirOp::DupOut | RedirOp::OutErr
        )
    }

    /// Whether it feeds standard input (fd 0).
    pub fn feeds_stdin(&self) -> bool {
        matches!(
            self.op,
            RedirOp::In | RedirOp::ReadWrite | RedirOp::DupIn | RedirOp::Heredoc | RedirOp::HereString
        ) && self.fd.unwrap_or(0) == 0
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    Word(Word),
    /// Index into the enclosing [`Script::heredocs`].
    Heredoc(usize),
}

/// A here-document. With an unquoted delimiter the body is expanded like a double-quoted string
/// (its `$( )` run); with a quoted one it is a single literal part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Heredoc {
    pub delimiter: String,
    pub quoted: bool,
    pub body: Word,
}

/// One shell word (see [`WordData`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Word(Arc<WordData>);

/// A word's content: its parts, and its source text as a span of the (shared) text it was read
/// from, so that reading a word costs no copy of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WordData {
    pub(super) source: Arc<str>,
    pub(super) span: Range<usize>,
    pub parts: Vec<Part>,
}

impl WordData {
    /// The word as written.
    pub fn raw(&self) -> &str {
        self.source.get(self.span.clone()).unwrap_or("")
    }
}

impl Deref for Word {
    type Target = WordData;
    fn deref(&self) -> &WordData {
        &self.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Part {
    /// Literal text; `quoted` when it came from quotes or a backslash escape.
    Lit { text: String, quoted: bool },
    /// `$NAME`, `$1`, `$@`, `${NAME…}`.
    Param(Param),
    /// `$( … )` or `` `…` ``.
    Command(CommandSubst),
    /// `$(( … ))`.
    Arith(Arith),
    /// `<( … )` or `>( … )`.
    Process(ProcessSubst),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The parameter's name (`HOME`, `1`, `@`); empty when it cannot be told.
    pub name: String,
    /// Written as `${…}`.
    pub braced: bool,
    /// Inside double quotes (or a heredoc body): no field splitting.
    pub quoted: bool,
    pub raw: String,
    /// What follows the name inside the braces (`:-default`, `#pattern`…), parsed.
    pub operand: Vec<Part>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandSubst {
    pub script: Script,
    pub backtick: bool,
    /// Inside double quotes, a heredoc body or a `${…}` operand.
    pub quoted: bool,
    pub raw: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arith {
    pub parts: Vec<Part>,
    pub quoted: bool,
    pub raw: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessSubst {
    pub script: Script,
    /// `>( … )`: the command reads what is written to the path.
    pub output: bool,
    pub raw: String,
}

/// A piece of a word's static view: literal text, or an expansion whose value is unknown
/// (`Var` when it is a plain parameter, so `$HOME` can still be recognised).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Frag<'a> {
    Text(String),
    Var(&'a str),
    Hole,
}

impl Part {
    fn is_unquoted_expansion(&self) -> bool {
        match self {
            Part::Lit { .. } | Part::Process(_) => false,
            Part::Param(p) => !p.quoted,
            Part::Command(c) => !c.quoted,
            Part::Arith(a) => !a.quoted,
        }
    }
}

impl Word {
    /// The word at `span` of `source`.
    pub fn new(source: Arc<str>, span: Range<usize>, parts: Vec<Part>) -> Word {
        Word(Arc::new(WordData { source, span, parts }))
    }

    /// A word made of one literal.
    pub fn literal(text: &str) -> Word {
        Word::new(text.into(), 0..text.len(), vec![Part::Lit { text: text.to_string(), quoted: false }])
    }

    /// The word's value when it has no expansion at all.
    pub fn value(&self) -> Option<Cow<'_, str>> {
        match self.parts.as_slice() {
            [] => Some(Cow::Borrowed("")),
            [Part::Lit { text, .. }] => Some(Cow::Borrowed(text)),
            parts => {
                let mut out = String::new();
                for part in parts {
                    match part {
                        Part::Lit { text, .. } => out.push_str(text),
                        _ => return None,
                    }
                }
                Some(Cow::Owned(out))
            }
        }
    }

    /// Whether the word is exactly the unquoted reserved word `kw`.
    pub fn is_keyword(&self, kw: &str) -> bool {
        matches!(self.parts.as_slice(), [Part::Lit { text, quoted: false }] if text == kw)
    }

    /// The value with every expansion replaced by `hole`: the text a nested shell would be
    /// handed, up to what only the run can tell.
    pub fn text_with_holes(&self, hole: &str) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Lit { text, .. } => out.push_str(text),
                _ => out.push_str(hole),
            }
        }
        out
    }

    /// The literal text before the first unquoted expansion: what field splitting would leave as
    /// the first field (`sudo${IFS}id` → `sudo`).
    pub fn literal_prefix(&self) -> String {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Lit { text, .. } => out.push_str(text),
                p if p.is_unquoted_expansion() => break,
                _ => {}
            }
        }
        out
    }

    /// All literal text, expansions dropped (`s$empty"udo"` → `sudo`).
    pub fn literals(&self) -> String {
        self.text_with_holes("")
    }

    /// Whether the word is nothing but unquoted expansions, which may expand to no field at all.
    pub fn is_only_unquoted_expansions(&self) -> bool {
        !self.parts.is_empty() && self.parts.iter().all(Part::is_unquoted_expansion)
    }

    /// The user part of a leading unquoted tilde (`~` → `""`, `~root/x` → `"root"`).
    pub fn tilde_user(&self) -> Option<&str> {
        match self.parts.first() {
            Some(Part::Lit { text, quoted: false }) if text.starts_with('~') => {
                let rest = &text[1..];
                Some(rest.split('/').next().unwrap_or(""))
            }
            _ => None,
        }
    }

    /// The static view: adjacent literals merged, expansions as [`Frag::Var`] or [`Frag::Hole`].
    pub fn frags(&self) -> Vec<Frag<'_>> {
        let mut out: Vec<Frag<'_>> = Vec::new();
        for part in &self.parts {
            match part {
                Part::Lit { text, .. } => match out.last_mut() {
                    Some(Frag::Text(t)) => t.push_str(text),
                    _ => out.push(Frag::Text(text.clone())),
                },
                Part::Param(p) if p.operand.is_empty() && !p.name.is_empty() => out.push(Frag::Var(&p.name)),
                _ => out.push(Frag::Hole),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(t: &str, quoted: bool) -> Part {
        Part::Lit { text: t.into(), quoted }
    }

    fn var(name: &str, quoted: bool) -> Part {
        Part::Param(Param {
            name: name.into(),
            braced: false,
            quoted,
            raw: format!("${name}"),
            operand: vec![],
        })
    }

    #[test]
    fn static_views_of_a_word() {
        let w = Word::new("".into(), 0..0, vec![lit("sudo", false), var("IFS", false), lit("id", false)]);
        assert_eq!(w.value(), None);
        assert_eq!(w.literal_prefix(), "sudo");
        assert_eq!(w.literals(), "sudoid");
        assert_eq!(w.text_with_holes("$_"), "sudo$_id");
        assert_eq!(w.frags(), vec![Frag::Text("sudo".into()), Frag::Var("IFS"), Frag::Text("id".into())]);
        let q = Word::new("".into(), 0..0, vec![lit("s", false), var("x", true), lit("udo", true)]);
        assert_eq!(q.literal_prefix(), "sudo");
        assert!(Word::new("".into(), 0..0, vec![var("X", false)]).is_only_unquoted_expansions());
        assert!(!Word::new("".into(), 0..0, vec![var("X", true)]).is_only_unquoted_expansions());
    }

    #[test]
    fn tilde_only_when_unquoted_at_the_start() {
        assert_eq!(Word::literal("~").tilde_user(), Some(""));
        assert_eq!(Word::literal("~root/x").tilde_user(), Some("root"));
        assert_eq!(Word::new("\"~\"".into(), 0..3, vec![lit("~", true)]).tilde_user(), None);
        assert!(Word::literal("fi").is_keyword("fi"));
        assert!(!Word::new("'fi'".into(), 0..4, vec![lit("fi", true)]).is_keyword("fi"));
    }
}
