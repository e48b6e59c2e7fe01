//! The output middleware: what a child prints reaches the agent only after its protected files'
//! diff bodies are hidden and every secret value is masked.
//!
//! Order of use, per call: [`SecretSet::discover`] finds the values to mask (a long-lived process
//! keeps the values of unchanged protected files: [`secrets::keep_file_values`]);
//! [`OutputFilter::new`] compiles the filter once and is cloned for the second stream; each
//! stream is fed with [`OutputFilter::push`] as reads arrive and closed with
//! [`OutputFilter::finish`]; [`OutputFilter::stats`] then goes into the audit record.
//!
//! Inside a filter the stages run in this order: [`diff`] hides protected diff bodies line by line
//! (so a hidden line can never be cut by a marker), then [`mask`] masks what remains as one
//! continuous stream (so a secret that spans a line break or a read boundary is still masked). Each
//! stage holds back a bounded amount: a candidate header line up to [`diff::LINE_CAP`], and the
//! longest secret's length minus one.
//!
//! The other modules: [`names`] (which names hold secrets), [`extract`] (which values inside a file
//! are secrets), [`protected`] (deny rules read at any depth), [`githeader`] (git's header grammar),
//! [`logmask`] (the log patterns) and [`logging`] (hullward's own logs).

pub mod diff;
pub mod extract;
pub mod githeader;
pub mod logging;
pub mod logmask;
pub mod mask;
pub mod names;
pub mod protected;
pub mod secrets;

use std::ops::Range;
use std::sync::Arc;

pub use secrets::{FileSecrets, SecretSet};

use crate::policy::Policy;
use diff::DiffFilter;
use mask::Masker;
use protected::ProtectedPaths;

/// What a filter did to its stream, for the audit log.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FilterStats {
    /// `<secret-hidden>` markers written.
    pub secrets_masked: u64,
    /// Secret bytes replaced.
    pub bytes_masked: u64,
    /// Protected files whose diff body was replaced by the hidden line.
    pub diff_bodies_hidden: u64,
}

impl std::ops::Add for FilterStats {
    type Output = FilterStats;
    fn add(self, o: FilterStats) -> FilterStats {
        FilterStats {
            secrets_masked: self.secrets_masked + o.secrets_masked,
            bytes_masked: self.bytes_masked + o.bytes_masked,
            diff_bodies_hidden: self.diff_bodies_hidden + o.diff_bodies_hidden,
        }
    }
}

/// The filter of one output stream (a child's stdout or stderr, or `hullward filter`'s stdin).
#[derive(Debug, Clone)]
pub struct OutputFilter {
    diff: DiffFilter,
    masker: Masker,
}

impl OutputFilter {
    /// A filter for `secrets` and `policy`'s deny rules. Compiling is the costly part: build one
    /// per call and [`Clone`] it for the other stream (the compiled parts are shared).
    pub fn new(secrets: &SecretSet, policy: &Policy) -> OutputFilter {
        OutputFilter {
            diff: DiffFilter::new(ProtectedPaths::new(&policy.deny)),
            masker: Masker::new(secrets.matcher().map(Arc::clone)),
        }
    }

    /// Feeds one read; appends the filtered bytes that are ready to `out`.
    ///
    /// The diff stage shows a read as pieces (around each header it reads); pieces that follow
    /// each other in `chunk` are joined back into one run before the masker sees them, since the
    /// masker has a fixed cost per call and a read of ordinary output then reaches it whole.
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let masker = &mut self.masker;
        let mut run: Option<Range<usize>> = None;
        self.diff.push(chunk, &mut |part| match (offset_in(chunk, part), &mut run) {
            (Some(at), Some(r)) if at == r.end => r.end += part.len(),
            (at, _) => {
                if let Some(r) = run.take() {
                    masker.push(&chunk[r], out);
                }
                match at {
                    Some(at) => run = Some(at..at + part.len()),
                    None => masker.push(part, out),
                }
            }
        });
        if let Some(r) = run {
            masker.push(&chunk[r], out);
        }
    }

    /// Ends the stream: appends everything still held back.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let masker = &mut self.masker;
        self.diff.finish(&mut |part| masker.push(part, out));
        self.masker.finish(out);
    }

    /// Releases the bytes the masker holds back because they could begin a secret (the pump calls
    /// this after an idle interval, so that an unterminated prompt is never held). A line held as
    /// a possible diff header (it holds `diff --`) stays until its end or [`LINE_CAP`](diff::LINE_CAP).
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        self.masker.flush(out);
    }

    /// Whether the masker holds bytes back.
    pub fn holding(&self) -> bool {
        self.masker.holding()
    }

    pub fn stats(&self) -> FilterStats {
        let m = self.masker.stats();
        FilterStats {
            secrets_masked: m.secrets_masked,
            bytes_masked: m.bytes_masked,
            diff_bodies_hidden: self.diff.bodies_hidden(),
        }
    }
}

/// Where `part` starts in `chunk`, when it is a piece of it (a slice of another buffer, such as a
/// held line or the hidden-body line, never lies inside `chunk`).
fn offset_in(chunk: &[u8], part: &[u8]) -> Option<usize> {
    let at = (part.as_ptr() as usize).checked_sub(chunk.as_ptr() as usize)?;
    (at + part.len() <= chunk.len()).then_some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::load::{load, LoadRequest};

    fn policy() -> Policy {
        load(&LoadRequest { cwd: "/".into(), ..Default::default() }).unwrap()
    }

    #[test]
    fn the_supervisor_can_move_filters_across_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<OutputFilter>();
        send_sync::<SecretSet>();
        send_sync::<crate::audit::AuditLog>();
    }

    #[test]
    fn debug_output_never_holds_a_secret() {
        let secrets = SecretSet::from_values(["held-back-secret"]);
        let mut f = OutputFilter::new(&secrets, &policy());
        let mut out = Vec::new();
        f.push(b"held-back-secr", &mut out);
        f.push(b"et\ndiff --git a/held-back-secret", &mut out);
        let shown = format!("{f:?} {secrets:?}");
        assert!(!shown.contains("held-back"), "{shown}");
    }

    #[test]
    fn one_huge_line_streams_with_bounded_lag() {
        let secrets = SecretSet::from_values(["a-secret-of-some-length"]);
        // Ordinary text, and a line of graph columns that could begin a header until the cap.
        for (first, fill) in [(&b"d"[..], b'd'), (b"| ", b' '), (b"\x1b[1m", b'|')] {
            let mut f = OutputFilter::new(&secrets, &policy());
            let mut out = Vec::new();
            let chunk = vec![fill; 64 * 1024];
            f.push(first, &mut out);
            let mut fed = first.len();
            for _ in 0..256 {
                f.push(&chunk, &mut out);
                fed += chunk.len();
                assert!(fed - out.len() <= diff::LINE_CAP + 64, "{} bytes held back", fed - out.len());
            }
            f.finish(&mut out);
            assert_eq!(out.len(), fed, "an ordinary line comes out whole");
        }
    }

    #[test]
    fn a_huge_header_line_hides_what_follows_in_bounded_memory() {
        let mut f = OutputFilter::new(&SecretSet::default(), &policy());
        let mut out = Vec::new();
        f.push(b"diff --git a/", &mut out);
        for _ in 0..64 {
            f.push(&[b'x'; 64 * 1024], &mut out);
        }
        f.push(b" b/x\n+body\n", &mut out);
        f.finish(&mut out);
        assert_eq!(
            out.len(),
            diff::LINE_CAP
                + "\n[content hidden: '(header too long to read)' matches a FileSystem deny rule]\n".len()
        );
        assert_eq!(f.stats().diff_bodies_hidden, 1);
    }

    #[test]
    fn a_secret_across_lines_and_reads_and_the_counters() {
        let secrets = SecretSet::from_values(["first-line\nsecond-line"]);
        let mut f = OutputFilter::new(&secrets, &policy());
        let mut out = Vec::new();
        for piece in [&b"x first-"[..], b"line\nsec", b"ond-line y\n", b"diff --git a/.env b/.env\n+K=v\n"] {
            f.push(piece, &mut out);
        }
        f.finish(&mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "x <secret-hidden> y\ndiff --git a/.env b/.env\n[content hidden: '.env' matches a FileSystem deny rule]\n"
        );
        assert_eq!(f.stats(), FilterStats { secrets_masked: 1, bytes_masked: 22, diff_bodies_hidden: 1 });
    }
}
