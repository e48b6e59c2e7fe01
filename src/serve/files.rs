//! The file tools' I/O (`read_file`, `write_file`, `list_files`), performed by hullward itself
//! once the access decision ([`super::access`]) has allowed the operation.
//!
//! Every open starts from a descriptor of the allowed directory that contains the path (a root,
//! a granted directory, a writable or system directory) and goes down with `openat2` and
//! `RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS`. The path it is given is the
//! guard's canonical form, in which no component is a symlink or `..`; so a symlink met at open
//! time means the tree changed between the check and the open, and the kernel refuses it
//! (`ELOOP`, `EXDEV`) instead of following it — no swap of a directory for a symlink, no `..` and
//! no rename race takes the operation outside the directory the guard judged.
//!
//! Writes are atomic: a temporary file in the target's own directory, written and `fsync`ed, then
//! `renameat` over the target and the directory `fsync`ed. A reader sees the old content or the
//! new, never a part; a symlink planted at the target's name is replaced, never followed.

use std::fs::File;
use std::io::{ErrorKind, Write};
use std::os::fd::OwnedFd;
use std::os::unix::fs::FileExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// The most entries `list_files` returns for one directory.
pub const MAX_ENTRIES: usize = 10_000;

/// Why a file operation could not be done.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error(
        "'{0}' changed between the check and the open (a symlink or '..' appeared on the way); nothing was read or written"
    )]
    Raced(PathBuf),
    #[error("'{path}': {source}")]
    Io { path: PathBuf, source: std::io::Error },
    #[error("'{0}' is not a regular file")]
    NotAFile(PathBuf),
    #[error("'{0}' is not a directory")]
    NotADirectory(PathBuf),
}

/// A path below an allowed directory: where the operation starts and the way down.
#[derive(Debug, Clone)]
pub struct Anchored {
    pub base: PathBuf,
    /// Relative to `base`, without `.`, `..` or symlinks (the guard's canonical form).
    pub rel: PathBuf,
}

impl Anchored {
    fn full(&self) -> PathBuf {
        self.base.join(&self.rel)
    }

    fn io(&self, source: impl Into<std::io::Error>) -> FileError {
        FileError::Io { path: self.full(), source: source.into() }
    }

    /// The error for a failed `openat2`: a refused resolution is the race.
    fn open_error(&self, e: Errno) -> FileError {
        match e {
            Errno::LOOP | Errno::XDEV => FileError::Raced(self.full()),
            e => self.io(e),
        }
    }
}

/// What `read_file` read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadOut {
    pub content: String,
    /// The file's size in bytes.
    pub size: u64,
    /// The byte offset where the next read goes on, when the file has more.
    pub next_offset: Option<u64>,
    /// Bytes that were not UTF-8 were shown as U+FFFD.
    pub lossy: bool,
}

/// One entry of a listed directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub name: String,
    pub kind: &'static str,
    pub size: u64,
}

/// The resolution every open below a base uses.
fn resolve_flags() -> ResolveFlags {
    ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS | ResolveFlags::NO_SYMLINKS
}

fn open_base(at: &Anchored) -> Result<OwnedFd, FileError> {
    rustix::fs::open(&at.base, OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| FileError::Io { path: at.base.clone(), source: e.into() })
}

/// `rel` opened below `dir` (`.` for the directory itself).
fn beneath(dir: &OwnedFd, rel: &Path, flags: OFlags, mode: Mode) -> Result<OwnedFd, Errno> {
    let rel = if rel.as_os_str().is_empty() { Path::new(".") } else { rel };
    rustix::fs::openat2(dir, rel, flags | OFlags::CLOEXEC, mode, resolve_flags())
}

/// Reads at most `limit` characters from byte `offset` on.
pub fn read(at: &Anchored, offset: u64, limit: usize) -> Result<ReadOut, FileError> {
    let base = open_base(at)?;
    let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK;
    let file = File::from(beneath(&base, &at.rel, flags, Mode::empty()).map_err(|e| at.open_error(e))?);
    let meta = file.metadata().map_err(|e| at.io(e))?;
    if !meta.is_file() {
        return Err(FileError::NotAFile(at.full()));
    }
    let size = meta.len();
    let start = offset.min(size);
    let want = usize::try_from(size - start).unwrap_or(usize::MAX).min(limit.saturating_mul(4));
    let mut buf = vec![0u8; want];
    let mut got = 0;
    while got < want {
        match file.read_at(&mut buf[got..], start + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(at.io(e)),
        }
    }
    buf.truncate(got);
    let skip =
        if start > 0 { buf.iter().take(3).take_while(|b| (0x80..0xC0).contains(*b)).count() } else { 0 };
    let (content, used, lossy) = decode(&buf[skip..], limit);
    let end = start + (skip + used) as u64;
    Ok(ReadOut { content, size, next_offset: (end < size).then_some(end), lossy })
}

/// The first `limit` characters of `bytes` (invalid sequences as U+FFFD, one character each):
/// the text, how many bytes it took, and whether anything was not UTF-8.
fn decode(bytes: &[u8], limit: usize) -> (String, usize, bool) {
    let mut out = String::new();
    let (mut chars, mut used, mut lossy) = (0, 0, false);
    for chunk in bytes.utf8_chunks() {
        for (i, c) in chunk.valid().char_indices() {
            if chars == limit {
                return (out, used + i, lossy);
            }
            out.push(c);
            chars += 1;
        }
        used += chunk.valid().len();
        if !chunk.invalid().is_empty() {
            if chars == limit {
                return (out, used, lossy);
            }
            out.push(char::REPLACEMENT_CHARACTER);
            chars += 1;
            lossy = true;
            used += chunk.invalid().len();
        }
    }
    (out, used, lossy)
}

/// Replaces the file's content with `content`, atomically; missing parent directories are created
/// (below the base, by the same resolution). Returns the bytes written.
pub fn write(at: &Anchored, content: &[u8]) -> Result<u64, FileError> {
    let name = at.rel.file_name().ok_or_else(|| FileError::NotAFile(at.full()))?.to_os_string();
    let base = open_base(at)?;
    let parent = parent_dir(at, &base)?;
    let existing = match rustix::fs::statat(&parent, name.as_os_str(), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => Some(st),
        Err(Errno::NOENT) => None,
        Err(e) => return Err(at.io(e)),
    };
    if let Some(st) = &existing {
        if FileType::from_raw_mode(st.st_mode) == FileType::Directory {
            return Err(FileError::NotAFile(at.full()));
        }
    }
    let mode = existing
        .as_ref()
        .filter(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
        .map(|st| Mode::from_raw_mode(st.st_mode & 0o7777));
    let temp = temp_name(&name);
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let fd = rustix::fs::openat(&parent, temp.as_os_str(), flags, Mode::from_raw_mode(0o644))
        .map_err(|e| at.io(e))?;
    let written = fill(File::from(fd), content, mode)
        .and_then(|()| {
            rustix::fs::renameat(&parent, temp.as_os_str(), &parent, name.as_os_str()).map_err(Into::into)
        })
        .and_then(|()| rustix::fs::fsync(&parent).map_err(Into::into));
    if let Err(e) = written {
        let _ = rustix::fs::unlinkat(&parent, temp.as_os_str(), AtFlags::empty());
        return Err(at.io(e));
    }
    Ok(content.len() as u64)
}

/// The temporary file's content, mode (the replaced file's, when there was one) and `fsync`.
fn fill(mut file: File, content: &[u8], mode: Option<Mode>) -> std::io::Result<()> {
    file.write_all(content)?;
    if let Some(mode) = mode {
        rustix::fs::fchmod(&file, mode)?;
    }
    file.sync_all()
}

/// A name no other writer uses, in the target's directory.
fn temp_name(name: &std::ffi::OsStr) -> std::ffi::OsString {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut temp = std::ffi::OsString::from(".");
    temp.push(name);
    temp.push(format!(".hullward-{}-{}.tmp", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed)));
    temp
}

/// The target's directory, opened for reading (so that it can be `fsync`ed); each missing
/// directory on the way is created, each existing one opened without following a symlink.
fn parent_dir(at: &Anchored, base: &OwnedFd) -> Result<OwnedFd, FileError> {
    let dir_flags = OFlags::PATH | OFlags::DIRECTORY;
    let mut dir = beneath(base, Path::new("."), dir_flags, Mode::empty()).map_err(|e| at.open_error(e))?;
    let parent = at.rel.parent().unwrap_or(Path::new(""));
    for comp in parent.components() {
        let Component::Normal(name) = comp else { return Err(FileError::Raced(at.full())) };
        let next = match beneath(&dir, Path::new(name), dir_flags, Mode::empty()) {
            Err(Errno::NOENT) => {
                match rustix::fs::mkdirat(&dir, name, Mode::from_raw_mode(0o755)) {
                    Ok(()) | Err(Errno::EXIST) => {}
                    Err(e) => return Err(at.io(e)),
                }
                beneath(&dir, Path::new(name), dir_flags, Mode::empty())
            }
            other => other,
        };
        dir = next.map_err(|e| match e {
            Errno::NOTDIR => FileError::NotADirectory(at.full()),
            e => at.open_error(e),
        })?;
    }
    beneath(&dir, Path::new("."), OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
        .map_err(|e| at.open_error(e))
}

/// The entries of the directory (sorted by name, at most [`MAX_ENTRIES`]) and whether there
/// were more.
pub fn list(at: &Anchored) -> Result<(Vec<Entry>, bool), FileError> {
    let base = open_base(at)?;
    let dir =
        beneath(&base, &at.rel, OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty()).map_err(|e| match e {
            Errno::NOTDIR => FileError::NotADirectory(at.full()),
            e => at.open_error(e),
        })?;
    let mut entries = Vec::new();
    let mut more = false;
    for entry in rustix::fs::Dir::read_from(&dir).map_err(|e| at.io(e))? {
        let entry = entry.map_err(|e| at.io(e))?;
        let name = entry.file_name();
        if matches!(name.to_bytes(), b"." | b"..") {
            continue;
        }
        if entries.len() == MAX_ENTRIES {
            more = true;
            break;
        }
        let (kind, size) = match rustix::fs::statat(&dir, name, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => (kind(FileType::from_raw_mode(st.st_mode)), st.st_size.max(0) as u64),
            Err(_) => ("vanished", 0),
        };
        entries.push(Entry { name: name.to_string_lossy().into_owned(), kind, size });
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok((entries, more))
}

fn kind(t: FileType) -> &'static str {
    match t {
        FileType::RegularFile => "file",
        FileType::Directory => "dir",
        FileType::Symlink => "symlink",
        FileType::Fifo => "fifo",
        FileType::Socket => "socket",
        FileType::CharacterDevice | FileType::BlockDevice => "device",
        FileType::Unknown => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decoding_counts_characters_and_the_bytes_they_took() {
        assert_eq!(decode("héllo".as_bytes(), 2), ("hé".to_string(), 3, false));
        assert_eq!(decode("héllo".as_bytes(), 10), ("héllo".to_string(), 6, false));
        assert_eq!(decode(b"a\xffb", 2), ("a\u{fffd}".to_string(), 2, true));
        assert_eq!(decode(b"", 5), (String::new(), 0, false));
    }
}
