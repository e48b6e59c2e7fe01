//! Between `fork` and `exec` the child must not allocate: it runs in a copy of a multi-threaded
//! process whose allocator lock another thread may have held. This test runs the whole child
//! sequence (`child::apply`, every kind of mount op included) against system calls that do
//! nothing, under a global allocator that counts, and requires zero allocations.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::{CStr, CString};
use std::os::fd::RawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use hullward::sandbox::child::{apply, ChildLandlockRule, ChildPlan, Init, MountOp, StandIn};
use hullward::sandbox::sys::{Errno, SockFilter, Sys, SysResult};

struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: forwards every call to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::SeqCst) {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new: usize) -> *mut u8 {
        if COUNTING.load(Ordering::SeqCst) {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// System calls that succeed and do nothing.
struct Inert;

impl Sys for Inert {
    fn setsid(&self) -> SysResult<()> {
        Ok(())
    }
    fn write(&self, _: RawFd, buf: &[u8]) -> SysResult<usize> {
        Ok(buf.len())
    }
    fn dup2(&self, _: RawFd, _: RawFd) -> SysResult<()> {
        Ok(())
    }
    fn close(&self, _: RawFd) -> SysResult<()> {
        Ok(())
    }
    fn close_range(&self, _: u32, _: u32) -> SysResult<()> {
        Ok(())
    }
    fn unshare(&self, _: i32) -> SysResult<()> {
        Ok(())
    }
    fn hand_back_listener(&self, _: RawFd, _: u16) -> SysResult<()> {
        Ok(())
    }
    fn open(&self, _: &CStr, _: i32, _: u32) -> SysResult<RawFd> {
        Ok(50)
    }
    fn mount(&self, _: Option<&CStr>, _: &CStr, _: Option<&CStr>, _: u64, _: Option<&CStr>) -> SysResult<()> {
        Ok(())
    }
    fn umount2(&self, _: &CStr, _: i32) -> SysResult<()> {
        Ok(())
    }
    fn open_tree(&self, _: RawFd, _: &CStr, _: u32) -> SysResult<RawFd> {
        Ok(51)
    }
    fn detached_tmpfs(&self, _: &CStr, _: u64) -> SysResult<RawFd> {
        Ok(52)
    }
    fn openat(&self, _: RawFd, _: &CStr, _: i32, _: u32) -> SysResult<RawFd> {
        Ok(53)
    }
    fn mkdirat(&self, _: RawFd, _: &CStr, _: u32) -> SysResult<()> {
        Ok(())
    }
    fn mount_setattr_fd(&self, _: RawFd, _: bool, _: u64, _: u64) -> SysResult<()> {
        Ok(())
    }
    fn move_mount_fd(&self, _: RawFd, _: &CStr) -> SysResult<()> {
        Ok(())
    }
    fn move_mount_onto(&self, _: RawFd, _: RawFd) -> SysResult<()> {
        Ok(())
    }
    fn identity(&self, _: RawFd) -> SysResult<(u64, u64)> {
        Ok((1, 2))
    }
    fn shape_file(&self, _: RawFd, _: u64, _: (i64, i64)) -> SysResult<()> {
        Ok(())
    }
    fn mkdir(&self, _: &CStr, _: u32) -> SysResult<()> {
        Err(Errno(libc::EEXIST))
    }
    fn rmdir(&self, _: &CStr) -> SysResult<()> {
        Ok(())
    }
    fn symlink(&self, _: &CStr, _: &CStr) -> SysResult<()> {
        Ok(())
    }
    fn chmod(&self, _: &CStr, _: u32) -> SysResult<()> {
        Ok(())
    }
    fn chdir(&self, _: &CStr) -> SysResult<()> {
        Ok(())
    }
    fn pivot_root(&self, _: &CStr, _: &CStr) -> SysResult<()> {
        Ok(())
    }
    fn loopback_up(&self) -> SysResult<()> {
        Ok(())
    }
    fn prctl(&self, _: i32, _: u64, _: u64) -> SysResult<()> {
        Ok(())
    }
    fn capset_zero(&self) -> SysResult<()> {
        Ok(())
    }
    fn setrlimit(&self, _: u32, _: u64, _: u64) -> SysResult<()> {
        Ok(())
    }
    fn setns(&self, _: RawFd, _: i32) -> SysResult<()> {
        Ok(())
    }
    fn landlock_add_path_rule(&self, _: RawFd, _: RawFd, _: u64) -> SysResult<()> {
        Ok(())
    }
    fn landlock_restrict_self(&self, _: RawFd) -> SysResult<()> {
        Ok(())
    }
    fn seccomp_install(&self, _: &[SockFilter]) -> SysResult<()> {
        Ok(())
    }
    fn reset_signals(&self) -> SysResult<()> {
        Ok(())
    }
    fn execve(&self, _: &CStr, _: &[*const libc::c_char], _: &[*const libc::c_char]) -> Errno {
        Errno(libc::ENOENT)
    }
    fn clear_cloexec(&self, _: RawFd) -> SysResult<()> {
        Ok(())
    }
    fn execveat_fd(&self, _: RawFd, _: &[*const libc::c_char], _: &[*const libc::c_char]) -> Errno {
        Errno(libc::ENOENT)
    }
    fn exit(&self, code: i32) -> ! {
        std::process::exit(code)
    }
    fn peer_closed(&self, _: RawFd) -> SysResult<bool> {
        Ok(false)
    }
    fn fork(&self) -> SysResult<libc::pid_t> {
        Ok(0)
    }
    fn wait_any(&self) -> SysResult<(libc::pid_t, i32)> {
        Err(Errno(libc::ECHILD))
    }
}

fn c(s: &str) -> CString {
    CString::new(s).unwrap()
}

#[test]
fn the_child_sequence_does_not_allocate() {
    let ops = vec![
        MountOp::MakePrivate,
        MountOp::Clone { src: c("/usr"), slot: 0, set: 1, clear: 0 },
        MountOp::Fs { fstype: c("tmpfs"), target: c("/tmp"), flags: 0, options: c("mode=0755") },
        MountOp::Mkdir { path: c("/tmp/usr"), mode: 0o755 },
        MountOp::Touch { path: c("/tmp/f"), mode: 0o600 },
        MountOp::WriteFile { path: c("/tmp/etc/passwd"), content: b"root:x:0:0::/:/bin/sh\n".to_vec() },
        MountOp::Symlink { target: c("usr/bin"), link: c("/tmp/bin") },
        MountOp::Chmod { path: c("/tmp/f"), mode: 0 },
        MountOp::Attach { slot: 0, target: c("/tmp/usr") },
        MountOp::Bind { src: c("/dev/null"), target: c("/tmp/dev/null") },
        MountOp::SetReadOnly { target: c("/tmp/dev") },
        MountOp::Mkdir { path: c("/tmp/.hullward-mask-source"), mode: 0o700 },
        MountOp::MaskSource {
            slot: 1,
            at: c("/tmp/.hullward-mask-source"),
            stand_ins: vec![StandIn { name: c("s0"), size: 4096, mtime: (1_700_000_000, 5), mode: 0 }],
        },
        MountOp::Pin { path: c("/tmp/work/infra"), expect: Some((1, 2)) },
        MountOp::ReadOnlyBind { target: c("/tmp/work/.git/config"), expect: Some((1, 2)) },
        MountOp::Mask { slot: 1, name: c("file"), target: c("/tmp/work/.env"), expect: Some((1, 2)) },
        MountOp::Close { slot: 1 },
        MountOp::Unmount { target: c("/tmp/.hullward-mask-source") },
        MountOp::Rmdir { path: c("/tmp/.hullward-mask-source") },
        MountOp::PivotRoot { new_root: c("/tmp") },
    ];
    let mut plan = ChildPlan {
        stdio: [Some(3), Some(4), Some(5)],
        error_fd: 6,
        keep_fds: vec![6, 7, 8],
        cgroup_procs: vec![8],
        cgroup_v2_procs: Some(12),
        join_v2_cgroup: true,
        rlimits: vec![(0, 1, 1), (1, 2, 2)],
        unshare_flags: libc::CLONE_NEWNS | libc::CLONE_NEWNET,
        id_maps: vec![(c("/proc/self/uid_map"), b"0 0 1".to_vec())],
        ucount_limits: vec![(c("/proc/sys/user/max_inotify_instances"), b"64".to_vec())],
        join_userns: Some(13),
        userns_at_clone: false,
        parent_death: true,
        init: Init::Image(53),
        init_argv: vec![c("hullward-pid1"), c("7"), c("/bin/true"), c("true")],
        launch_fd: None,
        egress: Some((9, 3128)),
        join_netns: None,
        loopback_up: true,
        mount_ops: &ops,
        slots: vec![-1, -1],
        cwd: c("/work"),
        cap_last: 40,
        drop_caps: true,
        lock_privileges: true,
        no_new_privs: true,
        landlock_fd: Some(7),
        landlock_child_rules: vec![ChildLandlockRule { path: c("/tmp"), access: 3 }],
        seccomp: vec![vec![SockFilter { code: 6, jt: 0, jf: 0, k: 0x7fff_0000 }]],
        dry_run: false,
        program: c("/bin/true"),
        argv: vec![c("true")],
        envp: vec![c("PATH=/usr/bin")],
        argv_ptrs: Vec::new(),
        envp_ptrs: Vec::new(),
        init_argv_ptrs: Vec::new(),
    };
    plan.seal();

    COUNTING.store(true, Ordering::SeqCst);
    let result = apply(&Inert, &mut plan);
    COUNTING.store(false, Ordering::SeqCst);

    assert!(result.is_ok(), "{result:?}");
    assert_eq!(ALLOCATIONS.load(Ordering::SeqCst), 0, "the child sequence allocated");
    assert_eq!(plan.slots, vec![51, 52], "the slots were filled in place");
}
