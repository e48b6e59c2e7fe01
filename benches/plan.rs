//! Plan time: how long `SandboxPlan` takes for a 10k- and a 100k-file workspace with `.env`
//! files spread through it (the deny-glob walk dominates). Run with `cargo bench --bench plan`.
//! Reports the median of several runs; the target is under 100 ms for 100k files.

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
    for files in [10_000usize, 100_000] {
        let root = base.join(format!("tree-{files}"));
        if !root.join(".done").exists() {
            let _ = std::fs::remove_dir_all(&root);
            std::fs::create_dir_all(&root).unwrap();
            make_tree(&root, files);
            std::fs::write(root.join(".done"), b"").unwrap();
        }
        let req = LoadRequest { cwd: root.clone(), ..Default::default() };
        let policy = load(&req).expect("policy");
        let call = Call {
            argv: vec!["/bin/true".into()],
            cwd: root.clone(),
            env: Default::default(),
            terminal: false,
        };
        let mut times = Vec::new();
        let mut masks = 0;
        for _ in 0..7 {
            let t = Instant::now();
            let plan = build(&policy, &call, &kernel).expect("plan");
            times.push(t.elapsed());
            masks = plan.snapshot.masks.len();
        }
        println!(
            "plan {files:>6} files: median {:>7.2} ms over {} runs ({masks} masks)",
            median(times.clone()).as_secs_f64() * 1000.0,
            times.len()
        );
    }
}
