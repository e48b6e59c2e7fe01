//! The configuration file as written: serde structs for the `Security:` and `Sandbox:` sections.
//!
//! This module only describes the YAML shape. It exists separately from [`super::Policy`] because a
//! file is partial (every key optional, so that profiles, config files and flags can be layered),
//! while a `Policy` is complete and resolved. Key names are fuseraft's, exactly as its Security page
//! spells them (PascalCase); unknown keys inside the two sections are errors while other
//! top-level sections of an orchestration.yaml are ignored.
//!
//! Order of [`parse`]: one pass of serde-saphyr (a maintained YAML 1.2 parser whose budget bounds
//! nesting depth and node count, so that a hostile file costs linear time) deserialises the
//! structs below, while `serde_ignored` collects every key they do not know instead of stopping
//! at the first → the document's positions ([`Located`]) → one diagnostic per unknown key, each
//! with its own line and column, all reported together.

use std::path::PathBuf;

use serde::Deserialize;

use super::diag::{Diagnostic, Severity};
use super::load::PolicyError;
use super::locate::{Located, Step};

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
pub struct CredentialEntry {
    #[serde(rename = "Var")]
    pub var: String,
}

/// `Sandbox.Limits`.
#[derive(Debug, Default, Deserialize)]
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

/// A parsed file: its sections and where each of its keys is.
#[derive(Debug)]
pub struct Parsed {
    pub config: FileConfig,
    pub located: Located,
}

/// One step of the path of a key that `serde_ignored` reported.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Segment {
    Key(String),
    Index(usize),
}

/// Parses `text` (named `file` in diagnostics): a syntax or type error is one diagnostic with
/// its line and column; unknown keys in `Security:` or `Sandbox:` are all reported at once.
pub fn parse(text: &str, file: Option<PathBuf>) -> Result<Parsed, PolicyError> {
    let mut unknown: Vec<Vec<Segment>> = Vec::new();
    let config = if text.trim().is_empty() {
        FileConfig::default()
    } else {
        let mut options = serde_saphyr::Options::default();
        options.with_snippet = false;
        serde_saphyr::with_deserializer_from_str_with_options(text, options, |de| {
            serde_ignored::deserialize(de, |path| unknown.push(segments(&path)))
        })
        .map_err(|e| PolicyError::Syntax(syntax(&e, file.clone())))?
    };
    let located = Located::parse(text);
    let diagnostics: Vec<Diagnostic> = unknown
        .iter()
        .filter(|path| matches!(path.first(), Some(Segment::Key(k)) if k == "Security" || k == "Sandbox"))
        .map(|path| unknown_key(path, &located, file.clone()))
        .collect();
    if diagnostics.is_empty() {
        Ok(Parsed { config, located })
    } else {
        Err(PolicyError::Invalid(diagnostics))
    }
}

/// The diagnostic of a YAML or type error: the parser's message, its line and column.
fn syntax(e: &serde_saphyr::Error, file: Option<PathBuf>) -> Diagnostic {
    use serde_saphyr::budget::BudgetBreach;
    let at = e.location();
    let mut message = match e {
        serde_saphyr::Error::Budget { breach: BudgetBreach::Depth { depth }, .. } => {
            format!("collections nested {depth} deep: more than a configuration may nest")
        }
        serde_saphyr::Error::Budget { breach: BudgetBreach::Nodes { nodes }, .. } => {
            format!("more than {} values: more than a configuration may hold", nodes - 1)
        }
        other => other.to_string(),
    };
    if let Some(at) = &at {
        let prefix = format!("line {} column {}: ", at.line(), at.column());
        let suffix = format!(" at line {}, column {}", at.line(), at.column());
        let bare = message.strip_prefix(&prefix).unwrap_or(&message);
        let bare = bare.strip_suffix(&suffix).unwrap_or(bare);
        message = format!("{bare} (column {})", at.column());
    }
    Diagnostic {
        severity: Severity::Error,
        file,
        line: at.and_then(|l| usize::try_from(l.line()).ok()),
        key: String::new(),
        message,
    }
}

/// `FILE:LINE: error: Security: unknown field `Bogus` (column 3)`.
fn unknown_key(path: &[Segment], located: &Located, file: Option<PathBuf>) -> Diagnostic {
    let steps: Vec<Step<'_>> = path
        .iter()
        .map(|s| match s {
            Segment::Key(k) => Step::Key(k.as_str()),
            Segment::Index(i) => Step::Index(*i),
        })
        .collect();
    let position = located.position(&steps);
    let (parent, name) = match path.split_last() {
        Some((Segment::Key(k), parent)) => (parent, k.as_str()),
        _ => (path, ""),
    };
    let mut key = String::new();
    for s in parent {
        match s {
            Segment::Key(k) if key.is_empty() => key.push_str(k),
            Segment::Key(k) => {
                key.push('.');
                key.push_str(k);
            }
            Segment::Index(i) => key.push_str(&format!("[{i}]")),
        }
    }
    let column = position.map(|p| format!(" (column {})", p.column)).unwrap_or_default();
    Diagnostic {
        severity: Severity::Error,
        file,
        line: position.map(|p| p.line),
        key,
        message: format!("unknown field `{name}`{column}"),
    }
}

/// A `serde_ignored` path as steps from the document's root.
fn segments(path: &serde_ignored::Path<'_>) -> Vec<Segment> {
    let mut out = Vec::new();
    let mut at = path;
    loop {
        at = match at {
            serde_ignored::Path::Root => break,
            serde_ignored::Path::Seq { parent, index } => {
                out.push(Segment::Index(*index));
                parent
            }
            serde_ignored::Path::Map { parent, key } => {
                out.push(Segment::Key(key.clone()));
                parent
            }
            serde_ignored::Path::Some { parent }
            | serde_ignored::Path::NewtypeStruct { parent }
            | serde_ignored::Path::NewtypeVariant { parent } => parent,
        };
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(text: &str) -> Vec<String> {
        match parse(text, Some(PathBuf::from("c.yaml"))) {
            Ok(_) => Vec::new(),
            Err(PolicyError::Invalid(d)) => d.iter().map(ToString::to_string).collect(),
            Err(PolicyError::Syntax(d)) => vec![d.to_string()],
            Err(e) => vec![e.to_string()],
        }
    }

    #[test]
    fn every_unknown_key_is_reported_with_its_own_line_and_column() {
        let text = "Agents: {Whatever: 1}\nSecurity:\n  Bogus: 1\n  ShellPolicy: {AllowMode: substring, Nope: 2}\nSandbox:\n  Limits:\n    Cpus: 2\n  Credentials:\n    - Var: A\n      Vra: B\n";
        assert_eq!(
            errors(text),
            [
                "c.yaml:3: error: Security: unknown field `Bogus` (column 3)",
                "c.yaml:4: error: Security.ShellPolicy: unknown field `Nope` (column 39)",
                "c.yaml:7: error: Sandbox.Limits: unknown field `Cpus` (column 5)",
                "c.yaml:10: error: Sandbox.Credentials[0]: unknown field `Vra` (column 7)",
            ]
        );
    }

    #[test]
    fn type_and_syntax_errors_carry_line_and_column() {
        assert_eq!(errors("Sandbox:\n  Strict: maybe\n"), ["c.yaml:2: error: invalid boolean (column 11)"]);
        let unclosed = errors("Security:\n  HttpAllowedHosts: [a, b\n");
        assert!(unclosed[0].starts_with("c.yaml:"), "{unclosed:?}");
    }

    #[test]
    fn deep_nesting_is_refused_at_its_place_without_recursing() {
        let deep = format!("Agents: {}{}\n", "[".repeat(100_000), "]".repeat(100_000));
        let e = errors(&deep);
        assert_eq!(e.len(), 1);
        assert!(e[0].starts_with("c.yaml:1: error: "), "{e:?}");
        let dashes = format!("Agents:\n{}x\n", "- ".repeat(100_000));
        assert!(errors(&dashes)[0].starts_with("c.yaml:2: error: "), "{:?}", errors(&dashes));
    }
}
