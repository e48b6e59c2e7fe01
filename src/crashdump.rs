//! Crash dumps (seed 000, "Crash dumps"): when hullward itself fails — an internal error (exit
//! 125) or a panic — a JSON report goes to `$HULLWARD_HOME/crashdump/YYYYMMDD-HHMMSS-ID.json`
//! and its path is printed on stderr, so a bug report can start from facts.
//!
//! Order of use: `cli::main` calls [`install_panic_hook`] first thing; when a command returns an
//! internal error, it calls [`report`] with [`Failure::error`]. Both end in [`write()`], which
//! builds the [`Report`] and stores it.
//!
//! **What a report holds**: its id (the file name's last part), the UTC time, hullward's
//! arguments, the OS (`/etc/os-release`, kernel release, architecture), hullward's version and git
//! revision, and the failure: the error's message and its chain of sources, or the panic's message,
//! place and backtrace. **What it never holds**: secret values — every string goes through the
//! masker built from this process's secret-named environment variables and the log patterns, as
//! the audit log does —, file contents, a program's output, the environment itself. Usage and
//! configuration errors, denials and a program's own failure are not crashes and write nothing.
//!
//! **Files**: the folder is created 0700 (an existing one is narrowed to 0700, a symlink is
//! refused), the report is created `O_EXCL|O_NOFOLLOW` with mode 0600 and written once.

use std::collections::BTreeMap;
use std::fs::{DirBuilder, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde_json::{json, Value};

use crate::audit::rfc3339;
use crate::filter::{logmask, SecretSet};

/// Mode of a report file.
pub const FILE_MODE: u32 = 0o600;
/// Mode of the `crashdump` folder.
pub const DIR_MODE: u32 = 0o700;

/// Why a report could not be written.
#[derive(Debug, thiserror::Error)]
pub enum CrashDumpError {
    #[error("cannot create the crash dump folder '{}': {source}", path.display())]
    CreateDir { path: PathBuf, source: io::Error },
    #[error("the crash dump folder '{}' is not a directory", path.display())]
    NotADirectory { path: PathBuf },
    #[error("cannot write the crash dump '{}': {source}", path.display())]
    Write { path: PathBuf, source: io::Error },
}

/// What failed: an error returned to `main`, or a panic.
#[derive(Debug, Clone)]
pub struct Failure {
    /// `error` or `panic`.
    pub kind: &'static str,
    pub message: String,
    /// The error's sources, outermost first (empty for a panic).
    pub chain: Vec<String>,
    /// `file:line:column` of a panic.
    pub location: Option<String>,
    /// A panic's backtrace.
    pub backtrace: Option<String>,
}

impl Failure {
    /// An error and the chain of its sources.
    pub fn error(e: &(dyn std::error::Error + 'static)) -> Failure {
        let mut chain = Vec::new();
        let mut source = e.source();
        while let Some(s) = source {
            chain.push(s.to_string());
            source = s.source();
        }
        Failure { kind: "error", message: e.to_string(), chain, location: None, backtrace: None }
    }

    /// A panic: its message (a `&str` or `String` payload), place and a backtrace taken now.
    pub fn panic(info: &std::panic::PanicHookInfo<'_>) -> Failure {
        let payload = info.payload();
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(a panic without a message)".to_string());
        Failure {
            kind: "panic",
            message,
            chain: Vec::new(),
            location: info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column())),
            backtrace: Some(std::backtrace::Backtrace::force_capture().to_string()),
        }
    }
}

/// One crash report, before masking.
#[derive(Debug, Clone)]
pub struct Report {
    pub id: String,
    pub time: SystemTime,
    pub argv: Vec<String>,
    pub os: String,
    pub failure: Failure,
}

impl Report {
    /// A report of `failure` in this process, stamped now.
    pub fn new(failure: Failure) -> Report {
        Report {
            id: short_id(),
            time: SystemTime::now(),
            argv: std::env::args_os().map(|a| a.to_string_lossy().into_owned()).collect(),
            os: os_description(),
            failure,
        }
    }

    /// The file name: `YYYYMMDD-HHMMSS-ID.json` in UTC.
    pub fn file_name(&self) -> String {
        let t = rfc3339(self.time);
        let digits = |r: std::ops::Range<usize>| t[r].replace(['-', ':'], "");
        format!("{}-{}-{}.json", digits(0..10), digits(11..19), self.id)
    }

    /// The JSON object, every string masked with `secrets` and the log patterns.
    pub fn to_json(&self, secrets: &SecretSet) -> Value {
        let f = &self.failure;
        let mut v = json!({
            "id": self.id,
            "time": rfc3339(self.time),
            "argv": self.argv,
            "os": self.os,
            "version": crate::cli::VERSION,
            "failure": {
                "kind": f.kind,
                "message": f.message,
                "chain": f.chain,
                "location": f.location,
                "backtrace": f.backtrace,
            },
        });
        redact(&mut v, secrets);
        v
    }
}

fn redact(value: &mut Value, secrets: &SecretSet) {
    match value {
        Value::String(s) => *s = logmask::redact_str(&secrets.mask_str(s)).into_owned(),
        Value::Array(items) => items.iter_mut().for_each(|v| redact(v, secrets)),
        Value::Object(map) => map.values_mut().for_each(|v| redact(v, secrets)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Writes `report` into `home/crashdump/` and returns the file's path.
pub fn write(home: &Path, report: &Report, secrets: &SecretSet) -> Result<PathBuf, CrashDumpError> {
    let dir = home.join("crashdump");
    prepare_dir(&dir)?;
    let path = dir.join(report.file_name());
    let mut text = serde_json::to_vec_pretty(&report.to_json(secrets)).expect("a report serialises");
    text.push(b'\n');
    let err = |source| CrashDumpError::Write { path: path.clone(), source };
    let mut file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(&path)
        .map_err(err)?;
    file.write_all(&text).map_err(err)?;
    Ok(path)
}

/// Creates `dir` 0700 (parents too), or narrows an existing one to 0700; a non-directory (a
/// symlink included) is refused.
fn prepare_dir(dir: &Path) -> Result<(), CrashDumpError> {
    let create = |source| CrashDumpError::CreateDir { path: dir.to_path_buf(), source };
    match std::fs::symlink_metadata(dir) {
        Ok(meta) if !meta.is_dir() => Err(CrashDumpError::NotADirectory { path: dir.to_path_buf() }),
        Ok(meta) if meta.permissions().mode() & 0o7777 != DIR_MODE => {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(DIR_MODE)).map_err(create)
        }
        Ok(_) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            DirBuilder::new().recursive(true).mode(DIR_MODE).create(dir).map_err(create)
        }
        Err(e) => Err(create(e)),
    }
}

/// Writes a report of `failure` and says where on stderr (or why none could be written).
pub fn report(home: &Path, failure: &Failure) {
    let env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    match write(home, &Report::new(failure.clone()), &SecretSet::from_env(&env)) {
        Ok(path) => eprintln!("hullward: crash report written to {}", path.display()),
        Err(e) => eprintln!("hullward: no crash report: {e}"),
    }
}

/// Makes a panic of this process write a report before the standard message; with
/// `panic = "abort"` (release builds) the process then exits 125 instead of aborting. A panic in
/// a forked copy of this process (the sandbox's init) only prints the standard message.
pub fn install_panic_hook(home: PathBuf) {
    let pid = std::process::id();
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if std::process::id() != pid {
            return previous(info);
        }
        previous(info);
        report(&home, &Failure::panic(info));
        #[cfg(panic = "abort")]
        std::process::exit(i32::from(crate::error::code::INTERNAL));
    }));
}

/// Eight hex digits from the kernel's random source (the time and pid if it cannot be read).
fn short_id() -> String {
    let mut bytes = [0u8; 4];
    let random = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if random.is_err() {
        let nanos =
            SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default().subsec_nanos();
        bytes = (nanos ^ std::process::id().rotate_left(16)).to_be_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `Debian GNU/Linux 12 (bookworm); Linux 6.1.0; x86_64` from `/etc/os-release` and procfs.
fn os_description() -> String {
    let pretty = std::fs::read_to_string("/etc/os-release").ok().and_then(|t| {
        t.lines().find_map(|l| l.strip_prefix("PRETTY_NAME=")).map(|v| v.trim().trim_matches('"').to_string())
    });
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").ok().map(|r| r.trim().to_string());
    format!(
        "{}; {} {}; {}",
        pretty.as_deref().unwrap_or("unknown distribution"),
        std::env::consts::OS,
        kernel.as_deref().unwrap_or("unknown kernel"),
        std::env::consts::ARCH
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, thiserror::Error)]
    #[error("outer: pipe")]
    struct Outer(#[source] io::Error);

    fn failure() -> Failure {
        Failure::error(&Outer(io::Error::other("inner cause")))
    }

    #[test]
    fn an_error_report_has_the_chain_and_masks_secrets() {
        let secret = "sk-live-0123456789abcdef";
        let mut report = Report::new(failure());
        report.argv =
            vec!["hullward".into(), "run".into(), "--".into(), "deploy".into(), format!("--key={secret}")];
        report.failure.message = format!("outer: pipe (token {secret})");
        let v = report.to_json(&SecretSet::from_values([secret]));
        let text = v.to_string();
        assert!(!text.contains(secret), "{text}");
        assert_eq!(v["failure"]["kind"], "error");
        assert_eq!(v["failure"]["chain"][0], "inner cause");
        assert_eq!(v["argv"][3], "deploy");
        assert_eq!(v["version"], crate::cli::VERSION);
        assert_eq!(v["id"].as_str().unwrap().len(), 8);
        assert!(v["os"].as_str().unwrap().contains(std::env::consts::ARCH));
    }

    #[test]
    fn file_name_is_time_and_id() {
        let mut report = Report::new(failure());
        report.time = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_776_871_812);
        report.id = "a3f1b2c4".into();
        assert_eq!(report.file_name(), "20260422-153012-a3f1b2c4.json");
    }

    #[test]
    fn written_0600_in_a_0700_folder_and_a_symlinked_folder_is_refused() {
        let home = tempfile::tempdir().unwrap();
        let path = write(home.path(), &Report::new(failure()), &SecretSet::default()).unwrap();
        assert_eq!(path.parent().unwrap(), home.path().join("crashdump"));
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        assert_eq!(mode(&path), FILE_MODE);
        assert_eq!(mode(&home.path().join("crashdump")), DIR_MODE);
        let v: Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
        assert_eq!(v["failure"]["message"], "outer: pipe");

        let other = tempfile::tempdir().unwrap();
        let linked = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(other.path(), linked.path().join("crashdump")).unwrap();
        let err = write(linked.path(), &Report::new(failure()), &SecretSet::default()).unwrap_err();
        assert!(matches!(err, CrashDumpError::NotADirectory { .. }), "{err}");
        assert_eq!(std::fs::read_dir(other.path()).unwrap().count(), 0);
    }
}
