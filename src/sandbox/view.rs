//! The child's filesystem view, as a list of [`MountOp`]s the child executes in order.
//!
//! Instead of the host's whole tree made read-only, the child gets a **fresh root** (a small
//! tmpfs) that contains only what the policy grants: the `System` entries read-only, a read-only
//! `/proc` of the child's own PID namespace, a minimal `/dev` (null, zero, full, random, urandom,
//! tty, a private devpts and shm), private tmpfs mounts on `/tmp`, `/run` and the child's home,
//! the roots and writable directories read-write, and the read-only directories (`--ro`) on top
//! of whatever covers their paths. Anything
//! else — the home directory, `/var/run/docker.sock`, other users' files — does not exist in the
//! child at all, so no path trick (including pathname Unix sockets, which Landlock ABI < 9 does
//! not mediate) can reach it. Landlock then binds the same grants a second time.
//!
//! Order of the ops: make `/` private → take detached copies of every bind source (before
//! anything covers them, e.g. a root under `/tmp`) → mount the new root's tmpfs on the staging
//! directory → in path order, create mount points and attach each source, the `/dev` tmpfs, the
//! private tmpfs → pin (recursive self-binds) the ancestors of anchored deny patterns, every
//! repository's `.git` and the directories above it, the directories above the policy files, and
//! bind write-protected entries read-only over themselves (before the masks, because a bind does
//! not carry the mounts below it) → mount the masks, copies of an empty mode-000 file or
//! directory on a read-only tmpfs attached in the staged root only while they are copied → make
//! the new root read-only → `pivot_root` into it. Every pin, read-only bind and mask is mounted
//! onto a descriptor of the entry, opened without following symlinks and checked against the
//! identity the walk found under that name ([`ViewSpec::identities`]): a concurrent swap between
//! the walk and the mounts stops the call instead of uncovering the protected inode.
//!
//! [`build`] reads no file: the view is a function of its [`ViewSpec`] alone. A long-lived
//! process, whose calls mostly ask for the same view, calls [`keep_last`] once; `build` then
//! answers a spec equal to the last one's with a copy of that view (what building it again gives).

use std::collections::BTreeMap;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

use super::child::{MountOp, StandIn};
use super::masks::{Mask, MaskKind, Shape};

/// Where the new root is assembled; the host directory only serves as a mount point inside the
/// child's private mount namespace.
pub const STAGE: &str = "/tmp";
/// Where the mask source is attached in the staged root while the masks are copied from it
/// (removed again before `pivot_root`).
const MASK_SOURCE: &str = "/.hullward-mask-source";
/// Directories that get a fresh private tmpfs, with their `mode=`; sizes come from the spec.
pub const PRIVATE_TMPFS: &[(&str, &str)] = &[("/tmp", "mode=1777"), ("/run", "mode=0755")];
/// Device nodes bound from the host.
pub const DEVICES: &[&str] =
    &["/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"];
const DEV_LINKS: &[(&str, &str)] = &[
    ("/proc/self/fd", "/dev/fd"),
    ("/proc/self/fd/0", "/dev/stdin"),
    ("/proc/self/fd/1", "/dev/stdout"),
    ("/proc/self/fd/2", "/dev/stderr"),
    ("pts/ptmx", "/dev/ptmx"),
];

const MOUNT_ATTR_RDONLY: u64 = 0x1;
const MOUNT_ATTR_NOSUID: u64 = 0x2;
const MOUNT_ATTR_NODEV: u64 = 0x4;
const MOUNT_ATTR_NOEXEC: u64 = 0x8;

/// One host path shown in the child.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    pub path: PathBuf,
    pub is_dir: bool,
}

/// The inputs of the view.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewSpec {
    /// Read+exec, read-only mounts.
    pub system: Vec<Source>,
    /// Symlinks recreated in the new root (`/bin` → `usr/bin`), as (link, target).
    pub links: Vec<(PathBuf, PathBuf)>,
    /// Read-write host directories (roots, includes, writable directories).
    pub read_write: Vec<PathBuf>,
    /// Read-only host directories (roots in a read-only profile).
    pub read_only: Vec<PathBuf>,
    /// `--ro` / `ReadOnlyDirs`: read+exec, read-only mounts that, unlike `System` entries, are
    /// also shown inside the roots and the private home (on top of them).
    pub read_only_dirs: Vec<Source>,
    /// The child's private home: a fresh tmpfs at this path (see `sandbox::home`).
    pub home: Option<PathBuf>,
    /// Device nodes that exist on this host.
    pub devices: Vec<PathBuf>,
    /// A private devpts instance on `/dev/pts` (new terminals; the host's are never shown).
    pub dev_pts: bool,
    /// A fresh procfs of the child's own PID namespace on `/proc` (instead of a copy of the
    /// host's).
    pub new_proc: bool,
    /// Size of each private tmpfs (`/tmp`, `/dev/shm`), e.g. `4294967296` or `50%`.
    pub tmpfs_size: String,
    /// Files written into the new root (`/etc/passwd`, `/etc/group` for the child's own ids),
    /// unless a `System` entry provides them.
    pub files: Vec<(PathBuf, Vec<u8>)>,
    pub masks: Vec<Mask>,
    /// Masked files covered by a stand-in of their shape instead of the empty file (see
    /// [`StandIn`]; `masks::Snapshot::stand_in_shapes`).
    pub stand_ins: BTreeMap<PathBuf, Shape>,
    /// Entries bound read-only over themselves (write-protected inside a writable root).
    pub read_only_binds: Vec<Mask>,
    pub pins: Vec<PathBuf>,
    /// What the walk found under each mask, read-only bind and pin path, `(st_dev, st_ino)`: the
    /// child mounts only onto that entry (see [`MountOp::Pin`]).
    pub identities: BTreeMap<PathBuf, (u64, u64)>,
}

/// The ops and the number of descriptor slots they need.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct View {
    pub ops: Vec<MountOp>,
    pub slots: usize,
}

/// Why a view cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum ViewError {
    #[error("path '{}' contains a NUL byte", .0.display())]
    Nul(PathBuf),
    #[error("a sandbox root of '/' would grant the whole filesystem; choose a narrower root (or --yolo)")]
    WholeFilesystem,
}

/// What git in the child needs to find a tracked file under a stand-in unchanged: only the
/// size and the whole seconds of the modification time compared (`core.checkStat=minimal`), not
/// the change time (`core.trustctime=false`) — the stand-in is another inode on another device.
/// Added after any `GIT_CONFIG_COUNT` entries passed through.
pub fn stand_in_git_config(vars: &mut Vec<(String, String)>) {
    let count = vars.iter().find(|(k, _)| k == "GIT_CONFIG_COUNT").and_then(|(_, v)| v.parse::<usize>().ok());
    let first = count.unwrap_or(0);
    vars.retain(|(k, _)| k != "GIT_CONFIG_COUNT");
    for (i, (key, value)) in
        [("core.checkStat", "minimal"), ("core.trustctime", "false")].into_iter().enumerate()
    {
        vars.push((format!("GIT_CONFIG_KEY_{}", first + i), key.to_string()));
        vars.push((format!("GIT_CONFIG_VALUE_{}", first + i), value.to_string()));
    }
    vars.push(("GIT_CONFIG_COUNT".to_string(), (first + 2).to_string()));
}

fn c(path: &Path) -> Result<CString, ViewError> {
    CString::new(path.as_os_str().as_bytes()).map_err(|_| ViewError::Nul(path.to_path_buf()))
}

/// `path` inside the staging root.
fn staged(path: &Path) -> PathBuf {
    let rel = path.strip_prefix("/").unwrap_or(path);
    if rel.as_os_str().is_empty() {
        PathBuf::from(STAGE)
    } else {
        Path::new(STAGE).join(rel)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Covering {
    /// A tmpfs hullward created: missing directories can be made.
    Tmpfs,
    /// A copy of a host tree: its directories exist already.
    Bind,
}

enum Dest {
    System { src: Source, slot: usize },
    Link { target: PathBuf },
    Tree { slot: usize },
    Proc { slot: usize },
    NewProc,
    Dev,
    Private { options: &'static str },
    File { content: Vec<u8> },
}

struct Builder {
    ops: Vec<MountOp>,
    mounted: Vec<(Key, Covering)>,
}

/// A path as its components joined by `/` — what `Path::starts_with` compares, one component
/// at a time — with their number, so that finding the mount that covers a path is byte
/// comparisons: the view asks it for every ancestor of each of its ~100 paths, against every
/// mount made so far.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Key {
    bytes: Vec<u8>,
    depth: usize,
}

impl Key {
    fn of(path: &Path) -> Key {
        let mut bytes = Vec::with_capacity(path.as_os_str().len());
        let mut depth = 0;
        for part in path.components() {
            if !bytes.is_empty() && bytes != b"/" {
                bytes.push(b'/');
            }
            bytes.extend_from_slice(part.as_os_str().as_bytes());
            depth += 1;
        }
        Key { bytes, depth }
    }

    /// `other.starts_with(self)` for the paths the keys were made of.
    fn holds(&self, other: &Key) -> bool {
        let (m, p) = (&self.bytes, &other.bytes);
        if m.is_empty() {
            return true;
        }
        if m.as_slice() == b"/" {
            return p.first() == Some(&b'/');
        }
        p.starts_with(m) && (p.len() == m.len() || p[m.len()] == b'/')
    }
}

impl Builder {
    /// What covers `path` in the view: the deepest mount made so far above it or at it (of two
    /// at the same path, the later), else the stage's tmpfs.
    fn covering(&self, path: &Path) -> Covering {
        let key = Key::of(path);
        let mut best: Option<(usize, Covering)> = None;
        for (m, kind) in &self.mounted {
            if m.holds(&key) && best.is_none_or(|(depth, _)| m.depth >= depth) {
                best = Some((m.depth, *kind));
            }
        }
        best.map_or(Covering::Tmpfs, |(_, k)| k)
    }

    fn mount(&mut self, path: &Path, kind: Covering) {
        self.mounted.push((Key::of(path), kind));
    }

    /// Creates the missing directories above `path` (in the child's view), and `path` itself as a
    /// directory or an empty file when `create` says so.
    fn prepare(&mut self, path: &Path, create: Option<bool>) -> Result<(), ViewError> {
        let ancestors: Vec<&Path> = path.ancestors().skip(1).filter(|a| *a != Path::new("/")).collect();
        for a in ancestors.into_iter().rev() {
            if self.covering(a) == Covering::Tmpfs {
                self.ops.push(MountOp::Mkdir { path: c(&staged(a))?, mode: 0o755 });
            }
        }
        if let Some(is_dir) = create {
            if self.covering(path) == Covering::Tmpfs {
                let p = c(&staged(path))?;
                self.ops.push(if is_dir {
                    MountOp::Mkdir { path: p, mode: 0o755 }
                } else {
                    MountOp::Touch { path: p, mode: 0o600 }
                });
            }
        }
        Ok(())
    }
}

/// Whether [`build`] keeps the last view it made ([`keep_last`]).
static KEEP_LAST: AtomicBool = AtomicBool::new(false);

/// The last view [`build`] made, and its spec.
static LAST: Mutex<Option<(ViewSpec, View)>> = Mutex::new(None);

/// From now on [`build`] keeps the last view it made (a long-lived process: building one is
/// ≈ 0.13 ms of a served call's plan).
pub fn keep_last() {
    KEEP_LAST.store(true, Ordering::Relaxed);
}

/// The op list of `spec`: the last one's copy when [`keep_last`] was called and `spec` is equal
/// to the last one built, else built now.
pub fn build(spec: &ViewSpec) -> Result<View, ViewError> {
    if !KEEP_LAST.load(Ordering::Relaxed) {
        return build_new(spec);
    }
    if let Some(view) =
        LAST.lock().ok().and_then(|last| last.as_ref().filter(|(s, _)| s == spec).map(|(_, v)| v.clone()))
    {
        return Ok(view);
    }
    let view = build_new(spec)?;
    if let Ok(mut last) = LAST.lock() {
        *last = Some((spec.clone(), view.clone()));
    }
    Ok(view)
}

/// Builds the op list. See the module documentation for the order.
fn build_new(spec: &ViewSpec) -> Result<View, ViewError> {
    if spec.read_write.iter().chain(&spec.read_only).any(|p| p == Path::new("/")) {
        return Err(ViewError::WholeFilesystem);
    }
    let mut ops = vec![MountOp::MakePrivate];
    let mut slots = 0;
    let mut clone = |ops: &mut Vec<MountOp>, src: &Path, set: u64| -> Result<usize, ViewError> {
        let slot = slots;
        slots += 1;
        ops.push(MountOp::Clone { src: c(src)?, slot, set, clear: 0 });
        Ok(slot)
    };

    let trees: Vec<&PathBuf> = spec.read_write.iter().chain(&spec.read_only).collect();
    let under_tree = |p: &Path| trees.iter().any(|t| p.starts_with(t));

    let mut dests: Vec<(PathBuf, Dest)> = Vec::new();
    for s in &spec.system {
        if under_tree(&s.path) {
            continue;
        }
        let slot = clone(&mut ops, &s.path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)?;
        dests.push((s.path.clone(), Dest::System { src: s.clone(), slot }));
    }
    for p in &spec.read_write {
        let slot = clone(&mut ops, p, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)?;
        dests.push((p.clone(), Dest::Tree { slot }));
    }
    for p in &spec.read_only {
        let slot = clone(&mut ops, p, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)?;
        dests.push((p.clone(), Dest::Tree { slot }));
    }
    dests.extend(toolchain_dests(spec, &mut ops, &mut clone)?);
    if spec.new_proc {
        dests.push((PathBuf::from("/proc"), Dest::NewProc));
    } else {
        let proc_slot = clone(
            &mut ops,
            Path::new("/proc"),
            MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC,
        )?;
        dests.push((PathBuf::from("/proc"), Dest::Proc { slot: proc_slot }));
    }
    dests.push((PathBuf::from("/dev"), Dest::Dev));
    for (dir, options) in PRIVATE_TMPFS {
        if !under_tree(Path::new(dir)) {
            dests.push((PathBuf::from(dir), Dest::Private { options }));
        }
    }
    for (link, target) in &spec.links {
        if !spec.system.iter().any(|s| s.path == *link) {
            dests.push((link.clone(), Dest::Link { target: target.clone() }));
        }
    }
    for (path, content) in &spec.files {
        if !spec.system.iter().any(|s| path.starts_with(&s.path)) {
            dests.push((path.clone(), Dest::File { content: content.clone() }));
        }
    }
    // Parents before children; for the same path, a tmpfs before what is mounted into it.
    dests.sort_by(|a, b| a.0.cmp(&b.0));

    ops.push(MountOp::Fs {
        fstype: CString::new("tmpfs").expect("static"),
        target: c(Path::new(STAGE))?,
        flags: libc::MS_NOSUID | libc::MS_NODEV,
        options: CString::new("mode=0755,size=4m").expect("static"),
    });
    let mut b = Builder { ops, mounted: vec![(Key::of(Path::new("/")), Covering::Tmpfs)] };
    for (path, dest) in dests {
        match dest {
            Dest::System { src, slot } => {
                b.prepare(&path, Some(src.is_dir))?;
                b.ops.push(MountOp::Attach { slot, target: c(&staged(&path))? });
                b.mount(&path, Covering::Bind);
            }
            Dest::Tree { slot } | Dest::Proc { slot } => {
                b.prepare(&path, Some(true))?;
                b.ops.push(MountOp::Attach { slot, target: c(&staged(&path))? });
                b.mount(&path, Covering::Bind);
            }
            Dest::Link { target } => {
                b.prepare(&path, None)?;
                if b.covering(&path) == Covering::Tmpfs {
                    b.ops.push(MountOp::Symlink { target: c(&target)?, link: c(&staged(&path))? });
                }
            }
            Dest::Private { options } => {
                b.prepare(&path, Some(true))?;
                let size = if path == Path::new("/run") { "64m" } else { spec.tmpfs_size.as_str() };
                b.ops.push(MountOp::Fs {
                    fstype: CString::new("tmpfs").expect("static"),
                    target: c(&staged(&path))?,
                    flags: libc::MS_NOSUID | libc::MS_NODEV,
                    options: CString::new(format!("{options},size={size}"))
                        .map_err(|_| ViewError::Nul(path.clone()))?,
                });
                b.mount(&path, Covering::Tmpfs);
            }
            Dest::NewProc => {
                b.prepare(&path, Some(true))?;
                b.ops.push(MountOp::Fs {
                    fstype: CString::new("proc").expect("static"),
                    target: c(&staged(&path))?,
                    flags: libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    options: CString::new("").expect("static"),
                });
                b.mount(&path, Covering::Bind);
            }
            Dest::File { content } => {
                b.prepare(&path, None)?;
                if b.covering(&path) == Covering::Tmpfs {
                    b.ops.push(MountOp::WriteFile { path: c(&staged(&path))?, content });
                }
            }
            Dest::Dev => dev(&mut b, spec)?,
        }
    }
    let expect = |p: &Path| spec.identities.get(p).copied();
    for pin in &spec.pins {
        b.ops.push(MountOp::Pin { path: c(&staged(pin))?, expect: expect(pin) });
    }
    for entry in &spec.read_only_binds {
        b.ops.push(MountOp::ReadOnlyBind { target: c(&staged(&entry.path))?, expect: expect(&entry.path) });
    }
    let mask_slot = slots;
    slots += 1;
    masks(&mut b, spec, mask_slot)?;
    b.ops.push(MountOp::SetReadOnly { target: c(Path::new(STAGE))? });
    b.ops.push(MountOp::PivotRoot { new_root: c(Path::new(STAGE))? });
    Ok(View { ops: b.ops, slots })
}

/// The private home and the read-only directories. The home is a tmpfs like `/tmp`; each
/// read-only directory is a read-only copy attached after whatever covers its path (a root, the
/// home), so that it wins there.
fn toolchain_dests(
    spec: &ViewSpec,
    ops: &mut Vec<MountOp>,
    clone: &mut impl FnMut(&mut Vec<MountOp>, &Path, u64) -> Result<usize, ViewError>,
) -> Result<Vec<(PathBuf, Dest)>, ViewError> {
    let mut dests = Vec::new();
    if let Some(home) = &spec.home {
        dests.push((home.clone(), Dest::Private { options: "mode=0700" }));
    }
    for src in &spec.read_only_dirs {
        let slot = clone(ops, &src.path, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV)?;
        dests.push((src.path.clone(), Dest::System { src: src.clone(), slot }));
    }
    Ok(dests)
}

fn dev(b: &mut Builder, spec: &ViewSpec) -> Result<(), ViewError> {
    let dev = Path::new("/dev");
    b.prepare(dev, Some(true))?;
    b.ops.push(MountOp::Fs {
        fstype: CString::new("tmpfs").expect("static"),
        target: c(&staged(dev))?,
        flags: libc::MS_NOSUID | libc::MS_NOEXEC,
        options: CString::new("mode=0755,size=64k").expect("static"),
    });
    b.mount(dev, Covering::Tmpfs);
    for node in &spec.devices {
        let target = c(&staged(node))?;
        b.ops.push(MountOp::Touch { path: target.clone(), mode: 0o600 });
        b.ops.push(MountOp::Bind { src: c(node)?, target });
    }
    for (target, link) in DEV_LINKS {
        if *link == "/dev/ptmx" && !spec.dev_pts {
            continue;
        }
        b.ops.push(MountOp::Symlink { target: c(Path::new(target))?, link: c(&staged(Path::new(link)))? });
    }
    if spec.dev_pts {
        let pts = Path::new("/dev/pts");
        b.ops.push(MountOp::Mkdir { path: c(&staged(pts))?, mode: 0o755 });
        b.ops.push(MountOp::Fs {
            fstype: CString::new("devpts").expect("static"),
            target: c(&staged(pts))?,
            flags: libc::MS_NOSUID | libc::MS_NOEXEC,
            options: CString::new("newinstance,ptmxmode=0666,mode=0620").expect("static"),
        });
    }
    let shm = Path::new("/dev/shm");
    b.ops.push(MountOp::Mkdir { path: c(&staged(shm))?, mode: 0o755 });
    b.ops.push(MountOp::Fs {
        fstype: CString::new("tmpfs").expect("static"),
        target: c(&staged(shm))?,
        flags: libc::MS_NOSUID | libc::MS_NODEV,
        options: CString::new(format!("mode=1777,size={}", spec.tmpfs_size))
            .map_err(|_| ViewError::Nul(shm.into()))?,
    });
    b.ops.push(MountOp::SetReadOnly { target: c(&staged(dev))? });
    Ok(())
}

fn masks(b: &mut Builder, spec: &ViewSpec, slot: usize) -> Result<(), ViewError> {
    let masks = &spec.masks;
    if masks.is_empty() {
        return Ok(());
    }
    let at = c(&staged(Path::new(MASK_SOURCE)))?;
    b.ops.push(MountOp::Mkdir { path: at.clone(), mode: 0o700 });
    // One stand-in per distinct shape, named s0, s1, … in the source.
    let mut shapes: BTreeMap<Shape, CString> = BTreeMap::new();
    for shape in spec.stand_ins.values() {
        let n = shapes.len();
        shapes.entry(*shape).or_insert_with(|| CString::new(format!("s{n}")).expect("no NUL"));
    }
    let stand_ins = shapes
        .iter()
        .map(|(shape, name)| StandIn {
            name: name.clone(),
            size: shape.size,
            mtime: (
                i64::try_from(shape.mtime_ns.div_euclid(1_000_000_000)).unwrap_or(0),
                i64::try_from(shape.mtime_ns.rem_euclid(1_000_000_000)).unwrap_or(0),
            ),
            mode: shape.exec_bits,
        })
        .collect();
    b.ops.push(MountOp::MaskSource { slot, at: at.clone(), stand_ins });
    for m in masks {
        let name = match (m.kind, spec.stand_ins.get(&m.path)) {
            (MaskKind::File, Some(shape)) => shapes[shape].clone(),
            (MaskKind::File, None) => CString::new("file").expect("static"),
            (MaskKind::Dir, _) => CString::new("dir").expect("static"),
        };
        b.ops.push(MountOp::Mask {
            slot,
            name,
            target: c(&staged(&m.path))?,
            expect: spec.identities.get(&m.path).copied(),
        });
    }
    b.ops.push(MountOp::Close { slot });
    b.ops.push(MountOp::Unmount { target: at.clone() });
    b.ops.push(MountOp::Rmdir { path: at });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_holds_exactly_the_paths_that_start_with_its_own() {
        let paths = [
            "/", "//", "/a", "/a/", "/a//", "/ab", "/a/b", "/a//b", "/a/./b", "/a/b/..", "/a/../b", "/a/b/c",
            "/ab/c", "/b", "a", "a/b", "./a", "ab", "",
        ];
        for m in paths {
            for p in paths {
                let (km, kp) = (Key::of(Path::new(m)), Key::of(Path::new(p)));
                assert_eq!(km.holds(&kp), Path::new(p).starts_with(m), "{p:?} under {m:?}");
                assert_eq!(km.depth, Path::new(m).components().count(), "{m:?}");
            }
        }
    }

    fn names(view: &View) -> Vec<String> {
        view.ops
            .iter()
            .map(|op| match op {
                MountOp::MakePrivate => "private".to_string(),
                MountOp::Clone { src, slot, .. } => format!("clone {} #{slot}", src.to_string_lossy()),
                MountOp::Fs { fstype, target, .. } => {
                    format!("{} {}", fstype.to_string_lossy(), target.to_string_lossy())
                }
                MountOp::Mkdir { path, .. } => format!("mkdir {}", path.to_string_lossy()),
                MountOp::Touch { path, .. } => format!("touch {}", path.to_string_lossy()),
                MountOp::WriteFile { path, .. } => format!("write {}", path.to_string_lossy()),
                MountOp::Symlink { target, link } => {
                    format!("ln {} {}", target.to_string_lossy(), link.to_string_lossy())
                }
                MountOp::Chmod { path, .. } => format!("chmod {}", path.to_string_lossy()),
                MountOp::Attach { slot, target } => format!("attach #{slot} {}", target.to_string_lossy()),
                MountOp::Bind { src, target } => {
                    format!("bind {} {}", src.to_string_lossy(), target.to_string_lossy())
                }
                MountOp::Pin { path, .. } => format!("pin {}", path.to_string_lossy()),
                MountOp::ReadOnlyBind { target, .. } => format!("ro-bind {}", target.to_string_lossy()),
                MountOp::SetReadOnly { target } => format!("ro {}", target.to_string_lossy()),
                MountOp::MaskSource { slot, .. } => format!("mask-source #{slot}"),
                MountOp::Mask { slot, name, target, .. } => {
                    format!("mask #{slot} {} {}", name.to_string_lossy(), target.to_string_lossy())
                }
                MountOp::Close { slot } => format!("close #{slot}"),
                MountOp::Unmount { target } => format!("umount {}", target.to_string_lossy()),
                MountOp::Rmdir { path } => format!("rmdir {}", path.to_string_lossy()),
                MountOp::PivotRoot { new_root } => format!("pivot {}", new_root.to_string_lossy()),
            })
            .collect()
    }

    fn spec() -> ViewSpec {
        ViewSpec {
            system: vec![
                Source { path: "/usr".into(), is_dir: true },
                Source { path: "/etc/ld.so.cache".into(), is_dir: false },
            ],
            links: vec![("/bin".into(), "usr/bin".into())],
            read_write: vec!["/tmp/work/proj".into()],
            read_only: vec![],
            read_only_dirs: vec![],
            home: None,
            devices: vec!["/dev/null".into()],
            dev_pts: false,
            new_proc: false,
            tmpfs_size: "50%".into(),
            files: vec![],
            masks: vec![Mask {
                path: "/tmp/work/proj/.env".into(),
                kind: MaskKind::File,
                pattern: "**/.env".into(),
                via_symlink: None,
            }],
            stand_ins: BTreeMap::new(),
            read_only_binds: vec![],
            pins: vec!["/tmp/work/proj/infra".into()],
            identities: BTreeMap::new(),
        }
    }

    #[test]
    fn sources_are_copied_before_the_stage_covers_them_and_parents_come_first() {
        let v = build(&spec()).unwrap();
        let n = names(&v);
        let pos = |s: &str| n.iter().position(|x| x == s).unwrap_or_else(|| panic!("{s} not in {n:#?}"));
        assert!(pos("clone /tmp/work/proj #2") < pos("tmpfs /tmp"));
        assert!(pos("tmpfs /tmp/tmp") < pos("mkdir /tmp/tmp/work"));
        assert!(pos("mkdir /tmp/tmp/work/proj") < pos("attach #2 /tmp/tmp/work/proj"));
        assert!(pos("mkdir /tmp/etc") < pos("touch /tmp/etc/ld.so.cache"));
        assert!(pos("touch /tmp/etc/ld.so.cache") < pos("attach #1 /tmp/etc/ld.so.cache"));
        assert!(pos("ln usr/bin /tmp/bin") > pos("tmpfs /tmp"));
        assert!(pos("pin /tmp/tmp/work/proj/infra") < pos("mask-source #4"));
        assert!(pos("mask-source #4") < pos("mask #4 file /tmp/tmp/work/proj/.env"));
        assert!(pos("close #4") < pos("ro /tmp"));
        assert_eq!(n.last().unwrap(), "pivot /tmp");
        assert_eq!(v.slots, 5);
    }

    #[test]
    fn a_kept_view_answers_only_a_spec_equal_to_its_own() {
        keep_last();
        let first = spec();
        assert_eq!(build(&first).unwrap(), build_new(&first).unwrap());
        assert_eq!(build(&first).unwrap(), build_new(&first).unwrap(), "the kept copy");
        // Each one-field change of the spec gets its own view, not the kept one.
        let mut masked = spec();
        masked.masks.push(Mask {
            path: "/tmp/work/proj/sub/.env".into(),
            kind: MaskKind::File,
            pattern: "**/.env".into(),
            via_symlink: None,
        });
        let mut identified = spec();
        identified.identities.insert("/tmp/work/proj/.env".into(), (1, 2));
        let mut sized = spec();
        sized.tmpfs_size = "1048576".into();
        for other in [masked, identified, sized] {
            assert_ne!(build_new(&other).unwrap(), build_new(&first).unwrap(), "{other:?}");
            build(&first).unwrap();
            assert_eq!(build(&other).unwrap(), build_new(&other).unwrap(), "{other:?}");
        }
    }

    #[test]
    fn nothing_is_mkdir_ed_inside_a_host_copy() {
        let mut s = spec();
        s.read_write = vec!["/usr/src/proj".into()];
        s.masks.clear();
        s.pins.clear();
        let n = names(&build(&s).unwrap());
        assert!(!n.iter().any(|x| x.starts_with("mkdir /tmp/usr/")), "{n:#?}");
        assert!(n.contains(&"attach #2 /tmp/usr/src/proj".to_string()), "{n:#?}");
    }

    #[test]
    fn the_private_home_comes_before_what_is_shown_inside_it_and_read_only_dirs_win_over_roots() {
        let mut s = spec();
        s.masks.clear();
        s.pins.clear();
        s.home = Some("/home/u".into());
        s.read_write = vec!["/home/u/proj".into()];
        s.read_only_dirs = vec![
            Source { path: "/home/u/.cargo/bin".into(), is_dir: true },
            Source { path: "/home/u/proj/vendor".into(), is_dir: true },
            Source { path: "/home/u/.gitconfig".into(), is_dir: false },
        ];
        let n = names(&build(&s).unwrap());
        let pos = |x: &str| n.iter().position(|y| y == x).unwrap_or_else(|| panic!("{x} not in {n:#?}"));
        assert!(pos("tmpfs /tmp/home/u") < pos("mkdir /tmp/home/u/.cargo"), "{n:#?}");
        assert!(pos("mkdir /tmp/home/u/.cargo") < pos("mkdir /tmp/home/u/.cargo/bin"), "{n:#?}");
        assert!(pos("touch /tmp/home/u/.gitconfig") > pos("tmpfs /tmp/home/u"), "{n:#?}");
        // The read-only vendor directory is attached on top of the writable root.
        let attach = |p: &str| n.iter().position(|y| y.starts_with("attach #") && y.ends_with(p)).unwrap();
        assert!(attach("/tmp/home/u/proj") < attach("/tmp/home/u/proj/vendor"), "{n:#?}");
        assert!(
            !n.iter().any(|x| x == "mkdir /tmp/home/u/proj/vendor"),
            "nothing is made inside a host copy"
        );
        // Every read-only directory is cloned read-only.
        let ro_clones = build(&s)
            .unwrap()
            .ops
            .iter()
            .filter(|op| {
                matches!(op, MountOp::Clone { src, set, .. }
                    if src.to_string_lossy().contains("/home/u/") && *set & MOUNT_ATTR_RDONLY != 0)
            })
            .count();
        assert_eq!(ro_clones, 3, "{n:#?}");
    }

    #[test]
    fn masked_files_of_one_shape_share_a_stand_in_and_git_compares_only_size_and_mtime() {
        let mut s = spec();
        let shape = Shape { size: 30, mtime_ns: 1_700_000_000_250_000_000, exec_bits: 0 };
        for name in [".env.example", ".env.test"] {
            let path = PathBuf::from("/tmp/work/proj").join(name);
            s.masks.push(Mask {
                path: path.clone(),
                kind: MaskKind::File,
                pattern: "**/.env.*".into(),
                via_symlink: None,
            });
            s.stand_ins.insert(path, shape);
        }
        let v = build(&s).unwrap();
        let n = names(&v);
        assert!(n.contains(&"mask #4 file /tmp/tmp/work/proj/.env".to_string()), "{n:#?}");
        assert!(n.contains(&"mask #4 s0 /tmp/tmp/work/proj/.env.example".to_string()), "{n:#?}");
        assert!(n.contains(&"mask #4 s0 /tmp/tmp/work/proj/.env.test".to_string()), "{n:#?}");
        let stand_ins = v.ops.iter().find_map(|op| match op {
            MountOp::MaskSource { stand_ins, .. } => Some(stand_ins.clone()),
            _ => None,
        });
        assert_eq!(
            stand_ins.unwrap(),
            vec![StandIn { name: c"s0".into(), size: 30, mtime: (1_700_000_000, 250_000_000), mode: 0 }]
        );
        let mut vars = vec![("GIT_CONFIG_COUNT".to_string(), "1".to_string())];
        stand_in_git_config(&mut vars);
        assert!(vars.contains(&("GIT_CONFIG_KEY_1".into(), "core.checkStat".into())), "{vars:?}");
        assert!(vars.contains(&("GIT_CONFIG_VALUE_2".into(), "false".into())), "{vars:?}");
        assert_eq!(
            vars.iter().filter(|(k, _)| k == "GIT_CONFIG_COUNT").collect::<Vec<_>>(),
            [&("GIT_CONFIG_COUNT".to_string(), "3".to_string())]
        );
    }

    #[test]
    fn a_root_of_slash_is_refused() {
        let mut s = spec();
        s.read_write = vec!["/".into()];
        assert!(matches!(build(&s), Err(ViewError::WholeFilesystem)));
    }
}
