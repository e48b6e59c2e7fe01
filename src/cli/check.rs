//! `hullward check shell|path|url`: decide without doing, print the decision, exit 0 or 1.

use super::{CheckCommand, CommonArgs};
use crate::error::{code, Error};
use crate::guard::{path, shell, url, Decision, Verdict};

pub fn run(common: &CommonArgs, what: CheckCommand) -> Result<u8, Error> {
    let policy = common.policy()?;
    let decision = match what {
        CheckCommand::Shell { command } => shell::check(&policy, &command.join(" ")),
        CheckCommand::Path { op, path: p } => {
            let cwd =
                std::env::current_dir().map_err(|e| Error::Internal(format!("current directory: {e}")))?;
            path::check(&policy, op, &p, &cwd)
        }
        CheckCommand::Url { url: u } => url::check(&policy.http, &u),
    };
    print_decision(&decision, common.json);
    Ok(exit_code(&decision))
}

/// Prints a decision: the JSON object of the contract, or the message (`allowed` when allowed).
pub fn print_decision(d: &Decision, json: bool) {
    if json {
        println!("{}", serde_json::to_string(d).expect("a decision serialises"));
    } else if d.verdict == Verdict::Allow {
        println!("allowed");
    } else {
        println!("{}", d.message);
    }
}

/// 0 when allowed, 1 when denied or when it needs approval.
pub fn exit_code(d: &Decision) -> u8 {
    match d.verdict {
        Verdict::Allow => 0,
        Verdict::Deny | Verdict::Ask => code::DENIED_OR_INVALID,
    }
}
