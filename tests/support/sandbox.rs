//! Shared helpers of the real-kernel sandbox battery (`tests/sandbox_*.rs`).
//!
//! Every test gets its own [`Sandbox`]: a scratch directory under `CARGO_TARGET_TMPDIR` (or
//! `/var/tmp` when the checkout is under `/tmp`, which the child sees as a private tmpfs) holding
//! * `ws/`      — the sandbox root (`--root`, and the working directory of hullward),
//! * `home/`    — the `HOME` hullward runs with, with `~/.ssh/id_rsa` planted in it,
//! * `outside/` — a sibling of the root with a secret in it.
//!
//! Secrets are planted mode 0644 or root-owned 0600: we run as root, so file permissions never
//! stop a read — only the sandbox can. [`Sandbox::control`] runs the same command *without*
//! hullward to prove that.
//!
//! Every run is bounded twice: `--timeout` for hullward, and a watchdog here that kills
//! hullward and fails the test when it overstays.
#![allow(unsafe_code)]
#![allow(dead_code)]

use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

#[path = "scratch.rs"]
pub mod scratch;

/// A script prefix that waits for `.hw-sup` and sets `$SUP` to the supervisor's host pid.
pub const AWAIT_SUP: &str = "until [ -s .hw-sup ]; do sleep 0.01; done; SUP=$(cat .hw-sup); ";
/// A script line that waits until the test has seen the marked processes on the host.
pub const AWAIT_SEEN: &str = "until [ -e .hw-seen ]; do sleep 0.01; done";

/// hullward's own timeout for a call (every case must finish well within it).
pub const CALL_TIMEOUT: &str = "8s";
/// The watchdog: longer than any call, so that hullward's own timeout fires first.
pub const WATCHDOG: Duration = Duration::from_secs(30);
/// The PATH the child (and the control runs) use: no pyenv shims, only what the view shows.
pub const PATH: &str = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
/// The secret planted in `~/.ssh/id_rsa`.
pub const SSH_KEY: &str = "-----BEGIN OPENSSH PRIVATE KEY----- HW-SSH-KEY-7f3a";

pub fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_hullward")
}

/// The result of one process run.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    pub raw_stdout: Vec<u8>,
    pub elapsed: Duration,
}

impl Out {
    /// Panics with the whole output unless the exit code is `code`.
    #[track_caller]
    pub fn expect_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, code, "unexpected exit code\n{self}");
        self
    }

    /// Both streams, for matching messages wherever the tool printed them.
    pub fn all(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }

    /// Stdout lines that start with `prefix` (the probe's `OK`/`ERR` lines).
    pub fn lines_with(&self, needle: &str) -> Vec<&str> {
        self.stdout.lines().filter(|l| l.contains(needle)).collect()
    }

    /// Whether stdout has `line` as a whole line (a script's own text, echoed by a listing of
    /// command lines, never matches).
    pub fn has_line(&self, line: &str) -> bool {
        self.stdout.lines().any(|l| l == line)
    }

    /// The value printed after `KEY=` on a line of its own.
    pub fn value(&self, key: &str) -> Option<String> {
        let prefix = format!("{key}=");
        self.stdout.lines().find_map(|l| l.strip_prefix(&prefix)).map(str::to_string)
    }
}

impl std::fmt::Display for Out {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "exit {} after {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.code, self.elapsed, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` to completion (stdin from /dev/null unless the caller set it), killing it and
/// failing the test if it outlives the watchdog.
pub fn output(cmd: &mut Command) -> Out {
    output_within(cmd, WATCHDOG)
}

/// Like [`output`] with a watchdog of `limit`: a whole build (a compiler run in the sandbox while
/// the other tests of the binary run beside it) can take longer than [`WATCHDOG`] on a loaded
/// 2-core machine.
pub fn output_within(cmd: &mut Command, limit: Duration) -> Out {
    let start = Instant::now();
    let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
    finish_within(&mut child, start, limit, || {})
}

/// Collects a spawned child's output (its stdout/stderr must be piped).
pub fn finish(child: &mut Child, start: Instant) -> Out {
    finish_watching(child, start, || {})
}

/// Like [`finish`], calling `tick` every few milliseconds while the child runs.
pub fn finish_watching(child: &mut Child, start: Instant, tick: impl FnMut()) -> Out {
    finish_within(child, start, WATCHDOG, tick)
}

fn finish_within(child: &mut Child, start: Instant, limit: Duration, mut tick: impl FnMut()) -> Out {
    let mut so = child.stdout.take().expect("piped stdout");
    let mut se = child.stderr.take().expect("piped stderr");
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = so.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = se.read_to_end(&mut v);
        v
    });
    let status = loop {
        if let Some(s) = child.try_wait().expect("wait") {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("watchdog: the process did not finish within {limit:?}");
        }
        tick();
        std::thread::sleep(Duration::from_millis(5));
    };
    let raw_stdout = t_out.join().unwrap();
    let raw_err = t_err.join().unwrap();
    use std::os::unix::process::ExitStatusExt;
    Out {
        code: status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0)),
        stdout: String::from_utf8_lossy(&raw_stdout).into_owned(),
        stderr: String::from_utf8_lossy(&raw_err).into_owned(),
        raw_stdout,
        elapsed: start.elapsed(),
    }
}

/// One test's scratch area; removed on drop.
pub struct Sandbox {
    _tmp: tempfile::TempDir,
    /// The scratch directory (parent of `root`, `home`, `outside`).
    pub base: PathBuf,
    /// The sandbox root.
    pub root: PathBuf,
    /// The `HOME` of hullward (outside the root).
    pub home: PathBuf,
    /// A sibling directory of the root.
    pub outside: PathBuf,
}

impl Sandbox {
    /// A scratch area outside every directory a call gets a private one of, wherever the
    /// checkout is ([`scratch::parent`]).
    pub fn new() -> Sandbox {
        Sandbox::in_dir(&scratch::parent("sandbox"))
    }

    /// A scratch area under `parent` (e.g. the host's `/tmp`).
    pub fn in_dir(parent: &Path) -> Sandbox {
        std::fs::create_dir_all(parent).unwrap();
        let tmp = tempfile::Builder::new().prefix("hw-").tempdir_in(parent).unwrap();
        let base = tmp.path().canonicalize().unwrap();
        let sb = Sandbox {
            root: base.join("ws"),
            home: base.join("home"),
            outside: base.join("outside"),
            base,
            _tmp: tmp,
        };
        for d in [&sb.root, &sb.home, &sb.outside] {
            std::fs::create_dir_all(d).unwrap();
        }
        let key = sb.home.join(".ssh/id_rsa");
        write_mode(&key, SSH_KEY, 0o600);
        write_mode(&sb.outside.join("secret.txt"), "HW-OUTSIDE-SECRET-19c2", 0o644);
        sb
    }

    /// Writes `content` to `rel` under the root (mode 0644, parents created).
    pub fn write(&self, rel: &str, content: &str) -> PathBuf {
        let p = self.root.join(rel);
        write_mode(&p, content, 0o644);
        p
    }

    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.root.join(rel)).ok()
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.root.join(rel).symlink_metadata().is_ok()
    }

    /// `hullward` with a clean, controlled environment, started in the root.
    pub fn hullward(&self) -> Command {
        let mut c = Command::new(bin());
        c.env_clear()
            .env("PATH", PATH)
            .env("HOME", &self.home)
            .env("HULLWARD_HOME", self.base.join("hullward-home"))
            .env("LANG", "C.UTF-8")
            .current_dir(&self.root)
            .stdin(Stdio::null());
        c
    }

    /// `hullward run --timeout 8s FLAGS -- ARGV` (no default timeout when FLAGS set one).
    pub fn run(&self, flags: &[&str], argv: &[&str]) -> Out {
        output(&mut self.run_cmd(flags, argv))
    }

    /// The command [`Sandbox::run`] runs, for callers that set up stdio themselves.
    pub fn run_cmd(&self, flags: &[&str], argv: &[&str]) -> Command {
        let mut c = self.hullward();
        c.arg("run");
        if !flags.contains(&"--timeout") {
            c.arg("--timeout").arg(CALL_TIMEOUT);
        }
        c.args(flags).arg("--").args(argv);
        c
    }

    /// `hullward run -- sh -c SCRIPT` (with `$ROOT`, `$HOMEDIR`, `$OUTSIDE` expanded by the
    /// caller via [`Sandbox::expand`] when needed).
    pub fn sh(&self, script: &str) -> Out {
        self.run(&[], &["sh", "-c", &self.expand(script)])
    }

    /// Like [`Sandbox::sh`] with extra hullward flags.
    pub fn sh_with(&self, flags: &[&str], script: &str) -> Out {
        self.run(flags, &["sh", "-c", &self.expand(script)])
    }

    /// The same script without hullward (same cwd and environment): the control that proves a
    /// denial came from the sandbox, not from file permissions.
    pub fn control(&self, script: &str) -> Out {
        let mut c = Command::new("sh");
        c.arg("-c")
            .arg(self.expand(script))
            .env_clear()
            .env("PATH", PATH)
            .env("HOME", &self.home)
            .current_dir(&self.root)
            .stdin(Stdio::null());
        output(&mut c)
    }

    /// Replaces `$ROOT`, `$HOMEDIR`, `$OUTSIDE` and `$BASE` with this sandbox's paths.
    pub fn expand(&self, script: &str) -> String {
        script
            .replace("$ROOT", &self.root.display().to_string())
            .replace("$HOMEDIR", &self.home.display().to_string())
            .replace("$OUTSIDE", &self.outside.display().to_string())
            .replace("$BASE", &self.base.display().to_string())
    }

    /// Copies the probe into the root as `./probe` and returns its path.
    pub fn install_probe(&self) -> PathBuf {
        let dst = self.root.join("probe");
        std::fs::copy(probe(), &dst).unwrap();
        dst
    }

    /// [`Sandbox::run_cmd`] with `HW_MARK=mark` passed into the child (`--env HW_MARK`): a
    /// script names its processes `sleep 300.$HW_MARK…` so that the host finds them by command
    /// line, while neither hullward's nor the script's own command line contains the marker.
    pub fn marked(&self, flags: &[&str], argv: &[&str], mark: &str) -> Command {
        let mut all = vec!["--env", "HW_MARK"];
        all.extend_from_slice(flags);
        let mut c = self.run_cmd(&all, argv);
        c.env("HW_MARK", mark);
        c
    }

    /// Runs `cmd` (a `hullward run`) while watching the host for processes whose command line
    /// contains `mark`; once `n` of them are alive at the same time it creates `.hw-seen` in the
    /// root (a script waits for it with [`AWAIT_SEEN`]). Returns the output and the host pids
    /// seen: only those make a later "nothing survived" scan meaningful.
    pub fn run_watched(&self, cmd: &mut Command, mark: &str, n: usize) -> (Out, Vec<i32>) {
        let start = Instant::now();
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
        let mut seen: Vec<i32> = Vec::new();
        let seen_file = self.root.join(".hw-seen");
        let out = finish_watching(&mut child, start, || {
            if seen.len() < n {
                let now = processes_matching(mark);
                if now.len() >= n {
                    seen = now;
                    std::fs::write(&seen_file, "seen\n").unwrap();
                }
            }
        });
        (out, seen)
    }

    /// Runs `cmd`, whose script starts with [`AWAIT_SUP`], and hands it the supervisor's host
    /// pid (hullward's, which the child cannot learn: its `$PPID` is its own init) as `$SUP`.
    /// Returns the output and that pid.
    pub fn run_knowing_supervisor(&self, cmd: &mut Command) -> (Out, i32) {
        let start = Instant::now();
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawn");
        let sup = child.id() as i32;
        let tmp = self.root.join(".hw-sup.tmp");
        std::fs::write(&tmp, format!("{sup}\n")).unwrap();
        std::fs::rename(&tmp, self.root.join(".hw-sup")).unwrap();
        (finish(&mut child, start), sup)
    }

    /// `hullward run FLAGS -- sh -c SCRIPT` with the supervisor's host pid in `$SUP` (see
    /// [`Sandbox::run_knowing_supervisor`]).
    pub fn sh_knowing_supervisor(&self, flags: &[&str], script: &str) -> (Out, i32) {
        let script = format!("{AWAIT_SUP}{}", self.expand(script));
        self.run_knowing_supervisor(&mut self.run_cmd(flags, &["sh", "-c", &script]))
    }

    /// Writes a config file (outside the root) and returns its path.
    pub fn config(&self, yaml: &str) -> PathBuf {
        let p = self.base.join("config.yaml");
        std::fs::write(&p, yaml).unwrap();
        p
    }
}

impl Default for Sandbox {
    fn default() -> Self {
        Sandbox::new()
    }
}

pub fn write_mode(path: &Path, content: &str, mode: u32) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(path, content).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

const PROBE_SRC: &str = include_str!("sandbox_probe.c");

/// The compiled probe (built once per test binary; shared between binaries by content hash,
/// published with an atomic rename).
pub fn probe() -> &'static Path {
    static PROBE: OnceLock<PathBuf> = OnceLock::new();
    PROBE.get_or_init(|| {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in PROBE_SRC.bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3);
        }
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("sandbox-probe");
        std::fs::create_dir_all(&dir).unwrap();
        let exe = dir.join(format!("probe-{h:016x}"));
        if exe.exists() {
            return exe;
        }
        let src = dir.join(format!("probe-{h:016x}.c"));
        let tmp = dir.join(format!("probe-{h:016x}.{}.tmp", std::process::id()));
        std::fs::write(&src, PROBE_SRC).unwrap();
        let out = output(Command::new("gcc").arg("-O1").arg("-Wall").arg("-o").arg(&tmp).arg(&src));
        assert_eq!(out.code, 0, "compiling the probe failed\n{out}");
        std::fs::rename(&tmp, &exe).unwrap();
        exe
    })
}

/// Runs the probe on the host (outside any sandbox).
pub fn probe_outside(args: &[&str]) -> Out {
    output(Command::new(probe()).args(args).stdin(Stdio::null()))
}

/// Compiles a small C program (source text) into `dst`.
pub fn compile_c(src: &str, dst: &Path) {
    let c = dst.with_extension("c");
    std::fs::write(&c, src).unwrap();
    let out = output(Command::new("gcc").arg("-O1").arg("-o").arg(dst).arg(&c));
    assert_eq!(out.code, 0, "gcc failed\n{out}");
    let _ = std::fs::remove_file(c);
}

/// A process started outside the sandbox for the duration of a test; killed on drop.
pub struct Bg {
    pub child: Child,
}

impl Bg {
    pub fn spawn(cmd: &mut Command) -> Bg {
        let child = cmd.stdin(Stdio::null()).spawn().expect("spawn background process");
        Bg { child }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Still running (not exited, not a zombie)?
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits up to `timeout` for the process to end by itself; its exit code (128 + signal when
    /// killed), or `None` when it is still running.
    pub fn wait_exit(&mut self, timeout: Duration) -> Option<i32> {
        use std::os::unix::process::ExitStatusExt;
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s.code().unwrap_or_else(|| 128 + s.signal().unwrap_or(0)));
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// SIGTERM (a hullward under test then kills its call's tree), then waits up to `timeout`;
    /// returns the exit code, or `None` when it had to be SIGKILLed.
    pub fn terminate(&mut self, timeout: Duration) -> Option<i32> {
        // SAFETY: plain kill(2) on our own child's pid.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
        let deadline = Instant::now() + timeout;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

impl Drop for Bg {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether `pid` exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the command name's closing parenthesis.
            let state = stat.rsplit_once(')').and_then(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, Some('Z') | Some('X') | None)
        }
        Err(_) => false,
    }
}

/// Waits until `pid` is gone, up to `timeout`.
pub fn wait_dead(pid: i32, timeout: Duration) -> bool {
    let deadline = Instant::now() + timeout;
    while alive(pid) {
        if Instant::now() > deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

/// Host processes whose command line contains `needle`.
pub fn processes_matching(needle: &str) -> Vec<i32> {
    let me = std::process::id() as i32;
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else { continue };
        if pid == me {
            continue;
        }
        let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(needle) && alive(pid) {
            out.push(pid);
        }
    }
    out
}

/// Waits until at least `n` host processes' command lines contain `needle`; returns them.
#[track_caller]
pub fn wait_processes(needle: &str, n: usize, timeout: Duration) -> Vec<i32> {
    let deadline = Instant::now() + timeout;
    loop {
        let found = processes_matching(needle);
        if found.len() >= n {
            return found;
        }
        assert!(Instant::now() < deadline, "{n} processes matching {needle} did not appear: {found:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The host's parent pid of `pid`.
pub fn ppid(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(1)?.parse().ok()
}

/// A host process's command line, arguments joined by spaces.
pub fn cmdline(pid: i32) -> String {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    String::from_utf8_lossy(&raw).replace('\0', " ").trim_end().to_string()
}

/// A unique string of digits: a process marker that `sleep` accepts as the fraction of its
/// duration (`sleep 300.<mark>`) and that nothing else on the host has in its command line.
pub fn mark() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("{:07}{:03}{nanos:09}", std::process::id(), N.fetch_add(1, Ordering::Relaxed) % 1000)
}

/// Waits until a file exists and is non-empty (a background process signalling readiness).
pub fn wait_file(path: &Path, timeout: Duration) -> String {
    let deadline = Instant::now() + timeout;
    loop {
        if let Ok(s) = std::fs::read_to_string(path) {
            if !s.trim().is_empty() && s.ends_with('\n') {
                return s;
            }
        }
        assert!(Instant::now() < deadline, "{} did not appear", path.display());
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A unique token for names visible host-wide (abstract sockets, process markers).
pub fn token(tag: &str) -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("hw-{tag}-{}-{}-{nanos:x}", std::process::id(), N.fetch_add(1, Ordering::Relaxed))
}
