//! `hullward check shell|path|url`: decide without doing, print the decision, exit 0 or 1.

use std::collections::BTreeMap;

use super::{CheckCommand, CommonArgs};
use crate::audit::{AuditLog, AuditRecord, Subject};
use crate::error::{code, Error};
use crate::filter::SecretSet;
use crate::guard::{path, shell, url, Decision, Verdict};
use crate::policy::Policy;

pub fn run(common: &CommonArgs, what: CheckCommand) -> Result<u8, Error> {
    let policy = common.policy()?;
    let env: BTreeMap<String, String> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let (subject, decision, secrets) = match what {
        CheckCommand::Shell { command } => {
            let command = command.join(" ");
            let cwd = std::env::current_dir().unwrap_or_else(|_| policy.root.clone());
            let decision = shell::check_in(&policy, &command, &cwd);
            // A command string may carry a secret literally: mask what the files hold too.
            (Subject::Command(command), decision, SecretSet::discover(&policy, &env))
        }
        CheckCommand::Path { op, path: p } => {
            let cwd =
                std::env::current_dir().map_err(|e| Error::Internal(format!("current directory: {e}")))?;
            let decision = path::check(&policy, op, &p, &cwd);
            let subject =
                Subject::Path { op: op.as_str().to_string(), path: p.to_string_lossy().into_owned() };
            (subject, decision, SecretSet::from_env(&env))
        }
        CheckCommand::Url { url: u } => {
            let decision = url::check(&policy.http, &u);
            (Subject::Url(u), decision, SecretSet::from_env(&env))
        }
    };
    audit(&policy, subject, &decision, &secrets);
    print_decision(&decision, common.json);
    Ok(exit_code(&decision))
}

/// Appends the decision to the audit log; a log that cannot be written is a warning only.
fn audit(policy: &Policy, subject: Subject, decision: &Decision, secrets: &SecretSet) {
    let record = AuditRecord::decision(format!("check-{}", std::process::id()), subject, decision);
    if let Err(e) = AuditLog::open(&policy.session.audit_path).and_then(|log| log.record(&record, secrets)) {
        eprintln!("hullward: warning: cannot write the audit log: {e}");
    }
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
