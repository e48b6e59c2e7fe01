//! Glob rule lists: the `Read`, `Write`, `Deny`, `ChangeEnvelope` and built-in deny patterns.
//!
//! A [`GlobRules`] keeps every pattern next to where it came from (a config line, a flag, a
//! built-in rule) so that denials and `explain` can name the rule at fault, and compiles them into
//! one `globset::GlobSet` for matching. Syntax is the seed's: `*` one path component, `**` any
//! depth, `?` one character, case-sensitive. Patterns are matched against the path relative to the
//! sandbox root that contains it (or the absolute path without its leading `/` when no root does),
//! and a path is covered when it *or one of its ancestors* matches: denying a directory denies
//! what is inside it, as the kernel masks do.

use std::fmt;
use std::path::{Path, PathBuf};

use globset::{Glob, GlobBuilder, GlobSet, GlobSetBuilder};

/// Where a rule came from, for messages and `explain`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A default that is always on; the string is the rule's name (`env-file`, `credential-file`, …).
    Builtin(&'static str),
    /// A key in a YAML file (a config or a profile).
    File { path: PathBuf, line: Option<usize> },
    /// A built-in profile embedded in the binary.
    Profile(String),
    /// A command-line flag.
    Flag(&'static str),
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::Builtin(name) => write!(f, "built-in {name} rule"),
            Origin::File { path, line: Some(l) } => write!(f, "{}:{l}", path.display()),
            Origin::File { path, line: None } => write!(f, "{}", path.display()),
            Origin::Profile(name) => write!(f, "profile {name}"),
            Origin::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

/// One glob pattern and its origin.
#[derive(Debug, Clone)]
pub struct GlobRule {
    pub pattern: String,
    pub origin: Origin,
}

/// A compiled list of glob rules.
#[derive(Debug, Clone)]
pub struct GlobRules {
    rules: Vec<GlobRule>,
    set: GlobSet,
    /// For each `P/**` rule, `P` itself: a directory matching it is covered as a whole.
    dirs: GlobSet,
    dir_rules: Vec<usize>,
}

/// A pattern that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("invalid glob '{pattern}' ({origin}): {reason}")]
pub struct GlobError {
    pub pattern: String,
    pub origin: Origin,
    pub reason: String,
}

impl Default for GlobRules {
    fn default() -> Self {
        GlobRules { rules: Vec::new(), set: GlobSet::empty(), dirs: GlobSet::empty(), dir_rules: Vec::new() }
    }
}

impl GlobRules {
    /// Compiles `rules`; the first pattern that does not compile is the error.
    pub fn new(rules: Vec<GlobRule>) -> Result<Self, GlobError> {
        let mut builder = GlobSetBuilder::new();
        let mut dirs = GlobSetBuilder::new();
        let mut dir_rules = Vec::new();
        let error = |rule: &GlobRule, e: globset::Error| GlobError {
            pattern: rule.pattern.clone(),
            origin: rule.origin.clone(),
            reason: e.kind().to_string(),
        };
        for (i, rule) in rules.iter().enumerate() {
            builder.add(compile(&rule.pattern).map_err(|e| error(rule, e))?);
            if let Some(prefix) = rule.pattern.strip_suffix("/**").filter(|p| !p.is_empty()) {
                dirs.add(compile(prefix).map_err(|e| error(rule, e))?);
                dir_rules.push(i);
            }
        }
        let build = |b: GlobSetBuilder| {
            b.build().map_err(|e| GlobError {
                pattern: String::new(),
                origin: Origin::Builtin("glob-set"),
                reason: e.to_string(),
            })
        };
        Ok(GlobRules { rules, set: build(builder)?, dirs: build(dirs)?, dir_rules })
    }

    /// Rules from bare patterns, all with the same origin (tests, built-in lists).
    pub fn from_patterns(patterns: &[&str], origin: Origin) -> Result<Self, GlobError> {
        GlobRules::new(
            patterns.iter().map(|p| GlobRule { pattern: p.to_string(), origin: origin.clone() }).collect(),
        )
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    pub fn rules(&self) -> &[GlobRule] {
        &self.rules
    }

    /// The first rule matching `rel` itself (no ancestor walk).
    pub fn match_exact(&self, rel: &Path) -> Option<&GlobRule> {
        if !self.set.is_match(rel) {
            return None;
        }
        self.set.matches(rel).into_iter().min().map(|i| &self.rules[i])
    }

    /// The first rule that covers the directory `rel` as a whole: the rule matches `rel` itself,
    /// or it is `P/**` and `P` matches `rel`.
    pub fn covers_dir(&self, rel: &Path) -> Option<&GlobRule> {
        self.match_exact(rel).or_else(|| {
            if !self.dirs.is_match(rel) {
                return None;
            }
            self.dirs.matches(rel).into_iter().min().map(|i| &self.rules[self.dir_rules[i]])
        })
    }

    /// The first rule matching `rel` or one of its ancestors (closest ancestor last).
    pub fn match_covering(&self, rel: &Path) -> Option<&GlobRule> {
        rel.ancestors().filter(|a| !a.as_os_str().is_empty()).find_map(|a| self.match_exact(a))
    }
}

/// Compiles one pattern with the seed's semantics (`*` never crosses `/`).
pub fn compile(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern.trim_start_matches("./")).literal_separator(true).backslash_escape(true).build()
}

/// The path a glob is matched against: relative to the first root that contains `path`, or the
/// absolute path without its leading `/` when no root does.
pub fn match_key<'a>(path: &'a Path, roots: &[PathBuf]) -> &'a Path {
    roots
        .iter()
        .find_map(|r| path.strip_prefix(r).ok())
        .unwrap_or_else(|| path.strip_prefix("/").unwrap_or(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(pats: &[&str]) -> GlobRules {
        GlobRules::from_patterns(pats, Origin::Flag("--deny")).unwrap()
    }

    #[test]
    fn star_stays_in_one_component_and_doublestar_spans() {
        let r = rules(&["src/*.rs", "docs/**"]);
        assert!(r.match_exact(Path::new("src/main.rs")).is_some());
        assert!(r.match_exact(Path::new("src/a/main.rs")).is_none());
        assert!(r.match_exact(Path::new("docs/a/b/c.md")).is_some());
    }

    #[test]
    fn leading_doublestar_matches_at_any_depth_including_the_top() {
        let r = rules(&["**/.env", "**/.env.*"]);
        for p in [".env", "backend/.env", "apps/web/.env.local", "home/u/.env"] {
            assert!(r.match_exact(Path::new(p)).is_some(), "{p}");
        }
        for p in [".envrc", "process.env", "a/env", "a/.environment"] {
            assert!(r.match_exact(Path::new(p)).is_none(), "{p}");
        }
    }

    #[test]
    fn a_denied_directory_covers_its_contents() {
        let r = rules(&["secrets", "infra/prod/**"]);
        assert!(r.match_covering(Path::new("secrets/a/b.txt")).is_some());
        assert!(r.match_covering(Path::new("infra/prod/deploy.sh")).is_some());
        assert!(r.match_covering(Path::new("infra/staging/deploy.sh")).is_none());
        assert!(r.match_covering(Path::new("secretsfile")).is_none());
    }

    #[test]
    fn a_doublestar_suffix_covers_the_directory_itself() {
        let r = rules(&["infra/prod/**", "**/.aws", "notes.txt"]);
        assert!(r.covers_dir(Path::new("infra/prod")).is_some());
        assert!(r.covers_dir(Path::new("home/u/.aws")).is_some());
        assert!(r.covers_dir(Path::new("infra")).is_none());
        assert!(r.match_exact(Path::new("infra/prod")).is_none());
    }

    #[test]
    fn match_key_is_relative_to_the_containing_root() {
        let roots = vec![PathBuf::from("/srv/app"), PathBuf::from("/srv/lib")];
        assert_eq!(match_key(Path::new("/srv/lib/x/.env"), &roots), Path::new("x/.env"));
        assert_eq!(match_key(Path::new("/etc/passwd"), &roots), Path::new("etc/passwd"));
    }

    #[test]
    fn bad_patterns_name_themselves() {
        let err = GlobRules::new(vec![GlobRule { pattern: "src/[".into(), origin: Origin::Flag("--deny") }])
            .unwrap_err();
        assert!(err.to_string().contains("'src/['"), "{err}");
    }
}
