//! Removing a call's storage off the path the user waits for, without ever leaving it behind.
//!
//! Removing even an empty layer is a dozen directory operations on the root's filesystem
//! (overlayfs leaves `work/work/incompat/volatile/dirty` behind), and on a busy ext4 each can wait
//! for the journal: milliseconds, paid after the program has ended. So storage that holds nothing
//! to keep (a call that wrote nothing, the leftovers of a finished apply) is not removed there:
//! [`later`] moves the call's directory into `$HULLWARD_HOME/discarded/` with one `rename(2)`.
//! Everything in that directory is garbage, whatever state it is in, so removing it can be cut
//! short at any point and taken up again. The next hullward empties it: a call in a workspace
//! mode in a thread of its own ([`Cleaner`], started when the call's storage is made and joined
//! when the call ends, so it runs while the program does), every other command and a `direct`
//! call at once (`super::recover`).
//!
//! Order: [`later`] (at the end of a call) → [`Cleaner::start`] (the next call's prepare) or
//! [`empty`] (the next command's recover) → [`Cleaner::join`] (that call's end).

use std::path::{Path, PathBuf};

/// `$HULLWARD_HOME/discarded`.
pub fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("discarded")
}

/// Moves the call's directory `call_dir` into `trash`, to be removed by the next hullward; where
/// it cannot be moved (another filesystem, no room for the directory), it is removed now.
pub fn later(trash: &Path, call_dir: &Path) {
    let Some(name) = call_dir.file_name() else { return super::remove_storage(call_dir) };
    let to = trash.join(name);
    let moved = std::fs::rename(call_dir, &to).or_else(|e| {
        if e.kind() != std::io::ErrorKind::NotFound {
            return Err(e);
        }
        std::fs::create_dir_all(trash)?;
        std::fs::rename(call_dir, &to)
    });
    if moved.is_err() {
        super::remove_storage(call_dir);
    }
}

/// Removes everything in `trash` (another hullward emptying it too is no harm: each entry is
/// removed by whichever gets there first).
pub fn empty(trash: &Path) {
    let Ok(entries) = std::fs::read_dir(trash) else { return };
    for entry in entries.flatten() {
        super::remove_storage(&entry.path());
    }
}

/// [`empty`] in a thread of its own, while the call runs.
pub struct Cleaner(Option<std::thread::JoinHandle<()>>);

impl Cleaner {
    pub fn start(trash: PathBuf) -> Cleaner {
        let spawned =
            std::thread::Builder::new().name("hullward-discard".into()).spawn(move || empty(&trash));
        Cleaner(spawned.ok())
    }

    /// Waits for the thread (it has had the whole call to finish).
    pub fn join(&mut self) {
        if let Some(handle) = self.0.take() {
            let _ = handle.join();
        }
    }
}

impl Drop for Cleaner {
    fn drop(&mut self) {
        self.join();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_discarded_call_is_moved_in_one_piece_and_emptied_later() {
        let t = tempfile::tempdir().unwrap();
        let call = t.path().join("workspace/call-1");
        std::fs::create_dir_all(call.join("layer-0/upper")).unwrap();
        std::fs::write(call.join("call.json"), "{}").unwrap();
        let trash = dir(t.path());
        later(&trash, &call);
        assert!(!call.exists());
        assert!(trash.join("call-1/layer-0/upper").is_dir());
        let mut cleaner = Cleaner::start(trash.clone());
        cleaner.join();
        assert_eq!(std::fs::read_dir(&trash).unwrap().count(), 0);
    }
}
