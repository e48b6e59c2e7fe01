//! The audit log on disk: modes, whole lines under concurrent writers, and no secret ever written.

mod filter_support;

use std::os::unix::fs::{symlink, PermissionsExt};
use std::sync::Arc;
use std::time::Duration;

use filter_support::{env_with, policy, scratch, write};
use hullward::audit::{AuditError, AuditLog, AuditRecord, Subject};
use hullward::filter::{FilterStats, SecretSet};
use hullward::guard::Decision;
use serde_json::Value;

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().permissions().mode() & 0o7777
}

#[test]
fn the_log_is_0600_in_a_0700_folder_and_a_wider_mode_is_narrowed() {
    let dir = scratch("audit-modes");
    let path = dir.join("home/.hullward/audit.jsonl");
    let log = AuditLog::open(&path).unwrap();
    assert_eq!(log.path(), path);
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(&dir.join("home/.hullward")), 0o700);
    assert_eq!(mode(&dir.join("home")), 0o700);

    let loose = write(&dir, "loose.jsonl", "");
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).unwrap();
    AuditLog::open(&loose).unwrap();
    assert_eq!(mode(&loose), 0o600);
}

#[test]
fn links_and_non_files_are_refused() {
    let dir = scratch("audit-refuse");
    let target = write(&dir, "bashrc", "original\n");
    symlink(&target, dir.join("audit.jsonl")).unwrap();
    assert!(matches!(AuditLog::open(&dir.join("audit.jsonl")), Err(AuditError::Open { .. })));
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "original\n");
    std::fs::create_dir(dir.join("adir")).unwrap();
    let err = AuditLog::open(&dir.join("adir")).unwrap_err();
    assert!(err.to_string().contains("adir"), "{err}");
}

#[test]
fn concurrent_writers_append_whole_lines() {
    let dir = scratch("audit-concurrent");
    let path = dir.join("audit.jsonl");
    let secrets = SecretSet::default();
    const THREADS: usize = 8;
    const RECORDS: usize = 200;
    let shared = Arc::new(AuditLog::open(&path).unwrap());
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let path = path.clone();
            let shared = Arc::clone(&shared);
            let secrets = secrets.clone();
            std::thread::spawn(move || {
                // Half the threads share one descriptor, the others open their own (as separate
                // processes would).
                let own = AuditLog::open(&path).unwrap();
                let log = if t % 2 == 0 { &*shared } else { &own };
                let long = format!("{t}").repeat(6000);
                for i in 0..RECORDS {
                    let rec = AuditRecord::call(
                        format!("t{t}-{i}"),
                        Subject::Command(long.clone()),
                        0,
                        Duration::from_millis(1),
                        FilterStats::default(),
                    );
                    log.record(&rec, &secrets).unwrap();
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), THREADS * RECORDS);
    for line in lines {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {}", &line[..80]));
        let id = v["call_id"].as_str().unwrap();
        let t = &id[1..id.find('-').unwrap()];
        assert_eq!(v["command"].as_str().unwrap(), t.repeat(6000));
    }
}

#[test]
fn planted_secrets_never_reach_the_log() {
    let dir = scratch("audit-secrets");
    let root = dir.join("work");
    let home = dir.join("home");
    write(&root, ".env", "STRIPE_SECRET_KEY=sk_live_planted_in_dotenv_77\nPORT=3000\n");
    write(&root, "secrets/db.yaml", "password: planted-yaml-password-3\n");
    write(&home, ".git-credentials", "https://bob:planted-git-credential-9@github.com\n");
    let env = env_with(&home, &[("GITHUB_TOKEN", "ghp_planted_environment_token_1")]);
    let policy = policy(&root, &["secrets/**"], &env);
    let secrets = SecretSet::discover(&policy, &env);
    let path = dir.join("audit.jsonl");
    let log = AuditLog::open(&path).unwrap();

    let command =
        "curl -H 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.x.y' -u x:ghp_planted_environment_token_1 \
                   https://api.example.com/?api_key=literal-key https://bob:planted-git-credential-9@h/";
    let denial = Decision::deny(
        "shell-deny",
        "[DENIED] 'echo sk_live_planted_in_dotenv_77 planted-yaml-password-3' is blocked".into(),
    );
    log.record(&AuditRecord::decision("c1", Subject::Command(command.into()), &denial), &secrets).unwrap();
    let mut call = AuditRecord::call(
        "c1",
        Subject::Argv(vec!["echo".into(), "sk-ant-api03-0123456789abcdefghijkl".into()]),
        0,
        Duration::from_millis(5),
        FilterStats::default(),
    );
    call.dropped.push("token=planted-in-a-note".into());
    log.record(&call, &secrets).unwrap();
    log.record(
        &AuditRecord::decision(
            "c2",
            Subject::Url("https://u:planted-git-credential-9@example.com".into()),
            &Decision::allow("host-allowlist"),
        ),
        &secrets,
    )
    .unwrap();

    let text = std::fs::read_to_string(&path).unwrap();
    for leaked in [
        "ghp_planted_environment_token_1",
        "sk_live_planted_in_dotenv_77",
        "planted-yaml-password-3",
        "planted-git-credential-9",
        "eyJhbGciOiJIUzI1NiJ9",
        "literal-key",
        "sk-ant-api03",
        "planted-in-a-note",
    ] {
        assert!(!text.contains(leaked), "{leaked} leaked into {text}");
    }
    assert!(text.contains("<secret-hidden>") && text.contains("[REDACTED]"));
    assert_eq!(text.lines().count(), 3);
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        assert!(v["time"].as_str().unwrap().ends_with('Z'));
    }
}
