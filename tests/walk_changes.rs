//! Real-kernel battery, the change tracker (`sandbox::changes`): where the kernel says which
//! directories changed, the walk replays the others without a `stat` — and whatever changes,
//! between served calls or during a CLI call, is protected exactly as by the ctime walk.
//!
//! Each change is made in another way: a new `.env`, one renamed in from outside the root, a
//! hard link, a directory replaced by another holding a `.env`, a deep `mkdir -p`, a protected
//! file rewritten in place, a whole subtree moved in, a file created on a second filesystem
//! mounted inside the root (a tmpfs, covered before the change, and one mounted after: a change
//! of the mount table), and a drained batch the tracker cannot vouch for (an overflow, a handle
//! on a filesystem not covered, a handle that does not resolve). Each case also shows the
//! legitimate neighbour written at the same time still works. We run as root: mode bits never
//! stop a read, so a secret not shown is the sandbox's doing (the control reads it).
#![allow(unsafe_code)]

mod serve_support;
#[path = "support/sandbox.rs"]
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use hullward::sandbox::changes::{Changed, Event, Tracker};
use serde_json::json;
use serve_support::Server;
use support::Sandbox;

const SECRET: &str = "HW-CHANGES-SECRET-8e41";

/// Longer than the clock tick a recorded directory's ctime must predate.
fn settle() {
    std::thread::sleep(Duration::from_millis(30));
}

/// The tests of this file mount filesystems in the host's mount namespace, and a change of the
/// mount table makes every tracker fall back to the ctime walk: one test at a time.
fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// A tmpfs mounted on `at` for the life of the guard.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(at: &Path) -> Tmpfs {
        std::fs::create_dir_all(at).unwrap();
        let status = Command::new("mount").args(["-t", "tmpfs", "hw-changes"]).arg(at).status().unwrap();
        assert!(status.success(), "mount tmpfs on {}", at.display());
        Tmpfs(at.to_path_buf())
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).status();
    }
}

fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// One way to change the tree: what it is, the denied path it makes (relative to the root), and
/// the ordinary neighbour it writes next to it.
type Case<'a> = (&'a str, &'a str, &'a str, Box<dyn Fn(&Path, &Path) + 'a>);

/// Every way of making a denied entry appear (or change), applied to `root` from the test
/// (`outside` is a sibling of the root). `covered` is a tmpfs mounted inside the root before the
/// tracker first saw it; `late` is where one is mounted as part of a case.
fn cases<'a>(late: &'a std::cell::RefCell<Option<Tmpfs>>) -> Vec<Case<'a>> {
    vec![
        (
            "a new .env",
            "a/.env",
            "a/new-ok.txt",
            Box::new(|root, _| {
                write(&root.join("a/.env"), &format!("K={SECRET}-new\n"));
                write(&root.join("a/new-ok.txt"), "HW-NEIGHBOUR-1\n");
            }),
        ),
        (
            "a rename from outside the root",
            "b/.env.production",
            "b/ok.txt",
            Box::new(|root, outside| {
                write(&outside.join("plain"), &format!("K={SECRET}-renamed\n"));
                std::fs::rename(outside.join("plain"), root.join("b/.env.production")).unwrap();
                write(&root.join("b/ok.txt"), "HW-NEIGHBOUR-2\n");
            }),
        ),
        (
            "a hard link under a denied name",
            "c/.env.local",
            "c/ok.txt",
            Box::new(|root, outside| {
                write(&outside.join("linked"), &format!("K={SECRET}-linked\n"));
                std::fs::hard_link(outside.join("linked"), root.join("c/.env.local")).unwrap();
                write(&root.join("c/ok.txt"), "HW-NEIGHBOUR-3\n");
            }),
        ),
        (
            "a directory replaced by another holding a .env",
            "d/old/.env",
            "d/old/ok.txt",
            Box::new(|root, outside| {
                write(&outside.join("repl/.env"), &format!("K={SECRET}-replaced\n"));
                write(&outside.join("repl/ok.txt"), "HW-NEIGHBOUR-4\n");
                std::fs::remove_dir_all(root.join("d/old")).unwrap();
                std::fs::rename(outside.join("repl"), root.join("d/old")).unwrap();
            }),
        ),
        (
            "a deep mkdir -p",
            "e/x/y/z/.env",
            "e/x/y/z/ok.txt",
            Box::new(|root, _| {
                write(&root.join("e/x/y/z/.env"), &format!("K={SECRET}-deep\n"));
                write(&root.join("e/x/y/z/ok.txt"), "HW-NEIGHBOUR-5\n");
            }),
        ),
        (
            "a whole subtree moved in",
            "f/tree/inner/.env",
            "f/tree/inner/ok.txt",
            Box::new(|root, outside| {
                write(&outside.join("tree/inner/.env"), &format!("K={SECRET}-subtree\n"));
                write(&outside.join("tree/inner/ok.txt"), "HW-NEIGHBOUR-6\n");
                settle();
                std::fs::rename(outside.join("tree"), root.join("f/tree")).unwrap();
            }),
        ),
        (
            "a file created on a tmpfs mounted inside the root",
            "mnt/sub/.env",
            "mnt/sub/ok.txt",
            Box::new(|root, _| {
                write(&root.join("mnt/sub/.env"), &format!("K={SECRET}-tmpfs\n"));
                write(&root.join("mnt/sub/ok.txt"), "HW-NEIGHBOUR-7\n");
            }),
        ),
        (
            "a tmpfs mounted inside the root holding a .env",
            "late/.env",
            "late/ok.txt",
            Box::new(move |root, _| {
                *late.borrow_mut() = Some(Tmpfs::mount(&root.join("late")));
                write(&root.join("late/.env"), &format!("K={SECRET}-late-mount\n"));
                write(&root.join("late/ok.txt"), "HW-NEIGHBOUR-8\n");
            }),
        ),
    ]
}

/// The tree the cases change: every directory they touch exists and was walked before.
fn prepare(root: &Path) {
    for d in ["a", "b", "c", "d/old", "e", "f", "keep"] {
        write(&root.join(d).join("keep.txt"), "k\n");
    }
    write(&root.join("keep/.env"), &format!("K={SECRET}-recorded\n"));
    write(&root.join("keep/readme.md"), "HW-README-OK\n");
}

/// A server for the change tests, on a root made by [`prepare`] and then `extra`, with a second
/// filesystem (a tmpfs on `mnt`, holding `keep.txt`) and a directory outside the root. The fields
/// drop in order: the server stops before the tmpfs is unmounted.
struct Served {
    server: Server,
    _mnt: Tmpfs,
    outside: PathBuf,
    _outside_dir: tempfile::TempDir,
}

fn serve_root(extra: impl FnOnce(&Path)) -> Served {
    let outside_dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let outside = outside_dir.path().canonicalize().unwrap();
    let mut mnt = None;
    let server = Server::start_prepared(&["--unattended-policy", "allow"], |root| {
        prepare(root);
        extra(root);
        mnt = Some(Tmpfs::mount(&root.join("mnt")));
        write(&root.join("mnt/keep.txt"), "k\n");
    });
    Served { server, _mnt: mnt.expect("the root was prepared"), outside, _outside_dir: outside_dir }
}

/// Between served calls: each change is made, then the next call cannot read the denied path
/// (nor the recorded `.env`) and reads the neighbour.
#[test]
fn what_changes_between_served_calls_is_protected_in_the_next() {
    let _serial = one_at_a_time();
    let served = serve_root(|_| {});
    let (root, outside) = (served.server.root.clone(), served.outside.clone());
    let mut c = served.server.session(false);
    let call = |c: &mut serve_support::Conn, id: usize, script: &str| {
        c.call(json!({"id": id, "method": "run", "argv": ["sh", "-c", script]}))
    };
    for id in 0..3 {
        settle();
        let (out, exit) = call(&mut c, id, "cat keep/readme.md");
        assert_eq!((out.as_str(), exit["code"].as_i64()), ("HW-README-OK\n", Some(0)), "{exit}");
    }
    let late = std::cell::RefCell::new(None);
    for (n, (what, denied, neighbour, change)) in cases(&late).into_iter().enumerate() {
        settle();
        change(&root, &outside);
        let script = format!("cat {denied} keep/.env; echo; cat {neighbour} keep/readme.md");
        let control = Command::new("sh").arg("-c").arg(&script).current_dir(&root).output().unwrap();
        assert!(
            String::from_utf8_lossy(&control.stdout).contains(SECRET),
            "{what}: the control cannot read it"
        );
        let (out, exit) = call(&mut c, 100 + n, &script);
        assert!(!out.contains(SECRET), "{what}: the next call read it\n{out}\n{exit}");
        assert!(
            out.contains("HW-NEIGHBOUR-") && out.contains("HW-README-OK"),
            "{what}: the neighbour\n{out}\n{exit}"
        );
    }
    // A protected file rewritten in place (its directory's ctime does not move, no name event).
    settle();
    call(&mut c, 200, "true");
    std::fs::write(root.join("keep/.env"), format!("K={SECRET}-rewritten\n")).unwrap();
    let (out, exit) = call(&mut c, 201, "cat keep/.env; echo; cat keep/readme.md");
    assert!(!out.contains(SECRET), "the rewritten .env was read\n{out}\n{exit}");
    assert!(out.contains("HW-README-OK"), "the neighbour\n{out}\n{exit}");
    drop(c);
    drop(late);
    drop(served);
}

/// A second name given between served calls to a `.env` the server already knows — a name no
/// deny rule matches, in another directory — is masked in the next call like the `.env` itself
/// (the walk's `stat` of the `.env`, which the search for other names relies on, counts the new
/// link); the file beside it is read.
#[test]
fn a_hard_link_to_a_known_env_made_between_served_calls_is_masked_in_the_next() {
    let _serial = one_at_a_time();
    let server = Server::start_prepared(&["--unattended-policy", "allow"], |root| {
        prepare(root);
        write(&root.join("other/readme.md"), "HW-OTHER-OK\n");
    });
    let root = server.root.clone();
    let mut c = server.session(false);
    let script = "cat keep/.env other/copy.txt; cat other/readme.md";
    for id in 0..3 {
        settle();
        let (out, exit) = c.call(json!({"id": id, "method": "run", "argv": ["sh", "-c", script]}));
        assert!(out.contains("HW-OTHER-OK") && !out.contains(SECRET), "{out}\n{exit}");
    }
    std::fs::hard_link(root.join("keep/.env"), root.join("other/copy.txt")).unwrap();
    let control = Command::new("sh").arg("-c").arg(script).current_dir(&root).output().unwrap();
    assert!(String::from_utf8_lossy(&control.stdout).contains(SECRET), "the control cannot read it");
    let (out, exit) = c.call(json!({"id": 10, "method": "run", "argv": ["sh", "-c", script]}));
    assert!(!out.contains(SECRET), "the other name of the .env was read\n{out}\n{exit}");
    assert!(out.contains("HW-OTHER-OK"), "the neighbour\n{out}\n{exit}");
}

/// A server holds each protected entry it stamped open, and stats the descriptor instead of the
/// path while the tracker vouches for every directory above it (`sandbox::held`). A name that
/// comes to hold another inode changes a directory on the way: a known `.env` replaced by a rename
/// over it, and one whose directory was moved away and another put in its place, are in the next
/// call masked as the new files, with their new values hidden in the output, and the call runs.
#[test]
fn a_known_env_replaced_between_served_calls_is_the_new_one_in_the_next() {
    let _serial = one_at_a_time();
    let served = serve_root(|root| write(&root.join("g/sub/.env"), "API_TOKEN=HW-HELD-OLD-2\n"));
    let (root, outside) = (served.server.root.clone(), served.outside.clone());
    let mut c = served.server.session(false);
    let script = "cat keep/.env g/sub/.env; echo; echo HW-HELD-NEW-1 HW-HELD-NEW-2; cat keep/readme.md";
    for id in 0..3 {
        settle();
        let (out, exit) = c.call(json!({"id": id, "method": "run", "argv": ["sh", "-c", script]}));
        assert!(out.contains("HW-HELD-NEW-1") && out.contains("HW-README-OK"), "{out}\n{exit}");
        assert!(!out.contains(SECRET) && !out.contains("HW-HELD-OLD"), "{out}\n{exit}");
    }
    write(&outside.join("new-env"), "API_TOKEN=HW-HELD-NEW-1\n");
    std::fs::rename(outside.join("new-env"), root.join("keep/.env")).unwrap();
    write(&outside.join("sub/.env"), "API_TOKEN=HW-HELD-NEW-2\n");
    std::fs::rename(root.join("g/sub"), root.join("g/moved")).unwrap();
    std::fs::rename(outside.join("sub"), root.join("g/sub")).unwrap();
    let control = Command::new("sh").arg("-c").arg(script).current_dir(&root).output().unwrap();
    let control = String::from_utf8_lossy(&control.stdout);
    assert!(control.contains("TOKEN=HW-HELD-NEW-1") && control.contains("TOKEN=HW-HELD-NEW-2"), "{control}");
    let (out, exit) = c.call(json!({"id": 10, "method": "run", "argv": ["sh", "-c", script]}));
    assert_eq!(exit["code"], 0, "the call ran\n{out}\n{exit}");
    assert!(!out.contains("HW-HELD-NEW"), "a new .env or its value was shown\n{out}\n{exit}");
    assert!(out.contains("HW-README-OK"), "the neighbour\n{out}\n{exit}");
}

/// During a served call: the tracker vouches for every directory nobody touched, and the
/// post-call check visits only the way down to what changed — yet it moves out every protected
/// path the program or the test made, in directories the call never saw change before (`a`),
/// in new ones (`a/g/h/i`), under a renamed-in subtree, on a second filesystem and after a change
/// of the mount table, and each is reported as a `protected-change` event of its call; every
/// ordinary file written beside them stays.
#[test]
fn what_changes_during_a_served_call_is_found_by_the_post_call_check() {
    let _serial = one_at_a_time();
    let served = serve_root(|root| {
        write(&root.join("sync/keep.txt"), "k\n");
        for i in 0..200 {
            write(&root.join(format!("quiet/{}/{i}/f.txt", i % 10)), "q\n");
        }
    });
    let (root, outside) = (served.server.root.clone(), served.outside.clone());
    let mut c = served.server.session(false);
    for id in 0..3 {
        settle();
        let (_, exit) = c.call(json!({"id": id, "method": "run", "argv": ["true"]}));
        assert_eq!(exit["code"], 0, "{exit}");
    }
    let script = "echo N=hw-in-call > a/.env.test; echo ok > a/in-call-ok.txt; \
                  mkdir -p a/g/h/i && echo R=hw-in-call > a/g/h/i/.env && echo ok > a/g/h/i/ok.txt; \
                  touch sync/go; until [ -e sync/done ]; do sleep 0.01; done";
    let late = std::cell::RefCell::new(None);
    let cases = cases(&late);
    let (late_case, tracked) = cases.split_last().unwrap();
    let mut reported = Vec::new();
    for (n, batch) in [tracked, std::slice::from_ref(late_case)].into_iter().enumerate() {
        settle();
        let id = json!(format!("during-{n}"));
        c.send(json!({"id": id, "method": "run", "argv": ["sh", "-c", script]}));
        let start = std::time::Instant::now();
        while !root.join("sync/go").exists() {
            assert!(start.elapsed() < serve_support::WAIT, "the call never started");
            std::thread::sleep(Duration::from_millis(10));
        }
        for (_, _, _, change) in batch {
            change(&root, &outside);
        }
        std::fs::write(root.join("sync/done"), "").unwrap();
        let events = c.call_events(&id);
        let exit = events.last().unwrap();
        assert_eq!(exit["code"], 0, "the call failed: {events:?}");
        reported.extend(
            events
                .iter()
                .filter(|e| e["event"] == "protected-change")
                .filter_map(|e| e["path"].as_str().map(String::from)),
        );
        for marker in ["sync/go", "sync/done"] {
            std::fs::remove_file(root.join(marker)).unwrap();
        }
    }
    let planted = cases.iter().map(|c| c.1).chain(["a/.env.test", "a/g/h/i/.env"]);
    for denied in planted {
        assert!(!root.join(denied).exists(), "{denied} was left in place");
        assert!(reported.iter().any(|r| r == denied), "{denied} was not reported: {reported:?}");
    }
    let neighbours =
        cases.iter().map(|c| c.2).chain(["a/in-call-ok.txt", "a/g/h/i/ok.txt", "quiet/3/13/f.txt"]);
    for ok in neighbours {
        assert!(std::fs::read(root.join(ok)).is_ok_and(|t| !t.is_empty()), "{ok} is gone");
    }
    drop(c);
    drop(cases);
    drop(late);
    drop(served);
}

/// During a CLI call: the program and, from outside, the test change the tree in every way; the
/// post-call check (which reads only what the tracker reports changed) moves every protected
/// path out and leaves every ordinary file the call or the test wrote in place.
#[test]
fn what_changes_during_a_cli_call_is_found_by_the_post_call_check() {
    let _serial = one_at_a_time();
    let sb = Sandbox::new();
    prepare(&sb.root);
    let mounted = Tmpfs::mount(&sb.root.join("mnt"));
    write(&sb.root.join("mnt/keep.txt"), "k\n");
    settle();
    sb.sh("true").expect_code(0);
    settle();
    // A small tree is walked by ctime alone: the CLI's fanotify group would cost more to tear
    // down at exit than the stats it spares.
    assert!(!post_call_check_used_the_tracker(&sb), "a small tree's call made a change tracker");
    for i in 0..5_000 {
        std::fs::create_dir_all(sb.root.join(format!("bulk/{}/{i}", i % 50))).unwrap();
    }
    settle();
    sb.sh("true").expect_code(0);
    settle();
    let script = "echo N=hw-in-call > a/.env.test; echo ok > a/in-call-ok.txt; \
                  mkdir -p g/h/i && echo R=hw-in-call > g/h/i/.env && echo ok > g/h/i/ok.txt; \
                  touch .hw-go; until [ -e .hw-done ]; do sleep 0.01; done";
    let late = std::cell::RefCell::new(None);
    let cases = cases(&late);
    // The late mount changes the mount table (everything then counts as changed): a call of its
    // own, after the one the tracker vouches for.
    let (late_case, tracked) = cases.split_last().unwrap();
    for (n, batch) in [tracked, std::slice::from_ref(late_case)].into_iter().enumerate() {
        let mut cmd = sb.run_cmd(&[], &["sh", "-c", script]);
        let child = cmd.env("HULLWARD_LOG", "debug").stderr(std::process::Stdio::piped()).spawn().unwrap();
        while !sb.exists(".hw-go") {
            std::thread::sleep(Duration::from_millis(10));
        }
        for (_, _, _, change) in batch {
            change(&sb.root, &sb.outside);
        }
        std::fs::write(sb.root.join(".hw-done"), "").unwrap();
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "the call failed: {stderr}");
        if n == 0 {
            let vouched =
                stderr.lines().any(|l| l.contains("change tracker") && l.contains("changed since Some("));
            assert!(vouched, "the post-call check did not use the tracker\n{stderr}");
        }
        for marker in [".hw-go", ".hw-done"] {
            std::fs::remove_file(sb.root.join(marker)).unwrap();
        }
    }
    let planted = cases.iter().map(|c| c.1).chain(["a/.env.test", "g/h/i/.env"]);
    for denied in planted {
        assert!(!sb.exists(denied), "{denied} was left in place");
    }
    let neighbours = cases.iter().map(|c| c.2).chain(["a/in-call-ok.txt", "g/h/i/ok.txt"]);
    for ok in neighbours {
        assert!(sb.read(ok).is_some_and(|t| !t.is_empty()), "{ok} is gone");
    }
    drop(cases);
    drop(late);
    drop(mounted);
}

/// Whether a CLI call's post-call check replayed directories on the change tracker's word (its
/// debug log says what the tracker answered).
fn post_call_check_used_the_tracker(sb: &Sandbox) -> bool {
    let mut cmd = sb.run_cmd(&[], &["true"]);
    let out = cmd.env("HULLWARD_LOG", "debug").output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .any(|l| l.contains("change tracker") && l.contains("changed since Some("))
}

/// A drained batch the tracker cannot vouch for — an overflow, a handle on a filesystem it does
/// not cover, a handle that does not resolve — answers "everything may have changed" (the walk
/// falls back to ctimes); a quiet batch vouches for every directory.
#[test]
fn a_batch_the_tracker_cannot_vouch_for_means_everything_changed() {
    let _serial = one_at_a_time();
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let root = dir.path().canonicalize().unwrap();
    std::fs::create_dir(root.join("sub")).unwrap();
    let mut t = Tracker::new().expect("fanotify (we run as root on Linux 5.9+)");
    let roots = [root.clone()];
    let first = t.begin(&roots, None);
    assert_eq!(first.changed, Changed::Everything, "nothing is vouched for before the first walk");
    let walked = t.begin(&roots, first.generation).generation;
    assert_eq!(t.begin(&roots, walked).changed, Changed::Dirs(Default::default()));

    let opened = std::fs::File::open(&root).unwrap();
    let (fsid, _) = hullward::sandbox::sys::filesystem_id(std::os::fd::AsFd::as_fd(&opened)).unwrap();
    let name =
        |fsid: [i32; 2], handle: Vec<u8>| Event::Name { fsid, handle_type: 1, handle, name: "x".into() };
    let batches: [(&str, Vec<Event>); 3] = [
        ("an overflow", vec![Event::Overflow]),
        ("a filesystem not covered", vec![name([fsid[0] ^ 0x5a5a, fsid[1] ^ 0x0f0f], vec![0; 8])]),
        // Longer than any handle (MAX_HANDLE_SZ is 128): the kernel refuses it (EINVAL).
        ("a handle that does not resolve", vec![name(fsid, vec![0xff; 200])]),
    ];
    for (what, batch) in batches {
        let vouched = t.begin(&roots, None).generation;
        assert_eq!(t.begin(&roots, vouched).changed, Changed::Dirs(Default::default()), "{what}");
        t.drain();
        t.absorb(&batch);
        assert_eq!(t.since(vouched), Changed::Everything, "{what}");
    }
}
