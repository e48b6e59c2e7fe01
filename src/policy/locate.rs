//! Finds the line of a key inside a YAML document, so that diagnostics can say `file:line`.
//!
//! serde_yaml reports positions for the errors it raises itself (bad syntax, wrong types, unknown
//! fields), but not for the semantic checks that run after deserialisation (an unknown `AllowMode`,
//! a wildcard on a public suffix). This module answers "on which line is `Security.ShellPolicy.AllowMode`"
//! with a small indentation walk over block-style YAML — the style every real config uses. For
//! flow-style values (`Limits: {Processes: 1}`) it answers with the line of the nearest enclosing
//! key it can find, which is still the right place to look.

/// One step of a key path: a mapping key or a sequence index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// Returns the 1-based line of `path`, or of its longest prefix that can be found, or `None` when
/// not even the first key is present.
pub fn line_of(text: &str, path: &[Step<'_>]) -> Option<usize> {
    // Stack of (indent, step) describing where the current line sits.
    let mut stack: Vec<(usize, Step<'_>)> = Vec::new();
    let mut seq_counters: Vec<(usize, usize)> = Vec::new(); // (indent of "- ", next index)
    let mut best: Option<(usize, usize)> = None; // (matched depth, line)

    for (lineno, raw) in text.lines().enumerate() {
        let line = strip_comment(raw);
        if line.trim().is_empty() || line.trim_start().starts_with("---") {
            continue;
        }
        let mut indent = line.len() - line.trim_start().len();
        let mut rest = line.trim_start();
        let mut steps_here: Vec<(usize, Step<'_>)> = Vec::new();

        // Sequence items: "- key: value" or "- value"; each dash opens an index step.
        while let Some(after) = rest.strip_prefix('-').filter(|a| a.is_empty() || a.starts_with(' ')) {
            stack.retain(|(i, _)| *i < indent);
            seq_counters.retain(|(i, _)| *i <= indent);
            let idx = match seq_counters.iter_mut().find(|(i, _)| *i == indent) {
                Some((_, n)) => {
                    let v = *n;
                    *n += 1;
                    v
                }
                None => {
                    seq_counters.push((indent, 1));
                    0
                }
            };
            steps_here.push((indent, Step::Index(idx)));
            let skipped = 1 + (after.len() - after.trim_start().len());
            indent += skipped;
            rest = after.trim_start();
        }
        for s in &steps_here {
            stack.push(*s);
        }
        if let Some(key) = mapping_key(rest) {
            stack.retain(|(i, _)| *i < indent);
            seq_counters.retain(|(i, _)| *i <= indent);
            stack.push((indent, Step::Key(key)));
        }
        let depth = matched_depth(&stack, path);
        if depth > 0 && best.is_none_or(|(d, _)| depth > d) {
            best = Some((depth, lineno + 1));
            if depth == path.len() {
                break;
            }
        }
    }
    best.map(|(_, line)| line)
}

fn matched_depth(stack: &[(usize, Step<'_>)], path: &[Step<'_>]) -> usize {
    if stack.len() > path.len() {
        return 0;
    }
    let all = stack.iter().zip(path).all(|((_, a), b)| a == b);
    if all {
        stack.len()
    } else {
        0
    }
}

/// The key of a `key: value` or `key:` line, unquoted; `None` for a plain scalar.
fn mapping_key(rest: &str) -> Option<&str> {
    let (key, after) = if let Some(q) = rest.strip_prefix('"') {
        let end = q.find('"')?;
        (&q[..end], &q[end + 1..])
    } else if let Some(q) = rest.strip_prefix('\'') {
        let end = q.find('\'')?;
        (&q[..end], &q[end + 1..])
    } else {
        let colon = rest.find(": ").or_else(|| rest.strip_suffix(':').map(|s| s.len()))?;
        (&rest[..colon], &rest[colon..])
    };
    if after.starts_with(':') && (after.len() == 1 || after[1..].starts_with(' ')) {
        Some(key.trim())
    } else {
        None
    }
}

fn strip_comment(line: &str) -> &str {
    let mut in_single = false;
    let mut in_double = false;
    let mut prev_space = true;
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !in_double => in_single = !in_single,
            '"' if !in_single => in_double = !in_double,
            '#' if !in_single && !in_double && prev_space => return &line[..i],
            _ => {}
        }
        prev_space = c == ' ' || c == '\t';
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;
    use Step::{Index, Key};

    const DOC: &str = "\
Agents:
  - Name: Auditor   # a comment
    TrustScore: 0.5
Security:
  FileSystemSandboxPath: /srv/x
  ShellPolicy:
    AllowMode: segmnts
    Allow:
      - \"go test\"
      - cargo test
  HttpAllowedHosts: [a.example, '*.com']
Sandbox:
  Limits: {Processes: 5}
";

    #[test]
    fn finds_nested_keys_and_items() {
        assert_eq!(line_of(DOC, &[Key("Security")]), Some(4));
        assert_eq!(line_of(DOC, &[Key("Security"), Key("ShellPolicy"), Key("AllowMode")]), Some(7));
        assert_eq!(line_of(DOC, &[Key("Security"), Key("ShellPolicy"), Key("Allow"), Index(1)]), Some(10));
        assert_eq!(line_of(DOC, &[Key("Agents"), Index(0), Key("TrustScore")]), Some(3));
    }

    #[test]
    fn flow_values_fall_back_to_the_enclosing_key() {
        assert_eq!(line_of(DOC, &[Key("Security"), Key("HttpAllowedHosts"), Index(1)]), Some(11));
        assert_eq!(line_of(DOC, &[Key("Sandbox"), Key("Limits"), Key("Processes")]), Some(13));
    }

    #[test]
    fn absent_keys_give_none() {
        assert_eq!(line_of(DOC, &[Key("Models")]), None);
    }
}
