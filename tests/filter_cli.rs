//! `hullward filter` through the binary: its own environment, roots and home decide what is masked.

mod filter_support;

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use filter_support::{scratch, write};

const ENV_SECRET: &str = "ghp_planted_env_token_0123456789";
const DOTENV_SECRET: &str = "dotenv-planted-api-key-42";
const DENIED_SECRET: &str = "token-in-a-denied-file-7";
const HOME_SECRET: &str = "netrc-planted-password-5";

fn hullward(root: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hullward"));
    cmd.env_clear()
        .env("HOME", home)
        .env("GITHUB_TOKEN", ENV_SECRET)
        .env("PATH", "/usr/bin:/bin")
        .current_dir(root)
        .args(["filter", "--deny", "private/**"]);
    cmd
}

fn setup(name: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir = scratch(name);
    let root = dir.join("work");
    let home = dir.join("home");
    write(&root, ".env", format!("API_KEY={DOTENV_SECRET}\nPORT=3000\nNODE_ENV=production\n"));
    write(&root, "private/token", format!("{DENIED_SECRET}\n"));
    write(&home, ".netrc", format!("machine example.com login me password {HOME_SECRET}\n"));
    (root, home)
}

fn run(mut cmd: Command, input: &[u8]) -> Output {
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    out
}

#[test]
fn secrets_from_the_environment_the_roots_and_home_are_masked() {
    let (root, home) = setup("cli-mask");
    let input = format!(
        "token: {ENV_SECRET}\n.env: {DOTENV_SECRET} PORT=3000 NODE_ENV=production\n\
         denied: {DENIED_SECRET}\nnetrc: {HOME_SECRET}\nsplit: {}\n",
        &ENV_SECRET[..5]
    );
    let out = run(hullward(&root, &home), input.as_bytes());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(
        text,
        format!(
            "token: <secret-hidden>\n.env: <secret-hidden> PORT=3000 NODE_ENV=production\n\
             denied: <secret-hidden>\nnetrc: <secret-hidden>\nsplit: {}\n",
            &ENV_SECRET[..5]
        )
    );
}

#[test]
fn ordinary_and_non_utf8_output_is_byte_identical() {
    let (root, home) = setup("cli-identity");
    let mut input: Vec<u8> = (0..=255u8).cycle().take(1 << 20).collect();
    input.extend_from_slice(b"\nlast line without newline \xff\xfe");
    let out = run(hullward(&root, &home), &input);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout == input, "output differs from input");
}

#[test]
fn protected_diff_bodies_are_hidden() {
    let (root, home) = setup("cli-diff");
    let input = "diff --git a/private/token b/private/token\nindex 1..2 100644\n--- a/private/token\n\
                 +++ b/private/token\n@@ -1 +1 @@\n-old body\n+new body\ndiff --git a/src/a.rs b/src/a.rs\n+fn a() {}\n";
    let out = run(hullward(&root, &home), input.as_bytes());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "diff --git a/private/token b/private/token\n\
         [content hidden: 'private/token' matches a FileSystem deny rule]\n\
         diff --git a/src/a.rs b/src/a.rs\n+fn a() {}\n"
    );
}

#[test]
fn a_closed_stdout_ends_quietly() {
    let (root, home) = setup("cli-epipe");
    let mut child = hullward(&root, &home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 16];
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let block = vec![b'x'; 1 << 16];
        for _ in 0..256 {
            if stdin.write_all(&block).is_err() {
                break;
            }
        }
    });
    stdout.read_exact(&mut first).unwrap();
    drop(stdout);
    writer.join().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn debug_logs_are_masked_too() {
    let (root, home) = setup("cli-logs");
    let mut cmd = hullward(&root, &home);
    cmd.env("HULLWARD_LOG", "debug");
    let out = run(cmd, ENV_SECRET.as_bytes());
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert!(stderr.contains("secrets discovered"), "{stderr}");
    assert!(!stderr.contains(ENV_SECRET));
    let mut cmd = hullward(&root, &home);
    cmd.env("HULLWARD_LOG", "chatty");
    let out = run(cmd, b"");
    assert!(String::from_utf8(out.stderr).unwrap().contains("not a log level"));
}
