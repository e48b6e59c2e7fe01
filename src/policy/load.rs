//! Layering and resolution: built-in `default` → `--profile` → `--config` → flags → [`Policy`].
//!
//! Call [`load`] once per invocation with a [`LoadRequest`]. Each YAML layer replaces the keys it
//! sets; flags add to lists and override scalars. After layering, paths are resolved (relative
//! paths in a file against that file's folder, on the command line against the current
//! directory — Decision 10), `${VAR}` tokens in `HttpAllowedHosts` are expanded (Decision 4), the
//! always-on defaults are merged in (Decision 5) and every value is validated. Semantic problems
//! are collected as [`Diagnostic`]s so that `validate` can show them all at once.

use std::collections::BTreeMap;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use super::diag::{Diagnostic, Severity};
use super::globs::{GlobRule, GlobRules, Origin};
use super::locate::{Located, Step};
use super::resolve::Resolver;
use super::schema::{self, Parsed, SandboxSection, SecuritySection};
use super::{
    duration, profiles, AllowMode, HostAllowlist, HostPattern, HttpPolicy, Limits, NetMode, Policy,
    SandboxPolicy, Session, ShellPolicy, Unattended, WorkspaceMode,
};

/// Why a policy could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum PolicyError {
    /// The file could not be read at all (missing, unreadable).
    #[error("cannot read configuration '{}': {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// The file is not valid YAML or a value has the wrong type.
    #[error("{0}")]
    Syntax(Diagnostic),
    /// The YAML parsed but the values are invalid.
    #[error("{}", .0.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<Diagnostic>),
    #[error(
        "unknown profile '{name}': not a built-in profile ({}) and not a readable file",
        profiles::names()
    )]
    UnknownProfile { name: String },
}

/// Everything [`load`] needs, gathered by the CLI.
#[derive(Debug, Clone, Default)]
pub struct LoadRequest {
    pub profile: Option<String>,
    pub config: Option<PathBuf>,
    pub cwd: PathBuf,
    /// A snapshot of the environment (for `${VAR}`, `HOME`, `HULLWARD_HOME`).
    pub env: BTreeMap<String, String>,
    /// Whether standard input is a terminal (HITL defaults to on only then).
    pub stdin_is_tty: bool,
    pub flags: Flags,
}

/// The command-line flags that shape the policy.
#[derive(Debug, Clone, Default)]
pub struct Flags {
    pub root: Option<PathBuf>,
    pub include: Vec<PathBuf>,
    /// `--ro DIR`: read+execute only.
    pub ro: Vec<PathBuf>,
    pub deny: Vec<String>,
    pub read: Vec<String>,
    pub write: Vec<String>,
    pub net: Option<NetMode>,
    pub allow_host: Vec<String>,
    pub timeout: Option<Duration>,
    pub env: Vec<String>,
    pub hitl: Option<bool>,
    pub unattended: Option<Unattended>,
    pub no_strict: bool,
    pub yolo: bool,
    pub audit: Option<PathBuf>,
    /// `--workspace`.
    pub workspace: Option<WorkspaceMode>,
    /// `--review` (implies `--workspace overlay` when no other mode was chosen).
    pub review: bool,
}

/// `Sandbox.Git.ProtectedBranches` when no layer sets it (KeylessAgent's git rules).
pub const DEFAULT_PROTECTED_BRANCHES: &[&str] = &["main", "master", "release*"];

/// The glob a `.env` file at any depth matches, and its `.env.*` siblings (Decision 5).
pub const ENV_FILE_GLOBS: &[&str] = &["**/.env", "**/.env.*"];

/// Files that exist to hold credentials, denied at any depth unless `DenyCredentialFiles: false`.
pub const CREDENTIAL_FILE_GLOBS: &[&str] = &[
    "**/id_rsa",
    "**/id_dsa",
    "**/id_ecdsa",
    "**/id_ed25519",
    "**/id_ecdsa_sk",
    "**/id_ed25519_sk",
    "**/.aws/credentials",
    "**/.netrc",
    "**/_netrc",
    "**/.pgpass",
    "**/.git-credentials",
];

/// Repository metadata that git executes or is redirected by, later and outside any sandbox
/// (Decision 8): hooks and the config (`core.fsmonitor`, `core.hooksPath`, aliases), the
/// per-worktree config, `commondir` (where the repository really is), `info/` (attributes and
/// excludes), the linked worktrees' administrative directories, and the same inside every
/// submodule's git directory under `.git/modules/`. What does not exist yet (a `commondir`) cannot
/// be bound read-only: one created during the call is quarantined after it. Objects, refs, the
/// index and `HEAD` stay writable for ordinary git work.
pub const GIT_METADATA_GLOBS: &[&str] = &[
    "**/.git/hooks",
    "**/.git/config",
    "**/.git/config.worktree",
    "**/.git/commondir",
    "**/.git/info",
    "**/.git/worktrees",
    "**/.git/modules/**/hooks",
    "**/.git/modules/**/config",
    "**/.git/modules/**/config.worktree",
    "**/.git/modules/**/commondir",
    "**/.git/modules/**/info",
];

/// `Sandbox.WriteProtect`'s built-in entries: files that a human or a tool runs or obeys later,
/// outside any sandbox, each with the reason. Bound read-only like git metadata (and quarantined
/// when created during a call); a config adds entries and removes these with `!ENTRY` (the
/// pattern as written here, or without its `**/`).
pub const WRITE_PROTECT_BUILTIN: &[(&str, &str)] = &[
    ("**/.vscode/tasks.json", "VS Code runs its tasks (some on folder open)"),
    (
        "**/.vscode/settings.json",
        "VS Code settings name executables (terminal profiles, linters, formatters)",
    ),
    ("**/.vscode/launch.json", "VS Code starts its debug configurations"),
    ("**/.idea/workspace.xml", "JetBrains IDEs run its run configurations"),
    ("**/.envrc", "direnv executes it on entering the directory"),
    ("**/.mcp.json", "MCP clients start the servers it lists"),
    ("**/.cursor/mcp.json", "Cursor starts the MCP servers it lists"),
    ("**/.claude/settings.json", "Claude Code runs its hooks and obeys its permissions"),
    ("**/.claude/settings.local.json", "Claude Code runs its hooks and obeys its permissions"),
    ("**/.gitmodules", "git clones and checks out the submodule URLs and paths it names"),
    ("**/.husky", "husky's hooks directory: git runs the hooks in it"),
    ("**/.pre-commit-config.yaml", "pre-commit installs and runs the hooks it lists"),
    ("**/.devcontainer", "dev containers run its lifecycle commands and mounts"),
    (".bashrc", "a shell started in the root as home reads it"),
    (".bash_profile", "a login shell started in the root as home reads it"),
    (".bash_login", "a login shell started in the root as home reads it"),
    (".profile", "a login shell started in the root as home reads it"),
    (".zshrc", "zsh started in the root as home reads it"),
    (".zshenv", "every zsh started in the root as home reads it"),
    (".zprofile", "a zsh login shell started in the root as home reads it"),
    (".gitconfig", "git reads it when the root is a home (aliases, core.fsmonitor, hooksPath)"),
    ("**/.aws/config", "the AWS CLI and SDKs run its credential_process"),
    ("**/.ssh/config", "ssh runs its ProxyCommand and LocalCommand"),
    ("**/.ssh/authorized_keys", "it grants logins"),
];

/// The reason of a built-in `WriteProtect` entry (for `explain` and the report).
pub fn write_protect_reason(pattern: &str) -> Option<&'static str> {
    WRITE_PROTECT_BUILTIN.iter().find(|(p, _)| *p == pattern).map(|(_, why)| *why)
}

/// One YAML layer being read: its text and how to name it.
struct Layer<'a> {
    located: &'a Located,
    origin_file: Option<PathBuf>,
    profile_name: Option<String>,
    /// Folder that relative paths in this layer resolve against.
    base: PathBuf,
}

impl Layer<'_> {
    fn origin(&self, path: &[Step<'_>]) -> Origin {
        match (&self.origin_file, &self.profile_name) {
            (Some(f), _) => Origin::File { path: f.clone(), line: self.located.line_of(path) },
            (None, Some(p)) => Origin::Profile(p.clone()),
            (None, None) => Origin::Builtin("default"),
        }
    }

    /// How diagnostics name this layer: the file, or `<profile NAME>`.
    fn diag_file(&self) -> Option<PathBuf> {
        self.origin_file
            .clone()
            .or_else(|| self.profile_name.as_ref().map(|p| PathBuf::from(format!("<profile {p}>"))))
    }

    fn diag(&self, severity: Severity, path: &[Step<'_>], message: String) -> Diagnostic {
        Diagnostic {
            severity,
            file: self.diag_file(),
            line: self.located.line_of(path),
            key: dotted(path),
            message,
        }
    }
}

fn dotted(path: &[Step<'_>]) -> String {
    let mut out = String::new();
    for step in path {
        match step {
            Step::Key(k) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(k);
            }
            Step::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

/// A value set by some layer, with where it was set.
#[derive(Debug, Clone)]
struct Set<T> {
    value: T,
    origin: Origin,
}

/// A path as written, and the folder it is relative to.
#[derive(Debug, Clone)]
struct RawPath {
    text: String,
    base: PathBuf,
    origin: Origin,
    diag_file: Option<PathBuf>,
    key: String,
}

/// The layered, not yet resolved, values.
#[derive(Default)]
struct Accum {
    root: Option<RawPath>,
    read: Option<Vec<GlobRule>>,
    write: Option<Vec<GlobRule>>,
    deny: Option<Vec<GlobRule>>,
    change_envelope: Option<Vec<GlobRule>>,
    deny_credential_files: Option<bool>,
    allow_mode: Option<Set<AllowMode>>,
    shell_allow: Option<Vec<String>>,
    shell_deny: Option<Vec<String>>,
    /// `HttpAllowedHosts` entries as written, each with its place for diagnostics.
    hosts: Option<Vec<(String, Diagnostic)>>,
    allow_private: Option<bool>,
    read_limit: Option<u64>,
    strict: Option<bool>,
    include: Option<Vec<RawPath>>,
    /// `System` entries of every layer, in order (the list adds up; `!ENTRY` removes).
    system: Option<Vec<RawPath>>,
    /// `ReadOnlyDirs` entries of every layer and `--ro`, in order (adds up like `System`).
    read_only_dirs: Option<Vec<RawPath>>,
    writable: Option<Vec<RawPath>>,
    read_only: Option<bool>,
    network: Option<Set<NetMode>>,
    timeout: Option<Duration>,
    env: Option<Vec<String>>,
    credentials: Option<Vec<String>>,
    processes: Option<u64>,
    open_files: Option<u64>,
    memory_bytes: Option<u64>,
    output_bytes: Option<u64>,
    cpu_millis: Option<u64>,
    unattended: Option<Unattended>,
    allow_substitution: Option<bool>,
    protect_git_metadata: Option<bool>,
    approval_timeout: Option<Duration>,
    shutdown_grace: Option<Duration>,
    skill_dirs: Option<Vec<RawPath>>,
    workspace: Option<WorkspaceMode>,
    protected_branches: Option<Vec<String>>,
    /// `WriteProtect` entries of every layer, in order (adds up like `System`; `!ENTRY` removes).
    write_protect: Vec<GlobRule>,
    diags: Vec<Diagnostic>,
}

/// Loads, layers, resolves and validates. See the module documentation for the order.
pub fn load(req: &LoadRequest) -> Result<Policy, PolicyError> {
    let mut acc = Accum::default();
    let mut sources = vec!["profile default (built-in)".to_string()];
    let mut files = Vec::new();

    let default = profiles::builtin("default").expect("the default profile is embedded");
    apply_text(&mut acc, default.yaml, None, Some("default".into()), &req.cwd)?;

    if let Some(name) = &req.profile {
        if let Some(p) = profiles::builtin(name).filter(|p| p.name != "default") {
            apply_text(&mut acc, p.yaml, None, Some(p.name.into()), &req.cwd)?;
            sources.push(format!("profile {} (built-in)", p.name));
        } else if name != "default" {
            let path = req.cwd.join(name);
            if !path.is_file() {
                return Err(PolicyError::UnknownProfile { name: name.clone() });
            }
            apply_file(&mut acc, &path)?;
            sources.push(format!("profile {}", path.display()));
            files.extend(std::fs::canonicalize(&path));
        }
    }
    let (config, how) = match &req.config {
        Some(c) => (Some(c.clone()), "config"),
        None => (super::discover::find(&req.cwd, &req.env), "discovered config"),
    };
    if let Some(config) = &config {
        let path = req.cwd.join(config);
        apply_file(&mut acc, &path)?;
        sources.push(format!("{how} {}", path.display()));
        files.extend(std::fs::canonicalize(&path));
    }
    apply_flags(&mut acc, &req.flags, &req.cwd);
    if has_flags(&req.flags) {
        sources.push("command-line flags".into());
    }
    finish(acc, req, sources, files)
}

fn has_flags(f: &Flags) -> bool {
    f.root.is_some()
        || !f.include.is_empty()
        || !f.ro.is_empty()
        || !f.deny.is_empty()
        || !f.read.is_empty()
        || !f.write.is_empty()
        || f.net.is_some()
        || !f.allow_host.is_empty()
        || f.timeout.is_some()
        || !f.env.is_empty()
        || f.hitl.is_some()
        || f.unattended.is_some()
        || f.no_strict
        || f.yolo
        || f.audit.is_some()
        || f.workspace.is_some()
        || f.review
}

fn apply_file(acc: &mut Accum, path: &Path) -> Result<(), PolicyError> {
    let bytes =
        std::fs::read(path).map_err(|source| PolicyError::Read { path: path.to_path_buf(), source })?;
    let text = String::from_utf8(bytes).map_err(|e| {
        PolicyError::Syntax(Diagnostic {
            severity: Severity::Error,
            file: Some(path.to_path_buf()),
            line: None,
            key: String::new(),
            message: format!("not valid UTF-8 (byte offset {})", e.utf8_error().valid_up_to()),
        })
    })?;
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    apply_text(acc, &text, Some(path.to_path_buf()), None, &base)
}

fn apply_text(
    acc: &mut Accum,
    text: &str,
    file: Option<PathBuf>,
    profile: Option<String>,
    base: &Path,
) -> Result<(), PolicyError> {
    let named = file.clone().or_else(|| profile.as_ref().map(|p| format!("<profile {p}>").into()));
    let Parsed { config: parsed, located } = schema::parse(text, named)?;
    let layer =
        Layer { located: &located, origin_file: file, profile_name: profile, base: base.to_path_buf() };
    if let Some(sec) = &parsed.security {
        apply_security(acc, &layer, sec);
    }
    if let Some(sb) = &parsed.sandbox {
        apply_sandbox(acc, &layer, sb);
    }
    Ok(())
}

fn globs(layer: &Layer<'_>, path: &[Step<'_>], list: &[String]) -> Vec<GlobRule> {
    list.iter()
        .enumerate()
        .map(|(i, p)| {
            let mut full = path.to_vec();
            full.push(Step::Index(i));
            GlobRule { pattern: p.clone(), origin: layer.origin(&full) }
        })
        .collect()
}

fn raw_paths(layer: &Layer<'_>, path: &[Step<'_>], list: &[String]) -> Vec<RawPath> {
    list.iter()
        .enumerate()
        .map(|(i, p)| {
            let mut full = path.to_vec();
            full.push(Step::Index(i));
            raw_path(layer, &full, p)
        })
        .collect()
}

fn raw_path(layer: &Layer<'_>, path: &[Step<'_>], text: &str) -> RawPath {
    RawPath {
        text: text.to_string(),
        base: layer.base.clone(),
        // Only a file's origin carries a line (looked up here); built-in profiles carry none.
        origin: layer.origin(path),
        diag_file: layer.diag_file(),
        key: dotted(path),
    }
}

fn apply_security(acc: &mut Accum, layer: &Layer<'_>, sec: &SecuritySection) {
    use Step::Key;
    let s = Key("Security");
    if let Some(root) = &sec.file_system_sandbox_path {
        acc.root = Some(raw_path(layer, &[s, Key("FileSystemSandboxPath")], root));
    }
    if let Some(p) = &sec.file_system_permissions {
        let fp = Key("FileSystemPermissions");
        if let Some(r) = &p.read {
            acc.read = Some(globs(layer, &[s, fp, Key("Read")], r));
        }
        if let Some(w) = &p.write {
            acc.write = Some(globs(layer, &[s, fp, Key("Write")], w));
        }
        if let Some(d) = &p.deny {
            acc.deny = Some(globs(layer, &[s, fp, Key("Deny")], d));
        }
    }
    if let Some(env) = &sec.change_envelope {
        acc.change_envelope = Some(globs(layer, &[s, Key("ChangeEnvelope")], env));
    }
    if let Some(v) = sec.deny_credential_files {
        acc.deny_credential_files = Some(v);
    }
    if let Some(sp) = &sec.shell_policy {
        let k = Key("ShellPolicy");
        if let Some(mode) = &sp.allow_mode {
            let path = [s, k, Key("AllowMode")];
            match mode.to_ascii_lowercase().as_str() {
                "substring" => {
                    acc.allow_mode = Some(Set { value: AllowMode::Substring, origin: layer.origin(&path) })
                }
                "segments" => {
                    acc.allow_mode = Some(Set { value: AllowMode::Segments, origin: layer.origin(&path) })
                }
                _ => acc.diags.push(layer.diag(
                    Severity::Error,
                    &path,
                    format!("unknown AllowMode '{mode}' (expected substring or segments)"),
                )),
            }
        }
        for (name, list, slot) in
            [("Allow", &sp.allow, &mut acc.shell_allow), ("Deny", &sp.deny, &mut acc.shell_deny)]
        {
            if let Some(list) = list {
                for (i, pat) in list.iter().enumerate() {
                    if pat.trim().is_empty() {
                        acc.diags.push(layer.diag(
                            Severity::Error,
                            &[s, k, Key(name), Step::Index(i)],
                            "an empty pattern would match every command".into(),
                        ));
                    }
                }
                *slot = Some(list.clone());
            }
        }
    }
    if let Some(hosts) = &sec.http_allowed_hosts {
        acc.hosts = Some(
            hosts
                .iter()
                .enumerate()
                .map(|(i, raw)| {
                    let item = [s, Key("HttpAllowedHosts"), Step::Index(i)];
                    (raw.clone(), layer.diag(Severity::Error, &item, String::new()))
                })
                .collect(),
        );
    }
    if let Some(v) = sec.allow_private_hosts {
        acc.allow_private = Some(v);
    }
    if let Some(v) = sec.read_file_size_limit {
        acc.read_limit = Some(v);
    }
}

fn apply_sandbox(acc: &mut Accum, layer: &Layer<'_>, sb: &SandboxSection) {
    use Step::Key;
    let s = Key("Sandbox");
    if let Some(v) = sb.strict {
        acc.strict = Some(v);
    }
    if let Some(v) = &sb.include {
        acc.include = Some(raw_paths(layer, &[s, Key("Include")], v));
    }
    add_read_only_lists(acc, layer, sb);
    if let Some(v) = &sb.writable {
        acc.writable = Some(raw_paths(layer, &[s, Key("Writable")], v));
    }
    if let Some(v) = sb.read_only {
        acc.read_only = Some(v);
    }
    if let Some(n) = &sb.network {
        let path = [s, Key("Network")];
        match NetMode::parse(&n.to_ascii_lowercase()) {
            Some(mode) => acc.network = Some(Set { value: mode, origin: layer.origin(&path) }),
            None => acc.diags.push(layer.diag(
                Severity::Error,
                &path,
                format!("unknown Network '{n}' (expected none, proxy or host)"),
            )),
        }
    }
    if let Some(t) = &sb.timeout {
        let text = t.to_text();
        match duration::parse(&text) {
            Some(d) => acc.timeout = Some(d),
            None => acc.diags.push(layer.diag(
                Severity::Error,
                &[s, Key("Timeout")],
                format!("'{text}' is not a duration (e.g. 30s, 5m, 1h)"),
            )),
        }
    }
    if let Some(env) = &sb.env {
        for (i, name) in env.iter().enumerate() {
            if !is_env_name(name) {
                acc.diags.push(layer.diag(
                    Severity::Error,
                    &[s, Key("Env"), Step::Index(i)],
                    format!("'{name}' is not an environment variable name"),
                ));
            }
        }
        acc.env = Some(env.clone());
    }
    if let Some(creds) = &sb.credentials {
        for (i, c) in creds.iter().enumerate() {
            if !is_env_name(&c.var) {
                acc.diags.push(layer.diag(
                    Severity::Error,
                    &[s, Key("Credentials"), Step::Index(i), Key("Var")],
                    format!("'{}' is not an environment variable name", c.var),
                ));
            }
        }
        acc.credentials = Some(creds.iter().map(|c| c.var.clone()).collect());
    }
    if let Some(l) = &sb.limits {
        for (name, v, slot) in [
            ("Processes", l.processes, &mut acc.processes),
            ("OpenFiles", l.open_files, &mut acc.open_files),
            ("MemoryBytes", l.memory_bytes, &mut acc.memory_bytes),
            ("OutputBytes", l.output_bytes, &mut acc.output_bytes),
        ] {
            if let Some(v) = v {
                if v == 0 {
                    acc.diags.push(layer.diag(
                        Severity::Error,
                        &[s, Key("Limits"), Key(name)],
                        "must be greater than 0".into(),
                    ));
                }
                *slot = Some(v);
            }
        }
        if let Some(cpu) = l.cpu {
            if !(0.001..=4096.0).contains(&cpu) {
                acc.diags.push(layer.diag(
                    Severity::Error,
                    &[s, Key("Limits"), Key("Cpu")],
                    format!(
                        "must be a number of CPUs between 0.001 and 4096 (like Docker's --cpus), not {cpu}"
                    ),
                ));
            } else {
                acc.cpu_millis = Some((cpu * 1000.0).round() as u64);
            }
        }
    }
    if let Some(u) = &sb.unattended {
        match Unattended::parse(&u.to_ascii_lowercase()) {
            Some(v) => acc.unattended = Some(v),
            None => acc.diags.push(layer.diag(
                Severity::Error,
                &[s, Key("Unattended")],
                format!("unknown Unattended '{u}' (expected deny or allow)"),
            )),
        }
    }
    if let Some(v) = sb.allow_substitution {
        acc.allow_substitution = Some(v);
    }
    if let Some(v) = sb.protect_git_metadata {
        acc.protect_git_metadata = Some(v);
    }
    for (key, value, slot) in [
        ("ApprovalTimeout", &sb.approval_timeout, &mut acc.approval_timeout),
        ("ShutdownGrace", &sb.shutdown_grace, &mut acc.shutdown_grace),
    ] {
        let Some(text) = value.as_ref().map(|v| v.to_text()) else { continue };
        match duration::parse(&text) {
            Some(d) => *slot = Some(d),
            None => acc.diags.push(layer.diag(
                Severity::Error,
                &[s, Key(key)],
                format!("'{text}' is not a duration (e.g. 30s, 5m, 1h)"),
            )),
        }
    }
    if let Some(w) = &sb.workspace {
        match WorkspaceMode::parse(&w.to_ascii_lowercase()) {
            Some(mode) => acc.workspace = Some(mode),
            None => acc.diags.push(layer.diag(
                Severity::Error,
                &[s, Key("Workspace")],
                format!("unknown Workspace '{w}' (expected direct, overlay or ephemeral)"),
            )),
        }
    }
    if let Some(list) = sb.git.as_ref().and_then(|g| g.protected_branches.as_ref()) {
        for (i, glob) in list.iter().enumerate() {
            if let Err(e) = globset::Glob::new(glob) {
                acc.diags.push(layer.diag(
                    Severity::Error,
                    &[s, Key("Git"), Key("ProtectedBranches"), Step::Index(i)],
                    format!("'{glob}' is not a branch name glob: {e}"),
                ));
            }
        }
        acc.protected_branches = Some(list.clone());
    }
    if let Some(v) = &sb.skill_dirs {
        acc.skill_dirs = Some(raw_paths(layer, &[s, Key("SkillDirs")], v));
    }
    if let Some(list) = &sb.write_protect {
        acc.write_protect.extend(globs(layer, &[s, Key("WriteProtect")], list));
    }
}

/// The built-in `WriteProtect` list with the configured entries applied in order: `!ENTRY` removes
/// an earlier entry spelled `ENTRY` or `**/ENTRY`, anything else is added.
fn write_protect_entries(configured: Vec<GlobRule>) -> Vec<GlobRule> {
    let mut out: Vec<GlobRule> = WRITE_PROTECT_BUILTIN
        .iter()
        .map(|(p, _)| GlobRule { pattern: (*p).into(), origin: Origin::Builtin("write-protect") })
        .collect();
    for rule in configured {
        match rule.pattern.strip_prefix('!') {
            Some(removed) => {
                out.retain(|r| r.pattern != removed && r.pattern.strip_prefix("**/") != Some(removed))
            }
            None => out.push(rule),
        }
    }
    out
}

fn is_env_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

fn apply_flags(acc: &mut Accum, f: &Flags, cwd: &Path) {
    let flag_path = |p: &Path, flag: &'static str| RawPath {
        text: p.to_string_lossy().into_owned(),
        base: cwd.to_path_buf(),
        origin: Origin::Flag(flag),
        diag_file: None,
        key: flag.to_string(),
    };
    if let Some(root) = &f.root {
        acc.root = Some(flag_path(root, "--root"));
    }
    if !f.include.is_empty() {
        acc.include.get_or_insert_with(Vec::new).extend(f.include.iter().map(|p| flag_path(p, "--include")));
    }
    if !f.ro.is_empty() {
        acc.read_only_dirs.get_or_insert_with(Vec::new).extend(f.ro.iter().map(|p| flag_path(p, "--ro")));
    }
    for (list, slot, flag) in [
        (&f.deny, &mut acc.deny, "--deny"),
        (&f.read, &mut acc.read, "--read"),
        (&f.write, &mut acc.write, "--write"),
    ] {
        slot.get_or_insert_with(Vec::new)
            .extend(list.iter().map(|p| GlobRule { pattern: p.clone(), origin: Origin::Flag(flag) }));
    }
    let flag_place = Diagnostic {
        severity: Severity::Error,
        file: None,
        line: None,
        key: "--allow-host".into(),
        message: String::new(),
    };
    if !f.allow_host.is_empty() {
        acc.hosts
            .get_or_insert_with(Vec::new)
            .extend(f.allow_host.iter().map(|h| (h.clone(), flag_place.clone())));
    }
    if let Some(net) = f.net {
        acc.network = Some(Set { value: net, origin: Origin::Flag("--net") });
    } else if !f.allow_host.is_empty() {
        acc.network = Some(Set { value: NetMode::Proxy, origin: Origin::Flag("--allow-host") });
    }
    if let Some(t) = f.timeout {
        acc.timeout = Some(t);
    }
    if !f.env.is_empty() {
        acc.env.get_or_insert_with(Vec::new).extend(f.env.iter().cloned());
    }
    if let Some(u) = f.unattended {
        acc.unattended = Some(u);
    }
    if f.no_strict {
        acc.strict = Some(false);
    }
    if let Some(w) = f.workspace {
        acc.workspace = Some(w);
    } else if f.review && matches!(acc.workspace, None | Some(WorkspaceMode::Direct)) {
        acc.workspace = Some(WorkspaceMode::Overlay);
    }
}

fn finish(
    mut acc: Accum,
    req: &LoadRequest,
    sources: Vec<String>,
    files: Vec<PathBuf>,
) -> Result<Policy, PolicyError> {
    let mut diags = std::mem::take(&mut acc.diags);
    let trees = trees(&acc, req, &mut diags);
    let globs = compiled_globs(&mut acc, &mut diags);
    let shell = shell_policy(&mut acc, &mut diags);
    let allowed = host_allowlist(&mut acc, req, &mut diags);
    let network = network_mode(&acc, &allowed);
    let warnings = without_errors(diags)?;
    let session = session(req);
    let mut env = acc.env.take().unwrap_or_default();
    env.dedup();
    Ok(Policy {
        root: trees.root,
        includes: trees.includes,
        read: globs.read,
        write: globs.write,
        deny: globs.deny,
        write_protect: globs.write_protect,
        change_envelope: globs.change_envelope,
        deny_credential_files: globs.deny_credential_files,
        shell,
        http: HttpPolicy { allowed, allow_private: acc.allow_private.unwrap_or(false) },
        read_file_size_limit: acc.read_limit.unwrap_or(20_000),
        sandbox: SandboxPolicy {
            strict: acc.strict.unwrap_or(true),
            system: trees.system,
            system_links: trees.system_links,
            read_only_dirs: trees.read_only_dirs,
            writable: trees.writable,
            read_only: acc.read_only.unwrap_or(false),
            network,
            timeout: acc.timeout,
            env,
            credentials: acc.credentials.take().unwrap_or_default(),
            limits: limits(&acc),
            unattended: acc.unattended.unwrap_or(Unattended::Deny),
            allow_substitution: acc.allow_substitution.unwrap_or(false),
            protect_git_metadata: globs.protect_git_metadata,
            approval_timeout: acc.approval_timeout.unwrap_or(Duration::from_secs(300)),
            shutdown_grace: acc.shutdown_grace.unwrap_or(Duration::from_secs(10)),
            skill_dirs: acc
                .skill_dirs
                .as_ref()
                .map(|dirs| dirs.iter().map(|raw| raw.base.join(expand_tilde(&raw.text))).collect()),
            workspace: acc.workspace.unwrap_or_default(),
            protected_branches: acc
                .protected_branches
                .take()
                .unwrap_or_else(|| DEFAULT_PROTECTED_BRANCHES.iter().map(|b| b.to_string()).collect()),
        },
        session,
        sources,
        files,
        warnings,
    })
}

/// The directories of a policy, resolved ([`trees`]).
struct Trees {
    root: PathBuf,
    includes: Vec<PathBuf>,
    writable: Vec<PathBuf>,
    system: Vec<PathBuf>,
    system_links: Vec<(PathBuf, PathBuf)>,
    read_only_dirs: Vec<PathBuf>,
}

/// Resolves the root (the working directory by default), the included roots, the writable
/// directories and the `System` and `ReadOnlyDirs` entries; refuses grants planted in a tree the
/// child may write.
fn trees(acc: &Accum, req: &LoadRequest, diags: &mut Vec<Diagnostic>) -> Trees {
    let root = match &acc.root {
        Some(raw) => resolve_dir(raw, diags, "sandbox root"),
        None => std::fs::canonicalize(&req.cwd).ok(),
    }
    .unwrap_or_else(|| req.cwd.clone());
    let mut includes = Vec::new();
    for raw in acc.include.iter().flatten() {
        if let Some(p) = resolve_dir(raw, diags, "included root") {
            if p != root && !includes.contains(&p) {
                includes.push(p);
            }
        }
    }
    let mut writable = Vec::new();
    for raw in acc.writable.iter().flatten() {
        if let Some(p) = resolve_dir(raw, diags, "writable directory") {
            if !writable.contains(&p) {
                writable.push(p);
            }
        }
    }
    // A tree of `/` grants everything already (the view refuses it): no symlink widens it.
    let writable_trees: Vec<PathBuf> = std::iter::once(&root)
        .chain(&includes)
        .chain(&writable)
        .filter(|t| t.as_path() != Path::new("/"))
        .cloned()
        .collect();
    let mut fs = Resolver::default();
    refuse_planted_grants(acc, &writable_trees, &mut fs, diags);
    let (system, mut system_links) =
        resolve_listed(acc.system.as_deref().unwrap_or_default(), &mut fs, diags, |raw, fs, diags| {
            resolve_system(raw, &writable_trees, fs, diags)
        });
    let (read_only_dirs, ro_links) = resolve_listed(
        acc.read_only_dirs.as_deref().unwrap_or_default(),
        &mut fs,
        diags,
        |raw, fs, diags| resolve_read_only(raw, &writable_trees, fs, diags),
    );
    system_links.extend(ro_links);
    Trees { root, includes, writable, system, system_links, read_only_dirs }
}

/// The glob rules of a policy, compiled ([`compiled_globs`]).
struct Globs {
    read: GlobRules,
    write: GlobRules,
    deny: GlobRules,
    write_protect: GlobRules,
    change_envelope: Option<GlobRules>,
    deny_credential_files: bool,
    protect_git_metadata: bool,
}

/// Compiles the Read, Write, deny and write-protect rules, the built-in ones first (env files
/// always; credential files and git metadata unless turned off; policy files); a rule that does
/// not compile is a diagnostic and leaves its list empty.
fn compiled_globs(acc: &mut Accum, diags: &mut Vec<Diagnostic>) -> Globs {
    let deny_credential_files = acc.deny_credential_files.unwrap_or(true);
    let protect_git_metadata = acc.protect_git_metadata.unwrap_or(true);
    let mut deny: Vec<GlobRule> = builtin(ENV_FILE_GLOBS, "env-file").collect();
    if deny_credential_files {
        deny.extend(builtin(CREDENTIAL_FILE_GLOBS, "credential-file"));
    }
    deny.extend(acc.deny.take().unwrap_or_default());
    let mut write_protect: Vec<GlobRule> = Vec::new();
    if protect_git_metadata {
        write_protect.extend(builtin(GIT_METADATA_GLOBS, "git-metadata"));
    }
    write_protect.extend(
        super::discover::PROJECT_PLACES
            .iter()
            .map(|p| GlobRule { pattern: format!("**/{p}"), origin: Origin::Builtin("policy-file") }),
    );
    write_protect.extend(write_protect_entries(std::mem::take(&mut acc.write_protect)));
    let mut compile = |rules: Vec<GlobRule>| match GlobRules::new(rules) {
        Ok(r) => r,
        Err(e) => {
            diags.push(glob_diag(&e));
            GlobRules::default()
        }
    };
    Globs {
        read: compile(acc.read.take().unwrap_or_default()),
        write: compile(acc.write.take().unwrap_or_default()),
        deny: compile(deny),
        write_protect: compile(write_protect),
        change_envelope: acc.change_envelope.take().map(&mut compile),
        deny_credential_files,
        protect_git_metadata,
    }
}

/// The built-in rules `patterns`, named `origin`.
fn builtin(patterns: &'static [&'static str], origin: &'static str) -> impl Iterator<Item = GlobRule> {
    patterns.iter().map(move |p| GlobRule { pattern: (*p).into(), origin: Origin::Builtin(origin) })
}

/// The shell policy; segments mode with an empty Allow list is warned about (it allows all).
fn shell_policy(acc: &mut Accum, diags: &mut Vec<Diagnostic>) -> ShellPolicy {
    let shell_allow = acc.shell_allow.take().unwrap_or_default();
    let mode = acc.allow_mode.as_ref().map(|s| s.value).unwrap_or_default();
    if mode == AllowMode::Segments && shell_allow.is_empty() {
        let (file, line) = match acc.allow_mode.as_ref().map(|s| &s.origin) {
            Some(Origin::File { path, line }) => (Some(path.clone()), *line),
            _ => (None, None),
        };
        diags.push(Diagnostic {
            severity: Severity::Warning,
            file,
            line,
            key: "Security.ShellPolicy.AllowMode".into(),
            message: "segments mode with an empty Allow list allows every command".into(),
        });
    }
    ShellPolicy { mode, allow: shell_allow, deny: acc.shell_deny.take().unwrap_or_default() }
}

/// `HttpAllowedHosts`, each entry's environment variables expanded: absent or empty means
/// unrestricted; entries that expand to nothing are dropped with a warning, and a list left empty
/// by that allows no host.
fn host_allowlist(acc: &mut Accum, req: &LoadRequest, diags: &mut Vec<Diagnostic>) -> HostAllowlist {
    let entries = match acc.hosts.take() {
        Some(entries) if !entries.is_empty() => entries,
        _ => return HostAllowlist::Unrestricted,
    };
    let mut out = Vec::new();
    let mut invalid = false;
    for (raw, place) in entries {
        let expanded = expand_env(&raw, &req.env);
        if expanded.trim().is_empty() {
            diags.push(Diagnostic {
                severity: Severity::Warning,
                message: format!("'{raw}' expands to an empty string and is dropped"),
                ..place
            });
            continue;
        }
        match parse_host_pattern(&expanded) {
            Ok(p) if !out.contains(&p) => out.push(p),
            Ok(_) => {}
            Err(msg) => {
                invalid = true;
                diags.push(Diagnostic { message: msg, ..place })
            }
        }
    }
    if out.is_empty() && !invalid {
        diags.push(Diagnostic {
            severity: Severity::Warning,
            file: None,
            line: None,
            key: "Security.HttpAllowedHosts".into(),
            message: "every entry expanded to nothing: no host is allowed".into(),
        });
    }
    HostAllowlist::Only(out)
}

/// The network mode: an allowlist implies the proxy unless a layer other than `default` chose a
/// mode.
fn network_mode(acc: &Accum, allowed: &HostAllowlist) -> NetMode {
    match &acc.network {
        Some(Set { value, origin }) if *origin != Origin::Profile("default".into()) => *value,
        _ if matches!(allowed, HostAllowlist::Only(_)) => NetMode::Proxy,
        Some(set) => set.value,
        None => NetMode::None,
    }
}

fn limits(acc: &Accum) -> Limits {
    Limits {
        processes: acc.processes.unwrap_or(512),
        open_files: acc.open_files.unwrap_or(1024),
        memory_bytes: acc.memory_bytes,
        output_bytes: acc.output_bytes.unwrap_or(10 * 1024 * 1024),
        cpu_millis: acc.cpu_millis,
    }
}

/// The warnings, in file and line order; any error fails the load, with every diagnostic.
fn without_errors(mut diags: Vec<Diagnostic>) -> Result<Vec<Diagnostic>, PolicyError> {
    diags.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    let (errors, warnings): (Vec<_>, Vec<_>) = diags.into_iter().partition(|d| d.severity == Severity::Error);
    if errors.is_empty() {
        return Ok(warnings);
    }
    let mut all = errors;
    all.extend(warnings);
    Err(PolicyError::Invalid(all))
}

/// This invocation's session: human approval, the state directory (`HULLWARD_HOME`, else
/// `~/.hullward`) and the audit log in it unless `--audit` names another.
fn session(req: &LoadRequest) -> Session {
    let home = req.env.get("HOME").filter(|h| !h.is_empty()).map(PathBuf::from);
    let state_dir = match req.env.get("HULLWARD_HOME").filter(|h| !h.is_empty()) {
        Some(h) => req.cwd.join(h),
        None => home.clone().unwrap_or_else(|| PathBuf::from("/")).join(".hullward"),
    };
    let audit_path = match &req.flags.audit {
        Some(p) => req.cwd.join(p),
        None => state_dir.join("audit.jsonl"),
    };
    Session {
        hitl: req.flags.hitl.unwrap_or(req.stdin_is_tty),
        yolo: req.flags.yolo,
        review: req.flags.review,
        audit_path,
        state_dir,
        home,
    }
}

fn glob_diag(e: &super::globs::GlobError) -> Diagnostic {
    let (file, line, key) = match &e.origin {
        Origin::File { path, line } => (Some(path.clone()), *line, String::new()),
        Origin::Flag(f) => (None, None, (*f).to_string()),
        other => (None, None, other.to_string()),
    };
    Diagnostic {
        severity: Severity::Error,
        file,
        line,
        key,
        message: format!("invalid glob '{}': {}", e.pattern, e.reason),
    }
}

fn place_diag(raw: &RawPath, message: String) -> Diagnostic {
    let line = match &raw.origin {
        Origin::File { line, .. } => *line,
        _ => None,
    };
    Diagnostic { severity: Severity::Error, file: raw.diag_file.clone(), line, key: raw.key.clone(), message }
}

/// Resolves a configured directory; it must exist.
fn resolve_dir(raw: &RawPath, diags: &mut Vec<Diagnostic>, what: &str) -> Option<PathBuf> {
    let joined = raw.base.join(expand_tilde(&raw.text));
    match std::fs::canonicalize(&joined) {
        Ok(p) if p.is_dir() => Some(p),
        Ok(p) => {
            diags.push(place_diag(raw, format!("{what} '{}' is not a directory", p.display())));
            None
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            diags.push(place_diag(raw, format!("{what} '{}' does not exist", joined.display())));
            None
        }
        Err(e) => {
            diags.push(place_diag(raw, format!("{what} '{}' cannot be used: {e}", joined.display())));
            None
        }
    }
}

/// A resolved `System` entry: canonical paths, and the symlinks met on the way.
type SystemEntry = (Vec<PathBuf>, Vec<(PathBuf, PathBuf)>);

/// Resolves a `System` entry (see [`listed_candidates`] for the spelling); entries that do not
/// exist on this host are skipped; an entry that is itself a symlink is remembered with its
/// target, so the child's view can show the same link. A spelling that passes through a symlink
/// inside a writable tree is refused ([`planted_diag`]).
fn resolve_system(
    raw: &RawPath,
    writable: &[PathBuf],
    fs: &mut Resolver,
    diags: &mut Vec<Diagnostic>,
) -> SystemEntry {
    let mut resolved = Vec::new();
    let mut links = Vec::new();
    for candidate in listed_candidates(raw, fs) {
        if fs.planted_link(&candidate, writable).is_some() {
            diags.extend(planted_diag(raw, &candidate, writable, fs, "System entry"));
            continue;
        }
        links.extend(fs.link_target(&candidate).map(|target| (candidate.clone(), target)));
        resolved.extend(fs.canonical(&candidate).ok());
    }
    (resolved, links)
}

/// `System` and `ReadOnlyDirs` add up across the layers (default → profile → config → flags)
/// instead of replacing each other: a config that adds one directory keeps `/usr`. An entry
/// written `!ENTRY` removes what earlier layers listed as `ENTRY` (same text, or the same or an
/// inner path once resolved).
fn add_read_only_lists(acc: &mut Accum, layer: &Layer<'_>, sb: &SandboxSection) {
    use Step::Key;
    for (key, list, slot) in [
        ("System", &sb.system, &mut acc.system),
        ("ReadOnlyDirs", &sb.read_only_dirs, &mut acc.read_only_dirs),
    ] {
        if let Some(v) = list {
            slot.get_or_insert_with(Vec::new).extend(raw_paths(layer, &[Key("Sandbox"), Key(key)], v));
        }
    }
}

/// A resolved list: canonical paths in order, outermost only, and the symlinks met.
type Listed = (Vec<PathBuf>, Vec<(PathBuf, PathBuf)>);

/// Resolves an additive list in order, applying `!ENTRY` removals to what came before, then keeps
/// only outermost entries (`/bin` is often a link into `/usr`), in order.
fn resolve_listed(
    raws: &[RawPath],
    fs: &mut Resolver,
    diags: &mut Vec<Diagnostic>,
    mut resolve: impl FnMut(&RawPath, &mut Resolver, &mut Vec<Diagnostic>) -> SystemEntry,
) -> Listed {
    let mut entries: Vec<(String, PathBuf)> = Vec::new();
    let mut links: Vec<(PathBuf, PathBuf)> = Vec::new();
    for raw in raws {
        if let Some(removed) = raw.text.strip_prefix('!') {
            let spelled = RawPath { text: removed.to_string(), ..raw.clone() };
            let mut gone = Vec::new();
            for candidate in listed_candidates(&spelled, fs) {
                gone.extend(fs.canonical(&candidate));
                gone.push(candidate);
            }
            let hit = |p: &Path| gone.iter().any(|g| within(p, g));
            entries.retain(|(text, path)| text != removed && !hit(path));
            links.retain(|(link, _)| !hit(link));
            continue;
        }
        let (paths, found) = resolve(raw, fs, diags);
        entries.extend(paths.into_iter().map(|p| (raw.text.clone(), p)));
        links.extend(found);
    }
    let all: Vec<&Path> = entries.iter().map(|(_, p)| p.as_path()).collect();
    let mut out: Vec<PathBuf> = Vec::new();
    for p in &all {
        let inner = all.iter().any(|q| q.as_os_str() != p.as_os_str() && within(p, q));
        if !inner && !out.iter().any(|o| o.as_os_str() == p.as_os_str()) {
            out.push(p.to_path_buf());
        }
    }
    (out, links)
}

/// `path` is `outer` or lies below it, compared as bytes. Both are free of `.` and of doubled or
/// trailing slashes (canonical, or [`listed_candidates`]), where this agrees with
/// [`Path::starts_with`] at a fraction of its cost.
fn within(path: &Path, outer: &Path) -> bool {
    let (p, o) = (path.as_os_str().as_bytes(), outer.as_os_str().as_bytes());
    p.starts_with(o) && (p.len() == o.len() || o.ends_with(b"/") || p[o.len()] == b'/')
}

/// The host paths a `System` or `ReadOnlyDirs` entry names: `~/` is the caller's home, a relative
/// entry is relative to its file's folder (Decision 10; the current directory for a flag), and a
/// trailing `*` in the last component matches every name with that prefix. The paths come
/// without doubled or trailing slashes and without `.`, so that [`within`] can compare them.
fn listed_candidates(raw: &RawPath, fs: &mut Resolver) -> Vec<PathBuf> {
    let full: PathBuf = raw.base.join(expand_tilde(&raw.text)).components().collect();
    let text = full.to_string_lossy();
    let Some(prefix) = text.strip_suffix('*') else { return vec![full.clone()] };
    let prefix = Path::new(prefix);
    let (dir, stem) = match (prefix.parent(), prefix.file_name()) {
        (Some(d), Some(s)) => (d.to_path_buf(), s.as_bytes().to_vec()),
        _ => (prefix.to_path_buf(), Vec::new()),
    };
    fs.names(&dir)
        .unwrap_or_default()
        .iter()
        .filter(|name| name.as_bytes().starts_with(&stem))
        .map(|name| dir.join(name))
        .collect()
}

/// Resolves a `ReadOnlyDirs` entry or an `--ro` flag. A directory or a file (`~/.gitconfig`) is
/// granted read+execute under its canonical path. An entry missing on this host is skipped when
/// it comes from a file or a profile (shared across machines, like `System`), and an error on the
/// command line (a typo). Refused: `/`, and a spelling that passes through a symlink lying inside
/// a writable tree — a program could have planted it there to point the grant anywhere.
fn resolve_read_only(
    raw: &RawPath,
    writable: &[PathBuf],
    fs: &mut Resolver,
    diags: &mut Vec<Diagnostic>,
) -> SystemEntry {
    let mut paths = Vec::new();
    let mut links = Vec::new();
    let candidates = listed_candidates(raw, fs);
    if candidates.is_empty() && raw.origin == Origin::Flag("--ro") {
        diags.push(place_diag(raw, format!("read-only directory '{}' matches nothing", raw.text)));
    }
    for candidate in candidates {
        if let Some(diag) = planted_diag(raw, &candidate, writable, fs, "read-only directory") {
            diags.push(diag);
            continue;
        }
        match fs.canonical(&candidate) {
            Ok(p) if p == Path::new("/") => diags.push(place_diag(
                raw,
                "a read-only directory of '/' would show the whole filesystem; name the directories".into(),
            )),
            Ok(p) => {
                links.extend(fs.link_target(&candidate).map(|target| (candidate.clone(), target)));
                paths.push(p);
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && raw.origin != Origin::Flag("--ro") => {}
            Err(e) => diags.push(place_diag(
                raw,
                format!("read-only directory '{}' cannot be used: {e}", candidate.display()),
            )),
        }
    }
    (paths, links)
}

/// Symlinks in the policy are resolved once, here, and a grant must not be aimed by a program:
/// the root, an `Include` root or a `Writable` directory spelled through a symlink that lies
/// inside a writable tree (a first call's `ln -s /etc cache`, then `--include cache`) is refused
/// with the link and its target named. A symlink outside every writable tree (`/var/run`, a
/// link the administrator made) is resolved (Decision 8).
fn refuse_planted_grants(acc: &Accum, writable: &[PathBuf], fs: &mut Resolver, diags: &mut Vec<Diagnostic>) {
    let grants = [
        ("sandbox root", acc.root.as_slice()),
        ("included root", acc.include.as_deref().unwrap_or_default()),
    ];
    let grants =
        grants.into_iter().chain([("writable directory", acc.writable.as_deref().unwrap_or_default())]);
    for (what, raws) in grants {
        for raw in raws {
            let spelled = raw.base.join(expand_tilde(&raw.text));
            diags.extend(planted_diag(raw, &spelled, writable, fs, what));
        }
    }
}

/// The refusal of a policy path `spelled` that passes through a symlink lying inside one of
/// `writable`, naming the link and the target it resolves to.
fn planted_diag(
    raw: &RawPath,
    spelled: &Path,
    writable: &[PathBuf],
    fs: &mut Resolver,
    what: &str,
) -> Option<Diagnostic> {
    let link = fs.planted_link(spelled, writable)?;
    let target = fs
        .canonical(spelled)
        .map_or_else(|e| format!("(unresolvable: {e})"), |t| format!("'{}'", t.display()));
    Some(place_diag(
        raw,
        format!(
            "{what} '{}' resolves to {target} through the symlink '{}', which lies inside a writable directory (a program could have planted it); name the target itself if it is meant",
            spelled.display(),
            link.display()
        ),
    ))
}

fn expand_tilde(text: &str) -> String {
    match (text.strip_prefix("~/"), std::env::var("HOME")) {
        (Some(rest), Ok(home)) => format!("{home}/{rest}"),
        _ => text.to_string(),
    }
}

/// Replaces every `${NAME}` with the variable's value; unset variables expand to nothing.
pub fn expand_env(text: &str, env: &BTreeMap<String, String>) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        match rest[start + 2..].find('}') {
            Some(end) => {
                let name = &rest[start + 2..start + 2 + end];
                out.push_str(env.get(name).map(String::as_str).unwrap_or(""));
                rest = &rest[start + 2 + end + 1..];
            }
            None => {
                out.push_str(&rest[start..]);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// Parses one `HttpAllowedHosts` entry.
pub fn parse_host_pattern(entry: &str) -> Result<HostPattern, String> {
    let e = entry.trim().trim_end_matches('.').to_ascii_lowercase();
    let unbracketed = e.trim_start_matches('[').trim_end_matches(']');
    if unbracketed.parse::<std::net::IpAddr>().is_ok() {
        return Ok(HostPattern::Exact(unbracketed.to_string()));
    }
    if e == "*" || e == "*." {
        return Err(format!(
            "'{entry}' would allow every host; leave HttpAllowedHosts empty for unrestricted access"
        ));
    }
    if e.contains("://") || e.contains('/') || e.contains(':') || e.contains('@') {
        return Err(format!("'{entry}' is not a host name (no scheme, port, path or user)"));
    }
    let (wild, name) = match e.strip_prefix("*.") {
        Some(rest) => (true, rest),
        None => (false, e.as_str()),
    };
    let label_ok = |l: &str| {
        !l.is_empty()
            && l.len() <= 63
            && !l.starts_with('-')
            && !l.ends_with('-')
            && l.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(format!("'{entry}' is not a valid host name (wildcards only as a leading '*.')"));
    }
    if wild {
        if crate::guard::url::is_public_suffix(name) {
            return Err(format!(
                "'{entry}' puts a wildcard on the public suffix '{name}', which would allow hosts of unrelated owners"
            ));
        }
        return Ok(HostPattern::Suffix(name.to_string()));
    }
    Ok(HostPattern::Exact(name.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req_in(dir: &Path) -> LoadRequest {
        LoadRequest { cwd: dir.to_path_buf(), ..Default::default() }
    }

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn default_profile_roots_at_the_current_directory() {
        let t = tempfile::tempdir().unwrap();
        let p = load(&req_in(t.path())).unwrap();
        assert_eq!(p.root, t.path().canonicalize().unwrap());
        assert!(p.sandbox.strict);
        assert_eq!(p.sandbox.network, NetMode::None);
        assert!(p.sandbox.system.contains(&PathBuf::from("/usr")));
        assert!(p.deny.match_exact(Path::new("a/.env")).is_some());
        assert!(p.deny.match_exact(Path::new("a/id_rsa")).is_some());
        assert!(p.deny.match_exact(Path::new("a/id_rsa.pub")).is_none());
    }

    #[test]
    fn relative_paths_resolve_against_the_config_folder() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("cfg/work")).unwrap();
        std::fs::create_dir_all(t.path().join("cfg/lib")).unwrap();
        write(
            &t.path().join("cfg"),
            "o.yaml",
            "Security:\n  FileSystemSandboxPath: work\nSandbox:\n  Include: [lib]\n",
        );
        let mut req = req_in(t.path());
        req.config = Some("cfg/o.yaml".into());
        let p = load(&req).unwrap();
        let base = t.path().canonicalize().unwrap().join("cfg");
        assert_eq!(p.root, base.join("work"));
        assert_eq!(p.includes, vec![base.join("lib")]);
    }

    #[test]
    fn unknown_keys_are_errors_with_their_line_and_other_sections_are_ignored() {
        let t = tempfile::tempdir().unwrap();
        let path = write(t.path(), "o.yaml", "Agents:\n  - Name: x\nSecurity:\n  FileSystemSandbox: /x\n");
        let mut req = req_in(t.path());
        req.config = Some(path);
        match load(&req).unwrap_err() {
            PolicyError::Invalid(d) => {
                assert_eq!((d.len(), d[0].line), (1, Some(4)), "{d:?}");
                assert!(d[0].message.contains("FileSystemSandbox"), "{d:?}");
            }
            e => panic!("{e}"),
        }
    }

    #[test]
    fn semantic_errors_are_collected_with_lines() {
        let t = tempfile::tempdir().unwrap();
        let path = write(
            t.path(),
            "o.yaml",
            "Security:\n  ShellPolicy:\n    AllowMode: segmnts\n  HttpAllowedHosts:\n    - '*.com'\n    - '*'\nSandbox:\n  Timeout: soon\n",
        );
        let mut req = req_in(t.path());
        req.config = Some(path);
        let PolicyError::Invalid(diags) = load(&req).unwrap_err() else { panic!() };
        let lines: Vec<_> = diags.iter().map(|d| d.line).collect();
        assert!(lines.contains(&Some(3)), "{diags:?}");
        assert!(lines.contains(&Some(5)), "{diags:?}");
        assert!(lines.contains(&Some(6)), "{diags:?}");
        assert!(lines.contains(&Some(8)), "{diags:?}");
    }

    #[test]
    fn env_expansion_drops_empty_entries_and_fails_closed() {
        let t = tempfile::tempdir().unwrap();
        let path = write(t.path(), "o.yaml", "Security:\n  HttpAllowedHosts: [\"${NOPE_UNSET}\"]\n");
        let mut req = req_in(t.path());
        req.config = Some(path.clone());
        let p = load(&req).unwrap();
        assert_eq!(p.http.allowed, HostAllowlist::Only(vec![]));
        assert_eq!(p.sandbox.network, NetMode::Proxy);
        req.env.insert("NOPE_UNSET".into(), "Example.COM".into());
        let p = load(&req).unwrap();
        assert_eq!(p.http.allowed, HostAllowlist::Only(vec![HostPattern::Exact("example.com".into())]));
    }

    #[test]
    fn host_patterns() {
        assert!(parse_host_pattern("*.github.com").is_ok());
        assert!(parse_host_pattern("*.com").is_err());
        assert!(parse_host_pattern("*.co.uk").is_err());
        assert!(parse_host_pattern("*.gov.br").is_err());
        assert!(parse_host_pattern("*.readthedocs.io").is_err());
        assert!(parse_host_pattern("*.corp").is_err());
        assert!(parse_host_pattern("*.build.internal.corp").is_ok());
        assert!(parse_host_pattern("*").is_err());
        assert!(parse_host_pattern("https://x.example").is_err());
        assert!(parse_host_pattern("a.*.example").is_err());
        assert_eq!(parse_host_pattern("127.0.0.1"), Ok(HostPattern::Exact("127.0.0.1".into())));
        assert_eq!(parse_host_pattern("[::1]"), Ok(HostPattern::Exact("::1".into())));
        let s = parse_host_pattern("*.example.com").unwrap();
        assert!(s.matches("api.example.com"));
        assert!(s.matches("a.b.example.com."));
        assert!(!s.matches("example.com"));
        assert!(!s.matches("badexample.com"));
    }

    #[test]
    fn flags_add_to_lists_and_override_scalars() {
        let t = tempfile::tempdir().unwrap();
        let mut req = req_in(t.path());
        req.flags.deny = vec!["secrets/**".into()];
        req.flags.allow_host = vec!["api.github.com".into()];
        req.flags.no_strict = true;
        let p = load(&req).unwrap();
        assert!(p.deny.match_exact(Path::new("secrets/a")).is_some());
        assert!(p.deny.match_exact(Path::new(".env")).is_some());
        assert_eq!(p.sandbox.network, NetMode::Proxy);
        assert!(!p.sandbox.strict);
    }

    #[test]
    fn credential_files_can_be_turned_off_but_env_cannot() {
        let t = tempfile::tempdir().unwrap();
        let path = write(t.path(), "o.yaml", "Security:\n  DenyCredentialFiles: false\n");
        let mut req = req_in(t.path());
        req.config = Some(path);
        let p = load(&req).unwrap();
        assert!(p.deny.match_exact(Path::new("id_rsa")).is_none());
        assert!(p.deny.match_exact(Path::new(".env.local")).is_some());
    }

    #[test]
    fn a_config_system_list_adds_to_the_default_and_resolves_relative_entries_in_its_folder() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("cfg/tools")).unwrap();
        write(&t.path().join("cfg"), "o.yaml", "Sandbox:\n  System: [tools, /usr]\n");
        let mut req = req_in(t.path());
        req.config = Some("cfg/o.yaml".into());
        let p = load(&req).unwrap();
        let tools = t.path().canonicalize().unwrap().join("cfg/tools");
        assert!(p.sandbox.system.contains(&tools), "{:?}", p.sandbox.system);
        assert!(p.sandbox.system.contains(&PathBuf::from("/usr")), "{:?}", p.sandbox.system);
        assert_eq!(p.sandbox.system.iter().filter(|s| *s == Path::new("/usr")).count(), 1);
    }

    #[test]
    fn a_bang_entry_removes_what_earlier_layers_listed() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("a/b")).unwrap();
        let base = t.path().canonicalize().unwrap();
        let text = format!(
            "Sandbox:\n  System: ['!/usr', '!/etc/python3*', {a}/b]\n  ReadOnlyDirs: [{a}, '!{a}/b']\n",
            a = base.join("a").display()
        );
        let path = write(t.path(), "o.yaml", &text);
        let mut req = req_in(t.path());
        req.config = Some(path);
        let p = load(&req).unwrap();
        assert!(!p.sandbox.system.contains(&PathBuf::from("/usr")), "{:?}", p.sandbox.system);
        assert!(!p.sandbox.system.iter().any(|s| s.starts_with("/etc/python3")), "{:?}", p.sandbox.system);
        // Listed after the removal, it stays; removing an inner path leaves the outer entry.
        assert!(p.sandbox.system.contains(&base.join("a/b")), "{:?}", p.sandbox.system);
        assert_eq!(p.sandbox.read_only_dirs, vec![base.join("a")]);
    }

    #[test]
    fn within_agrees_with_path_starts_with_on_clean_paths() {
        for (p, o) in [
            ("/usr", "/usr"),
            ("/usr/lib", "/usr"),
            ("/usrx", "/usr"),
            ("/usr", "/usr/lib"),
            ("/etc/python3.11", "/etc/python3"),
            ("/a/b/c", "/"),
            ("/", "/"),
            ("/a/../b", "/a"),
        ] {
            assert_eq!(within(Path::new(p), Path::new(o)), Path::new(p).starts_with(o), "{p} in {o}");
        }
    }

    #[test]
    fn only_outermost_entries_stay_and_a_name_prefix_is_not_a_parent() {
        let t = tempfile::tempdir().unwrap();
        for d in ["lib/inner", "libx", "lib2"] {
            std::fs::create_dir_all(t.path().join(d)).unwrap();
        }
        let base = t.path().canonicalize().unwrap();
        let text =
            format!("Sandbox:\n  System: [{b}/lib/inner, {b}/libx, {b}/lib, {b}/lib*]\n", b = base.display());
        let path = write(t.path(), "o.yaml", &text);
        let mut req = req_in(t.path());
        req.config = Some(path);
        let p = load(&req).unwrap();
        let mine: Vec<&PathBuf> = p.sandbox.system.iter().filter(|s| s.starts_with(&base)).collect();
        assert_eq!(mine, [&base.join("libx"), &base.join("lib"), &base.join("lib2")]);
    }

    #[test]
    fn read_only_dirs_add_up_skip_missing_file_entries_and_refuse_missing_flags() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("tc/bin")).unwrap();
        std::fs::create_dir_all(t.path().join("flagged")).unwrap();
        let path = write(t.path(), "o.yaml", "Sandbox:\n  ReadOnlyDirs: [tc, not-here]\n");
        let mut req = req_in(t.path());
        req.config = Some(path);
        req.flags.ro = vec!["flagged".into()];
        let p = load(&req).unwrap();
        let base = t.path().canonicalize().unwrap();
        assert_eq!(p.sandbox.read_only_dirs, vec![base.join("tc"), base.join("flagged")]);
        req.flags.ro = vec!["not-here-either".into()];
        let PolicyError::Invalid(d) = load(&req).unwrap_err() else { panic!() };
        assert!(d[0].key == "--ro" && d[0].message.contains("not-here-either"), "{d:?}");
    }

    /// A scratch directory outside every directory the default profile makes writable (`/tmp`):
    /// the checkout's `target/` where the checkout lives outside them, else `/var/tmp`.
    fn unwritable_scratch() -> tempfile::TempDir {
        let in_checkout = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-scratch");
        std::fs::create_dir_all(&in_checkout).unwrap();
        let writable = load(&req_in(&in_checkout)).unwrap().sandbox.writable;
        let in_checkout = in_checkout.canonicalize().unwrap();
        let base = if writable.iter().any(|w| in_checkout.starts_with(w)) {
            Path::new("/var/tmp").canonicalize().unwrap()
        } else {
            in_checkout
        };
        assert!(
            !writable.iter().any(|w| base.starts_with(w)),
            "{} is writable: {writable:?}",
            base.display()
        );
        tempfile::tempdir_in(base).unwrap()
    }

    #[test]
    fn a_read_only_dir_through_a_symlink_inside_a_writable_root_is_refused() {
        let t = unwritable_scratch();
        std::fs::create_dir_all(t.path().join("root")).unwrap();
        std::fs::create_dir_all(t.path().join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(t.path().join("elsewhere"), t.path().join("root/cache")).unwrap();
        std::os::unix::fs::symlink(t.path().join("elsewhere"), t.path().join("outer-link")).unwrap();
        let mut req = req_in(&t.path().join("root"));
        req.flags.ro = vec!["cache".into()];
        let PolicyError::Invalid(d) = load(&req).unwrap_err() else { panic!() };
        assert!(d[0].message.contains("symlink"), "{d:?}");
        // A symlink outside every writable tree is resolved, and shown as the same link.
        req.flags.ro = vec![t.path().join("outer-link")];
        let p = load(&req).unwrap();
        assert_eq!(p.sandbox.read_only_dirs, vec![t.path().canonicalize().unwrap().join("elsewhere")]);
        assert!(p.sandbox.system_links.iter().any(|(l, _)| l.ends_with("outer-link")));
    }

    #[test]
    fn grants_through_a_symlink_planted_in_a_writable_tree_are_refused_naming_the_target() {
        let scratch = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        let t = tempfile::tempdir_in(scratch).unwrap();
        let base = t.path().canonicalize().unwrap();
        std::fs::create_dir_all(base.join("root")).unwrap();
        std::fs::create_dir_all(base.join("elsewhere")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), base.join("root/cache")).unwrap();
        std::os::unix::fs::symlink(base.join("elsewhere"), base.join("outer-link")).unwrap();
        let target = base.join("elsewhere").display().to_string();
        let refused = |req: &LoadRequest, key: &str| {
            let PolicyError::Invalid(d) = load(req).unwrap_err() else { panic!("{key}: not refused") };
            let m = &d[0].message;
            assert!(m.contains(&target) && m.contains("root/cache") && m.contains("planted"), "{key}: {m}");
            assert!(d[0].key.contains(key), "{d:?}");
        };
        let mut req = req_in(&base.join("root"));
        req.flags.include = vec!["cache".into()];
        refused(&req, "--include");
        req.flags.include.clear();
        for key in ["Writable", "System", "Include"] {
            req.config = Some(write(&base, "o.yaml", &format!("Sandbox:\n  {key}: [root/cache]\n")));
            refused(&req, key);
        }
        // A symlink outside every writable tree is resolved (Decision 8). `Writable: []` keeps
        // the scratch directory out of the writable trees even when the checkout is under /tmp.
        req.config = Some(write(&base, "o.yaml", "Sandbox:\n  Writable: []\n"));
        req.flags.include = vec![base.join("outer-link")];
        assert_eq!(load(&req).unwrap().includes, vec![base.join("elsewhere")]);
    }

    #[test]
    fn every_builtin_profile_loads() {
        let t = tempfile::tempdir().unwrap();
        for prof in profiles::PROFILES {
            let mut req = req_in(t.path());
            req.profile = Some(prof.name.into());
            let p = load(&req).unwrap_or_else(|e| panic!("{}: {e}", prof.name));
            assert!(p.warnings.is_empty(), "{}: {:?}", prof.name, p.warnings);
        }
    }
}
