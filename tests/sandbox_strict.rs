//! Real-kernel battery, strict and degraded paths: with the Landlock ABI pinned lower
//! (`HULLWARD_LANDLOCK_ABI`), strict mode refuses with exit 3 and says what is missing and what
//! `--no-strict` would give up; `--no-strict` runs, says what it dropped, and what remains still
//! holds. `doctor` and `explain` tell the truth about this kernel and the pin.
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

#[test]
fn strict_refuses_an_older_landlock_abi_and_says_what_no_strict_gives_up() {
    let sb = workspace();
    for abi in ["5", "0"] {
        let out = pinned(&sb, abi, &[], "echo RAN > ran.txt");
        out.expect_code(3);
        assert!(!sb.exists("ran.txt"), "the program ran under strict refusal\n{out}");
        let e = &out.stderr;
        assert!(e.contains("strict mode refuses to run"), "{out}");
        assert!(e.contains(&format!("pinned to {abi} by HULLWARD_LANDLOCK_ABI")), "{out}");
        assert!(e.contains("--no-strict would run anyway, without"), "{out}");
        if abi == "5" {
            assert!(e.contains("missing: Landlock ABI 6 (this kernel offers 5"), "{out}");
            assert!(e.contains("signals and abstract Unix sockets are not scoped"), "{out}");
        } else {
            assert!(e.contains("missing: Landlock (ABI 7 on this kernel"), "{out}");
            assert!(e.contains("file access is confined by the mount view alone"), "{out}");
        }
    }
    // The neighbour: without the pin, the same call runs.
    sb.sh("echo RAN > ran.txt").expect_code(0);
    assert_eq!(sb.read("ran.txt").as_deref(), Some("RAN\n"));
}

#[test]
fn strict_refusal_is_a_json_event_too() {
    let sb = workspace();
    let out = pinned(&sb, "4", &["--json"], "true");
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
fn no_strict_with_abi_5_runs_says_what_it_dropped_and_the_rest_holds() {
    let sb = workspace();
    sb.install_probe();
    let out = pinned(&sb, "5", &["--no-strict"], REMAINING);
    out.expect_code(0);
    assert!(
        out.stderr.contains("--no-strict: running without Landlock ABI 6")
            && out.stderr.contains("signals and abstract Unix sockets are not scoped"),
        "{out}"
    );
    assert_remaining_layers_hold(&sb, &out);
}

#[test]
fn no_strict_without_landlock_keeps_the_mount_view_masks_and_seccomp() {
    let sb = workspace();
    sb.install_probe();
    let out = pinned(&sb, "0", &["--no-strict"], REMAINING);
    out.expect_code(0);
    assert!(out.stderr.contains("--no-strict: running without Landlock (ABI 7 on this kernel"), "{out}");
    assert!(out.stderr.contains("confined by the mount view alone"), "{out}");
    assert_remaining_layers_hold(&sb, &out);
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

fn doctor(sb: &Sandbox, pin: Option<&str>, json_out: bool) -> support::Out {
    let mut c = sb.hullward();
    c.arg("doctor");
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
    // Asked independently: landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION).
    // SAFETY: the version query takes no pointer.
    let kernel_abi = unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, 0usize, 0usize, 1u32) };
    assert_eq!(kernel_abi, 7, "this battery expects the project's kernel (Landlock ABI 7)");
    let d = json(&doctor(&sb, None, true).expect_code(0).stdout);
    assert_eq!(d["landlock"]["kernel_abi"], kernel_abi, "{d}");
    assert_eq!(d["landlock"]["abi"], 7, "{d}");
    assert!(d["landlock"]["pinned"].is_null(), "{d}");
    assert_eq!(d["seccomp"], true, "{d}");
    assert_eq!(d["root"], true, "{d}");
    for ns in ["user", "mount", "network"] {
        assert_eq!(d["namespaces"][ns], true, "{ns}: {d}");
    }
    assert_eq!(d["cgroup"]["kill"], true, "{d}");
    assert!(d["cgroup"]["pids"].is_string(), "{d}");
    assert_eq!(d["strict"]["can_run"], true, "{d}");
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap();
    assert_eq!(d["kernel"], kernel.trim(), "{d}");

    let text = doctor(&sb, None, false);
    assert!(text.stdout.contains("ABI 7") && text.stdout.contains("strict mode          can run"), "{text}");

    let d5 = json(&doctor(&sb, Some("5"), true).expect_code(0).stdout);
    assert_eq!((d5["landlock"]["abi"].clone(), d5["landlock"]["pinned"].clone()), (5.into(), 5.into()));
    assert_eq!(d5["landlock"]["kernel_abi"], 7);
    assert_eq!(d5["strict"]["can_run"], false, "{d5}");
    let missing = d5["strict"]["missing"].to_string();
    assert!(missing.contains("Landlock ABI 6") && missing.contains("pinned to 5"), "{d5}");
    let feats = d5["landlock"]["features"].to_string();
    assert!(!feats.contains("scopes") && feats.contains("device ioctl"), "{d5}");
    let text5 = doctor(&sb, Some("5"), false);
    assert!(text5.stdout.contains("REFUSES (exit 3)"), "{text5}");

    let d0 = json(&doctor(&sb, Some("0"), true).expect_code(0).stdout);
    assert_eq!(d0["landlock"]["abi"], 0, "{d0}");
    assert_eq!(d0["strict"]["can_run"], false, "{d0}");
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
