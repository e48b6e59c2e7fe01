//! Which names hold a secret: the seed's name test for environment variables and for the keys of
//! `KEY=VALUE` / `KEY: VALUE` lines inside protected files.
//!
//! A name is first normalised into `_`-delimited upper-case words: `-`, `.` and spaces become `_`,
//! and a camelCase boundary (`apiKey`, `clientSecret`) becomes one too, so that `db.password`,
//! `"apiKey"` and `DB_PASSWORD` are read alike. Then:
//!
//! 1. **Pointers are not secrets.** When the last word is one of [`POINTER_WORDS`] (`ID`, `FILE`,
//!    `PATH`, `URL`, …) the name points to a secret rather than holding one — `AWS_ACCESS_KEY_ID`,
//!    `GITHUB_TOKEN_FILE`, `TOKEN_URL`, `SSH_KEY_PATH` — and is not secret-named.
//! 2. **Secret words.** Otherwise the name is secret-named when it *ends in* one of the terms (a
//!    plain suffix of the words joined without `_`: `APIKEY`, `GITHUBTOKEN`), or *contains one as a
//!    run of whole words* (`TOKEN_EXPIRY`, `MY_CONNECTION_STRING_V2`). Multi-word terms such as
//!    `API_KEY` are covered by their last word, so the list holds single words plus
//!    `CONNECTION_STRING`.
//! 3. `MYSQL_PWD` is secret-named for the environment; for file keys, `PASS`, `PWD`, `DSN`, `BEARER`
//!    and `SALT` join the terms (the seed's wider file test).
//!
//! `PATH`, `SSH_AUTH_SOCK` and `KEYBOARD_LAYOUT` are not secret-named: no word is a term and none
//! ends in one (`KEYBOARD` is not the word `KEY`).

use std::sync::LazyLock;

use aho_corasick::AhoCorasick;

/// Terms of the environment test: `KEY` also covers `API_KEY`, `ACCESS_KEY`, `SECRET_KEY` and
/// `PRIVATE_KEY`; `CREDENTIAL` also covers `CREDENTIALS` by suffix.
const ENV_TERMS: &[&str] = &[
    "KEY",
    "TOKEN",
    "SECRET",
    "PASSWORD",
    "PASSWD",
    "PASSPHRASE",
    "CREDENTIAL",
    "CREDENTIALS",
    "CONNECTION_STRING",
];

/// Terms added for keys inside protected files.
const FILE_EXTRA_TERMS: &[&str] = &["PASS", "PWD", "DSN", "BEARER", "SALT"];

/// Last words that make a name a pointer to a secret (a location, an identifier, a name) rather
/// than the secret itself.
pub const POINTER_WORDS: &[&str] =
    &["ID", "IDS", "FILE", "FILES", "PATH", "DIR", "URL", "URI", "ENDPOINT", "HOST", "NAME", "REGION"];

/// Whether the environment variable `name` holds a secret.
pub fn is_secret_env_name(name: &str) -> bool {
    if surely_not(name, &ENV_TERMS_JOINED) && !name.eq_ignore_ascii_case("mysql_pwd") {
        return false;
    }
    let words = normalise(name);
    if words == ["MYSQL", "PWD"] {
        return true;
    }
    matches_terms(&words, ENV_TERMS)
}

/// Whether the key of a `KEY=VALUE` or `KEY: VALUE` line in a protected file names a secret.
pub fn is_secret_file_key(key: &str) -> bool {
    let words = normalise(key);
    matches_terms(&words, ENV_TERMS) || matches_terms(&words, FILE_EXTRA_TERMS)
}

/// [`ENV_TERMS`] for [`surely_not`], built once: every variable of every call is asked.
static ENV_TERMS_JOINED: LazyLock<AhoCorasick> = LazyLock::new(|| joined_terms(ENV_TERMS));

/// One searcher for `terms` without their `_`s.
fn joined_terms(terms: &[&str]) -> AhoCorasick {
    AhoCorasick::new(terms.iter().map(|t| t.replace('_', ""))).expect("a few short literal terms")
}

/// A quick "no" for ASCII names: every match of rule 2 (and `MYSQL_PWD`, checked apart) has a
/// term, without its `_`, inside the name's letters and digits, upper-cased (`terms` is
/// [`joined_terms`] of the list).
fn surely_not(name: &str, terms: &AhoCorasick) -> bool {
    if !name.is_ascii() || name.len() > 256 {
        return false;
    }
    let mut buf = [0u8; 256];
    let mut n = 0;
    for b in name.bytes().filter(|b| !matches!(b, b'_' | b'-' | b'.' | b' ')) {
        buf[n] = b.to_ascii_uppercase();
        n += 1;
    }
    !terms.is_match(&buf[..n])
}

/// Rule 2 for `words` (without allocating: this runs for every variable of every call).
fn matches_terms(words: &[String], terms: &[&str]) -> bool {
    let Some(last) = words.last() else { return false };
    if POINTER_WORDS.contains(&last.as_str()) {
        return false;
    }
    terms.iter().any(|term| joined_ends_with(words, term) || holds_run(words, term))
}

/// Whether the words joined without `_` end in `term` without its `_`s.
fn joined_ends_with(words: &[String], term: &str) -> bool {
    let mut name = words.iter().rev().flat_map(|w| w.bytes().rev());
    term.bytes().rev().filter(|&b| b != b'_').all(|b| name.next() == Some(b))
}

/// Whether `term`'s `_`-separated parts occur as consecutive whole words.
fn holds_run(words: &[String], term: &str) -> bool {
    let len = term.split('_').count();
    words.windows(len).any(|w| w.iter().zip(term.split('_')).all(|(a, b)| a == b))
}

/// Upper-case words of a name: split on `_`, `-`, `.`, spaces and camelCase boundaries.
fn normalise(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut prev_lower_or_digit = false;
    for c in name.chars() {
        if matches!(c, '_' | '-' | '.' | ' ') {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            prev_lower_or_digit = false;
            continue;
        }
        if c.is_uppercase() && prev_lower_or_digit && !cur.is_empty() {
            words.push(std::mem::take(&mut cur));
        }
        prev_lower_or_digit = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_uppercase());
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule as first written, with strings: the allocation-free form must agree.
    fn reference(words: &[String], terms: &[&str]) -> bool {
        let Some(last) = words.last() else { return false };
        if POINTER_WORDS.contains(&last.as_str()) {
            return false;
        }
        let joined: String = words.concat();
        terms.iter().any(|term| {
            let parts: Vec<&str> = term.split('_').collect();
            joined.ends_with(&term.replace('_', ""))
                || words.windows(parts.len()).any(|w| w == parts.as_slice())
        })
    }

    proptest::proptest! {
        #[test]
        fn the_term_test_agrees_with_its_reference(name in "[A-Za-z_.-]{0,6}(KEY|TOKEN|CONNECTION_STRING|ID|String|Pass)?[a-z_]{0,4}") {
            let words = normalise(&name);
            for terms in [ENV_TERMS, FILE_EXTRA_TERMS] {
                proptest::prop_assert_eq!(matches_terms(&words, terms), reference(&words, terms), "{}", name);
                if surely_not(&name, &joined_terms(terms)) {
                    proptest::prop_assert!(!reference(&words, terms), "{}", name);
                }
            }
        }
    }

    #[test]
    fn the_seeds_secret_names_match() {
        for n in [
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "PGPASSWORD",
            "MYSQL_PWD",
            "DB_PASSWD",
            "GPG_PASSPHRASE",
            "AZURE_CREDENTIALS",
            "SQL_CONNECTION_STRING",
            "APIKEY",
            "TOKEN_EXPIRY",
            "STRIPE_SECRET",
        ] {
            assert!(is_secret_env_name(n), "{n}");
        }
    }

    #[test]
    fn ordinary_and_pointer_names_do_not() {
        for n in [
            "PATH",
            "SSH_AUTH_SOCK",
            "KEYBOARD_LAYOUT",
            "AWS_ACCESS_KEY_ID",
            "GITHUB_TOKEN_FILE",
            "TOKEN_URL",
            "SSH_KEY_PATH",
            "HOME",
            "NODE_ENV",
            "PORT",
            "PWD",
            "OLDPWD",
            "",
        ] {
            assert!(!is_secret_env_name(n), "{n}");
        }
    }

    #[test]
    fn file_keys_add_pass_pwd_dsn_bearer_salt_and_read_other_spellings() {
        for k in
            ["DB_PASS", "SENTRY_DSN", "AUTH_BEARER", "HASH_SALT", "db.password", "apiKey", "client-secret"]
        {
            assert!(is_secret_file_key(k), "{k}");
        }
        for k in ["PORT", "NODE_ENV", "private_key_id", "apiKeyId", "database_url"] {
            assert!(!is_secret_file_key(k), "{k}");
        }
        assert!(!is_secret_env_name("DB_PASS"));
    }
}
