//! `hullward doctor`: what this machine enforces for the current caller, promise by promise, and
//! whether strict mode runs here.
//!
//! doctor = run: it reads the same facts ([`KernelSupport::probe_env`]), builds the same plan
//! `run` would build for `true` in the current directory, and tries it with the same probe
//! `run --no-strict` uses ([`spawn::probe`]: the real child's steps — id maps, namespaces, the
//! mount view with its masks and procfs, Landlock, seccomp — ending in an exit instead of `exec`),
//! then creates a call cgroup with the policy's limits. What the probe saw refused is what `run`
//! would be refused; the promise table follows from it ([`plan::promises`]), and so does the
//! mode: namespaces, or Landlock-only where the namespaces are refused (a default container).
//! Last, `--workspace overlay` is tried for real ([`overlay_probe`]): the same plan with the
//! call's overlay layers added by the workspace itself ([`Workspace::prepare`]: storage under
//! `$HULLWARD_HOME` on the root's filesystem, the overlay mounts with the workspace's options),
//! run by the same probe child in its own mount namespace; its storage is removed afterwards.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::style::{Style, Tone};
use super::CommonArgs;
use crate::error::Error;
use crate::sandbox::cgroup::CallCgroup;
use crate::sandbox::kernel::{KernelSupport, Layer, SCOPES_ABI};
use crate::sandbox::plan::{self, Call, PromiseCheck, SandboxPlan};
use crate::sandbox::spawn;
use crate::workspace::Workspace;

pub fn run(common: &CommonArgs) -> Result<u8, Error> {
    let policy = common.policy()?;
    let mut kernel = KernelSupport::probe_env();
    let (probed, cgroup_error) = prove(&policy, &kernel);
    let overlay = overlay_probe(&policy, probed.as_ref());
    let notes = probed.as_ref().map(|p| p.notes.clone()).unwrap_or_default();
    let counters = probed.as_ref().map(crate::sandbox::spawn::counters_note);
    if let Some(p) = probed {
        kernel.refused = p.kernel.refused;
    }
    if cgroup_error.is_some() {
        kernel.cgroups.v2_controllers.clear();
    }
    let checks = plan::promises(&policy, &kernel);
    let missing = plan::missing_features(&policy, &kernel);
    let ns_ok = kernel.refuses(Layer::Namespaces).is_none();

    let landlock_ok = kernel.landlock_abi > 0 && kernel.refuses(Layer::Landlock).is_none();
    let mode = match (ns_ok, landlock_ok) {
        (true, _) => "namespaces",
        (false, true) => "landlock-only",
        (false, false) => "none",
    };

    let cg = &kernel.cgroups;
    let report = json!({
        "kernel": kernel.kernel_release,
        "mode": mode,
        "root": kernel.root,
        "privileged": kernel.privileged,
        "landlock": {
            "kernel_abi": kernel.landlock_kernel_abi,
            "abi": kernel.landlock_abi,
            "pinned": kernel.landlock_pin,
            "errata": kernel.landlock_errata,
            "features": landlock_features(kernel.landlock_abi),
        },
        "seccomp": kernel.seccomp,
        "overlayfs": crate::workspace::layers::overlayfs_available(),
        "overlay_workspace": {"works": overlay.is_ok(), "error": overlay.err()},
        "namespaces": {
            "user": ns_ok && (kernel.needs_userns() || kernel.privileged),
            "mount": ns_ok,
            "network": ns_ok,
            "fresh_proc": ns_ok && kernel.refuses(Layer::FreshProc).is_none(),
            "masks": ns_ok && kernel.refuses(Layer::Masks).is_none(),
        },
        "apparmor_restricts_userns": kernel.apparmor_blocks_userns,
        "counters": counters,
        "refused": kernel.refused.iter().map(|r| json!({"layer": format!("{:?}", r.layer), "cause": r.cause})).collect::<Vec<_>>(),
        "cgroup": {
            "v2": cg.v2_dir.as_ref().map(|p| p.display().to_string()),
            "kill": cg.can_kill_tree(),
            "pids": cg.source("pids").map(Value::from).unwrap_or_else(|| if kernel.root { Value::Null } else { json!("RLIMIT_NPROC (not root)") }),
            "memory": cg.source("memory"),
            "cpu": cg.source("cpu"),
            "error": cgroup_error,
            "remedy": cg.remedy(kernel.root),
        },
        "promises": checks.iter().map(promise_json).collect::<Vec<_>>(),
        "notes": notes,
        "strict": {
            "can_run": missing.is_empty(),
            "missing": missing.iter().map(|m| json!({
                "promise": m.promise,
                "feature": m.feature,
                "consequence": m.consequence,
                "remedy": m.remedy,
            })).collect::<Vec<_>>(),
        },
    });
    if common.json {
        println!("{report}");
    } else {
        print!("{}", render(&report, Style::for_stdout()));
    }
    Ok(0)
}

/// Builds `run`'s plan for `true` (as `--no-strict`, so that the probe runs and every refusal is
/// recorded) and creates a call cgroup with its limits. Returns the plan (its facts as the probe
/// left them, its notes: what behaves differently here) and the cgroup's error.
fn prove(
    policy: &crate::policy::Policy,
    kernel: &KernelSupport,
) -> (Option<plan::SandboxPlan>, Option<String>) {
    let mut lenient = policy.clone();
    lenient.sandbox.strict = false;
    lenient.session.yolo = false;
    let call = Call {
        argv: vec!["true".into()],
        cwd: std::env::current_dir().unwrap_or_else(|_| policy.root.clone()),
        env: std::env::vars().collect::<BTreeMap<_, _>>(),
        terminal: false,
    };
    let built = plan::build(&lenient, &call, kernel).ok();
    let limits = built.as_ref().map(plan::SandboxPlan::cgroup_limits).unwrap_or_default();
    let name = format!("call-{}-doctor", std::process::id());
    let cgroup_error = CallCgroup::create(&kernel.cgroups, &name, limits).err().map(|e| e.to_string());
    (built, cgroup_error)
}

/// Mounts the overlay of every root as an `overlay` call would, in a throwaway probe child of
/// `plan` (the plan `prove` built): `Err` is what refused it — the workspace's own refusal (no
/// overlayfs, storage on another filesystem, a mount point inside a root, no mount namespace) or
/// the kernel's error for the mount.
fn overlay_probe(policy: &crate::policy::Policy, plan: Option<&SandboxPlan>) -> Result<(), String> {
    let Some(plan) = plan else {
        return Err("no sandbox plan can be built here, so no call's overlay either".into());
    };
    let mut overlay = policy.clone();
    overlay.sandbox.workspace = crate::policy::WorkspaceMode::Overlay;
    overlay.session.review = false;
    let mut plan = plan.clone();
    let call = format!("call-{}-doctor", std::process::id());
    let workspace = Workspace::prepare(&overlay, &call, &mut plan).map_err(|e| e.to_string())?;
    // A refused overlay mount comes back with its own remedy (`spawn`'s classification).
    let tried = spawn::probe(&plan).map_err(|r| r.cause);
    // Unsettled, the workspace removes its storage when dropped.
    drop(workspace);
    tried
}

fn promise_json(p: &PromiseCheck) -> Value {
    json!({
        "promise": p.promise,
        "held_by": p.held_by(),
        "layers": p.layers.iter().map(|l| json!({"layer": l.name, "holds": l.missing.is_none(), "missing": l.missing})).collect::<Vec<_>>(),
    })
}

fn landlock_features(abi: i32) -> Vec<&'static str> {
    let all = [
        (1, "filesystem"),
        (2, "rename across directories (refer)"),
        (3, "truncate"),
        (4, "TCP bind/connect ports"),
        (5, "device ioctl"),
        (6, "signal and abstract-socket scopes"),
        (7, "audit logging"),
    ];
    all.iter().filter(|(v, _)| *v <= abi).map(|(_, f)| *f).collect()
}

/// The report as text: labels in bold, what holds in green, what is missing in red (on a terminal
/// only: [`Style::for_stdout`]).
fn render(r: &Value, style: Style) -> String {
    let s = |v: &Value| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
    let yes = |v: &Value| {
        if v.as_bool() == Some(true) {
            style.paint(Tone::Good, "yes")
        } else {
            style.paint(Tone::Bad, "NO")
        }
    };
    let bad = |text: &str| style.paint(Tone::Bad, text);
    let ll = &r["landlock"];
    let abi = ll["abi"].as_i64().unwrap_or(0);
    let mut out = style.paint(Tone::Strong, "hullward doctor: what this machine enforces for this caller");
    out.push('\n');
    out.push_str(&format!("  kernel               {}\n", s(&r["kernel"])));
    out.push_str(&format!(
        "  running as root      {}{}\n",
        yes(&r["root"]),
        if r["root"].as_bool() == Some(true) && r["privileged"].as_bool() != Some(true) {
            " (without CAP_SYS_ADMIN: namespaces through a user namespace)"
        } else {
            ""
        }
    ));
    out.push_str(&format!(
        "  Landlock             {}\n",
        if abi == 0 {
            bad("NO")
        } else {
            format!(
                "ABI {abi}{} — {}",
                if ll["pinned"].is_null() {
                    String::new()
                } else {
                    format!(" (kernel {}, pinned)", ll["kernel_abi"])
                },
                ll["features"]
                    .as_array()
                    .map(|a| a.iter().map(s).collect::<Vec<_>>().join(", "))
                    .unwrap_or_default()
            )
        }
    ));
    out.push_str(&format!("  Landlock errata      {:#x}\n", ll["errata"].as_u64().unwrap_or(0)));
    out.push_str(&format!(
        "  Landlock scopes      ABI {SCOPES_ABI} (needed only where a namespace is missing)\n"
    ));
    out.push_str(&format!("  seccomp              {}\n", yes(&r["seccomp"])));
    out.push_str(&format!(
        "  mode                 {}\n",
        match r["mode"].as_str() {
            Some("namespaces") => style.paint(Tone::Good, "namespaces: a fresh-root view with masks, Landlock and seccomp"),
            Some("landlock-only") => style.paint(
                Tone::Warn,
                "Landlock-only (no namespaces here): Landlock rules beside each denied path, seccomp refusing every socket, Landlock scopes",
            ),
            _ => bad("no namespaces and no Landlock"),
        }
    ));
    out.push_str(&format!("  overlayfs            {}\n", yes(&r["overlayfs"])));
    let ws = &r["overlay_workspace"];
    out.push_str(&format!(
        "  --workspace overlay  {}\n",
        if ws["works"].as_bool() == Some(true) {
            style.paint(Tone::Good, "works here (a real overlay mount of the root, in a probe child)")
        } else {
            format!("{}: {}", bad("NO"), s(&ws["error"]))
        }
    ));
    let ns = &r["namespaces"];
    out.push_str(&format!("  user namespaces      {}\n", yes(&ns["user"])));
    out.push_str(&format!("  mount namespaces     {}\n", yes(&ns["mount"])));
    out.push_str(&format!("  network namespaces   {}\n", yes(&ns["network"])));
    out.push_str(&format!("  fresh /proc          {}\n", yes(&ns["fresh_proc"])));
    out.push_str(&format!("  mask mounts          {}\n", yes(&ns["masks"])));
    out.push_str(&format!(
        "  per-user counters    {}\n",
        r["counters"].as_str().unwrap_or("unknown (no plan)")
    ));
    for refusal in r["refused"].as_array().into_iter().flatten() {
        out.push_str(&format!("    refused: {}\n", s(&refusal["cause"])));
    }
    let cg = &r["cgroup"];
    out.push_str(&format!(
        "  cgroup v2            {}\n",
        if cg["v2"].is_null() { bad("NO (no writable cgroup v2)") } else { s(&cg["v2"]) }
    ));
    out.push_str(&format!(
        "  tree kill            {}\n",
        if cg["kill"].as_bool() == Some(true) {
            style.paint(Tone::Good, "cgroup.kill")
        } else {
            style.paint(Tone::Warn, "fallback: subreaper + /proc walk")
        }
    ));
    for (name, key) in [("process limit", "pids"), ("memory limit", "memory"), ("CPU limit", "cpu")] {
        out.push_str(&format!(
            "  {name:<20} {}\n",
            if cg[key].is_null() { bad("NONE") } else { s(&cg[key]) }
        ));
    }
    if !cg["error"].is_null() {
        out.push_str(&format!("    the call's cgroup failed: {}\n", s(&cg["error"])));
    }
    out.push_str("  promises (the layers that hold each one here):\n");
    for p in r["promises"].as_array().into_iter().flatten() {
        let held: Vec<String> = p["held_by"].as_array().into_iter().flatten().map(s).collect();
        out.push_str(&format!(
            "    {:<52} {}\n",
            s(&p["promise"]),
            if held.is_empty() { bad("NOTHING") } else { style.paint(Tone::Good, &held.join(" + ")) }
        ));
    }
    let notes: Vec<String> = r["notes"].as_array().into_iter().flatten().map(s).collect();
    if !notes.is_empty() {
        out.push_str("  here a call behaves differently:\n");
        for n in notes {
            out.push_str(&format!("    - {n}\n"));
        }
    }
    let strict = &r["strict"];
    if strict["can_run"].as_bool() == Some(true) {
        out.push_str(&format!("  strict mode          {}\n", style.paint(Tone::Good, "can run")));
    } else {
        out.push_str(&format!("  strict mode          {}; unheld promises:\n", bad("REFUSES (exit 3)")));
        for m in strict["missing"].as_array().into_iter().flatten() {
            out.push_str(&format!("    - {}: missing {}\n", s(&m["promise"]), s(&m["feature"])));
            out.push_str(&format!("      would supply it: {}\n", s(&m["remedy"])));
            out.push_str(&format!("      --no-strict gives up: {}\n", s(&m["consequence"])));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Value {
        json!({
            "kernel": "6.1.0", "mode": "landlock-only", "root": true, "privileged": true,
            "landlock": {"abi": 0, "pinned": null, "kernel_abi": 0, "errata": 0, "features": []},
            "seccomp": true,
            "overlayfs": true,
            "overlay_workspace": {"works": false, "error": "overlay on '/w': Invalid argument"},
            "namespaces": {"user": true, "mount": true, "network": false, "fresh_proc": true, "masks": true},
            "refused": [],
            "cgroup": {"v2": null, "kill": false, "pids": null, "memory": null, "cpu": null, "error": null},
            "promises": [{"promise": "network", "held_by": []}],
            "notes": ["no private /tmp, /run or HOME"],
            "strict": {"can_run": false, "missing": []},
        })
    }

    #[test]
    fn plain_report_has_no_escapes_and_colour_marks_what_is_missing() {
        let plain = render(&sample(), Style { color: false });
        assert!(!plain.contains('\x1b'), "{plain}");
        assert!(plain.contains("  network namespaces   NO\n"), "{plain}");
        assert!(plain.contains("  --workspace overlay  NO: overlay on '/w': Invalid argument\n"), "{plain}");
        assert!(plain.contains("REFUSES (exit 3)"), "{plain}");
        assert!(plain.contains("  mode                 Landlock-only (no namespaces here)"), "{plain}");
        assert!(plain.contains("  here a call behaves differently:\n    - no private /tmp"), "{plain}");
        let painted = render(&sample(), Style { color: true });
        assert!(painted.contains("network namespaces   \x1b[31mNO\x1b[0m"), "{painted:?}");
        assert!(painted.contains("seccomp              \x1b[32myes\x1b[0m"), "{painted:?}");
        assert!(painted.contains("\x1b[31mNOTHING\x1b[0m"), "{painted:?}");
    }
}
