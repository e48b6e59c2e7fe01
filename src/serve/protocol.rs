//! The wire format: one JSON object per line, at most [`MAX_LINE`] bytes; the fields of a
//! request; the `error` reply.
//!
//! [`LineReader::next`] yields each line (without its newline), or [`Line::TooLong`] once for a
//! line past the limit, whose rest is skipped without being kept — a client cannot make the
//! server hold more than one limit's worth of an unfinished line.

use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

use crate::policy::duration;

/// The longest request line (1 MiB).
pub const MAX_LINE: usize = 1 << 20;

/// One line read from a connection.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Text(Vec<u8>),
    /// A line longer than [`MAX_LINE`]: answered with an error and skipped.
    TooLong,
}

/// Reads newline-terminated lines of bounded length.
pub struct LineReader<R> {
    inner: BufReader<R>,
    line: Vec<u8>,
    skipping: bool,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub fn new(inner: R) -> LineReader<R> {
        LineReader { inner: BufReader::with_capacity(64 * 1024, inner), line: Vec::new(), skipping: false }
    }

    /// The next line; `None` at end of input (an unterminated last line is still a line).
    pub async fn next(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                if self.skipping {
                    self.skipping = false;
                    return Ok(Some(Line::TooLong));
                }
                return Ok((!self.line.is_empty()).then(|| Line::Text(std::mem::take(&mut self.line))));
            }
            let (chunk, ended) = match memchr::memchr(b'\n', buf) {
                Some(i) => (&buf[..i], Some(i + 1)),
                None => (buf, None),
            };
            if !self.skipping {
                if self.line.len() + chunk.len() > MAX_LINE {
                    self.skipping = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let used = ended.unwrap_or(buf.len());
            self.inner.consume(used);
            if ended.is_some() {
                if std::mem::take(&mut self.skipping) {
                    return Ok(Some(Line::TooLong));
                }
                return Ok(Some(Line::Text(std::mem::take(&mut self.line))));
            }
        }
    }
}

/// The `error` reply to a request that cannot be taken.
pub fn error(id: Option<&Value>, message: &str) -> Value {
    json!({ "id": id.cloned().unwrap_or(Value::Null), "event": "error", "message": message })
}

/// A string field that must be present.
pub fn string<'a>(req: &'a Value, name: &str) -> Result<&'a str, String> {
    match req.get(name) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(format!("field '{name}' must be a string")),
        None => Err(format!("missing field '{name}'")),
    }
}

/// A string field that may be absent.
pub fn optional_string<'a>(req: &'a Value, name: &str) -> Result<Option<&'a str>, String> {
    match req.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(_) => string(req, name).map(Some),
    }
}

/// A list of strings that must be present and not empty.
pub fn strings(req: &Value, name: &str) -> Result<Vec<String>, String> {
    let list = match req.get(name) {
        Some(Value::Array(items)) => items,
        Some(_) => return Err(format!("field '{name}' must be a list of strings")),
        None => return Err(format!("missing field '{name}'")),
    };
    let words: Option<Vec<String>> = list.iter().map(|v| v.as_str().map(str::to_string)).collect();
    match words {
        Some(w) if !w.is_empty() => Ok(w),
        Some(_) => Err(format!("field '{name}' must not be empty")),
        None => Err(format!("field '{name}' must be a list of strings")),
    }
}

/// A list of strings that may be absent (empty then).
pub fn optional_strings(req: &Value, name: &str) -> Result<Vec<String>, String> {
    match req.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(items)) if items.is_empty() => Ok(Vec::new()),
        Some(_) => strings(req, name),
    }
}

/// A boolean field, `default` when absent.
pub fn boolean(req: &Value, name: &str, default: bool) -> Result<bool, String> {
    match req.get(name) {
        None | Some(Value::Null) => Ok(default),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(format!("field '{name}' must be true or false")),
    }
}

/// A `timeout` field: a duration (`30s`, `5m`) or a number of seconds; absent means the policy's.
pub fn timeout(req: &Value) -> Result<Option<Duration>, String> {
    let bad = || "field 'timeout' must be a duration such as \"30s\" or a number of seconds".to_string();
    match req.get("timeout") {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => duration::parse(s).map(Some).ok_or_else(bad),
        Some(Value::Number(n)) => match n.as_f64() {
            Some(secs) if secs > 0.0 && secs.is_finite() => Ok(Some(Duration::from_secs_f64(secs))),
            _ => Err(bad()),
        },
        Some(_) => Err(bad()),
    }
}

/// An `offset` field: a byte offset, 0 when absent.
pub fn offset(req: &Value) -> Result<u64, String> {
    match req.get("offset") {
        None | Some(Value::Null) => Ok(0),
        Some(v) => {
            v.as_u64().ok_or_else(|| "field 'offset' must be a byte offset (a whole number from 0)".into())
        }
    }
}

/// The key an id is known by within a connection (its JSON text: `1` and `"1"` differ).
pub fn id_key(id: &Value) -> String {
    id.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn lines(input: &[u8]) -> Vec<Line> {
        let mut r = LineReader::new(input);
        let mut out = Vec::new();
        while let Some(l) = r.next().await.unwrap() {
            out.push(l);
        }
        out
    }

    #[tokio::test]
    async fn an_over_long_line_is_reported_once_and_the_next_line_still_read() {
        let mut input = vec![b'x'; MAX_LINE + 10];
        input.extend_from_slice(b"\n{\"a\":1}\nlast");
        let got = lines(&input).await;
        assert_eq!(got, vec![Line::TooLong, Line::Text(b"{\"a\":1}".to_vec()), Line::Text(b"last".to_vec())]);
        let exact = [vec![b'y'; MAX_LINE], b"\n".to_vec()].concat();
        assert_eq!(lines(&exact).await, vec![Line::Text(vec![b'y'; MAX_LINE])]);
    }

    #[test]
    fn timeouts_are_durations_or_seconds() {
        assert_eq!(timeout(&json!({"timeout": "2s"})), Ok(Some(Duration::from_secs(2))));
        assert_eq!(timeout(&json!({"timeout": 1.5})), Ok(Some(Duration::from_millis(1500))));
        assert_eq!(timeout(&json!({})), Ok(None));
        assert!(timeout(&json!({"timeout": -1})).is_err());
        assert!(timeout(&json!({"timeout": "soon"})).is_err());
    }
}
