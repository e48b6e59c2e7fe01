//! The output filter on real git output: a repository with protected and ordinary files (names with
//! spaces and non-ASCII bytes, a binary file, a rename out of and a copy into a protected path, a
//! merge conflict on a protected file), run through `git diff`, `show`, `log -p`, `format-patch`.

mod filter_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use filter_support::{env_with, git, git_command, policy, scratch, write};
use hullward::filter::{OutputFilter, SecretSet};
use hullward::policy::Policy;

/// Every protected file's content carries `PROT`, every ordinary file's `ORD`.
fn make_repo(dir: &Path) -> PathBuf {
    let repo = dir.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    git(&repo, &["init", "-q", "-b", "main"]);
    let files: &[(&str, &[u8])] = &[
        (".env", b"API_KEY=PROT-env-value-1\nPORT=PROT-port\n"),
        ("backend/.env.local", b"DB_PASSWORD=PROT-backend-2\n"),
        ("secrets/x", b"PROT-secrets-token-3\n"),
        ("secrets/key.bin", b"\x00\x01PROT-binary\x02\xff\x00"),
        ("my dir/.env", b"TOKEN=PROT-spaced-4\n"),
        ("\u{e9}/.env", b"SECRET=PROT-accent-5\n"),
        ("src/main.rs", b"fn main() {}\n// ORD-main\n"),
        ("docs/my notes.txt", b"ORD-notes\n"),
        ("caf\u{e9}/na\u{ef}ve.txt", b"ORD-cafe\n"),
        ("img.bin", b"\x00\x01ORD-binary\x02\xff"),
    ];
    for (name, content) in files {
        write(&repo, name, content);
    }
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "add files"]);
    for (name, content) in files {
        let mut changed = content.to_vec();
        let marker: &[u8] =
            if content.windows(4).any(|w| w == b"PROT") { b"PROT-more\n" } else { b"ORD-more\n" };
        changed.extend_from_slice(marker);
        write(&repo, name, changed);
    }
    git(&repo, &["commit", "-q", "-am", "change everything"]);

    // A merge whose conflict on a protected file is resolved by hand: `diff --cc` output.
    git(&repo, &["checkout", "-q", "-b", "side"]);
    write(&repo, "backend/.env.local", "DB_PASSWORD=PROT-side\n");
    write(&repo, "src/main.rs", "fn main() {}\n// ORD-side\n");
    git(&repo, &["commit", "-q", "-am", "side change"]);
    git(&repo, &["checkout", "-q", "main"]);
    write(&repo, "backend/.env.local", "DB_PASSWORD=PROT-main\n");
    write(&repo, "src/main.rs", "fn main() {}\n// ORD-mainline\n");
    git(&repo, &["commit", "-q", "-am", "main change"]);
    let merge = git_command(&repo, &["merge", "-q", "side"]).output().unwrap();
    assert!(!merge.status.success(), "the merge was meant to conflict");
    write(&repo, "backend/.env.local", "DB_PASSWORD=PROT-merged-6\n");
    write(&repo, "src/main.rs", "fn main() {}\n// ORD-merged\n");
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "merge side"]);

    // A rename out of a protected name, a copy into a protected folder.
    git(&repo, &["mv", ".env", "env.txt"]);
    std::fs::copy(repo.join("docs/my notes.txt"), repo.join("secrets/copy of notes.txt")).unwrap();
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "rename and copy"]);

    // Staged and unstaged changes.
    write(&repo, "my dir/.env", "TOKEN=PROT-staged-7\n");
    write(&repo, "docs/my notes.txt", "ORD-staged\n");
    git(&repo, &["add", "-A"]);
    write(&repo, "secrets/x", "PROT-unstaged-8\n");
    write(&repo, "src/main.rs", "fn main() {}\n// ORD-unstaged\n");
    repo
}

struct Fixture {
    repo: PathBuf,
    policy: Policy,
    env: BTreeMap<String, String>,
}

fn fixture(name: &str) -> Fixture {
    let dir = scratch(name);
    let repo = make_repo(&dir);
    let env = env_with(&dir.join("home"), &[("GITHUB_TOKEN", "ghp_planted_env_token_42")]);
    let policy = policy(&repo, &["secrets/**"], &env);
    Fixture { repo, policy, env }
}

/// Runs `raw` through a filter in reads of `chunk` bytes.
fn filtered(raw: &[u8], secrets: &SecretSet, policy: &Policy, chunk: usize) -> Vec<u8> {
    let mut f = OutputFilter::new(secrets, policy);
    let mut out = Vec::new();
    for piece in raw.chunks(chunk.max(1)) {
        f.push(piece, &mut out);
    }
    f.finish(&mut out);
    out
}

const HIDDEN: &str = "<hidden line>";

/// What the filter must print, by a simpler reading that knows this repository's protected names:
/// every body after a header naming `/.env` or `secrets/` is replaced, up to the next file or
/// commit header.
fn reference(raw: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut hiding = false;
    for line in raw.split_inclusive('\n') {
        let header = ["diff --git ", "diff --cc ", "diff --combined "].iter().any(|h| line.starts_with(h));
        let commit = line.starts_with("commit ")
            || (line.starts_with("From ") && line.trim_end().ends_with(" Mon Sep 17 00:00:00 2001"));
        if header {
            out.push(line.to_string());
            hiding =
                line.contains("/.env") || line.contains("secrets/") || line.starts_with("diff --cc backend");
            if hiding {
                out.push(HIDDEN.to_string());
            }
        } else if commit {
            hiding = false;
            out.push(line.to_string());
        } else if !hiding {
            out.push(line.to_string());
        }
    }
    out
}

fn assert_matches_reference(what: &str, raw: &[u8], out: &[u8]) {
    let raw = String::from_utf8(raw.to_vec()).unwrap();
    let out = String::from_utf8(out.to_vec()).unwrap();
    let want = reference(&raw);
    let got: Vec<&str> = out.split_inclusive('\n').collect();
    assert_eq!(got.len(), want.len(), "{what}: line count\n--- got\n{out}\n--- raw\n{raw}");
    for (g, w) in got.iter().zip(&want) {
        if w == HIDDEN {
            assert!(
                g.starts_with("[content hidden: '") && g.ends_with("' matches a FileSystem deny rule]\n"),
                "{what}: expected a hidden line, got {g:?}"
            );
        } else {
            assert_eq!(g, w, "{what}");
        }
    }
    assert!(!out.contains("PROT"), "{what}: protected content shown:\n{out}");
    let commits = |s: &str| s.lines().filter(|l| l.starts_with("commit ") || l.starts_with("From ")).count();
    assert_eq!(commits(&out), commits(&raw), "{what}: a commit header was swallowed");
}

const COMMANDS: &[&[&str]] = &[
    &["log", "-p"],
    &["log", "-p", "-M", "-C", "--find-copies-harder"],
    &["log", "-p", "--cc"],
    &["log", "-p", "-m", "--first-parent"],
    &["show", "HEAD"],
    &["show", "HEAD~1"],
    &["show", "--stat", "-p", "HEAD~4"],
    &["format-patch", "--stdout", "--root", "HEAD"],
    &["diff", "HEAD~4", "HEAD"],
    &["diff", "--binary", "HEAD~4", "HEAD"],
    &["diff", "-C", "--find-copies-harder", "HEAD~1", "HEAD"],
    &["diff", "--cached"],
    &["diff"],
];

#[test]
fn real_git_output_hides_every_protected_body_and_nothing_else() {
    let fx = fixture("git-reference");
    let none = SecretSet::default();
    for args in COMMANDS {
        let raw = git(&fx.repo, args);
        assert!(!raw.is_empty(), "{args:?} printed nothing");
        for chunk in [1 << 20, 4096, 7] {
            let out = filtered(&raw, &none, &fx.policy, chunk);
            assert_matches_reference(&format!("{args:?} in reads of {chunk}"), &raw, &out);
        }
    }
}

#[test]
fn hidden_lines_name_the_protected_file_unquoted() {
    let fx = fixture("git-names");
    let none = SecretSet::default();
    let mut all = String::new();
    for args in COMMANDS {
        let raw = git(&fx.repo, args);
        all.push_str(&String::from_utf8(filtered(&raw, &none, &fx.policy, 1 << 20)).unwrap());
    }
    for name in [
        ".env",
        "backend/.env.local",
        "secrets/x",
        "secrets/key.bin",
        "my dir/.env",
        "\u{e9}/.env",
        "secrets/copy of notes.txt",
    ] {
        let line = format!("[content hidden: '{name}' matches a FileSystem deny rule]");
        assert!(all.contains(&line), "no hidden line for {name}");
    }
    // The rename keeps its header and hides under the protected (old) name.
    assert!(all.contains("diff --git a/.env b/env.txt\n[content hidden: '.env' matches"), "{all}");
    // Quoted non-ASCII headers are kept as git printed them.
    assert!(all
        .contains("diff --git \"a/\\303\\251/.env\" \"b/\\303\\251/.env\"\n[content hidden: '\u{e9}/.env'"));
}

#[test]
fn decorated_output_hides_the_same_bodies() {
    let fx = fixture("git-decorated");
    let none = SecretSet::default();
    let plain = filtered(&git(&fx.repo, &["log", "-p"]), &none, &fx.policy, 1 << 20);
    let colour = filtered(&git(&fx.repo, &["log", "-p", "--color=always"]), &none, &fx.policy, 4096);
    assert_eq!(String::from_utf8(strip_escapes(&colour)).unwrap(), String::from_utf8(plain).unwrap());
    for args in [
        &["log", "-p", "--graph"][..],
        &["log", "-p", "--graph", "--color=always", "-m"],
        &["log", "-p", "--oneline"],
        &["log", "-p", "--format=%H"],
        &["log", "-p", "--no-prefix"],
        &["log", "-p", "--src-prefix=old/", "--dst-prefix=new/"],
    ] {
        let raw = git(&fx.repo, args);
        let out = String::from_utf8(filtered(&raw, &none, &fx.policy, 4096)).unwrap();
        assert!(!out.contains("PROT"), "{args:?}: protected content shown:\n{out}");
        for kept in ["ORD-notes", "ORD-cafe", "ORD-mainline"] {
            assert!(out.contains(kept), "{args:?}: lost {kept}:\n{out}");
        }
        let heads =
            |s: &str| s.lines().filter(|l| l.contains("diff --git") || l.contains("diff --cc")).count();
        assert_eq!(heads(&out), heads(&String::from_utf8_lossy(&raw)), "{args:?}");
    }
    // Every commit of `--oneline` survives.
    let oneline = git(&fx.repo, &["log", "--oneline"]);
    let out =
        String::from_utf8(filtered(&git(&fx.repo, &["log", "-p", "--oneline"]), &none, &fx.policy, 4096))
            .unwrap();
    for subject in String::from_utf8(oneline).unwrap().lines() {
        assert!(out.lines().any(|l| l == subject), "swallowed {subject}");
    }
}

#[test]
fn secrets_are_masked_in_git_output_that_is_not_a_diff() {
    let fx = fixture("git-mask");
    let secrets = SecretSet::discover(&fx.policy, &fx.env);
    for value in
        ["PROT-merged-6", "PROT-unstaged-8", "PROT-staged-7", "PROT-accent-5", "ghp_planted_env_token_42"]
    {
        assert!(secrets.contains(value.as_bytes()), "{value} not discovered");
    }
    assert!(!secrets.contains(b"PROT-port"), "PORT is not a secret name");
    let shown = git(&fx.repo, &["show", "HEAD:backend/.env.local"]);
    assert_eq!(filtered(&shown, &secrets, &fx.policy, 5), b"DB_PASSWORD=<secret-hidden>\n");
    let grep = git(&fx.repo, &["grep", "-h", "PROT", "--", "my dir", "secrets", "\u{e9}"]);
    let out = String::from_utf8(filtered(&grep, &secrets, &fx.policy, 3)).unwrap();
    assert!(
        !out.contains("PROT-staged-7") && !out.contains("PROT-unstaged-8") && !out.contains("PROT-accent-5")
    );
    for args in COMMANDS {
        let out = filtered(&git(&fx.repo, args), &secrets, &fx.policy, 4096);
        for value in ["PROT-merged-6", "PROT-unstaged-8", "ghp_planted_env_token_42"] {
            assert!(memchr::memmem::find(&out, value.as_bytes()).is_none(), "{args:?} shows {value}");
        }
    }
}

fn strip_escapes(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == 0x1b && s.get(i + 1) == Some(&b'[') {
            i += 2;
            while i < s.len() && !(0x40..=0x7e).contains(&s[i]) {
                i += 1;
            }
            i += 1;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    out
}
