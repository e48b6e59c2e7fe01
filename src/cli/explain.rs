//! `hullward explain`: the resolved policy — roots, globs and where each came from, what every
//! built-in default adds — as text or `--json`. Both renderings come from one JSON value so they
//! cannot disagree.

use std::ffi::OsString;

use serde_json::{json, Value};

use super::CommonArgs;
use crate::error::Error;
use crate::policy::{duration, GlobRules, HostAllowlist, Policy};

pub fn run(common: &CommonArgs, _argv: &[OsString]) -> Result<u8, Error> {
    let policy = common.policy()?;
    let report = policy_json(&policy);
    if common.json {
        println!("{report}");
    } else {
        print!("{}", render(&report));
    }
    Ok(0)
}

fn globs_json(rules: &GlobRules) -> Value {
    Value::Array(
        rules.rules().iter().map(|r| json!({ "pattern": r.pattern, "from": r.origin.to_string() })).collect(),
    )
}

fn paths(list: &[std::path::PathBuf]) -> Value {
    Value::Array(list.iter().map(|p| Value::String(p.display().to_string())).collect())
}

/// The resolved policy as a JSON value.
pub fn policy_json(p: &Policy) -> Value {
    let sb = &p.sandbox;
    json!({
        "sources": p.sources,
        "root": p.root.display().to_string(),
        "root_access": if sb.read_only { "read" } else { "read+write" },
        "include": paths(&p.includes),
        "writable": paths(&sb.writable),
        "system": paths(&sb.system),
        "deny": globs_json(&p.deny),
        "write_protect": globs_json(&p.write_protect),
        "read": globs_json(&p.read),
        "write": globs_json(&p.write),
        "change_envelope": p.change_envelope.as_ref().map(globs_json),
        "deny_credential_files": p.deny_credential_files,
        "shell": {
            "allow_mode": format!("{:?}", p.shell.mode).to_lowercase(),
            "allow": p.shell.allow,
            "deny": p.shell.deny,
            "allow_substitution": sb.allow_substitution,
        },
        "network": sb.network.as_str(),
        "http_allowed_hosts": match &p.http.allowed {
            HostAllowlist::Unrestricted => Value::String("unrestricted".into()),
            HostAllowlist::Only(list) => Value::Array(list.iter().map(|h| Value::String(h.to_string())).collect()),
        },
        "allow_private_hosts": p.http.allow_private,
        "timeout": sb.timeout.map(duration::format),
        "env": sb.env,
        "credentials": sb.credentials,
        "limits": {
            "processes": sb.limits.processes,
            "open_files": sb.limits.open_files,
            "memory_bytes": sb.limits.memory_bytes,
            "output_bytes": sb.limits.output_bytes,
        },
        "strict": sb.strict,
        "hitl": p.session.hitl,
        "yolo": p.session.yolo,
        "unattended": format!("{:?}", sb.unattended).to_lowercase(),
        "read_file_size_limit": p.read_file_size_limit,
        "audit": p.session.audit_path.display().to_string(),
    })
}

fn list_or(v: &Value, empty: &str) -> String {
    match v.as_array() {
        Some(a) if !a.is_empty() => a
            .iter()
            .map(|x| x.as_str().map(str::to_string).unwrap_or_else(|| x.to_string()))
            .collect::<Vec<_>>()
            .join(", "),
        _ => empty.to_string(),
    }
}

fn globs_text(out: &mut String, title: &str, v: &Value, empty: &str) {
    match v.as_array() {
        Some(rules) if !rules.is_empty() => {
            out.push_str(&format!("{title}:\n"));
            for r in rules {
                out.push_str(&format!(
                    "  {:<28} {}\n",
                    r["pattern"].as_str().unwrap_or_default(),
                    r["from"].as_str().unwrap_or_default()
                ));
            }
        }
        _ => out.push_str(&format!("{title}: {empty}\n")),
    }
}

/// Human-readable rendering of [`policy_json`].
pub fn render(r: &Value) -> String {
    let mut out = String::new();
    let s = |v: &Value| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
    out.push_str(&format!("sources:      {}\n", list_or(&r["sources"], "-")));
    out.push_str(&format!("root:         {} ({})\n", s(&r["root"]), s(&r["root_access"])));
    out.push_str(&format!("include:      {}\n", list_or(&r["include"], "(none)")));
    out.push_str(&format!(
        "writable:     {} (private tmpfs in the child)\n",
        list_or(&r["writable"], "(none)")
    ));
    out.push_str(&format!("system:       {} (read+execute)\n", list_or(&r["system"], "(none)")));
    globs_text(&mut out, "deny (never readable or writable, never a prompt)", &r["deny"], "(none)");
    globs_text(&mut out, "write-protected", &r["write_protect"], "(none)");
    globs_text(&mut out, "read globs", &r["read"], "(none: every path inside the roots)");
    globs_text(&mut out, "write globs", &r["write"], "(none: every path inside the roots)");
    if r["change_envelope"].is_null() {
        out.push_str("change envelope: (none)\n");
    } else {
        globs_text(&mut out, "change envelope", &r["change_envelope"], "(empty: no writes)");
    }
    let sh = &r["shell"];
    out.push_str(&format!(
        "shell policy: {} mode; allow: {}; deny: {}\n",
        s(&sh["allow_mode"]),
        list_or(&sh["allow"], "(any)"),
        list_or(&sh["deny"], "(none)")
    ));
    out.push_str(&format!(
        "shell built-ins: credential-file{}, env-file, sudo, catastrophic-delete, raw-disk-op, fetch-to-exec, subshell{}, path-scan\n",
        if r["deny_credential_files"] == Value::Bool(false) { " (off)" } else { "" },
        if sh["allow_substitution"] == Value::Bool(true) { " (lifted by AllowSubstitution)" } else { "" },
    ));
    out.push_str(&format!("network:      {}\n", s(&r["network"])));
    out.push_str(&format!(
        "http hosts:   {}; private addresses {}\n",
        match &r["http_allowed_hosts"] {
            Value::Array(a) if a.is_empty() => "(none: every host denied)".to_string(),
            v @ Value::Array(_) => list_or(v, ""),
            v => s(v),
        },
        if r["allow_private_hosts"] == Value::Bool(true) { "allowed" } else { "blocked" }
    ));
    out.push_str(&format!(
        "timeout:      {}\n",
        if r["timeout"].is_null() { "none".into() } else { s(&r["timeout"]) }
    ));
    out.push_str(&format!("environment:  {} (everything else dropped)\n", list_or(&r["env"], "(nothing)")));
    out.push_str(&format!("credentials:  {}\n", list_or(&r["credentials"], "(none)")));
    let l = &r["limits"];
    out.push_str(&format!(
        "limits:       processes {}, open files {}, memory {}, output {} bytes\n",
        s(&l["processes"]),
        s(&l["open_files"]),
        if l["memory_bytes"].is_null() {
            "unlimited".into()
        } else {
            format!("{} bytes", s(&l["memory_bytes"]))
        },
        s(&l["output_bytes"])
    ));
    out.push_str(&format!(
        "strict:       {}; hitl: {}; unattended: {}; yolo: {}\n",
        s(&r["strict"]),
        if r["hitl"] == Value::Bool(true) { "on" } else { "off" },
        s(&r["unattended"]),
        s(&r["yolo"])
    ));
    out.push_str(&format!("audit log:    {}\n", s(&r["audit"])));
    out
}
