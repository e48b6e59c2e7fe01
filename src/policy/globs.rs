//! Glob rule lists: the `Read`, `Write`, `Deny`, `ChangeEnvelope` and built-in deny patterns.
//!
//! A [`GlobRules`] keeps every pattern next to where it came from (a config line, a flag, a
//! built-in rule) so that denials and `explain` can name the rule at fault, and compiles them into
//! one `globset::GlobSet` for matching. Syntax is the seed's: `*` one path component, `**` any
//! depth, `?` one character, case-sensitive. Patterns are matched against the path relative to the
//! sandbox root that contains it (or the absolute path without its leading `/` when no root does),
//! and a path is covered when it *or one of its ancestors* matches: denying a directory denies
//! what is inside it, as the kernel masks do.

use std::collections::HashMap;
use std::fmt;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

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
///
/// Most rules are literal paths or names (`**/.env`, `**/.aws/credentials`, `secrets/**`): those
/// are answered by hash lookups and byte comparisons ([`Literals`]) without ever building a glob
/// set. The others are checked when the list is made (so a bad pattern is an error at load time)
/// and their `GlobSet` is built on the first question that needs it, once for every clone.
#[derive(Debug, Clone, Default)]
pub struct GlobRules {
    rules: Vec<GlobRule>,
    /// Every rule, matched against the path itself.
    exact: Matcher,
    /// For each `P/**` rule, `P` itself: a directory matching it is covered as a whole.
    dirs: Matcher,
}

/// A pattern that does not compile.
#[derive(Debug, thiserror::Error)]
#[error("invalid glob '{pattern}' ({origin}): {reason}")]
pub struct GlobError {
    pub pattern: String,
    pub origin: Origin,
    pub reason: String,
}

impl GlobRules {
    /// Compiles `rules`; the first pattern that does not compile is the error.
    pub fn new(rules: Vec<GlobRule>) -> Result<Self, GlobError> {
        let mut exact = Matcher::default();
        let mut dirs = Matcher::default();
        for (i, rule) in rules.iter().enumerate() {
            let error = |e: globset::Error| GlobError {
                pattern: rule.pattern.clone(),
                origin: rule.origin.clone(),
                reason: e.kind().to_string(),
            };
            exact.add(&rule.pattern, i).map_err(error)?;
            if let Some(prefix) = rule.pattern.strip_suffix("/**").filter(|p| !p.is_empty()) {
                dirs.add(prefix, i).map_err(error)?;
            }
        }
        let set_error = |e: globset::Error| GlobError {
            pattern: String::new(),
            origin: Origin::Builtin("glob-set"),
            reason: e.to_string(),
        };
        exact.check_size().map_err(set_error)?;
        dirs.check_size().map_err(set_error)?;
        Ok(GlobRules { rules, exact, dirs })
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
        self.exact.first(rel).map(|i| &self.rules[i])
    }

    /// The first rule that covers the directory `rel` as a whole: the rule matches `rel` itself,
    /// or it is `P/**` and `P` matches `rel`.
    pub fn covers_dir(&self, rel: &Path) -> Option<&GlobRule> {
        self.match_exact(rel).or_else(|| self.dirs.first(rel).map(|i| &self.rules[i]))
    }

    /// The first rule matching `rel` or one of its ancestors (closest ancestor last).
    pub fn match_covering(&self, rel: &Path) -> Option<&GlobRule> {
        rel.ancestors().filter(|a| !a.as_os_str().is_empty()).find_map(|a| self.match_exact(a))
    }
}

/// Patterns by how they are matched; each entry keeps the index of its rule, and a question's
/// answer is the lowest index that matches.
#[derive(Debug, Clone, Default)]
struct Matcher {
    literals: Literals,
    /// The patterns that need a real glob matcher, with their rule indices.
    globs: Vec<(Glob, usize)>,
    set: Arc<OnceLock<GlobSet>>,
}

/// The literal shapes of a pattern (`L` is free of glob syntax; `N` also of `/`): `L` (the path
/// itself), `**/N` (the last component), `**/L` with a `/` (a tail of whole components), `**/N*`
/// and `**/*N` (the last component's start or end), and `L/**` (everything below `L`).
#[derive(Debug, Clone, Default)]
struct Literals {
    path: HashMap<Vec<u8>, usize>,
    name: HashMap<Vec<u8>, usize>,
    tail: Vec<(Vec<u8>, usize)>,
    name_prefix: Vec<(Vec<u8>, usize)>,
    name_suffix: Vec<(Vec<u8>, usize)>,
    below: Vec<(Vec<u8>, usize)>,
}

fn is_literal(s: &str) -> bool {
    !s.contains(['*', '?', '[', ']', '{', '}', '\\'])
}

impl Matcher {
    fn add(&mut self, pattern: &str, i: usize) -> Result<(), globset::Error> {
        let p = pattern.trim_start_matches("./");
        let lit = &mut self.literals;
        let keep = |map: &mut HashMap<Vec<u8>, usize>, key: &str| {
            map.entry(key.as_bytes().to_vec()).or_insert(i);
        };
        let name = p.strip_prefix("**/").filter(|n| !n.is_empty());
        match name {
            Some(n) if is_literal(n) && !n.contains('/') => keep(&mut lit.name, n),
            Some(n) if is_literal(n) => lit.tail.push((n.as_bytes().to_vec(), i)),
            Some(n) if n.ends_with('*') && is_literal(&n[..n.len() - 1]) && !n.contains('/') => {
                lit.name_prefix.push((n.as_bytes()[..n.len() - 1].to_vec(), i))
            }
            Some(n) if n.starts_with('*') && is_literal(&n[1..]) && !n.contains('/') => {
                lit.name_suffix.push((n.as_bytes()[1..].to_vec(), i))
            }
            _ if is_literal(p) => keep(&mut lit.path, p),
            _ => match p.strip_suffix("/**").filter(|d| !d.is_empty() && is_literal(d)) {
                Some(d) => lit.below.push((format!("{d}/").into_bytes(), i)),
                None => self.globs.push((compile(pattern)?, i)),
            },
        }
        Ok(())
    }

    /// The lowest rule index whose pattern matches `rel`.
    fn first(&self, rel: &Path) -> Option<usize> {
        let path = rel.as_os_str().as_bytes();
        let name = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
        let lit = &self.literals;
        let mut best = lit.path.get(path).copied();
        let mut better = |i: usize| best = Some(best.map_or(i, |b| b.min(i)));
        if let Some(&i) = lit.name.get(name) {
            better(i);
        }
        for (tail, i) in &lit.tail {
            let at = path.len().wrapping_sub(tail.len());
            if path.ends_with(tail) && (at == 0 || path[at - 1] == b'/') {
                better(*i);
            }
        }
        for (start, i) in &lit.name_prefix {
            if name.starts_with(start) {
                better(*i);
            }
        }
        for (end, i) in &lit.name_suffix {
            if name.ends_with(end) {
                better(*i);
            }
        }
        for (dir, i) in &lit.below {
            if path.starts_with(dir) {
                better(*i);
            }
        }
        if !self.globs.is_empty() && self.set().is_match(rel) {
            if let Some(&g) = self.set().matches(rel).first() {
                better(self.globs[g].1);
            }
        }
        best
    }

    /// The glob set of the non-literal patterns, built on first use (see [`EAGER_BYTES`]).
    fn set(&self) -> &GlobSet {
        self.set.get_or_init(|| self.build().expect("a small set of valid globs builds (EAGER_BYTES)"))
    }

    fn build(&self) -> Result<GlobSet, globset::Error> {
        let mut builder = GlobSetBuilder::new();
        for (glob, _) in &self.globs {
            builder.add(glob.clone());
        }
        builder.build()
    }

    /// Builds the set now when its patterns are long enough that the regex engine's size limit
    /// could refuse it: that is then an error of the list, as for a pattern that does not parse.
    fn check_size(&self) -> Result<(), globset::Error> {
        if self.globs.iter().map(|(g, _)| g.glob().len()).sum::<usize>() > EAGER_BYTES {
            let set = self.build()?;
            let _ = self.set.set(set);
        }
        Ok(())
    }
}

/// Non-literal patterns longer than this in all are compiled into their set when the list is made.
/// Below it every set of valid globs builds (the regex size limit is megabytes), so building
/// later, on first use, cannot fail.
const EAGER_BYTES: usize = 16 * 1024;

/// Compiles one pattern with the seed's semantics (`*` never crosses `/`).
pub fn compile(pattern: &str) -> Result<Glob, globset::Error> {
    GlobBuilder::new(pattern.trim_start_matches("./")).literal_separator(true).backslash_escape(true).build()
}

/// The path a glob is matched against: relative to the first root that contains `path`, or the
/// absolute path without its leading `/` when no root does.
pub fn match_key<'a>(path: &'a Path, roots: &[PathBuf]) -> &'a Path {
    within(path, roots).unwrap_or_else(|| outside_key(path))
}

/// The path a glob is matched against when no root contains `path`: without its leading `/`.
pub fn outside_key(path: &Path) -> &Path {
    path.strip_prefix("/").unwrap_or(path)
}

/// `path` relative to the first of `bases` that contains it (component by component, as
/// [`Path::strip_prefix`] decides), if one does.
///
/// A base's last name is in the bytes of every path below it, so a base whose name is not is
/// passed over without taking both paths apart: a plan matches ≈ 20 `System` files against
/// ≈ 25 bases, and `strip_prefix` for each pair was a sixth of a served call's plan.
pub fn within<'a>(path: &'a Path, bases: &[PathBuf]) -> Option<&'a Path> {
    let bytes = path.as_os_str().as_bytes();
    bases.iter().find_map(|base| {
        let named = base.file_name().map(OsStrExt::as_bytes);
        if named.is_some_and(|name| memchr::memmem::find(bytes, name).is_none()) {
            return None;
        }
        path.strip_prefix(base).ok()
    })
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
    fn within_decides_as_strip_prefix_does_for_every_spelling() {
        let bases: Vec<PathBuf> =
            ["/", "/srv/app/", "/srv//lib", "/srv/./x", "/a/..", "/srv/app.d", "/srv/ap"]
                .map(PathBuf::from)
                .into();
        let paths = [
            "/srv/app",
            "/srv/app/.env",
            "/srv/lib/x",
            "/srv/libx",
            "/srv/x/y",
            "/a/../b",
            "/srv/app.d/k",
            "/srv/apple",
            "/srv//app//z",
            "/etc/passwd",
            "relative/path",
        ];
        for path in paths.map(Path::new) {
            for (i, base) in bases.iter().enumerate() {
                let expected = path.strip_prefix(base).ok();
                assert_eq!(
                    within(path, std::slice::from_ref(base)),
                    expected,
                    "{} in {}",
                    path.display(),
                    base.display()
                );
                let first = bases[i..].iter().find_map(|b| path.strip_prefix(b).ok());
                assert_eq!(within(path, &bases[i..]), first, "{} in {:?}", path.display(), &bases[i..]);
            }
        }
    }

    /// The reference: one globset over every pattern, lowest matching index.
    fn reference(patterns: &[String], path: &str) -> Option<usize> {
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(compile(p).unwrap());
        }
        b.build().unwrap().matches(path).into_iter().min()
    }

    fn pattern() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let part = prop::sample::select(vec!["a", "b", ".env", "x.y", "ab"]);
        let lit = prop::collection::vec(part.clone(), 1..3).prop_map(|v| v.join("/"));
        prop_oneof![
            lit.clone(),
            lit.clone().prop_map(|l| format!("**/{l}")),
            part.clone().prop_map(|n| format!("**/{n}*")),
            part.clone().prop_map(|n| format!("**/*{n}")),
            lit.clone().prop_map(|l| format!("{l}/**")),
            lit.clone().prop_map(|l| format!("./{l}")),
            prop::sample::select(vec!["a/*", "*.y", "**/a/**", "a?", "**", "**/.env.*", "{a,b}/x.y"])
                .prop_map(str::to_string),
        ]
    }

    proptest::proptest! {
        #[test]
        fn the_literal_shapes_match_as_globset_does(
            patterns in proptest::collection::vec(pattern(), 1..6),
            path in proptest::collection::vec(
                proptest::sample::select(vec!["a", "b", ".env", ".env.x", "x.y", "ab", "yab"]), 1..4),
        ) {
            let path = path.join("/");
            let r = GlobRules::from_patterns(
                &patterns.iter().map(String::as_str).collect::<Vec<_>>(), Origin::Flag("--deny")).unwrap();
            let got = r.match_exact(Path::new(&path)).map(|rule| rule as *const GlobRule);
            let want = reference(&patterns, &path).map(|i| &r.rules()[i] as *const GlobRule);
            proptest::prop_assert_eq!(got, want, "{:?} against {}", patterns, path);
        }
    }

    #[test]
    fn literal_rules_build_no_glob_set() {
        let r = rules(&["**/.env", "**/.aws/credentials", "secrets/**", "notes.txt", "**/*.pem"]);
        assert!(r.match_exact(Path::new("a/.env")).is_some());
        assert!(r.match_exact(Path::new("u/.aws/credentials")).is_some());
        assert!(r.match_exact(Path::new("u/x.aws/credentials")).is_none());
        assert!(r.match_exact(Path::new("secrets/k")).is_some());
        assert!(r.match_exact(Path::new("k.pem")).is_some());
        assert!(r.exact.globs.is_empty() && r.exact.set.get().is_none());
        let mixed = rules(&["**/.env", "src/*.rs"]);
        assert!(mixed.exact.set.get().is_none(), "built only when asked");
        assert!(mixed.match_exact(Path::new("src/a.rs")).is_some());
        assert!(mixed.exact.set.get().is_some());
    }

    #[test]
    fn a_set_too_large_to_build_is_an_error_when_the_list_is_made() {
        let huge = format!("{}*", "a".repeat(EAGER_BYTES));
        let pats: Vec<String> = (0..40).map(|i| format!("{{{huge},b{i}}}/**/[a-z]*{i}?")).collect();
        let refs: Vec<&str> = pats.iter().map(String::as_str).collect();
        match GlobRules::from_patterns(&refs, Origin::Flag("--deny")) {
            Ok(r) => assert!(r.exact.set.get().is_some(), "large sets are built eagerly"),
            Err(e) => assert!(e.to_string().contains("glob-set"), "{e}"),
        }
    }

    #[test]
    fn bad_patterns_name_themselves() {
        let err = GlobRules::new(vec![GlobRule { pattern: "src/[".into(), origin: Origin::Flag("--deny") }])
            .unwrap_err();
        assert!(err.to_string().contains("'src/['"), "{err}");
    }
}
