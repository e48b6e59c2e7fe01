//! Real-kernel check, in a test binary of its own: `check path` and `run` agree in the package-
//! managed `/usr` and in the administrator's `/usr/local`. It plants a `.env` under the host's
//! `/usr/local/share`, which every other sandboxed call walks (System directories are walked for
//! deny masks): in a binary shared with other tests, a concurrent call could find that file and
//! then see it removed before its mask, which fails that call's setup.

#[path = "support/sandbox.rs"]
mod support;

#[path = "support/attack.rs"]
mod attack;

use std::path::Path;

use attack::{all_blocked, all_worked, TRY};
use support::Sandbox;

/// A directory made for one test under a host system tree, removed afterwards.
struct HostDir(std::path::PathBuf);

impl Drop for HostDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Issue 9, point 9, in the package-managed trees: `check path` and `run` agree there too. The
/// administrator's `/usr/local` is walked like any System directory (its `.env` is masked for
/// `run` as `check` denies it); the rest of `/usr` holds the distribution's public files, where
/// neither applies deny globs (`check` allows what `run` reads).
#[test]
fn check_and_run_agree_inside_usr_local_and_the_package_managed_usr() {
    let sb = Sandbox::new();
    let tag = format!("hullward-test-{}", std::process::id());
    let local = HostDir(Path::new("/usr/local/share").join(&tag));
    let managed = HostDir(Path::new("/usr/share").join(&tag));
    support::write_mode(&local.0.join(".env"), "LOCAL_TOKEN=HW-USR-LOCAL-6021\n", 0o644);
    support::write_mode(&local.0.join("app.conf"), "HW-USR-LOCAL-CONF\n", 0o644);
    support::write_mode(&managed.0.join(".env"), "HW-USR-SHARE-PUBLIC\n", 0o644);
    let (l, m) = (local.0.display(), managed.0.display());
    let out = sb.sh(&format!(
        "{TRY} try local-env cat {l}/.env; try local-conf cat {l}/app.conf; try managed cat {m}/.env"
    ));
    out.expect_code(0);
    assert!(!out.stdout.contains("HW-USR-LOCAL-6021"), "{out}");
    all_blocked(&out, &["local-env"]);
    all_worked(&out, &["local-conf", "managed"]);
    for (path, verdict) in [
        (local.0.join(".env"), "deny"),
        (local.0.join("app.conf"), "allow"),
        (managed.0.join(".env"), "allow"),
    ] {
        let c =
            support::output(sb.hullward().args(["check", "path", "read", path.to_str().unwrap(), "--json"]));
        let v: serde_json::Value = serde_json::from_str(&c.stdout).unwrap_or_else(|e| panic!("{e}\n{c}"));
        assert_eq!(v["verdict"], verdict, "{}: {v}", path.display());
    }
}
