//! What this kernel can enforce, read once per process: the facts behind strict mode, `doctor`
//! and `explain`.
//!
//! [`KernelSupport::probe`] makes only cheap queries (the Landlock version syscall, `prctl`, a few
//! `/proc` and `/sys` files, the cgroup mounts, this process's capabilities and AppArmor label) and
//! predicts from them which [`Layer`]s will be refused ([`KernelSupport::refused`]). What the
//! kernel really does is proven by [`super::spawn::probe`], the call's own child steps in a
//! throwaway child: `doctor` and `run --no-strict` run it and record what it saw refused with
//! [`KernelSupport::refuse`]; strict `run` pays for it only where the facts cannot tell
//! ([`KernelSupport::namespaces_uncertain`]: under a seccomp filter, as in a container), and
//! reports any other refusal of the real child as exit 3.
//!
//! A CLI call starts the probe on a thread first thing ([`KernelSupport::prefetch`]) and takes its
//! result when the engine is built ([`KernelSupport::probe_env`]); a result is taken once, never
//! kept for a later probe. Whichever of the two comes first makes the probe: on a busy machine a
//! new thread can wait a millisecond for a CPU, longer than the probe itself.

use std::path::{Path, PathBuf};

use super::cgroup::CgroupSupport;
use super::sys;

/// The environment variable that pins the Landlock ABI lower than the kernel's (for tests of the
/// degraded and refusing paths).
pub const ABI_PIN_VAR: &str = "HULLWARD_LANDLOCK_ABI";

/// The Landlock ABI whose scopes (signals, abstract sockets) stand in for the PID and network
/// namespaces where those are missing.
pub const SCOPES_ABI: i32 = 6;

/// `CAP_SYS_ADMIN`: without it (a container's root) namespaces come only with a user namespace.
const CAP_SYS_ADMIN: u32 = 21;
/// `CAP_SETPCAP`: needed to lock securebits and shrink the bounding set.
const CAP_SETPCAP: u32 = 8;

/// The probe [`KernelSupport::prefetch`] started, until [`KernelSupport::probe_env`] takes it.
static PREFETCHED: std::sync::Mutex<Option<std::sync::Arc<Handoff>>> = std::sync::Mutex::new(None);

/// The probe shared by the prefetch thread and the caller: made by the first to claim it.
#[derive(Default)]
struct Handoff {
    stage: std::sync::Mutex<Stage>,
    probed: std::sync::Condvar,
}

#[derive(Default)]
enum Stage {
    #[default]
    Unclaimed,
    Probing,
    Probed(Box<KernelSupport>),
    Taken,
}

/// The side making the probe: publishes the facts when dropped, or `Taken` (nothing to take)
/// when the probe unwound, so that the other side never waits for a probe that will not come.
struct Claimed<'a> {
    handoff: &'a Handoff,
    facts: Option<KernelSupport>,
}

impl Drop for Claimed<'_> {
    fn drop(&mut self) {
        let stage = self.facts.take().map_or(Stage::Taken, |f| Stage::Probed(Box::new(f)));
        if let Ok(mut slot) = self.handoff.stage.lock() {
            *slot = stage;
        }
        self.handoff.probed.notify_all();
    }
}

impl Handoff {
    /// Makes the probe unless the other side has claimed it; `true` when this side made it.
    fn probe_if_unclaimed(&self) -> bool {
        let Ok(mut stage) = self.stage.lock() else { return false };
        if !matches!(*stage, Stage::Unclaimed) {
            return false;
        }
        *stage = Stage::Probing;
        drop(stage);
        let mut claimed = Claimed { handoff: self, facts: None };
        claimed.facts = Some(KernelSupport::probe_env_now());
        true
    }

    /// Blocks until the probe is made (by either side), or given up (`Taken`).
    fn wait_probed(&self) -> Option<std::sync::MutexGuard<'_, Stage>> {
        let stage = self.stage.lock().ok()?;
        self.probed.wait_while(stage, |s| matches!(s, Stage::Unclaimed | Stage::Probing)).ok()
    }
}

/// A part of the sandbox that this machine refused when it was tried (or is known to refuse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    /// Mount, PID, IPC, cgroup and network namespaces (with a user namespace when unprivileged).
    Namespaces,
    /// A fresh procfs for the call's PID namespace.
    FreshProc,
    /// The deny-rule masks (copies of a read-only tmpfs mounted over each match).
    Masks,
    /// Enforcing the Landlock ruleset.
    Landlock,
}

/// Why a [`Layer`] is unavailable here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub layer: Layer,
    pub cause: String,
}

/// Kernel facts.
#[derive(Debug, Clone)]
pub struct KernelSupport {
    /// The running kernel's Landlock ABI (0: none).
    pub landlock_kernel_abi: i32,
    /// The ABI hullward uses: the kernel's, or lower when pinned.
    pub landlock_abi: i32,
    /// The pin, when `HULLWARD_LANDLOCK_ABI` is set.
    pub landlock_pin: Option<i32>,
    pub landlock_errata: u64,
    pub seccomp: bool,
    /// This process already lives under a seccomp filter (`Seccomp: 2`, a container's profile or
    /// a service's `SystemCallFilter`): whether it lets namespaces be created cannot be read from
    /// the facts, only tried ([`KernelSupport::namespaces_uncertain`]).
    pub seccomp_filtered: bool,
    /// Effective uid 0 (exempt from `RLIMIT_NPROC`).
    pub root: bool,
    /// Root with `CAP_SYS_ADMIN`: namespaces without a user namespace.
    pub privileged: bool,
    /// `CAP_SETPCAP` in the effective set.
    pub setpcap: bool,
    /// Unprivileged user namespaces are allowed by sysctl (only matters when not privileged).
    pub userns_sysctl: bool,
    /// `kernel.apparmor_restrict_unprivileged_userns=1` and this process is not confined by a
    /// profile that grants `userns` (Ubuntu 23.10+).
    pub apparmor_blocks_userns: bool,
    /// Mounts over parts of `/proc` (a container's masked paths): a fresh procfs is refused in a
    /// user namespace then.
    pub proc_overmounts: Vec<PathBuf>,
    pub cgroups: CgroupSupport,
    /// `/proc/sys/kernel/cap_last_cap`.
    pub cap_last: u32,
    pub kernel_release: String,
    /// Layers refused here: predicted from the facts above, or seen refused by a probe.
    pub refused: Vec<Refusal>,
}

impl KernelSupport {
    /// Reads the facts; `pin` is the value of `HULLWARD_LANDLOCK_ABI`, if set.
    pub fn probe(pin: Option<&str>) -> KernelSupport {
        let kernel_abi = sys::landlock_abi() as i32;
        let pin = pin.and_then(|p| p.trim().parse::<i32>().ok()).map(|p| p.max(0));
        let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default();
        let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
        let cap_eff =
            status_field(&status, "CapEff").and_then(|v| u64::from_str_radix(v, 16).ok()).unwrap_or(0);
        let root = sys::geteuid() == 0;
        let mounts = mounts();
        let mut k = KernelSupport {
            landlock_kernel_abi: kernel_abi,
            landlock_abi: pin.map_or(kernel_abi, |p| p.min(kernel_abi)),
            landlock_pin: pin,
            landlock_errata: if kernel_abi > 0 { sys::landlock_errata() } else { 0 },
            seccomp: sys::seccomp_available(),
            seccomp_filtered: status_field(&status, "Seccomp") == Some("2"),
            root,
            privileged: root && cap_eff & (1 << CAP_SYS_ADMIN) != 0,
            setpcap: cap_eff & (1 << CAP_SETPCAP) != 0,
            userns_sysctl: read("/proc/sys/kernel/unprivileged_userns_clone") != "0"
                && read("/proc/sys/user/max_user_namespaces") != "0",
            apparmor_blocks_userns: read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns") == "1"
                && matches!(read("/proc/self/attr/current").as_str(), "" | "unconfined"),
            proc_overmounts: proc_overmounts(&mounts),
            cgroups: CgroupSupport::detect_in(&mounts),
            cap_last: read("/proc/sys/kernel/cap_last_cap").parse().unwrap_or(40),
            kernel_release: read("/proc/sys/kernel/osrelease"),
            refused: Vec::new(),
        };
        k.refused = k.predicted_refusals();
        k
    }

    /// Probes from the environment of this process, or takes the probe [`KernelSupport::prefetch`]
    /// started (once: every later call probes afresh). When that thread has not begun yet, the
    /// probe is made here and the thread only does its follow-up.
    pub fn probe_env() -> KernelSupport {
        let Some(handoff) = PREFETCHED.lock().ok().and_then(|mut slot| slot.take()) else {
            return KernelSupport::probe_env_now();
        };
        handoff.probe_if_unclaimed();
        let taken = handoff.wait_probed().map(|mut stage| std::mem::replace(&mut *stage, Stage::Taken));
        match taken {
            Some(Stage::Probed(facts)) => *facts,
            _ => KernelSupport::probe_env_now(),
        }
    }

    fn probe_env_now() -> KernelSupport {
        KernelSupport::probe(std::env::var(ABI_PIN_VAR).ok().as_deref())
    }

    /// Starts [`KernelSupport::probe_env`]'s probe on a thread, so that it overlaps what the
    /// process does before it needs the facts (a CLI call loads its policy meanwhile); `then` runs
    /// on that thread after the probe, whichever side made it (it may create processes, which the
    /// probe's reading of the cgroup's members must not see).
    ///
    /// The thread is started on another CPU than this one: a new thread is often queued behind
    /// its creator, which then runs on for a millisecond while the other CPU idles. It gets the
    /// process's CPUs back before `then`, whose processes inherit its mask.
    pub fn prefetch(then: fn()) {
        let handoff = std::sync::Arc::new(Handoff::default());
        let Ok(mut slot) = PREFETCHED.lock() else { return };
        let shared = handoff.clone();
        let all = sys::CpuMask::of_this_thread();
        let started = std::thread::Builder::new().name("hullward-probe".into()).spawn(move || {
            if !shared.probe_if_unclaimed() {
                drop(shared.wait_probed());
            }
            if let Some(all) = all {
                all.apply_here();
            }
            then();
        });
        if let Ok(thread) = started {
            if let Some(others) = all.and_then(sys::CpuMask::without_this_cpu) {
                others.apply_to(&thread);
            }
            *slot = Some(handoff);
        }
    }

    /// The child gets a user namespace (unprivileged callers, and root without `CAP_SYS_ADMIN`).
    pub fn needs_userns(&self) -> bool {
        !self.privileged
    }

    /// Namespaces are not known to be refused, but a seccomp filter above hullward may refuse
    /// them: strict mode tries the plan in a probe child before it decides (a refusal then makes
    /// it plan Landlock-only mode, which it runs only if every promise still holds).
    pub fn namespaces_uncertain(&self) -> bool {
        self.seccomp_filtered && self.refuses(Layer::Namespaces).is_none()
    }

    /// Whether `layer` was refused here.
    pub fn refuses(&self, layer: Layer) -> Option<&Refusal> {
        self.refused.iter().find(|r| r.layer == layer)
    }

    /// Records a refusal seen by a probe (the first cause of a layer is kept).
    pub fn refuse(&mut self, layer: Layer, cause: String) {
        if self.refuses(layer).is_none() {
            self.refused.push(Refusal { layer, cause });
        }
    }

    /// What the facts already say cannot work, before anything is tried.
    fn predicted_refusals(&self) -> Vec<Refusal> {
        let mut out = Vec::new();
        if self.needs_userns() {
            let cause = if !self.userns_sysctl {
                Some("unprivileged user namespaces are disabled (sysctl user.max_user_namespaces=0 or kernel.unprivileged_userns_clone=0)".to_string())
            } else if self.apparmor_blocks_userns {
                Some("AppArmor restricts unprivileged user namespaces (kernel.apparmor_restrict_unprivileged_userns=1) and hullward runs without a profile that grants `userns`".to_string())
            } else {
                None
            };
            if let Some(cause) = cause {
                out.push(Refusal { layer: Layer::Namespaces, cause });
            }
            if !self.proc_overmounts.is_empty() {
                out.push(Refusal {
                    layer: Layer::FreshProc,
                    cause: format!(
                        "/proc is masked (mounts over {}, as in a container), so the kernel refuses a fresh procfs in a user namespace",
                        self.proc_overmounts.iter().take(3).map(|p| p.display().to_string()).collect::<Vec<_>>().join(", ")
                    ),
                });
            }
        }
        out
    }

    /// What would supply the namespaces for this caller.
    pub fn namespace_remedy(&self) -> String {
        if self.apparmor_blocks_userns {
            "install the AppArmor profile (`sudo install -m 644 packaging/apparmor/hullward /etc/apparmor.d/hullward && sudo apparmor_parser -r /etc/apparmor.d/hullward`, it grants hullward `userns`) or set kernel.apparmor_restrict_unprivileged_userns=0".into()
        } else if self.root {
            "run as root with CAP_SYS_ADMIN, or allow user namespaces (a container: `--security-opt seccomp=unconfined`, or a seccomp profile that allows clone/unshare with namespace flags)".into()
        } else {
            "allow unprivileged user namespaces (sysctl user.max_user_namespaces > 0, kernel.unprivileged_userns_clone=1), or run as root".into()
        }
    }
}

/// A field of `/proc/self/status` (read once per probe).
fn status_field<'s>(status: &'s str, name: &str) -> Option<&'s str> {
    status.lines().find_map(|l| Some(l.strip_prefix(name)?.strip_prefix(':')?.trim()))
}

/// Mount points below `/proc` that hide something (binfmt_misc sits on an empty directory and
/// does not count).
fn proc_overmounts(mounts: &[Mount]) -> Vec<PathBuf> {
    mounts
        .iter()
        .map(|m| &m.mount_point)
        .filter(|p| p.starts_with("/proc") && *p != Path::new("/proc"))
        .filter(|p| !p.ends_with("binfmt_misc"))
        .cloned()
        .collect()
}

/// What the probe and the cgroup detection read of one line of `/proc/self/mountinfo`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    pub mount_point: PathBuf,
    pub fs_type: String,
    /// The superblock options (`rw,nsdelegate`; a v1 cgroup mount lists its controllers).
    pub super_options: String,
}

impl Mount {
    /// Whether the superblock options hold `name` (alone or as `name=value`).
    pub fn has_super_option(&self, name: &str) -> bool {
        self.super_options.split(',').any(|o| o.split('=').next() == Some(name))
    }
}

/// This process's mount table, read once per probe (an unreadable table is an empty one).
pub fn mounts() -> Vec<Mount> {
    parse_mountinfo(&std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default())
}

/// `ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL…] - FSTYPE SOURCE SUPER_OPTIONS`, one
/// mount per line; a line that does not have that shape is skipped.
pub fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let mut fields = line.split(' ');
            let mount_point = fields.nth(4)?;
            let mut rest = fields.skip_while(|f| *f != "-").skip(1);
            let fs_type = rest.next()?;
            let super_options = rest.nth(1)?;
            Some(Mount {
                mount_point: unescape(mount_point),
                fs_type: fs_type.to_string(),
                super_options: super_options.to_string(),
            })
        })
        .collect()
}

/// Undoes the kernel's octal escapes of a mountinfo path (`\040` for a space, `\134` for `\`).
fn unescape(field: &str) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    let b = field.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let octal =
            b.get(i + 1..i + 4).filter(|d| b[i] == b'\\' && d.iter().all(|c| (b'0'..=b'7').contains(c)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |acc, c| acc.wrapping_mul(8).wrapping_add(c - b'0')));
                i += 4;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    PathBuf::from(std::ffi::OsString::from_vec(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mountinfo_lines_with_optional_fields_and_escapes() {
        let text = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
                    23 22 0:5 / /proc/sys/fs/binfmt_misc rw shared:3 - binfmt_misc binfmt_misc rw\n\
                    30 1 0:26 / /sys/fs/cgroup/pids rw shared:9 master:2 - cgroup cgroup rw,pids\n\
                    31 1 8:1 /x /srv/my\\040dir\\134y ro - ext4 /dev/sda1 rw,errors=remount-ro\n\
                    broken line\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 4);
        assert_eq!(
            m[0],
            Mount { mount_point: "/proc".into(), fs_type: "proc".into(), super_options: "rw".into() }
        );
        assert_eq!(m[2].fs_type, "cgroup");
        assert!(m[2].has_super_option("pids") && !m[2].has_super_option("pid"));
        assert!(m[3].has_super_option("errors"));
        assert_eq!(m[3].mount_point, Path::new("/srv/my dir\\y"));
        assert_eq!(proc_overmounts(&m), Vec::<PathBuf>::new());
    }

    #[test]
    fn a_prefetched_probe_is_taken_once_and_its_follow_up_runs_after_it() {
        static FOLLOWED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        KernelSupport::prefetch(|| FOLLOWED.store(true, std::sync::atomic::Ordering::SeqCst));
        let fresh = KernelSupport::probe_env_now();
        let taken = KernelSupport::probe_env();
        assert!(PREFETCHED.lock().unwrap().is_none(), "the prefetched probe is not kept");
        assert_eq!(
            (taken.landlock_abi, taken.root, taken.privileged, taken.cap_last, &taken.kernel_release),
            (fresh.landlock_abi, fresh.root, fresh.privileged, fresh.cap_last, &fresh.kernel_release)
        );
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !FOLLOWED.load(std::sync::atomic::Ordering::SeqCst) {
            assert!(std::time::Instant::now() < deadline, "the follow-up never ran");
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    #[test]
    fn a_handoff_is_probed_once_by_whichever_side_claims_it_first() {
        let handoff = std::sync::Arc::new(Handoff::default());
        assert!(handoff.probe_if_unclaimed(), "the first claim makes the probe");
        let other = handoff.clone();
        let late = std::thread::spawn(move || {
            let made = other.probe_if_unclaimed();
            drop(other.wait_probed());
            made
        });
        assert!(!late.join().unwrap(), "a late claim waits for the probe instead of making another");
        let stage = handoff.wait_probed().unwrap();
        assert!(
            matches!(*stage, Stage::Probed(ref facts) if facts.kernel_release == KernelSupport::probe_env_now().kernel_release)
        );
    }

    #[test]
    fn this_process_sees_its_root_and_proc() {
        let m = mounts();
        assert!(m.iter().any(|m| m.mount_point == Path::new("/")), "{m:?}");
        assert!(m.iter().any(|m| m.fs_type == "proc"), "{m:?}");
    }
}
