//! What this kernel can enforce, read once per process: the facts behind strict mode, `doctor`
//! and `explain`.
//!
//! [`KernelSupport::probe`] makes only cheap queries (the Landlock version syscall, `prctl`, a few
//! `/proc` and `/sys` files, the cgroup mounts). Whether namespaces can really be created is proven
//! by [`probe_namespaces`], which forks a throwaway child — `doctor` calls it; `run` does not pay
//! for it and instead reports a namespace failure of the real child as a strict refusal.

use super::cgroup::CgroupSupport;
use super::sys;

/// The environment variable that pins the Landlock ABI lower than the kernel's (for tests of the
/// degraded and refusing paths).
pub const ABI_PIN_VAR: &str = "HULLWARD_LANDLOCK_ABI";

/// The Landlock ABI strict mode needs: 6 adds the signal and abstract-socket scopes.
pub const STRICT_ABI: i32 = 6;

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
    pub root: bool,
    /// Unprivileged user namespaces are allowed by sysctl (only matters when not root).
    pub userns_sysctl: bool,
    pub cgroups: CgroupSupport,
    /// `/proc/sys/kernel/cap_last_cap`.
    pub cap_last: u32,
    pub kernel_release: String,
}

impl KernelSupport {
    /// Reads the facts; `pin` is the value of `HULLWARD_LANDLOCK_ABI`, if set.
    pub fn probe(pin: Option<&str>) -> KernelSupport {
        let kernel_abi = sys::landlock_abi() as i32;
        let pin = pin.and_then(|p| p.trim().parse::<i32>().ok()).map(|p| p.max(0));
        let read = |p: &str| std::fs::read_to_string(p).map(|s| s.trim().to_string()).unwrap_or_default();
        KernelSupport {
            landlock_kernel_abi: kernel_abi,
            landlock_abi: pin.map_or(kernel_abi, |p| p.min(kernel_abi)),
            landlock_pin: pin,
            landlock_errata: if kernel_abi > 0 { sys::landlock_errata() } else { 0 },
            seccomp: sys::seccomp_available(),
            root: sys::geteuid() == 0,
            userns_sysctl: read("/proc/sys/kernel/unprivileged_userns_clone") != "0"
                && read("/proc/sys/user/max_user_namespaces") != "0",
            cgroups: CgroupSupport::detect(),
            cap_last: read("/proc/sys/kernel/cap_last_cap").parse().unwrap_or(40),
            kernel_release: read("/proc/sys/kernel/osrelease"),
        }
    }

    /// Probes from the environment of this process.
    pub fn probe_env() -> KernelSupport {
        KernelSupport::probe(std::env::var(ABI_PIN_VAR).ok().as_deref())
    }
}

/// Result of actually creating namespaces in a throwaway child.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NamespaceProbe {
    pub user: bool,
    pub mount: bool,
    pub network: bool,
}

/// Forks children that try `unshare` with each namespace type and exit; reports what worked.
pub fn probe_namespaces(root: bool) -> NamespaceProbe {
    let try_flags = |flags: i32| sys::probe_unshare(flags).unwrap_or(false);
    let user = try_flags(libc::CLONE_NEWUSER);
    let extra = if root { 0 } else { libc::CLONE_NEWUSER };
    NamespaceProbe {
        user,
        mount: try_flags(libc::CLONE_NEWNS | extra),
        network: try_flags(libc::CLONE_NEWNET | extra),
    }
}
