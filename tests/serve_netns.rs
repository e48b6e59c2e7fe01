//! A served call's namespaces: its network namespace is made ahead (a server thread keeps the
//! next one ready) and must still be the call's own — never the host's, never another call's —
//! with its loopback up and private to it; its mount and network namespaces are held until the
//! call has answered, then let go.

mod serve_support;

use serde_json::json;
use serve_support::Server;

/// Listens on 127.0.0.1:PORT, says so, and answers one connection (or times out after 60 s).
const LISTEN: &str = r#"
import socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(1)
print("LISTENING", flush=True)
s.settimeout(60)
try:
    c, _ = s.accept(); c.sendall(b"HW-OTHER-CALL\n")
except OSError:
    pass
"#;

/// Connects to 127.0.0.1:PORT (another call's listener), then serves and reaches a listener of
/// its own, and prints its network namespace.
const CONNECT: &str = r#"
import os, socket, sys
try:
    c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
    print("OTHER:", c.recv(100).decode().strip())
except OSError as e:
    print("OTHER: ERR", type(e).__name__)
own = socket.socket(); own.bind(("127.0.0.1", 0)); own.listen(1)
c = socket.create_connection(own.getsockname(), timeout=5); a, _ = own.accept(); a.sendall(b"HW-OWN\n")
print("OWN:", c.recv(100).decode().strip())
print("NS:", os.readlink("/proc/self/ns/net"))
"#;

#[test]
fn concurrent_served_calls_each_have_a_loopback_of_their_own() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let mut a = server.session(false);
    let mut b = server.session(false);
    let port = (std::process::id() % 20000 + 30000).to_string();

    a.send(json!({"id": "listen", "method": "run", "argv": ["python3", "-c", LISTEN, port]}));
    assert_eq!(a.next_for(&json!("listen"))["event"], "start");
    let ready = a.next_for(&json!("listen"));
    assert_eq!(ready["data"], "LISTENING\n", "{ready}");

    let mut seen = Vec::new();
    for i in 0..3 {
        let (out, exit) =
            b.call(json!({"id": format!("c{i}"), "method": "run", "argv": ["python3", "-c", CONNECT, port]}));
        assert_eq!(exit["code"], 0, "{out}\n{exit}");
        // The listener of the call still running is in another namespace: refused here, while
        // this call's own loopback works.
        assert!(out.contains("OTHER: ERR ConnectionRefusedError"), "{out}");
        assert!(out.contains("OWN: HW-OWN"), "{out}");
        let ns = out.lines().find_map(|l| l.strip_prefix("NS: ")).unwrap().to_string();
        seen.push(ns);
    }
    let host = std::fs::read_link("/proc/self/ns/net").unwrap().to_string_lossy().into_owned();
    assert!(!seen.contains(&host), "a call ran in the host's network namespace: {seen:?}");

    // The control: the listener was really there, reachable from inside its own call.
    a.send(json!({"id": "x", "method": "cancel", "target_id": "listen"}));
    let exit = a.call_events(&json!("listen")).pop().unwrap();
    assert_eq!(exit["reason"], "cancelled", "{exit}");
    let both = format!(
        "python3 -c '{LISTEN}' {port} > /tmp/l & until grep -q LISTENING /tmp/l; do sleep 0.05; done; \
         python3 -c '{CONNECT}' {port}; wait"
    );
    let (out, exit) = b.call(json!({"id": "self", "method": "run", "argv": ["/bin/sh", "-c", both]}));
    assert_eq!(exit["code"], 0, "{out}\n{exit}");
    assert!(out.contains("OTHER: HW-OTHER-CALL"), "{out}");
}

/// The server's descriptors that name a namespace (`mnt:[…]`, `net:[…]`).
fn namespace_fds(server: &Server) -> Vec<String> {
    let dir = format!("/proc/{}/fd", server.child.id());
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| std::fs::read_link(e.unwrap().path()).ok())
        .map(|l| l.to_string_lossy().into_owned())
        .filter(|l| l.starts_with("mnt:[") || l.starts_with("net:["))
        .collect()
}

/// The mount namespaces of the server's children that wait as a prepared sandbox's init.
fn prepared_mount_namespaces(server: &Server) -> Vec<String> {
    let tasks = std::fs::read_dir(format!("/proc/{}/task", server.child.id())).unwrap();
    let children = tasks.flatten().filter_map(|t| std::fs::read_to_string(t.path().join("children")).ok());
    let pids: Vec<String> =
        children.flat_map(|l| l.split_whitespace().map(String::from).collect::<Vec<_>>()).collect();
    pids.iter()
        .filter(|p| {
            std::fs::read(format!("/proc/{p}/cmdline")).is_ok_and(|c| c.starts_with(b"hullward-pid1\0"))
        })
        .filter_map(|p| std::fs::read_link(format!("/proc/{p}/ns/mnt")).ok())
        .map(|l| l.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn a_served_calls_namespaces_are_let_go_once_it_has_answered() {
    let server = Server::start(&["--unattended-policy", "allow"]);
    let mut c = server.session(false);
    // While a call runs, the server holds its view's mount namespace and its network namespace
    // (and one network namespace made ahead for the next call)…
    let argv = ["/bin/sh", "-c", "echo up $(readlink /proc/self/ns/net); sleep 30"];
    c.send(json!({"id": "long", "method": "run", "argv": argv}));
    assert_eq!(c.next_for(&json!("long"))["event"], "start");
    let data = c.next_for(&json!("long"))["data"].as_str().unwrap().to_string();
    let own_net = data.strip_prefix("up ").unwrap().trim().to_string();
    assert!(own_net.starts_with("net:["), "{data}");
    let running = namespace_fds(&server);
    assert_eq!(running.iter().filter(|l| l.starts_with("mnt:[")).count(), 1, "{running:?}");
    assert!(running.contains(&own_net), "the call's {own_net} is not held: {running:?}");
    c.send(json!({"id": "x", "method": "cancel", "target_id": "long"}));
    let exit = c.call_events(&json!("long")).pop().unwrap();
    assert_eq!(exit["reason"], "cancelled", "{exit}");
    for i in 0..3 {
        let (_, exit) = c.call(json!({"id": format!("t{i}"), "method": "run", "argv": ["/bin/true"]}));
        assert_eq!(exit["code"], 0, "{exit}");
        server.call_ends(exit["call"].as_str().unwrap());
    }
    // …and once the calls have ended, none but those of the sandbox made ahead for the next call
    // (`supervisor::ready`) and the next network namespace: nothing accumulates. (A namespace's
    // number is handed to the next one made once it is gone, so only counts tell.)
    let start = std::time::Instant::now();
    loop {
        let left = namespace_fds(&server);
        let prepared = prepared_mount_namespaces(&server);
        let views_let_go = left.iter().filter(|l| l.starts_with("mnt:[")).all(|l| prepared.contains(l));
        let nets = left.iter().filter(|l| l.starts_with("net:[")).count();
        if views_let_go && nets <= 2 {
            break;
        }
        assert!(
            start.elapsed() < serve_support::WAIT,
            "namespaces still held: {left:?} (prepared: {prepared:?})"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}
