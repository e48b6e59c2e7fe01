//! `hullward mcp`: loads the policy once, makes the engine warm and serves MCP on stdio
//! ([`crate::mcp`]) until the client closes the connection.

use super::CommonArgs;
use crate::error::Error;
use crate::serve::Options;
use crate::supervisor::Engine;

pub fn run(common: &CommonArgs) -> Result<u8, Error> {
    let policy = common.policy()?;
    let options = Options {
        approval_timeout: policy.sandbox.approval_timeout,
        shutdown_grace: policy.sandbox.shutdown_grace,
    };
    crate::mcp::run(Engine::new(policy), options)
}
