//! From syntax to facts: every program the command string may start, every word whose text
//! matters, every construct evaluated at run time.
//!
//! [`analyse`] parses the command and walks the tree once. For each simple command it asks
//! [`invocations`] what runs, records each program as a [`Cmd`] (with the pipeline stage and
//! substitutions it sits in), and re-parses the shell code it finds (`sh -c`, `eval`, a heredoc
//! or here-string fed to a shell, `echo … | sh`) as a nested script one level down, at most
//! [`MAX_SHELL_LEVELS`] deep. Words are recorded as [`Text`]s for the text rules, except the code
//! words, whose content is judged at the nested level. Heredoc bodies that are only data are
//! kept apart ([`Analysis::data_heredocs`]): no rule treats them as commands. The rules in
//! [`super::rules`] then read the [`Analysis`] without walking the tree again.

use std::borrow::Cow;
use std::collections::HashMap;

use super::ast::{
    Command, Compound, Heredoc, List, Part, Pipeline, RedirOp, Redirect, Script, SimpleCommand, Target, Word,
};
use super::braces::expand_braces;
use super::error::ParseError;
use super::invocation::{command_name, invocations, Code, Invocation, Via};
use super::parser::parse;

/// How many times shell code may be handed to another shell (`sh -c "eval '…'"` is two).
pub const MAX_SHELL_LEVELS: usize = 4;

/// Everything the rules look at.
#[derive(Debug, Default)]
pub struct Analysis {
    /// Every program that may start, in source order.
    pub cmds: Vec<Cmd>,
    /// Every word whose text is scanned (arguments, assignment values, redirection targets,
    /// loop and case words, data heredoc bodies), except shell code judged at a nested level.
    pub texts: Vec<Text>,
    /// Redirections that write, with their targets.
    pub writes: Vec<Word>,
    /// Heredoc and here-string bodies that are only data for the command reading them.
    pub data_heredocs: Vec<Word>,
    /// Run-time constructs in source order: substitutions, `${…}`, arithmetic.
    pub constructs: Vec<Construct>,
    /// For each substitution (by id): whether its output becomes code.
    pub subst_is_code: Vec<bool>,
    /// For each pipeline of two or more stages (by id): its number of stages.
    pub pipeline_stages: Vec<usize>,
}

/// One program that may start.
#[derive(Debug, Clone)]
pub struct Cmd {
    /// Its own words, the program name first.
    pub argv: Vec<Word>,
    /// The name as recognised (folded, lower-cased, basename).
    pub name: String,
    /// Other names it may have: its command word with the values assigned earlier in the
    /// command put in for its variables (`X=sudo; $X id`).
    pub also: Vec<String>,
    pub via: Via,
    /// Re-parse level: 0 for the command string itself.
    pub level: usize,
    /// Pipeline stages and substitutions it sits in, outermost first.
    pub enclosures: Vec<Enclosure>,
    /// Reads its program from standard input, and standard input is not redirected.
    pub stdin_program: bool,
}

impl Cmd {
    /// Every name the program may have.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.name.as_str()).chain(self.also.iter().map(String::as_str))
    }

    /// The argument at `i` (0 = the program name) as recognised: folded, not lower-cased.
    pub fn arg(&self, i: usize) -> Option<Cow<'_, str>> {
        self.argv.get(i).and_then(Word::value).map(super::normalize::folded)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Enclosure {
    /// Stage `index` of pipeline `pipeline`.
    Stage { pipeline: usize, index: usize },
    /// Inside substitution `id` (`$( )`, backticks, `<( )`).
    Subst(usize),
}

/// A word whose text the rules scan, and where it stands.
#[derive(Debug, Clone)]
pub struct Text {
    pub word: Word,
    pub site: Site,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Site {
    /// Argument `index` of `cmds[cmd]` (0 = the program name).
    Arg { cmd: usize, index: usize },
    /// The value of a `NAME=value` before a command.
    Assignment { name: String },
    /// Anywhere else (wrapper options, redirection targets, loop words, heredoc bodies).
    Other,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConstructKind {
    /// `$( … )`
    Command,
    /// `` `…` ``
    Backtick,
    /// `${ … }`
    Braced,
    /// `$(( … ))`
    Arith,
    /// `<( … )`, `>( … )`
    Process,
}

/// A construct evaluated when the command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Construct {
    pub kind: ConstructKind,
    /// Its source text, as the agent wrote it.
    pub raw: String,
    /// Inside double quotes, a heredoc body or another expansion.
    pub quoted: bool,
    pub level: usize,
}

/// Parses `command` and collects the facts. A parse error anywhere, nested code included, is
/// the error: what cannot be parsed cannot be checked.
pub fn analyse(command: &str) -> Result<Analysis, ParseError> {
    let script = parse(command)?;
    let mut b = Builder { out: Analysis::default(), enclosures: Vec::new(), level: 0, vars: HashMap::new() };
    b.script(&script)?;
    Ok(b.out)
}

struct Builder {
    out: Analysis,
    enclosures: Vec<Enclosure>,
    level: usize,
    /// Literal values assigned to shell variables so far, by name (all of them: branches are
    /// not told apart).
    vars: HashMap<String, Vec<String>>,
}

/// At most this many values are kept per variable, and names tried per command word.
const MAX_VALUES: usize = 16;

impl Builder {
    fn script(&mut self, script: &Script) -> Result<(), ParseError> {
        self.list(&script.body, &script.heredocs)
    }

    fn list(&mut self, list: &List, heredocs: &[Heredoc]) -> Result<(), ParseError> {
        for p in &list.pipelines {
            self.pipeline(p, heredocs)?;
        }
        Ok(())
    }

    fn pipeline(&mut self, p: &Pipeline, heredocs: &[Heredoc]) -> Result<(), ParseError> {
        if p.stages.len() == 1 {
            return self.command(&p.stages[0], heredocs, false);
        }
        let id = self.out.pipeline_stages.len();
        self.out.pipeline_stages.push(p.stages.len());
        for (index, stage) in p.stages.iter().enumerate() {
            let feeds_shell = p.stages.get(index + 1).is_some_and(reads_shell_code_from_pipe);
            self.enclosures.push(Enclosure::Stage { pipeline: id, index });
            self.command(stage, heredocs, feeds_shell)?;
            self.enclosures.pop();
        }
        Ok(())
    }

    fn command(&mut self, cmd: &Command, heredocs: &[Heredoc], feeds_shell: bool) -> Result<(), ParseError> {
        match cmd {
            Command::Simple(s) => self.simple(s, heredocs, feeds_shell),
            Command::Function { body, .. } => self.command(body, heredocs, false),
            Command::Compound { body, redirects } => {
                self.compound(body, heredocs)?;
                for r in redirects {
                    if let Some(body) = self.redirect(r, heredocs, false)? {
                        self.data_heredoc(body);
                    }
                }
                Ok(())
            }
        }
    }

    fn compound(&mut self, c: &Compound, heredocs: &[Heredoc]) -> Result<(), ParseError> {
        match c {
            Compound::Subshell(l) | Compound::Group(l) => self.list(l, heredocs),
            Compound::If { branches, otherwise } => {
                for (cond, body) in branches {
                    self.list(cond, heredocs)?;
                    self.list(body, heredocs)?;
                }
                match otherwise {
                    Some(l) => self.list(l, heredocs),
                    None => Ok(()),
                }
            }
            Compound::Loop { condition, body } => {
                self.list(condition, heredocs)?;
                self.list(body, heredocs)
            }
            Compound::For { words, body, .. } => {
                for w in words {
                    self.loose(w)?;
                }
                self.list(body, heredocs)
            }
            Compound::ArithFor { header, body } => {
                self.parts(header, false, false)?;
                self.list(body, heredocs)
            }
            Compound::Case { subject, arms } => {
                self.loose(subject)?;
                for arm in arms {
                    for p in &arm.patterns {
                        self.loose(p)?;
                    }
                    self.list(&arm.body, heredocs)?;
                }
                Ok(())
            }
            Compound::Arith(parts) => self.parts(parts, false, false),
            Compound::Test(words) => {
                for w in words {
                    self.loose(w)?;
                }
                Ok(())
            }
        }
    }

    /// A word outside any command: scanned, its substitutions walked.
    fn loose(&mut self, w: &Word) -> Result<(), ParseError> {
        self.word(w, false)?;
        self.out.texts.push(Text { word: w.clone(), site: Site::Other });
        Ok(())
    }

    /// A redirection: its target is walked and scanned; a write is recorded. Returns the body of
    /// a heredoc or here-string that feeds standard input, for the caller to judge; `program`
    /// tells whether the command reads its program from there (the body's substitutions then
    /// produce code).
    fn redirect<'h>(
        &mut self,
        r: &'h Redirect,
        heredocs: &'h [Heredoc],
        program: bool,
    ) -> Result<Option<&'h Word>, ParseError> {
        let word = match &r.target {
            Target::Word(w) => w,
            Target::Heredoc(i) => match heredocs.get(*i) {
                Some(h) => {
                    self.word(&h.body, program && r.feeds_stdin())?;
                    return Ok(r.feeds_stdin().then_some(&h.body));
                }
                None => return Ok(None),
            },
        };
        if r.op == RedirOp::HereString {
            self.word(word, program && r.feeds_stdin())?;
            return Ok(r.feeds_stdin().then_some(word));
        }
        self.word(word, false)?;
        self.out.texts.push(Text { word: word.clone(), site: Site::Other });
        if r.writes() {
            self.out.writes.push(word.clone());
        }
        Ok(None)
    }

    fn data_heredoc(&mut self, body: &Word) {
        self.out.texts.push(Text { word: body.clone(), site: Site::Other });
        self.out.data_heredocs.push(body.clone());
    }

    fn simple(
        &mut self,
        s: &SimpleCommand,
        heredocs: &[Heredoc],
        feeds_shell: bool,
    ) -> Result<(), ParseError> {
        if let Some(expanded) = brace_expanded(s) {
            self.simple(&expanded, heredocs, false)?;
        }
        self.remember_assignments(s);
        let mut invs = invocations(&s.words)?;
        if feeds_shell {
            if let Some(first) = invs.first_mut() {
                if let Some(code) = echoed_code(first, &s.words) {
                    first.code_words.extend(code.words());
                    first.code.push(code);
                }
            }
        }
        let stdin_redirected = s.redirects.iter().any(Redirect::feeds_stdin);
        let primary = invs.first().filter(|i| i.via == Via::Direct && !i.argv.is_empty());

        for a in &s.assignments {
            self.word(&a.value, false)?;
            self.out
                .texts
                .push(Text { word: a.value.clone(), site: Site::Assignment { name: a.name.clone() } });
        }
        let reads_program = primary.is_some_and(|p| p.stdin_program);
        let mut stdin_body = None;
        for r in &s.redirects {
            if let Some(body) = self.redirect(r, heredocs, reads_program)? {
                stdin_body = Some(body);
            }
        }

        let mut primary_id = None;
        for inv in &invs {
            if !inv.argv.is_empty() {
                let id = self.push_cmd(inv, &s.words, stdin_redirected);
                primary_id = primary_id.or(Some(id));
            }
        }
        for (j, w) in s.words.iter().enumerate() {
            let code =
                invs.iter().any(|i| (i.argv.start == j && !i.argv.is_empty()) || i.code_words.contains(&j));
            let read_by_interpreter = invs.iter().any(|i| i.interpreter && i.argv.contains(&j));
            self.parts(&w.parts, code, read_by_interpreter)?;
            if invs.iter().any(|i| i.code.iter().any(|c| c.words().contains(&j))) {
                continue;
            }
            let site = match (primary, primary_id) {
                (Some(p), Some(cmd)) if p.argv.contains(&j) => Site::Arg { cmd, index: j - p.argv.start },
                _ => Site::Other,
            };
            self.out.texts.push(Text { word: w.clone(), site });
        }

        if let Some(body) = stdin_body {
            match primary {
                Some(p) if p.shell && p.stdin_program => self.nested(&body.text_with_holes("$_"), &p.name)?,
                Some(p) if p.stdin_program => {
                    self.out.texts.push(Text { word: body.clone(), site: Site::Other })
                }
                _ => self.data_heredoc(body),
            }
        }
        for inv in &invs {
            for code in &inv.code {
                self.nested(&code.text(&s.words), &inv.name)?;
            }
        }
        Ok(())
    }

    /// Records `NAME=literal` values: of a command made only of assignments, and of the
    /// arguments of `export`, `declare`, `typeset`, `local` and `readonly`.
    fn remember_assignments(&mut self, s: &SimpleCommand) {
        let declares =
            s.words.first().and_then(Word::value).is_some_and(|v| {
                matches!(v.as_ref(), "export" | "declare" | "typeset" | "local" | "readonly")
            });
        let from_words = s.words.iter().skip(1).filter(|_| declares).filter_map(super::lexer::assignment);
        let assignments: Vec<_> =
            if s.words.is_empty() { s.assignments.clone() } else { from_words.collect() };
        for a in assignments {
            if let Some(value) = a.value.value() {
                let values = self.vars.entry(a.name).or_default();
                if values.len() < MAX_VALUES && !values.iter().any(|v| *v == value) {
                    values.push(value.into_owned());
                }
            }
        }
    }

    /// The names a command word may have once the variables it uses take the values assigned
    /// to them earlier; none when it has no variable, or one with no known value.
    fn names_through_variables(&self, word: &Word) -> Vec<String> {
        if word.value().is_some() {
            return Vec::new();
        }
        let mut spellings = vec![String::new()];
        for part in &word.parts {
            match part {
                Part::Lit { text, .. } => spellings.iter_mut().for_each(|s| s.push_str(text)),
                Part::Param(p) if p.operand.is_empty() => {
                    let Some(values) = self.vars.get(&p.name) else {
                        return Vec::new();
                    };
                    spellings = spellings
                        .iter()
                        .flat_map(|s| values.iter().map(move |v| format!("{s}{v}")))
                        .take(MAX_VALUES)
                        .collect();
                }
                _ => return Vec::new(),
            }
        }
        spellings.iter().map(|s| command_name(s)).filter(|n| !n.is_empty()).collect()
    }

    fn push_cmd(&mut self, inv: &Invocation, words: &[Word], stdin_redirected: bool) -> usize {
        let id = self.out.cmds.len();
        let argv = words.get(inv.argv.clone()).unwrap_or_default().to_vec();
        let also = argv.first().map(|w| self.names_through_variables(w)).unwrap_or_default();
        self.out.cmds.push(Cmd {
            argv,
            also,
            name: inv.name.clone(),
            via: inv.via,
            level: self.level,
            enclosures: self.enclosures.clone(),
            stdin_program: inv.stdin_program && !stdin_redirected,
        });
        id
    }

    /// Re-parses shell code one level down.
    fn nested(&mut self, code: &str, via: &str) -> Result<(), ParseError> {
        if self.level >= MAX_SHELL_LEVELS {
            return Err(ParseError::NestedTooDeep { limit: MAX_SHELL_LEVELS, via: via.to_string() });
        }
        let script = parse(code)?;
        self.level += 1;
        let result = self.script(&script);
        self.level -= 1;
        result
    }

    /// Walks a word's parts; `as_code` when its substitutions' output becomes code.
    fn word(&mut self, w: &Word, as_code: bool) -> Result<(), ParseError> {
        self.parts(&w.parts, as_code, false)
    }

    /// Records run-time constructs and analyses substitution bodies. `as_code`: the output of
    /// every substitution becomes code; `process_code`: that of process substitutions (the
    /// word is read by an interpreter as a script file).
    fn parts(&mut self, parts: &[Part], as_code: bool, process_code: bool) -> Result<(), ParseError> {
        for part in parts {
            match part {
                Part::Lit { .. } => {}
                Part::Param(p) => {
                    if p.braced {
                        self.construct(ConstructKind::Braced, &p.raw, p.quoted);
                    }
                    self.parts(&p.operand, as_code, process_code)?;
                }
                Part::Arith(a) => {
                    self.construct(ConstructKind::Arith, &a.raw, a.quoted);
                    self.parts(&a.parts, as_code, process_code)?;
                }
                Part::Command(c) => {
                    let kind = if c.backtick { ConstructKind::Backtick } else { ConstructKind::Command };
                    self.construct(kind, &c.raw, c.quoted);
                    self.substitution(&c.script, as_code)?;
                }
                Part::Process(p) => {
                    self.construct(ConstructKind::Process, &p.raw, false);
                    self.substitution(&p.script, as_code || process_code)?;
                }
            }
        }
        Ok(())
    }

    fn construct(&mut self, kind: ConstructKind, raw: &str, quoted: bool) {
        self.out.constructs.push(Construct { kind, raw: raw.to_string(), quoted, level: self.level });
    }

    fn substitution(&mut self, script: &Script, as_code: bool) -> Result<(), ParseError> {
        let id = self.out.subst_is_code.len();
        self.out.subst_is_code.push(as_code);
        self.enclosures.push(Enclosure::Subst(id));
        let result = self.script(script);
        self.enclosures.pop();
        result
    }
}

/// Whether a pipeline stage is a shell reading its script from the pipe (`… | sh`).
fn reads_shell_code_from_pipe(stage: &Command) -> bool {
    let Command::Simple(s) = stage else {
        return false;
    };
    let stdin_redirected = s.redirects.iter().any(Redirect::feeds_stdin);
    !stdin_redirected
        && invocations(&s.words)
            .ok()
            .and_then(|invs| invs.into_iter().next())
            .is_some_and(|i| i.via == Via::Direct && i.shell && i.stdin_program)
}

/// `echo ARGS | sh` and `printf ARGS | sh`: the arguments, joined, are the script.
fn echoed_code(inv: &Invocation, words: &[Word]) -> Option<Code> {
    if inv.via != Via::Direct || !matches!(inv.name.as_str(), "echo" | "printf") {
        return None;
    }
    let mut start = inv.argv.start + 1;
    if inv.name == "echo" {
        while start < inv.argv.end
            && words[start].value().is_some_and(|v| {
                v.len() > 1 && v.starts_with('-') && v[1..].chars().all(|c| "neE".contains(c))
            })
        {
            start += 1;
        }
    }
    (start < inv.argv.end).then_some(Code::Joined(start..inv.argv.end))
}

/// `{sudo,id}` as bash runs it: the command word brace-expanded into several words.
fn brace_expanded(s: &SimpleCommand) -> Option<SimpleCommand> {
    let [Part::Lit { text, quoted: false }] = s.words.first()?.parts.as_slice() else {
        return None;
    };
    let spelled = expand_braces(text);
    if spelled.len() < 2 {
        return None;
    }
    let words = spelled.iter().map(|w| Word::literal(w)).chain(s.words[1..].iter().cloned()).collect();
    Some(SimpleCommand { assignments: Vec::new(), words, redirects: Vec::new() })
}
