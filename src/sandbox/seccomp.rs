//! The seccomp filters: compiled in the parent (seccompiler), installed last by the child.
//!
//! Default allow; the listed calls fail with `EPERM` — never a kill, so that tools see an error
//! they can report. What is listed and why (DESIGN.md, "seccomp"):
//! * `socket`/`socketpair` for every family but `AF_UNIX` (and `AF_NETLINK`/`NETLINK_ROUTE`;
//!   with the egress proxy also TCP over `AF_INET`/`AF_INET6`, and nothing else of those; in a
//!   network namespace of the call's own, TCP and UDP over them, for the call's private loopback);
//!   without a network namespace (Landlock-only mode) `socket` for every family, `AF_UNIX`
//!   included, since neither Landlock nor a filter can tell a host's named socket from another:
//!   only `socketpair(AF_UNIX)` is left;
//! * `io_uring_*` (it opens sockets without `socket()`), `ptrace`, `process_vm_*`, `kcmp`,
//!   `pidfd_getfd`, `kexec_*`, `bpf`, `perf_event_open`, `userfaultfd`, the keyring calls, module
//!   loading, swap, reboot, `chroot`, `open_by_handle_at`;
//! * every mount API call, `setns`, and `unshare`/`clone` with a namespace flag;
//! * `ioctl(TIOCSTI)` and `ioctl(TIOCLINUX)` (terminal input injection);
//! * `personality` other than the harmless values (no `ADDR_NO_RANDOMIZE`).
//!
//! `clone3` gets `ENOSYS` from a second filter: its flags live in memory a filter cannot read,
//! and `ENOSYS` makes the C library fall back to `clone`, which is checked. seccompiler's arch
//! check kills non-native (i386) calls but lets x32 (`nr >= 0x40000000`) through; three
//! instructions added after the arch check reject it.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen as Len, SeccompCmpOp as Op, SeccompCondition as Cond,
    SeccompFilter, SeccompRule, TargetArch,
};

use super::sys::SockFilter;

/// Why a filter could not be built.
#[derive(Debug, thiserror::Error)]
#[error("cannot build the seccomp filter: {0}")]
pub struct SeccompError(String);

impl From<seccompiler::BackendError> for SeccompError {
    fn from(e: seccompiler::BackendError) -> Self {
        SeccompError(e.to_string())
    }
}

/// Which sockets the child may create besides Unix ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SocketPolicy {
    /// No `socket` at all, only `socketpair(AF_UNIX)`: without a network namespace or a private
    /// view (Landlock-only mode) this is what keeps the host's network, its named Unix sockets
    /// (`/run/docker.sock`, D-Bus) and its abstract sockets out of reach.
    NoSockets,
    /// Also TCP over IPv4/IPv6 (to reach the egress proxy on loopback).
    UnixAndTcp,
    /// Also TCP and UDP over IPv4/IPv6: the call's own network namespace holds only its private
    /// loopback (test servers, databases in tests), so nothing of that reaches the host.
    UnixAndLoopback,
    /// No socket restriction (`--net host`).
    Any,
}

const NAMESPACE_FLAGS: &[u64] = &[
    libc::CLONE_NEWNS as u64,
    libc::CLONE_NEWCGROUP as u64,
    libc::CLONE_NEWUTS as u64,
    libc::CLONE_NEWIPC as u64,
    libc::CLONE_NEWUSER as u64,
    libc::CLONE_NEWPID as u64,
    libc::CLONE_NEWNET as u64,
];
const CLONE_NEWTIME: u64 = 0x80;
const SOCK_DCCP: i32 = 6;
/// The terminal-injection ioctls (glibc types them `u64`, musl `c_int`).
#[allow(clippy::unnecessary_cast)]
const TIOCSTI: u64 = libc::TIOCSTI as u64;
#[allow(clippy::unnecessary_cast)]
const TIOCLINUX: u64 = libc::TIOCLINUX as u64;
/// The obsolete packet socket type (libc deprecates its constant).
const SOCK_PACKET: i32 = 10;

/// Calls that always fail with `EPERM`.
const DENIED: &[i64] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_kcmp,
    libc::SYS_pidfd_getfd,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_setns,
    libc::SYS_chroot,
    libc::SYS_open_by_handle_at,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_acct,
    libc::SYS_iopl,
    libc::SYS_ioperm,
];

fn cond(arg: u8, len: Len, op: Op, value: u64) -> Result<Cond, SeccompError> {
    Ok(Cond::new(arg, len, op, value)?)
}

fn rule(conds: Vec<Cond>) -> Result<SeccompRule, SeccompError> {
    Ok(SeccompRule::new(conds)?)
}

fn socket_rules(policy: SocketPolicy) -> Result<Vec<SeccompRule>, SeccompError> {
    let mut allowed = vec![libc::AF_UNIX as u64, libc::AF_NETLINK as u64];
    let inet = matches!(policy, SocketPolicy::UnixAndTcp | SocketPolicy::UnixAndLoopback);
    if inet {
        allowed.extend([libc::AF_INET as u64, libc::AF_INET6 as u64]);
    }
    let mut rules =
        vec![rule(allowed.iter().map(|f| cond(0, Len::Dword, Op::Ne, *f)).collect::<Result<_, _>>()?)?];
    rules.push(rule(vec![
        cond(0, Len::Dword, Op::Eq, libc::AF_NETLINK as u64)?,
        cond(2, Len::Dword, Op::Ne, libc::NETLINK_ROUTE as u64)?,
    ])?);
    if inet {
        let udp = policy == SocketPolicy::UnixAndLoopback;
        for family in [libc::AF_INET, libc::AF_INET6] {
            let family = family as u64;
            // Any type but SOCK_STREAM (and SOCK_DGRAM for UDP); the low four bits, the rest are
            // flags.
            let mut types =
                vec![libc::SOCK_RAW, libc::SOCK_RDM, libc::SOCK_SEQPACKET, SOCK_DCCP, SOCK_PACKET];
            if !udp {
                types.push(libc::SOCK_DGRAM);
            }
            for ty in types {
                rules.push(rule(vec![
                    cond(0, Len::Dword, Op::Eq, family)?,
                    cond(1, Len::Dword, Op::MaskedEq(0xf), ty as u64)?,
                ])?);
            }
            // Another protocol (SCTP, MPTCP, ICMP, UDP-Lite) is neither TCP nor UDP.
            let mut other = vec![
                cond(0, Len::Dword, Op::Eq, family)?,
                cond(2, Len::Dword, Op::Ne, 0)?,
                cond(2, Len::Dword, Op::Ne, libc::IPPROTO_TCP as u64)?,
            ];
            if udp {
                other.push(cond(2, Len::Dword, Op::Ne, libc::IPPROTO_UDP as u64)?);
            }
            rules.push(rule(other)?);
        }
    }
    Ok(rules)
}

fn flag_rules(arg: u8, flags: &[u64]) -> Result<Vec<SeccompRule>, SeccompError> {
    flags.iter().map(|f| rule(vec![cond(arg, Len::Qword, Op::MaskedEq(*f), *f)?])).collect()
}

/// The main filter (`EPERM` for everything listed in the module documentation).
fn main_filter(sockets: SocketPolicy) -> Result<SeccompFilter, SeccompError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for nr in DENIED {
        rules.insert(*nr, Vec::new());
    }
    if sockets == SocketPolicy::NoSockets {
        rules.insert(libc::SYS_socket, Vec::new());
    } else if sockets != SocketPolicy::Any {
        rules.insert(libc::SYS_socket, socket_rules(sockets)?);
    }
    if sockets != SocketPolicy::Any {
        rules.insert(
            libc::SYS_socketpair,
            vec![rule(vec![cond(0, Len::Dword, Op::Ne, libc::AF_UNIX as u64)?])?],
        );
    }
    let mut unshare_flags = NAMESPACE_FLAGS.to_vec();
    unshare_flags.push(CLONE_NEWTIME);
    rules.insert(libc::SYS_unshare, flag_rules(0, &unshare_flags)?);
    rules.insert(libc::SYS_clone, flag_rules(0, NAMESPACE_FLAGS)?);
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(1, Len::Dword, Op::Eq, TIOCSTI)?])?,
            rule(vec![cond(1, Len::Dword, Op::Eq, TIOCLINUX)?])?,
        ],
    );
    // personality(2): allow the query and the values programs use legitimately.
    rules.insert(
        libc::SYS_personality,
        vec![rule(
            [0u64, 0x0008, 0x20000, 0x20008, 0xffff_ffff]
                .iter()
                .map(|v| cond(0, Len::Dword, Op::Ne, *v))
                .collect::<Result<_, _>>()?,
        )?],
    );
    Ok(SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        TargetArch::x86_64,
    )?)
}

fn clone3_filter() -> Result<SeccompFilter, SeccompError> {
    let rules = BTreeMap::from([(libc::SYS_clone3, Vec::new())]);
    Ok(SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS as u32),
        TargetArch::x86_64,
    )?)
}

/// seccompiler's arch check is three instructions: load arch, jump over the kill if native,
/// kill. Right after it, reject the x32 ABI.
const ARCH_CHECK_LEN: usize = 3;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn to_kernel(program: BpfProgram) -> Vec<SockFilter> {
    let mut out: Vec<SockFilter> =
        program.into_iter().map(|i| SockFilter { code: i.code, jt: i.jt, jf: i.jf, k: i.k }).collect();
    let x32 = [
        SockFilter { code: (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16, jt: 0, jf: 0, k: 0 },
        SockFilter {
            code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        SockFilter {
            code: (libc::BPF_RET | libc::BPF_K) as u16,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
    ];
    let at = ARCH_CHECK_LEN.min(out.len());
    out.splice(at..at, x32);
    out
}

/// The programs to install, in order.
pub fn programs(sockets: SocketPolicy) -> Result<Vec<Vec<SockFilter>>, SeccompError> {
    let compile = |f: SeccompFilter| -> Result<Vec<SockFilter>, SeccompError> {
        let bpf: BpfProgram =
            f.try_into().map_err(|e: seccompiler::BackendError| SeccompError(e.to_string()))?;
        Ok(to_kernel(bpf))
    };
    Ok(vec![compile(main_filter(sockets)?)?, compile(clone3_filter()?)?])
}

/// The denied call names, for `explain`.
pub fn denied_summary(sockets: SocketPolicy) -> Vec<String> {
    let mut out = vec![
        match sockets {
            SocketPolicy::NoSockets => {
                "socket: every family (no network namespace here); socketpair: only AF_UNIX".to_string()
            }
            SocketPolicy::UnixAndTcp => {
                "socket: only AF_UNIX, NETLINK_ROUTE and TCP (to the egress proxy)".into()
            }
            SocketPolicy::UnixAndLoopback => {
                "socket: only AF_UNIX, NETLINK_ROUTE, TCP and UDP (the call's own loopback)".into()
            }
            SocketPolicy::Any => "socket: unrestricted (--net host)".into(),
        },
        "unshare/clone with namespace flags, setns, every mount call".into(),
        "io_uring, ptrace, process_vm_*, kcmp, pidfd_getfd, bpf, perf_event_open, userfaultfd".into(),
        "keyctl/add_key/request_key, kexec, modules, swap, reboot, chroot, open_by_handle_at, acct, iopl"
            .into(),
        "ioctl TIOCSTI/TIOCLINUX, personality changes, x32 syscalls".into(),
        "clone3 -> ENOSYS (falls back to the checked clone)".into(),
    ];
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn programs_compile_and_carry_the_x32_check_after_the_arch_check() {
        for policy in [
            SocketPolicy::NoSockets,
            SocketPolicy::UnixAndTcp,
            SocketPolicy::UnixAndLoopback,
            SocketPolicy::Any,
        ] {
            let progs = programs(policy).unwrap();
            assert_eq!(progs.len(), 2);
            for p in &progs {
                assert!(p.len() < 4096, "BPF programs are limited to 4096 instructions");
                assert_eq!(p[3].code, (libc::BPF_LD | libc::BPF_W | libc::BPF_ABS) as u16);
                assert_eq!(p[4].k, X32_SYSCALL_BIT);
                assert_eq!(p[5].k, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
                // The arch check's "native" jump lands on the inserted load.
                assert_eq!(p[1].jt, 1);
            }
        }
    }
}
