//! Real-kernel battery, processes and kernel interfaces: other processes (ptrace, memory,
//! environ, signals), privileges (setuid, file capabilities), the system-call filter (io_uring,
//! x32, keyrings, bpf, mounts, namespaces, modules, TIOCSTI), and process lifetime (fork bomb,
//! detached descendants, timeout, output flood).
//!
//! Each refused call is asserted next to a call of the same kind that must keep working.

#[path = "support/sandbox.rs"]
mod support;

use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::fs::PermissionsExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use support::{alive, Bg, Sandbox};

fn sleeper() -> Bg {
    Bg::spawn(Command::new("sleep").arg("120"))
}

/// Asserts that the probe line for `what` reports `expected` ("OK" or "ERR EPERM" …).
#[track_caller]
fn probe_says(out: &support::Out, tag: &str, expected: &str) {
    let line = out
        .stdout
        .lines()
        .find(|l| l.starts_with(&format!("{tag}: ")))
        .unwrap_or_else(|| panic!("no line for {tag}\n{out}"));
    let got = line.split_once(": ").unwrap().1;
    assert!(got.starts_with(expected), "{tag}: expected '{expected}', got '{got}'\n{out}");
}

/// `tag: $(./probe ARGS)` for each (tag, args) — one sandboxed call runs them all.
fn probes(cases: &[(&str, &str)]) -> String {
    cases.iter().map(|(tag, args)| format!("echo \"{tag}: $(./probe {args} 2>&1)\"; ")).collect()
}

#[test]
fn ptrace_and_memory_of_outside_processes_are_refused() {
    let sb = Sandbox::new();
    sb.install_probe();
    let target = sleeper();
    let pid = target.pid().to_string();
    // Control: as root outside, the same probe attaches to and reads the sleeper.
    let control = support::probe_outside(&["ptrace", &pid]);
    assert!(control.stdout.starts_with("OK"), "control ptrace\n{control}");
    let control = support::probe_outside(&["memread", &pid]);
    assert!(control.stdout.starts_with("OK"), "control /proc/pid/mem\n{control}");

    let out = sb.sh(&probes(&[
        ("ptrace-outside", &format!("ptrace {pid}")),
        ("ptrace-supervisor", "ptrace $PPID"),
        ("vmread-supervisor", "vmread $PPID"),
        ("vmread-outside", &format!("vmread {pid}")),
        ("mem-supervisor", "memread $PPID"),
        ("mem-outside", &format!("memread {pid}")),
        ("mem-init", "memread 1"),
        ("selfmem", "selfmem"),
        ("self-vmread", "vmread $$"),
    ]));
    probe_says(&out, "ptrace-outside", "ERR EPERM");
    probe_says(&out, "ptrace-supervisor", "ERR EPERM");
    probe_says(&out, "vmread-supervisor", "ERR EPERM");
    probe_says(&out, "vmread-outside", "ERR EPERM");
    probe_says(&out, "mem-supervisor", "ERR EACCES");
    probe_says(&out, "mem-outside", "ERR EACCES");
    probe_says(&out, "mem-init", "ERR EACCES");
    // The neighbour: a process reads its own memory through /proc.
    probe_says(&out, "selfmem", "OK selfmem own-memory-ok");
}

#[test]
fn environ_of_the_supervisor_and_init_is_unreadable_and_host_secrets_are_scrubbed() {
    let sb = Sandbox::new();
    let mut c = sb.run_cmd(
        &["--env", "HW_PASSED"],
        &[
            "sh",
            "-c",
            "cat /proc/$PPID/environ; cat /proc/1/environ; env; tr '\\0' '\\n' < /proc/self/environ",
        ],
    );
    c.env("GITHUB_TOKEN", "ghp_HWHOSTSECRET0123456789")
        .env("AWS_SECRET_ACCESS_KEY", "HWAWSHOSTSECRET")
        .env("HW_PASSED", "HW-PASSED-VALUE");
    let out = support::output(&mut c);
    out.expect_code(0);
    assert!(!out.all().contains("HWHOSTSECRET") && !out.all().contains("HWAWSHOSTSECRET"), "{out}");
    assert!(!out.stdout.contains("GITHUB_TOKEN") && !out.stdout.contains("AWS_SECRET"), "{out}");
    assert!(out.stderr.contains("environ: Permission denied"), "{out}");
    // The neighbours: the child's own environment, and a variable passed by name.
    assert_eq!(out.stdout.matches("HW_PASSED=HW-PASSED-VALUE").count(), 2, "{out}");
    assert!(out.stdout.contains(&format!("HOME={}", sb.home.display())), "{out}");
}

#[test]
fn signals_to_outside_processes_fail_while_own_children_can_be_killed() {
    let sb = Sandbox::new();
    sb.install_probe();
    let mut target = sleeper();
    let pid = target.pid();
    let out = sb.sh(&format!(
        "kill -TERM {pid}; echo shell-kill=$?; kill -KILL {pid}; \
         {} sleep 30 & own=$!; kill $own && wait $own; echo OWN-KILLED=$?",
        probes(&[
            ("kill-outside", &format!("kill {pid} 9")),
            ("pidfd-outside", &format!("pidfd-kill {pid}")),
            ("kill-supervisor", "kill $PPID 15"),
            ("kill-init", "kill 1 0"),
        ])
    ));
    assert!(target.running(), "the outside process was killed\n{out}");
    assert!(out.stdout.contains("shell-kill=1"), "{out}");
    probe_says(&out, "kill-outside", "ERR EPERM");
    probe_says(&out, "pidfd-outside", "ERR EPERM");
    probe_says(&out, "kill-supervisor", "ERR EPERM");
    probe_says(&out, "kill-init", "ERR EPERM");
    // The neighbour: the child signals its own descendant (143 = killed by SIGTERM).
    assert!(out.stdout.contains("OWN-KILLED=143"), "{out}");
}

#[test]
#[ignore = "BUG: no PID namespace and /proc is the host's: every host process's command line \
            (and status, mountinfo, and /proc/1/net/{tcp,unix,dev}: the host's connections and \
            interfaces) is readable inside, e.g. `mysql -pPASSWORD` or a token on a command line"]
fn host_process_command_lines_are_not_visible() {
    let sb = Sandbox::new();
    let tok = support::token("argv");
    let _other = Bg::spawn(Command::new("python3").arg("-c").arg("import time; time.sleep(120)").arg(&tok));
    std::thread::sleep(Duration::from_millis(200));
    let out = sb.sh(r#"for f in /proc/[0-9]*/cmdline; do tr '\0' ' ' < $f 2>/dev/null; echo; done
           echo "OWN=$(tr '\0' ' ' < /proc/$$/cmdline | cut -c1-5)"
           echo "HOST_IFACES=$(tail -n +3 /proc/1/net/dev | wc -l)"
           echo "OWN_IFACES=$(tail -n +3 /proc/self/net/dev | wc -l)""#);
    let leaked: Vec<&str> = out.stdout.lines().filter(|l| l.contains(&tok)).take(3).collect();
    assert!(leaked.is_empty(), "a host process's argv is visible inside: {leaked:?}");
    assert_eq!(out.value("HOST_IFACES"), out.value("OWN_IFACES"), "the host's netns shows in /proc/1/net");
    // The neighbours: the child's own command line and network namespace.
    assert_eq!(out.value("OWN").as_deref(), Some("sh -c"), "{out}");
    assert_eq!(out.value("OWN_IFACES").as_deref(), Some("1"), "{out}");
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
    let bomb = sb.write("bomb.sh", "bomb() { bomb | bomb & }; bomb; sleep 60\n");
    let started = Instant::now();
    let out = sb.run(&["--timeout", "2s"], &["sh", &bomb.display().to_string()]);
    out.expect_code(124);
    assert!(started.elapsed() < Duration::from_secs(8), "{out}");
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

const DAEMONS: &str = r#"
setsid sleep 300 & echo SETSID=$!
(trap '' TERM HUP INT; exec sleep 301) & echo IGNORER=$!
python3 -c '
import os, signal, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(s, signal.SIG_IGN)
        print("DAEMON=%d" % os.getpid(), flush=True)
        time.sleep(300)
    os._exit(0)
os.wait()
'
sleep 0.3
exit 0
"#;

fn pids_in(out: &support::Out, keys: &[&str]) -> Vec<i32> {
    keys.iter()
        .map(|k| out.value(k).and_then(|v| v.trim().parse().ok()).unwrap_or_else(|| panic!("{k}\n{out}")))
        .collect()
}

#[test]
fn detached_descendants_are_dead_when_run_returns() {
    let sb = Sandbox::new();
    let out = sb.sh(DAEMONS);
    out.expect_code(0);
    assert!(out.elapsed < Duration::from_secs(6), "run waited for the daemons\n{out}");
    for pid in pids_in(&out, &["SETSID", "IGNORER", "DAEMON"]) {
        assert!(!alive(pid), "pid {pid} survived the call\n{out}");
    }
}

#[test]
fn the_timeout_returns_124_and_kills_the_whole_tree() {
    let sb = Sandbox::new();
    let out = sb.run(&["--timeout", "2s"], &["sh", "-c", &DAEMONS.replace("exit 0", "exec sleep 300")]);
    out.expect_code(124);
    assert!(out.elapsed < Duration::from_secs(7), "{out}");
    assert!(out.stderr.contains("timed out after 2s"), "{out}");
    for pid in pids_in(&out, &["SETSID", "IGNORER", "DAEMON"]) {
        assert!(!alive(pid), "pid {pid} survived the timeout\n{out}");
    }
}

#[test]
fn an_output_flood_is_cut_at_the_budget_and_the_tree_killed() {
    let sb = Sandbox::new();
    let cfg = sb.config("Sandbox:\n  Limits:\n    OutputBytes: 65536\n");
    let cfg = cfg.display().to_string();
    let out = sb.run(
        &["--config", &cfg],
        &["sh", "-c", "sleep 300 & echo BG=$!; (yes HW-FLOOD >&2 &); yes HW-FLOOD"],
    );
    assert_eq!(out.code, 137, "{out}");
    // The child's bytes on stderr end where hullward's own message starts.
    let msg =
        out.stderr.find("hullward: output exceeded 65536 bytes").unwrap_or_else(|| panic!("no message"));
    let flood = out.raw_stdout.len() + msg;
    assert!(flood <= 65536, "{flood} bytes passed the 65536-byte budget");
    assert!(flood > 60000, "only {flood} bytes passed");
    assert!(out.elapsed < Duration::from_secs(6));
    let bg = pids_in(&out, &["BG"])[0];
    assert!(!alive(bg), "the tree survived the output limit");
    assert!(support::processes_matching("HW-FLOOD").is_empty(), "a flooder survived");
    // The neighbour: output just below the budget passes byte for byte.
    let ok = sb.run(&["--config", &cfg], &["python3", "-c", "import sys; sys.stdout.write('y' * 60000)"]);
    ok.expect_code(0);
    assert_eq!(ok.raw_stdout, vec![b'y'; 60000]);
}

/// Starts call B (strict, its own workspace, a credential in its environment) in the background
/// and returns it with the pid of its sandboxed program.
fn call_b(b: &Sandbox) -> (Bg, i32) {
    b.write("private.txt", "HW-CALL-B-FILE\n");
    let mut c = b.run_cmd(
        &["--env", "HW_B_TOKEN", "--timeout", "20s"],
        &["sh", "-c", "echo $$ > pid.tmp && mv pid.tmp pid.txt; exec sleep 15"],
    );
    c.env("HW_B_TOKEN", "HW-CALL-B-CREDENTIAL").stdout(Stdio::null()).stderr(Stdio::null());
    let bg = Bg::spawn(&mut c);
    let pid = support::wait_file(&b.root.join("pid.txt"), Duration::from_secs(5)).trim().parse().unwrap();
    (bg, pid)
}

fn attack_b(b: &Sandbox, pid: i32) -> String {
    let r = b.root.display();
    format!(
        "tr '\\0' '\\n' < /proc/{pid}/environ; cat /proc/{pid}/root{r}/private.txt; \
         echo planted > /proc/{pid}/root{r}/planted.txt; ls /proc/{pid}/fd && echo LISTED-FD; \
         kill -9 {pid}; echo kill=$?; echo STATUS=$(grep -c State /proc/{pid}/status)"
    )
}

#[test]
fn concurrent_calls_cannot_reach_each_other() {
    let (a, b) = (Sandbox::new(), Sandbox::new());
    let (mut call, pid) = call_b(&b);
    let out = a.sh(&attack_b(&b, pid));
    assert!(!out.all().contains("HW-CALL-B"), "call A read call B\n{out}");
    assert!(!b.exists("planted.txt"), "call A wrote into call B's workspace\n{out}");
    assert!(alive(pid) && call.running(), "call A killed call B\n{out}");
    // The neighbour: public process information stays readable.
    assert_eq!(out.value("STATUS").as_deref(), Some("1"), "{out}");
    assert_eq!(call.terminate(Duration::from_secs(5)), Some(128 + libc::SIGTERM), "B did not end cleanly");
    assert!(!alive(pid), "B's program survived B's SIGTERM");
}

#[test]
#[ignore = "BUG: no PID namespace: a --no-strict call without Landlock (HULLWARD_LANDLOCK_ABI=0, \
            or a kernel without Landlock) reads a concurrent strict call's environment \
            (credentials) and workspace through /proc/<pid>/environ and /proc/<pid>/root, writes \
            into it, and kills it (same uid, both capability-less: commoncap allows it)"]
fn a_degraded_call_cannot_reach_a_concurrent_strict_call() {
    let (a, b) = (Sandbox::new(), Sandbox::new());
    let (mut call, pid) = call_b(&b);
    let mut c = a.run_cmd(&["--no-strict"], &["sh", "-c", &attack_b(&b, pid)]);
    c.env("HULLWARD_LANDLOCK_ABI", "0");
    let out = support::output(&mut c);
    let b_alive = alive(pid);
    let _ = call.terminate(Duration::from_secs(5));
    assert!(!out.all().contains("HW-CALL-B"), "call A read call B\n{out}");
    assert!(!b.exists("planted.txt"), "call A wrote into call B's workspace\n{out}");
    assert!(b_alive, "call A killed call B\n{out}");
}

#[test]
#[ignore = "BUG: when hullward itself is SIGKILLed (OOM killer, kill -9 of the agent runtime) \
            the sandboxed program keeps running past its timeout, and its cgroup directories \
            stay behind: no PR_SET_PDEATHSIG, no cleanup of orphaned call cgroups"]
fn killing_hullward_kills_the_call() {
    let sb = Sandbox::new();
    let mut c = sb.run_cmd(
        &["--timeout", "20s"],
        &["sh", "-c", "echo $$ > pid.tmp && mv pid.tmp pid.txt; exec sleep 15"],
    );
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut call = Bg::spawn(&mut c);
    let pid: i32 =
        support::wait_file(&sb.root.join("pid.txt"), Duration::from_secs(5)).trim().parse().unwrap();
    let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    let _ = call.child.kill();
    let _ = call.child.wait();
    let dead = support::wait_dead(pid, Duration::from_secs(2));
    if !dead {
        // SAFETY: kill(2) of the orphan this test created.
        unsafe { libc::kill(pid, libc::SIGKILL) };
        support::wait_dead(pid, Duration::from_secs(2));
    }
    // Remove the call's cgroups the dead hullward left behind.
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
    assert!(dead, "the sandboxed program outlived a SIGKILLed hullward (and left {leftovers:?})");
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
