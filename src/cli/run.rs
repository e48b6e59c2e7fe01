//! `hullward run -- PROGRAM ARGS…` and `hullward sh -- 'COMMAND'`: one call under kernel
//! enforcement. `sh` is the `shell_run` tool: the shell guard decides the command string first
//! (a denial exits 126 without running anything), then `/bin/sh -c COMMAND` runs like `run`.

use std::ffi::OsString;

use super::CommonArgs;
use crate::error::Error;
use crate::guard::{shell, Verdict};
use crate::supervisor::{self, RunRequest};

pub fn run(common: &CommonArgs, argv: Vec<OsString>) -> Result<u8, Error> {
    let policy = common.policy()?;
    let display = argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    let needs_approval = policy.session.hitl;
    supervisor::run(&policy, &RunRequest { argv, display, json: common.json, needs_approval })
}

pub fn sh(common: &CommonArgs, command: &[String]) -> Result<u8, Error> {
    let policy = common.policy()?;
    let command = command.join(" ");
    let decision = shell::check(&policy, &command);
    if decision.verdict == Verdict::Deny {
        return Ok(supervisor::denied(common.json, &decision.rule, &decision.message));
    }
    let argv = ["/bin/sh", "-c", command.as_str()].iter().map(OsString::from).collect();
    supervisor::run(
        &policy,
        &RunRequest {
            argv,
            display: command.clone(),
            json: common.json,
            needs_approval: decision.verdict == Verdict::Ask,
        },
    )
}
