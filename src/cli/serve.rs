//! `hullward serve --socket PATH`: loads the policy once, makes the engine warm and runs the
//! supervisor daemon ([`crate::serve`]) until SIGTERM or SIGINT.

use std::path::PathBuf;

use super::CommonArgs;
use crate::error::Error;
use crate::serve::{self, Options};
use crate::supervisor::Engine;

pub fn run(common: &CommonArgs, socket: PathBuf) -> Result<u8, Error> {
    let policy = common.policy()?;
    let options = Options {
        approval_timeout: policy.sandbox.approval_timeout,
        shutdown_grace: policy.sandbox.shutdown_grace,
    };
    serve::run(Engine::new(policy), &socket, options)
}
