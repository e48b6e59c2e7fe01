//! Real-kernel battery, the walk index: a call replays what the previous call's walk found in the
//! directories that did not change, and whatever changed between two calls is protected in the
//! second exactly as a fresh walk would protect it.
//!
//! A denied file in a directory that did not change stays masked when its directory is replayed.
//! Each case makes a denied entry appear between two calls in another way (a new file deep in a
//! recorded tree, a hard link, a rename from outside, a replaced directory) and shows the second
//! call cannot read it while its neighbour stays readable; `control` proves the file is readable
//! without hullward (we run as root: mode bits never stop a read).
#![allow(unsafe_code)]

#[path = "support/sandbox.rs"]
mod support;

use std::time::Duration;

use support::Sandbox;

const SECRET: &str = "HW-INDEX-SECRET-5d21";

/// Longer than the clock tick a recorded directory's ctime must predate.
fn settle() {
    std::thread::sleep(Duration::from_millis(30));
}

fn index_files(sb: &Sandbox) -> usize {
    std::fs::read_dir(sb.base.join("hullward-home/index")).map_or(0, |d| d.count())
}

/// Whether the tree lies on a filesystem the index trusts (ext4, XFS, Btrfs, tmpfs, ...): only
/// there is the index written at all.
fn indexed_filesystem(sb: &Sandbox) -> bool {
    let out = std::process::Command::new("stat").args(["-f", "-c", "%t"]).arg(&sb.root).output().unwrap();
    let magic = String::from_utf8_lossy(&out.stdout).trim().to_string();
    ["ef53", "58465342", "9123683e", "1021994", "f2f52010", "2fc12fc1"].contains(&magic.as_str())
}

#[test]
fn what_changes_between_two_calls_is_protected_in_the_second() {
    let sb = Sandbox::new();
    sb.write("src/deep/x/readme.md", "HW-NEIGHBOUR-OK\n");
    sb.write("src/deep/y/ok.txt", "HW-OK-2\n");
    sb.write("docs/a.md", "doc\n");
    sb.write("keys/.env", &format!("K={SECRET}-recorded\n"));
    sb.write("big/old/notes.txt", "old\n");
    std::fs::write(sb.outside.join("plain"), format!("K={SECRET}-renamed\n")).unwrap();
    std::fs::write(sb.outside.join("linked"), format!("K={SECRET}-linked\n")).unwrap();
    settle();
    sb.sh("cat src/deep/x/readme.md").expect_code(0);
    if indexed_filesystem(&sb) {
        // One index per walk: the roots, and the read-only and System trees walked apart.
        assert!(index_files(&sb) >= 1, "the first call recorded no index");
    }

    type Case<'a> = (&'a str, &'a str, Box<dyn Fn() + 'a>);
    let cases: [Case<'_>; 4] = [
        (
            "a new .env deep in a recorded tree",
            "src/deep/x/.env",
            Box::new(|| {
                sb.write("src/deep/x/.env", &format!("K={SECRET}-new\n"));
            }),
        ),
        (
            "a hard link under a denied name",
            "src/deep/y/.env.local",
            Box::new(|| {
                std::fs::hard_link(sb.outside.join("linked"), sb.root.join("src/deep/y/.env.local")).unwrap();
            }),
        ),
        (
            "a rename from outside the root",
            "docs/.env.production",
            Box::new(|| {
                std::fs::rename(sb.outside.join("plain"), sb.root.join("docs/.env.production")).unwrap();
            }),
        ),
        (
            "a directory replaced by another",
            "big/old/.env",
            Box::new(|| {
                std::fs::remove_dir_all(sb.root.join("big/old")).unwrap();
                sb.write("big/old/.env", &format!("K={SECRET}-replaced\n"));
                sb.write("big/old/notes.txt", "new\n");
            }),
        ),
    ];
    for (what, denied, change) in cases {
        settle();
        sb.sh("true").expect_code(0);
        change();
        let script = format!("cat {denied}; cat keys/.env; echo; cat src/deep/x/readme.md");
        let control = sb.control(&script);
        assert!(control.stdout.contains(SECRET), "{what}: the control cannot read it\n{control}");
        let out = sb.sh(&script);
        assert!(!out.all().contains(SECRET), "{what}: the second call read it\n{out}");
        assert!(out.stdout.contains("HW-NEIGHBOUR-OK"), "{what}: the neighbour is unreadable\n{out}");
    }
}

/// A denied file rewritten in place between two calls (its directory's ctime does not move):
/// the second call cannot read it, and its new value is masked in the output — secret discovery
/// reads the protected files again on every call, the index keeps no value of theirs.
#[test]
fn a_denied_file_rewritten_in_place_is_masked_with_its_new_value() {
    let sb = Sandbox::new();
    sb.write("app/.env", &format!("API_TOKEN={SECRET}-first\n"));
    sb.write("app/readme.md", "HW-NEIGHBOUR-OK\n");
    settle();
    sb.sh("true").expect_code(0);
    settle();
    sb.sh("true").expect_code(0);
    let ctime =
        || std::os::unix::fs::MetadataExt::ctime_nsec(&std::fs::metadata(sb.root.join("app")).unwrap());
    let before = ctime();
    std::fs::write(sb.root.join("app/.env"), format!("API_TOKEN={SECRET}-rewritten\n")).unwrap();
    assert_eq!(ctime(), before, "an in-place rewrite moved the directory's ctime");
    let script = format!("cat app/.env; echo {SECRET}-rewritten; cat app/readme.md");
    let control = sb.control(&script);
    assert!(control.stdout.contains(&format!("API_TOKEN={SECRET}-rewritten")), "{control}");
    let out = sb.sh(&script);
    assert!(!out.all().contains(SECRET), "the rewritten value was shown\n{out}");
    assert!(out.stdout.contains("HW-NEIGHBOUR-OK"), "the neighbour is unreadable\n{out}");
}

/// The walk after a call replays the previous walk's directory stamps: what a call plants deep
/// in recorded directories — a new file, a directory renamed in, a hard link, a replaced
/// directory — is still found and moved out, and the neighbours the call wrote stay.
#[test]
fn what_a_call_plants_in_recorded_directories_is_quarantined() {
    let sb = Sandbox::new();
    for d in ["a/b/c", "d/e", "f/g"] {
        sb.write(&format!("{d}/keep.txt"), "k\n");
    }
    settle();
    sb.sh("true").expect_code(0);
    settle();
    let out = sb.sh("echo N=hw-planted-1 > a/b/c/.env; \
         mkdir -p new/x && echo R=hw-planted-2 > new/x/.env && mv new/x d/e/x; \
         ln d/e/keep.txt d/e/.env.local; \
         rm -r f/g && mkdir f/g && echo P=hw-planted-3 > f/g/.env.production; \
         echo ok > a/b/c/notes.txt");
    out.expect_code(0);
    for planted in ["a/b/c/.env", "d/e/x/.env", "d/e/.env.local", "f/g/.env.production"] {
        assert!(!sb.exists(planted), "{planted} was left in place\n{out}");
    }
    assert_eq!(sb.read("a/b/c/notes.txt").as_deref(), Some("ok\n"), "{out}");
    assert!(sb.exists("d/e/x"), "the directory renamed in is gone\n{out}");
}
