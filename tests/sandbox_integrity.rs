//! Real-kernel battery, the workspace as a way back to the host: what a sandboxed program leaves
//! in the roots for later (a new `.env`, a fresh repository's hooks, a protected file swapped
//! behind a renamed parent) is quarantined and reported; what it plants to break later calls
//! (20,001 `.env.*` files, 19 MB of them, a tree deeper than the walk) does not stop the next
//! call and stays unreadable; the terminal never reaches it; hullward's own audit log is out of
//! its reach. Each attack sits next to the legitimate work it must not break.

#[path = "support/sandbox.rs"]
mod support;

use std::path::{Path, PathBuf};

use support::Sandbox;

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p);
            } else {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

fn quarantine(sb: &Sandbox) -> PathBuf {
    sb.base.join("hullward-home/quarantine")
}

/// The quarantined copies of `rel` (a path under the root).
fn quarantined(sb: &Sandbox, rel: &str) -> Vec<PathBuf> {
    let tail = sb.root.join(rel);
    let tail = tail.strip_prefix("/").unwrap();
    files_under(&quarantine(sb))
        .into_iter()
        .filter(|p| p.components().rev().zip(tail.components().rev()).all(|(a, b)| a == b))
        .collect()
}

fn audit(sb: &Sandbox) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(sb.base.join("hullward-home/audit.jsonl")).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

fn quarantine_records(sb: &Sandbox) -> Vec<serde_json::Value> {
    audit(sb).into_iter().filter(|r| r["kind"] == "quarantine").collect()
}

#[test]
fn a_new_env_file_is_quarantined_and_an_ordinary_file_stays() {
    let sb = Sandbox::new();
    sb.write("sub/keep.txt", "x\n");
    let out = sb.sh("echo PLANTED=1 > sub/.env; echo notes > sub/notes.txt");
    out.expect_code(0);
    assert!(!sb.exists("sub/.env"), "the planted .env is still in the root\n{out}");
    assert_eq!(sb.read("sub/notes.txt").as_deref(), Some("notes\n"));
    let copies = quarantined(&sb, "sub/.env");
    assert_eq!(copies.len(), 1, "{copies:?}\n{out}");
    assert_eq!(std::fs::read_to_string(&copies[0]).unwrap(), "PLANTED=1\n", "nothing is lost");
    assert!(out.stderr.contains("protected file 'sub/.env' was created during the call"), "{out}");
    assert!(out.stderr.contains("quarantined to"), "{out}");
    let records = quarantine_records(&sb);
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["path"], "sub/.env");
    assert_eq!(records[0]["change"], "created");
    // The JSON event says the same.
    let out = sb.sh_with(&["--json"], "echo B=2 > .env.local");
    let events: Vec<serde_json::Value> =
        out.stderr.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let change = events.iter().find(|e| e["event"] == "protected-change").expect("event");
    assert_eq!(change["path"], ".env.local");
    assert!(change["quarantined_to"].as_str().is_some_and(|p| p.contains("quarantine")), "{change}");
}

#[test]
fn a_denied_file_swapped_behind_a_renamed_parent_is_put_back() {
    let sb = Sandbox::new();
    sb.write("app/.env", "API_KEY=the-original-value-77\n");
    sb.write("app/main.py", "print(1)\n");
    let out = sb.sh("mv app app-old && mkdir app && echo API_KEY=attacker > app/.env && cat app-old/main.py");
    out.expect_code(0);
    assert_eq!(sb.read("app/.env").as_deref(), Some("API_KEY=the-original-value-77\n"), "{out}");
    assert!(!sb.exists("app-old/.env"), "the original left outside its place\n{out}");
    assert_eq!(sb.read("app-old/main.py").as_deref(), Some("print(1)\n"), "ordinary files stay where moved");
    let copies = quarantined(&sb, "app/.env");
    assert_eq!(std::fs::read_to_string(&copies[0]).unwrap(), "API_KEY=attacker\n");
    assert!(out.stderr.contains("the original was put back"), "{out}");

    // Moved away with nothing in its place: it is put back as well.
    let out = sb.sh("mv app moved && echo done");
    out.expect_code(0);
    assert_eq!(sb.read("app/.env").as_deref(), Some("API_KEY=the-original-value-77\n"), "{out}");
    assert!(out.stderr.contains("'app/.env' was moved away"), "{out}");
}

#[test]
fn a_repository_created_during_the_call_loses_its_hooks_and_config_but_keeps_working() {
    let sb = Sandbox::new();
    let out = sb.sh("git init -q sub && printf '#!/bin/sh\\necho HOOK-RAN\\n' > sub/.git/hooks/pre-commit \
         && chmod +x sub/.git/hooks/pre-commit && echo x > sub/file && echo INIT-DONE");
    out.expect_code(0);
    assert!(!sb.exists("sub/.git/hooks"), "{out}");
    assert!(!sb.exists("sub/.git/config"), "{out}");
    assert!(quarantined(&sb, "sub/.git/hooks/pre-commit").len() == 1, "{out}");
    // The repository still works on the host, and no planted hook runs.
    let host = sb.control(
        "cd sub && git add file && git -c user.name=a -c user.email=a@b commit -qm one && git log --oneline | wc -l",
    );
    host.expect_code(0);
    assert!(!host.all().contains("HOOK-RAN"), "{host}");
    assert_eq!(host.stdout.trim(), "1", "{host}");
}

/// Creates `n` files `dir/.env.N` from outside (as a clone or an unpacked archive would).
fn plant(dir: &Path, n: usize, content: &str) {
    std::fs::create_dir_all(dir).unwrap();
    for i in 0..n {
        std::fs::write(dir.join(format!(".env.{i}")), content).unwrap();
    }
}

#[test]
fn twenty_thousand_and_one_planted_env_files_do_not_stop_the_next_call() {
    let sb = Sandbox::new();
    sb.write("ok.txt", "still-readable\n");
    // Planted by a sandboxed program: quarantined after that call.
    // 20,001 creations take seconds on a loaded machine: a longer budget than the default call's.
    let out = sb.sh_with(&["--timeout", "25s"], "mkdir -p by-child && cd by-child && i=0; while [ $i -le 20000 ]; do : > .env.$i; i=$((i+1)); done; echo PLANTED");
    out.expect_code(0);
    assert!(!sb.exists("by-child/.env.0") && !sb.exists("by-child/.env.20000"), "planted files stayed");
    // Planted from outside (a clone): the next call runs, they stay unreadable.
    plant(&sb.root.join("planted"), 20_001, "K=v\n");
    let out = sb.sh_with(
        &["--timeout", "25s"],
        "cat ok.txt; cat planted/.env.7 && echo LEAKED; ls planted >/dev/null 2>&1 && echo LISTED; true",
    );
    out.expect_code(0);
    assert!(out.has_line("still-readable"), "{out}");
    assert!(!out.stdout.contains("LEAKED") && !out.stdout.contains("LISTED"), "{out}");
    assert!(out.stderr.contains("masked as a whole"), "the degraded walk says so\n{out}");
    assert!(sb.exists("planted/.env.7"), "files planted outside a call are not the call's to quarantine");
}

#[test]
fn nineteen_megabytes_of_planted_env_files_do_not_stop_the_next_call() {
    let sb = Sandbox::new();
    sb.write(".env", "API_KEY=real-secret-value-31\n");
    let line = "API_KEY=planted-0123456789abcdef0123456789\n";
    let content = line.repeat(240 * 1024 / line.len());
    plant(&sb.root.join("planted"), 80, &content);
    let out = sb.sh("echo API_KEY=real-secret-value-31; cat planted/.env.3 >/dev/null && echo LEAKED; head -c 40 planted/.env.5; echo RAN");
    out.expect_code(0);
    assert!(out.has_line("RAN"), "{out}");
    assert!(!out.stdout.contains("LEAKED") && !out.stdout.contains("planted-0123"), "{out}");
    assert!(!out.stdout.contains("real-secret-value-31"), "the real secret is still masked\n{out}");
}

#[test]
fn a_tree_deeper_than_the_walk_is_masked_and_the_next_call_runs() {
    let sb = Sandbox::new();
    sb.write("ok.txt", "still-readable\n");
    let mut deep = sb.root.join("deep");
    for _ in 0..140 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::write(deep.join(".env"), "K=deep-secret-value-1\n").unwrap();
    let rel = deep.strip_prefix(&sb.root).unwrap().display().to_string();
    let out = sb.sh(&format!("cat ok.txt; cat {rel}/.env; echo RAN"));
    out.expect_code(0);
    assert!(out.has_line("still-readable") && out.has_line("RAN"), "{out}");
    assert!(!out.stdout.contains("deep-secret"), "{out}");
    assert!(out.stderr.contains("deeper than"), "{out}");
    let control = sb.control(&format!("cat {rel}/.env"));
    assert!(
        control.stdout.contains("deep-secret"),
        "the control reads it: only the sandbox stops it\n{control}"
    );
}

#[test]
fn the_audit_log_inside_a_root_is_out_of_the_programs_reach() {
    let sb = Sandbox::new();
    let home = sb.root.join(".hw");
    let mut c = sb.run_cmd(
        &[],
        &[
            "sh",
            "-c",
            "echo '{\"forged\":1}' >> .hw/audit.jsonl; ls .hw && echo LISTED; echo work > work.txt; echo RAN",
        ],
    );
    c.env("HULLWARD_HOME", &home);
    let first = support::output(&mut c);
    first.expect_code(0);
    let out = support::output(&mut c);
    out.expect_code(0);
    assert!(out.has_line("RAN") && !out.stdout.contains("LISTED"), "{out}");
    assert_eq!(sb.read("work.txt").as_deref(), Some("work\n"));
    let log = std::fs::read_to_string(home.join("audit.jsonl")).unwrap();
    assert!(!log.lines().any(|l| l == "{\"forged\":1}"), "{log}");
    assert!(log.contains("\"kind\":\"call\""), "hullward still writes it\n{log}");
}

#[test]
fn security_key_ssh_private_keys_are_credential_files() {
    let sb = Sandbox::new();
    sb.write("keys/id_ed25519_sk", "HW-SK-KEY-ed25519\n");
    sb.write("keys/id_ecdsa_sk", "HW-SK-KEY-ecdsa\n");
    sb.write("keys/id_ed25519_sk.pub", "sk-ssh-ed25519 public\n");
    let out = sb.sh("cat keys/id_ed25519_sk keys/id_ecdsa_sk; cat keys/id_ed25519_sk.pub");
    assert!(!out.stdout.contains("HW-SK-KEY"), "{out}");
    assert!(out.stdout.contains("sk-ssh-ed25519 public"), "the public key stays readable\n{out}");
}

#[test]
fn coloured_git_log_does_not_show_a_protected_body() {
    let sb = Sandbox::new();
    // A body line of the protected file that reads like a header: in `--color-words` output it
    // has no `+`/`-`/space prefix, only its words' colour.
    sb.write(".env", "A=1\n");
    sb.write("src.txt", "shown-body-line\n");
    let setup = sb.control(
        "git init -q -b main . && git add -f .env src.txt && git -c user.name=a -c user.email=a@b commit -qm one \
         && printf 'A=1\\ndiff --git a/x b/x\\nPLAIN=history-only-body-7731\\n' > .env \
         && git add -f .env && git -c user.name=a -c user.email=a@b commit -qm two && echo PLAIN=now > .env",
    );
    setup.expect_code(0);
    for flags in ["--color=always", "--color=never", "--color-words", "--word-diff=color"] {
        let out = sb.sh(&format!("git -c core.pager=cat log -p {flags}"));
        out.expect_code(0);
        assert!(!out.stdout.contains("history-only-body-7731"), "{flags}\n{out}");
        assert!(out.stdout.contains("shown-body-line"), "{flags}: the ordinary file's diff is shown\n{out}");
        assert!(out.stdout.contains("content hidden"), "{flags}\n{out}");
    }
}

#[test]
fn a_terminal_on_stdin_never_reaches_the_child() {
    use nix::pty::openpty;
    use nix::sys::termios::{tcgetattr, LocalFlags};
    let sb = Sandbox::new();
    let pty = openpty(None, None).expect("openpty");
    let before = tcgetattr(&pty.slave).unwrap();
    assert!(before.local_flags.contains(LocalFlags::ECHO));
    let slave = std::fs::File::from(pty.slave);
    let mut c = sb.run_cmd(
        &["--hitl", "off"],
        &[
            "sh",
            "-c",
            "if [ -t 0 ]; then echo STDIN-IS-A-TTY; else echo STDIN-IS-A-PIPE; fi; \
             stty raw -echo <&0 2>/dev/null && echo STTY-WORKED; \
             echo WRITTEN-TO-FD0 >&0 2>/dev/null && echo FD0-WRITABLE; \
             (: </dev/tty) 2>/dev/null && echo DEV-TTY-OPENED; read line; echo GOT=$line",
        ],
    );
    c.stdin(slave);
    // A line typed on the terminal still reaches the program (through hullward's pipe).
    let mut master = std::fs::File::from(pty.master);
    std::io::Write::write_all(&mut master, b"typed-line\n").unwrap();
    let out = support::output(&mut c);
    out.expect_code(0);
    assert!(out.has_line("STDIN-IS-A-PIPE"), "{out}");
    for leak in ["STDIN-IS-A-TTY", "STTY-WORKED", "FD0-WRITABLE", "DEV-TTY-OPENED"] {
        assert!(!out.stdout.contains(leak), "{leak}\n{out}");
    }
    assert!(out.has_line("GOT=typed-line"), "{out}");
    let after = tcgetattr(&master).unwrap();
    assert_eq!(after.local_flags, before.local_flags, "the terminal's modes changed");
    // Nothing the child wrote reached the terminal (the echo of the typed line is all there is).
    nix::fcntl::fcntl(&master, nix::fcntl::FcntlArg::F_SETFL(nix::fcntl::OFlag::O_NONBLOCK)).unwrap();
    let mut seen = Vec::new();
    let _ = std::io::Read::read_to_end(&mut master, &mut seen);
    assert!(!String::from_utf8_lossy(&seen).contains("WRITTEN-TO-FD0"), "{}", String::from_utf8_lossy(&seen));
}

#[test]
fn filter_masks_exactly_what_run_masks() {
    let sb = Sandbox::new();
    sb.write("a/b/c/d/e/f/g/h/i/.env", "API_KEY=deep-filter-secret-1\n");
    sb.write("node_modules/pkg/.env", "API_KEY=node-modules-secret-2\n");
    let line = "deep-filter-secret-1 node-modules-secret-2 ordinary-text-3";
    let run = sb.sh(&format!("echo '{line}'"));
    run.expect_code(0);
    let mut c = sb.hullward();
    c.arg("filter").stdin(std::process::Stdio::piped());
    c.stdout(std::process::Stdio::piped()).stderr(std::process::Stdio::piped());
    let mut child = c.spawn().unwrap();
    let mut input = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut input, format!("{line}\n").as_bytes()).unwrap();
    drop(input);
    let filtered = support::finish(&mut child, std::time::Instant::now());
    filtered.expect_code(0);
    assert_eq!(filtered.stdout, run.stdout, "filter and run mask different sets\n{filtered}\n{run}");
    assert_eq!(run.stdout, "<secret-hidden> <secret-hidden> ordinary-text-3\n", "{run}");
}
