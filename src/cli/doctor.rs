//! `hullward doctor`: what this machine enforces for the current caller, promise by promise, and
//! whether strict mode runs here.
//!
//! doctor = run: it reads the same facts ([`KernelSupport::probe_env`]), builds the same plan
//! `run` would build for `true` in the current directory, and tries it with the same probe
//! `run --no-strict` uses ([`spawn::probe`]: the real child's steps — id maps, namespaces, the
//! mount view with its masks and procfs, Landlock, seccomp — ending in an exit instead of `exec`),
//! then creates a call cgroup with the policy's limits. What the probe saw refused is what `run`
//! would be refused; the promise table follows from it ([`plan::promises`]).

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::CommonArgs;
use crate::error::Error;
use crate::sandbox::cgroup::CallCgroup;
use crate::sandbox::kernel::{KernelSupport, Layer, SCOPES_ABI};
use crate::sandbox::plan::{self, Call, PromiseCheck};

pub fn run(common: &CommonArgs) -> Result<u8, Error> {
    let policy = common.policy()?;
    let mut kernel = KernelSupport::probe_env();
    let (probed, cgroup_error) = prove(&policy, &kernel);
    if let Some(k) = probed {
        kernel.refused = k.refused;
    }
    if cgroup_error.is_some() {
        kernel.cgroups.v2_controllers.clear();
    }
    let checks = plan::promises(&policy, &kernel);
    let missing = plan::missing_features(&policy, &kernel);
    let ns_ok = kernel.refuses(Layer::Namespaces).is_none();

    let cg = &kernel.cgroups;
    let report = json!({
        "kernel": kernel.kernel_release,
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
        "namespaces": {
            "user": ns_ok && kernel.needs_userns() || kernel.privileged,
            "mount": ns_ok,
            "network": ns_ok,
            "fresh_proc": ns_ok && kernel.refuses(Layer::FreshProc).is_none(),
            "masks": ns_ok && kernel.refuses(Layer::Masks).is_none(),
        },
        "apparmor_restricts_userns": kernel.apparmor_blocks_userns,
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
        print!("{}", render(&report));
    }
    Ok(0)
}

/// Builds `run`'s plan for `true` (as `--no-strict`, so that the probe runs and every refusal is
/// recorded) and creates a call cgroup with its limits. Returns the facts as the probe left them
/// and the cgroup's error.
fn prove(policy: &crate::policy::Policy, kernel: &KernelSupport) -> (Option<KernelSupport>, Option<String>) {
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
    (built.map(|p| p.kernel), cgroup_error)
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

fn yes(v: &Value) -> &'static str {
    if v.as_bool() == Some(true) {
        "yes"
    } else {
        "NO"
    }
}

fn render(r: &Value) -> String {
    let s = |v: &Value| v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
    let ll = &r["landlock"];
    let abi = ll["abi"].as_i64().unwrap_or(0);
    let mut out = String::from("hullward doctor: what this machine enforces for this caller\n");
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
            "NO".to_string()
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
    let ns = &r["namespaces"];
    out.push_str(&format!("  user namespaces      {}\n", yes(&ns["user"])));
    out.push_str(&format!("  mount namespaces     {}\n", yes(&ns["mount"])));
    out.push_str(&format!("  network namespaces   {}\n", yes(&ns["network"])));
    out.push_str(&format!("  fresh /proc          {}\n", yes(&ns["fresh_proc"])));
    out.push_str(&format!("  mask mounts          {}\n", yes(&ns["masks"])));
    for refusal in r["refused"].as_array().into_iter().flatten() {
        out.push_str(&format!("    refused: {}\n", s(&refusal["cause"])));
    }
    let cg = &r["cgroup"];
    out.push_str(&format!(
        "  cgroup v2            {}\n",
        if cg["v2"].is_null() { "NO (no writable cgroup v2)".to_string() } else { s(&cg["v2"]) }
    ));
    out.push_str(&format!(
        "  tree kill            {}\n",
        if cg["kill"].as_bool() == Some(true) { "cgroup.kill" } else { "fallback: subreaper + /proc walk" }
    ));
    for (name, key) in [("process limit", "pids"), ("memory limit", "memory"), ("CPU limit", "cpu")] {
        out.push_str(&format!(
            "  {name:<20} {}\n",
            if cg[key].is_null() { "NONE".to_string() } else { s(&cg[key]) }
        ));
    }
    if !cg["error"].is_null() {
        out.push_str(&format!("    the call's cgroup failed: {}\n", s(&cg["error"])));
    }
    out.push_str("  promises (the layers that hold each one here):\n");
    for p in r["promises"].as_array().into_iter().flatten() {
        let held: Vec<String> = p["held_by"].as_array().into_iter().flatten().map(s).collect();
        out.push_str(&format!(
            "    {:<36} {}\n",
            s(&p["promise"]),
            if held.is_empty() { "NOTHING".to_string() } else { held.join(" + ") }
        ));
    }
    let strict = &r["strict"];
    if strict["can_run"].as_bool() == Some(true) {
        out.push_str("  strict mode          can run\n");
    } else {
        out.push_str("  strict mode          REFUSES (exit 3); unheld promises:\n");
        for m in strict["missing"].as_array().into_iter().flatten() {
            out.push_str(&format!("    - {}: missing {}\n", s(&m["promise"]), s(&m["feature"])));
            out.push_str(&format!("      would supply it: {}\n", s(&m["remedy"])));
            out.push_str(&format!("      --no-strict gives up: {}\n", s(&m["consequence"])));
        }
    }
    out
}
