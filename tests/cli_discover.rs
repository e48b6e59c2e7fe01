//! Config discovery through the binary: without `--config`, the first of `./.hullward.yaml`,
//! `./.fuseraft/config/orchestration.yaml`, `$XDG_CONFIG_HOME/hullward/config.yaml` is layered
//! on the profile, `explain` names it, and inside a root the child cannot change it.

#[path = "support/sandbox.rs"]
mod support;

use support::{output, Sandbox};

/// The `sources` list of `explain --json`, run with `env` added.
fn sources(sb: &Sandbox, env: &[(&str, &str)], flags: &[&str]) -> Vec<String> {
    let mut cmd = sb.hullward();
    cmd.envs(env.iter().copied()).arg("explain").arg("--json").args(flags);
    let out = output(&mut cmd);
    out.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    v["sources"].as_array().unwrap().iter().map(|s| s.as_str().unwrap().to_string()).collect()
}

/// A config that denies `name`, so that which file was read shows in the policy too.
fn deny(name: &str) -> String {
    format!("Security:\n  FileSystemPermissions:\n    Deny: [{name}]\n")
}

#[test]
fn the_first_place_found_is_read_and_explain_names_it() {
    let sb = Sandbox::new();
    let xdg = sb.base.join("xdg");
    let xdg_s = xdg.display().to_string();
    let env = [("XDG_CONFIG_HOME", xdg_s.as_str())];
    let discovered = |p: &std::path::Path| format!("discovered config {}", p.display());

    assert_eq!(sources(&sb, &env, &[]), vec!["profile default (built-in)"]);

    let home_cfg = sb.home.join(".config/hullward/config.yaml");
    std::fs::create_dir_all(home_cfg.parent().unwrap()).unwrap();
    std::fs::write(&home_cfg, deny("home-rule")).unwrap();
    assert_eq!(
        sources(&sb, &[], &[]).last().unwrap(),
        &discovered(&home_cfg),
        "~/.config without XDG_CONFIG_HOME"
    );

    let user = xdg.join("hullward/config.yaml");
    std::fs::create_dir_all(user.parent().unwrap()).unwrap();
    std::fs::write(&user, deny("user-rule")).unwrap();
    assert_eq!(sources(&sb, &env, &[]).last().unwrap(), &discovered(&user));

    let fuseraft =
        sb.write(".fuseraft/config/orchestration.yaml", &format!("Agents: []\n{}", deny("fuseraft-rule")));
    assert_eq!(sources(&sb, &env, &[]).last().unwrap(), &discovered(&fuseraft));

    let own = sb.write(".hullward.yaml", &deny("own-rule"));
    assert_eq!(sources(&sb, &env, &[]), vec!["profile default (built-in)".to_string(), discovered(&own)]);
    let out = output(sb.hullward().envs(env).args(["check", "path", "read", "own-rule"]));
    out.expect_code(1);
    output(sb.hullward().envs(env).args(["check", "path", "read", "user-rule"])).expect_code(0);

    // On top of a profile; and `--config` replaces discovery altogether.
    assert_eq!(
        sources(&sb, &env, &["--profile", "ci"]),
        vec!["profile default (built-in)".to_string(), "profile ci (built-in)".into(), discovered(&own)]
    );
    sb.write("explicit.yaml", &deny("explicit-rule"));
    let s = sources(&sb, &env, &["--config", "explicit.yaml"]);
    assert_eq!(s.last().unwrap(), &format!("config {}", sb.root.join("explicit.yaml").display()));
    assert!(!s.iter().any(|x| x.starts_with("discovered")), "{s:?}");

    // A broken discovered file is an error of that file, not a silent fall-through.
    sb.write(".hullward.yaml", "Security:\n  Nope: 1\n");
    let out = output(sb.hullward().envs(env).args(["check", "url", "https://example.com/"]));
    out.expect_code(2);
    assert!(out.stderr.contains(".hullward.yaml:2: error: Security: unknown field `Nope`"), "{out}");
}

#[test]
fn a_discovered_file_inside_the_root_is_read_only_in_the_child() {
    let sb = Sandbox::new();
    let policy = deny("secret/**");
    sb.write(".hullward.yaml", &policy);
    sb.write(".fuseraft/config/orchestration.yaml", &deny("other/**"));
    sb.write("notes.yaml", "a: 1\n");
    let out = sb.sh("echo 'Sandbox: {Network: host}' >> .hullward.yaml; echo own=$?; \
         rm -f .hullward.yaml; echo rm=$?; \
         echo 'Security: {}' > .fuseraft/config/orchestration.yaml; echo fuseraft=$?; \
         echo 'b: 2' >> notes.yaml; echo notes=$?");
    out.expect_code(0);
    assert_ne!(out.value("own").as_deref(), Some("0"), "{out}");
    assert_ne!(out.value("rm").as_deref(), Some("0"), "{out}");
    // Not the file read this time (`.hullward.yaml` comes first), but a discovery place too.
    assert_ne!(out.value("fuseraft").as_deref(), Some("0"), "{out}");
    assert_eq!(out.stderr.matches("Read-only file system").count(), 2, "{out}");
    assert_eq!(out.value("notes").as_deref(), Some("0"), "the neighbour stays writable\n{out}");
    assert_eq!(sb.read(".hullward.yaml").as_deref(), Some(policy.as_str()));
    assert_eq!(sb.read("notes.yaml").as_deref(), Some("a: 1\nb: 2\n"));
    // The control: the same writes without hullward succeed (root ignores mode bits anyway).
    let control = sb.control("echo x >> .hullward.yaml; echo own=$?");
    assert_eq!(control.value("own").as_deref(), Some("0"), "{control}");
}
