//! `hullward explain [-- PROGRAM]`: the resolved policy — roots, globs and where each came from,
//! what every built-in default adds — and, with a program, the `SandboxPlan` that `run` would
//! apply on this kernel: each mask and the rule that produced it, the mount view, the Landlock
//! rules, the seccomp policy, limits, and what `--no-strict` drops. Text or `--json`; both
//! renderings come from one JSON value so they cannot disagree.

use std::ffi::OsString;

use serde_json::{json, Value};

use super::CommonArgs;
use crate::error::Error;
use crate::policy::{duration, GlobRules, HostAllowlist, Policy};
use crate::sandbox::kernel::KernelSupport;
use crate::sandbox::plan::{self, Call, PlanError};

pub fn run(common: &CommonArgs, argv: &[OsString]) -> Result<u8, Error> {
    let policy = common.policy()?;
    let mut report = policy_json(&policy);
    let mut code = 0;
    if !argv.is_empty() {
        let call = Call {
            argv: argv.to_vec(),
            cwd: std::env::current_dir().map_err(|e| Error::Internal(format!("current directory: {e}")))?,
            env: std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
                .collect(),
            terminal: false,
        };
        report["plan"] = match plan::build(&policy, &call, &KernelSupport::probe_env()) {
            Ok(p) => p.to_json(),
            Err(e @ PlanError::StrictRefused(_)) => {
                code = crate::error::code::STRICT_REFUSED;
                json!({ "refused": e.to_string() })
            }
            Err(e @ PlanError::NotFound(_)) => {
                code = 127;
                json!({ "refused": e.to_string() })
            }
            Err(e) => return Err(Error::Internal(e.to_string())),
        };
    }
    if common.json {
        println!("{report}");
    } else {
        let style = super::style::Style::for_stdout();
        print!("{}", style.report(&render(&report)));
        if let Some(plan) = report.get("plan") {
            print!("{}", style.report(&render_plan(plan)));
        }
    }
    Ok(code)
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
        "read_only_dirs": paths(&sb.read_only_dirs),
        "deny": globs_json(&p.deny),
        "write_protect": Value::Array(
            p.write_protect
                .rules()
                .iter()
                .map(|r| {
                    let from = match crate::policy::load::write_protect_reason(&r.pattern) {
                        Some(why) => format!("{}: {why}", r.origin),
                        None => r.origin.to_string(),
                    };
                    json!({ "pattern": r.pattern, "from": from })
                })
                .collect()
        ),
        "read": globs_json(&p.read),
        "write": globs_json(&p.write),
        "change_envelope": p.change_envelope.as_ref().map(globs_json),
        "deny_credential_files": p.deny_credential_files,
        "shell": {
            "allow_mode": format!("{:?}", p.shell.mode).to_lowercase(),
            "allow": p.shell.allow,
            "deny": p.shell.deny,
            "allow_substitution": sb.allow_substitution,
            "protected_branches": sb.protected_branches,
        },
        "network": sb.network.as_str(),
        "workspace": {
            "mode": sb.workspace.as_str(),
            "review": p.session.review,
            "apply_rules": match sb.workspace {
                crate::policy::WorkspaceMode::Direct => "written in place; protected paths created or changed anyway are quarantined",
                crate::policy::WorkspaceMode::Overlay => "written to an overlay of each root; applied when the call ends, except protected paths (deny matches, git metadata, policy files, WriteProtect entries) and files the host changed during the call, which are refused and listed; every overwritten or deleted file is kept in $HULLWARD_HOME/backups/CALL (hullward undo)",
                crate::policy::WorkspaceMode::Ephemeral => "written to an overlay of each root; thrown away when the call ends",
            },
        },
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
    out.push_str(&format!(
        "read-only:    {} (read+execute, never write)\n",
        list_or(&r["read_only_dirs"], "(none)")
    ));
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
        "shell built-ins: credential-file{}, env-file, sudo, catastrophic-delete, raw-disk-op, fetch-to-exec, git-protected (branches: {}), subshell{}, path-scan\n",
        if r["deny_credential_files"] == Value::Bool(false) { " (off)" } else { "" },
        list_or(&sh["protected_branches"], "(none)"),
        if sh["allow_substitution"] == Value::Bool(true) { " (lifted by AllowSubstitution)" } else { "" },
    ));
    out.push_str(&format!("network:      {}\n", s(&r["network"])));
    out.push_str(&format!(
        "workspace:    {}{}: {}\n",
        s(&r["workspace"]["mode"]),
        if r["workspace"]["review"] == Value::Bool(true) {
            " (--review: held for hullward review|apply|discard)"
        } else {
            ""
        },
        s(&r["workspace"]["apply_rules"])
    ));
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

/// Human-readable rendering of a plan (the `plan` member of the report).
fn render_plan(p: &Value) -> String {
    let s = |v: &Value| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
    let mut out = String::from("\nenforcement for this call:\n");
    if let Some(refused) = p.get("refused") {
        out.push_str(&format!("  REFUSED: {}\n", s(refused)));
        return out;
    }
    out.push_str(&format!("  program:      {} (cwd {})\n", s(&p["program"]), s(&p["cwd"])));
    out.push_str(&format!("  environment:  {}\n", list_or(&p["env"], "(empty)")));
    out.push_str(&format!(
        "  network:      {} ({})\n",
        s(&p["network"]["mode"]),
        s(&p["network"]["namespace"])
    ));
    out.push_str(&format!("  counters:     {}\n", s(&p["counters"])));
    if let Some(view) = p["view"].as_object() {
        out.push_str("  view:         a fresh root holding only:\n");
        out.push_str(&format!("    read-only   {}\n", list_or(&view["system_read_only"], "-")));
        out.push_str(&format!("    read-write  {}\n", list_or(&view["read_write"], "-")));
        if view["read_only"].as_array().is_some_and(|a| !a.is_empty()) {
            out.push_str(&format!("    read-only roots {}\n", list_or(&view["read_only"], "-")));
        }
        out.push_str("    private     /tmp, /run, /dev/shm (tmpfs); /proc read-only; minimal /dev\n");
    } else {
        out.push_str("  view:         the host's (no mount namespace)\n");
    }
    if let Some(g) = p["write_grants"].as_object() {
        out.push_str(&format!(
            "  write grants: the roots are read-only except {} (Write globs / ChangeEnvelope)\n",
            list_or(
                &Value::Array(
                    [g["dirs"].as_array(), g["files"].as_array()]
                        .into_iter()
                        .flatten()
                        .flatten()
                        .cloned()
                        .collect()
                ),
                "nothing"
            )
        ));
        for note in g["notes"].as_array().into_iter().flatten() {
            out.push_str(&format!("    note: {}\n", s(note)));
        }
    }
    if let Some(g) = p["read_grants"].as_object() {
        out.push_str(&format!(
            "  read grants:  inside the roots only {} may be read or executed (Read globs; Landlock)\n",
            list_or(&g["places"], "nothing")
        ));
        for note in g["notes"].as_array().into_iter().flatten() {
            out.push_str(&format!("    note: {}\n", s(note)));
        }
    }
    match p["masks"].as_array() {
        Some(masks) if !masks.is_empty() => {
            out.push_str(&format!("  masks ({}; mode-000 read-only mounts):\n", masks.len()));
            for m in masks {
                out.push_str(&format!(
                    "    {:<5} {:<40} rule '{}'{}\n",
                    s(&m["kind"]),
                    s(&m["path"]),
                    s(&m["rule"]),
                    if m["via_symlink"].is_null() {
                        String::new()
                    } else {
                        format!(" (via symlink {})", s(&m["via_symlink"]))
                    }
                ));
            }
        }
        _ => out.push_str("  masks:        none (no deny rule matches under the roots)\n"),
    }
    if p["pinned"].as_array().is_some_and(|a| !a.is_empty()) {
        out.push_str(&format!("  pinned:       {} (cannot be renamed away)\n", list_or(&p["pinned"], "")));
    }
    if let Some(ro) = p["write_protected"].as_array().filter(|a| !a.is_empty()) {
        out.push_str(&format!("  read-only ({}; bound over themselves):\n", ro.len()));
        for r in ro {
            out.push_str(&format!("    {}  ({})\n", s(&r["path"]), s(&r["rule"])));
        }
    }
    if let Some(q) = p["quarantine"].as_object() {
        out.push_str(&format!(
            "  quarantine:   after the call, {} go to {}/CALL/, originals put back, all reported ({} entries watched)\n",
            s(&q["rule"]),
            s(&q["dir"]),
            s(&q["watched"])
        ));
    }
    match p["landlock"].as_object() {
        Some(l) => {
            out.push_str(&format!("  landlock:     ABI {}\n", s(&l["abi"])));
            for r in l["rules"].as_array().into_iter().flatten() {
                out.push_str(&format!("    {:<18} {}\n", s(&r["access"]), s(&r["path"])));
            }
            out.push_str(&format!(
                "    tcp connect {}; scopes {}\n",
                if l["tcp_handled"].as_bool() == Some(true) {
                    list_or(&l["tcp_connect"], "none allowed")
                } else {
                    "not handled".into()
                },
                list_or(&l["scopes"], "none")
            ));
        }
        None => out.push_str("  landlock:     NOT APPLIED\n"),
    }
    match p["seccomp"].as_object() {
        Some(sc) => {
            out.push_str("  seccomp:      default allow; EPERM for:\n");
            for line in sc["denied_with_eperm"].as_array().into_iter().flatten() {
                out.push_str(&format!("    {}\n", s(line)));
            }
        }
        None => out.push_str("  seccomp:      NOT APPLIED\n"),
    }
    out.push_str(&format!("  capabilities: {}\n", s(&p["capabilities"])));
    out.push_str(&format!(
        "  limits:       processes {}, memory {}, tree kill by {}, timeout {}, output {} bytes\n",
        s(&p["cgroup"]["processes"]),
        if p["cgroup"]["memory_bytes"].is_null() {
            "unlimited".into()
        } else {
            s(&p["cgroup"]["memory_bytes"])
        },
        s(&p["cgroup"]["kill"]),
        if p["timeout"].is_null() { "none".into() } else { s(&p["timeout"]) },
        s(&p["output_bytes"])
    ));
    if let Some(dropped) = p["dropped"].as_array().filter(|d| !d.is_empty()) {
        out.push_str("  DROPPED (--no-strict):\n");
        for d in dropped {
            out.push_str(&format!("    {}: {}\n", s(&d["feature"]), s(&d["consequence"])));
        }
    }
    out
}
