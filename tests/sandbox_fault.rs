//! Real-kernel battery, faults: hullward SIGKILLed at each stage of a call — while it sets up,
//! while the program runs, while it quarantines — leaves no mount, no process, no cgroup after
//! the next call, and no protected change that is neither quarantined nor reported: the next
//! call finishes the quarantine of the dead one and reports it under the dead call's id.

#[path = "support/sandbox.rs"]
mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use support::Sandbox;

/// Host mounts whose path lies in this test's scratch area (there must never be any).
fn host_mounts_under(base: &Path) -> Vec<String> {
    let info = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
    let base = base.display().to_string();
    info.lines().filter(|l| l.contains(&base)).map(str::to_string).collect()
}

fn wait_for(path: &Path, limit: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < limit {
        if path.exists() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    false
}

fn kill(child: &mut Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn pending(sb: &Sandbox) -> Vec<PathBuf> {
    let dir = sb.base.join("hullward-home/quarantine/.pending");
    std::fs::read_dir(dir).map(|d| d.flatten().map(|e| e.path()).collect()).unwrap_or_default()
}

fn audit(sb: &Sandbox) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(sb.base.join("hullward-home/audit.jsonl")).unwrap_or_default();
    text.lines().filter_map(|l| serde_json::from_str(l).ok()).collect()
}

/// The names of the planted files in the quarantine (sorted, repeats kept).
fn quarantined_names(sb: &Sandbox) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![sb.base.join("hullward-home/quarantine")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else if d.ends_with("by-child") {
                out.push(e.file_name().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// The host path of the cgroup a process is in (v2), when it is a call's.
fn call_cgroup(pid: i32) -> Option<PathBuf> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let rel = text.lines().find_map(|l| l.strip_prefix("0::"))?;
    rel.contains("/hullward/call-").then(|| PathBuf::from(format!("/sys/fs/cgroup{rel}")))
}

#[test]
fn killed_while_the_program_runs_the_next_call_finishes_its_quarantine() {
    let sb = Sandbox::new();
    sb.write("app/.env", "API_KEY=the-original-value-91\n");
    let mark = support::mark();
    let script = "mv app app-old && mkdir app && echo API_KEY=attacker > app/.env && echo X=1 > .env.new \
                  && touch .hw-planted && exec sleep 20.$HW_MARK";
    let mut c = sb.marked(&["--timeout", "25s"], &["sh", "-c", script], &mark);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut call = c.spawn().unwrap();
    let supervisor = call.id();
    assert!(wait_for(&sb.root.join(".hw-planted"), Duration::from_secs(10)), "the program did not start");
    let sleeper = support::wait_processes(&mark, 1, Duration::from_secs(5))[0];
    let cgroup = call_cgroup(sleeper);
    kill(&mut call);
    assert!(support::wait_dead(sleeper, Duration::from_secs(5)), "the program outlived its supervisor");
    assert!(host_mounts_under(&sb.base).is_empty(), "{:?}", host_mounts_under(&sb.base));
    assert_eq!(pending(&sb).len(), 1, "the call's pending record");

    let next = sb.sh("cat app-old/.env 2>/dev/null; echo NEXT-RAN");
    next.expect_code(0);
    assert!(next.has_line("NEXT-RAN"), "{next}");
    assert_eq!(sb.read("app/.env").as_deref(), Some("API_KEY=the-original-value-91\n"), "{next}");
    assert!(!sb.exists(".env.new"), "{next}");
    assert!(next.stderr.contains("was interrupted"), "{next}");
    let dead_call = format!("call-{supervisor}-");
    let records: Vec<serde_json::Value> = audit(&sb)
        .into_iter()
        .filter(|r| {
            r["kind"] == "quarantine" && r["call_id"].as_str().is_some_and(|c| c.starts_with(&dead_call))
        })
        .collect();
    let paths: BTreeSet<&str> = records.iter().filter_map(|r| r["path"].as_str()).collect();
    assert_eq!(paths, BTreeSet::from([".env.new", "app/.env"]), "{records:?}");
    assert!(pending(&sb).is_empty(), "{:?}", pending(&sb));
    if let Some(cg) = cgroup {
        assert!(!cg.exists(), "the dead call's cgroup '{}' was not swept", cg.display());
    }
}

#[test]
fn killed_at_any_moment_nothing_is_half_done() {
    let sb = Sandbox::new();
    const N: usize = 1500;
    let planted: BTreeSet<String> = (0..N).map(|i| format!(".env.{i}")).collect();
    // From killed during set-up (0 ms) to killed during or after the quarantine.
    for (round, delay_ms) in [0u64, 1, 3, 8, 15, 30, 60, 120].into_iter().enumerate() {
        let done = sb.root.join(format!(".hw-done-{round}"));
        let script = format!(
            "mkdir -p by-child && cd by-child && i=0; while [ $i -lt {N} ]; do : > .env.$i; i=$((i+1)); done; \
             touch '{}'",
            done.display()
        );
        let mut c = sb.run_cmd(&[], &["sh", "-c", &script]);
        c.stdout(Stdio::null()).stderr(Stdio::null());
        let mut call = c.spawn().unwrap();
        if round == 0 {
            std::thread::sleep(Duration::from_millis(2));
        } else {
            wait_for(&done, Duration::from_secs(20));
            std::thread::sleep(Duration::from_millis(delay_ms));
        }
        kill(&mut call);
        std::thread::sleep(Duration::from_millis(50));
        let next = sb.sh("echo NEXT-RAN");
        next.expect_code(0);
        assert!(host_mounts_under(&sb.base).is_empty(), "round {round}");
        assert!(pending(&sb).is_empty(), "round {round}: {:?}", pending(&sb));
        let left: Vec<String> = std::fs::read_dir(sb.root.join("by-child"))
            .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        assert!(left.is_empty(), "round {round}: {} planted files left in the root\n{next}", left.len());
        // Everything planted is gone from the root into the quarantine, once, and every
        // quarantined file was reported (by the killed call or by the next one).
        let names = quarantined_names(&sb);
        let distinct: BTreeSet<String> = names.iter().cloned().collect();
        assert!(distinct.is_subset(&planted), "round {round}");
        let reported: BTreeSet<String> = audit(&sb)
            .iter()
            .filter(|r| r["kind"] == "quarantine")
            .filter_map(|r| r["path"].as_str().map(|p| p.trim_start_matches("by-child/").to_string()))
            .collect();
        let unreported = distinct.difference(&reported).count();
        assert_eq!(unreported, 0, "round {round}: quarantined but not reported");
    }
}
