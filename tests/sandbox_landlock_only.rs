//! Landlock-only mode, on this kernel: hullward started under the part of Docker's default
//! seccomp profile that refuses namespaces (tests/support/docker_like.c, `nons`), so that the
//! child gets Landlock, seccomp and no_new_privs but no namespace at all. Every promise is tried
//! from inside the sandboxed child next to its legitimate neighbour, and so is every limitation
//! the mode documents (docs/architecture.md, "Landlock-only mode").

#[path = "support/sandbox.rs"]
mod support;

use std::path::PathBuf;
use std::process::Stdio;

use support::{Bg, Sandbox};

const SECRET: &str = "HW-DOTENV-SECRET-landlock-only";
const KEY: &str = "HW-DEEP-SECRET-landlock-only";

fn wrapper(sb: &Sandbox) -> PathBuf {
    let exe = sb.base.join("docker-like");
    support::compile_c(include_str!("support/docker_like.c"), &exe);
    exe
}

/// A workspace with a denied file at its top and one deeper down, their neighbours, and a
/// symlink to the denied file.
fn workspace() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(".env", &format!("{SECRET}\n"));
    sb.write("README.md", "HW-README-OK\n");
    sb.write("certs/.env.production", &format!("{KEY}\n"));
    sb.write("certs/ca.txt", "HW-CA-OK\n");
    sb.write("src/main.txt", "HW-MAIN-OK\n");
    std::os::unix::fs::symlink(".env", sb.root.join("env-link")).unwrap();
    sb.install_probe();
    sb
}

/// `hullward ARGS…` under the wrapper (namespaces refused), with `env` added.
fn contained(sb: &Sandbox, args: &[&str], env: &[(&str, &str)]) -> support::Out {
    let mut c = sb.hullward();
    c.args(args);
    let mut w = std::process::Command::new(wrapper(sb));
    w.arg("nons").arg(c.get_program()).args(c.get_args()).current_dir(&sb.root).stdin(Stdio::null());
    w.env_clear().envs(c.get_envs().filter_map(|(k, v)| Some((k, v?)))).envs(env.iter().copied());
    support::output(&mut w)
}

/// Strict `hullward run -- sh -c SCRIPT` in Landlock-only mode. Without the Landlock scopes
/// (ABI 6) on this kernel nothing stands in for the PID namespace, so strict must refuse instead:
/// that is checked, and `None` returned.
fn run(sb: &Sandbox, script: &str) -> Option<support::Out> {
    let out = contained(sb, &["run", "--timeout", "20s", "--", "sh", "-c", script], &[]);
    if landlock_abi() < 6 {
        out.expect_code(3);
        assert!(out.stderr.contains("promise: no signals to host processes"), "{out}");
        return None;
    }
    Some(out)
}

/// The Landlock ABI of this kernel, as hullward reads it.
fn landlock_abi() -> i64 {
    let out = support::output(std::process::Command::new(support::bin()).args(["doctor", "--json"]));
    let report: serde_json::Value =
        serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}\n{out}"));
    report["landlock"]["kernel_abi"].as_i64().unwrap_or(0)
}

#[test]
fn strict_runs_landlock_only_where_every_promise_still_holds() {
    let sb = workspace();
    let outside = sb.outside.join("planted.txt");
    let script = format!(
        "cat .env; cat env-link; cat certs/.env.production; cat README.md certs/ca.txt src/main.txt
         echo new > src/new.txt && echo SUBDIR-WRITE-OK
         echo x > {outside} || echo OUTSIDE-WRITE-REFUSED
         cat {secret} || echo OUTSIDE-READ-REFUSED",
        outside = outside.display(),
        secret = sb.outside.join("secret.txt").display(),
    );
    let Some(out) = run(&sb, &script) else { return };
    out.expect_code(0);
    assert!(out.stderr.contains("note: Landlock-only mode: no namespaces here"), "{out}");
    assert!(!out.all().contains(SECRET) && !out.all().contains(KEY), "a denied file was read\n{out}");
    assert!(out.stderr.contains(".env: Permission denied"), "{out}");
    assert!(out.stderr.contains("env-link: Permission denied"), "{out}");
    for neighbour in ["HW-README-OK", "HW-CA-OK", "HW-MAIN-OK", "SUBDIR-WRITE-OK", "OUTSIDE-WRITE-REFUSED"] {
        assert!(out.stdout.contains(neighbour), "{neighbour}\n{out}");
    }
    assert!(!out.all().contains("HW-OUTSIDE-SECRET"), "{out}");
    assert_eq!(sb.read("src/new.txt").as_deref(), Some("new\n"));
    assert!(!outside.exists(), "{out}");
}

#[test]
fn the_denied_file_cannot_be_moved_linked_or_removed_into_reach() {
    let sb = workspace();
    let script = "ln .env src/leak; ln certs/.env.production src/leak2; mv .env src/moved; rm -f .env; \
                  cp .env src/copy; cat src/leak src/leak2 src/moved src/copy; echo DONE";
    let Some(out) = run(&sb, script) else { return };
    out.expect_code(0);
    assert!(out.stdout.contains("DONE"), "{out}");
    assert!(!out.all().contains(SECRET) && !out.all().contains(KEY), "{out}");
    assert_eq!(sb.read(".env").as_deref(), Some(&*format!("{SECRET}\n")));
    for gone in ["src/leak", "src/leak2", "src/moved", "src/copy"] {
        assert!(!sb.exists(gone), "{gone}\n{out}");
    }
}

/// What the mode cannot do, measured: a directory that holds a denied path (or leads to one)
/// takes no new entry, loses none and renames none; every other directory does all three.
#[test]
fn a_directory_beside_a_denied_file_takes_no_new_file_and_says_so() {
    let sb = workspace();
    let script = "echo a > top.txt || echo TOP-CREATE-REFUSED; \
                  echo b > certs/new.txt || echo CERTS-CREATE-REFUSED; \
                  rm README.md || echo TOP-REMOVE-REFUSED; \
                  echo c > src/a.txt && mv src/a.txt src/b.txt && rm src/b.txt && echo SRC-ALL-OK; \
                  echo changed > README.md && echo TOP-FILE-WRITE-OK";
    let Some(out) = run(&sb, script) else { return };
    out.expect_code(0);
    for seen in [
        "TOP-CREATE-REFUSED",
        "CERTS-CREATE-REFUSED",
        "TOP-REMOVE-REFUSED",
        "SRC-ALL-OK",
        "TOP-FILE-WRITE-OK",
    ] {
        assert!(out.stdout.contains(seen), "{seen}\n{out}");
    }
    // A refused creation leaves nothing behind (no zero-byte file).
    assert!(!sb.exists("top.txt") && !sb.exists("certs/new.txt"), "{out}");
    assert_eq!(sb.read("README.md").as_deref(), Some("changed\n"));
    assert!(
        out.stderr
            .contains("no file can be created, removed or renamed in a directory that holds a denied path"),
        "{out}"
    );
    assert!(out.stderr.contains(&format!("'{}'", sb.root.join("certs").display())), "{out}");
}

#[test]
fn host_processes_sockets_and_signals_stay_out_of_reach() {
    let sb = workspace();
    let mut victim = Bg::spawn(
        std::process::Command::new("sleep")
            .arg("300")
            .env("HW_VICTIM_SECRET", "HW-VICTIM-ENV-4471")
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    let pid = victim.pid();
    let script = format!(
        "cat /proc/{pid}/environ || echo ENVIRON-REFUSED; cat /proc/self/environ >/dev/null && echo SELF-ENVIRON-OK
         ./probe kill {pid} 0; ./probe kill $$ 0
         ./probe socket 1 1 0; ./probe socket 2 1 0; ./probe socket 10 2 0; true"
    );
    let Some(out) = run(&sb, &script) else { return };
    out.expect_code(0);
    assert!(victim.running(), "{out}");
    assert!(!out.all().contains("HW-VICTIM-ENV-4471"), "{out}");
    assert!(out.stdout.contains("ENVIRON-REFUSED") && out.stdout.contains("SELF-ENVIRON-OK"), "{out}");
    let lines: Vec<&str> =
        out.stdout.lines().filter(|l| l.starts_with("OK ") || l.starts_with("ERR ")).collect();
    assert_eq!(lines.len(), 5, "{out}");
    assert!(lines[0].starts_with("ERR EPERM kill"), "a host process was signalled\n{out}");
    assert!(lines[1].starts_with("OK kill"), "{out}");
    for l in &lines[2..] {
        assert!(l.starts_with("ERR EPERM socket"), "{l}\n{out}");
    }
}

#[test]
fn without_the_scopes_strict_refuses_and_names_the_promise() {
    let sb = workspace();
    let args = ["run", "--timeout", "20s", "--", "sh", "-c", "echo RAN > src/ran.txt"];
    let out = contained(&sb, &args, &[("HULLWARD_LANDLOCK_ABI", "5")]);
    out.expect_code(3);
    assert!(!sb.exists("src/ran.txt"), "{out}");
    assert!(out.stderr.contains("promise: no signals to host processes — no layer holds it here"), "{out}");
    assert!(out.stderr.contains("creating the call's namespaces: Operation not permitted"), "{out}");
    assert!(!out.stderr.contains("promise: deny inside the roots"), "{out}");

    let args =
        ["run", "--no-strict", "--timeout", "20s", "--", "sh", "-c", "cat .env; echo RAN > src/ran.txt"];
    let out = contained(&sb, &args, &[("HULLWARD_LANDLOCK_ABI", "5")]);
    out.expect_code(0);
    assert!(out.stderr.contains("--no-strict: running without"), "{out}");
    assert!(out.stderr.contains("signal isolation"), "{out}");
    assert!(!out.stderr.contains("files matching a deny rule inside the roots are readable"), "{out}");
    assert!(!out.all().contains(SECRET), "{out}");
    assert_eq!(sb.read("src/ran.txt").as_deref(), Some("RAN\n"));
}

#[test]
fn doctor_predicts_landlock_only_mode_and_the_layer_of_each_promise() {
    let sb = workspace();
    let out = contained(&sb, &["doctor", "--json"], &[]);
    out.expect_code(0);
    let report: serde_json::Value =
        serde_json::from_str(out.stdout.trim()).unwrap_or_else(|e| panic!("{e}\n{out}"));
    assert_eq!(report["mode"], "landlock-only", "{out}");
    assert_eq!(report["strict"]["can_run"], landlock_abi() >= 6, "{out}");
    let held = |promise: &str| {
        report["promises"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["promise"] == promise)
            .map(|p| p["held_by"].to_string())
            .unwrap_or_else(|| panic!("no promise {promise}\n{out}"))
    };
    assert!(held("deny inside the roots").contains("each allowed entry beside a denied path"), "{out}");
    assert!(!held("deny inside the roots").contains("mount masks"), "{out}");
    assert!(held("no named Unix sockets of the host").contains("refusing every socket"), "{out}");
    assert!(held("host processes' memory and environment out of reach").contains("ptrace"), "{out}");
    // What the mode cannot do is said before any call: the workspace's top holds .env.
    let notes = report["notes"].to_string();
    assert!(notes.contains("no file can be created, removed or renamed"), "{out}");
    assert!(notes.contains(&sb.root.display().to_string()), "{out}");
}
