//! Bounded property tests of the whole output filter (a few seconds in `cargo test`): arbitrary
//! bytes never make it panic or show a planted secret, and generated diff-like output never shows
//! a protected body line, whatever the reads look like.

mod filter_support;

use std::sync::OnceLock;

use filter_support::{env_with, policy, scratch};
use hullward::filter::{OutputFilter, SecretSet};
use hullward::policy::Policy;
use proptest::prelude::*;

fn test_policy() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| {
        let dir = scratch("props");
        let env = env_with(&dir.join("home"), &[]);
        policy(&dir, &["secrets/**"], &env)
    })
}

fn run(secrets: &SecretSet, input: &[u8], cuts: &[usize]) -> Vec<u8> {
    let mut f = OutputFilter::new(secrets, test_policy());
    let mut out = Vec::new();
    let mut prev = 0;
    for &c in cuts {
        let c = c.min(input.len()).max(prev);
        f.push(&input[prev..c], &mut out);
        prev = c;
    }
    f.push(&input[prev..], &mut out);
    f.finish(&mut out);
    out
}

fn sorted_cuts(max: usize) -> impl Strategy<Value = Vec<usize>> {
    proptest::collection::vec(0..max.max(1), 0..12).prop_map(|mut v| {
        v.sort_unstable();
        v
    })
}

/// Secrets that overlap each other and share prefixes and suffixes.
const SECRETS: &[&str] =
    &["abcdefgh1234", "gh1234xyzw", "zzzzzzzz", "sk-planted-0001", "\u{e9}t\u{e9}-secret"];

/// Header-like and line-structure fragments mixed into arbitrary output.
const MARKUP: &[&[u8]] = &[
    b"\ndiff --git a/.env b/.env\n",
    b"\ndiff --git a/x b/x\n",
    b"\ncommit 0123456789abcdef0123456789abcdef01234567\n",
    b"\n| diff --git \"a/\\303\\251\" b/y\n",
    b"\x1b[1m",
    b"\n",
    b"\r\n",
];

fn piece() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..40),
        proptest::sample::select(SECRETS).prop_map(|s| s.as_bytes().to_vec()),
        proptest::sample::select(SECRETS).prop_map(|s| s.as_bytes()[..s.len() / 2].to_vec()),
        proptest::sample::select(MARKUP).prop_map(<[u8]>::to_vec),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn arbitrary_output_never_shows_a_planted_secret(
        pieces in proptest::collection::vec(piece(), 0..40),
        cuts in sorted_cuts(2000),
    ) {
        let secrets = SecretSet::from_values(SECRETS);
        let input = pieces.concat();
        let out = run(&secrets, &input, &cuts);
        for s in SECRETS {
            prop_assert!(memchr::memmem::find(&out, s.as_bytes()).is_none(), "{} in output", s);
        }
    }

    #[test]
    fn output_without_secrets_or_headers_is_unchanged(
        input in proptest::collection::vec(any::<u8>(), 0..3000),
        cuts in sorted_cuts(3000),
    ) {
        prop_assume!(memchr::memmem::find(&input, b"diff --").is_none());
        let secrets = SecretSet::from_values(["never-in-the-input-\u{1f512}"]);
        prop_assert_eq!(run(&secrets, &input, &cuts), input);
    }
}

/// One line of a file's diff body, as git would print it, around `token`: the text after the
/// line's prefix is chosen to look as much like a header as possible.
fn body_line(token: String) -> impl Strategy<Value = String> {
    let tricky = proptest::sample::select(vec![
        "diff --git a/x b/x",
        "diff --cc x",
        "commit 0123456789abcdef0123456789abcdef01234567",
        "From 0123456789abcdef0123456789abcdef01234567 Mon Sep 17 00:00:00 2001",
        "0123abc subject",
        "* commit 0123456",
        "| diff --git a/x b/x",
        "\x1b[1mdiff --git a/y b/y\x1b[m",
        "tag v1",
        "",
    ]);
    (0..10usize, tricky).prop_map(move |(kind, trick)| match kind {
        0 => format!("+{trick} {token}"),
        1 => format!("-{trick} {token}"),
        2 => format!(" {trick} {token}"),
        3 => format!("@@ -1,3 +1,4 @@ {trick} {token}"),
        4 => format!("index 1234567..89abcde 100644 {token}"),
        5 => format!("rename from {trick} {token}"),
        6 => format!("--- a/{trick} {token}"),
        7 => format!("+++ b/{trick} {token}"),
        8 => format!("Binary files a/{token} and b/{token} differ"),
        _ => format!("\\ No newline at end of file {token}"),
    })
}

/// A file header: protected (by a name of every shape) or not.
fn header(protected: bool) -> impl Strategy<Value = String> {
    let names: Vec<(&str, &str)> = if protected {
        vec![
            ("a/.env", "b/.env"),
            ("a/backend/.env.local", "b/backend/.env.local"),
            ("a/my dir/.env", "b/my dir/.env"),
            ("\"a/\\303\\251/.env\"", "\"b/\\303\\251/.env\""),
            ("a/.env", "b/env.txt"),
            ("a/docs/x.txt", "b/secrets/copy"),
            ("a/secrets/key.bin", "b/secrets/key.bin"),
        ]
    } else {
        vec![
            ("a/src/main.rs", "b/src/main.rs"),
            ("a/my notes.txt", "b/my notes.txt"),
            ("\"a/caf\\303\\251.txt\"", "\"b/caf\\303\\251.txt\""),
            ("a/env.txt", "b/env2.txt"),
        ]
    };
    (proptest::sample::select(names), any::<bool>()).prop_map(|((a, b), cc)| {
        if cc
            && a.trim_start_matches("\"a/").trim_start_matches("a/")
                == b.trim_start_matches("\"b/").trim_start_matches("b/")
        {
            format!("diff --cc {}", b.trim_start_matches("b/"))
        } else {
            format!("diff --git {a} {b}")
        }
    })
}

/// A file's diff: its header and body lines; protected bodies carry `LEAK`, others `KEEP`.
fn file_diff(n: usize) -> impl Strategy<Value = (String, bool)> {
    any::<bool>().prop_flat_map(move |protected| {
        let token = if protected { format!("LEAK{n}") } else { format!("KEEP{n}") };
        (header(protected), proptest::collection::vec(body_line(token), 1..8)).prop_map(move |(h, body)| {
            let mut text = h;
            text.push('\n');
            for line in body {
                text.push_str(&line);
                text.push('\n');
            }
            (text, protected)
        })
    })
}

fn log_output() -> impl Strategy<Value = String> {
    proptest::collection::vec(proptest::collection::vec(0..1000usize, 1..5), 1..5).prop_flat_map(|commits| {
        let files: Vec<_> = commits
            .iter()
            .enumerate()
            .map(|(c, ids)| (Just(c), ids.iter().map(|&i| file_diff(i)).collect::<Vec<_>>()))
            .collect();
        files.prop_map(|commits| {
            let mut out = String::new();
            for (c, files) in commits {
                out.push_str(&format!("commit {c:040x}\nAuthor: A <a@example.com>\n\n    message {c}\n\n"));
                for (text, _) in files {
                    out.push_str(&text);
                }
                out.push('\n');
            }
            out
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, .. ProptestConfig::default() })]

    #[test]
    fn generated_diffs_never_show_a_protected_body_line(log in log_output(), cuts in sorted_cuts(4000)) {
        let out = String::from_utf8(run(&SecretSet::default(), log.as_bytes(), &cuts)).unwrap();
        prop_assert!(!out.contains("LEAK"), "protected body shown:\n{}\n--- input\n{}", out, log);
        let commits = |s: &str| s.lines().filter(|l| l.starts_with("commit ")).count();
        prop_assert_eq!(commits(&out), commits(&log));
        for line in log.lines().filter(|l| l.contains("KEEP")) {
            prop_assert!(out.lines().any(|o| o == line), "ordinary line lost: {}", line);
        }
    }
}
