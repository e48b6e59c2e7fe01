//! `hullward serve`'s `probe` and `skill_run`, driven over a real server's socket: the snippet
//! runs from the call's private `/tmp` under the guard its language gets; a skill's script runs
//! only when it resolves inside the skill's folder, and a project's skill only with a human.

mod serve_support;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::path::Path;

use serde_json::{json, Value};
use serve_support::{config, data, Conn, Server};

fn call(c: &mut Conn, request: Value) -> (String, Value) {
    let id = request["id"].clone();
    c.send(request);
    let events = c.call_events(&id);
    (data(&events, "stdout"), events.last().unwrap().clone())
}

fn script(path: &Path, body: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, body).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_probe_runs_its_snippet_from_the_private_tmp_with_the_named_interpreter() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let mut c = server.session(false);
    let code = "import sys\nprint(__file__)\nprint(open('notes.txt').read().strip(), 6 * 7)";
    let (out, exit) = call(&mut c, json!({"id": 1, "method": "probe", "language": "python", "code": code}));
    assert_eq!(exit["code"], 0, "{exit}");
    let mut lines = out.lines();
    let file = lines.next().unwrap().to_string();
    assert!(file.starts_with("/tmp/hullward-probe-") && file.ends_with(".py"), "{out}");
    assert_eq!(lines.next(), Some("hw-serve-notes 42"));
    assert!(!Path::new(&file).exists(), "the snippet was written outside the call's private /tmp");
    let planted = std::fs::read_dir(&server.root)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().contains("probe"))
        .count();
    assert_eq!(planted, 0);

    let (out, exit) = call(
        &mut c,
        json!({"id": 2, "method": "probe", "language": "sh", "code": "printf '%s\\n' \"$0\"; echo a'b'c; exit 4"}),
    );
    assert_eq!((out.lines().nth(1), exit["code"].as_i64()), (Some("abc"), Some(4)), "{out} {exit}");
    let (out, exit) = call(
        &mut c,
        json!({"id": 3, "method": "probe", "language": "node", "code": "console.log([1,2,3].map(x => x * 2).join(','))"}),
    );
    assert_eq!((out.as_str(), exit["code"].as_i64()), ("2,4,6\n", Some(0)), "{exit}");

    c.send(json!({"id": 4, "method": "probe", "language": "cobol", "code": "DISPLAY 'X'."}));
    assert!(c.next_for(&json!(4))["message"].as_str().unwrap().contains("unknown language 'cobol'"));
    c.send(json!({"id": 5, "method": "probe", "language": "sh"}));
    assert_eq!(c.next_for(&json!(5))["message"], "missing field 'code'");
}

#[test]
fn a_shell_probe_gets_the_whole_shell_guard_and_other_languages_the_credential_rule_and_shell_policy() {
    let (_d, cfg) = config("Security:\n  ShellPolicy:\n    Deny: [\"os.system\"]\n");
    let server = Server::start(&["--unattended-policy", "allow", "--config", &cfg]);
    std::fs::write(server.root.join(".env"), "API_TOKEN=hw-probe-secret-77\n").unwrap();
    let mut c = server.session(false);
    for (id, language, code, rule) in [
        (1, "sh", "cat .env", "env-file"),
        (2, "bash", "sudo id", "sudo"),
        (3, "sh", "echo $(cat /etc/passwd)", "subshell"),
        (4, "python", "print(open('/root/.ssh/id_rsa').read())", "credential-file"),
        (5, "python", "import os\nos.system('id')", "shell-deny"),
    ] {
        let (out, exit) =
            call(&mut c, json!({"id": id, "method": "probe", "language": language, "code": code}));
        assert_eq!(
            (exit["code"].as_i64(), exit["denied"]["rule"].as_str()),
            (Some(126), Some(rule)),
            "{code}: {exit}"
        );
        assert_eq!(out, "");
    }
    // Python is not shell: `sudo` in a string is not a command, and a .env it opens is masked.
    let code = "print('sudo make me a sandwich'); print(len(open('.env').read()))";
    let (out, exit) = call(&mut c, json!({"id": 6, "method": "probe", "language": "python", "code": code}));
    assert!(out.starts_with("sudo make me a sandwich\n"), "{out} {exit}");
    assert!(!out.contains("hw-probe-secret-77"));
}

#[test]
fn a_probe_outside_the_shell_allow_list_is_denied_and_an_unattended_one_too() {
    let (_d, cfg) = config("Security:\n  ShellPolicy:\n    Allow: [\"python3\"]\n");
    let server = Server::start(&["--unattended-policy", "allow", "--config", &cfg]);
    let mut c = server.session(false);
    let (out, exit) =
        call(&mut c, json!({"id": 1, "method": "probe", "language": "python", "code": "print(1)"}));
    assert_eq!((out.as_str(), exit["code"].as_i64()), ("1\n", Some(0)), "{exit}");
    let (_, exit) =
        call(&mut c, json!({"id": 2, "method": "probe", "language": "node", "code": "console.log(1)"}));
    assert_eq!(exit["denied"]["rule"], "shell-allow", "{exit}");

    let strict = Server::start(&[]);
    let mut c = strict.session(false);
    let (_, exit) = call(&mut c, json!({"id": 1, "method": "probe", "language": "sh", "code": "touch made"}));
    assert_eq!(exit["denied"]["rule"], "unattended", "{exit}");
    assert!(!strict.root.join("made").exists());
}

#[test]
fn a_skill_script_runs_only_from_inside_its_folder() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let skills = server.state.join("skills");
    let outside = server.root.parent().unwrap().join("elsewhere");
    script(&outside.join("evil.sh"), "#!/bin/sh\necho hw-evil\n");
    script(&skills.join("greet/run.sh"), "#!/bin/sh\necho hello-$1 from $(basename \"$(pwd)\")\n");
    std::fs::write(skills.join("greet/tool.py"), "import sys\nprint('py', sys.argv[1:])\n").unwrap();
    script(&skills.join("other/x.sh"), "#!/bin/sh\necho hw-other\n");
    symlink(outside.join("evil.sh"), skills.join("greet/leak.sh")).unwrap();
    symlink(&outside, skills.join("greet/lib")).unwrap();
    std::fs::create_dir_all(skills.join("greet/sub")).unwrap();
    symlink("../run.sh", skills.join("greet/sub/inner.sh")).unwrap();
    let mut c = server.session(false);

    let (out, exit) = call(
        &mut c,
        json!({"id": 1, "method": "skill_run", "skill": "greet", "script": "run.sh", "args": ["world"]}),
    );
    assert_eq!((out.as_str(), exit["code"].as_i64()), ("hello-world from ws\n", Some(0)), "{exit}");
    let (out, _) = call(
        &mut c,
        json!({"id": 2, "method": "skill_run", "skill": "greet", "script": "tool.py", "args": ["a", "b"]}),
    );
    assert_eq!(out, "py ['a', 'b']\n");
    let (out, _) =
        call(&mut c, json!({"id": 3, "method": "skill_run", "skill": "greet", "script": "sub/inner.sh"}));
    assert_eq!(out, "hello- from ws\n", "a symlink that stays inside the folder is fine");

    for (id, path) in [(4, "leak.sh"), (5, "lib/evil.sh"), (6, "../other/x.sh"), (7, "/bin/true")] {
        let (out, exit) =
            call(&mut c, json!({"id": id, "method": "skill_run", "skill": "greet", "script": path}));
        assert_eq!(
            (exit["code"].as_i64(), exit["denied"]["rule"].as_str()),
            (Some(126), Some("skill-path")),
            "{path}: {exit}"
        );
        assert_eq!(out, "", "{path}");
    }
    c.send(json!({"id": 8, "method": "skill_run", "skill": "nope", "script": "x.sh"}));
    assert!(c.next_for(&json!(8))["message"].as_str().unwrap().contains("no skill 'nope'"));
    c.send(json!({"id": 9, "method": "skill_run", "skill": "../greet", "script": "run.sh"}));
    assert!(c.next_for(&json!(9))["message"].as_str().unwrap().contains("one skill folder"));
    c.send(json!({"id": 10, "method": "skill_run", "skill": "greet", "script": "missing.sh"}));
    assert!(c.next_for(&json!(10))["message"].as_str().unwrap().contains("no script"));
}

#[test]
fn a_project_skill_needs_a_human_and_is_denied_without_one() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    script(&server.root.join(".agents/skills/build/go.sh"), "#!/bin/sh\ntouch built\necho built\n");
    let mut agent = server.session(false);
    let (_, exit) =
        call(&mut agent, json!({"id": 1, "method": "skill_run", "skill": "build", "script": "go.sh"}));
    assert_eq!(
        (exit["code"].as_i64(), exit["denied"]["rule"].as_str()),
        (Some(126), Some("project-skill")),
        "{exit}"
    );
    assert!(!server.root.join("built").exists());

    let mut human = server.session(true);
    human.send(json!({"id": 1, "method": "skill_run", "skill": "build", "script": "go.sh"}));
    let ask = human.next_for(&json!(1));
    assert_eq!(ask["event"], "approval", "{ask}");
    human.send(json!({"id": 1, "method": "approve", "allow": true}));
    let exit = human.call_events(&json!(1)).pop().unwrap();
    assert_eq!(exit["code"], 0, "{exit}");
    assert!(server.root.join("built").exists());
}
