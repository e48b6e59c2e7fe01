//! `hullward mcp` driven by a real MCP client: the official Python SDK (`mcp` from PyPI, pinned
//! below), installed by this test into a virtual environment under the cargo target directory
//! (made once, reused by later runs). The client script (`tests/mcp/client.py`) only speaks the
//! protocol; every assertion is here. Each call runs under the real kernel sandbox.
//!
//! The SDK speaks both lifecycles: [`LEGACY`] is its `initialize` handshake (2025-11-25, with
//! approvals asked mid-call), [`MODERN`] its default, which discovers the server and speaks
//! 2026-07-28 (per-request `_meta`; approvals as `input_required` round trips).

#[path = "support/scratch.rs"]
mod scratch;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use serde_json::{json, Value};

/// The MCP Python SDK the client is built on.
const SDK: &str = "mcp==2.3.0";
/// The SDK's connect modes: the `initialize` handshake, and discovery (its default).
const LEGACY: &str = "legacy";
const MODERN: &str = "auto";
const BOTH: [&str; 2] = [LEGACY, MODERN];
const PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";

/// The Python of a virtual environment with the SDK; made on first use.
fn python() -> &'static Path {
    static VENV: OnceLock<PathBuf> = OnceLock::new();
    VENV.get_or_init(|| {
        let venv =
            Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-venv-{}", SDK.replace("==", "-")));
        let python = venv.join("bin/python");
        let ready = venv.join("installed");
        if !ready.exists() {
            let _ = std::fs::remove_dir_all(&venv);
            run(
                Command::new("python3").args(["-m", "venv"]).arg(&venv),
                "python3 -m venv (Debian: python3-venv)",
            );
            run(
                Command::new(&python).args(["-m", "pip", "install", "--quiet", SDK]),
                "pip install the MCP SDK",
            );
            std::fs::write(&ready, SDK).unwrap();
        }
        python
    })
}

fn run(command: &mut Command, what: &str) {
    let out = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(out.status.success(), "{what} failed:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// A root (with `notes.txt`) and a home of its own for one server.
struct Lab {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    state: PathBuf,
}

impl Lab {
    fn new() -> Lab {
        let base = scratch::parent("mcp");
        std::fs::create_dir_all(&base).unwrap();
        let dir = tempfile::tempdir_in(&base).unwrap();
        let path = dir.path().canonicalize().unwrap();
        let (root, home, state) = (path.join("ws"), path.join("home"), path.join("state"));
        for d in [&root, &home, &state] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(root.join("notes.txt"), "hw-mcp-notes\n").unwrap();
        Lab { _dir: dir, root, home, state }
    }

    /// One MCP session: the client (`mode`: the SDK's connect mode; `elicit`: none, accept,
    /// decline) starts `hullward mcp --root ROOT FLAGS`, takes `steps`, and reports what it saw.
    fn session(&self, mode: &str, elicit: &str, flags: &[&str], steps: Value, env: &[(&str, &str)]) -> Value {
        let mut c = Command::new(python());
        c.env_clear()
            .env("PATH", PATH)
            .env("HOME", &self.home)
            .env("HULLWARD_HOME", &self.state)
            .env("LANG", "C.UTF-8")
            .envs(env.iter().copied())
            .current_dir(&self.root)
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/client.py"))
            .arg(mode)
            .arg(elicit)
            .arg(env!("CARGO_BIN_EXE_hullward"))
            .arg("mcp")
            .arg("--root")
            .arg(&self.root)
            .args(flags)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        child.stdin.take().unwrap().write_all(steps.to_string().as_bytes()).unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "the MCP client failed:\n{stderr}");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("client output: {e}\n{stderr}"))
    }

    fn audit(&self) -> String {
        std::fs::read_to_string(self.state.join("audit.jsonl")).unwrap_or_default()
    }
}

/// The revision the SDK negotiates with hullward in `mode`.
fn revision(mode: &str) -> &'static str {
    if mode == LEGACY {
        "2025-11-25"
    } else {
        "2026-07-28"
    }
}

fn call(tool: &str, arguments: Value) -> Value {
    json!({"tool": tool, "arguments": arguments})
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

fn is_error(result: &Value) -> bool {
    result["isError"].as_bool().unwrap_or(false)
}

#[test]
fn the_client_lists_all_eight_tools_with_their_schemas() {
    for mode in BOTH {
        let lab = Lab::new();
        let seen = lab.session(mode, "none", &[], json!([{"list": true}]), &[]);
        assert_eq!(seen["server"], "hullward");
        let tools = seen["tools"].as_array().unwrap();
        let mut names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        names.sort_unstable();
        assert_eq!(
            names,
            ["check_path", "check_url", "list_files", "probe", "read_file", "run", "shell_run", "write_file"]
        );
        for tool in tools {
            let schema = &tool["inputSchema"];
            assert_eq!(schema["type"], "object", "{tool}");
            for field in schema["required"].as_array().unwrap() {
                assert!(
                    schema["properties"][field.as_str().unwrap()].is_object(),
                    "{}: {field}",
                    tool["name"]
                );
            }
            assert!(tool["description"].as_str().unwrap().len() > 80, "{}", tool["name"]);
            assert_eq!(tool["outputSchema"]["required"], json!(["exit_code", "denied"]));
        }
        let run = tools.iter().find(|t| t["name"] == "run").unwrap();
        assert_eq!(run["inputSchema"]["required"], json!(["argv"]));
        assert_eq!(run["inputSchema"]["properties"]["argv"]["type"], "array");
        let check = tools.iter().find(|t| t["name"] == "check_path").unwrap();
        assert_eq!(check["annotations"]["readOnlyHint"], true);
        assert_eq!(
            check["inputSchema"]["properties"]["op"]["enum"],
            json!(["read", "write", "list", "delete", "exec"])
        );
    }
}

#[test]
fn a_command_runs_and_returns_its_output_and_exit_code() {
    for mode in BOTH {
        let lab = Lab::new();
        let steps = json!([
            call("shell_run", json!({"command": "cat notes.txt; echo hw-to-stderr >&2; exit 7"})),
            call("run", json!({"argv": ["sh", "-c", "echo hw-argv-$0 > made.txt; cat made.txt", "ok"]})),
        ]);
        let seen = lab.session(mode, "none", &["--unattended-policy", "allow"], steps, &[]);
        let (shell, run) = (&seen["results"][0], &seen["results"][1]);
        assert!(!is_error(shell), "{shell}");
        assert!(text(shell).contains("hw-mcp-notes\n") && text(shell).contains("hw-to-stderr\n"), "{shell}");
        assert_eq!(shell["structuredContent"]["exit_code"], 7);
        assert_eq!(shell["structuredContent"]["denied"], Value::Null);
        assert_eq!(text(run), "hw-argv-ok\n");
        assert_eq!(run["structuredContent"]["exit_code"], 0);
        assert_eq!(std::fs::read_to_string(lab.root.join("made.txt")).unwrap(), "hw-argv-ok\n");
    }
}

#[test]
fn the_kernel_sandbox_binds_what_an_mcp_call_runs() {
    let lab = Lab::new();
    let outside = lab.root.parent().unwrap().join("outside.txt");
    let steps = json!([
        call("run", json!({"argv": ["sh", "-c", format!("echo x > {}", outside.display())]})),
        call("run", json!({"argv": ["sh", "-c", "echo inside > inside.txt"]})),
    ]);
    let seen = lab.session(LEGACY, "none", &["--unattended-policy", "allow"], steps, &[]);
    assert_ne!(seen["results"][0]["structuredContent"]["exit_code"], 0, "{}", seen["results"][0]);
    assert!(!outside.exists(), "a write outside the root went through");
    assert_eq!(seen["results"][1]["structuredContent"]["exit_code"], 0, "{}", seen["results"][1]);
    assert!(lab.root.join("inside.txt").exists());
}

#[test]
fn a_denied_command_is_an_error_result_with_the_denied_text_and_rule() {
    for mode in BOTH {
        let lab = Lab::new();
        let steps = json!([
            call("shell_run", json!({"command": "rm -rf /"})),
            call("shell_run", json!({"command": "cat $(echo /etc/passwd)"})),
            call("shell_run", json!({"command": "echo hw-neighbour"})),
        ]);
        let seen = lab.session(mode, "none", &["--unattended-policy", "allow"], steps, &[]);
        let results = seen["results"].as_array().unwrap();
        for (result, rule) in results[..2].iter().zip(["catastrophic-delete", "subshell"]) {
            assert!(is_error(result), "{result}");
            assert!(text(result).starts_with("[DENIED] "), "{result}");
            assert_eq!(result["structuredContent"]["denied"]["rule"], rule, "{result}");
            assert_eq!(result["structuredContent"]["exit_code"], 126);
        }
        assert!(!is_error(&results[2]) && text(&results[2]) == "hw-neighbour\n", "{}", results[2]);
        assert!(lab.audit().contains("catastrophic-delete"));
    }
}

#[test]
fn without_elicitation_a_mutating_call_is_denied_by_the_unattended_policy() {
    for mode in BOTH {
        let lab = Lab::new();
        let steps = json!([
            call("shell_run", json!({"command": "echo hw-unattended > unattended.txt"})),
            call("check_path", json!({"op": "read", "path": "notes.txt"})),
        ]);
        let seen = lab.session(mode, "none", &[], steps, &[]);
        let denied = &seen["results"][0];
        assert!(is_error(denied), "{denied}");
        assert_eq!(denied["structuredContent"]["denied"]["rule"], "unattended");
        assert!(text(denied).starts_with("[DENIED] No human is attached"), "{denied}");
        assert!(!lab.root.join("unattended.txt").exists());
        assert_eq!(seen["elicitations"], json!([]));
        assert!(
            !is_error(&seen["results"][1]),
            "a read-only check is not a mutating call: {}",
            seen["results"][1]
        );
    }
}

#[test]
fn an_accepted_elicitation_runs_the_call_mid_call_or_by_an_input_required_round_trip() {
    for mode in BOTH {
        let lab = Lab::new();
        let steps =
            json!([call("shell_run", json!({"command": "echo hw-approved > approved.txt; echo done"}))]);
        let seen = lab.session(mode, "accept", &["--hitl", "on"], steps, &[]);
        assert_eq!(seen["protocol"], revision(mode));
        let result = &seen["results"][0];
        assert!(!is_error(result), "{result}");
        assert_eq!(text(result), "done\n");
        assert_eq!(std::fs::read_to_string(lab.root.join("approved.txt")).unwrap(), "hw-approved\n");
        let asked = seen["elicitations"].as_array().unwrap();
        assert_eq!(asked.len(), 1);
        assert!(asked[0].as_str().unwrap().contains("echo hw-approved > approved.txt"), "{asked:?}");
    }
}

#[test]
fn a_declined_elicitation_denies_the_call_on_both_revisions() {
    for mode in BOTH {
        let lab = Lab::new();
        let steps = json!([call("shell_run", json!({"command": "echo hw-declined > declined.txt"}))]);
        let seen = lab.session(mode, "decline", &["--hitl", "on"], steps, &[]);
        assert_eq!(seen["protocol"], revision(mode));
        let result = &seen["results"][0];
        assert!(is_error(result), "{result}");
        assert_eq!(result["structuredContent"]["denied"]["rule"], "approval");
        assert!(text(result).starts_with("[DENIED] The call was not approved."), "{result}");
        assert!(!lab.root.join("declined.txt").exists());
        assert_eq!(seen["elicitations"].as_array().unwrap().len(), 1);
    }
}

#[test]
fn check_path_and_check_url_answer_allowed_or_the_denial() {
    let lab = Lab::new();
    std::fs::write(lab.root.join(".env"), "HW=1\n").unwrap();
    let steps = json!([
        call("check_path", json!({"op": "read", "path": "notes.txt"})),
        call("check_path", json!({"op": "read", "path": "/etc/passwd"})),
        call("check_path", json!({"op": "write", "path": ".env"})),
        call("check_url", json!({"url": "https://api.github.com/repos"})),
        call("check_url", json!({"url": "https://example.com/"})),
        call("check_url", json!({"url": "http://169.254.169.254/latest/meta-data/"})),
    ]);
    let seen = lab.session(LEGACY, "none", &["--allow-host", "api.github.com"], steps, &[]);
    let r = seen["results"].as_array().unwrap();
    for allowed in [&r[0], &r[3]] {
        assert!(!is_error(allowed), "{allowed}");
        assert_eq!(text(allowed), "allowed\n");
        assert_eq!(allowed["structuredContent"]["exit_code"], 0);
        assert_eq!(allowed["structuredContent"]["verdict"], "allow");
    }
    for (denied, rule) in
        [(&r[1], "outside-sandbox"), (&r[2], "env-file"), (&r[4], "host-allowlist"), (&r[5], "private-host")]
    {
        assert!(is_error(denied), "{denied}");
        assert!(text(denied).starts_with("[DENIED] "), "{denied}");
        assert_eq!(denied["structuredContent"]["denied"]["rule"], rule, "{denied}");
        assert_eq!(denied["structuredContent"]["exit_code"], 1);
    }
}

#[test]
fn secret_values_are_masked_in_the_output_of_a_call() {
    let lab = Lab::new();
    let (file_secret, env_secret) = ("hw-dotenv-secret-4f1c9a", "hw-env-secret-7d2e5b");
    std::fs::write(lab.root.join(".env"), format!("DB_PASSWORD={file_secret}\n")).unwrap();
    std::fs::write(lab.root.join("leak.txt"), format!("{file_secret}\n{env_secret}\nhw-plain\n")).unwrap();
    let steps = json!([call("run", json!({"argv": ["cat", "leak.txt"]}))]);
    let seen = lab.session(
        LEGACY,
        "none",
        &["--unattended-policy", "allow"],
        steps,
        &[("HW_DEPLOY_TOKEN", env_secret)],
    );
    let result = &seen["results"][0];
    assert_eq!(text(result), "<secret-hidden>\n<secret-hidden>\nhw-plain\n", "{result}");
    let audit = lab.audit();
    assert!(!audit.contains(file_secret) && !audit.contains(env_secret));
}

#[test]
fn read_file_and_list_files_answer_inside_the_root_and_deny_what_is_protected() {
    let lab = Lab::new();
    std::fs::write(lab.root.join(".env"), "HW_SECRET=hw-dotenv-value-1234\n").unwrap();
    std::fs::create_dir(lab.root.join("src")).unwrap();
    let steps = json!([
        call("read_file", json!({"path": "notes.txt"})),
        call("read_file", json!({"path": ".env"})),
        call("read_file", json!({"path": "/etc/passwd"})),
        call("read_file", json!({"path": "missing.txt"})),
        call("list_files", json!({"path": "."})),
    ]);
    let seen = lab.session(LEGACY, "none", &[], steps, &[]);
    let r = seen["results"].as_array().unwrap();
    assert!(!is_error(&r[0]) && text(&r[0]) == "hw-mcp-notes\n", "{}", r[0]);
    assert_eq!(r[0]["structuredContent"]["exit_code"], 0);
    for (denied, rule) in [(&r[1], "env-file"), (&r[2], "outside-sandbox")] {
        assert!(is_error(denied) && text(denied).starts_with("[DENIED] "), "{denied}");
        assert_eq!(denied["structuredContent"]["denied"]["rule"], rule, "{denied}");
        assert!(!text(denied).contains("hw-dotenv-value"), "{denied}");
    }
    assert!(is_error(&r[3]) && text(&r[3]).contains("missing.txt"), "{}", r[3]);
    assert_eq!(r[3]["structuredContent"]["denied"], Value::Null);
    let listing = text(&r[4]);
    assert!(!is_error(&r[4]), "{}", r[4]);
    assert!(listing.lines().any(|l| l.ends_with("\tnotes.txt") && l.starts_with("file\t13\t")), "{listing}");
    assert!(listing.lines().any(|l| l.ends_with("\tsrc")), "{listing}");
}

#[test]
fn write_file_needs_a_human_or_the_unattended_policy_and_never_writes_protected_paths() {
    for mode in BOTH {
        let lab = Lab::new();
        std::fs::create_dir_all(lab.root.join(".git/hooks")).unwrap();
        let unattended = lab.session(
            mode,
            "none",
            &[],
            json!([call("write_file", json!({"path": "out.txt", "content": "x"}))]),
            &[],
        );
        assert_eq!(unattended["results"][0]["structuredContent"]["denied"]["rule"], "unattended");
        assert!(!lab.root.join("out.txt").exists());
        let steps = json!([
            call("write_file", json!({"path": "out.txt", "content": "hw-written\n"})),
            call("write_file", json!({"path": ".git/hooks/pre-commit", "content": "#!/bin/sh\n"})),
        ]);
        let seen = lab.session(mode, "none", &["--unattended-policy", "allow"], steps, &[]);
        let (wrote, hook) = (&seen["results"][0], &seen["results"][1]);
        assert!(!is_error(wrote), "{wrote}");
        assert_eq!(text(wrote), "wrote 11 bytes to 'out.txt'\n");
        assert_eq!(std::fs::read_to_string(lab.root.join("out.txt")).unwrap(), "hw-written\n");
        assert!(is_error(hook) && text(hook).starts_with("[DENIED] "), "{hook}");
        assert!(!lab.root.join(".git/hooks/pre-commit").exists());
        let declined = lab.session(
            mode,
            "decline",
            &["--hitl", "on"],
            json!([call("write_file", json!({"path": "out.txt", "content": "hw-declined\n"}))]),
            &[],
        );
        assert_eq!(declined["results"][0]["structuredContent"]["denied"]["rule"], "approval", "{declined}");
        assert_eq!(declined["elicitations"].as_array().unwrap().len(), 1);
        assert_eq!(std::fs::read_to_string(lab.root.join("out.txt")).unwrap(), "hw-written\n");
    }
}

#[test]
fn probe_runs_a_snippet_under_the_sandbox_and_the_shell_guard() {
    let lab = Lab::new();
    let steps = json!([
        call("probe", json!({"language": "sh", "code": "printf 'hw-probe-%s\\n' 42; cat notes.txt"})),
        call("probe", json!({"language": "sh", "code": "rm -rf /"})),
        call("probe", json!({"language": "python", "code": "print(6 * 7)"})),
    ]);
    let seen = lab.session(LEGACY, "none", &["--unattended-policy", "allow"], steps, &[]);
    let (ran, denied) = (&seen["results"][0], &seen["results"][1]);
    assert!(!is_error(ran), "{ran}");
    assert_eq!(text(ran), "hw-probe-42\nhw-mcp-notes\n");
    assert_eq!(ran["structuredContent"]["exit_code"], 0);
    assert!(is_error(denied), "{denied}");
    assert_eq!(denied["structuredContent"]["denied"]["rule"], "catastrophic-delete", "{denied}");
    let python = &seen["results"][2];
    assert_eq!((is_error(python), text(python)), (false, "42\n"), "{python}");
}

/// One round of a 2026-07-28 call driven by hand: the `input_required` answer itself, or (with
/// `state`: a literal `requestState`, or the index of the result whose state to echo) a retry
/// answered `answer` (`None`: no `inputResponses`).
fn round(command: &str, state: Option<Value>, answer: Option<&str>) -> Value {
    let mut step = json!({"tool": "shell_run", "arguments": {"command": command}, "manual": true});
    match state {
        Some(Value::Number(n)) => step["state_of"] = json!(n),
        Some(literal) => step["state"] = literal,
        None => {}
    }
    if let Some(answer) = answer {
        step["answer"] = json!(answer);
    }
    step
}

#[test]
fn the_sdk_discovers_2026_07_28_and_older_clients_keep_the_handshake() {
    let lab = Lab::new();
    let modern = lab.session(MODERN, "none", &[], json!([{"list": true}]), &[]);
    assert_eq!(modern["protocol"], "2026-07-28");
    assert_eq!(modern["server"], "hullward", "the discovery result names the server");
    assert_eq!(
        (&modern["listing"]["resultType"], &modern["listing"]["cacheScope"]),
        (&json!("complete"), &json!("private")),
        "{}",
        modern["listing"]
    );
    assert!(modern["listing"]["ttlMs"].is_u64(), "{}", modern["listing"]);
    let pinned =
        lab.session("2026-07-28", "none", &[], json!([call("read_file", json!({"path": "notes.txt"}))]), &[]);
    assert_eq!(pinned["protocol"], "2026-07-28");
    assert_eq!(text(&pinned["results"][0]), "hw-mcp-notes\n", "no discovery first: {pinned}");
    let legacy = lab.session(LEGACY, "none", &[], json!([{"list": true}]), &[]);
    assert_eq!(legacy["protocol"], "2025-11-25");
}

#[test]
fn an_input_required_approval_is_an_elicitation_and_its_retry_runs_or_refuses_the_call() {
    let lab = Lab::new();
    let (yes, no, silent) = ("echo hw-yes > yes.txt", "echo hw-no > no.txt", "echo hw-silent > silent.txt");
    let steps = json!([
        round(yes, None, None),
        round(yes, Some(json!(0)), Some("accept")),
        round(no, None, None),
        round(no, Some(json!(2)), Some("decline")),
        round(silent, None, None),
        round(silent, Some(json!(4)), None),
    ]);
    let seen = lab.session("2026-07-28", "accept", &["--hitl", "on"], steps, &[]);
    let r = seen["results"].as_array().unwrap();
    let asked = &r[0];
    assert_eq!(asked["resultType"], "input_required", "{asked}");
    let request = &asked["inputRequests"]["approval"];
    assert_eq!(request["method"], "elicitation/create", "{asked}");
    assert!(request["params"]["message"].as_str().unwrap().contains(yes), "{asked}");
    let state = asked["requestState"].as_str().unwrap();
    assert!(state.len() == 32 && state.bytes().all(|b| b.is_ascii_hexdigit()), "an opaque handle: {state}");
    assert!(!is_error(&r[1]) && r[1]["resultType"] == "complete", "{}", r[1]);
    assert_eq!(std::fs::read_to_string(lab.root.join("yes.txt")).unwrap(), "hw-yes\n");
    for denied in [&r[3], &r[5]] {
        assert!(is_error(denied), "{denied}");
        assert_eq!(denied["structuredContent"]["denied"]["rule"], "approval", "{denied}");
        assert!(text(denied).starts_with("[DENIED] The call was not approved."), "{denied}");
    }
    assert!(!lab.root.join("no.txt").exists() && !lab.root.join("silent.txt").exists());
    assert_eq!(seen["elicitations"], json!([]), "the client was never asked mid-call");
}

#[test]
fn a_forged_replayed_foreign_or_mismatched_request_state_approves_nothing() {
    let lab = Lab::new();
    let (first, second) = ("echo hw-first > first.txt", "echo hw-second > second.txt");
    let steps = json!([
        round(first, None, None),
        round(first, Some(json!("00112233445566778899aabbccddeeff")), Some("accept")),
        round(first, Some(json!("")), Some("accept")),
        {"connection": 1, "tool": "shell_run", "arguments": {"command": first}, "manual": true, "state_of": 0, "answer": "accept"},
        round("echo hw-other > other.txt", Some(json!(0)), Some("accept")),
        round(first, Some(json!(0)), Some("accept")),
        round(second, None, None),
        round(second, Some(json!(6)), Some("accept")),
        round(second, Some(json!(6)), Some("accept")),
    ]);
    let seen = lab.session(MODERN, "accept", &["--hitl", "on"], steps, &[]);
    let r = seen["results"].as_array().unwrap();
    assert_eq!(r[0]["resultType"], "input_required", "{}", r[0]);
    // forged, empty, another connection's, for another command, replayed after that refusal
    for refused in &r[1..6] {
        assert_eq!(refused["error"]["code"], -32602, "{refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains("nothing was approved"), "{refused}");
    }
    assert!(r[4]["error"]["message"].as_str().unwrap().contains("another tool call"), "{}", r[4]);
    assert!(!lab.root.join("first.txt").exists() && !lab.root.join("other.txt").exists());
    assert!(!is_error(&r[7]), "an honest round trip still works: {}", r[7]);
    assert_eq!(std::fs::read_to_string(lab.root.join("second.txt")).unwrap(), "hw-second\n");
    assert_eq!(r[8]["error"]["code"], -32602, "a used state is spent: {}", r[8]);
    let legacy = lab.session(
        LEGACY,
        "accept",
        &["--hitl", "on"],
        json!([round(first, Some(json!("x")), Some("accept"))]),
        &[],
    );
    assert!(
        legacy["results"][0]["error"]["message"].as_str().unwrap().contains("belongs to protocol 2026-07-28"),
        "{legacy}"
    );
    assert!(!lab.root.join("first.txt").exists());
}

#[test]
fn an_input_required_approval_never_answered_times_out_and_denies_the_call() {
    let lab = Lab::new();
    let config = lab.home.join("timeout.yaml");
    std::fs::write(&config, "Sandbox:\n  ApprovalTimeout: 1s\n").unwrap();
    let late = "echo hw-late > late.txt";
    let steps = json!([round(late, None, None), {"sleep": 3}, round(late, Some(json!(0)), Some("accept"))]);
    let flags = ["--hitl", "on", "--config", config.to_str().unwrap()];
    let seen = lab.session(MODERN, "accept", &flags, steps, &[]);
    let r = seen["results"].as_array().unwrap();
    assert_eq!(r[0]["resultType"], "input_required", "{}", r[0]);
    assert!(r[1]["error"]["message"].as_str().unwrap().contains("approval timeout of 1s"), "{}", r[1]);
    assert!(!lab.root.join("late.txt").exists());
    assert!(lab.audit().contains("The approval was not answered within 1s."), "{}", lab.audit());
}
