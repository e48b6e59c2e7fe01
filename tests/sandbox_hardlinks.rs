//! Real-kernel tests: a denied file's content stays out of reach under its other names. A mask
//! covers a path; a second hard link to a denied `.env` (made outside the sandbox: `cp -al`, a
//! backup tool, the user) is masked as well, whichever of the two names the deny rule matches,
//! and `check path` agrees; a file with two links of which neither is denied reads as before.

#[path = "support/sandbox.rs"]
mod support;

#[path = "support/attack.rs"]
mod attack;

use attack::{all_blocked, all_worked, TRY};
use support::Sandbox;

fn check(sb: &Sandbox, rel: &str) -> String {
    let path = sb.root.join(rel);
    let c = support::output(sb.hullward().args(["check", "path", "read", path.to_str().unwrap(), "--json"]));
    let v: serde_json::Value = serde_json::from_str(&c.stdout).unwrap_or_else(|e| panic!("{e}\n{c}"));
    v["verdict"].as_str().unwrap_or_default().to_string()
}

#[test]
fn every_name_of_a_denied_file_is_masked_and_other_linked_files_read_as_before() {
    let sb = Sandbox::new();
    sb.write(".env", "TOKEN=HW-LINKED-ENV-3141\n");
    sb.write("notes/plain.txt", "HW-PLAIN-LINKED-OK\n");
    sb.write("README", "HW-README-OK\n");
    sb.write("data/config.txt", "HW-RENAMED-SECRET-2718\n");
    std::fs::create_dir_all(sb.root.join("backup/deep")).unwrap();
    // A second name of the denied file, and a denied name given to an ordinary file.
    std::fs::hard_link(sb.root.join(".env"), sb.root.join("backup/deep/env-copy.txt")).unwrap();
    std::fs::hard_link(sb.root.join("data/config.txt"), sb.root.join("data/.env.local")).unwrap();
    // Two names, neither denied.
    std::fs::hard_link(sb.root.join("notes/plain.txt"), sb.root.join("notes/plain-2.txt")).unwrap();

    let out = sb.sh(&format!(
        "{TRY} try copy grep -q HW-LINKED backup/deep/env-copy.txt; \
         try renamed grep -q HW-RENAMED data/config.txt; \
         try plain grep -q HW-PLAIN notes/plain-2.txt; try readme grep -q HW-README README; \
         base64 backup/deep/env-copy.txt data/config.txt; echo DONE"
    ));
    out.expect_code(0);
    assert!(out.has_line("DONE"), "{out}");
    assert!(!out.all().contains("HW-LINKED-ENV") && !out.all().contains("HW-RENAMED-SECRET"), "{out}");
    for content in ["TOKEN=HW-LINKED-ENV-3141\n", "HW-RENAMED-SECRET-2718\n"] {
        let b64 = support::output(
            std::process::Command::new("sh").args(["-c", &format!("printf '{content}' | base64")]),
        );
        let head = &b64.stdout.trim()[..16];
        assert!(!out.stdout.contains(head), "{content:?} leaked in base64:\n{out}");
    }
    all_blocked(&out, &["copy", "renamed"]);
    all_worked(&out, &["plain", "readme"]);

    assert_eq!(check(&sb, "backup/deep/env-copy.txt"), "deny");
    assert_eq!(check(&sb, "data/config.txt"), "deny");
    assert_eq!(check(&sb, "notes/plain-2.txt"), "allow");
    assert_eq!(check(&sb, "README"), "allow");
    // Nothing on the host changed: both names still hold the content.
    assert_eq!(
        std::fs::read_to_string(sb.root.join("backup/deep/env-copy.txt")).unwrap(),
        "TOKEN=HW-LINKED-ENV-3141\n"
    );
}
