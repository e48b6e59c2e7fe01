//! `hullward validate`: every error and warning with `file:line`; exit 0 only when valid
//! (Decision 14: 1 for any invalid configuration, 2 for bad flags or an unreadable file).

use serde_json::json;

use super::CommonArgs;
use crate::error::{code, Error};
use crate::policy::load::{load, PolicyError};
use crate::policy::{Diagnostic, Severity};

pub fn run(common: &CommonArgs) -> Result<u8, Error> {
    let (valid, diags) = match load(&common.load_request()?) {
        Ok(policy) => (true, policy.warnings),
        Err(PolicyError::Syntax(d)) => (false, vec![d]),
        Err(PolicyError::Invalid(ds)) => (false, ds),
        Err(e) => return Err(e.into()),
    };
    if common.json {
        let list: Vec<_> = diags.iter().map(diag_json).collect();
        println!("{}", json!({ "valid": valid, "diagnostics": list }));
    } else {
        for d in &diags {
            println!("{d}");
        }
        let errors = diags.iter().filter(|d| d.severity == Severity::Error).count();
        let warnings = diags.len() - errors;
        if valid {
            println!("configuration is valid ({warnings} warning(s))");
        } else {
            println!("configuration is invalid: {errors} error(s), {warnings} warning(s)");
        }
    }
    Ok(if valid { 0 } else { code::DENIED_OR_INVALID })
}

fn diag_json(d: &Diagnostic) -> serde_json::Value {
    json!({
        "severity": match d.severity { Severity::Error => "error", Severity::Warning => "warning" },
        "file": d.file.as_ref().map(|f| f.display().to_string()),
        "line": d.line,
        "key": d.key,
        "message": d.message,
    })
}
