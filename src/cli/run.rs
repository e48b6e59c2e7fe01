//! `hullward run -- PROGRAM ARGS…` and `hullward sh -- 'COMMAND'`: one call under kernel
//! enforcement. `sh` is the `shell_run` tool: the shell guard decides the command string first
//! (a denial exits 126 without running anything), then `/bin/sh -c COMMAND` runs like `run`.
//!
//! The call runs in this process through the engine ([`supervisor::run`]) with [`Terminal`] as
//! its front end, or, with `--connect SOCK` (or `HULLWARD_SOCKET`), in a running `hullward serve`
//! ([`super::connect`]). A call in this process first starts what does not depend on the policy
//! (the kernel probe, root's counters user namespace) on a thread, then loads the policy.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use tokio::signal::unix::{signal, SignalKind};

use super::CommonArgs;
use crate::audit::Subject;
use crate::error::Error;
use crate::guard::shell;
use crate::policy::Policy;
use crate::sandbox::kernel::KernelSupport;
use crate::sandbox::spawn;
use crate::supervisor::approval::{self, Approval};
use crate::supervisor::pump::Sink;
use crate::supervisor::{self, CallSpec, Engine, Front, Input, Stop, StopFuture, Stream};

pub fn run(common: &CommonArgs, argv: Vec<OsString>, connect: Option<&Path>) -> Result<u8, Error> {
    if let Some(socket) = connect {
        let argv: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        return super::connect::call(common, socket, json!({"method": "run", "argv": argv}));
    }
    prefetch(common);
    let engine = Engine::new(common.policy()?);
    let words: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let spec = CallSpec {
        display: words.join(" "),
        subject: Subject::Argv(words),
        guard: None,
        ..cli_spec(&engine, argv)?
    };
    Ok(supervisor::run(&engine, &spec, &Terminal { json: common.json })?.code)
}

pub fn sh(common: &CommonArgs, command: &[String], connect: Option<&Path>) -> Result<u8, Error> {
    let command = command.join(" ");
    if let Some(socket) = connect {
        return super::connect::call(common, socket, json!({"method": "shell_run", "command": command}));
    }
    prefetch(common);
    let engine = Engine::new(common.policy()?);
    let argv = ["/bin/sh", "-c", command.as_str()].iter().map(OsString::from).collect();
    let spec = cli_spec(&engine, argv)?;
    let spec = CallSpec {
        display: command.clone(),
        guard: Some(shell::check_in(engine.policy(), &command, &spec.cwd)),
        subject: Subject::Command(command),
        ..spec
    };
    Ok(supervisor::run(&engine, &spec, &Terminal { json: common.json })?.code)
}

/// Starts the kernel probe and then root's counters user namespace and the call's network
/// namespace on a thread, overlapping the policy load (all are needed only when the engine is
/// built and the child spawned). On a big tree the walks of the call ask the kernel what
/// changed in between (`sandbox::changes`): the post-call check reads only the directories the
/// program changed.
fn prefetch(common: &CommonArgs) {
    crate::sandbox::changes::enable();
    KernelSupport::prefetch(if common.yolo { || {} } else { spawn::prepare_call_namespaces });
}

/// The parts of a CLI call that come from this process: the current directory, the environment,
/// the terminal, standard input.
fn cli_spec(engine: &Engine, argv: Vec<OsString>) -> Result<CallSpec, Error> {
    let cwd: PathBuf =
        std::env::current_dir().map_err(|e| Error::Internal(format!("current directory: {e}")))?;
    Ok(CallSpec {
        argv,
        cwd,
        env: engine.env().clone(),
        terminal: std::io::stdin().is_terminal() || std::io::stdout().is_terminal(),
        stdin: Input::Inherit,
        display: String::new(),
        subject: Subject::Argv(Vec::new()),
        guard: None,
        timeout: None,
    })
}

/// The CLI's front end: approval on `/dev/tty`, output on this process's stdout and stderr,
/// events on stderr with `--json`, stopped by SIGINT, SIGTERM or SIGHUP.
struct Terminal {
    json: bool,
}

impl Front for Terminal {
    fn approve(&self, policy: &Policy, what: &str, needed: bool) -> Approval {
        if needed {
            approval::ask(policy, what)
        } else {
            Approval::Granted
        }
    }

    /// Plain text on stderr, or a `notice` event with `--json` (so that stderr stays one JSON
    /// object per line).
    fn say(&self, text: &str) {
        if self.json {
            self.event(json!({ "event": "notice", "message": text }));
        } else {
            eprintln!("{text}");
        }
    }

    fn event(&self, event: Value) {
        if self.json {
            eprintln!("{event}");
        }
    }

    fn sink(&self, stream: Stream) -> Sink {
        match stream {
            Stream::Stdout => Sink::Stdout,
            Stream::Stderr if self.json => Sink::JsonEvents { stream: "stderr" },
            Stream::Stderr => Sink::Stderr,
        }
    }

    fn stop(&self) -> StopFuture<'_> {
        Box::pin(async {
            let watch = (
                signal(SignalKind::interrupt()),
                signal(SignalKind::terminate()),
                signal(SignalKind::hangup()),
            );
            let (Ok(mut int), Ok(mut term), Ok(mut hup)) = watch else {
                eprintln!("hullward: warning: cannot watch SIGINT/SIGTERM/SIGHUP during the call");
                return std::future::pending().await;
            };
            tokio::select! {
                _ = int.recv() => Stop::Signal(libc::SIGINT),
                _ = term.recv() => Stop::Signal(libc::SIGTERM),
                _ = hup.recv() => Stop::Signal(libc::SIGHUP),
            }
        })
    }
}
