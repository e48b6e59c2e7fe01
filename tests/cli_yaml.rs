//! The YAML layer through the binary (`validate`, and a real `sh` run under a config): every
//! error carries its own line and column, every unknown key of a file is reported in one run,
//! hostile nesting is refused at its place (the run finishing is the point: it used to take
//! minutes), and what the old parser accepted — anchors, flow and block style, quoted `!` entries,
//! fuseraft's other sections — still loads.

use std::path::Path;
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hullward"));
    c.env_remove("HULLWARD_HOME").env("HOME", "/nonexistent-home");
    c
}

fn scratch() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-yaml");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

/// `validate --config FILE` on `text`: exit code and the lines it printed (paths relative to `dir`).
fn validate(dir: &Path, text: &str) -> (i32, Vec<String>) {
    let file = dir.join("c.yaml");
    std::fs::write(&file, text).unwrap();
    let Output { status, stdout, stderr } =
        bin().current_dir(dir).args(["validate", "--config", "c.yaml"]).output().unwrap();
    let all = format!("{}{}", String::from_utf8_lossy(&stdout), String::from_utf8_lossy(&stderr));
    let prefix = format!("{}/", dir.canonicalize().unwrap().display());
    (status.code().unwrap_or(-1), all.lines().map(|l| l.replace(&prefix, "")).collect())
}

#[test]
fn every_unknown_key_is_reported_at_once_each_with_its_line_and_column() {
    let dir = scratch();
    let text = "\
Agents:
  - Name: Auditor
    Whatever: kept
Security:
  FileSystemSandboxPth: .
  ShellPolicy: {AllowMode: substring, Alow: [ls]}
Sandbox:
  Strictt: true
  Limits:
    Processes: 10
    Memory: 1
";
    let (code, lines) = validate(dir.path(), text);
    assert_eq!(code, 1, "{lines:?}");
    let errors: Vec<&String> = lines.iter().filter(|l| l.contains(": error: ")).collect();
    assert_eq!(
        errors,
        [
            "c.yaml:5: error: Security: unknown field `FileSystemSandboxPth` (column 3)",
            "c.yaml:6: error: Security.ShellPolicy: unknown field `Alow` (column 39)",
            "c.yaml:8: error: Sandbox: unknown field `Strictt` (column 3)",
            "c.yaml:11: error: Sandbox.Limits: unknown field `Memory` (column 5)",
        ],
        "{lines:?}"
    );
    assert!(!lines.iter().any(|l| l.contains("error: : ")), "{lines:?}");
}

#[test]
fn type_and_syntax_errors_name_their_line_and_column() {
    let dir = scratch();
    let (code, lines) = validate(dir.path(), "Sandbox:\n  Timeout: 10m\n  Strict: maybe\n");
    assert_eq!((code, lines[0].as_str()), (1, "c.yaml:3: error: invalid boolean (column 11)"), "{lines:?}");
    let (code, lines) =
        validate(dir.path(), "Security:\n  HttpAllowedHosts: [a.example\n  DenyCredentialFiles: true\n");
    assert_eq!(code, 1, "{lines:?}");
    assert!(lines[0].starts_with("c.yaml:") && lines[0].contains("(column "), "{lines:?}");
}

#[test]
fn hostile_nesting_is_refused_at_its_place() {
    let dir = scratch();
    let brackets = format!("Agents: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
    let (code, lines) = validate(dir.path(), &brackets);
    assert_eq!(code, 1, "{lines:?}");
    assert!(lines[0].starts_with("c.yaml:1: error: "), "{lines:?}");
    // Block sequences nested by dashes on one line, in a section hullward otherwise ignores.
    let dashes = format!("Security:\n  DenyCredentialFiles: true\nAgents:\n  {}x\n", "- ".repeat(100_000));
    let (code, lines) = validate(dir.path(), &dashes);
    assert_eq!(code, 1, "{lines:?}");
    assert!(lines[0].starts_with("c.yaml:4: error: collections nested 65 deep"), "{lines:?}");
    // The neighbour: ordinary nesting (fuseraft's Agents with plugins, flow maps) is fine.
    let (code, lines) = validate(
        dir.path(),
        "Agents:\n  - {Name: a, Plugins: [[x, {y: [z]}]]}\nSandbox:\n  Limits: {Processes: 5}\n",
    );
    assert_eq!(code, 0, "{lines:?}");
}

#[test]
fn anchors_flow_style_and_quoted_bang_entries_still_load_and_apply() {
    let dir = scratch();
    let root = dir.path().canonicalize().unwrap();
    std::fs::write(root.join("keep.txt"), "kept\n").unwrap();
    let text = "\
Common: &hosts [api.github.com]
Security:
  HttpAllowedHosts: *hosts
  ShellPolicy:
    AllowMode: segments
    Allow: [echo, cat]
Sandbox:
  System: [/usr, /bin, /lib, /lib64, '!/etc/ssl']
  Timeout: 30
";
    std::fs::write(root.join(".hullward.yaml"), text).unwrap();
    let check =
        |url: &str| bin().current_dir(&root).args(["check", "url", url]).output().unwrap().status.code();
    assert_eq!(check("https://api.github.com/"), Some(0));
    assert_eq!(check("https://example.com/"), Some(1));
    let out = bin().current_dir(&root).args(["--hitl", "off", "sh", "--", "cat keep.txt"]).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "kept\n", "{}", String::from_utf8_lossy(&out.stderr));
    let denied = bin().current_dir(&root).args(["--hitl", "off", "sh", "--", "ls"]).output().unwrap();
    assert_eq!(denied.status.code(), Some(126), "ShellPolicy.Allow from the file applies");
}
