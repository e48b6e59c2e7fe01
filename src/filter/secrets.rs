//! Secret discovery: the exact values the output filter, the audit log and the logs must never show.
//!
//! Order of use, once per call: [`SecretSet::discover`] gathers the values — from secret-named
//! environment variables ([`names`]), from every file a deny rule matches under the roots, and
//! from the home credential files — and compiles them into one [`Matcher`]. The set is then
//! handed to [`OutputFilter`](super::OutputFilter) and to the audit log; cloning it is cheap.
//!
//! A long-lived process (`serve`, `mcp`) calls [`keep_file_values`] once: from then on the values
//! of each protected file it reads are kept, and the next call takes them instead of reading the
//! file while one `stat` — the walk's own, earlier in the same call, or one of its own — says it
//! is the very same content: the same inode, size, modification and change times. A write moves
//! the change time and no program can set it back; a value is kept only when the file's change
//! time was older than a clock tick when it was read (a write in the same tick could keep it), so
//! a kept value is never one a file no longer holds.
//!
//! Only values of at least [`MIN_SECRET_CHARS`] characters are kept (`true` or `3000` would mangle
//! ordinary output). The protected files are the ones the sandbox's walk of the roots found
//! ([`masks::scan_policy`]: same rules, same bounds, so `hullward filter` masks what `run` would).
//! Reading them is bounded by a [`ReadBudget`] — bytes, values and time — that nothing in the
//! roots can stretch: the home credential files are read first, then the protected files from
//! the shallowest, and what does not fit is left unread (those files stay masked in the child's
//! view; only their values are not searched for in the output) and counted in
//! [`FileSecrets::truncated`]. Files over [`SCAN_MAX_FILE_BYTES`] are not read, and only regular
//! files are opened (never a FIFO or a device a planted symlink points to).

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::fs::File;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime};

use super::mask::{Matcher, MARKER};
use super::{extract, names};
use crate::policy::Policy;
use crate::sandbox::masks::{self, FileVersion};

/// Values shorter than this many characters are never masked.
pub const MIN_SECRET_CHARS: usize = 8;
/// Largest file the scan reads.
pub const SCAN_MAX_FILE_BYTES: u64 = 256 * 1024;
/// Files whose values a long-lived process keeps at most (past this it starts over).
const MAX_KEPT_FILES: usize = 65_536;

/// Home credential files read unless `DenyCredentialFiles: false` (besides `~/.ssh/id_*`).
pub const HOME_CREDENTIAL_FILES: &[&str] =
    &[".aws/credentials", ".netrc", "_netrc", ".pgpass", ".git-credentials"];

/// How much reading the protected files may take, per call. A program can plant any number of
/// protected files, so none of these grows with what is in the roots.
#[derive(Debug, Clone, Copy)]
pub struct ReadBudget {
    /// File content read, in total.
    pub bytes: u64,
    /// Candidate values kept, in total.
    pub values: usize,
    /// Wall time spent reading and extracting.
    pub time: Duration,
}

impl Default for ReadBudget {
    fn default() -> Self {
        ReadBudget { bytes: 8 * 1024 * 1024, values: 20_000, time: Duration::from_secs(2) }
    }
}

/// The values to mask, de-duplicated, each at least [`MIN_SECRET_CHARS`] long, compiled.
#[derive(Clone, Default)]
pub struct SecretSet {
    values: Arc<[Vec<u8>]>,
    matcher: Option<Arc<Matcher>>,
}

/// Never prints a value: only how many there are.
impl fmt::Debug for SecretSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SecretSet").field("values", &self.values.len()).finish_non_exhaustive()
    }
}

impl SecretSet {
    /// Everything a call must mask: the environment's secrets plus a fresh scan of the policy's
    /// protected files.
    pub fn discover(policy: &Policy, env: &BTreeMap<String, String>) -> SecretSet {
        let files = FileSecrets::scan(policy);
        SecretSet::from_env_and_files(env, &files)
    }

    /// The secrets of the environment alone: values of secret-named variables, and passwords in
    /// URLs held by any variable.
    pub fn from_env(env: &BTreeMap<String, String>) -> SecretSet {
        SecretSet::from_values(env_values(env))
    }

    /// The environment's secrets plus already scanned file secrets.
    pub fn from_env_and_files(env: &BTreeMap<String, String>, files: &FileSecrets) -> SecretSet {
        SecretSet::from_values(env_values(env).into_iter().chain(files.values.iter().cloned()))
    }

    /// This set plus `extra` (values that did not come from the environment or a file, such as
    /// credentials forwarded from the keychain).
    pub fn with<I, V>(&self, extra: I) -> SecretSet
    where
        I: IntoIterator<Item = V>,
        V: AsRef<[u8]>,
    {
        SecretSet::from_values(
            self.values.iter().cloned().chain(extra.into_iter().map(|v| v.as_ref().to_vec())),
        )
    }

    /// A set of exactly these values, minus the ones that are too short.
    pub fn from_values<I, V>(values: I) -> SecretSet
    where
        I: IntoIterator<Item = V>,
        V: AsRef<[u8]>,
    {
        let mut kept: Vec<Vec<u8>> =
            values.into_iter().map(|v| v.as_ref().to_vec()).filter(|v| long_enough(v)).collect();
        kept.sort_unstable();
        kept.dedup();
        let matcher = Matcher::new(&kept).map(Arc::new);
        SecretSet { values: kept.into(), matcher }
    }

    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Whether `value` is one of the secrets.
    pub fn contains(&self, value: &[u8]) -> bool {
        self.values.binary_search_by(|v| v.as_slice().cmp(value)).is_ok()
    }

    /// The compiled matcher; `None` when there is nothing to mask.
    pub fn matcher(&self) -> Option<&Arc<Matcher>> {
        self.matcher.as_ref()
    }

    /// `text` with every secret replaced by `<secret-hidden>`.
    pub fn mask(&self, text: &[u8]) -> Vec<u8> {
        match &self.matcher {
            Some(m) => m.mask_all(text),
            None => text.to_vec(),
        }
    }

    /// [`mask`](Self::mask) for a string (the marker is ASCII, so UTF-8 stays UTF-8 unless a secret
    /// ended inside a character).
    pub fn mask_str(&self, text: &str) -> String {
        match &self.matcher {
            Some(m) => String::from_utf8_lossy(&m.mask_all(text.as_bytes())).into_owned(),
            None => text.to_string(),
        }
    }
}

/// At least [`MIN_SECRET_CHARS`] characters (bytes, for a value that is not UTF-8), and not the
/// marker itself.
fn long_enough(v: &[u8]) -> bool {
    let chars = std::str::from_utf8(v).map_or(v.len(), |s| s.chars().count());
    chars >= MIN_SECRET_CHARS && v != MARKER
}

fn env_values(env: &BTreeMap<String, String>) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for (name, value) in env {
        if names::is_secret_env_name(name) {
            out.extend(extract::from_value(value.as_bytes()));
        }
        out.extend(extract::url_passwords_in(value.as_bytes()));
    }
    out
}

/// What a scan of the protected files found.
#[derive(Clone, Default)]
pub struct FileSecrets {
    values: Vec<Vec<u8>>,
    /// Protected files read (or taken from what this process kept of them).
    pub files_read: usize,
    /// Of those, the files whose values were kept from an earlier read (see [`keep_file_values`]).
    pub reused: usize,
    /// Protected files left unread because the [`ReadBudget`] was spent.
    pub truncated: usize,
}

impl fmt::Debug for FileSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FileSecrets")
            .field("values", &self.values.len())
            .field("files_read", &self.files_read)
            .field("reused", &self.reused)
            .field("truncated", &self.truncated)
            .finish()
    }
}

impl FileSecrets {
    /// Walks the roots as the sandbox does and reads every protected file found there, and the
    /// home credential files. A root that cannot be walked contributes nothing (its files are
    /// not readable by a sandboxed program either: the call refuses to run).
    pub fn scan(policy: &Policy) -> FileSecrets {
        match masks::scan_policy(policy, &crate::sandbox::plan::walked_dirs(policy)) {
            Ok(snapshot) => FileSecrets::read_protected(snapshot.secret_files(), policy),
            Err(e) => {
                tracing::warn!("secret scan: {e}");
                FileSecrets::read_protected(std::iter::empty(), policy)
            }
        }
    }

    /// Reads protected files already found by a walk of the roots (the sandbox's walk), each
    /// with the version of its content the walk saw when it has one, and the home credential
    /// files, within the default [`ReadBudget`].
    pub fn read_protected<'a>(
        files: impl IntoIterator<Item = (&'a Path, Option<FileVersion>)>,
        policy: &Policy,
    ) -> FileSecrets {
        FileSecrets::read_within(files, policy, ReadBudget::default())
    }

    /// [`read_protected`](Self::read_protected) within `budget`: home credential files first,
    /// then the protected files, shallowest first.
    pub fn read_within<'a>(
        files: impl IntoIterator<Item = (&'a Path, Option<FileVersion>)>,
        policy: &Policy,
        budget: ReadBudget,
    ) -> FileSecrets {
        // Shallowest first, then by the path's bytes (the walk's paths are normalized: equal paths
        // are equal bytes, and comparing components would cost more than reading the files).
        let mut files: Vec<(usize, &[u8], &Path, Option<FileVersion>)> = files
            .into_iter()
            .map(|(f, seen)| (f.components().count(), f.as_os_str().as_bytes(), f, seen))
            .collect();
        files.sort_unstable_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        files.dedup_by(|a, b| a.1 == b.1);
        let home = home_files(policy);
        let all: Vec<(&Path, Option<FileVersion>)> =
            home.iter().map(|f| (f.as_path(), None)).chain(files.into_iter().map(|f| (f.2, f.3))).collect();
        let mut found = FileSecrets::default();
        let mut reader = Reader { budget, bytes: 0, started: Instant::now() };
        for (i, (file, seen)) in all.iter().enumerate() {
            match reader.read(file, *seen, &mut found) {
                Outcome::Done => {}
                Outcome::NoRoom => found.truncated += 1,
                Outcome::Spent => {
                    found.truncated += all.len() - i;
                    break;
                }
            }
        }
        if found.truncated > 0 {
            tracing::warn!(
                unread = found.truncated,
                "secret scan: read budget spent; the values of some protected files are not masked"
            );
        }
        found
    }

    /// How many candidate values were found (before the length threshold).
    pub fn len(&self) -> usize {
        self.values.len()
    }

    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }
}

/// The home credential files a policy masks (none with `DenyCredentialFiles: false`).
fn home_files(policy: &Policy) -> Vec<PathBuf> {
    match policy.home() {
        Some(home) if policy.deny_credential_files => home_credential_files(home),
        _ => Vec::new(),
    }
}

/// Reads protected files one after the other until the budget is spent.
struct Reader {
    budget: ReadBudget,
    bytes: u64,
    started: Instant,
}

/// What became of one file.
enum Outcome {
    /// Read (or skipped for good: missing, not a regular file, over [`SCAN_MAX_FILE_BYTES`]).
    Done,
    /// Larger than what is left of the byte budget.
    NoRoom,
    /// Nothing is left of the budget.
    Spent,
}

impl Reader {
    /// Reads one protected file (or takes what was kept of it, while it is still `seen`, the
    /// version a `stat` of it gave earlier in the call, or a `stat` now says it is unchanged)
    /// and keeps its candidate values. A file that cannot be read is skipped and logged at debug
    /// level.
    fn read(&mut self, path: &Path, seen: Option<FileVersion>, found: &mut FileSecrets) -> Outcome {
        if self.bytes >= self.budget.bytes
            || found.values.len() >= self.budget.values
            || self.started.elapsed() >= self.budget.time
        {
            return Outcome::Spent;
        }
        let left = self.budget.bytes - self.bytes;
        let room = self.budget.values - found.values.len();
        // One `stat` serves both the kept values' check and the read (a missing file, the common
        // case of a home credential file, ends here).
        let (seen, meta) = match seen {
            Some(seen) => (Some(seen), None),
            None => match std::fs::metadata(path) {
                Ok(meta) => (Some(FileVersion::of(&meta)), Some(meta)),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Outcome::Done,
                Err(_) => (None, None),
            },
        };
        if let Some(kept) = seen.and_then(|seen| kept_values(path, seen)) {
            if kept.bytes > left {
                return Outcome::NoRoom;
            }
            self.bytes += kept.bytes;
            found.values.extend(kept.values.iter().take(room).cloned());
            found.files_read += 1;
            found.reused += 1;
            return Outcome::Done;
        }
        let reading = SystemTime::now();
        match read_regular(path, meta, left) {
            Ok(Content::Bytes(content, opened)) => {
                self.bytes += content.len() as u64;
                let name = path.file_name().map(OsStrExt::as_bytes).unwrap_or_default();
                let values = extract::from_file(name, &content);
                found.values.extend(values.iter().take(room).cloned());
                found.files_read += 1;
                keep_values(path, &opened, reading, values, content.len() as u64);
                Outcome::Done
            }
            Ok(Content::OverBudget) => Outcome::NoRoom,
            Ok(Content::NotRead) => Outcome::Done,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Outcome::Done,
            Err(e) => {
                tracing::debug!(path = %path.display(), "secret scan cannot read: {e}");
                Outcome::Done
            }
        }
    }
}

/// From now on, this process keeps the values of the protected files it reads (see the module
/// documentation): a long-lived server, whose calls read the same files again and again.
pub fn keep_file_values() {
    KEEP.store(true, Ordering::Relaxed);
}

static KEEP: AtomicBool = AtomicBool::new(false);

/// The values kept of one file, and what reading it cost the budget.
struct Kept {
    id: FileVersion,
    values: Arc<[Vec<u8>]>,
    bytes: u64,
}

fn kept() -> &'static Mutex<HashMap<PathBuf, Kept>> {
    static KEPT: OnceLock<Mutex<HashMap<PathBuf, Kept>>> = OnceLock::new();
    KEPT.get_or_init(Mutex::default)
}

/// What was kept of `path`, when it still names the very same content (`seen` earlier in the
/// call, or stat'ed now).
fn kept_values(path: &Path, seen: FileVersion) -> Option<KeptValues> {
    if !KEEP.load(Ordering::Relaxed) {
        return None;
    }
    let kept = kept().lock().ok()?;
    let entry = kept.get(path).filter(|k| k.id == seen)?;
    Some(KeptValues { values: entry.values.clone(), bytes: entry.bytes })
}

/// A kept file's values, out of the lock.
struct KeptValues {
    values: Arc<[Vec<u8>]>,
    bytes: u64,
}

/// Keeps the values read from `path` (opened as `opened` at `reading`) — only when its change
/// time was older than a clock tick then: a write in the same tick could leave it unchanged.
fn keep_values(
    path: &Path,
    opened: &std::fs::Metadata,
    reading: SystemTime,
    values: Vec<Vec<u8>>,
    bytes: u64,
) {
    if !KEEP.load(Ordering::Relaxed) {
        return;
    }
    let changed =
        std::time::UNIX_EPOCH + Duration::new(opened.ctime().max(0) as u64, opened.ctime_nsec() as u32);
    if reading.duration_since(changed).is_ok_and(|age| age > crate::sandbox::masks::CTIME_TICK) {
        if let Ok(mut kept) = kept().lock() {
            if kept.len() >= MAX_KEPT_FILES {
                kept.clear();
            }
            let entry = Kept { id: FileVersion::of(opened), values: values.into(), bytes };
            kept.insert(path.to_path_buf(), entry);
        }
    }
}

/// What [`read_regular`] found.
enum Content {
    /// The content, and what the open file's `fstat` said of it.
    Bytes(Vec<u8>, std::fs::Metadata),
    /// Not a regular file, or over [`SCAN_MAX_FILE_BYTES`].
    NotRead,
    /// Larger than the `left` bytes of the budget.
    OverBudget,
}

/// The content of `path` when it is a regular file (symlinks followed) of at most
/// [`SCAN_MAX_FILE_BYTES`] and `left` bytes; `meta` is its `stat` when the caller just took one.
/// Opened non-blocking and checked again after opening, so a FIFO or device swapped in cannot
/// stall or trigger anything.
fn read_regular(path: &Path, meta: Option<std::fs::Metadata>, left: u64) -> std::io::Result<Content> {
    let meta = match meta {
        Some(meta) => meta,
        None => std::fs::metadata(path)?,
    };
    if !meta.is_file() || meta.len() > SCAN_MAX_FILE_BYTES {
        return Ok(Content::NotRead);
    }
    if meta.len() > left {
        return Ok(Content::OverBudget);
    }
    let file = File::options()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
        .open(path)?;
    let opened = file.metadata()?;
    if !opened.is_file() {
        return Ok(Content::NotRead);
    }
    let max = left.min(SCAN_MAX_FILE_BYTES);
    let mut content = Vec::new();
    file.take(max + 1).read_to_end(&mut content)?;
    Ok(if content.len() as u64 <= max { Content::Bytes(content, opened) } else { Content::OverBudget })
}

/// `~/.ssh/id_*` private keys (not `*.pub`) and [`HOME_CREDENTIAL_FILES`].
fn home_credential_files(home: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = HOME_CREDENTIAL_FILES.iter().map(|f| home.join(f)).collect();
    if let Ok(dir) = std::fs::read_dir(home.join(".ssh")) {
        for entry in dir.flatten() {
            let name = entry.file_name();
            let name = name.as_bytes();
            if name.starts_with(b"id_") && !name.ends_with(b".pub") {
                files.push(entry.path());
            }
        }
    }
    files.sort();
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_threshold_is_eight_characters() {
        let set = SecretSet::from_values(["1234567", "12345678", "héhéhéh", "héhéhéhé"]);
        assert!(!set.contains(b"1234567"));
        assert!(set.contains(b"12345678"));
        assert!(!set.contains("héhéhéh".as_bytes()));
        assert!(set.contains("héhéhéhé".as_bytes()));
        assert_eq!(set.mask(b"1234567 12345678"), b"1234567 <secret-hidden>");
    }

    #[test]
    fn values_are_deduplicated_and_never_printed() {
        let set = SecretSet::from_values(["duplicate-value", "duplicate-value"]);
        assert_eq!(set.len(), 1);
        assert!(!format!("{set:?}").contains("duplicate"));
    }

    #[test]
    fn environment_secrets_follow_the_name_test() {
        let env: BTreeMap<String, String> = [
            ("GITHUB_TOKEN", "ghp_0123456789abcdef"),
            ("AWS_ACCESS_KEY_ID", "AKIAIOSFODNN7EXAMPLE"),
            ("PORT", "30003000"),
            ("NODE_ENV", "production"),
            ("SHORT_TOKEN", "1234567"),
            ("DATABASE_URL", "postgres://app:db-password-1@db/app"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let set = SecretSet::from_env(&env);
        assert!(set.contains(b"ghp_0123456789abcdef"));
        assert!(set.contains(b"db-password-1"));
        for readable in [&b"AKIAIOSFODNN7EXAMPLE"[..], b"30003000", b"production", b"1234567"] {
            assert!(!set.contains(readable), "{}", String::from_utf8_lossy(readable));
        }
    }
}
