//! `hullward run --allow-host …` end to end: the real binary, run inside the network lab's host
//! namespace (tests/support/netlab.rs), creates the child's network namespace, binds its egress
//! proxy there, and the sandboxed curl/python3 reach the lab's "internet" only through it.
//! Every other way out — direct IP, UDP, DNS, raw sockets, ignoring the proxy variables — must fail
//! inside the sandbox. Needs root; fails (never skips) when the lab cannot be built.

mod support;

use std::path::{Path, PathBuf};
use std::process::Output;

use support::netlab::{self, Lab, Ns};

/// A workspace outside /tmp (the child's /tmp is private) holding the lab's CA certificate.
struct Work {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

fn workspace(lab: &Lab) -> Work {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join("egress");
    std::fs::create_dir_all(&base).unwrap();
    let dir = tempfile::tempdir_in(base).unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::copy(lab.ca_cert(), root.join("ca.pem")).unwrap();
    Work { _dir: dir, root }
}

/// `hullward [args…] run -- sh -c SCRIPT` in the lab's host network namespace, with the lab's
/// `/etc/hosts` and `resolv.conf` bound in a private mount namespace. (Not `ip netns exec`: it
/// remounts `/sys`, which hides the cgroup hierarchies hullward needs.)
fn hullward(lab: &Lab, work: &Work, args: &[&str], script: &str) -> (i32, String, String) {
    let host = lab.name(Ns::Host);
    let etc = format!("/etc/netns/{host}");
    let enter = format!(
        "mount --bind {etc}/hosts /etc/hosts && mount --bind {etc}/resolv.conf /etc/resolv.conf && exec nsenter --net=/run/netns/{host} \"$@\""
    );
    let Output { status, stdout, stderr } = std::process::Command::new("unshare")
        .args([
            "--mount",
            "--propagation",
            "private",
            "sh",
            "-c",
            &enter,
            "sh",
            env!("CARGO_BIN_EXE_hullward"),
        ])
        .current_dir(&work.root)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env_remove("HTTP_PROXY")
        .env_remove("http_proxy")
        .env_remove("HTTPS_PROXY")
        .env_remove("https_proxy")
        .args(args)
        .args(["--timeout", "30s", "run", "--", "sh", "-c", script])
        .output()
        .expect("hullward runs");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

fn curl(url: &str) -> String {
    format!("curl -sS --max-time 10 --cacert ca.pem -o /dev/null -w '%{{http_code}}\\n' {url}; echo curl=$?")
}

#[test]
fn an_allowed_host_works_over_connect_and_plain_http_with_curl_and_python() {
    let lab = Lab::new();
    let work = workspace(&lab);
    let script = format!(
        "{}; {}; python3 -c \"import ssl,urllib.request as u; c=ssl.create_default_context(cafile='ca.pem'); print('py', u.urlopen('https://{r}/', context=c).status)\"",
        curl(&format!("https://{}/x", netlab::REGISTRY)),
        curl(&format!("http://{}/y", netlab::REGISTRY)),
        r = netlab::REGISTRY,
    );
    let (code, out, err) = hullward(&lab, &work, &["--allow-host", netlab::REGISTRY], &script);
    assert_eq!(code, 0, "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines, ["200", "curl=0", "200", "curl=0", "py 200"], "{out}\n{err}");
    let log = lab.log();
    assert!(log.iter().any(|l| l["path"] == "/x"), "{log:?}");
    assert!(log.iter().any(|l| l["path"] == "/y"), "{log:?}");
}

#[test]
fn a_host_not_on_the_list_gets_403_and_hullward_says_why() {
    let lab = Lab::new();
    let work = workspace(&lab);
    let script = format!(
        "{}; {}; {}",
        curl(&format!("https://{}/", netlab::REGISTRY)),
        curl(&format!("http://{}/", netlab::EVIL)),
        curl(&format!("https://{}/", netlab::EVIL)),
    );
    let (code, out, err) = hullward(&lab, &work, &["--allow-host", netlab::REGISTRY], &script);
    assert_eq!(code, 0, "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[..3], ["200", "curl=0", "403"], "{out}\n{err}");
    assert!(err.contains(&format!("[DENIED] Host '{}' is not in HttpAllowedHosts", netlab::EVIL)), "{err}");
    assert!(!lab.log().iter().any(|l| l["server"].as_str().unwrap_or("").starts_with(netlab::EVIL_IP)));
}

#[test]
fn a_name_resolving_to_a_private_address_is_refused_unless_allow_private_hosts() {
    let lab = Lab::new();
    let work = workspace(&lab);
    let script = curl(&format!("http://{}/", netlab::INTERNAL));
    let (code, out, err) = hullward(&lab, &work, &["--allow-host", netlab::INTERNAL], &script);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("403"), "{out}\n{err}");
    assert!(err.contains("private-resolved") && err.contains(netlab::INTERNAL_IP), "{err}");

    let config = work.root.join("private.yaml");
    std::fs::write(
        &config,
        format!("Security:\n  AllowPrivateHosts: true\n  HttpAllowedHosts: [{}]\n", netlab::INTERNAL),
    )
    .unwrap();
    let (code, out, err) = hullward(&lab, &work, &["--config", config.to_str().unwrap()], &script);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("200"), "AllowPrivateHosts lifts the range check: {out}\n{err}");
    let (_, out, _) = hullward(
        &lab,
        &work,
        &["--config", config.to_str().unwrap()],
        &curl(&format!("http://{}/", netlab::EVIL)),
    );
    assert!(out.starts_with("403"), "…but not the allowlist: {out}");
}

#[test]
fn every_other_way_out_fails_inside_the_sandbox() {
    let lab = Lab::new();
    let work = workspace(&lab);
    let py = |code: &str| format!("python3 -c \"{code}\" 2>&1 | tail -1");
    let script = [
        curl(&format!("https://{}/", netlab::REGISTRY)),
        format!("curl -sS --max-time 5 --noproxy '*' http://{}/ 2>&1 | tail -1", netlab::REGISTRY_IP),
        format!("curl -sS --max-time 5 --noproxy '*' --resolve {r}:443:{ip} --cacert ca.pem https://{r}/ 2>&1 | tail -1", r = netlab::REGISTRY, ip = netlab::REGISTRY_IP),
        py(&format!("import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b'x', ('{}', 53)); print('udp sent')", netlab::DNS_IP)),
        py(&format!("import socket; print(socket.gethostbyname('{}'))", netlab::REGISTRY)),
        py("import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)"),
        py("import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW)"),
        py(&format!("import socket; s=socket.socket(); s.settimeout(3); s.connect(('{}', 443)); print('tcp connected')", netlab::REGISTRY_IP)),
        py("import socket; s=socket.socket(); s.settimeout(3); s.connect(('127.0.0.1', 9)); print('other port connected')"),
        "ip -o link | wc -l".to_string(),
    ]
    .join("; ");
    let (code, out, err) = hullward(&lab, &work, &["--allow-host", netlab::REGISTRY], &script);
    assert_eq!(code, 0, "{out}\n{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "200", "the legitimate neighbour works: {out}\n{err}");
    assert!(lines[2].contains("curl: (7)"), "direct IP: {}", lines[2]);
    assert!(lines[3].contains("curl: (7)"), "direct IP with --resolve: {}", lines[3]);
    assert!(lines[4].contains("Operation not permitted"), "UDP: {}", lines[4]);
    assert!(lines[5].contains("gaierror") || lines[5].contains("Errno"), "DNS: {}", lines[5]);
    assert!(lines[6].contains("Operation not permitted"), "raw: {}", lines[6]);
    assert!(lines[7].contains("Operation not permitted"), "packet: {}", lines[7]);
    assert!(!lines[8].contains("connected"), "TCP to an IP: {}", lines[8]);
    assert!(!lines[9].contains("connected"), "TCP to another local port: {}", lines[9]);
    assert_eq!(lines[10], "1", "only lo exists: {out}");
    assert!(
        !lab.log().iter().any(|l| l.get("dns").is_some()),
        "no DNS query left the sandbox: {:?}",
        lab.log()
    );
}
