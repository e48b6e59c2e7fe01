//! `hullward serve`: a real server driven over its socket (INTERFACE.md, "The supervisor
//! protocol"). Every call here runs under the real kernel sandbox; each test starts its own
//! server on a socket of its own and stops it with SIGTERM.

mod serve_support;

use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};
use serve_support::{config, data, Conn, Server, PATH};

#[test]
fn the_socket_is_0600_a_stale_one_is_replaced_and_a_live_one_refused() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let mode = std::fs::metadata(&server.socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "socket mode {mode:o}");

    let home = server.root.parent().unwrap().join("home");
    let second = Server::command(&server.root, &home, &server.state, &server.socket, &[]).output().unwrap();
    assert_eq!(second.status.code(), Some(2), "{}", String::from_utf8_lossy(&second.stderr));
    assert!(String::from_utf8_lossy(&second.stderr).contains("another server answers"));

    let mut c = server.session(false);
    let (out, exit) = c.call(json!({"id": 1, "method": "run", "argv": ["cat", "notes.txt"]}));
    assert_eq!((out.as_str(), exit["code"].as_i64()), ("hw-serve-notes\n", Some(0)), "{exit}");
    drop(c);

    let (code, server) = server.stop();
    assert_eq!(code, 0);
    assert!(!server.socket.exists(), "the socket file outlived the server");

    // A socket file nobody answers on is replaced.
    let stale = std::os::unix::net::UnixListener::bind(&server.socket).unwrap();
    drop(stale);
    assert!(server.socket.exists());
    let mut server = server;
    server.child = Server::command(&server.root, &home, &server.state, &server.socket, &[]).spawn().unwrap();
    server.wait_ready();
    let mut c = server.session(false);
    c.send(json!({"id": 1, "method": "status"}));
    assert_eq!(c.next_for(&json!(1))["event"], "status");
}

#[test]
fn calls_stream_filtered_output_and_end_with_one_exit_event_and_one_audit_record() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    std::fs::write(server.root.join(".env"), "API_TOKEN=hw-serve-secret-4711\n").unwrap();
    let mut c = server.session(false);

    c.send(json!({"id": "a", "method": "shell_run", "command": "echo out; echo err >&2; grep -r hw-serve . 2>/dev/null; exit 3"}));
    let events = c.call_events(&json!("a"));
    let exits: Vec<_> = events.iter().filter(|e| e["event"] == "exit").collect();
    assert_eq!(exits.len(), 1);
    assert_eq!(exits[0]["code"], 3);
    assert_eq!(exits[0]["reason"], "exited");
    assert!(data(&events, "stdout").contains("out\n"));
    assert!(data(&events, "stdout").contains("hw-serve-notes"));
    assert!(!data(&events, "stdout").contains("hw-serve-secret-4711"), "the .env is masked in the view");
    assert_eq!(data(&events, "stderr"), "err\n");

    let (_, denied) = c.call(json!({"id": "b", "method": "shell_run", "command": "cat .env"}));
    assert_eq!(denied["code"], 126);
    assert_eq!(denied["reason"], "denied");
    assert_eq!(denied["denied"]["rule"], "env-file");

    let (out, exit) = c.call(json!({"id": "c", "method": "run", "argv": ["no-such-program-hw"]}));
    assert_eq!((out.as_str(), exit["code"].as_i64()), ("", Some(127)));

    for exit in [exits[0], &denied, &exit] {
        let call = exit["call"].as_str().unwrap();
        let ends = server.call_ends(call).len();
        assert_eq!(ends, 1, "audit records ending call {call}: {:?}", server.audit());
    }
}

#[test]
fn bad_requests_get_an_error_and_the_connection_goes_on() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let mut c = server.session(false);
    c.send_raw(b"{not json\n");
    assert!(c.next_for(&Value::Null)["message"].as_str().unwrap().contains("bad JSON"));
    c.send(json!({"id": 1, "method": "frobnicate"}));
    assert_eq!(c.next_for(&json!(1))["message"], "unknown method 'frobnicate'");
    c.send(json!({"id": 2, "method": "run"}));
    assert_eq!(c.next_for(&json!(2))["message"], "missing field 'argv'");
    c.send(json!({"method": "status"}));
    assert_eq!(c.next_for(&Value::Null)["message"], "missing field 'id'");
    c.send(json!({"id": 1, "method": "status"}));
    assert!(c.next_for(&json!(1))["message"].as_str().unwrap().contains("duplicate id"));
    let mut long = vec![b'x'; (1 << 20) + 100];
    long.push(b'\n');
    c.send_raw(&long);
    let e = c.next_for(&Value::Null);
    assert_eq!(e["event"], "error");
    assert!(e["message"].as_str().unwrap().contains("longer than"), "{e}");
    c.send(json!({"id": 3, "method": "approve", "allow": true}));
    assert!(c.next_for(&json!(3))["message"].as_str().unwrap().contains("waiting for approval"));

    let (out, exit) = c.call(json!({"id": 4, "method": "run", "argv": ["echo", "still here"]}));
    assert_eq!((out.as_str(), exit["code"].as_i64()), ("still here\n", Some(0)));
}

#[test]
fn unattended_mutating_calls_are_denied_unless_the_policy_allows_them() {
    let server = Server::start(&[]);
    let mut c = server.session(false);
    let (out, exit) = c.call(json!({"id": 1, "method": "run", "argv": ["touch", "made"]}));
    assert_eq!(out, "");
    assert_eq!(exit["code"], 126);
    assert_eq!(exit["denied"]["rule"], "unattended");
    assert!(!server.root.join("made").exists());
    // Checks are not mutating calls.
    c.send(json!({"id": 2, "method": "check_path", "op": "read", "path": "notes.txt"}));
    assert_eq!(c.next_for(&json!(2))["verdict"], "allow");
    c.send(json!({"id": 3, "method": "check_url", "url": "http://169.254.169.254/"}));
    let r = c.next_for(&json!(3));
    assert_eq!((r["event"].as_str(), r["verdict"].as_str()), (Some("result"), Some("deny")));
}

#[test]
fn a_human_connection_is_asked_and_only_it_may_answer() {
    let server = Server::start(&["--hitl", "on"]);
    let mut human = server.session(true);
    let mut other = server.session(true);
    human.send(json!({"id": 7, "method": "run", "argv": ["touch", "approved"]}));
    let ask = human.next_for(&json!(7));
    assert_eq!(ask["event"], "approval", "{ask}");
    assert!(ask["prompt"].as_str().unwrap().contains("touch approved"));

    other.send(json!({"id": 7, "method": "approve", "allow": true}));
    assert_eq!(other.next_for(&json!(7))["event"], "error", "a bystander cannot approve");
    assert!(!server.root.join("approved").exists());

    human.send(json!({"id": 7, "method": "approve", "allow": true}));
    let events = human.call_events(&json!(7));
    assert_eq!(events.last().unwrap()["code"], 0, "{events:?}");
    assert!(server.root.join("approved").exists());
    assert!(other.quiet_for(Duration::from_millis(300)).is_none(), "the other connection saw events");

    human.send(json!({"id": 8, "method": "run", "argv": ["touch", "refused"]}));
    assert_eq!(human.next_for(&json!(8))["event"], "approval");
    human.send(json!({"id": 8, "method": "approve", "allow": false}));
    let exit = human.call_events(&json!(8)).pop().unwrap();
    assert_eq!((exit["code"].as_i64(), exit["denied"]["rule"].as_str()), (Some(126), Some("approval")));
    assert!(!server.root.join("refused").exists());
}

#[test]
fn fifty_concurrent_calls_on_five_connections_are_neither_lost_nor_mixed() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let mut conns: Vec<Conn> = (0..5).map(|_| server.session(false)).collect();
    for (c, conn) in conns.iter_mut().enumerate() {
        for i in 0..10 {
            let token = format!("tok-{c}-{i}");
            let script = format!("for n in 1 2 3; do echo {token}; sleep 0.0$n; done");
            conn.send(json!({"id": i, "method": "shell_run", "command": script}));
        }
    }
    for (c, conn) in conns.iter_mut().enumerate() {
        for i in 0..10 {
            let events = conn.call_events(&json!(i));
            let token = format!("tok-{c}-{i}\n");
            assert_eq!(data(&events, "stdout"), token.repeat(3), "call {c}/{i}: {events:?}");
            assert_eq!(events.iter().filter(|e| e["event"] == "exit").count(), 1);
            assert_eq!(events.last().unwrap()["code"], 0);
        }
        assert!(conn.quiet_for(Duration::from_millis(100)).is_none());
    }
}

#[test]
fn cancel_kills_the_tree_and_a_timeout_ends_the_call() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let mut c = server.session(false);
    let marker = format!("hw-cancel-{}", std::process::id());
    c.send(json!({"id": "long", "method": "shell_run", "command": format!("echo started; (sleep 317; echo {marker}) & sleep 317")}));
    assert_eq!(c.next_for(&json!("long"))["event"], "start");
    let first = c.next_for(&json!("long"));
    assert_eq!(first["data"], "started\n", "{first}");
    c.send(json!({"id": "st", "method": "status"}));
    let status = c.next_for(&json!("st"));
    assert_eq!(status["calls"].as_array().unwrap().len(), 1, "{status}");
    c.send(json!({"id": "x", "method": "cancel", "target_id": "long"}));
    let exit = c.call_events(&json!("long")).pop().unwrap();
    assert_eq!((exit["code"].as_i64(), exit["reason"].as_str()), (Some(130), Some("cancelled")), "{exit}");
    assert_eq!(c.next_for(&json!("x"))["event"], "result");
    // A duration no other test (nor anything else on the machine, usually) sleeps for.
    let left = Command::new("pgrep").arg("-x").arg("-f").arg("sleep 317").output().unwrap();
    assert!(left.stdout.is_empty(), "processes left: {}", String::from_utf8_lossy(&left.stdout));

    c.send(json!({"id": "y", "method": "cancel", "target_id": "long"}));
    assert_eq!(c.next_for(&json!("y"))["event"], "error", "a call that ended cannot be cancelled");

    let (_, exit) = c.call(json!({"id": "t", "method": "run", "argv": ["sleep", "300"], "timeout": "1s"}));
    assert_eq!((exit["code"].as_i64(), exit["reason"].as_str()), (Some(124), Some("timeout")), "{exit}");
}

#[test]
fn sigterm_lets_a_running_call_finish_and_removes_the_socket() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let mut c = server.session(false);
    c.send(json!({"id": 1, "method": "shell_run", "command": "echo begun; sleep 1; echo done"}));
    assert_eq!(c.next_for(&json!(1))["event"], "start");
    assert_eq!(c.next_for(&json!(1))["data"], "begun\n");
    let (code, server) = server.stop();
    let events = c.call_events(&json!(1));
    assert_eq!(data(&events, "stdout"), "done\n");
    assert_eq!(events.last().unwrap()["code"], 0);
    assert_eq!(code, 0);
    assert!(!server.socket.exists());
}

#[test]
fn run_and_sh_connect_send_the_call_to_the_server() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let client = |args: &[&str], env_socket: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hullward"));
        c.env_clear().env("PATH", PATH).current_dir(&server.root).stdin(Stdio::null());
        if env_socket {
            c.env("HULLWARD_SOCKET", &server.socket);
        }
        c.args(args).output().unwrap()
    };
    let socket = server.socket.to_str().unwrap();
    let out = client(&["run", "--connect", socket, "--", "cat", "notes.txt"], false);
    assert_eq!((out.status.code(), out.stdout.as_slice()), (Some(0), b"hw-serve-notes\n".as_slice()));
    let out = client(&["sh", "--", "echo to-stderr >&2; exit 7"], true);
    assert_eq!(out.status.code(), Some(7));
    assert_eq!(String::from_utf8_lossy(&out.stderr), "to-stderr\n");
    let out = client(&["sh", "--", "cat .env"], true);
    assert_eq!(out.status.code(), Some(126));
    assert!(String::from_utf8_lossy(&out.stderr).contains("[DENIED]"));
}

#[test]
fn an_unanswered_approval_times_out_as_a_refusal() {
    let (_dir, cfg) = config("Sandbox:\n  ApprovalTimeout: 1s\n");
    let server = Server::start(&["--hitl", "on", "--config", &cfg]);
    let mut c = server.session(true);
    c.send(json!({"id": 1, "method": "shell_run", "command": "touch late"}));
    assert_eq!(c.next_for(&json!(1))["event"], "approval");
    let exit = c.call_events(&json!(1)).pop().unwrap();
    assert_eq!(
        (exit["code"].as_i64(), exit["denied"]["rule"].as_str()),
        (Some(126), Some("approval")),
        "{exit}"
    );
    assert!(exit["denied"]["message"].as_str().unwrap().contains("within 1s"), "{exit}");
    c.send(json!({"id": 1, "method": "approve", "allow": true}));
    assert_eq!(c.next_for(&json!(1))["event"], "error", "too late: nothing waits");
    assert!(!server.root.join("late").exists());
}

#[test]
fn sigterm_stops_a_call_that_outlives_the_grace_and_it_still_gets_its_exit_event() {
    let (_dir, cfg) = config("Sandbox:\n  ShutdownGrace: 1s\n");
    let server = Server::start(&["--unattended-policy", "allow", "--config", &cfg]);
    let mut c = server.session(false);
    c.send(json!({"id": 1, "method": "run", "argv": ["sleep", "300"]}));
    assert_eq!(c.next_for(&json!(1))["event"], "start");
    let (code, server) = server.stop();
    let exit = c.call_events(&json!(1)).pop().unwrap();
    assert_eq!((exit["code"].as_i64(), exit["reason"].as_str()), (Some(143), Some("signal")), "{exit}");
    assert_eq!(code, 0);
    let call = exit["call"].as_str().unwrap();
    assert_eq!(server.call_ends(call).len(), 1);
    assert!(!server.socket.exists());
}

#[test]
fn a_call_cancelled_while_it_waits_for_approval_ends_as_cancelled_and_status_shows_it_waiting() {
    let server = Server::start(&["--hitl", "on"]);
    let mut c = server.session(true);
    c.send(json!({"id": "w", "method": "run", "argv": ["touch", "never"]}));
    assert_eq!(c.next_for(&json!("w"))["event"], "approval");
    c.send(json!({"id": "st", "method": "status"}));
    let status = c.next_for(&json!("st"));
    assert_eq!(status["calls"][0]["id"], "w", "{status}");
    assert_eq!(status["calls"][0]["waiting_approval"], true, "{status}");
    assert!(status["uptime_s"].is_u64(), "{status}");
    let mut other = server.session(true);
    other.send(json!({"id": "st", "method": "status"}));
    assert_eq!(other.next_for(&json!("st"))["calls"], json!([]), "another connection's calls are not shown");

    c.send(json!({"id": "x", "method": "cancel", "target_id": "w"}));
    let exit = c.call_events(&json!("w")).pop().unwrap();
    assert_eq!((exit["code"].as_i64(), exit["reason"].as_str()), (Some(130), Some("cancelled")), "{exit}");
    assert_eq!(exit["denied"], Value::Null);
    assert!(!server.root.join("never").exists());
    let call = exit["call"].as_str().unwrap();
    let ends = server.call_ends(call);
    assert_eq!(ends.len(), 1, "{ends:?}");
    assert_eq!(ends[0]["exit_status"], 130, "{ends:?}");
}

#[test]
fn a_client_that_reads_late_loses_nothing() {
    use std::io::{BufRead, BufReader, Write};
    let server = Server::start(&["--unattended-policy", "allow"]);
    let total = 4_000_000;
    let mut stream = std::os::unix::net::UnixStream::connect(&server.socket).unwrap();
    let command = format!("head -c {total} /dev/zero | tr '\\0' a; echo; echo tail-line");
    writeln!(stream, "{}", json!({"id": 1, "method": "shell_run", "command": command})).unwrap();
    // Nothing is read for a while: the socket and the server's bounded queues fill up and the
    // call's output is held back, not dropped.
    std::thread::sleep(Duration::from_millis(1500));
    let (mut out, mut exits, mut code) = (String::new(), 0, None);
    for line in BufReader::new(stream).lines() {
        let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
        match event["event"].as_str() {
            Some("stdout") => out.push_str(event["data"].as_str().unwrap()),
            Some("exit") => {
                exits += 1;
                code = event["code"].as_i64();
                break;
            }
            _ => {}
        }
    }
    assert_eq!(out.len(), total + 11, "bytes lost or added");
    assert!(out.bytes().take(total).all(|b| b == b'a') && out.ends_with("\ntail-line\n"));
    assert_eq!((exits, code), (1, Some(0)));
}

#[test]
fn a_socket_passed_by_systemd_is_served_and_left_to_systemd() {
    let work = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let sockets = tempfile::Builder::new().prefix("hws-").tempdir().unwrap();
    let dir = work.path().canonicalize().unwrap();
    let (root, home, state) = (dir.join("ws"), dir.join("home"), dir.join("state"));
    for d in [&root, &home, &state] {
        std::fs::create_dir_all(d).unwrap();
    }
    std::fs::write(root.join("notes.txt"), "hw-activated\n").unwrap();
    let (passed, unused) = (sockets.path().join("passed.sock"), sockets.path().join("unused.sock"));
    let listener = std::os::unix::net::UnixListener::bind(&passed).unwrap();
    // As systemd does: the listening socket as fd 3, LISTEN_FDS=1, LISTEN_PID the server's pid
    // (the shell's, which `exec`s the server).
    let mut child = Command::new("/bin/sh")
        .arg("-c")
        .arg("export LISTEN_PID=$$ LISTEN_FDS=1; exec \"$0\" \"$@\" 3<&0 0</dev/null")
        .arg(env!("CARGO_BIN_EXE_hullward"))
        .args(["serve", "--socket", unused.to_str().unwrap(), "--root", root.to_str().unwrap()])
        .args(["--unattended-policy", "allow"])
        .env_clear()
        .env("PATH", PATH)
        .env("HOME", &home)
        .env("HULLWARD_HOME", &state)
        .current_dir(&root)
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(listener)))
        .spawn()
        .unwrap();
    let mut c = Conn::open(&passed);
    c.send(json!({"id": 0, "method": "hello", "human": false}));
    assert_eq!(c.next_for(&json!(0))["event"], "hello");
    let (out, exit) = c.call(json!({"id": 1, "method": "run", "argv": ["cat", "notes.txt"]}));
    assert_eq!((out.as_str(), exit["code"].as_i64()), ("hw-activated\n", Some(0)), "{exit}");
    assert!(!unused.exists(), "the server bound a socket of its own instead of the passed one");

    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    assert_eq!(child.wait().unwrap().code(), Some(0));
    assert!(passed.exists(), "the passed socket belongs to systemd and stays");
}

#[test]
fn a_protected_file_created_between_two_calls_is_never_readable_by_the_second() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let mut c = server.session(false);
    let read_all = "cat .e* sub/.e* 2>&1; grep -rh hw-late . 2>/dev/null; true";
    let (out, exit) = c.call(json!({"id": 1, "method": "shell_run", "command": read_all}));
    assert_eq!(exit["code"], 0, "{exit}");
    assert!(!out.contains("hw-late"), "{out}");
    std::fs::create_dir_all(server.root.join("sub")).unwrap();
    std::fs::write(server.root.join(".env"), "API_TOKEN=hw-late-secret-1\n").unwrap();
    std::fs::write(server.root.join("sub/.env.local"), "DB_PASSWORD=hw-late-secret-2\n").unwrap();
    let (out, exit) = c.call(json!({"id": 2, "method": "shell_run", "command": read_all}));
    assert_eq!(exit["code"], 0, "{exit}");
    assert!(!out.contains("hw-late-secret"), "the second call read a .env created after the first: {out}");
    let r = {
        c.send(json!({"id": 3, "method": "read_file", "path": "sub/.env.local"}));
        c.next_for(&json!(3))
    };
    assert_eq!(r["denied"]["rule"], "env-file", "{r}");
}

/// The server keeps the values of the protected files it read, and takes them only while a file
/// is unchanged: a `.env` rewritten in place between calls — same size, modification time put
/// back — has its new value masked in the next call's output (the old one stays shown).
#[test]
fn a_protected_file_rewritten_between_calls_has_its_new_value_masked() {
    let server = Server::start_prepared(&["--unattended-policy", "allow"], |root| {
        std::fs::write(root.join(".env"), "API_TOKEN=hw-kept-value-1\n").unwrap();
        std::fs::write(root.join("log.txt"), "old hw-kept-value-1 new hw-kept-value-2\n").unwrap();
    });
    let mut c = server.session(false);
    std::thread::sleep(std::time::Duration::from_millis(30));
    for id in 1..=3 {
        let (out, exit) = c.call(json!({"id": id, "method": "run", "argv": ["cat", "log.txt"]}));
        assert_eq!(exit["code"], 0, "{exit}");
        assert_eq!(out, "old <secret-hidden> new hw-kept-value-2\n", "call {id}");
    }
    let env = server.root.join(".env");
    let modified = std::fs::metadata(&env).unwrap().modified().unwrap();
    std::fs::write(&env, "API_TOKEN=hw-kept-value-2\n").unwrap();
    std::fs::File::options().write(true).open(&env).unwrap().set_modified(modified).unwrap();
    let (out, exit) = c.call(json!({"id": 4, "method": "run", "argv": ["cat", "log.txt"]}));
    assert_eq!(exit["code"], 0, "{exit}");
    assert_eq!(out, "old hw-kept-value-1 new <secret-hidden>\n", "the rewritten value was not masked");
}

#[test]
fn a_server_killed_with_sigkill_leaves_no_call_running_and_the_next_one_starts() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let mut c = server.session(false);
    let marker = format!("{}", 3000 + std::process::id() % 5000);
    c.send(json!({"id": 1, "method": "shell_run", "command": format!("echo up; sleep 4{marker} & sleep 5{marker}")}));
    assert_eq!(c.next_for(&json!(1))["event"], "start");
    assert_eq!(c.next_for(&json!(1))["data"], "up\n");
    let _ = Command::new("kill").arg("-KILL").arg(server.child.id().to_string()).status();
    let mut server = server;
    server.child.wait().unwrap();
    let pattern = format!("sleep [45]{marker}");
    let start = std::time::Instant::now();
    loop {
        let left = Command::new("pgrep").arg("-f").arg(&pattern).output().unwrap();
        if left.stdout.is_empty() {
            break;
        }
        assert!(start.elapsed() < serve_support::WAIT, "calls outlived the server: {:?}", left.stdout);
        std::thread::sleep(Duration::from_millis(50));
    }
    let home = server.root.parent().unwrap().join("home");
    server.child = Server::command(
        &server.root,
        &home,
        &server.state,
        &server.socket,
        &["--unattended-policy", "allow"],
    )
    .spawn()
    .unwrap();
    server.wait_ready();
    let mut c = server.session(false);
    let (out, exit) = c.call(json!({"id": 1, "method": "run", "argv": ["cat", "notes.txt"]}));
    assert_eq!((out.as_str(), exit["code"].as_i64()), ("hw-serve-notes\n", Some(0)), "{exit}");
}
