//! Real-kernel battery of the transactional workspace (`--workspace overlay|ephemeral`,
//! `--review`, `hullward review|apply|discard|undo|backups`): every kind of change a real
//! sandboxed program makes lands byte-exact with its modes (checked against the same script run
//! without hullward), protected paths never land (a new `.env`, a fresh repository's hooks, a
//! denied directory) while their neighbours do, a file the host changed during the call keeps
//! the host's version, undo restores and refuses when the host changed a file since, an
//! ephemeral call leaves the tree identical, a held call is reviewed, applied or discarded, and a
//! hullward SIGKILLed mid-apply is finished by the next one from its journal, and the storage of
//! calls that wrote nothing is gone once the next hullward ran, even after a SIGKILL.

#[path = "support/sandbox.rs"]
mod support;

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::Sandbox;

/// Every entry under `dir` (but `skip`), described by kind, permission bits and content.
fn tree(dir: &Path, skip: &[&str]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            let rel = p.strip_prefix(dir).unwrap().display().to_string();
            if skip.iter().any(|s| rel == *s || rel.starts_with(&format!("{s}/"))) {
                continue;
            }
            let m = p.symlink_metadata().unwrap();
            let mode = m.mode() & 0o7777;
            let what = if m.file_type().is_symlink() {
                format!("link -> {}", std::fs::read_link(&p).unwrap().display())
            } else if m.is_dir() {
                stack.push(p.clone());
                format!("dir {mode:o}")
            } else {
                format!("file {mode:o} {:?}", std::fs::read(&p).unwrap())
            };
            out.insert(rel, what);
        }
    }
    out
}

/// [`tree`] plus what an untouched tree keeps: inode and modification time of every entry.
fn identity_tree(dir: &Path) -> BTreeMap<String, String> {
    let mut t = tree(dir, &[]);
    for (rel, v) in t.iter_mut() {
        let m = dir.join(rel).symlink_metadata().unwrap();
        v.push_str(&format!(" ino {} mtime {}.{}", m.ino(), m.mtime(), m.mtime_nsec()));
    }
    t
}

fn hw_home(sb: &Sandbox) -> PathBuf {
    sb.base.join("hullward-home")
}

/// The call id named in `text` (`… hullward undo call-… …`).
fn call_id(text: &str) -> String {
    let at = text.find("call-").expect("a call id in the output");
    text[at..].split(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '/')).next().unwrap().to_string()
}

/// A tree with one of everything an apply must handle.
fn plant(sb: &Sandbox) {
    sb.write("changed.txt", "old\n");
    sb.write("kept.txt", "untouched\n");
    sb.write("deleted.txt", "bye\n");
    sb.write("tool.sh", "#!/bin/sh\necho v1\n");
    sb.write("private.txt", "mode only\n");
    sb.write("src/moved.txt", "I move across directories\n");
    sb.write("dst/.keep", "");
    sb.write("adir/inner.txt", "a directory that becomes a file\n");
    sb.write("afile", "a file that becomes a directory\n");
    sb.write("tree/a/b.txt", "a renamed directory\n");
    sb.write("gone/x/y.txt", "a deleted directory\n");
    sb.write("remade/old.txt", "a directory deleted and made again\n");
    sb.write("modes/f", "");
    std::os::unix::fs::symlink("kept.txt", sb.root.join("oldlink")).unwrap();
}

const CHANGES: &str = "\
set -e
printf 'new\\n' > changed.txt
rm deleted.txt
printf '#!/bin/sh\\necho v2\\n' > tool.sh; chmod 755 tool.sh
chmod 600 private.txt
mv src/moved.txt dst/moved.txt
rm -r adir; printf 'now a file\\n' > adir
rm afile; mkdir afile; printf 'inside\\n' > afile/in.txt
mv tree tree2
rm -r gone
rm -r remade; mkdir remade; printf 'fresh\\n' > remade/new.txt
chmod 700 modes
mkdir -p new/deep/er; printf 'deep\\n' > new/deep/er/file.txt
head -c 4096 /dev/urandom > new/random.bin
printf 'no newline at end' > new/partial
ln -s ../kept.txt new/link
rm oldlink; ln -s changed.txt oldlink
";

#[test]
fn every_kind_of_change_lands_byte_exact_with_its_modes() {
    let sb = Sandbox::new();
    let control = Sandbox::new();
    plant(&sb);
    plant(&control);
    let out = sb.sh_with(&["--workspace", "overlay"], CHANGES);
    out.expect_code(0);
    control.control(CHANGES).expect_code(0);
    // The random file differs between the two runs: compare it on its own, then align it.
    let random = std::fs::read(sb.root.join("new/random.bin")).unwrap();
    assert_eq!(random.len(), 4096, "{out}");
    std::fs::write(control.root.join("new/random.bin"), &random).unwrap();
    assert_eq!(tree(&sb.root, &[]), tree(&control.root, &[]), "{out}");
    assert!(out.stderr.contains("applied"), "{out}");
    // Nothing of the call is left in the workspace storage.
    let left: Vec<_> = std::fs::read_dir(hw_home(&sb).join("workspace")).unwrap().flatten().collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn masks_still_hold_inside_the_overlay_and_ordinary_files_read() {
    let sb = Sandbox::new();
    sb.write(".env", "API_KEY=hw-overlay-secret-4411\n");
    sb.write("infra/prod/deploy.sh", "PROD-DEPLOY-SECRET\n");
    sb.write("readme.txt", "hello\n");
    let out = sb.sh_with(
        &["--workspace", "overlay", "--deny", "infra/prod/**"],
        "cat readme.txt; cat .env || echo ENV-DENIED; cat infra/prod/deploy.sh || echo INFRA-DENIED",
    );
    out.expect_code(0);
    assert!(out.has_line("hello"), "{out}");
    assert!(out.has_line("ENV-DENIED") && out.has_line("INFRA-DENIED"), "{out}");
    assert!(!out.all().contains("hw-overlay-secret-4411") && !out.all().contains("PROD-DEPLOY"), "{out}");
    // The control: without hullward the same reads succeed (no mode bits in the way).
    assert!(sb.control("cat .env").stdout.contains("hw-overlay-secret-4411"));
}

#[test]
fn protected_paths_are_refused_kept_and_listed_while_their_neighbours_land() {
    let sb = Sandbox::new();
    sb.write("app/main.py", "print(1)\n");
    let out = sb.sh_with(
        &["--workspace", "overlay", "--deny", "infra/**"],
        "echo PLANTED=1 > app/.env; echo B=2 > .env.local; mkdir infra; echo x > infra/new.sh; \
         git init -q sub && printf '#!/bin/sh\\necho pwned\\n' > sub/.git/hooks/pre-commit && \
         chmod +x sub/.git/hooks/pre-commit; echo 'print(2)' > app/main.py; echo notes > notes.txt",
    );
    out.expect_code(0);
    for gone in ["app/.env", ".env.local", "infra", "sub/.git/hooks", "sub/.git/config"] {
        assert!(!sb.exists(gone), "{gone} landed\n{out}");
        assert!(out.stderr.contains(&format!("[DENIED] '{gone}'")), "{gone} not listed\n{out}");
    }
    assert_eq!(sb.read("app/main.py").as_deref(), Some("print(2)\n"), "{out}");
    assert_eq!(sb.read("notes.txt").as_deref(), Some("notes\n"), "{out}");
    assert!(sb.exists("sub/.git/HEAD"), "the rest of the new repository lands\n{out}");
    // Nothing is lost: the call's versions are kept in its backups.
    let id = call_id(&out.stderr);
    let kept = hw_home(&sb).join("backups").join(&id).join("refused");
    let rel = |p: &str| kept.join(sb.root.join(p).strip_prefix("/").unwrap());
    assert_eq!(std::fs::read_to_string(rel("app/.env")).unwrap(), "PLANTED=1\n");
    assert!(std::fs::read_to_string(rel("sub/.git/hooks/pre-commit")).unwrap().contains("pwned"));
}

#[test]
fn an_existing_repositorys_hooks_stay_read_only_in_the_overlay() {
    let sb = Sandbox::new();
    assert!(sb.control("git init -q .").code == 0);
    let out = sb.sh_with(
        &["--workspace", "overlay"],
        "echo evil > .git/hooks/pre-commit || echo HOOK-REFUSED; echo ok > file.txt",
    );
    out.expect_code(0);
    assert!(out.has_line("HOOK-REFUSED"), "{out}");
    assert!(!sb.exists(".git/hooks/pre-commit"));
    assert_eq!(sb.read("file.txt").as_deref(), Some("ok\n"));
}

#[test]
fn a_file_the_host_changed_during_the_call_keeps_the_hosts_version() {
    let sb = Sandbox::new();
    sb.write("shared.txt", "before\n");
    sb.write("mine.txt", "before\n");
    sb.write("signal", "wait\n");
    std::thread::sleep(Duration::from_millis(20));
    let script = "echo call > shared.txt; echo call > mine.txt; touch .hw-ready; \
                  until grep -q go signal; do sleep 0.01; done";
    let mut child = sb
        .run_cmd(&["--workspace", "overlay"], &["sh", "-c", script])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let workspace = hw_home(&sb).join("workspace");
    let mut signalled = false;
    let out = support::finish_watching(&mut child, Instant::now(), || {
        if signalled {
            return;
        }
        let ready = std::fs::read_dir(&workspace)
            .into_iter()
            .flatten()
            .flatten()
            .any(|call| call.path().join("layer-0/upper/.hw-ready").exists());
        if ready {
            std::fs::write(sb.root.join("shared.txt"), "host\n").unwrap();
            std::fs::write(sb.root.join("signal"), "go\n").unwrap();
            signalled = true;
        }
    });
    out.expect_code(0);
    assert!(signalled, "{out}");
    assert_eq!(sb.read("shared.txt").as_deref(), Some("host\n"), "the host's version stays\n{out}");
    assert_eq!(sb.read("mine.txt").as_deref(), Some("call\n"), "{out}");
    assert!(out.stderr.contains("conflict: 'shared.txt'"), "{out}");
    let id = call_id(&out.stderr[out.stderr.find("conflict").unwrap()..]);
    let kept = hw_home(&sb)
        .join("backups")
        .join(id)
        .join("refused")
        .join(sb.root.join("shared.txt").strip_prefix("/").unwrap());
    assert_eq!(std::fs::read_to_string(kept).unwrap(), "call\n", "the call's version is kept");
}

#[test]
fn undo_restores_the_tree_and_refuses_when_the_host_changed_a_file_since() {
    let sb = Sandbox::new();
    plant(&sb);
    let before = tree(&sb.root, &[]);
    let out = sb.sh_with(&["--workspace", "overlay"], CHANGES);
    out.expect_code(0);
    assert_ne!(tree(&sb.root, &[]), before);
    let undo = support::output(sb.hullward().arg("undo"));
    undo.expect_code(0);
    assert_eq!(tree(&sb.root, &[]), before, "{undo}");
    // A second undo of the same call is refused.
    support::output(sb.hullward().args(["undo", &call_id(&out.stderr)])).expect_code(2);

    let out = sb.sh_with(&["--workspace", "overlay"], "echo call > changed.txt; echo new > created.txt");
    out.expect_code(0);
    sb.write("changed.txt", "edited by a human afterwards\n");
    let undo = support::output(sb.hullward().arg("undo"));
    undo.expect_code(1);
    assert!(undo.stderr.contains(&sb.root.join("changed.txt").display().to_string()), "{undo}");
    assert_eq!(sb.read("changed.txt").as_deref(), Some("edited by a human afterwards\n"));
    assert_eq!(sb.read("created.txt").as_deref(), Some("new\n"), "a refused undo changes nothing");
    let list = support::output(sb.hullward().args(["backups", "--json"]));
    list.expect_code(0);
    let v: serde_json::Value = serde_json::from_str(list.stdout.trim()).unwrap();
    assert_eq!(v["backups"].as_array().unwrap().len(), 2, "{list}");
    assert!(v["backups"][0]["bytes"].as_u64().unwrap() > 0, "{list}");
}

#[test]
fn an_ephemeral_call_leaves_the_tree_identical() {
    let sb = Sandbox::new();
    plant(&sb);
    assert!(
        sb.control("git init -q . && git add -A && git -c user.email=a@b -c user.name=a commit -qm one").code
            == 0
    );
    let before = identity_tree(&sb.root);
    let out = sb.sh_with(
        &["--workspace", "ephemeral"],
        &format!("{CHANGES}\ngit add -A && git -c user.email=a@b -c user.name=a commit -qm two && git log --oneline | wc -l"),
    );
    out.expect_code(0);
    assert!(out.has_line("2"), "the program saw its own changes\n{out}");
    assert_eq!(identity_tree(&sb.root), before, "{out}");
    let left: Vec<_> = std::fs::read_dir(hw_home(&sb).join("workspace")).unwrap().flatten().collect();
    assert!(left.is_empty(), "no trace in the workspace storage: {left:?}");
    assert!(!hw_home(&sb).join("backups").exists(), "no backups of a call that applied nothing");
}

#[test]
fn a_held_call_is_reviewed_then_applied_or_discarded() {
    let sb = Sandbox::new();
    sb.write("notes.txt", "one\n");
    let out =
        sb.sh_with(&["--review"], "echo two >> notes.txt; echo SECRET_TOKEN=hw-review-secret-8123 > .env");
    out.expect_code(0);
    assert_eq!(sb.read("notes.txt").as_deref(), Some("one\n"), "nothing lands before the review\n{out}");
    let id = call_id(&out.stderr);
    let review = support::output(sb.hullward().args(["review", &id]));
    review.expect_code(0);
    assert!(review.stdout.contains("diff --git a/notes.txt b/notes.txt"), "{review}");
    assert!(review.stdout.contains("\n one\n+two\n"), "{review}");
    assert!(review.stdout.contains("# not applied: '.env'"), "{review}");
    assert!(!review.stdout.contains("hw-review-secret-8123"), "{review}");
    support::output(sb.hullward().args(["apply", &id])).expect_code(0);
    assert_eq!(sb.read("notes.txt").as_deref(), Some("one\ntwo\n"));
    assert!(!sb.exists(".env"));
    support::output(sb.hullward().args(["apply", &id])).expect_code(2);

    let out = sb.sh_with(&["--workspace", "overlay", "--review"], "echo three >> notes.txt");
    out.expect_code(0);
    support::output(sb.hullward().arg("discard")).expect_code(0);
    assert_eq!(sb.read("notes.txt").as_deref(), Some("one\ntwo\n"));
    support::output(sb.hullward().args(["review", &call_id(&out.stderr)])).expect_code(2);
}

#[test]
fn a_hullward_killed_mid_apply_is_finished_by_the_next_one() {
    let sb = Sandbox::new();
    sb.write("base.txt", "old\n");
    let script = "for i in $(seq 1 40); do echo \"file $i\" > f$i.txt; done; echo new > base.txt";
    let out = support::output(
        sb.run_cmd(&["--workspace", "overlay"], &["sh", "-c", script])
            .env("HULLWARD_TEST_KILL_APPLY_AFTER", "10"),
    );
    assert_eq!(out.code, 128 + libc::SIGKILL, "{out}");
    let landed = (1..=40).filter(|i| sb.exists(&format!("f{i}.txt"))).count();
    assert!(landed > 0 && landed < 40, "killed mid-apply: {landed} of 40 landed\n{out}");
    let next = support::output(sb.hullward().arg("backups"));
    next.expect_code(0);
    assert!(next.stderr.contains("was killed while applying its changes"), "{next}");
    assert!(next.stderr.contains("was finished"), "{next}");
    for i in 1..=40 {
        assert_eq!(sb.read(&format!("f{i}.txt")), Some(format!("file {i}\n")), "{next}");
    }
    assert_eq!(sb.read("base.txt").as_deref(), Some("new\n"));
    // And the finished apply can be undone like any other.
    support::output(sb.hullward().arg("undo")).expect_code(0);
    assert_eq!(sb.read("base.txt").as_deref(), Some("old\n"));
    assert!(!sb.exists("f1.txt"));
}

#[test]
fn storage_inside_the_root_is_refused_with_exit_3() {
    let sb = Sandbox::new();
    let out = support::output(
        sb.run_cmd(&["--workspace", "overlay"], &["true"]).env("HULLWARD_HOME", sb.root.join(".hw")),
    );
    out.expect_code(3);
    assert!(out.stderr.contains("inside the root"), "{out}");
    assert!(out.stderr.contains("HULLWARD_HOME"), "{out}");
}

#[test]
fn a_root_with_a_mount_point_inside_is_refused_with_exit_3_and_its_neighbour_runs() {
    let sb = Sandbox::new();
    std::fs::create_dir_all(sb.root.join("mnt")).unwrap();
    // A private mount namespace of this command alone: the host's mount table is never touched.
    let script = format!(
        "mount -t tmpfs hw-test \"$1/mnt\" && exec {} run --timeout 8s --workspace overlay -- /bin/true",
        support::bin()
    );
    let mut cmd = std::process::Command::new("unshare");
    cmd.args(["-m", "--propagation", "private", "sh", "-c", &script, "sh"])
        .arg(&sb.root)
        .env_clear()
        .env("PATH", support::PATH)
        .env("HOME", &sb.home)
        .env("HULLWARD_HOME", hw_home(&sb))
        .current_dir(&sb.root);
    let out = support::output(&mut cmd);
    out.expect_code(3);
    assert!(out.stderr.contains("contains the mount point"), "{out}");
    assert!(out.stderr.contains(&sb.root.join("mnt").display().to_string()), "{out}");
    // The same root without the mount runs.
    sb.run(&["--workspace", "overlay"], &["/bin/true"]).expect_code(0);
}

/// The names in `dir` (none when it does not exist).
fn names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut out: Vec<String> =
        entries.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    out.sort();
    out
}

#[test]
fn storage_of_calls_that_wrote_nothing_is_removed_by_the_next_hullward_even_after_a_sigkill() {
    let sb = Sandbox::new();
    sb.write("kept.txt", "untouched\n");
    let (workspace, discarded) = (hw_home(&sb).join("workspace"), hw_home(&sb).join("discarded"));
    // A call that writes nothing: its storage leaves the workspace when it ends, and the next
    // call removes it while it runs.
    sb.run(&["--workspace", "overlay"], &["cat", "kept.txt"]).expect_code(0);
    assert_eq!(names(&workspace), Vec::<String>::new());
    let first = names(&discarded);
    assert_eq!(first.len(), 1, "{first:?}");
    sb.run(&["--workspace", "overlay"], &["cat", "kept.txt"]).expect_code(0);
    let second = names(&discarded);
    assert!(second.len() == 1 && second != first, "the first call's storage is gone: {first:?} {second:?}");

    // The supervisor SIGKILLed right after the program exited, before it looked at the layer.
    let out = support::output(
        sb.run_cmd(&["--workspace", "overlay"], &["cat", "kept.txt"])
            .env("HULLWARD_TEST_KILL_BEFORE_FINISH", "1"),
    );
    assert_eq!(out.code, 128 + libc::SIGKILL, "{out}");
    assert_eq!(names(&workspace).len(), 1, "the killed call's storage is still there");
    let next = support::output(sb.hullward().arg("backups"));
    next.expect_code(0);
    assert!(!next.stderr.contains("held"), "a call that wrote nothing is not held for review\n{next}");
    assert_eq!(names(&workspace), Vec::<String>::new(), "{next}");
    assert_eq!(names(&discarded), Vec::<String>::new(), "{next}");
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    assert!(!mounts.contains(&hw_home(&sb).display().to_string()), "no overlay left mounted\n{mounts}");
    assert_eq!(sb.read("kept.txt").as_deref(), Some("untouched\n"));

    // The neighbour: a killed call that did write is held, not thrown away.
    let out = support::output(
        sb.run_cmd(&["--workspace", "overlay"], &["sh", "-c", "echo new > made.txt"])
            .env("HULLWARD_TEST_KILL_BEFORE_FINISH", "1"),
    );
    assert_eq!(out.code, 128 + libc::SIGKILL, "{out}");
    let next = support::output(sb.hullward().arg("backups"));
    next.expect_code(0);
    assert!(next.stderr.contains("they are held"), "{next}");
    assert_eq!(names(&workspace).len(), 1, "{next}");
    assert!(!sb.exists("made.txt"));
}
