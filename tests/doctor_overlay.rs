//! `hullward doctor` tries `--workspace overlay` for real: where the overlay mounts (the root and
//! `$HULLWARD_HOME` on one ordinary filesystem) it says so and leaves no storage behind; where it
//! cannot, it prints why — the workspace's own refusal (storage on another filesystem than the
//! root) or the kernel's error for the mount (an upper layer on an overlayfs, which overlayfs does
//! not accept) — and `run --workspace overlay` refuses there too (exit 3). The failing setups are
//! built in a private mount namespace of their own (`unshare -m`, root only), so nothing is left
//! mounted.

#[path = "support/sandbox.rs"]
mod support;

use std::process::Command;

use support::Sandbox;

fn overlay_report(stdout: &[u8]) -> serde_json::Value {
    let v: serde_json::Value = serde_json::from_slice(stdout).expect("doctor --json prints one object");
    v["overlay_workspace"].clone()
}

#[test]
fn doctor_mounts_an_overlay_of_the_root_and_cleans_up() {
    let sb = Sandbox::new();
    let out = sb.hullward().args(["doctor", "--json"]).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ws = overlay_report(&out.stdout);
    assert_eq!(ws["works"], true, "{ws}");
    assert!(ws["error"].is_null(), "{ws}");
    let storage = sb.base.join("hullward-home/workspace");
    let left: Vec<_> = std::fs::read_dir(&storage).map(|d| d.flatten().collect()).unwrap_or_default();
    assert!(left.is_empty(), "the probe's storage is left: {left:?}");
    let plain = sb.hullward().arg("doctor").output().unwrap();
    assert!(String::from_utf8_lossy(&plain.stdout).contains("--workspace overlay  works here"));
    // Its neighbour: the real call works here too.
    sb.sh_with(&["--workspace", "overlay"], "echo x > f").expect_code(0);
    assert_eq!(sb.read("f").as_deref(), Some("x\n"));
}

/// Runs `script` (with `$HW` the hullward binary) as root in a mount namespace of its own.
fn in_private_mounts(sb: &Sandbox, script: &str) -> Option<std::process::Output> {
    use std::os::unix::fs::MetadataExt;
    // `/proc/self` belongs to the process's effective user.
    if std::fs::metadata("/proc/self").map(|m| m.uid()).ok() != Some(0) {
        eprintln!("skipped: building the failing filesystems needs root");
        return None;
    }
    let out = Command::new("unshare")
        .args(["-m", "--propagation", "private", "sh", "-ec", script])
        .env("HW", support::bin())
        .env("BASE", &sb.base)
        .env("HOME", &sb.home)
        .output()
        .expect("unshare(1)");
    Some(out)
}

#[test]
fn doctor_prints_the_kernels_error_where_the_upper_layer_cannot_live() {
    let sb = Sandbox::new();
    let Some(out) = in_private_mounts(
        &sb,
        "cd \"$BASE\"; mkdir l u w ov; mount -t overlay overlay -o lowerdir=l,upperdir=u,workdir=w ov; \
         mkdir ov/ws ov/home; cd ov/ws; export HULLWARD_HOME=\"$BASE/ov/home\"; \
         \"$HW\" doctor --json; \"$HW\" run --workspace overlay -- true 2>/dev/null || echo \"RUN=$?\"",
    ) else {
        return;
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (json, run) = stdout.split_once('\n').expect("doctor's line, then run's code");
    let ws = overlay_report(json.as_bytes());
    assert_eq!(ws["works"], false, "{ws}");
    let error = ws["error"].as_str().unwrap();
    assert!(error.contains("overlay on '") && error.contains("Invalid argument"), "{error}");
    assert!(error.contains("dmesg"), "{error}");
    assert!(!error.contains("to allow it"), "no namespace remedy for an overlay refusal: {error}");
    assert_eq!(run.trim(), "RUN=3", "run refuses there too: {stdout}");
}

#[test]
fn doctor_names_storage_on_another_filesystem_than_the_root() {
    let sb = Sandbox::new();
    let Some(out) = in_private_mounts(
        &sb,
        "cd \"$BASE\"; mkdir t; mount -t tmpfs tmpfs t; mkdir t/ws; cd t/ws; \
         export HULLWARD_HOME=\"$BASE/hullward-home\"; \"$HW\" doctor --json",
    ) else {
        return;
    };
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let ws = overlay_report(&out.stdout);
    assert_eq!(ws["works"], false, "{ws}");
    assert!(ws["error"].as_str().unwrap().contains("is on another filesystem than the root"), "{ws}");
}
