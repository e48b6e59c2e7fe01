//! The raw system calls the sandboxed child makes between `fork` and `exec`, behind a trait.
//!
//! This is the only module of hullward with `unsafe` code. The child runs in a copy of a
//! multi-threaded process: another thread may have held the allocator's lock at the moment of the
//! fork, so the child must not allocate, lock or unwind. Every method here is one system call on
//! memory prepared by the parent (`CStr`s, fixed structs on the stack), returning the raw `errno`
//! on failure — nothing else.
//!
//! [`Sys`] is the seam that keeps process setup testable (the youki approach): [`super::child`]
//! drives a `Sys` in a fixed order, the real implementation is [`RealSys`], and the unit tests
//! record the calls of a fake one. The parent-side helpers at the bottom ([`clone3`], [`wait`],
//! [`pidfd_kill`], …) are the other raw calls hullward needs and that `std`/`nix` do not cover.

#![allow(unsafe_code)]

use std::ffi::CStr;
use std::os::fd::RawFd;

/// The resource limits hullward sets, as `u32` whatever the C library's type for them (glibc
/// uses `u32`, musl `c_int`).
#[allow(clippy::unnecessary_cast)]
pub mod rlimit {
    pub const NOFILE: u32 = libc::RLIMIT_NOFILE as u32;
    pub const CORE: u32 = libc::RLIMIT_CORE as u32;
    pub const NPROC: u32 = libc::RLIMIT_NPROC as u32;
    pub const SIGPENDING: u32 = libc::RLIMIT_SIGPENDING as u32;
    pub const MSGQUEUE: u32 = libc::RLIMIT_MSGQUEUE as u32;
}

/// This process's soft limit of `resource` (`None` when unlimited or unreadable).
pub fn soft_rlimit(resource: u32) -> Option<u64> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid out-parameter on this frame.
    let ret = unsafe { libc::getrlimit(resource as _, &mut lim) };
    (ret == 0 && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur)
}

/// A raw `errno` value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Errno(pub i32);

impl Errno {
    fn last() -> Errno {
        Errno(std::io::Error::last_os_error().raw_os_error().unwrap_or(libc::EIO))
    }
}

impl std::fmt::Display for Errno {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", std::io::Error::from_raw_os_error(self.0))
    }
}

pub type SysResult<T> = Result<T, Errno>;

/// One BPF instruction, as the kernel's `struct sock_filter`.
pub type SockFilter = libc::sock_filter;

/// The calls the child makes, in the order [`super::child`] makes them. Arguments are exactly the
/// kernel's; implementations must not allocate.
pub trait Sys {
    fn setsid(&self) -> SysResult<()>;
    fn write(&self, fd: RawFd, buf: &[u8]) -> SysResult<usize>;
    fn dup2(&self, old: RawFd, new: RawFd) -> SysResult<()>;
    fn close(&self, fd: RawFd) -> SysResult<()>;
    fn close_range(&self, first: u32, last: u32) -> SysResult<()>;
    fn unshare(&self, flags: i32) -> SysResult<()>;
    /// Binds and listens on `127.0.0.1:port` in the current network namespace and sends the
    /// listening socket over the `SCM_RIGHTS` channel `chan`, then closes both (the egress proxy's
    /// listener, see [`super::egress`]).
    fn hand_back_listener(&self, chan: RawFd, port: u16) -> SysResult<()>;
    fn open(&self, path: &CStr, flags: i32, mode: u32) -> SysResult<RawFd>;
    fn mount(
        &self,
        src: Option<&CStr>,
        target: &CStr,
        fstype: Option<&CStr>,
        flags: u64,
        data: Option<&CStr>,
    ) -> SysResult<()>;
    fn umount2(&self, target: &CStr, flags: i32) -> SysResult<()>;
    /// `open_tree` relative to `dirfd` (`AT_FDCWD` for a path in the current view).
    fn open_tree(&self, dirfd: RawFd, path: &CStr, flags: u32) -> SysResult<RawFd>;
    /// A detached tmpfs (`fsopen`, `fsconfig`, `fsmount`) with the given `mode=` option.
    fn detached_tmpfs(&self, mode: &CStr, attrs: u64) -> SysResult<RawFd>;
    fn openat(&self, dirfd: RawFd, path: &CStr, flags: i32, mode: u32) -> SysResult<RawFd>;
    fn mkdirat(&self, dirfd: RawFd, path: &CStr, mode: u32) -> SysResult<()>;
    fn mount_setattr_fd(&self, fd: RawFd, recursive: bool, set: u64, clear: u64) -> SysResult<()>;
    fn move_mount_fd(&self, fd: RawFd, target: &CStr) -> SysResult<()>;
    /// Attaches the detached mount `fd` onto the entry the descriptor `target` (`O_PATH`) names.
    fn move_mount_onto(&self, fd: RawFd, target: RawFd) -> SysResult<()>;
    /// The `(st_dev, st_ino)` of the entry `fd` names.
    fn identity(&self, fd: RawFd) -> SysResult<(u64, u64)>;
    /// Gives the file `fd` (open for writing) the size `size` — a hole, no blocks — and the
    /// modification (and access) time `mtime` as (seconds, nanoseconds).
    fn shape_file(&self, fd: RawFd, size: u64, mtime: (i64, i64)) -> SysResult<()>;
    fn mkdir(&self, path: &CStr, mode: u32) -> SysResult<()>;
    fn symlink(&self, target: &CStr, link: &CStr) -> SysResult<()>;
    fn rmdir(&self, path: &CStr) -> SysResult<()>;
    fn chmod(&self, path: &CStr, mode: u32) -> SysResult<()>;
    fn chdir(&self, path: &CStr) -> SysResult<()>;
    fn pivot_root(&self, new_root: &CStr, put_old: &CStr) -> SysResult<()>;
    /// Brings the loopback interface of the current network namespace up.
    fn loopback_up(&self) -> SysResult<()>;
    fn prctl(&self, op: i32, arg2: u64, arg3: u64) -> SysResult<()>;
    /// `capset` with every capability set to zero.
    fn capset_zero(&self) -> SysResult<()>;
    fn setrlimit(&self, resource: u32, soft: u64, hard: u64) -> SysResult<()>;
    /// Joins the namespace `fd` names (`nstype`: its `CLONE_NEW*` flag).
    fn setns(&self, fd: RawFd, nstype: i32) -> SysResult<()>;
    fn landlock_add_path_rule(&self, ruleset: RawFd, dir: RawFd, access: u64) -> SysResult<()>;
    fn landlock_restrict_self(&self, ruleset: RawFd) -> SysResult<()>;
    fn seccomp_install(&self, program: &[SockFilter]) -> SysResult<()>;
    /// Every signal back to its default disposition and unblocked (Rust ignores SIGPIPE).
    fn reset_signals(&self) -> SysResult<()>;
    /// Only returns on failure.
    fn execve(&self, path: &CStr, argv: &[*const libc::c_char], envp: &[*const libc::c_char]) -> Errno;
    /// Clears `FD_CLOEXEC` on `fd`: it stays open across `exec`.
    fn clear_cloexec(&self, fd: RawFd) -> SysResult<()>;
    /// `execveat(fd, "", argv, envp, AT_EMPTY_PATH)`: executes the program `fd` holds; returns
    /// only on failure.
    fn execveat_fd(&self, fd: RawFd, argv: &[*const libc::c_char], envp: &[*const libc::c_char]) -> Errno;
    fn exit(&self, code: i32) -> !;
    /// Whether the read end of the pipe whose write end is `fd` has been closed.
    fn peer_closed(&self, fd: RawFd) -> SysResult<bool>;
    /// A plain `fork` by raw system call (no C library handlers: other threads' locks may be
    /// held in this copy of the process). `Ok(0)` in the new child.
    fn fork(&self) -> SysResult<libc::pid_t>;
    /// Waits for any child; returns its pid and its status as an exit code (128 + signal when
    /// killed), or `ECHILD` when none is left.
    fn wait_any(&self) -> SysResult<(libc::pid_t, i32)>;
}

/// The real system calls.
pub struct RealSys;

/// `bind(127.0.0.1:port)` and `listen` on `sock` (a TCP socket).
fn listen_loopback(sock: RawFd, port: u16) -> SysResult<()> {
    let one: libc::c_int = 1;
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr { s_addr: u32::from(std::net::Ipv4Addr::LOCALHOST).to_be() },
        sin_zero: [0; 8],
    };
    // SAFETY: `one` and `addr` live on this frame for the calls, their sizes are passed.
    unsafe {
        check(libc::setsockopt(
            sock,
            libc::SOL_SOCKET,
            libc::SO_REUSEADDR,
            (&one as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ))?;
        check(libc::bind(
            sock,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        ))?;
        check(libc::listen(sock, 1024))
    }
}

/// Room for one descriptor in a control message (`CMSG_SPACE(sizeof(int))` on 64-bit Linux).
const FD_CMSG_SPACE: usize = 24;

/// A control-message buffer aligned like `struct cmsghdr`.
#[repr(C, align(8))]
struct FdCmsg([u8; FD_CMSG_SPACE]);

/// Sends `fd` over the Unix socket `chan` with one byte of data (no allocation).
fn send_fd(chan: RawFd, fd: RawFd) -> SysResult<()> {
    let mut byte = [b'L'];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    let mut control = FdCmsg([0; FD_CMSG_SPACE]);
    // SAFETY: `msghdr` is plain old data; every pointer set below points into this frame, and the
    // CMSG macros stay within `control`, whose length is passed.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr().cast();
        msg.msg_controllen = FD_CMSG_SPACE as _;
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        (*cmsg).cmsg_level = libc::SOL_SOCKET;
        (*cmsg).cmsg_type = libc::SCM_RIGHTS;
        (*cmsg).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<RawFd>() as u32) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>(), fd);
        check_long(libc::sendmsg(chan, &msg, libc::MSG_NOSIGNAL) as libc::c_long).map(drop)
    }
}

/// Receives one descriptor sent by [`send_fd`] over `chan`.
pub fn receive_fd(chan: RawFd) -> std::io::Result<std::os::fd::OwnedFd> {
    let mut byte = [0u8];
    let mut iov = libc::iovec { iov_base: byte.as_mut_ptr().cast(), iov_len: 1 };
    let mut control = FdCmsg([0; FD_CMSG_SPACE]);
    // SAFETY: as in `send_fd`; the descriptor read from the control message was just created for
    // this process by the kernel and is owned by nothing else.
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = control.0.as_mut_ptr().cast();
        msg.msg_controllen = FD_CMSG_SPACE as _;
        let n = libc::recvmsg(chan, &mut msg, libc::MSG_CMSG_CLOEXEC);
        if n < 0 {
            return Err(std::io::Error::last_os_error());
        }
        let cmsg = libc::CMSG_FIRSTHDR(&msg);
        if n == 0 || cmsg.is_null() || (*cmsg).cmsg_type != libc::SCM_RIGHTS {
            return Err(std::io::Error::from_raw_os_error(libc::EPIPE));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(cmsg).cast::<RawFd>());
        Ok(<std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd))
    }
}

/// A connected pair of `SOCK_SEQPACKET` Unix sockets, both close-on-exec.
pub fn seqpacket_pair() -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors the kernel writes.
    if unsafe {
        libc::socketpair(libc::AF_UNIX, libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC, 0, fds.as_mut_ptr())
    } < 0
    {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    unsafe {
        Ok((
            <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fds[0]),
            <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fds[1]),
        ))
    }
}

fn check(ret: libc::c_int) -> SysResult<()> {
    if ret < 0 {
        Err(Errno::last())
    } else {
        Ok(())
    }
}

fn check_long(ret: libc::c_long) -> SysResult<libc::c_long> {
    if ret < 0 {
        Err(Errno::last())
    } else {
        Ok(ret)
    }
}

fn opt_ptr(s: Option<&CStr>) -> *const libc::c_char {
    s.map_or(std::ptr::null(), CStr::as_ptr)
}

const EMPTY: &CStr = c"";

/// `struct mount_attr` of `mount_setattr(2)`.
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

/// `struct landlock_path_beneath_attr` (packed in the kernel's UAPI).
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;

/// `struct __user_cap_header_struct` of `capset(2)`.
#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

/// `struct __user_cap_data_struct` of `capset(2)`.
#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
/// `CLONE_INTO_CGROUP` (libc's constant is an overflowing `i32`).
const CLONE_INTO_CGROUP: u64 = 0x2_0000_0000;

impl Sys for RealSys {
    fn setsid(&self) -> SysResult<()> {
        // SAFETY: no arguments; only changes this process's session.
        check(unsafe { libc::setsid() })
    }

    fn write(&self, fd: RawFd, buf: &[u8]) -> SysResult<usize> {
        // SAFETY: `buf` is a valid slice for `buf.len()` bytes for the duration of the call.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n < 0 {
            Err(Errno::last())
        } else {
            Ok(n as usize)
        }
    }

    fn dup2(&self, old: RawFd, new: RawFd) -> SysResult<()> {
        // SAFETY: plain descriptor operation; invalid numbers are reported as EBADF.
        check(unsafe { libc::dup2(old, new) })
    }

    fn close(&self, fd: RawFd) -> SysResult<()> {
        // SAFETY: the child owns its copy of the descriptor table; nothing else uses `fd` after.
        check(unsafe { libc::close(fd) })
    }

    fn close_range(&self, first: u32, last: u32) -> SysResult<()> {
        // SAFETY: closes descriptors of this (single-threaded, forked) process only.
        check_long(unsafe { libc::syscall(libc::SYS_close_range, first, last, 0u32) }).map(drop)
    }

    fn unshare(&self, flags: i32) -> SysResult<()> {
        // SAFETY: flags are plain integers; affects only this process.
        check(unsafe { libc::unshare(flags) })
    }

    fn hand_back_listener(&self, chan: RawFd, port: u16) -> SysResult<()> {
        // SAFETY: a new socket owned by this function until it is closed below.
        let sock = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0) };
        if sock < 0 {
            return Err(Errno::last());
        }
        let result = listen_loopback(sock, port).and_then(|()| send_fd(chan, sock));
        // SAFETY: `sock` and `chan` are this process's descriptors, each closed exactly once.
        unsafe {
            libc::close(sock);
            libc::close(chan);
        }
        result
    }

    fn open(&self, path: &CStr, flags: i32, mode: u32) -> SysResult<RawFd> {
        // SAFETY: `path` is NUL-terminated and outlives the call.
        let fd = unsafe { libc::open(path.as_ptr(), flags, mode as libc::c_uint) };
        if fd < 0 {
            Err(Errno::last())
        } else {
            Ok(fd)
        }
    }

    fn mount(
        &self,
        src: Option<&CStr>,
        target: &CStr,
        fstype: Option<&CStr>,
        flags: u64,
        data: Option<&CStr>,
    ) -> SysResult<()> {
        // SAFETY: all strings are NUL-terminated (or NULL where the kernel accepts NULL) and
        // outlive the call.
        check(unsafe {
            libc::mount(opt_ptr(src), target.as_ptr(), opt_ptr(fstype), flags, opt_ptr(data).cast())
        })
    }

    fn umount2(&self, target: &CStr, flags: i32) -> SysResult<()> {
        // SAFETY: `target` is NUL-terminated.
        check(unsafe { libc::umount2(target.as_ptr(), flags) })
    }

    fn open_tree(&self, dirfd: RawFd, path: &CStr, flags: u32) -> SysResult<RawFd> {
        // SAFETY: `path` is NUL-terminated; the kernel returns a new descriptor or -1.
        let fd = check_long(unsafe { libc::syscall(libc::SYS_open_tree, dirfd, path.as_ptr(), flags) })?;
        Ok(fd as RawFd)
    }

    fn detached_tmpfs(&self, mode: &CStr, attrs: u64) -> SysResult<RawFd> {
        const FSOPEN_CLOEXEC: u32 = 1;
        const FSCONFIG_SET_STRING: u32 = 1;
        const FSCONFIG_CMD_CREATE: u32 = 6;
        const FSMOUNT_CLOEXEC: u32 = 1;
        // SAFETY: string arguments are NUL-terminated and outlive each call; every descriptor
        // created here is either returned or closed.
        unsafe {
            let fs = check_long(libc::syscall(libc::SYS_fsopen, c"tmpfs".as_ptr(), FSOPEN_CLOEXEC))? as RawFd;
            let configured = check_long(libc::syscall(
                libc::SYS_fsconfig,
                fs,
                FSCONFIG_SET_STRING,
                c"mode".as_ptr(),
                mode.as_ptr(),
                0,
            ))
            .and_then(|_| {
                check_long(libc::syscall(
                    libc::SYS_fsconfig,
                    fs,
                    FSCONFIG_CMD_CREATE,
                    std::ptr::null::<u8>(),
                    std::ptr::null::<u8>(),
                    0,
                ))
            });
            let mounted = configured
                .and_then(|_| check_long(libc::syscall(libc::SYS_fsmount, fs, FSMOUNT_CLOEXEC, attrs)));
            libc::close(fs);
            mounted.map(|fd| fd as RawFd)
        }
    }

    fn openat(&self, dirfd: RawFd, path: &CStr, flags: i32, mode: u32) -> SysResult<RawFd> {
        // SAFETY: `path` is NUL-terminated and outlives the call.
        let fd = unsafe { libc::openat(dirfd, path.as_ptr(), flags, mode as libc::c_uint) };
        if fd < 0 {
            Err(Errno::last())
        } else {
            Ok(fd)
        }
    }

    fn mkdirat(&self, dirfd: RawFd, path: &CStr, mode: u32) -> SysResult<()> {
        // SAFETY: `path` is NUL-terminated.
        check(unsafe { libc::mkdirat(dirfd, path.as_ptr(), mode as libc::mode_t) })
    }

    fn mount_setattr_fd(&self, fd: RawFd, recursive: bool, set: u64, clear: u64) -> SysResult<()> {
        let attr = MountAttr { attr_set: set, attr_clr: clear, propagation: 0, userns_fd: 0 };
        let flags = libc::AT_EMPTY_PATH | if recursive { libc::AT_RECURSIVE } else { 0 };
        // SAFETY: `attr` lives on this stack frame for the call and its size is passed.
        check_long(unsafe {
            libc::syscall(
                libc::SYS_mount_setattr,
                fd,
                EMPTY.as_ptr(),
                flags as libc::c_uint,
                &attr as *const MountAttr,
                std::mem::size_of::<MountAttr>(),
            )
        })
        .map(drop)
    }

    fn move_mount_fd(&self, fd: RawFd, target: &CStr) -> SysResult<()> {
        // SAFETY: strings are NUL-terminated; `fd` is a detached mount from `open_tree`.
        check_long(unsafe {
            libc::syscall(
                libc::SYS_move_mount,
                fd,
                EMPTY.as_ptr(),
                libc::AT_FDCWD,
                target.as_ptr(),
                libc::MOVE_MOUNT_F_EMPTY_PATH,
            )
        })
        .map(drop)
    }

    fn move_mount_onto(&self, fd: RawFd, target: RawFd) -> SysResult<()> {
        // SAFETY: both paths are the empty NUL-terminated string; `fd` is a detached mount and
        // `target` a descriptor of this process.
        check_long(unsafe {
            libc::syscall(
                libc::SYS_move_mount,
                fd,
                EMPTY.as_ptr(),
                target,
                EMPTY.as_ptr(),
                libc::MOVE_MOUNT_F_EMPTY_PATH | libc::MOVE_MOUNT_T_EMPTY_PATH,
            )
        })
        .map(drop)
    }

    fn identity(&self, fd: RawFd) -> SysResult<(u64, u64)> {
        // SAFETY: `libc::stat` is plain old data (all-zero is valid) on this frame, written by
        // the kernel for the call.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: `st` outlives the call and is the size `fstat` writes.
        check(unsafe { libc::fstat(fd, &mut st) })?;
        Ok((st.st_dev, st.st_ino))
    }

    fn shape_file(&self, fd: RawFd, size: u64, mtime: (i64, i64)) -> SysResult<()> {
        let len = libc::off_t::try_from(size).map_err(|_| Errno(libc::EFBIG))?;
        // SAFETY: plain ftruncate(2) on a descriptor; no memory is passed.
        check(unsafe { libc::ftruncate(fd, len) })?;
        // `as _`: the field types, without naming `time_t` (deprecated on musl, where it is to change).
        let at = libc::timespec { tv_sec: mtime.0 as _, tv_nsec: mtime.1 as _ };
        let times = [at, at];
        // SAFETY: `times` lives on this frame for the call and holds the two entries futimens reads.
        check(unsafe { libc::futimens(fd, times.as_ptr()) })
    }

    fn mkdir(&self, path: &CStr, mode: u32) -> SysResult<()> {
        // SAFETY: `path` is NUL-terminated.
        check(unsafe { libc::mkdir(path.as_ptr(), mode as libc::mode_t) })
    }

    fn symlink(&self, target: &CStr, link: &CStr) -> SysResult<()> {
        // SAFETY: both strings are NUL-terminated.
        check(unsafe { libc::symlink(target.as_ptr(), link.as_ptr()) })
    }

    fn rmdir(&self, path: &CStr) -> SysResult<()> {
        // SAFETY: `path` is NUL-terminated.
        check(unsafe { libc::rmdir(path.as_ptr()) })
    }

    fn chmod(&self, path: &CStr, mode: u32) -> SysResult<()> {
        // SAFETY: `path` is NUL-terminated.
        check(unsafe { libc::chmod(path.as_ptr(), mode as libc::mode_t) })
    }

    fn chdir(&self, path: &CStr) -> SysResult<()> {
        // SAFETY: `path` is NUL-terminated.
        check(unsafe { libc::chdir(path.as_ptr()) })
    }

    fn pivot_root(&self, new_root: &CStr, put_old: &CStr) -> SysResult<()> {
        // SAFETY: both strings are NUL-terminated.
        check_long(unsafe { libc::syscall(libc::SYS_pivot_root, new_root.as_ptr(), put_old.as_ptr()) })
            .map(drop)
    }

    fn loopback_up(&self) -> SysResult<()> {
        // SAFETY: a plain datagram socket used only for the interface ioctl below.
        let sock = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
        if sock < 0 {
            return Err(Errno::last());
        }
        // SAFETY: `ifreq` is plain old data; all-zero is a valid value.
        let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
        for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
            *dst = *src as libc::c_char;
        }
        req.ifr_ifru.ifru_flags = (libc::IFF_UP | libc::IFF_RUNNING) as libc::c_short;
        // SAFETY: `req` is a valid `ifreq` on this stack frame for the duration of the call.
        let ret = unsafe { libc::ioctl(sock, libc::SIOCSIFFLAGS as _, &req as *const libc::ifreq) };
        let result = check(ret);
        // SAFETY: `sock` was opened above and is closed exactly once.
        unsafe { libc::close(sock) };
        result
    }

    fn prctl(&self, op: i32, arg2: u64, arg3: u64) -> SysResult<()> {
        // SAFETY: the prctl operations used take integer arguments only.
        check(unsafe { libc::prctl(op, arg2, arg3, 0u64, 0u64) })
    }

    fn capset_zero(&self) -> SysResult<()> {
        let header = CapHeader { version: LINUX_CAPABILITY_VERSION_3, pid: 0 };
        let data = [CapData { effective: 0, permitted: 0, inheritable: 0 }; 2];
        // SAFETY: version 3 takes a header and an array of two data structs, both on this frame.
        check_long(unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) })
            .map(drop)
    }

    fn setrlimit(&self, resource: u32, soft: u64, hard: u64) -> SysResult<()> {
        let lim = libc::rlimit { rlim_cur: soft, rlim_max: hard };
        // SAFETY: `lim` lives on this frame for the call.
        check(unsafe { libc::setrlimit(resource as _, &lim) })
    }

    fn setns(&self, fd: RawFd, nstype: i32) -> SysResult<()> {
        // SAFETY: plain system call on a descriptor; no memory is passed.
        check(unsafe { libc::setns(fd, nstype) })
    }

    fn landlock_add_path_rule(&self, ruleset: RawFd, dir: RawFd, access: u64) -> SysResult<()> {
        let attr = PathBeneathAttr { allowed_access: access, parent_fd: dir };
        // SAFETY: `attr` lives on this frame; the kernel reads exactly its packed layout.
        check_long(unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset,
                LANDLOCK_RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0u32,
            )
        })
        .map(drop)
    }

    fn landlock_restrict_self(&self, ruleset: RawFd) -> SysResult<()> {
        // SAFETY: `ruleset` is a Landlock ruleset descriptor prepared by the parent.
        check_long(unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) }).map(drop)
    }

    fn seccomp_install(&self, program: &[SockFilter]) -> SysResult<()> {
        let prog =
            libc::sock_fprog { len: program.len() as libc::c_ushort, filter: program.as_ptr().cast_mut() };
        // SAFETY: `prog` points into `program`, which outlives the call; the kernel copies it.
        check_long(unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0u32,
                &prog as *const libc::sock_fprog,
            )
        })
        .map(drop)
    }

    fn reset_signals(&self) -> SysResult<()> {
        for sig in 1..libc::SIGRTMAX() {
            if sig == libc::SIGKILL || sig == libc::SIGSTOP {
                continue;
            }
            // SAFETY: SIG_DFL is always a valid disposition; errors for reserved signals are ignored.
            unsafe { libc::signal(sig, libc::SIG_DFL) };
        }
        // SAFETY: `set` is initialised by sigemptyset before use.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            check(libc::sigprocmask(libc::SIG_SETMASK, &set, std::ptr::null_mut()))
        }
    }

    fn execve(&self, path: &CStr, argv: &[*const libc::c_char], envp: &[*const libc::c_char]) -> Errno {
        // SAFETY: `argv` and `envp` are NULL-terminated arrays of pointers to NUL-terminated
        // strings owned by the plan, alive until the call replaces the process image.
        unsafe { libc::execve(path.as_ptr(), argv.as_ptr(), envp.as_ptr()) };
        Errno::last()
    }

    fn clear_cloexec(&self, fd: RawFd) -> SysResult<()> {
        // SAFETY: F_SETFD takes an integer and changes only this descriptor's flags.
        check(unsafe { libc::fcntl(fd, libc::F_SETFD, 0) })
    }

    fn execveat_fd(&self, fd: RawFd, argv: &[*const libc::c_char], envp: &[*const libc::c_char]) -> Errno {
        // SAFETY: the path is the empty C string literal; `argv` and `envp` are NULL-terminated
        // arrays of pointers to NUL-terminated strings owned by the plan, alive until the call
        // replaces the process image.
        unsafe {
            libc::syscall(
                libc::SYS_execveat,
                fd,
                c"".as_ptr(),
                argv.as_ptr(),
                envp.as_ptr(),
                libc::AT_EMPTY_PATH,
            )
        };
        Errno::last()
    }

    fn exit(&self, code: i32) -> ! {
        // SAFETY: `_exit` never returns and runs no atexit handlers (none are safe after fork).
        unsafe { libc::_exit(code) }
    }

    fn peer_closed(&self, fd: RawFd) -> SysResult<bool> {
        let mut pfd = libc::pollfd { fd, events: libc::POLLOUT, revents: 0 };
        // SAFETY: one valid `pollfd` on this frame; timeout 0 never blocks.
        check(unsafe { libc::poll(&mut pfd, 1, 0) })?;
        Ok(pfd.revents & libc::POLLERR != 0)
    }

    fn fork(&self) -> SysResult<libc::pid_t> {
        // SAFETY: a clone without CLONE_VM gives the child its own copy of memory; both return
        // here. The caller only makes raw system calls afterwards.
        let ret = unsafe {
            libc::syscall(libc::SYS_clone, libc::SIGCHLD as libc::c_ulong, 0usize, 0usize, 0usize, 0usize)
        };
        check_long(ret).map(|pid| pid as libc::pid_t)
    }

    fn wait_any(&self) -> SysResult<(libc::pid_t, i32)> {
        // SAFETY: `siginfo_t` is plain old data, filled by the kernel.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: `info` is a valid out-parameter on this frame.
        check(unsafe { libc::waitid(libc::P_ALL, 0, &mut info, libc::WEXITED) })?;
        // SAFETY: after a successful waitid the pid/status fields of the union are initialised.
        let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
        Ok((pid, if info.si_code == libc::CLD_EXITED { status } else { 128 + status }))
    }
}

/// Starts the sandboxed child: `clone3` (into `cgroup_fd`'s cgroup v2 directory and new
/// `namespaces`), or plain `clone` where `clone3` is filtered (Docker's default seccomp profile
/// answers it with ENOSYS) — then the child joins the cgroup itself through
/// [`ChildPlan::cgroup_v2_procs`](super::child::ChildPlan::cgroup_v2_procs). In the child,
/// [`child::run`](super::child::run) on `plan` `exec`s the program or exits. Returns the child's
/// pid and pidfd.
///
/// With `share_memory` (the child is known to `exec` or `_exit`, never to stay behind), the
/// `clone3` is `CLONE_VM | CLONE_VFORK` on a stack of its own, as `posix_spawn` does: nothing of
/// hullward's memory is copied, and this thread waits until the child has executed. See
/// [`clone3_vfork`].
pub fn spawn_child(
    plan: &mut super::child::ChildPlan<'_>,
    cgroup_fd: Option<RawFd>,
    namespaces: i32,
    share_memory: bool,
) -> std::io::Result<(libc::pid_t, std::os::fd::OwnedFd)> {
    let mut forked = None;
    let mut clone3_refused = false;
    if clone3_works() {
        let cloned = match share_memory.then(ChildStack::new) {
            // SAFETY: as `clone3_vfork` requires: the child runs `child::run` on `plan`.
            Some(Ok(stack)) => unsafe { clone3_vfork(cgroup_fd, namespaces, &stack, plan) },
            // SAFETY: as below.
            _ => unsafe { clone3(cgroup_fd, namespaces) },
        };
        match cloned {
            Err(e) if e.raw_os_error() == Some(libc::ENOSYS) => {
                CLONE3_MISSING.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            // Some seccomp profiles answer every clone3 with EPERM: plain clone tells whether
            // it was clone3 or the namespaces that were refused.
            Err(e) if e.raw_os_error() == Some(libc::EPERM) => clone3_refused = true,
            other => forked = Some(other?),
        }
    }
    let forked = match forked {
        Some(f) => f,
        None => {
            plan.join_v2_cgroup = true;
            // SAFETY: as below.
            let f = unsafe { clone_legacy(namespaces)? };
            if clone3_refused {
                CLONE3_MISSING.store(true, std::sync::atomic::Ordering::Relaxed);
            }
            f
        }
    };
    // SAFETY: in the child branch only `child::run` executes, which makes raw system calls on the
    // prepared plan and never allocates, locks or returns (it execs or `_exit`s).
    match forked {
        Forked::Child => super::child::run(&RealSys, plan),
        Forked::Parent { pid, pidfd } => Ok((pid, pidfd)),
    }
}

/// A network namespace of its own with its loopback up, made on the calling thread and left
/// behind: the thread moves into it (`unshare` of a network namespace is per thread), opens it,
/// brings `lo` up and goes back to the namespace `home` names. The descriptor keeps the
/// namespace alive until a child joins it ([`Sys::setns`]) and the last member is gone. Run it on
/// a thread that does nothing else (if the way back fails, the thread is left in the new
/// namespace: its caller lets it end).
pub fn fresh_netns(home: std::os::fd::BorrowedFd<'_>) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::AsRawFd;
    // SAFETY: plain system call; it changes only this thread's network namespace.
    if unsafe { libc::unshare(libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    let made =
        std::fs::File::open("/proc/thread-self/ns/net").map(std::os::fd::OwnedFd::from).and_then(|ns| {
            RealSys.loopback_up().map(|()| ns).map_err(|e| std::io::Error::from_raw_os_error(e.0))
        });
    // SAFETY: as above; `home` is a namespace descriptor the caller holds open.
    if unsafe { libc::setns(home.as_raw_fd(), libc::CLONE_NEWNET) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    made
}

/// A user namespace that maps every uid and gid to itself (file ownership and every id look
/// exactly as on the host) and whose per-user limits `limits` — `(path under /proc/sys/user,
/// value)` — were written from inside it: root's children join it (`setns`) so that the kernel
/// charges their inotify instances and fanotify groups to it first, within those limits, as well
/// as to root's own counters.
///
/// A short-lived holder enters the new namespace; this process writes its id maps (only a
/// process with `CAP_SETUID`/`CAP_SETGID` in the parent namespace may map the whole range), opens
/// its `ns/user`, and lets it go on: it writes the limits (it holds `CAP_SYS_RESOURCE` in the
/// namespace) and exits with 0, or with the errno of the write that failed. The holder is the
/// init program's "userns" mode, started with vfork + exec (`std::process::Command`); where that
/// program is not to be had, a fork of this process.
pub fn identity_userns(limits: &[(std::ffi::CString, Vec<u8>)]) -> Result<std::os::fd::OwnedFd, String> {
    match super::pid1::image() {
        Some(image) => userns_by_init(image, limits),
        None => userns_by_fork(limits),
    }
}

/// [`identity_userns`] with the init program as the holder.
fn userns_by_init(
    image: std::os::fd::BorrowedFd<'_>,
    limits: &[(std::ffi::CString, Vec<u8>)],
) -> Result<std::os::fd::OwnedFd, String> {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::process::{CommandExt, ExitStatusExt};
    use std::process::{Command, Stdio};
    let mut command = Command::new(format!("/proc/self/fd/{}", image.as_raw_fd()));
    command.arg0(super::pid1::USERNS_NAME).arg("userns");
    for (path, value) in limits {
        command.arg(std::ffi::OsStr::from_bytes(path.as_bytes())).arg(std::ffi::OsStr::from_bytes(value));
    }
    command.env_clear().stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::null());
    let mut holder = command.spawn().map_err(|e| format!("starting its holder: {e}"))?;
    let (mut go, mut said) = (holder.stdin.take(), holder.stdout.take());
    let mut byte = [0u8; 1];
    let entered = said.as_mut().is_some_and(|s| s.read_exact(&mut byte).is_ok());
    // A holder that never entered its namespace exits with the errno of `unshare`.
    let ns = entered.then(|| map_identity(holder.id()));
    if let (Some(Ok(_)), Some(go)) = (&ns, go.as_mut()) {
        let _ = go.write_all(b"g");
    }
    drop(go);
    let status = holder.wait().map_err(|e| format!("waiting for its holder: {e}"))?;
    let code = status.code().or(status.signal().map(|s| 128 + s)).unwrap_or(255);
    match ns {
        Some(ns) => held(ns, code),
        None => Err(format!("creating a user namespace: {}", std::io::Error::from_raw_os_error(code))),
    }
}

/// [`identity_userns`] with a fork of this process as the holder.
fn userns_by_fork(limits: &[(std::ffi::CString, Vec<u8>)]) -> Result<std::os::fd::OwnedFd, String> {
    use std::os::fd::AsRawFd;
    let (go_read, go_write) = pipe_cloexec().map_err(|e| format!("a pipe: {e}"))?;
    let (go_r, go_w) = (go_read.as_raw_fd(), go_write.as_raw_fd());
    // SAFETY: in the child branch only `hold_userns` runs: raw system calls on the descriptors
    // and strings prepared above, then `_exit`; it never allocates, locks or returns.
    let (pid, pidfd) = match unsafe { clone_legacy(libc::CLONE_NEWUSER) } {
        Err(e) => return Err(format!("creating a user namespace: {e}")),
        Ok(Forked::Child) => hold_userns(go_r, go_w, limits),
        Ok(Forked::Parent { pid, pidfd }) => (pid, pidfd),
    };
    drop(go_read);
    let ns = map_identity(pid);
    if ns.is_ok() {
        // SAFETY: one byte from this frame to a descriptor this function owns.
        unsafe { libc::write(go_w, b"g".as_ptr().cast(), 1) };
    }
    drop(go_write);
    let status = wait(pidfd.as_raw_fd()).map_err(|e| format!("waiting for its holder: {e}"))?;
    held(ns, status)
}

/// Maps every uid and gid of the new user namespace of the holder `pid` to itself and opens the
/// namespace.
fn map_identity(pid: impl std::fmt::Display) -> Result<std::fs::File, String> {
    let map = b"0 0 4294967295\n";
    std::fs::write(format!("/proc/{pid}/uid_map"), map)
        .and_then(|()| std::fs::write(format!("/proc/{pid}/gid_map"), map))
        .map_err(|e| format!("writing its id maps: {e}"))
        .and_then(|()| {
            std::fs::File::open(format!("/proc/{pid}/ns/user")).map_err(|e| format!("opening it: {e}"))
        })
}

/// The namespace `ns` once its holder exited with `code`: 0 when every limit was written, else
/// the errno of the write that failed.
fn held(ns: Result<std::fs::File, String>, code: i32) -> Result<std::os::fd::OwnedFd, String> {
    let ns = ns?;
    match code {
        0 => Ok(ns.into()),
        errno => Err(format!("writing its per-user limits: {}", std::io::Error::from_raw_os_error(errno))),
    }
}

/// The holder of [`identity_userns`], in the new namespace: waits for the go-ahead (end of file:
/// the parent gave up), writes each limit, exits.
fn hold_userns(go_r: RawFd, go_w: RawFd, limits: &[(std::ffi::CString, Vec<u8>)]) -> ! {
    let mut byte = 0u8;
    // SAFETY: raw system calls on descriptors inherited from the parent and on buffers prepared
    // before the clone (or on this frame); `_exit` never returns.
    unsafe {
        libc::close(go_w);
        if libc::read(go_r, (&mut byte as *mut u8).cast(), 1) != 1 {
            libc::_exit(255);
        }
        for (path, value) in limits {
            let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 || libc::write(fd, value.as_ptr().cast(), value.len()) < 0 {
                libc::_exit(Errno::last().0);
            }
            libc::close(fd);
        }
        libc::_exit(0)
    }
}

/// The stack a child sharing this process's memory runs on until it executes: an anonymous
/// mapping with a guard page below it, unmapped when dropped (after the `CLONE_VFORK` clone has
/// returned, the child no longer uses it).
struct ChildStack {
    base: *mut libc::c_void,
    len: usize,
}

impl ChildStack {
    /// Room enough for `child::run`, which makes no deep calls and allocates nothing.
    const LEN: usize = 256 * 1024;
    const GUARD: usize = 4096;

    fn new() -> std::io::Result<ChildStack> {
        let len = Self::LEN + Self::GUARD;
        // SAFETY: a fresh private anonymous mapping; no existing memory is touched.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(std::io::Error::last_os_error());
        }
        let stack = ChildStack { base, len };
        // SAFETY: the lowest page of the mapping made above, which nothing else refers to.
        if unsafe { libc::mprotect(base, Self::GUARD, libc::PROT_NONE) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(stack)
    }
}

impl Drop for ChildStack {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`, unmapped once; no child runs on it any more.
        unsafe { libc::munmap(self.base, self.len) };
    }
}

/// The entry of a child that shares this process's memory: runs the plan `plan` points to.
extern "C" fn vfork_child(plan: *mut libc::c_void) -> ! {
    // SAFETY: `clone3_vfork` passes a pointer to the caller's `ChildPlan`, which stays alive and
    // untouched while its thread is suspended by `CLONE_VFORK`.
    let plan = unsafe { &mut *plan.cast::<super::child::ChildPlan<'_>>() };
    super::child::run(&RealSys, plan)
}

/// `clone3` with `CLONE_VM | CLONE_VFORK` on `stack`, otherwise as [`clone3`]: the child runs
/// [`vfork_child`] on `plan` in this process's memory, and this thread is suspended until the
/// child has executed or exited. Every signal is blocked on this thread around the clone, so
/// that no handler of hullward's runs in the child (which inherits the mask, resets every
/// disposition and only then unblocks them: `Sys::reset_signals`).
///
/// # Safety
/// `plan` must be one that `child::run` executes or exits on — never [`super::child::Init::Fork`],
/// whose child stays behind and would keep this thread suspended. The child writes only into
/// the plan's preallocated slots and its own stack.
#[cfg(target_arch = "x86_64")]
unsafe fn clone3_vfork(
    cgroup_fd: Option<RawFd>,
    namespaces: i32,
    stack: &ChildStack,
    plan: &mut super::child::ChildPlan<'_>,
) -> std::io::Result<Forked> {
    let mut pidfd: libc::c_int = -1;
    let shared = (libc::CLONE_VM | libc::CLONE_VFORK) as u64;
    let mut args = fork_args(cgroup_fd, namespaces as u64 | shared, &mut pidfd);
    args.stack = stack.base as u64;
    args.stack_size = stack.len as u64;
    // SAFETY: both sets are plain old data on this frame, initialised before use.
    let saved = unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut saved: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut saved);
        saved
    };
    let ret: libc::c_long;
    // SAFETY: the parent returns from the system call with its registers and stack intact (only
    // rax, rcx and r11 change). The child starts at the same instruction with rax = 0 on the top
    // of `stack` (16-byte aligned, as the mapping is page-aligned), where it calls `vfork_child`
    // with `plan`, which never returns; `ud2` is never reached. Until it executes or exits, this
    // thread is suspended, so `plan` and `stack` outlive every use the child makes of them.
    unsafe {
        std::arch::asm!(
            "syscall",
            "test rax, rax",
            "jnz 2f",
            "xor ebp, ebp",
            "mov rdi, r12",
            "call r13",
            "ud2",
            "2:",
            inlateout("rax") libc::SYS_clone3 => ret,
            in("rdi") &mut args as *mut libc::clone_args,
            in("rsi") std::mem::size_of::<libc::clone_args>(),
            in("r12") (plan as *mut super::child::ChildPlan<'_>).cast::<libc::c_void>(),
            in("r13") vfork_child as extern "C" fn(*mut libc::c_void) -> ! as usize,
            lateout("rcx") _,
            lateout("r11") _,
            options(nostack),
        );
    }
    // SAFETY: restores the mask saved above.
    unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &saved, std::ptr::null_mut()) };
    if ret < 0 {
        // The raw system call answers `-errno`.
        return Err(std::io::Error::from_raw_os_error(-ret as i32));
    }
    forked(ret, pidfd)
}

/// Elsewhere the child is a copy ([`clone3`]).
///
/// # Safety
/// As [`clone3`].
#[cfg(not(target_arch = "x86_64"))]
unsafe fn clone3_vfork(
    cgroup_fd: Option<RawFd>,
    namespaces: i32,
    _stack: &ChildStack,
    _plan: &mut super::child::ChildPlan<'_>,
) -> std::io::Result<Forked> {
    // SAFETY: as the caller's.
    unsafe { clone3(cgroup_fd, namespaces) }
}

/// What [`clone3`] and [`clone_legacy`] return.
enum Forked {
    /// In the parent: the child's pid and a pidfd for it.
    Parent { pid: libc::pid_t, pidfd: std::os::fd::OwnedFd },
    /// In the child.
    Child,
}

/// Set once `clone3` answered ENOSYS (a seccomp filter, or a kernel before 5.3).
static CLONE3_MISSING: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether `clone3` is usable here (as far as this process has seen).
pub fn clone3_works() -> bool {
    !CLONE3_MISSING.load(std::sync::atomic::Ordering::Relaxed)
}

/// `clone3` with fork semantics (`CLONE_PIDFD`, `SIGCHLD`), optionally straight into a cgroup v2
/// directory (`CLONE_INTO_CGROUP`) and into new namespaces (`CLONE_NEW*` in `namespaces`).
///
/// # Safety
/// In the `Child` case the caller runs in a copy of a multi-threaded process and must only make
/// async-signal-safe calls (no allocation, no locks) until it `exec`s or `_exit`s.
unsafe fn clone3(cgroup_fd: Option<RawFd>, namespaces: i32) -> std::io::Result<Forked> {
    let mut pidfd: libc::c_int = -1;
    let mut args = fork_args(cgroup_fd, namespaces as u64, &mut pidfd);
    // SAFETY: `args` is valid for the call; without CLONE_VM the child gets its own copy of memory
    // and returns here with 0, like fork.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_clone3,
            &mut args as *mut libc::clone_args,
            std::mem::size_of::<libc::clone_args>(),
        )
    };
    forked(ret, pidfd)
}

/// `clone3`'s arguments for a child with `flags` that ends with `SIGCHLD` and whose pidfd the
/// kernel stores in `pidfd`, straight into the cgroup v2 directory `cgroup_fd` when given.
fn fork_args(cgroup_fd: Option<RawFd>, flags: u64, pidfd: &mut libc::c_int) -> libc::clone_args {
    // SAFETY: `clone_args` is plain old data; all-zero is the documented default.
    let mut args: libc::clone_args = unsafe { std::mem::zeroed() };
    args.flags = libc::CLONE_PIDFD as u64 | flags;
    args.pidfd = pidfd as *mut libc::c_int as u64;
    args.exit_signal = libc::SIGCHLD as u64;
    if let Some(fd) = cgroup_fd {
        args.flags |= CLONE_INTO_CGROUP;
        args.cgroup = fd as u64;
    }
    args
}

/// The legacy `clone` with `CLONE_PIDFD` (Linux 5.2+): the kernel stores the pidfd through the
/// parent-tid argument, the third on every architecture.
///
/// # Safety
/// As [`clone3`].
unsafe fn clone_legacy(namespaces: i32) -> std::io::Result<Forked> {
    let mut pidfd: libc::c_int = -1;
    let flags =
        libc::CLONE_PIDFD as libc::c_ulong | namespaces as libc::c_ulong | libc::SIGCHLD as libc::c_ulong;
    // SAFETY: no new stack (fork semantics, the child continues on its copy of this one); the
    // pidfd pointer is valid for the call; no child-tid or TLS.
    let ret = unsafe {
        libc::syscall(libc::SYS_clone, flags, 0usize, &mut pidfd as *mut libc::c_int, 0usize, 0usize)
    };
    forked(ret, pidfd)
}

fn forked(ret: libc::c_long, pidfd: libc::c_int) -> std::io::Result<Forked> {
    match ret {
        r if r < 0 => Err(std::io::Error::last_os_error()),
        0 => Ok(Forked::Child),
        pid => {
            // SAFETY: the kernel stored a new pidfd that nothing else owns.
            let pidfd = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(pidfd) };
            Ok(Forked::Parent { pid: pid as libc::pid_t, pidfd })
        }
    }
}

/// Reaps the child behind `pidfd` without blocking; `None` while it still runs. The status is the
/// shell convention: the exit code, or 128 + the signal number.
pub fn try_reap(pidfd: RawFd) -> std::io::Result<Option<i32>> {
    reap(pidfd, libc::WNOHANG)
}

/// Waits for the child behind `pidfd` to exit and reaps it.
pub fn wait(pidfd: RawFd) -> std::io::Result<i32> {
    loop {
        match reap(pidfd, 0) {
            Ok(Some(status)) => return Ok(status),
            Ok(None) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

fn reap(pidfd: RawFd, extra: libc::c_int) -> std::io::Result<Option<i32>> {
    // SAFETY: `siginfo_t` is plain old data; zero means "no child changed state" for WNOHANG.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a valid out-parameter on this frame.
    let ret = unsafe { libc::waitid(libc::P_PIDFD, pidfd as libc::id_t, &mut info, libc::WEXITED | extra) };
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: after a successful waitid the pid/status fields of the union are initialised.
    let (pid, status) = unsafe { (info.si_pid(), info.si_status()) };
    if pid == 0 {
        return Ok(None);
    }
    Ok(Some(match info.si_code {
        libc::CLD_EXITED => status,
        _ => 128 + status,
    }))
}

/// Registers a pidfd with the tokio reactor, so that its exit can be awaited.
pub fn async_pidfd(
    pidfd: std::os::fd::OwnedFd,
) -> std::io::Result<tokio::io::unix::AsyncFd<std::os::fd::OwnedFd>> {
    // SAFETY: an `OwnedFd` is open and keeps referring to the same pidfd until the `AsyncFd`
    // that now owns it is dropped; `as_raw_fd` always returns that descriptor.
    unsafe { tokio::io::unix::AsyncFd::register_with_interest(pidfd, tokio::io::Interest::READABLE) }
        .map_err(|e| e.into_parts().1)
}

/// Sends `signal` to the process behind `pidfd` (no pid reuse race).
pub fn pidfd_kill(pidfd: RawFd, signal: i32) -> std::io::Result<()> {
    // SAFETY: plain integers; a stale pidfd yields ESRCH.
    let ret =
        unsafe { libc::syscall(libc::SYS_pidfd_send_signal, pidfd, signal, std::ptr::null::<u8>(), 0u32) };
    if ret < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Opens a pipe with both ends close-on-exec.
pub fn pipe_cloexec() -> std::io::Result<(std::os::fd::OwnedFd, std::os::fd::OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors the kernel writes.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nothing else.
    unsafe {
        Ok((
            <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fds[0]),
            <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fds[1]),
        ))
    }
}

/// Waits at most `timeout` until `fd` can be read without blocking (data, end of file or an
/// error waiting); `false` when the time ran out first. An interrupted wait starts over.
pub fn wait_readable(fd: std::os::fd::BorrowedFd<'_>, timeout: std::time::Duration) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let mut pfd = libc::pollfd { fd: fd.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let ms = timeout.as_millis().min(i32::MAX as u128) as libc::c_int;
    loop {
        // SAFETY: `pfd` is one valid `pollfd` for the whole call, and the count says one.
        let ret = unsafe { libc::poll(&mut pfd, 1, ms) };
        if ret >= 0 {
            return Ok(ret > 0);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// `landlock_create_ruleset(NULL, 0, flag)`: a query of the running kernel; -1 when Landlock is
/// unavailable or disabled.
fn landlock_query(flag: u32) -> i64 {
    // SAFETY: with a NULL attribute and size 0 the call only answers the query named by `flag`.
    unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, flag) }
}

/// The running kernel's Landlock ABI version (0 when Landlock is unavailable or disabled).
pub fn landlock_abi() -> u32 {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    u32::try_from(landlock_query(LANDLOCK_CREATE_RULESET_VERSION)).unwrap_or(0)
}

/// The Landlock errata bitmask of the running kernel (0 when not reported).
pub fn landlock_errata() -> u64 {
    const LANDLOCK_CREATE_RULESET_ERRATA: u32 = 1 << 1;
    u64::try_from(landlock_query(LANDLOCK_CREATE_RULESET_ERRATA)).unwrap_or(0)
}

/// Whether this process could install a seccomp filter (`prctl(PR_GET_SECCOMP)` succeeds).
pub fn seccomp_available() -> bool {
    // SAFETY: query only.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

/// The effective user id.
pub fn geteuid() -> u32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { libc::geteuid() }
}

/// The effective group id.
pub fn getegid() -> u32 {
    // SAFETY: no arguments, cannot fail.
    unsafe { libc::getegid() }
}

/// Whether this process may write into `path` (`access(2)` with `W_OK`).
pub fn access_writable(path: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_bytes()) else { return false };
    // SAFETY: `c` is NUL-terminated and outlives the call.
    unsafe { libc::access(c.as_ptr(), libc::W_OK) == 0 }
}

/// Raises this process's soft `RLIMIT_NOFILE` to its hard limit (the egress proxy holds several
/// descriptors per tunnel).
pub fn raise_nofile_limit() -> std::io::Result<()> {
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: `lim` is a valid out-parameter and then input, on this frame.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) < 0 {
            return Err(std::io::Error::last_os_error());
        }
        lim.rlim_cur = lim.rlim_max;
        if libc::setrlimit(libc::RLIMIT_NOFILE, &lim) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok(())
}

/// Marks this process as a child subreaper, so that orphaned descendants are reparented to it.
pub fn set_child_subreaper() -> std::io::Result<()> {
    // SAFETY: integer-only prctl affecting this process.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1u64, 0u64, 0u64, 0u64) } < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Whether a process with this pid exists (`kill(pid, 0)` does not fail with `ESRCH`).
pub fn process_exists(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only checks for existence and permission.
    unsafe { libc::kill(pid, 0) == 0 || *libc::__errno_location() != libc::ESRCH }
}

/// Sends `signal` to `pid` (used only for descendants found by the fallback /proc walk).
pub fn kill(pid: libc::pid_t, signal: i32) -> std::io::Result<()> {
    // SAFETY: plain integers.
    if unsafe { libc::kill(pid, signal) } < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// Reaps any exited child without blocking; returns its pid, or `None` when there is none.
pub fn reap_any() -> Option<libc::pid_t> {
    let mut status = 0;
    // SAFETY: `status` is a valid out-parameter.
    let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
    (pid > 0).then_some(pid)
}
/// Whether `path` carries the extended attribute `name` (`getxattr` with a zero-size buffer).
pub fn has_xattr(path: &std::path::Path, name: &str) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let (Ok(p), Ok(n)) = (std::ffi::CString::new(path.as_os_str().as_bytes()), std::ffi::CString::new(name))
    else {
        return false;
    };
    // SAFETY: both strings are NUL-terminated; a NULL buffer of size 0 only asks for the size.
    unsafe { libc::getxattr(p.as_ptr(), n.as_ptr(), std::ptr::null_mut(), 0) >= 0 }
}

/// The first descriptor passed by systemd socket activation (fd 3, `SD_LISTEN_FDS_START`), made
/// close-on-exec. The caller checked `LISTEN_PID`/`LISTEN_FDS`; an fd 3 that is not an open
/// socket is an error.
pub fn take_listen_fd() -> std::io::Result<std::os::fd::OwnedFd> {
    const FD: RawFd = 3;
    let mut st = std::mem::MaybeUninit::<libc::stat>::uninit();
    // SAFETY: fstat writes a `struct stat` into `st` and only reads the descriptor number.
    if unsafe { libc::fstat(FD, st.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fstat returned 0, so it initialised `st`.
    if unsafe { st.assume_init() }.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(std::io::Error::from_raw_os_error(libc::ENOTSOCK));
    }
    // SAFETY: F_SETFD on a descriptor known to be open changes only its close-on-exec flag.
    if unsafe { libc::fcntl(FD, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fd 3 is open (fstat succeeded), was passed to this process by its service manager
    // for it to own, and nothing else in hullward refers to it.
    Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(FD) })
}

// ---------------------------------------------------------------------------------------------
// Change tracking (`super::changes`): the fanotify group, its filesystem marks, and turning the
// directory file handles its events carry back into open directories.
// ---------------------------------------------------------------------------------------------

/// What the change tracker watches: names added, removed or renamed in a directory, for files and
/// directories alike (`FAN_ONDIR`). Reported once per directory entry, with the directory's
/// file handle and the entry's name.
const FAN_NAME_EVENTS: u64 =
    libc::FAN_CREATE | libc::FAN_DELETE | libc::FAN_MOVED_FROM | libc::FAN_MOVED_TO | libc::FAN_ONDIR;

/// A notification-only fanotify group that reports each event's directory by file handle and
/// the entry's name, with an unbounded queue, non-blocking (Linux 5.9+, `CAP_SYS_ADMIN`).
pub fn fanotify_name_group() -> std::io::Result<std::os::fd::OwnedFd> {
    let flags = libc::FAN_CLASS_NOTIF
        | libc::FAN_REPORT_DIR_FID
        | libc::FAN_REPORT_NAME
        | libc::FAN_UNLIMITED_QUEUE
        | libc::FAN_CLOEXEC
        | libc::FAN_NONBLOCK;
    // SAFETY: fanotify_init takes two flag words and touches no memory of ours.
    let fd = unsafe { libc::fanotify_init(flags, libc::O_RDONLY as libc::c_uint) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just created and is owned by nothing else.
    Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// Marks the whole filesystem holding `path` on `group` for [`FAN_NAME_EVENTS`] (every mount
/// of it, in every mount namespace).
pub fn fanotify_mark_filesystem(
    group: std::os::fd::BorrowedFd<'_>,
    path: &std::path::Path,
) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let flags = libc::FAN_MARK_ADD | libc::FAN_MARK_FILESYSTEM;
    // SAFETY: `c` is NUL-terminated and lives across the call; the group is an open descriptor.
    let ret =
        unsafe { libc::fanotify_mark(group.as_raw_fd(), flags, FAN_NAME_EVENTS, libc::AT_FDCWD, c.as_ptr()) };
    if ret < 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The filesystem id (`statfs.f_fsid`, what fanotify reports events with) and type magic of the
/// filesystem `fd` lies on.
pub fn filesystem_id(fd: std::os::fd::BorrowedFd<'_>) -> std::io::Result<([i32; 2], i64)> {
    use std::os::fd::AsRawFd;
    let mut st = std::mem::MaybeUninit::<libc::statfs>::uninit();
    // SAFETY: fstatfs writes a `struct statfs` into `st` and only reads the descriptor number.
    if unsafe { libc::fstatfs(fd.as_raw_fd(), st.as_mut_ptr()) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: fstatfs returned 0, so it initialised `st`.
    let st = unsafe { st.assume_init() };
    // SAFETY: `fsid_t` is two `int`s (`__val`, private in `libc`), plain data of the same size
    // and layout as `[i32; 2]`.
    let fsid = unsafe { std::mem::transmute::<libc::fsid_t, [i32; 2]>(st.f_fsid) };
    // `f_type` is an `i64` here and an `i32` on 32-bit targets.
    #[allow(clippy::unnecessary_cast)]
    Ok((fsid, st.f_type as i64))
}

/// Opens (`O_PATH`) the object a file handle names, through the mount `mount_fd` is on
/// (`CAP_DAC_READ_SEARCH`). `ESTALE`: the object no longer exists.
pub fn open_by_handle(
    mount_fd: std::os::fd::BorrowedFd<'_>,
    handle_type: i32,
    handle: &[u8],
) -> std::io::Result<std::os::fd::OwnedFd> {
    use std::os::fd::AsRawFd;
    let bytes = u32::try_from(handle.len()).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    // `struct file_handle` as `u32` words (its alignment): the byte count, the type, the bytes.
    let mut words: Vec<u32> = vec![bytes, handle_type as u32];
    words.extend(handle.chunks(4).map(|c| {
        let mut w = [0u8; 4];
        w[..c.len()].copy_from_slice(c);
        u32::from_ne_bytes(w)
    }));
    let ptr = words.as_mut_ptr().cast::<libc::file_handle>();
    // SAFETY: `words` holds a complete `struct file_handle` (header and `handle_bytes` bytes) and
    // outlives the call; the mount descriptor is open.
    let fd = unsafe { libc::open_by_handle_at(mount_fd.as_raw_fd(), ptr, libc::O_PATH | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: the descriptor was just opened and is owned by nothing else.
    Ok(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

/// Whether the mount table behind `mounts` (an open `/proc/self/mountinfo`, or another
/// process's) changed since it was opened or last reported changed: the kernel flags it
/// `POLLPRI` once per change.
pub fn mount_table_changed(mounts: std::os::fd::BorrowedFd<'_>) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let mut pfd = libc::pollfd { fd: mounts.as_raw_fd(), events: libc::POLLPRI, revents: 0 };
    loop {
        // SAFETY: `pfd` is one valid `pollfd` for the whole call, and the count says one.
        let ret = unsafe { libc::poll(&mut pfd, 1, 0) };
        if ret >= 0 {
            return Ok(pfd.revents & (libc::POLLPRI | libc::POLLERR) != 0);
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// A set of CPUs (`cpu_set_t`), for placing a helper thread.
#[derive(Clone, Copy)]
pub struct CpuMask(libc::cpu_set_t);

impl CpuMask {
    const SIZE: usize = std::mem::size_of::<libc::cpu_set_t>();

    /// The CPUs this thread may run on (`sched_getaffinity`).
    pub fn of_this_thread() -> Option<CpuMask> {
        // SAFETY: `cpu_set_t` is plain bits, and all zeroes is the empty set.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: `set` is a valid out-parameter of `SIZE` bytes on this frame.
        let ret = unsafe { libc::sched_getaffinity(0, Self::SIZE, &mut set) };
        (ret == 0).then_some(CpuMask(set))
    }

    /// These CPUs but the one this thread runs on now; `None` when that leaves none.
    pub fn without_this_cpu(mut self) -> Option<CpuMask> {
        // SAFETY: `sched_getcpu` takes no argument and only returns a number.
        let cpu = usize::try_from(unsafe { libc::sched_getcpu() }).ok()?;
        if cpu >= 8 * Self::SIZE {
            return None;
        }
        // SAFETY: `cpu` is below the set's size in bits (checked above), and both calls only touch
        // the set they are given, which lives on this frame.
        let left = unsafe {
            libc::CPU_CLR(cpu, &mut self.0);
            libc::CPU_COUNT(&self.0)
        };
        (left > 0).then_some(self)
    }

    /// Makes these the CPUs of this thread (`sched_setaffinity`).
    pub fn apply_here(&self) -> bool {
        // SAFETY: `self.0` is a valid `cpu_set_t` of `SIZE` bytes, only read.
        unsafe { libc::sched_setaffinity(0, Self::SIZE, &self.0) == 0 }
    }

    /// Makes these the CPUs of the spawned thread `thread` (`pthread_setaffinity_np`): the kernel
    /// moves it at once when it is queued on another CPU.
    // std's raw handle is a `u64`, the C library's `pthread_t` a `u64` (glibc) or a pointer (musl).
    #[allow(clippy::unnecessary_cast)]
    pub fn apply_to<T>(&self, thread: &std::thread::JoinHandle<T>) -> bool {
        let handle = std::os::unix::thread::JoinHandleExt::as_pthread_t(thread) as libc::pthread_t;
        // SAFETY: `thread` is borrowed, so it is neither joined nor detached and its handle names a
        // thread of this process; `self.0` is a valid `cpu_set_t` of `SIZE` bytes, only read.
        unsafe { libc::pthread_setaffinity_np(handle, Self::SIZE, &self.0) == 0 }
    }
}
