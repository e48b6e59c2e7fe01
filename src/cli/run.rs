//! `hullward run -- PROGRAM ARGS…` and `hullward sh -- 'COMMAND'`: one call under kernel
//! enforcement. `sh` is the `shell_run` tool: the shell guard decides the command string first
//! (a denial exits 126 without running anything), then `/bin/sh -c COMMAND` runs like `run`.

use std::ffi::OsString;

use super::CommonArgs;
use crate::audit::Subject;
use crate::error::Error;
use crate::guard::shell;
use crate::supervisor::{self, RunRequest};

pub fn run(common: &CommonArgs, argv: Vec<OsString>) -> Result<u8, Error> {
    let policy = common.policy()?;
    let words: Vec<String> = argv.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let request = RunRequest {
        argv,
        display: words.join(" "),
        subject: Subject::Argv(words),
        json: common.json,
        guard: None,
    };
    supervisor::run(&policy, &request)
}

pub fn sh(common: &CommonArgs, command: &[String]) -> Result<u8, Error> {
    let policy = common.policy()?;
    let command = command.join(" ");
    let guard = Some(shell::check(&policy, &command));
    let argv = ["/bin/sh", "-c", command.as_str()].iter().map(OsString::from).collect();
    let request = RunRequest {
        argv,
        display: command.clone(),
        subject: Subject::Command(command),
        json: common.json,
        guard,
    };
    supervisor::run(&policy, &request)
}
