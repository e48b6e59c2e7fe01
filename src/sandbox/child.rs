//! What the child does between `fork` and `exec`: apply a [`ChildPlan`] with raw system calls.
//!
//! The order is DESIGN.md's and it matters: a new session (no terminal injection) → join the
//! call's cgroups → standard descriptors in place and every other inherited descriptor closed →
//! resource limits → new mount, network and IPC namespaces (or, for root, a network namespace
//! made ahead for this child alone, joined) → the filesystem view (built by
//! [`MountOp`]s: a fresh root holding only what the policy grants, masks over protected files) →
//! the working directory → root's child joins the user namespace that bounds its per-user
//! counters → capabilities dropped (bounding set, ambient, then all sets) →
//! `no_new_privs` → Landlock → seccomp (last, so that nothing above is filtered) → `execve` (with
//! a PID namespace: of the init program, `super::pid1`, which forks and executes the program).
//!
//! Nothing here allocates: every string, array and descriptor was prepared by the parent in the
//! plan; the only writes are into slots the plan preallocated. A failing step is reported to the
//! parent through the error pipe as `(stage, index, errno)` and the child exits with 125 — nothing
//! ever runs weaker than planned.

use std::ffi::{CStr, CString};
use std::os::fd::RawFd;

use super::sys::{Errno, SockFilter, Sys};

/// Where in the sequence a step failed; sent to the parent with the op index and errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum Stage {
    Setsid = 1,
    Cgroup = 2,
    Stdio = 3,
    CloseFds = 4,
    Rlimit = 5,
    Unshare = 6,
    Egress = 7,
    Loopback = 8,
    Mount = 9,
    Chdir = 10,
    Securebits = 11,
    CapBound = 12,
    CapAmbient = 13,
    Capset = 14,
    NoNewPrivs = 15,
    LandlockRule = 16,
    Landlock = 17,
    Seccomp = 18,
    Signals = 19,
    Exec = 20,
    IdMap = 21,
    ParentDeath = 22,
    Init = 23,
    Ucounts = 24,
    JoinUserns = 25,
}

impl Stage {
    /// Every stage, so that each code the child can send decodes (a test checks the list).
    pub const ALL: [Stage; 25] = [
        Stage::Setsid,
        Stage::Cgroup,
        Stage::Stdio,
        Stage::CloseFds,
        Stage::Rlimit,
        Stage::Unshare,
        Stage::Egress,
        Stage::Loopback,
        Stage::Mount,
        Stage::Chdir,
        Stage::Securebits,
        Stage::CapBound,
        Stage::CapAmbient,
        Stage::Capset,
        Stage::NoNewPrivs,
        Stage::LandlockRule,
        Stage::Landlock,
        Stage::Seccomp,
        Stage::Signals,
        Stage::Exec,
        Stage::IdMap,
        Stage::ParentDeath,
        Stage::Init,
        Stage::Ucounts,
        Stage::JoinUserns,
    ];

    pub fn from_u32(v: u32) -> Option<Stage> {
        Stage::ALL.into_iter().find(|s| *s as u32 == v)
    }

    pub fn describe(self) -> &'static str {
        match self {
            Stage::Setsid => "starting a new session",
            Stage::Cgroup => "joining the call's cgroup",
            Stage::Stdio => "setting up standard input/output",
            Stage::CloseFds => "closing inherited descriptors",
            Stage::Rlimit => "setting resource limits",
            Stage::Unshare => "creating namespaces",
            Stage::Egress => "binding the egress proxy's listener",
            Stage::Loopback => "bringing up loopback",
            Stage::Mount => "building the filesystem view",
            Stage::Chdir => "entering the working directory",
            Stage::Securebits => "locking securebits",
            Stage::CapBound => "dropping the capability bounding set",
            Stage::CapAmbient => "clearing ambient capabilities",
            Stage::Capset => "dropping capabilities",
            Stage::NoNewPrivs => "setting no_new_privs",
            Stage::LandlockRule => "adding a Landlock rule",
            Stage::Landlock => "enforcing Landlock",
            Stage::Seccomp => "installing the seccomp filter",
            Stage::Signals => "resetting signal dispositions",
            Stage::Exec => "executing the program",
            Stage::IdMap => "writing the user namespace's id maps",
            Stage::ParentDeath => "tying its life to the supervisor's",
            Stage::Init => "starting the PID namespace's init",
            Stage::Ucounts => "limiting the user namespace's per-user counters",
            Stage::JoinUserns => "joining the user namespace that bounds its per-user counters",
        }
    }
}

/// A failed step: the stage, the index of the op within it, and the errno.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepError {
    pub stage: Stage,
    pub index: u32,
    pub errno: Errno,
}

impl StepError {
    /// The 12-byte record written to the error pipe.
    pub fn encode(&self) -> [u8; 12] {
        let mut out = [0u8; 12];
        out[..4].copy_from_slice(&(self.stage as u32).to_le_bytes());
        out[4..8].copy_from_slice(&self.index.to_le_bytes());
        out[8..].copy_from_slice(&self.errno.0.to_le_bytes());
        out
    }

    pub fn decode(buf: &[u8; 12]) -> Option<StepError> {
        let word = |i: usize| [buf[i], buf[i + 1], buf[i + 2], buf[i + 3]];
        Some(StepError {
            stage: Stage::from_u32(u32::from_le_bytes(word(0)))?,
            index: u32::from_le_bytes(word(4)),
            errno: Errno(i32::from_le_bytes(word(8))),
        })
    }
}

/// One step of building the child's filesystem view. Paths are absolute in the child's view at
/// the moment the step runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MountOp {
    /// Stop mount events from propagating back to the host: `/` becomes recursively private.
    MakePrivate,
    /// Take a detached recursive copy of `src` into slot `slot` and set/clear mount attributes
    /// on the copy (`MOUNT_ATTR_*`), before anything covers `src`.
    Clone {
        src: CString,
        slot: usize,
        set: u64,
        clear: u64,
    },
    /// Mount a fresh filesystem without a device (tmpfs, a private devpts instance).
    Fs {
        fstype: CString,
        target: CString,
        flags: u64,
        options: CString,
    },
    /// Create a directory (an existing one is fine).
    Mkdir {
        path: CString,
        mode: u32,
    },
    /// Create a file with this content (in the new root's tmpfs, before it is made read-only).
    WriteFile {
        path: CString,
        content: Vec<u8>,
    },
    /// Create an empty file to mount over (an existing one is fine).
    Touch {
        path: CString,
        mode: u32,
    },
    Symlink {
        target: CString,
        link: CString,
    },
    Chmod {
        path: CString,
        mode: u32,
    },
    /// Attach the copy in `slot` at `target`.
    Attach {
        slot: usize,
        target: CString,
    },
    /// A plain (non-recursive) bind mount: device nodes, write-protected entries.
    Bind {
        src: CString,
        target: CString,
    },
    /// A recursive bind of `path` over itself: it becomes a mount point, which no rename,
    /// exchange or `rmdir` can move (`EBUSY`), and keeps whatever is mounted below it. Like
    /// [`MountOp::ReadOnlyBind`] and [`MountOp::Mask`], the entry is opened (`O_PATH`, no
    /// symlink followed), checked against `expect` — the `(st_dev, st_ino)` the walk found under
    /// that name — and mounted onto through the descriptor: an entry swapped since the walk
    /// stops the child with `ESTALE`, and one swapped after the check is still the one covered.
    Pin {
        path: CString,
        expect: Option<(u64, u64)>,
    },
    /// A bind of `target` over itself, read-only, nosuid, nodev (write-protected entries),
    /// verified like [`MountOp::Pin`].
    ReadOnlyBind {
        target: CString,
        expect: Option<(u64, u64)>,
    },
    /// Make one mount read-only, nosuid, nodev (not its children).
    SetReadOnly {
        target: CString,
    },
    /// Create the mask sources in slot `slot`: a read-only tmpfs holding an empty mode-000 file
    /// `file` and an empty mode-000 directory `dir`, attached at the (empty) directory `at` of
    /// the staged root — copies of a detached mount are refused before Linux 6.15 — until
    /// [`MountOp::Unmount`] and [`MountOp::Rmdir`] remove it again, before the program exists.
    MaskSource {
        slot: usize,
        at: CString,
        /// Stand-ins created in the source next to `file` and `dir`.
        stand_ins: Vec<StandIn>,
    },
    /// Mount a copy of `name` (`file` or `dir`) from the mask source in `slot` over `target`,
    /// verified like [`MountOp::Pin`].
    Mask {
        slot: usize,
        name: CString,
        target: CString,
        expect: Option<(u64, u64)>,
    },
    /// Close a slot's descriptor (dropping a detached mount).
    Close {
        slot: usize,
    },
    /// Detach the mount on `target` (and everything below it).
    Unmount {
        target: CString,
    },
    /// Remove an empty directory.
    Rmdir {
        path: CString,
    },
    /// Make `new_root` the root of this mount namespace and drop the old root entirely.
    PivotRoot {
        new_root: CString,
    },
}

/// A stand-in file of the mask source, mounted over a masked file instead of the empty `file`:
/// mode-000 (the original's execute bits kept) and empty like it, but sparse to the masked
/// file's size and with its modification time, so that git's stat check of a tracked masked
/// file (`.env.example`) finds it unchanged (see `view::stand_in_git_config`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandIn {
    pub name: CString,
    pub size: u64,
    /// Seconds and nanoseconds.
    pub mtime: (i64, i64),
    pub mode: u32,
}

/// A rule the child adds to the Landlock ruleset itself, for directories that only exist in its
/// own view (the private tmpfs mounts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChildLandlockRule {
    pub path: CString,
    pub access: u64,
}

/// Everything the child needs, prepared by the parent. See the module documentation for the
/// order in which [`apply`] uses it.
#[derive(Debug)]
pub struct ChildPlan<'a> {
    /// Descriptors for 0, 1 and 2 (`None`: keep the inherited one).
    pub stdio: [Option<RawFd>; 3],
    /// The write end of the error pipe (close-on-exec).
    pub error_fd: RawFd,
    /// Descriptors that must survive the close-everything step, sorted ascending.
    pub keep_fds: Vec<RawFd>,
    /// `tasks` files (cgroup v1 controllers) the child joins by writing `0`.
    pub cgroup_procs: Vec<RawFd>,
    /// The call's cgroup v2 `cgroup.procs`, joined by writing `0` when the child could not be
    /// created inside it (`clone` instead of `clone3`: no `CLONE_INTO_CGROUP`).
    pub cgroup_v2_procs: Option<RawFd>,
    /// Set by the spawner just before a `clone` fallback: join `cgroup_v2_procs`.
    pub join_v2_cgroup: bool,
    /// `(resource, soft, hard)`.
    pub rlimits: Vec<(u32, u64, u64)>,
    /// `CLONE_NEW*` flags for `unshare`.
    pub unshare_flags: i32,
    /// Files written right after the user namespace is created (by `clone3`, or by `unshare`
    /// when `unshare_flags` has `CLONE_NEWUSER`): `setgroups`, `uid_map`, `gid_map`, each
    /// (path, content).
    pub id_maps: Vec<(CString, Vec<u8>)>,
    /// Per-user limits of the child's own user namespace (`/proc/sys/user/max_inotify_*`), each
    /// (path, value): the kernel charges the child's inotify instances and watches to the
    /// caller's counters too, so without these the child could take them all.
    pub ucount_limits: Vec<(CString, Vec<u8>)>,
    /// A user namespace to join once the view is built (root's child, which has none of its own:
    /// see `sys::identity_userns`), so that its inotify and fanotify objects count against that
    /// namespace's lower limits before root's own.
    pub join_userns: Option<RawFd>,
    /// The user namespace was created by `clone3`: write `id_maps` before anything else.
    pub userns_at_clone: bool,
    /// Die with the supervisor (`PR_SET_PDEATHSIG`), and exit at once if it is already gone.
    pub parent_death: bool,
    /// Whether this process is PID 1 of a new PID namespace, and how its init runs.
    pub init: Init,
    /// The arguments of [`Init::Image`] (see `super::pid1::argv`, `super::pid1::wait_argv`).
    pub init_argv: Vec<CString>,
    /// A sandbox prepared ahead: the read end of the pipe the init program waits on for the
    /// program to run (handed over with the error pipe; `init_argv` names both).
    pub launch_fd: Option<RawFd>,
    /// `--net proxy`: the channel on which to hand back the proxy's listener, and its port (see
    /// [`super::egress`]).
    pub egress: Option<(RawFd, u16)>,
    /// A network namespace made ahead for this child alone (loopback up), joined right after
    /// the unshare instead of creating one.
    pub join_netns: Option<RawFd>,
    /// Bring `lo` up (after creating a fresh network namespace).
    pub loopback_up: bool,
    /// The filesystem view, borrowed from the plan (built once, never copied per call).
    pub mount_ops: &'a [MountOp],
    /// Descriptor slots filled by [`MountOp::Clone`].
    pub slots: Vec<RawFd>,
    pub cwd: CString,
    /// Highest capability number of this kernel (`/proc/sys/kernel/cap_last_cap`).
    pub cap_last: u32,
    /// Drop capabilities (skipped only with `--yolo`).
    pub drop_caps: bool,
    /// Lock securebits and empty the bounding set too. Both need `CAP_SETPCAP`, which a
    /// non-root caller without a user namespace does not have (and does not need: it holds no
    /// capability, and `no_new_privs` keeps file capabilities and setuid from granting any).
    pub lock_privileges: bool,
    pub no_new_privs: bool,
    pub landlock_fd: Option<RawFd>,
    pub landlock_child_rules: Vec<ChildLandlockRule>,
    pub seccomp: Vec<Vec<SockFilter>>,
    /// A probe (`doctor`, `--no-strict`): apply every step, then exit 0 instead of `exec`.
    pub dry_run: bool,
    pub program: CString,
    pub argv: Vec<CString>,
    pub envp: Vec<CString>,
    /// NULL-terminated pointer arrays into `argv` / `envp`, built by [`ChildPlan::seal`].
    pub argv_ptrs: Vec<*const libc::c_char>,
    pub envp_ptrs: Vec<*const libc::c_char>,
    pub init_argv_ptrs: Vec<*const libc::c_char>,
}

/// The init of the child's PID namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Init {
    /// No PID namespace of its own: the child `exec`s the program.
    None,
    /// The child `execveat`s the init program in this sealed memfd (`super::pid1`), which forks
    /// and executes the program.
    Image(RawFd),
    /// The child forks, executes the program in its own child and stays behind as the init
    /// ([`init`]), where no image could be had.
    Fork,
}

impl ChildPlan<'_> {
    /// Builds the pointer arrays `execve` takes. Call once, in the parent, after the last change
    /// to `argv`/`envp` and before forking.
    pub fn seal(&mut self) {
        self.argv_ptrs =
            self.argv.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
        self.envp_ptrs =
            self.envp.iter().map(|e| e.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
        self.init_argv_ptrs =
            self.init_argv.iter().map(|a| a.as_ptr()).chain(std::iter::once(std::ptr::null())).collect();
        self.keep_fds.sort_unstable();
        self.keep_fds.dedup();
    }
}

/// Securebits: root gains no capabilities from exec or setuid, ambient raising is off, and all of
/// that is locked.
const SECUREBITS: u64 = (1 << 0) | (1 << 1) | (1 << 2) | (1 << 3) | (1 << 6) | (1 << 7);
const PR_CAP_AMBIENT: i32 = 47;
const PR_CAP_AMBIENT_CLEAR_ALL: u64 = 4;
const O_PATH_CLOEXEC: i32 = libc::O_PATH | libc::O_CLOEXEC;

fn at(stage: Stage, index: usize) -> impl Fn(Errno) -> StepError {
    move |errno| StepError { stage, index: index as u32, errno }
}

fn tolerate_exists(r: Result<(), Errno>) -> Result<(), Errno> {
    match r {
        Err(Errno(libc::EEXIST)) => Ok(()),
        other => other,
    }
}

/// Runs the plan and never returns: it `exec`s the program (or the init program, which executes
/// it) or exits with 125 after reporting the failed step on the error pipe. With
/// [`Init::Fork`], this process stays behind as the PID namespace's init and the program runs in
/// a child of it (see [`init`]).
pub fn run<S: Sys>(sys: &S, plan: &mut ChildPlan<'_>) -> ! {
    let err = match apply(sys, plan) {
        Ok(()) if plan.dry_run => sys.exit(0),
        Ok(()) => match plan.init {
            Init::None => exec_program(sys, plan),
            Init::Image(image) => exec_init(sys, plan, image),
            Init::Fork => fork_init(sys, plan),
        },
        Err(e) => e,
    };
    let _ = sys.write(plan.error_fd, &err.encode());
    sys.exit(125)
}

fn exec_program<S: Sys>(sys: &S, plan: &ChildPlan<'_>) -> StepError {
    let errno = sys.execve(&plan.program, &plan.argv_ptrs, &plan.envp_ptrs);
    StepError { stage: Stage::Exec, index: 0, errno }
}

/// Hands the error pipe (and a prepared sandbox's launch pipe) on to the init program (it marks
/// the error pipe close-on-exec again for the program, and closes the launch pipe once read) and
/// executes it.
fn exec_init<S: Sys>(sys: &S, plan: &ChildPlan<'_>, image: RawFd) -> StepError {
    for fd in std::iter::once(plan.error_fd).chain(plan.launch_fd) {
        if let Err(errno) = sys.clear_cloexec(fd) {
            return StepError { stage: Stage::Init, index: 2, errno };
        }
    }
    let errno = sys.execveat_fd(image, &plan.init_argv_ptrs, &plan.envp_ptrs);
    StepError { stage: Stage::Init, index: 3, errno }
}

fn fork_init<S: Sys>(sys: &S, plan: &ChildPlan<'_>) -> StepError {
    // The init is a copy of hullward (its memory, its original environment): make it
    // unreadable through /proc before the program exists. The program's own exec makes the
    // program dumpable again.
    if let Err(errno) = sys.prctl(libc::PR_SET_DUMPABLE, 0, 0) {
        return StepError { stage: Stage::Init, index: 1, errno };
    }
    match sys.fork() {
        Ok(0) => exec_program(sys, plan),
        Ok(program) => init(sys, plan, program),
        Err(errno) => StepError { stage: Stage::Init, index: 0, errno },
    }
}

/// PID 1 of the call's PID namespace: reaps every orphan and exits with the program's status
/// (128 + signal when it was killed) as soon as the program ends — which makes the kernel kill
/// whatever else is left in the namespace. It lets go of the error pipe and the standard
/// descriptors first, so the supervisor sees the program's `exec` and end of output exactly as if
/// there were no init.
fn init<S: Sys>(sys: &S, plan: &ChildPlan<'_>, program: libc::pid_t) -> ! {
    let _ = sys.close(plan.error_fd);
    for fd in 0..3 {
        let _ = sys.close(fd);
    }
    loop {
        match sys.wait_any() {
            Ok((pid, status)) if pid == program => sys.exit(status),
            Ok(_) => {}
            Err(Errno(libc::EINTR)) => {}
            Err(_) => sys.exit(125),
        }
    }
}

/// Applies everything up to (not including) `execve`.
pub fn apply<S: Sys>(sys: &S, plan: &mut ChildPlan<'_>) -> Result<(), StepError> {
    if plan.parent_death {
        sys.prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as u64, 0).map_err(at(Stage::ParentDeath, 0))?;
        if sys.peer_closed(plan.error_fd).map_err(at(Stage::ParentDeath, 1))? {
            sys.exit(125);
        }
    }
    sys.setsid().map_err(at(Stage::Setsid, 0))?;
    if plan.userns_at_clone {
        write_id_maps(sys, &plan.id_maps)?;
        limit_ucounts(sys, &plan.ucount_limits)?;
    }
    if let (true, Some(fd)) = (plan.join_v2_cgroup, plan.cgroup_v2_procs) {
        sys.write(fd, b"0").map_err(at(Stage::Cgroup, plan.cgroup_procs.len()))?;
    }
    for (i, fd) in plan.cgroup_procs.iter().enumerate() {
        sys.write(*fd, b"0").map_err(at(Stage::Cgroup, i))?;
    }
    for (target, fd) in plan.stdio.iter().enumerate() {
        if let Some(fd) = fd {
            sys.dup2(*fd, target as RawFd).map_err(at(Stage::Stdio, target))?;
        }
    }
    close_inherited(sys, &plan.keep_fds)?;
    for (i, (res, soft, hard)) in plan.rlimits.iter().enumerate() {
        sys.setrlimit(*res, *soft, *hard).map_err(at(Stage::Rlimit, i))?;
    }
    if plan.unshare_flags != 0 {
        sys.unshare(plan.unshare_flags).map_err(at(Stage::Unshare, 0))?;
    }
    if let Some(fd) = plan.join_netns {
        sys.setns(fd, libc::CLONE_NEWNET).map_err(at(Stage::Unshare, 1))?;
        let _ = sys.close(fd);
    }
    if !plan.userns_at_clone {
        write_id_maps(sys, &plan.id_maps)?;
        limit_ucounts(sys, &plan.ucount_limits)?;
    }
    if plan.loopback_up {
        sys.loopback_up().map_err(at(Stage::Loopback, 0))?;
    }
    if let Some((chan, port)) = plan.egress {
        sys.hand_back_listener(chan, port).map_err(at(Stage::Egress, 0))?;
    }
    for i in 0..plan.mount_ops.len() {
        mount_op(sys, plan, i).map_err(at(Stage::Mount, i))?;
    }
    sys.chdir(&plan.cwd).map_err(at(Stage::Chdir, 0))?;
    if let Some(fd) = plan.join_userns {
        sys.setns(fd, libc::CLONE_NEWUSER).map_err(at(Stage::JoinUserns, 0))?;
        let _ = sys.close(fd);
    }
    if plan.drop_caps {
        drop_capabilities(sys, plan.cap_last, plan.lock_privileges)?;
    }
    if plan.no_new_privs {
        sys.prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0).map_err(at(Stage::NoNewPrivs, 0))?;
    }
    if let Some(ruleset) = plan.landlock_fd {
        for (i, rule) in plan.landlock_child_rules.iter().enumerate() {
            let dir = sys.open(&rule.path, O_PATH_CLOEXEC, 0).map_err(at(Stage::LandlockRule, i))?;
            let added = sys.landlock_add_path_rule(ruleset, dir, rule.access);
            let _ = sys.close(dir);
            added.map_err(at(Stage::LandlockRule, i))?;
        }
        sys.landlock_restrict_self(ruleset).map_err(at(Stage::Landlock, 0))?;
    }
    sys.reset_signals().map_err(at(Stage::Signals, 0))?;
    for (i, program) in plan.seccomp.iter().enumerate() {
        sys.seccomp_install(program).map_err(at(Stage::Seccomp, i))?;
    }
    Ok(())
}

/// Writes the user namespace's own per-user limits (a kernel without one of them is skipped).
fn limit_ucounts<S: Sys>(sys: &S, limits: &[(CString, Vec<u8>)]) -> Result<(), StepError> {
    for (i, (path, value)) in limits.iter().enumerate() {
        // A kernel without the limit, or a read-only /proc/sys (a container's): the child then
        // shares the caller's limits, as it would without a user namespace.
        let fd = match sys.open(path, libc::O_WRONLY | libc::O_CLOEXEC, 0) {
            Err(Errno(libc::ENOENT | libc::EROFS | libc::EACCES | libc::EPERM)) => continue,
            other => other.map_err(at(Stage::Ucounts, i))?,
        };
        let written = sys.write(fd, value);
        let _ = sys.close(fd);
        written.map_err(at(Stage::Ucounts, i))?;
    }
    Ok(())
}

fn write_id_maps<S: Sys>(sys: &S, maps: &[(CString, Vec<u8>)]) -> Result<(), StepError> {
    for (i, (path, content)) in maps.iter().enumerate() {
        let fd = sys.open(path, libc::O_WRONLY | libc::O_CLOEXEC, 0).map_err(at(Stage::IdMap, i))?;
        let written = sys.write(fd, content);
        let _ = sys.close(fd);
        written.map_err(at(Stage::IdMap, i))?;
    }
    Ok(())
}

/// Closes every descriptor above 2 except `keep` (sorted), with one `close_range` per gap.
fn close_inherited<S: Sys>(sys: &S, keep: &[RawFd]) -> Result<(), StepError> {
    let mut next: u32 = 3;
    for (i, fd) in keep.iter().enumerate() {
        let fd = *fd as u32;
        if fd < next {
            continue;
        }
        if fd > next {
            sys.close_range(next, fd - 1).map_err(at(Stage::CloseFds, i))?;
        }
        next = fd + 1;
    }
    sys.close_range(next, u32::MAX).map_err(at(Stage::CloseFds, keep.len()))
}

fn drop_capabilities<S: Sys>(sys: &S, cap_last: u32, lock: bool) -> Result<(), StepError> {
    if lock {
        sys.prctl(libc::PR_SET_SECUREBITS, SECUREBITS, 0).map_err(at(Stage::Securebits, 0))?;
        for cap in 0..=cap_last {
            sys.prctl(libc::PR_CAPBSET_DROP, u64::from(cap), 0).map_err(at(Stage::CapBound, cap as usize))?;
        }
    }
    sys.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0).map_err(at(Stage::CapAmbient, 0))?;
    sys.capset_zero().map_err(at(Stage::Capset, 0))
}

fn mount_op<S: Sys>(sys: &S, plan: &mut ChildPlan<'_>, i: usize) -> Result<(), Errno> {
    const CLONE_FLAGS: u32 = libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC | libc::AT_RECURSIVE as u32;
    let Some(op) = plan.mount_ops.get(i) else { return Ok(()) };
    match op {
        MountOp::MakePrivate => sys.mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None),
        MountOp::Clone { src, slot, set, clear } => {
            let fd = sys.open_tree(libc::AT_FDCWD, src, CLONE_FLAGS)?;
            if let Some(s) = plan.slots.get_mut(*slot) {
                *s = fd;
            }
            if *set != 0 || *clear != 0 {
                sys.mount_setattr_fd(fd, true, *set, *clear)?;
            }
            Ok(())
        }
        MountOp::Fs { fstype, target, flags, options } => {
            sys.mount(Some(fstype), target, Some(fstype), *flags, Some(options))
        }
        MountOp::Mkdir { path, mode } => tolerate_exists(sys.mkdir(path, *mode)),
        MountOp::Touch { path, mode } => {
            let fd = sys.open(path, libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, *mode)?;
            sys.close(fd)
        }
        MountOp::Symlink { target, link } => tolerate_exists(sys.symlink(target, link)),
        MountOp::WriteFile { path, content } => {
            let fd =
                sys.open(path, libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC, 0o644)?;
            let written = sys.write(fd, content);
            let _ = sys.close(fd);
            match written {
                Ok(n) if n == content.len() => Ok(()),
                Ok(_) => Err(Errno(libc::EIO)),
                Err(e) => Err(e),
            }
        }
        MountOp::Chmod { path, mode } => sys.chmod(path, *mode),
        MountOp::Attach { slot, target } => {
            let fd = plan.slots.get(*slot).copied().unwrap_or(-1);
            let attached = sys.move_mount_fd(fd, target);
            let _ = sys.close(fd);
            attached
        }
        MountOp::Bind { src, target } => sys.mount(Some(src), target, None, libc::MS_BIND, None),
        MountOp::Pin { path, expect } => {
            let at = open_verified(sys, path, *expect)?;
            let copy = sys.open_tree(at, c"", CLONE_FLAGS | libc::AT_EMPTY_PATH as u32);
            attach_onto(sys, copy, at, |_| Ok(()))
        }
        MountOp::ReadOnlyBind { target, expect } => {
            const RDONLY_NOSUID_NODEV: u64 = 0x1 | 0x2 | 0x4;
            let at = open_verified(sys, target, *expect)?;
            let copy = sys.open_tree(
                at,
                c"",
                libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC | libc::AT_EMPTY_PATH as u32,
            );
            attach_onto(sys, copy, at, |fd| sys.mount_setattr_fd(fd, false, RDONLY_NOSUID_NODEV, 0))
        }
        MountOp::SetReadOnly { target } => sys.mount(
            None,
            target,
            None,
            libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV,
            None,
        ),
        MountOp::MaskSource { slot, at, stand_ins } => {
            const RDONLY: u64 = 0x1;
            const NOSUID_NODEV_NOEXEC: u64 = 0x2 | 0x4 | 0x8;
            let fd = sys.detached_tmpfs(c"0700", NOSUID_NODEV_NOEXEC)?;
            if let Some(s) = plan.slots.get_mut(*slot) {
                *s = fd;
            }
            let file = sys.openat(fd, c"file", libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC, 0)?;
            sys.close(file)?;
            sys.mkdirat(fd, c"dir", 0)?;
            for s in stand_ins {
                let f = sys.openat(
                    fd,
                    &s.name,
                    libc::O_CREAT | libc::O_EXCL | libc::O_WRONLY | libc::O_CLOEXEC,
                    s.mode,
                )?;
                let shaped = sys.shape_file(f, s.size, s.mtime);
                sys.close(f)?;
                shaped?;
            }
            sys.mount_setattr_fd(fd, false, RDONLY, 0)?;
            sys.move_mount_fd(fd, at)
        }
        MountOp::Mask { slot, name, target, expect } => {
            let source = plan.slots.get(*slot).copied().unwrap_or(-1);
            let at = open_verified(sys, target, *expect)?;
            let copy = sys.open_tree(source, name, libc::OPEN_TREE_CLONE | libc::OPEN_TREE_CLOEXEC);
            attach_onto(sys, copy, at, |_| Ok(()))
        }
        MountOp::Close { slot } => sys.close(plan.slots.get(*slot).copied().unwrap_or(-1)),
        MountOp::Unmount { target } => sys.umount2(target, libc::MNT_DETACH),
        MountOp::Rmdir { path } => sys.rmdir(path),
        MountOp::PivotRoot { new_root } => {
            sys.chdir(new_root)?;
            sys.pivot_root(c".", c".")?;
            sys.umount2(c".", libc::MNT_DETACH)?;
            sys.chdir(c"/")
        }
    }
}

/// The device of an expected identity that lies inside an overlay of the workspace
/// (`crate::workspace`): its device number exists only once the overlay is mounted, and with all
/// its layers on one filesystem the overlay shows the real inode numbers, so the inode alone
/// names the entry.
pub const OVERLAY_DEVICE: u64 = u64::MAX;

/// Opens `path` without following a symlink (`O_PATH`) and checks that it is the entry `expect`
/// names: `ESTALE` when another entry has the name now.
fn open_verified<S: Sys>(sys: &S, path: &CStr, expect: Option<(u64, u64)>) -> Result<RawFd, Errno> {
    let fd = sys.open(path, libc::O_PATH | libc::O_NOFOLLOW | libc::O_CLOEXEC, 0)?;
    let Some(expect) = expect else { return Ok(fd) };
    match sys.identity(fd) {
        Ok(found) if found == expect || (expect.0 == OVERLAY_DEVICE && found.1 == expect.1) => Ok(fd),
        other => {
            let _ = sys.close(fd);
            Err(other.err().unwrap_or(Errno(libc::ESTALE)))
        }
    }
}

/// Prepares the detached mount `copy` (`prepare`) and attaches it onto the entry `at` names;
/// closes both descriptors whatever happens.
fn attach_onto<S: Sys>(
    sys: &S,
    copy: Result<RawFd, Errno>,
    at: RawFd,
    prepare: impl FnOnce(RawFd) -> Result<(), Errno>,
) -> Result<(), Errno> {
    let attached = copy.and_then(|fd| {
        let done = prepare(fd).and_then(|()| sys.move_mount_onto(fd, at));
        let _ = sys.close(fd);
        done
    });
    let _ = sys.close(at);
    attached
}

/// Turns a step error back into words, naming the path of a mount op.
pub fn describe(plan_ops: &[MountOp], err: &StepError) -> String {
    let op = plan_ops.get(err.index as usize);
    let what = match (err.stage, op) {
        (Stage::Mount, Some(op)) => format!("{} ({})", err.stage.describe(), describe_op(op)),
        (stage, _) => stage.describe().to_string(),
    };
    let verified =
        matches!(op, Some(MountOp::Pin { .. } | MountOp::ReadOnlyBind { .. } | MountOp::Mask { .. }));
    if err.stage == Stage::Mount && err.errno.0 == libc::ESTALE && verified {
        return format!(
            "{what}: it is not the entry the walk of the roots found there (swapped or replaced since, \
             by a concurrent process?); nothing runs with an unverified view"
        );
    }
    format!("{what}: {}", err.errno)
}

fn show(c: &CStr) -> String {
    c.to_string_lossy().into_owned()
}

fn describe_op(op: &MountOp) -> String {
    match op {
        MountOp::MakePrivate => "making / private".into(),
        MountOp::Clone { src, .. } => format!("copying mount of '{}'", show(src)),
        MountOp::Fs { fstype, target, .. } => format!("{} on '{}'", show(fstype), show(target)),
        MountOp::Mkdir { path, .. } => format!("mkdir '{}'", show(path)),
        MountOp::Touch { path, .. } => format!("creating mount point '{}'", show(path)),
        MountOp::Symlink { link, .. } => format!("symlink '{}'", show(link)),
        MountOp::WriteFile { path, .. } => format!("writing '{}'", show(path)),
        MountOp::Chmod { path, .. } => format!("chmod '{}'", show(path)),
        MountOp::Attach { target, .. } => format!("attaching at '{}'", show(target)),
        MountOp::Bind { src, target } => format!("bind '{}' over '{}'", show(src), show(target)),
        MountOp::Pin { path, .. } => format!("pinning '{}'", show(path)),
        MountOp::ReadOnlyBind { target, .. } => format!("binding '{}' read-only", show(target)),
        MountOp::SetReadOnly { target } => format!("read-only '{}'", show(target)),
        MountOp::MaskSource { .. } => "creating the mask source".into(),
        MountOp::Mask { target, .. } => format!("masking '{}'", show(target)),
        MountOp::Close { .. } => "closing a mount descriptor".into(),
        MountOp::Unmount { target } => format!("unmounting '{}'", show(target)),
        MountOp::Rmdir { path } => format!("rmdir '{}'", show(path)),
        MountOp::PivotRoot { new_root } => format!("pivot_root to '{}'", show(new_root)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Records every call by name; fails the call whose name is `fail_at`.
    #[derive(Default)]
    struct Recorder {
        calls: RefCell<Vec<String>>,
        fail_at: Option<&'static str>,
        next_fd: RefCell<RawFd>,
    }

    impl Recorder {
        fn rec(&self, name: &str) -> Result<(), Errno> {
            self.calls.borrow_mut().push(name.to_string());
            if self.fail_at == Some(name) {
                Err(Errno(libc::EPERM))
            } else {
                Ok(())
            }
        }
        fn fd(&self) -> RawFd {
            let mut n = self.next_fd.borrow_mut();
            *n += 1;
            100 + *n
        }
    }

    impl Sys for Recorder {
        fn setsid(&self) -> Result<(), Errno> {
            self.rec("setsid")
        }
        fn write(&self, _: RawFd, buf: &[u8]) -> Result<usize, Errno> {
            self.rec("write").map(|_| buf.len())
        }
        fn dup2(&self, _: RawFd, _: RawFd) -> Result<(), Errno> {
            self.rec("dup2")
        }
        fn close(&self, _: RawFd) -> Result<(), Errno> {
            self.rec("close")
        }
        fn close_range(&self, a: u32, b: u32) -> Result<(), Errno> {
            self.rec(&format!("close_range {a}-{b}"))
        }
        fn unshare(&self, _: i32) -> Result<(), Errno> {
            self.rec("unshare")
        }
        fn hand_back_listener(&self, _: RawFd, _: u16) -> Result<(), Errno> {
            self.rec("hand_back_listener")
        }
        fn open(&self, _: &CStr, _: i32, _: u32) -> Result<RawFd, Errno> {
            self.rec("open").map(|_| self.fd())
        }
        fn mount(
            &self,
            _: Option<&CStr>,
            t: &CStr,
            _: Option<&CStr>,
            _: u64,
            _: Option<&CStr>,
        ) -> Result<(), Errno> {
            self.rec(&format!("mount {}", t.to_string_lossy()))
        }
        fn umount2(&self, _: &CStr, _: i32) -> Result<(), Errno> {
            self.rec("umount2")
        }
        fn open_tree(&self, _: RawFd, _: &CStr, _: u32) -> Result<RawFd, Errno> {
            self.rec("open_tree").map(|_| self.fd())
        }
        fn detached_tmpfs(&self, _: &CStr, _: u64) -> Result<RawFd, Errno> {
            self.rec("detached_tmpfs").map(|_| self.fd())
        }
        fn openat(&self, _: RawFd, _: &CStr, _: i32, _: u32) -> Result<RawFd, Errno> {
            self.rec("openat").map(|_| self.fd())
        }
        fn mkdirat(&self, _: RawFd, _: &CStr, _: u32) -> Result<(), Errno> {
            self.rec("mkdirat")
        }
        fn mount_setattr_fd(&self, _: RawFd, _: bool, _: u64, _: u64) -> Result<(), Errno> {
            self.rec("mount_setattr")
        }
        fn move_mount_fd(&self, fd: RawFd, t: &CStr) -> Result<(), Errno> {
            self.rec(&format!("move_mount {fd} {}", t.to_string_lossy()))
        }
        fn move_mount_onto(&self, fd: RawFd, at: RawFd) -> Result<(), Errno> {
            self.rec(&format!("move_mount_onto {fd} {at}"))
        }
        fn identity(&self, _: RawFd) -> Result<(u64, u64), Errno> {
            self.rec("identity").map(|_| (1, 2))
        }
        fn shape_file(&self, _: RawFd, size: u64, _: (i64, i64)) -> Result<(), Errno> {
            self.rec(&format!("shape_file {size}"))
        }
        fn mkdir(&self, _: &CStr, _: u32) -> Result<(), Errno> {
            self.rec("mkdir").and(Err(Errno(libc::EEXIST)))
        }
        fn symlink(&self, _: &CStr, _: &CStr) -> Result<(), Errno> {
            self.rec("symlink")
        }
        fn rmdir(&self, _: &CStr) -> Result<(), Errno> {
            self.rec("rmdir")
        }
        fn chmod(&self, _: &CStr, _: u32) -> Result<(), Errno> {
            self.rec("chmod")
        }
        fn chdir(&self, p: &CStr) -> Result<(), Errno> {
            self.rec(&format!("chdir {}", p.to_string_lossy()))
        }
        fn pivot_root(&self, _: &CStr, _: &CStr) -> Result<(), Errno> {
            self.rec("pivot_root")
        }
        fn loopback_up(&self) -> Result<(), Errno> {
            self.rec("loopback_up")
        }
        fn prctl(&self, op: i32, _: u64, _: u64) -> Result<(), Errno> {
            let name = match op {
                libc::PR_SET_SECUREBITS => "securebits",
                libc::PR_CAPBSET_DROP => "capbset_drop",
                PR_CAP_AMBIENT => "ambient_clear",
                libc::PR_SET_NO_NEW_PRIVS => "no_new_privs",
                libc::PR_SET_DUMPABLE => "undumpable",
                _ => "prctl?",
            };
            self.rec(name)
        }
        fn capset_zero(&self) -> Result<(), Errno> {
            self.rec("capset")
        }
        fn setrlimit(&self, _: u32, _: u64, _: u64) -> Result<(), Errno> {
            self.rec("setrlimit")
        }
        fn setns(&self, _: RawFd, _: i32) -> Result<(), Errno> {
            self.rec("setns")
        }
        fn landlock_add_path_rule(&self, _: RawFd, _: RawFd, _: u64) -> Result<(), Errno> {
            self.rec("landlock_add_rule")
        }
        fn landlock_restrict_self(&self, _: RawFd) -> Result<(), Errno> {
            self.rec("landlock_restrict_self")
        }
        fn seccomp_install(&self, _: &[SockFilter]) -> Result<(), Errno> {
            self.rec("seccomp")
        }
        fn reset_signals(&self) -> Result<(), Errno> {
            self.rec("reset_signals")
        }
        fn execve(&self, _: &CStr, _: &[*const libc::c_char], _: &[*const libc::c_char]) -> Errno {
            let _ = self.rec("execve");
            Errno(libc::ENOENT)
        }
        fn clear_cloexec(&self, _: RawFd) -> Result<(), Errno> {
            self.rec("clear_cloexec")
        }
        fn execveat_fd(&self, _: RawFd, _: &[*const libc::c_char], _: &[*const libc::c_char]) -> Errno {
            let _ = self.rec("execveat");
            Errno(libc::ENOENT)
        }
        fn exit(&self, _: i32) -> ! {
            panic!("exit")
        }
        fn peer_closed(&self, _: RawFd) -> Result<bool, Errno> {
            self.rec("peer_closed").map(|_| false)
        }
        fn fork(&self) -> Result<libc::pid_t, Errno> {
            self.rec("fork").map(|_| 0)
        }
        fn wait_any(&self) -> Result<(libc::pid_t, i32), Errno> {
            self.rec("wait_any").map(|_| (1, 0))
        }
    }

    fn c(s: &str) -> CString {
        CString::new(s).unwrap()
    }

    fn ops() -> Vec<MountOp> {
        vec![
            MountOp::MakePrivate,
            MountOp::Clone { src: c("/usr"), slot: 0, set: 1, clear: 0 },
            MountOp::Fs { fstype: c("tmpfs"), target: c("/tmp"), flags: 0, options: c("mode=0755") },
            MountOp::Mkdir { path: c("/tmp/usr"), mode: 0o755 },
            MountOp::Attach { slot: 0, target: c("/tmp/usr") },
            MountOp::PivotRoot { new_root: c("/tmp") },
        ]
    }

    fn plan(ops: &[MountOp]) -> ChildPlan<'_> {
        let mut p = ChildPlan {
            stdio: [None, Some(10), Some(11)],
            error_fd: 7,
            keep_fds: vec![9, 7],
            cgroup_procs: vec![8],
            cgroup_v2_procs: None,
            join_v2_cgroup: false,
            rlimits: vec![(crate::sandbox::sys::rlimit::NOFILE, 64, 64)],
            unshare_flags: libc::CLONE_NEWNS | libc::CLONE_NEWNET,
            id_maps: vec![],
            ucount_limits: vec![],
            join_userns: Some(13),
            userns_at_clone: false,
            parent_death: true,
            init: Init::Image(14),
            init_argv: vec![c("hullward-pid1"), c("7"), c("/bin/true"), c("true")],
            launch_fd: None,
            egress: Some((12, 3128)),
            join_netns: None,
            loopback_up: true,
            mount_ops: ops,
            slots: vec![-1],
            cwd: c("/work"),
            cap_last: 2,
            drop_caps: true,
            lock_privileges: true,
            no_new_privs: true,
            landlock_fd: Some(9),
            landlock_child_rules: vec![ChildLandlockRule { path: c("/tmp"), access: 3 }],
            seccomp: vec![vec![], vec![]],
            dry_run: false,
            program: c("/bin/true"),
            argv: vec![c("true")],
            envp: vec![c("PATH=/usr/bin")],
            argv_ptrs: vec![],
            envp_ptrs: vec![],
            init_argv_ptrs: vec![],
        };
        p.seal();
        p
    }

    /// The calls `run` makes after the plan is applied, up to the `exit` (which the recorder
    /// turns into a panic) that follows a failed `exec`.
    fn after_apply(init: Init, launch_fd: Option<RawFd>, fail_at: Option<&'static str>) -> Vec<String> {
        let ops = ops();
        let mut p = plan(&ops);
        p.init = init;
        p.launch_fd = launch_fd;
        let applied = Recorder::default();
        apply(&applied, &mut p).unwrap();
        let steps = applied.calls.into_inner().len();
        let rec = Recorder { fail_at, ..Recorder::default() };
        let ran = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(&rec, &mut p)));
        assert!(ran.is_err(), "run returned");
        rec.calls.into_inner().split_off(steps)
    }

    #[test]
    fn the_init_image_gets_the_error_pipe_and_a_failure_is_reported_on_it() {
        assert_eq!(after_apply(Init::Image(14), None, None), ["clear_cloexec", "execveat", "write"]);
        assert_eq!(after_apply(Init::Image(14), None, Some("clear_cloexec")), ["clear_cloexec", "write"]);
        // Prepared ahead, the init gets the launch pipe too.
        let prepared = after_apply(Init::Image(14), Some(15), None);
        assert_eq!(prepared, ["clear_cloexec", "clear_cloexec", "execveat", "write"]);
        // The neighbours: without a PID namespace the program is executed at once; with the
        // fork init the child marks itself undumpable and forks first (the recorder's fork
        // answers as the child, which executes the program).
        assert_eq!(after_apply(Init::None, None, None), ["execve", "write"]);
        assert_eq!(after_apply(Init::Fork, None, None), ["undumpable", "fork", "execve", "write"]);
    }

    #[test]
    fn steps_run_in_the_designed_order() {
        let rec = Recorder::default();
        let ops = ops();
        let mut p = plan(&ops);
        apply(&rec, &mut p).unwrap();
        let calls = rec.calls.into_inner();
        let pos =
            |name: &str| calls.iter().position(|c| c == name).unwrap_or_else(|| panic!("{name}: {calls:?}"));
        let order = [
            "peer_closed",
            "setsid",
            "write",
            "dup2",
            "close_range 3-6",
            "setrlimit",
            "unshare",
            "loopback_up",
            "hand_back_listener",
            "mount /",
            "open_tree",
            "mount /tmp",
            "move_mount 101 /tmp/usr",
            "pivot_root",
            "chdir /work",
            "setns",
            "securebits",
            "capbset_drop",
            "ambient_clear",
            "capset",
            "no_new_privs",
            "landlock_add_rule",
            "landlock_restrict_self",
            "reset_signals",
            "seccomp",
        ];
        for pair in order.windows(2) {
            assert!(pos(pair[0]) < pos(pair[1]), "{} before {}: {calls:?}", pair[0], pair[1]);
        }
        assert!(calls.contains(&"close_range 8-8".to_string()), "{calls:?}");
        assert!(calls.contains(&"close_range 10-4294967295".to_string()), "{calls:?}");
        assert_eq!(calls.iter().filter(|c| *c == "capbset_drop").count(), 3);
        assert_eq!(calls.iter().filter(|c| *c == "seccomp").count(), 2);
        assert_eq!(calls.last().unwrap(), "seccomp", "seccomp must be the last step before exec");
    }

    #[test]
    fn a_failing_step_stops_everything_after_it() {
        let rec = Recorder { fail_at: Some("landlock_restrict_self"), ..Default::default() };
        let ops = ops();
        let mut p = plan(&ops);
        let err = apply(&rec, &mut p).unwrap_err();
        assert_eq!(err.stage, Stage::Landlock);
        let calls = rec.calls.into_inner();
        assert!(!calls.iter().any(|c| c == "seccomp" || c == "execve"), "{calls:?}");
        assert_eq!(StepError::decode(&err.encode()), Some(err));
    }

    #[test]
    fn every_stage_the_child_can_report_decodes() {
        for (code, stage) in Stage::ALL.iter().enumerate() {
            assert_eq!(*stage as u32, code as u32 + 1, "the codes are dense: {stage:?}");
            let err = StepError { stage: *stage, index: 7, errno: Errno(libc::EPERM) };
            assert_eq!(StepError::decode(&err.encode()), Some(err), "{stage:?}");
            assert!(!stage.describe().is_empty());
        }
        let past = StepError { stage: Stage::Init, index: 0, errno: Errno(1) }.encode();
        let mut unknown = past;
        unknown[..4].copy_from_slice(&(Stage::ALL.len() as u32 + 1).to_le_bytes());
        assert_eq!(StepError::decode(&unknown), None);
    }

    #[test]
    fn an_entry_swapped_since_the_walk_stops_the_child_before_anything_is_mounted_onto_it() {
        let rec = Recorder::default();
        let mut ops = ops();
        ops.insert(5, MountOp::Pin { path: c("/tmp/usr/x"), expect: Some((1, 2)) });
        ops.insert(6, MountOp::ReadOnlyBind { target: c("/tmp/usr/x/config"), expect: Some((7, 7)) });
        let mut p = plan(&ops);
        let err = apply(&rec, &mut p).unwrap_err();
        assert_eq!((err.stage, err.index, err.errno), (Stage::Mount, 6, Errno(libc::ESTALE)));
        let calls = rec.calls.into_inner();
        assert_eq!(calls.iter().filter(|c| c.starts_with("move_mount_onto")).count(), 1, "{calls:?}");
        assert!(
            describe(p.mount_ops, &err).contains("swapped or replaced"),
            "{}",
            describe(p.mount_ops, &err)
        );
    }

    #[test]
    fn mount_failures_name_their_path() {
        let rec = Recorder { fail_at: Some("move_mount 101 /tmp/usr"), ..Default::default() };
        let ops = ops();
        let mut p = plan(&ops);
        let err = apply(&rec, &mut p).unwrap_err();
        assert_eq!((err.stage, err.index), (Stage::Mount, 4));
        assert_eq!(
            describe(p.mount_ops, &err),
            "building the filesystem view (attaching at '/tmp/usr'): Operation not permitted (os error 1)"
        );
    }
}
