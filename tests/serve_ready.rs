//! The sandbox a server makes ahead of the next request (`supervisor::ready`): a call that finds
//! one runs in it — its own program, arguments and working directory, in a sandbox older than
//! its request — and one whose tree changed since is never given the stale view: a protected file
//! created or replaced in between is masked as if the call had built its sandbox on the spot. At
//! shutdown the prepared sandbox is killed and its cgroup removed.

mod serve_support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use serve_support::Server;

/// Long enough for the server to have prepared the next sandbox after a call (it takes a few
/// milliseconds; the machine may be loaded).
const SETTLE: Duration = Duration::from_millis(1500);

/// Prints how long before this line PID 1 of the call started (seconds), PID 1's name, the
/// working directory and the arguments.
const AGE: &str = r#"
import os, sys
stat = open("/proc/1/stat").read()
start = int(stat[stat.rindex(")") + 2:].split()[19]) / os.sysconf("SC_CLK_TCK")
up = float(open("/proc/uptime").read().split()[0])
print("AGE", round(up - start, 2))
print("PID1", open("/proc/1/cmdline").read().split("\0")[0])
print("CWD", os.getcwd())
print("ARGS", sys.argv[1:])
notes = next(p for p in ("notes.txt", "../notes.txt") if os.path.exists(p))
print("NOTES", open(notes).read().strip())
"#;

fn age(out: &str) -> f64 {
    let line = out.lines().find_map(|l| l.strip_prefix("AGE ")).unwrap_or_else(|| panic!("{out}"));
    line.parse().unwrap()
}

#[test]
fn a_call_after_a_pause_runs_its_own_program_in_the_sandbox_made_before_its_request() {
    let server = Server::start_prepared(&["--unattended-policy", "allow"], |root| {
        std::fs::create_dir(root.join("sub")).unwrap()
    });
    let mut c = server.session(false);
    let (_, exit) = c.call(json!({"id": "first", "method": "run", "argv": ["true"], "cwd": "sub"}));
    assert_eq!(exit["code"], 0, "{exit}");
    std::thread::sleep(SETTLE);

    let request =
        json!({"id": "second", "method": "run", "argv": ["python3", "-c", AGE, "a b", "c"], "cwd": "sub"});
    let (out, exit) = c.call(request);
    assert_eq!(exit["code"], 0, "{out}\n{exit}");
    assert!(age(&out) >= 1.0, "PID 1 started with the request, not before it:\n{out}");
    assert!(out.contains("PID1 hullward-pid1"), "{out}");
    assert!(out.contains(&format!("CWD {}", server.root.join("sub").display())), "{out}");
    assert!(out.contains("ARGS ['a b', 'c']"), "{out}");
    assert!(out.contains("NOTES hw-serve-notes"), "{out}");

    // The neighbour: a call straight after another finds no sandbox ready yet (or one made
    // just now) and builds its own; either way it runs, in a sandbox no older than a moment.
    let (out, exit) =
        c.call(json!({"id": "third", "method": "run", "argv": ["python3", "-c", AGE], "cwd": "sub"}));
    assert_eq!(exit["code"], 0, "{out}\n{exit}");
    assert!(out.contains("PID1 hullward-pid1"), "{out}");

    // A program that cannot be executed fails as it would in a sandbox built on the spot.
    std::fs::write(server.root.join("sub/plain.sh"), "echo never\n").unwrap();
    std::thread::sleep(SETTLE);
    let (out, exit) = c.call(json!({"id": "noexec", "method": "run", "argv": ["./plain.sh"], "cwd": "sub"}));
    assert_eq!(exit["code"], 126, "{out}\n{exit}");
    assert!(!out.contains("never"), "{out}");
}

/// A directory `tools` outside the server's root holding `info.txt` ("hw-old-tools"), and the
/// temporary directory that holds it.
fn tools_outside() -> (tempfile::TempDir, PathBuf) {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve");
    std::fs::create_dir_all(&base).unwrap();
    let outside = tempfile::tempdir_in(&base).unwrap();
    let tools = outside.path().canonicalize().unwrap().join("tools");
    std::fs::create_dir(&tools).unwrap();
    std::fs::write(tools.join("info.txt"), "hw-old-tools\n").unwrap();
    (outside, tools)
}

/// Renames `tools` away and makes a new one whose `info.txt` says `text`.
fn replace_tools(tools: &Path, text: &str) {
    std::fs::rename(tools, tools.with_file_name("tools.old")).unwrap();
    std::fs::create_dir(tools).unwrap();
    std::fs::write(tools.join("info.txt"), format!("{text}\n")).unwrap();
}

#[test]
fn a_directory_replaced_a_while_before_the_call_is_the_new_one() {
    // The server's plans remember what they saw of the host paths (`sandbox::seen`) while the
    // directories above are unchanged. Here the first call's plan remembers the inode of
    // `tools` that the sandbox made after it holds; `tools` is then replaced, and the next call
    // comes long enough after that the directory above is trusted again: its change time is
    // not the remembered one, and the memory must not answer.
    let (_outside, tools) = tools_outside();
    std::thread::sleep(Duration::from_millis(200));
    let server = Server::start(&["--unattended-policy", "allow", "--ro", tools.to_str().unwrap()]);
    let mut c = server.session(false);
    let info = tools.join("info.txt");
    let argv = json!(["cat", info.to_str().unwrap()]);
    let (out, exit) = c.call(json!({"id": "old", "method": "run", "argv": argv}));
    assert_eq!((out.as_str(), &exit["code"]), ("hw-old-tools\n", &json!(0)), "{exit}");
    std::thread::sleep(SETTLE);

    replace_tools(&tools, "hw-new-tools");
    std::thread::sleep(Duration::from_millis(200));
    let (out, exit) = c.call(json!({"id": "new", "method": "run", "argv": argv}));
    assert_eq!(exit["code"], 0, "{out}\n{exit}");
    assert_eq!(out, "hw-new-tools\n", "a remembered answer about the directory was stale");
}

/// Reverses the file's text, so that output masking (which would hide the file's value as it
/// is) cannot be what keeps it out of the output; the neighbour file is read the same way.
const REVERSED: &str = r#"
import sys
for name in sys.argv[1:]:
    try:
        print(name, open(name).read().strip()[::-1])
    except OSError as e:
        print(name, "ERR", e.errno)
"#;

#[test]
fn a_protected_file_created_or_replaced_after_the_sandbox_was_made_is_masked() {
    let server = Server::start_prepared(&["--unattended-policy", "allow"], |root| {
        std::fs::write(root.join(".env"), "HW-FIRST-SECRET\n").unwrap();
        std::fs::create_dir(root.join("sub")).unwrap();
    });
    let mut c = server.session(false);
    let read = |c: &mut serve_support::Conn, id: &str, files: &[&str]| {
        let mut argv = vec!["python3", "-c", REVERSED];
        argv.extend(files);
        let (out, exit) = c.call(json!({"id": id, "method": "run", "argv": argv}));
        assert_eq!(exit["code"], 0, "{out}\n{exit}");
        out
    };
    // The protected file `path`, changed as `how` after the next call's sandbox was made, is not
    // readable by that call; its neighbour is.
    let unreadable = |c: &mut serve_support::Conn, how: &str, path: &str, reversed: &str| {
        let out = read(c, how, &["notes.txt", path]);
        assert!(out.contains("notes.txt seton-evres-wh"), "{out}");
        assert!(
            !out.contains(reversed),
            "a protected file {how} after the sandbox was made was readable:\n{out}"
        );
    };
    unreadable(&mut c, "there before", ".env", "TERCES-TSRIF-WH");

    // Created after the next call's sandbox was made.
    std::thread::sleep(SETTLE);
    std::fs::write(server.root.join("sub/.env"), "HW-CREATED-SECRET\n").unwrap();
    unreadable(&mut c, "created", "sub/.env", "TERCES-DETAERC-WH");

    // Replaced (a new inode under the masked name) after the next call's sandbox was made.
    std::thread::sleep(SETTLE);
    std::fs::remove_file(server.root.join(".env")).unwrap();
    std::fs::write(server.root.join(".env"), "HW-REPLACED-SECRET\n").unwrap();
    unreadable(&mut c, "replaced", ".env", "TERCES-DECALPER-WH");

    // Unlinked and linked back (the very same inode under the same name: its mask in the
    // prepared sandbox was detached by the unlink) after the next call's sandbox was made.
    std::thread::sleep(SETTLE);
    let keep = server.root.parent().unwrap().join("kept-env");
    std::fs::hard_link(server.root.join(".env"), &keep).unwrap();
    std::fs::remove_file(server.root.join(".env")).unwrap();
    std::fs::hard_link(&keep, server.root.join(".env")).unwrap();
    unreadable(&mut c, "linked back", ".env", "TERCES-DECALPER-WH");

    // Renamed in from an unprotected name after the next call's sandbox was made.
    std::fs::write(server.root.join("sub/draft.txt"), "HW-RENAMED-SECRET\n").unwrap();
    let _ = read(&mut c, "settle", &["notes.txt"]);
    std::thread::sleep(SETTLE);
    std::fs::rename(server.root.join("sub/draft.txt"), server.root.join("sub/.env.local")).unwrap();
    unreadable(&mut c, "renamed in", "sub/.env.local", "TERCES-DEMANER-WH");
}

/// The server's children (every thread's), by pid.
fn children(server: &Server) -> Vec<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{}/task", server.child.id())).unwrap();
    let lists = tasks.flatten().filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok());
    lists.flat_map(|l| l.split_whitespace().map(|p| p.parse().unwrap()).collect::<Vec<u32>>()).collect()
}

/// Where the cgroup v2 hierarchy is mounted (`/sys/fs/cgroup`, or `/sys/fs/cgroup/unified` on a
/// hybrid host).
fn cgroup2_mount() -> PathBuf {
    let table = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let line = table.lines().find(|l| l.split(" - ").nth(1).is_some_and(|t| t.starts_with("cgroup2 ")));
    PathBuf::from(line.expect("a cgroup2 mount").split(' ').nth(4).unwrap())
}

#[test]
fn shutdown_kills_the_prepared_sandbox_and_removes_its_cgroup() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let mut c = server.session(false);
    let (_, exit) = c.call(json!({"id": "one", "method": "run", "argv": ["true"]}));
    assert_eq!(exit["code"], 0, "{exit}");
    std::thread::sleep(SETTLE);
    let ready: Vec<u32> = children(&server)
        .into_iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.starts_with(b"hullward-pid1\0"))
        })
        .collect();
    assert_eq!(ready.len(), 1, "one sandbox waits for the next call: {:?}", children(&server));
    let cgroup = std::fs::read_to_string(format!("/proc/{}/cgroup", ready[0])).unwrap();
    let v2 = cgroup.lines().find_map(|l| l.strip_prefix("0::")).expect("a cgroup v2 line");
    let dir = cgroup2_mount().join(v2.trim_start_matches('/'));
    assert!(dir.is_dir(), "{}", dir.display());
    assert!(dir.file_name().unwrap().to_string_lossy().starts_with("call-"), "{}", dir.display());

    let (code, _server) = server.stop();
    assert_eq!(code, 0);
    assert!(
        !PathBuf::from(format!("/proc/{}", ready[0])).exists(),
        "the prepared sandbox outlived the server"
    );
    assert!(!dir.exists(), "the prepared sandbox's cgroup {} was left behind", dir.display());
}

#[test]
fn a_directory_replaced_after_the_sandbox_was_made_is_the_new_one_in_the_next_call() {
    let (_outside, tools) = tools_outside();
    let server = Server::start(&["--unattended-policy", "allow", "--ro", tools.to_str().unwrap()]);
    let mut c = server.session(false);
    let info = tools.join("info.txt");
    let argv = json!(["cat", info.to_str().unwrap(), "notes.txt"]);
    let (out, exit) = c.call(json!({"id": "old", "method": "run", "argv": argv}));
    assert_eq!((out.as_str(), &exit["code"]), ("hw-old-tools\nhw-serve-notes\n", &json!(0)), "{exit}");
    std::thread::sleep(SETTLE);
    // Nothing changed: the call runs in the sandbox made ahead.
    let control = json!({"id": "control", "method": "run", "argv": ["python3", "-c", AGE]});
    let (out, exit) = c.call(control);
    assert_eq!(exit["code"], 0, "{out}\n{exit}");
    assert!(age(&out) >= 1.0, "{out}");
    std::thread::sleep(SETTLE);

    // The prepared view holds the directory it copied; a fresh one shows what is there now.
    replace_tools(&tools, "hw-new-tools");
    let (out, exit) = c.call(json!({"id": "new", "method": "run", "argv": argv}));
    assert_eq!(exit["code"], 0, "{out}\n{exit}");
    assert_eq!(
        out, "hw-new-tools\nhw-serve-notes\n",
        "the call saw the directory as it was when its sandbox was made"
    );
}
