//! Real-kernel battery, processes and kernel interfaces: other processes (ptrace, memory,
//! environ, signals), privileges (setuid, file capabilities), the system-call filter (io_uring,
//! x32, keyrings, bpf, mounts, namespaces, modules, TIOCSTI), and process lifetime (fork bomb,
//! detached descendants, timeout, output flood).
//!
//! Each refused call is asserted next to a call of the same kind that must keep working.
#![allow(unsafe_code)]

#[path = "support/sandbox.rs"]
mod support;

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{Bg, Sandbox};

fn sleeper() -> Bg {
    Bg::spawn(Command::new("sleep").arg("120"))
}

/// What the probe printed after `tag: `.
#[track_caller]
fn probe_result<'a>(out: &'a support::Out, tag: &str) -> &'a str {
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with(&format!("{tag}: ")))
        .unwrap_or_else(|| panic!("no line for {tag}\n{out}"));
    line.split_once(": ").map_or("", |(_, got)| got)
}

/// Asserts that the probe line for `what` reports `expected` ("OK" or "ERR EPERM" …).
#[track_caller]
fn probe_says(out: &support::Out, tag: &str, expected: &str) {
    let got = probe_result(out, tag);
    assert!(got.starts_with(expected), "{tag}: expected '{expected}', got '{got}'\n{out}");
}

/// `tag: $(./probe ARGS)` for each (tag, args) — one sandboxed call runs them all.
fn probes(cases: &[(&str, &str)]) -> String {
    cases.iter().map(|(tag, args)| format!("echo \"{tag}: $(./probe {args} 2>&1)\"; ")).collect()
}

/// Asserts that the probe line for `tag` reports one of the `errors` ("ERR EPERM", …).
#[track_caller]
fn probe_fails(out: &support::Out, tag: &str, errors: &[&str]) {
    let got = probe_result(out, tag);
    assert!(
        errors.iter().any(|e| got.starts_with(e)),
        "{tag}: expected one of {errors:?}, got '{got}'\n{out}"
    );
}

/// The errors of a system call aimed at a host pid: the filter refuses the call itself (EPERM),
/// or the pid names nothing in the call's PID namespace (ESRCH).
const UNREACHABLE: &[&str] = &["ERR EPERM", "ERR ESRCH"];

/// Asserts that PID 1 of the call, as `INIT=` printed it, is the call's own init (hullward's
/// small init program, given the call's error descriptor and program), not the host's init.
#[track_caller]
fn init_is_the_calls_own(out: &support::Out) {
    let init = out.value("INIT").unwrap_or_else(|| panic!("no INIT line\n{out}"));
    assert!(init.starts_with("hullward-pid1 "), "PID 1 is not the call's init\n{out}");
    assert_ne!(init, support::cmdline(1), "PID 1 is the host's init\n{out}");
}

/// A script line printing the call's PID 1 command line as `INIT=`.
const SHOW_INIT: &str = "echo \"INIT=$(tr '\\0' ' ' < /proc/1/cmdline)\"; ";

#[test]
fn ptrace_and_memory_of_outside_processes_are_refused() {
    let sb = Sandbox::new();
    sb.install_probe();
    let mut target = sleeper();
    let pid = target.pid().to_string();
    // Control: as root outside, the same probe attaches to and reads the sleeper.
    let control = support::probe_outside(&["ptrace", &pid]);
    assert!(control.stdout.starts_with("OK"), "control ptrace\n{control}");
    let control = support::probe_outside(&["memread", &pid]);
    assert!(control.stdout.starts_with("OK"), "control /proc/pid/mem\n{control}");

    let (out, sup) = sb.sh_knowing_supervisor(
        &[],
        &format!(
            "{}{SHOW_INIT}[ -e /proc/{pid} ] && echo OUTSIDE-VISIBLE; \
             [ -e /proc/$SUP ] && echo SUPERVISOR-VISIBLE; true",
            probes(&[
                ("ptrace-outside", &format!("ptrace {pid}")),
                ("ptrace-supervisor", "ptrace $SUP"),
                ("vmread-supervisor", "vmread $SUP"),
                ("vmread-outside", &format!("vmread {pid}")),
                ("mem-supervisor", "memread $SUP"),
                ("mem-outside", &format!("memread {pid}")),
                ("selfmem", "selfmem"),
                ("self-vmread", "vmread $$"),
            ])
        ),
    );
    out.expect_code(0);
    for tag in ["ptrace-outside", "ptrace-supervisor", "vmread-supervisor", "vmread-outside"] {
        probe_fails(&out, tag, UNREACHABLE);
    }
    // The call's procfs has no entry for a host process at all.
    probe_says(&out, "mem-supervisor", "ERR ENOENT");
    probe_says(&out, "mem-outside", "ERR ENOENT");
    for l in ["OUTSIDE-VISIBLE", "SUPERVISOR-VISIBLE"] {
        assert!(!out.has_line(l), "a host process is visible (supervisor {sup})\n{out}");
    }
    // And PID 1 is the call's own init, not the host's.
    init_is_the_calls_own(&out);
    // The targets are unharmed: running, and nobody attached.
    assert!(target.running(), "the outside process died\n{out}");
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    assert!(status.contains("TracerPid:\t0\n"), "the outside process is traced\n{status}");
    // The neighbour: a process reads its own memory through /proc.
    probe_says(&out, "selfmem", "OK selfmem own-memory-ok");
}

#[test]
fn environ_of_the_supervisor_and_outside_processes_is_unreachable_and_host_secrets_are_scrubbed() {
    let sb = Sandbox::new();
    let outside = Bg::spawn(Command::new("sleep").arg("120").env("HW_OUTSIDE_ENV", "HW-OUTSIDE-ENV-SECRET"));
    let opid = outside.pid();
    let script = format!(
        "{}cat /proc/$SUP/environ; cat /proc/{opid}/environ; {SHOW_INIT}env; \
         tr '\\0' '\\n' < /proc/self/environ",
        support::AWAIT_SUP
    );
    let mut c = sb.run_cmd(&["--env", "HW_PASSED"], &["sh", "-c", &script]);
    c.env("GITHUB_TOKEN", "ghp_HWHOSTSECRET0123456789")
        .env("AWS_SECRET_ACCESS_KEY", "HWAWSHOSTSECRET")
        .env("HW_PASSED", "HW-PASSED-VALUE");
    let (out, sup) = sb.run_knowing_supervisor(&mut c);
    out.expect_code(0);
    // Control: on the host, the planted secret is in the outside process's environment.
    let environ =
        String::from_utf8_lossy(&std::fs::read(format!("/proc/{opid}/environ")).unwrap()).into_owned();
    assert!(environ.contains("HW-OUTSIDE-ENV-SECRET"), "control: {environ}");
    assert!(!out.all().contains("HW-OUTSIDE-ENV-SECRET"), "{out}");
    assert!(!out.all().contains("HWHOSTSECRET") && !out.all().contains("HWAWSHOSTSECRET"), "{out}");
    assert!(!out.stdout.contains("GITHUB_TOKEN") && !out.stdout.contains("AWS_SECRET"), "{out}");
    for p in [sup, opid as i32] {
        assert!(out.stderr.contains(&format!("/proc/{p}/environ: No such file or directory")), "{out}");
    }
    init_is_the_calls_own(&out);
    // The neighbours: the child's own environment, and a variable passed by name.
    assert_eq!(out.stdout.matches("HW_PASSED=HW-PASSED-VALUE").count(), 2, "{out}");
    assert!(out.stdout.contains(&format!("HOME={}", sb.home.display())), "{out}");
}

#[test]
fn the_calls_init_exposes_neither_hullwards_environment_nor_its_memory() {
    let sb = Sandbox::new();
    // Searches the init's readable memory for the secret (spelt in two halves, so that the
    // script's own text, which is in the init's memory too, does not match).
    let scan = r#"python3 -c '
import sys
needle = b"HWHOST" + b"SECRET"
try:
    mem = open("/proc/1/mem", "rb")
except OSError as e:
    print("MEM=denied", e.errno); sys.exit()
hits = 0
for line in open("/proc/1/maps"):
    span, perms = line.split()[:2]
    lo, hi = (int(x, 16) for x in span.split("-"))
    if "r" in perms:
        try:
            mem.seek(lo); hits += mem.read(hi - lo).count(needle)
        except OSError:
            pass
print("MEM=hits", hits)
'"#;
    let script = format!("cat /proc/1/environ; cat /proc/$PPID/environ; echo; ls -l /proc/1/fd/; {scan}");
    let mut c = sb.run_cmd(&[], &["sh", "-c", &script]);
    c.env("GITHUB_TOKEN", "ghp_HWHOSTSECRET0123456789");
    let out = support::output(&mut c);
    out.expect_code(0);
    assert!(!out.all().contains("HWHOSTSECRET"), "the init's environment leaks host secrets\n{out}");
    assert!(!out.stdout.contains("/hullward/call-"), "the init shows the host's cgroup paths\n{out}");
    // Unreadable, or holding nothing of hullward's (an init exec'd with an empty environment).
    let mem = out.value("MEM").unwrap_or_else(|| panic!("{out}"));
    assert!(mem.starts_with("denied") || mem == "hits 0", "the init's memory holds host secrets\n{out}");
}

#[test]
fn the_calls_init_is_a_small_program_that_the_call_cannot_trace_and_that_reaps_orphans() {
    let sb = Sandbox::new();
    let started = Instant::now();
    let out = sb.sh("echo \"INIT=$(tr '\\0' ' ' < /proc/1/cmdline)\"; \
         echo \"RSS=$(awk '/^VmRSS/ {print $2}' /proc/1/status)\"; \
         cat /proc/1/environ >/dev/null 2>&1 && echo INIT-ENVIRON-READ; \
         tr '\\0' '\\n' < /proc/$$/environ | grep -q '^PATH=' && echo OWN-ENVIRON-READ; \
         (sh -c 'exit 0' &); (sleep 60 &); sleep 0.5; \
         echo \"ZOMBIES=$(cat /proc/[0-9]*/stat 2>/dev/null | awk '$3 == \"Z\"' | wc -l)\"; exit 5");
    out.expect_code(5);
    init_is_the_calls_own(&out);
    // A few pages of its own, not a copy of hullward.
    let rss: u64 = out.value("RSS").and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{out}"));
    assert!(rss < 1024, "the init holds {rss} kB\n{out}");
    // Undumpable: no process of the call reads it through /proc; the neighbour, the shell's own
    // entry, is readable.
    assert!(!out.has_line("INIT-ENVIRON-READ"), "the call read its init's environment\n{out}");
    assert!(out.has_line("OWN-ENVIRON-READ"), "{out}");
    // The orphan that exited was reaped; the one still sleeping ended with the program.
    assert_eq!(out.value("ZOMBIES").as_deref(), Some("0"), "{out}");
    assert!(started.elapsed() < Duration::from_secs(30), "an orphan kept the call alive\n{out}");
}

#[test]
fn signals_to_outside_processes_fail_while_own_children_can_be_killed() {
    let sb = Sandbox::new();
    sb.install_probe();
    let mut target = sleeper();
    let pid = target.pid();
    let (out, _sup) = sb.sh_knowing_supervisor(
        &[],
        &format!(
            "kill -TERM {pid}; echo shell-kill=$?; kill -KILL {pid}; \
             kill -TERM $SUP; echo shell-kill-sup=$?; \
             {} sleep 30 & own=$!; kill $own && wait $own; echo OWN-KILLED=$?; echo INIT-SURVIVED",
            probes(&[
                ("kill-outside", &format!("kill {pid} 9")),
                ("pidfd-outside", &format!("pidfd-kill {pid}")),
                ("kill-supervisor", "kill $SUP 15"),
                ("pidfd-supervisor", "pidfd-kill $SUP"),
                ("kill-init", "kill 1 9"),
                ("term-init", "kill 1 15"),
            ])
        ),
    );
    assert!(target.running(), "the outside process was killed\n{out}");
    assert!(out.stdout.contains("shell-kill=1") && out.stdout.contains("shell-kill-sup=1"), "{out}");
    for tag in ["kill-outside", "pidfd-outside", "kill-supervisor", "pidfd-supervisor"] {
        probe_fails(&out, tag, UNREACHABLE);
    }
    // The call's own init ignores signals from inside its namespace (the kernel drops them, kill
    // may still return 0): the call goes on and ends normally, and so does the supervisor.
    for tag in ["kill-init", "term-init"] {
        probe_fails(&out, tag, &["OK", "ERR EPERM"]);
    }
    assert!(out.stdout.contains("INIT-SURVIVED"), "{out}");
    out.expect_code(0);
    // The neighbour: the child signals its own descendant (143 = killed by SIGTERM).
    assert!(out.stdout.contains("OWN-KILLED=143"), "{out}");
}

/// Blocks SIGWINCH (default: ignored, so a stray one harms nobody), says so in the file named
/// by its argument, and sleeps: a SIGWINCH sent to it stays visible in its `ShdPnd`.
const WINCH_BLOCKED: &str = "import signal, sys, time
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGWINCH])
open(sys.argv[1], \"w\").write(\"ready\\n\")
time.sleep(120)";

/// Whether the SIGWINCH bit is set in the `ShdPnd:` line within `status`.
fn winch_pending(status: &str) -> bool {
    let hex = status.lines().find_map(|l| l.strip_prefix("ShdPnd:")).unwrap_or_else(|| panic!("{status}"));
    u64::from_str_radix(hex.trim(), 16).unwrap() & (1 << (libc::SIGWINCH - 1)) != 0
}

#[test]
fn kill_minus_one_reaches_only_the_calls_own_processes() {
    let sb = Sandbox::new();
    let ready = sb.base.join("host-ready");
    let mut host = Bg::spawn(Command::new("python3").arg("-c").arg(WINCH_BLOCKED).arg(&ready));
    support::wait_file(&ready, Duration::from_secs(5));
    let host_pid = host.pid();
    let host_status = || std::fs::read_to_string(format!("/proc/{host_pid}/status")).unwrap();
    let script = format!(
        "python3 -c '{WINCH_BLOCKED}' own-ready & own=$!; until [ -s own-ready ]; do sleep 0.01; done; \
         kill -WINCH -1; echo kill=$?; grep ShdPnd /proc/$own/status; kill $own"
    );
    // Strict, and without Landlock (whose signal scoping is then gone too).
    for degraded in [false, true] {
        let _ = std::fs::remove_file(sb.root.join("own-ready"));
        let flags: &[&str] = if degraded { &["--no-strict"] } else { &[] };
        let mut c = sb.run_cmd(flags, &["sh", "-c", &script]);
        if degraded {
            c.env("HULLWARD_LANDLOCK_ABI", "0");
        }
        let out = support::output(&mut c);
        out.expect_code(0);
        assert!(!winch_pending(&host_status()), "kill(-1) inside reached a host process\n{out}");
        // The neighbour: it reaches the call's own process.
        assert!(out.has_line("kill=0") && winch_pending(&out.stdout), "{out}");
    }
    assert!(host.running(), "the host process died");
    // Control: a SIGWINCH that does reach the host process shows.
    // SAFETY: kill(2) of our own child.
    unsafe { libc::kill(host_pid as i32, libc::SIGWINCH) };
    assert!(winch_pending(&host_status()), "control: SIGWINCH does not show as pending");
}

#[test]
fn host_process_command_lines_are_not_visible() {
    let sb = Sandbox::new();
    let secret = format!("HUNTER2-{}", support::mark());
    let _other =
        Bg::spawn(Command::new("bash").arg("-c").arg(format!("exec -a 'mysql -p{secret}' sleep 300")));
    // Control: on the host, anyone reads that command line.
    let host = support::wait_processes(&secret, 1, Duration::from_secs(5));
    let own = support::mark();
    let mut c = sb.marked(
        &[],
        &[
            "sh",
            "-c",
            &format!(
                "sleep 299.$HW_MARK & until grep -qa \"$HW_MARK\" /proc/$!/cmdline; do sleep 0.01; done; \
                 for f in /proc/[0-9]*/cmdline /proc/[0-9]*/task/*/cmdline /proc/[0-9]*/status \
                 /proc/[0-9]*/environ /proc/[0-9]*/stat; do tr '\\0' ' ' < $f 2>/dev/null; echo; done; \
                 [ -e /proc/{h} ] && echo HOST-PID-VISIBLE; \
                 echo \"OWN=$(tr '\\0' ' ' < /proc/$$/cmdline | cut -c1-5)\"; \
                 ifaces() {{ tail -n +3 $1 | cut -d: -f1 | tr -d ' ' | tr '\\n' ' '; }}; \
                 echo \"INIT_IFACES=$(ifaces /proc/1/net/dev)\"; \
                 echo \"OWN_IFACES=$(ifaces /proc/self/net/dev)\"; \
                 kill $!",
                h = host[0]
            ),
        ],
        &own,
    );
    let out = support::output(&mut c);
    out.expect_code(0);
    assert!(
        !out.all().contains(&secret) && !out.all().contains("mysql"),
        "a host command line is visible\n{out}"
    );
    assert!(!out.has_line("HOST-PID-VISIBLE"), "{out}");
    // /proc/1 is the call's init, in the call's network namespace: loopback only.
    assert_eq!(out.value("INIT_IFACES").as_deref(), Some("lo "), "{out}");
    // The neighbours: the child's own processes and network namespace.
    assert!(out.stdout.contains(&format!("sleep 299.{own}")), "{out}");
    assert_eq!(out.value("OWN").as_deref(), Some("sh -c"), "{out}");
    assert_eq!(out.value("OWN_IFACES").as_deref(), Some("lo "), "{out}");
}

#[test]
fn setuid_and_file_capability_binaries_gain_nothing() {
    let sb = Sandbox::new();
    sb.install_probe();
    let suid = sb.root.join("suid-probe");
    let fcap = sb.root.join("fcap-probe");
    std::fs::copy(support::probe(), &suid).unwrap();
    std::fs::copy(support::probe(), &fcap).unwrap();
    std::fs::set_permissions(&suid, std::fs::Permissions::from_mode(0o4755)).unwrap();
    // security.capability v2: effective, permitted = CAP_DAC_OVERRIDE | CAP_SYS_ADMIN.
    let mut caps = Vec::new();
    for w in [0x0200_0001u32, (1 << 1) | (1 << 21), 0, 0, 0] {
        caps.extend_from_slice(&w.to_le_bytes());
    }
    let path = std::ffi::CString::new(fcap.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: valid path and value buffer.
    let rc = unsafe {
        libc::setxattr(path.as_ptr(), c"security.capability".as_ptr(), caps.as_ptr().cast(), caps.len(), 0)
    };
    assert_eq!(rc, 0, "setting the file capability failed: {}", std::io::Error::last_os_error());
    // Control: for an unprivileged user outside, the setuid bit does give euid 0.
    for d in [&sb.base, &sb.root] {
        std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let control = support::output(
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(&suid)
            .arg("caps"),
    );
    assert!(control.stdout.contains("euid=0"), "control: setuid must work on this filesystem\n{control}");

    let out = sb.sh("for p in ./suid-probe ./fcap-probe; do echo \"== $p\"; $p caps 2>&1 | head -20; done; \
         echo '== plain'; ./probe caps");
    let sections: Vec<&str> = out.stdout.split("== ").filter(|s| !s.is_empty()).collect();
    for s in sections.iter().filter(|s| s.starts_with("./")) {
        assert!(s.contains("euid=0"), "{s}\n{out}");
        for set in ["CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"] {
            assert!(s.contains(&format!("{set}:\t0000000000000000")), "{set} not empty in {s}\n{out}");
        }
        assert!(s.contains("NoNewPrivs:\t1"), "{s}\n{out}");
    }
    assert!(out.stdout.contains("== plain\neuid=0"), "the plain neighbour must run\n{out}");
}

#[test]
fn system_call_filter_refuses_escapes_and_keeps_their_neighbours() {
    let sb = Sandbox::new();
    sb.write(".env", "HW-DOTENV-SECRET-seccomp\n");
    sb.write("config.txt", "HW-CONFIG-OK\n");
    sb.write("fake.ko", "not a module\n");
    std::fs::create_dir(sb.root.join("mnt")).unwrap();
    sb.install_probe();
    let out = sb.sh(&format!(
        "{} ./probe int80-getpid; echo int80=$?; unshare -r id; echo unshare-r=$?; unshare -m true; echo unshare-m=$?; \
         cat .env; mkfifo fifo && echo FIFO-OK; cd mnt && cd .. && echo CD-OK",
        probes(&[
            ("x32", "x32-getpid"),
            ("getpid", "getpid"),
            ("io_uring", "io_uring"),
            ("keyctl", "keyctl"),
            ("add_key", "add_key"),
            ("bpf", "bpf"),
            ("perf", "perf"),
            ("userfaultfd", "userfaultfd"),
            ("chroot", "chroot mnt"),
            ("init_module", "init_module"),
            ("finit_module", "finit_module fake.ko"),
            ("mount", "mount-tmpfs mnt"),
            ("bind", "bind config.txt mnt"),
            ("umount-mask", "umount $ROOT/.env"),
            ("umount-root", "umount $ROOT"),
            ("unshare-user", "unshare user"),
            ("unshare-mount", "unshare mount"),
            ("unshare-net", "unshare net"),
            ("unshare-pid", "unshare pid"),
            ("unshare-cgroup", "unshare cgroup"),
            ("unshare-files", "unshare files"),
            ("clone-user", "clone-ns user"),
            ("clone-mount", "clone-ns mount"),
            ("fork", "fork"),
            ("mknod", "mknod devnull"),
            ("personality-norandom", "personality 0x0040000"),
            ("personality-query", "personality 0xffffffff"),
        ])
    ));
    for tag in [
        "x32",
        "io_uring",
        "keyctl",
        "add_key",
        "bpf",
        "perf",
        "userfaultfd",
        "chroot",
        "init_module",
        "finit_module",
        "mount",
        "bind",
        "umount-mask",
        "umount-root",
        "unshare-user",
        "unshare-mount",
        "unshare-net",
        "unshare-pid",
        "unshare-cgroup",
        "clone-user",
        "clone-mount",
        "personality-norandom",
    ] {
        probe_says(&out, tag, "ERR EPERM");
    }
    // No capability for it, and no Landlock right either (EACCES).
    probe_says(&out, "mknod", "ERR E");
    for tag in ["getpid", "unshare-files", "fork", "personality-query"] {
        probe_says(&out, tag, "OK");
    }
    assert!(!out.stdout.contains("unshare-r=0") && !out.stdout.contains("unshare-m=0"), "{out}");
    // i386 system calls (int 0x80) kill the caller (SIGSYS: 128 + 31); they work outside.
    assert!(out.stdout.contains("int80=159"), "{out}");
    support::probe_outside(&["int80-getpid"]).expect_code(0);
    assert!(!out.stdout.contains("HW-DOTENV-SECRET"), "the mask came off\n{out}");
    assert!(out.stdout.contains("FIFO-OK") && out.stdout.contains("CD-OK"), "{out}");
    assert!(!sb.exists("devnull"), "{out}");
}

#[test]
fn proc_sys_and_sysrq_are_read_only_while_reading_them_works() {
    let sb = Sandbox::new();
    let before = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    let out = sb.sh("cat /proc/sys/kernel/hostname > /proc/sys/kernel/hostname && echo HOSTNAME-WRITTEN; \
         echo 3 > /proc/sys/vm/drop_caches && echo DROP-WRITTEN; echo h > /proc/sysrq-trigger && echo SYSRQ; \
         hostname \"$(hostname)\" && echo SETHOSTNAME; echo OSREL=$(cat /proc/sys/kernel/osrelease)");
    for bad in ["HOSTNAME-WRITTEN", "DROP-WRITTEN", "SYSRQ", "SETHOSTNAME"] {
        assert!(!out.stdout.contains(bad), "{bad}\n{out}");
    }
    let osrel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(out.value("OSREL").as_deref(), Some(osrel.trim()), "{out}");
    assert_eq!(std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap(), before);
}

const TIOCSTI_PY: &str = r#"
import errno, fcntl, os, sys, termios
def sti(fd, tag):
    try:
        fcntl.ioctl(fd, termios.TIOCSTI, b'#')
        print(tag, 'OK')
    except OSError as e:
        print(tag, 'ERR', errno.errorcode[e.errno])
    sys.stdout.flush()
sti(0, 'INHERITED')
m, s = os.openpty()
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(s, termios.TIOCSCTTY, 0)
    sti(s, 'OWN')
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    c = ctypes.c_char(b'#')
    # The kernel takes the command as 32 bits: high bits set must not slip past the filter.
    r = libc.syscall(16, s, ctypes.c_ulong(0x100000000 | termios.TIOCSTI), ctypes.byref(c))
    print('OWN-HIGHBITS', 'OK' if r == 0 else 'ERR ' + errno.errorcode[ctypes.get_errno()], flush=True)
    os._exit(0)
os.waitpid(pid, 0)
print('WINSZ', len(fcntl.ioctl(s, termios.TIOCGWINSZ, b'\0' * 8)))
"#;

fn pty() -> (OwnedFd, OwnedFd) {
    let (mut m, mut s) = (-1, -1);
    // SAFETY: openpty writes two descriptors into the given ints.
    let rc =
        unsafe { libc::openpty(&mut m, &mut s, std::ptr::null_mut(), std::ptr::null(), std::ptr::null()) };
    assert_eq!(rc, 0, "openpty: {}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned here.
    unsafe { (OwnedFd::from_raw_fd(m), OwnedFd::from_raw_fd(s)) }
}

#[test]
fn tiocsti_is_refused_on_the_inherited_and_on_an_own_terminal() {
    let sb = Sandbox::new();
    // Control: outside, a process without any capability injects into its own terminal.
    let (_m0, s0) = pty();
    let control = support::output(
        Command::new("setpriv")
            .args(["--bounding-set=-all", "--inh-caps=-all", "python3", "-c", TIOCSTI_PY])
            .stdin(Stdio::from(s0)),
    );
    assert!(control.stdout.contains("OWN OK"), "control: TIOCSTI works on this kernel\n{control}");
    assert!(control.stdout.contains("OWN-HIGHBITS OK"), "control: the kernel truncates\n{control}");

    // hullward's stdin is a terminal: the child gets it, and a private devpts for its own.
    let (_m, s) = pty();
    let mut c = sb.run_cmd(&["--hitl", "off"], &["python3", "-c", TIOCSTI_PY]);
    c.stdin(Stdio::from(s));
    let out = support::output(&mut c);
    out.expect_code(0);
    assert!(out.stdout.contains("INHERITED ERR EPERM"), "{out}");
    assert!(out.stdout.contains("OWN ERR EPERM"), "{out}");
    assert!(out.stdout.contains("OWN-HIGHBITS ERR EPERM"), "{out}");
    // The neighbour: other terminal ioctls work.
    assert!(out.stdout.contains("WINSZ 8"), "{out}");
}

#[test]
fn a_fork_bomb_is_bounded_timed_out_and_leaves_nothing_behind() {
    let sb = Sandbox::new();
    // The script forks once, for the subshell that starts the bomb: a shell forks every member
    // of a pipeline itself, so calling `bomb` here would make the script's own second fork race
    // the bomb for the last free slot (under load it lost: "Cannot fork", exit 2). `exec sleep`
    // needs no new process either.
    let bomb = sb.write("bomb.sh", "bomb() { bomb | bomb & }; (bomb) & exec sleep 60\n");
    let started = Instant::now();
    let out = sb.run(&["--timeout", "2s"], &["sh", &bomb.display().to_string()]);
    out.expect_code(124);
    // Not a benchmark: the tree is killed at the timeout instead of running its 60 s.
    assert!(started.elapsed() < Duration::from_secs(40), "{out}");
    assert!(out.stderr.contains("timed out"), "{out}");
    let left = support::processes_matching(&bomb.display().to_string());
    assert!(left.is_empty(), "bomb processes survived: {left:?}\n{out}");
}

const FORK_N: &str = r#"
import os, sys, time
n = 0
for i in range(40):
    try:
        pid = os.fork()
    except OSError as e:
        print('FORKFAIL', e.errno)
        break
    if pid == 0:
        time.sleep(2)
        os._exit(0)
    n += 1
print('FORKED', n)
sys.stdout.flush()
os._exit(0)
"#;

#[test]
fn the_process_limit_holds_for_root() {
    let sb = Sandbox::new();
    let cfg = sb.config("Sandbox:\n  Limits:\n    Processes: 16\n");
    let cfg = cfg.display().to_string();
    let limited = sb.run(&["--config", &cfg], &["python3", "-c", FORK_N]);
    let forked: u32 = limited
        .stdout
        .lines()
        .find_map(|l| l.strip_prefix("FORKED "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{limited}"));
    assert!(forked < 16, "{limited}");
    assert!(limited.stdout.contains(&format!("FORKFAIL {}", libc::EAGAIN)), "{limited}");
    // The neighbour: the default limit (512) lets 40 processes run.
    let normal = sb.run(&[], &["python3", "-c", FORK_N]);
    assert!(normal.stdout.contains("FORKED 40"), "{normal}");
}

/// Three detached descendants, each a `sleep` marked with `$HW_MARK` (see [`Sandbox::marked`]):
/// one in its own session, one ignoring TERM/HUP/INT, and a double-forked daemon in its own
/// session ignoring them too. Then `end`.
fn daemons(end: &str) -> String {
    format!(
        r#"
setsid sleep 300.${{HW_MARK}}1 &
(trap '' TERM HUP INT; exec sleep 301.${{HW_MARK}}2) &
python3 -c '
import os, signal
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        os.execvp("sleep", ["sleep", "302." + os.environ["HW_MARK"] + "3"])
    os._exit(0)
os.wait()
'
{end}
"#
    )
}

#[test]
fn detached_descendants_are_dead_when_run_returns() {
    let sb = Sandbox::new();
    let mark = support::mark();
    let script = daemons(&format!("{}\nexit 0", support::AWAIT_SEEN));
    let (out, seen) = sb.run_watched(&mut sb.marked(&[], &["sh", "-c", &script], &mark), &mark, 3);
    out.expect_code(0);
    assert_eq!(seen.len(), 3, "the three descendants were not all seen on the host: {seen:?}\n{out}");
    assert!(out.elapsed < Duration::from_secs(6), "run waited for the daemons\n{out}");
    let left = support::processes_matching(&mark);
    assert!(left.is_empty(), "{left:?} survived the call (seen {seen:?})\n{out}");
}

#[test]
fn the_timeout_returns_124_and_kills_the_whole_tree() {
    let sb = Sandbox::new();
    let mark = support::mark();
    let script = daemons("exec sleep 303.${HW_MARK}4");
    let (out, seen) =
        sb.run_watched(&mut sb.marked(&["--timeout", "2s"], &["sh", "-c", &script], &mark), &mark, 4);
    out.expect_code(124);
    assert!(out.elapsed < Duration::from_secs(7), "{out}");
    assert!(out.stderr.contains("timed out after 2s"), "{out}");
    assert_eq!(seen.len(), 4, "the program and its descendants were not all seen: {seen:?}\n{out}");
    let left = support::processes_matching(&mark);
    assert!(left.is_empty(), "{left:?} survived the timeout (seen {seen:?})\n{out}");
}

#[test]
fn an_output_flood_is_cut_at_the_budget_and_the_tree_killed() {
    let sb = Sandbox::new();
    let cfg = sb.config("Sandbox:\n  Limits:\n    OutputBytes: 65536\n");
    let cfg = cfg.display().to_string();
    let mark = support::mark();
    let script = format!("sleep 300.$HW_MARK & {}; (yes HW-FLOOD >&2 &); yes HW-FLOOD", support::AWAIT_SEEN);
    let (out, seen) =
        sb.run_watched(&mut sb.marked(&["--config", &cfg], &["sh", "-c", &script], &mark), &mark, 1);
    assert_eq!(out.code, 137, "{out}");
    // The child's bytes on stderr end where hullward's own message starts.
    let msg =
        out.stderr.find("hullward: output exceeded 65536 bytes").unwrap_or_else(|| panic!("no message"));
    let flood = out.raw_stdout.len() + msg;
    assert!(flood <= 65536, "{flood} bytes passed the 65536-byte budget");
    assert!(flood > 60000, "only {flood} bytes passed");
    assert!(out.elapsed < Duration::from_secs(6));
    assert_eq!(seen.len(), 1, "the background process was not seen on the host");
    assert!(support::processes_matching(&mark).is_empty(), "the tree survived the output limit");
    let flooders = support::processes_matching("HW-FLOOD");
    assert!(
        flooders.is_empty(),
        "a flooder survived: {:?}",
        flooders.iter().map(|&p| (p, support::cmdline(p))).collect::<Vec<_>>()
    );
    // The neighbour: output just below the budget passes byte for byte.
    let ok = sb.run(&["--config", &cfg], &["python3", "-c", "import sys; sys.stdout.write('y' * 60000)"]);
    ok.expect_code(0);
    assert_eq!(ok.raw_stdout, vec![b'y'; 60000]);
}

/// Call B, running in the background: strict, its own workspace, a credential in its
/// environment, and a marked `sleep`; it ends normally once `go` appears in its workspace.
struct CallB {
    call: Bg,
    mark: String,
    /// Host pids: the marked `sleep`, B's program (its shell), B's init, B's hullward.
    sleep: i32,
    program: i32,
    init: i32,
}

impl CallB {
    fn start(b: &Sandbox) -> CallB {
        b.write("private.txt", "HW-CALL-B-FILE\n");
        let mark = support::mark();
        let mut c = b.marked(
            &["--env", "HW_B_TOKEN", "--timeout", "20s"],
            &["sh", "-c", "sleep 300.$HW_MARK & until [ -e go ]; do sleep 0.01; done; kill $!; echo B-DONE"],
            &mark,
        );
        c.env("HW_B_TOKEN", "HW-CALL-B-CREDENTIAL").stdout(Stdio::null()).stderr(Stdio::null());
        let call = Bg::spawn(&mut c);
        let sleep = support::wait_processes(&mark, 1, Duration::from_secs(5))[0];
        let program = support::ppid(sleep).expect("B's program");
        let init = support::ppid(program).expect("B's init");
        assert_eq!(support::ppid(init), Some(call.pid() as i32), "B's process tree is not as expected");
        CallB { call, mark, sleep, program, init }
    }

    fn pids(&self) -> [i32; 4] {
        [self.sleep, self.program, self.init, self.call.pid() as i32]
    }

    /// Call A's script: every way at B's processes (by their host pids), at its workspace, and a
    /// listing of every command line A can see.
    fn attack(&self, b: &Sandbox) -> String {
        let r = b.root.display();
        let pids = self.pids().map(|p| p.to_string()).join(" ");
        format!(
            "for p in {pids}; do tr '\\0' '\\n' < /proc/$p/environ; cat /proc/$p/root{r}/private.txt; \
             echo planted > /proc/$p/root{r}/planted.txt; ls /proc/$p/fd && echo LISTED-FD; \
             [ -e /proc/$p ] && echo VISIBLE-$p; kill -9 $p; echo kill-$p=$?; done; \
             cat {r}/private.txt; echo planted > {r}/planted.txt; \
             for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < $f; echo; done; \
             echo STATUS=$(grep -c State /proc/self/status)"
        )
    }

    /// Asserts that call A's attack `out` reached nothing of B, then lets B end normally.
    #[track_caller]
    fn assert_unreached(mut self, b: &Sandbox, out: &support::Out) {
        for p in self.pids() {
            assert!(support::alive(p), "call A killed B's process {p}\n{out}");
        }
        assert!(self.call.running(), "call A killed call B\n{out}");
        assert!(!out.all().contains("HW-CALL-B"), "call A read call B\n{out}");
        assert!(!out.all().contains(&self.mark), "call A sees call B's processes\n{out}");
        assert!(!out.has_line("LISTED-FD"), "call A listed B's descriptors\n{out}");
        for p in self.pids() {
            assert!(!out.has_line(&format!("VISIBLE-{p}")), "call A sees B's process {p}\n{out}");
            assert!(out.has_line(&format!("kill-{p}=1")), "{out}");
        }
        assert!(!b.exists("planted.txt"), "call A wrote into call B's workspace\n{out}");
        // The neighbours: A's own processes and their public information.
        assert!(out.stdout.lines().any(|l| l.starts_with("sh -c ")), "{out}");
        assert_eq!(out.value("STATUS").as_deref(), Some("1"), "{out}");
        out.expect_code(0);
        // B ends normally, and all of it.
        std::fs::write(b.root.join("go"), "").unwrap();
        assert_eq!(self.call.wait_exit(Duration::from_secs(10)), Some(0), "B did not end normally");
        assert!(support::processes_matching(&self.mark).is_empty(), "B's sleep survived B");
    }
}

#[test]
fn concurrent_calls_cannot_reach_each_other() {
    let (a, b) = (Sandbox::new(), Sandbox::new());
    let call = CallB::start(&b);
    let out = a.sh(&call.attack(&b));
    call.assert_unreached(&b, &out);
}

#[test]
fn a_degraded_call_cannot_reach_a_concurrent_strict_call() {
    let (a, b) = (Sandbox::new(), Sandbox::new());
    let call = CallB::start(&b);
    let mut c = a.run_cmd(&["--no-strict"], &["sh", "-c", &call.attack(&b)]);
    c.env("HULLWARD_LANDLOCK_ABI", "0");
    let out = support::output(&mut c);
    assert!(out.stderr.contains("note: Landlock is not used"), "not degraded\n{out}");
    call.assert_unreached(&b, &out);
}

#[test]
fn killing_hullward_kills_the_call() {
    let sb = Sandbox::new();
    let mark = support::mark();
    let mut c = sb.marked(&["--timeout", "20s"], &["sh", "-c", "exec sleep 15.$HW_MARK"], &mark);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut call = Bg::spawn(&mut c);
    let pid = support::wait_processes(&mark, 1, Duration::from_secs(5))[0];
    let init = support::ppid(pid).expect("the call's init");
    assert_eq!(support::ppid(init), Some(call.pid() as i32), "the call's process tree is not as expected");
    // Read from the host's cgroup namespace: the host paths of the call's cgroups.
    let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    let _ = call.child.kill();
    let _ = call.child.wait();
    let dead =
        support::wait_dead(pid, Duration::from_secs(2)) && support::wait_dead(init, Duration::from_secs(1));
    if !dead {
        for p in [pid, init] {
            // SAFETY: kill(2) of the orphans this test created.
            unsafe { libc::kill(p, libc::SIGKILL) };
            support::wait_dead(p, Duration::from_secs(2));
        }
    }
    // The dead hullward could not remove the call's cgroups; until a later call sweeps them, this
    // test does (their removal is not asserted).
    let name = cgroups.lines().find_map(|l| l.split("/hullward/").nth(1)).map(str::to_string);
    let mut leftovers = Vec::new();
    if let (Some(name), Ok(dirs)) = (name, std::fs::read_dir("/sys/fs/cgroup")) {
        for d in dirs.flatten() {
            for sub in ["hullward", "unified/hullward"] {
                let p = d.path().join(sub).join(&name);
                if p.is_dir() && std::fs::remove_dir(&p).is_ok() {
                    leftovers.push(p);
                }
            }
        }
    }
    if !leftovers.is_empty() {
        eprintln!("note: the SIGKILLed hullward left its call's cgroups behind: {leftovers:?}");
    }
    assert!(dead, "the sandboxed program outlived a SIGKILLed hullward (and left {leftovers:?})");
    assert!(support::processes_matching(&mark).is_empty(), "a marked process survived");
}

#[test]
fn inherited_descriptors_are_closed() {
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;
    let sb = Sandbox::new();
    // hullward inherits an open directory descriptor of the HOME (fd 7, not close-on-exec).
    let home = std::fs::File::open(&sb.home).unwrap();
    let raw = home.as_raw_fd();
    let mut c = sb.run_cmd(
        &[],
        &["sh", "-c", "ls /proc/self/fd | tr '\\n' ' '; echo; cat /proc/self/fd/7/.ssh/id_rsa; cat <&7"],
    );
    // SAFETY: dup2 in the forked child before exec; async-signal-safe.
    unsafe {
        c.pre_exec(move || {
            if libc::dup2(raw, 7) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = support::output(&mut c);
    drop(home);
    assert!(!out.all().contains(support::SSH_KEY), "{out}");
    // The neighbour: the standard descriptors are there (ls also shows its own directory fd).
    let fds: Vec<&str> = out.stdout.lines().next().unwrap_or_default().split_whitespace().collect();
    assert_eq!(&fds[..3], ["0", "1", "2"], "{out}");
    assert!(!fds.contains(&"7"), "fd 7 leaked into the child\n{out}");
}

#[test]
fn host_sysv_ipc_objects_are_invisible() {
    let sb = Sandbox::new();
    let made = support::output(Command::new("ipcmk").args(["-M", "4096"]));
    made.expect_code(0);
    let id: String = made.stdout.split_whitespace().last().unwrap().to_string();
    let out = sb.sh(&format!(
        "ipcs -m | grep -c ' {id} ' ; ipcmk -M 4096 >/dev/null && echo OWN-SHM=$(ipcs -m | grep -c 0x)"
    ));
    let _ = support::output(Command::new("ipcrm").args(["-m", &id]));
    assert!(out.stdout.starts_with("0\n"), "the host's shm segment is visible\n{out}");
    // The neighbour: the child's own IPC namespace works.
    assert_eq!(out.value("OWN-SHM").as_deref(), Some("1"), "{out}");
}

/// A call that outgrows its memory limit is killed, and only it: hullward ends normally and says
/// so. At 64 MiB the child shared hullward's memory until it executed (`sys::spawn_child`); below
/// that floor it was a copy. The OOM killer kills every process using the memory of the one it
/// chooses, so a sharer still alive at that moment would have taken hullward with it.
#[test]
fn an_oom_kill_takes_the_call_and_never_hullward_on_either_side_of_the_shared_memory_floor() {
    use std::os::unix::process::ExitStatusExt;
    let sb = Sandbox::new();
    for limit in [64u64 << 20, 32 << 20] {
        let cfg = sb.config(&format!("Sandbox:\n  Limits:\n    MemoryBytes: {limit}\n"));
        let grow = "import sys\nb = bytearray(int(sys.argv[1]) << 20)\nb[::4096] = b'x' * len(b[::4096])\nprint('GREW')";
        let run = |mib: &str| {
            let mut c = sb.hullward();
            c.arg("--config").arg(&cfg).args(["run", "--", "python3", "-c", grow, mib]);
            let status = c.output().unwrap();
            (status.status, String::from_utf8_lossy(&status.stdout).into_owned())
        };
        let (status, stdout) = run("512");
        assert_eq!(status.signal(), None, "hullward itself was killed at a {limit}-byte limit");
        assert!(!stdout.contains("GREW"), "512 MiB fit in a {limit}-byte limit");
        assert_ne!(status.code(), Some(0), "the call that outgrew {limit} bytes succeeded");
        // The neighbour: an allocation within the limit.
        let (status, stdout) = run("4");
        assert_eq!((status.code(), stdout.trim()), (Some(0), "GREW"), "at a {limit}-byte limit");
    }
}
