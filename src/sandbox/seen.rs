//! What a plan learnt of the host paths it asked about, one `statx` per path: whether each is a
//! directory or exists at all, and which inode it is.
//!
//! Why it exists: a plan asks of each `System` path, device node and read-only tree whether it is
//! a directory (or is there), and a server that takes a sandbox made ahead then asks which inode
//! each path it holds is (`supervisor::ready`). Both questions are answered by the same `statx`
//! (`AT_SYMLINK_NOFOLLOW`, with the inode number and the birth time), so the plan asks once and
//! keeps the identities ([`Seen::identities`]) for that check: a served call paid two `statx` per
//! path, ≈ 40 paths a call.
//!
//! Order: [`Seen::default`] at the start of a plan → [`Seen::is_dir`] / [`Seen::exists`] as the
//! plan asks → [`Seen::identities`] into the plan. A path that is a symbolic link is followed by
//! a second `stat` when its target's type is asked (rare among these paths).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// What a host path is, as far as a sandbox built from it is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Identity {
    Missing,
    /// Device, inode number, birth time (seconds, nanoseconds).
    Inode(u64, u64, i64, u32),
    /// Neither missing nor known to the inode (an error, or no birth time on this file system):
    /// a sandbox holding such a path is never made ahead.
    Unknown,
}

/// What one `statx` said.
#[derive(Debug, Clone, Copy)]
struct Fact {
    identity: Identity,
    /// The entry's own type, not its target's.
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Dir,
    Link,
    Other,
    /// Missing, or the `statx` failed.
    Unknown,
}

impl Identity {
    /// The path's identity now.
    pub fn now(path: &Path) -> Identity {
        Fact::of(path).identity
    }
}

impl Fact {
    fn of(path: &Path) -> Fact {
        use rustix::fs::{statx, AtFlags, FileType, StatxFlags, CWD};
        let flags = StatxFlags::TYPE | StatxFlags::INO | StatxFlags::BTIME;
        match statx(CWD, path, AtFlags::SYMLINK_NOFOLLOW, flags) {
            Ok(st) => {
                let kind = match FileType::from_raw_mode(u32::from(st.stx_mode)) {
                    FileType::Directory => Kind::Dir,
                    FileType::Symlink => Kind::Link,
                    _ => Kind::Other,
                };
                let identity = if StatxFlags::from_bits_truncate(st.stx_mask).contains(StatxFlags::BTIME) {
                    let dev = rustix::fs::makedev(st.stx_dev_major, st.stx_dev_minor);
                    Identity::Inode(dev, st.stx_ino, st.stx_btime.tv_sec, st.stx_btime.tv_nsec)
                } else {
                    Identity::Unknown
                };
                Fact { identity, kind }
            }
            Err(rustix::io::Errno::NOENT) => Fact { identity: Identity::Missing, kind: Kind::Unknown },
            Err(_) => Fact { identity: Identity::Unknown, kind: Kind::Unknown },
        }
    }
}

/// The answers of one plan, by path.
#[derive(Debug, Default)]
pub struct Seen {
    facts: RefCell<HashMap<PathBuf, Fact>>,
}

impl Seen {
    fn fact(&self, path: &Path) -> Fact {
        if let Some(fact) = self.facts.borrow().get(path) {
            return *fact;
        }
        let fact = Fact::of(path);
        self.facts.borrow_mut().insert(path.to_path_buf(), fact);
        fact
    }

    /// Whether `path` is a directory, following a symbolic link.
    pub fn is_dir(&self, path: &Path) -> bool {
        match self.fact(path).kind {
            Kind::Dir => true,
            Kind::Link => path.is_dir(),
            Kind::Other | Kind::Unknown => false,
        }
    }

    /// Whether `path` exists, following a symbolic link.
    pub fn exists(&self, path: &Path) -> bool {
        match self.fact(path).kind {
            Kind::Dir | Kind::Other => true,
            Kind::Link => path.exists(),
            Kind::Unknown => false,
        }
    }

    /// The identity of every path asked about, as it was then.
    pub fn identities(self) -> HashMap<PathBuf, Identity> {
        self.facts.into_inner().into_iter().map(|(p, f)| (p, f.identity)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_are_the_filesystems_and_identities_are_the_entries_own() {
        let dir = tempfile::tempdir().unwrap();
        let (sub, file, link, dangling) =
            (dir.path().join("d"), dir.path().join("f"), dir.path().join("l"), dir.path().join("x"));
        std::fs::create_dir(&sub).unwrap();
        std::fs::write(&file, "x").unwrap();
        std::os::unix::fs::symlink(&sub, &link).unwrap();
        std::os::unix::fs::symlink(dir.path().join("none"), &dangling).unwrap();
        let seen = Seen::default();
        for p in [&sub, &file, &link, &dangling, &dir.path().join("missing")] {
            assert_eq!(seen.is_dir(p), p.is_dir(), "{}", p.display());
            assert_eq!(seen.exists(p), p.exists(), "{}", p.display());
        }
        let ids = seen.identities();
        assert_eq!(ids[&dir.path().join("missing")], Identity::Missing);
        // The link's own inode, not its target's: replacing the link is what a held path sees.
        if ids[&sub] != Identity::Unknown {
            assert_ne!(ids[&link], ids[&sub]);
            assert_eq!(ids[&sub], Identity::now(&sub));
        }
    }

    #[test]
    fn an_entry_replaced_after_it_was_seen_has_another_identity() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "x").unwrap();
        let seen = Seen::default();
        assert!(seen.exists(&file));
        let then = seen.identities()[&file];
        std::fs::write(dir.path().join("g"), "y").unwrap();
        std::fs::rename(dir.path().join("g"), &file).unwrap();
        if then != Identity::Unknown {
            assert_ne!(Identity::now(&file), then);
        }
    }
}
