//! `SandboxPlan`: everything a call's child needs, computed in the parent from the `Policy`, the
//! call and the kernel's facts — and the place where strict mode decides.
//!
//! Order: [`build`] checks what the policy asks against [`KernelSupport`] (strict: refuse with
//! [`PlanError::StrictRefused`], exit 3; `--no-strict`: drop the missing layer and record exactly
//! what was given up in `dropped`) → resolves the program and the working directory → builds the
//! environment → walks the roots for the masks → describes the mount view, the Landlock rules, the
//! seccomp policy, the limits. Nothing here touches the kernel's enforcement state; `spawn` turns
//! the plan into kernel objects. `explain -- PROGRAM` prints a plan ([`SandboxPlan::to_json`]).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{json, Value};

use super::env::{self, ChildEnv};
use super::etc;
use super::grants::{self, WriteGrants};
use super::home::{self, Home};
use super::kernel::{KernelSupport, STRICT_ABI};
use super::landlock::{Grant, LandlockPlan, PathRule};
use super::masks::{self, Mask, MaskKind, Snapshot};
use super::seccomp::SocketPolicy;
use super::sys;
use super::view::{self, Source, ViewSpec, DEVICES, PRIVATE_TMPFS};
use crate::policy::{NetMode, Policy};

/// The port the egress proxy listens on inside the child's (otherwise empty) network namespace.
pub const PROXY_PORT: u16 = 3128;

/// One call to plan.
#[derive(Debug, Clone)]
pub struct Call {
    pub argv: Vec<OsString>,
    pub cwd: PathBuf,
    /// The supervisor's environment (the source of pass-through variables).
    pub env: BTreeMap<String, String>,
    /// Give the child a private devpts (when it talks to a terminal).
    pub terminal: bool,
}

/// How the child reaches the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetPlan {
    /// A fresh network namespace with only `lo`.
    Isolated,
    /// A network namespace prepared by the supervisor, whose only way out is the proxy.
    Proxy { port: u16 },
    /// The host's network (`--net host`, or no network namespace could be had).
    Host,
}

/// A layer the kernel cannot provide, and what running without it gives up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    pub feature: String,
    pub consequence: String,
}

/// Everything the child needs.
#[derive(Debug, Clone)]
pub struct SandboxPlan {
    pub program: PathBuf,
    pub argv: Vec<OsString>,
    pub cwd: PathBuf,
    pub env: ChildEnv,
    pub net: NetPlan,
    pub mount_ns: bool,
    pub user_ns: bool,
    /// A PID namespace with its own `/proc`: host processes are invisible and unreachable.
    pub pid_ns: bool,
    pub view: Option<ViewSpec>,
    /// The mount ops built from `view`.
    pub mounts: Option<view::View>,
    /// Read-write places inside read-only roots (`Write` globs, `ChangeEnvelope`).
    pub write_grants: Option<WriteGrants>,
    /// The directories walked for the snapshot (walked again after the call).
    pub scanned: Vec<PathBuf>,
    pub snapshot: Snapshot,
    pub landlock: Option<LandlockPlan>,
    pub seccomp: Option<SocketPolicy>,
    pub drop_caps: bool,
    pub rlimits: Vec<(u32, u64, u64)>,
    pub processes: Option<u64>,
    pub memory: Option<u64>,
    pub timeout: Option<Duration>,
    pub output_cap: u64,
    /// What `--no-strict` gave up on this kernel.
    pub dropped: Vec<Missing>,
    pub yolo: bool,
    pub kernel: KernelSupport,
}

/// Why no plan could be made.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{}", strict_message(.0))]
    StrictRefused(Vec<Missing>),
    #[error("{0}")]
    Walk(#[from] masks::WalkError),
    #[error("{0}")]
    View(#[from] view::ViewError),
    #[error("{}: command not found", .0.to_string_lossy())]
    NotFound(OsString),
    #[error("no program given")]
    NoProgram,
}

fn strict_message(missing: &[Missing]) -> String {
    let mut out =
        String::from("strict mode refuses to run: this kernel cannot enforce what the policy asks.\n");
    for m in missing {
        out.push_str(&format!("  missing: {}\n", m.feature));
    }
    out.push_str("--no-strict would run anyway, without:\n");
    for m in missing {
        out.push_str(&format!("  - {}\n", m.consequence));
    }
    out.push_str("Run `hullward doctor` for what this kernel offers.");
    out
}

/// What the policy asks that this kernel lacks.
pub fn missing_features(policy: &Policy, kernel: &KernelSupport) -> Vec<Missing> {
    let mut missing = Vec::new();
    let pinned =
        kernel.landlock_pin.map(|p| format!(", pinned to {p} by HULLWARD_LANDLOCK_ABI")).unwrap_or_default();
    if kernel.landlock_abi == 0 {
        missing.push(Missing {
            feature: format!("Landlock (ABI {} on this kernel{pinned})", kernel.landlock_kernel_abi),
            consequence: "Landlock: file access is confined by the mount view alone, signals and abstract sockets are not scoped, TCP ports are not restricted".into(),
        });
    } else if kernel.landlock_abi < STRICT_ABI {
        let mut lost = vec!["signals and abstract Unix sockets are not scoped to the sandbox (ABI 6)"];
        if kernel.landlock_abi < 5 {
            lost.push("ioctl on devices is not mediated (ABI 5)");
        }
        if kernel.landlock_abi < 4 && policy.sandbox.network == NetMode::Proxy {
            lost.push("TCP connects are not limited to the proxy port (ABI 4)");
        }
        if kernel.landlock_abi < 3 {
            lost.push("truncation is not mediated (ABI 3)");
        }
        missing.push(Missing {
            feature: format!(
                "Landlock ABI {STRICT_ABI} (this kernel offers {}{pinned})",
                kernel.landlock_abi
            ),
            consequence: lost.join("; "),
        });
    }
    if !kernel.seccomp {
        missing.push(Missing {
            feature: "seccomp".into(),
            consequence: "the system-call filter: network sockets, io_uring, ptrace, keyrings, mount and namespace calls, TIOCSTI".into(),
        });
    }
    if kernel.root && !kernel.cgroups.can_limit_processes() {
        missing.push(Missing {
            feature: "a cgroup pids controller".into(),
            consequence: "the process limit: root ignores RLIMIT_NPROC, so a fork bomb is not bounded".into(),
        });
    }
    if !kernel.root && policy.sandbox.network == NetMode::Proxy {
        missing.push(Missing {
            feature: "the egress proxy for a non-root caller (its listener must be bound in the child's network namespace by root)".into(),
            consequence: "network access through the proxy: the child gets no network at all".into(),
        });
    }
    if !kernel.root && !kernel.userns_sysctl {
        missing.push(Missing {
            feature: "unprivileged user namespaces".into(),
            consequence:
                "the private mount view, the deny-rule masks inside the roots, and network isolation".into(),
        });
    }
    missing
}

/// Builds the plan for `call` under `policy` on this kernel.
pub fn build(policy: &Policy, call: &Call, kernel: &KernelSupport) -> Result<SandboxPlan, PlanError> {
    let first = call.argv.first().ok_or(PlanError::NoProgram)?;
    let yolo = policy.session.yolo;
    let missing = if yolo { Vec::new() } else { missing_features(policy, kernel) };
    if policy.sandbox.strict && !missing.is_empty() {
        return Err(PlanError::StrictRefused(missing));
    }
    let has_userns = kernel.root || kernel.userns_sysctl;
    let mount_ns = !yolo && has_userns;
    let net = match (yolo || !has_userns, policy.sandbox.network) {
        (true, _) | (_, NetMode::Host) => NetPlan::Host,
        (false, NetMode::None) => NetPlan::Isolated,
        (false, NetMode::Proxy) if kernel.root => NetPlan::Proxy { port: PROXY_PORT },
        (false, NetMode::Proxy) => NetPlan::Isolated,
    };

    let mut proxy_env: Vec<(String, String)> = match net {
        NetPlan::Proxy { port } => crate::proxy::child_env(port),
        _ => Vec::new(),
    };
    let home = mount_ns.then(|| child_home(policy));
    proxy_env.extend(home.iter().map(|h| ("HOME".to_string(), h.path.display().to_string())));
    let env = if yolo {
        ChildEnv {
            vars: call.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            ..Default::default()
        }
    } else {
        env::build(&policy.sandbox.env, &policy.sandbox.credentials, &call.env, &proxy_env)
    };
    let path_var = env.vars.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str());
    let program =
        resolve_program(first, &call.cwd, path_var).ok_or_else(|| PlanError::NotFound(first.clone()))?;

    let roots = policy.roots();
    let private: Vec<PathBuf> = PRIVATE_TMPFS.iter().map(|(d, _)| PathBuf::from(d)).collect();
    let writable_host: Vec<PathBuf> = policy
        .sandbox
        .writable
        .iter()
        .filter(|w| !mount_ns || !private.contains(w))
        .filter(|w| !roots.iter().any(|r| w.starts_with(r)))
        .cloned()
        .collect();
    let read_only_dirs = &policy.sandbox.read_only_dirs;
    let visible = |p: &Path| {
        roots
            .iter()
            .chain(&policy.sandbox.writable)
            .chain(&policy.sandbox.system)
            .chain(read_only_dirs)
            .any(|r| p.starts_with(r))
    };
    let cwd = if visible(&call.cwd) { call.cwd.clone() } else { policy.root.clone() };

    let scanned: Vec<PathBuf> =
        if yolo { Vec::new() } else { [roots.clone(), writable_host.clone()].concat() };
    let mut snapshot = masks::scan_policy(policy, &scanned)?;
    if !yolo {
        add_read_only_masks(policy, read_only_dirs, &mut snapshot)?;
    }

    // Write globs and the change envelope: the roots become read-only with the granted places
    // read-write on top.
    let write_grants = (!yolo && !policy.sandbox.read_only && grants::restricted(policy))
        .then(|| grants::compute(policy, &roots));
    let (read_write, read_only) = match (&write_grants, policy.sandbox.read_only) {
        (_, true) => (writable_host.clone(), roots.clone()),
        (Some(g), false) => {
            ([writable_host.clone(), g.dirs.clone(), g.files.clone()].concat(), roots.clone())
        }
        (None, false) => ([roots.clone(), writable_host.clone()].concat(), Vec::new()),
    };

    let host_files = etc::host_files(net == NetPlan::Host);
    let view_files = [identity_files(), etc::generated(net == NetPlan::Host)].concat();
    let source = |p: &PathBuf| Source { path: p.clone(), is_dir: p.is_dir() };
    let view = mount_ns.then(|| ViewSpec {
        system: policy.sandbox.system.iter().chain(&host_files.paths).map(source).collect(),
        links: [policy.sandbox.system_links.clone(), host_files.links.clone()].concat(),
        read_write: read_write.clone(),
        read_only: read_only.clone(),
        read_only_dirs: read_only_dirs.iter().map(source).collect(),
        home: home.as_ref().filter(|h| h.private).map(|h| h.path.clone()),
        devices: DEVICES.iter().map(PathBuf::from).filter(|p| p.exists()).collect(),
        dev_pts: call.terminal,
        new_proc: true,
        tmpfs_size: policy.sandbox.limits.memory_bytes.map_or_else(|| "50%".to_string(), |m| m.to_string()),
        files: view_files.clone(),
        masks: snapshot.masks.clone(),
        read_only_binds: snapshot.read_only.clone(),
        pins: snapshot.pins.clone(),
    });
    let mounts = view.as_ref().map(view::build).transpose()?;

    let landlock = (!yolo && kernel.landlock_abi > 0).then(|| {
        let mut rules: Vec<PathRule> = policy
            .sandbox
            .system
            .iter()
            .chain(&host_files.paths)
            .chain(read_only_dirs)
            .map(|p| PathRule { path: p.clone(), grant: Grant::ReadExec })
            .collect();
        if !mount_ns {
            rules.push(PathRule { path: "/proc".into(), grant: Grant::Read });
        }
        rules.extend(
            DEVICES
                .iter()
                .map(PathBuf::from)
                .filter(|p| p.exists())
                .map(|path| PathRule { path, grant: Grant::Device }),
        );
        rules.extend(read_write.iter().map(|p| PathRule { path: p.clone(), grant: Grant::ReadWrite }));
        rules.extend(read_only.iter().map(|p| PathRule { path: p.clone(), grant: Grant::ReadExec }));
        let mut child_rules = Vec::new();
        if mount_ns {
            child_rules.push(PathRule { path: "/".into(), grant: Grant::List });
            child_rules.push(PathRule { path: "/proc".into(), grant: Grant::Read });
            for (file, _) in &view_files {
                if !policy.sandbox.system.iter().any(|s| file.starts_with(s)) {
                    child_rules.push(PathRule { path: file.clone(), grant: Grant::ReadFile });
                }
            }
            for dir in ["/tmp", "/run", "/dev/shm"] {
                child_rules.push(PathRule { path: dir.into(), grant: Grant::ReadWrite });
            }
            if let Some(h) = home.as_ref().filter(|h| h.private) {
                child_rules.push(PathRule { path: h.path.clone(), grant: Grant::ReadWrite });
            }
            if call.terminal {
                child_rules.push(PathRule { path: "/dev/pts".into(), grant: Grant::Device });
            }
        } else {
            rules.extend(
                private
                    .iter()
                    .filter(|p| policy.sandbox.writable.contains(p))
                    .map(|p| PathRule { path: p.clone(), grant: Grant::ReadWrite }),
            );
        }
        LandlockPlan {
            abi: kernel.landlock_abi,
            rules,
            child_rules,
            tcp_connect: match net {
                NetPlan::Proxy { port } => vec![port],
                _ => Vec::new(),
            },
            // In a namespace of the call's own, only the proxy mode narrows TCP; with nothing
            // but the private loopback (`--net none`) the program binds and connects freely.
            tcp: matches!(net, NetPlan::Proxy { .. }),
        }
    });

    let seccomp = (!yolo && kernel.seccomp).then_some(match (policy.sandbox.network, net) {
        (_, NetPlan::Proxy { .. }) => SocketPolicy::UnixAndTcp,
        (NetMode::Host, _) => SocketPolicy::Any,
        (_, NetPlan::Isolated) => SocketPolicy::UnixAndLoopback,
        _ => SocketPolicy::UnixOnly,
    });

    let limits = policy.sandbox.limits;
    let mut rlimits =
        vec![(sys::rlimit::NOFILE, limits.open_files, limits.open_files), (sys::rlimit::CORE, 0, 0)];
    if !kernel.root {
        rlimits.push((sys::rlimit::NPROC, limits.processes, limits.processes));
    }

    Ok(SandboxPlan {
        program,
        argv: call.argv.clone(),
        cwd,
        env,
        net,
        mount_ns,
        user_ns: mount_ns && !kernel.root,
        pid_ns: mount_ns,
        view,
        mounts,
        write_grants,
        scanned,
        snapshot,
        landlock,
        seccomp,
        drop_caps: !yolo,
        rlimits: if yolo { Vec::new() } else { rlimits },
        processes: (!yolo).then_some(limits.processes),
        memory: if yolo { None } else { limits.memory_bytes },
        timeout: policy.sandbox.timeout,
        output_cap: limits.output_bytes,
        dropped: missing,
        yolo,
        kernel: kernel.clone(),
    })
}

/// The deny masks inside the read-only directories (`--ro`, `ReadOnlyDirs`): their directories
/// are walked like the roots, and a read-only file is masked when a deny rule names it. Only the
/// masks join the call's snapshot: nothing there can change during the call, so the walk after
/// the call (which looks for what the call wrote) covers the writable trees alone.
fn add_read_only_masks(
    policy: &Policy,
    entries: &[PathBuf],
    snapshot: &mut Snapshot,
) -> Result<(), PlanError> {
    let (dirs, files): (Vec<PathBuf>, Vec<PathBuf>) = entries.iter().cloned().partition(|p| p.is_dir());
    let found = if dirs.is_empty() { Snapshot::default() } else { masks::scan_policy(policy, &dirs)? };
    let denied_files = files.iter().filter_map(|f| {
        let rule = crate::guard::path::deny_match(policy, f)?;
        Some(Mask { path: f.clone(), kind: MaskKind::File, pattern: rule.pattern.clone(), via_symlink: None })
    });
    for mask in found.masks.into_iter().chain(denied_files) {
        if !snapshot.masks.iter().any(|m| mask.path.starts_with(&m.path)) {
            snapshot.masks.push(mask);
        }
    }
    snapshot.skipped_links.extend(found.skipped_links);
    snapshot.entries_seen += found.entries_seen;
    Ok(())
}

/// Where the child's private home goes, against what the view shows (see `sandbox::home`).
fn child_home(policy: &Policy) -> Home {
    let private: Vec<PathBuf> = PRIVATE_TMPFS.iter().map(|(d, _)| PathBuf::from(d)).collect();
    let granted: Vec<PathBuf> = policy
        .roots()
        .into_iter()
        .chain(policy.sandbox.writable.iter().filter(|w| !private.contains(w)).cloned())
        .chain(policy.sandbox.read_only_dirs.iter().cloned())
        .collect();
    home::plan(policy.home(), home::Shown { granted: &granted, system: &policy.sandbox.system })
}

/// `/etc/passwd` and `/etc/group` for the child's view: root, the caller's own user and group (as
/// the host names them), and nobody — so that `whoami`, `ls -l` and git find a name, while the
/// host's real account list stays outside.
fn identity_files() -> Vec<(PathBuf, Vec<u8>)> {
    let (uid, gid) = (sys::geteuid(), sys::getegid());
    let host_line = |file: &str, id: u32| {
        std::fs::read_to_string(file)
            .ok()?
            .lines()
            .find(|l| l.split(':').nth(2).and_then(|f| f.parse::<u32>().ok()) == Some(id))
            .map(str::to_string)
    };
    let mut passwd = vec!["root:x:0:0:root:/root:/bin/sh".to_string()];
    let mut group = vec!["root:x:0:".to_string()];
    if uid != 0 {
        passwd
            .push(host_line("/etc/passwd", uid).unwrap_or_else(|| format!("user:x:{uid}:{gid}::/:/bin/sh")));
    }
    if gid != 0 {
        group.push(host_line("/etc/group", gid).map_or_else(
            || format!("user:x:{gid}:"),
            |l| {
                // Keep the name and id, drop the member list.
                let mut f: Vec<&str> = l.split(':').take(3).collect();
                f.push("");
                f.join(":")
            },
        ));
    }
    passwd.push("nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin".into());
    group.push("nogroup:x:65534:".into());
    let text = |lines: Vec<String>| (lines.join("\n") + "\n").into_bytes();
    vec![(PathBuf::from("/etc/passwd"), text(passwd)), (PathBuf::from("/etc/group"), text(group))]
}

const DEFAULT_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

/// Finds the program like `execvp` would, with the child's `PATH`.
fn resolve_program(name: &OsString, cwd: &Path, path_var: Option<&str>) -> Option<PathBuf> {
    if name.as_bytes().contains(&b'/') {
        let p = Path::new(name);
        return Some(if p.is_absolute() { p.to_path_buf() } else { cwd.join(p) });
    }
    path_var.unwrap_or(DEFAULT_PATH).split(':').filter(|d| !d.is_empty()).find_map(|dir| {
        let candidate = Path::new(dir).join(name);
        let meta = std::fs::metadata(&candidate).ok()?;
        (meta.is_file() && meta.permissions().mode() & 0o111 != 0).then_some(candidate)
    })
}

impl SandboxPlan {
    /// The plan as JSON for `explain -- PROGRAM`. Environment values are never shown.
    pub fn to_json(&self) -> Value {
        let masks: Vec<Value> = self
            .snapshot
            .masks
            .iter()
            .map(|m| {
                json!({
                    "path": m.path.display().to_string(),
                    "kind": if m.kind == MaskKind::Dir { "dir" } else { "file" },
                    "rule": m.pattern,
                    "via_symlink": m.via_symlink.as_ref().map(|p| p.display().to_string()),
                })
            })
            .collect();
        let landlock = self.landlock.as_ref().map(|l| {
            json!({
                "abi": l.abi,
                "rules": l.rules.iter().chain(&l.child_rules).map(|r| json!({
                    "path": r.path.display().to_string(),
                    "access": r.grant.describe(),
                })).collect::<Vec<_>>(),
                "tcp_connect": l.tcp_connect,
                "tcp_handled": l.handles_tcp(),
                "scopes": if l.scoped() { json!(["abstract-unix-socket", "signal"]) } else { json!([]) },
            })
        });
        json!({
            "program": self.program.display().to_string(),
            "argv": self.argv.iter().map(|a| a.to_string_lossy().into_owned()).collect::<Vec<_>>(),
            "cwd": self.cwd.display().to_string(),
            "env": self.env.vars.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>(),
            "missing_credentials": self.env.missing_credentials,
            "network": match self.net {
                NetPlan::Isolated => json!({"mode": "none", "namespace": "new, loopback only"}),
                NetPlan::Proxy { port } => json!({"mode": "proxy", "namespace": "new, loopback only", "proxy": format!("127.0.0.1:{port}")}),
                NetPlan::Host => json!({"mode": "host", "namespace": "host"}),
            },
            "namespaces": {
                "mount": self.mount_ns,
                "user": self.user_ns,
                "ipc": self.mount_ns,
                "pid": self.pid_ns,
                "cgroup": self.mount_ns,
                "network": self.net != NetPlan::Host,
            },
            "view": self.view.as_ref().map(|v| json!({
                "system_read_only": v.system.iter().map(|s| s.path.display().to_string()).collect::<Vec<_>>(),
                "read_write": v.read_write.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                "read_only": v.read_only.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                "read_only_dirs": v.read_only_dirs.iter().map(|s| s.path.display().to_string()).collect::<Vec<_>>(),
                "home": v.home.as_ref().map(|h| json!({"path": h.display().to_string(), "kind": "private tmpfs"})),
                "private_tmpfs": ["/tmp", "/run", "/dev/shm"],
                "devices": v.devices.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            })),
            "write_grants": self.write_grants.as_ref().map(|g| json!({
                "dirs": g.dirs.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                "files": g.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                "notes": g.notes,
            })),
            "masks": masks,
            "pinned": self.snapshot.pins.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "write_protected": self.snapshot.read_only.iter().map(|m| json!({
                "path": m.path.display().to_string(),
                "rule": m.pattern,
            })).collect::<Vec<_>>(),
            "symlinks_not_masked": self.snapshot.skipped_links.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "entries_walked": self.snapshot.entries_seen,
            "landlock": landlock,
            "seccomp": self.seccomp.map(|s| json!({
                "default": "allow",
                "denied_with_eperm": super::seccomp::denied_summary(s),
            })),
            "capabilities": if self.drop_caps { "all dropped (bounding, ambient, effective, permitted, inheritable); securebits locked" } else { "kept (--yolo)" },
            "no_new_privs": !self.yolo,
            "rlimits": self.rlimits.iter().map(|(r, s, _)| json!({"resource": rlimit_name(*r), "limit": s})).collect::<Vec<_>>(),
            "cgroup": {
                "processes": self.processes,
                "memory_bytes": self.memory,
                "kill": if self.kernel.cgroups.can_kill_tree() { "cgroup.kill" } else { "subreaper + /proc walk" },
            },
            "timeout": self.timeout.map(crate::policy::duration::format),
            "output_bytes": self.output_cap,
            "dropped": self.dropped.iter().map(|m| json!({"feature": m.feature, "consequence": m.consequence})).collect::<Vec<_>>(),
            "yolo": self.yolo,
        })
    }
}

fn rlimit_name(r: u32) -> &'static str {
    match r {
        sys::rlimit::NOFILE => "nofile",
        sys::rlimit::CORE => "core",
        sys::rlimit::NPROC => "nproc",
        _ => "other",
    }
}
