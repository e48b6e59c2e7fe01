//! Real-kernel battery, network: the child of `hullward run` (default `--net none`) reaches no
//! listener of the host — TCP, UDP, abstract and pathname Unix sockets — and cannot open raw or
//! packet sockets, while Unix sockets of its own keep working.
//!
//! The listeners run outside (python3, started by the test); the same client run without
//! hullward reaches every one of them, so a refusal inside is the sandbox's doing.

#[path = "support/sandbox.rs"]
mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::{Bg, Sandbox};

/// Listens on TCP and UDP loopback, an abstract socket and two pathname sockets; answers every
/// client with `HW-HOST-LISTENER`. Writes `TCP=port UDP=port` to argv[1] when ready.
const LISTENER: &str = r#"
import os, selectors, socket, sys
ready, abstract, paths = sys.argv[1], sys.argv[2], sys.argv[3:]
sel = selectors.DefaultSelector()
tcp = socket.socket(); tcp.bind(('127.0.0.1', 0)); tcp.listen(16)
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); udp.bind(('127.0.0.1', 0))
streams = [tcp]
a = socket.socket(socket.AF_UNIX); a.bind('\0' + abstract); a.listen(16); streams.append(a)
for p in paths:
    s = socket.socket(socket.AF_UNIX); s.bind(p); s.listen(16); streams.append(s)
for s in streams:
    sel.register(s, selectors.EVENT_READ, 'stream')
sel.register(udp, selectors.EVENT_READ, 'udp')
with open(ready + '.tmp', 'w') as f:
    f.write('TCP=%d\nUDP=%d\n' % (tcp.getsockname()[1], udp.getsockname()[1]))
os.rename(ready + '.tmp', ready)
while True:
    for key, _ in sel.select():
        if key.data == 'udp':
            data, peer = key.fileobj.recvfrom(100)
            key.fileobj.sendto(b'HW-HOST-LISTENER\n', peer)
        else:
            c, _ = key.fileobj.accept()
            c.sendall(b'HW-HOST-LISTENER\n')
            c.close()
"#;

/// Tries every listener; prints `NAME: OK <reply>` or `NAME: ERR <errno name>`.
const CLIENT: &str = r#"
import errno, socket, sys
tcp, udp, abstract, paths = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4:]
def attempt(name, fn):
    try:
        print(name + ': OK ' + fn().decode().strip())
    except OSError as e:
        print(name + ': ERR ' + errno.errorcode.get(e.errno, str(e.errno)))
    sys.stdout.flush()
def stream(family, addr):
    def go():
        s = socket.socket(family, socket.SOCK_STREAM); s.settimeout(2); s.connect(addr)
        return s.recv(100)
    return go
def dgram():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(2)
    s.sendto(b'hi', ('127.0.0.1', udp))
    return s.recv(100)
attempt('tcp', stream(socket.AF_INET, ('127.0.0.1', tcp)))
attempt('tcp6', stream(socket.AF_INET6, ('::1', tcp)))
attempt('udp', dgram)
attempt('abstract', stream(socket.AF_UNIX, '\0' + abstract))
for i, p in enumerate(paths):
    attempt('path%d' % i, stream(socket.AF_UNIX, p))
"#;

/// A Unix socket server and client of the child's own: in the workspace and abstract.
const OWN_SOCKETS: &str = r#"
import os, socket, threading
def serve(s):
    c, _ = s.accept(); c.sendall(b'HW-OWN-SOCKET'); c.close()
for name, addr in (('own-path', 'inner.sock'), ('own-abstract', '\0hw-own-abstract-' + str(os.getpid()))):
    s = socket.socket(socket.AF_UNIX); s.bind(addr); s.listen(1)
    t = threading.Thread(target=serve, args=(s,)); t.start()
    c = socket.socket(socket.AF_UNIX); c.connect(addr)
    print(name + ': OK ' + c.recv(100).decode()); t.join()
a, b = socket.socketpair(); a.sendall(b'HW-PAIR'); print('socketpair: OK ' + b.recv(10).decode())
"#;

struct Listeners {
    _proc: Bg,
    tcp: String,
    udp: String,
    abstract_name: String,
    paths: Vec<String>,
    run_sock: std::path::PathBuf,
}

impl Drop for Listeners {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.run_sock);
    }
}

fn listeners(sb: &Sandbox) -> Listeners {
    let abstract_name = support::token("abstract");
    let run_sock = Path::new("/run").join(format!("{}.sock", support::token("run")));
    let paths = vec![run_sock.display().to_string(), sb.outside.join("host.sock").display().to_string()];
    let ready = sb.base.join("listener.ready");
    let proc = Bg::spawn(
        Command::new("python3").arg("-c").arg(LISTENER).arg(&ready).arg(&abstract_name).args(&paths),
    );
    let info = support::wait_file(&ready, Duration::from_secs(5));
    let get = |k: &str| {
        info.lines().find_map(|l| l.strip_prefix(&format!("{k}="))).expect("listener port").trim().to_string()
    };
    Listeners { tcp: get("TCP"), udp: get("UDP"), abstract_name, paths, run_sock, _proc: proc }
}

fn client_args(l: &Listeners) -> Vec<String> {
    let mut a = vec!["python3".into(), "-c".into(), CLIENT.into(), l.tcp.clone(), l.udp.clone()];
    a.push(l.abstract_name.clone());
    a.extend(l.paths.iter().cloned());
    a
}

#[track_caller]
fn says(out: &support::Out, name: &str, prefix: &str) {
    let line = out
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no result for {name}\n{out}"));
    assert!(line.starts_with(prefix), "{name}: expected '{prefix}…', got '{line}'\n{out}");
}

#[test]
fn host_listeners_are_unreachable_while_own_unix_sockets_work() {
    let sb = Sandbox::new();
    let l = listeners(&sb);
    let args = client_args(&l);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();

    // Control: the same client, outside, reaches every listener.
    let control = support::output(Command::new(argv[0]).args(&argv[1..]));
    for name in ["tcp", "udp", "abstract", "path0", "path1"] {
        says(&control, name, "OK HW-HOST-LISTENER");
    }

    let out = sb.run(&[], &argv);
    out.expect_code(0);
    assert!(!out.stdout.contains("HW-HOST-LISTENER"), "a host listener answered\n{out}");
    // The child's loopback is its own (its network namespace): nothing listens on the host's
    // ports there. The host's Unix sockets are not in the view, and the abstract namespace
    // belongs to the child's own network namespace.
    says(&out, "tcp", "ERR ECONNREFUSED");
    says(&out, "tcp6", "ERR ECONNREFUSED");
    says(&out, "udp", "ERR");
    says(&out, "abstract", "ERR");
    says(&out, "path0", "ERR ENOENT");
    says(&out, "path1", "ERR ENOENT");

    let own = sb.run(&[], &["python3", "-c", OWN_SOCKETS]);
    own.expect_code(0);
    says(&own, "own-path", "OK HW-OWN-SOCKET");
    says(&own, "own-abstract", "OK HW-OWN-SOCKET");
    says(&own, "socketpair", "OK HW-PAIR");
}

#[test]
fn raw_packet_and_other_socket_families_are_refused() {
    let sb = Sandbox::new();
    sb.install_probe();
    // (tag, family, type, protocol, expected)
    let cases: &[(&str, i32, i32, i32, &str)] = &[
        ("raw-icmp", libc::AF_INET, libc::SOCK_RAW, libc::IPPROTO_ICMP, "ERR EPERM"),
        ("raw6", libc::AF_INET6, libc::SOCK_RAW, libc::IPPROTO_ICMPV6, "ERR EPERM"),
        ("ping-dgram", libc::AF_INET, libc::SOCK_DGRAM, libc::IPPROTO_ICMP, "ERR EPERM"),
        ("packet", libc::AF_PACKET, libc::SOCK_RAW, 0x0300, "ERR EPERM"),
        ("packet-dgram", libc::AF_PACKET, libc::SOCK_DGRAM, 0x0300, "ERR EPERM"),
        ("netlink-audit", libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_AUDIT, "ERR EPERM"),
        ("netlink-uevent", libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_KOBJECT_UEVENT, "ERR EPERM"),
        ("vsock", libc::AF_VSOCK, libc::SOCK_STREAM, 0, "ERR EPERM"),
        ("alg", libc::AF_ALG, libc::SOCK_SEQPACKET, 0, "ERR EPERM"),
        ("sctp", libc::AF_INET, libc::SOCK_STREAM, libc::IPPROTO_SCTP, "ERR EPERM"),
        ("udplite", libc::AF_INET6, libc::SOCK_DGRAM, libc::IPPROTO_UDPLITE, "ERR EPERM"),
        // The neighbours: Unix sockets, routing netlink inside the own namespace, and TCP and UDP
        // for the call's private loopback (flags in the type change nothing).
        ("tcp-flags", libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, "OK"),
        ("udp6", libc::AF_INET6, libc::SOCK_DGRAM, libc::IPPROTO_UDP, "OK"),
        ("unix-stream", libc::AF_UNIX, libc::SOCK_STREAM, 0, "OK"),
        ("unix-dgram", libc::AF_UNIX, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0, "OK"),
        ("netlink-route", libc::AF_NETLINK, libc::SOCK_RAW, libc::NETLINK_ROUTE, "OK"),
    ];
    let script: String = cases
        .iter()
        .map(|(tag, f, t, p, _)| format!("echo \"{tag}: $(./probe socket {f} {t} {p} 2>&1)\"; "))
        .collect();
    let out = sb.sh(&format!("{script} echo IFACES=$(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ')"));
    for (tag, _, _, _, expected) in cases {
        says(&out, tag, expected);
    }
    // Only loopback exists in the child's network namespace.
    assert_eq!(out.value("IFACES").as_deref(), Some("lo"), "{out}");
}

#[test]
fn net_host_gives_the_host_network() {
    let sb = Sandbox::new();
    let l = listeners(&sb);
    let args = client_args(&l);
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = sb.run(&["--net", "host"], &argv);
    out.expect_code(0);
    says(&out, "tcp", "OK HW-HOST-LISTENER");
    says(&out, "udp", "OK HW-HOST-LISTENER");
    // Still not reachable with --net host: the host's Unix sockets outside the view.
    says(&out, "path0", "ERR ENOENT");
    says(&out, "path1", "ERR ENOENT");
}
