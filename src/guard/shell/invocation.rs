//! What a simple command runs: wrappers looked through, runners followed, code arguments found.
//!
//! [`invocations`] takes the words of one simple command and returns every program it may start,
//! the command itself first. On the way it
//! 1. skips prefix wrappers with their options (`env -i -u X A=1`, `nice -n 5`, `nohup`,
//!    `timeout -s KILL 5`, `command`, `exec -a x`, `stdbuf -oL`, `time -p`, `setsid`, `ionice -c 3`,
//!    `builtin`, `busybox`, `coproc`, `chroot DIR`) — `command -v x` and `env` alone run nothing;
//! 2. follows runners: the command `xargs` runs (after its options) and each `find -exec`,
//!    `-execdir`, `-ok`, `-okdir` command, as invocations of their own;
//! 3. finds the arguments that are shell code — `sh -c STRING` (and bash, dash, zsh, ksh…),
//!    `eval ARGS`, `env -S STRING`, `trap ACTION SIGNAL`, `alias name=VALUE` — for the analysis to
//!    re-parse, and the code arguments of other interpreters (`python -c`, `perl -e`, `node -e`…),
//!    whose substitutions run as programs;
//! 4. tells whether the program reads its script from standard input (`sh`, `bash -s`,
//!    `python3 -`, `source /dev/stdin`);
//! 5. when the command word is only unquoted expansions (`$X sudo …`), which may expand to
//!    nothing, also the invocation that starts at the next word.

use std::borrow::Cow;
use std::ops::Range;

use super::ast::Word;
use super::error::ParseError;
use super::normalize;

/// Shells whose `-c` argument and standard input are POSIX-like shell code this guard parses.
pub const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "ksh93", "mksh", "lksh", "oksh", "pdksh", "ash", "posh", "yash",
    "rbash",
];

/// How many runners (`xargs`, `find -exec`) and possibly-empty command words deep the programs
/// of one simple command are followed; deeper is refused rather than left unchecked.
pub const MAX_RUNNER_DEPTH: usize = 8;

/// Consecutive command words made only of expansions that are looked past.
const MAX_EMPTY_WORDS: usize = 8;

/// Paths that name standard input.
const STDIN_PATHS: &[&str] = &["-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"];

/// How an invocation was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    /// The simple command itself (wrappers looked through).
    Direct,
    /// Run by `xargs` or `find -exec`.
    Runner,
    /// The words after a command word that may expand to nothing.
    Alternate,
}

/// Shell code held in a command's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Code {
    /// The whole word (`sh -c STRING`, `trap ACTION`, `env -S STRING`).
    Word(usize),
    /// The text after the first `sep` in a word (`env -S'…'`, `alias name=value`).
    After(usize, char),
    /// Words joined with spaces (`eval ARGS…`).
    Joined(Range<usize>),
}

impl Code {
    /// The indexes of the words the code is taken from.
    pub fn words(&self) -> Range<usize> {
        match self {
            Code::Word(i) | Code::After(i, _) => *i..*i + 1,
            Code::Joined(r) => r.clone(),
        }
    }

    /// The code as the nested shell receives it; expansions become `$_`, a value only the run
    /// can tell.
    pub fn text(&self, words: &[Word]) -> String {
        let hole = "$_";
        match self {
            Code::Word(i) => words.get(*i).map(|w| w.text_with_holes(hole)).unwrap_or_default(),
            Code::After(i, sep) => words
                .get(*i)
                .map(|w| w.text_with_holes(hole))
                .and_then(|t| t.split_once(*sep).map(|(_, v)| v.to_string()))
                .unwrap_or_default(),
            Code::Joined(r) => words
                .get(r.clone())
                .unwrap_or_default()
                .iter()
                .map(|w| w.text_with_holes(hole))
                .collect::<Vec<_>>()
                .join(" "),
        }
    }
}

/// One program a simple command may start. Indexes are into the simple command's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invocation {
    /// The program's own words: `start` is its name.
    pub argv: Range<usize>,
    /// The program's name as recognised: folded, lower-cased, without its directory.
    pub name: String,
    pub via: Via,
    /// Shell code to re-parse.
    pub code: Vec<Code>,
    /// Words holding code in any language, besides the command word itself: a substitution in
    /// one of them produces a program.
    pub code_words: Vec<usize>,
    /// A POSIX-like shell (its code is parsed).
    pub shell: bool,
    /// An interpreter of some language: a process substitution among its words is a program.
    pub interpreter: bool,
    /// Reads its program from standard input.
    pub stdin_program: bool,
}

/// Every program the words may start: the command itself first, then the programs it runs.
/// Runners nested more than [`MAX_RUNNER_DEPTH`] deep are an error.
pub fn invocations(words: &[Word]) -> Result<Vec<Invocation>, ParseError> {
    let values: Vec<Option<Cow<'_, str>>> = words.iter().map(|w| w.value().map(normalize::folded)).collect();
    let mut out = Vec::new();
    collect(words, &values, 0..words.len(), Via::Direct, 0, &mut out)?;
    Ok(out)
}

/// The name a command word is recognised by: folded, lower-cased, first field, basename.
pub fn command_name(value: &str) -> String {
    let folded = normalize::word(value);
    let first = folded.split_whitespace().next().unwrap_or("");
    first.rsplit('/').next().unwrap_or("").to_string()
}

fn collect(
    words: &[Word],
    values: &[Option<Cow<'_, str>>],
    span: Range<usize>,
    via: Via,
    depth: usize,
    out: &mut Vec<Invocation>,
) -> Result<(), ParseError> {
    let Some((start, split)) = unwrap(values, span.clone()) else {
        return Ok(());
    };
    let mut inv = Invocation {
        argv: start.min(span.end)..span.end,
        name: values.get(start).and_then(|v| v.as_deref()).map(command_name).unwrap_or_default(),
        via,
        code_words: Vec::new(),
        code: Vec::new(),
        shell: false,
        interpreter: false,
        stdin_program: false,
    };
    if let Some(c) = split {
        inv.code_words.extend(c.words());
        inv.code.push(c);
    }
    if inv.argv.is_empty() {
        if !inv.code.is_empty() {
            out.push(inv);
        }
        return Ok(());
    }
    let args = start + 1..span.end;
    let mut runs = Vec::new();
    let name = inv.name.clone();
    match name.as_str() {
        n if SHELLS.contains(&n) => shell(values, args, &mut inv),
        "eval" if !args.is_empty() => {
            inv.code_words.extend(args.clone());
            inv.code.push(Code::Joined(args));
        }
        "trap" => trap(values, args, &mut inv),
        "alias" => {
            for i in args {
                if words[i].literals().contains('=') {
                    inv.code_words.push(i);
                    inv.code.push(Code::After(i, '='));
                }
            }
        }
        "source" | "." => {
            inv.shell = true;
            inv.interpreter = true;
            inv.stdin_program = values[args].first().is_some_and(|v| v.as_deref().is_some_and(is_stdin));
        }
        "xargs" => runs.extend(xargs(values, args)),
        "find" => runs.extend(find_exec(values, args)),
        n => interpreter(n, values, args, &mut inv),
    }
    out.push(inv);
    if !runs.is_empty() && depth >= MAX_RUNNER_DEPTH {
        return Err(ParseError::NestedTooDeep { limit: MAX_RUNNER_DEPTH, via: name });
    }
    for run in runs {
        collect(words, values, run, Via::Runner, depth + 1, out)?;
    }
    let empty_words = (start..span.end).take_while(|&i| words[i].is_only_unquoted_expansions()).count();
    if empty_words > 0 && via != Via::Alternate {
        let next = start + empty_words.min(MAX_EMPTY_WORDS);
        for alternate in start + 1..=next.min(span.end - 1) {
            collect(words, values, alternate..span.end, Via::Alternate, depth + 1, out)?;
        }
    }
    Ok(())
}

/// Option grammar of a wrapper or runner.
struct Opts {
    /// Short options that take an argument (attached or the next word).
    short_arg: &'static str,
    /// Long options that take an argument (after `=` or the next word).
    long_arg: &'static [&'static str],
    /// Options after which no command runs (`command -v`, `ionice -p`).
    no_run: &'static str,
}

/// The index of the first operand after the options from `i`, or `None` when an option means
/// that no command runs.
fn skip_options(values: &[Option<Cow<'_, str>>], mut i: usize, end: usize, opts: &Opts) -> Option<usize> {
    while i < end {
        let Some(v) = values[i].as_deref() else {
            return Some(i);
        };
        if v == "--" {
            return Some(i + 1);
        }
        if let Some(long) = v.strip_prefix("--") {
            let name = long.split('=').next().unwrap_or("");
            i += if !long.contains('=') && opts.long_arg.contains(&name) { 2 } else { 1 };
            continue;
        }
        let Some(cluster) = v.strip_prefix('-').filter(|c| !c.is_empty()) else {
            return Some(i);
        };
        let mut step = 1;
        for (k, c) in cluster.char_indices() {
            if opts.no_run.contains(c) {
                return None;
            }
            if opts.short_arg.contains(c) {
                if k + c.len_utf8() == cluster.len() {
                    step = 2;
                }
                break;
            }
        }
        i += step;
    }
    Some(i)
}

/// Looks through prefix wrappers. Returns the index of the command word (`span.end` when there
/// is none) and the code of an `env -S`, or `None` when the wrappers run nothing.
fn unwrap(values: &[Option<Cow<'_, str>>], span: Range<usize>) -> Option<(usize, Option<Code>)> {
    let mut i = span.start;
    let end = span.end;
    while i < end {
        let Some(name) = values[i].as_deref().map(command_name) else {
            break;
        };
        let next = i + 1;
        let none = Opts { short_arg: "", long_arg: &[], no_run: "" };
        i = match name.as_str() {
            "env" => match env(values, next, end) {
                EnvEnd::Command(i) => i,
                EnvEnd::Split(code) => return Some((end, Some(code))),
            },
            "nice" => skip_options(
                values,
                next,
                end,
                &Opts { short_arg: "n", long_arg: &["adjustment"], no_run: "" },
            )?,
            "nohup" | "builtin" | "setsid" | "coproc" => skip_options(values, next, end, &none)?,
            "chroot" => {
                let opts = Opts { short_arg: "", long_arg: &["userspec", "groups"], no_run: "" };
                skip_options(values, next, end, &opts)? + 1
            }
            "timeout" => {
                let opts = Opts { short_arg: "sk", long_arg: &["signal", "kill-after"], no_run: "" };
                skip_options(values, next, end, &opts)? + 1
            }
            "stdbuf" => skip_options(
                values,
                next,
                end,
                &Opts { short_arg: "ioe", long_arg: &["input", "output", "error"], no_run: "" },
            )?,
            "time" => skip_options(
                values,
                next,
                end,
                &Opts { short_arg: "fo", long_arg: &["format", "output"], no_run: "" },
            )?,
            "command" => {
                skip_options(values, next, end, &Opts { short_arg: "", long_arg: &[], no_run: "vV" })?
            }
            "exec" => skip_options(values, next, end, &Opts { short_arg: "a", long_arg: &[], no_run: "" })?,
            "ionice" => skip_options(
                values,
                next,
                end,
                &Opts { short_arg: "cn", long_arg: &["class", "classdata"], no_run: "pPu" },
            )?,
            "busybox" => next,
            _ => break,
        };
    }
    Some((i, None))
}

/// Where `env`'s own words end.
enum EnvEnd {
    /// At the command (or the end): its index.
    Command(usize),
    /// `-S STRING`: the command is in the string.
    Split(Code),
}

/// `env [options] [NAME=value]… [command…]`.
fn env(values: &[Option<Cow<'_, str>>], mut i: usize, end: usize) -> EnvEnd {
    while i < end {
        let Some(v) = values[i].as_deref() else {
            break;
        };
        if v == "--" {
            i += 1;
            break;
        }
        if v == "-" {
            i += 1;
            continue;
        }
        if let Some(long) = v.strip_prefix("--") {
            let (name, has_value) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            if name == "split-string" {
                return EnvEnd::Split(if has_value { Code::After(i, '=') } else { Code::Word(i + 1) });
            }
            i += if !has_value && ["unset", "chdir"].contains(&name) { 2 } else { 1 };
            continue;
        }
        let Some(cluster) = v.strip_prefix('-') else {
            break;
        };
        let mut step = 1;
        for (k, c) in cluster.char_indices() {
            let last = k + c.len_utf8() == cluster.len();
            if c == 'S' {
                return EnvEnd::Split(if last { Code::Word(i + 1) } else { Code::After(i, 'S') });
            }
            if c == 'u' || c == 'C' {
                if last {
                    step = 2;
                }
                break;
            }
        }
        i += step;
    }
    while i < end
        && values[i].as_deref().is_some_and(|v| v.split_once('=').is_some_and(|(n, _)| !n.is_empty()))
    {
        i += 1;
    }
    EnvEnd::Command(i)
}

fn is_stdin(value: &str) -> bool {
    STDIN_PATHS.contains(&value)
}

/// `sh [options] [-c STRING | -s | FILE] [args…]`.
fn shell(values: &[Option<Cow<'_, str>>], args: Range<usize>, inv: &mut Invocation) {
    inv.shell = true;
    inv.interpreter = true;
    let end = args.end;
    let mut i = args.start;
    let (mut command_mode, mut stdin_flag) = (false, false);
    while i < end {
        let Some(v) = values[i].as_deref() else {
            break;
        };
        if v == "--" || v == "-" {
            i += 1;
            break;
        }
        if v.starts_with("--") {
            i += if v == "--rcfile" || v == "--init-file" { 2 } else { 1 };
            continue;
        }
        let Some(cluster) = v.strip_prefix('-').or_else(|| v.strip_prefix('+')).filter(|c| !c.is_empty())
        else {
            break;
        };
        command_mode |= v.starts_with('-') && cluster.contains('c');
        stdin_flag |= cluster.contains('s');
        i += if cluster.ends_with('o') || cluster.ends_with('O') { 2 } else { 1 };
    }
    if command_mode {
        if i < end {
            inv.code_words.push(i);
            inv.code.push(Code::Word(i));
        }
        return;
    }
    inv.stdin_program = stdin_flag || i >= end || values[i].as_deref().is_some_and(is_stdin);
}

/// `trap [--] ACTION SIGNAL…`: the action is code.
fn trap(values: &[Option<Cow<'_, str>>], args: Range<usize>, inv: &mut Invocation) {
    let mut i = args.start;
    if values.get(i).and_then(|v| v.as_deref()) == Some("--") {
        i += 1;
    }
    let listing = matches!(values.get(i).and_then(|v| v.as_deref()), Some("-l" | "-p" | "-P"));
    if !listing && i + 1 < args.end {
        inv.code_words.push(i);
        inv.code.push(Code::Word(i));
    }
}

/// Interpreters other than the shells: which options carry code, which carry other arguments.
fn interpreter(name: &str, values: &[Option<Cow<'_, str>>], args: Range<usize>, inv: &mut Invocation) {
    let (code_opts, arg_opts, long_code): (&str, &str, &[&str]) = match name {
        n if n.starts_with("python") || n == "pypy" || n == "pypy3" => ("c", "mWX", &[]),
        "perl" => ("eE", "IMmx", &[]),
        "ruby" => ("e", "Irx", &[]),
        "node" | "nodejs" | "deno" | "bun" => ("ep", "r", &["--eval", "--print"]),
        "php" => ("r", "fdz", &[]),
        n if n.starts_with("lua") => ("e", "l", &[]),
        "fish" => ("c", "", &["--command"]),
        "tclsh" | "wish" => ("", "", &[]),
        _ => return,
    };
    inv.interpreter = true;
    let end = args.end;
    let mut i = args.start;
    let mut has_code = false;
    while i < end {
        let Some(v) = values[i].as_deref() else {
            break;
        };
        if v == "--" {
            i += 1;
            break;
        }
        if v == "-" {
            break;
        }
        if v.starts_with("--") {
            let name = v.split('=').next().unwrap_or(v);
            if long_code.contains(&name) {
                has_code = true;
                inv.code_words.push(if v.contains('=') { i } else { i + 1 });
            }
            i += if long_code.contains(&v) { 2 } else { 1 };
            continue;
        }
        let Some(cluster) = v.strip_prefix('-').filter(|c| !c.is_empty()) else {
            break;
        };
        let mut step = 1;
        for (k, c) in cluster.char_indices() {
            let last = k + c.len_utf8() == cluster.len();
            if code_opts.contains(c) {
                has_code = true;
                inv.code_words.push(if last { i + 1 } else { i });
            } else if !arg_opts.contains(c) {
                continue;
            } else if c == 'm' && name.starts_with("python") {
                has_code = true;
            }
            if last {
                step = 2;
            }
            break;
        }
        i += step;
    }
    inv.stdin_program = !has_code && (i >= end || values[i].as_deref().is_some_and(is_stdin));
}

/// `xargs [options] [command [args…]]`: the command it runs.
fn xargs(values: &[Option<Cow<'_, str>>], args: Range<usize>) -> Option<Range<usize>> {
    let opts = Opts {
        short_arg: "adEILnPs",
        long_arg: &[
            "arg-file",
            "delimiter",
            "eof",
            "replace",
            "max-lines",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
        no_run: "",
    };
    let start = skip_options(values, args.start, args.end, &opts)?;
    (start < args.end).then_some(start..args.end)
}

/// `find … -exec command args… ;` (and `+`, `-execdir`, `-ok`, `-okdir`): each command.
fn find_exec(values: &[Option<Cow<'_, str>>], args: Range<usize>) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut i = args.start;
    while i < args.end {
        if matches!(values[i].as_deref(), Some("-exec" | "-execdir" | "-ok" | "-okdir")) {
            let start = i + 1;
            let stop = (start..args.end)
                .find(|&j| matches!(values[j].as_deref(), Some(";" | "+")))
                .unwrap_or(args.end);
            if start < stop {
                out.push(start..stop);
            }
            i = stop;
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::shell::ast::Command;
    use crate::guard::shell::parser::parse;

    fn words(src: &str) -> Vec<Word> {
        match &parse(src).unwrap().body.pipelines[0].stages[0] {
            Command::Simple(s) => s.words.clone(),
            other => panic!("{other:?}"),
        }
    }

    /// (name, via) of every invocation.
    fn names(src: &str) -> Vec<(String, Via)> {
        invocations(&words(src)).unwrap().into_iter().map(|i| (i.name, i.via)).collect()
    }

    fn first(src: &str) -> Invocation {
        invocations(&words(src)).unwrap().into_iter().next().unwrap_or_else(|| panic!("{src}: nothing runs"))
    }

    #[test]
    fn wrappers_are_looked_through() {
        for src in [
            "env sudo x",
            "env -i -u HOME A=1 B=2 sudo x",
            "env -uHOME -- sudo x",
            "nice -n 10 sudo x",
            "nice -10 sudo x",
            "nice --adjustment=3 sudo x",
            "nohup sudo x",
            "timeout 10 sudo x",
            "timeout -s KILL -k 5 10s sudo x",
            "timeout --signal=KILL 10 sudo x",
            "command sudo x",
            "command -p sudo x",
            "exec -a name sudo x",
            "stdbuf -oL -e 0 sudo x",
            "time -p sudo x",
            "setsid -f sudo x",
            "ionice -c 3 sudo x",
            "builtin sudo x",
            "busybox sudo x",
            "/usr/bin/env /usr/bin/nice /usr/bin/sudo x",
            "nice env timeout 5 nohup sudo x",
        ] {
            assert_eq!(first(src).name, "sudo", "{src}");
        }
    }

    #[test]
    fn wrappers_that_run_nothing() {
        assert!(invocations(&words("command -v sudo")).unwrap().is_empty());
        assert!(invocations(&words("env")).unwrap().is_empty());
        assert!(invocations(&words("env -i A=1")).unwrap().is_empty());
        assert!(invocations(&words("ionice -p 12")).unwrap().is_empty());
    }

    #[test]
    fn runners_are_followed() {
        assert_eq!(
            names("xargs -0 -n 1 sudo tee"),
            [("xargs".to_string(), Via::Direct), ("sudo".to_string(), Via::Runner)]
        );
        assert_eq!(names("xargs grep sudo")[1].0, "grep");
        assert_eq!(names("xargs -I{} sudo rm {}")[1].0, "sudo");
        assert_eq!(names("xargs --max-args 2 sudo rm")[1].0, "sudo");
        assert_eq!(
            names("find . -name x -exec sudo rm {} \\; -execdir ls +")[1..],
            [("sudo".to_string(), Via::Runner), ("ls".to_string(), Via::Runner)]
        );
        assert_eq!(names("find / -name sudo").len(), 1);
        assert_eq!(names("xargs").len(), 1);
    }

    #[test]
    fn shell_code_is_found() {
        let ws = words("bash -e -o pipefail -c 'sudo id' arg0");
        let inv = first("bash -e -o pipefail -c 'sudo id' arg0");
        assert_eq!(inv.code, [Code::Word(5)]);
        assert_eq!(inv.code[0].text(&ws), "sudo id");
        assert_eq!(first("sh -xc 'x'").code, [Code::Word(2)]);
        let ws = words("eval sudo \"$X\" id");
        let inv = invocations(&ws).unwrap().remove(0);
        assert_eq!(inv.code[0].text(&ws), "sudo $_ id");
        let ws = words("env -S'sudo id'");
        assert_eq!(invocations(&ws).unwrap()[0].code[0].text(&ws), "sudo id");
        let ws = words("env --split-string='sudo id'");
        assert_eq!(invocations(&ws).unwrap()[0].code[0].text(&ws), "sudo id");
        assert_eq!(first("trap 'sudo id' EXIT").code, [Code::Word(1)]);
        assert!(first("trap -l").code.is_empty());
        let ws = words("alias s='sudo id' t=ls");
        let inv = invocations(&ws).unwrap().remove(0);
        assert_eq!(inv.code.iter().map(|c| c.text(&ws)).collect::<Vec<_>>(), ["sudo id", "ls"]);
    }

    #[test]
    fn standard_input_programs() {
        for src in [
            "sh",
            "bash -s",
            "bash -s -- arg",
            "sh -",
            "python3",
            "python3 -",
            "perl",
            "bash /dev/stdin",
            "source /dev/stdin",
        ] {
            assert!(first(src).stdin_program, "{src}");
        }
        for src in [
            "sh script.sh",
            "bash -c 'x'",
            "python3 -c 'x'",
            "python3 -m http.server",
            "python3 x.py",
            "node -e x",
            "jq .",
        ] {
            assert!(!first(src).stdin_program, "{src}");
        }
        assert_eq!(first("python3 -c 'code'").code_words, [2]);
    }

    #[test]
    fn an_expansion_as_command_word_also_tries_the_next_word() {
        assert_eq!(names("$X sudo id"), [(String::new(), Via::Direct), ("sudo".to_string(), Via::Alternate)]);
        assert_eq!(names("\"$X\" sudo id").len(), 1);
    }

    #[test]
    fn nesting_of_runners_and_empty_words_is_bounded() {
        let deep = format!("{}sudo id", "xargs ".repeat(MAX_RUNNER_DEPTH + 2));
        assert!(matches!(invocations(&words(&deep)), Err(ParseError::NestedTooDeep { .. })));
        let ok = format!("{}sudo id", "xargs ".repeat(MAX_RUNNER_DEPTH));
        assert_eq!(names(&ok).last().map(|n| n.0.as_str()), Some("sudo"));
        assert!(names("$A $B sudo id").iter().any(|(n, v)| n == "sudo" && *v == Via::Alternate));
        let many = format!("{}sudo", "$X ".repeat(10_000));
        assert_eq!(invocations(&words(&many)).unwrap().len(), 1 + MAX_EMPTY_WORDS);
        let envs = format!("{}sudo id", "env ".repeat(10_000));
        assert_eq!(first(&envs).name, "sudo");
    }

    #[test]
    fn command_names_are_folded() {
        assert_eq!(command_name("/usr/bin/ｓｕｄｏ"), "sudo");
        assert_eq!(command_name("SU\u{200B}DO"), "sudo");
        assert_eq!(command_name("sudo id"), "sudo");
    }
}
