//! The walk index: what the last walk of a root found in each directory, kept between calls so
//! that the next walk reads only the directories that changed.
//!
//! Why it exists: the deny walk reads every directory entry of every root before each call
//! (≈ 1 µs per file: 85 ms at 100k files, before the program starts). Most calls change nothing,
//! and a directory's listing is fully described by its change time: adding, removing or renaming
//! an entry moves a directory's ctime, and no program can set a ctime back. So the walk
//! ([`super::masks`]) records, for each directory whose ctime it trusts, the entries that matter
//! to it ([`Listed`]: subdirectories and the entries a rule matched, decided by name and type
//! alone), and the next walk replays those — stat'ing every protected entry again, re-reading
//! every repository's config — instead of reading and matching the directory. Nothing the cache
//! says can leave an entry unprotected: a directory is replayed only when its ctime is the
//! recorded one, the recorded ctime was old enough when it was read that a later change must
//! move it (timestamps are coarse: a change in the same clock tick keeps the ctime), and it lies
//! on a filesystem whose ctimes are known to be kept locally ([`trusted_filesystem`]).
//!
//! Order: [`Store::open`] (where the index of this walk lives: `$HULLWARD_HOME/index/`, one file
//! per fingerprint of the roots and rules) → [`Store::load`] → the walk, which returns the new
//! [`Index`] → [`Store::save`] when it differs. A missing, foreign or unreadable index file is a
//! full walk, never an error; the directory is 0700 and hidden from every program like the rest
//! of hullward's state.
//!
//! A long-lived process (`serve`, `mcp`) calls [`keep_in_memory`] once: from then on the indexes
//! it loaded or wrote are kept in memory too, so a call reads no index file, and the file is
//! written on a thread of its own, after the call has moved on. The memory copy is exactly what
//! the file would say (the same [`Index`], for the same fingerprint), and replaying any index —
//! older than the file or not — is as safe as replaying the file: every listing is trusted only
//! while its directory's ctime is the recorded one. A file write lost when the process dies
//! costs the next process one full walk, nothing else. The memory copy also keeps the change
//! tracker's generation the walk that validated it started at ([`super::changes`]): the next walk
//! asks the tracker what changed since then, and replays the rest without a `stat`.

use std::collections::{HashMap, HashSet};
use std::ffi::OsString;
use std::fs::{DirBuilder, OpenOptions};
use std::hash::{Hash, Hasher};
use std::io::{self, Write as _};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::masks::{dir_key, key_within, Entry, Listed, MaskKind, Replay};

/// Format of the file; a file of another version is ignored.
const MAGIC: &[u8; 8] = b"HWIDX\x00\x00\x01";

/// Index files kept; the least recently written beyond this are removed.
const MAX_FILES: usize = 64;

/// The filesystems whose directory ctimes are kept by the local kernel on every change (the
/// `statfs` magic numbers): ext2/3/4, XFS, Btrfs, tmpfs, F2FS, ZFS. Network, FUSE and stacked
/// filesystems (NFS, 9p, virtiofs, overlayfs) are walked every time.
pub fn trusted_filesystem(magic: i64) -> bool {
    const EXT4: i64 = 0xEF53;
    const XFS: i64 = 0x5846_5342;
    const BTRFS: i64 = 0x9123_683E;
    const TMPFS: i64 = 0x0102_1994;
    const F2FS: i64 = 0xF2F5_2010;
    const ZFS: i64 = 0x2FC1_2FC1;
    matches!(magic, EXT4 | XFS | BTRFS | TMPFS | F2FS | ZFS)
}

/// Whether the filesystem of `dir` (on device `dev`) is [trusted](trusted_filesystem), asking
/// `statfs` once per device `known` has no answer for.
pub fn trusted_device(known: &mut HashMap<u64, bool>, dir: &Path, dev: u64) -> bool {
    // `f_type` is an `i64` here and an `i32` on 32-bit targets.
    #[allow(clippy::unnecessary_cast)]
    let magic = |s: rustix::fs::StatFs| s.f_type as i64;
    *known.entry(dev).or_insert_with(|| rustix::fs::statfs(dir).is_ok_and(|s| trusted_filesystem(magic(s))))
}

/// What one walk found in one directory it trusts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listing {
    /// The directory's ctime when it was read.
    pub ctime: i128,
    /// Entries it held (they count against the walk's entry bound when replayed).
    pub entries: usize,
    /// Its subdirectories and the entries a rule matched.
    pub found: Vec<Listed>,
}

/// The listings of one walk, by directory — keyed by [`super::masks::dir_key`], the path's bytes:
/// hashing a `Path` goes component by component (a warm walk of 20k directories spent more on
/// that than on anything but the stats). Keys and listings are shared, so that the index after a
/// walk that read a few directories ([`Index::patched`]) shares the rest with the one before
/// instead of copying every name of every directory (2 ms of a served `git status` in a
/// 5,000-directory repository, on every call: git's `index.lock` changes `.git` each time).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Index {
    dirs: HashMap<Arc<[u8]>, Arc<Listing>>,
}

impl Index {
    /// The index a walk made: the listings it `read` anew, and those of the directories it
    /// `replayed` unread from `old`, shared with it.
    pub fn walked(read: Vec<(PathBuf, Listing)>, replayed: &[PathBuf], old: Option<&Index>) -> Index {
        let shared = old.into_iter().flat_map(|old| {
            replayed
                .iter()
                .filter_map(|dir| old.dirs.get_key_value(dir_key(dir)))
                .map(|(k, l)| (k.clone(), l.clone()))
        });
        let read = read.into_iter().map(|(d, l)| (Arc::from(dir_key(&d)), Arc::new(l)));
        Index { dirs: read.chain(shared).collect() }
    }

    /// The listing recorded for `dir`.
    pub fn get(&self, dir: &Path) -> Option<&Listing> {
        self.dirs.get(dir_key(dir)).map(|l| &**l)
    }

    pub fn len(&self) -> usize {
        self.dirs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty()
    }

    /// How many entries the listings of the directories in or below `dirs` (keys) hold.
    pub fn entries_within(&self, dirs: &[Vec<u8>]) -> usize {
        if dirs.is_empty() {
            return 0;
        }
        let within = |key: &[u8]| dirs.iter().any(|d| key_within(key, d));
        self.dirs.iter().filter(|(key, _)| within(key)).map(|(_, l)| l.entries).sum()
    }

    /// This index after a walk of the directories in or below `dirs` (keys) alone: their
    /// listings are the ones that walk `read` anew or `replayed` from this index; the rest are
    /// this index's.
    pub fn patched(&self, dirs: &[Vec<u8>], read: Vec<(PathBuf, Listing)>, replayed: &[PathBuf]) -> Index {
        let replayed: HashSet<&[u8]> = replayed.iter().map(|d| dir_key(d)).collect();
        let mut next = self.dirs.clone();
        next.retain(|key, _| replayed.contains(&key[..]) || !dirs.iter().any(|d| key_within(key, d)));
        next.extend(read.into_iter().map(|(d, listing)| (Arc::from(dir_key(&d)), Arc::new(listing))));
        Index { dirs: next }
    }
}

/// Whether this process keeps its indexes in memory (see [`keep_in_memory`]).
static IN_MEMORY: AtomicBool = AtomicBool::new(false);

/// The indexes this process loaded or wrote, by file.
type Memory = Mutex<HashMap<PathBuf, Kept>>;

/// One index kept in memory.
#[derive(Clone)]
struct Kept {
    /// The walk it is for.
    fingerprint: Vec<u8>,
    index: Arc<Index>,
    /// The recorded state, as the walk that validated it last left it.
    tracked: Tracked,
}

/// An index as a walk validated it: the change tracker's generation that walk started at, and
/// what it met (to be met again without a visit while the tracker says nothing changed).
#[derive(Clone, Default)]
pub struct Tracked {
    pub generation: Option<u64>,
    pub replay: Option<Arc<Replay>>,
}

fn memory() -> &'static Memory {
    static MEMORY: OnceLock<Memory> = OnceLock::new();
    MEMORY.get_or_init(Memory::default)
}

/// From now on, this process keeps the indexes it loads and writes in memory, and writes the
/// files in the background (a long-lived server: see the module documentation).
pub fn keep_in_memory() {
    IN_MEMORY.store(true, Ordering::Relaxed);
}

/// Where the index of one walk (one set of roots and rules) is kept.
#[derive(Debug)]
pub struct Store {
    dir: PathBuf,
    file: PathBuf,
    fingerprint: Vec<u8>,
    in_memory: bool,
}

impl Store {
    /// The store under `state_dir` for the walk `fingerprint` describes.
    pub fn open(state_dir: &Path, fingerprint: Vec<u8>) -> Store {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        fingerprint.hash(&mut h);
        let dir = state_dir.join("index");
        let file = dir.join(format!("{:016x}", h.finish()));
        Store { dir, file, fingerprint, in_memory: IN_MEMORY.load(Ordering::Relaxed) }
    }

    /// The recorded index, when there is one for exactly this fingerprint (in memory, or in a
    /// file written by this user and writable by nobody else).
    pub fn load(&self) -> Option<Arc<Index>> {
        self.load_tracked().map(|(index, _)| index)
    }

    /// Like [`Store::load`], with what the walk that validated it left (only ever for one kept
    /// in memory: a file says nothing of this process's tracker).
    pub fn load_tracked(&self) -> Option<(Arc<Index>, Tracked)> {
        if !self.in_memory {
            return self.load_file().map(|i| (Arc::new(i), Tracked::default()));
        }
        let kept = memory().lock().ok()?.get(&self.file).cloned();
        if let Some(kept) = kept.filter(|k| k.fingerprint == self.fingerprint) {
            return Some((kept.index, kept.tracked));
        }
        let index = Arc::new(self.load_file()?);
        self.remember(&index, Tracked::default());
        Some((index, Tracked::default()))
    }

    fn remember(&self, index: &Arc<Index>, tracked: Tracked) {
        if let Ok(mut kept) = memory().lock() {
            if kept.len() >= MAX_FILES && !kept.contains_key(&self.file) {
                kept.clear();
            }
            let entry = Kept { fingerprint: self.fingerprint.clone(), index: index.clone(), tracked };
            kept.insert(self.file.clone(), entry);
        }
    }

    /// A walk replayed every listing of `index` (the one [`Store::load_tracked`] gave) and
    /// changed nothing: the index kept in memory is vouched for as that walk left it — unless
    /// another has been kept since.
    pub fn vouch(&self, index: &Arc<Index>, tracked: Tracked) {
        if !self.in_memory {
            return;
        }
        if let Ok(mut kept) = memory().lock() {
            if let Some(entry) = kept.get_mut(&self.file).filter(|e| Arc::ptr_eq(&e.index, index)) {
                entry.tracked = tracked;
            }
        }
    }

    fn load_file(&self) -> Option<Index> {
        let bytes = std::fs::read(&self.file).ok()?;
        let meta = std::fs::metadata(&self.file).ok()?;
        if meta.uid() != rustix::process::geteuid().as_raw() || meta.mode() & 0o022 != 0 {
            return None;
        }
        let mut r = Reader { bytes: &bytes };
        if r.take(MAGIC.len())? != MAGIC || r.bytes_field()? != self.fingerprint.as_slice() {
            return None;
        }
        decode(&mut r)
    }

    /// Records `index`: written to the file (a temporary file renamed over the old one, then the
    /// oldest files beyond [`MAX_FILES`] removed) — in memory at once and the file on a thread
    /// of its own when this process keeps its indexes in memory.
    pub fn save(self, index: Index) -> io::Result<()> {
        self.save_tracked(index, Tracked::default())
    }

    /// Like [`Store::save`], the index as the walk that validated it left it (kept in memory).
    pub fn save_tracked(self, index: Index, tracked: Tracked) -> io::Result<()> {
        if !self.in_memory {
            return self.write(&index);
        }
        let index = Arc::new(index);
        self.remember(&index, tracked);
        let spawned = std::thread::Builder::new().name("hullward-index".into()).spawn(move || {
            if let Err(e) = self.write(&index) {
                tracing::debug!("walk index not saved: {e}");
            }
        });
        spawned.map(drop)
    }

    fn write(&self, index: &Index) -> io::Result<()> {
        DirBuilder::new().recursive(true).mode(0o700).create(&self.dir)?;
        let mut out = Vec::with_capacity(64 + index.len() * 96);
        out.extend_from_slice(MAGIC);
        put_bytes(&mut out, &self.fingerprint);
        encode(index, &mut out);
        let tmp = self.dir.join(format!(".{}.{}", std::process::id(), unique()));
        let written = (|| {
            let mut f = OpenOptions::new().write(true).create_new(true).mode(0o600).open(&tmp)?;
            f.write_all(&out)?;
            std::fs::rename(&tmp, &self.file)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written?;
        self.prune();
        Ok(())
    }

    /// Removes the oldest files beyond [`MAX_FILES`]. The listing alone says whether there are
    /// too many: the files are stat'ed for their age only then.
    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return };
        let entries: Vec<std::fs::DirEntry> = entries.flatten().collect();
        if entries.len() <= MAX_FILES {
            return;
        }
        let mut files: Vec<(std::time::SystemTime, PathBuf)> =
            entries.iter().filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path()))).collect();
        if files.len() <= MAX_FILES {
            return;
        }
        files.sort();
        for (_, path) in files.iter().take(files.len() - MAX_FILES) {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u64(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn encode(index: &Index, out: &mut Vec<u8>) {
    put_u64(out, index.dirs.len() as u64);
    for (dir, listing) in &index.dirs {
        put_bytes(out, dir);
        out.extend_from_slice(&listing.ctime.to_le_bytes());
        put_u64(out, listing.entries as u64);
        put_u64(out, listing.found.len() as u64);
        for listed in &listing.found {
            put_bytes(out, listed.name.as_bytes());
            out.push(u8::from(listed.git_dir) | u8::from(listed.read_match) << 1);
            encode_entry(&listed.entry, out);
        }
    }
}

fn encode_entry(entry: &Entry, out: &mut Vec<u8>) {
    let kind = |k: MaskKind| match k {
        MaskKind::File => 0,
        MaskKind::Dir => 1,
    };
    match entry {
        Entry::Descend => out.push(0),
        Entry::TooDeep => out.push(1),
        Entry::Hidden(k) => out.extend_from_slice(&[2, kind(*k)]),
        Entry::DeniedDir(p) => tagged(out, 3, p),
        Entry::ProtectedDir(p) => tagged(out, 4, p),
        Entry::DeniedLink(p) => tagged(out, 5, p),
        Entry::ProtectedLink(p) => tagged(out, 6, p),
        Entry::DeniedFile(p) => tagged(out, 7, p),
        Entry::ProtectedFile(p) => tagged(out, 8, p),
        Entry::Gitfile => out.push(9),
        Entry::WriteMatch => out.push(10),
        Entry::Plain => out.push(11),
    }
}

fn tagged(out: &mut Vec<u8>, tag: u8, pattern: &str) {
    out.push(tag);
    put_bytes(out, pattern.as_bytes());
}

struct Reader<'a> {
    bytes: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.bytes.len() < n {
            return None;
        }
        let (head, rest) = self.bytes.split_at(n);
        self.bytes = rest;
        Some(head)
    }

    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn len(&mut self) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        // No count can exceed what is left of the file: a corrupt length is not an allocation.
        (n <= self.bytes.len()).then_some(n)
    }

    fn bytes_field(&mut self) -> Option<&'a [u8]> {
        let n = self.len()?;
        self.take(n)
    }

    fn string(&mut self) -> Option<String> {
        String::from_utf8(self.bytes_field()?.to_vec()).ok()
    }
}

fn decode(r: &mut Reader<'_>) -> Option<Index> {
    let count = r.len()?;
    let mut dirs = HashMap::with_capacity(count);
    for _ in 0..count {
        let dir = r.bytes_field()?.to_vec();
        let ctime = i128::from_le_bytes(r.take(16)?.try_into().ok()?);
        let entries = usize::try_from(r.u64()?).ok()?;
        let found_count = r.len()?;
        let mut found = Vec::with_capacity(found_count);
        for _ in 0..found_count {
            let name = OsString::from_vec(r.bytes_field()?.to_vec());
            let flags = r.u8()?;
            if flags > 3 {
                return None;
            }
            let (git_dir, read_match) = (flags & 1 != 0, flags & 2 != 0);
            found.push(Listed { name, git_dir, read_match, entry: decode_entry(r)? });
        }
        dirs.insert(Arc::from(dir), Arc::new(Listing { ctime, entries, found }));
    }
    r.bytes.is_empty().then_some(Index { dirs })
}

fn decode_entry(r: &mut Reader<'_>) -> Option<Entry> {
    let kind = |b: u8| match b {
        0 => Some(MaskKind::File),
        1 => Some(MaskKind::Dir),
        _ => None,
    };
    Some(match r.u8()? {
        0 => Entry::Descend,
        1 => Entry::TooDeep,
        2 => Entry::Hidden(kind(r.u8()?)?),
        3 => Entry::DeniedDir(r.string()?),
        4 => Entry::ProtectedDir(r.string()?),
        5 => Entry::DeniedLink(r.string()?),
        6 => Entry::ProtectedLink(r.string()?),
        7 => Entry::DeniedFile(r.string()?),
        8 => Entry::ProtectedFile(r.string()?),
        9 => Entry::Gitfile,
        10 => Entry::WriteMatch,
        11 => Entry::Plain,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Index {
        let listed =
            |name: &str, git_dir, entry| Listed { name: name.into(), git_dir, read_match: git_dir, entry };
        let mut dirs = HashMap::new();
        dirs.insert(
            PathBuf::from("/w"),
            Listing {
                ctime: 1_700_000_000_123_456_789,
                entries: 7,
                found: vec![
                    listed(".git", true, Entry::Descend),
                    listed(".env", false, Entry::DeniedFile("**/.env".into())),
                    listed("deep", false, Entry::TooDeep),
                    listed("state", false, Entry::Hidden(MaskKind::Dir)),
                    listed("secrets", false, Entry::DeniedDir("secrets/**".into())),
                    listed("hooks", false, Entry::ProtectedDir(".git/hooks".into())),
                    listed("l", false, Entry::DeniedLink("**/.env".into())),
                    listed("m", false, Entry::ProtectedLink(".envrc".into())),
                    listed("cfg", false, Entry::ProtectedFile("the policy's own file".into())),
                    listed("sub", false, Entry::Gitfile),
                    listed("out.txt", false, Entry::WriteMatch),
                    listed("readable.md", false, Entry::Plain),
                ],
            },
        );
        dirs.insert(PathBuf::from("/w/empty"), Listing { ctime: -5, entries: 0, found: Vec::new() });
        Index::walked(dirs.into_iter().collect(), &[], None)
    }

    #[test]
    fn an_index_reads_back_as_written_and_only_for_its_fingerprint() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(home.path(), b"roots and rules".to_vec());
        assert!(store.load().is_none());
        store.write(&sample()).unwrap();
        assert_eq!(store.load().as_deref(), Some(&sample()));
        let other = Store::open(home.path(), b"other rules".to_vec());
        assert!(other.load().is_none());
        let meta = std::fs::metadata(home.path().join("index")).unwrap();
        assert_eq!(meta.mode() & 0o777, 0o700);
    }

    #[test]
    fn a_damaged_or_foreign_index_is_ignored() {
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(home.path(), b"f".to_vec());
        store.write(&sample()).unwrap();
        let bytes = std::fs::read(&store.file).unwrap();
        for cut in [0, 8, 20, bytes.len() / 2, bytes.len() - 1] {
            std::fs::write(&store.file, &bytes[..cut]).unwrap();
            assert!(store.load().is_none(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        std::fs::write(&store.file, &longer).unwrap();
        assert!(store.load().is_none());
        std::fs::write(&store.file, &bytes).unwrap();
        assert!(store.load().is_some());
        std::fs::set_permissions(&store.file, std::os::unix::fs::PermissionsExt::from_mode(0o666)).unwrap();
        assert!(store.load().is_none(), "an index others may write is not trusted");
    }

    #[test]
    fn a_process_that_keeps_its_indexes_in_memory_reads_them_back_without_the_file() {
        let home = tempfile::tempdir().unwrap();
        let open =
            |fingerprint: &[u8]| Store { in_memory: true, ..Store::open(home.path(), fingerprint.to_vec()) };
        assert!(open(b"f").load().is_none());
        open(b"f").save(sample()).unwrap();
        assert_eq!(open(b"f").load().as_deref(), Some(&sample()));
        let file = open(b"f").file;
        for _ in 0..500 {
            if std::fs::metadata(&file).is_ok_and(|m| m.len() > 0) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let on_disk = Store::open(home.path(), b"f".to_vec());
        assert_eq!(on_disk.load().as_deref(), Some(&sample()), "the file is written too");
        std::fs::write(&file, b"damaged").unwrap();
        assert_eq!(open(b"f").load().as_deref(), Some(&sample()), "memory is what this process wrote");
        assert!(open(b"other").load().is_none(), "only for the same fingerprint");
    }

    #[test]
    fn old_index_files_are_pruned() {
        let home = tempfile::tempdir().unwrap();
        for i in 0..MAX_FILES + 5 {
            Store::open(home.path(), format!("f{i}").into_bytes()).write(&Index::default()).unwrap();
        }
        assert_eq!(std::fs::read_dir(home.path().join("index")).unwrap().count(), MAX_FILES);
    }
}
