//! `hullward doctor`: what this kernel can enforce, and whether strict mode can run here.
//!
//! Reads the cheap facts ([`KernelSupport::probe_env`]), then proves namespaces by creating them
//! in throwaway children, and evaluates strict mode for the loaded policy exactly as `run` does.

use serde_json::{json, Value};

use super::CommonArgs;
use crate::error::Error;
use crate::sandbox::kernel::{probe_namespaces, KernelSupport, STRICT_ABI};
use crate::sandbox::plan::{missing_features, Missing};

pub fn run(common: &CommonArgs) -> Result<u8, Error> {
    let policy = common.policy()?;
    let kernel = KernelSupport::probe_env();
    let ns = probe_namespaces(kernel.root);
    let mut missing = missing_features(&policy, &kernel);
    let ns_needed = |ok: bool, what: &str, lost: &str, missing: &mut Vec<Missing>| {
        if !ok {
            missing.push(Missing { feature: format!("{what} namespaces"), consequence: lost.into() });
        }
    };
    ns_needed(ns.mount, "mount", "the private filesystem view and the deny-rule masks", &mut missing);
    ns_needed(ns.network, "network", "network isolation", &mut missing);

    let cg = &kernel.cgroups;
    let report = json!({
        "kernel": kernel.kernel_release,
        "root": kernel.root,
        "landlock": {
            "kernel_abi": kernel.landlock_kernel_abi,
            "abi": kernel.landlock_abi,
            "pinned": kernel.landlock_pin,
            "errata": kernel.landlock_errata,
            "features": landlock_features(kernel.landlock_abi),
        },
        "seccomp": kernel.seccomp,
        "namespaces": { "user": ns.user, "mount": ns.mount, "network": ns.network },
        "cgroup": {
            "v2": cg.v2_dir.as_ref().map(|p| p.display().to_string()),
            "kill": cg.can_kill_tree(),
            "pids": pids_source(&kernel),
            "memory": memory_source(&kernel),
        },
        "strict": {
            "can_run": missing.is_empty(),
            "missing": missing.iter().map(|m| json!({"feature": m.feature, "consequence": m.consequence})).collect::<Vec<_>>(),
        },
    });
    if common.json {
        println!("{report}");
    } else {
        print!("{}", render(&report));
    }
    Ok(0)
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

fn pids_source(k: &KernelSupport) -> Value {
    let cg = &k.cgroups;
    if cg.v2_controllers.iter().any(|c| c == "pids") {
        json!(format!(
            "cgroup v2 ({})",
            cg.v2_dir.as_ref().map(|p| p.display().to_string()).unwrap_or_default()
        ))
    } else if let Some(p) = &cg.v1_pids {
        json!(format!("cgroup v1 ({})", p.display()))
    } else if !k.root {
        json!("RLIMIT_NPROC (not root)")
    } else {
        Value::Null
    }
}

fn memory_source(k: &KernelSupport) -> Value {
    let cg = &k.cgroups;
    if cg.v2_controllers.iter().any(|c| c == "memory") {
        json!("cgroup v2")
    } else if let Some(p) = &cg.v1_memory {
        json!(format!("cgroup v1 ({})", p.display()))
    } else {
        Value::Null
    }
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
    let mut out = String::from("hullward doctor: what this kernel can enforce\n");
    out.push_str(&format!("  kernel               {}\n", s(&r["kernel"])));
    out.push_str(&format!("  running as root      {}\n", yes(&r["root"])));
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
    out.push_str(&format!("  strict needs ABI     {STRICT_ABI}\n"));
    out.push_str(&format!("  seccomp              {}\n", yes(&r["seccomp"])));
    let ns = &r["namespaces"];
    out.push_str(&format!("  user namespaces      {}\n", yes(&ns["user"])));
    out.push_str(&format!("  mount namespaces     {}\n", yes(&ns["mount"])));
    out.push_str(&format!("  network namespaces   {}\n", yes(&ns["network"])));
    let cg = &r["cgroup"];
    out.push_str(&format!(
        "  cgroup v2            {}\n",
        if cg["v2"].is_null() { "NO (no writable cgroup v2)".to_string() } else { s(&cg["v2"]) }
    ));
    out.push_str(&format!(
        "  tree kill            {}\n",
        if cg["kill"].as_bool() == Some(true) { "cgroup.kill" } else { "fallback: subreaper + /proc walk" }
    ));
    out.push_str(&format!(
        "  process limit        {}\n",
        if cg["pids"].is_null() { "NONE".to_string() } else { s(&cg["pids"]) }
    ));
    out.push_str(&format!(
        "  memory limit         {}\n",
        if cg["memory"].is_null() { "none".to_string() } else { s(&cg["memory"]) }
    ));
    let strict = &r["strict"];
    if strict["can_run"].as_bool() == Some(true) {
        out.push_str("  strict mode          can run\n");
    } else {
        out.push_str("  strict mode          REFUSES (exit 3); missing:\n");
        for m in strict["missing"].as_array().into_iter().flatten() {
            out.push_str(&format!(
                "    - {} (--no-strict gives up: {})\n",
                s(&m["feature"]),
                s(&m["consequence"])
            ));
        }
    }
    out
}
