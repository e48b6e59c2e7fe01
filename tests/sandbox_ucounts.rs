//! Real-kernel battery, per-user kernel counters: the kernel counts some objects per user — inotify
//! instances and watches, fanotify groups, queued signals, POSIX message-queue bytes — so a child
//! that runs as the same user as hullward (root's child is uid 0, like every root process of the
//! host) could take the whole allowance and leave the host's own processes with `EMFILE`/`EAGAIN`
//! for as long as the call lives.
//!
//! Each case runs a hog in a sandboxed child that takes as many of the objects as the kernel gives
//! it and then stays alive; meanwhile the test — the same user on the host — must still get one.
//! Next to it, the legitimate neighbour: the child can still use a handful of them normally.
//!
//! Not covered because the child cannot reach them: the namespace counters (`unshare`, `clone`
//! with namespace flags and `setns` are refused by the seccomp filter, see `sandbox_proc`), and
//! `RLIMIT_NPROC` (root is exempt from it, and the call's pids cgroup bounds its processes).
//! `RLIMIT_MEMLOCK`'s per-user count binds only processes without `CAP_IPC_LOCK`, which host
//! root's have.

#[path = "support/sandbox.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use support::{compile_c, Sandbox};

/// `hog take KIND`: takes objects of KIND until the kernel refuses one, prints
/// `TOOK <kind> <count> <errno name>`, creates `.hw-held` and holds them until `.hw-release`
/// appears (at most 20 s). `hog try KIND`: takes one, prints `OK <kind>` or `ERR <errno> <kind>`.
/// `hog use N`: N inotify instances, each watching a file of its own, and one event read from
/// each after the file is written.
const HOG: &str = r#"
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <mqueue.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *en(void) { const char *n = strerrorname_np(errno); return n ? n : "E?"; }

static int one(const char *kind, int i) {
    if (!strcmp(kind, "inotify")) return inotify_init1(IN_CLOEXEC);
    if (!strcmp(kind, "fanotify")) return fanotify_init(FAN_CLASS_NOTIF | FAN_REPORT_FID, O_RDONLY);
    if (!strcmp(kind, "sigqueue")) {
        union sigval v = { .sival_int = i };
        return sigqueue(getpid(), SIGRTMIN, v);
    }
    if (!strcmp(kind, "mqueue")) {
        char name[64];
        snprintf(name, sizeof name, "/hw-hog-%d-%d", (int)getpid(), i);
        struct mq_attr a = { .mq_maxmsg = 10, .mq_msgsize = 8192 };
        int q = mq_open(name, O_CREAT | O_EXCL | O_RDWR, 0600, &a);
        if (q >= 0) mq_unlink(name);
        return q;
    }
    fprintf(stderr, "unknown kind %s\n", kind);
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 3) return 2;
    sigset_t rt;
    sigemptyset(&rt);
    sigaddset(&rt, SIGRTMIN);
    sigprocmask(SIG_BLOCK, &rt, NULL);
    const char *kind = argv[2];
    if (!strcmp(argv[1], "try")) {
        if (one(kind, 0) < 0) { printf("ERR %s %s\n", en(), kind); return 1; }
        printf("OK %s\n", kind);
        return 0;
    }
    if (!strcmp(argv[1], "use")) {
        int n = atoi(kind), ok = 0;
        for (int i = 0; i < n; i++) {
            char path[64];
            snprintf(path, sizeof path, "watched-%d", i);
            int f = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
            int in = inotify_init1(IN_CLOEXEC);
            if (f < 0 || in < 0 || inotify_add_watch(in, path, IN_MODIFY) < 0) {
                printf("ERR %s use %d\n", en(), i);
                return 1;
            }
            char ev[4096];
            if (write(f, "x", 1) == 1 && read(in, ev, sizeof ev) > 0) ok++;
        }
        printf("USED %d\n", ok);
        return 0;
    }
    int count = 0;
    while (count < 1000000 && one(kind, count) >= 0) count++;
    printf("TOOK %s %d %s\n", kind, count, en());
    fflush(stdout);
    close(open(".hw-held", O_CREAT | O_WRONLY, 0644));
    for (int i = 0; i < 2000 && access(".hw-release", F_OK) != 0; i++) usleep(10000);
    return 0;
}
"#;

/// The cases take the same counters: one at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn hog() -> &'static Path {
    static HOG_BIN: OnceLock<PathBuf> = OnceLock::new();
    HOG_BIN.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sandbox-ucounts");
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join(format!("hog-{}", std::process::id()));
        compile_c(HOG, &exe);
        exe
    })
}

/// The hog in the sandbox's root, for the child.
fn install(sb: &Sandbox) {
    std::fs::copy(hog(), sb.root.join("hog")).unwrap();
}

/// One attempt by the test itself, on the host.
fn host_try(kind: &str) -> support::Out {
    support::output(Command::new(hog()).args(["try", kind]).stdin(Stdio::null()))
}

/// Starts `hog take KIND` in a sandboxed child and waits until it holds everything it got.
fn take(sb: &Sandbox, kind: &str) -> (Child, Instant) {
    let start = Instant::now();
    let child = sb
        .run_cmd(&["--timeout", "25s"], &["./hog", "take", kind])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn hullward");
    let held = sb.root.join(".hw-held");
    while !held.exists() {
        assert!(start.elapsed() < Duration::from_secs(20), "the hog never held its {kind}");
        std::thread::sleep(Duration::from_millis(10));
    }
    (child, start)
}

/// Lets the hog go and returns what it printed.
fn release(sb: &Sandbox, mut child: Child, start: Instant) -> support::Out {
    std::fs::write(sb.root.join(".hw-release"), "").unwrap();
    let out = support::finish(&mut child, start);
    out.expect_code(0);
    out
}

/// While a child holds every object of `kind` it could get, the host still gets one; and the
/// child did take some (the hog really ran into a limit of its own).
#[track_caller]
fn host_keeps_headroom(kind: &str) {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(host_try(kind).code, 0, "the host cannot take a {kind} even before the call");
    let sb = Sandbox::new();
    install(&sb);
    let (child, start) = take(&sb, kind);
    let during = host_try(kind);
    let out = release(&sb, child, start);
    let took = out.value_after("TOOK").unwrap_or_else(|| panic!("no TOOK line\n{out}"));
    let count: u64 = took.split(' ').nth(1).and_then(|n| n.parse().ok()).unwrap();
    assert!(count > 0, "the child could not take a single {kind}: {took}\n{out}");
    assert_eq!(
        during.code, 0,
        "while the sandboxed child held {count} of them, host root could not take a {kind}: \
         {during}\nchild: {took}"
    );
}

trait ValueAfter {
    fn value_after(&self, tag: &str) -> Option<String>;
}

impl ValueAfter for support::Out {
    fn value_after(&self, tag: &str) -> Option<String> {
        let prefix = format!("{tag} ");
        self.stdout.lines().find_map(|l| l.strip_prefix(&prefix)).map(str::to_string)
    }
}

#[test]
fn the_child_cannot_take_every_inotify_instance_of_its_user() {
    host_keeps_headroom("inotify");
}

#[test]
fn the_child_cannot_take_every_fanotify_group_of_its_user() {
    let probe = host_try("fanotify");
    if probe.stdout.contains("EINVAL") || probe.stdout.contains("ENOSYS") {
        eprintln!("skipped: this kernel has no fanotify with FAN_REPORT_FID");
        return;
    }
    host_keeps_headroom("fanotify");
}

#[test]
fn the_child_cannot_queue_every_signal_its_user_may_have_pending() {
    host_keeps_headroom("sigqueue");
}

#[test]
fn the_child_cannot_reach_the_message_queue_bytes_of_its_user() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let sb = Sandbox::new();
    install(&sb);
    assert_eq!(host_try("mqueue").code, 0, "the host cannot open a message queue");
    // Landlock refuses opening a queue (its file lies in no granted tree); where that did not
    // hold, the halved RLIMIT_MSGQUEUE would (see the next test).
    let out = sb.run(&[], &["./hog", "try", "mqueue"]);
    assert!(out.has_line("ERR EACCES mqueue"), "{out}");
}

#[test]
fn the_child_gets_half_of_the_callers_per_user_rlimits() {
    let sb = Sandbox::new();
    let limit = |text: &str, name: &str| -> u64 {
        let line = text.lines().find(|l| l.starts_with(name)).unwrap_or_else(|| panic!("{name}: {text}"));
        line[name.len()..].split_whitespace().next().unwrap().parse().unwrap()
    };
    let host = std::fs::read_to_string("/proc/self/limits").unwrap();
    let out = sb.run(&[], &["cat", "/proc/self/limits"]);
    out.expect_code(0);
    for name in ["Max pending signals", "Max msgqueue size"] {
        assert_eq!(limit(&out.stdout, name), limit(&host, name) / 2, "{name}\n{out}");
    }
}

#[test]
fn root_s_child_sees_file_ownership_and_ids_as_the_host_does() {
    let sb = Sandbox::new();
    let f = sb.write("owned", "x");
    std::os::unix::fs::chown(&f, Some(1234), Some(4321)).unwrap();
    let out = sb.run(&[], &["sh", "-c", "stat -c '%u:%g' owned; id -u; cat /proc/self/uid_map"]);
    out.expect_code(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert_eq!(lines[0], "1234:4321", "{out}");
    assert_eq!(lines[1], "0", "{out}");
    assert_eq!(lines[2].split_whitespace().collect::<Vec<_>>(), ["0", "0", "4294967295"], "{out}");
}

#[test]
fn the_child_uses_a_handful_of_inotify_instances_normally() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let sb = Sandbox::new();
    install(&sb);
    let out = sb.run(&[], &["./hog", "use", "16"]);
    out.expect_code(0);
    assert!(out.has_line("USED 16"), "{out}");
}

#[test]
fn the_child_queues_signals_and_opens_a_fanotify_group_normally() {
    let _one_at_a_time = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let sb = Sandbox::new();
    install(&sb);
    let out = sb.run(&[], &["sh", "-c", "./hog try sigqueue; ./hog try fanotify"]);
    assert!(out.has_line("OK sigqueue"), "{out}");
    if host_try("fanotify").code == 0 {
        assert!(out.has_line("OK fanotify"), "{out}");
    }
}

#[test]
fn explain_and_doctor_say_where_the_counters_are_charged() {
    let sb = Sandbox::new();
    let explain = support::output(sb.hullward().args(["explain", "--", "true"]));
    explain.expect_code(0);
    assert!(explain.stdout.contains("counters:     inotify and fanotify: at most half"), "{explain}");
    let yolo = support::output(sb.hullward().args(["explain", "--yolo", "--", "true"]));
    assert!(yolo.stdout.contains("inotify and fanotify: shared with the caller's user"), "{yolo}");
    let doctor = support::output(sb.hullward().args(["doctor", "--json"]));
    let report: serde_json::Value = serde_json::from_str(&doctor.stdout).unwrap();
    assert!(report["counters"].as_str().unwrap().contains("at most half"), "{doctor}");
}

#[test]
fn the_child_s_user_namespace_has_half_of_the_callers_notify_limits() {
    let sb = Sandbox::new();
    let names = ["max_inotify_instances", "max_inotify_watches", "max_fanotify_groups", "max_fanotify_marks"];
    let host: Vec<Option<u64>> = names
        .iter()
        .map(|n| {
            std::fs::read_to_string(format!("/proc/sys/user/{n}")).ok().and_then(|v| v.trim().parse().ok())
        })
        .collect();
    let script: String =
        names.iter().map(|n| format!("echo {n}=$(cat /proc/sys/user/{n} 2>/dev/null); ")).collect();
    let out = sb.run(&[], &["sh", "-c", &script]);
    out.expect_code(0);
    for (name, host) in names.iter().zip(host) {
        let Some(host) = host else { continue };
        let inside: u64 =
            out.value(name).and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{name}\n{out}"));
        assert_eq!(inside, (host / 2).max(1), "{name}\n{out}");
    }
}
