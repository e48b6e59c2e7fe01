//! Real-kernel battery, legitimate work: what an agent's tool calls do every day must keep
//! working under `hullward run` — git, gcc, python (multiprocessing, subprocess, tempfile),
//! pipes and redirections, devices, exit statuses, stdin, large output — and the after-call
//! report names protected files the call created.

#[path = "support/sandbox.rs"]
mod support;

use std::io::Write;
use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};
use std::time::Instant;

use support::Sandbox;

const GIT_ENV: &[&str] = &[
    "--env",
    "GIT_AUTHOR_NAME",
    "--env",
    "GIT_AUTHOR_EMAIL",
    "--env",
    "GIT_COMMITTER_NAME",
    "--env",
    "GIT_COMMITTER_EMAIL",
];

#[test]
fn git_init_add_commit_log_in_the_workspace() {
    let sb = Sandbox::new();
    sb.write(".env", "HW-DOTENV-SECRET-git\n");
    sb.write(".gitignore", ".env\n");
    sb.write("src/main.c", "int main(void) { return 0; }\n");
    let mut c = sb.run_cmd(
        GIT_ENV,
        &[
            "sh",
            "-c",
            "set -e; git init -q -b main .; git add -A; git commit -q -m 'first commit'; \
             echo more >> src/main.c; git commit -q -am second; git log --format='%an <%ae> %s'; \
             git status --short; echo GIT-DONE",
        ],
    );
    c.env("GIT_AUTHOR_NAME", "Hull Ward")
        .env("GIT_AUTHOR_EMAIL", "hw@example.invalid")
        .env("GIT_COMMITTER_NAME", "Hull Ward")
        .env("GIT_COMMITTER_EMAIL", "hw@example.invalid");
    let out = support::output(&mut c);
    out.expect_code(0);
    assert!(out.stdout.contains("Hull Ward <hw@example.invalid> second"), "{out}");
    assert!(out.stdout.contains("Hull Ward <hw@example.invalid> first commit"), "{out}");
    assert!(out.stdout.ends_with("GIT-DONE\n"), "the tree is not clean\n{out}");
    // Outside, the repository is real and the ignored secret is not in it.
    let log = sb.control("git log --oneline | wc -l; git ls-files");
    assert!(log.stdout.starts_with("2\n") && log.stdout.contains("src/main.c"), "{log}");
    assert!(!log.stdout.contains(".env\n"), "{log}");
}

#[test]
fn gcc_compiles_and_runs_a_c_program() {
    let sb = Sandbox::new();
    sb.write(
        "hello.c",
        "#include <stdio.h>\n#include <math.h>\nint main(void) { printf(\"HW-HELLO %d\\n\", (int)sqrt(49.0)); return 5; }\n",
    );
    let out = sb.sh("gcc -O2 -Wall -o hello hello.c -lm && ./hello; echo rc=$?");
    out.expect_code(0);
    assert!(out.stdout.contains("HW-HELLO 7\nrc=5"), "{out}");
    assert!(sb.root.join("hello").is_file());
}

const PYTHON_WORK: &str = r#"
import multiprocessing, os, subprocess, tempfile
def square(x):
    return x * x
if __name__ == '__main__':
    with multiprocessing.Pool(2) as pool:
        print('POOL', sum(pool.map(square, range(10))))
    q = multiprocessing.Queue(); p = multiprocessing.Process(target=q.put, args=('HW-MP',)); p.start()
    print('QUEUE', q.get()); p.join()
    print('SUB', subprocess.run(['sh', '-c', 'echo HW-SUB; exit 3'], capture_output=True, text=True).stdout.strip())
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, 'f'); open(path, 'w').write('x')
        print('TEMP', d.startswith('/tmp/'), os.path.getsize(path))
    with open('py-out.txt', 'w') as f:
        f.write('HW-PY-FILE')
"#;

#[test]
fn python_multiprocessing_subprocess_and_tempfile_work() {
    let sb = Sandbox::new();
    let out = sb.run(&[], &["python3", "-c", PYTHON_WORK]);
    out.expect_code(0);
    for want in ["POOL 285", "QUEUE HW-MP", "SUB HW-SUB", "TEMP True 1"] {
        assert!(out.stdout.contains(want), "{want}\n{out}");
    }
    assert_eq!(sb.read("py-out.txt").as_deref(), Some("HW-PY-FILE"));
}

#[test]
fn pipes_redirections_and_devices_work() {
    let sb = Sandbox::new();
    let out = sb.sh(
        "printf 'b\\na\\nc\\n' | sort | tee sorted.txt | wc -l > count.txt; cat < sorted.txt; \
         echo to-stderr >&2; exec 3> fd3.txt; echo three >&3; exec 3>&-; \
         echo URANDOM=$(head -c 32 /dev/urandom | wc -c); echo ZERO=$(head -c 4 /dev/zero | od -An -tx1 | tr -d ' '); \
         echo x > /dev/null && echo NULL=$(wc -c < /dev/null); echo x > /dev/full; echo FULL=$?; \
         echo STDOUT-LINK=$(echo via-dev-stdout > /dev/stdout)",
    );
    out.expect_code(0);
    assert!(out.stdout.starts_with("a\nb\nc\n"), "{out}");
    assert!(out.stderr.contains("to-stderr"), "{out}");
    assert_eq!(sb.read("count.txt").as_deref(), Some("3\n"));
    assert_eq!(sb.read("fd3.txt").as_deref(), Some("three\n"));
    assert_eq!(out.value("URANDOM").as_deref(), Some("32"), "{out}");
    assert_eq!(out.value("ZERO").as_deref(), Some("00000000"), "{out}");
    assert_eq!(out.value("NULL").as_deref(), Some("0"), "{out}");
    assert_eq!(out.value("FULL").as_deref(), Some("1"), "/dev/full must fail with ENOSPC\n{out}");
    assert!(out.stdout.contains("STDOUT-LINK=via-dev-stdout"), "{out}");
}

#[test]
fn exit_statuses_propagate() {
    let sb = Sandbox::new();
    sb.sh("exit 0").expect_code(0);
    sb.sh("exit 7").expect_code(7);
    sb.sh("exit 255").expect_code(255);
    sb.sh("kill -TERM $$").expect_code(143);
    sb.sh("kill -KILL $$").expect_code(137);
    sb.run(&[], &["false"]).expect_code(1);
    // A program that does not exist in the view.
    sb.run(&[], &["./no-such-program"]).expect_code(127);
}

#[test]
fn stdin_passes_through() {
    let sb = Sandbox::new();
    let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
    let start = Instant::now();
    let mut child = sb
        .run_cmd(&[], &["sh", "-c", "cat; echo; echo STDIN-DONE >&2"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feed = data.clone();
    let writer = std::thread::spawn(move || stdin.write_all(&feed));
    let out = support::finish(&mut child, start);
    writer.join().unwrap().unwrap();
    out.expect_code(0);
    assert!(
        out.raw_stdout.len() == data.len() + 1 && out.raw_stdout[..data.len()] == data[..],
        "stdin mangled"
    );
    assert!(out.stderr.contains("STDIN-DONE"), "{out}");

    let echo = support::output(
        Command::new("sh")
            .arg("-c")
            .arg(format!("echo hi | '{}' run --timeout 8s -- cat", support::bin()))
            .current_dir(&sb.root)
            .env_clear()
            .env("PATH", support::PATH)
            .env("HOME", &sb.home)
            .env("HULLWARD_HOME", sb.base.join("hw")),
    );
    echo.expect_code(0);
    assert_eq!(echo.stdout, "hi\n", "{echo}");

    // A file on stdin, larger than the pipe grows to, arrives whole and in order.
    let big: Vec<u8> = (0..3_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8).collect();
    let input = sb.base.join("stdin.bin");
    std::fs::write(&input, &big).unwrap();
    let mut c = sb.run_cmd(&[], &["cat"]);
    c.stdin(std::fs::File::open(&input).unwrap());
    let out = support::output(&mut c);
    out.expect_code(0);
    assert!(out.raw_stdout == big, "a file on stdin arrived changed ({} bytes)", out.raw_stdout.len());

    // What arrived is readable at once while more may still come, from a pipe and from a socket:
    // the program reads one line and exits with hullward's stdin still open.
    let (socket, mut peer) = std::os::unix::net::UnixStream::pair().unwrap();
    let (read_end, mut pipe) = std::io::pipe().unwrap();
    for (source, feed) in [
        (Stdio::from(read_end), &mut pipe as &mut dyn Write),
        (Stdio::from(OwnedFd::from(socket)), &mut peer),
    ] {
        let start = Instant::now();
        let mut c = sb.run_cmd(&[], &["sh", "-c", "read line; echo got $line"]);
        let mut child = c.stdin(source).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        feed.write_all(b"first\n").unwrap();
        let out = support::finish(&mut child, start);
        out.expect_code(0);
        assert_eq!(out.stdout, "got first\n", "{out}");
    }
}

#[test]
fn large_output_below_the_cap_passes_byte_exact() {
    let sb = Sandbox::new();
    let data: Vec<u8> = (0..3_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(sb.root.join("big.bin"), &data).unwrap();
    let out = sb.sh("cat big.bin; head -c 100000 big.bin >&2");
    out.expect_code(0);
    assert_eq!(out.raw_stdout.len(), data.len());
    assert!(out.raw_stdout == data, "stdout differs from the file");
}

#[test]
fn a_protected_file_created_during_the_call_is_reported() {
    let sb = Sandbox::new();
    sb.write("sub/keep.txt", "x\n");
    let out = sb.sh("echo A=1 > sub/.env; echo notes > sub/notes.txt");
    out.expect_code(0);
    assert!(
        out.stderr.contains("protected file 'sub/.env' was created during the call (matches '**/.env')"),
        "{out}"
    );
    assert!(!out.stderr.contains("notes.txt"), "{out}");

    // The same as a --json event; the neighbour (an ordinary file) is not an event.
    let out = sb.sh_with(&["--json"], "echo B=2 > .env.local; echo more > sub/notes.txt");
    out.expect_code(0);
    let events: Vec<serde_json::Value> =
        out.stderr.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let changes: Vec<&serde_json::Value> =
        events.iter().filter(|e| e["event"] == "protected-change").collect();
    assert_eq!(changes.len(), 1, "{out}");
    assert_eq!(changes[0]["path"], ".env.local", "{out}");
    assert_eq!(changes[0]["created"], true, "{out}");
    assert_eq!(changes[0]["rule"], "**/.env.*", "{out}");
    assert_eq!(events.last().unwrap()["event"], "exit", "{out}");
}

#[test]
fn a_file_created_under_a_denied_directory_is_reported() {
    let sb = Sandbox::new();
    let out = sb
        .sh_with(&["--deny", "secrets/**"], "mkdir secrets && echo k > secrets/new.key; echo n > notes.txt");
    out.expect_code(0);
    assert!(out.stderr.contains("secrets"), "no protected-change report\n{out}");
    assert!(!out.stderr.contains("notes.txt"), "{out}");
}

#[test]
fn secret_values_printed_by_the_child_are_masked() {
    let sb = Sandbox::new();
    let mut c =
        sb.run_cmd(&["--env", "GITHUB_TOKEN"], &["sh", "-c", "echo token=$GITHUB_TOKEN; echo plain=visible"]);
    c.env("GITHUB_TOKEN", "ghp_HWFORWARDED0123456789");
    let out = support::output(&mut c);
    out.expect_code(0);
    assert!(!out.stdout.contains("ghp_HWFORWARDED0123456789"), "{out}");
    assert!(out.stdout.contains("token=<secret-hidden>"), "{out}");
    assert!(out.stdout.contains("plain=visible"), "{out}");
}
