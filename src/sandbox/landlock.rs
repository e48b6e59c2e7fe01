//! The Landlock ruleset: what the child may read, write and execute, which TCP ports it may
//! connect to, and the scopes that keep it from signalling or reaching abstract sockets outside.
//!
//! [`LandlockPlan`] is the description (printed by `explain`); [`create`] turns it into a ruleset
//! descriptor in the parent with the `landlock` crate, at exactly the planned ABI (hard
//! requirement: nothing is silently dropped). The child adds its few own rules (the private tmpfs
//! mounts exist only in its view) and calls `landlock_restrict_self` on that descriptor.

use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::PathBuf;

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, NetPort, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};

/// A class of access, mapped to rights for a given ABI.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Grant {
    /// Read files, list directories, execute (`System`).
    ReadExec,
    /// Read files and list directories (`/proc`).
    Read,
    /// List directories only (the new root itself).
    List,
    /// Read one file (a rule on a file may only carry file rights).
    ReadFile,
    /// Everything but creating device nodes (roots, writable directories, private tmpfs).
    ReadWrite,
    /// [`Grant::ReadWrite`] without reading or executing files (a root whose `Read` globs do
    /// not cover it: see `sandbox::reads`).
    WriteOnly,
    /// Read and write an existing device (`/dev/null`, terminals).
    Device,
}

impl Grant {
    pub fn rights(self, abi: ABI) -> BitFlags<AccessFs> {
        match self {
            Grant::ReadExec => AccessFs::from_read(abi),
            Grant::Read => AccessFs::ReadFile | AccessFs::ReadDir,
            Grant::List => AccessFs::ReadDir.into(),
            Grant::ReadFile => AccessFs::ReadFile.into(),
            Grant::ReadWrite => AccessFs::from_all(abi) & !(AccessFs::MakeChar | AccessFs::MakeBlock),
            Grant::WriteOnly => Grant::ReadWrite.rights(abi) & !(AccessFs::ReadFile | AccessFs::Execute),
            Grant::Device => {
                (AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev)
                    & AccessFs::from_all(abi)
            }
        }
    }

    pub fn describe(self) -> &'static str {
        match self {
            Grant::ReadExec => "read+exec",
            Grant::Read => "read",
            Grant::List => "list",
            Grant::ReadFile => "read",
            Grant::ReadWrite => "read+write",
            Grant::WriteOnly => "list+write (no read)",
            Grant::Device => "device read+write",
        }
    }
}

/// One path rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathRule {
    pub path: PathBuf,
    pub grant: Grant,
}

/// The ruleset to build.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LandlockPlan {
    /// The ABI the ruleset is built for (the kernel's, or lower when pinned).
    pub abi: i32,
    /// Rules on host paths, added by the parent.
    pub rules: Vec<PathRule>,
    /// Rules on the entries beside denied paths (Landlock-only mode, `sandbox::enumerate`):
    /// opened without following a symlink; one gone since the plan gets no rule.
    pub entries: Vec<PathRule>,
    /// Rules on paths that exist only in the child's view, added by the child.
    pub child_rules: Vec<PathRule>,
    /// TCP ports the child may connect to (ABI 4); every other connect and bind is refused.
    pub tcp_connect: Vec<u16>,
    /// Mediate TCP at all: false with the host's network (`--net host` opts out of isolation).
    pub tcp: bool,
}

impl LandlockPlan {
    pub fn handles_tcp(&self) -> bool {
        self.tcp && self.abi >= 4
    }

    pub fn scoped(&self) -> bool {
        self.abi >= 6
    }

    /// Raw access bits of a grant at this plan's ABI (for the child's own rules).
    pub fn bits(&self, grant: Grant) -> u64 {
        grant.rights(ABI::from(self.abi)).bits()
    }
}

/// Why the ruleset could not be built.
#[derive(Debug, thiserror::Error)]
pub enum LandlockError {
    #[error("cannot open '{}' for a Landlock rule: {source}", path.display())]
    Path { path: PathBuf, source: landlock::PathFdError },
    #[error("cannot open '{}' for a Landlock rule beside a denied path: {source}", path.display())]
    Entry { path: PathBuf, source: std::io::Error },
    #[error("cannot build the Landlock ruleset (ABI {abi}): {source}")]
    Ruleset { abi: i32, source: landlock::RulesetError },
    #[error("the Landlock ruleset has no descriptor (Landlock is not enforced by this kernel)")]
    NoDescriptor,
}

/// Creates the ruleset in the parent and returns its descriptor.
pub fn create(plan: &LandlockPlan) -> Result<OwnedFd, LandlockError> {
    let abi = ABI::from(plan.abi);
    let err = |source| LandlockError::Ruleset { abi: plan.abi, source };
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?;
    if plan.handles_tcp() {
        ruleset = ruleset.handle_access(AccessNet::from_all(abi)).map_err(err)?;
    }
    if plan.scoped() {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    let file_rights = |grant: Grant, is_dir: bool| {
        let rights = grant.rights(abi);
        if is_dir {
            rights
        } else {
            rights & AccessFs::from_file(abi)
        }
    };
    for rule in &plan.rules {
        let fd = PathFd::new(&rule.path)
            .map_err(|source| LandlockError::Path { path: rule.path.clone(), source })?;
        // The type of the inode just opened (one `fstat`), not of whatever the path names now.
        let is_dir = rustix::fs::fstat(fd.as_fd())
            .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir());
        created = created.add_rule(PathBeneath::new(fd, file_rights(rule.grant, is_dir))).map_err(err)?;
    }
    for rule in &plan.entries {
        // A symlink swapped in since the plan is the rule's own inode, never its target.
        let opened = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_PATH | libc::O_NOFOLLOW)
            .open(&rule.path);
        let fd = match opened {
            Ok(fd) => fd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(LandlockError::Entry { path: rule.path.clone(), source }),
        };
        let is_dir = fd.metadata().map(|m| m.is_dir()).unwrap_or(false);
        created = created.add_rule(PathBeneath::new(fd, file_rights(rule.grant, is_dir))).map_err(err)?;
    }
    if plan.handles_tcp() {
        for port in &plan.tcp_connect {
            created = created.add_rule(NetPort::new(*port, AccessNet::ConnectTcp)).map_err(err)?;
        }
    }
    Option::<OwnedFd>::from(created).ok_or(LandlockError::NoDescriptor)
}
