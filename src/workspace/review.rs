//! `hullward review CALL`: a held call's changes as a git-style unified diff, judged like the
//! apply would judge them (refused entries are listed, not shown as changes), and then passed
//! through the same output filter as every program's output: protected files' bodies hidden
//! (`[content hidden: …]`), secret values masked.

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use super::judge::{self, BackupPaths, Protected, Started, Step, Why};
use super::{CallRecord, WorkspaceError};
use crate::policy::Policy;
use crate::sandbox::masks::Snapshot;

/// Longest file (in lines) compared line by line; longer ones are shown replaced whole.
const MAX_LINES: usize = 4000;

/// The diff of a held call, unfiltered.
pub fn diff(
    policy: &Policy,
    dir: &Path,
    record: &CallRecord,
    lower: &Snapshot,
) -> Result<Vec<u8>, WorkspaceError> {
    let marker = dir.join("started");
    let started = Started::of(&marker).map_err(|e| WorkspaceError::io("reading", &marker, e))?;
    let paths = BackupPaths { dir: dir.join("review") };
    let roots: Vec<_> = record.layers.iter().map(|l| l.root.clone()).collect();
    let mut out = Vec::new();
    for layer in &record.layers {
        let protected = Protected::new(policy, lower, layer)?;
        let judged = judge::judge(layer, &protected, started, &paths)
            .map_err(|e| WorkspaceError::io("reading the call's layer", &layer.upper, e))?;
        for step in &judged.steps {
            let (name, old, new) = match step {
                Step::Put { from, path, .. } => {
                    (judge::shown(&roots, path), Some(path.as_path()), Some(from.as_path()))
                }
                Step::Remove { path, .. } => (judge::shown(&roots, path), Some(path.as_path()), None),
                Step::SetMode { path, mode, old } => {
                    let n = judge::shown(&roots, path);
                    out.extend(
                        format!("diff --git a/{n} b/{n}\nold mode {old:o}\nnew mode {mode:o}\n").into_bytes(),
                    );
                    continue;
                }
                Step::MakeDir { .. } | Step::Keep { .. } => continue,
            };
            let old = old.filter(|p| p.symlink_metadata().is_ok_and(|m| !m.is_dir()));
            file_diff(&mut out, &name, old, new);
        }
        for r in &judged.refused {
            let n = judge::shown(&roots, &r.path);
            let why = match &r.why {
                Why::Protected { rule } => format!("a protected path (matches '{rule}')"),
                Why::Conflict => "changed on the host during the call (the host's version stays)".into(),
                Why::Special => "not a file, directory or symlink".into(),
                Why::Git { rule } => rule.clone(),
            };
            out.extend(format!("# not applied: '{n}': {why}\n").into_bytes());
        }
    }
    Ok(out)
}

fn content(p: &Path) -> (Vec<u8>, u32) {
    let meta = p.symlink_metadata().ok();
    let mode = meta.as_ref().map_or(0, |m| m.mode());
    if meta.is_some_and(|m| m.file_type().is_symlink()) {
        let target =
            std::fs::read_link(p).map(|t| t.into_os_string().into_encoded_bytes()).unwrap_or_default();
        return (target, mode);
    }
    (std::fs::read(p).unwrap_or_default(), mode)
}

fn file_diff(out: &mut Vec<u8>, name: &str, old: Option<&Path>, new: Option<&Path>) {
    let (a, a_mode) = old.map(content).unwrap_or_default();
    let (b, b_mode) = new.map(content).unwrap_or_default();
    out.extend(format!("diff --git a/{name} b/{name}\n").into_bytes());
    match (old, new) {
        (None, _) => out.extend(format!("new file mode {b_mode:o}\n").into_bytes()),
        (_, None) => out.extend(format!("deleted file mode {a_mode:o}\n").into_bytes()),
        _ if a_mode != b_mode => {
            out.extend(format!("old mode {a_mode:o}\nnew mode {b_mode:o}\n").into_bytes())
        }
        _ => {}
    }
    if a.contains(&0) || b.contains(&0) {
        out.extend(format!("Binary files a/{name} and b/{name} differ\n").into_bytes());
        return;
    }
    let from = if old.is_some() { format!("a/{name}") } else { "/dev/null".into() };
    let to = if new.is_some() { format!("b/{name}") } else { "/dev/null".into() };
    out.extend(format!("--- {from}\n+++ {to}\n").into_bytes());
    let lines =
        |t: &[u8]| -> Vec<Vec<u8>> { t.split_inclusive(|c| *c == b'\n').map(<[u8]>::to_vec).collect() };
    hunks(out, &lines(&a), &lines(&b));
}

/// One hunk over both whole files: the common lines as context, the rest as `-` and `+` lines
/// (a longest-common-subsequence diff; files past [`MAX_LINES`] are shown replaced whole).
fn hunks(out: &mut Vec<u8>, a: &[Vec<u8>], b: &[Vec<u8>]) {
    if a.is_empty() && b.is_empty() {
        return;
    }
    out.extend(
        format!(
            "@@ -{},{} +{},{} @@\n",
            usize::from(!a.is_empty()),
            a.len(),
            usize::from(!b.is_empty()),
            b.len()
        )
        .into_bytes(),
    );
    let line = |out: &mut Vec<u8>, sign: u8, l: &[u8]| {
        out.push(sign);
        out.extend_from_slice(l);
        if !l.ends_with(b"\n") {
            out.extend_from_slice(b"\n\\ No newline at end of file\n");
        }
    };
    if a.len() > MAX_LINES || b.len() > MAX_LINES {
        a.iter().for_each(|l| line(out, b'-', l));
        b.iter().for_each(|l| line(out, b'+', l));
        return;
    }
    let (n, m) = (a.len(), b.len());
    let mut lcs = vec![vec![0u32; m + 1]; n + 1];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i][j] = if a[i] == b[j] { lcs[i + 1][j + 1] + 1 } else { lcs[i + 1][j].max(lcs[i][j + 1]) };
        }
    }
    let (mut i, mut j) = (0, 0);
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            line(out, b' ', &a[i]);
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
            line(out, b'-', &a[i]);
            i += 1;
        } else {
            line(out, b'+', &b[j]);
            j += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_line_is_one_minus_and_one_plus() {
        let l = |s: &[&str]| s.iter().map(|x| x.as_bytes().to_vec()).collect::<Vec<_>>();
        let mut out = Vec::new();
        hunks(&mut out, &l(&["a\n", "b\n", "c\n"]), &l(&["a\n", "B\n", "c\n"]));
        assert_eq!(String::from_utf8(out).unwrap(), "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    }
}
