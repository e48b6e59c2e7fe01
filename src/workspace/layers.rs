//! The overlay of each root: per-call storage, and the mount ops and rules that put the overlay
//! under the child's view.
//!
//! Order: [`create`] makes `$HULLWARD_HOME/workspace/CALL/layer-N/{upper,work}` for every root
//! and checks that each lies on its root's filesystem and outside it (so that applying is a
//! rename, and so that the overlay's inode numbers are the real ones) → [`mount_into`] inserts
//! one `overlay` mount per root right after the child makes `/` private (before the view copies
//! the roots, so every copy of a root — the root itself, write grants, read-only directories
//! inside it — is a copy of its overlay), marks the identities the view verifies inside an
//! overlay as inode-only ([`OVERLAY_DEVICE`]), and moves the Landlock rules of paths inside an
//! overlay to the child (Landlock binds inodes, and the overlay's are not the host's).
//!
//! The overlay is mounted with `redirect_dir=nofollow,index=off,metacopy=off,xino=off` (and
//! `userxattr` in a user namespace, where `redirect_dir=off` is refused as conflicting): a renamed
//! directory that exists below is refused with `EXDEV` (tools then copy and delete, which the
//! apply sees as a delete and a create), every changed file is a whole file in the upper layer,
//! and inode numbers stay the lower filesystem's. `volatile` spares the `fsync` of every copy-up
//! (a build's worth of them): the upper layer lives for one call, and what must survive a killed
//! supervisor is in the page cache all the same.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::WorkspaceError;
use crate::sandbox::child::{MountOp, OVERLAY_DEVICE};
use crate::sandbox::plan::SandboxPlan;
use crate::sandbox::view::STAGE;

/// One overlaid root of a call.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layer {
    /// The root (the overlay's lower layer).
    pub root: PathBuf,
    /// What the program wrote.
    pub upper: PathBuf,
    /// overlayfs's own scratch directory.
    pub work: PathBuf,
}

impl Layer {
    /// Whether the program left nothing in the upper layer (nothing to judge, apply or hold).
    /// An upper layer that cannot be read counts as written: the judge then reports why.
    pub fn untouched(&self) -> bool {
        std::fs::read_dir(&self.upper).is_ok_and(|mut entries| entries.next().is_none())
    }
}

/// Whether this kernel offers overlayfs (`/proc/filesystems`).
pub fn overlayfs_available() -> bool {
    std::fs::read_to_string("/proc/filesystems")
        .is_ok_and(|t| t.lines().any(|l| l.split_whitespace().last() == Some("overlay")))
}

/// The mount points of this mount namespace (`/proc/self/mountinfo`, octal escapes decoded).
fn mount_points() -> Vec<PathBuf> {
    let text = std::fs::read("/proc/self/mountinfo").unwrap_or_default();
    text.split(|b| *b == b'\n')
        .filter_map(|line| line.split(|b| *b == b' ').nth(4))
        .map(|field| {
            let mut out = Vec::with_capacity(field.len());
            let mut i = 0;
            while i < field.len() {
                let octal = field.get(i + 1..i + 4).filter(|_| field[i] == b'\\');
                match octal.and_then(|o| u8::from_str_radix(std::str::from_utf8(o).ok()?, 8).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 4;
                    }
                    None => {
                        out.push(field[i]);
                        i += 1;
                    }
                }
            }
            PathBuf::from(<std::ffi::OsString as std::os::unix::ffi::OsStringExt>::from_vec(out))
        })
        .collect()
}

/// Creates the storage of every root's layer under `dir`. A root with a mount point inside it
/// is refused: overlayfs does not cross mounts, so the program would see the directory below the
/// mount, and the apply would write into the mounted filesystem.
pub fn create(dir: &Path, roots: &[PathBuf]) -> Result<Vec<Layer>, WorkspaceError> {
    let mut layers = Vec::new();
    let mounts = mount_points();
    for (n, root) in roots.iter().enumerate() {
        if let Some(m) = mounts.iter().find(|m| m.starts_with(root) && *m != root) {
            return Err(WorkspaceError::Unavailable(format!(
                "the root '{}' contains the mount point '{}', which an overlay of the root cannot carry (overlayfs does not cross mounts); name it as an Include root of its own, or use --workspace direct",
                root.display(),
                m.display()
            )));
        }
        if root.as_os_str().as_bytes().iter().any(|b| matches!(b, b',' | b':' | b'\\')) {
            return Err(WorkspaceError::Unavailable(format!(
                "the root '{}' contains ',', ':' or '\\', which overlayfs cannot name as a layer",
                root.display()
            )));
        }
        if dir.starts_with(root) {
            return Err(WorkspaceError::Unavailable(format!(
                "the overlay's storage '{}' lies inside the root '{}' (overlayfs refuses overlapping layers); set HULLWARD_HOME outside the roots",
                dir.display(),
                root.display()
            )));
        }
        let base = dir.join(format!("layer-{n}"));
        let layer = Layer { root: root.clone(), upper: base.join("upper"), work: base.join("work") };
        for d in [&base, &layer.upper, &layer.work] {
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(d)
                .map_err(|e| WorkspaceError::io("creating the overlay's storage", d, e))?;
        }
        let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev());
        let root_dev = dev(root).map_err(|e| WorkspaceError::io("reading the root", root, e))?;
        if dev(&layer.upper).ok() != Some(root_dev) {
            return Err(WorkspaceError::Unavailable(format!(
                "the overlay's storage '{}' is on another filesystem than the root '{}': applying would copy instead of rename, and the view could not verify its masks; set HULLWARD_HOME to a directory on the root's filesystem",
                layer.upper.display(),
                root.display()
            )));
        }
        layers.push(layer);
    }
    Ok(layers)
}

fn cstring(s: impl AsRef<[u8]>) -> Result<CString, WorkspaceError> {
    CString::new(s.as_ref().to_vec())
        .map_err(|_| WorkspaceError::Unavailable("a path of the overlay contains a NUL byte".into()))
}

/// The mount options of one layer.
fn options(layer: &Layer, user_ns: bool) -> Vec<u8> {
    let mut o = Vec::new();
    for (key, path) in [("lowerdir=", &layer.root), (",upperdir=", &layer.upper), (",workdir=", &layer.work)]
    {
        o.extend_from_slice(key.as_bytes());
        o.extend_from_slice(path.as_os_str().as_bytes());
    }
    o.extend_from_slice(b",redirect_dir=nofollow,index=off,metacopy=off,xino=off,volatile");
    if user_ns {
        o.extend_from_slice(b",userxattr");
    }
    o
}

/// `path` as the view's ops name it (inside the staging root).
fn staged(path: &Path) -> Vec<u8> {
    let mut s = STAGE.as_bytes().to_vec();
    s.extend_from_slice(path.as_os_str().as_bytes());
    s
}

fn under(path: &[u8], dir: &[u8]) -> bool {
    path.starts_with(dir) && (path.len() == dir.len() || path[dir.len()] == b'/')
}

/// Puts the overlays under the plan's view. See the module documentation.
pub fn mount_into(plan: &mut SandboxPlan, layers: &[Layer]) -> Result<(), WorkspaceError> {
    let user_ns = plan.user_ns;
    let Some(view) = plan.mounts.as_mut() else {
        return Err(WorkspaceError::Unavailable(
            "the call has no mount namespace of its own, so its writes cannot go to a layer".into(),
        ));
    };
    let mut overlays = Vec::new();
    for layer in layers {
        overlays.push(MountOp::Fs {
            fstype: cstring("overlay")?,
            target: cstring(layer.root.as_os_str().as_bytes())?,
            flags: 0,
            options: cstring(options(layer, user_ns))?,
        });
    }
    let at = view.ops.iter().position(|op| *op == MountOp::MakePrivate).map_or(0, |i| i + 1);
    view.ops.splice(at..at, overlays);
    let staged_roots: Vec<Vec<u8>> = layers.iter().map(|l| staged(&l.root)).collect();
    let inside = |p: &CString| staged_roots.iter().any(|r| under(p.as_bytes(), r));
    for op in &mut view.ops {
        let (path, expect) = match op {
            MountOp::Pin { path, expect } => (&*path, expect),
            MountOp::ReadOnlyBind { target, expect } | MountOp::Mask { target, expect, .. } => {
                (&*target, expect)
            }
            _ => continue,
        };
        if let Some(identity) = expect.as_mut().filter(|_| inside(path)) {
            identity.0 = OVERLAY_DEVICE;
        }
    }
    if let Some(landlock) = plan.landlock.as_mut() {
        let roots: Vec<&Path> = layers.iter().map(|l| l.root.as_path()).collect();
        let (child, host): (Vec<_>, Vec<_>) = std::mem::take(&mut landlock.rules)
            .into_iter()
            .partition(|r| roots.iter().any(|root| r.path.starts_with(root)));
        landlock.rules = host;
        landlock.child_rules.extend(child);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_options_name_every_layer_and_keep_the_upper_simple() {
        let l = Layer { root: "/w/ws".into(), upper: "/h/u".into(), work: "/h/w".into() };
        let o = String::from_utf8(options(&l, false)).unwrap();
        assert_eq!(
            o,
            "lowerdir=/w/ws,upperdir=/h/u,workdir=/h/w,redirect_dir=nofollow,index=off,metacopy=off,xino=off,volatile"
        );
        assert!(String::from_utf8(options(&l, true)).unwrap().ends_with(",userxattr"));
    }

    #[test]
    fn staged_paths_are_matched_by_component() {
        assert!(under(b"/tmp/w/ws/.env", b"/tmp/w/ws"));
        assert!(under(b"/tmp/w/ws", b"/tmp/w/ws"));
        assert!(!under(b"/tmp/w/ws-old/.env", b"/tmp/w/ws"));
    }

    #[test]
    fn storage_inside_a_root_is_refused() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().canonicalize().unwrap();
        let err = create(&root.join(".hullward/workspace/c"), std::slice::from_ref(&root)).unwrap_err();
        assert!(err.to_string().contains("inside the root"), "{err}");
    }
}
