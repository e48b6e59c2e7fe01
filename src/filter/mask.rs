//! Exact-value secret masking over a byte stream: every occurrence of a secret becomes
//! `<secret-hidden>`.
//!
//! Order of use: a [`Matcher`] is compiled once per call from the secret values (by
//! [`SecretSet`](super::secrets::SecretSet)); each output stream gets its own [`Masker`], fed with
//! [`Masker::push`] as reads arrive and closed with [`Masker::finish`]. [`Matcher::mask_all`] is the
//! one-shot form for strings that are already whole (audit fields, log lines).
//!
//! **What is hidden.** The union of every occurrence of every secret, overlaps included: each
//! maximal run of bytes covered by overlapping occurrences becomes one marker, so when two secrets
//! overlap in the output (`abcdefgh1234` and `gh1234xyzw` printed as `abcdefgh1234xyzw`) no fragment
//! of either survives, and the longest reading always wins. Adjacent, non-overlapping occurrences
//! give one marker each.
//!
//! **Streaming.** Bytes are decided left to right. A byte is decided once no occurrence that is
//! still incomplete could cover it: every byte but the longest tail of what was received that is
//! the start of a secret (and not a whole one) — at most `M - 1` bytes, `M` the longest secret, and
//! usually none, so a prompt without a newline is shown at once. The tail is held back until more
//! input, [`Masker::finish`] or [`Masker::flush`] (the pump's idle interval) arrives. Each read
//! is searched where it lies; only occurrences that start in the held-back tail are searched in a
//! small copy of the tail and the read's first `M - 1` bytes. Memory is therefore about `2M` bytes
//! whatever the stream's length, and a secret split over any number of reads is still masked. Bytes
//! that are not part of a secret pass through unchanged, UTF-8 or not.
//!
//! **Speed.** The automaton is built on the first search of a text longer than [`NAIVE_MAX`];
//! shorter ones before that are searched value by value (most calls print little). Overlapping
//! Aho–Corasick search has no prefilter of its own once there are many patterns, so the
//! [`Matcher`] samples the haystack first: every secret is at least [`MIN_SAMPLED_LEN`] bytes long,
//! so each of its occurrences contains a whole 4-byte block starting at a multiple of the stride
//! (8-byte blocks when all are at least [`WIDE_SAMPLED_LEN`] long; the stride is the shortest
//! secret's length minus the block's plus one, so a set of 40-byte tokens is looked up every 33
//! bytes). Only blocks that occur somewhere in a secret (a bitmap, then an exact set) open a
//! window of `2M` bytes around them for the automaton; everything else is skipped a stride at a
//! time. The sample can only add windows, never drop an occurrence.

use std::sync::{Arc, OnceLock};

use aho_corasick::{AhoCorasick, Input, MatchKind};

/// What a masked secret is replaced with (INTERFACE.md, "Messages").
pub const MARKER: &[u8] = b"<secret-hidden>";

/// Secrets at least this long are found through the 4-byte sample; a set with a shorter one is
/// searched byte by byte instead.
pub const MIN_SAMPLED_LEN: usize = 7;

/// The compiled form of a set of secret values.
///
/// The automaton and the block sample are built on the first search of a long text: most calls
/// print little or nothing, and a short text (an audit field, an argv, a small read) is searched
/// value by value ([`NAIVE_MAX`]) at less cost than building them.
pub struct Matcher {
    /// Sorted, for [`Matcher::open_prefix`].
    values: Vec<Vec<u8>>,
    /// The bytes a secret starts with.
    first: [bool; 256],
    /// The pairs of bytes a secret of two or more starts with (a bitmap of 65536 bits).
    first2: Vec<u64>,
    compiled: OnceLock<Compiled>,
    max_len: usize,
}

struct Compiled {
    /// `None` when the builder refused the set (its size limits): every search is then done value
    /// by value, which is slower but finds the same occurrences.
    automaton: Option<AhoCorasick>,
    sample: Option<BlockSample>,
}

fn pair(a: u8, b: u8) -> usize {
    usize::from(a) << 8 | usize::from(b)
}

/// Texts up to this long are searched value by value until the automaton exists.
const NAIVE_MAX: usize = 1024;

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("patterns", &self.values.len())
            .field("max_len", &self.max_len)
            .finish_non_exhaustive()
    }
}

impl Matcher {
    /// Compiles `values`; `None` when there is nothing to find (no value, or only empty ones).
    pub fn new<V: AsRef<[u8]>>(values: &[V]) -> Option<Matcher> {
        let mut values: Vec<Vec<u8>> =
            values.iter().map(AsRef::as_ref).filter(|v| !v.is_empty()).map(<[u8]>::to_vec).collect();
        let max_len = values.iter().map(Vec::len).max()?;
        values.sort_unstable();
        let mut first = [false; 256];
        let mut first2 = vec![0u64; 1 << 10];
        for v in &values {
            first[usize::from(v[0])] = true;
            if let [a, b, ..] = v[..] {
                let i = pair(a, b);
                first2[i >> 6] |= 1 << (i & 63);
            }
        }
        Some(Matcher { values, first, first2, compiled: OnceLock::new(), max_len })
    }

    fn compiled(&self) -> &Compiled {
        self.compiled.get_or_init(|| {
            // The automaton only runs over the sample's windows, so the builder's own choice of
            // representation (a DFA for small sets, a compact NFA for large ones) bounds its memory.
            let automaton = AhoCorasick::builder().match_kind(MatchKind::Standard).build(&self.values).ok();
            let min_len = self.values.iter().map(Vec::len).min().unwrap_or(0);
            let sample = (min_len >= MIN_SAMPLED_LEN).then(|| BlockSample::new(&self.values));
            Compiled { automaton, sample }
        })
    }

    /// The longest secret, in bytes.
    pub fn max_len(&self) -> usize {
        self.max_len
    }

    /// The length of the longest tail of `text` that is the start of a secret but not a whole
    /// one: what a stream must hold back, since only the next bytes can tell.
    fn open_prefix(&self, text: &[u8]) -> usize {
        let from = text.len().saturating_sub(self.max_len - 1);
        (from..text.len())
            .find(|&i| {
                let tail = &text[i..];
                let pair_ok = |b: u8| {
                    let p = pair(tail[0], b);
                    self.first2[p >> 6] & (1 << (p & 63)) != 0
                };
                self.first[usize::from(tail[0])] && tail.get(1).is_none_or(|&b| pair_ok(b)) && {
                    let at = self.values.partition_point(|v| v.as_slice() < tail);
                    self.values.get(at).is_some_and(|v| v.len() > tail.len() && v.starts_with(tail))
                }
            })
            .map_or(0, |i| text.len() - i)
    }

    /// Masks a complete text in one go.
    pub fn mask_all(self: &Arc<Self>, text: &[u8]) -> Vec<u8> {
        let mut masker = Masker::new(Some(Arc::clone(self)));
        let mut out = Vec::with_capacity(text.len());
        masker.push(text, &mut out);
        masker.finish(&mut out);
        out
    }

    /// Appends every occurrence of every secret in `hay` (overlapping ones included) that starts
    /// before `starts_below`, as `(start, end)` shifted by `offset`, in no particular order.
    fn find(&self, hay: &[u8], offset: usize, starts_below: usize, found: &mut Vec<(usize, usize)>) {
        let compiled = if hay.len() <= NAIVE_MAX { self.compiled.get() } else { Some(self.compiled()) };
        let Some((automaton, compiled)) = compiled.and_then(|c| Some((c.automaton.as_ref()?, c))) else {
            self.find_each(hay, offset, starts_below, found);
            return;
        };
        let mut search = |start: usize, end: usize| {
            let input = Input::new(hay).span(start..end);
            found.extend(
                automaton
                    .find_overlapping_iter(input)
                    .filter(|m| m.start() < starts_below)
                    .map(|m| (m.start() + offset, m.end() + offset)),
            );
        };
        let Some(sample) = &compiled.sample else {
            search(0, hay.len());
            return;
        };
        let (m, w) = (self.max_len, sample.width);
        let mut window: Option<(usize, usize)> = None;
        // Each block in a secret is widened into the window of every occurrence that could hold
        // it; overlapping windows are merged, and each merged one is searched once.
        sample.hits(hay, &mut |at| {
            let (start, end) = ((at + w).saturating_sub(m), (at + m).min(hay.len()));
            window = match window {
                Some((s, e)) if start <= e => Some((s, end.max(e))),
                Some((s, e)) => {
                    search(s, e);
                    Some((start, end))
                }
                None => Some((start, end)),
            };
        });
        if let Some((s, e)) = window {
            search(s, e);
        }
    }

    /// [`Matcher::find`] value by value, every start position (so overlaps are found too).
    fn find_each(&self, hay: &[u8], offset: usize, starts_below: usize, found: &mut Vec<(usize, usize)>) {
        for v in &self.values {
            let finder = memchr::memmem::Finder::new(v);
            let mut at = 0;
            while let Some(i) = finder.find(&hay[at..]) {
                let start = at + i;
                if start >= starts_below {
                    break;
                }
                found.push((start + offset, start + v.len() + offset));
                at = start + 1;
            }
        }
    }
}

/// Blocks looked up per tight pass of [`BlockSample::hits`] before the candidates are checked.
const GROUP: usize = 512;

/// The blocks of `width` bytes (8 when every secret is at least [`WIDE_SAMPLED_LEN`] long, else
/// 4) that occur anywhere inside a secret: a bitmap for the fast "no", and the sorted blocks
/// themselves for an exact answer.
///
/// Only the blocks starting at multiples of `stride` are looked up, `stride` being the shortest
/// secret's length `L` minus `width - 1` (never less than `width`): an occurrence starting at `p`
/// holds the sampled block at the first multiple of `stride` at or after `p` (at most
/// `p + stride - 1`, so it ends by `p + L`). Longer secrets mean fewer lookups.
struct BlockSample {
    width: usize,
    stride: usize,
    bits: Vec<u64>,
    shift: u32,
    grams: Vec<u64>,
}

/// Secrets at least this long are sampled 8 bytes at a time (fewer chance hits than 4).
pub const WIDE_SAMPLED_LEN: usize = 15;

/// A block of 4 or 8 bytes as a number.
#[inline(always)]
fn gram(block: &[u8]) -> u64 {
    let mut bytes = [0u8; 8];
    bytes[..block.len()].copy_from_slice(block);
    u64::from_le_bytes(bytes)
}

impl BlockSample {
    fn new(values: &[Vec<u8>]) -> BlockSample {
        let min_len = values.iter().map(Vec::len).min().unwrap_or(0);
        let width = if min_len >= WIDE_SAMPLED_LEN { 8 } else { 4 };
        let mut grams: Vec<u64> = values.iter().flat_map(|v| v.windows(width).map(gram)).collect();
        grams.sort_unstable();
        grams.dedup();
        // About 256 bits per block, between 8 KiB and 512 KiB of bitmap: few false "maybe"s while
        // the bitmap stays in cache.
        let log2 = (usize::BITS - grams.len().leading_zeros() + 8).clamp(16, 22);
        let mut sample = BlockSample {
            width,
            stride: min_len + 1 - width,
            bits: vec![0; 1 << (log2 - 6)],
            shift: 64 - log2,
            grams: Vec::new(),
        };
        for &g in &grams {
            let i = sample.slot(g);
            sample.bits[i >> 6] |= 1 << (i & 63);
        }
        sample.grams = grams;
        sample
    }

    #[inline(always)]
    fn slot(&self, gram: u64) -> usize {
        (gram.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// `false` when `gram` is surely in no secret.
    #[inline(always)]
    fn may_contain(&self, gram: u64) -> bool {
        let i = self.slot(gram);
        self.bits[i >> 6] & (1 << (i & 63)) != 0
    }

    /// Whether `gram` occurs in a secret.
    fn contains(&self, gram: u64) -> bool {
        self.grams.binary_search(&gram).is_ok()
    }

    /// Calls `hit` with the start of every sampled block of `hay` that occurs in a secret, in
    /// increasing order.
    fn hits(&self, hay: &[u8], hit: &mut impl FnMut(usize)) {
        if self.width == 8 {
            self.hits_of::<8>(hay, hit);
        } else {
            self.hits_of::<4>(hay, hit);
        }
    }

    /// [`BlockSample::hits`] for blocks of `W` bytes, one at the start of each `stride` of `hay`
    /// (and one in the tail shorter than a stride, when it holds `W` bytes). Group by group of
    /// [`GROUP`] strides, a tight pass notes the blocks the bitmap does not rule out (a store
    /// every block, no branch), then each of those is checked exactly.
    fn hits_of<const W: usize>(&self, hay: &[u8], hit: &mut impl FnMut(usize)) {
        let stride = self.stride;
        let whole = hay.len() / stride;
        let mut maybe = [0u16; GROUP];
        for first in (0..whole).step_by(GROUP) {
            let base = first * stride;
            let group = &hay[base..whole.min(first + GROUP) * stride];
            let mut count = 0;
            for (i, block) in group.chunks_exact(stride).enumerate() {
                maybe[count % GROUP] = i as u16;
                count += usize::from(self.may_contain(gram(&block[..W])));
            }
            for &i in &maybe[..count] {
                let at = base + usize::from(i) * stride;
                if self.contains(gram(&hay[at..at + W])) {
                    hit(at);
                }
            }
        }
        let at = whole * stride;
        if hay.len() - at >= W && self.contains(gram(&hay[at..at + W])) {
            hit(at);
        }
    }
}

/// How much a masker hid.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MaskStats {
    /// Markers written: one per maximal run of secret bytes.
    pub secrets_masked: u64,
    /// Secret bytes replaced.
    pub bytes_masked: u64,
}

/// The streaming masker of one output stream.
#[derive(Clone)]
pub struct Masker {
    matcher: Option<Arc<Matcher>>,
    /// The held-back tail: bytes received but not decided yet, at most `max_len - 1` of them.
    carry: Vec<u8>,
    /// How many leading bytes of `carry` lie inside a marker already written.
    covered: usize,
    /// Scratch: the carry followed by the start of the next input, for occurrences across them.
    bridge: Vec<u8>,
    /// Scratch: the last bytes received, for [`Masker::open_tail`].
    tail: Vec<u8>,
    found: Vec<(usize, usize)>,
    stats: MaskStats,
}

/// Never prints the held-back bytes (they may be the start of a secret).
impl std::fmt::Debug for Masker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Masker")
            .field("matcher", &self.matcher)
            .field("held_back", &self.carry.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl Masker {
    /// A masker for `matcher`'s secrets; with `None`, bytes pass through untouched.
    pub fn new(matcher: Option<Arc<Matcher>>) -> Masker {
        Masker {
            matcher,
            carry: Vec::new(),
            covered: 0,
            bridge: Vec::new(),
            tail: Vec::new(),
            found: Vec::new(),
            stats: MaskStats::default(),
        }
    }

    /// Feeds `input`; appends to `out` every byte that is decided.
    pub fn push(&mut self, input: &[u8], out: &mut Vec<u8>) {
        if self.matcher.is_none() {
            out.extend_from_slice(input);
            return;
        }
        self.drain(input, out, false);
    }

    /// Ends the stream: appends everything still held back.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        self.flush(out);
    }

    /// Appends everything still held back; the stream may go on. A secret whose first bytes are
    /// released this way is no longer recognised when the rest arrives, so only the pump's idle
    /// interval calls this (a secret is printed by one write, not by pieces seconds apart).
    pub fn flush(&mut self, out: &mut Vec<u8>) {
        if self.matcher.is_some() {
            self.drain(&[], out, true);
        }
    }

    /// Whether bytes are held back (they could begin a secret).
    pub fn holding(&self) -> bool {
        !self.carry.is_empty()
    }

    pub fn stats(&self) -> MaskStats {
        self.stats
    }

    /// How many of the last bytes of `carry` then `input` could begin a secret (see
    /// [`Matcher::open_prefix`]).
    fn open_tail(&mut self, input: &[u8]) -> usize {
        let Some(matcher) = &self.matcher else { return 0 };
        let keep = matcher.max_len - 1;
        if input.len() >= keep {
            return matcher.open_prefix(&input[input.len() - keep..]);
        }
        self.tail.clear();
        self.tail.extend_from_slice(&self.carry[self.carry.len().saturating_sub(keep - input.len())..]);
        self.tail.extend_from_slice(input);
        matcher.open_prefix(&self.tail)
    }

    /// Decides every byte of `carry` then `input` (positions counted across both) that no
    /// incomplete occurrence can reach, and keeps the rest as the new carry. The input is searched
    /// where it lies; only occurrences that start in the carry are searched in a copy (`bridge`)
    /// of the carry and the input's first `max_len - 1` bytes.
    fn drain(&mut self, input: &[u8], out: &mut Vec<u8>, last: bool) {
        let open = if last { 0 } else { self.open_tail(input) };
        let Some(matcher) = &self.matcher else { return };
        let held = self.carry.len();
        let len = held + input.len();
        let safe = len - open;
        if safe == 0 {
            self.carry.extend_from_slice(input);
            return;
        }
        self.found.clear();
        if held > 0 {
            self.bridge.clear();
            self.bridge.extend_from_slice(&self.carry);
            self.bridge.extend_from_slice(&input[..input.len().min(matcher.max_len - 1)]);
            matcher.find(&self.bridge, 0, held, &mut self.found);
        }
        matcher.find(input, held, usize::MAX, &mut self.found);
        self.found.sort_unstable();

        // `reach` is the end of the covered run being swept; bytes before it are decided.
        let mut reach = self.covered;
        for &(start, end) in &self.found {
            if start >= safe {
                break;
            }
            if start < reach {
                if end > reach {
                    self.stats.bytes_masked += (end - reach) as u64;
                    reach = end;
                }
                continue;
            }
            copy_span(&self.carry, input, reach, start, out);
            out.extend_from_slice(MARKER);
            self.stats.secrets_masked += 1;
            self.stats.bytes_masked += (end - start) as u64;
            reach = end;
        }
        if reach < safe {
            copy_span(&self.carry, input, reach, safe, out);
        }
        self.covered = reach.saturating_sub(safe);
        if safe >= held {
            self.carry.clear();
            self.carry.extend_from_slice(&input[safe - held..]);
        } else {
            self.carry.drain(..safe);
            self.carry.extend_from_slice(input);
        }
    }
}

/// Appends the bytes at positions `from..to`, counted across `carry` then `input`.
fn copy_span(carry: &[u8], input: &[u8], from: usize, to: usize, out: &mut Vec<u8>) {
    let held = carry.len();
    if from < held {
        out.extend_from_slice(&carry[from..to.min(held)]);
    }
    if to > held {
        out.extend_from_slice(&input[from.max(held) - held..to - held]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn matcher(secrets: &[&str]) -> Arc<Matcher> {
        Arc::new(Matcher::new(secrets).unwrap())
    }

    fn mask_in_chunks(m: &Arc<Matcher>, text: &[u8], cuts: &[usize]) -> Vec<u8> {
        let mut masker = Masker::new(Some(Arc::clone(m)));
        let mut out = Vec::new();
        let mut prev = 0;
        for &c in cuts {
            masker.push(&text[prev..c], &mut out);
            prev = c;
        }
        masker.push(&text[prev..], &mut out);
        masker.finish(&mut out);
        out
    }

    /// The definition, byte by byte: a byte is hidden when an occurrence covers it, and a marker
    /// starts at every hidden byte that no single occurrence joins to the byte before it.
    fn reference(secrets: &[&str], text: &[u8]) -> Vec<u8> {
        let mut occ = Vec::new();
        for s in secrets {
            let s = s.as_bytes();
            for i in 0..text.len() {
                if text[i..].starts_with(s) {
                    occ.push((i, i + s.len()));
                }
            }
        }
        let mut out = Vec::new();
        for (i, &b) in text.iter().enumerate() {
            let covered = occ.iter().any(|&(s, e)| s <= i && i < e);
            let joined = occ.iter().any(|&(s, e)| s < i && i < e);
            match (covered, joined) {
                (false, _) => out.push(b),
                (true, false) => out.extend_from_slice(MARKER),
                (true, true) => {}
            }
        }
        out
    }

    #[test]
    fn a_secret_at_the_start_middle_and_end() {
        let m = matcher(&["s3cr3t-value"]);
        assert_eq!(m.mask_all(b"s3cr3t-value"), MARKER);
        assert_eq!(m.mask_all(b"a s3cr3t-value b s3cr3t-value"), b"a <secret-hidden> b <secret-hidden>");
        assert_eq!(m.mask_all(b"nothing here"), b"nothing here");
        assert_eq!(m.mask_all(b""), b"");
    }

    #[test]
    fn overlapping_secrets_leave_no_fragment() {
        let m = matcher(&["abcdefgh1234", "gh1234xyzw"]);
        assert_eq!(m.mask_all(b"<abcdefgh1234xyzw>"), b"<<secret-hidden>>");
        let m = matcher(&["abcdefgh", "abcdefgh1234"]);
        assert_eq!(m.mask_all(b"abcdefgh1234!"), b"<secret-hidden>!");
        assert_eq!(m.mask_all(b"abcdefgh123!"), b"<secret-hidden>123!");
        let m = matcher(&["aaaaaaaa"]);
        assert_eq!(m.mask_all(&[b'a'; 1000]), MARKER);
    }

    #[test]
    fn adjacent_secrets_give_two_markers() {
        let m = matcher(&["AAAAAAAA", "BBBBBBBB"]);
        assert_eq!(m.mask_all(b"AAAAAAAABBBBBBBB"), b"<secret-hidden><secret-hidden>");
    }

    #[test]
    fn a_secret_split_over_many_reads() {
        let m = matcher(&["0123456789abcdef"]);
        let text = b"xx0123456789abcdefyy";
        let out = mask_in_chunks(&m, text, &[3, 5, 6, 9, 14, 17]);
        assert_eq!(out, b"xx<secret-hidden>yy");
        let mut masker = Masker::new(Some(Arc::clone(&m)));
        let mut out = Vec::new();
        for b in text {
            masker.push(&[*b], &mut out);
        }
        masker.finish(&mut out);
        assert_eq!(out, b"xx<secret-hidden>yy");
        assert_eq!(masker.stats(), MaskStats { secrets_masked: 1, bytes_masked: 16 });
    }

    #[test]
    fn non_utf8_passes_through_byte_identical() {
        let m = matcher(&["secret-value"]);
        let text: Vec<u8> = (0..=255u8).cycle().take(5000).collect();
        assert_eq!(mask_in_chunks(&m, &text, &[1, 700, 4097]), text);
    }

    #[test]
    fn held_back_bytes_never_exceed_the_longest_secret() {
        let m = matcher(&["0123456789"]);
        let mut masker = Masker::new(Some(Arc::clone(&m)));
        let mut out = Vec::new();
        for _ in 0..1000 {
            masker.push(&[b'0'; 4096], &mut out);
            assert!(masker.carry.len() < m.max_len());
        }
        assert_eq!(out.len(), 4096 * 1000 - 1, "only the last '0' could begin the secret");
    }

    #[test]
    fn only_what_could_begin_a_secret_is_held_back() {
        let m = matcher(&["s3cr3t-value", "tok-abcdefgh"]);
        let mut masker = Masker::new(Some(Arc::clone(&m)));
        let mut out = Vec::new();
        masker.push(b"Password: ", &mut out);
        assert_eq!(out, b"Password: ", "a prompt is shown at once");
        masker.push(b"ok s3cr", &mut out);
        assert_eq!(out, b"Password: ok ", "'s3cr' could be the secret");
        masker.push(b"3t-value tok-", &mut out);
        assert_eq!(out, b"Password: ok <secret-hidden> ");
        masker.push(b"abcdefgX", &mut out);
        assert_eq!(out, b"Password: ok <secret-hidden> tok-abcdefgX");
        masker.push(b"s3cr", &mut out);
        masker.flush(&mut out);
        assert_eq!(out, b"Password: ok <secret-hidden> tok-abcdefgXs3cr", "flush releases the tail");
        masker.push(b"3t-value!", &mut out);
        masker.finish(&mut out);
        assert!(out.ends_with(b"s3cr3t-value!"), "a secret split by a flush is not re-joined");
    }

    #[test]
    fn many_secrets_use_the_sample_and_short_ones_do_not() {
        let many: Vec<String> = (0..300).map(|i| format!("tok{i:05}-{}", "z".repeat(i % 40))).collect();
        let refs: Vec<&str> = many.iter().map(String::as_str).collect();
        let m = matcher(&refs);
        assert!(m.compiled().sample.is_some());
        let text = format!("a {} b {} c", many[7], many[299]);
        assert_eq!(m.mask_all(text.as_bytes()), b"a <secret-hidden> b <secret-hidden> c");
        let short = matcher(&["abcdef"]);
        assert!(short.compiled().sample.is_none());
        assert_eq!(short.mask_all(b"xabcdefx"), b"x<secret-hidden>x");
    }

    /// Plants each of `secrets` alone at every position around the end of the sample's first
    /// group (where a stride of blocks crosses into the next pass) and checks it is masked there.
    fn found_at_every_offset_across_groups(secrets: &[&str], width: usize) {
        let m = matcher(secrets);
        let sample = m.compiled().sample.as_ref().unwrap();
        assert_eq!(sample.width, width);
        let min_len = secrets.iter().map(|s| s.len()).min().unwrap();
        assert_eq!(sample.stride, min_len + 1 - width);
        let edge = GROUP * sample.stride;
        for at in edge - 2 * m.max_len()..edge + 2 * sample.stride {
            for secret in secrets {
                let mut text = vec![b'.'; edge + 4 * m.max_len()];
                text[at..at + secret.len()].copy_from_slice(secret.as_bytes());
                let out = m.mask_all(&text);
                assert_eq!(out.len(), text.len() - secret.len() + MARKER.len(), "{secret} at {at}");
                assert_eq!(&out[at..at + MARKER.len()], MARKER);
            }
        }
    }

    #[test]
    fn long_secrets_are_sampled_wide_and_found_across_groups() {
        found_at_every_offset_across_groups(&["fifteen-chars-x", "a-much-longer-secret-value-0123456789"], 8);
        // One long secret: a stride of 33 bytes.
        found_at_every_offset_across_groups(&["sk_live_0123456789abcdefghijklmnopqrstu"], 8);
    }

    #[test]
    fn short_secrets_are_sampled_narrow_and_found_across_groups() {
        found_at_every_offset_across_groups(&["span-crossing-secret", "8charsxx"], 4);
        found_at_every_offset_across_groups(&["fourteen-chars"], 4);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, .. ProptestConfig::default() })]

        #[test]
        fn every_split_offset_gives_the_reference(
            prefix in "[a-z ]{0,20}",
            suffix in "[a-z ]{0,20}",
        ) {
            let secrets = ["abcdefgh1234", "gh1234xyzw", "zzzzzzzz"];
            let text = format!("{prefix}abcdefgh1234xyzw{suffix}zzzzzzzzz{prefix}");
            let want = reference(&secrets, text.as_bytes());
            let m = matcher(&secrets);
            for cut in 0..=text.len() {
                prop_assert_eq!(&mask_in_chunks(&m, text.as_bytes(), &[cut]), &want, "cut {}", cut);
            }
        }

        /// The strided sample over long texts: secrets of every length class (so the stride
        /// and the block width vary), planted whole or cut one byte short among filler, read in
        /// pieces cut at random points (so reads of one byte and reads of many groups both occur).
        #[test]
        fn planted_secrets_in_long_text_read_in_random_pieces_match_the_reference(
            secrets in proptest::collection::vec("[abc]{7,45}", 1..5),
            pieces in proptest::collection::vec(("[abc.\n]{0,600}", 0usize..12), 1..16),
            cuts in proptest::collection::vec(any::<proptest::sample::Index>(), 0..12),
        ) {
            let refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
            let mut text = Vec::new();
            for (filler, k) in &pieces {
                text.extend_from_slice(filler.as_bytes());
                match refs.get(k % 8) {
                    Some(s) if *k < 8 => text.extend_from_slice(s.as_bytes()),
                    Some(s) => text.extend_from_slice(&s.as_bytes()[..s.len() - 1]),
                    None => {}
                }
            }
            let mut cuts: Vec<usize> = cuts.iter().map(|c| c.index(text.len() + 1)).collect();
            cuts.sort();
            let want = reference(&refs, &text);
            let m = matcher(&refs);
            prop_assert_eq!(&mask_in_chunks(&m, &text, &cuts), &want);
            let compiled = matcher(&refs);
            compiled.compiled();
            prop_assert_eq!(&mask_in_chunks(&compiled, &text, &cuts), &want);
        }

        #[test]
        fn arbitrary_text_and_cuts_match_the_reference(
            secrets in proptest::collection::vec("[ab]{8,12}", 1..4),
            text in "[abc]{0,120}",
            mut cuts in proptest::collection::vec(0usize..120, 0..6),
        ) {
            let refs: Vec<&str> = secrets.iter().map(String::as_str).collect();
            let m = matcher(&refs);
            cuts.retain(|&c| c <= text.len());
            cuts.sort();
            let out = mask_in_chunks(&m, text.as_bytes(), &cuts);
            prop_assert_eq!(&out, &reference(&refs, text.as_bytes()));
            // The same with the automaton built (short texts are otherwise searched value by value).
            let compiled = matcher(&refs);
            compiled.compiled();
            prop_assert_eq!(&mask_in_chunks(&compiled, text.as_bytes(), &cuts), &out);
            for s in &refs {
                prop_assert!(memchr::memmem::find(&out, s.as_bytes()).is_none());
            }
        }
    }
}
