//! `subshell` (Decision 2): `$( )`, backticks, `${…}` and `$(( ))` are evaluated when the command
//! runs, so what they produce cannot be checked now. The first one found is named in the denial.
//! Plain `$NAME` is not refused — the agent is meant to reference variables such as `$HOME` —
//! and neither is `<( )`, whose commands are visible and checked like any pipeline stage.
//! `Sandbox.AllowSubstitution: true` lifts this rule only.

use crate::guard::shell::analysis::{Analysis, ConstructKind};
use crate::guard::Decision;
use crate::policy::Policy;

pub fn check(policy: &Policy, analysis: &Analysis) -> Option<Decision> {
    if policy.sandbox.allow_substitution {
        return None;
    }
    let construct = analysis.constructs.iter().find(|c| c.kind != ConstructKind::Process)?;
    Some(Decision::deny(
        "subshell",
        format!(
            "[DENIED] Shell command contains a command substitution or variable expansion ('{}') that cannot be statically verified against the sandbox.\n\
             Rewrite the command without subshells (a plain $NAME is fine), or ask the user to run it.",
            construct.raw
        ),
    ))
}
