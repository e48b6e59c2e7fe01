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
//! A long-lived process ([`keep_in_memory`]) also keeps what its plans saw, for the next plan:
//! the `statx` of ≈ 40 `System` paths were 0.16 ms of a served call of 2.8 ms. A kept answer
//! is given again only while:
//! - every directory above the path still has the change time it had when the answer was
//!   found, and that change time was older than a clock tick then (a change moves it, as the
//!   walk index relies on: `sandbox::index`);
//! - those directories are on filesystems whose change times the local kernel keeps, and none
//!   of them is a symbolic link;
//! - this process's mount table has not changed (a mount over a path changes what it is
//!   without touching the directory above).
//!
//! Which entry a name holds changes only with its directory, so a path under unchanged
//! directories is the entry it was: the plan stats the few directories above the `System` paths
//! (`/`, `/etc`, `/dev`, `/usr`) instead of every path. A served `/bin/true` in a small
//! workspace: 41 of 46 answers from memory, the plan 0.51 → 0.41 ms (uprobes).
//!
//! Order: [`Seen::default`] (nothing kept) or [`Seen::for_plan`] (this process's memory, when it
//! keeps one) at the start of a plan → [`Seen::is_dir`] / [`Seen::exists`] as the plan asks →
//! [`Seen::identities`] into the plan. A path that is a symbolic link is followed by a second
//! `stat` when its target's type is asked (rare among these paths).

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::File;
use std::os::fd::AsFd;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::SystemTime;

use super::masks::ctime_trusted_before;

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
    /// Its device and inode number (also when the identity is unknown for want of a birth time).
    dev: u64,
    ino: u64,
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
        Fact::with_ctime(path).0
    }

    /// The fact, and the entry's change time in nanoseconds (`None` when it has none).
    fn with_ctime(path: &Path) -> (Fact, Option<i128>) {
        use rustix::fs::{statx, AtFlags, FileType, StatxFlags, CWD};
        let flags = StatxFlags::TYPE | StatxFlags::INO | StatxFlags::BTIME | StatxFlags::CTIME;
        match statx(CWD, path, AtFlags::SYMLINK_NOFOLLOW, flags) {
            Ok(st) => {
                let kind = match FileType::from_raw_mode(u32::from(st.stx_mode)) {
                    FileType::Directory => Kind::Dir,
                    FileType::Symlink => Kind::Link,
                    _ => Kind::Other,
                };
                let mask = StatxFlags::from_bits_truncate(st.stx_mask);
                let dev = rustix::fs::makedev(st.stx_dev_major, st.stx_dev_minor);
                let identity = if mask.contains(StatxFlags::BTIME) {
                    Identity::Inode(dev, st.stx_ino, st.stx_btime.tv_sec, st.stx_btime.tv_nsec)
                } else {
                    Identity::Unknown
                };
                let ctime = mask.contains(StatxFlags::CTIME).then(|| {
                    i128::from(st.stx_ctime.tv_sec) * 1_000_000_000 + i128::from(st.stx_ctime.tv_nsec)
                });
                (Fact { identity, kind, dev, ino: st.stx_ino }, ctime)
            }
            Err(rustix::io::Errno::NOENT) => (Fact::missing(Identity::Missing), None),
            Err(_) => (Fact::missing(Identity::Unknown), None),
        }
    }

    fn missing(identity: Identity) -> Fact {
        Fact { identity, kind: Kind::Unknown, dev: 0, ino: 0 }
    }
}

/// The answers of one plan, by path. The maps are keyed by the path's bytes: hashing a `Path`
/// goes component by component, which cost more than the lookups saved.
#[derive(Debug, Default)]
pub struct Seen {
    facts: RefCell<HashMap<OsString, Fact>>,
    /// The process's memory, when it keeps one, and what this plan found of the directories
    /// above the paths it asked about (`None`: a directory that cannot vouch for its entries).
    memory: Option<Arc<Memory>>,
    above: RefCell<HashMap<OsString, Option<DirStamp>>>,
    /// Change times from before this are trusted (a clock tick before the plan began).
    trusted_before: i128,
    /// How many answers came from the memory.
    recalled: std::cell::Cell<usize>,
    /// The memory's generation when this plan began: what it finds is kept only if the memory
    /// has not been emptied since (a mount came or went meanwhile).
    generation: u64,
}

impl Seen {
    /// A plan's answers, from this process's memory where it keeps one ([`keep_in_memory`]).
    pub fn for_plan() -> Seen {
        let Some(memory) = MEMORY.get() else { return Seen::default() };
        Seen::remembering(memory.clone()).unwrap_or_default()
    }

    /// `None` when the memory cannot tell whether a mount came or went.
    fn remembering(memory: Arc<Memory>) -> Option<Seen> {
        let generation = memory.generation()?;
        Some(Seen {
            memory: Some(memory),
            generation,
            trusted_before: ctime_trusted_before(SystemTime::now()),
            // A plan asks about ≈ 50 paths below ≈ 10 directories.
            facts: RefCell::new(HashMap::with_capacity(64)),
            above: RefCell::new(HashMap::with_capacity(16)),
            ..Seen::default()
        })
    }

    fn fact(&self, path: &Path) -> Fact {
        if let Some(fact) = self.facts.borrow().get(path.as_os_str()) {
            return *fact;
        }
        let fact = match &self.memory {
            Some(memory) => self.recall(memory, path),
            None => Fact::of(path),
        };
        self.facts.borrow_mut().insert(path.as_os_str().to_owned(), fact);
        fact
    }

    /// The answer kept for `path` when the directories above it vouch that it still holds;
    /// otherwise a fresh one, kept for the next plan when they can vouch for it then.
    fn recall(&self, memory: &Memory, path: &Path) -> Fact {
        let Some(above) = self.stamps_above(memory, path) else { return Fact::of(path) };
        if let Some(fact) = memory.recall(path, &above) {
            self.recalled.set(self.recalled.get() + 1);
            return fact;
        }
        let fact = Fact::of(path);
        memory.keep(path, fact, above, self.generation);
        fact
    }

    /// The stamps of the directories above `path`, nearest last; `None` when one of them
    /// cannot vouch for its entries (or `path` is not a plain absolute path).
    fn stamps_above(&self, memory: &Memory, path: &Path) -> Option<Vec<DirStamp>> {
        let plain = path.is_absolute()
            && path.components().all(|c| matches!(c, Component::RootDir | Component::Normal(_)));
        if !plain {
            return None;
        }
        let mut above: Vec<&Path> = path.ancestors().skip(1).collect();
        above.reverse();
        above.into_iter().map(|dir| self.dir_stamp(memory, dir)).collect()
    }

    /// What this plan found of `dir`, stat'ing it the first time it is asked (that answer also
    /// serves a question about `dir` itself).
    fn dir_stamp(&self, memory: &Memory, dir: &Path) -> Option<DirStamp> {
        if let Some(stamp) = self.above.borrow().get(dir.as_os_str()) {
            return *stamp;
        }
        let (fact, ctime) = Fact::with_ctime(dir);
        self.facts.borrow_mut().entry(dir.as_os_str().to_owned()).or_insert(fact);
        let stamp = ctime
            .filter(|c| {
                fact.kind == Kind::Dir && *c < self.trusted_before && memory.trusted_device(dir, fact.dev)
            })
            .map(|ctime| DirStamp { dev: fact.dev, ino: fact.ino, ctime });
        self.above.borrow_mut().insert(dir.as_os_str().to_owned(), stamp);
        stamp
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
        if self.memory.is_some() {
            tracing::debug!(
                "{} of {} host paths answered from memory",
                self.recalled.get(),
                self.facts.borrow().len()
            );
        }
        self.facts.into_inner().into_iter().map(|(p, f)| (PathBuf::from(p), f.identity)).collect()
    }
}

/// A directory as a plan found it: which one it is and when its entries last changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct DirStamp {
    dev: u64,
    ino: u64,
    ctime: i128,
}

/// What the plans of this process found, kept for the next plans (see the module doc).
#[derive(Debug)]
pub struct Memory {
    kept: Mutex<Kept>,
}

#[derive(Debug)]
struct Kept {
    /// This process's `/proc/self/mountinfo`: the kernel flags it when a mount comes or goes.
    mounts: File,
    /// Each answer, with the stamps of the directories above its path when it was found.
    facts: HashMap<OsString, (Fact, Vec<DirStamp>)>,
    /// Whether each device keeps its directories' change times (`index::trusted_filesystem`).
    devices: HashMap<u64, bool>,
    /// How many times all of it was forgotten.
    generation: u64,
}

/// Answers kept at most; beyond it the memory starts again (a plan asks about ≈ 50 paths).
const MAX_KEPT: usize = 4096;

static MEMORY: OnceLock<Arc<Memory>> = OnceLock::new();

/// From now on, this process's plans keep what they saw for the next ones (a long-lived
/// server). Without a mount table to watch, nothing is kept.
pub fn keep_in_memory() {
    if let Some(memory) = Memory::new() {
        let _ = MEMORY.set(Arc::new(memory));
    }
}

impl Memory {
    fn new() -> Option<Memory> {
        let mounts = File::open("/proc/self/mountinfo")
            .map_err(|e| tracing::debug!("plans keep nothing they saw: /proc/self/mountinfo: {e}"))
            .ok()?;
        Some(Memory::watching(mounts))
    }

    /// A memory kept while the mount table behind `mounts` (an open `mountinfo`) is unchanged.
    fn watching(mounts: File) -> Memory {
        let kept = Kept { mounts, facts: HashMap::new(), devices: HashMap::new(), generation: 0 };
        Memory { kept: Mutex::new(kept) }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Kept> {
        self.kept.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The generation a plan beginning now works in, everything forgotten first when the mount
    /// table changed since the last plan asked; `None` when that cannot be told (nothing is
    /// then given, and nothing found by a plan that began before is kept).
    fn generation(&self) -> Option<u64> {
        let mut kept = self.lock();
        let changed = super::sys::mount_table_changed(kept.mounts.as_fd());
        if !matches!(changed, Ok(false)) {
            kept.facts.clear();
            kept.devices.clear();
            kept.generation += 1;
        }
        match changed {
            Ok(_) => Some(kept.generation),
            Err(e) => {
                tracing::debug!("the mount table cannot be watched: {e}");
                None
            }
        }
    }

    fn recall(&self, path: &Path, above: &[DirStamp]) -> Option<Fact> {
        self.lock().facts.get(path.as_os_str()).filter(|(_, then)| then == above).map(|(fact, _)| *fact)
    }

    /// Keeps what a plan of `generation` found (not when the memory was emptied since: that
    /// plan may have asked before a mount came or went).
    fn keep(&self, path: &Path, fact: Fact, above: Vec<DirStamp>, generation: u64) {
        let mut kept = self.lock();
        if kept.generation != generation {
            return;
        }
        if kept.facts.len() >= MAX_KEPT {
            kept.facts.clear();
        }
        kept.facts.insert(path.as_os_str().to_owned(), (fact, above));
    }

    fn trusted_device(&self, dir: &Path, dev: u64) -> bool {
        super::index::trusted_device(&mut self.lock().devices, dir, dev)
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

    const TICK: std::time::Duration = super::super::masks::CTIME_TICK;

    /// Runs `test` on a thread in a mount namespace of its own with a private tmpfs on `/tmp`
    /// (no other test changes it, so its change time stays trusted), given a memory watching
    /// that namespace's mount table and a tree `a/b/f` there whose change times are trusted.
    /// The memory vouches for nothing when `/` is not on a trusted filesystem: then the test
    /// only checks that no answer is stale.
    fn in_private_tmp(test: impl FnOnce(&Path, &Arc<Memory>, bool) + Send + 'static) {
        std::thread::spawn(move || {
            use nix::mount::{mount, MsFlags};
            nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS).expect("unshare(CLONE_NEWNS)");
            mount(None::<&str>, "/", None::<&str>, MsFlags::MS_REC | MsFlags::MS_PRIVATE, None::<&str>)
                .expect("make / private");
            mount(Some("tmpfs"), "/tmp", Some("tmpfs"), MsFlags::empty(), None::<&str>)
                .expect("tmpfs on /tmp");
            let memory = Arc::new(Memory::watching(File::open("/proc/thread-self/mountinfo").unwrap()));
            let dir = tempfile::tempdir_in("/tmp").unwrap();
            std::fs::create_dir_all(dir.path().join("a/b")).unwrap();
            std::fs::write(dir.path().join("a/b/f"), "x").unwrap();
            std::thread::sleep(TICK + std::time::Duration::from_millis(5));
            let root_trusted = rustix::fs::stat("/").is_ok_and(|st| {
                super::super::index::trusted_device(&mut HashMap::new(), Path::new("/"), st.st_dev)
            });
            if !root_trusted {
                eprintln!("`/` is not on a filesystem whose change times are trusted: nothing is kept");
            }
            test(dir.path(), &memory, root_trusted);
        })
        .join()
        .unwrap();
    }

    /// A plan of a process keeping `memory`, as `Seen::for_plan` makes it.
    fn plan(memory: &Arc<Memory>) -> Seen {
        Seen::remembering(memory.clone()).expect("the mount table is watched")
    }

    #[test]
    fn a_kept_answer_is_given_again_only_while_the_directories_above_are_unchanged() {
        in_private_tmp(|dir, memory, kept| {
            let (f, g) = (dir.join("a/b/f"), dir.join("a/b/g"));
            let first = plan(memory);
            assert!(first.exists(&f) && !first.exists(&g));
            assert_eq!(first.recalled.get(), 0);
            let was = first.identities()[&f];

            // Nothing changed: both answers come from the memory, and they are the filesystem's.
            let second = plan(memory);
            assert!(second.exists(&f) && !second.exists(&g));
            assert_eq!(second.recalled.get(), if kept { 2 } else { 0 });
            assert_eq!(second.identities()[&f], was);

            // Created, and replaced by a rename: the next plan sees both.
            std::fs::write(&g, "y").unwrap();
            std::fs::write(dir.join("a/b/h"), "z").unwrap();
            std::fs::rename(dir.join("a/b/h"), &f).unwrap();
            // A tick later, `a/b`'s change time is trusted again, and is not the kept one.
            std::thread::sleep(TICK + std::time::Duration::from_millis(5));
            let third = plan(memory);
            assert!(third.exists(&g));
            assert!(third.exists(&f));
            assert_eq!(third.recalled.get(), 0);
            if was != Identity::Unknown {
                assert_ne!(third.identities()[&f], was, "the renamed-over entry");
            }
        });
    }

    #[test]
    fn a_directory_swapped_two_levels_up_is_seen() {
        in_private_tmp(|dir, memory, kept| {
            let (b, f) = (dir.join("a/b"), dir.join("a/b/f"));
            let first = plan(memory);
            assert!(!first.is_dir(&f));
            let was = first.identities()[&f];
            assert!(!plan(memory).is_dir(&f));

            // `a/b` swapped for another directory that holds a directory `f`: the old `a/b` is
            // unchanged; only `a` moved.
            std::fs::create_dir_all(dir.join("a/c/f")).unwrap();
            std::fs::rename(&b, dir.join("a/old")).unwrap();
            std::fs::rename(dir.join("a/c"), &b).unwrap();
            let second = plan(memory);
            assert!(second.is_dir(&f), "a directory now");
            assert_eq!(second.recalled.get(), 0);
            if was != Identity::Unknown {
                assert_ne!(second.identities()[&f], was);
            }
            // Settled again, the new answer is kept.
            std::thread::sleep(TICK + std::time::Duration::from_millis(5));
            assert!(plan(memory).is_dir(&f));
            let third = plan(memory);
            assert!(third.is_dir(&f));
            assert_eq!(third.recalled.get(), usize::from(kept));
        });
    }

    #[test]
    fn a_directory_changed_within_a_clock_tick_vouches_for_nothing() {
        in_private_tmp(|dir, memory, _| {
            let (d, f) = (dir.join("fresh"), dir.join("fresh/f"));
            std::fs::create_dir(&d).unwrap();
            let first = plan(memory);
            assert!(!first.exists(&f));
            // Within the tick `fresh` changed in, a file made just after the first plan's `statx`
            // might not move its change time (a coarse clock): the answer is not kept.
            let second = plan(memory);
            assert!(!second.exists(&f));
            assert_eq!(second.recalled.get(), 0);
            std::fs::write(&f, "x").unwrap();
            assert!(plan(memory).exists(&f));
        });
    }

    #[test]
    fn a_mount_over_a_kept_path_is_seen_though_no_directory_changed() {
        in_private_tmp(|dir, memory, kept| {
            use nix::mount::{mount, MsFlags};
            let (f, other) = (dir.join("a/b/f"), dir.join("other"));
            std::fs::write(&other, "y").unwrap();
            std::thread::sleep(TICK + std::time::Duration::from_millis(5));
            let first = plan(memory);
            assert!(first.exists(&f));
            let was = first.identities()[&f];
            let again = plan(memory);
            assert!(again.exists(&f));
            assert_eq!(again.recalled.get(), usize::from(kept));
            assert_eq!(again.identities()[&f], was);

            // A plan that began before the mount keeps nothing once a later plan saw the mount
            // table change: it may have asked before the mount.
            let began_before = plan(memory);
            mount(Some(&other), &f, None::<&str>, MsFlags::MS_BIND, None::<&str>).expect("bind over f");
            drop(plan(memory));
            assert!(began_before.exists(&f));
            assert!(!memory.lock().facts.contains_key(f.as_os_str()), "kept by a plan of before the mount");

            let after = plan(memory);
            assert!(after.exists(&f));
            assert_eq!(after.recalled.get(), 0, "the mount table changed");
            if was != Identity::Unknown {
                let now = after.identities()[&f];
                assert_ne!(now, was, "the file mounted over it");
                assert_eq!(now, Identity::now(&other));
            }
        });
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
