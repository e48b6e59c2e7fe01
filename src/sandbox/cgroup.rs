//! One cgroup per call: the handle that kills the whole process tree, and the process limit.
//!
//! Order: [`CgroupSupport::detect`] once (reads `/proc/self/mountinfo` and `/proc/self/cgroup`) →
//! [`CallCgroup::create`] per call (a cgroup v2 leaf for `cgroup.kill`, and the `pids` — and,
//! when a memory limit is set, `memory` — controller wherever this host has it: v2, or a v1
//! hierarchy as on these machines) → the child enters the v2 leaf at creation
//! (`CLONE_INTO_CGROUP`) and joins the v1 ones by writing `0` to their `tasks` → after the
//! call, [`CallCgroup::kill`] (the `cgroup.kill` file: no survivor, not even a `setsid`-ed
//! grandchild), [`CallCgroup::wait_empty`], and drop removes the directories. Cgroups left behind
//! by a supervisor that was killed are swept (their processes killed) when the next call creates
//! its own.
//!
//! Root ignores `RLIMIT_NPROC`, so without a `pids` controller nothing bounds a fork bomb run as
//! root; strict mode refuses in that case (see `plan`).

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use procfs::process::Process;

/// Where this host's cgroup hierarchies are and which controllers hullward can use.
#[derive(Debug, Clone, Default)]
pub struct CgroupSupport {
    /// This process's cgroup v2 directory (mount point joined with our path), when writable.
    pub v2_dir: Option<PathBuf>,
    /// The v2 leaf supports `cgroup.kill` (kernel 5.14+).
    pub v2_kill: bool,
    /// Controllers enabled for children of `v2_dir`.
    pub v2_controllers: Vec<String>,
    /// This process's directory in the v1 `pids` hierarchy.
    pub v1_pids: Option<PathBuf>,
    /// This process's directory in the v1 `memory` hierarchy.
    pub v1_memory: Option<PathBuf>,
}

impl CgroupSupport {
    /// Reads the mount table and this process's cgroups. Never fails: what cannot be found is
    /// simply absent.
    pub fn detect() -> CgroupSupport {
        let mut out = CgroupSupport::default();
        let Ok(me) = Process::myself() else { return out };
        let (Ok(mounts), Ok(groups)) = (me.mountinfo(), me.cgroups()) else { return out };
        for m in mounts.into_iter() {
            match m.fs_type.as_str() {
                "cgroup2" => {
                    if let Some(g) = groups.0.iter().find(|g| g.hierarchy == 0) {
                        let dir = m.mount_point.join(g.pathname.trim_start_matches('/'));
                        if is_writable_dir(&dir) {
                            out.v2_kill = dir.join("cgroup.kill").exists() || kernel_has_cgroup_kill();
                            out.v2_controllers = std::fs::read_to_string(dir.join("cgroup.subtree_control"))
                                .map(|s| s.split_whitespace().map(str::to_string).collect())
                                .unwrap_or_default();
                            out.v2_dir = Some(dir);
                        }
                    }
                }
                "cgroup" => {
                    for (name, slot) in [("pids", &mut out.v1_pids), ("memory", &mut out.v1_memory)] {
                        if m.super_options.contains_key(name) {
                            if let Some(g) = groups.0.iter().find(|g| g.controllers.iter().any(|c| c == name))
                            {
                                let dir = m.mount_point.join(g.pathname.trim_start_matches('/'));
                                if is_writable_dir(&dir) {
                                    *slot = Some(dir);
                                }
                            }
                        }
                    }
                }
                _ => {}
            }
        }
        out
    }

    /// Some controller can limit the number of processes.
    pub fn can_limit_processes(&self) -> bool {
        self.v1_pids.is_some() || (self.v2_dir.is_some() && self.v2_controllers.iter().any(|c| c == "pids"))
    }

    /// The whole tree can be killed atomically.
    pub fn can_kill_tree(&self) -> bool {
        self.v2_dir.is_some() && self.v2_kill
    }
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

/// The cgroups of one call.
#[derive(Debug)]
pub struct CallCgroup {
    v2: Option<(PathBuf, OwnedFd)>,
    v1: Vec<PathBuf>,
    join: Vec<OwnedFd>,
}

impl CallCgroup {
    /// Creates the call's cgroups named `name` with the given limits.
    pub fn create(
        support: &CgroupSupport,
        name: &str,
        processes: Option<u64>,
        memory: Option<u64>,
    ) -> Result<CallCgroup, CgroupError> {
        let mut cg = CallCgroup { v2: None, v1: Vec::new(), join: Vec::new() };
        let v2_pids = support.v2_controllers.iter().any(|c| c == "pids");
        let v2_memory = support.v2_controllers.iter().any(|c| c == "memory");
        if let Some(base) = &support.v2_dir {
            let dir = leaf(base, name)?;
            if let (Some(n), true) = (processes, v2_pids) {
                write_file(&dir.join("pids.max"), &n.to_string())?;
            }
            if let (Some(m), true) = (memory, v2_memory) {
                write_file(&dir.join("memory.max"), &m.to_string())?;
                write_file(&dir.join("memory.swap.max"), "0").ok();
            }
            let fd = File::open(&dir).map_err(cg_err(&dir))?;
            cg.v2 = Some((dir, fd.into()));
        }
        if let (Some(base), Some(n), false) = (&support.v1_pids, processes, v2_pids) {
            let dir = leaf(base, name)?;
            write_file(&dir.join("pids.max"), &n.to_string())?;
            cg.v1.push(dir);
        }
        if let (Some(base), Some(m), false) = (&support.v1_memory, memory, v2_memory) {
            let dir = leaf(base, name)?;
            write_file(&dir.join("memory.limit_in_bytes"), &m.to_string())?;
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
        Ok(cg)
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
        self.v2.as_ref().is_some_and(|(d, _)| d.join("cgroup.kill").exists())
    }

    /// Kills every process of the call. With `cgroup.kill` this is one write; otherwise every
    /// pid listed in the v1 hierarchies is sent SIGKILL until none is left.
    pub fn kill(&self) -> std::io::Result<()> {
        if let Some((dir, _)) = &self.v2 {
            let kill = dir.join("cgroup.kill");
            if kill.exists() {
                return write_file(&kill, "1").map_err(|e| e.source);
            }
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
        let dirs = self.v2.iter().map(|(d, _)| d).chain(&self.v1);
        let mut out: Vec<libc::pid_t> = dirs
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

    /// Waits until no process is left, up to `timeout`. Returns whether it emptied.
    pub fn wait_empty(&self, timeout: Duration) -> bool {
        let deadline = Instant::now() + timeout;
        let mut pause = Duration::from_micros(20);
        loop {
            if self.pids().is_empty() {
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
    fn drop(&mut self) {
        self.join.clear();
        if let Some((dir, _)) = self.v2.take() {
            let _ = std::fs::remove_dir(dir);
        }
        for dir in self.v1.drain(..) {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

fn leaf(base: &Path, name: &str) -> Result<PathBuf, CgroupError> {
    let parent = base.join("hullward");
    match std::fs::create_dir(&parent) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => sweep_stale(&parent),
        Err(e) => return Err(CgroupError { path: parent, source: e }),
    }
    let dir = parent.join(name);
    std::fs::create_dir(&dir).map_err(cg_err(&dir))?;
    Ok(dir)
}

/// The supervisor that created a call's cgroup (`call-<pid>-…`), from the directory name.
fn owner_pid(name: &str) -> Option<libc::pid_t> {
    name.strip_prefix("call-")?.split('-').next()?.parse().ok()
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
