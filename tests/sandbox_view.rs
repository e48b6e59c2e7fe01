//! Real-kernel battery, the child's view against the attacks of issue 9: what a sandboxed program
//! could leave in the roots for whatever runs later outside any sandbox — a swapped or redirected
//! `.git`, a policy file behind a renamed directory, a mask raced by a concurrent swap, a
//! persistence file (`.envrc`, `.vscode/tasks.json`) — each tried for real in a child, next to the
//! legitimate work it must not break (git add/commit/branch/stash/fetch, editing `Makefile`).

#[path = "support/sandbox.rs"]
mod support;

#[path = "support/attack.rs"]
mod attack;

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use attack::{all_blocked, all_worked, TRY};
use support::Sandbox;

const GIT_ID: &str = "git -c user.name=a -c user.email=a@b";

fn inode(p: &Path) -> (u64, u64) {
    let m = std::fs::symlink_metadata(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    (m.dev(), m.ino())
}

/// A repository at the root with one commit, a nested repository, a submodule-shaped gitfile
/// repository (`.git/modules/mod`), a linked worktree, and a second repository to fetch from.
fn repositories(sb: &Sandbox) {
    let setup = sb.control(&format!(
        "git init -q -b main . && echo 'all:' > Makefile && git add Makefile && {GIT_ID} commit -qm one \
         && git init -q -b main sub/inner \
         && mkdir -p .git/modules && git init -q -b main --separate-git-dir \"$PWD/.git/modules/mod\" mod \
         && git worktree add -q ../wt \
         && git init -q -b main other && cd other && echo o > o && git add o && {GIT_ID} commit -qm o"
    ));
    setup.expect_code(0);
    attack::install_xchg(&sb.root.join("xchg"));
    std::fs::create_dir(sb.root.join("decoy")).unwrap();
}

#[test]
fn git_metadata_cannot_be_swapped_or_redirected_and_git_still_works() {
    let sb = Sandbox::new();
    repositories(&sb);
    let git = sb.root.join(".git");
    let before = (inode(&git), std::fs::read_to_string(git.join("config")).unwrap());
    let script = format!(
        "{TRY}\
         try mv-git mv .git .git-orig; \
         try xchg-git ./xchg .git decoy; \
         try mv-nested-parent mv sub sub-old; \
         try xchg-nested-parent ./xchg sub decoy; \
         try mv-nested-git mv sub/inner/.git sub/inner/.git-old; \
         try config sh -c 'printf \"[core]\\n\\tfsmonitor = echo FSMONITOR-RAN\\n\" >> .git/config'; \
         try nested-config sh -c 'echo x >> sub/inner/.git/config'; \
         try hook sh -c 'echo evil > .git/hooks/pre-commit'; \
         try mv-hooks mv .git/hooks .git/hooks-old; \
         try info sh -c 'echo \"* filter=evil\" > .git/info/attributes'; \
         try mod-config sh -c 'echo x >> .git/modules/mod/config'; \
         try mod-hook sh -c 'echo x > .git/modules/mod/hooks/post-checkout'; \
         try gitfile sh -c 'echo gitdir: /tmp/evil > mod/.git'; \
         try rm-gitfile rm -f mod/.git; \
         try worktree sh -c 'echo /tmp/evil > .git/worktrees/wt/gitdir'; \
         try mv-worktrees mv .git/worktrees .git/w; \
         echo change >> Makefile && try make-edit true; \
         try status git status --porcelain; \
         try add git add Makefile; \
         try commit {GIT_ID} commit -qm two; \
         try branch git branch feature; \
         echo wip >> Makefile; try stash git stash -q; \
         try fetch git fetch -q ./other main:refs/heads/from-other; \
         try nested-commit sh -c 'cd sub/inner && echo n > n && git add n && {GIT_ID} commit -qm n'; \
         echo /planted > .git/commondir"
    );
    let out = sb.sh(&script);
    out.expect_code(0);
    all_blocked(
        &out,
        &[
            "mv-git",
            "xchg-git",
            "mv-nested-parent",
            "xchg-nested-parent",
            "mv-nested-git",
            "config",
            "nested-config",
            "hook",
            "mv-hooks",
            "info",
            "mod-config",
            "mod-hook",
            "gitfile",
            "rm-gitfile",
            "worktree",
            "mv-worktrees",
        ],
    );
    all_worked(&out, &["make-edit", "status", "add", "commit", "branch", "stash", "fetch", "nested-commit"]);
    // On the host: the same `.git`, its config untouched, no hook, the planted commondir
    // quarantined, and the work of the call is there.
    assert_eq!((inode(&git), std::fs::read_to_string(git.join("config")).unwrap()), before);
    assert!(!sb.exists(".git/hooks/pre-commit"));
    assert!(!sb.exists(".git/commondir"), "the planted commondir stayed\n{out}");
    assert!(out.stderr.contains(".git/commondir"), "the quarantine names it\n{out}");
    let host =
        sb.control("git log --oneline | wc -l; git branch --list feature from-other; git stash list | wc -l");
    host.expect_code(0);
    assert!(!host.all().contains("FSMONITOR-RAN"), "{host}");
    assert_eq!(
        host.stdout.split_whitespace().collect::<Vec<_>>(),
        ["2", "feature", "from-other", "1"],
        "{host}"
    );
}

#[test]
fn a_gitfile_cannot_replace_a_repository_nor_a_repository_a_gitfile() {
    let sb = Sandbox::new();
    repositories(&sb);
    let out = sb.sh(&format!(
        "{TRY}\
         try git-to-gitfile sh -c 'mv .git .g && echo gitdir: /tmp/evil > .git'; \
         try gitfile-to-dir sh -c 'mv mod/.git mod/.g && mkdir -p mod/.git/hooks'; \
         try mkdir-hooks-in-mod sh -c 'mkdir -p .git/modules/mod/hooks/x'"
    ));
    out.expect_code(0);
    all_blocked(&out, &["git-to-gitfile", "gitfile-to-dir", "mkdir-hooks-in-mod"]);
}

#[test]
fn the_loaded_policy_files_cannot_be_swapped_behind_a_renamed_directory() {
    let sb = Sandbox::new();
    sb.write(".agent/hullward.yaml", "Security:\n  FileSystemPermissions:\n    Deny: [private/**]\n");
    sb.write("profiles/team/p.yaml", "Sandbox:\n  Timeout: 9s\n");
    sb.write("private/key.txt", "HW-PRIVATE-KEY-5521\n");
    attack::install_xchg(&sb.root.join("xchg"));
    std::fs::create_dir(sb.root.join("decoy")).unwrap();
    let flags = ["--config", ".agent/hullward.yaml", "--profile", "profiles/team/p.yaml"];
    let out = sb.sh_with(
        &flags,
        &format!(
            "{TRY}\
             try mv-agent sh -c 'mv .agent .agent.old && mkdir .agent \
                 && printf \"Sandbox:\\n  Include: [/etc]\\n\" > .agent/hullward.yaml'; \
             try xchg-agent ./xchg .agent decoy; \
             try edit-config sh -c 'echo \"#x\" >> .agent/hullward.yaml'; \
             try rm-config rm -f .agent/hullward.yaml; \
             try mv-profiles mv profiles profiles.old; \
             try mv-profile-dir mv profiles/team profiles/t2; \
             try read-private cat private/key.txt; \
             try notes sh -c 'echo n > .agent/notes.txt'"
        ),
    );
    out.expect_code(0);
    all_blocked(
        &out,
        &[
            "mv-agent",
            "xchg-agent",
            "edit-config",
            "rm-config",
            "mv-profiles",
            "mv-profile-dir",
            "read-private",
        ],
    );
    all_worked(&out, &["notes"]);
    // The next call, with the same command line, runs under the same policy.
    let again = sb.sh_with(&flags, "cat private/key.txt; echo RAN");
    assert!(again.has_line("RAN") && !again.stdout.contains("HW-PRIVATE-KEY"), "{again}");
}

#[test]
fn a_discovered_fuseraft_config_cannot_be_swapped_either() {
    let sb = Sandbox::new();
    sb.write(
        ".fuseraft/config/orchestration.yaml",
        "Agents: []\nSecurity:\n  FileSystemPermissions:\n    Deny: [private/**]\n",
    );
    sb.write("private/key.txt", "HW-PRIVATE-KEY-7730\n");
    sb.write(".fuseraft/notes.md", "n\n");
    let out = sb.sh(&format!(
        "{TRY}\
         try mv-fuseraft mv .fuseraft .f-old; \
         try mv-config-dir mv .fuseraft/config .fuseraft/c-old; \
         try read-private cat private/key.txt; \
         try notes sh -c 'echo more >> .fuseraft/notes.md'"
    ));
    out.expect_code(0);
    all_blocked(&out, &["mv-fuseraft", "mv-config-dir", "read-private"]);
    all_worked(&out, &["notes"]);
}

#[test]
fn strict_refuses_a_policy_file_the_view_cannot_protect() {
    let sb = Sandbox::new();
    let config =
        sb.write(".agent/hullward.yaml", "Security:\n  FileSystemPermissions:\n    Deny: [private/**]\n");
    // A second name for the same inode: no mount over one name covers the other.
    std::fs::hard_link(&config, sb.root.join("notes.yaml")).unwrap();
    let out = sb.sh_with(&["--config", ".agent/hullward.yaml"], "echo '#' >> notes.yaml; echo RAN");
    out.expect_code(3);
    assert!(!out.stdout.contains("RAN"), "{out}");
    assert!(out.stderr.contains("hullward.yaml") && out.stderr.contains("hard links"), "{out}");
    assert_eq!(
        sb.read(".agent/hullward.yaml").as_deref(),
        Some("Security:\n  FileSystemPermissions:\n    Deny: [private/**]\n")
    );
    // With --no-strict it runs, and says what it could not protect.
    let out = sb.sh_with(&["--config", ".agent/hullward.yaml", "--no-strict"], "echo RAN");
    out.expect_code(0);
    assert!(out.has_line("RAN") && out.stderr.contains("hard links"), "{out}");
    // One name, one link: it runs.
    std::fs::remove_file(sb.root.join("notes.yaml")).unwrap();
    let out = sb.sh_with(&["--config", ".agent/hullward.yaml"], "echo RAN");
    out.expect_code(0);
}

/// The race of issue 9, attack 3: a concurrent process waits until the walk has listed the
/// directory holding `.env`, then swaps `.env` with an ordinary file before the masks are
/// mounted. Whatever the timing, the child never reads the secret: the view is verified against
/// the inodes the walk found, and a swapped entry stops the call.
#[test]
fn a_swap_between_the_walk_and_the_masks_never_shows_the_secret() {
    let sb = Sandbox::new();
    let race = sb.base.join("race");
    attack::install_race(&race);
    let dir = sb.root.join("app");
    let (mut ran, mut refused) = (0, 0);
    for round in 0..20 {
        // A refused call's protected paths are checked by the next call (it finds the pending
        // record): let that happen before the files are reset and the attacker watches.
        sb.sh("true").expect_code(0);
        std::fs::create_dir_all(&dir).unwrap();
        for f in [".env", "notes.txt"] {
            let _ = std::fs::remove_file(dir.join(f));
        }
        std::fs::write(dir.join(".env"), "API_KEY=hw-race-secret-4471\n").unwrap();
        std::fs::write(dir.join("notes.txt"), "ordinary notes\n").unwrap();
        let mut attacker = std::process::Command::new(&race)
            .args([dir.as_os_str(), ".env".as_ref(), "notes.txt".as_ref()])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut ready = String::new();
        let mut stdout = std::io::BufReader::new(attacker.stdout.take().unwrap());
        std::io::BufRead::read_line(&mut stdout, &mut ready).unwrap();
        assert_eq!(ready, "ready\n");
        let out = sb.sh(
            "for f in app/notes.txt app/.env; do grep -q hw-race-secret $f 2>/dev/null && echo LEAKED-$f; done; echo RAN",
        );
        let _ = attacker.kill();
        let _ = attacker.wait();
        assert!(!out.stdout.contains("LEAKED"), "round {round}: the secret was read\n{out}");
        if out.has_line("RAN") {
            ran += 1;
        } else {
            assert!(out.stderr.contains("swapped or replaced"), "round {round}\n{out}");
            refused += 1;
        }
    }
    eprintln!("20 rounds: {ran} ran, {refused} refused a swapped entry");
}

/// Files a human or a tool runs later: each planted line would run outside any sandbox.
const PERSISTENCE: &[&str] = &[
    ".vscode/tasks.json",
    ".envrc",
    ".mcp.json",
    ".gitmodules",
    ".husky/pre-commit",
    ".pre-commit-config.yaml",
    ".bashrc",
    ".aws/config",
    "sub/.envrc",
    "tools/hooks/pre-push",
];

#[test]
fn persistence_files_are_read_only_and_a_new_one_is_quarantined() {
    let sb = Sandbox::new();
    sb.control(&format!("git init -q -b main . && git config core.hooksPath tools/hooks && echo 'all:' > Makefile && git add Makefile && {GIT_ID} commit -qm one"))
        .expect_code(0);
    for f in PERSISTENCE {
        sb.write(f, "original\n");
    }
    sb.write("sub/.bashrc", "not at the root: an ordinary file\n");
    let attacks: Vec<String> = PERSISTENCE
        .iter()
        .enumerate()
        .map(|(i, f)| format!("try p{i} sh -c 'echo evil >> {f}'; try mv{i} mv {f} {f}.old; "))
        .collect();
    let out = sb.sh(&format!(
        "{TRY}{} try husky-new sh -c 'echo evil > .husky/post-merge'; \
         try hooks-new sh -c 'echo evil > tools/hooks/post-checkout'; \
         echo 'credential_process = evil' > .profile; \
         try makefile sh -c 'echo \"test:\" >> Makefile'; \
         try sub-bashrc sh -c 'echo x >> sub/.bashrc'; \
         try commit sh -c 'git add Makefile && {GIT_ID} commit -qm two'",
        attacks.concat()
    ));
    out.expect_code(0);
    let names: Vec<String> =
        (0..PERSISTENCE.len()).flat_map(|i| [format!("p{i}"), format!("mv{i}")]).collect();
    let mut blocked: Vec<&str> = names.iter().map(String::as_str).collect();
    blocked.extend(["husky-new", "hooks-new"]);
    all_blocked(&out, &blocked);
    all_worked(&out, &["makefile", "sub-bashrc", "commit"]);
    for f in PERSISTENCE {
        assert_eq!(sb.read(f).as_deref(), Some("original\n"), "{f}");
    }
    assert!(!sb.exists(".profile"), "the planted .profile stayed\n{out}");
    assert!(out.stderr.contains("'.profile' was created"), "{out}");
}

#[test]
fn write_protect_entries_are_added_and_removed_in_the_config() {
    let sb = Sandbox::new();
    sb.write(".envrc", "original\n");
    sb.write("deploy/run.sh", "original\n");
    sb.write(".mcp.json", "original\n");
    let config = sb.config("Sandbox:\n  WriteProtect: [deploy/**, '!.envrc']\n");
    let out = sb.sh_with(
        &["--config", config.to_str().unwrap()],
        &format!(
            "{TRY} try envrc sh -c 'echo x >> .envrc'; try deploy sh -c 'echo x >> deploy/run.sh'; \
             try mcp sh -c 'echo x >> .mcp.json'"
        ),
    );
    out.expect_code(0);
    all_worked(&out, &["envrc"]);
    all_blocked(&out, &["deploy", "mcp"]);
    let check = sb
        .hullward()
        .args(["--config", config.to_str().unwrap(), "check", "path", "write", "deploy/run.sh", "--json"])
        .output()
        .unwrap();
    let verdict: serde_json::Value = serde_json::from_slice(&check.stdout).unwrap();
    assert_eq!(verdict["rule"], "write-protect", "{verdict}");
}

/// Issue 9, attack 5: a first call turns `cache` into a symlink to a directory outside the
/// roots; a second call with `--include cache` (or the same path as `Writable` or `System`)
/// would grant that directory. Refused at load, naming the link and its target; an include
/// named directly, or through a link outside every writable tree, still works.
#[test]
fn a_grant_through_a_planted_symlink_is_refused_naming_its_target() {
    let sb = Sandbox::new();
    let planted = sb.sh("ln -s $OUTSIDE cache && echo LINKED");
    assert!(planted.has_line("LINKED"), "a symlink in the root is ordinary work\n{planted}");
    let target = sb.outside.display().to_string();
    let write_through = "echo pwned > cache/planted; echo RAN";
    let refused = |out: &support::Out| {
        out.expect_code(2);
        assert!(!out.stdout.contains("RAN"), "{out}");
        assert!(out.stderr.contains(&target) && out.stderr.contains("cache"), "{out}");
        assert!(!sb.outside.join("planted").exists());
    };
    refused(&sb.sh_with(&["--include", "cache"], write_through));
    for key in ["Writable", "System"] {
        let config = sb.config(&format!("Sandbox:\n  {key}: [{}]\n", sb.root.join("cache").display()));
        refused(&sb.sh_with(&["--config", config.to_str().unwrap()], write_through));
    }
    // The neighbours: the directory named itself, and a link outside every writable tree
    // (`Writable: []` keeps the scratch area out of them wherever the checkout lives).
    let out = sb.sh_with(&["--include", &target], "echo ok > $OUTSIDE/direct && echo RAN");
    out.expect_code(0);
    assert_eq!(std::fs::read_to_string(sb.outside.join("direct")).unwrap(), "ok\n");
    std::os::unix::fs::symlink(&sb.outside, sb.base.join("outer-link")).unwrap();
    let config = sb.config("Sandbox:\n  Writable: []\n");
    let outer = sb.base.join("outer-link").display().to_string();
    let out = sb.sh_with(
        &["--config", config.to_str().unwrap(), "--include", &outer],
        "echo ok > $OUTSIDE/via-link && echo RAN",
    );
    out.expect_code(0);
    assert!(sb.outside.join("via-link").exists(), "{out}");
}

/// Issue 9, attack 5: a deny spelled through a symlink (`alias/dir/secret.txt`, `alias` →
/// `real`) masks the real file, pins the directories above it, and binds the link read-only
/// over itself — neither `mv real` nor a retargeted link uncovers it in this call or the next.
#[test]
fn a_deny_through_a_symlink_masks_and_pins_the_real_path_and_the_link() {
    let sb = Sandbox::new();
    sb.write("real/dir/secret.txt", "HW-LINKED-SECRET-3391\n");
    sb.write("decoy/dir/secret.txt", "decoy\n");
    std::os::unix::fs::symlink("real", sb.root.join("alias")).unwrap();
    attack::install_xchg(&sb.root.join("xchg"));
    let flags = ["--deny", "alias/dir/secret.txt"];
    let script = format!(
        "{TRY}\
         try read-real cat real/dir/secret.txt; \
         try read-alias cat alias/dir/secret.txt; \
         try mv-real mv real real2; \
         try mv-dir mv real/dir real/dir2; \
         try xchg-real ./xchg real decoy; \
         try retarget ln -sfn decoy alias; \
         try rm-link rm alias; \
         try mv-link mv alias alias2; \
         try notes sh -c 'echo n > real/dir/notes.txt'; \
         try read-decoy cat decoy/dir/secret.txt; \
         try list ls alias/dir"
    );
    let out = sb.sh_with(&flags, &script);
    out.expect_code(0);
    assert!(!out.stdout.contains("HW-LINKED-SECRET"), "{out}");
    all_blocked(
        &out,
        &["read-real", "read-alias", "mv-real", "mv-dir", "xchg-real", "retarget", "rm-link", "mv-link"],
    );
    all_worked(&out, &["notes", "read-decoy", "list"]);
    assert_eq!(std::fs::read_link(sb.root.join("alias")).unwrap(), Path::new("real"));
    // The next call, same command line: still masked.
    let again = sb.sh_with(&flags, "cat real/dir/secret.txt; echo RAN");
    assert!(again.has_line("RAN") && !again.stdout.contains("HW-LINKED-SECRET"), "{again}");
}

/// Issue 9, attack 5: a deny path that runs into a symlink loop names nothing that can be
/// masked: strict mode refuses (exit 3) naming it; the same call without the loop runs.
#[test]
fn a_deny_path_through_a_symlink_loop_is_a_strict_refusal() {
    let sb = Sandbox::new();
    std::os::unix::fs::symlink("loop-b", sb.root.join("loop-a")).unwrap();
    std::os::unix::fs::symlink("loop-a", sb.root.join("loop-b")).unwrap();
    let out = sb.sh_with(&["--deny", "loop-a/secret.key"], "echo RAN");
    out.expect_code(3);
    assert!(!out.stdout.contains("RAN"), "{out}");
    assert!(out.stderr.contains("loop-a/secret.key") && out.stderr.contains("symbolic links"), "{out}");
    let out = sb.sh_with(&["--deny", "loop-a/secret.key", "--no-strict"], "echo RAN");
    assert!(out.has_line("RAN") && out.stderr.contains("loop-a/secret.key"), "{out}");
    std::fs::remove_file(sb.root.join("loop-a")).unwrap();
    std::fs::create_dir(sb.root.join("loop-a")).unwrap();
    let out = sb.sh_with(&["--deny", "loop-a/secret.key"], "echo RAN");
    out.expect_code(0);
}

/// Issue 9, point 9: the program's `/tmp`, `/run` and `/dev/shm` are private to its call, so
/// `check path` calls the host's ones outside the sandbox, as `run` shows them: a host file in
/// `/tmp` is neither readable nor writable, and what the program writes there stays in its call.
/// Inside a root under `/tmp`, both allow.
#[test]
fn check_and_run_agree_that_the_hosts_tmp_run_and_shm_are_not_the_programs() {
    let sb = Sandbox::in_dir(Path::new("/tmp/hullward-battery"));
    let tok = support::token("host-tmp");
    let host_file = Path::new("/tmp").join(&tok);
    std::fs::write(&host_file, "HW-HOST-TMP-SECRET-6620\n").unwrap();
    let check = |op: &str, path: &str| -> (i32, serde_json::Value) {
        let out = support::output(sb.hullward().args(["check", "path", op, path, "--json"]));
        (out.code, serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}")))
    };
    let host = host_file.display().to_string();
    for (op, path) in [
        ("read", host.clone()),
        ("write", host.clone()),
        ("delete", host.clone()),
        ("write", format!("/tmp/{tok}-new")),
        ("read", format!("/run/{tok}")),
        ("write", format!("/dev/shm/{tok}")),
    ] {
        let (code, v) = check(op, &path);
        assert_eq!(
            (code, v["verdict"].as_str(), v["rule"].as_str()),
            (1, Some("deny"), Some("outside-sandbox")),
            "{op} {path}: {v}"
        );
    }
    let out = sb.sh(&format!(
        "cat /tmp/{tok}; echo inside > /tmp/{tok}-new && cat /tmp/{tok}-new; \
         echo shm > /dev/shm/{tok} && cat /dev/shm/{tok}; echo root > in-root.txt && echo RAN"
    ));
    let _ = std::fs::remove_file(&host_file);
    out.expect_code(0);
    assert!(!out.stdout.contains("HW-HOST-TMP-SECRET"), "the host's /tmp file was read\n{out}");
    assert!(out.stdout.contains("inside\nshm\nRAN"), "the private /tmp and /dev/shm work\n{out}");
    assert!(!Path::new("/tmp").join(format!("{tok}-new")).exists(), "the write reached the host's /tmp");
    // The root under /tmp is the program's, for both.
    let (code, v) = check("write", sb.root.join("in-root.txt").to_str().unwrap());
    assert_eq!((code, v["verdict"].as_str()), (0, Some("allow")), "{v}");
    assert_eq!(sb.read("in-root.txt").as_deref(), Some("root\n"));
}

/// Issue 9, point 9: `Read` globs bind `run` and `sh` as they bind `check path` — what they do
/// not cover can be listed and written but not read or executed, also after a move, a hard
/// link or a symlink into a covered directory; what they cover reads as before. Without
/// Landlock no layer holds the promise: strict mode refuses.
#[test]
fn read_globs_bind_the_program_as_they_bind_check_path() {
    let sb = Sandbox::new();
    sb.write("src/main.rs", "fn main() {} // HW-SRC-OK\n");
    sb.write("notes/plan.md", "HW-NOTES-MD-OK\n");
    sb.write("private/data.txt", "HW-READ-DENIED-8812\n");
    let tool = sb.write("tools/run.sh", "#!/bin/sh\necho HW-EXEC-RAN\n");
    std::fs::set_permissions(&tool, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let flags = ["--read", "src/**", "--read", "**/*.md"];
    let out = sb.sh_with(
        &flags,
        &format!(
            "{TRY}\
             try read-src cat src/main.rs; \
             try read-md cat notes/plan.md; \
             try read-private cat private/data.txt; \
             try exec-tool ./tools/run.sh; \
             try copy-out cp private/data.txt /tmp/copy; \
             try mv-into-src mv private/data.txt src/data.txt; \
             try ln-into-src ln private/data.txt src/hard.txt; \
             try read-via-link sh -c 'ln -sf ../private/data.txt src/link.txt && cat src/link.txt'; \
             try list ls private; \
             try write-private sh -c 'echo new > private/new.txt'; \
             try write-src sh -c 'echo more >> src/main.rs'"
        ),
    );
    out.expect_code(0);
    assert!(!out.stdout.contains("HW-READ-DENIED") && !out.stdout.contains("HW-EXEC-RAN"), "{out}");
    all_blocked(
        &out,
        &["read-private", "exec-tool", "copy-out", "mv-into-src", "ln-into-src", "read-via-link"],
    );
    all_worked(&out, &["read-src", "read-md", "list", "write-private", "write-src"]);
    assert_eq!(sb.read("private/data.txt").as_deref(), Some("HW-READ-DENIED-8812\n"));
    assert_eq!(sb.read("private/new.txt").as_deref(), Some("new\n"));
    // `check path` decides the same.
    for (op, path, verdict) in [
        ("read", "private/data.txt", "deny"),
        ("exec", "tools/run.sh", "deny"),
        ("read", "src/main.rs", "allow"),
        ("read", "notes/plan.md", "allow"),
        ("list", "private", "allow"),
        ("write", "private/new.txt", "allow"),
    ] {
        let c = support::output(
            sb.hullward()
                .args(["check", "path", "--read", "src/**", "--read", "**/*.md", op, path, "--json"]),
        );
        let v: serde_json::Value = serde_json::from_str(&c.stdout).unwrap_or_else(|e| panic!("{e}\n{c}"));
        assert_eq!(v["verdict"], verdict, "{op} {path}: {v}");
    }
    // No Landlock, no layer for the promise: strict refuses, naming it.
    let out = support::output(sb.run_cmd(&flags, &["cat", "src/main.rs"]).env("HULLWARD_LANDLOCK_ABI", "0"));
    out.expect_code(3);
    assert!(out.stderr.contains("Read globs"), "{out}");
}

/// Issue 9 (tests): a tracked `.env.example` — masked by the built-in `.env.*` deny, which
/// Decision 5 keeps — does not break `git status` or `git add -A` in the child: its stand-in has
/// the file's size and modification time, and the child's git compares only those. The content
/// stays unreadable, and ordinary work (edit, add, commit) goes on.
#[test]
fn a_tracked_masked_file_does_not_break_git_status_or_add() {
    let sb = Sandbox::new();
    sb.write(".env.example", "API_KEY=HW-EXAMPLE-VALUE-2290\n");
    sb.write("config/.env.test", "TOKEN=HW-EXAMPLE-TOKEN-7781\n");
    sb.write("README.md", "readme\n");
    // Older than the index: a file written in the same second as the index is "racily clean"
    // and git would read it again whatever its stat data says.
    sb.control(&format!(
        "touch -d '2024-01-01 00:00:00' .env.example config/.env.test README.md \
         && git init -q -b main . && git add -A && {GIT_ID} commit -qm one"
    ))
    .expect_code(0);
    let out = sb.sh(&format!(
        "{TRY}\
         try read cat .env.example; \
         try read-nested cat config/.env.test; \
         echo STATUS=$(git status --porcelain 2>&1 | tr '\\n' ' '); \
         try add git add -A; \
         echo change >> README.md; \
         try add-edit git add -A; \
         try commit {GIT_ID} commit -qm two; \
         echo AFTER=$(git status --porcelain 2>&1 | tr '\\n' ' ')"
    ));
    out.expect_code(0);
    assert!(!out.stdout.contains("HW-EXAMPLE"), "{out}");
    all_blocked(&out, &["read", "read-nested"]);
    all_worked(&out, &["add", "add-edit", "commit"]);
    assert_eq!(out.value("STATUS").as_deref(), Some(""), "git status in the child\n{out}");
    assert_eq!(out.value("AFTER").as_deref(), Some(""), "git status after the commit\n{out}");
    let host = sb.control("git show --name-only --format= HEAD; git status --porcelain; cat .env.example");
    host.expect_code(0);
    assert_eq!(host.stdout, "README.md\nAPI_KEY=HW-EXAMPLE-VALUE-2290\n", "{host}");
}

/// A denied symlink (`.env` → `store/creds.txt`) has its target masked; retargeted, it would
/// uncover that target in the next call — so the link is bound read-only over itself, like a
/// `.git` that is a symlink to the repository (replaced, it would point git elsewhere).
#[test]
fn a_denied_symlink_and_a_symlinked_git_cannot_be_retargeted() {
    let sb = Sandbox::new();
    sb.write("store/creds.txt", "HW-CREDS-BEHIND-ENV-4410\n");
    sb.write("README.md", "readme\n");
    std::os::unix::fs::symlink("store/creds.txt", sb.root.join(".env")).unwrap();
    sb.control("git init -q -b main gitstore/real && mkdir proj && ln -s ../gitstore/real/.git proj/.git")
        .expect_code(0);
    let script = format!(
        "{TRY}\
         try read-env cat .env; \
         try read-target cat store/creds.txt; \
         try retarget-env ln -sfn README.md .env; \
         try rm-env rm .env; \
         try retarget-git ln -sfn /tmp/evil proj/.git; \
         try rm-git rm proj/.git; \
         try status sh -c 'cd proj && git status --porcelain'; \
         try readme cat README.md"
    );
    let out = sb.sh(&script);
    out.expect_code(0);
    assert!(!out.stdout.contains("HW-CREDS-BEHIND-ENV"), "{out}");
    all_blocked(&out, &["read-env", "read-target", "retarget-env", "rm-env", "retarget-git", "rm-git"]);
    all_worked(&out, &["status", "readme"]);
    assert_eq!(std::fs::read_link(sb.root.join(".env")).unwrap(), Path::new("store/creds.txt"));
    assert_eq!(std::fs::read_link(sb.root.join("proj/.git")).unwrap(), Path::new("../gitstore/real/.git"));
    let again = sb.sh("cat store/creds.txt; echo RAN");
    assert!(again.has_line("RAN") && !again.stdout.contains("HW-CREDS-BEHIND-ENV"), "{again}");
}

/// Issue 9, point 9: deny rules apply inside every granted tree, `System` included — a `.env` in
/// a System directory (`/opt/app/.env`) is masked for `run` as `check path` denies it, and an
/// anchored rule is relative to the System directory for both; the rest reads as before.
#[test]
fn deny_rules_apply_inside_system_dirs_for_run_as_for_check() {
    let sb = Sandbox::new();
    let app = sb.base.join("sysapp");
    support::write_mode(&app.join(".env"), "APP_TOKEN=HW-SYSTEM-ENV-5150\n", 0o644);
    support::write_mode(&app.join("conf/app.yaml"), "name: app\n", 0o644);
    support::write_mode(&app.join("conf/secret.yaml"), "key: HW-SYSTEM-ANCHORED-7731\n", 0o644);
    // System entries that are files themselves: a denied one is masked, its neighbour is read.
    let files = sb.base.join("sysfiles");
    support::write_mode(&files.join(".env"), "FILE_TOKEN=HW-SYSTEM-FILE-6242\n", 0o644);
    support::write_mode(&files.join("ok.txt"), "HW-FILE-OK\n", 0o644);
    let config = sb.config(&format!(
        "Sandbox:\n  System: [{}, {}, {}]\n",
        app.display(),
        files.join(".env").display(),
        files.join("ok.txt").display()
    ));
    let flags = ["--config", config.to_str().unwrap(), "--deny", "conf/secret.yaml"];
    let (a, f) = (app.display(), files.display());
    let out = sb.sh_with(
        &flags,
        &format!(
            "{TRY} try env cat {a}/.env; try anchored cat {a}/conf/secret.yaml; \
             try conf cat {a}/conf/app.yaml; try list ls -a {a}; \
             try file_env cat {f}/.env; try file_ok cat {f}/ok.txt"
        ),
    );
    out.expect_code(0);
    assert!(!out.stdout.contains("HW-SYSTEM"), "{out}");
    all_blocked(&out, &["env", "anchored", "file_env"]);
    all_worked(&out, &["conf", "list", "file_ok"]);
    for (rel, verdict) in [(".env", "deny"), ("conf/secret.yaml", "deny"), ("conf/app.yaml", "allow")] {
        let path = app.join(rel);
        let c = support::output(sb.hullward().args(flags).args([
            "check",
            "path",
            "read",
            path.to_str().unwrap(),
            "--json",
        ]));
        let v: serde_json::Value = serde_json::from_str(&c.stdout).unwrap_or_else(|e| panic!("{e}\n{c}"));
        assert_eq!(v["verdict"], verdict, "{rel}: {v}");
    }
}

#[test]
fn read_globs_refuse_a_root_inside_a_tree_the_program_may_read_whole() {
    // Landlock only adds rights: with HOME the root's parent, the call's private HOME is granted
    // whole and would keep the root readable whatever the Read globs say.
    let sb = Sandbox::new();
    sb.write("src/main.rs", "HW-SRC-OK\n");
    sb.write("private/data.txt", "HW-READ-DENIED-4471\n");
    let run = |flags: &[&str], home: &Path| {
        let mut cmd = sb.run_cmd(
            &[&["--read", "src/**"], flags].concat(),
            &["sh", "-c", "cat private/data.txt; cat src/main.rs"],
        );
        cmd.env("HOME", home);
        support::output(&mut cmd)
    };
    let refused = run(&[], &sb.base);
    refused.expect_code(3);
    assert!(refused.stderr.contains("reads inside the roots only where the Read globs allow"), "{refused}");
    assert!(refused.stderr.contains(&format!("it lies inside '{}'", sb.base.display())), "{refused}");
    assert!(!refused.all().contains("HW-READ-DENIED"), "{refused}");
    let weaker = run(&["--no-strict"], &sb.base);
    weaker.expect_code(0);
    assert!(weaker.stderr.contains("--no-strict: running without Landlock rules on the root"), "{weaker}");
    // The neighbour: HOME elsewhere, the same globs hold.
    let held = run(&[], &sb.home);
    held.expect_code(0);
    assert!(held.stdout.contains("HW-SRC-OK") && !held.stdout.contains("HW-READ-DENIED"), "{held}");
}
