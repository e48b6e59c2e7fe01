//! Expands the deny globs (and the write-protect globs) over the roots into what the child's view
//! must cover: mount masks, read-only binds, and pinned ancestors.
//!
//! Landlock only grants; it cannot deny `.env` inside a granted workspace, nor forbid writing
//! `.git/hooks` inside a writable one. So before each call the roots are walked once (symlinks
//! never followed; in parallel once the tree is large; depth and entry count bounded) and:
//! * every file or directory a deny rule covers becomes a [`Mask`] — an empty read-only mode-000
//!   file or directory mounted over it; a directory covered as a whole (`secrets/**`) is masked
//!   once and not descended into; a denied *symlink* has its target masked when that target lies
//!   inside a root or a writable directory (elsewhere it is not even in the child's view);
//!   an anchored literal pattern reached through a symlinked directory (`link/secret.txt`) masks
//!   the real path;
//! * every entry a write-protect rule covers (`.git/hooks`, `.git/config`, the policy's own
//!   files inside a root) is bound read-only over itself;
//! * the ancestors of anchored deny patterns are pinned (self-bind) so they cannot be renamed.
//!
//! The walk **fails closed**: a directory it cannot read, a tree deeper or larger than the bounds,
//! is an error and nothing runs. The same walk after the call finds protected entries that the call
//! created or changed ([`Snapshot::changes_since`]).

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex};

use crate::policy::{GlobRules, Origin, Policy};

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

/// A stamped protected entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stamped {
    pub stamp: Stamp,
    pub pattern: String,
    /// Write-protected (readable), as opposed to denied.
    pub write_protected: bool,
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
    /// change keeps it, so the walk after the call reads only the ones that changed.
    pub dirs: BTreeMap<PathBuf, i128>,
    pub entries_seen: usize,
}

/// A protected entry created or changed during a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    pub path: PathBuf,
    pub created: bool,
    pub pattern: String,
    pub write_protected: bool,
}

/// Why the walk refused.
#[derive(Debug, thiserror::Error)]
pub enum WalkError {
    #[error("cannot walk '{}' to expand the deny rules: {reason}", path.display())]
    Unreadable { path: PathBuf, reason: String },
    #[error("more than {limit} entries under the roots; narrow the sandbox root (the deny rules could not be expanded)")]
    TooManyEntries { limit: usize },
    #[error("'{}' is nested deeper than {limit} directories; the deny rules cannot be expanded below it", path.display())]
    TooDeep { path: PathBuf, limit: usize },
    #[error("more than {limit} protected paths to mask; deny their parent directory instead")]
    TooManyMasks { limit: usize },
}

/// What to walk and what to look for.
#[derive(Debug, Clone, Copy)]
pub struct ScanSpec<'a> {
    /// The sandbox roots and writable host directories.
    pub roots: &'a [PathBuf],
    pub deny: &'a GlobRules,
    pub write_protect: &'a GlobRules,
    /// Files protected by path (the policy's own config and profile files).
    pub protected_files: &'a [PathBuf],
    /// Directories a denied symlink's target must lie in to be masked.
    pub inside: &'a [PathBuf],
    pub limits: WalkLimits,
}

/// The walk a policy asks for, over `roots`.
pub fn scan_policy(policy: &Policy, roots: &[PathBuf]) -> Result<Snapshot, WalkError> {
    scan(&policy_spec(policy, roots))
}

/// The walk after a call, over the same `roots` as `previous` (see [`rescan`]).
pub fn rescan_policy(policy: &Policy, roots: &[PathBuf], previous: &Snapshot) -> Result<Snapshot, WalkError> {
    rescan(&policy_spec(policy, roots), previous)
}

fn policy_spec<'a>(policy: &'a Policy, roots: &'a [PathBuf]) -> ScanSpec<'a> {
    ScanSpec {
        roots,
        deny: &policy.deny,
        write_protect: &policy.write_protect,
        protected_files: &policy.files,
        inside: &policy.sandbox.writable,
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
    dirs: Vec<(PathBuf, i128)>,
    /// Directories not read again because their listing did not change since the last walk.
    unchanged: Vec<PathBuf>,
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

/// Directories waiting to be read, shared by the walking threads.
struct Queue {
    /// (root index, directory relative to that root, depth).
    dirs: Vec<(usize, PathBuf, usize)>,
    /// Directories being read right now.
    active: usize,
    stop: bool,
}

struct Walk<'a> {
    spec: &'a ScanSpec<'a>,
    /// The last walk's snapshot, to skip directories whose listing did not change.
    previous: Option<&'a Snapshot>,
    /// The previous walk's subdirectories of each directory.
    children: BTreeMap<&'a Path, Vec<&'a Path>>,
    queue: Mutex<Queue>,
    ready: Condvar,
    found: Mutex<Found>,
    entries: AtomicUsize,
}

/// Pending directories above which more threads join the walk.
const PARALLEL_THRESHOLD: usize = 32;

/// Walks the roots and returns every protected entry. Small trees are walked on the calling
/// thread alone; once enough directories are pending, helper threads join (one work queue).
pub fn scan(spec: &ScanSpec<'_>) -> Result<Snapshot, WalkError> {
    scan_since(spec, None)
}

/// The walk after a call: like [`scan`], but a directory whose change time (ctime) is the one
/// `previous` recorded has the same listing — adding, removing or renaming an entry moves it, and
/// no program can set it back — so it is not read again; its subdirectories are still visited
/// and its protected entries carried over. (What is inside a mask or a read-only bind cannot
/// change during the call.)
pub fn rescan(spec: &ScanSpec<'_>, previous: &Snapshot) -> Result<Snapshot, WalkError> {
    scan_since(spec, Some(previous))
}

fn scan_since(spec: &ScanSpec<'_>, previous: Option<&Snapshot>) -> Result<Snapshot, WalkError> {
    let mut children: BTreeMap<&Path, Vec<&Path>> = BTreeMap::new();
    for dir in previous.iter().flat_map(|p| p.dirs.keys()) {
        if let Some(parent) = dir.parent() {
            children.entry(parent).or_default().push(dir.as_path());
        }
    }
    let walk = Walk {
        spec,
        previous,
        children,
        queue: Mutex::new(Queue {
            dirs: (0..spec.roots.len()).map(|i| (i, PathBuf::new(), 0)).collect(),
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
    walk.literal_through_symlinks();
    let found = walk.found.into_inner().unwrap_or_else(|p| p.into_inner());
    if let Some(e) = found.error {
        return Err(e);
    }
    let masks = outermost(found.masks);
    if masks.len() > spec.limits.max_masks {
        return Err(WalkError::TooManyMasks { limit: spec.limits.max_masks });
    }
    let mut read_only = outermost(found.read_only);
    // Inside a mask there is nothing left to protect.
    read_only.retain(|r| !masks.iter().any(|m| r.path.starts_with(&m.path)));
    let pins = pins_for(spec.roots, spec.deny, &masks);
    let mut stamps: BTreeMap<PathBuf, Stamped> = found.stamps.into_iter().collect();
    let mut git_dirs: BTreeSet<PathBuf> = found.git_dirs.into_iter().collect();
    if let Some(prev) = previous {
        let unchanged: BTreeSet<&Path> = found.unchanged.iter().map(PathBuf::as_path).collect();
        let carried = |p: &Path| p.parent().is_some_and(|d| unchanged.contains(d));
        for (path, stamped) in prev.stamps.iter().filter(|(p, _)| carried(p)) {
            stamps.entry(path.clone()).or_insert_with(|| stamped.clone());
        }
        git_dirs.extend(prev.git_dirs.iter().filter(|p| carried(p)).cloned());
    }
    Ok(Snapshot {
        masks,
        read_only,
        pins,
        skipped_links: found.skipped_links,
        stamps,
        git_dirs,
        dirs: found.dirs.into_iter().collect(),
        entries_seen: walk.entries.load(Ordering::Relaxed),
    })
}

/// Sorted, deduplicated, and without entries inside a covered directory.
fn outermost(mut list: Vec<Mask>) -> Vec<Mask> {
    list.sort_by(|a, b| a.path.cmp(&b.path).then(a.kind.cmp(&b.kind)));
    list.dedup_by(|a, b| a.path == b.path);
    let dirs: Vec<PathBuf> =
        list.iter().filter(|m| m.kind == MaskKind::Dir).map(|m| m.path.clone()).collect();
    list.retain(|m| !dirs.iter().any(|d| m.path != *d && m.path.starts_with(d)));
    list
}

impl Walk<'_> {
    fn found(&self) -> std::sync::MutexGuard<'_, Found> {
        self.found.lock().unwrap_or_else(|p| p.into_inner())
    }

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
                    self.found().error.get_or_insert(e);
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
        let spec = self.spec;
        let base = &spec.roots[root];
        let dir = base.join(rel);
        let unreadable = |path: &Path, e: std::io::Error| WalkError::Unreadable {
            path: path.to_path_buf(),
            reason: e.to_string(),
        };
        let changed_at = match std::fs::symlink_metadata(&dir) {
            Ok(meta) => ctime_ns(&meta),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && depth > 0 => return Ok(Vec::new()),
            Err(e) => return Err(unreadable(&dir, e)),
        };
        let unchanged = self.previous.is_some_and(|p| p.dirs.get(&dir) == Some(&changed_at));
        {
            let mut found = self.found();
            found.dirs.push((dir.clone(), changed_at));
            if unchanged {
                found.unchanged.push(dir.clone());
            }
        }
        if unchanged {
            let known = self.children.get(dir.as_path()).into_iter().flatten();
            return Ok(known.filter_map(|c| c.strip_prefix(base).ok().map(Path::to_path_buf)).collect());
        }
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && depth > 0 => return Ok(Vec::new()),
            Err(e) => return Err(unreadable(&dir, e)),
        };
        let mut subdirs = Vec::new();
        let mut child = rel.to_path_buf();
        for entry in entries {
            let entry = entry.map_err(|e| unreadable(&dir, e))?;
            if self.entries.fetch_add(1, Ordering::Relaxed) >= spec.limits.max_entries {
                return Err(WalkError::TooManyEntries { limit: spec.limits.max_entries });
            }
            let ft = match entry.file_type() {
                Ok(ft) => ft,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(unreadable(&entry.path(), e)),
            };
            child.push(entry.file_name());
            let path = base.join(&child);
            if ft.is_dir() {
                if child.file_name() == Some(".git".as_ref()) {
                    self.found().git_dirs.push(path.clone());
                }
                if let Some(rule) = spec.deny.covers_dir(&child) {
                    self.protect(&path, MaskKind::Dir, &rule.pattern, false)?;
                } else if let Some(rule) = spec.write_protect.covers_dir(&child) {
                    self.protect(&path, MaskKind::Dir, &rule.pattern, true)?;
                } else if depth + 1 >= spec.limits.max_depth {
                    return Err(WalkError::TooDeep { path, limit: spec.limits.max_depth });
                } else {
                    subdirs.push(child.clone());
                }
            } else if ft.is_symlink() {
                // Denied by its own name, or as a denied directory (`secrets/**` with `secrets` a
                // link to elsewhere in the roots): either way its target is masked.
                if let Some(rule) = spec.deny.covers_dir(&child) {
                    self.masked_link_target(&path, &rule.pattern);
                }
            } else if let Some(rule) = spec.deny.match_exact(&child) {
                self.protect(&path, MaskKind::File, &rule.pattern, false)?;
            } else if let Some(rule) = spec.write_protect.match_exact(&child) {
                self.protect(&path, MaskKind::File, &rule.pattern, true)?;
            } else if spec.protected_files.contains(&path) {
                self.protect(&path, MaskKind::File, "the policy's own file", true)?;
            }
            child.pop();
        }
        Ok(subdirs)
    }

    /// Records a mask (or a read-only bind) and its stamp.
    fn protect(
        &self,
        path: &Path,
        kind: MaskKind,
        pattern: &str,
        write_protected: bool,
    ) -> Result<(), WalkError> {
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(WalkError::Unreadable { path: path.to_path_buf(), reason: e.to_string() }),
        };
        let mut f = self.found();
        f.stamps.push((
            path.to_path_buf(),
            Stamped { stamp: stamp(&meta), pattern: pattern.to_string(), write_protected },
        ));
        let entry = Mask { path: path.to_path_buf(), kind, pattern: pattern.to_string(), via_symlink: None };
        if write_protected {
            f.read_only.push(entry);
        } else {
            f.masks.push(entry);
        }
        Ok(())
    }

    fn inside(&self, path: &Path) -> bool {
        self.spec.roots.iter().chain(self.spec.inside).any(|r| path.starts_with(r))
    }

    fn masked_link_target(&self, link: &Path, pattern: &str) {
        let target = std::fs::canonicalize(link).ok();
        let meta = target.as_ref().and_then(|t| std::fs::metadata(t).ok());
        match (target, meta) {
            (Some(t), Some(meta)) if self.inside(&t) => self.found().masks.push(Mask {
                path: t,
                kind: kind_of(&meta),
                pattern: pattern.to_string(),
                via_symlink: Some(link.to_path_buf()),
            }),
            _ => self.found().skipped_links.push(link.to_path_buf()),
        }
    }

    /// An anchored deny pattern whose literal part passes through a symlinked directory
    /// (`link/secret.txt`, `link/**` with `link` → `real`) names a real path the walk never
    /// reaches under that name: mask the real path.
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
                let Ok(real) = std::fs::canonicalize(&lexical) else { continue };
                if real == lexical || !self.inside(&real) {
                    continue;
                }
                if let Ok(meta) = std::fs::metadata(&real) {
                    self.found().masks.push(Mask {
                        path: real,
                        kind: kind_of(&meta),
                        pattern: rule.pattern.clone(),
                        via_symlink: Some(lexical),
                    });
                }
            }
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
    /// Protected entries present in `after` that are new, or whose identity or content stamp
    /// changed, relative to `self`. Write-protected entries that appear inside a repository
    /// created during the call (`git init`), and git's `*.sample` hooks, are not changes to a
    /// protected file.
    pub fn changes_since(&self, after: &Snapshot) -> Vec<Change> {
        after
            .stamps
            .iter()
            .filter_map(|(path, now)| {
                let created = match self.stamps.get(path) {
                    None => true,
                    Some(before) if before.stamp != now.stamp => false,
                    Some(_) => return None,
                };
                if now.write_protected && created {
                    let in_old_repo =
                        path.ancestors().any(|a| a.ends_with(".git") && self.git_dirs.contains(a));
                    let sample = path.extension().is_some_and(|e| e == "sample");
                    if !in_old_repo || sample {
                        return None;
                    }
                }
                Some(Change {
                    path: path.clone(),
                    created,
                    pattern: now.pattern.clone(),
                    write_protected: now.write_protected,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn rules(pats: &[&str]) -> GlobRules {
        GlobRules::from_patterns(pats, Origin::Flag("--deny")).unwrap()
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
        scan(&ScanSpec {
            roots: &roots,
            deny,
            write_protect: protect,
            protected_files: &[],
            inside: &[],
            limits,
        })
    }

    fn scan_deny(root: &Path, deny: &GlobRules) -> Snapshot {
        scan_with(root, deny, &GlobRules::default(), WalkLimits::default()).unwrap()
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
        assert_eq!(snap.pins, vec![root.join("infra")]);
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
    }

    #[test]
    fn bounds_fail_closed() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env"]);
        let none = GlobRules::default();
        let limits = WalkLimits { max_entries: 3, ..Default::default() };
        assert!(matches!(scan_with(&root, &deny, &none, limits), Err(WalkError::TooManyEntries { .. })));
        let limits = WalkLimits { max_masks: 1, ..Default::default() };
        assert!(matches!(scan_with(&root, &deny, &none, limits), Err(WalkError::TooManyMasks { .. })));
        let limits = WalkLimits { max_depth: 2, ..Default::default() };
        assert!(matches!(scan_with(&root, &deny, &none, limits), Err(WalkError::TooDeep { .. })));
    }

    #[test]
    fn rescan_reads_only_changed_directories_and_finds_the_same_changes() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env", "secrets2/**"]);
        let protect = builtin(&["**/.git/hooks", "**/.git/config"]);
        let roots = [root.clone()];
        let spec = ScanSpec {
            roots: &roots,
            deny: &deny,
            write_protect: &protect,
            protected_files: &[],
            inside: &[],
            limits: WalkLimits::default(),
        };
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
    fn changes_since_reports_created_and_modified_entries() {
        let (_t, root) = tree();
        let deny = rules(&["**/.env", "secrets2/**"]);
        let protect = builtin(&["**/.git/hooks", "**/.git/config"]);
        let before = scan_with(&root, &deny, &protect, WalkLimits::default()).unwrap();
        std::fs::write(root.join("a/.env"), "NEW=1").unwrap();
        std::fs::write(root.join(".env"), "changed content").unwrap();
        std::fs::create_dir(root.join("secrets2")).unwrap();
        std::fs::write(root.join("repo/.git/config"), "[core]\n\tfsmonitor = evil\n").unwrap();
        std::fs::create_dir_all(root.join("new/.git/hooks")).unwrap();
        std::fs::write(root.join("new/.git/config"), "[core]\n").unwrap();
        let after = scan_with(&root, &deny, &protect, WalkLimits::default()).unwrap();
        let changes = before.changes_since(&after);
        let got: Vec<(String, bool)> = changes
            .iter()
            .map(|c| (c.path.strip_prefix(&root).unwrap().display().to_string(), c.created))
            .collect();
        assert_eq!(
            got,
            vec![
                (".env".into(), false),
                ("a/.env".into(), true),
                ("repo/.git/config".into(), false),
                ("secrets2".into(), true),
            ],
            "a repository created during the call is not a tampered one"
        );
    }
}
