//! Where each key and item of a YAML document is, so that diagnostics can say `file:line`.
//!
//! The YAML parser (serde-saphyr) records the line and column of every node it reads; the
//! typed parse ([`super::schema::parse`]) keeps plain values, so the document is also read into
//! a [`Located`] tree: every mapping key and sequence item with its position, block and flow
//! style alike. [`Located::line_of`] then answers "on which line is
//! `Security.ShellPolicy.AllowMode`" — or of its longest prefix that exists, which is still the
//! right place to look. The parser's budget bounds the nesting depth, so the tree stays shallow.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// One step of a key path: a mapping key or a sequence index.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// A 1-based line and column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    pub line: usize,
    pub column: usize,
}

/// A document's keys and items with their positions.
#[derive(Debug, Default)]
pub struct Located {
    root: Node,
}

#[derive(Debug, Default)]
enum Node {
    Map(Vec<(String, Position, Node)>),
    Seq(Vec<(Position, Node)>),
    #[default]
    Leaf,
}

impl Located {
    /// The positions in `text`; a document that does not parse has none (the typed parse
    /// reports why).
    pub fn parse(text: &str) -> Located {
        match serde_saphyr::from_str::<Node>(text) {
            Ok(root) => Located { root },
            Err(_) => Located::default(),
        }
    }

    /// The position of `path`, or of its longest prefix that exists; `None` when not even the
    /// first step does.
    pub fn position(&self, path: &[Step<'_>]) -> Option<Position> {
        let mut node = &self.root;
        let mut found = None;
        for step in path {
            let next = match (node, step) {
                (Node::Map(entries), Step::Key(key)) => {
                    entries.iter().rev().find(|(k, _, _)| k == key).map(|(_, pos, value)| (*pos, value))
                }
                (Node::Seq(items), Step::Index(i)) => items.get(*i).map(|(pos, value)| (*pos, value)),
                _ => None,
            };
            match next {
                Some((pos, value)) => {
                    found = Some(pos);
                    node = value;
                }
                None => break,
            }
        }
        found
    }

    /// The 1-based line of `path` (see [`Located::position`]).
    pub fn line_of(&self, path: &[Step<'_>]) -> Option<usize> {
        self.position(path).map(|p| p.line)
    }
}

fn position<T>(spanned: &Spanned<T>) -> Position {
    let at = &spanned.referenced;
    Position {
        line: usize::try_from(at.line()).unwrap_or(usize::MAX),
        column: usize::try_from(at.column()).unwrap_or(usize::MAX),
    }
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Node, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some(key) = map.next_key::<Spanned<KeyText>>()? {
            let value = map.next_value::<Node>()?;
            entries.push((key.value.0.clone(), position(&key), value));
        }
        Ok(Node::Map(entries))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Spanned<Node>>()? {
            items.push((position(&item), item.value));
        }
        Ok(Node::Seq(items))
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_i128<E>(self, _: i128) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_u128<E>(self, _: u128) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_str<E>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_bytes<E>(self, _: &[u8]) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_unit<E>(self) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
    fn visit_none<E>(self) -> Result<Node, E> {
        Ok(Node::Leaf)
    }
}

/// A mapping key as text (a number or boolean key as written; a complex key as empty text).
struct KeyText(String);

impl<'de> Deserialize<'de> for KeyText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<KeyText, D::Error> {
        deserializer.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = KeyText;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a mapping key")
    }

    fn visit_str<E>(self, v: &str) -> Result<KeyText, E> {
        Ok(KeyText(v.to_string()))
    }
    fn visit_bool<E>(self, v: bool) -> Result<KeyText, E> {
        Ok(KeyText(v.to_string()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<KeyText, E> {
        Ok(KeyText(v.to_string()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<KeyText, E> {
        Ok(KeyText(v.to_string()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<KeyText, E> {
        Ok(KeyText(v.to_string()))
    }
    fn visit_unit<E>(self) -> Result<KeyText, E> {
        Ok(KeyText(String::new()))
    }
    fn visit_none<E>(self) -> Result<KeyText, E> {
        Ok(KeyText(String::new()))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<KeyText, A::Error> {
        NodeVisitor.visit_map(map).map(|_| KeyText(String::new()))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<KeyText, A::Error> {
        NodeVisitor.visit_seq(seq).map(|_| KeyText(String::new()))
    }
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
  Limits: {Processes: 5, OpenFiles: 9}
";

    #[test]
    fn finds_nested_keys_and_items() {
        let doc = Located::parse(DOC);
        assert_eq!(doc.line_of(&[Key("Security")]), Some(4));
        assert_eq!(doc.line_of(&[Key("Security"), Key("ShellPolicy"), Key("AllowMode")]), Some(7));
        assert_eq!(doc.line_of(&[Key("Security"), Key("ShellPolicy"), Key("Allow"), Index(1)]), Some(10));
        assert_eq!(doc.line_of(&[Key("Agents"), Index(0), Key("TrustScore")]), Some(3));
    }

    #[test]
    fn flow_values_have_their_own_columns() {
        let doc = Located::parse(DOC);
        let host = doc.position(&[Key("Security"), Key("HttpAllowedHosts"), Index(1)]).unwrap();
        assert_eq!((host.line, host.column), (11, 33));
        let files = doc.position(&[Key("Sandbox"), Key("Limits"), Key("OpenFiles")]).unwrap();
        assert_eq!((files.line, files.column), (13, 26));
    }

    #[test]
    fn absent_keys_give_the_longest_prefix_or_none() {
        let doc = Located::parse(DOC);
        assert_eq!(doc.line_of(&[Key("Models")]), None);
        assert_eq!(doc.line_of(&[Key("Security"), Key("Nope")]), Some(4));
    }
}
