//! Real-kernel battery for the machines hullward's users have: a container's seccomp profile
//! (`clone3` answered with ENOSYS; namespace creation refused is tests/sandbox_landlock_only.rs),
//! and the CPU limit.
//!
//! The container is reproduced by a small wrapper (compiled here) that installs the relevant part
//! of Docker's default seccomp profile and then `exec`s hullward — the same filter a process in a
//! default Docker container lives under.

#[path = "support/sandbox.rs"]
mod support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use support::{Bg, Sandbox};

const ENV_SECRET: &str = "HW-DOTENV-SECRET-portable";

/// `docker-like MODE PROGRAM ARGS…`: MODE `enosys` answers `clone3` with ENOSYS (Docker's default
/// profile); `nons` also refuses `unshare` and `clone` with namespace flags with EPERM, as that
/// profile does for a container without CAP_SYS_ADMIN.
const WRAPPER: &str = include_str!("support/docker_like.c");

fn wrapper(sb: &Sandbox) -> PathBuf {
    let exe = sb.base.join("docker-like");
    support::compile_c(WRAPPER, &exe);
    exe
}

fn workspace() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(".env", &format!("{ENV_SECRET}\n"));
    sb.write("config.txt", "HW-CONFIG-OK\n");
    sb
}

/// `hullward run FLAGS -- sh -c SCRIPT` under the wrapper in `mode`.
fn contained(sb: &Sandbox, mode: &str, flags: &[&str], script: &str) -> support::Out {
    let mut c = sb.hullward();
    c.arg("run").args(flags).arg("--").args(["sh", "-c", script]);
    let mut w = std::process::Command::new(wrapper(sb));
    w.arg(mode).arg(c.get_program()).args(c.get_args()).current_dir(&sb.root).stdin(Stdio::null());
    w.env_clear();
    for (k, v) in c.get_envs() {
        if let Some(v) = v {
            w.env(k, v);
        }
    }
    support::output(&mut w)
}

#[test]
fn without_clone3_the_child_is_cloned_and_still_joins_its_cgroup() {
    let sb = workspace();
    // The wrapper's filter is real: clone3 is ENOSYS under it, and plain fork still works.
    let control = contained(&sb, "enosys", &["--yolo"], "echo yolo-ran");
    control.expect_code(0);
    assert!(control.stdout.contains("yolo-ran"), "{control}");

    let out = contained(&sb, "enosys", &[], "cat .env; cat config.txt");
    out.expect_code(0);
    assert!(!out.all().contains(ENV_SECRET), "the mask is gone\n{out}");
    assert!(out.stdout.contains("HW-CONFIG-OK"), "{out}");
    // Seen from the host while a call runs: its processes are in the call's own cgroup.
    let mark = sb.base.join("in-call");
    let mut c = sb.hullward();
    let script = format!("echo go > {}; exec sleep 5.75", sb.root.join("started").display());
    c.arg("run").arg("--").args(["sh", "-c", &script]);
    let mut w = std::process::Command::new(wrapper(&sb));
    w.arg("enosys").arg(c.get_program()).args(c.get_args()).current_dir(&sb.root);
    w.env_clear()
        .envs(c.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut call = Bg::spawn(&mut w);
    support::wait_file(&sb.root.join("started"), Duration::from_secs(10));
    let sleeper = sleeper("5.75");
    let cgroups: Vec<String> =
        std::fs::read_to_string(format!("/proc/{sleeper}/cgroup")).into_iter().collect();
    let _ = call.terminate(Duration::from_secs(5));
    let _ = std::fs::remove_file(mark);
    assert!(
        cgroups.iter().any(|c| c.lines().any(|l| l.starts_with("0::") && l.contains("/hullward/call-"))),
        "the call's process is not in its cgroup v2 leaf: {cgroups:?}"
    );
}

#[test]
fn cpu_limit_lands_in_the_calls_cgroup() {
    let sb = workspace();
    let cfg = sb.config("Sandbox:\n  Limits:\n    Cpu: 0.5\n");
    let mut c = sb.hullward();
    let script = format!("echo go > {}; exec sleep 6.25", sb.root.join("started").display());
    c.arg("--config").arg(&cfg).arg("run").arg("--").args(["sh", "-c", &script]);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut call = Bg::spawn(&mut c);
    support::wait_file(&sb.root.join("started"), Duration::from_secs(10));
    let pid = sleeper("6.25");
    let quota = cpu_quota(pid);
    let _ = call.terminate(Duration::from_secs(5));
    assert_eq!(quota.as_deref(), Some("50000 100000"), "the CPU limit is not in the call's cgroup");

    // The neighbour: without Limits.Cpu the call's CPU time is unbounded.
    let mut c = sb.hullward();
    let script = format!("echo go > {}; exec sleep 6.5", sb.root.join("started2").display());
    c.arg("run").arg("--").args(["sh", "-c", &script]).stdout(Stdio::null()).stderr(Stdio::null());
    let mut call = Bg::spawn(&mut c);
    support::wait_file(&sb.root.join("started2"), Duration::from_secs(10));
    let pid = sleeper("6.5");
    let quota = cpu_quota(pid);
    let _ = call.terminate(Duration::from_secs(5));
    assert!(quota.as_deref().is_none_or(|q| q.starts_with("max") || q.starts_with("-1")), "{quota:?}");

    // And a CPU limit that is no number of CPUs is a configuration error.
    let bad = sb.config("Sandbox:\n  Limits:\n    Cpu: 0\n");
    let mut c = sb.hullward();
    c.arg("--config").arg(&bad).arg("validate");
    let out = support::output(&mut c);
    assert_ne!(out.code, 0, "{out}");
    assert!(out.all().contains("Cpu"), "{out}");
}

/// The host pid of the call's `sleep` whose command line contains `needle` (not hullward's, whose
/// arguments contain it too).
fn sleeper(needle: &str) -> i32 {
    let comm = |pid: &i32| std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    for _ in 0..500 {
        if let Some(pid) =
            support::processes_matching(needle).into_iter().find(|pid| comm(pid).trim() == "sleep")
        {
            return pid;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("no sleep process for {needle}")
}

/// The CFS quota of `pid`'s cgroup, as `QUOTA PERIOD` (v2 `cpu.max`, or the v1 pair).
fn cpu_quota(pid: i32) -> Option<String> {
    let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    for line in cgroups.lines() {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        if controllers.is_empty() {
            let max = std::fs::read_to_string(format!("/sys/fs/cgroup{path}/cpu.max"))
                .or_else(|_| std::fs::read_to_string(format!("/sys/fs/cgroup/unified{path}/cpu.max")));
            if let Ok(m) = max {
                return Some(m.trim().to_string());
            }
        } else if controllers.split(',').any(|c| c == "cpu") {
            let dir = format!("/sys/fs/cgroup/{controllers}{path}");
            let quota = std::fs::read_to_string(format!("{dir}/cpu.cfs_quota_us")).ok()?;
            let period = std::fs::read_to_string(format!("{dir}/cpu.cfs_period_us")).ok()?;
            return Some(format!("{} {}", quota.trim(), period.trim()));
        }
    }
    None
}

/// `hullward FLAGS…` as uid/gid 65534 (a caller without any privilege), in `sb`'s root.
fn as_nobody(sb: &Sandbox, args: &[&str]) -> support::Out {
    let status = std::process::Command::new("chown").args(["-R", "65534:65534"]).arg(&sb.base).status();
    assert!(status.is_ok_and(|s| s.success()), "chown failed");
    let c = sb.hullward();
    let mut w = std::process::Command::new("setpriv");
    w.args(["--reuid", "65534", "--regid", "65534", "--clear-groups", "--"]).arg(c.get_program()).args(args);
    w.env_clear()
        .envs(c.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(&sb.root)
        .stdin(Stdio::null());
    support::output(&mut w)
}

#[test]
fn a_non_root_caller_gets_the_egress_proxy_in_its_own_network_namespace() {
    let sb = workspace();
    // A listener of the host: reachable from the host, never from the call.
    let host = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = host.local_addr().unwrap().port();
    let script = format!(
        "echo proxy=$HTTP_PROXY; cat .env; python3 -c '
import socket
s = socket.create_connection((\"127.0.0.1\", 3128)); s.sendall(b\"GET http://hw-not-allowed.invalid/ HTTP/1.1\\r\\nHost: hw-not-allowed.invalid\\r\\n\\r\\n\")
print(\"proxy says\", s.recv(12).decode())
try:
    socket.create_connection((\"127.0.0.1\", {port}), timeout=2); print(\"HOST REACHED\")
except OSError as e:
    print(\"host listener:\", e.errno)
'"
    );
    let out = as_nobody(
        &sb,
        &["run", "--no-strict", "--timeout", "20s", "--net", "proxy", "--", "sh", "-c", &script],
    );
    out.expect_code(0);
    assert!(out.stdout.contains("proxy=http://127.0.0.1:3128"), "{out}");
    assert!(out.stdout.contains("proxy says HTTP/1.1"), "the proxy did not answer inside the call\n{out}");
    assert!(!out.stdout.contains("HOST REACHED"), "{out}");
    assert!(!out.all().contains(ENV_SECRET), "{out}");
    // Only promises the machine cannot hold for this caller are dropped — never the network.
    assert!(!out.stderr.contains("network access through the proxy"), "{out}");
    drop(host);
}

/// Creates inotify instances until the kernel refuses; prints how many it got.
const INOTIFY_HOG: &str = "python3 -c '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while libc.inotify_init() >= 0:
    n += 1
print(\"instances\", n, \"errno\", ctypes.get_errno())
import time; time.sleep(float(__import__(\"sys\").argv[1]))
' ";

#[test]
fn a_call_cannot_take_all_of_its_callers_inotify_instances() {
    let sb = workspace();
    let limit: usize =
        std::fs::read_to_string("/proc/sys/fs/inotify/max_user_instances").unwrap().trim().parse().unwrap();
    let out = as_nobody(
        &sb,
        &["run", "--no-strict", "--timeout", "20s", "--", "sh", "-c", &format!("{INOTIFY_HOG} 0")],
    );
    out.expect_code(0);
    let got: usize =
        out.stdout.split_whitespace().nth(1).and_then(|n| n.parse().ok()).unwrap_or_else(|| panic!("{out}"));
    // The call hit its own namespace's limit (EMFILE), half of the caller's, not the caller's.
    assert!(got > 0 && got <= limit / 2, "the call took {got} of {limit}\n{out}");
    assert!(out.stdout.contains(&format!("errno {}", libc::EMFILE)), "{out}");
}
