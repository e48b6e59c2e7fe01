//! Held entries: a server opens each protected entry its walk stamps (`O_PATH`, the entry itself,
//! never a symlink's target) and keeps the descriptors with the walk, so that the next walks
//! `stat` a descriptor instead of resolving the path again.
//!
//! Why it exists: with the change tracker ([`super::changes`]) vouching for every directory, what
//! is left of a served call's walks on a large root is one `statx` per protected entry before the
//! call and one after it, ≈ 4 µs each: a path lookup through dentries and inodes that the call
//! itself pushed out of the CPU's caches. 200 `.env` files in a 100k-file root made 400 of them,
//! ≈ 2 ms of the call. `fstat` of a held descriptor takes ≈ 0.5 µs.
//!
//! Why the answer is never stale: a descriptor names an inode; a path names whatever its
//! directories hold now. The two agree while no directory from the root down to the entry has
//! changed its names since the descriptor was opened: no rename, removal or new entry in the
//! entry's place or in an ancestor's. The tracker reports exactly those changes, and it reports
//! everything when it cannot tell (a change of the mount table, lost events, a root renamed).
//! So a walk asks a [`Held`] only about an entry whose directories the tracker vouches for since
//! the walk that opened the descriptor: a [`super::masks::Replay`]'s entries outside the changed
//! directories, and in the walk after a call, the entries of the walk before it that lie under
//! no changed directory ([`Held::vouched`]). What the inode says (content, size, times, links,
//! type) comes from the `fstat` itself, as it would from a `stat` of the path; an entry removed
//! and recreated in place changed its directory, and is stat'ed and opened again by name.
//!
//! Order: [`keep_open`] once, in a server → [`open`] by a recording walk for each entry it stamps
//! by name, while the tracker runs ([`holding`]) → the walk's [`Held`], kept with its replay and
//! its snapshot → [`Held::get`] / [`Held::vouched`] in the walks that follow. A descriptor is
//! closed when the last replay or snapshot that holds it is dropped.
//!
//! Bounded: a process holds at most a quarter of its open-file limit; past that, entries are
//! stat'ed by name as without this module.

use std::collections::{HashMap, HashSet};
use std::fs::{File, Metadata};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

use rustix::fs::{Mode, OFlags};

use super::changes;
use super::masks::{ancestors, dir_key};

/// Set by [`keep_open`].
static KEEP_OPEN: AtomicBool = AtomicBool::new(false);

/// Descriptors this process holds now.
static HOLDING: AtomicUsize = AtomicUsize::new(0);

/// From now on, walks in this process keep their protected entries open (a long-lived server:
/// its walks are kept in memory for the next call).
pub fn keep_open() {
    KEEP_OPEN.store(true, Ordering::Relaxed);
}

/// Whether a walk that records what it met should [`open`] the entries it stamps: in a process
/// that [`keep_open`]s, while the change tracker runs (without it no walk is replayed, and a
/// descriptor would only cost its `open` and `close`).
pub fn holding() -> bool {
    KEEP_OPEN.load(Ordering::Relaxed) && changes::tracking()
}

/// How many descriptors this process may hold: a quarter of its soft open-file limit, read once.
fn budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile).current;
        limit.map_or(usize::MAX, |l| usize::try_from(l / 4).unwrap_or(usize::MAX))
    })
}

/// One protected entry, open as itself (`O_PATH | O_NOFOLLOW`).
#[derive(Debug)]
pub struct Handle {
    file: File,
}

impl Handle {
    /// What a `stat` of the entry's path would say while it still names this inode.
    pub fn metadata(&self) -> std::io::Result<Metadata> {
        self.file.metadata()
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        HOLDING.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Opens `path` itself to be held, with what a `stat` of it says. `None` when this process holds
/// as many descriptors as it may, or the `open` or `fstat` failed: the caller stats the path, and
/// only that `stat`'s failure says the entry is gone (an `open` can fail where a `stat` does not).
pub fn open(path: &Path) -> Option<(Arc<Handle>, Metadata)> {
    if HOLDING.fetch_add(1, Ordering::Relaxed) >= budget() {
        HOLDING.fetch_sub(1, Ordering::Relaxed);
        return None;
    }
    let flags = OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let Ok(fd) = rustix::fs::open(path, flags, Mode::empty()) else {
        HOLDING.fetch_sub(1, Ordering::Relaxed);
        return None;
    };
    // From here the handle owns the count: dropping it gives it back.
    let handle = Arc::new(Handle { file: File::from(fd) });
    let meta = handle.metadata().ok()?;
    Some((handle, meta))
}

/// The held entries of one walk, by path.
#[derive(Debug, Default)]
pub struct Held {
    by_path: HashMap<Box<[u8]>, Arc<Handle>>,
}

impl FromIterator<(PathBuf, Arc<Handle>)> for Held {
    fn from_iter<I: IntoIterator<Item = (PathBuf, Arc<Handle>)>>(entries: I) -> Held {
        let by_path = entries.into_iter().map(|(p, h)| (p.into_os_string().into_encoded_bytes().into(), h));
        Held { by_path: by_path.collect() }
    }
}

impl Held {
    /// The handle of `path`, for an entry whose directories the tracker vouches for since this
    /// walk (the caller's to know: a replay's entries outside the changed directories).
    pub fn get(&self, path: &Path) -> Option<&Arc<Handle>> {
        self.by_path.get(path.as_os_str().as_bytes())
    }

    /// The handle of `path` when no directory above it is among `changed` (the directories the
    /// tracker reports changed since this walk; `None`: it cannot tell, and no handle answers).
    pub fn vouched(&self, path: &Path, changed: Option<&HashSet<Vec<u8>>>) -> Option<&Arc<Handle>> {
        let changed = changed?;
        let parent = dir_key(path.parent()?);
        let moved = std::iter::once(parent).chain(ancestors(parent)).any(|d| changed.contains(d));
        if moved {
            return None;
        }
        self.get(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn a_handle_says_what_a_stat_of_the_path_says_until_the_name_moves() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let env = dir.join(".env");
        std::fs::write(&env, "A=1\n").unwrap();
        let (handle, meta) = open(&env).unwrap();
        assert_eq!(meta.ino(), std::fs::symlink_metadata(&env).unwrap().ino());
        std::fs::write(&env, "A=12345\n").unwrap();
        let now = handle.metadata().unwrap();
        assert_eq!(now.size(), 8, "an in-place rewrite shows through the handle");
        assert_eq!(now.mtime_nsec(), std::fs::symlink_metadata(&env).unwrap().mtime_nsec());
        // Replaced by a rename: the name now holds another inode, the handle the old one.
        std::fs::write(dir.join("new"), "B=2\n").unwrap();
        std::fs::rename(dir.join("new"), &env).unwrap();
        assert_ne!(handle.metadata().unwrap().ino(), std::fs::symlink_metadata(&env).unwrap().ino());
        let held: Held = [(env.clone(), handle)].into_iter().collect();
        let changed: HashSet<Vec<u8>> = [dir_key(&dir).to_vec()].into();
        assert!(held.vouched(&env, Some(&changed)).is_none(), "its directory changed");
        let above: HashSet<Vec<u8>> = [dir_key(dir.parent().unwrap()).to_vec()].into();
        assert!(held.vouched(&env, Some(&above)).is_none(), "a directory above it changed");
        assert!(held.vouched(&env, None).is_none(), "the tracker cannot tell");
        let elsewhere: HashSet<Vec<u8>> = [dir_key(&dir.join("sub")).to_vec()].into();
        assert!(held.vouched(&env, Some(&elsewhere)).is_some());
    }

    #[test]
    fn a_symlink_is_held_as_itself() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let link = dir.join(".env");
        std::os::unix::fs::symlink("/etc/hostname", &link).unwrap();
        let (handle, meta) = open(&link).unwrap();
        assert!(meta.file_type().is_symlink());
        assert!(handle.metadata().unwrap().file_type().is_symlink());
    }

    #[test]
    fn a_missing_entry_is_not_held() {
        let tmp = tempfile::tempdir().unwrap();
        assert!(open(&tmp.path().join("gone")).is_none());
    }
}
