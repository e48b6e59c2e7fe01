//! Strict HTTP/1.x message heads (RFC 9112): the request line, the status line, header fields and
//! the message framing they imply.
//!
//! The proxy re-serialises every head it forwards, so what the upstream and the client see is
//! always a canonical form this module accepted. It is deliberately stricter than RFC 9112's
//! "MAY accept" clauses, because a proxy that reads a message differently from the server behind
//! it is how requests are smuggled: bare CR or LF, obsolete line folding, whitespace before a
//! colon, control characters in values, `Content-Length` together with `Transfer-Encoding`,
//! several or non-numeric lengths and any transfer coding other than a lone `chunked` are all
//! refused. Pure functions: no I/O.

/// Why a message head is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HttpError {
    #[error("the request line is not 'METHOD TARGET HTTP/1.x'")]
    RequestLine,
    #[error("the status line is not 'HTTP/1.x CODE REASON'")]
    StatusLine,
    #[error("only HTTP/1.0 and HTTP/1.1 are spoken here")]
    Version,
    #[error("a bare CR or LF inside the head")]
    BareNewline,
    #[error("obsolete line folding (a header line starting with whitespace)")]
    ObsFold,
    #[error("header line '{0}' has no colon or an invalid name")]
    FieldName(String),
    #[error("whitespace between the header name '{0}' and its colon")]
    SpaceBeforeColon(String),
    #[error("a control character in the value of header '{0}'")]
    FieldValue(String),
    #[error("both Content-Length and Transfer-Encoding are present")]
    LengthAndCoding,
    #[error("Content-Length is missing a single decimal value")]
    ContentLength,
    #[error("transfer coding '{0}' is not supported (only a lone 'chunked')")]
    TransferCoding(String),
    #[error("Transfer-Encoding in an HTTP/1.0 message")]
    CodingInHttp10,
    #[error("more than one Host header")]
    DuplicateHost,
    #[error("a CONNECT request carries a body")]
    ConnectBody,
    #[error("a malformed chunk in a chunked body")]
    Chunk,
}

/// The protocol version of a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Http10,
    Http11,
}

/// One header field as received: a token name and a value without surrounding whitespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    pub value: Vec<u8>,
}

impl Field {
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }
}

/// A parsed request head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestHead {
    pub method: String,
    pub target: String,
    pub version: Version,
    pub fields: Vec<Field>,
}

impl RequestHead {
    pub fn is_connect(&self) -> bool {
        self.method == "CONNECT"
    }
}

/// A parsed response head.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResponseHead {
    pub status: u16,
    pub reason: Vec<u8>,
    pub fields: Vec<Field>,
}

/// How the end of a message body is found (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// No body.
    Empty,
    /// Exactly this many bytes.
    Length(u64),
    /// The chunked transfer coding.
    Chunked,
    /// Everything until the sender closes (responses only).
    UntilClose,
}

/// The offset just past the blank line that ends a head, if `buf` holds a complete one.
pub fn head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Parses a complete request head (as delimited by [`head_end`]).
pub fn parse_request(head: &[u8]) -> Result<RequestHead, HttpError> {
    let lines = split_lines(head)?;
    let (first, rest) = lines.split_first().ok_or(HttpError::RequestLine)?;
    let mut parts = first.split(|&b| b == b' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(HttpError::RequestLine);
    };
    if method.is_empty() || !method.iter().all(|&b| is_tchar(b)) {
        return Err(HttpError::RequestLine);
    }
    if target.is_empty() || !target.iter().all(|&b| b.is_ascii_graphic()) {
        return Err(HttpError::RequestLine);
    }
    let version = parse_version(version).ok_or(HttpError::Version)?;
    Ok(RequestHead { method: ascii(method), target: ascii(target), version, fields: parse_fields(rest)? })
}

/// Parses a complete response head. Only HTTP/1.x is accepted from upstreams.
pub fn parse_response(head: &[u8]) -> Result<ResponseHead, HttpError> {
    let lines = split_lines(head)?;
    let (first, rest) = lines.split_first().ok_or(HttpError::StatusLine)?;
    let version = first.get(..8).ok_or(HttpError::StatusLine)?;
    parse_version(version).ok_or(HttpError::Version)?;
    let code = first.get(8..12).ok_or(HttpError::StatusLine)?;
    if code[0] != b' ' || !code[1..].iter().all(u8::is_ascii_digit) || code[1] == b'0' {
        return Err(HttpError::StatusLine);
    }
    let status = code[1..].iter().fold(0u16, |n, d| n * 10 + u16::from(d - b'0'));
    let reason = match &first[12..] {
        [] => Vec::new(),
        [b' ', reason @ ..] if reason.iter().all(|&b| is_field_byte(b)) => reason.to_vec(),
        _ => return Err(HttpError::StatusLine),
    };
    Ok(ResponseHead { status, reason, fields: parse_fields(rest)? })
}

/// The framing of a request body; also refuses a second `Host` and a body on CONNECT.
pub fn request_framing(req: &RequestHead) -> Result<Framing, HttpError> {
    if req.fields.iter().filter(|f| f.is("host")).count() > 1 {
        return Err(HttpError::DuplicateHost);
    }
    let framing = match (content_length(&req.fields)?, transfer_coding(&req.fields)?) {
        (Some(_), Some(_)) => return Err(HttpError::LengthAndCoding),
        (None, Some(_)) if req.version == Version::Http10 => return Err(HttpError::CodingInHttp10),
        (None, Some(coding)) if coding.eq_ignore_ascii_case("chunked") => Framing::Chunked,
        (None, Some(coding)) => return Err(HttpError::TransferCoding(coding)),
        (Some(n), None) => Framing::Length(n),
        (None, None) => Framing::Empty,
    };
    if req.is_connect() && !matches!(framing, Framing::Empty | Framing::Length(0)) {
        return Err(HttpError::ConnectBody);
    }
    Ok(framing)
}

/// The framing of a response body, given whether the request was `HEAD`.
pub fn response_framing(resp: &ResponseHead, head_request: bool) -> Result<Framing, HttpError> {
    if head_request || resp.status < 200 || resp.status == 204 || resp.status == 304 {
        return Ok(Framing::Empty);
    }
    // RFC 9112 §6.3: a transfer coding overrides Content-Length; one that does not end in
    // chunked leaves the length to the connection close.
    match transfer_coding(&resp.fields)? {
        Some(coding) if coding.eq_ignore_ascii_case("chunked") => return Ok(Framing::Chunked),
        Some(_) => return Ok(Framing::UntilClose),
        None => {}
    }
    Ok(match content_length(&resp.fields)? {
        Some(n) => Framing::Length(n),
        None => Framing::UntilClose,
    })
}

/// The lower-cased options of every `Connection` field: the names of further hop-by-hop fields.
pub fn connection_options(fields: &[Field]) -> Vec<String> {
    fields
        .iter()
        .filter(|f| f.is("connection"))
        .flat_map(|f| f.value.split(|&b| b == b','))
        .map(|t| String::from_utf8_lossy(t.trim_ascii()).to_ascii_lowercase())
        .filter(|t| !t.is_empty())
        .collect()
}

/// True for the fields that describe one connection, not the message (RFC 9110 §7.6.1), and
/// the framing fields that the proxy always writes itself.
pub fn is_hop_by_hop(name: &str, options: &[String]) -> bool {
    const FIXED: &[&str] = &[
        "connection",
        "proxy-connection",
        "keep-alive",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
        "proxy-authorization",
        "proxy-authenticate",
        "content-length",
    ];
    let lower = name.to_ascii_lowercase();
    FIXED.contains(&lower.as_str()) || options.contains(&lower)
}

/// A complete response with a plain-text body, as the proxy sends for its own answers.
pub fn plain_response(status: u16, reason: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The value of a chunk-size line (without its CRLF); chunk extensions are accepted and dropped.
pub fn parse_chunk_size(line: &[u8]) -> Result<u64, HttpError> {
    let end = line.iter().position(|&b| b == b';' || b == b' ' || b == b'\t').unwrap_or(line.len());
    let (digits, ext) = line.split_at(end);
    if digits.is_empty() || digits.len() > 15 || !ext.iter().all(|&b| is_field_byte(b)) {
        return Err(HttpError::Chunk);
    }
    let ext = ext.trim_ascii_start();
    if !ext.is_empty() && ext[0] != b';' {
        return Err(HttpError::Chunk);
    }
    let text = std::str::from_utf8(digits).map_err(|_| HttpError::Chunk)?;
    if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(HttpError::Chunk);
    }
    u64::from_str_radix(text, 16).map_err(|_| HttpError::Chunk)
}

/// Checks one trailer line of a chunked body (the field syntax of the head applies).
pub fn check_trailer_line(line: &[u8]) -> Result<(), HttpError> {
    parse_fields(&[line]).map(drop)
}

fn split_lines(head: &[u8]) -> Result<Vec<&[u8]>, HttpError> {
    let body = head.strip_suffix(b"\r\n\r\n").ok_or(HttpError::BareNewline)?;
    let lines: Vec<&[u8]> = split_crlf(body).collect();
    if lines.iter().any(|l| l.contains(&b'\r') || l.contains(&b'\n')) {
        return Err(HttpError::BareNewline);
    }
    Ok(lines)
}

fn split_crlf(mut s: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        match s.windows(2).position(|w| w == b"\r\n") {
            Some(i) => {
                let line = &s[..i];
                s = &s[i + 2..];
                Some(line)
            }
            None => {
                done = true;
                Some(s)
            }
        }
    })
}

fn parse_fields(lines: &[&[u8]]) -> Result<Vec<Field>, HttpError> {
    lines
        .iter()
        .map(|line| {
            if matches!(line.first(), Some(b' ' | b'\t')) {
                return Err(HttpError::ObsFold);
            }
            let shown = || String::from_utf8_lossy(&line[..line.len().min(40)]).into_owned();
            let colon = line.iter().position(|&b| b == b':').ok_or_else(|| HttpError::FieldName(shown()))?;
            let name = &line[..colon];
            if matches!(name.last(), Some(b' ' | b'\t')) {
                return Err(HttpError::SpaceBeforeColon(ascii(name.trim_ascii())));
            }
            if name.is_empty() || !name.iter().all(|&b| is_tchar(b)) {
                return Err(HttpError::FieldName(shown()));
            }
            let value = line[colon + 1..].trim_ascii();
            if !value.iter().all(|&b| is_field_byte(b)) {
                return Err(HttpError::FieldValue(ascii(name)));
            }
            Ok(Field { name: ascii(name), value: value.to_vec() })
        })
        .collect()
}

/// The one `Content-Length`, if present. Several fields or a list are refused even when equal.
fn content_length(fields: &[Field]) -> Result<Option<u64>, HttpError> {
    let mut values = fields.iter().filter(|f| f.is("content-length"));
    let Some(field) = values.next() else { return Ok(None) };
    if values.next().is_some() || field.value.is_empty() || field.value.len() > 18 {
        return Err(HttpError::ContentLength);
    }
    if !field.value.iter().all(u8::is_ascii_digit) {
        return Err(HttpError::ContentLength);
    }
    Ok(Some(field.value.iter().fold(0u64, |n, d| n * 10 + u64::from(d - b'0'))))
}

/// The transfer codings of every `Transfer-Encoding` field, as one comma-joined list.
fn transfer_coding(fields: &[Field]) -> Result<Option<String>, HttpError> {
    let codings: Vec<String> = fields
        .iter()
        .filter(|f| f.is("transfer-encoding"))
        .flat_map(|f| f.value.split(|&b| b == b','))
        .map(|c| String::from_utf8_lossy(c.trim_ascii()).into_owned())
        .collect();
    match codings.as_slice() {
        [] => Ok(None),
        [one] if !one.is_empty() => Ok(Some(one.clone())),
        _ => Err(HttpError::TransferCoding(codings.join(", "))),
    }
}

fn parse_version(v: &[u8]) -> Option<Version> {
    match v {
        b"HTTP/1.1" => Some(Version::Http11),
        b"HTTP/1.0" => Some(Version::Http10),
        _ => None,
    }
}

/// `tchar` of RFC 9110 §5.6.2.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// A byte allowed in a field value: visible, space, tab or obs-text; no other control.
fn is_field_byte(b: u8) -> bool {
    b == b'\t' || b == b' ' || b.is_ascii_graphic() || b >= 0x80
}

/// Text of bytes already checked to be ASCII.
fn ascii(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(text: &str) -> Result<RequestHead, HttpError> {
        parse_request(text.as_bytes())
    }

    #[test]
    fn parses_a_proxy_request() {
        let r = req("GET http://a.example/x?y HTTP/1.1\r\nHost: a.example\r\nX-Y:  z \r\n\r\n").unwrap();
        assert_eq!(
            (r.method.as_str(), r.target.as_str(), r.version),
            ("GET", "http://a.example/x?y", Version::Http11)
        );
        assert_eq!(r.fields[1], Field { name: "X-Y".into(), value: b"z".to_vec() });
        assert_eq!(request_framing(&r), Ok(Framing::Empty));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n\r\nrest"), Some(18));
        assert_eq!(head_end(b"GET / HTTP/1.1\r\n"), None);
    }

    #[test]
    fn refuses_the_smuggling_shapes() {
        let cases: &[(&str, HttpError)] = &[
            ("GET / HTTP/1.1\nHost: a\r\n\r\n", HttpError::BareNewline),
            ("GET / HTTP/1.1\r\nHost: a\rX: b\r\n\r\n", HttpError::BareNewline),
            ("GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", HttpError::ObsFold),
            ("GET / HTTP/1.1\r\nHost : a\r\n\r\n", HttpError::SpaceBeforeColon("Host".into())),
            ("GET / HTTP/1.1\r\nX: a\0b\r\n\r\n", HttpError::FieldValue("X".into())),
            ("GET  / HTTP/1.1\r\n\r\n", HttpError::RequestLine),
            ("GET / HTTP/2.0\r\n\r\n", HttpError::Version),
            ("G(T / HTTP/1.1\r\n\r\n", HttpError::RequestLine),
        ];
        for (text, want) in cases {
            assert_eq!(req(text).err().as_ref(), Some(want), "{text:?}");
        }
        let framing = |text: &str| request_framing(&req(text).unwrap());
        let both = "POST / HTTP/1.1\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert_eq!(framing(both), Err(HttpError::LengthAndCoding));
        let twice = "POST / HTTP/1.1\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\n";
        assert_eq!(framing(twice), Err(HttpError::ContentLength));
        for cl in ["3, 3", "+3", "-1", "0x3", "3 3", ""] {
            let text = format!("POST / HTTP/1.1\r\nContent-Length: {cl}\r\n\r\n");
            assert_eq!(framing(&text), Err(HttpError::ContentLength), "{cl:?}");
        }
        for te in ["gzip, chunked", "chunked, chunked", "identity", "chunked\r\nTransfer-Encoding: gzip"] {
            let text = format!("POST / HTTP/1.1\r\nTransfer-Encoding: {te}\r\n\r\n");
            assert!(matches!(framing(&text), Err(HttpError::TransferCoding(_))), "{te:?}");
        }
        let old = "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert_eq!(framing(old), Err(HttpError::CodingInHttp10));
        assert_eq!(framing("GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"), Err(HttpError::DuplicateHost));
        assert_eq!(framing("CONNECT a:1 HTTP/1.1\r\nContent-Length: 1\r\n\r\n"), Err(HttpError::ConnectBody));
        assert_eq!(framing("POST / HTTP/1.1\r\nTransfer-Encoding: Chunked\r\n\r\n"), Ok(Framing::Chunked));
        assert_eq!(framing("POST / HTTP/1.1\r\nContent-Length: 12\r\n\r\n"), Ok(Framing::Length(12)));
    }

    #[test]
    fn response_heads_and_their_framing() {
        let r = parse_response(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n").unwrap();
        assert_eq!((r.status, r.reason.as_slice()), (200, &b"OK"[..]));
        assert_eq!(response_framing(&r, false), Ok(Framing::Length(5)));
        assert_eq!(response_framing(&r, true), Ok(Framing::Empty));
        let r = parse_response(b"HTTP/1.1 204\r\n\r\n").unwrap();
        assert_eq!((r.status, response_framing(&r, false)), (204, Ok(Framing::Empty)));
        let r = parse_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 9\r\n\r\n")
            .unwrap();
        assert_eq!(response_framing(&r, false), Ok(Framing::Chunked));
        let r = parse_response(b"HTTP/1.0 200 OK\r\n\r\n").unwrap();
        assert_eq!(response_framing(&r, false), Ok(Framing::UntilClose));
        for bad in [
            "HTTP/1.1 20 OK\r\n\r\n",
            "HTTP/1.1 099 X\r\n\r\n",
            "HTTP/1.1 200OK\r\n\r\n",
            "ICY 200 OK\r\n\r\n",
        ] {
            assert!(parse_response(bad.as_bytes()).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn hop_by_hop_includes_connection_options() {
        let r = req("GET / HTTP/1.1\r\nConnection: keep-alive, X-Secret\r\nX-Secret: 1\r\n\r\n").unwrap();
        let opts = connection_options(&r.fields);
        assert!(is_hop_by_hop("x-secret", &opts) && is_hop_by_hop("Keep-Alive", &opts));
        assert!(!is_hop_by_hop("Accept", &opts));
    }

    mod any_input {
        use super::*;
        use proptest::prelude::*;

        /// Heads built from the bytes that matter to the grammar, and arbitrary ones.
        fn head() -> impl Strategy<Value = Vec<u8>> {
            let piece = prop_oneof![
                Just(b"\r\n".to_vec()),
                Just(b"\n".to_vec()),
                Just(b":".to_vec()),
                Just(b" ".to_vec()),
                Just(b"HTTP/1.1".to_vec()),
                Just(b"Content-Length: ".to_vec()),
                Just(b"Transfer-Encoding: chunked".to_vec()),
                proptest::collection::vec(any::<u8>(), 0..8),
            ];
            proptest::collection::vec(piece, 0..24).prop_map(|mut parts| {
                parts.push(b"\r\n\r\n".to_vec());
                parts.concat()
            })
        }

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(2048))]
            #[test]
            fn parsing_never_panics(bytes in head(), head_request in any::<bool>()) {
                let _ = head_end(&bytes);
                if let Ok(req) = parse_request(&bytes) {
                    let _ = request_framing(&req);
                    let _ = connection_options(&req.fields);
                    prop_assert!(req.fields.iter().all(|f| !f.value.contains(&b'\n')));
                }
                if let Ok(resp) = parse_response(&bytes) {
                    let _ = response_framing(&resp, head_request);
                }
                let _ = parse_chunk_size(&bytes);
                let _ = check_trailer_line(&bytes);
            }
        }
    }

    #[test]
    fn chunk_sizes() {
        assert_eq!(parse_chunk_size(b"1a"), Ok(26));
        assert_eq!(parse_chunk_size(b"0;name=value"), Ok(0));
        assert_eq!(parse_chunk_size(b"10 ;x"), Ok(16));
        for bad in [&b""[..], b"g", b"-1", b"1 2", b"ffffffffffffffff1", b"1;\x01", b"+1"] {
            assert_eq!(parse_chunk_size(bad), Err(HttpError::Chunk), "{bad:?}");
        }
    }
}
