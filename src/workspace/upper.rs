//! What a program left in an overlay's upper layer, entry by entry.
//!
//! overlayfs records a change as: a whole file or symlink (created, or copied up and changed), a
//! directory (created, or copied up because something inside it changed), a *whiteout* (a
//! character device 0:0: the entry below is deleted) and an *opaque* directory (xattr
//! `overlay.opaque` = `y`: nothing below it shows through — a directory deleted and made again,
//! or one that replaced a file). With `redirect_dir=nofollow` there is no other kind: a renamed
//! directory was copied, and a renamed file is a whiteout and a new file.

use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

/// What one upper entry means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Symlink,
    /// A directory; `opaque`: it replaces whatever was below it.
    Dir {
        opaque: bool,
    },
    /// The entry below is deleted.
    Whiteout,
    /// A device, FIFO or socket: never applied.
    Special,
}

/// One entry of the upper layer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Relative to the layer (and to its root).
    pub rel: PathBuf,
    pub kind: Kind,
    /// Permission bits (with setuid/setgid/sticky).
    pub mode: u32,
}

const OPAQUE_XATTRS: [&str; 2] = ["trusted.overlay.opaque", "user.overlay.opaque"];

fn opaque(path: &Path) -> bool {
    OPAQUE_XATTRS.iter().any(|name| {
        let mut buf = [0u8; 4];
        matches!(rustix::fs::lgetxattr(path, *name, &mut buf[..]), Ok(n) if n >= 1 && buf[0] == b'y')
    })
}

/// Every entry under `upper`, parents before their children (sorted by path).
pub fn scan(upper: &Path) -> std::io::Result<Vec<Entry>> {
    let mut out = Vec::new();
    for item in walkdir::WalkDir::new(upper).min_depth(1).follow_links(false).sort_by_file_name() {
        let item = item.map_err(std::io::Error::other)?;
        let meta = item.path().symlink_metadata()?;
        let ft = meta.file_type();
        let kind = if ft.is_dir() {
            Kind::Dir { opaque: opaque(item.path()) }
        } else if ft.is_file() {
            Kind::File
        } else if ft.is_symlink() {
            Kind::Symlink
        } else if ft.is_char_device() && meta.rdev() == 0 {
            Kind::Whiteout
        } else {
            Kind::Special
        };
        let rel = item.path().strip_prefix(upper).map_err(std::io::Error::other)?.to_path_buf();
        out.push(Entry { rel, kind, mode: meta.mode() & 0o7777 });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_directories_and_links_are_told_apart_parents_first() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("a/b")).unwrap();
        std::fs::write(t.path().join("a/b/f"), "x").unwrap();
        std::os::unix::fs::symlink("f", t.path().join("a/b/l")).unwrap();
        let got: Vec<(String, Kind)> =
            scan(t.path()).unwrap().into_iter().map(|e| (e.rel.display().to_string(), e.kind)).collect();
        assert_eq!(
            got,
            vec![
                ("a".into(), Kind::Dir { opaque: false }),
                ("a/b".into(), Kind::Dir { opaque: false }),
                ("a/b/f".into(), Kind::File),
                ("a/b/l".into(), Kind::Symlink),
            ]
        );
    }
}
