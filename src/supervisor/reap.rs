//! Ending a call's whole process tree, with or without cgroups.
//!
//! With a cgroup v2 leaf the tree dies by one write to `cgroup.kill` — even descendants that
//! `setsid`-ed away or double-forked. Without it (no writable cgroup v2), hullward has made itself
//! a child subreaper before spawning, so orphans are reparented to it instead of to init; the
//! fallback then walks `/proc` (procfs crate) for every descendant, SIGKILLs them and reaps, until
//! none is left.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use crate::sandbox::cgroup::CallCgroup;
use crate::sandbox::sys;

/// Kills everything that belongs to the call and waits (bounded) until it is gone. Returns
/// whether nothing survived. Call it after the main child was reaped through its pidfd: the
/// fallback reaps any child of this process.
pub fn kill_tree(cgroup: Option<&CallCgroup>, timeout: Duration) -> bool {
    if let Some(cg) = cgroup.filter(|c| c.has_kill()) {
        if cg.is_empty() {
            return true;
        }
        let _ = cg.kill();
        return cg.wait_empty(timeout);
    }
    if let Some(cg) = cgroup {
        let _ = cg.kill();
    }
    kill_descendants(timeout)
}

/// The fallback: SIGKILL every descendant of this process found in `/proc`, until none is left.
fn kill_descendants(timeout: Duration) -> bool {
    let me = std::process::id() as libc::pid_t;
    let deadline = Instant::now() + timeout;
    loop {
        while sys::reap_any().is_some() {}
        let left = descendants(me, &parent_map());
        if left.is_empty() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        for pid in left {
            let _ = sys::kill(pid, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn parent_map() -> BTreeMap<libc::pid_t, libc::pid_t> {
    let Ok(all) = procfs::process::all_processes() else { return BTreeMap::new() };
    all.filter_map(Result::ok).filter_map(|p| p.stat().ok()).map(|s| (s.pid, s.ppid)).collect()
}

/// Every process whose chain of parents reaches `root`.
pub fn descendants(root: libc::pid_t, parents: &BTreeMap<libc::pid_t, libc::pid_t>) -> Vec<libc::pid_t> {
    let mut found = BTreeSet::new();
    let mut frontier = vec![root];
    while let Some(p) = frontier.pop() {
        for (child, parent) in parents {
            if *parent == p && *child != root && found.insert(*child) {
                frontier.push(*child);
            }
        }
    }
    found.into_iter().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn descendants_follow_the_parent_chain_only() {
        let parents: BTreeMap<i32, i32> =
            [(10, 1), (11, 10), (12, 11), (13, 1), (14, 13)].into_iter().collect();
        assert_eq!(descendants(10, &parents), vec![11, 12]);
        assert_eq!(descendants(12, &parents), Vec::<i32>::new());
    }
}
