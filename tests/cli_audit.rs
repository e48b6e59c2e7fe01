//! `hullward audit` reads back what real calls recorded, and hullward's own failures leave a
//! crash dump — with secrets masked — while usage errors and denials leave none.

#[path = "support/sandbox.rs"]
mod support;

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use support::{output, Sandbox};

#[test]
fn audit_shows_decisions_calls_and_unknown_records_as_a_timeline() {
    let sb = Sandbox::new();
    let home = sb.base.join("hullward-home");
    output(sb.hullward().args(["check", "shell", "--", "rm -rf /"])).expect_code(1);
    output(sb.hullward().args(["check", "url", "https://example.com/"])).expect_code(0);
    sb.run(&[], &["true"]).expect_code(0);
    // A kind this version does not know (as a newer hullward might write) and a damaged line.
    let log = home.join("audit.jsonl");
    let mut text = std::fs::read_to_string(&log).unwrap();
    text.push_str(
        "{\"time\":\"2030-01-01T00:00:00.000Z\",\"call_id\":\"call-9\",\"kind\":\"quarantine\",\"path\":\".git/hooks/pre-commit\"}\n",
    );
    text.push_str("not json\n");
    std::fs::write(&log, text).unwrap();

    let out = output(sb.hullward().arg("audit"));
    out.expect_code(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(
        lines.iter().any(|l| l.contains("deny") && l.contains("sh: rm -rf / [catastrophic-delete]")),
        "{out}"
    );
    assert!(lines.iter().any(|l| l.trim_start().starts_with("[DENIED]")), "{out}");
    assert!(lines.iter().any(|l| l.contains("allow") && l.contains("url https://example.com/")), "{out}");
    assert!(
        lines.iter().any(|l| l.contains("call ") && l.contains("exit 0 after") && l.contains("run: true")),
        "{out}"
    );
    assert!(
        lines.iter().any(|l| l.contains("quarantine") && l.contains("path=.git/hooks/pre-commit")),
        "{out}"
    );
    assert!(out.stderr.contains("audit.jsonl:5: not an audit record, skipped"), "{out}");

    let json = output(sb.hullward().args(["audit", "--json", "--call", "call-9"]));
    json.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(json.stdout.trim()).unwrap();
    assert_eq!(v["kind"], "quarantine");
    let since = output(sb.hullward().args(["audit", "--json", "--since", "2029-12-31"]));
    assert_eq!(since.stdout.lines().count(), 1, "{since}");
    let recent = output(sb.hullward().args(["audit", "--since", "1h"]));
    assert_eq!(recent.stdout.lines().filter(|l| !l.starts_with(' ')).count(), 4, "{recent}");

    // No log yet: an empty timeline and a note, not a failure.
    let empty = output(sb.hullward().env("HULLWARD_HOME", sb.base.join("fresh")).arg("audit"));
    empty.expect_code(0);
    assert!(empty.stdout.is_empty() && empty.stderr.contains("no audit log"), "{empty}");
}

#[test]
fn an_internal_failure_writes_a_masked_0600_crash_dump_and_says_where() {
    let sb = Sandbox::new();
    let home = sb.base.join("hullward-home");
    let token = "ghp_HWcrashdumpTOKEN0123456789";
    // Reading a directory as standard input is an internal failure of `filter` (exit 125).
    let out = output(
        sb.hullward()
            .env("GITHUB_TOKEN", token)
            .args(["filter", "--deny", token])
            .stdin(Stdio::from(std::fs::File::open("/").unwrap())),
    );
    out.expect_code(125);
    let path = out
        .stderr
        .lines()
        .find_map(|l| l.strip_prefix("hullward: crash report written to "))
        .unwrap_or_else(|| panic!("no crash report path\n{out}"));
    let path = std::path::Path::new(path);
    assert_eq!(path.parent().unwrap(), home.join("crashdump"));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!((mode(path), mode(path.parent().unwrap())), (0o600, 0o700));
    let text = std::fs::read_to_string(path).unwrap();
    assert!(!text.contains(token), "the token must be masked:\n{text}");
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["failure"]["kind"], "error");
    assert!(v["failure"]["message"].as_str().unwrap().contains("reading stdin"), "{text}");
    assert_eq!(v["argv"][1], "filter");
    assert!(v["version"].as_str().unwrap().starts_with(env!("CARGO_PKG_VERSION")));
    let name = path.file_name().unwrap().to_str().unwrap();
    assert!(name.ends_with(&format!("-{}.json", v["id"].as_str().unwrap())), "{name}");

    // Not crashes: a usage error, a denial, a program's own failure.
    output(sb.hullward().args(["run", "--tiemout", "1s", "--", "true"])).expect_code(2);
    output(sb.hullward().args(["sh", "--", "rm -rf /"])).expect_code(126);
    sb.run(&[], &["false"]).expect_code(1);
    assert_eq!(std::fs::read_dir(home.join("crashdump")).unwrap().count(), 1);
}
