//! `credential-file` and `env-file`: a command that names a file which exists to hold secrets.
//!
//! Both rules read every scanned word ([`Analysis::texts`]), cut it into path-like tokens
//! (`tokens`), spell out brace lists and look at the last path component (and its parent, for
//! `.aws/credentials`). For credentials a glob counts when it can match a protected name and
//! spells at least two of its characters (`id_*`, `.net?c`); a bare `*` or `.*` is left to the
//! masks, except inside `.ssh` or `.aws`, where any wildcard reaching a key counts. For `.env` only
//! a name counts (Decision 5): `.e*` names no file, and the child's masks hide what it matches. The credential rule
//! lets `ssh`, `scp` and `sftp` take their `-i KEY`, `ssh-add` its key files and `git` its
//! `core.sshCommand`, because those tools only authenticate with the key.

use std::borrow::Cow;

use super::tokens::{glob_matches, has_wildcard, is_separator, literal_count, tokens};
use crate::guard::shell::analysis::{Analysis, Site, Text};
use crate::guard::shell::braces::expand_braces;
use crate::guard::shell::normalize;
use crate::guard::Decision;
use crate::policy::Policy;

/// SSH private keys (their `.pub` halves are not matched).
const KEYS: &[&str] = &["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"];

/// Other files that exist to hold credentials.
const CREDENTIALS: &[&str] = &[".netrc", "_netrc", ".pgpass", ".git-credentials"];

/// Text one of the credential names holds (case aside).
const CREDENTIAL_ANCHORS: &[&str] = &["id_", "netrc", "pgpass", "credentials"];

/// Whether a path component, glob or not, names `name`. A glob must spell two characters of it,
/// unless `anywhere` (inside `.ssh`/`.aws`, where any wildcard is enough).
fn component_names(component: &str, name: &str, anywhere: bool) -> bool {
    if has_wildcard(component) {
        glob_matches(component, name) && (anywhere || literal_count(component) >= 2)
    } else {
        component == name
    }
}

/// The last component and its parent of a token.
fn last_two(token: &str) -> (&str, &str) {
    let mut parts = token.rsplit('/');
    let last = parts.next().unwrap_or("");
    (last, parts.next().unwrap_or(""))
}

/// Whether a (matched) token names a credentials file.
fn names_credential(token: &str) -> bool {
    let (last, parent) = last_two(token);
    let in_ssh = component_names(parent, ".ssh", false);
    KEYS.iter().any(|k| component_names(last, k, in_ssh))
        || CREDENTIALS.iter().any(|c| component_names(last, c, false))
        || (component_names(parent, ".aws", false) && component_names(last, "credentials", true))
}

/// Whether a (matched) token names a `.env` or `.env.*` file: its last component is `.env` or
/// starts with `.env.` once brace lists are spelled out (Decision 5). A glob such as `.e*` names
/// no file in particular: what it reaches is masked in the child, so the guard lets it pass.
fn names_env(token: &str) -> bool {
    let (last, _) = last_two(token);
    !has_wildcard(last) && (last == ".env" || last.starts_with(".env."))
}

/// Whether a text (a word's value, or one token of it) can hold a protected name at all: it has
/// one of the `anchors` (ignoring ASCII case), a brace, a wildcard with something beside it, or
/// non-ASCII text that may fold into one. Most words and tokens fail this cheap test.
fn may_name(text: &str, anchors: &[&str]) -> bool {
    !text.is_ascii()
        || text.contains('{')
        || (text.len() > 1 && has_wildcard(text))
        || anchors
            .iter()
            .any(|a| text.as_bytes().windows(a.len()).any(|w| w.eq_ignore_ascii_case(a.as_bytes())))
}

/// The first token of the scanned words that `names` accepts, as written, in a word that is not
/// `exempt`. Tokens are cut from the word's text with expansions as `*`; only those passing
/// [`may_name`] are normalised and spelled out.
fn first_named(
    texts: &[Text],
    anchors: &[&str],
    names: fn(&str) -> bool,
    exempt: impl Fn(&Text) -> bool,
) -> Option<String> {
    texts.iter().find_map(|t| {
        let text = match t.word.value() {
            Some(v) if !may_name(&v, anchors) => return None,
            Some(v) => v,
            None => Cow::Owned(t.word.text_with_holes("*")),
        };
        let hit = text.split(is_separator).filter(|s| !s.is_empty()).position(|token| {
            may_name(token, anchors)
                && expand_braces(&normalize::word(token)).iter().any(|spelled| names(spelled))
        })?;
        if exempt(t) {
            return None;
        }
        tokens(&t.word).into_iter().nth(hit).map(|token| token.shown)
    })
}

/// `credential-file`: off with `DenyCredentialFiles: false`.
pub fn credential_file(policy: &Policy, analysis: &Analysis) -> Option<Decision> {
    if !policy.deny_credential_files {
        return None;
    }
    let named = first_named(&analysis.texts, CREDENTIAL_ANCHORS, names_credential, |t| {
        authenticates_with(analysis, t)
    })?;
    Some(Decision::deny(
        "credential-file",
        format!(
            "[DENIED] Shell command blocked: it names a credentials file ('{named}') (credential-file).\n\
             Let the tool that needs it read the file itself (ssh -i, ssh-add, git), or tell the user\n\
             exactly which command to run and they will run it themselves."
        ),
    ))
}

/// `credential-file` on a probe snippet that is not shell (seed 000, "Probe"): its text is cut
/// into path-like tokens at whitespace, quotes, brackets and punctuation, each judged as a shell
/// word's token would be. Off with `DenyCredentialFiles: false`.
pub fn credential_file_in_text(policy: &Policy, text: &str) -> Option<Decision> {
    if !policy.deny_credential_files {
        return None;
    }
    let cut = |c: char| c.is_whitespace() || "'\"`()[]{},;=+<>|&:".contains(c);
    let named = text
        .split(cut)
        .filter(|t| !t.is_empty())
        .find(|token| may_name(token, CREDENTIAL_ANCHORS) && names_credential(&normalize::word(token)))?;
    Some(Decision::deny(
        "credential-file",
        format!(
            "[DENIED] Probe blocked: it names a credentials file ('{named}') (credential-file).\n\
             Let the tool that needs it read the file itself (ssh -i, ssh-add, git), or tell the user\n\
             exactly which command to run and they will run it themselves."
        ),
    ))
}

/// `env-file`: always on (Decision 5).
pub fn env_file(analysis: &Analysis) -> Option<Decision> {
    let named = first_named(&analysis.texts, &[".env"], names_env, |_| false)?;
    Some(Decision::deny(
        "env-file",
        format!(
            "[DENIED] Shell command blocked: it names a .env file ('{named}'); .env and .env.* files are always denied (env-file).\n\
             Ask the user for the value you need instead of reading the file."
        ),
    ))
}

/// Whether a word is a key path handed to a tool that only authenticates with it.
fn authenticates_with(analysis: &Analysis, text: &Text) -> bool {
    let (cmd, index) = match &text.site {
        Site::Assignment { name } => return name == "GIT_SSH_COMMAND",
        Site::Other => return false,
        Site::Arg { cmd, index } => match analysis.cmds.get(*cmd) {
            Some(c) => (c, *index),
            None => return false,
        },
    };
    let this = cmd.arg(index).unwrap_or_default();
    let prev = index.checked_sub(1).and_then(|i| cmd.arg(i)).unwrap_or_default();
    let identity = |opt: &str| opt.to_ascii_lowercase().trim_start().starts_with("identityfile");
    match cmd.name.as_str() {
        "ssh-add" => index > 0,
        "ssh" | "scp" | "sftp" => {
            (this.starts_with("-i") && this.len() > 2)
                || this.strip_prefix("-o").is_some_and(|o| !o.is_empty() && identity(o))
                || (prev.starts_with('-') && !prev.starts_with("--") && prev.ends_with('i'))
                || (prev == "-o" && identity(&this))
        }
        "git" => {
            let lower = this.to_ascii_lowercase();
            (prev == "-c" && lower.starts_with("core.sshcommand="))
                || (cmd.arg(1).as_deref() == Some("config") && prev.eq_ignore_ascii_case("core.sshcommand"))
        }
        "export" | "declare" | "typeset" | "local" | "readonly" => this.starts_with("GIT_SSH_COMMAND="),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credential_names_and_globs() {
        for t in [
            "~/.ssh/id_rsa",
            "/root/.ssh/id_ed25519",
            "id_ecdsa",
            "~/.aws/credentials",
            ".netrc",
            "_netrc",
            "x/.pgpass",
            ".git-credentials",
            "~/.ssh/id_*",
            "~/.ssh/*",
            "~/.ssh/id_?sa",
            "~/.aws/*",
            ".net*",
            "*/.ssh/id_rsa",
        ] {
            assert!(names_credential(t), "{t}");
        }
        for t in
            ["~/.ssh/id_rsa.pub", "~/.ssh/*.pub", "*", ".*", "credentials", "~/.ssh", ".npmrc", "key.pem"]
        {
            assert!(!names_credential(t), "{t}");
        }
    }

    #[test]
    fn env_names_and_globs() {
        for t in [".env", "backend/.env", "apps/web/.env.local", ".env.production"] {
            assert!(names_env(t), "{t}");
        }
        // Globs name no file in particular (Decision 5): the masks keep what they reach unreadable.
        for t in [
            ".env.*",
            ".e*",
            ".env*",
            ".en?",
            "process.env",
            ".envrc",
            "env",
            "*",
            ".*",
            "*.env",
            ".environment",
            "x.env",
        ] {
            assert!(!names_env(t), "{t}");
        }
    }
}
