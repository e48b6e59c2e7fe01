//! The next call's sandbox, made before its request (`serve`, `mcp`).
//!
//! Why it exists: a served call's isolation — the cgroup, the namespaces, the view's mounts and
//! `pivot_root`, Landlock, seccomp — is most of what its caller waits for, and an agent runtime
//! asks for the same sandbox call after call. After each call a thread of its own prepares the
//! sandbox of that call's plan again ([`spawn::prepare`]: every step of the child, its init
//! program left waiting for the program). The next request whose fresh plan asks for exactly that
//! sandbox only names its program, working directory and environment; one that arrives while
//! the sandbox is still being made waits for it (it would take as long to build its own).
//!
//! Never staler than a call built on the spot: each request is planned afresh (its walk sees
//! every protected file as it is then), and the slot is used only if all three hold:
//! - that plan asks for exactly the prepared sandbox ([`SandboxPlan::same_sandbox`]: the same
//!   mount ops, which carry the `(st_dev, st_ino)` of every entry they mask or pin, the same
//!   Landlock rules and seccomp program);
//! - every host path the prepared sandbox holds by inode ([`SandboxPlan::held_paths`]: the view's
//!   sources, the Landlock rules' paths) is still the very inode it was — device, number *and*
//!   birth time, since a file system hands a freed inode number to the next file it creates —
//!   as the call's plan found it (`SandboxPlan::seen`: the `statx` that told the plan whether a
//!   path is a directory or is there also gave its inode; a call built on the spot would build
//!   from what that plan saw too), or as it is now for a path the plan did not ask about;
//! - the prepared sandbox's mount table has not changed since it was ready (its
//!   `/proc/PID/mountinfo`, opened then, is not flagged by the kernel). A mask, pin or read-only
//!   bind sits on a host dentry: when that entry is unlinked or renamed over on the host, the
//!   kernel detaches the mount in every namespace. The name may then hold an entry with the very
//!   identity the plan expects (a recycled inode number, or the same inode linked back), so only
//!   the missing mount tells.
//!
//! Anything else discards the slot and the call builds its own, as without this.
//!
//! Order: [`Ready::start`] once (the thread) → for each call, [`Ready::take`] with its plan →
//! after it, [`Ready::again`] with that plan → [`Ready::discard`] at shutdown. The slot's child
//! is the thread's own (its parent-death signal is tied to it), so the thread lives as long as the
//! process.

use std::collections::HashMap;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use crate::sandbox::cgroup::{CallCgroup, CgroupSupport};
use crate::sandbox::plan::{NetPlan, SandboxPlan};
use crate::sandbox::seen::Identity;
use crate::sandbox::spawn::{self, HeldNamespaces, Prepared, Stdio};
use crate::sandbox::sys;

/// The longest a call waits for a sandbox being made (a few milliseconds, unless the machine is
/// very loaded; then it builds its own).
const WAIT_FOR_PREPARED: Duration = Duration::from_millis(100);

/// A prepared sandbox and what the call that takes it needs besides.
#[derive(Debug)]
pub struct Slot {
    /// The plan it was prepared for (its walk's snapshot dropped: only the sandbox is compared).
    plan: SandboxPlan,
    /// Each held path's identity just before the sandbox was made.
    held: Vec<(PathBuf, Identity)>,
    /// The child's `/proc/PID/mountinfo`, opened once it was ready: the kernel flags it when
    /// any mount of that namespace goes, comes or moves.
    mounts: std::fs::File,
    /// Declared before the cgroup: a slot dropped unused kills its child before the cgroup goes.
    pub prepared: Prepared,
    pub cgroup: Option<CallCgroup>,
    /// The read ends of the child's standard output and error.
    pub out: OwnedFd,
    pub err: OwnedFd,
    /// The child's namespaces (see `Child::namespaces`).
    pub namespaces: HeldNamespaces,
}

/// What the thread is asked to do.
enum Job {
    /// Prepare the sandbox of this plan (the slot it replaces is dropped).
    Prepare(Box<SandboxPlan>),
    /// Drop a slot off the path of the call that discarded it.
    Drop(Box<Slot>),
}

/// The slot, whether one is being made, and whether it may still be filled (not after
/// [`Ready::discard`]).
#[derive(Default)]
struct Shelf {
    slot: Option<Slot>,
    making: bool,
    closed: bool,
}

/// The shelf and its change signal, shared with the thread.
#[derive(Default)]
struct Shared {
    shelf: Mutex<Shelf>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> Option<MutexGuard<'_, Shelf>> {
        self.shelf.lock().ok()
    }
}

/// The slot and the thread that fills it.
pub struct Ready {
    shared: Arc<Shared>,
    jobs: SyncSender<Job>,
}

impl Ready {
    /// Starts the thread that prepares sandboxes in the cgroups of `cgroups`; `None` when no
    /// thread can start.
    pub fn start(cgroups: CgroupSupport) -> Option<Ready> {
        let shared = Arc::new(Shared::default());
        let (jobs, queue) = sync_channel(4);
        let filled = shared.clone();
        let started = std::thread::Builder::new()
            .name("hullward-ready".into())
            .spawn(move || serve(&cgroups, &queue, &filled));
        started.map_err(|e| tracing::debug!("no sandbox is prepared ahead: {e}")).ok()?;
        Some(Ready { shared, jobs })
    }

    /// The prepared sandbox, if it is exactly the one `plan` asks for and still holds what it
    /// held (waiting for one being made); otherwise `None`, and a slot that was there is dropped
    /// by the thread.
    pub fn take(&self, plan: &SandboxPlan) -> Option<Slot> {
        let shelf = self.shared.lock()?;
        let (mut shelf, _) =
            self.shared.changed.wait_timeout_while(shelf, WAIT_FOR_PREPARED, |s| s.making).ok()?;
        let slot = shelf.slot.take()?;
        drop(shelf);
        if slot.plan.same_sandbox(plan) && still_held(&slot.held, &plan.seen) && slot.mounts_unchanged() {
            return Some(slot);
        }
        tracing::debug!("the prepared sandbox is not this call's; it builds its own");
        let _ = self.jobs.try_send(Job::Drop(Box::new(slot)));
        None
    }

    /// Prepares the sandbox of `plan` again, for the next call (a full queue skips it: the
    /// thread is busy).
    pub fn again(&self, plan: SandboxPlan) {
        if let Some(mut shelf) = self.shared.lock() {
            if shelf.closed || self.jobs.try_send(Job::Prepare(Box::new(plan))).is_err() {
                return;
            }
            shelf.making = true;
        }
    }

    /// Kills the prepared sandbox, if any, and prepares no other (shutdown: nothing is left
    /// running or mounted).
    pub fn discard(&self) {
        let slot = self.shared.lock().and_then(|mut s| {
            s.closed = true;
            s.slot.take()
        });
        drop(slot);
    }
}

fn serve(cgroups: &CgroupSupport, queue: &Receiver<Job>, shared: &Shared) {
    while let Ok(job) = queue.recv() {
        match job {
            Job::Drop(old) => drop(old),
            Job::Prepare(plan) => refill(cgroups, *plan, shared),
        }
    }
}

/// Replaces the slot with the sandbox of `plan` (or empties it, when that is not prepared); a
/// slot already prepared for the same sandbox stays (calls that end together do not make it
/// over and over; `take` checks it before use whatever its age).
fn refill(cgroups: &CgroupSupport, plan: SandboxPlan, shared: &Shared) {
    let old = match shared.lock() {
        Some(mut s) if s.slot.as_ref().is_some_and(|slot| slot.plan.same_sandbox(&plan)) => {
            s.making = false;
            drop(s);
            shared.changed.notify_all();
            return;
        }
        Some(mut s) => s.slot.take(),
        None => None,
    };
    drop(old);
    let mut made = match prepare(cgroups, plan) {
        Ok(made) => made,
        Err(e) => {
            tracing::debug!("preparing the next call's sandbox: {e}");
            None
        }
    };
    if let Some(mut s) = shared.lock() {
        if !s.closed {
            s.slot = made.take();
        }
        s.making = false;
    }
    shared.changed.notify_all();
    // A slot made after the discard is killed here, never shelved.
    drop(made);
}

/// The sandbox of `plan`, prepared; `Ok(None)` when such a call is not prepared (no PID
/// namespace or view, the proxy, `--yolo`, a path it would hold whose identity is unknown).
fn prepare(cgroups: &CgroupSupport, mut plan: SandboxPlan) -> Result<Option<Slot>, String> {
    let preparable = !plan.yolo
        && plan.pid_ns
        && plan.mount_ns
        && plan.mounts.is_some()
        && !matches!(plan.net, NetPlan::Proxy { .. });
    if !preparable {
        return Ok(None);
    }
    plan.snapshot = Default::default();
    // A path is often both a source of the view and a Landlock rule's: checked once at take.
    let mut paths: Vec<&Path> = plan.held_paths().collect();
    paths.sort_unstable();
    paths.dedup();
    let held: Vec<_> = paths.into_iter().map(|p| (p.to_path_buf(), Identity::now(p))).collect();
    if held.iter().any(|(_, h)| *h == Identity::Unknown) {
        return Ok(None);
    }
    let cgroup =
        CallCgroup::create(cgroups, &super::call_name(), plan.cgroup_limits()).map_err(|e| e.to_string())?;
    if !cgroup.has_kill() {
        sys::set_child_subreaper().map_err(|e| format!("PR_SET_CHILD_SUBREAPER: {e}"))?;
    }
    let pipe = |what: &str| sys::pipe_cloexec().map_err(|e| format!("{what} pipe: {e}"));
    let (out, out_w) = pipe("stdout")?;
    let (err, err_w) = pipe("stderr")?;
    let (in_r, _) = pipe("stdin")?;
    let stdio = Stdio {
        stdin: Some(in_r.as_raw_fd()),
        stdout: Some(out_w.as_raw_fd()),
        stderr: Some(err_w.as_raw_fd()),
    };
    let prepared = spawn::prepare(&plan, stdio, Some(&cgroup)).map_err(|e| e.to_string())?;
    let pid = prepared.pid();
    let namespaces = HeldNamespaces::of(pid);
    let mounts =
        std::fs::File::open(format!("/proc/{pid}/mountinfo")).map_err(|e| format!("its mount table: {e}"))?;
    Ok(Some(Slot { plan, held, mounts, prepared, cgroup: Some(cgroup), out, err, namespaces }))
}

impl Slot {
    /// No mount of the prepared view was detached, moved or added since it was ready.
    fn mounts_unchanged(&self) -> bool {
        sys::mount_table_changed(std::os::fd::AsFd::as_fd(&self.mounts)).is_ok_and(|changed| !changed)
    }
}

/// Every held path is still the inode it was: a source of the view replaced or renamed away, or
/// the path of a Landlock rule (held by descriptor), changes no mount of the prepared view.
/// `seen` is what the call's plan found a moment before (one `statx` per path answers both).
fn still_held(held: &[(PathBuf, Identity)], seen: &HashMap<PathBuf, Identity>) -> bool {
    held.iter().all(|(path, then)| seen.get(path).copied().unwrap_or_else(|| Identity::now(path)) == *then)
}
