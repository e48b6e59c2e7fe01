//! Build script: stamps the git revision into `hullward --version`.
//!
//! The revision comes from, in order: `HULLWARD_GIT_REV` in the build environment (packagers who
//! build from an exported tree), `git rev-parse` when the source is a checkout, the `REVISION`
//! file that `git archive` fills in (`export-subst` in `.gitattributes`). A tree with none of
//! them — a hand-made tarball — builds as `unknown`; the build never fails for want of git.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-env-changed=HULLWARD_GIT_REV");
    println!("cargo:rerun-if-changed=REVISION");
    let rev = from_env().or_else(from_git).or_else(from_revision_file).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=HULLWARD_GIT_REV={rev}");
}

fn from_env() -> Option<String> {
    std::env::var("HULLWARD_GIT_REV").ok().map(|r| r.trim().to_string()).filter(|r| !r.is_empty())
}

/// The short revision of `HEAD`, and the files whose change moves it (so cargo re-runs us).
fn from_git() -> Option<String> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git").args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
        (out.status.success() && !text.is_empty()).then_some(text)
    };
    let rev = git(&["rev-parse", "--short=12", "HEAD"])?;
    let git_dir = PathBuf::from(git(&["rev-parse", "--absolute-git-dir"])?);
    let common = git(&["rev-parse", "--git-common-dir"]).map(PathBuf::from).map(|c| absolute(&c));
    rerun_if_changed(&git_dir.join("HEAD"));
    if let Some(common) = common {
        rerun_if_changed(&common.join("packed-refs"));
        if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
            rerun_if_changed(&common.join(branch));
        }
    }
    Some(rev)
}

fn absolute(p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map(|d| d.join(p)).unwrap_or_else(|_| p.to_path_buf())
    }
}

fn rerun_if_changed(p: &Path) {
    if p.exists() {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

/// `REVISION` holds `$Format:%h$` in the repository; `git archive` replaces it with the revision.
fn from_revision_file() -> Option<String> {
    let text = std::fs::read_to_string("REVISION").ok()?;
    let rev = text.trim();
    (!rev.is_empty() && !rev.contains("$Format")).then(|| rev.to_string())
}
