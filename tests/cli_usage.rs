//! Bad command lines through the binary: each mistake is a usage error (exit 2) with one clear
//! message (clap's suggestion for a near miss), never a program run under a misspelled name —
//! and next to each, the legitimate spelling that works.

#[path = "support/sandbox.rs"]
mod support;

use support::{output, Out, Sandbox};

fn hw(sb: &Sandbox, args: &[&str]) -> Out {
    output(sb.hullward().args(args))
}

/// Exit 2 and `needle` in stderr, nothing on stdout.
#[track_caller]
fn usage_error(out: &Out, needle: &str) {
    out.expect_code(2);
    assert!(out.stderr.contains(needle), "expected '{needle}' in stderr:\n{out}");
    assert!(out.stdout.is_empty(), "usage errors print nothing on stdout:\n{out}");
}

/// The policy-level mistakes: exactly one line, starting `hullward: `, without an empty key.
#[track_caller]
fn one_line(out: &Out, needle: &str) {
    usage_error(out, needle);
    let lines: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(lines.len(), 1, "one line expected:\n{out}");
    assert!(lines[0].starts_with("hullward: "), "{out}");
    assert!(!lines[0].contains(": : "), "stray empty key:\n{out}");
}

#[test]
fn a_misspelled_flag_before_the_program_is_a_usage_error_with_a_suggestion() {
    let sb = Sandbox::new();
    for cmd in [&["run"][..], &["sh"], &["explain"]] {
        let mut args = cmd.to_vec();
        args.extend(["--tiemout", "5s", "--", "touch", "ran"]);
        let out = hw(&sb, &args);
        usage_error(&out, "unexpected argument '--tiemout'");
        assert!(out.stderr.contains("a similar argument exists: '--timeout'"), "{out}");
        assert!(!out.stderr.contains("command not found"), "{out}");
        assert!(!sb.exists("ran"), "nothing may run after a usage error");
    }
    let out = hw(&sb, &["check", "shell", "--jsno", "--", "ls"]);
    usage_error(&out, "a similar argument exists: '--json'");

    // The neighbours: the right spelling runs; after `--` and after the program's first word,
    // dashes belong to the program.
    hw(&sb, &["run", "--timeout", "5s", "--", "touch", "ran"]).expect_code(0);
    assert!(sb.exists("ran"));
    let out = hw(&sb, &["run", "--timeout", "5s", "sh", "-c", "echo \"$1\"", "x", "--tiemout"]);
    out.expect_code(0);
    assert_eq!(out.stdout, "--tiemout\n", "{out}");
    let out = hw(&sb, &["sh", "--", "echo -n --tiemout"]);
    out.expect_code(0);
    assert_eq!(out.stdout, "--tiemout");
}

#[test]
fn near_misses_of_commands_and_values_are_suggested() {
    let sb = Sandbox::new();
    usage_error(&hw(&sb, &["chek", "url", "https://example.com/"]), "a similar subcommand exists: 'check'");
    usage_error(&hw(&sb, &["check", "path", "reed", "x"]), "unknown operation 'reed'");
    usage_error(
        &hw(&sb, &["--net", "proxi", "check", "url", "https://example.com/"]),
        "[possible values: none, proxy, host]",
    );
    usage_error(&hw(&sb, &["--timeout", "5x", "explain"]), "'5x' is not a duration");
    usage_error(&hw(&sb, &["audit", "--since", "last week"]), "neither an age");
    usage_error(&hw(&sb, &["run"]), "required");
    hw(&sb, &["check", "url", "https://example.com/"]).expect_code(0);
}

#[test]
fn a_root_profile_or_config_that_is_not_there_is_one_line_and_exit_2() {
    let sb = Sandbox::new();
    let missing = sb.base.join("no-such-dir");
    let m = missing.display().to_string();
    let url = ["check", "url", "https://example.com/"];
    let with = |flags: &[&str]| hw(&sb, &[flags, &url[..]].concat());

    one_line(&with(&["--root", &m]), &format!("--root: sandbox root '{m}' does not exist"));
    one_line(&with(&["--include", &m]), &format!("--include: included root '{m}' does not exist"));
    sb.write("file.txt", "x");
    one_line(&with(&["--root", "file.txt"]), "is not a directory");
    one_line(&with(&["--profile", "nope"]), "unknown profile 'nope': not a built-in profile");
    one_line(&with(&["--config", "missing.yaml"]), "cannot read configuration");
    std::fs::create_dir(sb.root.join("conf.d")).unwrap();
    one_line(&with(&["--config", "conf.d"]), "cannot read configuration");
    one_line(&with(&["--env", "A=B"]), "--env 'A=B' is not an environment variable name");
    sb.write("bad.yaml", "Security:\n  Foo: 1\n");
    one_line(&with(&["--config", "bad.yaml"]), "bad.yaml:2: error: Security: unknown field `Foo`");

    // `validate` reports an invalid file as 1 (Decision 14), still without an empty key.
    let out = hw(&sb, &["validate", "--config", "bad.yaml"]);
    out.expect_code(1);
    assert!(out.stdout.contains("bad.yaml:2: error: Security: unknown field `Foo`"), "{out}");
    assert!(!out.stdout.contains(": : "), "{out}");

    // The neighbours that exist.
    with(&["--root", &sb.root.display().to_string(), "--profile", "ci"]).expect_code(0);
    sb.write("good.yaml", "Security:\n  HttpAllowedHosts: [example.com]\n");
    with(&["--config", "good.yaml"]).expect_code(0);
}

#[test]
fn version_names_the_git_revision_and_help_shows_examples() {
    let sb = Sandbox::new();
    let out = hw(&sb, &["--version"]);
    out.expect_code(0);
    let line = out.stdout.trim();
    assert!(line.starts_with(&format!("hullward {} (git ", env!("CARGO_PKG_VERSION"))), "{line}");
    assert!(line.ends_with(')') && !line.contains("(git )"), "{line}");
    for cmd in ["run", "sh", "check", "filter", "explain", "validate", "doctor", "serve", "audit"] {
        let out = hw(&sb, &[cmd, "--help"]);
        out.expect_code(0);
        let examples =
            out.stdout.split("Examples:").nth(1).unwrap_or_else(|| panic!("{cmd}: no examples\n{out}"));
        let lines = examples
            .lines()
            .filter(|l| l.trim_start().starts_with("hullward ") || l.contains("| hullward"))
            .count();
        assert!(lines >= 2, "{cmd}: at least two examples\n{out}");
    }
}

/// `explain` and `audit` on a terminal (a pseudo-terminal from `script(1)`): colour; piped, or
/// with `NO_COLOR`: the same text without escape sequences.
#[test]
fn colour_only_on_a_terminal_and_never_with_no_color() {
    let sb = Sandbox::new();
    output(sb.hullward().args(["check", "url", "http://127.0.0.1/"])).expect_code(1);
    for cmd in ["explain", "audit"] {
        // The same environment as `Sandbox::hullward`, under `script -qec 'hullward CMD'`.
        let tty = |no_color: &str| {
            let mut c = std::process::Command::new("script");
            c.env_clear()
                .env("PATH", support::PATH)
                .env("HOME", &sb.home)
                .env("HULLWARD_HOME", sb.base.join("hullward-home"))
                .env("LANG", "C.UTF-8")
                .env("TERM", "xterm")
                .env("NO_COLOR", no_color)
                .current_dir(&sb.root)
                .args(["-qec", &format!("{} {cmd} --hitl off", support::bin()), "/dev/null"]);
            output(&mut c)
        };
        let coloured = tty("");
        coloured.expect_code(0);
        assert!(
            coloured.stdout.contains("\x1b[1m") || coloured.stdout.contains("\x1b[31m"),
            "{cmd}: {coloured}"
        );
        let plain = tty("1");
        assert!(!plain.stdout.contains('\x1b'), "{cmd} with NO_COLOR: {plain}");
        let piped = output(sb.hullward().env("TERM", "xterm").args([cmd, "--hitl", "off"]));
        piped.expect_code(0);
        assert!(!piped.stdout.contains('\x1b'), "{cmd} piped: {piped}");
        assert_eq!(plain.stdout.replace("\r\n", "\n"), piped.stdout, "{cmd}: the same text either way");
    }
}
