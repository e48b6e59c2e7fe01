//! The change tracker: the kernel tells the deny walk which directories may have changed, so that
//! a walk costs what changed instead of one `stat` per directory.
//!
//! Why: every call walks each root before the program runs (the masks) and after it exits (the
//! post-call check). The walk index ([`super::index`]) already replays a directory whose ctime did
//! not move, but even the `stat`s add up: ≈ 14 ms per served call on a 100k-file root, ≥ 58 ms at
//! a million files. A fanotify group with a `FAN_MARK_FILESYSTEM` mark on each filesystem under
//! the roots reports every name created, removed or renamed there ([`sys::fanotify_name_group`]),
//! in any mount namespace, with the directory's file handle. Draining the queue yields the
//! directories that may have changed; every other directory the last walk validated still has
//! the listing it had, and the walk ([`super::masks`]) replays it without even its `stat`.
//!
//! What a walk depends on besides names is read again on every replay (the stamp of each
//! protected entry, a repository's `core.hooksPath`, a link's target), so name events suffice:
//! an in-place rewrite of a protected file is seen by its `stat`, not by an event.
//!
//! Order: [`enable`] once per process (the CLI's `run`, for trees of at least [`CLI_MIN_DIRS`]
//! directories; a server calls [`keep_drained`], which tracks every tree and drains the queue
//! every second between calls) → for each walk, [`begin_walk`] with the roots, the generation
//! the last walk of them was tagged with and how many directories it found: it
//! covers roots not yet covered ([`Tracker::cover`]: marks, mount descriptors), drains the queue
//! ([`Tracker::drain`] → [`parse`] → [`Tracker::absorb`]) and answers with this walk's
//! generation and the directories changed since the given one ([`Tracker::since`]) → the walk
//! → its snapshot (and, in a server, its index) tagged with that generation.
//!
//! Never stale: a generation is handed out only after the queue was drained, so a walk tagged `g`
//! saw every change whose event came in a drain up to `g`, and every later event is tagged above
//! `g`. Anything the tracker cannot vouch for answers [`Changed::Everything`] (the caller then
//! walks by ctime, as without it): no tracker (not root, kernel < 5.9, `CAP_SYS_ADMIN` missing),
//! a root that is not its own canonical path, a filesystem that refuses the mark or whose ctimes
//! [`super::index::trusted_filesystem`] does not trust, a change of this process's mount table,
//! `FAN_Q_OVERFLOW`, an event on a filesystem not covered, a handle that cannot be resolved, a
//! rename or removal of a root or one of its ancestors, any error. It is a performance layer,
//! never a promise: nothing refuses because of it.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use super::masks::dir_key;
use super::sys;

/// `FAN_Q_OVERFLOW`: events were lost.
const Q_OVERFLOW: u64 = 0x4000;

/// `struct fanotify_event_metadata`: its size and version.
const METADATA_LEN: usize = 24;
const METADATA_VERSION: u8 = 3;

/// `FAN_EVENT_INFO_TYPE_DFID_NAME`, `FAN_EVENT_INFO_TYPE_DFID`.
const INFO_DFID_NAME: u8 = 2;
const INFO_DFID: u8 = 3;

/// How much of the event queue one `read` takes.
const READ_SIZE: usize = 64 * 1024;

/// Changed directories remembered; past this the log starts over as "everything changed".
const MAX_LOGGED: usize = 65_536;

/// Why the tracker cannot vouch for something.
#[derive(Debug, thiserror::Error)]
pub enum ChangesError {
    #[error("cannot start watching for changes: {0}")]
    Init(std::io::Error),
    #[error("'{}' is not its own canonical path: its changes are reported under another", path.display())]
    NotCanonical { path: PathBuf },
    #[error("cannot read the mount table to watch '{}': {reason}", path.display())]
    Mounts { path: PathBuf, reason: String },
    #[error("cannot watch the filesystem of '{}': {reason}", path.display())]
    Mark { path: PathBuf, reason: String },
    #[error("the filesystem of '{}' does not keep changes locally: not tracked", path.display())]
    Untrusted { path: PathBuf },
    #[error("cannot read the change events: {0}")]
    Read(std::io::Error),
    #[error("malformed change event at byte {offset}")]
    Malformed { offset: usize },
}

/// One event of a drained batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// Events were lost (`FAN_Q_OVERFLOW`).
    Overflow,
    /// A name in a directory was created, removed or renamed.
    Name {
        fsid: [i32; 2],
        handle_type: i32,
        handle: Vec<u8>,
        /// The entry's name (empty when the kernel gave none).
        name: OsString,
    },
}

/// What may have changed since a walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    Everything,
    /// These directories (by [`dir_key`]); everything under one of them too.
    Dirs(HashSet<Vec<u8>>),
}

/// What [`begin_walk`] answers: the generation the walk about to start is tagged with (`None`:
/// the tracker does not cover its roots) and what changed since the one asked about.
#[derive(Debug, Clone)]
pub struct Tracked {
    pub generation: Option<u64>,
    pub changed: Changed,
}

impl Tracked {
    /// The changed directories, when the tracker knows them.
    pub fn dirs(&self) -> Option<&HashSet<Vec<u8>>> {
        match &self.changed {
            Changed::Dirs(d) => Some(d),
            Changed::Everything => None,
        }
    }

    fn untracked() -> Tracked {
        Tracked { generation: None, changed: Changed::Everything }
    }
}

/// Parses a buffer read from the fanotify group into events, from bytes (no pointer casts).
pub fn parse(buf: &[u8]) -> Result<Vec<Event>, ChangesError> {
    let mut events = Vec::new();
    let mut at = 0;
    while at < buf.len() {
        let malformed = ChangesError::Malformed { offset: at };
        let head = buf.get(at..at + METADATA_LEN).ok_or(ChangesError::Malformed { offset: at })?;
        let event_len = u32::from_ne_bytes(head[0..4].try_into().unwrap_or_default()) as usize;
        let metadata_len = usize::from(u16::from_ne_bytes([head[6], head[7]]));
        let mask = u64::from_ne_bytes(head[8..16].try_into().unwrap_or_default());
        if head[4] != METADATA_VERSION || metadata_len < METADATA_LEN || event_len < metadata_len {
            return Err(malformed);
        }
        let event = buf.get(at..at + event_len).ok_or(malformed)?;
        if mask & Q_OVERFLOW != 0 {
            events.push(Event::Overflow);
        } else {
            events.push(name_event(&event[metadata_len..], at + metadata_len)?);
        }
        at += event_len;
    }
    Ok(events)
}

/// The directory record of one event's info records (`DFID_NAME` or `DFID`).
fn name_event(mut info: &[u8], mut offset: usize) -> Result<Event, ChangesError> {
    while info.len() >= 4 {
        let kind = info[0];
        let len = usize::from(u16::from_ne_bytes([info[2], info[3]]));
        let record = info.get(..len).filter(|_| len >= 4).ok_or(ChangesError::Malformed { offset })?;
        if kind == INFO_DFID_NAME || kind == INFO_DFID {
            return dir_record(&record[4..], kind == INFO_DFID_NAME)
                .ok_or(ChangesError::Malformed { offset });
        }
        info = &info[len..];
        offset += len;
    }
    Err(ChangesError::Malformed { offset })
}

/// `fsid`, `struct file_handle` and, for `DFID_NAME`, the NUL-terminated name.
fn dir_record(body: &[u8], named: bool) -> Option<Event> {
    let word = |i: usize| Some(i32::from_ne_bytes(body.get(i..i + 4)?.try_into().ok()?));
    let fsid = [word(0)?, word(4)?];
    let bytes = usize::try_from(word(8)?).ok()?;
    let handle_type = word(12)?;
    let handle = body.get(16..16 + bytes)?.to_vec();
    let rest = &body[16 + bytes..];
    let name = if named { rest.split(|b| *b == 0).next().unwrap_or_default().to_vec() } else { Vec::new() };
    Some(Event::Name { fsid, handle_type, handle, name: OsString::from_vec(name) })
}

/// A directory's handle as an event names it: filesystem id, handle type, handle bytes.
type HandleKey<'a> = (&'a [i32; 2], i32, &'a [u8]);

/// A mount the tracker resolves handles through: the one a root lies on, or one inside a root.
struct Mount {
    fd: OwnedFd,
    fsid: [i32; 2],
    /// The mount's id (`STATX_MNT_ID`): a mount already held is not held twice.
    id: Option<u64>,
}

/// The fanotify group and what it has told so far.
pub struct Tracker {
    group: OwnedFd,
    /// `/proc/self/mountinfo`, polled for changes of the mount table.
    mountinfo: std::fs::File,
    mounts: Vec<Mount>,
    /// Roots whose filesystems are marked and whose mounts are known.
    covered: Vec<PathBuf>,
    /// Roots that could not be covered (until the mount table changes).
    refused: Vec<PathBuf>,
    generation: u64,
    /// The last generation at which anything may have changed.
    everything: u64,
    /// Each changed directory (by [`dir_key`]) and the last generation it changed at.
    changed: HashMap<Vec<u8>, u64>,
    /// The buffer events are read into, kept: a served call drains the queue three times.
    buf: Vec<u8>,
}

impl Tracker {
    /// A new group covering nothing yet.
    pub fn new() -> Result<Tracker, ChangesError> {
        let group = sys::fanotify_name_group().map_err(ChangesError::Init)?;
        let mountinfo = std::fs::File::open("/proc/self/mountinfo").map_err(ChangesError::Init)?;
        sys::mount_table_changed(mountinfo.as_fd()).map_err(ChangesError::Init)?;
        Ok(Tracker {
            group,
            mountinfo,
            mounts: Vec::new(),
            covered: Vec::new(),
            refused: Vec::new(),
            generation: 0,
            everything: 0,
            changed: HashMap::new(),
            buf: vec![0; READ_SIZE],
        })
    }

    /// Marks every filesystem `root` spans (the one it lies on and each mounted inside it) and
    /// keeps a descriptor of each such mount to resolve handles through.
    pub fn cover(&mut self, root: &Path) -> Result<(), ChangesError> {
        let canonical =
            std::fs::canonicalize(root).map_err(|_| ChangesError::NotCanonical { path: root.into() })?;
        if dir_key(&canonical) != dir_key(root) {
            return Err(ChangesError::NotCanonical { path: root.into() });
        }
        // Unreadable (or not UTF-8): a mount inside the root could go unmarked, so no tracking.
        let text = std::fs::read_to_string("/proc/self/mountinfo")
            .map_err(|e| ChangesError::Mounts { path: root.into(), reason: e.to_string() })?;
        let inside = super::kernel::parse_mountinfo(&text)
            .into_iter()
            .map(|m| m.mount_point)
            .filter(|m| m.starts_with(root) && dir_key(m) != dir_key(root));
        for path in std::iter::once(root.to_path_buf()).chain(inside) {
            let mount = self.mount(&path)?;
            if mount.id.is_none() || !self.mounts.iter().any(|m| m.id == mount.id) {
                self.mounts.push(mount);
            }
        }
        self.covered.push(root.to_path_buf());
        Ok(())
    }

    fn mount(&self, path: &Path) -> Result<Mount, ChangesError> {
        let failed = |e: std::io::Error| ChangesError::Mark { path: path.into(), reason: e.to_string() };
        // Opened for reading, not `O_PATH`: `open_by_handle_at` refuses an `O_PATH` mount fd.
        let flags = rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::NONBLOCK | rustix::fs::OFlags::CLOEXEC;
        let fd = rustix::fs::open(path, flags, rustix::fs::Mode::empty()).map_err(|e| failed(e.into()))?;
        let (fsid, magic) = sys::filesystem_id(fd.as_fd()).map_err(failed)?;
        if !super::index::trusted_filesystem(magic) {
            return Err(ChangesError::Untrusted { path: path.into() });
        }
        sys::fanotify_mark_filesystem(self.group.as_fd(), path).map_err(failed)?;
        let id = rustix::fs::statx(&fd, "", rustix::fs::AtFlags::EMPTY_PATH, rustix::fs::StatxFlags::MNT_ID)
            .ok()
            .filter(|st| st.stx_mask & rustix::fs::StatxFlags::MNT_ID.bits() != 0)
            .map(|st| st.stx_mnt_id);
        Ok(Mount { fd, fsid, id })
    }

    /// Reads every queued event and notes what changed; returns the new generation.
    pub fn drain(&mut self) -> u64 {
        self.generation += 1;
        if !matches!(sys::mount_table_changed(self.mountinfo.as_fd()), Ok(false)) {
            tracing::debug!("change tracker: the mount table changed; the roots are covered anew");
            self.forget_mounts();
        }
        let mut buf = std::mem::take(&mut self.buf);
        loop {
            match rustix::io::read(&self.group, &mut buf) {
                Ok(0) => break,
                Ok(n) => match parse(&buf[..n]) {
                    Ok(events) => self.absorb(&events),
                    Err(e) => self.lost(&e),
                },
                Err(rustix::io::Errno::AGAIN) => break,
                Err(rustix::io::Errno::INTR) => {}
                Err(e) => {
                    self.lost(&ChangesError::Read(e.into()));
                    break;
                }
            }
        }
        self.buf = buf;
        self.generation
    }

    /// Notes a drained batch under the current generation: each event's directory, resolved to
    /// a path, when it lies in a covered root; "everything" for an overflow, a handle on a
    /// filesystem not covered or one that cannot be resolved, and a change to a root's name or
    /// an ancestor's.
    pub fn absorb(&mut self, events: &[Event]) {
        let mut dirs: HashMap<HandleKey<'_>, Vec<&OsString>> = HashMap::new();
        for event in events {
            match event {
                Event::Overflow => return self.lost(&"the event queue overflowed"),
                Event::Name { fsid, handle_type, handle, name } => {
                    dirs.entry((fsid, *handle_type, handle)).or_default().push(name);
                }
            }
        }
        for ((fsid, handle_type, handle), names) in dirs {
            let Some(paths) = self.resolve(fsid, handle_type, handle) else { return };
            for path in paths {
                if self.renames_a_root(&path, &names) {
                    return self
                        .lost(&format!("an entry of '{}' on the way to a root changed", path.display()));
                }
                if self.covered.iter().any(|r| path.starts_with(r)) {
                    self.changed.insert(dir_key(&path).to_vec(), self.generation);
                }
            }
        }
        if self.changed.len() > MAX_LOGGED {
            self.lost(&"too many changed directories to remember");
        }
    }

    /// Every path of the directory a handle names, through each covered mount of its filesystem;
    /// `None` (and "everything") when it cannot be resolved. A handle whose directory is gone
    /// (`ESTALE`, or a `(deleted)` path) has none: its removal is an event of its parent.
    fn resolve(&mut self, fsid: &[i32; 2], handle_type: i32, handle: &[u8]) -> Option<Vec<PathBuf>> {
        let mut paths = Vec::new();
        let mut known = false;
        let mut failure = None;
        for mount in self.mounts.iter().filter(|m| m.fsid == *fsid) {
            known = true;
            match sys::open_by_handle(mount.fd.as_fd(), handle_type, handle) {
                Ok(fd) => match std::fs::read_link(format!(
                    "/proc/self/fd/{}",
                    std::os::fd::AsRawFd::as_raw_fd(&fd)
                )) {
                    Ok(p) if !p.as_os_str().as_bytes().ends_with(b" (deleted)") => paths.push(p),
                    Ok(_) => {}
                    Err(e) => failure = Some(e),
                },
                Err(e) if e.raw_os_error() == Some(libc::ESTALE) => {}
                Err(e) => failure = Some(e),
            }
        }
        match (known, failure) {
            (false, _) => self.lost(&format!("an event on a filesystem not covered ({fsid:?})")),
            (true, Some(e)) => self.lost(&format!("a changed directory cannot be resolved: {e}")),
            (true, None) => return Some(paths),
        }
        None
    }

    /// Whether a name changed in `dir` is a covered root, or lies on the way to one.
    fn renames_a_root(&self, dir: &Path, names: &[&OsString]) -> bool {
        self.covered.iter().any(|root| {
            root.strip_prefix(dir)
                .ok()
                .and_then(|rest| rest.components().next())
                .is_some_and(|first| names.iter().any(|n| n.is_empty() || n.as_os_str() == first.as_os_str()))
        })
    }

    /// From this generation on, nothing earlier is vouched for.
    fn lost(&mut self, why: &dyn std::fmt::Display) {
        tracing::debug!("change tracker: everything may have changed: {why}");
        self.everything = self.generation;
        self.changed.clear();
    }

    /// After a change of the mount table: a new group (the old one's marks go with it) that
    /// covers nothing yet.
    fn forget_mounts(&mut self) {
        self.lost(&"the mount table changed");
        match sys::fanotify_name_group() {
            Ok(group) => self.group = group,
            Err(e) => tracing::debug!("change tracker: no new group ({e}); the old one's marks stay"),
        }
        self.mounts.clear();
        self.covered.clear();
        self.refused.clear();
    }

    /// What may have changed since the walk tagged `generation`.
    pub fn since(&self, generation: Option<u64>) -> Changed {
        match generation {
            Some(g) if g >= self.everything && g <= self.generation => Changed::Dirs(
                self.changed.iter().filter(|(_, at)| **at > g).map(|(d, _)| d.clone()).collect(),
            ),
            _ => Changed::Everything,
        }
    }

    /// The start of a walk of `roots` whose last walk was tagged `since` (see [`begin_walk`]).
    pub fn begin(&mut self, roots: &[PathBuf], since: Option<u64>) -> Tracked {
        let generation = self.drain();
        let mut fresh = false;
        for root in roots {
            if self.refused.contains(root) {
                return Tracked::untracked();
            }
            if self.covered.contains(root) {
                continue;
            }
            if let Err(e) = self.cover(root) {
                tracing::debug!("change tracker: {e}; walked by ctime");
                self.refused.push(root.clone());
                return Tracked::untracked();
            }
            fresh = true;
        }
        let changed = if fresh { Changed::Everything } else { self.since(since) };
        match &changed {
            Changed::Dirs(d) => tracing::debug!(
                "change tracker: generation {generation}, {} changed since {since:?}",
                d.len()
            ),
            Changed::Everything => {
                tracing::debug!("change tracker: generation {generation}, everything since {since:?}")
            }
        }
        Tracked { generation: Some(generation), changed }
    }
}

/// The fewest directories the last walk of the roots must have found for [`begin_walk`] to
/// start tracking: `usize::MAX` until [`enable`] or [`keep_drained`] is called.
static MIN_DIRS: AtomicUsize = AtomicUsize::new(usize::MAX);

/// Below this many directories a CLI call walks by ctime alone. Its fanotify group is torn down
/// when hullward exits, on the path its caller waits for, and that teardown waits for an SRCU
/// grace period (0.1–6 ms measured, `fanotify_init` + one mark + `close`); the post-call check
/// it spares costs ≈ 1.4 µs per directory, so tracking pays only on big trees.
const CLI_MIN_DIRS: usize = 5_000;

/// The process's tracker: `None` before the first walk; `Some(None)` where none can be had.
static TRACKER: Mutex<Option<Option<Tracker>>> = Mutex::new(None);

/// From now on, walks in this process of roots with at least [`CLI_MIN_DIRS`] directories ask
/// the kernel what changed (a CLI call, whose post-call check follows its pre-call walk).
pub fn enable() {
    MIN_DIRS.fetch_min(CLI_MIN_DIRS, Ordering::Relaxed);
}

/// How often a long-lived process drains the queue between calls (see [`keep_drained`]).
const BACKGROUND_DRAIN: std::time::Duration = std::time::Duration::from_secs(1);

/// Wakes [`keep_drained`]'s thread before its next [`BACKGROUND_DRAIN`].
static DRAIN_SOON: std::sync::OnceLock<std::sync::mpsc::SyncSender<()>> = std::sync::OnceLock::new();

/// Like [`enable`], and a thread drains the queue every [`BACKGROUND_DRAIN`] (a server): the
/// group's queue is unbounded, and a filesystem busy between calls would otherwise grow it in
/// kernel memory until the next call.
pub fn keep_drained() {
    MIN_DIRS.store(0, Ordering::Relaxed);
    let (wake, woken) = std::sync::mpsc::sync_channel::<()>(1);
    let spawned = std::thread::Builder::new().name("hullward-changes".into()).spawn(move || loop {
        if let Err(std::sync::mpsc::RecvTimeoutError::Disconnected) = woken.recv_timeout(BACKGROUND_DRAIN) {
            return;
        }
        if let Ok(mut state) = TRACKER.lock() {
            if let Some(Some(tracker)) = state.as_mut() {
                tracker.drain();
            }
        }
    });
    match spawned {
        Ok(_) => {
            let _ = DRAIN_SOON.set(wake);
        }
        Err(e) => tracing::debug!("change tracker: no background drain ({e})"),
    }
}

/// Has [`keep_drained`]'s thread drain the queue now, off the caller's path: a process that has
/// just changed names on a tracked filesystem itself (a call's pending record) spares the next
/// walk the resolution of their directories. A drain is always sound, whenever it runs.
pub fn drain_soon() {
    if let Some(wake) = DRAIN_SOON.get() {
        let _ = wake.try_send(());
    }
}

/// Whether this process's tracker runs (made, and watching).
pub fn tracking() -> bool {
    TRACKER.lock().is_ok_and(|state| matches!(*state, Some(Some(_))))
}

/// At the start of a walk of `roots` whose last walk was tagged `since` and found `dirs`
/// directories: the generation to tag this walk with, and the directories that may have changed
/// since `since` (everything, when the tracker cannot tell). The tracker is made on the first
/// walk of enough directories (see [`enable`]); a walk of fewer, before that, is untracked.
pub fn begin_walk(roots: &[PathBuf], since: Option<u64>, dirs: usize) -> Tracked {
    if roots.is_empty() {
        return Tracked::untracked();
    }
    let Ok(mut state) = TRACKER.lock() else { return Tracked::untracked() };
    if state.is_none() && dirs < MIN_DIRS.load(Ordering::Relaxed) {
        return Tracked::untracked();
    }
    let tracker = state.get_or_insert_with(|| {
        Tracker::new().map_err(|e| tracing::debug!("change tracker unavailable: {e}; walked by ctime")).ok()
    });
    match tracker {
        Some(t) => t.begin(roots, since),
        None => Tracked::untracked(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(event_len: u32, mask: u64) -> Vec<u8> {
        let mut out = event_len.to_ne_bytes().to_vec();
        out.extend_from_slice(&[METADATA_VERSION, 0]);
        out.extend_from_slice(&(METADATA_LEN as u16).to_ne_bytes());
        out.extend_from_slice(&mask.to_ne_bytes());
        out.extend_from_slice(&(-1i32).to_ne_bytes());
        out.extend_from_slice(&0i32.to_ne_bytes());
        out
    }

    fn name_record(fsid: [i32; 2], handle: &[u8], name: &[u8]) -> Vec<u8> {
        let mut body = Vec::new();
        for w in fsid {
            body.extend_from_slice(&w.to_ne_bytes());
        }
        body.extend_from_slice(&(handle.len() as i32).to_ne_bytes());
        body.extend_from_slice(&1i32.to_ne_bytes());
        body.extend_from_slice(handle);
        body.extend_from_slice(name);
        body.push(0);
        let len = 4 + body.len();
        let mut out = vec![INFO_DFID_NAME, 0];
        out.extend_from_slice(&(len as u16).to_ne_bytes());
        out.extend(body);
        out
    }

    #[test]
    fn a_batch_parses_into_overflows_and_named_directories() {
        let record = name_record([7, 9], b"\x01\x02\x03\x04\x05", b".env");
        let mut buf = metadata((METADATA_LEN + record.len()) as u32, 0x100);
        buf.extend_from_slice(&record);
        buf.extend(metadata(METADATA_LEN as u32, Q_OVERFLOW));
        let events = parse(&buf).unwrap();
        assert_eq!(
            events,
            vec![
                Event::Name {
                    fsid: [7, 9],
                    handle_type: 1,
                    handle: vec![1, 2, 3, 4, 5],
                    name: ".env".into()
                },
                Event::Overflow
            ]
        );
        for cut in [1, METADATA_LEN - 1, METADATA_LEN + 3, buf.len() - 1] {
            assert!(parse(&buf[..cut]).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn mount_points_undo_the_octal_escapes() {
        let text = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n30 22 0:5 / /mnt/a\\040b rw - tmpfs t rw\n";
        let points: Vec<_> =
            super::super::kernel::parse_mountinfo(text).into_iter().map(|m| m.mount_point).collect();
        assert_eq!(points, vec![PathBuf::from("/"), PathBuf::from("/mnt/a b")]);
    }

    #[test]
    fn since_answers_everything_until_a_generation_is_vouched_for() {
        let Ok(mut t) = Tracker::new() else { return };
        let root = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(root.path()).unwrap();
        let first = t.begin(std::slice::from_ref(&root), None);
        assert_eq!(first.changed, Changed::Everything, "a root covered just now");
        let g = first.generation.unwrap();
        let quiet = t.begin(std::slice::from_ref(&root), Some(g));
        assert_eq!(quiet.changed, Changed::Dirs(HashSet::new()));
        std::fs::create_dir(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.env"), "x").unwrap();
        let after = t.begin(std::slice::from_ref(&root), quiet.generation);
        let Changed::Dirs(dirs) = after.changed else { panic!("no dirs") };
        assert!(dirs.contains(dir_key(&root)) && dirs.contains(dir_key(&root.join("sub"))), "{dirs:?}");
        assert_eq!(t.since(None), Changed::Everything);
        t.drain();
        t.absorb(&[Event::Overflow]);
        assert_eq!(t.since(after.generation), Changed::Everything, "an overflow vouches for nothing");
    }
}
