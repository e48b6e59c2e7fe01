//! Fuzzes the shell guard: any bytes that are UTF-8 are parsed and decided; neither may panic,
//! and a decision is always `allow` or a `[DENIED]` text. Run with
//! `cargo +nightly fuzz run shell_guard` from `fuzz/`.
#![no_main]

use std::sync::OnceLock;

use hullward::guard::{shell, Verdict};
use hullward::policy::load::{load, LoadRequest};
use hullward::policy::Policy;
use libfuzzer_sys::fuzz_target;

fn policy() -> &'static Policy {
    static POLICY: OnceLock<Policy> = OnceLock::new();
    POLICY.get_or_init(|| {
        let cwd = std::env::current_dir().expect("a current directory");
        load(&LoadRequest { cwd, ..Default::default() }).expect("the default policy loads")
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let _ = shell::parse(text);
    let d = shell::check(policy(), text);
    assert!(d.verdict == Verdict::Allow || d.message.starts_with("[DENIED]"), "{d:?}");
});
