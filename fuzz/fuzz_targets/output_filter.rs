//! Arbitrary bytes through the whole output filter, fed in reads whose sizes come from the input:
//! it must never panic, never show a planted secret, and leave output that holds neither a secret
//! nor anything header-like byte-identical.

#![no_main]

use std::sync::OnceLock;

use hullward::filter::{OutputFilter, SecretSet};
use hullward::policy::load::{load, LoadRequest};
use libfuzzer_sys::fuzz_target;

const SECRETS: &[&str] =
    &["abcdefgh1234", "gh1234xyzw", "zzzzzzzz", "sk-planted-0001", "\u{e9}t\u{e9}-secret"];

/// Compiled once; each run gets a clone, as the supervisor clones a call's filter per stream.
fn prototype() -> &'static OutputFilter {
    static FILTER: OnceLock<OutputFilter> = OnceLock::new();
    FILTER.get_or_init(|| {
        let mut req = LoadRequest { cwd: "/".into(), ..Default::default() };
        req.flags.deny = vec!["secrets/**".into()];
        let policy = load(&req).expect("the fuzz policy loads");
        OutputFilter::new(&SecretSet::from_values(SECRETS), &policy)
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&sizes, input)) = data.split_first() else { return };
    let mut filter = prototype().clone();
    let mut out = Vec::new();
    let step = usize::from(sizes % 64) + 1;
    for chunk in input.chunks(step) {
        filter.push(chunk, &mut out);
    }
    filter.finish(&mut out);
    for s in SECRETS {
        assert!(memchr::memmem::find(&out, s.as_bytes()).is_none(), "{s} shown");
    }
    let plain = memchr::memmem::find(input, b"diff --").is_none()
        && !SECRETS.iter().any(|s| {
            let half = &s.as_bytes()[..4];
            memchr::memmem::find(input, half).is_some()
        });
    if plain {
        assert_eq!(out, input, "changed output without secrets or headers");
    }
});
