//! Where a test's scratch tree goes: outside every directory a sandboxed call gets a private one
//! of (`/tmp`, `/run`, `/dev/shm`; the default profile also makes `/tmp` writable), wherever the
//! checkout lives. A test that writes "outside the root" there must see the sandbox refuse it,
//! not a private `/tmp` absorb it or a writable one allow it.

use std::path::{Path, PathBuf};

/// `CARGO_TARGET_TMPDIR/NAME`, or `/var/tmp/hullward-tests/NAME` when the checkout is below one
/// of those directories.
pub fn parent(name: &str) -> PathBuf {
    let target = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let private = ["/tmp", "/run", "/dev/shm"].iter().any(|d| target.starts_with(d));
    let base = if private { Path::new("/var/tmp/hullward-tests") } else { target };
    base.join(name)
}
