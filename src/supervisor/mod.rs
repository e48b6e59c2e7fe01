//! The supervisor: runs one call from approval to exit status.
//!
//! Order of [`run`]: approval (HITL, or the unattended policy) → the kernel's facts and the
//! [`SandboxPlan`] (strict refusal → exit 3) → the call's
//! cgroup → output pipes → `spawn` → a single-threaded tokio runtime that pumps stdout/stderr
//! through the filters, waits for the child's pidfd, and watches the timeout, the output budget
//! and hullward's own termination signals → the whole tree is killed (`cgroup.kill`) whatever
//! happened → the deny globs are re-checked for protected files created or changed during the
//! call → the exit status: the program's own, 124 on timeout, 128+N when killed by signal N.

pub mod approval;
mod events;
pub mod pump;
mod quarantine;
pub mod reap;
mod record;
mod stdin;

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::io::IsTerminal;
use std::os::fd::{AsRawFd, OwnedFd};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Duration;

use tokio::signal::unix::{signal, SignalKind};

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
use crate::sandbox::spawn::{self, Stdio};
use crate::sandbox::sys;
use events::Events;
use pump::{PumpEnd, Sink};
use quarantine::Quarantine;
use record::Recorder;

/// One call to run.
#[derive(Debug, Clone)]
pub struct RunRequest {
    pub argv: Vec<OsString>,
    /// How the call is shown in prompts and messages (the shell command, or the argv).
    pub display: String,
    /// What the audit log says the call was.
    pub subject: Subject,
    pub json: bool,
    /// The shell guard's decision (`sh`): recorded, and a denial stops the call; `ask` means
    /// approval. Without one (`run`), approval is asked when HITL is on.
    pub guard: Option<Decision>,
}

/// How the child's life ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum End {
    Exited(i32),
    Timeout,
    OverBudget,
    Signal(i32),
}

/// How long killing the tree and draining the pipes may take before hullward gives up waiting.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Runs the call and returns hullward's exit code.
pub fn run(policy: &Policy, req: &RunRequest) -> Result<u8, Error> {
    let events = Events::new(req.json);
    let env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let call_id = call_name();
    // The environment's secrets now; the protected files' values once the plan's walk has found
    // those files (a denial before that walks for them itself).
    let mut recorder =
        Recorder::new(policy, &call_id, req.subject.clone(), SecretSet::from_env(&env), &events);
    let mut decisions = Vec::new();
    let needs_approval = match &req.guard {
        Some(decision) if decision.verdict == Verdict::Deny => {
            recorder.set_secrets(SecretSet::discover(policy, &env));
            recorder.decision(decision, &events);
            return Ok(deny(&recorder, &events, &decision.rule, &decision.message));
        }
        Some(decision) => {
            decisions.push(decision.clone());
            decision.verdict == Verdict::Ask
        }
        None => policy.session.hitl,
    };
    if needs_approval {
        if let approval::Approval::Refused(message) = approval::ask(policy, &req.display) {
            recorder.set_secrets(SecretSet::discover(policy, &env));
            for d in decisions.iter().chain([&Decision::deny("approval", message.clone())]) {
                recorder.decision(d, &events);
            }
            return Ok(deny(&recorder, &events, "approval", &message));
        }
        decisions.push(Decision::allow("approval"));
    }
    run_approved(policy, req, &call_id, env, &decisions, &mut recorder, &events)
}

/// A call denied before it ran: the `[DENIED]` text, the final event with the rule, the audit
/// record. Returns the exit code (126).
fn deny(recorder: &Recorder, events: &Events, rule: &str, message: &str) -> u8 {
    events.say(message);
    events.exit(code::DENIED_BEFORE_RUN as i32, "denied", Some((rule, message)));
    recorder.finish(code::DENIED_BEFORE_RUN as i32, FilterStats::default(), Vec::new(), events);
    code::DENIED_BEFORE_RUN
}

fn run_approved(
    policy: &Policy,
    req: &RunRequest,
    call_id: &str,
    env: BTreeMap<String, String>,
    decisions: &[Decision],
    recorder: &mut Recorder,
    events: &Events,
) -> Result<u8, Error> {
    let kernel = KernelSupport::probe_env();
    let cwd = std::env::current_dir().map_err(|e| Error::Internal(format!("current directory: {e}")))?;
    let call = Call {
        argv: req.argv.clone(),
        cwd,
        env,
        terminal: std::io::stdin().is_terminal() || std::io::stdout().is_terminal(),
    };
    let quarantine = Quarantine::new(policy, call_id);
    quarantine.recover(policy, recorder, events);
    let plan = plan::build(policy, &call, &kernel);
    recorder.set_secrets(call_secrets(policy, &call.env, plan.as_ref().ok()));
    for d in decisions {
        recorder.decision(d, events);
    }
    let plan = match plan {
        Ok(p) => p,
        Err(e @ PlanError::StrictRefused(_)) => {
            return Ok(refuse(
                recorder,
                events,
                code::STRICT_REFUSED,
                "strict-refused",
                format!("hullward: {e}"),
            ))
        }
        Err(e @ PlanError::NotFound(_)) => {
            return Ok(refuse(recorder, events, 127, "not-found", format!("hullward: {e}")))
        }
        Err(e) => return Err(Error::Internal(e.to_string())),
    };
    announce(&plan, events);
    quarantine.begin(&plan, events);

    let cgroup = if plan.yolo {
        None
    } else {
        match CallCgroup::create(&kernel.cgroups, call_id, plan.cgroup_limits()) {
            Ok(cg) => Some(cg),
            Err(e) if policy.sandbox.strict && kernel.root => {
                return Ok(refuse(
                    recorder,
                    events,
                    code::STRICT_REFUSED,
                    "strict-refused",
                    format!("hullward: strict mode refuses to run: the call's cgroup (process limit) cannot be created: {e}"),
                ));
            }
            Err(e) => {
                events.say(&format!("hullward: warning: running without the call's cgroup: {e}"));
                None
            }
        }
    };
    if !cgroup.as_ref().is_some_and(CallCgroup::has_kill) {
        sys::set_child_subreaper().map_err(|e| Error::Internal(format!("PR_SET_CHILD_SUBREAPER: {e}")))?;
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::Internal(format!("tokio runtime: {e}")))?;
    let pending = match plan.net {
        NetPlan::Proxy { .. } => Some(egress::Pending::open().map_err(|e| Error::Internal(e.to_string()))?),
        _ => None,
    };

    let (out_r, out_w) = sys::pipe_cloexec().map_err(|e| Error::Internal(format!("pipe: {e}")))?;
    let (err_r, err_w) = sys::pipe_cloexec().map_err(|e| Error::Internal(format!("pipe: {e}")))?;
    let _terminal = stdin::TerminalModes::save();
    let in_r = stdin::feed().map_err(|e| Error::Internal(format!("stdin pipe: {e}")))?;
    let stdio = Stdio {
        stdin: Some(in_r.as_raw_fd()),
        stdout: Some(out_w.as_raw_fd()),
        stderr: Some(err_w.as_raw_fd()),
    };
    let spawned =
        match spawn::spawn(&plan, stdio, cgroup.as_ref(), pending.as_ref().map(egress::Pending::child_end)) {
            Ok(s) => s,
            Err(e) => {
                return Ok(refuse(recorder, events, e.exit_code(), "setup-failed", format!("hullward: {e}")))
            }
        };
    drop((in_r, out_w, err_w));
    let egress = match pending.map(|p| p.start(&policy.http, &runtime)).transpose() {
        Ok(e) => e,
        Err(e) => {
            let _ = sys::pidfd_kill(spawned.pidfd.as_raw_fd(), libc::SIGKILL);
            let _ = reap::kill_tree(cgroup.as_ref(), KILL_WAIT);
            return Ok(refuse(recorder, events, code::INTERNAL, "setup-failed", format!("hullward: {e}")));
        }
    };

    let filter = OutputFilter::new(recorder.secrets(), policy);
    let streams = Streams { out: out_r, err: err_r, filter };
    let (end, filtered) = runtime.block_on(supervise(
        &plan,
        spawned.pidfd,
        streams,
        cgroup.as_ref(),
        egress,
        recorder,
        events,
    ))?;

    let exit = match end {
        End::Exited(status) => status.clamp(0, 255) as u8,
        End::Timeout => {
            let after = plan.timeout.map(crate::policy::duration::format).unwrap_or_default();
            events.say(&format!("hullward: timed out after {after}; the whole process tree was killed"));
            code::TIMEOUT
        }
        End::OverBudget => {
            events.say(&format!(
                "hullward: output exceeded {} bytes (Sandbox.Limits.OutputBytes); the whole process tree was killed",
                plan.output_cap
            ));
            128 + libc::SIGKILL as u8
        }
        End::Signal(sig) => {
            events.say(&format!("hullward: interrupted by signal {sig}; the whole process tree was killed"));
            128 + sig as u8
        }
    };
    quarantine.finish(policy, &plan, recorder, events);
    events.exit(i32::from(exit), end_reason(end), None);
    let dropped = plan.dropped.iter().map(|m| format!("{}: {}", m.feature, m.consequence)).collect();
    recorder.finish(i32::from(exit), filtered, dropped, events);
    Ok(exit)
}

/// Everything a call must mask: the environment's secrets, the values in the protected files the
/// plan's walk found (no second walk) and in the home credential files, and the credentials
/// forwarded to the child. Without a plan's walk (`--yolo`, or no plan), the files are scanned.
fn call_secrets(policy: &Policy, env: &BTreeMap<String, String>, plan: Option<&SandboxPlan>) -> SecretSet {
    let Some(plan) = plan.filter(|p| !p.yolo) else { return SecretSet::discover(policy, env) };
    let found = FileSecrets::read_protected(plan.snapshot.secret_files(), policy);
    SecretSet::from_env_and_files(env, &found).with(&plan.env.credential_values)
}

/// Ends a call that never ran its program: the message, the final event, the audit record.
fn refuse(recorder: &Recorder, events: &Events, code: u8, reason: &str, message: String) -> u8 {
    events.say(&message);
    events.exit(i32::from(code), reason, None);
    recorder.finish(i32::from(code), FilterStats::default(), Vec::new(), events);
    code
}

fn end_reason(end: End) -> &'static str {
    match end {
        End::Exited(_) => "exited",
        End::Timeout => "timeout",
        End::OverBudget => "output-limit",
        End::Signal(_) => "signal",
    }
}

fn call_name() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    format!("call-{}-{n}-{nanos:08x}", std::process::id())
}

fn announce(plan: &SandboxPlan, events: &Events) {
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

/// The child's output pipes and the filter they pass through (one copy per stream).
struct Streams {
    out: OwnedFd,
    err: OwnedFd,
    filter: OutputFilter,
}

async fn supervise(
    plan: &SandboxPlan,
    pidfd: OwnedFd,
    streams: Streams,
    cgroup: Option<&CallCgroup>,
    egress: Option<Egress>,
    recorder: &Recorder,
    events: &Events,
) -> Result<(End, FilterStats), Error> {
    let json = events.on();
    let internal = |what: &str| {
        let what = what.to_string();
        move |e: std::io::Error| Error::Internal(format!("{what}: {e}"))
    };
    let used = Arc::new(AtomicU64::new(0));
    let err_sink = if json {
        Sink::JsonEvents { stream: "stderr", out: tokio::io::stderr() }
    } else {
        Sink::Stderr(tokio::io::stderr())
    };
    let Streams { out, err, filter } = streams;
    let mut out_task = tokio::spawn(pump::pump(
        out,
        filter.clone(),
        Sink::Stdout(tokio::io::stdout()),
        used.clone(),
        plan.output_cap,
    ));
    let mut err_task = tokio::spawn(pump::pump(err, filter, err_sink, used, plan.output_cap));
    let mut filtered = FilterStats::default();
    let child = sys::async_pidfd(pidfd).map_err(internal("pidfd"))?;
    let timeout = plan.timeout.unwrap_or(Duration::from_secs(u64::MAX / 4));
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    let mut sigint = signal(SignalKind::interrupt()).map_err(internal("signal"))?;
    let mut sigterm = signal(SignalKind::terminate()).map_err(internal("signal"))?;
    let mut sighup = signal(SignalKind::hangup()).map_err(internal("signal"))?;
    let (mut out_done, mut err_done) = (false, false);

    let (proxy, mut egress_events) = match egress {
        Some(Egress { proxy, events }) => (Some(proxy), Some(events)),
        None => (None, None),
    };
    let end = loop {
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
            _ = sigint.recv() => break End::Signal(libc::SIGINT),
            _ = sigterm.recv() => break End::Signal(libc::SIGTERM),
            _ = sighup.recv() => break End::Signal(libc::SIGHUP),
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
            if let Ok(Ok(Ok((_, stats)))) = tokio::time::timeout(KILL_WAIT, task).await {
                filtered = filtered + stats;
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
fn report_egress(ev: &ProxyEvent, recorder: &Recorder, events: &Events) {
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
