//! The foundation through the binary: `check path`, `check url`, `validate` and `explain` with
//! real files, real symlinks and real configs, including a fuseraft orchestration.yaml built from
//! the seed's examples.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_hullward"));
    c.env_remove("HULLWARD_HOME").env("HOME", "/nonexistent-home");
    c
}

/// A scratch directory outside `/tmp` (which the default profile makes writable).
fn scratch() -> tempfile::TempDir {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli-policy");
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

fn run(cmd: &mut Command) -> (i32, String, String) {
    let Output { status, stdout, stderr } = cmd.output().unwrap();
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

fn json(out: &str) -> serde_json::Value {
    serde_json::from_str(out.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {out}"))
}

/// The seed's orchestration example, assembled from its Security snippets, with fuseraft's other
/// top-level sections present as they would be.
const ORCHESTRATION: &str = r#"Agents:
  - Name: Auditor
    TrustScore: 0.5
    Plugins:
      - FileSystem
Plugins:
  - CodeExecution
Security:
  FileSystemSandboxPath: myapp
  FileSystemPermissions:
    Read:
      - src/**
      - docs/**
    Write:
      - tests/**
      - docs/**
    Deny:
      - secrets/**
      - infra/prod/**
      - .env
  ChangeEnvelope:
    - src/billing/**
    - src/payments/processor.go
    - tests/billing/**
  ShellPolicy:
    Allow:
      - "go test"
      - "npm test"
      - "dotnet test"
    Deny:
      - "rm -rf"
      - "curl | bash"
      - "wget | sh"
      - "dd if="
  HttpAllowedHosts:
    - "${SNOW_HOST}"       # e.g. mycompany.service-now.com
    - api.github.com
  ReadFileSizeLimit: 40000
"#;

struct Project {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    config: PathBuf,
}

fn project() -> Project {
    let dir = scratch();
    let base = dir.path().canonicalize().unwrap();
    let root = base.join("myapp");
    for d in ["src/billing", "src/auth", "docs", "tests/billing", "secrets", "infra/prod", "backend"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for f in
        ["src/billing/invoice.go", "src/auth/token.go", "infra/prod/deploy.sh", "backend/.env", "docs/a.md"]
    {
        std::fs::write(root.join(f), "x\n").unwrap();
    }
    let config = base.join("orchestration.yaml");
    std::fs::write(&config, ORCHESTRATION).unwrap();
    Project { _dir: dir, base, root, config }
}

fn check_path(p: &Project, op: &str, path: &str) -> (i32, serde_json::Value) {
    let (code, out, err) = run(bin()
        .current_dir(&p.root)
        .arg("--config")
        .arg(&p.config)
        .args(["check", "path", "--json", op, path]));
    assert!(err.is_empty() || !err.contains("panicked"), "{err}");
    (code, json(&out))
}

#[test]
fn orchestration_yaml_loads_unchanged_and_decides_like_the_seed() {
    let p = project();
    let cases = [
        ("read", "infra/prod/deploy.sh", 1, "deny", "fs-deny"),
        ("read", "backend/.env", 1, "deny", "env-file"),
        ("read", "src/auth/token.go", 0, "allow", "sandbox"),
        ("write", "src/auth/token.go", 1, "deny", "fs-write"),
        ("write", "tests/billing/x_test.go", 0, "allow", "sandbox"),
        ("write", "tests/other_test.go", 1, "deny", "change-envelope"),
        ("list", "tests", 0, "allow", "sandbox"),
        ("read", "/etc/passwd", 1, "deny", "outside-sandbox"),
    ];
    for (op, path, code, verdict, rule) in cases {
        let (c, v) = check_path(&p, op, path);
        assert_eq!(
            (c, v["verdict"].as_str().unwrap(), v["rule"].as_str().unwrap()),
            (code, verdict, rule),
            "{op} {path}: {v}"
        );
    }
    let (_, v) = check_path(&p, "read", "infra/prod/deploy.sh");
    assert_eq!(
        v["message"],
        "[DENIED] 'infra/prod/deploy.sh': Path is blocked by a configured FileSystem deny rule."
    );
    let (_, v) = check_path(&p, "read", "/etc/passwd");
    assert_eq!(
        v["message"].as_str().unwrap(),
        format!(
            "[DENIED] Path '/etc/passwd' is outside the configured sandbox '{}'.\nAll file operations must stay within the sandbox.",
            p.root.display()
        )
    );
}

#[test]
fn text_output_prints_the_message_or_allowed() {
    let p = project();
    let (code, out, _) = run(bin().current_dir(&p.root).arg("--config").arg(&p.config).args([
        "check",
        "path",
        "read",
        "docs/a.md",
    ]));
    assert_eq!((code, out.trim()), (0, "allowed"));
    let (code, out, _) = run(bin().current_dir(&p.root).args(["check", "path", "read", "backend/.env"]));
    assert_eq!(code, 1);
    assert_eq!(out.trim(), "[DENIED] 'backend/.env': Path is blocked by a configured FileSystem deny rule.");
}

#[test]
fn symlinks_out_of_and_into_the_root() {
    let p = project();
    let outside = p.base.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "s").unwrap();
    symlink(outside.join("secret.txt"), p.root.join("docs/escape")).unwrap();
    symlink(p.root.join("docs/a.md"), outside.join("back-in")).unwrap();
    symlink(p.root.join("backend/.env"), p.root.join("docs/innocent.txt")).unwrap();
    let (c, v) = check_path(&p, "read", "docs/escape");
    assert_eq!((c, v["rule"].as_str().unwrap()), (1, "outside-sandbox"), "{v}");
    let (c, v) = check_path(&p, "read", outside.join("back-in").to_str().unwrap());
    assert_eq!((c, v["rule"].as_str().unwrap()), (0, "sandbox"), "{v}");
    let (c, v) = check_path(&p, "read", "docs/innocent.txt");
    assert_eq!((c, v["rule"].as_str().unwrap()), (1, "env-file"), "{v}");
}

#[test]
fn hitl_turns_an_outside_read_into_ask_but_never_a_deny_rule() {
    let p = project();
    let outside = p.base.join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("f.txt"), "x").unwrap();
    std::fs::write(outside.join(".env"), "K=v").unwrap();
    let ask = |path: &Path| {
        let (code, out, _) = run(bin()
            .current_dir(&p.root)
            .args(["--hitl", "on", "check", "path", "--json", "read"])
            .arg(path));
        (code, json(&out))
    };
    let (c, v) = ask(&outside.join("f.txt"));
    assert_eq!((c, v["verdict"].as_str().unwrap()), (1, "ask"), "{v}");
    let (c, v) = ask(&outside.join(".env"));
    assert_eq!((c, v["verdict"].as_str().unwrap()), (1, "deny"), "{v}");
}

#[test]
fn non_utf8_paths_are_decided_not_crashed() {
    let p = project();
    let name = std::ffi::OsStr::from_bytes(b"docs/caf\xe9.md");
    let (code, out, err) =
        run(bin().current_dir(&p.root).args(["check", "path", "--json", "write"]).arg(name));
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(json(&out)["verdict"], "allow");
    let env_name = std::ffi::OsStr::from_bytes(b"x\xff/.env");
    let (code, out, _) =
        run(bin().current_dir(&p.root).args(["check", "path", "--json", "read"]).arg(env_name));
    assert_eq!((code, json(&out)["rule"].as_str().unwrap().to_string()), (1, "env-file".to_string()));
}

#[test]
fn check_url_allowlist_and_private_ranges() {
    let p = project();
    let url = |u: &str, env: Option<(&str, &str)>| {
        let mut c = bin();
        c.current_dir(&p.root).arg("--config").arg(&p.config).args(["check", "url", "--json", u]);
        if let Some((k, v)) = env {
            c.env(k, v);
        } else {
            c.env_remove("SNOW_HOST");
        }
        let (code, out, _) = run(&mut c);
        (code, json(&out))
    };
    let (c, v) = url("https://api.github.com/repos/x", None);
    assert_eq!((c, v["verdict"].as_str().unwrap()), (0, "allow"));
    let (c, v) = url("https://mycompany.service-now.com/api", None);
    assert_eq!((c, v["rule"].as_str().unwrap()), (1, "host-allowlist"));
    let (c, _) =
        url("https://mycompany.service-now.com/api", Some(("SNOW_HOST", "mycompany.service-now.com")));
    assert_eq!(c, 0);
    for private in
        ["http://127.1/", "http://[::ffff:10.0.0.1]/", "http://169.254.169.254/", "http://localhost/"]
    {
        let (c, v) = url(private, None);
        assert_eq!((c, v["rule"].as_str().unwrap()), (1, "private-host"), "{private}");
    }
}

#[test]
fn validate_reports_every_problem_with_its_line() {
    let p = project();
    let (code, out, _) = run(bin().current_dir(&p.base).arg("--config").arg(&p.config).arg("validate"));
    assert_eq!(code, 0, "{out}");
    let bad = p.base.join("bad.yaml");
    std::fs::write(
        &bad,
        "Security:\n  ShellPolicy:\n    AllowMode: segmentz\n  HttpAllowedHosts: ['*.com']\nSandbox:\n  Network: wifi\n",
    )
    .unwrap();
    let (code, out, _) =
        run(bin().current_dir(&p.base).arg("--config").arg(&bad).args(["validate", "--json"]));
    assert_eq!(code, 1, "{out}");
    let v = json(&out);
    assert_eq!(v["valid"], false);
    let lines: Vec<i64> =
        v["diagnostics"].as_array().unwrap().iter().filter_map(|d| d["line"].as_i64()).collect();
    assert_eq!(lines, vec![3, 4, 6], "{v}");
    let warn = p.base.join("warn.yaml");
    std::fs::write(&warn, "Security:\n  ShellPolicy:\n    AllowMode: segments\n").unwrap();
    let (code, out, _) = run(bin().current_dir(&p.base).arg("--config").arg(&warn).arg("validate"));
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("warn.yaml:3: warning"), "{out}");
}

#[test]
fn bad_input_of_every_kind_gets_a_clear_error_and_the_right_code() {
    let p = project();
    let cases: Vec<(&str, &str)> = vec![
        ("syntax.yaml", "Security:\n  ShellPolicy: [unclosed\n"),
        ("types.yaml", "Security:\n  ReadFileSizeLimit: lots\n"),
        ("unknown.yaml", "Sandbox:\n  Strikt: true\n"),
        ("relative.yaml", "Security:\n  FileSystemSandboxPath: does/not/exist\n"),
        ("readonly.yaml", "Sandbox:\n  ReadOnlyDirs: ['/']\n"),
    ];
    for (name, text) in cases {
        let f = p.base.join(name);
        std::fs::write(&f, text).unwrap();
        let (code, out, err) =
            run(bin().current_dir(&p.base).arg("--config").arg(&f).args(["check", "path", "read", "x"]));
        assert_eq!(code, 2, "{name}: {out}{err}");
        assert!(err.contains(name) && !err.contains("panicked"), "{name}: {err}");
        let (code, out, _) = run(bin().current_dir(&p.base).arg("--config").arg(&f).arg("validate"));
        assert_eq!(code, 1, "{name}: {out}");
        assert!(out.contains(&format!("{name}:")), "{name}: {out}");
    }
    std::fs::write(p.base.join("latin1.yaml"), b"Security:\n  ShellPolicy:\n    Deny: [\"caf\xe9\"]\n")
        .unwrap();
    let (code, _, err) = run(bin().current_dir(&p.base).args(["--config", "latin1.yaml", "explain"]));
    assert_eq!(code, 2);
    assert!(err.contains("not valid UTF-8"), "{err}");
    let (code, _, err) = run(bin().current_dir(&p.base).args(["--config", "missing.yaml", "validate"]));
    assert_eq!(code, 2);
    assert!(err.contains("missing.yaml"), "{err}");
    let (code, _, err) = run(bin().current_dir(&p.base).args(["--profile", "nosuch", "explain"]));
    assert_eq!(code, 2);
    assert!(err.contains("unknown profile 'nosuch'") && err.contains("default, ci"), "{err}");
    let (code, _, _) = run(bin().args(["check", "path", "chmod", "x"]));
    assert_eq!(code, 2);
    let (code, _, _) = run(bin().args(["--timeout", "soon", "explain"]));
    assert_eq!(code, 2);
}

#[test]
fn explain_shows_roots_globs_and_their_origins() {
    let p = project();
    let (code, out, _) =
        run(bin().current_dir(&p.base).arg("--config").arg(&p.config).args(["explain", "--json"]));
    assert_eq!(code, 0);
    let v = json(&out);
    assert_eq!(v["root"].as_str().unwrap(), p.root.to_str().unwrap());
    let deny = v["deny"].as_array().unwrap();
    let from = |pat: &str| {
        deny.iter().find(|r| r["pattern"] == pat).map(|r| r["from"].as_str().unwrap().to_string())
    };
    assert_eq!(from("**/.env").unwrap(), "built-in env-file rule");
    assert_eq!(from("**/id_rsa").unwrap(), "built-in credential-file rule");
    assert_eq!(from("secrets/**").unwrap(), format!("{}:18", p.config.display()));
    assert_eq!(v["http_allowed_hosts"], serde_json::json!(["api.github.com"]));
    assert_eq!(v["network"], "proxy");
    let (code, text, _) = run(bin().current_dir(&p.root).args(["--profile", "readonly", "explain"]));
    assert_eq!(code, 0);
    assert!(text.contains("(read)") && text.contains("network:      none"), "{text}");
}

#[test]
fn profiles_by_name_and_by_file() {
    let p = project();
    let (code, out, _) = run(bin().current_dir(&p.root).args(["--profile", "ci", "explain", "--json"]));
    assert_eq!(code, 0);
    assert_eq!(json(&out)["timeout"], "30m");
    let prof = p.base.join("mine.yaml");
    std::fs::write(&prof, "Sandbox:\n  Timeout: 45s\n").unwrap();
    let (code, out, _) =
        run(bin().current_dir(&p.root).arg("--profile").arg(&prof).args(["explain", "--json"]));
    assert_eq!(code, 0);
    assert_eq!(json(&out)["timeout"], "45s");
    let (code, out, _) = run(bin().current_dir(&p.root).arg("--profile").arg(&prof).args([
        "--timeout",
        "2m",
        "explain",
        "--json",
    ]));
    assert_eq!(code, 0);
    assert_eq!(json(&out)["timeout"], "2m");
}
