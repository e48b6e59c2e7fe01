//! What the filesystem says about the paths one policy names, asked once each.
//!
//! A policy names about seventy `System` entries (`/etc/ssl/certs`, `/etc/os-release`, …). Each
//! one is checked for a planted symlink, resolved to its canonical path, and remembered with its
//! link target when it is a link — and they share most of their ancestors. Asked of the kernel
//! path by path (`lstat`, `readlink`, `realpath`), that is some three hundred system calls per
//! load, most of them repeating an answer already had. A [`Resolver`] lives for one load: it asks
//! `lstat` (and `readlink`, for a link) once per path and lists a directory once, and answers
//! [`Resolver::canonical`] and [`Resolver::planted_link`] from those answers.
//!
//! Order of use: create one per load ([`Resolver::default`]), ask it anything, drop it with the
//! load. It is never kept: a later load must see the filesystem as it is then.

use std::collections::HashMap;
use std::ffi::OsString;
use std::io::{Error, ErrorKind};
use std::path::{Component, Path, PathBuf};

/// The most symlinks one resolution follows, as the kernel's own limit (`ELOOP` past it).
const MAX_LINKS: usize = 40;

/// What `lstat` (and `readlink`) said of one path.
#[derive(Debug, Clone)]
enum Entry {
    Link(PathBuf),
    Dir,
    /// A file, a device, a socket: nothing can be below it.
    Other,
    /// The error, as its OS code when it has one.
    Missing(Option<i32>, ErrorKind),
}

impl Entry {
    fn missing(e: &Error) -> Self {
        Entry::Missing(e.raw_os_error(), e.kind())
    }
}

/// The answers of one load (see the module doc).
#[derive(Default)]
pub struct Resolver {
    entries: HashMap<PathBuf, Entry>,
    listings: HashMap<PathBuf, Option<Vec<OsString>>>,
}

impl Resolver {
    fn entry(&mut self, path: &Path) -> Entry {
        if let Some(known) = self.entries.get(path) {
            return known.clone();
        }
        let found = match std::fs::symlink_metadata(path) {
            Ok(meta) if meta.file_type().is_symlink() => match std::fs::read_link(path) {
                Ok(target) => Entry::Link(target),
                Err(e) => Entry::missing(&e),
            },
            Ok(meta) if meta.is_dir() => Entry::Dir,
            Ok(_) => Entry::Other,
            Err(e) => Entry::missing(&e),
        };
        self.entries.insert(path.to_path_buf(), found.clone());
        found
    }

    /// The target `path` holds when it is itself a symlink.
    pub fn link_target(&mut self, path: &Path) -> Option<PathBuf> {
        match self.entry(path) {
            Entry::Link(target) => Some(target),
            _ => None,
        }
    }

    /// The canonical path of the absolute `path`, as `realpath(3)` gives it: every symlink
    /// followed, `.` and `..` applied to what is resolved so far. A relative path is handed to
    /// `std::fs::canonicalize` (the policy's own paths are always absolute).
    pub fn canonical(&mut self, path: &Path) -> std::io::Result<PathBuf> {
        if !path.is_absolute() {
            return std::fs::canonicalize(path);
        }
        let mut out = PathBuf::from("/");
        let mut pending: Vec<OsString> = Vec::new();
        push_components(&mut pending, path);
        let mut followed = 0;
        // Whether `out` is a directory: nothing, not even `..`, may follow anything else.
        let mut dir = true;
        while let Some(name) = pending.pop() {
            if !dir {
                return Err(Error::from_raw_os_error(libc::ENOTDIR));
            }
            if name == ".." {
                out.pop();
                continue;
            }
            let next = out.join(&name);
            match self.entry(&next) {
                Entry::Missing(Some(code), _) => return Err(Error::from_raw_os_error(code)),
                Entry::Missing(None, kind) => return Err(Error::from(kind)),
                Entry::Dir => out = next,
                Entry::Other => {
                    out = next;
                    dir = false;
                }
                Entry::Link(target) => {
                    followed += 1;
                    if followed > MAX_LINKS {
                        return Err(Error::other(format!(
                            "too many symlinks resolving '{}'",
                            path.display()
                        )));
                    }
                    if target.is_absolute() {
                        out = PathBuf::from("/");
                    }
                    push_components(&mut pending, &target);
                }
            }
        }
        Ok(out)
    }

    /// The first symlink on the way to `path` (itself included) that lies inside one of
    /// `writable`: a grant spelled through it could have been aimed by a program.
    pub fn planted_link(&mut self, path: &Path, writable: &[PathBuf]) -> Option<PathBuf> {
        let lexical: PathBuf = path.components().collect();
        let mut ancestors: Vec<&Path> = lexical.ancestors().filter(|a| a.parent().is_some()).collect();
        ancestors.reverse();
        let planted = ancestors.into_iter().find(|a| {
            self.link_target(a).is_some()
                && a.parent().is_some_and(|parent| {
                    self.canonical(parent).is_ok_and(|p| writable.iter().any(|w| p.starts_with(w)))
                })
        });
        planted.map(Path::to_path_buf)
    }

    /// The names in directory `dir`, sorted; `None` when it cannot be listed.
    pub fn names(&mut self, dir: &Path) -> Option<&[OsString]> {
        if !self.listings.contains_key(dir) {
            let names = std::fs::read_dir(dir).ok().map(|rd| {
                let mut names: Vec<OsString> = rd.filter_map(Result::ok).map(|e| e.file_name()).collect();
                names.sort();
                names
            });
            self.listings.insert(dir.to_path_buf(), names);
        }
        self.listings.get(dir).and_then(|n| n.as_deref())
    }
}

/// Pushes `path`'s components onto the stack `pending` so that the first one is popped first.
fn push_components(pending: &mut Vec<OsString>, path: &Path) {
    let start = pending.len();
    for c in path.components() {
        match c {
            Component::Normal(name) => pending.push(name.to_os_string()),
            Component::ParentDir => pending.push("..".into()),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => {}
        }
    }
    pending[start..].reverse();
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn tree() -> (tempfile::TempDir, PathBuf) {
        let t = tempfile::tempdir().unwrap();
        let base = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("real/inner")).unwrap();
        std::fs::write(base.join("real/inner/file"), "x").unwrap();
        symlink("real", base.join("rel")).unwrap();
        symlink(base.join("real/inner"), base.join("abs")).unwrap();
        symlink("../real/inner/file", base.join("real/up")).unwrap();
        symlink("loop2", base.join("loop1")).unwrap();
        symlink("loop1", base.join("loop2")).unwrap();
        symlink("nowhere", base.join("dangling")).unwrap();
        (t, base)
    }

    #[test]
    fn canonical_agrees_with_realpath() {
        let (_t, base) = tree();
        let mut r = Resolver::default();
        for spelled in [
            "real",
            "rel",
            "rel/inner/file",
            "abs/file",
            "abs/../inner/./file",
            "rel/up",
            "real/up/../../..",
            "rel/../rel/inner",
            "missing",
            "rel/missing/deeper",
            "dangling",
            "loop1",
            "real/inner/file/below",
        ] {
            let path = base.join(spelled);
            let want = std::fs::canonicalize(&path);
            let got = r.canonical(&path);
            match (&want, &got) {
                (Ok(w), Ok(g)) => assert_eq!(w, g, "{spelled}"),
                (Err(_), Err(_)) => {}
                _ => panic!("{spelled}: realpath {want:?}, resolver {got:?}"),
            }
        }
        assert_eq!(r.canonical(Path::new("/")).unwrap(), Path::new("/"));
    }

    #[test]
    fn a_planted_link_is_the_first_link_inside_a_writable_tree() {
        let (_t, base) = tree();
        let mut r = Resolver::default();
        let writable = [base.join("real")];
        // `rel` lies in `base`, which is not writable: resolved, not planted.
        assert_eq!(r.planted_link(&base.join("rel/inner"), &writable), None);
        // `real/up` lies inside the writable tree.
        assert_eq!(r.planted_link(&base.join("real/up"), &writable), Some(base.join("real/up")));
        // Spelled through `rel`, the same link is still inside the writable tree once resolved.
        assert_eq!(r.planted_link(&base.join("rel/up"), &writable), Some(base.join("rel/up")));
        assert_eq!(r.planted_link(&base.join("real/inner/file"), &writable), None);
        assert_eq!(r.planted_link(&base.join("rel"), std::slice::from_ref(&base)), Some(base.join("rel")));
    }

    #[test]
    fn answers_are_those_of_the_filesystem_when_first_asked() {
        let (_t, base) = tree();
        let mut r = Resolver::default();
        assert_eq!(r.link_target(&base.join("dangling")), Some(PathBuf::from("nowhere")));
        assert_eq!(r.link_target(&base.join("nothing")), None);
        assert_eq!(r.link_target(&base.join("rel")), Some(PathBuf::from("real")));
        assert_eq!(r.link_target(&base.join("real")), None);
        let names: Vec<_> = r.names(&base).unwrap().to_vec();
        assert_eq!(names, ["abs", "dangling", "loop1", "loop2", "real", "rel"]);
        assert!(r.names(&base.join("nothing")).is_none());
    }
}
