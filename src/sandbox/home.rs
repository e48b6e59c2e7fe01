//! The child's home directory: private and writable, like `/tmp`, never the host's.
//!
//! Tools expect `$HOME` to exist and to take writes (pip's and npm's caches, cargo's locks, shell
//! history, `~/.config/…`). The host's home holds the user's secrets and their shell start-up
//! files, so the child never sees it: [`plan`] decides where the child's home is, the view mounts
//! a fresh tmpfs there (gone when the call ends), and the environment's `HOME` points at it.
//! Toolchains under the host's home (`~/.rustup`, `~/.cargo/bin`, `~/.pyenv`) appear inside it at
//! their usual paths only when the policy grants them (`--ro`, `Sandbox.ReadOnlyDirs`), bound on
//! top of the tmpfs; so do roots that live under the home.
//!
//! Called once by the planner, after the roots, writable directories and read-only directories
//! are known.

use std::path::{Path, PathBuf};

/// Where the child's `HOME` points when the caller's home cannot carry a private tmpfs.
pub const FALLBACK: &str = "/tmp";

/// Paths a private home is never mounted over: kernel filesystems and the view's own mounts.
const NOT_A_HOME: &[&str] = &["/", "/proc", "/dev", "/sys", "/tmp", "/run"];

/// The child's home.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    /// The child's `HOME`.
    pub path: PathBuf,
    /// A fresh private tmpfs is mounted at `path`; otherwise `path` is already something the
    /// view shows (a granted tree, or the private `/tmp`).
    pub private: bool,
}

/// What the view already shows, to place the home against.
#[derive(Debug, Clone, Copy)]
pub struct Shown<'a> {
    /// Roots, writable and read-only directories: a home inside one of them is that tree.
    pub granted: &'a [PathBuf],
    /// `System` entries: a home inside one would be a tmpfs over a read-only system copy.
    pub system: &'a [PathBuf],
}

/// The child's home: a private tmpfs at the caller's home path (so that `~/.cargo/bin` and the
/// like keep their paths), unless that path is already granted (then it is what the grant says),
/// or cannot take a mount (no home, a relative one, `/`, inside a system directory or a kernel
/// filesystem) — then the private `/tmp`.
pub fn plan(caller_home: Option<&Path>, shown: Shown<'_>) -> Home {
    let fallback = Home { path: PathBuf::from(FALLBACK), private: false };
    let Some(home) = caller_home.filter(|h| h.is_absolute()) else { return fallback };
    let home: PathBuf = home.components().collect();
    if shown.granted.iter().any(|g| home.starts_with(g)) {
        return Home { path: home, private: false };
    }
    let reserved = NOT_A_HOME.iter().any(|r| home == Path::new(r))
        || ["/proc", "/dev", "/sys"].iter().any(|k| home.starts_with(k))
        || shown.system.iter().any(|s| home.starts_with(s));
    if reserved {
        return fallback;
    }
    Home { path: home, private: true }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown<'a>(granted: &'a [PathBuf], system: &'a [PathBuf]) -> Shown<'a> {
        Shown { granted, system }
    }

    #[test]
    fn the_callers_home_path_becomes_a_private_tmpfs() {
        let h = plan(Some(Path::new("/home/u/")), shown(&["/home/u/proj".into()], &["/usr".into()]));
        assert_eq!(h, Home { path: "/home/u".into(), private: true });
    }

    #[test]
    fn a_granted_home_stays_what_the_grant_says() {
        let h = plan(Some(Path::new("/srv/u")), shown(&["/srv".into()], &[]));
        assert_eq!(h, Home { path: "/srv/u".into(), private: false });
    }

    #[test]
    fn homes_that_cannot_take_a_mount_fall_back_to_the_private_tmp() {
        for home in [None, Some("relative"), Some("/"), Some("/proc/1"), Some("/usr/lib/x"), Some("/tmp")] {
            let h = plan(home.map(Path::new), shown(&[], &["/usr".into()]));
            assert_eq!(h, Home { path: FALLBACK.into(), private: false }, "{home:?}");
        }
    }

    #[test]
    fn a_home_under_the_private_tmp_is_its_own_tmpfs() {
        let h = plan(Some(Path::new("/tmp/ci/home")), shown(&[], &[]));
        assert_eq!(h, Home { path: "/tmp/ci/home".into(), private: true });
    }
}
