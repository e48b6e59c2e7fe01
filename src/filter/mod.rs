//! The output middleware: what a child prints reaches the agent only after its protected files'
//! diff bodies are hidden and every secret value is masked.
//!
//! Order of use, per call: [`SecretSet::discover`] (or [`SecretCache`] in a long-lived process)
//! finds the values to mask; [`OutputFilter::new`] compiles the filter once and is cloned for the
//! second stream; each stream is fed with [`OutputFilter::push`] as reads arrive and closed with
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

use std::sync::Arc;

pub use secrets::{FileSecrets, SecretCache, SecretSet};

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
    pub fn push(&mut self, chunk: &[u8], out: &mut Vec<u8>) {
        let masker = &mut self.masker;
        self.diff.push(chunk, &mut |shown| masker.push(shown, out));
    }

    /// Ends the stream: appends everything still held back.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let masker = &mut self.masker;
        self.diff.finish(&mut |shown| masker.push(shown, out));
        self.masker.finish(out);
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
