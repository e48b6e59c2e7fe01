//! The supervisor: runs one call from approval to exit status — the call engine every front end
//! (the CLI's `run`/`sh`, the `serve` daemon) drives.
//!
//! An [`Engine`] holds what is warm for the life of the process: the policy, the kernel's facts
//! and the environment the pass-through variables come from. Each call is a [`CallSpec`] and a
//! [`Front`] (approval, events, output, early stop); [`run`] returns its [`Outcome`].
//!
//! Order of [`run`]: admission (the guard's decision, then the front end's approval) → the
//! [`SandboxPlan`] (strict refusal → exit 3; not found → 127) → quarantine of what an
//! interrupted call left → the call's single-threaded tokio runtime → the egress proxy's
//! namespace (`--net proxy`) → the sandbox made ahead for exactly this plan ([`ready`], a
//! long-lived process), or else the call's cgroup → subreaper → pipes and standard input → `spawn` →
//! the proxy started → the pumps carry stdout/stderr through the filters to the front end while
//! the pidfd, the timeout, the output budget and the front end's stop are watched → the whole
//! tree is killed (`cgroup.kill`) whatever happened → the deny globs are re-checked for protected
//! files created or changed during the call → one `exit` event and one audit record → the
//! quarantine's pending record dropped → the child's mount namespace, held since the spawn, let
//! go (its view unmounted) → a long-lived process prepares the sandbox of this plan again, for
//! the next call. The exit status: the program's own, 124 on timeout, 128+N when killed by
//! signal N, 130 when cancelled.

pub mod approval;
mod events;
pub mod front;
pub mod inject;
pub mod pump;
mod quarantine;
mod ready;
pub mod reap;
mod record;
mod stdin;
pub mod workers;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use crate::audit::Subject;
use crate::error::{code, Error};
use crate::filter::{FileSecrets, FilterStats, OutputFilter, SecretSet};
use crate::guard::{Decision, Verdict};
use crate::policy::Policy;
use crate::proxy::ProxyEvent;
use crate::sandbox::cgroup::CallCgroup;
use crate::sandbox::egress::{self, Egress};
use crate::sandbox::kernel::KernelSupport;
use crate::sandbox::plan::{self, Call, NetPlan, PlanError, SandboxPlan};
use crate::sandbox::spawn::{self, HeldNamespaces, Stdio};
use crate::sandbox::sys;
use crate::workspace::Workspace;
use approval::Approval;
use events::Events;
pub use front::{Front, Stop, StopFuture, Stream};
use pump::PumpEnd;
use quarantine::Quarantine;
use record::Recorder;

/// What stays warm for the life of the process: computed once, shared by every call.
pub struct Engine {
    policy: Policy,
    kernel: KernelSupport,
    env: BTreeMap<String, String>,
    /// The secret values of `env`, found once: a served call's environment is the server's.
    env_secrets: SecretSet,
    /// The next call's sandbox, made ahead (a long-lived process: [`Engine::prepare_ahead`]).
    ready: Option<ready::Ready>,
}

impl Engine {
    /// Probes the kernel and captures this process's environment (the variables that are valid
    /// UTF-8) for `policy`.
    pub fn new(policy: Policy) -> Engine {
        let env = std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect();
        let env_secrets = SecretSet::from_env(&env);
        Engine { policy, kernel: KernelSupport::probe_env(), env, env_secrets, ready: None }
    }

    /// The same kernel facts and environment under another policy (a `skill_run` call that
    /// sees one more read-only directory), without probing again; nothing is prepared ahead.
    pub fn with_policy(&self, policy: Policy) -> Engine {
        Engine {
            policy,
            kernel: self.kernel.clone(),
            env: self.env.clone(),
            env_secrets: self.env_secrets.clone(),
            ready: None,
        }
    }

    /// For a long-lived process: after each call, the sandbox of a call like it is made ahead
    /// and taken by the next call that asks for exactly that sandbox (see [`ready`]).
    /// Not with workspace layers: each call's view has layers of its own.
    pub fn prepare_ahead(&mut self) {
        if self.policy.sandbox.workspace == crate::policy::WorkspaceMode::Direct {
            self.ready = ready::Ready::start(self.kernel.cgroups.clone());
        }
    }

    /// Kills the sandbox made ahead, if any (shutdown).
    pub fn discard_prepared(&self) {
        if let Some(ready) = &self.ready {
            ready.discard();
        }
    }

    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The secret values of a call's environment: found once for the environment captured at
    /// start, which is what a served call runs with.
    fn secrets_of(&self, env: &BTreeMap<String, String>) -> SecretSet {
        if *env == self.env {
            self.env_secrets.clone()
        } else {
            SecretSet::from_env(env)
        }
    }

    /// The environment captured at start (the source of the pass-through variables).
    pub fn env(&self) -> &BTreeMap<String, String> {
        &self.env
    }
}

/// What the child's standard input is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// A pipe fed from this process's own standard input (the CLI).
    Inherit,
    /// An empty pipe: end of file at the first read (the daemon).
    Empty,
}

/// One call to run: its inputs, gathered once by the front end.
#[derive(Debug, Clone)]
pub struct CallSpec {
    pub argv: Vec<OsString>,
    /// The working directory (the plan falls back to the root when the child cannot see it).
    pub cwd: PathBuf,
    /// The source of the pass-through variables.
    pub env: BTreeMap<String, String>,
    /// Give the child a private devpts (when it talks to a terminal).
    pub terminal: bool,
    pub stdin: Input,
    /// How the call is shown in prompts and messages (the shell command, or the argv).
    pub display: String,
    /// What the audit log says the call was.
    pub subject: Subject,
    /// The guard's decision (`sh`, `probe`): recorded, and a denial stops the call; `ask` means
    /// approval. Without one (`run`), approval is needed when HITL is on.
    pub guard: Option<Decision>,
    /// Replaces the policy's timeout for this call.
    pub timeout: Option<Duration>,
}

/// How a call ended, as its `exit` event said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub call_id: String,
    pub code: u8,
    pub reason: &'static str,
    /// `(rule, message)` when the call was denied before it ran.
    pub denied: Option<(String, String)>,
}

/// How the child's life ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Exited(i32),
    Timeout,
    OverBudget,
    Stopped(Stop),
}

/// A call that ends before its program's exit: with an outcome (denied, refused), or because
/// hullward itself failed.
enum Early {
    Ended(Outcome),
    Failed(Error),
}

impl From<Error> for Early {
    fn from(e: Error) -> Early {
        Early::Failed(e)
    }
}

fn internal(what: &'static str) -> impl Fn(std::io::Error) -> Early {
    move |e| Early::Failed(Error::Internal(format!("{what}: {e}")))
}

/// How long killing the tree and draining the pipes may take before hullward gives up waiting.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// The state one call carries through its stages.
struct CallRun<'a> {
    engine: &'a Engine,
    spec: &'a CallSpec,
    front: &'a dyn Front,
    events: &'a Events<'a>,
    call_id: String,
    recorder: Recorder,
}

/// Runs the call and returns how it ended. Every call that returns `Ok` has sent exactly one
/// `exit` event and written its audit record; a failure of hullward itself (`Err`) is recorded
/// with status 125 and no `exit` event (the front end reports the error).
pub fn run(engine: &Engine, spec: &CallSpec, front: &dyn Front) -> Result<Outcome, Error> {
    let events = Events::new(front);
    let call_id = call_name();
    // The environment's secrets now; the protected files' values once the plan's walk has found
    // those files (a denial before that walks for them itself).
    let recorder =
        Recorder::new(&engine.policy, &call_id, spec.subject.clone(), engine.secrets_of(&spec.env), &events);
    let mut call = CallRun { engine, spec, front, events: &events, call_id, recorder };
    let result = call.admit().and_then(|decisions| call.run_admitted(&decisions));
    match result {
        Ok(outcome) | Err(Early::Ended(outcome)) => Ok(outcome),
        Err(Early::Failed(e)) => {
            call.recorder.finish(i32::from(code::INTERNAL), FilterStats::default(), Vec::new(), &events);
            Err(e)
        }
    }
}

impl CallRun<'_> {
    fn policy(&self) -> &Policy {
        &self.engine.policy
    }

    /// The guard's decision and the approval: the decisions to record, or the denial.
    fn admit(&mut self) -> Result<Vec<Decision>, Early> {
        let mut decisions = Vec::new();
        let needed = match &self.spec.guard {
            Some(decision) if decision.verdict == Verdict::Deny => {
                let decision = decision.clone();
                return Err(self.deny(&[decision]));
            }
            Some(decision) => {
                decisions.push(decision.clone());
                decision.verdict == Verdict::Ask
            }
            None => self.policy().session.hitl,
        };
        match self.front.approve(self.policy(), &self.spec.display, needed) {
            Approval::Granted if needed => decisions.push(Decision::allow("approval")),
            Approval::Granted => {}
            Approval::Refused { rule, message } => {
                decisions.push(Decision::deny(rule, message));
                return Err(self.deny(&decisions));
            }
            Approval::Cancelled => {
                for d in &decisions {
                    self.recorder.decision(d, self.events);
                }
                let message = "hullward: cancelled while waiting for approval; nothing ran".to_string();
                return Err(self.refuse(130, "cancelled", message));
            }
        }
        Ok(decisions)
    }

    /// A call denied before it ran: its decisions recorded (the last one is the denial), the
    /// `[DENIED]` text, the final event with the rule, the audit record (exit code 126).
    fn deny(&mut self, decisions: &[Decision]) -> Early {
        self.recorder.set_secrets(SecretSet::discover(self.policy(), &self.spec.env));
        for d in decisions {
            self.recorder.decision(d, self.events);
        }
        let last = decisions.last().map_or(("approval", ""), |d| (d.rule.as_str(), d.message.as_str()));
        let code = code::DENIED_BEFORE_RUN;
        self.events.say(last.1);
        self.events.exit(&self.call_id, i32::from(code), "denied", Some(last));
        self.recorder.finish(i32::from(code), FilterStats::default(), Vec::new(), self.events);
        Early::Ended(Outcome {
            call_id: self.call_id.clone(),
            code,
            reason: "denied",
            denied: Some((last.0.to_string(), last.1.to_string())),
        })
    }

    /// Ends a call that never ran its program: the message, the final event, the audit record.
    fn refuse(&self, code: u8, reason: &'static str, message: String) -> Early {
        self.events.say(&message);
        self.events.exit(&self.call_id, i32::from(code), reason, None);
        self.recorder.finish(i32::from(code), FilterStats::default(), Vec::new(), self.events);
        Early::Ended(Outcome { call_id: self.call_id.clone(), code, reason, denied: None })
    }

    fn run_admitted(&mut self, decisions: &[Decision]) -> Result<Outcome, Early> {
        let quarantine = Quarantine::new(self.policy(), &self.call_id);
        quarantine.recover(self.policy(), &self.recorder, self.events);
        crate::workspace::recover(self.policy(), &|m| self.events.say(m));
        let mut plan = self.plan(decisions)?;
        let workspace = self.workspace(&mut plan)?;
        let workspace_layers = workspace.is_some();
        announce(&plan, self.events);
        quarantine.begin(&plan, self.events);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(internal("tokio runtime"))?;
        let pending = match plan.net {
            NetPlan::Proxy { .. } => {
                Some(egress::Pending::open().map_err(|e| Error::Internal(e.to_string()))?)
            }
            _ => None,
        };
        let (cgroup, mut child) = self.start_child(&plan, workspace_layers, pending.as_ref())?;
        // The child's namespaces outlive it until the exit event is out; with workspace layers
        // (whose mounts must be gone before their changes are read) the view goes with it.
        let mut namespaces = std::mem::take(&mut child.namespaces);
        if workspace.is_some() {
            namespaces.release_view();
        }
        let egress = self.start_egress(pending, &runtime, &child, cgroup.as_ref())?;
        let (end, filtered) = runtime.block_on(supervise(
            &plan,
            child,
            cgroup.as_ref(),
            egress,
            &self.recorder,
            self.events,
            self.front,
        ))?;
        let exit = self.exit_code(&plan, end);
        quarantine.finish(self.policy(), &plan, &self.recorder, self.events);
        if let Some(ws) = workspace {
            ws.finish(self.policy(), &plan.snapshot, &|m| self.events.say(m));
        }
        self.events.exit(&self.call_id, i32::from(exit), end_reason(end), None);
        let dropped = plan.dropped.iter().map(|m| format!("{}: {}", m.feature, m.consequence)).collect();
        self.recorder.finish(i32::from(exit), filtered, dropped, self.events);
        quarantine.done();
        drop(namespaces);
        if let Some(ready) = self.ready(workspace_layers) {
            ready.again(plan);
        }
        Ok(Outcome { call_id: self.call_id.clone(), code: exit, reason: end_reason(end), denied: None })
    }

    /// The call's plan, its secrets and its decisions recorded; strict refusal and a program not
    /// found end the call here.
    fn plan(&mut self, decisions: &[Decision]) -> Result<SandboxPlan, Early> {
        let call = self.call();
        let plan = plan::build(self.policy(), &call, &self.engine.kernel);
        self.recorder.set_secrets(call_secrets(self.policy(), &call.env, plan.as_ref().ok()));
        for d in decisions {
            self.recorder.decision(d, self.events);
        }
        match plan {
            Ok(mut p) => {
                if let Some(t) = self.spec.timeout {
                    p.timeout = Some(t);
                }
                Ok(p)
            }
            Err(e @ PlanError::StrictRefused(_)) => {
                Err(self.refuse(code::STRICT_REFUSED, "strict-refused", format!("hullward: {e}")))
            }
            Err(e @ PlanError::NotFound(_)) => Err(self.refuse(127, "not-found", format!("hullward: {e}"))),
            Err(e) => Err(Early::Failed(Error::Internal(e.to_string()))),
        }
    }

    /// What the plan is made from.
    fn call(&self) -> Call {
        Call {
            argv: self.spec.argv.clone(),
            cwd: self.spec.cwd.clone(),
            env: self.spec.env.clone(),
            terminal: self.spec.terminal,
        }
    }

    /// The sandboxes made ahead, if this call may take one and leave its own to be made again:
    /// a long-lived process's engine, no workspace layers, no terminal, empty standard input.
    fn ready(&self, layered: bool) -> Option<&ready::Ready> {
        let plain = !layered && !self.spec.terminal && self.spec.stdin == Input::Empty;
        self.engine.ready.as_ref().filter(|_| plain)
    }

    /// The call's cgroup and child: the sandbox made ahead when it is exactly this plan's, else
    /// built now.
    fn start_child(
        &self,
        plan: &SandboxPlan,
        layered: bool,
        pending: Option<&egress::Pending>,
    ) -> Result<(Option<CallCgroup>, Child), Early> {
        if let Some(slot) = self.ready(layered).and_then(|r| r.take(plan)) {
            if let Some(started) = self.launch(slot, plan)? {
                return Ok(started);
            }
        }
        let cgroup = self.cgroup(plan)?;
        if !cgroup.as_ref().is_some_and(CallCgroup::has_kill) {
            sys::set_child_subreaper().map_err(internal("PR_SET_CHILD_SUBREAPER"))?;
        }
        let child = self.spawn(plan, cgroup.as_ref(), pending)?;
        Ok((cgroup, child))
    }

    /// Runs the plan's program in the sandbox made ahead; `Ok(None)` when that sandbox ended
    /// before it could (the call then builds its own).
    fn launch(
        &self,
        slot: ready::Slot,
        plan: &SandboxPlan,
    ) -> Result<Option<(Option<CallCgroup>, Child)>, Early> {
        let ready::Slot { prepared, cgroup, out, err, namespaces, .. } = slot;
        let spawned = match prepared.launch(plan) {
            Ok(spawned) => spawned,
            Err(spawn::SpawnError::PreparedGone(e)) => {
                tracing::debug!("{e}");
                return Ok(None);
            }
            Err(e) => return Err(self.refuse(e.exit_code(), "setup-failed", format!("hullward: {e}"))),
        };
        let filter = OutputFilter::new(self.recorder.secrets(), self.policy());
        let child = Child { pidfd: spawned.pidfd, out, err, filter, namespaces, _terminal: None };
        Ok(Some((cgroup, child)))
    }

    /// The call's workspace layers (`--workspace overlay|ephemeral`), mounted into the plan's view.
    fn workspace(&self, plan: &mut SandboxPlan) -> Result<Option<Workspace>, Early> {
        Workspace::prepare(self.policy(), &self.call_id, plan).map_err(|e| {
            let reason =
                if e.exit_code() == code::STRICT_REFUSED { "strict-refused" } else { "setup-failed" };
            self.refuse(e.exit_code(), reason, format!("hullward: {e}"))
        })
    }

    /// The call's cgroup; strict mode as root refuses to run without one.
    fn cgroup(&self, plan: &SandboxPlan) -> Result<Option<CallCgroup>, Early> {
        if plan.yolo {
            return Ok(None);
        }
        match CallCgroup::create(&self.engine.kernel.cgroups, &self.call_id, plan.cgroup_limits()) {
            Ok(cg) => Ok(Some(cg)),
            Err(e) if self.policy().sandbox.strict && self.engine.kernel.root => Err(self.refuse(
                code::STRICT_REFUSED,
                "strict-refused",
                format!("hullward: strict mode refuses to run: the call's cgroup (process limit) cannot be created: {e}"),
            )),
            Err(e) => {
                self.events.say(&format!("hullward: warning: running without the call's cgroup: {e}"));
                Ok(None)
            }
        }
    }

    /// Pipes, standard input and the child; a child that cannot be set up ends the call.
    fn spawn(
        &self,
        plan: &SandboxPlan,
        cgroup: Option<&CallCgroup>,
        pending: Option<&egress::Pending>,
    ) -> Result<Child, Early> {
        let (out_r, out_w) = sys::pipe_cloexec().map_err(internal("pipe"))?;
        let (err_r, err_w) = sys::pipe_cloexec().map_err(internal("pipe"))?;
        let terminal = (self.spec.stdin == Input::Inherit).then(stdin::TerminalModes::save);
        let in_r = match self.spec.stdin {
            Input::Inherit => stdin::feed().map_err(internal("stdin pipe"))?,
            Input::Empty => sys::pipe_cloexec().map_err(internal("stdin pipe"))?.0,
        };
        let stdio = Stdio {
            stdin: Some(in_r.as_raw_fd()),
            stdout: Some(out_w.as_raw_fd()),
            stderr: Some(err_w.as_raw_fd()),
        };
        let spawned = spawn::spawn(plan, stdio, cgroup, pending.map(egress::Pending::child_end))
            .map_err(|e| self.refuse(e.exit_code(), "setup-failed", format!("hullward: {e}")))?;
        drop((in_r, out_w, err_w));
        let namespaces = HeldNamespaces::of(spawned.pid);
        let filter = OutputFilter::new(self.recorder.secrets(), self.policy());
        Ok(Child { pidfd: spawned.pidfd, out: out_r, err: err_r, filter, namespaces, _terminal: terminal })
    }

    /// Starts the egress proxy for a spawned child; if it cannot start, the child is killed.
    fn start_egress(
        &self,
        pending: Option<egress::Pending>,
        runtime: &tokio::runtime::Runtime,
        child: &Child,
        cgroup: Option<&CallCgroup>,
    ) -> Result<Option<Egress>, Early> {
        pending.map(|p| p.start(&self.policy().http, runtime)).transpose().map_err(|e| {
            let _ = sys::pidfd_kill(child.pidfd.as_raw_fd(), libc::SIGKILL);
            let _ = reap::kill_tree(cgroup, KILL_WAIT);
            self.refuse(code::INTERNAL, "setup-failed", format!("hullward: {e}"))
        })
    }

    /// The exit code for how the child ended, with the message that explains it.
    fn exit_code(&self, plan: &SandboxPlan, end: End) -> u8 {
        match end {
            End::Exited(status) => status.clamp(0, 255) as u8,
            End::Timeout => {
                let after = plan.timeout.map(crate::policy::duration::format).unwrap_or_default();
                self.events
                    .say(&format!("hullward: timed out after {after}; the whole process tree was killed"));
                code::TIMEOUT
            }
            End::OverBudget => {
                self.events.say(&format!(
                    "hullward: output exceeded {} bytes (Sandbox.Limits.OutputBytes); the whole process tree was killed",
                    plan.output_cap
                ));
                128 + libc::SIGKILL as u8
            }
            End::Stopped(Stop::Cancelled) => {
                self.events.say("hullward: cancelled; the whole process tree was killed");
                130
            }
            End::Stopped(Stop::Signal(sig)) => {
                self.events.say(&format!(
                    "hullward: interrupted by signal {sig}; the whole process tree was killed"
                ));
                128 + sig as u8
            }
        }
    }
}

/// Everything a call must mask: the environment's secrets, the values in the protected files the
/// plan's walk found (no second walk) and in the home credential files, and the credentials
/// forwarded to the child. Without a plan's walk (`--yolo`, or no plan), the files are scanned.
fn call_secrets(policy: &Policy, env: &BTreeMap<String, String>, plan: Option<&SandboxPlan>) -> SecretSet {
    let Some(plan) = plan.filter(|p| !p.yolo) else { return SecretSet::discover(policy, env) };
    let found = FileSecrets::read_protected(plan.snapshot.secret_files(), policy);
    SecretSet::from_env_and_files(env, &found).with(&plan.env.credential_values)
}

fn end_reason(end: End) -> &'static str {
    match end {
        End::Exited(_) => "exited",
        End::Timeout => "timeout",
        End::OverBudget => "output-limit",
        End::Stopped(Stop::Cancelled) => "cancelled",
        End::Stopped(Stop::Signal(_)) => "signal",
    }
}

fn call_name() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("call-{}-{n}-{nanos:08x}", std::process::id())
}

fn announce(plan: &SandboxPlan, events: &Events<'_>) {
    if plan.yolo {
        events.say("hullward: WARNING: --yolo: NO SANDBOX. The program runs with hullward's full privileges, filesystem, network and environment.");
    }
    for m in &plan.dropped {
        events.say(&format!("hullward: --no-strict: running without {}: {}", m.feature, m.consequence));
    }
    for note in &plan.notes {
        events.say(&format!("hullward: note: {note}"));
    }
    events.start(plan);
}

/// The spawned child: its pidfd, its output pipes and the filter they pass through (one copy
/// per stream); the terminal modes saved before the spawn are put back when this is dropped.
struct Child {
    pidfd: OwnedFd,
    out: OwnedFd,
    err: OwnedFd,
    filter: OutputFilter,
    /// Its namespaces, torn down when the caller drops them after the exit event.
    namespaces: HeldNamespaces,
    _terminal: Option<stdin::TerminalModes>,
}

async fn supervise(
    plan: &SandboxPlan,
    child: Child,
    cgroup: Option<&CallCgroup>,
    egress: Option<Egress>,
    recorder: &Recorder,
    events: &Events<'_>,
    front: &dyn Front,
) -> Result<(End, FilterStats), Early> {
    let used = Arc::new(AtomicU64::new(0));
    let Child { pidfd, out, err, filter, _terminal, .. } = child;
    let mut out_task = tokio::spawn(pump::pump(
        out,
        filter.clone(),
        front.sink(Stream::Stdout),
        used.clone(),
        plan.output_cap,
    ));
    let mut err_task =
        tokio::spawn(pump::pump(err, filter, front.sink(Stream::Stderr), used, plan.output_cap));
    let mut filtered = FilterStats::default();
    let child = sys::async_pidfd(pidfd).map_err(internal("pidfd"))?;
    let timeout = plan.timeout.unwrap_or(Duration::from_secs(u64::MAX / 4));
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut stop = front.stop();
    let (mut out_done, mut err_done) = (false, false);

    let (proxy, mut egress_events) = match egress {
        Some(Egress { proxy, events }) => (Some(proxy), Some(events)),
        None => (None, None),
    };
    let mut end = loop {
        tokio::select! {
            Some(ev) = async { egress_events.as_mut()?.recv().await }, if egress_events.is_some() => {
                report_egress(&ev, recorder, events);
            }
            guard = child.readable() => {
                let mut guard = guard.map_err(internal("pidfd"))?;
                if let Some(status) = sys::try_reap(child.get_ref().as_raw_fd()).map_err(internal("waitid"))? {
                    break End::Exited(status);
                }
                guard.clear_ready();
            }
            _ = &mut deadline => break End::Timeout,
            r = &mut out_task, if !out_done => {
                out_done = true;
                if let Ok(Ok((pumped, stats))) = r {
                    filtered = filtered + stats;
                    if pumped == PumpEnd::OverBudget { break End::OverBudget; }
                }
            }
            r = &mut err_task, if !err_done => {
                err_done = true;
                if let Ok(Ok((pumped, stats))) = r {
                    filtered = filtered + stats;
                    if pumped == PumpEnd::OverBudget { break End::OverBudget; }
                }
            }
            why = &mut stop => break End::Stopped(why),
        }
    };

    if !matches!(end, End::Exited(_)) {
        let _ = sys::pidfd_kill(child.get_ref().as_raw_fd(), libc::SIGKILL);
        let _ = sys::wait(child.get_ref().as_raw_fd());
    }
    if !reap::kill_tree(cgroup, KILL_WAIT) {
        events.say("hullward: warning: some processes of the call could not be confirmed dead");
    }
    for (done, task) in [(out_done, &mut out_task), (err_done, &mut err_task)] {
        if !done {
            if let Ok(Ok(Ok((pumped, stats)))) = tokio::time::timeout(KILL_WAIT, task).await {
                filtered = filtered + stats;
                // A program that died of the pipe the budget closed (SIGPIPE) was cut by the
                // budget: its exit is reported as the output limit, not as its own.
                if pumped == PumpEnd::OverBudget && matches!(end, End::Exited(_)) {
                    end = End::OverBudget;
                }
            }
        }
    }
    if let Some(proxy) = proxy {
        let _ = tokio::time::timeout(KILL_WAIT, proxy.shutdown()).await;
    }
    if let Some(rx) = egress_events.as_mut() {
        while let Ok(Some(ev)) = tokio::time::timeout(KILL_WAIT, rx.recv()).await {
            report_egress(&ev, recorder, events);
        }
    }
    Ok((end, filtered))
}

/// Tells the user about a refused outbound request (the child only sees a bare 403 over CONNECT).
fn report_egress(ev: &ProxyEvent, recorder: &Recorder, events: &Events<'_>) {
    if ev.verdict != Verdict::Allow {
        events.say(&format!(
            "hullward: egress {} {}:{} refused ({}): {}",
            if ev.method.is_empty() { "request" } else { ev.method.as_str() },
            ev.host,
            ev.port,
            ev.rule,
            ev.message
        ));
    }
    events.egress(ev);
    recorder.egress(ev, events);
}
