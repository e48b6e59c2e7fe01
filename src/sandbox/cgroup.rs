//! One cgroup per call: the handle that kills the whole process tree, and the process, memory
//! and CPU limits.
//!
//! Order: [`CgroupSupport::detect`] once (reads `/proc/self/mountinfo`, `/proc/self/cgroup` and
//! the cgroup files; writes nothing) decides *where* the `hullward/` parent goes on cgroup v2 and
//! which controllers its leaves will have → [`CallCgroup::create`] per call: first
//! [`prepare`] makes that true (moves the supervisor into its own leaf when it is alone in its
//! cgroup, or every process of a delegated unit's cgroup into that leaf when the caller shares it
//! — the no-internal-process rule — and enables `+pids +memory +cpu` in each
//! `cgroup.subtree_control` on the way), then a leaf per call with `pids.max`, `memory.max`,
//! `cpu.max` — or the same limits in v1 hierarchies (`pids`, `memory`, `cpu`) where this host has
//! them → the child enters the v2 leaf at creation (`CLONE_INTO_CGROUP`, or by writing its
//! `cgroup.procs` where only `clone` is allowed) and joins the v1 ones by writing `0` to their
//! `tasks` → after the call, [`CallCgroup::kill`] (the `cgroup.kill` file: no survivor, not even
//! a `setsid`-ed grandchild), [`CallCgroup::wait_empty`], and drop removes the directories.
//! Cgroups left behind by a supervisor that was killed are swept (their processes killed) on a
//! thread a later call's [`CallCgroup::create`] starts, while that call runs; its drop waits for
//! the sweep, so the sweep's directory reads are neither before the child starts nor on the
//! exit path a caller waits for.
//!
//! Where the v2 parent goes: the supervisor's own cgroup when it already delegates controllers,
//! is the hierarchy's root, holds nobody but the supervisor, or is a delegated unit (systemd's
//! `trusted.delegate`/`user.delegate` xattr) that the caller shares; else the enclosing systemd unit
//! when the supervisor sits in a sub-cgroup of it (systemd only makes those for `Delegate=yes`
//! units). Anywhere else (a login session's scope, a plain service) the controllers cannot be had
//! without breaking the no-internal-process rule, and [`CgroupSupport::remedy`] names the
//! `systemd-run` command that gives the call a delegated scope.
//!
//! Root ignores `RLIMIT_NPROC`, so without a `pids` controller nothing bounds a fork bomb run as
//! root; strict mode refuses in that case (see `plan`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::kernel::Mount;

/// The controllers hullward uses on cgroup v2.
const WANTED: [&str; 3] = ["pids", "memory", "cpu"];

/// What [`prepare`] must do before the first call's leaf can have its controllers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum V2Setup {
    /// The controllers are already delegated to the parent's directory.
    #[default]
    Ready,
    /// Enable them in the base's `cgroup.subtree_control` (the root cgroup, or a delegated unit
    /// whose processes all live in sub-cgroups).
    Enable,
    /// The supervisor is alone in the base: move it into `hullward/supervisor-PID`, then enable.
    MoveSelf,
    /// The base is a delegated unit (`Delegate=yes`, marked by systemd's `delegate` xattr) that
    /// also holds the caller that started hullward (a service's main process, a script): move
    /// every process of the base into the base's `hullward-moved` leaf (outside `hullward/`, so
    /// that no sweep of dead supervisors' cgroups ever touches the caller), then enable — the
    /// delegatee owns that subtree, and no process may stay where the controllers are enabled.
    MoveAll,
}

/// Where this host's cgroup hierarchies are and which controllers hullward can use.
#[derive(Debug, Clone, Default)]
pub struct CgroupSupport {
    /// The cgroup v2 directory under which `hullward/` is created, when writable.
    pub v2_dir: Option<PathBuf>,
    /// This process's own cgroup v2 directory.
    pub v2_own: Option<PathBuf>,
    /// The v2 leaf supports `cgroup.kill` (kernel 5.14+).
    pub v2_kill: bool,
    /// Controllers the call's v2 leaves get (after [`prepare`]).
    pub v2_controllers: Vec<String>,
    /// What [`prepare`] has to do first.
    pub v2_setup: V2Setup,
    /// This process's directory in the v1 `pids` hierarchy.
    pub v1_pids: Option<PathBuf>,
    /// This process's directory in the v1 `memory` hierarchy.
    pub v1_memory: Option<PathBuf>,
    /// This process's directory in the v1 `cpu` hierarchy.
    pub v1_cpu: Option<PathBuf>,
    /// systemd runs this machine (`/run/systemd/system` exists).
    pub systemd: bool,
}

impl CgroupSupport {
    /// Reads the mount table and this process's cgroups. Never fails: what cannot be found is
    /// simply absent.
    pub fn detect() -> CgroupSupport {
        CgroupSupport::detect_in(&super::kernel::mounts())
    }

    /// [`CgroupSupport::detect`] with the mount table already read (the kernel probe's).
    pub fn detect_in(mounts: &[Mount]) -> CgroupSupport {
        let mut out =
            CgroupSupport { systemd: Path::new("/run/systemd/system").is_dir(), ..Default::default() };
        let groups = own_cgroups();
        for m in mounts {
            match m.fs_type.as_str() {
                "cgroup2" => {
                    if let Some(g) = groups.iter().find(|g| g.hierarchy == 0) {
                        let own = m.mount_point.join(g.path.trim_start_matches('/'));
                        out.v2_kill = own.join("cgroup.kill").exists() || kernel_has_cgroup_kill();
                        if let Some((base, setup, controllers)) = choose_v2_base(&m.mount_point, &own) {
                            out.v2_dir = Some(base);
                            out.v2_setup = setup;
                            out.v2_controllers = controllers;
                        }
                        out.v2_own = Some(own);
                    }
                }
                "cgroup" => {
                    for (name, slot) in
                        [("pids", &mut out.v1_pids), ("memory", &mut out.v1_memory), ("cpu", &mut out.v1_cpu)]
                    {
                        if !m.has_super_option(name) {
                            continue;
                        }
                        if let Some(g) = groups.iter().find(|g| g.controllers.split(',').any(|c| c == name)) {
                            let dir = m.mount_point.join(g.path.trim_start_matches('/'));
                            if is_writable_dir(&dir) {
                                *slot = Some(dir);
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    fn v2_has(&self, controller: &str) -> bool {
        self.v2_dir.is_some() && self.v2_controllers.iter().any(|c| c == controller)
    }

    /// Some controller can limit the number of processes.
    pub fn can_limit_processes(&self) -> bool {
        self.v1_pids.is_some() || self.v2_has("pids")
    }

    /// Some controller can limit memory.
    pub fn can_limit_memory(&self) -> bool {
        self.v1_memory.is_some() || self.v2_has("memory")
    }

    /// Some controller can limit CPU time.
    pub fn can_limit_cpu(&self) -> bool {
        self.v1_cpu.is_some() || self.v2_has("cpu")
    }

    /// The whole tree can be killed atomically.
    pub fn can_kill_tree(&self) -> bool {
        self.v2_dir.is_some() && self.v2_kill
    }

    /// Where the process/memory/CPU controllers come from, for `doctor` and `explain`.
    pub fn source(&self, controller: &str) -> Option<String> {
        let v1 = match controller {
            "pids" => &self.v1_pids,
            "memory" => &self.v1_memory,
            _ => &self.v1_cpu,
        };
        match (&self.v2_dir, v1) {
            (Some(d), _) if self.v2_has(controller) => Some(format!("cgroup v2 ({})", d.display())),
            (_, Some(d)) => Some(format!("cgroup v1 ({})", d.display())),
            _ => None,
        }
    }

    /// What gives this caller a cgroup with the controllers: a transient delegated systemd scope
    /// when systemd runs the machine, else a delegated cgroup made by the administrator.
    pub fn remedy(&self, root: bool) -> String {
        if self.systemd {
            let user = if root { "" } else { "--user " };
            format!("run hullward in a delegated scope: `systemd-run {user}--scope -p Delegate=yes -- hullward …`")
        } else {
            let own =
                self.v2_own.as_ref().map_or_else(|| "its cgroup".to_string(), |p| p.display().to_string());
            format!(
                "start hullward alone in a writable cgroup v2 whose parent delegates +pids +memory +cpu (it is in {own})"
            )
        }
    }
}

/// One line of `/proc/self/cgroup`: `HIERARCHY:CONTROLLERS:PATH` (hierarchy 0 is cgroup v2).
struct OwnCgroup {
    hierarchy: u32,
    controllers: String,
    path: String,
}

fn own_cgroups() -> Vec<OwnCgroup> {
    parse_own_cgroups(&std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default())
}

fn parse_own_cgroups(text: &str) -> Vec<OwnCgroup> {
    text.lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            Some(OwnCgroup {
                hierarchy: parts.next()?.parse().ok()?,
                controllers: parts.next()?.to_string(),
                path: parts.next()?.to_string(),
            })
        })
        .collect()
}

/// Picks the base of `hullward/` for the process whose cgroup v2 directory is `own`, with what
/// must be done there and the controllers its call leaves will have. `None`: no writable place.
fn choose_v2_base(mount: &Path, own: &Path) -> Option<(PathBuf, V2Setup, Vec<String>)> {
    // A supervisor moved into its own leaf by an earlier `prepare` (a long-lived `serve`).
    let own = match own.parent() {
        Some(p)
            if p.file_name().is_some_and(|n| n == "hullward")
                && own.file_name().is_some_and(|n| n.to_string_lossy().starts_with("supervisor-")) =>
        {
            p.parent().unwrap_or(p)
        }
        _ => own,
    };
    if !is_writable_dir(own) {
        return None;
    }
    let listed = |dir: &Path, file: &str| -> Vec<String> {
        std::fs::read_to_string(dir.join(file))
            .map(|s| s.split_whitespace().filter(|c| WANTED.contains(c)).map(str::to_string).collect())
            .unwrap_or_default()
    };
    let delegated = listed(own, "cgroup.subtree_control");
    let available = listed(own, "cgroup.controllers");
    if !available.is_empty() && delegated.len() == available.len() {
        return Some((own.to_path_buf(), V2Setup::Ready, delegated));
    }
    if own == mount {
        return Some((own.to_path_buf(), V2Setup::Enable, available));
    }
    if only_this_process(own) {
        return Some((own.to_path_buf(), V2Setup::MoveSelf, available));
    }
    if has_delegate_xattr(own) {
        return Some((own.to_path_buf(), V2Setup::MoveAll, available));
    }
    // A sub-cgroup of a systemd unit: the unit is delegated (`Delegate=yes`).
    let parent = own.parent().filter(|p| *p != mount && is_writable_dir(p))?;
    let unit = parent.file_name()?.to_string_lossy();
    if unit.ends_with(".service") || unit.ends_with(".scope") || has_delegate_xattr(parent) {
        let delegated = listed(parent, "cgroup.subtree_control");
        let available = listed(parent, "cgroup.controllers");
        let setup = if delegated.len() == available.len() { V2Setup::Ready } else { V2Setup::Enable };
        return Some((parent.to_path_buf(), setup, available));
    }
    // Writable (tree kill works) but without controllers.
    Some((own.to_path_buf(), V2Setup::Ready, delegated))
}

fn only_this_process(dir: &Path) -> bool {
    let me = std::process::id().to_string();
    std::fs::read_to_string(dir.join("cgroup.procs"))
        .is_ok_and(|s| s.lines().all(|l| l.trim() == me) && s.lines().count() == 1)
}

/// systemd marks the cgroups it delegates with `trusted.delegate` (root) or `user.delegate`.
fn has_delegate_xattr(dir: &Path) -> bool {
    ["trusted.delegate", "user.delegate"].iter().any(|name| super::sys::has_xattr(dir, name))
}

/// Makes the v2 controllers of `support` real: moves the supervisor into its own leaf when it is
/// alone in its cgroup and enables the controllers in the base's and `hullward/`'s
/// `cgroup.subtree_control`. Idempotent (a `serve` runs it once per call).
pub fn prepare(support: &CgroupSupport) -> Result<PathBuf, CgroupError> {
    let base = support.v2_dir.clone().ok_or_else(|| CgroupError {
        path: PathBuf::from("/sys/fs/cgroup"),
        source: std::io::Error::from_raw_os_error(libc::ENOENT),
    })?;
    let parent = hullward_dir(&base)?;
    if support.v2_controllers.is_empty() {
        return Ok(parent);
    }
    let enable: String = support.v2_controllers.iter().map(|c| format!("+{c} ")).collect();
    let enabled = |dir: &Path| {
        std::fs::read_to_string(dir.join("cgroup.subtree_control"))
            .is_ok_and(|s| support.v2_controllers.iter().all(|c| s.split_whitespace().any(|x| x == c)))
    };
    if !enabled(&base) {
        match support.v2_setup {
            V2Setup::MoveSelf => {
                let leaf = parent.join(format!("supervisor-{}", std::process::id()));
                make_dir(&leaf)?;
                write_file(&leaf.join("cgroup.procs"), &std::process::id().to_string())?;
                write_file(&base.join("cgroup.subtree_control"), enable.trim_end())?;
            }
            V2Setup::MoveAll => {
                let moved = base.join(MOVED_LEAF);
                make_dir(&moved)?;
                enable_emptying(&base, &moved, enable.trim_end())?;
            }
            V2Setup::Ready | V2Setup::Enable => {
                write_file(&base.join("cgroup.subtree_control"), enable.trim_end())?
            }
        }
    }
    if !enabled(&parent) {
        write_file(&parent.join("cgroup.subtree_control"), enable.trim_end())?;
    }
    Ok(parent)
}

/// The leaf of a delegated unit that [`V2Setup::MoveAll`] moves the unit's processes into.
const MOVED_LEAF: &str = "hullward-moved";

fn make_dir(dir: &Path) -> Result<(), CgroupError> {
    match std::fs::create_dir(dir) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(CgroupError { path: dir.to_path_buf(), source: e }),
    }
}

/// Moves every process of `base` into `leaf` and enables `controllers` below `base`. A process
/// the caller forks in between lands in `base` again and makes the kernel refuse (`EBUSY`), so
/// the two steps are repeated a few times; one that exits in between is skipped.
fn enable_emptying(base: &Path, leaf: &Path, controllers: &str) -> Result<(), CgroupError> {
    let procs = base.join("cgroup.procs");
    let mut last = None;
    for _ in 0..8 {
        let pids = std::fs::read_to_string(&procs).map_err(cg_err(&procs))?;
        for pid in pids.split_whitespace() {
            match write_file(&leaf.join("cgroup.procs"), pid) {
                Err(e) if e.source.raw_os_error() == Some(libc::ESRCH) => {}
                other => other?,
            }
        }
        match write_file(&base.join("cgroup.subtree_control"), controllers) {
            Err(e) if e.source.raw_os_error() == Some(libc::EBUSY) => last = Some(e),
            other => return other,
        }
    }
    Err(last.unwrap_or_else(|| CgroupError {
        path: base.to_path_buf(),
        source: std::io::Error::from_raw_os_error(libc::EBUSY),
    }))
}

fn is_writable_dir(dir: &Path) -> bool {
    dir.is_dir() && super::sys::access_writable(dir)
}

/// The root cgroup has no `cgroup.kill`; the leaves hullward creates do on kernel 5.14+.
fn kernel_has_cgroup_kill() -> bool {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .ok()
        .and_then(|r| {
            let mut it = r.trim().split(['.', '-']);
            Some((it.next()?.parse::<u32>().ok()?, it.next()?.parse::<u32>().ok()?))
        })
        .is_some_and(|version| version >= (5, 14))
}

/// Why a call's cgroup could not be set up.
#[derive(Debug, thiserror::Error)]
#[error("cgroup '{}': {source}", path.display())]
pub struct CgroupError {
    pub path: PathBuf,
    pub source: std::io::Error,
}

fn cg_err(path: &Path) -> impl FnOnce(std::io::Error) -> CgroupError + '_ {
    move |source| CgroupError { path: path.to_path_buf(), source }
}

/// The limits a call's cgroup carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CgroupLimits {
    pub processes: Option<u64>,
    pub memory: Option<u64>,
    /// CPU time in thousandths of a CPU (`Limits.Cpu: 0.5` is 500).
    pub cpu_millis: Option<u64>,
}

/// The CFS period hullward uses (the kernel's default, 100 ms).
const CPU_PERIOD_US: u64 = 100_000;

/// The cgroups of one call.
#[derive(Debug)]
pub struct CallCgroup {
    v2: Option<(PathBuf, OwnedFd)>,
    /// The v2 leaf has a `cgroup.kill` file (looked up once, at creation).
    v2_kill: bool,
    /// The v2 leaf's `cgroup.procs`, for a child that cannot be cloned into it.
    v2_procs: Option<OwnedFd>,
    v1: Vec<PathBuf>,
    join: Vec<OwnedFd>,
    /// The sweep of dead supervisors' cgroups beside this call's ([`CallCgroup::start_sweep`]).
    sweep: Option<std::thread::JoinHandle<()>>,
}

impl CallCgroup {
    /// Creates the call's cgroups named `name` with the given limits.
    pub fn create(
        support: &CgroupSupport,
        name: &str,
        limits: CgroupLimits,
    ) -> Result<CallCgroup, CgroupError> {
        let mut cg = CallCgroup {
            v2: None,
            v2_kill: false,
            v2_procs: None,
            v1: Vec::new(),
            join: Vec::new(),
            sweep: None,
        };
        let v2 = |c: &str| support.v2_has(c);
        if support.v2_dir.is_some() {
            let dir = leaf_in(&prepare(support)?, name)?;
            if let (Some(n), true) = (limits.processes, v2("pids")) {
                write_file(&dir.join("pids.max"), &n.to_string())?;
            }
            if let (Some(m), true) = (limits.memory, v2("memory")) {
                write_file(&dir.join("memory.max"), &m.to_string())?;
                write_file(&dir.join("memory.swap.max"), "0").ok();
            }
            if let (Some(c), true) = (limits.cpu_millis, v2("cpu")) {
                write_file(&dir.join("cpu.max"), &format!("{} {CPU_PERIOD_US}", cpu_quota(c)))?;
            }
            let fd = File::open(&dir).map_err(cg_err(&dir))?;
            let procs = dir.join("cgroup.procs");
            let procs_fd = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_CLOEXEC)
                .open(&procs)
                .map_err(cg_err(&procs))?;
            cg.v2_procs = Some(procs_fd.into());
            cg.v2_kill = dir.join("cgroup.kill").exists();
            cg.v2 = Some((dir, fd.into()));
        }
        if let (Some(base), Some(n), false) = (&support.v1_pids, limits.processes, v2("pids")) {
            let dir = leaf(base, name)?;
            write_file(&dir.join("pids.max"), &n.to_string())?;
            cg.v1.push(dir);
        }
        if let (Some(base), Some(m), false) = (&support.v1_memory, limits.memory, v2("memory")) {
            let dir = leaf(base, name)?;
            write_file(&dir.join("memory.limit_in_bytes"), &m.to_string())?;
            cg.v1.push(dir);
        }
        if let (Some(base), Some(c), false) = (&support.v1_cpu, limits.cpu_millis, v2("cpu")) {
            let dir = leaf(base, name)?;
            write_file(&dir.join("cpu.cfs_period_us"), &CPU_PERIOD_US.to_string())?;
            write_file(&dir.join("cpu.cfs_quota_us"), &cpu_quota(c).to_string())?;
            cg.v1.push(dir);
        }
        // The child joins v1 hierarchies through `tasks`, not `cgroup.procs`: moving only the
        // calling thread (the child is single-threaded) skips the global threadgroup lock, whose
        // RCU grace period costs ~10 ms per call.
        for dir in &cg.v1 {
            let tasks = dir.join("tasks");
            let f = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_CLOEXEC)
                .open(&tasks)
                .map_err(cg_err(&tasks))?;
            cg.join.push(f.into());
        }
        cg.start_sweep();
        Ok(cg)
    }

    /// Sweeps the `hullward/` parents of this call's directories of dead supervisors' cgroups, on
    /// a thread (inline when none can be started).
    fn start_sweep(&mut self) {
        let parents: Vec<PathBuf> = self.dirs().filter_map(|d| d.parent()).map(Path::to_path_buf).collect();
        let sweep = move || parents.iter().for_each(|p| sweep_stale(p));
        match std::thread::Builder::new().name("hullward-sweep".into()).spawn(sweep.clone()) {
            Ok(thread) => self.sweep = Some(thread),
            Err(_) => sweep(),
        }
    }

    /// The call's directories: the v2 leaf, then the v1 ones.
    fn dirs(&self) -> impl Iterator<Item = &PathBuf> {
        self.v2.iter().map(|(d, _)| d).chain(&self.v1)
    }

    /// The v2 leaf's `cgroup.procs` descriptor (the child writes `0` into it when it was not
    /// cloned into the leaf).
    pub fn v2_procs_fd(&self) -> Option<RawFd> {
        self.v2_procs.as_ref().map(AsRawFd::as_raw_fd)
    }

    /// The v2 directory descriptor for `CLONE_INTO_CGROUP`.
    pub fn clone_into(&self) -> Option<RawFd> {
        self.v2.as_ref().map(|(_, fd)| fd.as_raw_fd())
    }

    /// The v1 `tasks` descriptors the child writes `0` into.
    pub fn join_fds(&self) -> Vec<RawFd> {
        self.join.iter().map(AsRawFd::as_raw_fd).collect()
    }

    /// Whether `kill` is atomic for the whole tree.
    pub fn has_kill(&self) -> bool {
        self.v2.is_some() && self.v2_kill
    }

    /// Kills every process of the call. With `cgroup.kill` this is one write; otherwise every
    /// pid listed in the v1 hierarchies is sent SIGKILL until none is left.
    pub fn kill(&self) -> std::io::Result<()> {
        if let Some((dir, _)) = self.v2.as_ref().filter(|_| self.v2_kill) {
            return write_file(&dir.join("cgroup.kill"), "1").map_err(|e| e.source);
        }
        for _ in 0..100 {
            let pids = self.pids();
            if pids.is_empty() {
                return Ok(());
            }
            for pid in pids {
                let _ = super::sys::kill(pid, libc::SIGKILL);
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// The pids currently in the call's cgroups.
    pub fn pids(&self) -> Vec<libc::pid_t> {
        let mut out: Vec<libc::pid_t> = self
            .dirs()
            .flat_map(|d| {
                std::fs::read_to_string(d.join("cgroup.procs"))
                    .unwrap_or_default()
                    .lines()
                    .filter_map(|l| l.trim().parse().ok())
                    .collect::<Vec<_>>()
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Whether no process of the call is left. With `cgroup.kill` the v2 leaf alone answers:
    /// every process is in the unified hierarchy, the call's in that leaf, which is also all that
    /// `cgroup.kill` kills (a v1 leaf could only list a process the v2 one lists too); without
    /// it, every hierarchy's leaf is read.
    pub fn is_empty(&self) -> bool {
        match self.v2.as_ref().filter(|_| self.v2_kill) {
            Some((dir, _)) => std::fs::read(dir.join("cgroup.procs")).is_ok_and(|procs| procs.is_empty()),
            None => self.pids().is_empty(),
        }
    }

    /// Waits until no process is left, up to `timeout`. Returns whether it emptied.
    pub fn wait_empty(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_micros(20);
        loop {
            if self.is_empty() {
                return true;
            }
            if Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(2));
        }
    }
}

impl Drop for CallCgroup {
    /// Removes the call's directories and waits for the sweep of their parents.
    fn drop(&mut self) {
        self.join.clear();
        self.v2_procs = None;
        for dir in self.dirs() {
            let _ = std::fs::remove_dir(dir);
        }
        if let Some(sweep) = self.sweep.take() {
            let _ = sweep.join();
        }
    }
}

/// The CFS quota for `millis` thousandths of a CPU per [`CPU_PERIOD_US`] (at least the kernel's
/// minimum of 1 ms).
fn cpu_quota(millis: u64) -> u64 {
    (millis * CPU_PERIOD_US / 1000).max(1000)
}

/// `base/hullward`, created when missing.
fn hullward_dir(base: &Path) -> Result<PathBuf, CgroupError> {
    let parent = base.join("hullward");
    make_dir(&parent)?;
    Ok(parent)
}

fn leaf_in(parent: &Path, name: &str) -> Result<PathBuf, CgroupError> {
    let dir = parent.join(name);
    std::fs::create_dir(&dir).map_err(cg_err(&dir))?;
    Ok(dir)
}

fn leaf(base: &Path, name: &str) -> Result<PathBuf, CgroupError> {
    leaf_in(&hullward_dir(base)?, name)
}

/// The supervisor that created a call's cgroup (`call-<pid>-…`) or moved itself into one
/// (`supervisor-<pid>`), from the directory name.
fn owner_pid(name: &str) -> Option<libc::pid_t> {
    let rest = name.strip_prefix("call-").or_else(|| name.strip_prefix("supervisor-"))?;
    rest.split('-').next()?.parse().ok()
}

/// Removes the cgroups of calls whose supervisor died without cleaning up (SIGKILL, OOM), after
/// killing anything still in them.
fn sweep_stale(parent: &Path) {
    let Ok(entries) = std::fs::read_dir(parent) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner_pid) else { continue };
        if super::sys::process_exists(pid) {
            continue;
        }
        let dir = entry.path();
        let kill = dir.join("cgroup.kill");
        if kill.exists() {
            let _ = write_file(&kill, "1");
        } else if let Ok(tasks) = std::fs::read_to_string(dir.join("tasks")) {
            for pid in tasks.lines().filter_map(|l| l.trim().parse().ok()) {
                let _ = super::sys::kill(pid, libc::SIGKILL);
            }
        }
        for _ in 0..50 {
            if std::fs::remove_dir(&dir).is_ok() {
                break;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

fn write_file(path: &Path, value: &str) -> Result<(), CgroupError> {
    OpenOptions::new()
        .write(true)
        .open(path)
        .and_then(|mut f| f.write_all(value.as_bytes()))
        .map_err(cg_err(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_calls_cgroups_sweep_the_dead_supervisors_leaves_beside_them_by_their_drop() {
        let parent = tempfile::tempdir().unwrap();
        let mut gone = std::process::Command::new("true").spawn().unwrap();
        let dead = gone.id();
        gone.wait().unwrap();
        let me = std::process::id();
        let stale = parent.path().join(format!("call-{dead}-0-00000000"));
        let live = parent.path().join(format!("call-{me}-1-00000000"));
        let mine = parent.path().join(format!("call-{me}-2-00000000"));
        let other = parent.path().join("not-a-call");
        for d in [&stale, &live, &mine, &other] {
            std::fs::create_dir(d).unwrap();
        }
        let mut cg = CallCgroup {
            v2: None,
            v2_kill: false,
            v2_procs: None,
            v1: vec![mine.clone()],
            join: Vec::new(),
            sweep: None,
        };
        cg.start_sweep();
        drop(cg);
        assert!(!mine.exists(), "the call's own leaf is removed");
        assert!(!stale.exists(), "a dead supervisor's leaf is swept");
        assert!(live.exists() && other.exists(), "a live supervisor's leaf and foreign entries stay");
    }

    #[test]
    fn own_cgroup_lines_of_a_hybrid_host() {
        let g = parse_own_cgroups(
            "12:pids:/user.slice\n4:cpu,cpuacct:/\n1:name=systemd:/a:b\n0::/init.scope\nx\n",
        );
        assert_eq!(g.len(), 4);
        assert_eq!(
            (g[0].hierarchy, g[0].controllers.as_str(), g[0].path.as_str()),
            (12, "pids", "/user.slice")
        );
        assert!(g[1].controllers.split(',').any(|c| c == "cpu"));
        assert_eq!(g[2].path, "/a:b", "a path may hold a colon");
        assert_eq!((g[3].hierarchy, g[3].path.as_str()), (0, "/init.scope"));
    }
}
