//! Expands the deny globs over the roots into the list of mount masks (and the pinned ancestors
//! of anchored patterns) that the child mounts.
//!
//! Landlock only grants; it cannot deny `.env` inside a granted workspace. So before each call the
//! roots are walked once (in parallel, symlinks never followed, depth and entry count bounded) and
//! every file or directory a deny rule covers becomes a [`Mask`]: the child mounts an empty
//! read-only mode-000 file or directory over it. A directory covered as a whole (`secrets/**`)
//! is masked once and not descended into. A denied *symlink* has its target masked when that
//! target lies inside a root or a writable directory (elsewhere Landlock already refuses it).
//!
//! The walk **fails closed**: a directory it cannot read, or a tree larger than the bounds, is an
//! error and nothing runs. The same walk, run again after the call, finds protected files that the
//! call created or changed ([`Snapshot::changes_since`]).

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use crate::policy::{GlobRules, Origin};

/// Bounds of the walk.
#[derive(Debug, Clone, Copy)]
pub struct WalkLimits {
    pub max_depth: usize,
    pub max_entries: usize,
    pub max_masks: usize,
}

impl Default for WalkLimits {
    fn default() -> Self {
        WalkLimits { max_depth: 64, max_entries: 2_000_000, max_masks: 20_000 }
    }
}

/// What a mask covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum MaskKind {
    File,
    Dir,
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

/// Identity and content stamp of a protected file, for the after-call comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i128,
}

/// The protected entries found under the roots at one moment.
#[derive(Debug, Clone, Default)]
pub struct Snapshot {
    pub masks: Vec<Mask>,
    /// Directories self-bind-mounted so that they cannot be renamed away (anchored patterns).
    pub pins: Vec<PathBuf>,
    /// Denied symlinks whose targets are outside every root (Landlock refuses those).
    pub skipped_links: Vec<PathBuf>,
    pub stamps: BTreeMap<PathBuf, Stamp>,
    pub entries_seen: usize,
}

/// A protected file created or changed during a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    pub created: bool,
    pub pattern: String,
}

/// Why the walk refused.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    #[error("cannot walk '{}' to expand the deny rules: {reason}", path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("more than {limit} entries under the roots; narrow the sandbox root (the deny rules could not be expanded)")]
    TooManyEntries { limit: usize },
    #[error("more than {limit} protected paths to mask; deny their parent directory instead")]
    TooManyMasks { limit: usize },
}

#[derive(Default)]
struct Found {
    masks: Vec<Mask>,
    skipped_links: Vec<PathBuf>,
    stamps: Vec<(PathBuf, Stamp)>,
    error: Option<WalkError>,
}

fn stamp(meta: &std::fs::Metadata) -> Stamp {
    Stamp {
        dev: meta.dev(),
        ino: meta.ino(),
        size: meta.size(),
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
    }
}

/// Directories waiting to be read, shared by the walking threads.
struct Queue {
    /// (root index, directory relative to that root, depth).
    dirs: Vec<(usize, PathBuf, usize)>,
    /// Directories being read right now.
    active: usize,
    stop: bool,
}

struct Walk<'a> {
    roots: &'a [PathBuf],
    deny: &'a GlobRules,
    inside: &'a [PathBuf],
    limits: WalkLimits,
    queue: Mutex<Queue>,
    ready: Condvar,
    found: Mutex<Found>,
    entries: AtomicUsize,
}

/// Pending directories above which more threads join the walk.
const PARALLEL_THRESHOLD: usize = 32;

/// Walks `roots` (the sandbox roots and writable host directories) and returns every protected
/// entry. `inside` are the directories a symlink target must lie in to be masked.
///
/// Small trees are walked on the calling thread alone; once enough directories are pending,
/// helper threads join (work queue, no thread per directory).
pub fn scan(
    roots: &[PathBuf],
    deny: &GlobRules,
    inside: &[PathBuf],
    limits: WalkLimits,
) -> Result<Snapshot, WalkError> {
    let walk = Walk {
        roots,
        deny,
        inside,
        limits,
        queue: Mutex::new(Queue {
            dirs: (0..roots.len()).map(|i| (i, PathBuf::new(), 0)).collect(),
            active: 0,
            stop: false,
        }),
        ready: Condvar::new(),
        found: Mutex::new(Found::default()),
        entries: AtomicUsize::new(0),
    };
    let helpers = std::thread::available_parallelism().map_or(1, |n| n.get().min(8)) - 1;
    std::thread::scope(|scope| {
        let mut spawned = 0;
        walk.work(|pending| {
            while pending > PARALLEL_THRESHOLD && spawned < helpers {
                spawned += 1;
                scope.spawn(|| walk.work(|_| {}));
            }
        });
    });
    let found = walk.found.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = found.error {
        return Err(e);
    }
    let mut masks = found.masks;
    masks.sort_by(|a, b| a.path.cmp(&b.path).then(a.kind.cmp(&b.kind)));
    masks.dedup_by(|a, b| a.path == b.path);
    // A mask inside a masked directory is redundant (and would fail: the directory is empty).
    let dirs: Vec<PathBuf> =
        masks.iter().filter(|m| m.kind == MaskKind::Dir).map(|m| m.path.clone()).collect();
    masks.retain(|m| !dirs.iter().any(|d| m.path != *d && m.path.starts_with(d)));
    if masks.len() > limits.max_masks {
        return Err(WalkError::TooManyMasks { limit: limits.max_masks });
    }
    let pins = pins_for(roots, deny, &masks);
    Ok(Snapshot {
        masks,
        pins,
        skipped_links: found.skipped_links,
        stamps: found.stamps.into_iter().collect(),
        entries_seen: walk.entries.load(Ordering::Relaxed),
    })
}

impl Walk<'_> {
    /// Takes directories from the queue until none is left anywhere; `on_pending` is told how
    /// many are waiting after each directory (to decide on more threads).
    fn work(&self, mut on_pending: impl FnMut(usize)) {
        loop {
            let (root, rel, depth) = {
                let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
                loop {
                    if q.stop {
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
                    q = self.ready.wait(q).unwrap_or_else(|p| p.into_inner());
                }
            };
            let result = self.read_dir(root, &rel, depth);
            let mut q = self.queue.lock().unwrap_or_else(|p| p.into_inner());
            q.active -= 1;
            match result {
                Ok(subdirs) => q.dirs.extend(subdirs.into_iter().map(|d| (root, d, depth + 1))),
                Err(e) => {
                    q.stop = true;
                    self.found.lock().unwrap_or_else(|p| p.into_inner()).error.get_or_insert(e);
                }
            }
            let pending = q.dirs.len();
            drop(q);
            self.ready.notify_all();
            on_pending(pending);
        }
    }

    /// Reads one directory; returns its subdirectories to descend into.
    fn read_dir(&self, root: usize, rel: &Path, depth: usize) -> Result<Vec<PathBuf>, WalkError> {
        let base = &self.roots[root];
        let dir = base.join(rel);
        let unreadable = |path: &Path, e: std::io::Error| WalkError::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && depth > 0 => return Ok(Vec::new()),
            Err(e) => return Err(unreadable(&dir, e)),
        };
        let mut subdirs = Vec::new();
        let mut child = rel.to_path_buf();
        for entry in entries {
            let entry = match entry {
                Ok(e) => e,
                Err(e) => return Err(unreadable(&dir, e)),
            };
            if self.entries.fetch_add(1, Ordering::Relaxed) >= self.limits.max_entries {
                return Err(WalkError::TooManyEntries { limit: self.limits.max_entries });
            }
            let ft = match entry.file_type() {
                Ok(ft) => ft,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(unreadable(&entry.path(), e)),
            };
            child.push(entry.file_name());
            if ft.is_dir() {
                if let Some(rule) = self.deny.covers_dir(&child) {
                    self.push_mask(base.join(&child), MaskKind::Dir, &rule.pattern, None);
                } else if depth + 1 < self.limits.max_depth {
                    subdirs.push(child.clone());
                }
            } else if ft.is_symlink() {
                // Denied by its own name, or as a denied directory (`secrets/**` with `secrets` a
                // link to elsewhere in the roots): either way its target is masked.
                if let Some(rule) = self.deny.covers_dir(&child) {
                    self.masked_link_target(&base.join(&child), &rule.pattern);
                }
            } else if let Some(rule) = self.deny.match_exact(&child) {
                let path = base.join(&child);
                {
                    match std::fs::symlink_metadata(&path) {
                        Ok(meta) => {
                            let mut f = self.found.lock().unwrap_or_else(|p| p.into_inner());
                            f.stamps.push((path.clone(), stamp(&meta)));
                            f.masks.push(Mask {
                                path,
                                kind: MaskKind::File,
                                pattern: rule.pattern.clone(),
                                via_symlink: None,
                            });
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(unreadable(&path, e)),
                    }
                }
            }
            child.pop();
        }
        Ok(subdirs)
    }

    fn push_mask(&self, path: PathBuf, kind: MaskKind, pattern: &str, via: Option<PathBuf>) {
        let mut f = self.found.lock().unwrap_or_else(|p| p.into_inner());
        f.masks.push(Mask { path, kind, pattern: pattern.to_string(), via_symlink: via });
    }

    fn masked_link_target(&self, link: &Path, pattern: &str) {
        let target = std::fs::canonicalize(link).ok();
        let kind = target.as_ref().and_then(|t| std::fs::metadata(t).ok()).map(|m| {
            if m.is_dir() {
                MaskKind::Dir
            } else {
                MaskKind::File
            }
        });
        match (target, kind) {
            (Some(t), Some(kind)) if self.roots.iter().chain(self.inside).any(|r| t.starts_with(r)) => {
                self.push_mask(t, kind, pattern, Some(link.to_path_buf()))
            }
            _ => self.found.lock().unwrap_or_else(|p| p.into_inner()).skipped_links.push(link.to_path_buf()),
        }
    }
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
    /// Protected files present in `after` that are new, or whose identity or content stamp
    /// changed, relative to `self`.
    pub fn changes_since(&self, after: &Snapshot) -> Vec<Change> {
        let pattern_of = |p: &Path| {
            after.masks.iter().find(|m| m.path == p).map(|m| m.pattern.clone()).unwrap_or_default()
        };
        after
            .stamps
            .iter()
            .filter_map(|(path, st)| match self.stamps.get(path) {
                None => Some(Change { path: path.clone(), created: true, pattern: pattern_of(path) }),
                Some(old) if old != st => {
                    Some(Change { path: path.clone(), created: false, pattern: pattern_of(path) })
                }
                Some(_) => None,
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::GlobRule;
    use std::os::unix::fs::symlink;

    fn rules(pats: &[&str]) -> GlobRules {
        GlobRules::new(
            pats.iter()
                .map(|p| GlobRule { pattern: p.to_string(), origin: Origin::Flag("--deny") })
                .collect(),
        )
        .unwrap()
    }

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        for d in ["a/b", "secrets/deep", "infra/prod", "node_modules/x", "linkdir"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        for f in [
            ".env",
            "a/b/.env.local",
            "a/b/ok.txt",
            "secrets/deep/k",
            "infra/prod/deploy.sh",
            "node_modules/x/.env",
        ] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        (t, root)
    }

    #[test]
    fn files_dirs_and_depth() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env", "**/.env.*", "secrets/**", "infra/prod/**"]);
        let snap = scan(std::slice::from_ref(&root), &deny, &[], WalkLimits::default()).unwrap();
        let got: Vec<(String, MaskKind)> = snap
            .masks
            .iter()
            .map(|m| (m.path.strip_prefix(&root).unwrap().display().to_string(), m.kind))
            .collect();
        assert_eq!(
            got,
            vec![
                (".env".into(), MaskKind::File),
                ("a/b/.env.local".into(), MaskKind::File),
                ("infra/prod".into(), MaskKind::Dir),
                ("node_modules/x/.env".into(), MaskKind::File),
                ("secrets".into(), MaskKind::Dir),
            ]
        );
        assert_eq!(snap.pins, vec![root.join("infra")]);
    }

    #[test]
    fn denied_symlinks_mask_their_target_inside_and_are_noted_outside() {
        let (_t, root) = tree();
        let outside = tempfile::tempdir().unwrap();
        std::fs::write(outside.path().join("real"), "s").unwrap();
        symlink(root.join("a/b/ok.txt"), root.join("linkdir/.env")).unwrap();
        symlink(outside.path().join("real"), root.join("a/.env")).unwrap();
        let deny = rules(&["**/.env"]);
        let snap = scan(std::slice::from_ref(&root), &deny, &[], WalkLimits::default()).unwrap();
        let ok = snap.masks.iter().find(|m| m.path == root.join("a/b/ok.txt")).expect("target masked");
        assert_eq!(ok.via_symlink.as_deref(), Some(root.join("linkdir/.env").as_path()));
        assert_eq!(snap.skipped_links, vec![root.join("a/.env")]);
    }

    #[test]
    fn bounds_fail_closed() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env"]);
        let limits = WalkLimits { max_entries: 3, ..Default::default() };
        assert!(matches!(
            scan(std::slice::from_ref(&root), &deny, &[], limits),
            Err(WalkError::TooManyEntries { .. })
        ));
        let limits = WalkLimits { max_masks: 1, ..Default::default() };
        assert!(matches!(
            scan(std::slice::from_ref(&root), &deny, &[], limits),
            Err(WalkError::TooManyMasks { .. })
        ));
    }

    #[test]
    fn changes_since_reports_created_and_modified_files() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env"]);
        let before = scan(std::slice::from_ref(&root), &deny, &[], WalkLimits::default()).unwrap();
        std::fs::write(root.join("a/.env"), "NEW=1").unwrap();
        std::fs::write(root.join(".env"), "changed content").unwrap();
        let after = scan(std::slice::from_ref(&root), &deny, &[], WalkLimits::default()).unwrap();
        let mut changes = before.changes_since(&after);
        changes.sort_by(|a, b| a.path.cmp(&b.path));
        assert_eq!(changes.len(), 2, "{changes:?}");
        assert!(!changes[0].created && changes[0].path == root.join(".env"));
        assert!(changes[1].created && changes[1].path == root.join("a/.env"));
    }
}
