//! `hullward run -- PROGRAM ARGS…`: one program under kernel enforcement.

use std::ffi::OsString;

use super::CommonArgs;
use crate::error::Error;
use crate::supervisor::{self, RunRequest};

pub fn run(common: &CommonArgs, argv: Vec<OsString>) -> Result<u8, Error> {
    let policy = common.policy()?;
    let display = argv.iter().map(|a| a.to_string_lossy()).collect::<Vec<_>>().join(" ");
    supervisor::run(&policy, &RunRequest { argv, display, json: common.json })
}
