//! The common flags of every command and their translation into a [`LoadRequest`].

use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::error::Error;
use crate::policy::load::{load, Flags, LoadRequest};
use crate::policy::{duration, NetMode, Policy, Unattended, WorkspaceMode};

/// Flags accepted by every command, before or after the command name.
#[derive(Debug, Clone, Default, Args)]
pub struct CommonArgs {
    /// YAML configuration (fuseraft's `Security:` plus hullward's `Sandbox:`).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// A built-in profile (default, ci, readonly, registries, toolchains, agent) or a profile file.
    #[arg(long, global = true, value_name = "NAME|FILE")]
    pub profile: Option<String>,
    /// The sandbox root (default: the current directory).
    #[arg(long, global = true, value_name = "DIR")]
    pub root: Option<PathBuf>,
    /// Another allowed root (repeatable).
    #[arg(long, global = true, value_name = "DIR")]
    pub include: Vec<PathBuf>,
    /// A directory (or file) the program may read and execute but never change (repeatable).
    #[arg(long, global = true, value_name = "DIR")]
    pub ro: Vec<PathBuf>,
    /// A deny glob (repeatable).
    #[arg(long, global = true, value_name = "GLOB")]
    pub deny: Vec<String>,
    /// A read glob (repeatable).
    #[arg(long, global = true, value_name = "GLOB")]
    pub read: Vec<String>,
    /// A write glob (repeatable).
    #[arg(long, global = true, value_name = "GLOB")]
    pub write: Vec<String>,
    /// Network mode.
    #[arg(long, global = true, value_enum, value_name = "MODE")]
    pub net: Option<NetArg>,
    /// A host the egress proxy lets through (repeatable; implies --net proxy).
    #[arg(long = "allow-host", global = true, value_name = "HOST")]
    pub allow_host: Vec<String>,
    /// Kill the whole process tree after this long (e.g. 30s, 5m).
    #[arg(long, global = true, value_name = "DURATION", value_parser = parse_duration)]
    pub timeout: Option<Duration>,
    /// Pass this environment variable through (repeatable).
    #[arg(long, global = true, value_name = "NAME")]
    pub env: Vec<String>,
    /// Human-in-the-loop approval (default: on when stdin is a terminal).
    #[arg(long, global = true, value_enum, value_name = "on|off")]
    pub hitl: Option<Switch>,
    /// What happens to a call needing approval when no human is attached.
    #[arg(long = "unattended-policy", global = true, value_enum, value_name = "deny|allow")]
    pub unattended_policy: Option<UnattendedArg>,
    /// Run with what the kernel offers instead of refusing (exit 3).
    #[arg(long = "no-strict", global = true)]
    pub no_strict: bool,
    /// No sandbox at all (loud warning).
    #[arg(long, global = true)]
    pub yolo: bool,
    /// The JSONL audit log (default: $HULLWARD_HOME/audit.jsonl).
    #[arg(long, global = true, value_name = "FILE")]
    pub audit: Option<PathBuf>,
    /// Where the program's writes land: in place, in a layer applied when it ends, or thrown away.
    #[arg(long, global = true, value_enum, value_name = "MODE")]
    pub workspace: Option<WorkspaceArg>,
    /// Hold an overlay call's changes for `hullward review|apply|discard` (implies --workspace overlay).
    #[arg(long, global = true)]
    pub review: bool,
    /// Machine-readable output.
    #[arg(long, global = true)]
    pub json: bool,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum WorkspaceArg {
    Direct,
    Overlay,
    Ephemeral,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum NetArg {
    None,
    Proxy,
    Host,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Switch {
    On,
    Off,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum UnattendedArg {
    Deny,
    Allow,
}

/// `$HULLWARD_HOME`, else `~/.hullward` (`/.hullward` without a home), where the audit log and
/// crash dumps live by default.
pub fn hullward_home(env: &BTreeMap<String, String>) -> PathBuf {
    match env.get("HULLWARD_HOME").filter(|h| !h.is_empty()) {
        Some(h) => PathBuf::from(h),
        None => PathBuf::from(env.get("HOME").filter(|h| !h.is_empty()).map_or("/", String::as_str))
            .join(".hullward"),
    }
}

fn parse_duration(s: &str) -> Result<Duration, String> {
    duration::parse(s).ok_or_else(|| format!("'{s}' is not a duration (e.g. 30s, 5m, 1h)"))
}

impl CommonArgs {
    /// The load request these flags describe, in the current directory and environment.
    pub fn load_request(&self) -> Result<LoadRequest, Error> {
        let cwd = std::env::current_dir()
            .map_err(|e| Error::Usage(format!("cannot determine the current directory: {e}")))?;
        for name in &self.env {
            if name.is_empty() || name.contains('=') {
                return Err(Error::Usage(format!("--env '{name}' is not an environment variable name")));
            }
        }
        Ok(LoadRequest {
            profile: self.profile.clone(),
            config: self.config.clone(),
            cwd,
            env: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
            stdin_is_tty: std::io::stdin().is_terminal(),
            flags: Flags {
                root: self.root.clone(),
                include: self.include.clone(),
                ro: self.ro.clone(),
                deny: self.deny.clone(),
                read: self.read.clone(),
                write: self.write.clone(),
                net: self.net.map(|n| match n {
                    NetArg::None => NetMode::None,
                    NetArg::Proxy => NetMode::Proxy,
                    NetArg::Host => NetMode::Host,
                }),
                allow_host: self.allow_host.clone(),
                timeout: self.timeout,
                env: self.env.clone(),
                hitl: self.hitl.map(|s| matches!(s, Switch::On)),
                unattended: self.unattended_policy.map(|u| match u {
                    UnattendedArg::Deny => Unattended::Deny,
                    UnattendedArg::Allow => Unattended::Allow,
                }),
                no_strict: self.no_strict,
                yolo: self.yolo,
                audit: self.audit.clone(),
                workspace: self.workspace.map(|w| match w {
                    WorkspaceArg::Direct => WorkspaceMode::Direct,
                    WorkspaceArg::Overlay => WorkspaceMode::Overlay,
                    WorkspaceArg::Ephemeral => WorkspaceMode::Ephemeral,
                }),
                review: self.review,
            },
        })
    }

    /// Loads the policy and prints its warnings to stderr.
    pub fn policy(&self) -> Result<Policy, Error> {
        let policy = load(&self.load_request()?)?;
        for w in &policy.warnings {
            eprintln!("hullward: {w}");
        }
        Ok(policy)
    }
}
