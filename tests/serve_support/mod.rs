//! The running server the `serve_*` tests drive over its socket, and one connection's client.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

pub const PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
/// Generous: the machine may be loaded; nothing here measures speed.
pub const WAIT: Duration = Duration::from_secs(60);

/// A server with a root, a home and an audit log of its own.
pub struct Server {
    _dirs: (tempfile::TempDir, tempfile::TempDir),
    pub root: PathBuf,
    pub state: PathBuf,
    pub socket: PathBuf,
    pub child: Child,
}

impl Server {
    pub fn start(flags: &[&str]) -> Server {
        Server::start_prepared(flags, |_| {})
    }

    /// A server whose root `prepare` fills before the server starts.
    pub fn start_prepared(flags: &[&str], prepare: impl FnOnce(&Path)) -> Server {
        let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve");
        std::fs::create_dir_all(&base).unwrap();
        let work = tempfile::tempdir_in(&base).unwrap();
        let sockets = tempfile::Builder::new().prefix("hws-").tempdir().unwrap();
        let dir = work.path().canonicalize().unwrap();
        let (root, home, state) = (dir.join("ws"), dir.join("home"), dir.join("state"));
        for d in [&root, &home, &state] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::write(root.join("notes.txt"), "hw-serve-notes\n").unwrap();
        prepare(&root);
        let socket = sockets.path().join("s.sock");
        let child = Server::command(&root, &home, &state, &socket, flags).spawn().unwrap();
        let server = Server { _dirs: (work, sockets), root, state, socket, child };
        server.wait_ready();
        server
    }

    pub fn command(root: &Path, home: &Path, state: &Path, socket: &Path, flags: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_hullward"));
        c.env_clear()
            .env("PATH", PATH)
            .env("HOME", home)
            .env("HULLWARD_HOME", state)
            .env("LANG", "C.UTF-8")
            .current_dir(root)
            .stdin(Stdio::null())
            .arg("serve")
            .arg("--socket")
            .arg(socket)
            .arg("--root")
            .arg(root)
            .args(flags);
        c
    }

    pub fn wait_ready(&self) {
        let start = Instant::now();
        while UnixStream::connect(&self.socket).is_err() {
            assert!(start.elapsed() < WAIT, "the server never listened on {}", self.socket.display());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    pub fn connect(&self) -> Conn {
        Conn::open(&self.socket)
    }

    /// A connection that has said hello (`human` as given).
    pub fn session(&self, human: bool) -> Conn {
        let mut c = self.connect();
        c.send(json!({"id": "hello", "method": "hello", "human": human, "client": "test"}));
        assert_eq!(c.next_for(&json!("hello"))["event"], "hello");
        c
    }

    /// SIGTERM, then the exit status.
    pub fn stop(mut self) -> (i32, Server) {
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let start = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return (status.code().unwrap_or(-1), self);
            }
            assert!(start.elapsed() < WAIT, "the server did not stop after SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The audit records that end call `call` (kind `call`). The engine writes a call's record
    /// just after its exit event, so a client that has seen the exit event waits for it here
    /// (bounded) instead of racing it.
    pub fn call_ends(&self, call: &str) -> Vec<Value> {
        let start = Instant::now();
        loop {
            let ends: Vec<Value> =
                self.audit().into_iter().filter(|r| r["call_id"] == call && r["kind"] == "call").collect();
            if !ends.is_empty() || start.elapsed() > WAIT {
                return ends;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn audit(&self) -> Vec<Value> {
        std::fs::read_to_string(self.state.join("audit.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One connection: requests out, events in (a reader thread never lets the server block).
pub struct Conn {
    pub stream: UnixStream,
    events: std::sync::mpsc::Receiver<Value>,
    /// Events read but not yet asked for.
    held: Vec<Value>,
}

impl Conn {
    pub fn open(socket: &Path) -> Conn {
        let stream = UnixStream::connect(socket).unwrap();
        let reader = BufReader::new(stream.try_clone().unwrap());
        let (tx, events) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in reader.lines() {
                let Ok(line) = line else { return };
                let event: Value =
                    serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
                if tx.send(event).is_err() {
                    return;
                }
            }
        });
        Conn { stream, events, held: Vec::new() }
    }

    pub fn send(&mut self, request: Value) {
        self.send_raw(format!("{request}\n").as_bytes());
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// The next event with this id (events of other ids are kept).
    pub fn next_for(&mut self, id: &Value) -> Value {
        if let Some(i) = self.held.iter().position(|e| &e["id"] == id) {
            return self.held.remove(i);
        }
        loop {
            let event = self.events.recv_timeout(WAIT).unwrap_or_else(|_| panic!("no event for id {id}"));
            if &event["id"] == id {
                return event;
            }
            self.held.push(event);
        }
    }

    /// Every event of call `id` up to and including its exit event.
    pub fn call_events(&mut self, id: &Value) -> Vec<Value> {
        let mut all = Vec::new();
        loop {
            let event = self.next_for(id);
            let last = event["event"] == "exit";
            all.push(event);
            if last {
                return all;
            }
        }
    }

    /// Sends a call and returns (stdout, its exit event).
    pub fn call(&mut self, request: Value) -> (String, Value) {
        let id = request["id"].clone();
        self.send(request);
        let events = self.call_events(&id);
        (data(&events, "stdout"), events.last().unwrap().clone())
    }

    /// Nothing more arrives within `wait`.
    pub fn quiet_for(&mut self, wait: Duration) -> Option<Value> {
        self.held.pop().or_else(|| self.events.recv_timeout(wait).ok())
    }
}

pub fn data(events: &[Value], stream: &str) -> String {
    events.iter().filter(|e| e["event"] == stream).map(|e| e["data"].as_str().unwrap()).collect()
}

/// A config file for a server's policy (outside the root).
pub fn config(yaml: &str) -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir_in(Path::new(env!("CARGO_TARGET_TMPDIR"))).unwrap();
    let path = dir.path().join("config.yaml");
    std::fs::write(&path, yaml).unwrap();
    let text = path.to_str().unwrap().to_string();
    (dir, text)
}
