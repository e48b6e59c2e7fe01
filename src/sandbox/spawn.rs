//! Turns a [`SandboxPlan`] into a running child.
//!
//! Order: build the kernel objects in the parent (the Landlock ruleset descriptor, the seccomp
//! programs, the error pipe) → assemble the [`ChildPlan`] (every `CString` and pointer array) →
//! `clone3` (straight into the call's cgroup v2 leaf) → the child runs [`child::run`] → the parent
//! closes its copy of the pipe's write end and reads it: end-of-file means the `execve` succeeded
//! (the pipe is close-on-exec); a 12-byte record names the step that failed, and the child is
//! reaped. Either way `spawn` returns only once the child has become the program or is gone.
//!
//! Prepared ahead (`serve`, between requests): [`prepare`] does the same up to the init program,
//! which reports that its sandbox is complete and waits; [`Prepared::launch`] later hands it the
//! request's program, and returns, as `spawn` does, once that program runs or has failed to.

use std::ffi::CString;
use std::io::{Read, Write};
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use super::cgroup::CallCgroup;
use super::child::{self, ChildLandlockRule, ChildPlan, Init, Stage, StepError};
use super::kernel::Layer;
use super::landlock::{self, LandlockError};
use super::plan::{NetPlan, SandboxPlan};
use super::seccomp::{self, SeccompError};
use super::sys;

/// The descriptors the child gets as 0, 1 and 2 (`None`: inherit hullward's own).
#[derive(Debug, Clone, Copy)]
pub struct Stdio {
    pub stdin: Option<RawFd>,
    pub stdout: Option<RawFd>,
    pub stderr: Option<RawFd>,
}

/// The namespaces of a child whose teardown is slow, held by descriptor so that the kernel
/// tears them down when the holder drops this (after the call's exit event) rather than in the
/// exit of the child's init, which the supervisor waits for before it can answer: the mount
/// namespace (unmounting the view, ≈ 0.6 ms for a hundred mounts), the network namespace (the
/// kernel's `cleanup_net` work waits for expedited RCU grace periods, and on a busy CPU it runs
/// in front of the exiting init) and the IPC namespace (a grace period too). Nothing can enter
/// them: no process is left in them, and the descriptors never leave this process.
///
/// Order: [`HeldNamespaces::of`] once the child runs → [`HeldNamespaces::release_view`] when the
/// view's mounts must be gone with the child (workspace layers read the tree after it) → drop.
#[derive(Debug, Default)]
pub struct HeldNamespaces {
    view: Option<std::fs::File>,
    /// Held only to be dropped.
    _others: Vec<std::fs::File>,
}

impl HeldNamespaces {
    /// The namespaces of process `pid` (each one this process may not open is left to the
    /// child's exit, as without this).
    pub fn of(pid: libc::pid_t) -> HeldNamespaces {
        let open = |ns: &str| std::fs::File::open(format!("/proc/{pid}/ns/{ns}")).ok();
        HeldNamespaces { view: open("mnt"), _others: ["net", "ipc"].into_iter().filter_map(open).collect() }
    }

    /// Lets the mount namespace go with the child.
    pub fn release_view(&mut self) {
        self.view = None;
    }
}

/// A running child.
#[derive(Debug)]
pub struct Spawned {
    pub pid: libc::pid_t,
    pub pidfd: OwnedFd,
}

/// Why the child could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SpawnError {
    #[error("{0}")]
    Landlock(#[from] LandlockError),
    #[error("{0}")]
    Seccomp(#[from] SeccompError),
    #[error("{what}: {source}")]
    Io { what: &'static str, source: std::io::Error },
    #[error("argument contains a NUL byte: {0:?}")]
    Nul(String),
    /// The kernel refused a layer (a namespace, a mount): the plan cannot be honoured.
    #[error("the kernel refused to build the sandbox ({text}); strict mode does not run without it")]
    Refused { layer: Layer, text: String },
    /// Setting up the child failed for another reason.
    #[error("sandbox setup failed while {0}")]
    Setup(String),
    #[error("{program}: {errno} (inside the sandbox)")]
    Exec { program: String, errno: sys::Errno },
    /// A prepared sandbox ended before its program could be handed over (the call can build
    /// its own instead).
    #[error("the prepared sandbox ended before its program was handed over: {0}")]
    PreparedGone(std::io::Error),
}

impl SpawnError {
    /// The exit code the contract gives this failure.
    pub fn exit_code(&self) -> u8 {
        match self {
            SpawnError::Refused { .. } => crate::error::code::STRICT_REFUSED,
            SpawnError::Exec { errno, .. } if errno.0 == libc::ENOENT => 127,
            SpawnError::Exec { .. } => 126,
            SpawnError::Nul(_) => crate::error::code::USAGE,
            _ => crate::error::code::INTERNAL,
        }
    }
}

fn cstr(bytes: &[u8]) -> Result<CString, SpawnError> {
    CString::new(bytes).map_err(|_| SpawnError::Nul(String::from_utf8_lossy(bytes).into_owned()))
}

/// The plan's program as `execve` takes it: its path, its arguments, its environment.
struct Program {
    path: CString,
    argv: Vec<CString>,
    envp: Vec<CString>,
}

impl Program {
    fn of(plan: &SandboxPlan) -> Result<Program, SpawnError> {
        Ok(Program {
            path: cstr(plan.program.as_os_str().as_bytes())?,
            argv: plan.argv.iter().map(|a| cstr(a.as_bytes())).collect::<Result<_, _>>()?,
            envp: plan
                .env
                .vars
                .iter()
                .map(|(k, v)| cstr(format!("{k}={v}").as_bytes()))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// Starts the planned child. `egress` is the channel of a [`super::egress::Pending`] (proxy mode),
/// on which the child hands back the proxy's listener.
pub fn spawn(
    plan: &SandboxPlan,
    stdio: Stdio,
    cgroup: Option<&CallCgroup>,
    egress: Option<RawFd>,
) -> Result<Spawned, SpawnError> {
    let started = start(plan, stdio, cgroup, egress, Mode::Run)?;
    started.settle(plan)
}

/// A child whose sandbox is complete (every step of [`spawn`]'s, Landlock and seccomp too), its
/// init program waiting for the program to run: [`Prepared::launch`] names it. Dropping it kills
/// the child.
#[derive(Debug)]
pub struct Prepared {
    /// Taken by [`Prepared::launch`].
    started: Option<Started>,
}

/// Prepares the child of `plan` ahead of the call that will run it: all of [`spawn`] but the
/// program, which the init program waits for. Needs a PID namespace and the init program's image
/// (`super::pid1`); proxy mode is not prepared (its listener is handed back at the start).
pub fn prepare(
    plan: &SandboxPlan,
    stdio: Stdio,
    cgroup: Option<&CallCgroup>,
) -> Result<Prepared, SpawnError> {
    if matches!(plan.net, NetPlan::Proxy { .. }) {
        return Err(SpawnError::Setup("preparing a sandbox ahead: proxy mode is not prepared".into()));
    }
    let mut started = start(plan, stdio, cgroup, None, Mode::Prepare)?;
    match started.record()? {
        Some(record) if record == super::pid1::READY => Ok(Prepared { started: Some(started) }),
        Some(record) => Err(started.failed(plan, &record)),
        None => {
            let _ = sys::wait(started.spawned.pidfd.as_raw_fd());
            Err(SpawnError::Setup("preparing a sandbox ahead: its init ended before it was ready".into()))
        }
    }
}

impl Prepared {
    /// Runs `plan`'s program (and working directory, environment) in the prepared sandbox; the
    /// caller has checked that `plan` asks for exactly the sandbox this one was prepared for.
    /// Returns once the program runs, or with the reason it could not (the child is then gone).
    pub fn launch(mut self, plan: &SandboxPlan) -> Result<Spawned, SpawnError> {
        let program = Program::of(plan)?;
        let cwd = cstr(plan.cwd.as_os_str().as_bytes())?;
        let message = super::pid1::launch(&cwd, &program.path, &program.argv, &program.envp);
        let mut started = self.started.take().expect("a prepared child is launched once");
        let launch = started.launch.take().expect("a prepared child has its launch pipe");
        if let Err(source) = std::fs::File::from(launch).write_all(&message) {
            kill(&started.spawned);
            return Err(SpawnError::PreparedGone(source));
        }
        started.settle(plan)
    }

    /// The child's process id (its `/proc` entries: the mount namespace to hold).
    pub fn pid(&self) -> libc::pid_t {
        self.started.as_ref().map_or(0, |s| s.spawned.pid)
    }
}

impl Drop for Prepared {
    /// A sandbox never launched: its init (and with it the namespaces) is killed and reaped.
    fn drop(&mut self) {
        if let Some(started) = &self.started {
            kill(&started.spawned);
        }
    }
}

fn kill(child: &Spawned) {
    let _ = sys::pidfd_kill(child.pidfd.as_raw_fd(), libc::SIGKILL);
    let _ = sys::wait(child.pidfd.as_raw_fd());
}

/// The caller's per-user limits and the child user namespace's own: the child gets half of each,
/// so that it cannot take every inotify instance or watch, or fanotify group or mark, of the
/// caller (the kernel charges both levels).
const UCOUNT_LIMITS: [(&str, &str); 4] = [
    ("/proc/sys/fs/inotify/max_user_instances", "/proc/sys/user/max_inotify_instances"),
    ("/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches"),
    ("/proc/sys/fs/fanotify/max_user_groups", "/proc/sys/user/max_fanotify_groups"),
    ("/proc/sys/fs/fanotify/max_user_marks", "/proc/sys/user/max_fanotify_marks"),
];

/// Half of each of the caller's per-user limits, as the writes that give them to a child user
/// namespace (a limit this kernel lacks is left out).
fn ucount_limits() -> Result<Vec<(CString, Vec<u8>)>, SpawnError> {
    let read = |p: &str| std::fs::read_to_string(p).ok().and_then(|v| v.trim().parse::<u64>().ok());
    let mut out = Vec::new();
    for (global, per_ns) in UCOUNT_LIMITS {
        // The caller's own user namespace may be stricter than the global limit.
        if let Some(max) = [read(global), read(per_ns)].into_iter().flatten().min() {
            out.push((cstr(per_ns.as_bytes())?, (max / 2).max(1).to_string().into_bytes()));
        }
    }
    Ok(out)
}

/// The user namespace root's children join ([`sys::identity_userns`]), made once per process.
static COUNTERS_USERNS: std::sync::OnceLock<Result<OwnedFd, String>> = std::sync::OnceLock::new();

/// Where the child's per-user kernel counters (inotify instances and watches, fanotify groups and
/// marks) are charged: `Ok` when a user namespace of its own bounds them at half of the caller's
/// limits, `Err` with the reason when the child shares the caller's. Root's child (which needs no
/// user namespace for its sandbox) joins one made for the purpose, the first call paying for it.
pub fn counters_userns(plan: &SandboxPlan) -> Result<Option<RawFd>, String> {
    if plan.user_ns {
        return Ok(None);
    }
    if !plan.mount_ns {
        return Err("the call has no namespaces of its own".into());
    }
    made_counters_userns()
        .as_ref()
        .map(|fd| Some(fd.as_raw_fd()))
        .map_err(|e| format!("no user namespace for them ({e})"))
}

/// A network namespace made ahead of the call that joins it, loopback already up. Each is
/// joined by exactly one child and never shared: a call's loopback stays its own. Only root's
/// children join one (a child in a user namespace of its own may not join a namespace its
/// caller's owns); any failure leaves the slot empty and the child makes its own, as before.
static READY_NETNS: std::sync::Mutex<Option<OwnedFd>> = std::sync::Mutex::new(None);

/// Wakes the thread that keeps [`READY_NETNS`] filled (a long-lived process only).
static NETNS_REFILL: std::sync::OnceLock<std::sync::mpsc::SyncSender<()>> = std::sync::OnceLock::new();

/// What a CLI call prepares on its kernel probe's thread while it loads its policy: root's
/// counters user namespace and the call's network namespace (creating one costs ≈ 0.5 ms), and
/// the memfd of the namespace's init program.
pub fn prepare_call_namespaces() {
    super::pid1::image();
    if sys::geteuid() == 0 {
        made_counters_userns();
        fill_netns();
    }
}

/// For a long-lived process (`serve`, `mcp`): a thread of its own makes the next call's network
/// namespace whenever one is taken, off the path a request waits on.
pub fn keep_netns_ready() {
    if sys::geteuid() != 0 || NETNS_REFILL.get().is_some() {
        return;
    }
    let (wake, woken) = std::sync::mpsc::sync_channel::<()>(1);
    let started = std::thread::Builder::new().name("hullward-netns".into()).spawn(move || {
        fill_netns();
        while woken.recv().is_ok() {
            fill_netns();
        }
    });
    if started.is_ok() {
        let _ = NETNS_REFILL.set(wake);
    }
}

/// Makes a network namespace into the empty slot (this thread's own namespace is unchanged).
fn fill_netns() {
    let Ok(mut slot) = READY_NETNS.lock() else { return };
    if slot.is_some() {
        return;
    }
    let home = std::fs::File::open("/proc/thread-self/ns/net");
    *slot = home.ok().and_then(|home| sys::fresh_netns(std::os::fd::AsFd::as_fd(&home)).ok());
}

/// The prepared network namespace, if there is one; a long-lived process starts making the next.
fn take_netns() -> Option<OwnedFd> {
    let taken = READY_NETNS.lock().ok()?.take();
    if let Some(wake) = NETNS_REFILL.get() {
        let _ = wake.try_send(());
    }
    taken
}

/// Below this memory limit the child is a copy of hullward, never a sharer of its memory: a
/// child that shares it (`CLONE_VM`) and runs out of its cgroup's memory before it executes would
/// take hullward with it — the OOM killer kills every process using the memory of the one it
/// chooses. A fresh cgroup's own use before the exec is a few hundred KiB of kernel objects.
const SHARED_MEMORY_FLOOR: u64 = 64 << 20;

/// Whether the child may share hullward's memory until it executes (`sys::spawn_child`): only
/// when it is sure to execute or exit (not [`Init::Fork`], whose child stays behind) and its
/// memory limit, if any, leaves room to spare.
fn shares_memory(plan: &SandboxPlan, init: Init) -> bool {
    init != Init::Fork && plan.memory.is_none_or(|m| m >= SHARED_MEMORY_FLOOR)
}

fn made_counters_userns() -> &'static Result<OwnedFd, String> {
    COUNTERS_USERNS
        .get_or_init(|| ucount_limits().map_err(|e| e.to_string()).and_then(|l| sys::identity_userns(&l)))
}

/// One line for `explain` and `doctor`: where the child's per-user kernel counters are charged.
pub fn counters_note(plan: &SandboxPlan) -> String {
    match counters_userns(plan) {
        Ok(_) => "inotify and fanotify: at most half of the caller's per-user limits (a user namespace \
                  of the child's holds them)"
            .into(),
        Err(why) => format!(
            "inotify and fanotify: shared with the caller's user ({why}): the child can take all of \
             them while it runs"
        ),
    }
}

/// A refusal seen by [`probe`]: the layer and the child's own words.
#[derive(Debug, Clone)]
pub struct ProbeRefusal {
    pub layer: Layer,
    pub cause: String,
}

/// Does everything the call's child would do for `plan` — clone with its namespaces, id maps,
/// the mount view with its masks and procfs, capabilities, Landlock, seccomp — in a throwaway
/// child that exits instead of `exec`ing. `Err` names the layer the kernel refused.
pub fn probe(plan: &SandboxPlan) -> Result<(), ProbeRefusal> {
    let null = std::fs::File::options().read(true).write(true).open("/dev/null").ok();
    let fd = null.as_ref().map(AsRawFd::as_raw_fd);
    let stdio = Stdio { stdin: fd, stdout: fd, stderr: fd };
    let other = |cause: String| ProbeRefusal { layer: Layer::Namespaces, cause };
    let pending = matches!(plan.net, NetPlan::Proxy { .. }).then(super::egress::Pending::open).transpose();
    let pending = pending.map_err(|e| other(e.to_string()))?;
    let started =
        start(plan, stdio, None, pending.as_ref().map(super::egress::Pending::child_end), Mode::Probe);
    match started.and_then(|s| s.settle(plan)) {
        Ok(spawned) => match sys::wait(spawned.pidfd.as_raw_fd()) {
            Ok(0) => Ok(()),
            Ok(status) => Err(other(format!("the probe child ended with status {status}"))),
            Err(e) => Err(other(format!("waiting for the probe child: {e}"))),
        },
        Err(SpawnError::Refused { layer, text }) => Err(ProbeRefusal { layer, cause: text }),
        Err(e) => Err(other(e.to_string())),
    }
}

/// What [`start`] makes of the child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// It becomes the program.
    Run,
    /// It applies every step and exits 0 (`probe`).
    Probe,
    /// Its init program waits for the program (`prepare`).
    Prepare,
}

/// A child just cloned: its error pipe, and a prepared one's launch pipe.
#[derive(Debug)]
struct Started {
    spawned: Spawned,
    errors: std::fs::File,
    launch: Option<OwnedFd>,
}

impl Started {
    /// The next record on the error pipe (`None`: end of file, nothing was reported).
    fn record(&mut self) -> Result<Option<[u8; 12]>, SpawnError> {
        let mut record = [0u8; 12];
        let mut got = 0;
        while got < record.len() {
            match self.errors.read(&mut record[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(source) => return Err(SpawnError::Io { what: "reading the error pipe", source }),
            }
        }
        Ok((got > 0).then_some(record))
    }

    /// End of file on the error pipe: the program runs; a record: the failed step, the child
    /// reaped.
    fn settle(mut self, plan: &SandboxPlan) -> Result<Spawned, SpawnError> {
        match self.record()? {
            None => Ok(self.spawned),
            Some(record) => Err(self.failed(plan, &record)),
        }
    }

    fn failed(&mut self, plan: &SandboxPlan, record: &[u8; 12]) -> SpawnError {
        self.launch = None;
        let _ = sys::wait(self.spawned.pidfd.as_raw_fd());
        match StepError::decode(record) {
            Some(step) => classify(plan, &step),
            None => SpawnError::Setup("reporting an unknown step".into()),
        }
    }
}

fn start(
    plan: &SandboxPlan,
    stdio: Stdio,
    cgroup: Option<&CallCgroup>,
    egress: Option<RawFd>,
    mode: Mode,
) -> Result<Started, SpawnError> {
    let dry_run = mode == Mode::Probe;
    let ruleset = plan.landlock.as_ref().map(landlock::create).transpose()?;
    let filters = plan.seccomp.map(seccomp::programs).transpose()?.unwrap_or_default();
    let (err_read, err_write) =
        sys::pipe_cloexec().map_err(|source| SpawnError::Io { what: "error pipe", source })?;

    let mut keep = vec![err_write.as_raw_fd()];
    keep.extend(ruleset.as_ref().map(AsRawFd::as_raw_fd));
    keep.extend(egress);
    let cgroup_procs = cgroup.map(CallCgroup::join_fds).unwrap_or_default();
    keep.extend(&cgroup_procs);
    let cgroup_v2_procs = cgroup.and_then(CallCgroup::v2_procs_fd);
    keep.extend(cgroup_v2_procs);

    let mut unshare_flags = 0;
    let mut clone_namespaces = 0;
    let mut id_maps = Vec::new();
    let mut ucount_limits = Vec::new();
    if plan.mount_ns {
        unshare_flags |= libc::CLONE_NEWNS | libc::CLONE_NEWIPC | libc::CLONE_NEWCGROUP;
    }
    if plan.pid_ns {
        // A PID namespace must exist before the child mounts its procfs, so it comes with the
        // clone (and, for a non-root caller, the user namespace that owns it too).
        clone_namespaces |= libc::CLONE_NEWPID;
        if plan.user_ns {
            clone_namespaces |= libc::CLONE_NEWUSER;
        }
    } else if plan.user_ns {
        unshare_flags |= libc::CLONE_NEWUSER;
    }
    if plan.user_ns {
        let (uid, gid) = (sys::geteuid(), sys::getegid());
        id_maps.push((cstr(b"/proc/self/setgroups")?, b"deny".to_vec()));
        id_maps.push((cstr(b"/proc/self/uid_map")?, format!("{uid} {uid} 1").into_bytes()));
        id_maps.push((cstr(b"/proc/self/gid_map")?, format!("{gid} {gid} 1").into_bytes()));
        ucount_limits = self::ucount_limits()?;
    }
    // Without a namespace to join, root's child shares root's counters, as `counters_note` says.
    let join_userns = counters_userns(plan).ok().flatten();
    keep.extend(join_userns);
    // Root's child joins a network namespace made ahead when there is one (never the probe's).
    let join_netns = (plan.net != NetPlan::Host && !plan.user_ns && !dry_run).then(take_netns).flatten();
    keep.extend(join_netns.as_ref().map(AsRawFd::as_raw_fd));
    let init = match (plan.pid_ns, super::pid1::image()) {
        (false, _) => Init::None,
        (true, Some(image)) => Init::Image(image.as_raw_fd()),
        (true, None) => Init::Fork,
    };
    if let Init::Image(image) = init {
        keep.push(image);
    }
    let launch = match (mode, init) {
        (Mode::Prepare, Init::Image(_)) => {
            Some(sys::pipe_cloexec().map_err(|source| SpawnError::Io { what: "launch pipe", source })?)
        }
        (Mode::Prepare, _) => {
            return Err(SpawnError::Setup("preparing a sandbox ahead: no init program to wait in".into()))
        }
        _ => None,
    };
    keep.extend(launch.as_ref().map(|(read, _)| read.as_raw_fd()));
    if plan.net != NetPlan::Host && join_netns.is_none() {
        unshare_flags |= libc::CLONE_NEWNET;
    }
    let egress = match (plan.net, egress) {
        (NetPlan::Proxy { port }, Some(chan)) => Some((chan, port)),
        (NetPlan::Proxy { .. }, None) => {
            return Err(SpawnError::Setup("planning the egress proxy: no channel".into()))
        }
        _ => None,
    };
    let (mount_ops, slots) = match &plan.mounts {
        Some(v) => (v.ops.as_slice(), vec![-1; v.slots]),
        None => (&[][..], Vec::new()),
    };
    let landlock_child_rules = match &plan.landlock {
        Some(l) => l
            .child_rules
            .iter()
            .map(|r| {
                Ok(ChildLandlockRule { path: cstr(r.path.as_os_str().as_bytes())?, access: l.bits(r.grant) })
            })
            .collect::<Result<Vec<_>, SpawnError>>()?,
        None => Vec::new(),
    };
    let program = Program::of(plan)?;
    let mut child_plan = ChildPlan {
        stdio: [stdio.stdin, stdio.stdout, stdio.stderr],
        error_fd: err_write.as_raw_fd(),
        keep_fds: keep,
        cgroup_procs,
        cgroup_v2_procs,
        join_v2_cgroup: false,
        rlimits: plan.rlimits.clone(),
        unshare_flags,
        id_maps,
        ucount_limits,
        join_userns,
        userns_at_clone: clone_namespaces & libc::CLONE_NEWUSER != 0,
        parent_death: true,
        init,
        init_argv: Vec::new(),
        launch_fd: launch.as_ref().map(|(read, _)| read.as_raw_fd()),
        egress,
        join_netns: join_netns.as_ref().map(AsRawFd::as_raw_fd),
        loopback_up: unshare_flags & libc::CLONE_NEWNET != 0,
        mount_ops,
        slots,
        cwd: cstr(plan.cwd.as_os_str().as_bytes())?,
        cap_last: plan.kernel.cap_last,
        drop_caps: plan.drop_caps,
        lock_privileges: plan.lock_privileges,
        no_new_privs: !plan.yolo,
        landlock_fd: ruleset.as_ref().map(AsRawFd::as_raw_fd),
        landlock_child_rules,
        seccomp: filters,
        dry_run,
        program: program.path,
        argv: program.argv,
        envp: program.envp,
        argv_ptrs: Vec::new(),
        envp_ptrs: Vec::new(),
        init_argv_ptrs: Vec::new(),
    };
    if let Init::Image(_) = init {
        child_plan.init_argv = match child_plan.launch_fd {
            Some(fd) => super::pid1::wait_argv(child_plan.error_fd, fd),
            None => super::pid1::argv(child_plan.error_fd, &child_plan.program, &child_plan.argv),
        };
    }
    child_plan.seal();
    let shares = shares_memory(plan, init);

    let (pid, pidfd) =
        sys::spawn_child(&mut child_plan, cgroup.and_then(CallCgroup::clone_into), clone_namespaces, shares)
            .map_err(|source| clone_error(plan, clone_namespaces, source))?;
    drop(err_write);
    drop(ruleset);
    drop(join_netns);
    let launch = launch.map(|(_, write)| write);
    Ok(Started { spawned: Spawned { pid, pidfd }, errors: std::fs::File::from(err_read), launch })
}

/// The namespaces came with the clone: a refusal there is the kernel's (or a seccomp filter's,
/// or AppArmor's), not an internal failure.
fn clone_error(plan: &SandboxPlan, namespaces: i32, source: std::io::Error) -> SpawnError {
    let refusal = matches!(
        source.raw_os_error(),
        Some(libc::EPERM | libc::EACCES | libc::ENOSPC | libc::EUSERS | libc::EINVAL)
    );
    if namespaces != 0 && refusal {
        let hint = plan.kernel.namespace_remedy();
        SpawnError::Refused {
            layer: Layer::Namespaces,
            text: format!("creating the call's namespaces: {source}; to allow them: {hint}"),
        }
    } else {
        SpawnError::Io { what: "clone", source }
    }
}

fn classify(plan: &SandboxPlan, step: &StepError) -> SpawnError {
    let ops = plan.mounts.as_ref().map_or(&[][..], |v| v.ops.as_slice());
    let text = child::describe(ops, step);
    let refusal = matches!(
        step.errno.0,
        libc::EPERM | libc::EINVAL | libc::ENOSPC | libc::ENOSYS | libc::EACCES | libc::EUSERS
    );
    let op = ops.get(step.index as usize);
    match step.stage {
        Stage::Exec => SpawnError::Exec { program: plan.program.display().to_string(), errno: step.errno },
        Stage::Mount
            if refusal
                && matches!(op, Some(child::MountOp::Fs { fstype, .. }) if fstype.as_bytes() == b"proc") =>
        {
            SpawnError::Refused {
                layer: Layer::FreshProc,
                text: format!("{text}; a fresh /proc is refused under a masked /proc (a container's)"),
            }
        }
        Stage::Mount
            if refusal
                && matches!(op, Some(child::MountOp::MaskSource { .. } | child::MountOp::Mask { .. })) =>
        {
            SpawnError::Refused { layer: Layer::Masks, text }
        }
        Stage::Landlock if refusal => SpawnError::Refused { layer: Layer::Landlock, text },
        // The namespaces work; the overlay's upper layer is what the kernel refused (an upper
        // directory on a filesystem that cannot hold one, such as another overlayfs).
        Stage::Mount
            if refusal
                && matches!(op, Some(child::MountOp::Fs { fstype, .. }) if fstype.as_bytes() == b"overlay") =>
        {
            SpawnError::Refused {
                layer: Layer::Namespaces,
                text: format!(
                    "{text}; the kernel's reason is in `dmesg` (an upper layer on an overlayfs or a filesystem \
                     without xattrs is refused): put HULLWARD_HOME on the root's own filesystem, or use \
                     --workspace direct"
                ),
            }
        }
        Stage::Unshare | Stage::IdMap | Stage::Loopback | Stage::Mount if refusal => {
            let hint = plan.kernel.namespace_remedy();
            SpawnError::Refused { layer: Layer::Namespaces, text: format!("{text}; to allow it: {hint}") }
        }
        _ => SpawnError::Setup(text),
    }
}
