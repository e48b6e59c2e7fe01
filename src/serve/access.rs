//! Who may do a file operation of a session, and below which directory it is done: the path
//! guard's decision ([`crate::guard::path`]) joined with the session's grants.
//!
//! Order of [`decide`]: the guard (deny rules first, never a prompt — also inside a granted
//! directory) → the loaded policy files, which no write of a session may replace (rule
//! `policy-file`) → a path just outside every root: allowed when a grant of this session covers
//! it, else a question for the human (the containing directory is what approving grants) → the
//! allowed directory that contains the path, where [`super::files`] starts its descent.
//!
//! [`Grants`] live in the session's memory only: never written to disk, gone when the
//! connection closes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::guard::path::{self, Op};
use crate::guard::{Decision, Verdict};
use crate::policy::Policy;

use super::files::Anchored;

/// The directories a human granted on one session.
#[derive(Debug, Clone, Default)]
pub struct Grants(Arc<Mutex<Vec<PathBuf>>>);

impl Grants {
    /// The granted directory `resolved` lies directly in, if any. A grant is that directory's
    /// own entries, not its subtree: the seed grants "the containing directory … not some
    /// broader ancestor", and a file deeper down asks again.
    pub fn covering(&self, resolved: &Path) -> Option<PathBuf> {
        let granted = self.0.lock().ok()?;
        let dir = resolved.parent()?;
        granted.iter().find(|g| g.as_path() == dir).cloned()
    }

    /// Grants `dir` for the rest of the session.
    pub fn add(&self, dir: PathBuf) {
        if let Ok(mut granted) = self.0.lock() {
            if !granted.contains(&dir) {
                granted.push(dir);
            }
        }
    }
}

/// What a session may do with a path.
#[derive(Debug, Clone)]
pub enum Access {
    /// Allowed (`decision` is what the audit log records); done below `at.base`.
    Allowed { at: Anchored, decision: Decision },
    /// Denied: a deny rule, a permission list, the sandbox boundary.
    Denied(Decision),
    /// Just outside every root: a human may grant `grant` (the containing directory).
    Ask { grant: PathBuf, resolved: PathBuf, prompt: String },
}

/// Decides `op` on `path` (relative paths against the root) for a session with these grants.
pub fn decide(policy: &Policy, grants: &Grants, op: Op, path: &Path) -> Access {
    let decision = path::check(policy, op, path, &policy.root);
    if decision.verdict == Verdict::Deny {
        return Access::Denied(decision);
    }
    let resolved = match path::resolve(path, &policy.root) {
        Ok(p) => p,
        Err(e) => {
            let shown = path::lexical(path, &policy.root);
            let message = format!("[DENIED] Path '{}' cannot be resolved: {e}.", shown.display());
            return Access::Denied(Decision::deny("path-resolve", message));
        }
    };
    if matches!(op, Op::Write | Op::Delete) {
        if let Some(denied) = policy_file(policy, path, &resolved) {
            return Access::Denied(denied);
        }
    }
    if decision.verdict == Verdict::Ask {
        return match grants.covering(&resolved) {
            Some(base) => anchored(base, resolved, Decision::allow("session-grant")),
            None => {
                let grant = resolved.parent().unwrap_or(&resolved).to_path_buf();
                Access::Ask { grant, resolved, prompt: decision.message }
            }
        };
    }
    match allowed_base(policy, op, &resolved) {
        Some(base) => anchored(base, resolved, decision),
        None => Access::Denied(path::outside_denial(policy, &resolved)),
    }
}

/// Where the operation is done once a human approved the grant of `grant`, and the decision the
/// audit log records.
pub fn granted(grant: PathBuf, resolved: &Path) -> (Anchored, Decision) {
    (below(grant, resolved), Decision::allow("session-grant"))
}

fn anchored(base: PathBuf, resolved: PathBuf, decision: Decision) -> Access {
    Access::Allowed { at: below(base, &resolved), decision }
}

fn below(base: PathBuf, resolved: &Path) -> Anchored {
    let rel = resolved.strip_prefix(&base).unwrap_or(Path::new("")).to_path_buf();
    Anchored { base, rel }
}

/// A write or delete of a loaded policy file (the next call's policy), as written or resolved.
fn policy_file(policy: &Policy, path: &Path, resolved: &Path) -> Option<Decision> {
    let written = path::lexical(path, &policy.root);
    let file = policy.files.iter().find(|f| **f == written || **f == resolved)?;
    Some(Decision::deny(
        "policy-file",
        format!(
            "[DENIED] '{}': Path is a loaded policy file; a session never rewrites the policy it runs under.",
            file.display()
        ),
    ))
}

/// The innermost allowed directory that contains `resolved`: a root, a writable directory, or —
/// for reading and listing — a system or read-only directory.
fn allowed_base(policy: &Policy, op: Op, resolved: &Path) -> Option<PathBuf> {
    let mut bases = policy.roots();
    bases.extend(policy.sandbox.writable.iter().cloned());
    if !matches!(op, Op::Write | Op::Delete) {
        bases.extend(policy.sandbox.system.iter().cloned());
        bases.extend(policy.sandbox.read_only_dirs.iter().cloned());
    }
    bases.into_iter().filter(|b| resolved.starts_with(b)).max_by_key(|b| b.components().count())
}
