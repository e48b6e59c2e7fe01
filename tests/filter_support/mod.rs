//! Shared helpers of the `filter_*` integration tests: scratch folders outside `/tmp` (which the
//! default profile treats specially), policies loaded the way the CLI loads them, and a git that
//! ignores the machine's configuration.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use hullward::policy::load::{load, LoadRequest};
use hullward::policy::Policy;

/// A fresh, empty folder under Cargo's per-target test scratch space.
pub fn scratch(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("filter").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir.canonicalize().unwrap()
}

/// Writes `text` to `dir/rel`, creating folders.
pub fn write(dir: &Path, rel: &str, text: impl AsRef<[u8]>) -> PathBuf {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// The environment a test policy is loaded with: `HOME` set, nothing else unless asked.
pub fn env_with(home: &Path, vars: &[(&str, &str)]) -> BTreeMap<String, String> {
    let mut env: BTreeMap<String, String> =
        vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    env.insert("HOME".into(), home.display().to_string());
    env
}

/// The policy `hullward --root ROOT --deny …` would load with `env`.
pub fn policy(root: &Path, deny: &[&str], env: &BTreeMap<String, String>) -> Policy {
    let mut req = LoadRequest { cwd: root.to_path_buf(), env: env.clone(), ..Default::default() };
    req.flags.deny = deny.iter().map(|d| d.to_string()).collect();
    load(&req).unwrap()
}

/// A git command in `repo` with no global or system configuration and a fixed identity and clock.
pub fn git_command(repo: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new("git");
    cmd.args(args)
        .current_dir(repo)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_COMMITTER_NAME", "Test Author")
        .env("GIT_COMMITTER_EMAIL", "author@example.com")
        .env("GIT_AUTHOR_DATE", "2024-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2024-01-01T00:00:00Z")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE");
    cmd
}

/// Runs git (see [`git_command`]) and returns its stdout; it must succeed.
pub fn git(repo: &Path, args: &[&str]) -> Vec<u8> {
    let out = git_command(repo, args).output().unwrap();
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
}
