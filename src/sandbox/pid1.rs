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

use std::ffi::CString;
use std::io::Write as _;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::OnceLock;

use rustix::fs::{MemfdFlags, SealFlags};

/// The program, as build.rs made it (empty on an architecture it is not written for).
const PROGRAM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pid1"));

/// What the init is called in `/proc/1/comm` and `/proc/1/cmdline`.
const NAME: &str = "hullward-pid1";

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
    }
}
