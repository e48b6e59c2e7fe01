//! Whether a path printed in a diff header belongs to a protected file.
//!
//! The policy's deny rules are anchored at the sandbox root, but a diff prints paths relative to
//! whatever repository it was made in (`git -C other diff`, a repository above or below the root, a
//! saved patch), behind an `a/`-style prefix that options can change or remove. The filter only
//! sees that text, so [`ProtectedPaths`] reads every deny rule at any depth: `secrets/**` also
//! protects `a/secrets/x` and `app/secrets/x`, and a rule on a directory protects what is beneath it.
//! This can hide an ordinary file that happens to share a protected name; it never shows a
//! protected one.
//!
//! Built once per call from `policy.deny` ([`ProtectedPaths::new`], compiled on first use); asked
//! per header path ([`ProtectedPaths::is_protected`]).

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use globset::{GlobSet, GlobSetBuilder};

use crate::policy::globs::{compile, GlobRules};

/// The deny rules, each read at any depth and covering its descendants. The glob set is compiled
/// on the first question (most output holds no diff at all) and shared by every clone.
#[derive(Debug, Clone)]
pub struct ProtectedPaths {
    patterns: Arc<[String]>,
    set: Arc<OnceLock<GlobSet>>,
}

impl ProtectedPaths {
    /// Derives `**/RULE` and `**/RULE/**` from every deny rule.
    pub fn new(deny: &GlobRules) -> ProtectedPaths {
        let mut patterns = Vec::new();
        for rule in deny.rules() {
            let core = anchorless(&rule.pattern);
            if core.is_empty() || core == "**" {
                patterns.push("**".to_string());
            } else {
                patterns.push(format!("**/{core}"));
                patterns.push(format!("**/{core}/**"));
            }
        }
        ProtectedPaths { patterns: patterns.into(), set: Arc::new(OnceLock::new()) }
    }

    /// The compiled set. A pattern that cannot be compiled (it compiled as a deny rule, so this
    /// should not happen) makes every path protected: a diff filter that is unsure hides.
    fn set(&self) -> &GlobSet {
        self.set.get_or_init(|| {
            let mut builder = GlobSetBuilder::new();
            for pattern in self.patterns.iter() {
                match compile(pattern) {
                    Ok(glob) => {
                        builder.add(glob);
                    }
                    Err(_) => return everything(),
                }
            }
            builder.build().unwrap_or_else(|_| everything())
        })
    }

    /// Whether `path` (bytes as printed, already unquoted) or any part of it is protected.
    pub fn is_protected(&self, path: &[u8]) -> bool {
        let mut p = path;
        loop {
            if let Some(rest) = p.strip_prefix(b"./") {
                p = rest;
            } else if let Some(rest) = p.strip_prefix(b"/") {
                p = rest;
            } else {
                break;
            }
        }
        !p.is_empty() && self.set().is_match(Path::new(OsStr::from_bytes(p)))
    }
}

/// A set that matches every path.
fn everything() -> GlobSet {
    let mut builder = GlobSetBuilder::new();
    if let Ok(glob) = compile("**") {
        builder.add(glob);
    }
    builder.build().unwrap_or_else(|_| GlobSet::empty())
}

/// A pattern without its anchoring: no leading `./`, `/` or `**/`.
fn anchorless(pattern: &str) -> &str {
    let mut p = pattern;
    loop {
        let next = p.strip_prefix("./").or_else(|| p.strip_prefix('/')).or_else(|| p.strip_prefix("**/"));
        match next {
            Some(rest) => p = rest,
            None => return p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{GlobRule, Origin};

    fn paths(patterns: &[&str]) -> ProtectedPaths {
        ProtectedPaths::new(
            &GlobRules::new(
                patterns
                    .iter()
                    .map(|p| GlobRule { pattern: (*p).to_string(), origin: Origin::Flag("--deny") })
                    .collect(),
            )
            .unwrap(),
        )
    }

    #[test]
    fn rules_apply_at_any_depth_and_to_descendants() {
        let p = paths(&["**/.env", "**/.env.*", "secrets/**", "infra/prod", "**/id_rsa"]);
        for yes in [
            ".env",
            "a/.env",
            "b/backend/.env.local",
            "secrets/x",
            "a/secrets/x/y",
            "app/secrets/x",
            "infra/prod/deploy.sh",
            "w/infra/prod",
            "home/u/.ssh/id_rsa",
            "./.env",
        ] {
            assert!(p.is_protected(yes.as_bytes()), "{yes}");
        }
        for no in ["env.txt", "a/.envrc", "secretsfile", "a/secrets", "infra/production/x", "id_rsa.pub", ""]
        {
            assert!(!p.is_protected(no.as_bytes()), "{no}");
        }
    }

    #[test]
    fn non_utf8_paths_are_matched_as_bytes() {
        let p = paths(&["**/.env"]);
        assert!(p.is_protected(b"caf\xe9/.env"));
        assert!(!p.is_protected(b"caf\xe9/x"));
    }
}
