//! A protected file's diff body made of arbitrary lines, each prefixed the way git prefixes body
//! lines (`+`, `-`, space, `@@`, `\`): no byte of it may be shown, whatever the lines look like
//! and however the output is split into reads.

#![no_main]

use std::sync::OnceLock;

use hullward::filter::{OutputFilter, SecretSet};
use hullward::policy::load::{load, LoadRequest};
use libfuzzer_sys::fuzz_target;

/// Compiled once; each run gets a clone, as the supervisor clones a call's filter per stream.
fn prototype() -> &'static OutputFilter {
    static FILTER: OnceLock<OutputFilter> = OnceLock::new();
    FILTER.get_or_init(|| {
        let policy =
            load(&LoadRequest { cwd: "/".into(), ..Default::default() }).expect("the fuzz policy loads");
        OutputFilter::new(&SecretSet::default(), &policy)
    })
}

const PREFIXES: &[&[u8]] = &[b"+", b"-", b" ", b"@@ -1 +1 @@", b"\\"];

fuzz_target!(|data: &[u8]| {
    let Some((&sizes, body)) = data.split_first() else { return };
    let mut input = b"commit 0123456789abcdef0123456789abcdef01234567\n\ndiff --git a/.env b/.env\n".to_vec();
    for (i, line) in body.split(|&b| b == b'\n').enumerate() {
        input.extend_from_slice(PREFIXES[i % PREFIXES.len()]);
        input.extend_from_slice(line);
        input.extend_from_slice(b"\x00LEAK\n");
    }
    input.extend_from_slice(b"commit 1111111111111111111111111111111111111111\n");
    let mut filter = prototype().clone();
    let mut out = Vec::new();
    let step = usize::from(sizes) * 7 + 1;
    for chunk in input.chunks(step) {
        filter.push(chunk, &mut out);
    }
    filter.finish(&mut out);
    assert!(memchr::memmem::find(&out, b"\x00LEAK").is_none(), "a protected body line was shown");
    assert!(
        out.ends_with(b"commit 1111111111111111111111111111111111111111\n"),
        "the next commit was swallowed"
    );
});
