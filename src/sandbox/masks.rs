//! The one walk of the roots: expands the deny globs (and the write-protect globs) into what the
//! child's view must cover — mount masks, read-only binds, pinned ancestors — and finds, on the
//! way, what the other consumers need from the same tree: the files inside denied directories
//! (secret discovery), the files a `Write` glob matches (write grants), the repositories.
//!
//! Landlock only grants; it cannot deny `.env` inside a granted workspace, nor forbid writing
//! `.git/hooks` inside a writable one. So before each call the roots are walked once (symlinks
//! never followed; in parallel once the tree is large) and:
//! * every file or directory a deny rule covers becomes a [`Mask`] — an empty read-only mode-000
//!   file or directory mounted over it; a directory covered as a whole (`secrets/**`) is masked
//!   once (its files are listed for secret discovery, nothing in it is matched); a denied
//!   *symlink* has its target masked when that target lies inside a root or a writable directory
//!   (elsewhere it is not even in the child's view), and is itself bound read-only (no
//!   retargeting); an anchored literal pattern reached through a
//!   symlinked directory (`link/secret.txt`) masks the real path, pins the directories above it
//!   and binds the link read-only over itself — a loop on the way is noted for strict mode;
//! * every entry a write-protect rule covers (`.git/hooks`, `.git/config`, the policy's own
//!   files inside a root) is bound read-only over itself;
//! * hullward's own state (`$HULLWARD_HOME`, the audit log) inside a root is masked;
//! * the ancestors of anchored deny patterns are pinned (self-bind) so they cannot be renamed.
//!
//! The walk **degrades, it does not fail**: whatever a program planted in a root, the next call
//! still runs. A directory deeper than [`WalkLimits::max_depth`], the directories not yet read
//! when [`WalkLimits::max_entries`] is reached, a directory that cannot be read: each is masked
//! as a whole (fail closed — nothing unwalked is readable) and listed in [`Snapshot::bounded`].
//! More masks (or read-only binds) than [`WalkLimits::max_masks`] are collapsed into masks of
//! their parent directories, the fullest first. Only a root that cannot be read is an error.
//!
//! [`scan`] is a pure function of its [`ScanSpec`] and the tree. The walk after the call
//! ([`rescan`]) re-reads only directories whose ctime moved, stats every protected entry of the
//! earlier walk itself, and notes where those entries' inodes are now (a renamed parent), so that
//! [`Snapshot::changes_since`] reports created, changed and vanished entries and where a moved
//! original went. Where the kernel reports which directories changed ([`super::changes`]: root,
//! Linux 5.9+), a walk is given those ([`scan_tracked`], [`rescan_tracked`]): every other
//! directory the last walk validated — not reported, and not under a reported one — is replayed
//! without even its `stat`; everything else is walked by ctime as above.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::os::unix::fs::{DirEntryExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, SystemTime};

use super::changes;
use super::held::{self, Handle, Held};
use super::index::{self, Index, Listing, Store};
use super::seen::Seen;
use crate::policy::{GlobRules, Origin, Policy};

/// The rule that protects a gitfile `.git`.
const GITFILE: &str = "git metadata: a gitfile names where the repository is";

/// The rule that protects the directory a repository's `core.hooksPath` names.
const HOOKS_PATH: &str = "git metadata: the hooks directory core.hooksPath names";

/// The rule that protects the policy's own files inside a root.
const POLICY_FILE: &str = "the policy's own file";

/// The ctime recorded for a directory whose ctime is not trusted: it never matches, so the
/// directory is read again by the next walk.
const UNTRUSTED: i128 = i128::MIN;

/// How old a directory's ctime must be, when the walk starts, to be trusted: longer than the
/// coarsest clock tick a kernel stamps ctimes with (10 ms at HZ=100), twice over.
pub const CTIME_TICK: Duration = Duration::from_millis(20);

/// Change times (in nanoseconds since the epoch) before this are trusted by a walk or a plan
/// that began at `started` (see [`CTIME_TICK`]).
pub fn ctime_trusted_before(started: SystemTime) -> i128 {
    let since_epoch = started.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    i128::try_from(since_epoch.saturating_sub(CTIME_TICK).as_nanos()).unwrap_or(0)
}

/// Bounds of the walk.
#[derive(Debug, Clone, Copy)]
pub struct WalkLimits {
    pub max_depth: usize,
    pub max_entries: usize,
    pub max_masks: usize,
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits { max_depth: 128, max_entries: 2_000_000, max_masks: 20_000 }
    }
}

/// What a mask or a read-only bind covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MaskKind {
    File,
    Dir,
}

/// What one directory entry is to the walk, decided by its name and type alone (so that a
/// directory whose listing did not change can be replayed from the [`Index`] unread).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// A directory to descend into.
    Descend,
    /// A directory nested deeper than [`WalkLimits::max_depth`].
    TooDeep,
    /// hullward's own state.
    Hidden(MaskKind),
    /// A directory a deny rule covers (this rule).
    DeniedDir(String),
    /// A directory a write-protect rule covers.
    ProtectedDir(String),
    /// A symlink under a denied name: stamped, its target masked.
    DeniedLink(String),
    /// A symlink under a write-protected name: stamped.
    ProtectedLink(String),
    /// A file (or special file) a deny rule matches.
    DeniedFile(String),
    /// A file a write-protect rule matches, or one of the policy's own files.
    ProtectedFile(String),
    /// A `.git` that is not a directory (a gitfile or a symlink).
    Gitfile,
    /// A regular file the write lists grant.
    WriteMatch,
    /// An entry no rule but the `Read` list matches.
    Plain,
}

/// A directory entry that matters to the walk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Listed {
    pub name: OsString,
    /// A repository's `.git` directory (pinned, its hooks path protected).
    pub git_dir: bool,
    /// The `Read` list matches the entry itself (a directory as a whole, a file by name).
    pub read_match: bool,
    pub entry: Entry,
}

/// One protected path to mask, and the rule that produced it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mask {
    pub path: PathBuf,
    pub kind: MaskKind,
    pub pattern: String,
    /// Set when the denied entry was a symlink and this mask covers its target.
    pub via_symlink: Option<PathBuf>,
}

/// Identity and content stamp of a protected entry, for the after-call comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
}

impl Stamp {
    /// The entry's identity: the same inode, whatever its name or content now.
    pub fn inode(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }
}

/// A stamped protected entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamped {
    pub stamp: Stamp,
    pub pattern: String,
    /// Write-protected (readable), as opposed to denied.
    pub write_protected: bool,
    /// What the same `stat` said besides the stamp (`None` in a record read back from disk).
    pub aside: Option<Aside>,
}

impl Stamped {
    fn of(meta: &std::fs::Metadata, pattern: String, write_protected: bool) -> Stamped {
        Stamped { stamp: stamp(meta), pattern, write_protected, aside: Some(Aside::of(meta)) }
    }

    /// The version of a regular file's content the walk saw (`None` for anything else).
    pub fn version(&self) -> Option<FileVersion> {
        let aside = self.aside.filter(|a| a.regular)?;
        let Stamp { dev, ino, size, mtime_ns } = self.stamp;
        Some(FileVersion { dev, ino, size, mtime_ns, ctime_ns: aside.ctime_ns })
    }
}

/// What the walk's `stat` of a protected entry said besides its [`Stamp`]. Never compared after a
/// call (a hard link made elsewhere, a `chmod`, change no content): it spares the readers of the
/// entry later in the same call — the search for its other hard links, the secret reader — a
/// `stat` of their own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aside {
    /// A regular file itself (not a symlink to one).
    pub regular: bool,
    pub links: u64,
    pub ctime_ns: i128,
}

impl Aside {
    fn of(meta: &std::fs::Metadata) -> Aside {
        Aside { regular: meta.file_type().is_file(), links: meta.nlink(), ctime_ns: ctime_ns(meta) }
    }
}

/// A regular file's content as one `stat` tells it: a write moves the change time at least, and
/// no program can set that back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FileVersion {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
}

impl FileVersion {
    pub fn of(meta: &std::fs::Metadata) -> FileVersion {
        let Stamp { dev, ino, size, mtime_ns } = stamp(meta);
        FileVersion { dev, ino, size, mtime_ns, ctime_ns: ctime_ns(meta) }
    }
}

/// A subtree the walk did not expand, masked as a whole, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bounded {
    pub path: PathBuf,
    pub reason: String,
}

/// What a stand-in copies of a masked file: its size, modification time and execute bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Shape {
    pub size: u64,
    pub mtime_ns: i128,
    pub exec_bits: u32,
}

/// An anchored deny pattern whose path under a root cannot be resolved (a symlink loop): what it
/// names cannot be masked, so strict mode refuses the call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkLoop {
    pub path: PathBuf,
    pub pattern: String,
    pub reason: String,
}

/// The protected entries found under the roots at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub masks: Vec<Mask>,
    /// Entries bound read-only over themselves (write-protected).
    pub read_only: Vec<Mask>,
    /// Directories self-bind-mounted so that they cannot be renamed away (anchored patterns).
    pub pins: Vec<PathBuf>,
    /// Denied symlinks whose targets are outside every root (not in the child's view).
    pub skipped_links: Vec<PathBuf>,
    pub stamps: BTreeMap<PathBuf, Stamped>,
    /// Every `.git` directory seen (to tell a new repository from a tampered one).
    pub git_dirs: BTreeSet<PathBuf>,
    /// Every directory walked, with its change time (ctime): a directory whose listing did not
    /// change keeps it, so the walk after the call reads only the ones that changed. Looked up,
    /// never listed in order (a sorted map of 20k paths costs more than the stats it saves).
    /// Shared with the [`Replay`] that re-made this walk without visiting them.
    pub dirs: Arc<HashMap<PathBuf, i128>>,
    pub entries_seen: usize,
    /// Subtrees masked whole because a bound was reached (also in `masks` or `read_only`).
    pub bounded: Vec<Bounded>,
    /// Regular files inside directories a deny rule covers as a whole (for secret discovery).
    pub covered_files: Vec<PathBuf>,
    /// Regular files every write list of [`ScanSpec::write_lists`] covers and one matches.
    pub write_matches: Vec<PathBuf>,
    /// Files [`ScanSpec::read`] matches and directories it covers as a whole (symlinks never),
    /// outermost only.
    pub read_matches: Vec<PathBuf>,
    /// After a [`rescan`]: where the inodes of the earlier walk's protected entries are now.
    pub located: BTreeMap<(u64, u64), PathBuf>,
    /// The `(st_dev, st_ino)` of every mask, read-only bind and pin target as the walk found it
    /// under that name: the child checks each before mounting onto it, so that an entry swapped
    /// in the meantime (`renameat2` exchange by a concurrent process) stops the call instead of
    /// leaving the protected inode uncovered under another name.
    pub identities: BTreeMap<PathBuf, (u64, u64)>,
    /// Anchored deny patterns whose path runs into a symlink loop.
    pub link_loops: Vec<LinkLoop>,
    /// The change tracker's generation this walk started at, when it covers the roots: the walk
    /// after the call reads only what changed since ([`super::changes`]).
    pub tracked: Option<u64>,
    /// The stamped entries held open, in a server ([`super::held`]): the walk after the call
    /// stats those the tracker vouches for through them.
    pub held: Option<Arc<Held>>,
}

/// How a protected entry differs after a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// It did not exist before.
    Created,
    /// Another entry now has its name, or its content changed in place.
    Changed,
    /// It is gone from its place.
    Vanished,
}

impl ChangeKind {
    pub fn as_str(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Changed => "changed",
            ChangeKind::Vanished => "vanished",
        }
    }
}

/// A protected entry created, changed or removed during a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    pub kind: ChangeKind,
    pub pattern: String,
    pub write_protected: bool,
    /// For a replaced or vanished entry: where its original inode is now, when the walk saw it.
    pub original: Option<PathBuf>,
    /// For a changed entry: the same inode was rewritten in place (no original to put back).
    pub in_place: bool,
}

/// Why the walk refused.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    #[error("cannot walk '{}' to expand the deny rules: {reason}", path.display())]
    Unreadable { path: PathBuf, reason: String },
}

/// What to walk and what to look for.
#[derive(Debug, Clone)]
pub struct ScanSpec<'a> {
    /// The sandbox roots and writable host directories.
    pub roots: &'a [PathBuf],
    pub deny: &'a GlobRules,
    pub write_protect: &'a GlobRules,
    /// Files protected by path (the policy's own config and profile files): bound read-only,
    /// and every directory between their root and them pinned.
    pub protected_files: &'a [PathBuf],
    /// Protect every repository found as a whole: each `.git` directory and the directories
    /// above it (up to its root) pinned, a gitfile `.git` bound read-only and its directories
    /// pinned (`Sandbox.ProtectGitMetadata`).
    pub git_metadata: bool,
    /// hullward's own state: masked whole wherever it lies inside a root.
    pub hidden: &'a [PathBuf],
    /// Directories a denied symlink's target must lie in to be masked.
    pub inside: &'a [PathBuf],
    /// The write lists (`Write`, `ChangeEnvelope`) whose matching files the grants need.
    pub write_lists: Vec<&'a GlobRules>,
    /// The `Read` list whose matching entries the read grants need ([`Snapshot::read_matches`]).
    pub read: Option<&'a GlobRules>,
    /// List the files inside denied directories ([`Snapshot::covered_files`]).
    pub covered_files: bool,
    pub limits: WalkLimits,
}

/// `System` trees the deny rules are not applied in, by the walk nor by `check path`: the
/// distribution's own files (package-managed, holding public content and no project's secrets,
/// and too large to walk for every call — `/usr` alone has 100k entries and more). Inside them,
/// [`SYSTEM_WALKED_INSIDE`] is walked all the same.
pub const SYSTEM_UNWALKED: &[&str] = &["/usr", "/nix", "/snap"];

/// The part of [`SYSTEM_UNWALKED`] that the administrator, not a package manager, fills: a
/// `/usr/local/etc/app/.env` is masked for `run` as `check path` denies it.
pub const SYSTEM_WALKED_INSIDE: &[&str] = &["/usr/local"];

/// Whether `path` lies in a package-managed tree, where deny globs are not applied.
pub fn package_managed(path: &Path) -> bool {
    SYSTEM_UNWALKED.iter().any(|u| path.starts_with(u))
        && !SYSTEM_WALKED_INSIDE.iter().any(|w| path.starts_with(w))
}

/// The `System` entries the deny rules are applied in like the roots (`/opt/app/.env` is masked
/// as `check path` denies it): all but the [`package_managed`] ones, plus each
/// [`SYSTEM_WALKED_INSIDE`] tree a package-managed entry holds, and but those that hold a root or
/// a host-writable directory (walked as such already) or lie inside one.
fn walked_system(policy: &Policy, seen: &Seen) -> Vec<PathBuf> {
    let private = |w: &PathBuf| super::view::PRIVATE_TMPFS.iter().any(|(d, _)| w == Path::new(d));
    let writable = policy.sandbox.writable.iter().filter(|w| !private(w)).cloned();
    let trees: Vec<PathBuf> = policy.roots().into_iter().chain(writable).collect();
    let system = &policy.sandbox.system;
    let inside = SYSTEM_WALKED_INSIDE
        .iter()
        .map(PathBuf::from)
        .filter(|w| system.iter().any(|s| package_managed(s) && w.starts_with(s)) && seen.is_dir(w));
    let mut walked: Vec<PathBuf> = Vec::new();
    let mut taken = std::collections::HashSet::new();
    // In the policy's order: `check path` takes a pattern relative to the first that holds a path.
    for s in system.iter().filter(|s| !package_managed(s)).cloned().chain(inside) {
        if !trees.iter().any(|t| s.starts_with(t) || t.starts_with(&s)) && taken.insert(s.clone()) {
            walked.push(s);
        }
    }
    walked
}

/// The read-only trees the deny rules are applied in like the roots — `--ro` and
/// `Sandbox.ReadOnlyDirs`, then [`walked_system`] — told apart once: the directories are walked
/// and are bases of the deny patterns, the other entries are matched as files (or are missing).
/// A plan asks both questions of the same paths several times; this `stat`s each once.
#[derive(Debug, Clone, Default)]
pub struct ReadOnlyTrees {
    pub dirs: Vec<PathBuf>,
    pub others: Vec<PathBuf>,
}

impl ReadOnlyTrees {
    pub fn of(policy: &Policy) -> ReadOnlyTrees {
        ReadOnlyTrees::as_seen(policy, &Seen::default())
    }

    /// The same, asking `seen` (a plan's: it keeps what each `statx` said).
    pub fn as_seen(policy: &Policy, seen: &Seen) -> ReadOnlyTrees {
        let entries = policy.sandbox.read_only_dirs.iter().cloned().chain(walked_system(policy, seen));
        let (dirs, others) = entries.partition(|p| seen.is_dir(p));
        ReadOnlyTrees { dirs, others }
    }

    /// Whether `path` is a directory, without a `stat` when it is one of these entries (the
    /// `System` paths of the view are mostly); `seen` answers the others.
    pub fn is_dir(&self, path: &Path, seen: &Seen) -> bool {
        let same = |p: &PathBuf| p.as_os_str().as_bytes() == path.as_os_str().as_bytes();
        if self.dirs.iter().any(same) {
            return true;
        }
        !self.others.iter().any(same) && seen.is_dir(path)
    }
}

/// The walk a policy asks for, over `roots`, replaying what the index under the state directory
/// recorded for the directories that did not change (and recording the new listings).
pub fn scan_policy(policy: &Policy, roots: &[PathBuf]) -> Result<Snapshot, WalkError> {
    let hidden = hidden_paths(policy);
    let spec = policy_spec(policy, roots, &hidden, true);
    let store = Store::open(&policy.session.state_dir, fingerprint(&spec));
    let recorded = store.load_tracked();
    let recorded_dirs = recorded.as_ref().map_or(0, |r| r.0.len());
    let since = recorded.as_ref().and_then(|r| r.1.generation);
    let tracked = changes::begin_walk(roots, since, recorded_dirs);
    let replay = recorded.as_ref().and_then(|r| r.1.replay.as_ref());
    let scanned = scan_tracked(&spec, recorded.as_ref().map(|r| &*r.0), tracked.dirs(), replay)?;
    let mut snapshot = scanned.snapshot;
    snapshot.tracked = tracked.generation;
    let left = index::Tracked { generation: tracked.generation, replay: scanned.replay };
    match (scanned.index, recorded) {
        (Some(index), _) => {
            if let Err(e) = store.save_tracked(index, left) {
                tracing::debug!("walk index not saved: {e}");
            }
        }
        (None, Some((same, _))) => store.vouch(&same, left),
        (None, None) => {}
    }
    Ok(snapshot)
}

/// Everything the walk's decisions depend on besides the tree: a recorded listing is replayed
/// only for exactly these roots and rules, by this version of hullward.
fn fingerprint(spec: &ScanSpec<'_>) -> Vec<u8> {
    let mut out = format!("hullward {}\n", env!("CARGO_PKG_VERSION")).into_bytes();
    let mut field = |label: &str, items: &mut dyn Iterator<Item = &[u8]>| {
        out.extend_from_slice(label.as_bytes());
        for item in items {
            out.extend_from_slice(&(item.len() as u64).to_le_bytes());
            out.extend_from_slice(item);
        }
        out.push(b'\n');
    };
    let bytes = |p: &PathBuf| p.as_os_str().as_bytes().to_vec();
    let patterns =
        |r: &GlobRules| r.rules().iter().map(|r| r.pattern.clone().into_bytes()).collect::<Vec<_>>();
    let lists: [(&str, Vec<Vec<u8>>); 5] = [
        ("roots", spec.roots.iter().map(bytes).collect()),
        ("deny", patterns(spec.deny)),
        ("write-protect", patterns(spec.write_protect)),
        ("protected", spec.protected_files.iter().map(bytes).collect()),
        ("hidden", spec.hidden.iter().map(bytes).collect()),
    ];
    for (label, items) in &lists {
        field(label, &mut items.iter().map(Vec::as_slice));
    }
    for list in &spec.write_lists {
        field("write", &mut patterns(list).iter().map(Vec::as_slice));
    }
    if let Some(read) = spec.read {
        field("read", &mut patterns(read).iter().map(Vec::as_slice));
    }
    let flags =
        format!("git {} covered {} depth {}", spec.git_metadata, spec.covered_files, spec.limits.max_depth);
    field("flags", &mut std::iter::once(flags.as_bytes()));
    out
}

/// The walk after a call, over the same `roots` as `previous` (see [`rescan`]).
pub fn rescan_policy(policy: &Policy, roots: &[PathBuf], previous: &Snapshot) -> Result<Snapshot, WalkError> {
    let hidden = hidden_paths(policy);
    let tracked = changes::begin_walk(roots, previous.tracked, previous.dirs.len());
    rescan_tracked(&policy_spec(policy, roots, &hidden, false), previous, tracked.dirs())
}

/// hullward's own files, which no program may read or change: the state directory (audit log,
/// quarantine) and the audit log wherever `--audit` put it.
pub fn hidden_paths(policy: &Policy) -> Vec<PathBuf> {
    vec![policy.session.state_dir.clone(), policy.session.audit_path.clone()]
}

fn policy_spec<'a>(
    policy: &'a Policy,
    roots: &'a [PathBuf],
    hidden: &'a [PathBuf],
    covered_files: bool,
) -> ScanSpec<'a> {
    let write_lists = if policy.sandbox.read_only {
        Vec::new()
    } else {
        [Some(&policy.write).filter(|w| !w.is_empty()), policy.change_envelope.as_ref()]
            .into_iter()
            .flatten()
            .collect()
    };
    ScanSpec {
        roots,
        deny: &policy.deny,
        write_protect: &policy.write_protect,
        protected_files: &policy.files,
        git_metadata: policy.sandbox.protect_git_metadata,
        hidden,
        inside: &policy.sandbox.writable,
        write_lists,
        read: (covered_files && !policy.read.is_empty()).then_some(&policy.read),
        covered_files,
        limits: WalkLimits::default(),
    }
}

#[derive(Default)]
struct Found {
    masks: Vec<Mask>,
    read_only: Vec<Mask>,
    skipped_links: Vec<PathBuf>,
    stamps: Vec<(PathBuf, Stamped)>,
    git_dirs: Vec<PathBuf>,
    /// Directories pinned by the walk itself: a repository lies in or below them, or a deny
    /// pattern spelled through a symlink reaches below them.
    walk_pins: Vec<PathBuf>,
    link_loops: Vec<LinkLoop>,
    /// Identities of entries protected without a stamp (pins, symlink targets), as walked.
    identities: Vec<(PathBuf, (u64, u64))>,
    /// The stamped entries held open (a walk that [`Walk::holding`]).
    held: Vec<(PathBuf, Arc<Handle>)>,
    dirs: Vec<(PathBuf, i128)>,
    bounded: Vec<Bounded>,
    covered_files: Vec<PathBuf>,
    write_matches: Vec<PathBuf>,
    read_matches: Vec<PathBuf>,
    located: Vec<((u64, u64), PathBuf)>,
    /// What this walk read in each directory whose ctime it trusts (the next index).
    listings: Vec<(PathBuf, Listing)>,
    /// The directories it replayed from the index instead (the rest of the next index).
    replayed: Vec<PathBuf>,
    /// Every entry that [`matters`], with the directory it was met in (the next [`Replay`]).
    met: Vec<(Pending, Listed)>,
    error: Option<WalkError>,
}

fn mtime_ns(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec())
}

/// A directory's change time: it moves whenever an entry is added, removed or renamed, and unlike
/// the modification time no program can set it back.
fn ctime_ns(meta: &std::fs::Metadata) -> i128 {
    i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec())
}

fn stamp(meta: &std::fs::Metadata) -> Stamp {
    Stamp { dev: meta.dev(), ino: meta.ino(), size: meta.size(), mtime_ns: mtime_ns(meta) }
}

fn kind_of(meta: &std::fs::Metadata) -> MaskKind {
    if meta.is_dir() {
        MaskKind::Dir
    } else {
        MaskKind::File
    }
}

/// One directory waiting to be read.
#[derive(Debug, Clone)]
struct Pending {
    root: usize,
    /// Relative to its root.
    rel: PathBuf,
    depth: usize,
    /// Inside a directory a deny rule covers: only its files are listed.
    covered: bool,
    /// Inside a directory [`ScanSpec::read`] covers as a whole: nothing in it is listed again.
    read_covered: bool,
    /// This directory lies under one the change tracker reported changed: it is walked by
    /// ctime, not replayed on the tracker's word.
    untracked: bool,
}

/// Directories waiting to be read, shared by the walking threads.
struct Queue {
    dirs: Vec<Pending>,
    /// Directories being read right now.
    active: usize,
    /// Threads waiting for a directory (woken only when there is one, or the walk is over:
    /// a wake-up is a system call, and most directories are read in microseconds).
    waiting: usize,
    /// The entry bound was reached: what is still pending is masked, not read.
    stop: bool,
}

struct Walk<'a> {
    spec: &'a ScanSpec<'a>,
    /// The last walk's snapshot, to skip directories whose listing did not change.
    previous: Option<&'a Snapshot>,
    /// The previous walk's directories and their ctimes, by the path's bytes (see [`Index`]).
    previous_dirs: HashMap<&'a [u8], i128>,
    /// The previous walk's subdirectories of each directory, by the path's bytes.
    children: HashMap<&'a [u8], Vec<&'a Path>>,
    /// Inode numbers of the previous walk's protected entries (to find where they moved).
    wanted: HashSet<u64>,
    /// [`ScanSpec::hidden`] entries that lie inside a root (usually none).
    hidden: Vec<&'a Path>,
    /// The last walk's listings, to replay directories whose listing did not change.
    index: Option<&'a Index>,
    /// The directories the change tracker says may have changed since the last walk (by
    /// [`dir_key`]); `None` when it cannot tell. Any other directory is replayed unread and
    /// un-stat'ed, unless it lies under one of these.
    tracked: Option<&'a HashSet<Vec<u8>>>,
    /// The walk after a call, with the tracker: every directory above one of [`Walk::tracked`]
    /// (by [`dir_key`]). Below a directory the previous walk validated that is neither changed
    /// nor one of these, nothing changed: the walk after a call does not even visit it.
    toward_changes: HashSet<&'a [u8]>,
    /// Directory ctimes from before this are trusted (see [`CTIME_TICK`]).
    trusted_before: i128,
    /// Whether each device's filesystem keeps trustworthy ctimes.
    devices: Mutex<HashMap<u64, bool>>,
    /// Some directory was read and listed anew: the index changed.
    relisted: AtomicBool,
    /// Some directory was neither replayed from the index nor listed into it (its ctime is not
    /// trusted), or the walk was bounded: the next walk cannot be a [`Replay`] of this one.
    unreplayable: AtomicBool,
    /// The entries met are kept for the next [`Replay`] (a walk before a call, not one itself).
    recording: bool,
    /// A recording walk in a server: the entries it stamps by name are opened and held
    /// ([`super::held`]).
    holding: bool,
    queue: Mutex<Queue>,
    ready: Condvar,
    found: Mutex<Found>,
    entries: AtomicUsize,
    /// Of those, the entries of directories a deny rule covers.
    covered_entries: AtomicUsize,
}

/// How many threads may walk at once: the CPUs this process may use, at most 8 — read once per
/// process, and only by a walk big enough to share (finding it out reads the cgroup's CPU quota
/// files: a dozen system calls). It only sizes the walk; no decision depends on it.
fn walk_threads() -> usize {
    static THREADS: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *THREADS.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get().min(8)))
}

/// Pending directories above which more threads join the walk.
const PARALLEL_THRESHOLD: usize = 32;

/// Why reading one directory stopped early.
enum Stop {
    /// The entry bound was reached inside it.
    Entries,
}

/// Walks the roots and returns every protected entry. Small trees are walked on the calling
/// thread alone; once enough directories are pending, helper threads join (one work queue).
pub fn scan(spec: &ScanSpec<'_>) -> Result<Snapshot, WalkError> {
    Ok(walk(spec, None, None, None, None)?.0)
}

/// Like [`scan`], replaying from `index` every directory whose listing did not change since it
/// was recorded; also returns the new index when it differs from `index`.
pub fn scan_indexed(
    spec: &ScanSpec<'_>,
    index: Option<&Index>,
) -> Result<(Snapshot, Option<Index>), WalkError> {
    let scanned = scan_tracked(spec, index, None, None)?;
    Ok((scanned.snapshot, scanned.index))
}

/// Like [`scan_indexed`], and with `tracked` (the directories the change tracker says may have
/// changed since `index` was validated) every other directory of `index` is replayed without
/// even its `stat` — or, when none under the roots changed, `replay` (made by the walk that
/// validated `index`) is applied without visiting one (see [`Replay`]).
pub fn scan_tracked(
    spec: &ScanSpec<'_>,
    index: Option<&Index>,
    tracked: Option<&HashSet<Vec<u8>>>,
    replay: Option<&Arc<Replay>>,
) -> Result<Scanned, WalkError> {
    if let (Some(replay), Some(index), Some(changed)) = (replay, index, tracked) {
        let Some(changed) = outermost_changes(changed, spec.roots) else {
            return scan_walked(spec, Some(index), tracked);
        };
        if changed.is_empty() {
            let again = Again { replay, changed: &[], seeds: &[] };
            let (snapshot, _) = walk(spec, None, Some(index), tracked, Some(again))?;
            return Ok(Scanned { snapshot, index: None, replay: Some(replay.clone()) });
        }
        if let Some(seeds) = seeds(spec, replay, &changed) {
            let again = Again { replay, changed: &changed, seeds: &seeds };
            let (snapshot, listed) = walk(spec, None, Some(index), tracked, Some(again))?;
            let next = index.patched(&changed, listed.read, &listed.replayed);
            return Ok(Scanned { snapshot, index: Some(next), replay: listed.replay });
        }
    }
    scan_walked(spec, index, tracked)
}

/// [`scan_tracked`] visiting every directory it cannot vouch for.
fn scan_walked(
    spec: &ScanSpec<'_>,
    index: Option<&Index>,
    tracked: Option<&HashSet<Vec<u8>>>,
) -> Result<Scanned, WalkError> {
    let (snapshot, listed) = walk(spec, None, index, tracked, None)?;
    let fresh = listed.relisted || index.map_or(0, Index::len) != listed.read.len() + listed.replayed.len();
    // Replayed listings are the old index's own, shared with it.
    let next = fresh.then(|| Index::walked(listed.read, &listed.replayed, index));
    Ok(Scanned { snapshot, index: next, replay: listed.replay })
}

/// The walk after a call: like [`scan`], but a directory whose change time (ctime) is the one
/// `previous` recorded has the same listing — adding, removing or renaming an entry moves it, and
/// no program can set it back — so it is not read again; its subdirectories are still visited.
/// Every protected entry of `previous` is stat'ed itself (an in-place rewrite does not move its
/// directory's ctime), and the inodes of those entries are looked for under every name the walk
/// reads ([`Snapshot::located`]). The snapshot is what [`Snapshot::changes_since`] compares: its
/// `dirs` are empty and its `git_dirs` are those of the directories read (no walk starts from
/// it; recording 20k directories after every call cost as much as stat'ing them).
pub fn rescan(spec: &ScanSpec<'_>, previous: &Snapshot) -> Result<Snapshot, WalkError> {
    rescan_tracked(spec, previous, None)
}

/// Like [`rescan`], and with `tracked` (the directories the change tracker says may have changed
/// since `previous` was taken) every other directory of `previous` is taken as unchanged without
/// its `stat`.
pub fn rescan_tracked(
    spec: &ScanSpec<'_>,
    previous: &Snapshot,
    tracked: Option<&HashSet<Vec<u8>>>,
) -> Result<Snapshot, WalkError> {
    Ok(walk(spec, Some(previous), None, tracked, None)?.0)
}

/// What a walk listed in the directories it trusts.
struct Listings {
    /// Directories read and listed anew, with what they hold.
    read: Vec<(PathBuf, Listing)>,
    /// Directories replayed from the index unread (their listing is the index's).
    replayed: Vec<PathBuf>,
    /// Some directory was read and listed anew: the index changed.
    relisted: bool,
    /// What the next walk may replay, when every directory of this one was replayed or listed.
    replay: Option<Arc<Replay>>,
}

/// What a walk met by name in the directories it trusts, kept to be met again without a visit.
///
/// When the change tracker says that no directory under the roots changed since the walk that
/// made it — every directory of that walk was replayed from the index or read into it, none
/// bounded — the next walk of the same roots and rules would replay every directory of the index
/// and apply exactly these entries again. So it applies them, without visiting a directory: every
/// decision that depends on more than a name (a stamp, a link's target, a repository's config)
/// is still taken anew, and the directories a deny rule covers (which no index holds) are still
/// read. What the tracker cannot vouch for walks as before.
#[derive(Debug)]
pub struct Replay {
    /// Every entry that does more than lead to a subdirectory, with the directory it was met in.
    met: Vec<(Pending, Listed)>,
    /// The walk's directories and their ctimes (the walk after the call compares against them).
    dirs: Arc<HashMap<PathBuf, i128>>,
    /// Entries the walk counted in the directories it replayed or listed (not those a deny rule
    /// covers: a replay reads and counts them again).
    entries: usize,
    /// The stamped entries of `met`, held open ([`super::held`]; empty outside a server): a
    /// replay stats them without resolving their paths.
    held: Arc<Held>,
}

/// What a walk applies from the last one instead of visiting directories (see [`Replay`]).
#[derive(Clone, Copy)]
struct Again<'a> {
    replay: &'a Replay,
    /// The outermost directories the tracker reports changed, as keys (empty: none): what the
    /// replay met below them is not applied, and `seeds` walks them instead.
    changed: &'a [Vec<u8>],
    seeds: &'a [Pending],
}

/// The outermost directories of `changed` that lie below one of `roots`, as keys; `None` when a
/// root itself is one (then nothing is left to replay around it).
fn outermost_changes(changed: &HashSet<Vec<u8>>, roots: &[PathBuf]) -> Option<Vec<Vec<u8>>> {
    let mut outer = Vec::new();
    for key in changed {
        if !roots.iter().any(|r| key_within(key, dir_key(r))) {
            continue;
        }
        if roots.iter().any(|r| key.as_slice() == dir_key(r)) {
            return None;
        }
        if !ancestors(key).any(|a| changed.contains(a)) {
            outer.push(key.clone());
        }
    }
    outer.sort();
    Some(outer)
}

/// The walks a partial replay starts with: each changed directory as a full walk would reach
/// it — its depth, and whether a `Read` glob covers it, from the entries the replay met above
/// it. A directory below an entry that is not descended into (denied, write-protected, hidden)
/// has none: a full walk never reads it (the directories a deny rule covers are read anyway).
/// `None` when one lies deeper than the walk may go.
fn seeds(spec: &ScanSpec<'_>, replay: &Replay, changed: &[Vec<u8>]) -> Option<Vec<Pending>> {
    let above: Vec<(PathBuf, &Listed)> = replay
        .met
        .iter()
        .filter(|(_, listed)| listed.read_match || listed.entry != Entry::Descend)
        .map(|(at, listed)| (spec.roots[at.root].join(&at.rel).join(&listed.name), listed))
        .collect();
    let mut seeds = Vec::new();
    for key in changed {
        let dir = Path::new(OsStr::from_bytes(key));
        let (root, rel) =
            spec.roots.iter().enumerate().find_map(|(i, r)| Some((i, dir.strip_prefix(r).ok()?)))?;
        let depth = rel.components().count();
        if depth >= spec.limits.max_depth {
            return None;
        }
        let over = |p: &PathBuf| key_within(key, dir_key(p));
        if above.iter().any(|(p, l)| l.entry != Entry::Descend && over(p)) {
            continue;
        }
        seeds.push(Pending {
            root,
            rel: rel.to_path_buf(),
            depth,
            covered: false,
            read_covered: above.iter().any(|(p, l)| l.read_match && over(p)),
            untracked: false,
        });
    }
    Some(seeds)
}

/// Whether applying `listed` does anything but queue its subdirectory.
fn matters(listed: &Listed) -> bool {
    listed.git_dir || listed.read_match || listed.entry != Entry::Descend
}

/// What [`scan_tracked`] found: the snapshot, the index when it changed, and what the next walk
/// may replay instead of visiting the directories (see [`Replay`]).
pub struct Scanned {
    pub snapshot: Snapshot,
    pub index: Option<Index>,
    pub replay: Option<Arc<Replay>>,
}

/// The walk itself: the snapshot and what it listed.
type Walked = (Snapshot, Listings);

fn walk(
    spec: &ScanSpec<'_>,
    previous: Option<&Snapshot>,
    index: Option<&Index>,
    tracked: Option<&HashSet<Vec<u8>>>,
    again: Option<Again<'_>>,
) -> Result<Walked, WalkError> {
    let trusted_before = ctime_trusted_before(SystemTime::now());
    let recording = previous.is_none() && again.is_none_or(|a| !a.changed.is_empty());
    let toward_changes = match (previous, tracked) {
        (Some(_), Some(changed)) => changed.iter().flat_map(|d| ancestors(d)).collect(),
        _ => HashSet::new(),
    };
    let mut children: HashMap<&[u8], Vec<&Path>> = HashMap::new();
    let mut previous_dirs = HashMap::new();
    if let Some(previous) = previous {
        // With the tracker vouching for every directory of the roots, the walk after a call
        // looks at the roots alone: the maps of the previous walk's directories are not needed.
        let quiet = tracked.is_some_and(|changed| {
            !changed.iter().any(|d| spec.roots.iter().any(|r| key_within(d, dir_key(r))))
        });
        let dirs: Box<dyn Iterator<Item = (&PathBuf, &i128)>> = if quiet {
            Box::new(spec.roots.iter().filter_map(|r| previous.dirs.get_key_value(r.as_path())))
        } else {
            Box::new(previous.dirs.iter())
        };
        for (dir, ctime) in dirs {
            previous_dirs.insert(dir_key(dir), *ctime);
            if let Some(parent) = dir.parent() {
                children.entry(dir_key(parent)).or_default().push(dir.as_path());
            }
        }
    }
    let walk = Walk {
        spec,
        previous,
        previous_dirs,
        children,
        wanted: previous.iter().flat_map(|p| p.stamps.values()).map(|s| s.stamp.ino).collect(),
        hidden: spec
            .hidden
            .iter()
            .filter(|h| spec.roots.iter().any(|r| h.starts_with(r) && *h != r))
            .map(PathBuf::as_path)
            .collect(),
        index,
        tracked,
        toward_changes,
        trusted_before,
        devices: Mutex::new(HashMap::new()),
        relisted: AtomicBool::new(false),
        // Only a walk before a call is replayed; a walk after one records nothing to replay.
        unreplayable: AtomicBool::new(previous.is_some()),
        recording,
        holding: recording && held::holding(),
        queue: Mutex::new(Queue {
            dirs: match again {
                Some(a) => a.seeds.to_vec(),
                None => (0..spec.roots.len())
                    .map(|root| Pending {
                        root,
                        rel: PathBuf::new(),
                        depth: 0,
                        covered: false,
                        read_covered: false,
                        untracked: false,
                    })
                    .collect(),
            },
            active: 0,
            waiting: 0,
            stop: false,
        }),
        ready: Condvar::new(),
        found: Mutex::new(Found::default()),
        entries: AtomicUsize::new(0),
        covered_entries: AtomicUsize::new(0),
    };
    if let Some(again) = again {
        walk.meet_again(again);
    }
    std::thread::scope(|scope| {
        let mut spawned = 0;
        // Asked only of a walk that grows: a small tree never pays for the quota files.
        let mut helpers = None;
        walk.work(|pending| {
            if pending <= PARALLEL_THRESHOLD {
                return;
            }
            let helpers = *helpers.get_or_insert_with(|| walk_threads() - 1);
            while spawned < helpers {
                spawned += 1;
                scope.spawn(|| walk.work(|_| {}));
            }
        });
    });
    walk.mask_unread();
    walk.literal_through_symlinks();
    let entries_seen = walk.entries.load(Ordering::Relaxed);
    // What a replay counts again for itself: the directories a deny rule covers are read anew.
    let uncovered_entries = entries_seen.saturating_sub(walk.covered_entries.load(Ordering::Relaxed));
    let relisted = walk.relisted.load(Ordering::Relaxed);
    let replayable = !walk.unreplayable.load(Ordering::Relaxed);
    let holding = walk.holding;
    let found = walk.found;
    let mut found = found.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = found.error.take() {
        return Err(e);
    }
    let within: Vec<&Path> = spec.roots.iter().chain(spec.inside).map(PathBuf::as_path).collect();
    let masks = collapse(outermost(found.masks), spec.limits.max_masks, &within, &mut found.bounded);
    let mut pins = pins_for(spec.roots, spec.deny, &masks);
    pins.append(&mut found.walk_pins);
    pins.extend(policy_file_pins(spec));
    let pins = bound_pins(pins, &masks, spec.limits.max_masks, &mut found.read_only, &mut found.bounded);
    let mut read_only = outermost(found.read_only);
    // Inside a mask there is nothing left to protect.
    read_only.retain(|r| !masks.iter().any(|m| r.path.starts_with(&m.path)));
    let read_only = collapse(read_only, spec.limits.max_masks, &within, &mut found.bounded);
    // In order already, the map is built without a comparison of components per entry.
    found.stamps.sort_by(|a, b| path_order(&a.0, &b.0));
    let mut stamps: BTreeMap<PathBuf, Stamped> = found.stamps.into_iter().collect();
    let git_dirs: BTreeSet<PathBuf> = found.git_dirs.into_iter().collect();
    if let Some(prev) = previous {
        restat(prev, &mut stamps, tracked);
    }
    let identities = identities(&stamps, found.identities, [&masks, &read_only], &pins);
    found.covered_files.sort();
    found.write_matches.sort();
    found.write_matches.dedup();
    found.read_matches.sort();
    found.bounded.sort_by(|a, b| a.path.cmp(&b.path));
    let snapshot = Snapshot {
        masks,
        read_only,
        pins,
        skipped_links: found.skipped_links,
        stamps,
        git_dirs,
        dirs: match again {
            Some(a) if a.changed.is_empty() => a.replay.dirs.clone(),
            // A copy of the table keeps every hash: hashing a `Path` goes component by component.
            Some(a) => {
                let mut dirs = HashMap::clone(&a.replay.dirs);
                dirs.retain(|d, _| !a.changed.iter().any(|c| key_within(dir_key(d), c)));
                dirs.extend(found.dirs);
                Arc::new(dirs)
            }
            None => Arc::new(found.dirs.into_iter().collect()),
        },
        entries_seen,
        bounded: found.bounded,
        covered_files: found.covered_files,
        write_matches: found.write_matches,
        read_matches: found.read_matches,
        located: found.located.into_iter().collect(),
        identities,
        link_loops: found.link_loops,
        tracked: None,
        held: match again {
            Some(a) if a.changed.is_empty() => Some(a.replay.held.clone()),
            _ => holding.then(|| Arc::new(found.held.into_iter().collect())),
        },
    };
    let replay = (replayable && again.is_none_or(|a| !a.changed.is_empty())).then(|| {
        let mut met = found.met;
        // In the order of their paths: what a replay finds then comes sorted, and sorting it
        // (component by component) is one comparison per entry.
        met.sort_by_cached_key(|(at, listed)| {
            let path = spec.roots[at.root].join(&at.rel).join(&listed.name);
            path.into_os_string().into_vec().into_iter().map(order_byte).collect::<Vec<u8>>()
        });
        let held = snapshot.held.clone().unwrap_or_default();
        Arc::new(Replay { met, dirs: snapshot.dirs.clone(), entries: uncovered_entries, held })
    });
    Ok((snapshot, Listings { read: found.listings, replayed: found.replayed, relisted, replay }))
}

/// A walked directory's path as the key of a lookup: its bytes without trailing slashes. Every
/// path the walk stats is its root joined with names (a root is `root/` joined with nothing,
/// and `Path::parent` of its entries is `root`), so two spellings of one walked directory differ
/// by trailing slashes alone — and byte keys hash in one pass, where a `Path` hashes and
/// compares component by component.
pub fn dir_key(dir: &Path) -> &[u8] {
    let bytes = dir.as_os_str().as_bytes();
    let end = bytes.iter().rposition(|b| *b != b'/').map_or(bytes.len().min(1), |i| i + 1);
    &bytes[..end]
}

/// The order of `Path::cmp` (component by component) for the paths a walk makes — absolute, no
/// `.` or `..`, no doubled or trailing slash — found on their bytes, with the separator below
/// every other byte: the first byte that differs decides as its component does, and a path
/// that ends first is a prefix of the other's components. `Path::cmp` parses components; on
/// 2,000 paths of a million-file tree, sorting by it was a third of the walk.
fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    let same = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    a.get(same).map(|b| order_byte(*b)).cmp(&b.get(same).map(|b| order_byte(*b)))
}

/// A path's byte as [`path_order`] ranks it: the separator as 0, which no name holds.
fn order_byte(byte: u8) -> u8 {
    if byte == b'/' {
        0
    } else {
        byte
    }
}

/// Whether the directory `key` is `outer` or lies below it (both [`dir_key`]s).
pub(crate) fn key_within(key: &[u8], outer: &[u8]) -> bool {
    key.starts_with(outer) && (key.len() == outer.len() || outer == b"/" || key[outer.len()] == b'/')
}

/// Every directory above the directory `key` (a [`dir_key`]), as keys: `/a/b/c` → `/a/b`, `/a`, `/`.
pub(crate) fn ancestors(key: &[u8]) -> impl Iterator<Item = &[u8]> {
    key.iter()
        .enumerate()
        .filter(|(_, b)| **b == b'/')
        .map(move |(i, _)| &key[..i.max(1)])
        .filter(move |a| *a != key)
}

fn identity_of(path: &Path) -> Option<(u64, u64)> {
    std::fs::symlink_metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// The identity of every entry the view mounts onto: from its stamp (taken when the walk matched
/// its name), from what the walk noted (pins, symlink targets), or — for the directories a
/// bound or a collapse covers whole, and pins found after the walk — stat'ed now.
fn identities(
    stamps: &BTreeMap<PathBuf, Stamped>,
    walked: Vec<(PathBuf, (u64, u64))>,
    lists: [&[Mask]; 2],
    pins: &[PathBuf],
) -> BTreeMap<PathBuf, (u64, u64)> {
    let walked: BTreeMap<PathBuf, (u64, u64)> = walked.into_iter().collect();
    let [masks, read_only] = lists.map(|l| l.iter().map(|m| m.path.as_path()));
    // Each list is sorted, like the stamps: looked up in step (a search per path compares paths
    // component by component, a dozen times each).
    let sorted = [
        in_step(masks, stamps),
        in_step(read_only, stamps),
        in_step(pins.iter().map(PathBuf::as_path), stamps),
    ];
    sorted
        .into_iter()
        .flatten()
        .filter_map(|(p, stamped)| {
            let known = stamped.map(|s| s.stamp.inode()).or_else(|| walked.get(p).copied());
            Some((p.to_path_buf(), known.or_else(|| identity_of(p))?))
        })
        .collect()
}

/// Each of `paths` (sorted) with its entry of `map`, found by walking both in step.
pub(crate) fn in_step<'p, 'm, V>(
    paths: impl Iterator<Item = &'p Path>,
    map: &'m BTreeMap<PathBuf, V>,
) -> Vec<(&'p Path, Option<&'m V>)> {
    let mut entries = map.iter().peekable();
    paths
        .map(|p| {
            while entries.next_if(|(k, _)| k.as_path() < p).is_some() {}
            (p, entries.peek().filter(|(k, _)| k.as_path() == p).map(|(_, v)| *v))
        })
        .collect()
}

/// The earlier walk's protected entries that this walk did not reach by reading their directory
/// (it had not changed, or lies under a mask now): stat'ed by name, so that an in-place rewrite
/// shows and a missing entry is missing — or through the earlier walk's handle where the tracker
/// vouches for every directory above the entry since (`tracked`; see [`super::held`]).
fn restat(prev: &Snapshot, stamps: &mut BTreeMap<PathBuf, Stamped>, tracked: Option<&HashSet<Vec<u8>>>) {
    let read = std::mem::take(stamps);
    let earlier = prev.stamps.keys().map(PathBuf::as_path);
    let unread: Vec<(&PathBuf, &Stamped)> = in_step(earlier, &read)
        .into_iter()
        .zip(&prev.stamps)
        .filter(|((_, now), _)| now.is_none())
        .map(|(_, entry)| entry)
        .collect();
    let restamped = in_parallel(&unread, |(path, before)| {
        let handle = prev.held.as_ref().and_then(|h| h.vouched(path, tracked));
        let meta = match handle.and_then(|h| h.metadata().ok()) {
            Some(meta) => meta,
            None => std::fs::symlink_metadata(path).ok()?,
        };
        Some(((*path).clone(), Stamped::of(&meta, before.pattern.clone(), before.write_protected)))
    });
    // Two sorted runs: merged in one pass, and a sorted sequence makes a map without a search
    // per entry.
    let mut all: Vec<(PathBuf, Stamped)> = read.into_iter().chain(restamped.into_iter().flatten()).collect();
    all.sort_by(|a, b| path_order(&a.0, &b.0));
    *stamps = all.into_iter().collect();
}

/// `f` of each of `items`, in their order. A long list is shared with up to [`walk_threads`]
/// threads, each taking the next [`PARALLEL_CHUNK`] items as it comes (a thread that starts late
/// takes fewer): for lists of entries to `stat`, where a `stat` each outweighs a thread.
fn in_parallel<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    if items.len() < 4 * PARALLEL_CHUNK {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let done = Mutex::new(Vec::new());
    let work = || loop {
        let start = next.fetch_add(1, Ordering::Relaxed) * PARALLEL_CHUNK;
        let Some(chunk) = items.get(start..items.len().min(start + PARALLEL_CHUNK)).filter(|c| !c.is_empty())
        else {
            return;
        };
        let out: Vec<R> = chunk.iter().map(&f).collect();
        done.lock().unwrap_or_else(|p| p.into_inner()).push((start, out));
    };
    std::thread::scope(|scope| {
        for _ in 1..walk_threads() {
            scope.spawn(work);
        }
        work();
    });
    let mut done = done.into_inner().unwrap_or_else(|p| p.into_inner());
    done.sort_unstable_by_key(|(start, _)| *start);
    done.into_iter().flat_map(|(_, out)| out).collect()
}

/// How many items a thread of [`in_parallel`] takes at a time.
const PARALLEL_CHUNK: usize = 64;

/// Sorted, deduplicated, and without entries inside a covered directory.
fn outermost(mut list: Vec<Mask>) -> Vec<Mask> {
    list.sort_by(|a, b| path_order(&a.path, &b.path).then(a.kind.cmp(&b.kind)));
    list.dedup_by(|a, b| a.path == b.path);
    let mut kept: Vec<Mask> = Vec::with_capacity(list.len());
    // Sorted by path, a covered entry comes right after the directory covering it (or after
    // other entries inside that directory).
    let mut cover: Option<PathBuf> = None;
    for m in list {
        if cover.as_ref().is_some_and(|d| m.path.starts_with(d)) {
            continue;
        }
        cover = (m.kind == MaskKind::Dir).then(|| m.path.clone());
        kept.push(m);
    }
    kept
}

/// Keeps at most `max` entries: while there are more, the parent directory holding the most of
/// them is covered as a whole instead (the fullest first; once every parent holds one, all move
/// up a level). Never goes above a directory of `within`. Each collapse is noted in `bounded`.
fn collapse(mut list: Vec<Mask>, max: usize, within: &[&Path], bounded: &mut Vec<Bounded>) -> Vec<Mask> {
    let reason = format!("more than {max} protected paths: the directory is covered as a whole");
    while list.len() > max {
        let mut groups: BTreeMap<PathBuf, usize> = BTreeMap::new();
        for m in &list {
            if let Some(parent) = liftable(&m.path, within) {
                *groups.entry(parent.to_path_buf()).or_default() += 1;
            }
        }
        if groups.is_empty() {
            break;
        }
        let mut order: Vec<(PathBuf, usize)> = groups.into_iter().collect();
        order.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let every_one = order[0].1 < 2;
        let mut excess = list.len() - max;
        let mut chosen = Vec::new();
        for (dir, n) in order {
            if excess == 0 && !every_one {
                break;
            }
            excess = excess.saturating_sub(n.saturating_sub(1));
            chosen.push(dir);
        }
        let pattern = format!("(walk bound: {reason})");
        for dir in chosen {
            bounded.push(Bounded { path: dir.clone(), reason: reason.clone() });
            list.push(Mask { path: dir, kind: MaskKind::Dir, pattern: pattern.clone(), via_symlink: None });
        }
        list = outermost(list);
    }
    list
}

/// The parent of `path` when it is still inside one of `within` (a root itself is never lifted).
fn liftable<'p>(path: &'p Path, within: &[&Path]) -> Option<&'p Path> {
    let parent = path.parent()?;
    within.iter().any(|w| parent.starts_with(w)).then_some(parent)
}

impl Walk<'_> {
    fn found(&self) -> std::sync::MutexGuard<'_, Found> {
        self.found.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes directories from the queue until none is left anywhere; `on_pending` is told how
    /// many are waiting after each directory (to decide on more threads).
    fn work(&self, mut on_pending: impl FnMut(usize)) {
        loop {
            let next = {
                let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if q.stop {
                        self.ready.notify_all();
                        return;
                    }
                    if let Some(next) = q.dirs.pop() {
                        q.active += 1;
                        break next;
                    }
                    if q.active == 0 {
                        self.ready.notify_all();
                        return;
                    }
                    q.waiting += 1;
                    q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
                    q.waiting -= 1;
                }
            };
            let result = self.read_dir(&next);
            let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            q.active -= 1;
            match result {
                Ok(subdirs) => q.dirs.extend(subdirs),
                Err(Stop::Entries) => {
                    q.stop = true;
                    let reason =
                        format!("more than {} entries under the roots", self.spec.limits.max_entries);
                    self.bound(&next, reason);
                }
            }
            let pending = q.dirs.len();
            let wake = q.waiting > 0 && (pending > 0 || q.stop || q.active == 0);
            drop(q);
            if wake {
                self.ready.notify_all();
            }
            on_pending(pending);
        }
    }

    /// After the entry bound: every directory still waiting is masked unread.
    fn mask_unread(&self) {
        let left = std::mem::take(&mut self.queue.lock().unwrap_or_else(|p| p.into_inner()).dirs);
        let reason = format!("more than {} entries under the roots", self.spec.limits.max_entries);
        for pending in left.iter().filter(|p| !p.covered) {
            self.bound(pending, reason.clone());
        }
    }

    /// Masks a directory the walk does not expand, and says why. A root that cannot be read is
    /// the one thing that stops the call.
    fn bound(&self, dir: &Pending, reason: String) {
        self.unreplayable.store(true, Ordering::Relaxed);
        let path = self.spec.roots[dir.root].join(&dir.rel);
        let mut f = self.found();
        if dir.covered {
            return;
        }
        f.masks.push(Mask {
            path: path.clone(),
            kind: MaskKind::Dir,
            pattern: format!("(walk bound: {reason})"),
            via_symlink: None,
        });
        f.bounded.push(Bounded { path, reason });
    }

    /// Reads one directory — or replays it from the index when its listing cannot have changed —
    /// and returns its subdirectories to descend into.
    fn read_dir(&self, at: &Pending) -> Result<Vec<Pending>, Stop> {
        let spec = self.spec;
        let base = &spec.roots[at.root];
        let dir = base.join(&at.rel);
        if let Some(replayed) = self.unchanged_by_tracker(at, &dir) {
            return replayed;
        }
        let marked;
        let at = if !at.untracked && self.tracked.is_some_and(|t| t.contains(dir_key(&dir))) {
            marked = Pending { untracked: true, ..at.clone() };
            &marked
        } else {
            at
        };
        let unreadable = |e: std::io::Error| {
            if at.depth == 0 {
                self.found()
                    .error
                    .get_or_insert(WalkError::Unreadable { path: dir.clone(), reason: e.to_string() });
            } else {
                self.bound(at, format!("cannot be read: {e}"));
            }
            Ok(Vec::new())
        };
        let meta = match std::fs::symlink_metadata(&dir) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && at.depth > 0 => return Ok(Vec::new()),
            Err(e) => return unreadable(e),
        };
        let changed_at = ctime_ns(&meta);
        // A ctime this recent could stay the same through a change made in the same clock tick:
        // such a directory is read again next time, whatever its ctime says then.
        let trusted =
            !at.covered && changed_at < self.trusted_before && self.trusted_device(&dir, meta.dev());
        let recorded = if trusted { changed_at } else { UNTRUSTED };
        if !trusted && !at.covered {
            self.unreplayable.store(true, Ordering::Relaxed);
        }
        let unchanged = trusted && self.previous_dirs.get(dir_key(&dir)) == Some(&changed_at);
        // The walk after a call records no directories: nothing walks again from its snapshot.
        if !at.covered && self.previous.is_none() {
            self.found().dirs.push((dir.clone(), recorded));
        }
        if unchanged {
            return Ok(self.known_children(at, &dir));
        }
        if let Some(listing) =
            self.index.and_then(|i| i.get(&dir)).filter(|l| trusted && l.ctime == changed_at)
        {
            return self.replay(at, dir, listing);
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && at.depth > 0 => return Ok(Vec::new()),
            Err(e) => return unreadable(e),
        };
        let mut subdirs = Vec::new();
        let mut listing = Listing { ctime: changed_at, entries: 0, found: Vec::new() };
        let mut child = at.rel.clone();
        for entry in entries {
            let Ok(entry) = entry else {
                return unreadable(std::io::Error::other("directory listing failed"));
            };
            if self.entries.fetch_add(1, Ordering::Relaxed) >= spec.limits.max_entries {
                return Err(Stop::Entries);
            }
            listing.entries += 1;
            if at.covered {
                self.covered_entries.fetch_add(1, Ordering::Relaxed);
            }
            let Ok(ft) = entry.file_type() else { continue };
            child.push(entry.file_name());
            let path = base.join(&child);
            if !self.wanted.is_empty() && self.wanted.contains(&entry.ino()) {
                self.locate(&path);
            }
            if at.covered {
                if ft.is_dir() && at.depth + 1 < spec.limits.max_depth {
                    subdirs.push(Pending {
                        root: at.root,
                        rel: child.clone(),
                        depth: at.depth + 1,
                        covered: true,
                        read_covered: false,
                        untracked: at.untracked,
                    });
                } else if ft.is_file() {
                    self.found().covered_files.push(path);
                }
                child.pop();
                continue;
            }
            if let Some(listed) = self.classify(at, &child, &path, ft) {
                self.apply(at, &child, &path, &listed, &mut subdirs, None);
                if trusted {
                    listing.found.push(listed);
                }
            }
            child.pop();
        }
        if trusted {
            self.found().listings.push((dir, listing));
            self.relisted.store(true, Ordering::Relaxed);
        }
        Ok(subdirs)
    }

    /// The previous walk's subdirectories of `dir` (a directory whose listing did not change).
    fn known_children(&self, at: &Pending, dir: &Path) -> Vec<Pending> {
        let base = &self.spec.roots[at.root];
        let known = self.children.get(dir_key(dir)).into_iter().flatten();
        known
            .filter_map(|c| c.strip_prefix(base).ok())
            .map(|rel| Pending {
                root: at.root,
                rel: rel.to_path_buf(),
                depth: at.depth + 1,
                covered: false,
                read_covered: false,
                untracked: at.untracked,
            })
            .collect()
    }

    /// A directory the change tracker vouches for — not reported changed, not under one that
    /// was, and validated by the last walk (a directory of `previous`, or a listing of the
    /// index): taken as unchanged without a `stat`. `None`: the directory is walked as usual.
    fn unchanged_by_tracker(&self, at: &Pending, dir: &Path) -> Option<Result<Vec<Pending>, Stop>> {
        let tracked = self.tracked?;
        if at.covered || at.untracked || tracked.contains(dir_key(dir)) {
            return None;
        }
        if self.previous.is_some() {
            let key = dir_key(dir);
            // Neither changed nor above a change: nothing below it changed either.
            let below = |key| {
                if self.toward_changes.contains(key) {
                    self.known_children(at, dir)
                } else {
                    Vec::new()
                }
            };
            return self.previous_dirs.contains_key(key).then(|| Ok(below(key)));
        }
        let listing = self.index?.get(dir)?;
        self.found().dirs.push((dir.to_path_buf(), listing.ctime));
        Some(self.replay(at, dir.to_path_buf(), listing))
    }

    /// A directory whose ctime is the one the index recorded: its entries are the recorded ones,
    /// so what the walk would decide about them by name is what it decided then. Every decision
    /// that depends on more than the name (stamps, link targets, a repository's config) is taken
    /// again now.
    fn replay(&self, at: &Pending, dir: PathBuf, listing: &Listing) -> Result<Vec<Pending>, Stop> {
        let before = self.entries.fetch_add(listing.entries, Ordering::Relaxed);
        if before + listing.entries > self.spec.limits.max_entries {
            return Err(Stop::Entries);
        }
        let base = &self.spec.roots[at.root];
        let mut subdirs = Vec::new();
        let mut child = at.rel.clone();
        for listed in &listing.found {
            child.push(&listed.name);
            let path = base.join(&child);
            self.apply(at, &child, &path, listed, &mut subdirs, None);
            child.pop();
        }
        self.found().replayed.push(dir);
        Ok(subdirs)
    }

    /// Whether directory ctimes on the filesystem of `dev` can be trusted (asked once per device).
    fn trusted_device(&self, dir: &Path, dev: u64) -> bool {
        super::index::trusted_device(&mut self.devices.lock().unwrap_or_else(|p| p.into_inner()), dir, dev)
    }

    /// What an entry of a directory outside every covered one is to the walk, by its name and
    /// type; `None` for an entry that matters to no rule.
    fn classify(&self, at: &Pending, rel: &Path, path: &Path, ft: std::fs::FileType) -> Option<Listed> {
        let spec = self.spec;
        let name = rel.file_name().unwrap_or_default().to_os_string();
        let dot_git = rel.file_name() == Some(".git".as_ref());
        // Whether the `Read` list matches the entry itself (an ancestor's match is the walk's
        // to carry down, see `Pending::read_covered`).
        let read_match = !ft.is_symlink() && self.read_match(rel, ft.is_dir());
        let listed = |entry| Some(Listed { name: name.clone(), git_dir: false, read_match, entry });
        if ft.is_dir() {
            let entry = if self.hidden(path) {
                Entry::Hidden(MaskKind::Dir)
            } else if let Some(rule) = spec.deny.covers_dir(rel) {
                Entry::DeniedDir(rule.pattern.clone())
            } else if let Some(rule) = spec.write_protect.covers_dir(rel) {
                Entry::ProtectedDir(rule.pattern.clone())
            } else if at.depth + 1 >= spec.limits.max_depth {
                Entry::TooDeep
            } else {
                Entry::Descend
            };
            return Some(Listed { name, git_dir: dot_git, read_match, entry });
        }
        if self.hidden(path) {
            listed(Entry::Hidden(MaskKind::File))
        } else if spec.git_metadata && dot_git {
            listed(Entry::Gitfile)
        } else if ft.is_symlink() {
            // Denied by its own name, or as a denied directory (`secrets/**` with `secrets` a
            // link to elsewhere in the roots): either way its target is masked, and the link
            // itself is stamped (a link planted under a denied name is a protected change)
            // and bound read-only over itself (retargeted, it would uncover the target in
            // the next call). A write-protected link is bound read-only the same way.
            if let Some(rule) = spec.deny.covers_dir(rel) {
                listed(Entry::DeniedLink(rule.pattern.clone()))
            } else {
                let rule = spec.write_protect.match_exact(rel)?;
                listed(Entry::ProtectedLink(rule.pattern.clone()))
            }
        } else if let Some(rule) = spec.deny.match_exact(rel) {
            listed(Entry::DeniedFile(rule.pattern.clone()))
        } else if let Some(rule) = spec.write_protect.match_exact(rel) {
            listed(Entry::ProtectedFile(rule.pattern.clone()))
        } else if spec.protected_files.iter().any(|f| f == path) {
            listed(Entry::ProtectedFile(POLICY_FILE.to_string()))
        } else if ft.is_file() && self.write_granted(rel) {
            listed(Entry::WriteMatch)
        } else if read_match {
            listed(Entry::Plain)
        } else {
            None
        }
    }

    /// Applies every entry of the replay again — but those met below a changed directory,
    /// which its seed walks instead — as [`Walk::replay`] would in each directory, and queues
    /// the directories a deny rule covers (read, as always); nothing else is visited.
    fn meet_again(&self, again: Again<'_>) {
        let below_changed = |at: &Pending| {
            let dir = self.spec.roots[at.root].join(&at.rel);
            again.changed.iter().any(|c| key_within(dir_key(&dir), c))
        };
        let met: Vec<&(Pending, Listed)> = if again.changed.is_empty() {
            again.replay.met.iter().collect()
        } else {
            again.replay.met.iter().filter(|(at, _)| !below_changed(at)).collect()
        };
        // The entries the seeds count again are no longer the replay's.
        let walked_again = self.index.map_or(0, |i| i.entries_within(again.changed));
        self.entries.store(again.replay.entries.saturating_sub(walked_again), Ordering::Relaxed);
        let covered = in_parallel(&met, |(at, listed)| {
            let rel = at.rel.join(&listed.name);
            let path = self.spec.roots[at.root].join(&rel);
            let mut subdirs = Vec::new();
            // Its directories did not change since the handle was opened (see `super::held`).
            let held = again.replay.held.get(&path);
            self.apply(at, &rel, &path, listed, &mut subdirs, held);
            subdirs.retain(|d| d.covered);
            subdirs
        });
        self.queue.lock().unwrap_or_else(|p| p.into_inner()).dirs.extend(covered.into_iter().flatten());
    }

    /// Acts on one classified entry: masks, binds, stamps, pins, or queues it. `held`: the entry's
    /// handle, when it is met again under directories the tracker vouches for.
    fn apply(
        &self,
        at: &Pending,
        rel: &Path,
        path: &Path,
        listed: &Listed,
        subdirs: &mut Vec<Pending>,
        held: Option<&Arc<Handle>>,
    ) {
        if self.recording && matters(listed) {
            self.found().met.push((at.clone(), listed.clone()));
        }
        let spec = self.spec;
        let base = &spec.roots[at.root];
        let read_match = listed.read_match && !at.read_covered;
        if read_match {
            self.found().read_matches.push(path.to_path_buf());
        }
        let next = Pending {
            root: at.root,
            rel: rel.to_path_buf(),
            depth: at.depth + 1,
            covered: false,
            read_covered: at.read_covered || read_match,
            untracked: at.untracked,
        };
        if listed.git_dir {
            self.found().git_dirs.push(path.to_path_buf());
            if spec.git_metadata {
                self.pin_down_to(base, rel);
                self.hooks_dir(path);
            }
        }
        match &listed.entry {
            Entry::Descend => subdirs.push(next),
            Entry::TooDeep => {
                self.bound(&next, format!("nested deeper than {} directories", spec.limits.max_depth))
            }
            Entry::Hidden(kind) => self.hide(path, *kind),
            Entry::DeniedDir(pattern) => {
                self.protect(path, MaskKind::Dir, pattern, false, held);
                if spec.covered_files && next.depth < spec.limits.max_depth {
                    subdirs.push(Pending { covered: true, ..next });
                }
            }
            Entry::ProtectedDir(pattern) => self.protect(path, MaskKind::Dir, pattern, true, held),
            Entry::DeniedLink(pattern) => {
                if self.stamp_only(path, pattern, false, held) {
                    self.found().read_only.push(Mask {
                        path: path.to_path_buf(),
                        kind: MaskKind::File,
                        pattern: pattern.clone(),
                        via_symlink: None,
                    });
                }
                self.masked_link_target(path, pattern);
            }
            Entry::ProtectedLink(pattern) => self.protect(path, MaskKind::File, pattern, true, held),
            Entry::DeniedFile(pattern) => self.protect(path, MaskKind::File, pattern, false, held),
            Entry::ProtectedFile(pattern) => self.protect(path, MaskKind::File, pattern, true, held),
            Entry::Gitfile => self.gitfile(base, rel),
            Entry::WriteMatch => self.found().write_matches.push(path.to_path_buf()),
            Entry::Plain => {}
        }
    }

    /// Pins `base/rel` and every directory between `base` and it (a repository's `.git`, the
    /// directory of a gitfile): none of them can be renamed or replaced in the child's view.
    fn pin_down_to(&self, base: &Path, rel: &Path) {
        let mut dir = base.to_path_buf();
        for comp in rel.components() {
            dir.push(comp);
            let identity = identity_of(&dir);
            let mut f = self.found();
            f.walk_pins.push(dir.clone());
            f.identities.extend(identity.map(|i| (dir.clone(), i)));
        }
    }

    /// The directory a repository's `core.hooksPath` names, when it lies inside a root or a
    /// writable directory: bound read-only like `.git/hooks`.
    fn hooks_dir(&self, git_dir: &Path) {
        let Some(hooks) = super::protect::hooks_path(git_dir) else { return };
        let Ok(real) = std::fs::canonicalize(&hooks) else { return };
        if self.inside(&real) && real.is_dir() && !self.spec.roots.contains(&real) {
            self.protect(&real, MaskKind::Dir, HOOKS_PATH, true, None);
        }
    }

    /// A `.git` that is not a directory: a gitfile (`gitdir: …`, a submodule's or a linked
    /// worktree's) or a symlink says where the repository is, so it is bound read-only over
    /// itself (a symlink too: the bind is made onto the link, not its target) and its directory
    /// pinned.
    fn gitfile(&self, base: &Path, rel: &Path) {
        let path = base.join(rel);
        self.protect(&path, MaskKind::File, GITFILE, true, None);
        if let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) {
            self.pin_down_to(base, parent);
        }
    }

    /// Whether `path` is hullward's own state (compared as bytes: `Path` equality walks
    /// components, too slow for every entry of a large tree).
    fn hidden(&self, path: &Path) -> bool {
        self.hidden.iter().any(|h| h.as_os_str().as_bytes() == path.as_os_str().as_bytes())
    }

    /// Whether [`ScanSpec::read`] covers `rel`: a directory as a whole, a file by a match.
    fn read_match(&self, rel: &Path, is_dir: bool) -> bool {
        let Some(read) = self.spec.read else { return false };
        if is_dir {
            read.covers_dir(rel).is_some()
        } else {
            read.match_exact(rel).is_some()
        }
    }

    /// Whether every write list covers `rel` and one of them matches it.
    fn write_granted(&self, rel: &Path) -> bool {
        let lists = &self.spec.write_lists;
        !lists.is_empty()
            && lists.iter().any(|l| l.match_exact(rel).is_some())
            && lists.iter().all(|l| l.match_covering(rel).is_some())
    }

    /// Notes where an inode of the previous walk's protected entries is now.
    fn locate(&self, path: &Path) {
        if let Ok(meta) = std::fs::symlink_metadata(path) {
            self.found().located.push(((meta.dev(), meta.ino()), path.to_path_buf()));
        }
    }

    /// hullward's own state inside a root: masked, never stamped (no program writes it).
    fn hide(&self, path: &Path, kind: MaskKind) {
        self.found().masks.push(Mask {
            path: path.to_path_buf(),
            kind,
            pattern: "hullward's own state".to_string(),
            via_symlink: None,
        });
    }

    /// Records a mask (or a read-only bind) and its stamp.
    fn protect(
        &self,
        path: &Path,
        kind: MaskKind,
        pattern: &str,
        write_protected: bool,
        held: Option<&Arc<Handle>>,
    ) {
        if !self.stamp_only(path, pattern, write_protected, held) {
            return;
        }
        let entry = Mask { path: path.to_path_buf(), kind, pattern: pattern.to_string(), via_symlink: None };
        let mut f = self.found();
        if write_protected {
            f.read_only.push(entry);
        } else {
            f.masks.push(entry);
        }
    }

    /// Records the stamp of a protected entry; false when it is gone already. Stat'ed through
    /// `held` when given, else by name — opened to be held first in a walk that is
    /// [`Walk::holding`].
    fn stamp_only(
        &self,
        path: &Path,
        pattern: &str,
        write_protected: bool,
        held: Option<&Arc<Handle>>,
    ) -> bool {
        // Whatever a handle cannot answer (none to be had, an error), the path's `stat` does: only
        // its failure means the entry is gone.
        let through = held
            .and_then(|h| Some((h.clone(), h.metadata().ok()?)))
            .or_else(|| self.holding.then(|| held::open(path)).flatten());
        let (handle, meta) = match through {
            Some((h, meta)) => (Some(h), meta),
            None => match std::fs::symlink_metadata(path) {
                Ok(meta) => (None, meta),
                Err(_) => return false,
            },
        };
        let stamped = Stamped::of(&meta, pattern.to_string(), write_protected);
        let mut found = self.found();
        found.stamps.push((path.to_path_buf(), stamped));
        if let Some(h) = handle.filter(|_| self.holding) {
            found.held.push((path.to_path_buf(), h));
        }
        true
    }

    fn inside(&self, path: &Path) -> bool {
        self.spec.roots.iter().chain(self.spec.inside).any(|r| path.starts_with(r))
    }

    fn masked_link_target(&self, link: &Path, pattern: &str) {
        let target = std::fs::canonicalize(link).ok();
        let meta = target.as_ref().and_then(|t| std::fs::metadata(t).ok());
        match (target, meta) {
            (Some(t), Some(meta)) if self.inside(&t) => {
                let mut f = self.found();
                f.identities.push((t.clone(), (meta.dev(), meta.ino())));
                f.masks.push(Mask {
                    path: t,
                    kind: kind_of(&meta),
                    pattern: pattern.to_string(),
                    via_symlink: Some(link.to_path_buf()),
                });
            }
            _ => self.found().skipped_links.push(link.to_path_buf()),
        }
    }

    /// An anchored deny pattern whose literal part passes through a symlinked directory
    /// (`link/secret.txt`, `link/**` with `link` → `real`) names a real path the walk never
    /// reaches under that name. It is resolved once, here: the real path is masked, the
    /// directories between its tree and it are pinned, and the symlink on the way is bound
    /// read-only over itself (a bind onto the link, opened without following it) with the
    /// directories above it pinned — so the program can neither move the real path away nor
    /// retarget the link for the next call. A spelling that runs into a symlink loop is noted in
    /// [`Snapshot::link_loops`]: strict mode refuses the call, naming it.
    fn literal_through_symlinks(&self) {
        for rule in self.spec.deny.rules() {
            if matches!(rule.origin, Origin::Builtin(_)) || rule.pattern.starts_with("**") {
                continue;
            }
            let pattern = rule.pattern.trim_start_matches("./");
            let literal = match pattern.strip_suffix("/**") {
                Some(prefix) => prefix,
                None => pattern,
            };
            if literal.contains(['*', '?', '[', '{', '\\']) {
                continue;
            }
            for root in self.spec.roots {
                let lexical = root.join(literal);
                let links = links_on_the_way(root, Path::new(literal));
                if links.is_empty() {
                    continue;
                }
                let real = match crate::guard::path::resolve(&lexical, root) {
                    Ok(real) => real,
                    Err(e) => {
                        self.found().link_loops.push(LinkLoop {
                            path: lexical.clone(),
                            pattern: rule.pattern.clone(),
                            reason: e.to_string(),
                        });
                        continue;
                    }
                };
                for link in &links {
                    self.pin_between(root, link);
                    self.protect(link, MaskKind::File, &rule.pattern, true, None);
                }
                let Some(tree) = self.tree_of(&real) else { continue };
                self.pin_between(&tree, &real);
                let Ok(meta) = std::fs::metadata(&real) else {
                    continue;
                };
                let mut f = self.found();
                f.identities.push((real.clone(), (meta.dev(), meta.ino())));
                f.masks.push(Mask {
                    path: real,
                    kind: kind_of(&meta),
                    pattern: rule.pattern.clone(),
                    via_symlink: Some(lexical.clone()),
                });
            }
        }
    }

    /// The root or writable directory that contains `path`, the longest first.
    fn tree_of(&self, path: &Path) -> Option<PathBuf> {
        self.spec
            .roots
            .iter()
            .chain(self.spec.inside)
            .filter(|r| path.starts_with(r))
            .max_by_key(|r| r.components().count())
            .cloned()
    }

    /// Pins every existing directory strictly between `tree` and `path`.
    fn pin_between(&self, tree: &Path, path: &Path) {
        let Ok(rel) = path.strip_prefix(tree) else { return };
        let Some(parent) = rel.parent().filter(|p| !p.as_os_str().is_empty()) else { return };
        let mut dir = tree.to_path_buf();
        for comp in parent.components() {
            dir.push(comp);
            let Ok(meta) = std::fs::symlink_metadata(&dir) else { return };
            if !meta.is_dir() {
                return;
            }
            let mut f = self.found();
            f.walk_pins.push(dir.clone());
            f.identities.push((dir.clone(), (meta.dev(), meta.ino())));
        }
    }
}

/// The first symlink among the existing directories on the way to `root/rel` (below `root`;
/// what follows it lies under its target). The last component is not looked at: a denied
/// entry that is itself a symlink is the walk's (its target masked, the link stamped as denied).
fn links_on_the_way(root: &Path, rel: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut at = root.to_path_buf();
    for comp in rel.parent().into_iter().flat_map(Path::components) {
        at.push(comp);
        match std::fs::symlink_metadata(&at) {
            Ok(m) if m.file_type().is_symlink() => {
                out.push(at.clone());
                break;
            }
            Ok(_) => {}
            Err(_) => break,
        }
    }
    out
}

/// The directories between each root and the policy files inside it (`.agent` for
/// `.agent/hullward.yaml`): pinned, so that no program renames them away and puts a policy of
/// its own in their place for the next call.
fn policy_file_pins(spec: &ScanSpec<'_>) -> Vec<PathBuf> {
    let mut pins = Vec::new();
    for file in spec.protected_files {
        let Some(root) = spec.roots.iter().find(|r| file.starts_with(r)) else { continue };
        let mut dir = file.parent();
        while let Some(d) = dir.filter(|d| d.starts_with(root) && *d != root.as_path()) {
            pins.push(d.to_path_buf());
            dir = d.parent();
        }
    }
    pins
}

/// Sorted, deduplicated pins outside every mask, at most `max` of them: past the bound, the
/// deepest are bound read-only instead (stronger than a pin, and collapsed with the other
/// read-only binds), and the walk says so.
fn bound_pins(
    mut pins: Vec<PathBuf>,
    masks: &[Mask],
    max: usize,
    read_only: &mut Vec<Mask>,
    bounded: &mut Vec<Bounded>,
) -> Vec<PathBuf> {
    pins.retain(|p| !masks.iter().any(|m| p.starts_with(&m.path)));
    pins.sort();
    pins.dedup();
    if pins.len() > max {
        let mut by_depth = pins;
        by_depth.sort_by_key(|p| p.components().count());
        let reason = format!("more than {max} pinned directories: bound read-only instead");
        for path in by_depth.split_off(max) {
            bounded.push(Bounded { path: path.clone(), reason: reason.clone() });
            read_only.push(Mask {
                path,
                kind: MaskKind::Dir,
                pattern: format!("(walk bound: {reason})"),
                via_symlink: None,
            });
        }
        pins = by_depth;
        pins.sort();
    }
    pins
}

/// Existing directories on the literal path of an anchored (not `**/`-prefixed), configured deny
/// pattern: `infra/prod/**` pins `infra` (and `infra/prod` is masked itself).
fn pins_for(roots: &[PathBuf], deny: &GlobRules, masks: &[Mask]) -> Vec<PathBuf> {
    let mut pins = Vec::new();
    for rule in deny.rules() {
        if matches!(rule.origin, Origin::Builtin(_)) || rule.pattern.starts_with("**") {
            continue;
        }
        let literal: Vec<&str> = rule
            .pattern
            .trim_start_matches("./")
            .split('/')
            .take_while(|c| !c.contains(['*', '?', '[', '{', '\\']))
            .collect();
        for root in roots {
            let mut dir = root.clone();
            // The last literal component is the protected entry itself (masked, not pinned).
            for comp in literal.iter().take(literal.len().saturating_sub(1)) {
                dir.push(comp);
                let is_dir = std::fs::symlink_metadata(&dir).map(|m| m.is_dir()).unwrap_or(false);
                if !is_dir {
                    break;
                }
                if !pins.contains(&dir) && !masks.iter().any(|m| dir.starts_with(&m.path)) {
                    pins.push(dir.clone());
                }
            }
        }
    }
    pins.sort();
    pins
}

impl Snapshot {
    /// The masked regular files inside a repository's working tree (a `.env.example` git
    /// tracks), each with the shape its stand-in copies: git compares a tracked file's stat
    /// data, and an empty mask would show as modified. Elsewhere a mask stays the empty file,
    /// which does not even give away the size.
    pub fn stand_in_shapes(&self) -> BTreeMap<PathBuf, Shape> {
        let work_trees: Vec<&Path> = self.git_dirs.iter().filter_map(|g| g.parent()).collect();
        self.masks
            .iter()
            .filter(|m| m.kind == MaskKind::File && work_trees.iter().any(|w| m.path.starts_with(w)))
            .filter_map(|m| {
                let stamp = self.stamps.get(&m.path)?.stamp;
                let meta = std::fs::symlink_metadata(&m.path).ok().filter(|meta| meta.is_file())?;
                let shape =
                    Shape { size: stamp.size, mtime_ns: stamp.mtime_ns, exec_bits: meta.mode() & 0o111 };
                Some((m.path.clone(), shape))
            })
            .collect()
    }

    /// The files whose values the output must never show: every denied entry (a directory or a
    /// special file is skipped by the reader) and the files inside denied directories — each
    /// with the version of its content the walk saw, when it stat'ed a regular file there.
    pub fn secret_files(&self) -> impl Iterator<Item = (&Path, Option<FileVersion>)> {
        let denied =
            self.stamps.iter().filter(|(_, s)| !s.write_protected).map(|(p, s)| (p.as_path(), s.version()));
        let targets = self.masks.iter().filter(|m| m.via_symlink.is_some()).map(|m| (m.path.as_path(), None));
        let covered = self.covered_files.iter().map(|f| (f.as_path(), None));
        denied.chain(targets).chain(covered)
    }

    /// Protected entries that differ in `after` (a [`rescan`] of this snapshot): new ones, ones
    /// whose identity or content changed, and ones that are gone — each with where its original
    /// inode is now when `after` saw it elsewhere. An entry that is only the moved original of
    /// another is not a change of its own. Sorted by path.
    pub fn changes_since(&self, after: &Snapshot) -> Vec<Change> {
        let mut out = Vec::new();
        // Both maps are sorted: walked in step, the entries only `after` has set aside.
        let mut later = after.stamps.iter().peekable();
        let mut only_after = Vec::new();
        for (path, before) in &self.stamps {
            while let Some(entry) = later.next_if(|(p, _)| *p < path) {
                only_after.push(entry);
            }
            let now = later.next_if(|(p, _)| *p == path).map(|(_, s)| s);
            let (kind, in_place) = match now {
                Some(now) if now.stamp == before.stamp => continue,
                Some(now) if now.stamp.inode() == before.stamp.inode() => (ChangeKind::Changed, true),
                Some(_) => (ChangeKind::Changed, false),
                None => (ChangeKind::Vanished, false),
            };
            let original = if in_place {
                None
            } else {
                after.located.get(&before.stamp.inode()).filter(|p| *p != path).cloned()
            };
            out.push(Change {
                path: path.clone(),
                kind,
                pattern: before.pattern.clone(),
                write_protected: before.write_protected,
                original,
                in_place,
            });
        }
        only_after.extend(later);
        let originals: BTreeSet<PathBuf> = out.iter().filter_map(|c| c.original.clone()).collect();
        for (path, now) in only_after {
            if originals.contains(path.as_path()) {
                continue;
            }
            out.push(Change {
                path: path.clone(),
                kind: ChangeKind::Created,
                pattern: now.pattern.clone(),
                write_protected: now.write_protected,
                original: None,
                in_place: false,
            });
        }
        out.sort_by(|a, b| a.path.cmp(&b.path));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn rules(pats: &[&str]) -> GlobRules {
        GlobRules::from_patterns(pats, Origin::Flag("--deny")).unwrap()
    }

    #[test]
    fn read_only_trees_answer_for_their_own_entries_and_stat_the_rest() {
        // Entries chosen so that a `stat` would answer the other way: the answer for them can
        // only come from how `of` told them apart.
        let trees = ReadOnlyTrees {
            dirs: vec![PathBuf::from("/no-such-dir-of-hullward")],
            others: vec![PathBuf::from("/proc")],
        };
        assert!(trees.is_dir(Path::new("/no-such-dir-of-hullward"), &Seen::default()));
        assert!(!trees.is_dir(Path::new("/proc"), &Seen::default()));
        assert!(trees.is_dir(Path::new("/proc/self"), &Seen::default()));
        assert!(!trees.is_dir(Path::new("/no-such-file-of-hullward"), &Seen::default()));
    }

    fn builtin(pats: &[&str]) -> GlobRules {
        GlobRules::from_patterns(pats, Origin::Builtin("git-metadata")).unwrap()
    }

    fn scan_with(
        root: &Path,
        deny: &GlobRules,
        protect: &GlobRules,
        limits: WalkLimits,
    ) -> Result<Snapshot, WalkError> {
        let roots = [root.to_path_buf()];
        scan(&ScanSpec { limits, ..spec(&roots, deny, protect) })
    }

    /// Rules of every kind a walk applies: deny (files and directories), write-protect, write
    /// grants and read globs.
    struct EveryKind {
        deny: GlobRules,
        protect: GlobRules,
        write: GlobRules,
        read: GlobRules,
    }

    impl EveryKind {
        fn new() -> EveryKind {
            EveryKind {
                deny: rules(&["**/.env", "**/.env.*", "secrets/**", "infra/prod/**"]),
                protect: builtin(&["**/.git/hooks", "**/.git/config"]),
                write: rules(&["**/*.txt"]),
                read: rules(&["docs/**", "**/*.md"]),
            }
        }

        fn spec<'a>(&'a self, roots: &'a [PathBuf]) -> ScanSpec<'a> {
            ScanSpec {
                write_lists: vec![&self.write],
                read: Some(&self.read),
                ..spec(roots, &self.deny, &self.protect)
            }
        }
    }

    fn spec<'a>(roots: &'a [PathBuf], deny: &'a GlobRules, protect: &'a GlobRules) -> ScanSpec<'a> {
        ScanSpec {
            roots,
            deny,
            write_protect: protect,
            protected_files: &[],
            git_metadata: true,
            hidden: &[],
            inside: &[],
            write_lists: Vec::new(),
            read: None,
            covered_files: true,
            limits: WalkLimits::default(),
        }
    }

    fn scan_deny(root: &Path, deny: &GlobRules) -> Snapshot {
        scan_with(root, deny, &GlobRules::default(), WalkLimits::default()).unwrap()
    }

    /// Lets the ctimes of a tree just made become old enough to be trusted.
    fn settle() {
        std::thread::sleep(CTIME_TICK + Duration::from_millis(5));
    }

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        for d in ["a/b", "secrets/deep", "infra/prod", "node_modules/x", "linkdir", "repo/.git/hooks"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            ".env",
            "a/b/.env.local",
            "a/b/ok.txt",
            "secrets/deep/k",
            "infra/prod/deploy.sh",
            "node_modules/x/.env",
            "repo/.git/config",
            "repo/.git/hooks/pre-commit.sample",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        (t, root)
    }

    fn rel(root: &Path, list: &[Mask]) -> Vec<(String, MaskKind)> {
        list.iter().map(|m| (m.path.strip_prefix(root).unwrap().display().to_string(), m.kind)).collect()
    }

    #[test]
    fn files_dirs_and_pins() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env", "**/.env.*", "secrets/**", "infra/prod/**"]);
        let snap = scan_deny(&root, &deny);
        assert_eq!(
            rel(&root, &snap.masks),
            vec![
                (".env".into(), MaskKind::File),
                ("a/b/.env.local".into(), MaskKind::File),
                ("infra/prod".into(), MaskKind::Dir),
                ("node_modules/x/.env".into(), MaskKind::File),
                ("secrets".into(), MaskKind::Dir),
            ]
        );
        assert_eq!(snap.pins, vec![root.join("infra"), root.join("repo"), root.join("repo/.git")]);
    }

    #[test]
    fn write_protected_entries_are_found_and_repos_remembered() {
        let (_t, root) = tree();
        let snap = scan_with(
            &root,
            &rules(&["**/.env"]),
            &builtin(&["**/.git/hooks", "**/.git/config"]),
            WalkLimits::default(),
        )
        .unwrap();
        assert_eq!(
            rel(&root, &snap.read_only),
            vec![("repo/.git/config".into(), MaskKind::File), ("repo/.git/hooks".into(), MaskKind::Dir)]
        );
        assert!(snap.git_dirs.contains(&root.join("repo/.git")));
    }

    #[test]
    fn repositories_and_policy_files_are_pinned_down_from_their_root() {
        let (_t, root) = tree();
        std::fs::create_dir_all(root.join("mods/m")).unwrap();
        std::fs::write(root.join("mods/m/.git"), "gitdir: ../../repo/.git/modules/m\n").unwrap();
        std::fs::create_dir_all(root.join(".agent")).unwrap();
        std::fs::write(root.join(".agent/h.yaml"), "").unwrap();
        let roots = [root.clone()];
        let (deny, protect) = (rules(&["**/.env"]), builtin(&["**/.git/hooks"]));
        let files = [root.join(".agent/h.yaml")];
        let snap = scan(&ScanSpec { protected_files: &files, ..spec(&roots, &deny, &protect) }).unwrap();
        let pins: Vec<String> =
            snap.pins.iter().map(|p| p.strip_prefix(&root).unwrap().display().to_string()).collect();
        assert_eq!(pins, [".agent", "mods", "mods/m", "repo", "repo/.git"]);
        assert!(snap
            .read_only
            .iter()
            .any(|m| m.path == root.join("mods/m/.git") && m.kind == MaskKind::File));
        // Past the bound, the deepest pins become read-only binds.
        let limits = WalkLimits { max_masks: 2, ..Default::default() };
        let snap =
            scan(&ScanSpec { protected_files: &files, limits, ..spec(&roots, &deny, &protect) }).unwrap();
        assert_eq!(snap.pins.len(), 2, "{:?}", snap.pins);
        assert!(snap.bounded.iter().any(|b| b.reason.contains("pinned")), "{:?}", snap.bounded);
        // Without git metadata protection, repositories are not pinned.
        let snap = scan(&ScanSpec { git_metadata: false, ..spec(&roots, &deny, &protect) }).unwrap();
        assert!(snap.pins.is_empty(), "{:?}", snap.pins);
    }

    #[test]
    fn denied_symlinks_mask_their_target_inside_and_are_noted_outside() {
        let (_t, root) = tree();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("real"), "s").unwrap();
        symlink(root.join("a/b/ok.txt"), root.join("linkdir/.env")).unwrap();
        symlink(outside.path().join("real"), root.join("a/.env")).unwrap();
        let snap = scan_deny(&root, &rules(&["**/.env"]));
        let ok = snap.masks.iter().find(|m| m.path == root.join("a/b/ok.txt")).expect("target masked");
        assert_eq!(ok.via_symlink.as_deref(), Some(root.join("linkdir/.env").as_path()));
        assert_eq!(snap.skipped_links, vec![root.join("a/.env")]);
    }

    #[test]
    fn anchored_literal_patterns_through_a_symlinked_directory_mask_the_real_path() {
        let (_t, root) = tree();
        symlink(root.join("a"), root.join("alias")).unwrap();
        let snap = scan_deny(&root, &rules(&["alias/b/ok.txt", "alias/**"]));
        assert_eq!(rel(&root, &snap.masks), vec![("a".into(), MaskKind::Dir)]);
        let snap = scan_deny(&root, &rules(&["alias/b/ok.txt"]));
        assert_eq!(rel(&root, &snap.masks), vec![("a/b/ok.txt".into(), MaskKind::File)]);
        // The real path cannot be moved away, nor the link retargeted.
        assert!(
            snap.pins.contains(&root.join("a")) && snap.pins.contains(&root.join("a/b")),
            "{:?}",
            snap.pins
        );
        assert!(
            rel(&root, &snap.read_only).contains(&("alias".into(), MaskKind::File)),
            "{:?}",
            snap.read_only
        );
        assert_eq!(
            snap.identities.get(&root.join("alias")),
            Some(&identity_of(&root.join("alias")).unwrap())
        );
        assert!(snap.link_loops.is_empty());
        // A link in a deeper directory pins the directories above it.
        std::fs::create_dir_all(root.join("deep/er")).unwrap();
        symlink(root.join("a"), root.join("deep/er/alias")).unwrap();
        let snap = scan_deny(&root, &rules(&["deep/er/alias/b/ok.txt"]));
        assert!(
            snap.pins.contains(&root.join("deep")) && snap.pins.contains(&root.join("deep/er")),
            "{:?}",
            snap.pins
        );
        // A loop on the way is noted (strict mode refuses), naming the spelled path.
        symlink(root.join("loop-b"), root.join("loop-a")).unwrap();
        symlink(root.join("loop-a"), root.join("loop-b")).unwrap();
        let snap = scan_deny(&root, &rules(&["loop-a/secret.key"]));
        assert_eq!(snap.link_loops.len(), 1, "{:?}", snap.link_loops);
        assert_eq!(snap.link_loops[0].path, root.join("loop-a/secret.key"));
        assert!(snap.link_loops[0].reason.contains("symbolic links"), "{:?}", snap.link_loops);
    }

    #[test]
    fn bounds_degrade_into_masks_of_what_was_not_walked() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env", "**/.env.*"]);
        let none = GlobRules::default();
        // Past the depth bound, the unwalked subtree is masked whole.
        let limits = WalkLimits { max_depth: 2, ..Default::default() };
        let snap = scan_with(&root, &deny, &none, limits).unwrap();
        assert!(
            snap.masks.iter().any(|m| m.path == root.join("a/b") && m.kind == MaskKind::Dir),
            "{:?}",
            snap.masks
        );
        assert!(snap.bounded.iter().any(|b| b.path == root.join("a/b") && b.reason.contains("deeper")));
        // Past the entry bound, everything not read yet is masked.
        let limits = WalkLimits { max_entries: 3, ..Default::default() };
        let snap = scan_with(&root, &deny, &none, limits).unwrap();
        assert!(!snap.bounded.is_empty());
        for dir in ["a/b", "secrets/deep", "node_modules/x"] {
            let p = root.join(dir);
            assert!(snap.masks.iter().any(|m| p.starts_with(&m.path)), "{dir} is neither walked nor masked");
        }
        // More masks than the bound: the fullest directory is masked whole.
        for i in 0..10 {
            std::fs::write(root.join(format!("a/b/.env.{i}")), "x").unwrap();
        }
        let limits = WalkLimits { max_masks: 4, ..Default::default() };
        let snap = scan_with(&root, &deny, &none, limits).unwrap();
        assert!(snap.masks.len() <= 4, "{:?}", snap.masks);
        assert!(snap.masks.iter().any(|m| m.path == root.join("a/b") && m.kind == MaskKind::Dir));
        assert!(snap.masks.iter().any(|m| m.path == root.join(".env")), "the root's own .env keeps its mask");
        // One mask per directory everywhere: they move up until they fit.
        let limits = WalkLimits { max_masks: 1, ..Default::default() };
        let snap = scan_with(&root, &deny, &none, limits).unwrap();
        assert_eq!(rel(&root, &snap.masks), vec![(String::new(), MaskKind::Dir)]);
        // An unreadable root is the one error.
        let missing = root.join("missing");
        assert!(scan_with(&missing, &deny, &none, WalkLimits::default()).is_err());
    }

    #[test]
    fn denied_directories_list_their_files_and_write_globs_their_matches() {
        let (_t, root) = tree();
        let deny = rules(&["secrets/**"]);
        let write = GlobRules::from_patterns(&["**/*.txt"], Origin::Flag("--write")).unwrap();
        let roots = [root.clone()];
        let none = GlobRules::default();
        let snap = scan(&ScanSpec { write_lists: vec![&write], ..spec(&roots, &deny, &none) }).unwrap();
        assert_eq!(snap.covered_files, vec![root.join("secrets/deep/k")]);
        assert_eq!(snap.write_matches, vec![root.join("a/b/ok.txt")]);
        let files: Vec<&Path> = snap.secret_files().map(|(f, _)| f).collect();
        assert!(files.contains(&root.join("secrets/deep/k").as_path()), "{files:?}");
    }

    /// What a walk decided, in a form two walks can be compared by.
    fn decisions(s: &Snapshot) -> String {
        let stamps: Vec<_> =
            s.stamps.iter().map(|(p, st)| (p, st.stamp, &st.pattern, st.write_protected)).collect();
        format!(
            "masks {:?}\nread-only {:?}\npins {:?}\nlinks {:?}\nstamps {stamps:?}\ngit {:?}\ncovered {:?}\nwrites {:?}\nreads {:?}\nids {:?}\nbounded {:?}",
            s.masks, s.read_only, s.pins, s.skipped_links, s.git_dirs, s.covered_files, s.write_matches,
            s.read_matches, s.identities, s.bounded
        )
    }

    /// Walks with the index of the previous walk and without any, and checks that both decide
    /// the same; returns the new index (or the old one when nothing changed).
    fn indexed_walk_matches_a_full_walk(spec: &ScanSpec<'_>, index: Option<Index>, what: &str) -> Index {
        let (indexed, fresh) = scan_indexed(spec, index.as_ref()).unwrap();
        let full = scan(spec).unwrap();
        assert_eq!(decisions(&indexed), decisions(&full), "after: {what}");
        fresh.or(index).unwrap_or_default()
    }

    type Mutation<'a> = (&'a str, Box<dyn Fn() + 'a>);

    /// The tree of [`tree`] with `repo/sub` and `out.txt` added, and a directory beside it: what
    /// [`mutations`] changes.
    fn mutable_tree() -> (tempfile::TempDir, PathBuf, tempfile::TempDir) {
        let (t, root) = tree();
        std::fs::create_dir_all(root.join("repo/sub")).unwrap();
        std::fs::write(root.join("out.txt"), "w").unwrap();
        (t, root, tempfile::tempdir().unwrap())
    }

    /// Every kind of change a tree can see between two walks, on a [`mutable_tree`] (`outside`
    /// the directory beside it).
    fn mutations<'a>(root: &'a Path, outside: &'a Path) -> Vec<Mutation<'a>> {
        vec![
            (
                "a new .env deep in an unchanged tree",
                Box::new(|| std::fs::write(root.join("a/b/.env"), "N=1").unwrap()),
            ),
            (
                "a file renamed in under a denied name",
                Box::new(|| {
                    std::fs::write(outside.join("plain"), "S=1").unwrap();
                    std::fs::rename(outside.join("plain"), root.join("a/.env.prod")).unwrap();
                }),
            ),
            (
                "a hard link under a denied name",
                Box::new(|| {
                    std::fs::hard_link(root.join("a/b/ok.txt"), root.join("node_modules/.env")).unwrap()
                }),
            ),
            (
                "a directory replaced by another",
                Box::new(|| {
                    std::fs::remove_dir_all(root.join("a/b")).unwrap();
                    std::fs::create_dir(root.join("a/b")).unwrap();
                    std::fs::write(root.join("a/b/.env.local"), "R=1").unwrap();
                }),
            ),
            (
                "a denied file rewritten in place",
                Box::new(|| std::fs::write(root.join(".env"), "longer content").unwrap()),
            ),
            (
                "a new repository",
                Box::new(|| std::fs::create_dir_all(root.join("a/new/.git/hooks")).unwrap()),
            ),
            (
                "a repository's hooks path rewritten in place",
                Box::new(|| {
                    std::fs::create_dir_all(root.join("repo/sub/hooks")).unwrap();
                    std::fs::write(root.join("repo/.git/config"), "[core]\n\thooksPath = sub/hooks\n")
                        .unwrap();
                }),
            ),
            (
                "a denied symlink planted",
                Box::new(|| symlink(root.join("a/b/ok.txt"), root.join("linkdir/.env")).unwrap()),
            ),
            (
                "a file granted by the write list",
                Box::new(|| std::fs::write(root.join("a/new.txt"), "w").unwrap()),
            ),
            (
                "a file the Read list matches",
                Box::new(|| std::fs::write(root.join("a/b/notes.md"), "r").unwrap()),
            ),
            (
                "a directory the Read list covers",
                Box::new(|| std::fs::create_dir_all(root.join("docs/x/y")).unwrap()),
            ),
            (
                "a denied directory made",
                Box::new(|| std::fs::create_dir_all(root.join("infra/prod/more")).unwrap()),
            ),
        ]
    }

    #[test]
    fn the_index_never_hides_a_change_made_between_walks() {
        let (_t, root, outside) = mutable_tree();
        let every = EveryKind::new();
        let roots = [root.clone()];
        let spec = every.spec(&roots);
        // A tree written just now is not trusted: nothing of it is recorded yet.
        let (_, fresh) = scan_indexed(&spec, None).unwrap();
        assert!(fresh.is_none_or(|i| i.is_empty()), "directories changed within a clock tick were recorded");
        settle();
        let mut index = indexed_walk_matches_a_full_walk(&spec, None, "the first walk");
        assert!(!index.is_empty());
        let (_, unchanged) = scan_indexed(&spec, Some(&index)).unwrap();
        assert!(unchanged.is_none(), "a walk of an unchanged tree rewrote the index");

        let changes = mutations(&root, outside.path());
        for (what, change) in changes {
            settle();
            index = indexed_walk_matches_a_full_walk(&spec, Some(index), "settling");
            change();
            index = indexed_walk_matches_a_full_walk(&spec, Some(index), what);
        }
        // Another policy's index is another file: the rules it was made by are part of its key.
        let other = rules(&["**/*.txt"]);
        let other_spec = ScanSpec { deny: &other, ..spec.clone() };
        assert_ne!(fingerprint(&spec), fingerprint(&other_spec));
    }

    /// A walk told that nothing changed applies what the last walk met instead of visiting a
    /// directory — and decides exactly what a full walk decides, every stamp taken anew (an
    /// in-place rewrite shows), the directories a deny rule covers read again (a file added
    /// inside one shows, though no name outside it changed).
    #[test]
    fn a_replay_decides_what_a_full_walk_decides() {
        let (_t, root) = tree();
        std::fs::create_dir_all(root.join("repo/sub")).unwrap();
        std::fs::write(root.join("docs.md"), "d").unwrap();
        let every = EveryKind::new();
        let roots = [root.clone()];
        let spec = every.spec(&roots);
        let quiet = HashSet::new();
        settle();
        let first = scan_tracked(&spec, None, Some(&quiet), None).unwrap();
        let (index, replay) = (first.index.unwrap(), first.replay.expect("a trusted walk can be replayed"));
        let again = scan_tracked(&spec, Some(&index), Some(&quiet), Some(&replay)).unwrap();
        assert!(again.index.is_none(), "a replay rewrote the index");
        assert!(Arc::ptr_eq(again.replay.as_ref().unwrap(), &replay), "a replay made another");
        assert!(
            Arc::ptr_eq(&again.snapshot.dirs, &first.snapshot.dirs),
            "a replay listed the directories again"
        );
        assert_eq!(decisions(&again.snapshot), decisions(&scan(&spec).unwrap()));

        std::fs::write(root.join("a/b/.env.local"), "rewritten in place, longer").unwrap();
        std::fs::write(root.join("secrets/deep/new"), "S=2").unwrap();
        let again = scan_tracked(&spec, Some(&index), Some(&quiet), Some(&replay)).unwrap();
        assert_eq!(decisions(&again.snapshot), decisions(&scan(&spec).unwrap()));
        assert!(again.snapshot.covered_files.contains(&root.join("secrets/deep/new")));

        // A change under the roots: the replay is not used, the directories are walked.
        std::fs::write(root.join("a/.env"), "N=1").unwrap();
        let changed: HashSet<Vec<u8>> = [dir_key(&root.join("a")).to_vec()].into();
        let walked = scan_tracked(&spec, Some(&index), Some(&changed), Some(&replay)).unwrap();
        assert!(walked.snapshot.stamps.contains_key(&root.join("a/.env")), "the replay hid a new .env");
        // `a` changed within this clock tick: this walk cannot be replayed itself.
        assert!(walked.replay.is_none());
        // Nor without the tracker, nor without the index the replay goes with.
        for (index, tracked) in [(Some(&index), None), (None, Some(&quiet))] {
            let walked = scan_tracked(&spec, index, tracked, Some(&replay)).unwrap();
            assert!(walked.snapshot.stamps.contains_key(&root.join("a/.env")), "the replay hid a new .env");
        }
    }

    /// Every directory under `dir` (itself included, no symlink followed) and its ctime.
    fn dir_ctimes(dir: &Path) -> HashMap<Vec<u8>, i128> {
        let mut found = HashMap::new();
        let mut pending = vec![dir.to_path_buf()];
        while let Some(d) = pending.pop() {
            found.insert(dir_key(&d).to_vec(), ctime_ns(&std::fs::symlink_metadata(&d).unwrap()));
            for entry in std::fs::read_dir(&d).unwrap() {
                let entry = entry.unwrap();
                if entry.file_type().unwrap().is_dir() {
                    pending.push(entry.path());
                }
            }
        }
        found
    }

    /// With some directories changed, a walk applies what the last walk met everywhere else and
    /// walks only those directories — and decides exactly what a full walk decides, after every
    /// kind of change, with the same directories and the same index; the replay it leaves
    /// serves the next walk the same way. The changed directories are those whose names changed
    /// (their ctime moved, or they are new), as the tracker reports them.
    #[test]
    fn a_partial_replay_decides_what_a_full_walk_decides() {
        let (_t, root, outside) = mutable_tree();
        let every = EveryKind::new();
        let roots = [root.clone()];
        let spec = every.spec(&roots);
        settle();
        let first = scan_tracked(&spec, None, Some(&HashSet::new()), None).unwrap();
        let (mut index, mut replay) = (first.index.unwrap(), first.replay.unwrap());
        let mut partial_walks = 0;
        for (what, change) in mutations(&root, outside.path()) {
            let before = dir_ctimes(&root);
            change();
            let after = dir_ctimes(&root);
            let changed: HashSet<Vec<u8>> =
                after.iter().filter(|(d, t)| before.get(*d) != Some(t)).map(|(d, _)| d.clone()).collect();
            settle();
            let partial = outermost_changes(&changed, &roots).is_some_and(|c| !c.is_empty());
            partial_walks += usize::from(partial);
            let walked = scan_tracked(&spec, Some(&index), Some(&changed), Some(&replay)).unwrap();
            let full = scan_tracked(&spec, None, None, None).unwrap();
            assert_eq!(decisions(&walked.snapshot), decisions(&full.snapshot), "{what}");
            assert_eq!(walked.snapshot.dirs, full.snapshot.dirs, "{what}: the directories");
            let next = walked.index.unwrap_or(index);
            assert_eq!(Some(&next), full.index.as_ref(), "{what}: the index");
            index = next;
            replay = walked.replay.unwrap_or_else(|| panic!("{what}: a settled walk leaves a replay"));
            if partial {
                assert_eq!(replay.entries, full.replay.unwrap().entries, "{what}: the entries counted");
            }
        }
        assert!(partial_walks >= 8, "only {partial_walks} changes were walked in part");
    }

    /// A walk that read a directory it cannot trust (changed within a clock tick) or stopped at
    /// a bound leaves nothing to replay: the next walk visits the directories.
    #[test]
    fn an_untrusted_or_bounded_walk_leaves_no_replay() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env", "**/.env.*", "secrets/**"]);
        let protect = builtin(&[]);
        let roots = [root.clone()];
        let spec = spec(&roots, &deny, &protect);
        let quiet = HashSet::new();
        assert!(scan_tracked(&spec, None, Some(&quiet), None).unwrap().replay.is_none(), "fresh directories");
        settle();
        assert!(scan_tracked(&spec, None, Some(&quiet), None).unwrap().replay.is_some());
        let bounded =
            ScanSpec { limits: WalkLimits { max_entries: 3, ..WalkLimits::default() }, ..spec.clone() };
        assert!(scan_tracked(&bounded, None, Some(&quiet), None).unwrap().replay.is_none(), "a bounded walk");
        let shallow = ScanSpec { limits: WalkLimits { max_depth: 2, ..WalkLimits::default() }, ..spec };
        assert!(scan_tracked(&shallow, None, Some(&quiet), None).unwrap().replay.is_none(), "a deep tree");
    }

    #[test]
    fn the_index_round_trips_through_the_state_directory() {
        let (_t, root) = tree();
        settle();
        let deny = rules(&["**/.env"]);
        let roots = [root.clone()];
        let none = GlobRules::default();
        let spec = spec(&roots, &deny, &none);
        let home = tempfile::tempdir().unwrap();
        let store = Store::open(home.path(), fingerprint(&spec));
        let (_, index) = scan_indexed(&spec, None).unwrap();
        let loaded = Store::open(home.path(), fingerprint(&spec));
        store.save(index.unwrap()).unwrap();
        let loaded = loaded.load().unwrap();
        std::fs::write(root.join("a/.env"), "N=1").unwrap();
        let (after, _) = scan_indexed(&spec, Some(&loaded)).unwrap();
        assert!(after.masks.iter().any(|m| m.path == root.join("a/.env")), "{:?}", after.masks);
    }

    #[test]
    fn rescan_reads_only_changed_directories_and_finds_the_same_changes() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env", "secrets2/**"]);
        let protect = builtin(&["**/.git/hooks", "**/.git/config"]);
        let roots = [root.clone()];
        let spec = ScanSpec { covered_files: false, ..spec(&roots, &deny, &protect) };
        settle();
        let before = scan(&spec).unwrap();
        let quiet = rescan(&spec, &before).unwrap();
        assert!(before.changes_since(&quiet).is_empty());
        assert!(
            quiet.entries_seen < before.entries_seen / 2,
            "{} vs {}",
            quiet.entries_seen,
            before.entries_seen
        );
        // A program that sets the directory's mtime back does not hide the new entry: the walk
        // compares change times.
        let old_mtime = std::fs::metadata(root.join("a/b")).unwrap().modified().unwrap();
        std::fs::write(root.join("a/b/.env"), "NEW=1").unwrap();
        std::fs::File::open(root.join("a/b"))
            .unwrap()
            .set_times(std::fs::FileTimes::new().set_modified(old_mtime))
            .unwrap();
        std::fs::create_dir_all(root.join("new/deep")).unwrap();
        std::fs::write(root.join("new/deep/.env"), "X=1").unwrap();
        std::fs::create_dir(root.join("secrets2")).unwrap();
        let after = rescan(&spec, &before).unwrap();
        let full = scan(&spec).unwrap();
        let names = |c: Vec<Change>| -> Vec<String> {
            c.iter().map(|c| c.path.strip_prefix(&root).unwrap().display().to_string()).collect()
        };
        assert_eq!(names(before.changes_since(&after)), ["a/b/.env", "new/deep/.env", "secrets2"]);
        assert_eq!(names(before.changes_since(&after)), names(before.changes_since(&full)));
    }

    #[test]
    fn a_change_below_unchanged_directories_is_found_whatever_the_roots_spelling() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env"]);
        let none = GlobRules::default();
        for spelled in [root.clone(), PathBuf::from(format!("{}/", root.display()))] {
            settle();
            let roots = [spelled.clone()];
            let spec = spec(&roots, &deny, &none);
            let before = scan(&spec).unwrap();
            let (_, index) = scan_indexed(&spec, None).unwrap();
            let index = index.expect("a settled tree is recorded");
            // Only `a/b` changes: the root and `a` keep their ctimes, so both walks reach `a/b`
            // through what they recorded of them.
            let root_ctime = std::fs::metadata(&root).unwrap().ctime_nsec();
            std::fs::write(root.join("a/b/.env"), "D=1").unwrap();
            assert_eq!(std::fs::metadata(&root).unwrap().ctime_nsec(), root_ctime);
            let after = rescan(&spec, &before).unwrap();
            let changes: Vec<PathBuf> = before.changes_since(&after).into_iter().map(|c| c.path).collect();
            assert_eq!(changes, [root.join("a/b/.env")], "rescan under {}", spelled.display());
            let (indexed, _) = scan_indexed(&spec, Some(&index)).unwrap();
            assert!(
                indexed.masks.iter().any(|m| m.path == root.join("a/b/.env")),
                "indexed walk under {}: {:?}",
                spelled.display(),
                indexed.masks
            );
            std::fs::remove_file(root.join("a/b/.env")).unwrap();
        }
    }

    proptest::proptest! {
        #[test]
        fn path_order_is_the_order_of_components(
            a in proptest::collection::vec("[a-c./_-]{1,3}", 0..5),
            b in proptest::collection::vec("[a-c./_-]{1,3}", 0..5),
        ) {
            let path = |names: &[String]| {
                let names = names.iter().map(|n| n.replace('/', "~")).filter(|n| n != "." && n != "..");
                PathBuf::from("/").join(names.collect::<Vec<_>>().join("/"))
            };
            let (a, b) = (path(&a), path(&b));
            proptest::prop_assert_eq!(path_order(&a, &b), a.cmp(&b), "{} {}", a.display(), b.display());
        }
    }

    #[test]
    fn in_parallel_keeps_the_order_of_the_items() {
        for n in [0, 1, 63, 255, 256, 1000, 4097] {
            let items: Vec<usize> = (0..n).collect();
            assert_eq!(
                in_parallel(&items, |i| i * 2),
                items.iter().map(|i| i * 2).collect::<Vec<_>>(),
                "{n}"
            );
        }
    }

    #[test]
    fn in_step_finds_what_a_search_finds() {
        let keys = ["/a", "/a/b", "/a-b", "/ab", "/b/c", "/d/e/f"];
        let map: BTreeMap<PathBuf, usize> =
            keys.iter().enumerate().map(|(i, k)| (PathBuf::from(k), i)).collect();
        let mut paths: Vec<PathBuf> =
            ["/", "/a", "/a/b", "/a/b/c", "/a-b", "/aa", "/ab", "/b", "/b/c", "/c", "/d/e/f", "/z"]
                .map(PathBuf::from)
                .to_vec();
        paths.sort();
        let found = in_step(paths.iter().map(PathBuf::as_path), &map);
        assert_eq!(found.len(), paths.len());
        for (p, v) in found {
            assert_eq!(v, map.get(p), "{}", p.display());
        }
    }

    #[test]
    fn ancestors_and_key_within_agree_with_paths() {
        let keys: Vec<&[u8]> = ancestors(b"/a/bc/d").collect();
        assert_eq!(keys, [&b"/"[..], b"/a", b"/a/bc"]);
        assert_eq!(ancestors(b"/").count(), 0);
        assert_eq!(ancestors(b"/a").collect::<Vec<_>>(), [&b"/"[..]]);
        for (key, outer) in
            [("/a/b", "/a"), ("/a", "/a"), ("/ab", "/a"), ("/a", "/"), ("/", "/"), ("/a", "/a/b")]
        {
            let by_path = Path::new(key).starts_with(outer);
            assert_eq!(key_within(key.as_bytes(), outer.as_bytes()), by_path, "{key} within {outer}");
        }
    }

    #[test]
    fn dir_keys_differ_by_nothing_but_trailing_slashes() {
        assert_eq!(dir_key(Path::new("/w/a/")), b"/w/a");
        assert_eq!(dir_key(Path::new("/w/a")), b"/w/a");
        assert_eq!(dir_key(Path::new("/")), b"/");
        assert_eq!(dir_key(&Path::new("/w").join("")), dir_key(Path::new("/w/x").parent().unwrap()));
    }

    #[test]
    fn changes_since_reports_created_changed_and_vanished_entries() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env", "**/.env.*", "secrets2/**", "infra/prod/**"]);
        let protect = builtin(&["**/.git/hooks", "**/.git/config"]);
        let roots = [root.clone()];
        let spec = spec(&roots, &deny, &protect);
        let before = scan(&spec).unwrap();
        std::fs::write(root.join("a/.env"), "NEW=1").unwrap();
        // Rewritten in place: its directory's ctime does not move, the file's own stamp does.
        std::fs::write(root.join(".env"), "changed content").unwrap();
        std::fs::create_dir(root.join("secrets2")).unwrap();
        std::fs::write(root.join("repo/.git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        std::fs::create_dir_all(root.join("new/.git/hooks")).unwrap();
        // A protected directory moved away with its parent, and one put in its place.
        std::fs::rename(root.join("infra"), root.join("infra-old")).unwrap();
        std::fs::create_dir_all(root.join("infra/prod")).unwrap();
        // A protected file moved away with its parent, nothing in its place.
        std::fs::rename(root.join("a/b"), root.join("a/moved")).unwrap();
        let after = rescan(&spec, &before).unwrap();
        let got: Vec<(String, ChangeKind, Option<String>)> = before
            .changes_since(&after)
            .iter()
            .map(|c| {
                let rel = |p: &Path| p.strip_prefix(&root).unwrap().display().to_string();
                (rel(&c.path), c.kind, c.original.as_deref().map(rel))
            })
            .collect();
        use ChangeKind::*;
        assert_eq!(
            got,
            vec![
                (".env".into(), Changed, None),
                ("a/.env".into(), Created, None),
                ("a/b/.env.local".into(), Vanished, Some("a/moved/.env.local".into())),
                ("infra/prod".into(), Changed, Some("infra-old/prod".into())),
                ("new/.git/hooks".into(), Created, None),
                ("repo/.git/config".into(), Changed, None),
                ("secrets2".into(), Created, None),
            ]
        );
    }
}
