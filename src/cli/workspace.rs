//! `hullward review|apply|discard [CALL]` (a held overlay call: `--review`), `hullward undo
//! [CALL]` and `hullward backups` (applied calls). Each first finishes what an interrupted
//! supervisor left (`workspace::recover`). Without CALL, the newest held call (or, for `undo`,
//! the newest applied call that is not undone) is meant.
//!
//! Exit status: 0 done; 1 `undo` refused (the host changed a file since the call applied it,
//! each named); 2 no such call.

use std::collections::BTreeMap;
use std::io::Write;

use super::CommonArgs;
use crate::error::{code, Error};
use crate::filter::{OutputFilter, SecretSet};
use crate::policy::Policy;
use crate::sandbox::masks;
use crate::workspace::{self, backups, CallRecord, WorkspaceError};

/// Which of the held-call commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Held {
    Review,
    Apply,
    Discard,
}

fn say(m: &str) {
    eprintln!("{m}");
}

fn werr(e: WorkspaceError) -> Error {
    match e.exit_code() {
        code::USAGE => Error::Usage(e.to_string()),
        _ => Error::Internal(e.to_string()),
    }
}

/// The held call `call` names, or the newest held one.
fn pick(policy: &Policy, call: Option<&str>) -> Result<(std::path::PathBuf, CallRecord), Error> {
    let id = match call {
        Some(c) => c.to_string(),
        None => workspace::held_calls(policy)
            .pop()
            .map(|r| r.call)
            .ok_or_else(|| Error::Usage("no held call (run with --workspace overlay --review)".into()))?,
    };
    workspace::held(policy, &id).map_err(werr)
}

pub fn held(common: &CommonArgs, what: Held, call: Option<&str>) -> Result<u8, Error> {
    let policy = common.policy()?;
    workspace::recover(&policy, &say);
    let (dir, record) = pick(&policy, call)?;
    let roots: Vec<_> = record.layers.iter().map(|l| l.root.clone()).collect();
    match what {
        Held::Discard => {
            workspace::discard(&dir);
            say(&format!("hullward: the changes of call {} were thrown away", record.call));
        }
        Held::Apply => {
            let lower = masks::scan_policy(&policy, &roots).map_err(|e| Error::Internal(e.to_string()))?;
            let applied = workspace::apply(&policy, &dir, &record, &lower, &say).map_err(werr)?;
            if applied.changes == 0 {
                say(&format!("hullward: call {} had no change to apply", record.call));
            }
        }
        Held::Review => {
            let lower = masks::scan_policy(&policy, &roots).map_err(|e| Error::Internal(e.to_string()))?;
            let text = workspace::review::diff(&policy, &dir, &record, &lower).map_err(werr)?;
            let env: BTreeMap<String, String> = std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect();
            let mut filter = OutputFilter::new(&SecretSet::discover(&policy, &env), &policy);
            let mut out = Vec::new();
            filter.push(&text, &mut out);
            filter.finish(&mut out);
            let mut stdout = std::io::stdout().lock();
            stdout.write_all(&out).and_then(|()| stdout.flush()).or_else(|e| {
                if e.kind() == std::io::ErrorKind::BrokenPipe {
                    Ok(())
                } else {
                    Err(Error::Internal(format!("review: writing stdout: {e}")))
                }
            })?;
        }
    }
    Ok(0)
}

pub fn undo(common: &CommonArgs, call: Option<&str>) -> Result<u8, Error> {
    let policy = common.policy()?;
    workspace::recover(&policy, &say);
    match backups::undo(&workspace::backups_dir(&policy), call) {
        Ok(done) => {
            for p in &done.restored {
                say(&format!("hullward: restored '{}'", p.display()));
            }
            for p in &done.removed {
                say(&format!("hullward: removed '{}'", p.display()));
            }
            say(&format!("hullward: call {} undone", done.call));
            Ok(0)
        }
        Err(e @ backups::UndoError::Changed { .. }) => {
            say(&format!("hullward: {e}"));
            Ok(code::DENIED_OR_INVALID)
        }
        Err(
            e @ (backups::UndoError::Unknown(_)
            | backups::UndoError::Nothing(_)
            | backups::UndoError::Undone(_)),
        ) => Err(Error::Usage(e.to_string())),
        Err(e) => Err(Error::Internal(e.to_string())),
    }
}

pub fn list(common: &CommonArgs) -> Result<u8, Error> {
    let policy = common.policy()?;
    workspace::recover(&policy, &say);
    let listed = backups::list(&workspace::backups_dir(&policy));
    let held = workspace::held_calls(&policy);
    if common.json {
        let calls: Vec<serde_json::Value> = listed
            .iter()
            .map(|l| {
                serde_json::json!({
                    "call": l.manifest.call,
                    "time": l.manifest.time,
                    "bytes": l.bytes,
                    "changes": l.manifest.changes.len(),
                    "refused": l.manifest.refused.len(),
                    "undone": l.manifest.undone,
                })
            })
            .collect();
        let held: Vec<&str> = held.iter().map(|r| r.call.as_str()).collect();
        println!("{}", serde_json::json!({"backups": calls, "held": held}));
        return Ok(0);
    }
    for l in &listed {
        println!(
            "{}  {}  {} bytes  {} change(s), {} refused{}",
            l.manifest.call,
            crate::audit::rfc3339(std::time::UNIX_EPOCH + std::time::Duration::from_secs(l.manifest.time)),
            l.bytes,
            l.manifest.changes.len(),
            l.manifest.refused.len(),
            if l.manifest.undone { "  (undone)" } else { "" }
        );
    }
    for r in &held {
        println!("{}  held for review", r.call);
    }
    Ok(0)
}
