//! What a call leaves behind once `hullward run` has returned: nothing. Its processes (even a
//! detached one) are dead and its cgroup directories removed when the exit status arrives, and the
//! directories a SIGKILLed supervisor could not remove are gone once a later call has returned
//! (its sweep runs while it runs, and it does not return before the sweep is done).
#![allow(unsafe_code)]

#[path = "support/sandbox.rs"]
mod support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use support::{Bg, Sandbox};

/// The host directories of the cgroups `pid` is in that hullward made for a call (`…/hullward/call-…`):
/// each line of `/proc/PID/cgroup` joined to the mount point of its hierarchy.
fn call_cgroups(pid: i32) -> Vec<PathBuf> {
    let own = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).unwrap_or_default();
    let mounts = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mut dirs = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(hierarchy), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        if !path.contains("/hullward/call-") {
            continue;
        }
        for m in mounts.lines() {
            let fields: Vec<&str> = m.split(' ').collect();
            let Some(dash) = fields.iter().position(|f| *f == "-") else { continue };
            let (fs, options) = (fields.get(dash + 1).copied(), fields.get(dash + 3).copied().unwrap_or(""));
            let matches = match fs {
                Some("cgroup2") => hierarchy == "0",
                Some("cgroup") => {
                    controllers.split(',').all(|c| options.split(',').any(|o| o == c))
                        && !controllers.is_empty()
                }
                _ => false,
            };
            if matches {
                dirs.push(PathBuf::from(fields[4]).join(path.trim_start_matches('/')));
            }
        }
    }
    dirs
}

fn existing(dirs: &[PathBuf]) -> Vec<&PathBuf> {
    dirs.iter().filter(|d| d.exists()).collect()
}

#[test]
fn no_process_and_no_cgroup_of_the_call_remain_when_run_returns() {
    let sb = Sandbox::new();
    let mark = support::mark();
    let script = "sleep 60.$HW_MARK </dev/null >/dev/null 2>&1 & exec sleep 2.$HW_MARK";
    let mut c = sb.marked(&["--timeout", "30s"], &["sh", "-c", script], &mark);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut call = Bg::spawn(&mut c);
    let pids = support::wait_processes(&mark, 2, Duration::from_secs(10));
    let dirs = call_cgroups(pids[0]);
    assert!(!dirs.is_empty(), "the call's cgroups were not found from its process {}", pids[0]);
    assert_eq!(existing(&dirs).len(), dirs.len(), "the call's cgroups {dirs:?} do not exist while it runs");
    assert_eq!(call.wait_exit(Duration::from_secs(20)), Some(0), "the call did not end by itself");
    let left = support::processes_matching(&mark);
    assert!(left.is_empty(), "{left:?} of the call outlived `hullward run`");
    assert!(existing(&dirs).is_empty(), "the call's cgroups {:?} outlived `hullward run`", existing(&dirs));
}

#[test]
fn a_killed_supervisors_cgroups_are_gone_when_the_next_call_returns() {
    let sb = Sandbox::new();
    let mark = support::mark();
    let mut c = sb.marked(&["--timeout", "30s"], &["sh", "-c", "exec sleep 20.$HW_MARK"], &mark);
    c.stdout(Stdio::null()).stderr(Stdio::null());
    let mut killed = Bg::spawn(&mut c);
    let pid = support::wait_processes(&mark, 1, Duration::from_secs(10))[0];
    let dirs = call_cgroups(pid);
    assert!(!dirs.is_empty(), "the call's cgroups were not found from its process {pid}");
    let _ = killed.child.kill();
    let _ = killed.child.wait();
    // The next call, a neighbour that must work as ever.
    sb.run(&[], &["true"]).expect_code(0);
    let left = existing(&dirs);
    if !left.is_empty() {
        // SAFETY: kill(2) of the orphan this test created, so that it does not outlive the test.
        unsafe { libc::kill(pid, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "the dead supervisor's cgroups {left:?} outlived the next call");
    assert!(support::wait_dead(pid, Duration::from_secs(2)), "the dead supervisor's call survived");
}
