//! The configuration file as written: serde structs for the `Security:` and `Sandbox:` sections.
//!
//! This module only describes the YAML shape. It exists separately from [`super::Policy`] because a
//! file is partial (every key optional, so that profiles, config files and flags can be layered),
//! while a `Policy` is complete and resolved. Key names are fuseraft's, exactly as its Security page
//! spells them (PascalCase); unknown keys inside the two sections are errors (`deny_unknown_fields`)
//! while other top-level sections of an orchestration.yaml are ignored.

use serde::Deserialize;

/// A whole configuration or profile file. Only the two sections hullward reads are typed; the
/// others (`Agents:`, `Models:`, …) are accepted and ignored.
#[derive(Debug, Default, Deserialize)]
pub struct FileConfig {
    #[serde(rename = "Security", default)]
    pub security: Option<SecuritySection>,
    #[serde(rename = "Sandbox", default)]
    pub sandbox: Option<SandboxSection>,
}

/// fuseraft's `Security:` section.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecuritySection {
    #[serde(rename = "FileSystemSandboxPath")]
    pub file_system_sandbox_path: Option<String>,
    #[serde(rename = "FileSystemPermissions")]
    pub file_system_permissions: Option<FileSystemPermissions>,
    #[serde(rename = "ChangeEnvelope")]
    pub change_envelope: Option<Vec<String>>,
    #[serde(rename = "DenyCredentialFiles")]
    pub deny_credential_files: Option<bool>,
    #[serde(rename = "ShellPolicy")]
    pub shell_policy: Option<ShellPolicySection>,
    #[serde(rename = "HttpAllowedHosts")]
    pub http_allowed_hosts: Option<Vec<String>>,
    #[serde(rename = "AllowPrivateHosts")]
    pub allow_private_hosts: Option<bool>,
    #[serde(rename = "ReadFileSizeLimit")]
    pub read_file_size_limit: Option<u64>,
}

/// `Security.FileSystemPermissions`: glob lists relative to the sandbox root.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FileSystemPermissions {
    #[serde(rename = "Read")]
    pub read: Option<Vec<String>>,
    #[serde(rename = "Write")]
    pub write: Option<Vec<String>>,
    #[serde(rename = "Deny")]
    pub deny: Option<Vec<String>>,
}

/// `Security.ShellPolicy`. `AllowMode` stays a string here so that an unknown mode is reported by
/// validation with its line instead of failing deserialisation with a generic message.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShellPolicySection {
    #[serde(rename = "AllowMode")]
    pub allow_mode: Option<String>,
    #[serde(rename = "Allow")]
    pub allow: Option<Vec<String>>,
    #[serde(rename = "Deny")]
    pub deny: Option<Vec<String>>,
}

/// hullward's own `Sandbox:` section.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SandboxSection {
    #[serde(rename = "Strict")]
    pub strict: Option<bool>,
    #[serde(rename = "Include")]
    pub include: Option<Vec<String>>,
    #[serde(rename = "System")]
    pub system: Option<Vec<String>>,
    #[serde(rename = "ReadOnlyDirs")]
    pub read_only_dirs: Option<Vec<String>>,
    #[serde(rename = "Writable")]
    pub writable: Option<Vec<String>>,
    #[serde(rename = "ReadOnly")]
    pub read_only: Option<bool>,
    #[serde(rename = "Network")]
    pub network: Option<String>,
    #[serde(rename = "Timeout")]
    pub timeout: Option<Scalar>,
    #[serde(rename = "Env")]
    pub env: Option<Vec<String>>,
    #[serde(rename = "Credentials")]
    pub credentials: Option<Vec<CredentialEntry>>,
    #[serde(rename = "Limits")]
    pub limits: Option<LimitsSection>,
    #[serde(rename = "Unattended")]
    pub unattended: Option<String>,
    #[serde(rename = "AllowSubstitution")]
    pub allow_substitution: Option<bool>,
    #[serde(rename = "ProtectGitMetadata")]
    pub protect_git_metadata: Option<bool>,
    #[serde(rename = "ApprovalTimeout")]
    pub approval_timeout: Option<Scalar>,
    #[serde(rename = "ShutdownGrace")]
    pub shutdown_grace: Option<Scalar>,
    #[serde(rename = "SkillDirs")]
    pub skill_dirs: Option<Vec<String>>,
    #[serde(rename = "Workspace")]
    pub workspace: Option<String>,
    #[serde(rename = "Git")]
    pub git: Option<GitSection>,
    /// Files made read-only for the program (besides git metadata): adds to the built-in list,
    /// `!ENTRY` removes an entry.
    #[serde(rename = "WriteProtect")]
    pub write_protect: Option<Vec<String>>,
}

/// `Sandbox.Git`: git rules that hold when an overlay call's changes are applied.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GitSection {
    /// Branch name globs whose refs no applied call may move or delete.
    #[serde(rename = "ProtectedBranches")]
    pub protected_branches: Option<Vec<String>>,
}

/// One entry of `Sandbox.Credentials`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CredentialEntry {
    #[serde(rename = "Var")]
    pub var: String,
}

/// `Sandbox.Limits`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitsSection {
    #[serde(rename = "Processes")]
    pub processes: Option<u64>,
    #[serde(rename = "OpenFiles")]
    pub open_files: Option<u64>,
    #[serde(rename = "MemoryBytes")]
    pub memory_bytes: Option<u64>,
    #[serde(rename = "OutputBytes")]
    pub output_bytes: Option<u64>,
    /// CPUs' worth of time (`0.5`: half a CPU), like Docker's `--cpus`.
    #[serde(rename = "Cpu")]
    pub cpu: Option<f64>,
}

/// A scalar that users write either as a string or as a number (`Timeout: 600`, `Timeout: 10m`).
#[derive(Debug, Clone, Deserialize)]
#[serde(untagged)]
pub enum Scalar {
    Number(u64),
    Text(String),
}

impl Scalar {
    pub fn to_text(&self) -> String {
        match self {
            Scalar::Number(n) => n.to_string(),
            Scalar::Text(s) => s.clone(),
        }
    }
}
