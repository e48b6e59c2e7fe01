//! Real-kernel battery, strict and degraded paths, promise by promise: with the Landlock ABI
//! pinned lower (`HULLWARD_LANDLOCK_ABI`), strict mode still runs while namespaces hold every
//! promise, and refuses with exit 3 — naming the promise, the missing layers and what would supply
//! them — only where a promise has no layer left (`--net host` without the ABI 6 scopes);
//! `--no-strict` runs, says which promise got weaker, and the rest still holds. `doctor` and
//! `explain` tell the truth about this kernel and the pin.
#![allow(unsafe_code)]

#[path = "support/sandbox.rs"]
mod support;

use support::{Sandbox, SSH_KEY};

const ENV_SECRET: &str = "HW-DOTENV-SECRET-strict";

fn workspace() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(".env", &format!("{ENV_SECRET}\n"));
    sb.write("config.txt", "HW-CONFIG-OK\n");
    sb
}

fn pinned(sb: &Sandbox, abi: &str, flags: &[&str], script: &str) -> support::Out {
    let mut c = sb.run_cmd(flags, &["sh", "-c", &sb.expand(script)]);
    c.env("HULLWARD_LANDLOCK_ABI", abi);
    support::output(&mut c)
}

fn json(s: &str) -> serde_json::Value {
    serde_json::from_str(s.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {s}"))
}

/// The running kernel's Landlock ABI, asked independently of hullward.
fn kernel_abi() -> i64 {
    // SAFETY: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) takes no pointer.
    unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, 0usize, 0usize, 1u32) }.max(0)
}

/// The pins below the kernel's ABI that these tests can prove (all of them, down to none).
fn lower_pins() -> Vec<String> {
    let abi = kernel_abi();
    [5, 2, 1, 0].into_iter().filter(|p| *p < abi).map(|p| p.to_string()).collect()
}

#[test]
fn strict_runs_on_an_older_landlock_abi_when_namespaces_keep_every_promise() {
    let sb = workspace();
    sb.install_probe();
    for abi in lower_pins() {
        let out = pinned(&sb, &abi, &[], REMAINING);
        out.expect_code(0);
        assert!(!out.stderr.contains("strict mode refuses"), "ABI {abi}\n{out}");
        assert_remaining_layers_hold(&sb, &out);
        if abi == "1" {
            assert!(out.stderr.contains("EXDEV"), "ABI 1 says that cross-directory renames fail\n{out}");
        }
        std::fs::remove_file(sb.root.join("made.txt")).unwrap();
    }
}

#[test]
fn strict_refuses_net_host_without_the_scopes_and_names_promise_layer_and_remedy() {
    let sb = workspace();
    for abi in lower_pins() {
        let out = pinned(&sb, &abi, &["--net", "host"], "echo RAN > ran.txt");
        out.expect_code(3);
        assert!(!sb.exists("ran.txt"), "the program ran under strict refusal\n{out}");
        let e = &out.stderr;
        assert!(e.contains("strict mode refuses to run"), "{out}");
        assert!(e.contains("promise: no abstract sockets of the host"), "{out}");
        assert!(e.contains(&format!("pinned to {abi} by HULLWARD_LANDLOCK_ABI")), "{out}");
        assert!(e.contains("would supply it:") && e.contains("--net none or --net proxy"), "{out}");
        assert!(e.contains("--no-strict would run anyway, without"), "{out}");
        if abi != "5" {
            // ABI 5 still scopes nothing, but an ABI-0 pin loses the signal scope too, which the
            // PID namespace covers: that promise is not listed.
            assert!(!e.contains("promise: no signals to host processes"), "{out}");
        }
    }
    // The neighbour: where the kernel has the scopes, the same call runs.
    if kernel_abi() >= 6 {
        sb.sh_with(&["--net", "host"], "echo RAN > ran.txt").expect_code(0);
        assert_eq!(sb.read("ran.txt").as_deref(), Some("RAN\n"));
    }
}

#[test]
fn strict_refusal_is_a_json_event_too() {
    let sb = workspace();
    let Some(abi) = lower_pins().into_iter().next() else { return };
    let out = pinned(&sb, &abi, &["--json", "--net", "host"], "true");
    out.expect_code(3);
    let exit = out
        .stderr
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["event"] == "exit")
        .unwrap_or_else(|| panic!("no exit event\n{out}"));
    assert_eq!(exit["code"], 3, "{out}");
}

/// What must still hold without some layer. The audit netlink socket is created by the kernel
/// without any capability, so only the seccomp filter answers it with EPERM.
const REMAINING: &str = "cat .env; cat $HOMEDIR/.ssh/id_rsa; cat $OUTSIDE/secret.txt; \
     echo x > $OUTSIDE/new.txt; cat /proc/$PPID/environ; ./probe keyctl; ./probe socket 16 3 9; \
     cat config.txt; echo made > made.txt && echo WROTE";

#[test]
fn no_strict_net_host_without_the_scopes_says_which_promise_is_weaker_and_the_rest_holds() {
    let sb = workspace();
    sb.install_probe();
    for abi in lower_pins() {
        let out = pinned(
            &sb,
            &abi,
            &["--no-strict", "--net", "host"],
            &REMAINING.replace("./probe socket 2 1 0; ", ""),
        );
        out.expect_code(0);
        assert!(
            out.stderr.contains("--no-strict: running without")
                && out
                    .stderr
                    .contains("abstract Unix sockets of the host (D-Bus, X11, containerd…) are reachable"),
            "ABI {abi}\n{out}"
        );
        assert!(!out.stderr.contains("files matching a deny rule"), "masks are not dropped\n{out}");
        for s in [ENV_SECRET, SSH_KEY, "HW-OUTSIDE-SECRET"] {
            assert!(!out.all().contains(s), "{s} leaked\n{out}");
        }
        assert!(!sb.outside.join("new.txt").exists(), "{out}");
        assert!(out.stdout.contains("ERR EPERM keyctl"), "seccomp is gone\n{out}");
        assert_eq!(sb.read("made.txt").as_deref(), Some("made\n"));
        std::fs::remove_file(sb.root.join("made.txt")).unwrap();
    }
}

#[track_caller]
fn assert_remaining_layers_hold(sb: &Sandbox, out: &support::Out) {
    for s in [ENV_SECRET, SSH_KEY, "HW-OUTSIDE-SECRET"] {
        assert!(!out.all().contains(s), "{s} leaked\n{out}");
    }
    assert!(!sb.outside.join("new.txt").exists(), "{out}");
    assert!(out.stdout.contains("ERR EPERM keyctl"), "seccomp is gone\n{out}");
    assert!(out.stdout.contains("ERR EPERM socket"), "seccomp is gone\n{out}");
    assert!(out.stdout.contains("HW-CONFIG-OK") && out.stdout.contains("WROTE"), "{out}");
    assert_eq!(sb.read("made.txt").as_deref(), Some("made\n"));
}

fn doctor(sb: &Sandbox, pin: Option<&str>, flags: &[&str], json_out: bool) -> support::Out {
    let mut c = sb.hullward();
    c.arg("doctor").args(flags);
    if json_out {
        c.arg("--json");
    }
    if let Some(p) = pin {
        c.env("HULLWARD_LANDLOCK_ABI", p);
    }
    support::output(&mut c)
}

#[test]
fn doctor_tells_the_truth_about_this_kernel_and_the_pin() {
    let sb = Sandbox::new();
    let kernel_abi = kernel_abi();
    let d = json(&doctor(&sb, None, &[], true).expect_code(0).stdout);
    assert_eq!(d["landlock"]["kernel_abi"], kernel_abi, "{d}");
    assert_eq!(d["landlock"]["abi"], kernel_abi, "{d}");
    assert!(d["landlock"]["pinned"].is_null(), "{d}");
    assert_eq!(d["seccomp"], true, "{d}");
    assert_eq!(d["root"], true, "{d}");
    // The probe really built the view: namespaces, a fresh /proc and a mask clone.
    for ns in ["mount", "network", "fresh_proc", "masks"] {
        assert_eq!(d["namespaces"][ns], true, "{ns}: {d}");
    }
    assert!(d["cgroup"]["pids"].is_string(), "{d}");
    assert!(d["cgroup"]["error"].is_null(), "{d}");
    assert_eq!(d["strict"]["can_run"], true, "{d}");
    let held = |d: &serde_json::Value, promise: &str| {
        d["promises"]
            .as_array()
            .and_then(|a| a.iter().find(|p| p["promise"] == promise))
            .map(|p| p["held_by"].to_string())
            .unwrap_or_else(|| panic!("no promise {promise}: {d}"))
    };
    assert!(held(&d, "deny inside the roots").contains("mount masks"), "{d}");
    assert!(held(&d, "bounded processes").contains("pids"), "{d}");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(d["kernel"], kernel.trim(), "{d}");

    let text = doctor(&sb, None, &[], false);
    assert!(text.stdout.contains(&format!("ABI {kernel_abi}")), "{text}");
    assert!(text.stdout.contains("strict mode          can run"), "{text}");
    assert!(text.stdout.contains("no signals to host processes"), "{text}");

    for abi in lower_pins() {
        let n: i64 = abi.parse().unwrap();
        let dp = json(&doctor(&sb, Some(&abi), &[], true).expect_code(0).stdout);
        assert_eq!((dp["landlock"]["abi"].clone(), dp["landlock"]["pinned"].clone()), (n.into(), n.into()));
        assert_eq!(dp["landlock"]["kernel_abi"], kernel_abi);
        // Namespaces hold every promise whatever the ABI.
        assert_eq!(dp["strict"]["can_run"], true, "{dp}");
        assert!(held(&dp, "no signals to host processes").contains("PID namespace"), "{dp}");
        assert!(
            held(&dp, "host processes' memory and environment out of reach").contains("fresh /proc"),
            "{dp}"
        );
        assert!(!held(&dp, "no signals to host processes").contains("Landlock"), "{dp}");
        // Without a network namespace, the scopes were the only layer.
        let host = json(&doctor(&sb, Some(&abi), &["--net", "host"], true).expect_code(0).stdout);
        assert_eq!(host["strict"]["can_run"], false, "{host}");
        let missing = host["strict"]["missing"].to_string();
        assert!(
            missing.contains("no abstract sockets of the host")
                && missing.contains(&format!("pinned to {abi}")),
            "{host}"
        );
        let text = doctor(&sb, Some(&abi), &["--net", "host"], false);
        assert!(
            text.stdout.contains("REFUSES (exit 3)") && text.stdout.contains("would supply it"),
            "{text}"
        );
    }
}

#[test]
fn explain_lists_each_mask_with_the_rule_that_made_it() {
    let sb = workspace();
    sb.write("secrets/api.key", "k\n");
    sb.write("sub/.env.local", "x\n");
    sb.write("keys/id_rsa", "x\n");
    let mut c = sb.hullward();
    c.args(["explain", "--deny", "secrets/**", "--json", "--", "ls"]);
    let out = support::output(&mut c);
    out.expect_code(0);
    let v = json(&out.stdout);
    let masks = v["plan"]["masks"].as_array().unwrap_or_else(|| panic!("no plan.masks\n{out}"));
    let rule_of = |rel: &str| {
        let path = sb.root.join(rel).display().to_string();
        masks
            .iter()
            .find(|m| m["path"] == path.as_str())
            .map(|m| (m["kind"].as_str().unwrap().to_string(), m["rule"].as_str().unwrap().to_string()))
            .unwrap_or_else(|| panic!("{rel} not masked: {masks:#?}"))
    };
    assert_eq!(rule_of("secrets"), ("dir".into(), "secrets/**".into()));
    assert_eq!(rule_of(".env"), ("file".into(), "**/.env".into()));
    assert_eq!(rule_of("sub/.env.local"), ("file".into(), "**/.env.*".into()));
    assert_eq!(rule_of("keys/id_rsa"), ("file".into(), "**/id_rsa".into()));
    // The neighbour: an ordinary file is not masked.
    assert!(!masks.iter().any(|m| m["path"].as_str().unwrap().ends_with("config.txt")), "{masks:#?}");

    let mut c = sb.hullward();
    c.args(["explain", "--deny", "secrets/**", "--", "ls"]);
    let text = support::output(&mut c);
    let line = text
        .stdout
        .lines()
        .find(|l| l.contains(&sb.root.join("secrets").display().to_string()))
        .unwrap_or_else(|| panic!("{text}"));
    assert!(line.contains("dir") && line.contains("'secrets/**'"), "{line}");
}
