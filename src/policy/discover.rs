//! Config discovery: without `--config`, the first configuration file found in the usual places
//! is layered on the profile, the way `git`, `cargo` and `ruff` find theirs.
//!
//! [`find`] is called once by [`load`](super::load::load) when the request has no `--config`. The
//! places, first match wins (only one file is read, never a merge of several):
//!
//! 1. `./.hullward.yaml` — the project's own;
//! 2. `./.fuseraft/config/orchestration.yaml` — a fuseraft project (its `Security:` section; other
//!    top-level sections are ignored as with `--config`);
//! 3. `$XDG_CONFIG_HOME/hullward/config.yaml` (`~/.config/…` when unset) — the user's;
//! 4. `/etc/hullward/config.yaml` — the machine's (the package installs a commented template).
//!
//! A place counts when something exists there: a directory or an unreadable file named like a
//! config is an error of that file, not a reason to fall through to a weaker one.
//!
//! The file found joins the loaded policy files, which the child's view binds read-only. The two
//! project places are also write-protected at any depth of the roots, whether a file exists there
//! or not ([`PROJECT_PLACES`] as `**/NAME` globs): a sandboxed program must not plant or edit a
//! `.hullward.yaml` that would weaken every later call.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The machine-wide configuration.
pub const SYSTEM_CONFIG: &str = "/etc/hullward/config.yaml";

/// The project places, relative to the current directory (and, as `**/` write-protect globs, to
/// each root).
pub const PROJECT_PLACES: &[&str] = &[".hullward.yaml", ".fuseraft/config/orchestration.yaml"];

/// The places in order, for `cwd` and the environment `env`.
pub fn candidates(cwd: &Path, env: &BTreeMap<String, String>, system: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = PROJECT_PLACES.iter().map(|p| cwd.join(p)).collect();
    let nonempty = |k: &str| env.get(k).filter(|v| !v.is_empty()).map(PathBuf::from);
    let xdg = nonempty("XDG_CONFIG_HOME")
        .filter(|p| p.is_absolute())
        .or_else(|| nonempty("HOME").map(|h| h.join(".config")));
    out.extend(xdg.map(|x| x.join("hullward/config.yaml")));
    out.push(system.to_path_buf());
    out
}

/// The first place where something exists.
pub fn find(cwd: &Path, env: &BTreeMap<String, String>) -> Option<PathBuf> {
    find_in(cwd, env, Path::new(SYSTEM_CONFIG))
}

fn find_in(cwd: &Path, env: &BTreeMap<String, String>, system: &Path) -> Option<PathBuf> {
    candidates(cwd, env, system).into_iter().find(|p| std::fs::symlink_metadata(p).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn touch(p: &Path) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "Security: {}\n").unwrap();
    }

    #[test]
    fn the_first_existing_place_wins_in_order() {
        let t = tempfile::tempdir().unwrap();
        let (cwd, home, system) =
            (t.path().join("project"), t.path().join("home"), t.path().join("etc/config.yaml"));
        std::fs::create_dir_all(&cwd).unwrap();
        let env: BTreeMap<String, String> = [("HOME".to_string(), home.display().to_string())].into();
        assert_eq!(find_in(&cwd, &env, &system), None);

        touch(&system);
        assert_eq!(find_in(&cwd, &env, &system), Some(system.clone()));
        let user = home.join(".config/hullward/config.yaml");
        touch(&user);
        assert_eq!(find_in(&cwd, &env, &system), Some(user.clone()));
        let fuseraft = cwd.join(".fuseraft/config/orchestration.yaml");
        touch(&fuseraft);
        assert_eq!(find_in(&cwd, &env, &system), Some(fuseraft));
        let own = cwd.join(".hullward.yaml");
        touch(&own);
        assert_eq!(find_in(&cwd, &env, &system), Some(own));
    }

    #[test]
    fn xdg_config_home_replaces_the_home_default_when_absolute() {
        let t = tempfile::tempdir().unwrap();
        let env = |xdg: &str| -> BTreeMap<String, String> {
            [("HOME".to_string(), "/home/u".to_string()), ("XDG_CONFIG_HOME".to_string(), xdg.to_string())]
                .into()
        };
        let list = candidates(t.path(), &env("/cfg"), Path::new(SYSTEM_CONFIG));
        assert_eq!(list[2], PathBuf::from("/cfg/hullward/config.yaml"));
        let list = candidates(t.path(), &env("relative"), Path::new(SYSTEM_CONFIG));
        assert_eq!(list[2], PathBuf::from("/home/u/.config/hullward/config.yaml"));
        let list = candidates(t.path(), &BTreeMap::new(), Path::new(SYSTEM_CONFIG));
        assert_eq!(list.len(), 3);
        assert_eq!(list[2], PathBuf::from(SYSTEM_CONFIG));
    }

    #[test]
    fn a_directory_in_a_place_is_taken_not_skipped() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir(t.path().join(".hullward.yaml")).unwrap();
        let system = t.path().join("none.yaml");
        assert_eq!(find_in(t.path(), &BTreeMap::new(), &system), Some(t.path().join(".hullward.yaml")));
    }
}
