//! Secret discovery on disk: what is read, what the scan bounds leave out, and what a long-lived
//! process keeps of it.

mod filter_support;

use std::os::unix::fs::symlink;
use std::time::{Duration, Instant};

use filter_support::{env_with, policy, scratch, write};
use hullward::filter::secrets::{ReadBudget, SCAN_MAX_FILE_BYTES};
use hullward::filter::{FileSecrets, OutputFilter, SecretSet};
use hullward::sandbox::masks::CTIME_TICK;

/// A PEM private key whose body lines are deterministic but look like base64.
fn fake_key(kind: &str, lines: usize) -> String {
    const B64: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut state = 0x2545_f491_4f6c_dd1du64;
    let mut body = String::new();
    for i in 0..lines {
        let len = if i + 1 == lines { 20 } else { 64 };
        for _ in 0..len {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            body.push(char::from(B64[(state % 64) as usize]));
        }
        body.push('\n');
    }
    format!("-----BEGIN {kind}PRIVATE KEY-----\n{body}-----END {kind}PRIVATE KEY-----\n")
}

#[test]
fn protected_files_at_any_depth_are_read_and_ordinary_ones_are_not() {
    let dir = scratch("secrets-depth");
    let root = dir.join("work");
    write(&root, ".env", "API_KEY=top-level-key-1\nPORT=3000\nNODE_ENV=production\n");
    write(&root, "apps/web/.env.local", "export NEXT_SECRET=\"nested-secret-2\"\n");
    write(&root, "config/app.yaml", "password: not-a-protected-file\n");
    write(
        &root,
        "secrets/service.json",
        r#"{"client_secret": "json-client-secret-3", "client_id": "visible-id-123"}"#,
    );
    let env = env_with(&dir.join("home"), &[]);
    let set = SecretSet::discover(&policy(&root, &["secrets/**"], &env), &env);
    for v in ["top-level-key-1", "nested-secret-2", "json-client-secret-3"] {
        assert!(set.contains(v.as_bytes()), "{v}");
    }
    for v in ["3000", "production", "not-a-protected-file", "visible-id-123"] {
        assert!(!set.contains(v.as_bytes()), "{v}");
    }
}

#[test]
fn the_scan_reads_what_the_sandbox_walk_protects() {
    let dir = scratch("secrets-bounds");
    let root = dir.join("work");
    write(&root, "node_modules/pkg/.env", "API_KEY=in-node-modules-1\n");
    write(&root, "vendor/.env", "API_KEY=in-vendor-dir-2\n");
    write(&root, "a/b/c/d/e/f/g/.env", "API_KEY=at-depth-eight-3\n");
    write(&root, "a/b/c/d/e/f/g/h/.env", "API_KEY=at-depth-nine-4\n");
    let big = format!("API_KEY=in-a-big-file-5\n{}", "#".repeat(SCAN_MAX_FILE_BYTES as usize));
    write(&root, "big/.env", big);
    let outside = write(&dir, "elsewhere/.env", "API_KEY=behind-a-dir-link-6\n");
    symlink(outside.parent().unwrap(), root.join("linked")).unwrap();
    let target = write(&dir, "target-file", "API_KEY=behind-a-file-link-7\n");
    symlink(&target, root.join("linked.env")).unwrap();
    std::fs::create_dir_all(root.join("fifo")).unwrap();
    let status = std::process::Command::new("mkfifo").arg(root.join("fifo/.env")).status().unwrap();
    assert!(status.success());
    let env = env_with(&dir.join("home"), &[]);
    let policy = policy(&root, &["linked.env"], &env);
    let started = Instant::now();
    let set = SecretSet::discover(&policy, &env);
    assert!(started.elapsed() < Duration::from_secs(5), "the FIFO stalled the scan");
    // The same walk as the sandbox's: dependency directories and deep trees included.
    for v in [
        "in-node-modules-1",
        "in-vendor-dir-2",
        "at-depth-eight-3",
        "at-depth-nine-4",
        "behind-a-file-link-7",
    ] {
        assert!(set.contains(v.as_bytes()), "{v}");
    }
    for skipped in ["in-a-big-file-5", "behind-a-dir-link-6"] {
        assert!(!set.contains(skipped.as_bytes()), "{skipped}");
    }
}

#[test]
fn planted_protected_files_cannot_push_the_real_ones_out_of_the_read_budget() {
    let dir = scratch("secrets-budget");
    let root = dir.join("work");
    std::fs::create_dir_all(root.join("deep/planted")).unwrap();
    std::fs::write(root.join(".env"), "API_KEY=the-real-one-1234\n").unwrap();
    let line = "API_KEY=planted-value-0000000000\n".repeat(4000);
    for i in 0..40 {
        std::fs::write(root.join(format!("deep/planted/.env.{i}")), &line).unwrap();
    }
    let env = env_with(&dir.join("home"), &[]);
    let p = policy(&root, &[], &env);
    let walk = hullward::sandbox::masks::scan_policy(&p, &p.roots()).unwrap();
    let budget = ReadBudget { bytes: 300_000, ..ReadBudget::default() };
    let found = FileSecrets::read_within(walk.secret_files(), &p, budget);
    assert!(found.truncated > 0, "{found:?}");
    let set = SecretSet::from_env_and_files(&std::collections::BTreeMap::new(), &found);
    assert!(set.contains(b"the-real-one-1234"), "the shallow, real file is read first");
    // The whole set, as a call builds it, stays within the default budget.
    let found = FileSecrets::scan(&p);
    assert!(found.len() <= ReadBudget::default().values);
}

#[test]
fn home_credential_files_unless_turned_off() {
    let dir = scratch("secrets-home");
    let root = dir.join("work");
    let home = dir.join("home");
    let key = fake_key("OPENSSH ", 7);
    write(&home, ".ssh/id_ed25519", &key);
    write(&home, ".ssh/id_ed25519.pub", "ssh-ed25519 AAAAC3NzaPUBLICPUBLIC me@host\n");
    write(
        &home,
        ".aws/credentials",
        "[default]\naws_access_key_id = AKIAVISIBLE\naws_secret_access_key = aws-secret-1\n",
    );
    write(&home, ".pgpass", "db:5432:*:app:pgpass-secret-2\n");
    write(&home, ".git-credentials", "https://me:git-credential-3@github.com\n");
    write(&home, ".netrc", "machine h login me password netrc-secret-4\n");
    write(&root, ".env", "API_KEY=dotenv-value-5\n");
    let env = env_with(&home, &[]);
    let policy = policy(&root, &[], &env);
    let set = SecretSet::discover(&policy, &env);
    for v in ["aws-secret-1", "pgpass-secret-2", "git-credential-3", "netrc-secret-4", "dotenv-value-5"] {
        assert!(set.contains(v.as_bytes()), "{v}");
    }
    assert!(!set.contains(b"AKIAVISIBLE"));

    // `cat ~/.ssh/id_ed25519` prints nothing usable, even with the newlines removed.
    let mut f = OutputFilter::new(&set, &policy);
    let mut out = Vec::new();
    f.push(key.as_bytes(), &mut out);
    f.push(key.replace('\n', "").as_bytes(), &mut out);
    f.finish(&mut out);
    let out = String::from_utf8(out).unwrap();
    let first_body_line = key.lines().nth(1).unwrap();
    assert!(!out.contains(&first_body_line[..32]), "{out}");
    assert!(out.starts_with(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n<secret-hidden>\n<secret-hidden>\n<secret-hidden>\n"
    ));

    let config = write(&dir, "no-creds.yaml", "Security:\n  DenyCredentialFiles: false\n");
    let mut req =
        hullward::policy::load::LoadRequest { cwd: root.clone(), env: env.clone(), ..Default::default() };
    req.config = Some(config);
    let policy = hullward::policy::load::load(&req).unwrap();
    let set = SecretSet::discover(&policy, &env);
    assert!(!set.contains(b"netrc-secret-4") && !set.contains(b"aws-secret-1"));
    assert!(set.contains(b"dotenv-value-5"), ".env stays protected either way");
}

/// A long-lived process keeps the values of a protected file while one `stat` says it holds
/// the same content. A file read just after it was written is not kept (a write within the same
/// clock tick could leave its times as they were); an unchanged one is taken from what was
/// kept; a rewrite is read again — one that restores the size and the modification time too
/// (the change time moves), and a file renamed over it (another inode).
#[test]
fn kept_file_values_are_taken_only_while_the_file_is_unchanged() {
    hullward::filter::secrets::keep_file_values();
    let dir = scratch("secrets-kept");
    let root = dir.join("work");
    let before_write = Instant::now();
    let file = write(&root, ".env", "API_KEY=first-value-1\n");
    let env = env_with(&dir.join("home"), &[]);
    let policy = policy(&root, &[], &env);
    let read = || FileSecrets::read_protected([(file.as_path(), None)], &policy);
    let values = |f: &FileSecrets| SecretSet::from_env_and_files(&Default::default(), f);
    let tick = || std::thread::sleep(Duration::from_millis(30));

    let fresh = read();
    assert_eq!((fresh.files_read, fresh.reused), (1, 0));
    assert!(values(&fresh).contains(b"first-value-1"));
    let second = read();
    // The kernel stamps ctimes with a clock up to a tick (10 ms at HZ=100) behind: reads that
    // began within half of CTIME_TICK of the write began within CTIME_TICK of its ctime, so
    // neither may have kept the values. On a loaded machine the reads may come later.
    if before_write.elapsed() < CTIME_TICK / 2 {
        assert_eq!(second.reused, 0, "a file changed within a clock tick was kept");
        tick();
        assert_eq!(read().reused, 0, "kept before it was read");
    } else {
        tick();
        read();
    }
    let kept = read();
    assert_eq!((kept.files_read, kept.reused), (1, 1));
    assert!(values(&kept).contains(b"first-value-1"));

    let modified = std::fs::metadata(&file).unwrap().modified().unwrap();
    std::fs::write(&file, "API_KEY=secnd-value-2\n").unwrap();
    std::fs::File::options().write(true).open(&file).unwrap().set_modified(modified).unwrap();
    let again = read();
    assert_eq!(again.reused, 0, "a rewrite with the same size and modification time was not read");
    assert!(values(&again).contains(b"secnd-value-2") && !values(&again).contains(b"first-value-1"));

    tick();
    read();
    assert_eq!(read().reused, 1);
    write(&root, "other", "API_KEY=third-value-3\n");
    std::fs::rename(root.join("other"), &file).unwrap();
    let renamed = read();
    assert_eq!(renamed.reused, 0, "a file renamed over it was not read");
    assert!(values(&renamed).contains(b"third-value-3"));
}
