//! The init of a call's PID namespace, as a program of its own (`pid1.c`, built by build.rs),
//! executed by the call's child from a sealed memfd once its plan is applied.
//!
//! Why it exists: the child is a copy of hullward. Staying behind as the namespace's init, it
//! kept that copy for the whole call — every page the supervisor then wrote took a copy-on-write
//! fault and a TLB shootdown — and its fork of the program copied hullward's page tables once
//! more. The program executed instead is a few pages; the child's copy of hullward is gone the
//! moment it runs, and so is every descriptor of the plan (all close-on-exec). Landlock, seccomp,
//! the dropped capabilities and `no_new_privs` carry over the `exec` like the namespaces; Landlock
//! does not govern the memfd itself (it lives on the kernel's internal shmem mount).
//!
//! Order: [`image`] once per process (the CLI calls it from its probe thread, ahead of the plan;
//! later calls reuse the descriptor) → [`argv`] for each call, with the child's error descriptor
//! → the child `execveat`s the image (`child::Init::Image`). Where no image can be had (an
//! architecture `pid1.c` is not written for, a kernel or `vm.memfd_noexec` that refuses an
//! executable memfd) the child stays behind as the init itself, as before (`child::Init::Fork`).
//!
//! A sandbox prepared ahead of its request (`spawn::prepare`) runs the init with [`wait_argv`]:
//! it reports [`READY`] and waits for the program, which [`launch`] encodes once a request names
//! it.

use std::ffi::CString;
use std::io::Write as _;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::OnceLock;

use rustix::fs::{MemfdFlags, SealFlags};

/// The program, as build.rs made it (empty on an architecture it is not written for).
const PROGRAM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pid1"));

/// What the init is called in `/proc/1/comm` and `/proc/1/cmdline`.
const NAME: &str = "hullward-pid1";

/// What the program is called in its "userns" mode (`sys::identity_userns`).
pub const USERNS_NAME: &str = "hullward-userns";

static IMAGE: OnceLock<Option<OwnedFd>> = OnceLock::new();

/// The sealed, close-on-exec memfd holding the program, made on first use; `None` where it cannot
/// be had (the reason is logged once, at debug level).
pub fn image() -> Option<BorrowedFd<'static>> {
    IMAGE
        .get_or_init(|| match load() {
            Ok(fd) => Some(fd),
            Err(e) => {
                tracing::debug!("the call's init stays a fork of the child: {e}");
                None
            }
        })
        .as_ref()
        .map(AsFd::as_fd)
}

fn load() -> std::io::Result<OwnedFd> {
    if PROGRAM.is_empty() {
        return Err(std::io::Error::other("no pid1 program for this architecture"));
    }
    let base = MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING;
    // MFD_EXEC (Linux 6.3) keeps the memfd executable where `vm.memfd_noexec` would make it
    // `noexec` by default; older kernels refuse the flag, and there every memfd is executable.
    let fd = match rustix::fs::memfd_create(NAME, base | MemfdFlags::EXEC) {
        Err(rustix::io::Errno::INVAL) => rustix::fs::memfd_create(NAME, base)?,
        other => other?,
    };
    let mut file = std::fs::File::from(fd);
    file.write_all(PROGRAM)?;
    rustix::fs::fcntl_add_seals(
        &file,
        SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL,
    )?;
    Ok(file.into())
}

/// The init's arguments for one call: its name, the child's error descriptor, the program's
/// path, then the program's own `argv` (`pid1.c` documents the layout).
pub fn argv(error_fd: RawFd, program: &CString, program_argv: &[CString]) -> Vec<CString> {
    let head = [CString::new(NAME), CString::new(error_fd.to_string())]
        .into_iter()
        .map(|c| c.expect("no NUL in a name or a number"));
    head.chain(std::iter::once(program.clone())).chain(program_argv.iter().cloned()).collect()
}

/// The init's arguments when it is to wait for the program: its name, the error descriptor and
/// the descriptor the launch ([`launch`]) arrives on.
pub fn wait_argv(error_fd: RawFd, launch_fd: RawFd) -> Vec<CString> {
    [NAME.to_string(), error_fd.to_string(), launch_fd.to_string()]
        .into_iter()
        .map(|a| CString::new(a).expect("no NUL in a name or a number"))
        .collect()
}

/// The record a waiting init writes on the error pipe once its sandbox is complete (no stage is
/// numbered 0).
pub const READY: [u8; 12] = [0; 12];

/// The launch a waiting init reads (`pid1.c` documents the layout): the working directory, the
/// program's path, its arguments and its environment, each NUL-terminated, after a header of
/// their byte length and the two counts.
pub fn launch(cwd: &CString, program: &CString, argv: &[CString], envp: &[CString]) -> Vec<u8> {
    let strings = [cwd, program].into_iter().chain(argv).chain(envp);
    let body: Vec<u8> = strings.flat_map(|s| s.as_bytes_with_nul().iter().copied()).collect();
    let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes();
    let mut out = Vec::with_capacity(12 + body.len());
    out.extend(count(body.len()));
    out.extend(count(argv.len()));
    out.extend(count(envp.len()));
    out.extend(body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_is_sealed_and_holds_the_built_program() {
        let fd = image().expect("an executable memfd on this kernel");
        let seals = rustix::fs::fcntl_get_seals(fd).unwrap();
        assert!(seals.contains(SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW | SealFlags::SEAL));
        let held = std::fs::read(format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&fd))).unwrap();
        assert_eq!(held, PROGRAM);
        assert_eq!(&held[..4], b"\x7fELF");
    }

    #[test]
    fn the_arguments_put_the_error_descriptor_and_program_first() {
        let program = CString::new("/bin/sh").unwrap();
        let args = [CString::new("sh").unwrap(), CString::new("-c").unwrap()];
        let got: Vec<_> = argv(7, &program, &args).into_iter().map(|c| c.into_string().unwrap()).collect();
        assert_eq!(got, ["hullward-pid1", "7", "/bin/sh", "sh", "-c"]);
        let got: Vec<_> = wait_argv(7, 9).into_iter().map(|c| c.into_string().unwrap()).collect();
        assert_eq!(got, ["hullward-pid1", "7", "9"]);
    }

    #[test]
    fn a_launch_is_a_header_and_the_strings_in_order() {
        let c = |s: &str| CString::new(s).unwrap();
        let got = launch(&c("/w"), &c("/bin/sh"), &[c("sh"), c("-c")], &[c("A=1")]);
        let body = b"/w\0/bin/sh\0sh\0-c\0A=1\0";
        assert_eq!(&got[..12], [body.len() as u8, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(&got[12..], body);
    }
}
