//! What counts as a secret *inside* a file or a value: the seed's list, read from bytes.
//!
//! [`from_file`] is called once per protected file (a deny-ruled file under the roots, or a home
//! credential file) with its name and content, and returns every candidate value; [`from_value`]
//! does the same for one environment value. Both only *propose* strings — the length threshold
//! and de-duplication are [`SecretSet`](super::secrets::SecretSet)'s job.
//!
//! Read from a file:
//! - the value of a secret-named `KEY=VALUE` / `KEY: VALUE` line ([`names::is_secret_file_key`]),
//!   with `export`, quotes around the key or the value, and a trailing ` # comment` handled;
//! - the password inside a URL (`scheme://user:PASSWORD@host`, so every `.git-credentials` line);
//! - every body line of a PEM private-key block, so that a `cat` of the key prints only its
//!   `BEGIN`/`END` lines (a body line is also a substring of the key re-joined without newlines,
//!   so `tr -d '\n'` is masked too);
//! - the `password` token of a `.netrc` / `_netrc`;
//! - the last field of a `.pgpass` line;
//! - the whole content of a file that holds one bare token and nothing else.
//!
//! A quoted value with backslash escapes is proposed both as written and unescaped (a program
//! that loads the file prints the latter), and a value that embeds a PEM key or a URL is read for
//! those too. `PORT=3000` and `NODE_ENV=production` propose nothing: their keys are not secret-named.

use std::sync::LazyLock;

use memchr::memmem::Finder;

use super::names;

/// Candidate secret values in the content of the file called `file_name`.
pub fn from_file(file_name: &[u8], content: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    match file_name {
        b".netrc" | b"_netrc" => netrc(content, &mut out),
        b".pgpass" => pgpass(content, &mut out),
        _ => {}
    }
    pem_bodies(content, &mut out);
    for line in content.split(|&b| b == b'\n') {
        let line = trim(line);
        if let Some((key, value)) = key_value(line) {
            if std::str::from_utf8(key).is_ok_and(names::is_secret_file_key) {
                push_value(value, &mut out);
            }
        }
        if line.contains(&b'"') {
            json_pairs(line, &mut out);
        }
        url_passwords(line, &mut out);
    }
    if let Some(token) = bare_token(content) {
        out.push(token.to_vec());
    }
    out
}

/// Candidate secret values in one secret-named environment value: the value itself, and what it
/// embeds.
pub fn from_value(value: &[u8]) -> Vec<Vec<u8>> {
    let mut out = vec![value.to_vec()];
    embedded(value, &mut out);
    out
}

/// Passwords of URLs inside any environment value (`DATABASE_URL=postgres://u:PASSWORD@h/db`).
pub fn url_passwords_in(value: &[u8]) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    url_passwords(value, &mut out);
    out
}

/// A value as found: unquoted; plus its unescaped form and what it embeds.
fn push_value(raw: &[u8], out: &mut Vec<Vec<u8>>) {
    let (inner, unescaped) = unquote_value(raw);
    if inner.is_empty() {
        return;
    }
    out.push(inner.to_vec());
    if let Some(u) = unescaped {
        embedded(&u, out);
        out.push(u);
    }
    embedded(inner, out);
}

/// PEM body lines and URL passwords inside a value.
fn embedded(value: &[u8], out: &mut Vec<Vec<u8>>) {
    pem_bodies(value, out);
    url_passwords(value, out);
}

/// Splits `KEY=VALUE`, `KEY: VALUE`, `export KEY=VALUE`, `"key": "value"`. Returns `None` for a
/// line that is not one (comments, section headers, prose).
fn key_value(line: &[u8]) -> Option<(&[u8], &[u8])> {
    if line.first().is_none_or(|&b| b == b'#' || b == b';') {
        return None;
    }
    let line = line.strip_prefix(b"export ").map(trim).unwrap_or(line);
    let (key, rest) = match line.first() {
        Some(&q @ (b'"' | b'\'')) => {
            let end = line[1..].iter().position(|&b| b == q)? + 1;
            (&line[1..end], &line[end + 1..])
        }
        _ => {
            let end = line.iter().position(|&b| !is_key_byte(b)).unwrap_or(line.len());
            (&line[..end], &line[end..])
        }
    };
    if key.is_empty() || !key.iter().all(|&b| is_key_byte(b)) {
        return None;
    }
    let rest = trim(rest);
    let value = match rest.first() {
        Some(b'=') => &rest[1..],
        Some(b':') if !rest.starts_with(b"://") => &rest[1..],
        _ => return None,
    };
    Some((key, trim(value)))
}

/// Secret-named `"key": "value"` pairs anywhere on a line (a JSON object written on one line).
fn json_pairs(line: &[u8], out: &mut Vec<Vec<u8>>) {
    let mut i = 0;
    // The last string read, while only `:` and whitespace have followed it.
    let mut key: Option<&[u8]> = None;
    while i < line.len() {
        match line[i] {
            b'"' => {
                let len = quoted_len(&line[i..]);
                let string = &line[i..i + len];
                match key.take() {
                    Some(k) => {
                        let name = k.strip_prefix(b"\"").unwrap_or(k);
                        let name = name.strip_suffix(b"\"").unwrap_or(name);
                        if std::str::from_utf8(name).is_ok_and(names::is_secret_file_key) {
                            push_value(string, out);
                        }
                    }
                    None if line[i + len..].trim_ascii_start().first() == Some(&b':') => key = Some(string),
                    None => {}
                }
                i += len;
            }
            b':' | b' ' | b'\t' => i += 1,
            _ => {
                key = None;
                i += 1;
            }
        }
    }
}

/// Length of the double-quoted string at the start of `s`, quotes included (to the end of `s`
/// when it is not closed).
fn quoted_len(s: &[u8]) -> usize {
    let mut i = 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    s.len()
}

fn is_key_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.')
}

/// The value inside its quotes (up to the closing quote), or up to a ` #` comment when unquoted;
/// for a double-quoted value with backslash escapes, also the unescaped text.
fn unquote_value(raw: &[u8]) -> (&[u8], Option<Vec<u8>>) {
    match raw.first() {
        Some(b'\'') => {
            let end = raw[1..].iter().position(|&b| b == b'\'').map_or(raw.len(), |p| p + 1);
            (&raw[1..end], None)
        }
        Some(b'"') => {
            let mut i = 1;
            while i < raw.len() && raw[i] != b'"' {
                i += if raw[i] == b'\\' { 2 } else { 1 };
            }
            let inner = &raw[1..i.min(raw.len())];
            let unescaped = inner.contains(&b'\\').then(|| unescape(inner));
            (inner, unescaped)
        }
        _ => {
            let end = raw
                .windows(2)
                .position(|w| (w[0] == b' ' || w[0] == b'\t') && w[1] == b'#')
                .unwrap_or(raw.len());
            let v = trim(&raw[..end]);
            (v.strip_suffix(b",").unwrap_or(v), None)
        }
    }
}

/// Backslash escapes of a double-quoted string (`\n`, `\t`, `\r`, `\\`, `\"`; others kept as is).
fn unescape(s: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(s.len());
    let mut it = s.iter();
    while let Some(&b) = it.next() {
        if b != b'\\' {
            out.push(b);
            continue;
        }
        match it.next() {
            Some(b'n') => out.push(b'\n'),
            Some(b't') => out.push(b'\t'),
            Some(b'r') => out.push(b'\r'),
            Some(&c) => out.push(c),
            None => out.push(b'\\'),
        }
    }
    out
}

/// The searcher for `://`, built once: every environment value of every call is searched (a
/// searcher made per value cost more than the search).
static SCHEME_END: LazyLock<Finder<'static>> = LazyLock::new(|| Finder::new(b"://"));

/// Passwords in `scheme://user:password@host` URLs anywhere in `text`, as written and
/// percent-decoded. The userinfo ends at the authority's last `@`, so an unencoded `@` inside the
/// password does not cut it short.
fn url_passwords(text: &[u8], out: &mut Vec<Vec<u8>>) {
    for at in SCHEME_END.find_iter(text) {
        let auth_start = at + 3;
        let rest = &text[auth_start..];
        let authority_len = rest
            .iter()
            .position(|&b| matches!(b, b'/' | b'?' | b'#' | b'"' | b'\'' | b'<' | b'>') || b <= b' ')
            .unwrap_or(rest.len());
        let Some(at_sign) = rest[..authority_len].iter().rposition(|&b| b == b'@') else { continue };
        let userinfo = &rest[..at_sign];
        if let Some(colon) = userinfo.iter().position(|&b| b == b':') {
            let password = &userinfo[colon + 1..];
            if !password.is_empty() {
                out.push(password.to_vec());
                if let Some(decoded) = percent_decode(password) {
                    out.push(decoded);
                }
            }
        }
    }
}

/// The percent-decoded form, when it differs and every escape is well-formed.
fn percent_decode(s: &[u8]) -> Option<Vec<u8>> {
    if !s.contains(&b'%') {
        return None;
    }
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        if s[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            let v = u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()?;
            out.push(v);
            i += 3;
        } else {
            out.push(s[i]);
            i += 1;
        }
    }
    Some(out)
}

/// Body lines of every `-----BEGIN … PRIVATE KEY-----` block (PEM, OpenSSH, PGP), without the
/// `Name: value` header lines of encrypted keys.
fn pem_bodies(text: &[u8], out: &mut Vec<Vec<u8>>) {
    let mut inside = false;
    for line in text.split(|&b| b == b'\n') {
        let line = trim(line);
        if line.starts_with(b"-----BEGIN ") {
            inside = memchr::memmem::find(line, b"PRIVATE KEY").is_some();
            continue;
        }
        if line.starts_with(b"-----END ") {
            inside = false;
            continue;
        }
        if inside && !line.is_empty() && !line.contains(&b':') {
            out.push(line.to_vec());
        }
    }
}

/// `.netrc`: the token after each `password` token (tokens are whitespace-separated and may span
/// lines).
fn netrc(content: &[u8], out: &mut Vec<Vec<u8>>) {
    let mut tokens = content.split(|b| b.is_ascii_whitespace()).filter(|t| !t.is_empty());
    while let Some(t) = tokens.next() {
        if t == b"password" {
            if let Some(p) = tokens.next() {
                out.push(p.to_vec());
            }
        }
    }
}

/// `.pgpass`: `host:port:db:user:password`, `\:` and `\\` escaped; the password is everything
/// after the fourth unescaped colon, proposed as written and unescaped.
fn pgpass(content: &[u8], out: &mut Vec<Vec<u8>>) {
    for line in content.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.starts_with(b"#") {
            continue;
        }
        let mut colons = 0;
        let mut i = 0;
        while i < line.len() && colons < 4 {
            match line[i] {
                b'\\' => i += 1,
                b':' => colons += 1,
                _ => {}
            }
            i += 1;
        }
        if colons == 4 && i < line.len() {
            let raw = &line[i..];
            out.push(raw.to_vec());
            if raw.contains(&b'\\') {
                out.push(unescape(raw));
            }
        }
    }
}

/// The content of a file that is one bare token: a single line without spaces, `=` or `:`.
fn bare_token(content: &[u8]) -> Option<&[u8]> {
    let t = trim(content);
    let bare = !t.is_empty()
        && std::str::from_utf8(t).is_ok()
        && !t.iter().any(|&b| b.is_ascii_whitespace() || b.is_ascii_control() || b == b'=' || b == b':');
    bare.then_some(t)
}

fn trim(s: &[u8]) -> &[u8] {
    s.trim_ascii()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(name: &str, content: &str) -> Vec<String> {
        from_file(name.as_bytes(), content.as_bytes())
            .into_iter()
            .map(|v| String::from_utf8(v).unwrap())
            .collect()
    }

    #[test]
    fn env_file_lines() {
        let v = found(
            ".env",
            "# comment\nPORT=3000\nNODE_ENV=production\nexport API_KEY=abc123def456\n\
             DB_PASSWORD=\"quoted pass\" # note\nSECRET='single quoted'\nTOKEN=unquoted-token # c\n\
             DATABASE_URL=postgres://app:pg-s3cret-pw@db:5432/app\n",
        );
        assert!(v.contains(&"abc123def456".into()), "{v:?}");
        assert!(v.contains(&"quoted pass".into()), "{v:?}");
        assert!(v.contains(&"single quoted".into()), "{v:?}");
        assert!(v.contains(&"unquoted-token".into()), "{v:?}");
        assert!(v.contains(&"pg-s3cret-pw".into()), "{v:?}");
        assert!(!v.iter().any(|s| s == "3000" || s == "production"), "{v:?}");
    }

    #[test]
    fn yaml_json_ini_and_properties_keys() {
        let v = found(
            "config.yaml",
            "db:\n  password: yaml-pass-1\n\"client_secret\": \"json-secret-2\",\n\
             aws_secret_access_key = ini-key-3\naws_access_key_id = AKIAID\nspring.datasource.password=props-4\n",
        );
        for want in ["yaml-pass-1", "json-secret-2", "ini-key-3", "props-4"] {
            assert!(v.contains(&want.into()), "{want}: {v:?}");
        }
        assert!(!v.contains(&"AKIAID".into()));
    }

    #[test]
    fn json_escaped_pem_is_read_both_ways() {
        let v = found(
            "sa.json",
            r#"{"private_key": "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkq\nhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"}"#,
        );
        assert!(v.contains(&"MIIEvQIBADANBgkq".into()), "{v:?}");
        assert!(v.contains(&"hkiG9w0BAQEFAASC".into()), "{v:?}");
    }

    #[test]
    fn pem_body_lines_without_headers() {
        let v = found(
            "id_rsa",
            "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,00\n\n\
             MIIEowIBAAKCAQEA1\nZm9vYmFyYmF6cXV4\n-----END RSA PRIVATE KEY-----\n\
             -----BEGIN CERTIFICATE-----\nNOTASECRETLINE\n-----END CERTIFICATE-----\n",
        );
        assert_eq!(v, vec!["MIIEowIBAAKCAQEA1".to_string(), "Zm9vYmFyYmF6cXV4".into()]);
    }

    #[test]
    fn git_credentials_netrc_and_pgpass() {
        let v =
            found(".git-credentials", "https://alice:ghp_tok%2Fen123@github.com\nhttps://u:p@ss@h.example\n");
        assert!(v.contains(&"p@ss".into()), "{v:?}");
        assert!(v.contains(&"ghp_tok%2Fen123".into()) && v.contains(&"ghp_tok/en123".into()), "{v:?}");
        let v = found(
            ".netrc",
            "machine a.example login bob password netrc-pass-1\nmachine b password\n  two-2\n",
        );
        assert!(v.contains(&"netrc-pass-1".into()) && v.contains(&"two-2".into()), "{v:?}");
        let v = found(".pgpass", "# c\nlocalhost:5432:*:app:pg\\:pass\\\\word\n*:*:*:*:plain-pw\n");
        assert!(v.contains(&"pg\\:pass\\\\word".into()) && v.contains(&"pg:pass\\word".into()), "{v:?}");
        assert!(v.contains(&"plain-pw".into()), "{v:?}");
    }

    #[test]
    fn a_file_holding_one_token_is_that_token() {
        assert_eq!(found("api_token", "tok-0123456789\n"), vec!["tok-0123456789".to_string()]);
        assert!(found("notes", "two words\n").is_empty());
    }

    #[test]
    fn environment_values_yield_themselves_and_what_they_embed() {
        let v = from_value(
            b"-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEA\n-----END OPENSSH PRIVATE KEY-----",
        );
        assert!(v.contains(&b"b3BlbnNzaC1rZXktdjEA".to_vec()));
        assert_eq!(url_passwords_in(b"mysql://root:hunter2hunter2@db/x"), vec![b"hunter2hunter2".to_vec()]);
        assert!(url_passwords_in(b"https://example.com/a@b").is_empty());
    }
}
