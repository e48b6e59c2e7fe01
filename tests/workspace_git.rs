//! Real-kernel check of the git rules an overlay call's apply keeps
//! (`Sandbox.Git.ProtectedBranches`, default `main`, `master`, `release*`): a commit on `main`
//! inside the sandbox never moves the host's `main`, a deleted branch stays, and the neighbour —
//! a commit on a feature branch — lands with its objects.

#[path = "support/sandbox.rs"]
mod support;

use support::Sandbox;

const GIT: &str = "git -c user.email=a@b -c user.name=a";

fn rev(sb: &Sandbox, name: &str) -> String {
    let out = sb.control(&format!("git rev-parse --verify -q {name}"));
    out.stdout.trim().to_string()
}

#[test]
fn an_apply_never_moves_a_protected_branch_nor_deletes_a_branch() {
    let sb = Sandbox::new();
    sb.write("a.txt", "one\n");
    let init =
        sb.control(&format!("git init -q -b main . && git add -A && {GIT} commit -qm one && git branch old"));
    init.expect_code(0);
    let (main, old) = (rev(&sb, "main"), rev(&sb, "old"));
    let out = sb.sh_with(
        &["--workspace", "overlay"],
        &format!(
            "set -e; echo two > a.txt; {GIT} commit -qam two; git checkout -q -b feature; \
             echo three > b.txt; git add b.txt; {GIT} commit -qm three; git checkout -q main; \
             git branch -D old >/dev/null; git rev-parse main"
        ),
    );
    out.expect_code(0);
    assert_ne!(out.stdout.trim(), main, "the program committed on main inside the sandbox\n{out}");
    assert_eq!(rev(&sb, "main"), main, "the host's main did not move\n{out}");
    assert_eq!(rev(&sb, "old"), old, "the deleted branch is still there\n{out}");
    assert!(out.stderr.contains("would move the protected branch 'main'"), "{out}");
    assert!(out.stderr.contains("would delete the branch 'old'"), "{out}");
    let feature = rev(&sb, "feature");
    assert!(!feature.is_empty(), "the feature branch landed\n{out}");
    let log = sb.control("git log --format=%s feature");
    assert_eq!(log.stdout, "three\ntwo\none\n", "its commits' objects landed too\n{log}");
}
