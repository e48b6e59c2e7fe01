//! `SandboxPlan`: everything a call's child needs, computed in the parent from the `Policy`, the
//! call and the kernel's facts — and the place where strict mode decides.
//!
//! Order: [`build`] evaluates each promise of the policy against [`KernelSupport`]
//! ([`promises`]: the layers that would hold it and whether this machine enforces each; DESIGN.md's
//! "promise by promise" table). A promise with no layer makes strict refuse with
//! [`PlanError::StrictRefused`] (exit 3, naming the promise, the missing layers and what would
//! supply them); `--no-strict` records it in `dropped` and, after a probe child has tried the plan
//! ([`super::spawn::probe`]), drops every layer the machine refused as well → resolves the program and the working directory → builds the
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

use super::child::MountOp;
use super::enumerate::{self, EnumerateError};
use super::env::{self, ChildEnv};
use super::etc;
use super::grants::{self, WriteGrants};
use super::hardlinks;
use super::home::{self, Home};
use super::kernel::{KernelSupport, Layer, SCOPES_ABI};
use super::landlock::{Grant, LandlockPlan, PathRule};
use super::masks::{self, Mask, MaskKind, ReadOnlyTrees, Snapshot};
use super::protect;
use super::reads::{self, ReadGrants};
use super::seccomp::SocketPolicy;
use super::seen::{Identity, Seen};
use super::sys;
use super::view::{self, Source, ViewSpec, DEVICES, PRIVATE_TMPFS};
use crate::policy::{NetMode, Policy};

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

/// A promise of the policy that no layer on this machine holds, and what running without it
/// gives up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missing {
    /// The promise, in the words of DESIGN.md's table.
    pub promise: String,
    /// The layers that would hold it, and why each is missing here.
    pub feature: String,
    /// What `--no-strict` gives up.
    pub consequence: String,
    /// What would supply a layer.
    pub remedy: String,
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
    /// The only places inside the roots the program may read (`Read` globs), as Landlock rules.
    pub read_grants: Option<ReadGrants>,
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
    /// Each promise of the policy and the layers that hold it here (`explain`, `doctor`).
    pub promises: Vec<PromiseCheck>,
    /// Limits that still hold but behave differently here (Landlock ABI 1: EXDEV on renames).
    pub notes: Vec<String>,
    /// Drop capabilities including securebits and the bounding set (needs `CAP_SETPCAP` in the
    /// child: a user namespace, or a caller that has it).
    pub lock_privileges: bool,
    /// CPU limit in thousandths of a CPU.
    pub cpu_millis: Option<u64>,
    pub yolo: bool,
    pub kernel: KernelSupport,
    /// Where the protected paths the call creates or changes anyway are moved after it
    /// (`$HULLWARD_HOME/quarantine`).
    pub quarantine_dir: PathBuf,
    /// The identity of each host path the plan asked about, as it was then (`sandbox::seen`).
    pub seen: std::collections::HashMap<PathBuf, Identity>,
}

/// Why no plan could be made.
#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("{}", strict_message(.0))]
    StrictRefused(Vec<Missing>),
    #[error("{0}")]
    Walk(#[from] masks::WalkError),
    #[error("{0}")]
    Enumerate(#[from] EnumerateError),
    #[error("{0}")]
    View(#[from] view::ViewError),
    #[error("{}: command not found", .0.to_string_lossy())]
    NotFound(OsString),
    #[error("no program given")]
    NoProgram,
}

fn strict_message(missing: &[Missing]) -> String {
    let mut out =
        String::from("strict mode refuses to run: this machine cannot keep every promise of the policy.\n");
    for m in missing {
        out.push_str(&format!("  promise: {} — no layer holds it here\n", m.promise));
        out.push_str(&format!("    missing: {}\n", m.feature));
        out.push_str(&format!("    would supply it: {}\n", m.remedy));
    }
    out.push_str("--no-strict would run anyway, without:\n");
    for m in missing {
        out.push_str(&format!("  - {}\n", m.consequence));
    }
    out.push_str("Run `hullward doctor` for what this machine offers.");
    out
}

/// One layer of a promise, and whether this machine enforces it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerCheck {
    pub name: String,
    /// `None`: it holds here; otherwise why not.
    pub missing: Option<String>,
    /// What would supply it (shown when the promise has no layer).
    pub remedy: String,
}

/// A promise of the policy and its layers on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromiseCheck {
    pub promise: &'static str,
    pub layers: Vec<LayerCheck>,
    /// What `--no-strict` gives up when no layer holds.
    pub without: String,
}

impl PromiseCheck {
    /// The layers that hold the promise here.
    pub fn held_by(&self) -> Vec<&str> {
        self.layers.iter().filter(|l| l.missing.is_none()).map(|l| l.name.as_str()).collect()
    }

    fn as_missing(&self) -> Option<Missing> {
        if !self.held_by().is_empty() {
            return None;
        }
        let feature = self
            .layers
            .iter()
            .map(|l| format!("{} ({})", l.name, l.missing.as_deref().unwrap_or("")))
            .collect::<Vec<_>>()
            .join("; or ");
        let remedy = self.layers.iter().map(|l| l.remedy.as_str()).collect::<Vec<_>>().join("; or ");
        Some(Missing { promise: self.promise.into(), feature, consequence: self.without.clone(), remedy })
    }
}

fn layer(name: impl Into<String>, missing: Option<String>, remedy: impl Into<String>) -> LayerCheck {
    LayerCheck { name: name.into(), missing, remedy: remedy.into() }
}

/// The promises of `policy` and the layers that hold each on `kernel` (DESIGN.md, "Fail closed —
/// promise by promise"). Strict mode refuses when one of them has no layer.
pub fn promises(policy: &Policy, kernel: &KernelSupport) -> Vec<PromiseCheck> {
    let pinned =
        kernel.landlock_pin.map(|p| format!(", pinned to {p} by HULLWARD_LANDLOCK_ABI")).unwrap_or_default();
    let ns_missing = kernel.refuses(Layer::Namespaces).map(|r| r.cause.clone());
    let ns_remedy = kernel.namespace_remedy();
    let abi = if kernel.refuses(Layer::Landlock).is_some() { 0 } else { kernel.landlock_abi };
    let landlock = |need: i32, what: &str| {
        layer(
            format!("Landlock{}{what}", if need > 1 { format!(" ABI {need} ") } else { " ".into() }),
            (abi < need).then(|| format!("this kernel offers ABI {}{pinned}", kernel.landlock_abi)),
            format!("a kernel with Landlock ABI {need} or later (lsm= includes landlock)"),
        )
    };
    let masks_missing = ns_missing.clone().or_else(|| kernel.refuses(Layer::Masks).map(|r| r.cause.clone()));
    let proc_missing =
        ns_missing.clone().or_else(|| kernel.refuses(Layer::FreshProc).map(|r| r.cause.clone()));
    let cg = &kernel.cgroups;
    let cg_remedy = cg.remedy(kernel.root);
    let landlock_any = (abi < 1)
        .then(|| format!("this kernel offers no Landlock{}", if pinned.is_empty() { "" } else { &pinned }));
    let enumeration_missing = landlock_any
        .clone()
        .or_else(|| masks_missing.is_none().then(|| "not used: the mount masks hold it".to_string()));
    // Landlock-only mode's socket filter (no `socket` at all) holds what the namespaces and the
    // private view hold elsewhere.
    let no_sockets_missing = if !kernel.seccomp {
        Some("seccomp is not available".to_string())
    } else if policy.sandbox.network == NetMode::Host {
        Some("--net host keeps every socket".to_string())
    } else if ns_missing.is_none() {
        Some("not used: the namespaces hold it".to_string())
    } else {
        None
    };
    let no_sockets = || {
        layer(
            "the seccomp filter refusing every socket (Landlock-only mode)",
            no_sockets_missing.clone(),
            "--net none or --net proxy",
        )
    };
    let mut out = vec![
        PromiseCheck {
            promise: "deny inside the roots",
            layers: vec![
                layer("mount masks in a mount namespace", masks_missing.clone(), ns_remedy.clone()),
                layer(
                    "Landlock rules on each allowed entry beside a denied path (Landlock-only mode)",
                    enumeration_missing,
                    "a kernel with Landlock (lsm= includes landlock)",
                ),
            ],
            without: "the deny-rule masks: files matching a deny rule inside the roots are readable".into(),
        },
        PromiseCheck {
            promise: "nothing written outside the grants",
            layers: vec![
                layer("the fresh-root mount view", ns_missing.clone(), ns_remedy.clone()),
                landlock(1, "filesystem rules"),
            ],
            without:
                "the private filesystem view and Landlock: the program can write wherever the caller can"
                    .into(),
        },
    ];
    if reads::restricted(policy) {
        out.push(PromiseCheck {
            promise: READ_PROMISE,
            layers: vec![landlock(1, "filesystem rules")],
            without: READ_WITHOUT.into(),
        });
    }
    match policy.sandbox.network {
        NetMode::None => out.push(PromiseCheck {
            promise: "network cut",
            layers: vec![
                layer("a network namespace", ns_missing.clone(), ns_remedy.clone()),
                layer(
                    "the seccomp socket filter",
                    (!kernel.seccomp).then(|| "seccomp is not available".to_string()),
                    "a kernel with seccomp filters",
                ),
            ],
            without: "network isolation: the program reaches the host's network".into(),
        }),
        NetMode::Proxy => out.push(PromiseCheck {
            promise: "network only through the proxy",
            layers: vec![layer(
                "a network namespace whose only way out is the proxy",
                ns_missing.clone(),
                ns_remedy.clone(),
            )],
            without: "network access through the proxy: the program gets no network at all".into(),
        }),
        NetMode::Host => {}
    }
    out.push(PromiseCheck {
        promise: "no signals to host processes",
        layers: vec![
            layer("a PID namespace", ns_missing.clone(), ns_remedy.clone()),
            landlock(SCOPES_ABI, "signal scope"),
        ],
        without: "signal isolation: the program can signal the caller's other processes".into(),
    });
    out.push(PromiseCheck {
        promise: "host processes' memory and environment out of reach",
        layers: vec![
            layer(
                "a fresh /proc of the call's PID namespace",
                proc_missing,
                if kernel.refuses(Layer::FreshProc).is_some() && ns_missing.is_none() {
                    "an unmasked /proc (a container: `--security-opt systempaths=unconfined`), or root with CAP_SYS_ADMIN".to_string()
                } else {
                    ns_remedy.clone()
                },
            ),
            layer(
                "Landlock's ptrace rule (/proc/PID/environ, mem, fd of processes outside the call)",
                landlock_any.clone(),
                "a kernel with Landlock (lsm= includes landlock)",
            ),
        ],
        without: "the host's /proc (read-only): the program sees the caller's other processes, and the environment of those it may read".into(),
    });
    let (net_ns_missing, net_ns_remedy) = match policy.sandbox.network {
        NetMode::Host => (
            Some("--net host shares the host's network namespace".to_string()),
            "--net none or --net proxy".to_string(),
        ),
        _ => (ns_missing.clone(), ns_remedy.clone()),
    };
    out.push(PromiseCheck {
        promise: "no abstract sockets of the host",
        layers: vec![
            layer("a network namespace", net_ns_missing, net_ns_remedy),
            landlock(SCOPES_ABI, "abstract-socket scope"),
            no_sockets(),
        ],
        without: "abstract Unix sockets of the host (D-Bus, X11, containerd…) are reachable".into(),
    });
    out.push(PromiseCheck {
        promise: "no named Unix sockets of the host",
        layers: vec![
            layer(
                "the fresh-root mount view (private /tmp and /run, nothing but the grants)",
                ns_missing.clone(),
                ns_remedy.clone(),
            ),
            no_sockets(),
        ],
        without: "named Unix sockets the caller can reach (/run/docker.sock, D-Bus, an ssh agent in /tmp) are reachable".into(),
    });
    let limits = policy.sandbox.limits;
    let controller = |name: &str, writable: bool| {
        layer(
            format!("a cgroup {name} controller"),
            (!writable).then(|| format!("no cgroup with the {name} controller is writable here")),
            cg_remedy.clone(),
        )
    };
    let mut processes = vec![controller("pids", cg.can_limit_processes())];
    if !kernel.root {
        processes.push(layer("RLIMIT_NPROC", None, ""));
    }
    out.push(PromiseCheck {
        promise: "bounded processes",
        layers: processes,
        without: "the process limit: root ignores RLIMIT_NPROC, so a fork bomb is not bounded".into(),
    });
    if limits.memory_bytes.is_some() {
        out.push(PromiseCheck {
            promise: "bounded memory",
            layers: vec![controller("memory", cg.can_limit_memory())],
            without: "the memory limit (Sandbox.Limits.MemoryBytes)".into(),
        });
    }
    if limits.cpu_millis.is_some() {
        out.push(PromiseCheck {
            promise: "bounded CPU",
            layers: vec![controller("cpu", cg.can_limit_cpu())],
            without: "the CPU limit (Sandbox.Limits.Cpu)".into(),
        });
    }
    out.push(PromiseCheck {
        promise: "the system-call filter",
        layers: vec![layer(
            "seccomp",
            (!kernel.seccomp).then(|| "seccomp is not available".to_string()),
            "a kernel with seccomp filters",
        )],
        without: "the system-call filter: io_uring, ptrace, keyrings, mount and namespace calls, TIOCSTI"
            .into(),
    });
    out
}

/// The promises of `policy` that no layer holds on `kernel`.
pub fn missing_features(policy: &Policy, kernel: &KernelSupport) -> Vec<Missing> {
    promises(policy, kernel).iter().filter_map(PromiseCheck::as_missing).collect()
}

/// Behaviour that differs on this machine although every promise holds.
fn notes(kernel: &KernelSupport, landlock: bool, yolo: bool) -> Vec<String> {
    let mut out = Vec::new();
    if !landlock && !yolo {
        let pinned = kernel
            .landlock_pin
            .map(|p| format!(", pinned to {p} by HULLWARD_LANDLOCK_ABI"))
            .unwrap_or_default();
        out.push(format!(
            "Landlock is not used (ABI {} on this kernel{pinned}): the other layers hold the promises without its second line",
            kernel.landlock_kernel_abi
        ));
    }
    if landlock && kernel.landlock_abi == 1 {
        out.push("Landlock ABI 1: renaming or linking a file into another directory fails with EXDEV (ABI 2 lifts this)".into());
    }
    out
}

/// What Landlock-only mode (no namespaces) does differently, measured by
/// tests/sandbox_landlock_only.rs and listed so that nobody mistakes it for the namespaced view.
fn landlock_only_notes(
    kernel: &KernelSupport,
    split_dirs: &[PathBuf],
    writable_host: &[PathBuf],
    seccomp: Option<SocketPolicy>,
    snapshot: &Snapshot,
) -> Vec<String> {
    let cause = kernel.refuses(Layer::Namespaces).map(|r| r.cause.as_str()).unwrap_or("");
    let mut out = vec![format!(
        "Landlock-only mode: no namespaces here ({cause}); Landlock, seccomp and no_new_privs hold the promises"
    )];
    if !split_dirs.is_empty() {
        let shown: Vec<String> = split_dirs.iter().take(4).map(|d| format!("'{}'", d.display())).collect();
        let more = split_dirs.len().saturating_sub(4);
        out.push(format!(
            "no file can be created, removed or renamed in a directory that holds a denied path or leads to one (Landlock cannot grant that beside the denied entry; its other entries and every other directory work): {}{}",
            shown.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        ));
    }
    out.push("host processes are listed in /proc with their command lines; their memory, environment and descriptors are refused (Landlock)".into());
    let shared: Vec<String> = writable_host
        .iter()
        .filter(|w| PRIVATE_TMPFS.iter().any(|(d, _)| w.as_path() == Path::new(d)))
        .map(|w| w.display().to_string())
        .collect();
    out.push(format!(
        "no private /tmp, /run or HOME: {}",
        if shared.is_empty() {
            "the host's are not granted".to_string()
        } else {
            format!(
                "{} (Sandbox.Writable) is the host's, shared with the caller's other programs",
                shared.join(", ")
            )
        }
    ));
    if seccomp == Some(SocketPolicy::NoSockets) {
        out.push("socket() is refused for every family (socketpair works): programs that talk over a named or abstract Unix socket, or a local TCP port, fail".into());
    }
    out.push("the mode, times and extended attributes of the caller's files outside the grants can still be changed (Landlock has no right for them)".into());
    if !snapshot.read_only.is_empty() || !snapshot.pins.is_empty() {
        out.push("git metadata and Sandbox.WriteProtect entries are not read-only during the call: what changes is quarantined after it".into());
    }
    out
}

/// The host directories the program may write outside the roots (with a mount namespace, not
/// the ones that become private tmpfs).
fn writable_host(policy: &Policy, mount_ns: bool) -> Vec<PathBuf> {
    let roots = policy.roots();
    let private: Vec<PathBuf> = PRIVATE_TMPFS.iter().map(|(d, _)| PathBuf::from(d)).collect();
    policy
        .sandbox
        .writable
        .iter()
        .filter(|w| !mount_ns || !private.contains(w))
        .filter(|w| !roots.iter().any(|r| w.starts_with(r)))
        .cloned()
        .collect()
}

/// What the walks of a sandboxed call cover: the roots, the writable host directories and the
/// read-only directories (the same set `hullward filter` reads its protected files from).
pub fn walked_dirs(policy: &Policy) -> Vec<PathBuf> {
    [policy.roots(), writable_host(policy, true), ReadOnlyTrees::of(policy).dirs].concat()
}

/// Builds the plan for `call` under `policy` on this kernel. Strict mode decides from the facts
/// (the real child reports anything the facts did not foresee as a refusal, exit 3); with
/// `--no-strict`, and in strict mode where the facts cannot tell whether namespaces work
/// ([`KernelSupport::namespaces_uncertain`]), the plan is first tried by a probe child
/// ([`super::spawn::probe`]) and every layer the machine refuses is replaced (Landlock-only mode
/// for the namespaces) — in strict mode only while every promise still has a layer, with
/// `--no-strict` dropped and reported — until the probe passes.
pub fn build(policy: &Policy, call: &Call, kernel: &KernelSupport) -> Result<SandboxPlan, PlanError> {
    let mut plan = build_once(policy, call, kernel)?;
    if plan.yolo || (policy.sandbox.strict && !kernel.namespaces_uncertain()) {
        return Ok(plan);
    }
    let mut kernel = kernel.clone();
    for _ in 0..3 {
        match super::spawn::probe(&plan) {
            Ok(()) => return Ok(plan),
            Err(refusal) => {
                if kernel.refuses(refusal.layer).is_some() {
                    break;
                }
                kernel.refuse(refusal.layer, refusal.cause);
                plan = build_once(policy, call, &kernel)?;
            }
        }
    }
    Ok(plan)
}

fn build_once(policy: &Policy, call: &Call, kernel: &KernelSupport) -> Result<SandboxPlan, PlanError> {
    let first = call.argv.first().ok_or(PlanError::NoProgram)?;
    let yolo = policy.session.yolo;
    let checks = if yolo { Vec::new() } else { promises(policy, kernel) };
    let mut missing: Vec<Missing> = checks.iter().filter_map(PromiseCheck::as_missing).collect();
    refuse_if_strict(policy, &missing)?;
    let layers = Layers::of(policy, kernel);
    let home = layers.mount_ns.then(|| child_home(policy));
    let mut env = child_env(policy, call, layers.net, home.as_ref());
    let path_var = env.vars.iter().find(|(k, _)| k == "PATH").map(|(_, v)| v.as_str());
    let program =
        resolve_program(first, &call.cwd, path_var).ok_or_else(|| PlanError::NotFound(first.clone()))?;

    let roots = policy.roots();
    let writable_host = writable_host(policy, layers.mount_ns);
    let cwd = working_dir(policy, call, &roots);
    let scanned: Vec<PathBuf> =
        if yolo { Vec::new() } else { [roots.clone(), writable_host.clone()].concat() };
    let seen = Seen::for_plan();
    let walked = walk(policy, &scanned, layers.mount_ns, &seen, &mut missing)?;

    // Write globs and the change envelope: the roots become read-only with the granted places
    // read-write on top.
    let write_grants = (!yolo && !policy.sandbox.read_only && grants::restricted(policy))
        .then(|| grants::compute(policy, &roots, &walked.snapshot));
    let read_grants =
        (!yolo && reads::restricted(policy)).then(|| reads::compute(policy, &roots, &walked.snapshot));
    let places = Places::of(policy, &roots, &writable_host, write_grants.as_ref(), home, layers.net, &seen);

    let view =
        layers.mount_ns.then(|| view_spec(policy, call, kernel, &places, &walked, &seen, layers.use_masks));
    let mounts = view.as_ref().map(view::build).transpose()?;
    if view.as_ref().is_some_and(|v| !v.stand_ins.is_empty()) {
        view::stand_in_git_config(&mut env.vars);
    }

    let mut landlock = (!yolo && kernel.landlock_abi > 0 && kernel.refuses(Layer::Landlock).is_none())
        .then(|| landlock_plan(policy, call, kernel, &places, read_grants.as_ref(), layers));
    let split_dirs = match landlock.as_mut().filter(|_| !layers.use_masks) {
        Some(l) => split_around_masks(l, &walked.snapshot)?,
        None => Vec::new(),
    };
    if let (Some(_), Some(l)) = (&read_grants, &landlock) {
        if let Some(m) = reads_shadowed(l, &places.roots) {
            refuse_if_strict(policy, std::slice::from_ref(&m))?;
            missing.push(m);
        }
    }

    let seccomp = (!yolo && kernel.seccomp).then_some(socket_policy(policy.sandbox.network, layers.net));
    let mut notes = notes(kernel, landlock.is_some(), yolo);
    if !yolo && !layers.mount_ns {
        notes.extend(landlock_only_notes(kernel, &split_dirs, &writable_host, seccomp, &walked.snapshot));
    }
    let limits = policy.sandbox.limits;

    Ok(SandboxPlan {
        program,
        argv: call.argv.clone(),
        cwd,
        env,
        net: layers.net,
        mount_ns: layers.mount_ns,
        user_ns: layers.mount_ns && kernel.needs_userns(),
        pid_ns: layers.mount_ns,
        view,
        mounts,
        write_grants,
        read_grants,
        scanned,
        snapshot: walked.snapshot,
        landlock,
        seccomp,
        drop_caps: !yolo,
        rlimits: if yolo { Vec::new() } else { rlimits(kernel, &limits) },
        processes: (!yolo).then_some(limits.processes),
        memory: if yolo { None } else { limits.memory_bytes },
        timeout: policy.sandbox.timeout,
        output_cap: limits.output_bytes,
        dropped: missing,
        promises: checks,
        notes,
        lock_privileges: (layers.mount_ns && kernel.needs_userns()) || kernel.setpcap,
        cpu_millis: if yolo { None } else { limits.cpu_millis },
        yolo,
        kernel: kernel.clone(),
        quarantine_dir: policy.session.state_dir.join("quarantine"),
        seen: seen.identities(),
    })
}

/// In strict mode, a promise this machine cannot keep refuses the call.
fn refuse_if_strict(policy: &Policy, missing: &[Missing]) -> Result<(), PlanError> {
    if policy.sandbox.strict && !missing.is_empty() {
        return Err(PlanError::StrictRefused(missing.to_vec()));
    }
    Ok(())
}

/// Which of the kernel's layers a call gets ([`Layers::of`]).
#[derive(Debug, Clone, Copy)]
struct Layers {
    mount_ns: bool,
    /// Deny rules as masks in the child's mount namespace (else Landlock rules around them).
    use_masks: bool,
    net: NetPlan,
}

impl Layers {
    fn of(policy: &Policy, kernel: &KernelSupport) -> Layers {
        let mount_ns = !policy.session.yolo && kernel.refuses(Layer::Namespaces).is_none();
        let net = match (mount_ns, policy.sandbox.network) {
            (false, _) | (_, NetMode::Host) => NetPlan::Host,
            (true, NetMode::None) => NetPlan::Isolated,
            (true, NetMode::Proxy) => NetPlan::Proxy { port: super::egress::PROXY_PORT },
        };
        Layers { mount_ns, use_masks: mount_ns && kernel.refuses(Layer::Masks).is_none(), net }
    }
}

/// The child's environment: the caller's as it is with `--yolo`, else the policy's scrubbed one
/// with the proxy's variables and the child's `HOME`.
fn child_env(policy: &Policy, call: &Call, net: NetPlan, home: Option<&Home>) -> ChildEnv {
    if policy.session.yolo {
        return ChildEnv {
            vars: call.env.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            ..Default::default()
        };
    }
    let mut set: Vec<(String, String)> = match net {
        NetPlan::Proxy { port } => super::egress::child_env(port),
        _ => Vec::new(),
    };
    set.extend(home.iter().map(|h| ("HOME".to_string(), h.path.display().to_string())));
    env::build(&policy.sandbox.env, &policy.sandbox.credentials, &call.env, &set)
}

/// The call's working directory, or the root when the child cannot see it.
fn working_dir(policy: &Policy, call: &Call, roots: &[PathBuf]) -> PathBuf {
    let sandbox = &policy.sandbox;
    let visible = roots
        .iter()
        .chain(&sandbox.writable)
        .chain(&sandbox.system)
        .chain(&sandbox.read_only_dirs)
        .any(|r| call.cwd.starts_with(r));
    if visible {
        call.cwd.clone()
    } else {
        policy.root.clone()
    }
}

/// What [`walk`] found: the snapshot with every mask, and the read-only trees as seen.
struct Walked {
    snapshot: Snapshot,
    read_only_trees: ReadOnlyTrees,
}

/// The deny walk of `scanned`, then the masks of the read-only trees and of other names of the
/// protected files (hard links); what could not be searched or resolved joins `missing`, and
/// refuses the call in strict mode.
fn walk(
    policy: &Policy,
    scanned: &[PathBuf],
    mount_ns: bool,
    seen: &Seen,
    missing: &mut Vec<Missing>,
) -> Result<Walked, PlanError> {
    let mut snapshot = masks::scan_policy(policy, scanned)?;
    if policy.session.yolo {
        return Ok(Walked { snapshot, read_only_trees: ReadOnlyTrees::default() });
    }
    let read_only_trees = ReadOnlyTrees::as_seen(policy, seen);
    add_read_only_masks(policy, &read_only_trees, &mut snapshot)?;
    let trees = [scanned, &read_only_trees.dirs].concat();
    match hardlinks::other_names(&snapshot, &trees, &masks::WalkLimits::default()) {
        Ok(names) => hardlinks::add_masks(&mut snapshot, &names),
        Err(e) => missing.push(unsearched_links(&e)),
    }
    missing.extend(unprotected_policy_files(policy, scanned, mount_ns, &snapshot));
    missing.extend(snapshot.link_loops.iter().map(unresolvable_deny));
    refuse_if_strict(policy, missing)?;
    Ok(Walked { snapshot, read_only_trees })
}

/// Where the child reads, writes, and finds its devices and generated files: what both the view
/// and the Landlock rules are made from ([`Places::of`]).
struct Places {
    roots: Vec<PathBuf>,
    read_write: Vec<PathBuf>,
    read_only: Vec<PathBuf>,
    host_files: etc::HostFiles,
    view_files: Vec<(PathBuf, Vec<u8>)>,
    devices: Vec<PathBuf>,
    home: Option<Home>,
}

impl Places {
    fn of(
        policy: &Policy,
        roots: &[PathBuf],
        writable_host: &[PathBuf],
        write_grants: Option<&WriteGrants>,
        home: Option<Home>,
        net: NetPlan,
        seen: &Seen,
    ) -> Places {
        let (read_write, read_only) = match (write_grants, policy.sandbox.read_only) {
            (_, true) => (writable_host.to_vec(), roots.to_vec()),
            (Some(g), false) => ([writable_host, &g.dirs, &g.files].concat(), roots.to_vec()),
            (None, false) => ([roots, writable_host].concat(), Vec::new()),
        };
        Places {
            roots: roots.to_vec(),
            read_write,
            read_only,
            host_files: etc::host_files(net == NetPlan::Host),
            view_files: [identity_files(), etc::generated(net == NetPlan::Host)].concat(),
            devices: DEVICES.iter().map(PathBuf::from).filter(|p| seen.exists(p)).collect(),
            home,
        }
    }
}

/// The child's new root: the system and read-only trees, the places it may write, its devices,
/// files, private home and `/proc`, and the walk's masks, stand-ins, binds and pins.
fn view_spec(
    policy: &Policy,
    call: &Call,
    kernel: &KernelSupport,
    places: &Places,
    walked: &Walked,
    seen: &Seen,
    use_masks: bool,
) -> ViewSpec {
    let (snapshot, read_only_trees) = (&walked.snapshot, &walked.read_only_trees);
    let source = |p: &PathBuf| Source { path: p.clone(), is_dir: read_only_trees.is_dir(p, seen) };
    ViewSpec {
        system: policy.sandbox.system.iter().chain(&places.host_files.paths).map(source).collect(),
        links: [policy.sandbox.system_links.clone(), places.host_files.links.clone()].concat(),
        read_write: places.read_write.clone(),
        read_only: places.read_only.clone(),
        read_only_dirs: policy.sandbox.read_only_dirs.iter().map(source).collect(),
        home: places.home.as_ref().filter(|h| h.private).map(|h| h.path.clone()),
        devices: places.devices.clone(),
        dev_pts: call.terminal,
        new_proc: kernel.refuses(Layer::FreshProc).is_none(),
        tmpfs_size: policy.sandbox.limits.memory_bytes.map_or_else(|| "50%".to_string(), |m| m.to_string()),
        files: places.view_files.clone(),
        masks: if use_masks { snapshot.masks.clone() } else { Vec::new() },
        stand_ins: if use_masks { snapshot.stand_in_shapes() } else { Default::default() },
        read_only_binds: snapshot.read_only.clone(),
        pins: snapshot.pins.clone(),
        identities: snapshot.identities.clone(),
    }
}

/// The Landlock rules: the supervisor's (applied before the child's new root exists: host paths)
/// and, in a mount namespace, the child's own on its new root; TCP narrowed to the proxy's port.
fn landlock_plan(
    policy: &Policy,
    call: &Call,
    kernel: &KernelSupport,
    places: &Places,
    read_grants: Option<&ReadGrants>,
    layers: Layers,
) -> LandlockPlan {
    let sandbox = &policy.sandbox;
    let rule = |grant: Grant| move |p: &PathBuf| PathRule { path: p.clone(), grant };
    let mut rules: Vec<PathRule> = sandbox
        .system
        .iter()
        .chain(&places.host_files.paths)
        .chain(&sandbox.read_only_dirs)
        .map(rule(Grant::ReadExec))
        .collect();
    if !layers.mount_ns {
        rules.push(PathRule { path: "/proc".into(), grant: Grant::Read });
    }
    rules.extend(places.devices.iter().map(rule(Grant::Device)));
    rules.extend(places.read_write.iter().map(rule(Grant::ReadWrite)));
    rules.extend(places.read_only.iter().map(rule(Grant::ReadExec)));
    if let Some(reads) = read_grants {
        reads.apply(&mut rules, &places.roots);
    }
    let mut child_rules = Vec::new();
    if layers.mount_ns {
        child_rules.push(PathRule { path: "/".into(), grant: Grant::List });
        child_rules.push(PathRule { path: "/proc".into(), grant: Grant::Read });
        for (file, _) in &places.view_files {
            if !sandbox.system.iter().any(|s| file.starts_with(s)) {
                child_rules.push(PathRule { path: file.clone(), grant: Grant::ReadFile });
            }
        }
        for dir in ["/tmp", "/run", "/dev/shm"] {
            child_rules.push(PathRule { path: dir.into(), grant: Grant::ReadWrite });
        }
        if let Some(h) = places.home.as_ref().filter(|h| h.private) {
            child_rules.push(PathRule { path: h.path.clone(), grant: Grant::ReadWrite });
        }
        if call.terminal {
            child_rules.push(PathRule { path: "/dev/pts".into(), grant: Grant::Device });
        }
    }
    LandlockPlan {
        abi: kernel.landlock_abi,
        rules,
        entries: Vec::new(),
        child_rules,
        tcp_connect: match layers.net {
            NetPlan::Proxy { port } => vec![port],
            _ => Vec::new(),
        },
        // In a namespace of the call's own, only the proxy mode narrows TCP; with nothing but
        // the private loopback (`--net none`) the program binds and connects freely.
        tcp: matches!(layers.net, NetPlan::Proxy { .. }),
    }
}

/// Without masks, the rules are split around the denied paths (each allowed neighbour gets a
/// rule of its own); returns the directories split.
fn split_around_masks(landlock: &mut LandlockPlan, snapshot: &Snapshot) -> Result<Vec<PathBuf>, PlanError> {
    let denied: Vec<PathBuf> = snapshot.masks.iter().map(|m| m.path.clone()).collect();
    let split = enumerate::split(&landlock.rules, &denied)?;
    (landlock.rules, landlock.entries) = (split.rules, split.entries);
    Ok(split.split_dirs)
}

/// The sockets the seccomp filter lets the child create.
fn socket_policy(mode: NetMode, net: NetPlan) -> SocketPolicy {
    match (mode, net) {
        (_, NetPlan::Proxy { .. }) => SocketPolicy::UnixAndTcp,
        (NetMode::Host, _) => SocketPolicy::Any,
        (_, NetPlan::Isolated) => SocketPolicy::UnixAndLoopback,
        _ => SocketPolicy::NoSockets,
    }
}

/// Open files and core size for every caller, processes for a caller other than root, and the
/// per-user counts at half of the caller's.
fn rlimits(kernel: &KernelSupport, limits: &crate::policy::Limits) -> Vec<(u32, u64, u64)> {
    let mut out =
        vec![(sys::rlimit::NOFILE, limits.open_files, limits.open_files), (sys::rlimit::CORE, 0, 0)];
    if !kernel.root {
        out.push((sys::rlimit::NPROC, limits.processes, limits.processes));
    }
    out.extend(shared_count_rlimits());
    out
}

/// The rlimits whose counts the kernel keeps per user, not per process — queued signals (and
/// POSIX timers), POSIX message-queue bytes — at half of the caller's: the child's objects count
/// with every other process of the same user (root's child: every root process of the host), and
/// the kernel checks that total against the limit of the process that allocates, so the caller's
/// other processes keep the other half.
fn shared_count_rlimits() -> Vec<(u32, u64, u64)> {
    [sys::rlimit::SIGPENDING, sys::rlimit::MSGQUEUE]
        .into_iter()
        .filter_map(|r| sys::soft_rlimit(r).map(|soft| (r, soft / 2, soft / 2)))
        .collect()
}

/// The policy files the program could change although the view should protect them (see
/// `sandbox::protect`), as promises no layer holds: strict refuses them, `--no-strict` reports them.
fn unprotected_policy_files(
    policy: &Policy,
    scanned: &[PathBuf],
    mount_ns: bool,
    snapshot: &Snapshot,
) -> Vec<Missing> {
    if policy.sandbox.read_only {
        return Vec::new();
    }
    let none = Snapshot::default();
    let applied = if mount_ns { snapshot } else { &none };
    protect::unprotected_policy_files(&policy.files, scanned, applied)
        .into_iter()
        .map(|u| Missing {
            promise: "the policy files cannot be changed by the program".into(),
            feature: format!("protection of '{}': {}", u.path.display(), u.reason),
            consequence: format!(
                "the program can change '{}', the policy of the next call",
                u.path.display()
            ),
            remedy: "keep the configuration outside the roots, or as a file of its own (one name, one link)"
                .into(),
        })
        .collect()
}

/// A deny path that runs into a symlink loop, as a promise no layer holds (see
/// `masks::LinkLoop`).
/// The promise of the `Read` globs, and what running without it means.
const READ_PROMISE: &str = "reads inside the roots only where the Read globs allow";
const READ_WITHOUT: &str =
    "the Read globs for the program: it reads every file in the roots (the file tools still check them)";

/// The Read promise has no layer when a root lies inside a tree the program may read whole
/// ([`reads::shadowing_tree`]).
fn reads_shadowed(landlock: &LandlockPlan, roots: &[PathBuf]) -> Option<Missing> {
    let (root, tree) = reads::shadowing_tree(landlock.rules.iter().chain(&landlock.child_rules), roots)?;
    Some(Missing {
        promise: READ_PROMISE.into(),
        feature: format!(
            "Landlock rules on the root '{}' (it lies inside '{}', which the program may read as a whole)",
            root.display(),
            tree.display()
        ),
        consequence: READ_WITHOUT.into(),
        remedy: format!("put the root outside '{}', or leave the Read globs out", tree.display()),
    })
}

fn unresolvable_deny(l: &masks::LinkLoop) -> Missing {
    Missing {
        promise: "deny inside the roots".into(),
        feature: format!("a mask for '{}' (deny rule '{}'): {}", l.path.display(), l.pattern, l.reason),
        consequence: format!("whatever '{}' names is not masked", l.path.display()),
        remedy: "remove the symlink loop, or spell the deny rule with the real path".into(),
    }
}

fn unsearched_links(e: &hardlinks::SearchError) -> Missing {
    Missing {
        promise: "deny inside the roots".into(),
        feature: format!("masks for every name of '{}': {e}", e.file.display()),
        consequence: format!("another hard link of '{}' may show its content", e.file.display()),
        remedy: format!(
            "remove the other hard links of '{}' (`find {} -samefile {}` lists them)",
            e.file.display(),
            e.tree.display(),
            e.file.display()
        ),
    }
}

/// The deny masks inside the read-only directories (`--ro`, `ReadOnlyDirs`, and the `System`
/// entries of `masks::walked_system`): their directories
/// are walked like the roots, and a read-only file is masked when a deny rule names it. Only the
/// masks join the call's snapshot: nothing there can change during the call, so the walk after
/// the call (which looks for what the call wrote) covers the writable trees alone.
fn add_read_only_masks(
    policy: &Policy,
    trees: &ReadOnlyTrees,
    snapshot: &mut Snapshot,
) -> Result<(), PlanError> {
    let found =
        if trees.dirs.is_empty() { Snapshot::default() } else { masks::scan_policy(policy, &trees.dirs)? };
    // The bases once for all the files, rather than stat'ing every directory again for each.
    let bases = crate::guard::path::deny_bases_in(policy, trees);
    let denied_files: Vec<Mask> = trees
        .others
        .iter()
        .filter_map(|f| {
            let rule = crate::guard::path::deny_match_in(policy, &bases, f)?;
            Some(Mask {
                path: f.clone(),
                kind: MaskKind::File,
                pattern: rule.pattern.clone(),
                via_symlink: None,
            })
        })
        .collect();
    // Their denied files' values are masked in the output like the roots' (a list for secret
    // discovery only: nothing there is compared after the call).
    let secret_files: Vec<PathBuf> = found
        .secret_files()
        .map(|(f, _)| f)
        .chain(denied_files.iter().map(|m| m.path.as_path()))
        .map(Path::to_path_buf)
        .collect();
    for mask in found.masks.into_iter().chain(denied_files) {
        if !snapshot.masks.iter().any(|m| mask.path.starts_with(&m.path)) {
            snapshot.masks.push(mask);
        }
    }
    snapshot.covered_files.extend(secret_files);
    snapshot.bounded.extend(found.bounded);
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
    /// Whether `other` asks for exactly the sandbox this plan builds — every step of the child:
    /// namespaces and network, the view's mount ops (with the identity of each entry they cover),
    /// Landlock, seccomp, capabilities, resource and cgroup limits — whatever its program,
    /// arguments, environment and working directory. A sandbox prepared for this plan
    /// (`spawn::prepare`) may then run `other`'s program, once [`SandboxPlan::held_paths`] are
    /// still the same inodes.
    pub fn same_sandbox(&self, other: &SandboxPlan) -> bool {
        let layers = |p: &SandboxPlan| (p.net, p.mount_ns, p.user_ns, p.pid_ns, p.yolo, p.kernel.cap_last);
        let privileges = |p: &SandboxPlan| (p.drop_caps, p.lock_privileges, p.cgroup_limits());
        layers(self) == layers(other)
            && self.mounts == other.mounts
            && self.landlock == other.landlock
            && self.seccomp == other.seccomp
            && self.rlimits == other.rlimits
            && privileges(self) == privileges(other)
    }

    /// The host paths the built sandbox holds by inode, not by name: the sources the view copies
    /// and the paths of the Landlock rules the parent adds. A sandbox built earlier shows what
    /// was at these paths then.
    pub fn held_paths(&self) -> impl Iterator<Item = &Path> {
        let sources = self.mounts.iter().flat_map(|v| &v.ops).filter_map(|op| match op {
            MountOp::Clone { src, .. } | MountOp::Bind { src, .. } => {
                Some(Path::new(std::ffi::OsStr::from_bytes(src.as_bytes())))
            }
            _ => None,
        });
        let rules =
            self.landlock.iter().flat_map(|l| l.rules.iter().chain(&l.entries)).map(|r| r.path.as_path());
        sources.chain(rules)
    }

    /// The limits the call's cgroup carries.
    pub fn cgroup_limits(&self) -> super::cgroup::CgroupLimits {
        super::cgroup::CgroupLimits {
            processes: self.processes,
            memory: self.memory,
            cpu_millis: self.cpu_millis,
        }
    }

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
                "rules": l.rules.iter().chain(&l.entries).chain(&l.child_rules).map(|r| json!({
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
                NetPlan::Host if self.seccomp == Some(SocketPolicy::NoSockets) => {
                    json!({"mode": "none", "namespace": "the host's (none could be had): seccomp refuses every socket"})
                }
                NetPlan::Host => json!({"mode": "host", "namespace": "host"}),
            },
            "mode": if self.yolo { "none" } else if self.mount_ns { "namespaces" } else { "landlock-only" },
            "counters": super::spawn::counters_note(self),
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
            "read_grants": self.read_grants.as_ref().map(|g| json!({
                "places": g.places.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
                "notes": g.notes,
            })),
            "masks": masks,
            "pinned": self.snapshot.pins.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "write_protected": self.snapshot.read_only.iter().map(|m| json!({
                "path": m.path.display().to_string(),
                "rule": m.pattern,
            })).collect::<Vec<_>>(),
            "quarantine": (!self.yolo).then(|| json!({
                "dir": self.quarantine_dir.display().to_string(),
                "rule": "protected paths (deny matches, git metadata, policy files, WriteProtect entries) created, changed or moved away",
                "watched": self.snapshot.stamps.len(),
            })),
            "symlinks_not_masked": self.snapshot.skipped_links.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
            "entries_walked": self.snapshot.entries_seen,
            "masked_whole": self.snapshot.bounded.iter().map(|b| json!({"path": b.path.display().to_string(), "reason": b.reason})).collect::<Vec<_>>(),
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
                "cpu": self.cpu_millis.map(|m| m as f64 / 1000.0),
                "kill": if self.kernel.cgroups.can_kill_tree() { "cgroup.kill" } else { "subreaper + /proc walk" },
            },
            "timeout": self.timeout.map(crate::policy::duration::format),
            "output_bytes": self.output_cap,
            "dropped": self.dropped.iter().map(|m| json!({"promise": m.promise, "feature": m.feature, "consequence": m.consequence, "remedy": m.remedy})).collect::<Vec<_>>(),
            "promises": self.promises.iter().map(|p| json!({"promise": p.promise, "held_by": p.held_by()})).collect::<Vec<_>>(),
            "notes": self.notes,
            "yolo": self.yolo,
        })
    }
}

fn rlimit_name(r: u32) -> &'static str {
    match r {
        sys::rlimit::NOFILE => "nofile",
        sys::rlimit::CORE => "core",
        sys::rlimit::NPROC => "nproc",
        sys::rlimit::SIGPENDING => "sigpending",
        sys::rlimit::MSGQUEUE => "msgqueue",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::load::{load, LoadRequest};
    use crate::sandbox::cgroup::CgroupSupport;

    fn policy(net: NetMode) -> Policy {
        let dir = tempfile::tempdir().unwrap();
        let mut p = load(&LoadRequest { cwd: dir.path().to_path_buf(), ..Default::default() }).unwrap();
        p.sandbox.network = net;
        p
    }

    /// Facts of a machine with a delegated cgroup and Landlock at `abi`; `namespaces`: whether
    /// they can be had (a default container's seccomp profile refuses them).
    fn machine(abi: i32, namespaces: bool) -> KernelSupport {
        let mut k = KernelSupport::probe(None);
        (k.landlock_kernel_abi, k.landlock_abi, k.landlock_pin) = (abi, abi, None);
        (k.seccomp, k.root, k.privileged) = (true, true, namespaces);
        k.cgroups = CgroupSupport {
            v2_dir: Some("/sys/fs/cgroup/test".into()),
            v2_controllers: vec!["pids".into(), "memory".into(), "cpu".into()],
            ..Default::default()
        };
        k.refused.clear();
        if !namespaces {
            k.refuse(Layer::Namespaces, "creating the call's namespaces: EPERM".into());
        }
        k
    }

    fn held(checks: &[PromiseCheck], promise: &str) -> Vec<String> {
        let p =
            checks.iter().find(|p| p.promise == promise).unwrap_or_else(|| panic!("{promise}: {checks:?}"));
        p.held_by().into_iter().map(str::to_string).collect()
    }

    fn missing(policy: &Policy, kernel: &KernelSupport) -> Vec<String> {
        missing_features(policy, kernel).into_iter().map(|m| m.promise).collect()
    }

    #[test]
    fn landlock_only_mode_holds_every_promise_of_net_none_with_the_scopes() {
        let (p, k) = (policy(NetMode::None), machine(7, false));
        assert_eq!(missing(&p, &k), Vec::<String>::new());
        let checks = promises(&p, &k);
        let deny = held(&checks, "deny inside the roots");
        assert_eq!(deny.len(), 1, "{deny:?}");
        assert!(deny[0].contains("each allowed entry beside a denied path"), "{deny:?}");
        assert!(held(&checks, "no named Unix sockets of the host")[0].contains("refusing every socket"));
        assert!(held(&checks, "host processes' memory and environment out of reach")[0].contains("ptrace"));
        assert!(held(&checks, "network cut").iter().all(|l| l.contains("seccomp")));
    }

    #[test]
    fn landlock_only_mode_refuses_what_only_a_namespace_would_hold() {
        let none = policy(NetMode::None);
        assert_eq!(missing(&none, &machine(5, false)), ["no signals to host processes"]);
        assert_eq!(
            missing(&none, &machine(0, false)),
            [
                "deny inside the roots",
                "nothing written outside the grants",
                "no signals to host processes",
                "host processes' memory and environment out of reach",
            ]
        );
        assert_eq!(missing(&policy(NetMode::Proxy), &machine(7, false)), ["network only through the proxy"]);
        assert_eq!(
            missing(&policy(NetMode::Host), &machine(7, false)),
            ["no named Unix sockets of the host"]
        );
    }

    #[test]
    fn with_namespaces_the_masks_and_namespaces_hold_and_landlock_only_layers_stay_unused() {
        let (p, k) = (policy(NetMode::None), machine(1, true));
        assert_eq!(missing(&p, &k), Vec::<String>::new());
        let checks = promises(&p, &k);
        assert_eq!(held(&checks, "deny inside the roots"), ["mount masks in a mount namespace"]);
        let sockets = held(&checks, "no named Unix sockets of the host");
        assert_eq!(sockets.len(), 1, "{sockets:?}");
        assert!(sockets[0].contains("fresh-root mount view"), "{sockets:?}");
    }
}
