//! The guard never panics, never hangs and never lets a trailing `sudo` through, whatever it is
//! fed: arbitrary text, shell-ish token soups, and megabyte-sized commands.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{TestCaseError, TestRunner};

use super::tests::{fixture, policy};
use super::{check, parse};
use crate::guard::Verdict;
use crate::policy::Policy;

/// Fragments that exercise every corner of the lexer and the grammar.
const FRAGMENTS: &[&str] = &[
    " ",
    "\n",
    "\t",
    "'",
    "\"",
    "\\",
    "`",
    "$",
    "$(",
    "$((",
    "${",
    "}",
    "{",
    "(",
    ")",
    "))",
    "|",
    "||",
    "|&",
    "&",
    "&&",
    ";",
    ";;",
    "<",
    ">",
    ">>",
    "<<",
    "<<-",
    "<<<",
    "<(",
    ">(",
    "2>&1",
    "#",
    "~",
    "=",
    "*",
    "$'",
    "$\"",
    "\\x73",
    "EOF",
    "'EOF'",
    "if",
    "then",
    "elif",
    "else",
    "fi",
    "for",
    "in",
    "do",
    "done",
    "while",
    "case",
    "esac",
    "function",
    "[[",
    "]]",
    "!",
    "sudo",
    "rm",
    "-rf",
    "/",
    "/etc/passwd",
    "~/.ssh/id_rsa",
    ".env",
    "curl",
    "sh",
    "bash",
    "-c",
    "eval",
    "env",
    "-S",
    "xargs",
    "find",
    "-exec",
    "-delete",
    "\\;",
    "echo",
    "x",
    "A=1",
    "$HOME",
    "$IFS",
    "ｓｕｄｏ",
    "\u{200B}",
    "mkfs",
    "/dev/sda",
    "of=",
    "trap",
    "alias",
    "a=(",
    "cat",
];

fn soup() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::sample::select(FRAGMENTS), 0..40).prop_map(|v| v.concat())
}

/// A hang guard, not a benchmark: anything super-linear on a megabyte takes many minutes, so the
/// bound is far above the linear time (release decides a megabyte of commands in about a third
/// of a second, an unoptimised build in about three) and still holds on a 2-core machine shared
/// with a dozen compilers (10.8 s was seen there).
const BUDGET: Duration = Duration::from_secs(if cfg!(debug_assertions) { 90 } else { 20 });

/// Runs `property` on 512 generated inputs against one default policy.
fn for_all<S: Strategy<Value = String>>(
    strategy: S,
    property: impl Fn(&Policy, &str) -> Result<(), TestCaseError>,
) {
    let fx = fixture();
    let p = policy(&fx, "", false);
    let mut runner = TestRunner::new(ProptestConfig { cases: 512, ..ProptestConfig::default() });
    if let Err(e) = runner.run(&strategy, |text| property(&p, &text)) {
        panic!("{e}");
    }
}

#[test]
fn arbitrary_text_is_decided_without_panicking() {
    for_all(any::<String>(), |p, text| {
        let start = Instant::now();
        let _ = parse(text);
        let d = check(p, text);
        prop_assert!(start.elapsed() < BUDGET);
        prop_assert!(d.verdict == Verdict::Allow || d.message.starts_with("[DENIED]"), "{:?}", d);
        Ok(())
    });
}

#[test]
fn token_soups_are_decided_and_a_trailing_sudo_is_never_allowed() {
    for_all(soup(), |p, text| {
        let start = Instant::now();
        let d = check(p, text);
        prop_assert!(d.verdict == Verdict::Allow || d.message.starts_with("[DENIED]"), "{:?}", d);
        let with_sudo = format!("{text}\n\nsudo id");
        let d = check(p, &with_sudo);
        prop_assert_eq!(d.verdict, Verdict::Deny, "{:?}: {}", with_sudo, d.message);
        prop_assert!(start.elapsed() < BUDGET);
        Ok(())
    });
}

const MB: usize = 1 << 20;

#[test]
fn a_megabyte_of_ordinary_commands_is_decided_quickly() {
    let fx = fixture();
    let p = policy(&fx, "", false);
    let unit = "cd src && ls -la | grep 'foo bar' > out.txt; echo \"x $HOME y\" | tee -a log.txt\n";
    let command = unit.repeat(MB / unit.len());
    for (command, rule) in [(command.clone(), "allow"), (format!("{command}sudo id"), "sudo")] {
        let start = Instant::now();
        let d = check(&p, &command);
        let took = start.elapsed();
        eprintln!("1 MB of commands ({rule}): {took:?}");
        assert_eq!(d.rule, rule, "{}", d.message);
        assert!(took < BUDGET, "{took:?}");
    }
}

/// A quarter of a megabyte each: enough for anything quadratic to take minutes.
const QUARTER: usize = MB / 4;

#[test]
fn long_words_heredocs_and_pathological_nesting_are_bounded() {
    let fx = fixture();
    let p = policy(&fx, "", false);
    let cases = [
        format!("echo '{}'", "a".repeat(QUARTER)),
        format!("echo \"{}\"", "a b $X ".repeat(QUARTER / 7)),
        format!("cat <<EOF > out\n{}EOF\n", "line of text $HOME\n".repeat(QUARTER / 19)),
        format!("sh <<'EOF'\n{}EOF\n", "echo hi\n".repeat(QUARTER / 8)),
        format!("bash -c '{}'", "ls; ".repeat(QUARTER / 4)),
        "$((".repeat(QUARTER / 3),
        "$(".repeat(QUARTER / 2),
        "( ".repeat(QUARTER / 2),
        "`".repeat(QUARTER),
        "\"$(\"".repeat(QUARTER / 4),
        "xargs ".repeat(QUARTER / 6),
        "$X ".repeat(QUARTER / 3),
        "env ".repeat(QUARTER / 4),
        "a=(".repeat(QUARTER / 3),
        "cat <<EOF; ".repeat(QUARTER / 11),
        "echo hi | sh | ".repeat(QUARTER / 16) + "sh",
        "sh -c \"".repeat(QUARTER / 7),
        format!("ls {}", "/usr/bin/env ".repeat(QUARTER / 13)),
    ];
    for command in &cases {
        let start = Instant::now();
        let d = check(&p, command);
        let took = start.elapsed();
        assert!(took < BUDGET, "{}…: {took:?}", &command[..20]);
        assert!(d.verdict == Verdict::Allow || d.message.starts_with("[DENIED]"));
    }
}
