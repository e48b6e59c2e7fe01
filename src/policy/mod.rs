//! The one immutable, validated `Policy` every other module reads.
//!
//! Order of use: [`load::LoadRequest`] gathers the inputs (profile, config file, flags), and
//! [`load::load`] layers them — the built-in `default` profile, then `--profile`, then `--config`,
//! then the flags — resolves paths, expands `${ENV}` tokens, adds the always-on defaults and
//! validates. What comes out is a [`Policy`]: complete, canonical and never mutated afterwards.
//! Guards, the sandbox planner, the filters and `explain` take `&Policy`.

pub mod diag;
pub mod discover;
pub mod duration;
pub mod globs;
pub mod load;
pub mod locate;
pub mod profiles;
pub mod resolve;
pub mod schema;

use std::path::{Path, PathBuf};
use std::time::Duration;

pub use diag::{Diagnostic, Severity};
pub use globs::{GlobRule, GlobRules, Origin};

/// The resolved policy.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The sandbox root (`FileSystemSandboxPath`, `--root`, or the current directory), canonical.
    pub root: PathBuf,
    /// More allowed roots (`Sandbox.Include`, `--include`), canonical.
    pub includes: Vec<PathBuf>,
    /// `FileSystemPermissions.Read`; empty means no restriction.
    pub read: GlobRules,
    /// `FileSystemPermissions.Write`; empty means no restriction.
    pub write: GlobRules,
    /// Every "never": configured `Deny`, `--deny`, the `.env` defaults and the credential files.
    pub deny: GlobRules,
    /// Write-protected repository metadata (`.git/hooks/**`, `.git/config`).
    pub write_protect: GlobRules,
    /// `ChangeEnvelope`; `None` when not configured.
    pub change_envelope: Option<GlobRules>,
    pub deny_credential_files: bool,
    pub shell: ShellPolicy,
    pub http: HttpPolicy,
    pub read_file_size_limit: u64,
    pub sandbox: SandboxPolicy,
    pub session: Session,
    /// What was loaded, in layering order (for `explain`).
    pub sources: Vec<String>,
    /// The configuration and profile files loaded (canonical): the child may never change them.
    pub files: Vec<PathBuf>,
    /// Warnings found while loading (errors abort loading instead).
    pub warnings: Vec<Diagnostic>,
}

impl Policy {
    /// The sandbox root followed by the `Include` roots.
    pub fn roots(&self) -> Vec<PathBuf> {
        std::iter::once(self.root.clone()).chain(self.includes.iter().cloned()).collect()
    }

    /// The root that contains `path` (component-wise), if any.
    pub fn root_containing(&self, path: &Path) -> Option<&Path> {
        std::iter::once(&self.root)
            .chain(self.includes.iter())
            .find(|r| path.starts_with(r))
            .map(PathBuf::as_path)
    }

    /// The home directory of the calling user, if known.
    pub fn home(&self) -> Option<&Path> {
        self.session.home.as_deref()
    }
}

/// `Security.ShellPolicy`.
#[derive(Debug, Clone, Default)]
pub struct ShellPolicy {
    pub mode: AllowMode,
    pub allow: Vec<String>,
    pub deny: Vec<String>,
}

/// How `ShellPolicy.Allow` is read.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum AllowMode {
    /// The command text must contain one allow pattern.
    #[default]
    Substring,
    /// Every simple command must start with one allow pattern, on a word boundary.
    Segments,
}

/// `HttpAllowedHosts` and `AllowPrivateHosts`.
#[derive(Debug, Clone, Default)]
pub struct HttpPolicy {
    pub allowed: HostAllowlist,
    pub allow_private: bool,
}

/// The host allowlist after `${ENV}` expansion.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum HostAllowlist {
    /// The list was empty or absent: any public host.
    #[default]
    Unrestricted,
    /// Only these hosts. Empty when every entry expanded to nothing: then nothing is allowed.
    Only(Vec<HostPattern>),
}

/// One `HttpAllowedHosts` entry, lower-cased and without a trailing dot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostPattern {
    /// `api.github.com` or an IP literal.
    Exact(String),
    /// `*.example.com`: any name strictly below `example.com`.
    Suffix(String),
}

impl HostPattern {
    pub fn matches(&self, host: &str) -> bool {
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        match self {
            HostPattern::Exact(h) => host == *h,
            HostPattern::Suffix(s) => {
                host.len() > s.len() + 1
                    && host.ends_with(s.as_str())
                    && host.as_bytes()[host.len() - s.len() - 1] == b'.'
            }
        }
    }
}

impl std::fmt::Display for HostPattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HostPattern::Exact(h) => f.write_str(h),
            HostPattern::Suffix(s) => write!(f, "*.{s}"),
        }
    }
}

/// hullward's `Sandbox:` section, resolved.
#[derive(Debug, Clone)]
pub struct SandboxPolicy {
    /// Refuse (exit 3) rather than run weaker.
    pub strict: bool,
    /// Read+execute, never write; entries that do not exist on this host are left out.
    pub system: Vec<PathBuf>,
    /// `System` and `ReadOnlyDirs` entries that are symlinks on this host (`/bin` → `usr/bin`),
    /// as (link, target), recreated in the child's view.
    pub system_links: Vec<(PathBuf, PathBuf)>,
    /// `Sandbox.ReadOnlyDirs` and `--ro`: read+execute, never write (toolchains under `$HOME`,
    /// shared caches); deny rules apply inside them as inside the roots.
    pub read_only_dirs: Vec<PathBuf>,
    /// Read+write besides the roots.
    pub writable: Vec<PathBuf>,
    /// The roots are mounted read-only (`readonly` profile).
    pub read_only: bool,
    pub network: NetMode,
    pub timeout: Option<Duration>,
    /// Environment variables passed through; everything else is dropped.
    pub env: Vec<String>,
    /// Credential variables forwarded for the call (keychain first, then the environment).
    pub credentials: Vec<String>,
    pub limits: Limits,
    pub unattended: Unattended,
    /// `Sandbox.AllowSubstitution`: lifts the shell guard's subshell rule only.
    pub allow_substitution: bool,
    /// `Sandbox.ProtectGitMetadata`: `.git/hooks/**` and `.git/config` are write-protected.
    pub protect_git_metadata: bool,
    /// `Sandbox.ApprovalTimeout` (`serve`): an approval not answered within it is a refusal.
    pub approval_timeout: Duration,
    /// `Sandbox.ShutdownGrace` (`serve`): how long running calls may go on after SIGTERM.
    pub shutdown_grace: Duration,
    /// `Sandbox.SkillDirs` (`skill_run`), as written (`~` expanded, relative to the config
    /// file); `None` means the default list.
    pub skill_dirs: Option<Vec<PathBuf>>,
    /// `Sandbox.Workspace` / `--workspace`: where the program's writes to the roots land.
    pub workspace: WorkspaceMode,
    /// `Sandbox.Git.ProtectedBranches` (branch name globs, default `main`, `master`,
    /// `release*`): an applied overlay call never moves or deletes their refs.
    pub protected_branches: Vec<String>,
}

/// How the program's writes reach the roots (INTERFACE.md, "The workspace modes").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WorkspaceMode {
    /// In place; protected changes are quarantined after the call.
    #[default]
    Direct,
    /// Into a layer of the call's own, applied (except protected paths) when it ends.
    Overlay,
    /// Into a layer of the call's own, thrown away when it ends.
    Ephemeral,
}

impl WorkspaceMode {
    pub fn parse(s: &str) -> Option<WorkspaceMode> {
        match s {
            "direct" => Some(WorkspaceMode::Direct),
            "overlay" => Some(WorkspaceMode::Overlay),
            "ephemeral" => Some(WorkspaceMode::Ephemeral),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            WorkspaceMode::Direct => "direct",
            WorkspaceMode::Overlay => "overlay",
            WorkspaceMode::Ephemeral => "ephemeral",
        }
    }
}

/// Network mode of a sandboxed call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetMode {
    /// A fresh network namespace with only `lo`.
    None,
    /// Only through hullward's allow-listing egress proxy.
    Proxy,
    /// No network isolation (explicit opt-out).
    Host,
}

impl NetMode {
    pub fn parse(s: &str) -> Option<NetMode> {
        match s {
            "none" => Some(NetMode::None),
            "proxy" => Some(NetMode::Proxy),
            "host" => Some(NetMode::Host),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            NetMode::None => "none",
            NetMode::Proxy => "proxy",
            NetMode::Host => "host",
        }
    }
}

/// `Sandbox.Limits`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub processes: u64,
    pub open_files: u64,
    pub memory_bytes: Option<u64>,
    pub output_bytes: u64,
    /// `Limits.Cpu` in thousandths of a CPU (`0.5` is 500).
    pub cpu_millis: Option<u64>,
}

/// What happens to a call that needs approval when no human can be asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unattended {
    Deny,
    Allow,
}

impl Unattended {
    pub fn parse(s: &str) -> Option<Unattended> {
        match s {
            "deny" => Some(Unattended::Deny),
            "allow" => Some(Unattended::Allow),
            _ => None,
        }
    }
}

/// Per-invocation settings that are not part of a config file.
#[derive(Debug, Clone)]
pub struct Session {
    /// Human-in-the-loop approval.
    pub hitl: bool,
    /// No sandbox at all.
    pub yolo: bool,
    /// `--review`: an overlay call's changes are held for `hullward review|apply|discard`.
    pub review: bool,
    /// The JSONL audit log.
    pub audit_path: PathBuf,
    /// hullward's own state (`$HULLWARD_HOME`, default `~/.hullward`): the default audit log and
    /// the quarantine.
    pub state_dir: PathBuf,
    /// The caller's home directory (for `~` and the home credential files).
    pub home: Option<PathBuf>,
}
