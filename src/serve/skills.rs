//! `skill_run` (seed 000, "Skills execution trust model"): a script bundled in a skill found in
//! `Sandbox.SkillDirs`, run under the same enforcement as `run`.
//!
//! Order of [`find`]: the skill name is one plain path component → the first skill directory
//! that holds a folder of that name ([`dirs`]: `$HULLWARD_HOME/skills`, `~/.agents/skills`,
//! `ROOT/.agents/skills`, `ROOT/.fuseraft/skills` unless configured) → the folder and the script
//! are resolved (every symlink followed, `..` removed) and the script must lie inside the
//! resolved folder: a symlinked file or subdirectory planted in the skill folder that leads out
//! is refused (rule `skill-path`), as is a `..` → project-scoped (the folder lies inside a root:
//! it travels with the repository) or operator-installed.
//!
//! A project-scoped skill always needs a human's approval and is denied when none is attached
//! (rule `project-skill`); an operator's skill is a mutating call like `run`. An operator's skill
//! folder lies outside the roots, so the call sees it as one more read-only directory
//! ([`Skill::policy`]).

use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

use crate::guard::Decision;
use crate::policy::Policy;

/// Why a skill's script cannot be run (a request error, not a denial).
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    #[error("field 'skill' must name one skill folder, not a path: '{0}'")]
    BadName(String),
    #[error("no skill '{skill}' in the skill directories ({searched})")]
    NotFound { skill: String, searched: String },
    #[error("skill '{skill}' has no script '{script}'")]
    NoScript { skill: String, script: String },
}

/// A verified skill script.
#[derive(Debug, Clone)]
pub struct Skill {
    pub name: String,
    /// The skill's folder, resolved.
    pub folder: PathBuf,
    /// The script, resolved: inside `folder`.
    pub script: PathBuf,
    /// The folder lies inside a root.
    pub project: bool,
}

/// What became of a request: the skill, or the denial of its script path.
pub enum Found {
    Skill(Skill),
    Denied(Decision),
}

/// The skill directories, in search order.
pub fn dirs(policy: &Policy) -> Vec<PathBuf> {
    if let Some(dirs) = &policy.sandbox.skill_dirs {
        return dirs.clone();
    }
    let mut out = vec![policy.session.state_dir.join("skills")];
    if let Some(home) = policy.home() {
        out.push(home.join(".agents/skills"));
    }
    out.push(policy.root.join(".agents/skills"));
    out.push(policy.root.join(".fuseraft/skills"));
    out
}

/// Finds skill `name` and verifies that `script` resolves inside its folder.
pub fn find(policy: &Policy, name: &str, script: &str) -> Result<Found, SkillError> {
    let mut comps = Path::new(name).components();
    if !matches!((comps.next(), comps.next()), (Some(Component::Normal(_)), None)) {
        return Err(SkillError::BadName(name.to_string()));
    }
    let searched = dirs(policy);
    let folder = searched.iter().map(|d| d.join(name)).find(|f| f.is_dir()).ok_or_else(|| {
        let list: Vec<String> = searched.iter().map(|d| d.display().to_string()).collect();
        SkillError::NotFound { skill: name.to_string(), searched: list.join(", ") }
    })?;
    let no_script = || SkillError::NoScript { skill: name.to_string(), script: script.to_string() };
    let folder = folder.canonicalize().map_err(|_| no_script())?;
    let written = crate::guard::path::lexical(Path::new(script), &folder);
    let resolved = match folder.join(script).canonicalize() {
        Ok(p) => p,
        Err(_) if !written.starts_with(&folder) => {
            return Ok(Found::Denied(outside(name, script, &written, &folder)))
        }
        Err(_) => return Err(no_script()),
    };
    if !resolved.starts_with(&folder) {
        return Ok(Found::Denied(outside(name, script, &resolved, &folder)));
    }
    if !resolved.is_file() {
        return Err(no_script());
    }
    let project = policy.root_containing(&folder).is_some();
    Ok(Found::Skill(Skill { name: name.to_string(), folder, script: resolved, project }))
}

fn outside(name: &str, script: &str, resolved: &Path, folder: &Path) -> Decision {
    Decision::deny(
        "skill-path",
        format!(
            "[DENIED] Script '{script}' of skill '{name}' resolves to '{}', outside the skill's folder '{}' (a symlink or '..' leads out).",
            resolved.display(),
            folder.display()
        ),
    )
}

impl Skill {
    /// The call's argv: the script itself when it is executable, else its interpreter by
    /// extension (`/bin/sh` for anything unknown).
    pub fn argv(&self, args: &[String]) -> Vec<OsString> {
        let executable = self.script.metadata().is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
        let interpreter = match self.script.extension().and_then(|e| e.to_str()) {
            _ if executable => None,
            Some("py") => Some("python3"),
            Some("js" | "mjs") => Some("node"),
            Some("pl") => Some("perl"),
            Some("rb") => Some("ruby"),
            Some("bash") => Some("bash"),
            _ => Some("/bin/sh"),
        };
        interpreter
            .map(OsString::from)
            .into_iter()
            .chain(std::iter::once(self.script.clone().into_os_string()))
            .chain(args.iter().map(OsString::from))
            .collect()
    }

    /// The guard's word on the call: a project-scoped skill is asked (denied without a human);
    /// an operator's skill has none (approval as for `run`).
    pub fn guard(&self, human: bool) -> Option<Decision> {
        if !self.project {
            return None;
        }
        if !human {
            return Some(Decision::deny(
                "project-skill",
                format!(
                    "[DENIED] Skill '{}' is project-scoped ('{}' travels with the repository): it needs a human's approval, and no human is attached to this session.",
                    self.name,
                    self.folder.display()
                ),
            ));
        }
        Some(Decision::ask(
            "project-skill",
            format!(
                "skill_run — project skill '{}' ('{}', from the repository) runs '{}'",
                self.name,
                self.folder.display(),
                self.script.display()
            ),
        ))
    }

    /// The policy the call runs under: an operator's skill folder is one more read-only
    /// directory (deny rules apply inside it as inside the roots); `None` when the call can
    /// see the folder already.
    pub fn policy(&self, policy: &Policy) -> Option<Policy> {
        if self.project || policy.sandbox.read_only_dirs.iter().any(|d| self.folder.starts_with(d)) {
            return None;
        }
        let mut derived = policy.clone();
        derived.sandbox.read_only_dirs.push(self.folder.clone());
        Some(derived)
    }
}
