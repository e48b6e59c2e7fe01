//! Plan time: how long `SandboxPlan` takes for a 10k-, a 100k- and a 1M-file workspace with
//! `.env` files spread through it (the deny-glob walk dominates), cold (no walk index: the first
//! call on a tree, or a tree that changed everywhere) and warm (the index of the previous call,
//! nothing changed). Run with `cargo bench --bench plan` (`-- 1000000` adds the 1M tree, which
//! takes a few minutes to create once). Reports the median of several runs.

use std::path::Path;
use std::time::{Duration, Instant};

use hullward::policy::load::{load, LoadRequest};
use hullward::sandbox::kernel::KernelSupport;
use hullward::sandbox::plan::{build, Call};

/// Creates `files` files in directories of 50, with a `.env` in every 10th directory.
fn make_tree(root: &Path, files: usize) {
    let per_dir = 50;
    for d in 0..files.div_ceil(per_dir) {
        let dir = root.join(format!("pkg{}/mod{}", d % 40, d));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..per_dir.min(files - d * per_dir) {
            std::fs::write(dir.join(format!("file{f}.rs")), b"x").unwrap();
        }
        if d % 10 == 0 {
            std::fs::write(dir.join(".env"), b"TOKEN=abcdefgh12345").unwrap();
        }
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let base = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/bench-plan");
    let kernel = KernelSupport::probe_env();
    let mut sizes = vec![10_000usize, 100_000];
    sizes.extend(std::env::args().skip(1).filter_map(|a| a.parse::<usize>().ok()));
    for files in sizes {
        let root = base.join(format!("tree-{files}"));
        if !root.join(".done").exists() {
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(&root).unwrap();
            make_tree(&root, files);
            std::fs::write(root.join(".done"), b"").unwrap();
        }
        let state = base.join(format!("state-{files}"));
        let env = [("HULLWARD_HOME".to_string(), state.display().to_string())].into();
        let req = LoadRequest { cwd: root.clone(), env, ..Default::default() };
        let policy = load(&req).expect("policy");
        let call = Call {
            argv: vec!["/bin/true".into()],
            cwd: root.clone(),
            env: Default::default(),
            terminal: false,
        };
        for warm in [false, true] {
            let mut times = Vec::new();
            let mut masks = 0;
            for _ in 0..7 {
                if !warm {
                    let _ = std::fs::remove_dir_all(state.join("index"));
                }
                let t = Instant::now();
                let plan = build(&policy, &call, &kernel).expect("plan");
                times.push(t.elapsed());
                masks = plan.snapshot.masks.len();
            }
            println!(
                "plan {files:>7} files, {}: median {:>8.2} ms over {} runs ({masks} masks)",
                if warm { "warm" } else { "cold" },
                median(times.clone()).as_secs_f64() * 1000.0,
                times.len()
            );
        }
    }
}
