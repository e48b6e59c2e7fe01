//! A network lab for tests that send real traffic without it ever leaving the machine.
//!
//! Three network namespaces per lab, unique per test and removed on drop (also when the test
//! panics); stale ones of dead test processes are swept when a lab is built:
//!
//! ```text
//!  child (lo only)          host  192.0.2.1/24 ── veth ── 192.0.2.2/24  inet
//!  the sandboxed client;    where the supervisor      the "internet": HTTP, HTTPS and DNS
//!  the proxy listener is    (here: the proxy) makes   servers (lab_servers.py) on documentation
//!  bound here               its outbound connections  and private addresses, see the consts
//! ```
//!
//! Name resolution uses the real system path: the lab writes `/etc/netns/<host>/hosts` and
//! `resolv.conf` (nameserver: the lab's DNS server), which `ip netns exec <host> …` bind-mounts
//! over `/etc/…`, and which [`Lab::spawn_in`] bind-mounts the same way for a thread in a
//! private mount namespace — so `getaddrinfo` inside the lab sees lab names and nothing else.
//! The HTTPS servers use a throwaway CA made with `openssl` at build time ([`Lab::ca_cert`]).
//!
//! Reuse: [`Lab::command`] runs a program in a namespace (e.g. `hullward run` in `Ns::Host`, or a
//! client in `Ns::Child`), [`Lab::bind_in`] binds a listener inside a namespace (as the
//! supervisor does for the child), [`Lab::spawn_in`] runs code on a thread that entered one, and
//! [`Lab::log`] shows every request and DNS query that reached the lab's internet.
//!
//! Building a lab needs root, iproute2, openssl and python3. It fails loudly when it cannot:
//! these tests never skip.

// Each test binary that includes this module uses a different part of it.
#![allow(dead_code)]

use std::fs;
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use nix::mount::{mount, MsFlags};
use nix::sched::{setns, unshare, CloneFlags};

/// An allow-listable public host: HTTP on 80 and 8080, HTTPS on 443.
pub const REGISTRY: &str = "registry.example";
pub const REGISTRY_IP: &str = "198.51.100.10";
/// A second public host, for `*.cdn.example`: HTTP on 80, HTTPS on 443.
pub const CDN: &str = "api.cdn.example";
pub const CDN_IP: &str = "198.51.100.11";
/// A public host that policies leave out: HTTP on 80, HTTPS on 443.
pub const EVIL: &str = "evil.example";
pub const EVIL_IP: &str = "203.0.113.20";
/// A server on a private address: HTTP on 80.
pub const INTERNAL: &str = "internal.example";
pub const INTERNAL_IP: &str = "10.66.0.5";
/// Resolves to both `REGISTRY_IP` and `INTERNAL_IP` (`/etc/hosts`).
pub const MIXED: &str = "mixed.example";
/// Resolves to `::ffff:10.66.0.5` (`/etc/hosts`).
pub const MAPPED: &str = "mapped.example";
/// Known only to the lab's DNS server, which answers its A queries alternately with
/// `REGISTRY_IP` and `INTERNAL_IP`, starting with `REGISTRY_IP`.
pub const REBIND: &str = "rebind.example";
/// The lab's DNS server (UDP 53).
pub const DNS_IP: &str = "198.51.100.53";
/// Size of the file served at `/big`.
pub const BIG_BYTES: u64 = 100 << 20;

const HOST_ADDR: &str = "192.0.2.1";
const INET_ADDR: &str = "192.0.2.2";

static SEQUENCE: AtomicU32 = AtomicU32::new(0);

/// The lab's namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ns {
    /// Only `lo`: the sandboxed child's view.
    Child,
    /// Routed to `Inet`; resolves lab names.
    Host,
    /// The servers.
    Inet,
}

/// A running lab; dropping it stops the servers and removes the namespaces.
pub struct Lab {
    prefix: String,
    dir: tempfile::TempDir,
    made: Vec<String>,
    servers: Option<Child>,
}

impl Lab {
    /// Builds the namespaces, the certificates and the servers.
    pub fn new() -> Lab {
        sweep_stale();
        let prefix = format!("hwlab-{}-{}", std::process::id(), SEQUENCE.fetch_add(1, Ordering::Relaxed));
        let dir = tempfile::tempdir().expect("network lab: cannot make a temporary directory");
        let mut lab = Lab { prefix, dir, made: Vec::new(), servers: None };
        for ns in [Ns::Child, Ns::Host, Ns::Inet] {
            run("ip", &["netns", "add", &lab.name(ns)]);
            lab.made.push(lab.name(ns));
            run("ip", &["-n", &lab.name(ns), "link", "set", "lo", "up"]);
        }
        lab.wire();
        lab.write_resolver_files();
        lab.make_certificates();
        lab.start_servers();
        lab
    }

    /// The namespace's name, as `ip netns` knows it.
    pub fn name(&self, ns: Ns) -> String {
        let role = match ns {
            Ns::Child => "child",
            Ns::Host => "host",
            Ns::Inet => "inet",
        };
        format!("{}-{role}", self.prefix)
    }

    /// The CA certificate the lab's HTTPS servers chain to.
    pub fn ca_cert(&self) -> PathBuf {
        self.dir.path().join("ca.pem")
    }

    /// A scratch directory that lives as long as the lab.
    pub fn dir(&self) -> &Path {
        self.dir.path()
    }

    /// `program` to be run inside `ns` (through `ip netns exec`, which also applies the
    /// namespace's `/etc/netns` files).
    pub fn command(&self, ns: Ns, program: &str) -> Command {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", &self.name(ns), program]);
        cmd
    }

    /// Binds a TCP listener inside `ns`, from a thread that entered it, as the supervisor
    /// binds the proxy listener in the child's namespace.
    pub fn bind_in(&self, ns: Ns, addr: &str) -> TcpListener {
        let addr = addr.to_string();
        self.spawn_in(ns, move || TcpListener::bind(&addr))
            .join()
            .expect("network lab: bind thread panicked")
            .expect("network lab: cannot bind in the namespace")
    }

    /// Runs `f` on a new thread inside `ns`: a private mount namespace with the namespace's
    /// `/etc/netns` files bound over `/etc` (as `ip netns exec` does), then the network
    /// namespace. Threads it starts (a tokio runtime's blocking pool) inherit both.
    pub fn spawn_in<T: Send + 'static>(
        &self,
        ns: Ns,
        f: impl FnOnce() -> T + Send + 'static,
    ) -> JoinHandle<T> {
        let name = self.name(ns);
        std::thread::spawn(move || {
            enter(&name);
            f()
        })
    }

    /// Every request (`{"server","method","path","host"}`) and DNS query (`{"dns","type"}`)
    /// that has reached the lab's servers, in order.
    pub fn log(&self) -> Vec<serde_json::Value> {
        let text = fs::read_to_string(self.dir.path().join("log.jsonl")).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).expect("network lab: bad log line")).collect()
    }

    fn wire(&self) {
        let (host, inet) = (self.name(Ns::Host), self.name(Ns::Inet));
        run(
            "ip",
            &["-n", &host, "link", "add", "up0", "type", "veth", "peer", "name", "up0", "netns", &inet],
        );
        run("ip", &["-n", &host, "addr", "add", &format!("{HOST_ADDR}/24"), "dev", "up0"]);
        run("ip", &["-n", &inet, "addr", "add", &format!("{INET_ADDR}/24"), "dev", "up0"]);
        for ip in [REGISTRY_IP, CDN_IP, EVIL_IP, INTERNAL_IP, DNS_IP] {
            run("ip", &["-n", &inet, "addr", "add", &format!("{ip}/32"), "dev", "lo"]);
        }
        run("ip", &["-n", &host, "link", "set", "up0", "up"]);
        run("ip", &["-n", &inet, "link", "set", "up0", "up"]);
        run("ip", &["-n", &host, "route", "add", "default", "via", INET_ADDR]);
    }

    fn etc_dir(&self) -> PathBuf {
        PathBuf::from("/etc/netns").join(self.name(Ns::Host))
    }

    fn write_resolver_files(&self) {
        let etc = self.etc_dir();
        fs::create_dir_all(&etc).expect("network lab: cannot create /etc/netns/<host>");
        let hosts = format!(
            "127.0.0.1 localhost\n::1 localhost\n{REGISTRY_IP} {REGISTRY}\n{CDN_IP} {CDN}\n{EVIL_IP} {EVIL}\n\
             {INTERNAL_IP} {INTERNAL}\n{REGISTRY_IP} {MIXED}\n{INTERNAL_IP} {MIXED}\n::ffff:{INTERNAL_IP} {MAPPED}\n"
        );
        fs::write(etc.join("hosts"), hosts).expect("network lab: cannot write hosts");
        let resolv = format!("nameserver {DNS_IP}\noptions timeout:1 attempts:1\n");
        fs::write(etc.join("resolv.conf"), resolv).expect("network lab: cannot write resolv.conf");
    }

    fn make_certificates(&self) {
        let d = self.dir.path();
        let p = |f: &str| d.join(f).to_string_lossy().into_owned();
        let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
        let mut ca = vec!["req", "-x509"];
        ca.extend(ec);
        let (ca_key, ca_pem) = (p("ca.key"), p("ca.pem"));
        ca.extend(["-keyout", &ca_key, "-out", &ca_pem, "-days", "2", "-subj", "/CN=hullward lab CA"]);
        ca.extend([
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign",
        ]);
        run("openssl", &ca);
        let (key, csr, pem, ext) = (p("server.key"), p("server.csr"), p("server.pem"), p("server.ext"));
        let mut req = vec!["req"];
        req.extend(ec);
        req.extend(["-keyout", &key, "-out", &csr, "-subj", "/CN=registry.example"]);
        run("openssl", &req);
        let sans = [REGISTRY, CDN, EVIL, INTERNAL, MIXED, MAPPED, REBIND]
            .iter()
            .map(|n| format!("DNS:{n}"))
            .chain([REGISTRY_IP, CDN_IP, EVIL_IP, INTERNAL_IP].iter().map(|ip| format!("IP:{ip}")))
            .collect::<Vec<_>>()
            .join(",");
        fs::write(
            &ext,
            format!("subjectAltName={sans}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n"),
        )
        .expect("network lab: cannot write the certificate extensions");
        let serial = p("ca.srl");
        run(
            "openssl",
            &[
                "x509",
                "-req",
                "-in",
                &csr,
                "-CA",
                &ca_pem,
                "-CAkey",
                &ca_key,
                "-CAserial",
                &serial,
                "-CAcreateserial",
                "-out",
                &pem,
                "-days",
                "2",
                "-extfile",
                &ext,
            ],
        );
    }

    fn start_servers(&mut self) {
        let d = self.dir.path();
        let big = d.join("big.bin");
        fs::File::create(&big)
            .and_then(|f| f.set_len(BIG_BYTES))
            .expect("network lab: cannot make the big file");
        let config = serde_json::json!({
            "http": [[REGISTRY_IP, 80], [REGISTRY_IP, 8080], [CDN_IP, 80], [EVIL_IP, 80], [INTERNAL_IP, 80]],
            "https": [[REGISTRY_IP, 443], [CDN_IP, 443], [EVIL_IP, 443]],
            "cert": d.join("server.pem"),
            "key": d.join("server.key"),
            "big": big,
            "dns": [DNS_IP, 53],
            "zone": {},
            "rebind": {REBIND: [REGISTRY_IP, INTERNAL_IP]},
            "log": d.join("log.jsonl"),
        });
        let config_path = d.join("servers.json");
        fs::write(&config_path, config.to_string()).expect("network lab: cannot write the server config");
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/support/lab_servers.py");
        let mut child = self
            .command(Ns::Inet, "python3")
            .arg("-u")
            .arg(&script)
            .arg(&config_path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("network lab: cannot start python3");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = tx.send(line);
        });
        let ready = rx.recv_timeout(Duration::from_secs(15)).unwrap_or_default();
        if ready.trim() != "ready" {
            let _ = child.kill();
            let out = child.wait_with_output().expect("network lab: lost the server process");
            panic!("network lab: the servers did not start: {}", String::from_utf8_lossy(&out.stderr));
        }
        self.servers = Some(child);
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        if let Some(mut servers) = self.servers.take() {
            if let Some(mut stdin) = servers.stdin.take() {
                let _ = stdin.flush();
            }
            let _ = servers.kill();
            let _ = servers.wait();
        }
        for name in self.made.drain(..) {
            let _ = Command::new("ip").args(["netns", "del", &name]).status();
        }
        let _ = fs::remove_dir_all(self.etc_dir());
    }
}

/// Enters the named namespace on this thread the way `ip netns exec` does.
fn enter(name: &str) {
    unshare(CloneFlags::CLONE_NEWNS).expect("network lab: unshare(CLONE_NEWNS)");
    mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_SLAVE, None::<&str>)
        .expect("network lab: cannot make / a slave mount");
    if let Ok(entries) = fs::read_dir(Path::new("/etc/netns").join(name)) {
        for entry in entries.flatten() {
            let target = Path::new("/etc").join(entry.file_name());
            mount(Some(&entry.path()), &target, None::<&str>, MsFlags::MS_BIND, None::<&str>).unwrap_or_else(
                |e| {
                    panic!(
                        "network lab: cannot bind {} over {}: {e}",
                        entry.path().display(),
                        target.display()
                    )
                },
            );
        }
    }
    let ns =
        fs::File::open(Path::new("/run/netns").join(name)).expect("network lab: cannot open the namespace");
    setns(&ns, CloneFlags::CLONE_NEWNET).expect("network lab: setns(CLONE_NEWNET)");
}

/// Removes the namespaces and `/etc/netns` entries of labs whose test process is gone.
fn sweep_stale() {
    for dir in ["/run/netns", "/etc/netns"] {
        let Ok(entries) = fs::read_dir(dir) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let Some(pid) = name.strip_prefix("hwlab-").and_then(|r| r.split('-').next()) else { continue };
            if Path::new("/proc").join(pid).exists() {
                continue;
            }
            if dir == "/run/netns" {
                let _ = Command::new("ip").args(["netns", "del", &name]).status();
            } else {
                let _ = fs::remove_dir_all(entry.path());
            }
        }
    }
}

fn run(program: &str, args: &[&str]) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("network lab: cannot run {program} (needs root, iproute2, openssl): {e}"));
    assert!(
        out.status.success(),
        "network lab: `{program} {}` failed: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}
