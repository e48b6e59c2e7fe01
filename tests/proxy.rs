//! The egress proxy against real clients (curl, python3) and real servers, in a network lab
//! (tests/support/netlab.rs): the proxy listens in a child namespace that has only `lo` — bound
//! from a thread that entered it, as the supervisor will — and connects out from a host
//! namespace whose `/etc/hosts` and DNS server are the lab's. Nothing leaves the machine.
//! Needs root; fails (never skips) when the lab cannot be built.

mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::process::Output;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use hullward::guard::Verdict;
use hullward::policy::load::parse_host_pattern;
use hullward::policy::{HostAllowlist, HttpPolicy};
use hullward::proxy::{self, ProxyConfig, ProxyEvent, ProxyStats};
use support::netlab::{self, Lab, Ns};
use tokio::sync::{mpsc, oneshot};

/// A proxy served on a thread in the lab's host namespace, listening in the child namespace.
struct Proxy {
    port: u16,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<(ProxyStats, Vec<ProxyEvent>)>>,
}

impl Proxy {
    fn start(lab: &Lab, config: ProxyConfig) -> Proxy {
        let listener = lab.bind_in(Ns::Child, "127.0.0.1:0");
        let port = listener.local_addr().unwrap().port();
        let (stop, stopped) = oneshot::channel();
        let thread = lab.spawn_in(Ns::Host, move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
            runtime.block_on(async move {
                let (tx, mut rx) = mpsc::channel(64);
                let handle = proxy::spawn(listener, config, tx).expect("proxy starts");
                let collector = tokio::spawn(async move {
                    let mut events = Vec::new();
                    while let Some(e) = rx.recv().await {
                        events.push(e);
                    }
                    events
                });
                let _ = stopped.await;
                let stats = handle.shutdown().await;
                (stats, collector.await.unwrap())
            })
        });
        Proxy { port, stop: Some(stop), thread: Some(thread) }
    }

    fn env(&self) -> Vec<(String, String)> {
        proxy::child_env(self.port)
    }

    /// Stops the proxy; its final counters and every event.
    fn finish(mut self) -> (ProxyStats, Vec<ProxyEvent>) {
        let _ = self.stop.take().unwrap().send(());
        self.thread.take().unwrap().join().expect("proxy thread")
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn http_policy(hosts: &[&str], allow_private: bool) -> HttpPolicy {
    let list = hosts.iter().map(|h| parse_host_pattern(h).unwrap()).collect();
    HttpPolicy { allowed: HostAllowlist::Only(list), allow_private }
}

fn config(hosts: &[&str]) -> ProxyConfig {
    ProxyConfig::new(http_policy(hosts, false))
}

/// What curl, run in the child namespace with the proxy variables, made of a request.
#[derive(Debug)]
struct Curl {
    exit: i32,
    /// The final response status (`000` when there was none).
    status: String,
    /// The status the proxy answered a CONNECT with.
    connect: String,
    body: String,
    stderr: String,
}

fn curl(lab: &Lab, proxy: &Proxy, args: &[&str]) -> Curl {
    let out = lab
        .command(Ns::Child, "curl")
        .args(["-sS", "--max-time", "10", "--cacert"])
        .arg(lab.ca_cert())
        .args(["-w", "\n%{http_code} %{http_connect}"])
        .args(args)
        .envs(proxy.env())
        .output()
        .expect("curl runs");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, codes) = text.rsplit_once('\n').unwrap_or(("", &text));
    let (status, connect) = codes.split_once(' ').unwrap_or((codes, ""));
    Curl {
        exit: out.status.code().unwrap_or(-1),
        status: status.to_string(),
        connect: connect.to_string(),
        body: body.to_string(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Runs a python3 program in the child namespace, with the proxy variables when given.
fn python(lab: &Lab, proxy: Option<&Proxy>, program: &str) -> Output {
    let mut cmd = lab.command(Ns::Child, "python3");
    cmd.arg("-c").arg(program).arg(lab.ca_cert());
    if let Some(p) = proxy {
        cmd.envs(p.env());
    }
    cmd.output().expect("python3 runs")
}

/// Sends `request` to the proxy from inside the child namespace and returns all it answered.
fn raw(lab: &Lab, proxy: &Proxy, request: &[u8]) -> String {
    let (port, request) = (proxy.port, request.to_vec());
    lab.spawn_in(Ns::Child, move || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(&request).unwrap();
        let mut out = Vec::new();
        let _ = s.read_to_end(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    })
    .join()
    .unwrap()
}

/// CONNECTs to `target`, then sends `inner` through the tunnel; the whole answer.
fn tunnel(lab: &Lab, proxy: &Proxy, target: &str, inner: &str) -> String {
    let request = format!("CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n{inner}");
    raw(lab, proxy, request.as_bytes())
}

fn echo(body: &str) -> serde_json::Value {
    serde_json::from_str(body).unwrap_or_else(|e| panic!("not the echo server's JSON ({e}): {body:?}"))
}

fn requests_reaching(lab: &Lab, path: &str) -> usize {
    lab.log().iter().filter(|e| e["path"] == path).count()
}

#[test]
fn allowed_hosts_work_through_connect_and_plain_http() {
    let lab = Lab::new();
    let proxy = Proxy::start(&lab, config(&[netlab::REGISTRY]));

    let r = curl(&lab, &proxy, &["https://registry.example/tls"]);
    assert_eq!((r.exit, r.status.as_str(), r.connect.as_str()), (0, "200", "200"), "{r:?}");
    assert_eq!(echo(&r.body)["server"], "198.51.100.10:443");

    let r = curl(&lab, &proxy, &["http://registry.example/plain?q=1"]);
    assert_eq!((r.exit, r.status.as_str()), (0, "200"), "{r:?}");
    let e = echo(&r.body);
    assert_eq!((e["server"].as_str(), e["path"].as_str()), (Some("198.51.100.10:80"), Some("/plain?q=1")));
    assert_eq!(e["host"], "registry.example");

    let out = python(
        &lab,
        Some(&proxy),
        "import ssl, sys, urllib.request as u\n\
         ctx = ssl.create_default_context(cafile=sys.argv[1])\n\
         print(u.urlopen('https://registry.example/py-tls', context=ctx, timeout=10).read().decode())\n\
         print(u.urlopen('http://registry.example/py-plain', timeout=10).read().decode())\n",
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    assert_eq!(echo(lines.next().unwrap())["path"], "/py-tls");
    assert_eq!(echo(lines.next().unwrap())["path"], "/py-plain");

    let (stats, events) = proxy.finish();
    assert_eq!((stats.allowed, stats.denied, stats.rejected, stats.failed), (4, 0, 0, 0), "{stats:?}");
    let connect = events.iter().find(|e| e.method == "CONNECT").expect("a CONNECT event");
    assert_eq!(
        (connect.host.as_str(), connect.port, connect.upstream, connect.verdict, connect.status),
        ("registry.example", 443, Some("198.51.100.10:443".parse().unwrap()), Verdict::Allow, 200)
    );
    assert_eq!(connect.rule, "host-allowlist");
    assert!(connect.bytes_up > 0 && connect.bytes_down > 0, "{connect:?}");
    assert!(events.iter().all(|e| e.verdict == Verdict::Allow && e.message.is_empty()), "{events:?}");
    assert_eq!(stats.bytes_down, events.iter().map(|e| e.bytes_down).sum::<u64>());
}

#[test]
fn a_disallowed_host_gets_403_with_the_denied_text() {
    let lab = Lab::new();
    let proxy = Proxy::start(&lab, config(&[netlab::REGISTRY, "*.cdn.example"]));
    let denied = "[DENIED] Host 'evil.example' is not in HttpAllowedHosts. Allowed: 'registry.example', '*.cdn.example'.";

    let r = curl(&lab, &proxy, &["http://evil.example/steal"]);
    assert_eq!((r.status.as_str(), r.body.as_str()), ("403", format!("{denied}\n").as_str()), "{r:?}");

    let r = curl(&lab, &proxy, &["https://evil.example/steal"]);
    assert_eq!((r.exit, r.connect.as_str()), (56, "403"), "{r:?}");

    let out = python(
        &lab,
        Some(&proxy),
        "import ssl, sys, urllib.request as u\n\
         try:\n    u.urlopen('https://evil.example/', context=ssl.create_default_context(cafile=sys.argv[1]), timeout=10)\n\
         except OSError as e:\n    print(e)\n",
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("Tunnel connection failed: 403"), "{out:?}");

    let raw_answer = tunnel(&lab, &proxy, "evil.example:443", "");
    assert!(raw_answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{raw_answer}");
    assert!(raw_answer.contains("\r\nConnection: close\r\n"), "{raw_answer}");
    assert!(raw_answer.ends_with(&format!("\r\n\r\n{denied}\n")), "{raw_answer}");

    // The wildcard covers names below cdn.example, not cdn.example itself.
    let r = curl(&lab, &proxy, &["https://api.cdn.example/w"]);
    assert_eq!(
        (r.status.as_str(), echo(&r.body)["server"].as_str()),
        ("200", Some("198.51.100.11:443")),
        "{r:?}"
    );
    let r = curl(&lab, &proxy, &["http://cdn.example/"]);
    assert_eq!(r.status, "403", "{r:?}");

    let (stats, events) = proxy.finish();
    assert_eq!((stats.allowed, stats.denied), (1, 5), "{stats:?}");
    let evil: Vec<&ProxyEvent> = events.iter().filter(|e| e.host == "evil.example").collect();
    assert_eq!(evil.len(), 4);
    assert!(evil
        .iter()
        .all(|e| e.verdict == Verdict::Deny && e.rule == "host-allowlist" && e.message == denied));
    assert!(evil.iter().all(|e| e.status == 403 && e.upstream.is_none()));
    assert!(lab.log().iter().all(|e| e["server"] != "203.0.113.20:80" && e["server"] != "203.0.113.20:443"));
}

#[test]
fn names_that_resolve_to_private_addresses_are_refused_even_when_allowed() {
    let lab = Lab::new();
    let hosts = [netlab::INTERNAL, netlab::MIXED, netlab::MAPPED, netlab::EVIL];
    let proxy = Proxy::start(&lab, config(&hosts));
    let why = "in the private range 10.0.0.0/8: requests to private, loopback and link-local addresses are blocked (AllowPrivateHosts is false).";
    for host in [netlab::INTERNAL, netlab::MIXED, netlab::MAPPED] {
        let r = curl(&lab, &proxy, &[&format!("http://{host}/")]);
        let want = format!("[DENIED] Host '{host}' resolves to 10.66.0.5, {why}\n");
        assert_eq!((r.status.as_str(), r.body.as_str()), ("403", want.as_str()), "{r:?}");
        let answer = tunnel(&lab, &proxy, &format!("{host}:443"), "");
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    }
    assert_eq!(requests_reaching(&lab, "/"), 0, "nothing may reach a private address");
    let (stats, events) = proxy.finish();
    assert_eq!((stats.denied, stats.allowed), (6, 0), "{stats:?}");
    assert!(events.iter().all(|e| e.rule == "private-resolved" && e.upstream.is_none()), "{events:?}");

    // AllowPrivateHosts lifts the range check and nothing else.
    let proxy = Proxy::start(&lab, ProxyConfig::new(http_policy(&[netlab::INTERNAL, netlab::MIXED], true)));
    let r = curl(&lab, &proxy, &["http://internal.example/inside"]);
    assert_eq!((r.status.as_str(), echo(&r.body)["server"].as_str()), ("200", Some("10.66.0.5:80")), "{r:?}");
    let r = curl(&lab, &proxy, &["http://mixed.example/either"]);
    assert_eq!(r.status, "200", "{r:?}");
    let r = curl(&lab, &proxy, &["http://evil.example/"]);
    assert!(r.status == "403" && r.body.contains("is not in HttpAllowedHosts"), "{r:?}");
}

#[test]
fn ip_literal_targets_are_judged_in_every_spelling() {
    let lab = Lab::new();
    let proxy = Proxy::start(&lab, config(&[netlab::REGISTRY_IP]));
    let get = "GET /literal HTTP/1.1\r\nHost: registry.example\r\nConnection: close\r\n\r\n";
    for target in [
        "198.51.100.10:80",
        "[::ffff:198.51.100.10]:80",
        "[::ffff:c633:640a]:80",
        "3325256714:80",
        "0xc6.0x33.0x64.0xa:80",
    ] {
        let answer = tunnel(&lab, &proxy, target, get);
        assert!(
            answer.starts_with("HTTP/1.1 200 Connection established\r\n\r\nHTTP/1.1 200 OK\r\n"),
            "{target}: {answer}"
        );
        assert!(answer.contains("\"server\": \"198.51.100.10:80\""), "{target}: {answer}");
    }
    for (target, shown) in [
        ("[::ffff:10.66.0.5]:80", "10.66.0.5"),
        ("0x0a.0x42.0.5:80", "10.66.0.5"),
        ("10.66.5:80", "10.66.0.5"),
        ("172097541:80", "10.66.0.5"),
        ("[64:ff9b::a42:5]:80", "64:ff9b::a42:5"),
        ("[::1]:8080", "::1"),
        ("127.1:8080", "127.0.0.1"),
        ("0:8080", "0.0.0.0"),
        ("localhost:8080", "localhost"),
        ("169.254.169.254:80", "169.254.169.254"),
    ] {
        let answer = tunnel(&lab, &proxy, target, get);
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{target}: {answer}");
        assert!(answer.contains(&format!("[DENIED] Host '{shown}' is ")), "{target}: {answer}");
    }
    for target in ["198.51.100.10", "[fe80::1%25lo]:80", "198.51.100.10:0", "198.51.100.10:80x", "a b:80"] {
        let answer = tunnel(&lab, &proxy, target, "");
        assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{target}: {answer}");
    }
    // The port list: 25 is not web egress; 8080 is.
    let answer = tunnel(&lab, &proxy, "198.51.100.10:25", "");
    assert!(answer.contains("[DENIED] Port 25 of '198.51.100.10' is not permitted: the egress proxy allows ports 80, 443 and 1024-65535."), "{answer}");
    let answer = tunnel(&lab, &proxy, "198.51.100.10:8080", get);
    assert!(answer.contains("\"server\": \"198.51.100.10:8080\""), "{answer}");
    let (stats, events) = proxy.finish();
    assert_eq!((stats.allowed, stats.denied, stats.rejected), (6, 11, 5), "{stats:?}");
    assert_eq!(events.iter().filter(|e| e.rule == "private-host").count(), 10);
    assert_eq!(events.iter().filter(|e| e.rule == "proxy-port").count(), 1);
    assert_eq!(events.iter().filter(|e| e.rule == "proxy-request").count(), 5);
}

#[test]
fn the_upstream_sees_the_checked_host_and_nothing_smuggled() {
    let lab = Lab::new();
    let proxy = Proxy::start(&lab, config(&[netlab::REGISTRY]));

    // A Host header that disagrees with the target is replaced by the target's.
    let answer = raw(
        &lab,
        &proxy,
        b"GET http://registry.example/fronted HTTP/1.1\r\nHost: evil.example\r\nConnection: keep-alive\r\nKeep-Alive: 100\r\n\r\n",
    );
    assert!(
        answer.starts_with("HTTP/1.1 200 OK\r\n") && answer.contains("\r\nConnection: close\r\n"),
        "{answer}"
    );
    let body = echo(answer.split_once("\r\n\r\n").unwrap().1);
    assert_eq!(
        (body["host"].as_str(), body["server"].as_str()),
        (Some("registry.example"), Some("198.51.100.10:80"))
    );
    let names: Vec<String> = body["headers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h[0].as_str().unwrap().to_ascii_lowercase())
        .collect();
    assert!(!names.contains(&"keep-alive".to_string()) && names.contains(&"via".to_string()), "{names:?}");

    // Bytes after a Content-Length body are not a second request.
    let answer = raw(
        &lab,
        &proxy,
        b"POST http://registry.example/first HTTP/1.1\r\nHost: registry.example\r\nContent-Length: 5\r\n\r\nhelloGET /smuggled HTTP/1.1\r\nHost: evil.example\r\n\r\n",
    );
    assert_eq!(echo(answer.split_once("\r\n\r\n").unwrap().1)["body_length"], 5, "{answer}");

    let refused: &[(&str, &[u8])] = &[
        ("length and coding", b"POST http://registry.example/s1 HTTP/1.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
        ("two lengths", b"POST http://registry.example/s2 HTTP/1.1\r\nContent-Length: 4\r\nContent-Length: 5\r\n\r\nhello"),
        ("coding list", b"POST http://registry.example/s3 HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n"),
        ("obs-fold", b"GET http://registry.example/s4 HTTP/1.1\r\nX-A: 1\r\n X-B: 2\r\n\r\n"),
        ("space before colon", b"GET http://registry.example/s5 HTTP/1.1\r\nTransfer-Encoding : chunked\r\n\r\n"),
        ("two hosts", b"GET http://registry.example/s6 HTTP/1.1\r\nHost: registry.example\r\nHost: evil.example\r\n\r\n"),
        ("bad chunk", b"POST http://registry.example/s7 HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloX\r\n0\r\n\r\n"),
        ("https absolute-form", b"GET https://registry.example/s8 HTTP/1.1\r\n\r\n"),
        ("origin-form", b"GET /s9 HTTP/1.1\r\nHost: registry.example\r\n\r\n"),
        ("userinfo", b"GET http://registry.example@evil.example/s10 HTTP/1.1\r\n\r\n"),
    ];
    for (what, request) in refused {
        let answer = raw(&lab, &proxy, request);
        assert!(answer.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{what}: {answer}");
        assert!(answer.contains("\r\n\r\nhullward proxy: "), "{what}: {answer}");
    }
    // Nothing refused reached the upstream, but /s7: its chunk error is found after its head
    // went upstream, and its body never completes there.
    let paths: Vec<String> =
        lab.log().iter().filter_map(|e| e["path"].as_str().map(str::to_string)).collect();
    assert_eq!(paths.iter().filter(|p| *p != "/s7").collect::<Vec<_>>(), ["/fronted", "/first"]);

    // An oversized head is refused without being read to its end.
    let big = format!("X-Big: {}", "a".repeat(40 * 1024));
    let r = curl(&lab, &proxy, &["-H", &big, "http://registry.example/big-head"]);
    assert_eq!(r.status, "431", "{r:?}");
    let (stats, _) = proxy.finish();
    assert_eq!((stats.allowed, stats.rejected), (3, 10), "{stats:?}");
}

#[test]
fn bodies_are_relayed_with_their_framing() {
    let lab = Lab::new();
    let proxy = Proxy::start(&lab, config(&[netlab::REGISTRY]));
    let data = lab.dir().join("upload.bin");
    let bytes: Vec<u8> = (0..3_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8).collect();
    std::fs::write(&data, &bytes).unwrap();
    let sha = sha256_hex(&data);
    let upload = format!("@{}", data.display());

    // Over 1 MB curl sends Expect: 100-continue, so the interim response is relayed too.
    let r = curl(&lab, &proxy, &["--data-binary", &upload, "http://registry.example/up"]);
    let e = echo(&r.body);
    assert_eq!(
        (e["body_length"].as_u64(), e["body_sha256"].as_str()),
        (Some(3_000_000), Some(sha.as_str())),
        "{r:?}"
    );
    let r = curl(
        &lab,
        &proxy,
        &["-H", "Transfer-Encoding: chunked", "--data-binary", &upload, "http://registry.example/up"],
    );
    let e = echo(&r.body);
    assert_eq!(
        (e["body_length"].as_u64(), e["body_sha256"].as_str()),
        (Some(3_000_000), Some(sha.as_str())),
        "{r:?}"
    );
    let r = curl(&lab, &proxy, &["--data-binary", &upload, "https://registry.example/up"]);
    assert_eq!(echo(&r.body)["body_sha256"].as_str(), Some(sha.as_str()), "{r:?}");

    for args in
        [&["http://registry.example/chunked/300000"][..], &["-0", "http://registry.example/chunked/300000"]]
    {
        let r = curl(&lab, &proxy, args);
        assert_eq!((r.exit, r.status.as_str(), r.body.len()), (0, "200", 300_000), "{args:?} {}", r.stderr);
    }
    let r = curl(&lab, &proxy, &["-I", "http://registry.example/big"]);
    assert!(r.body.contains(&format!("Content-Length: {}", netlab::BIG_BYTES)), "{r:?}");
    let r = curl(&lab, &proxy, &["-o", "/dev/null", "http://registry.example/big"]);
    assert_eq!((r.exit, r.status.as_str()), (0, "200"), "{r:?}");
    let (stats, _) = proxy.finish();
    assert!(stats.bytes_down > netlab::BIG_BYTES && stats.bytes_up > 9_000_000, "{stats:?}");
}

fn sha256_hex(path: &std::path::Path) -> String {
    let out = std::process::Command::new("sha256sum").arg(path).output().expect("sha256sum runs");
    String::from_utf8_lossy(&out.stdout).split_whitespace().next().unwrap_or_default().to_string()
}

#[test]
fn slow_and_idle_clients_and_floods_are_bounded() {
    let lab = Lab::new();
    let mut cfg = config(&[netlab::REGISTRY]);
    cfg.limits.header_timeout = Duration::from_millis(800);
    cfg.limits.idle_timeout = Duration::from_millis(800);
    cfg.limits.max_connections = 3;
    let proxy = Proxy::start(&lab, cfg);
    let port = proxy.port;
    let answers = lab
        .spawn_in(Ns::Child, move || {
            let open = || {
                let s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                s
            };
            let read_all = |mut s: TcpStream| {
                let mut out = Vec::new();
                let _ = s.read_to_end(&mut out);
                String::from_utf8_lossy(&out).into_owned()
            };
            let start = Instant::now();
            // Slowloris: a head that never ends, one byte at a time.
            let mut slow = open();
            slow.write_all(b"GET http://registry.example/ HTTP/1.1\r\n").unwrap();
            // An idle tunnel.
            let mut idle = open();
            idle.write_all(b"CONNECT registry.example:80 HTTP/1.1\r\n\r\n").unwrap();
            let mut third = open();
            third.write_all(b"GET http://registry.example/").unwrap();
            std::thread::sleep(Duration::from_millis(100));
            // The fourth is over the limit.
            let busy = read_all(open());
            for _ in 0..3 {
                let _ = slow.write_all(b"X");
                std::thread::sleep(Duration::from_millis(100));
            }
            let mut first = [0u8; 39];
            idle.read_exact(&mut first).unwrap();
            let (slow, idle, third) = (read_all(slow), read_all(idle), read_all(third));
            (busy, slow, String::from_utf8_lossy(&first).into_owned() + &idle, third, start.elapsed())
        })
        .join()
        .unwrap();
    let (busy, slow, idle, third, elapsed) = answers;
    assert!(busy.starts_with("HTTP/1.1 503 Service Unavailable\r\n"), "{busy}");
    assert!(slow.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{slow}");
    assert!(third.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{third}");
    assert_eq!(
        idle, "HTTP/1.1 200 Connection established\r\n\r\n",
        "the idle tunnel is closed, not answered"
    );
    assert!(elapsed < Duration::from_secs(3), "{elapsed:?}");
    // The slots are free again.
    let r = curl(&lab, &proxy, &["http://registry.example/after"]);
    assert_eq!(r.status, "200", "{r:?}");
    let (stats, events) = proxy.finish();
    assert_eq!((stats.rejected, stats.allowed), (3, 2), "{stats:?}");
    let tunnel_event = events.iter().find(|e| e.method == "CONNECT").unwrap();
    assert_eq!(tunnel_event.message, "no data moved for 800ms");
}

#[test]
fn the_byte_budget_cuts_transfers_and_refuses_new_requests() {
    let lab = Lab::new();
    let mut cfg = config(&[netlab::REGISTRY]);
    cfg.limits.max_total_bytes = 1 << 20;
    let proxy = Proxy::start(&lab, cfg);
    let r = curl(&lab, &proxy, &["-o", "/dev/null", "http://registry.example/bytes/4000000"]);
    assert_eq!(r.exit, 18, "a partial transfer: {r:?}");
    let r = curl(&lab, &proxy, &["http://registry.example/small"]);
    assert_eq!(
        (r.status.as_str(), r.body.as_str()),
        ("403", "[DENIED] The egress byte budget of this call (1048576 bytes) is used up.\n")
    );
    let (stats, events) = proxy.finish();
    assert!(stats.bytes_up + stats.bytes_down <= 1 << 20, "{stats:?}");
    assert!(events.iter().all(|e| e.rule == "proxy-byte-budget" && e.verdict == Verdict::Deny), "{events:?}");
}

#[test]
fn each_request_resolves_once_and_connects_to_what_was_checked() {
    let lab = Lab::new();
    let proxy = Proxy::start(&lab, config(&[netlab::REBIND]));
    // The lab's DNS answers rebind.example with a public and a private address in turn: each
    // request is decided on the one answer it got, and connects to exactly that address.
    let first = curl(&lab, &proxy, &["http://rebind.example/one"]);
    let second = curl(&lab, &proxy, &["http://rebind.example/two"]);
    let third = curl(&lab, &proxy, &["https://rebind.example/three"]);
    assert_eq!(
        (first.status.as_str(), echo(&first.body)["server"].as_str()),
        ("200", Some("198.51.100.10:80"))
    );
    assert_eq!(second.status, "403", "{second:?}");
    assert!(second
        .body
        .starts_with("[DENIED] Host 'rebind.example' resolves to 10.66.0.5, in the private range"));
    assert_eq!(
        (third.connect.as_str(), echo(&third.body)["server"].as_str()),
        ("200", Some("198.51.100.10:443"))
    );
    let a_queries = lab.log().iter().filter(|e| e["dns"] == "rebind.example" && e["type"] == 1).count();
    assert_eq!(a_queries, 3, "one lookup per request: {:?}", lab.log());
    let (_, events) = proxy.finish();
    let upstreams: Vec<String> =
        events.iter().map(|e| e.upstream.map(|a| a.to_string()).unwrap_or_default()).collect();
    assert_eq!(upstreams, ["198.51.100.10:80", "", "198.51.100.10:443"]);
    let r = Proxy::start(&lab, config(&["nowhere.example"]));
    let gone = curl(&lab, &r, &["http://nowhere.example/"]);
    assert_eq!(gone.status, "502", "{gone:?}");
    assert!(gone.body.starts_with("hullward proxy: cannot resolve 'nowhere.example': "), "{gone:?}");
    let (stats, _) = r.finish();
    assert_eq!(stats.failed, 1);
}

#[test]
fn the_child_has_no_way_out_but_the_proxy() {
    let lab = Lab::new();
    let proxy = Proxy::start(&lab, config(&[netlab::REGISTRY]));
    let program = r#"
import errno, json, socket
results = {}
def attempt(name, f):
    try:
        f()
        results[name] = "ok"
    except socket.gaierror as e:
        results[name] = "gaierror"
    except OSError as e:
        results[name] = errno.errorcode.get(e.errno, str(e))
def tcp(): socket.create_connection(("198.51.100.10", 80), timeout=3)
def tcp6(): socket.create_connection(("2001:db8::10", 80), timeout=3)
def udp(): socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("198.51.100.53", 53))
def dns(): socket.getaddrinfo("registry.example", 80)
def icmp(): socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP).sendto(b"\x08\x00\xf7\xff\x00\x00\x00\x00", ("198.51.100.10", 0))
def packet(): socket.socket(socket.AF_PACKET, socket.SOCK_RAW).sendto(b"\x00" * 60, ("up0", 0))
for name, f in [("tcp", tcp), ("tcp6", tcp6), ("udp", udp), ("dns", dns), ("icmp", icmp), ("packet", packet)]:
    attempt(name, f)
print(json.dumps(results))
"#;
    // The proxy variables are set, and ignored: these programs go direct.
    let out = python(&lab, Some(&proxy), program);
    let results: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    for (name, want) in [
        ("tcp", "ENETUNREACH"),
        ("tcp6", "ENETUNREACH"),
        ("udp", "ENETUNREACH"),
        ("dns", "gaierror"),
        ("icmp", "ENETUNREACH"),
        ("packet", "ENODEV"),
    ] {
        assert_eq!(results[name], want, "{name}: {results}");
    }
    let r = curl(&lab, &proxy, &["--noproxy", "*", "http://198.51.100.10/direct"]);
    assert_eq!(r.exit, 7, "curl cannot connect: {r:?}");
    assert!(lab.log().is_empty(), "nothing reached the lab's internet: {:?}", lab.log());
    // Only the proxy gets through.
    let r = curl(&lab, &proxy, &["http://registry.example/via-proxy"]);
    assert_eq!(r.status, "200", "{r:?}");
}

#[test]
fn shutdown_closes_open_tunnels_and_still_reports_them() {
    let lab = Lab::new();
    let proxy = Proxy::start(&lab, config(&[netlab::REGISTRY]));
    let port = proxy.port;
    let (opened, is_open) = std::sync::mpsc::channel();
    let client = lab.spawn_in(Ns::Child, move || {
        let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"CONNECT registry.example:80 HTTP/1.1\r\n\r\n").unwrap();
        let mut answer = [0u8; 39];
        s.read_exact(&mut answer).unwrap();
        opened.send(()).unwrap();
        let mut rest = Vec::new();
        s.read_to_end(&mut rest).map(|_| rest.len())
    });
    is_open.recv_timeout(Duration::from_secs(10)).expect("the tunnel opens");
    let start = Instant::now();
    let (stats, events) = proxy.finish();
    assert!(start.elapsed() < Duration::from_secs(2), "{:?}", start.elapsed());
    assert_eq!(client.join().unwrap().ok(), Some(0), "the client sees the tunnel closed");
    assert_eq!(stats.allowed, 1, "{stats:?}");
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!((events[0].method.as_str(), events[0].message.as_str()), ("CONNECT", "the proxy shut down"));
}

/// CPU time of this process so far: the proxy's thread, while the clients are other processes.
fn process_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap();
    let fields: Vec<u64> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|f| f.parse().unwrap())
        .collect();
    // utime and stime, in USER_HZ (100 per second on Linux).
    Duration::from_millis((fields[0] + fields[1]) * 10)
}

/// Sends a small request on `s` and reads the answer to its end, so that the server is done
/// with the connection before the next one is timed.
fn finish_exchange(s: &mut TcpStream) {
    s.write_all(b"GET /bench HTTP/1.1\r\nHost: registry.example\r\nConnection: close\r\n\r\n").unwrap();
    let mut rest = Vec::new();
    s.read_to_end(&mut rest).unwrap();
    assert!(rest.starts_with(b"HTTP/1.1 200 "), "{}", String::from_utf8_lossy(&rest));
}

/// Bytes per second curl reports for one download from namespace `ns` (through the proxy when
/// `ns` is the child's).
fn download_speed(lab: &Lab, proxy: &Proxy, ns: Ns, args: &[&str]) -> f64 {
    let mut cmd = lab.command(ns, "curl");
    cmd.args(["-sS", "--fail", "-o", "/dev/null", "-w", "%{speed_download}"]).args(args);
    if ns == Ns::Child {
        cmd.envs(proxy.env());
    }
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).trim().parse::<f64>().unwrap()
}

/// Plain HTTP alone, 20 downloads of the 100 MB file: the median speed and the proxy's CPU per
/// 100 MB. For comparing two builds: run each build's test binary in turn, a few rounds
/// (`scripts/bench-proxy.sh` mixes paths, so one path's cost is hard to see there).
#[test]
#[ignore = "a benchmark: cargo test --release --test proxy -- --ignored --exact bench_plain_http_alone --nocapture"]
fn bench_plain_http_alone() {
    const N: u32 = 20;
    let lab = Lab::new();
    let proxy = Proxy::start(&lab, config(&[netlab::REGISTRY]));
    let before = process_cpu();
    let mut speeds: Vec<f64> =
        (0..N).map(|_| download_speed(&lab, &proxy, Ns::Child, &["http://registry.example/big"])).collect();
    let cpu = process_cpu() - before;
    speeds.sort_by(f64::total_cmp);
    println!(
        "plain HTTP through the proxy, {N} x 100 MB: median {:.0} MB/s, proxy CPU per 100 MB {:.1} ms",
        speeds[speeds.len() / 2] / 1e6,
        cpu.as_secs_f64() * 1e3 / f64::from(N)
    );
}

/// The benchmark behind `scripts/bench-proxy.sh` (run with `--ignored` on a release build):
/// throughput of the 100 MB file direct and through the proxy (forwarded and tunnelled), and
/// the latency the proxy adds to getting a connection to the origin.
#[test]
#[ignore = "a benchmark: scripts/bench-proxy.sh"]
fn bench_throughput_and_connect_latency() {
    let lab = Lab::new();
    let proxy = Proxy::start(&lab, config(&[netlab::REGISTRY]));
    let speed = |ns: Ns, args: &[&str]| download_speed(&lab, &proxy, ns, args);
    // Interleaved, so that load from elsewhere on the machine hits all three alike.
    let (mut direct, mut forwarded, mut tunnelled) = (Vec::new(), Vec::new(), Vec::new());
    let mut proxy_cpu = Duration::ZERO;
    for _ in 0..7 {
        direct.push(speed(Ns::Host, &["http://198.51.100.10/big"]));
        let before = process_cpu();
        forwarded.push(speed(Ns::Child, &["http://registry.example/big"]));
        tunnelled.push(speed(Ns::Child, &["-p", "http://registry.example/big"]));
        proxy_cpu += process_cpu() - before;
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (direct, forwarded, tunnelled) = (median(direct), median(forwarded), median(tunnelled));
    let mb = |b: f64| b / 1e6;
    println!("throughput, 100 MB file, median of 7 (curl):");
    println!("  direct                 {:>8.0} MB/s", mb(direct));
    println!("  proxy, plain HTTP      {:>8.0} MB/s  ratio {:.2}", mb(forwarded), forwarded / direct);
    println!("  proxy, CONNECT tunnel  {:>8.0} MB/s  ratio {:.2}", mb(tunnelled), tunnelled / direct);
    println!("  proxy CPU per 100 MB   {:>8.1} ms", proxy_cpu.as_secs_f64() * 1e3 / 14.0);

    const N: usize = 400;
    let median = |mut v: Vec<Duration>| {
        v.sort();
        v[N / 2]
    };
    let direct = lab
        .spawn_in(Ns::Host, || {
            (0..N)
                .map(|_| {
                    let start = Instant::now();
                    let mut s = TcpStream::connect((netlab::REGISTRY_IP, 80)).unwrap();
                    let took = start.elapsed();
                    finish_exchange(&mut s);
                    took
                })
                .collect::<Vec<_>>()
        })
        .join()
        .unwrap();
    let port = proxy.port;
    let proxied = lab
        .spawn_in(Ns::Child, move || {
            (0..N)
                .map(|_| {
                    let start = Instant::now();
                    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
                    s.write_all(b"CONNECT registry.example:80 HTTP/1.1\r\nHost: registry.example:80\r\n\r\n")
                        .unwrap();
                    let mut answer = [0u8; 39];
                    s.read_exact(&mut answer).unwrap();
                    let took = start.elapsed();
                    assert_eq!(&answer, b"HTTP/1.1 200 Connection established\r\n\r\n");
                    finish_exchange(&mut s);
                    took
                })
                .collect::<Vec<_>>()
        })
        .join()
        .unwrap();
    let (direct, proxied) = (median(direct), median(proxied));
    println!("connection to the origin, median of {N}:");
    println!("  direct TCP connect      {:>7.1} µs", direct.as_secs_f64() * 1e6);
    println!(
        "  through the proxy       {:>7.1} µs  (CONNECT answered: lookup, checks, upstream connect)",
        proxied.as_secs_f64() * 1e6
    );
    println!("  added by the proxy      {:>7.1} µs", (proxied.saturating_sub(direct)).as_secs_f64() * 1e6);
    let (stats, _) = proxy.finish();
    assert_eq!(stats.failed + stats.denied + stats.rejected, 0, "{stats:?}");
}
