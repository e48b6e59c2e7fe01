//! Build script: stamps the git revision into `hullward --version`, and builds the PID 1 that a
//! call's PID namespace runs (`src/sandbox/pid1.c`, embedded by `sandbox::pid1`).
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
    build_pid1();
}

/// Compiles `src/sandbox/pid1.c` into `$OUT_DIR/pid1`: freestanding, static, stripped (a few KiB).
/// The C compiler is the one the target links with (`CC_<target>`, `TARGET_CC`, `CC`, else `cc`;
/// Rust's Linux targets need one anyway). An architecture the program is not written for gets an
/// empty file, and the call's init is then a fork of the child (see `sandbox::pid1`).
fn build_pid1() {
    const SOURCE: &str = "src/sandbox/pid1.c";
    println!("cargo:rerun-if-changed={SOURCE}");
    for var in ["CC", "TARGET_CC"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("pid1");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if !matches!(arch.as_str(), "x86_64" | "aarch64") {
        std::fs::write(&out, b"").expect("writing an empty pid1");
        return;
    }
    let target = std::env::var("TARGET").unwrap_or_default();
    let per_target = format!("CC_{}", target.replace('-', "_"));
    println!("cargo:rerun-if-env-changed={per_target}");
    let cc = [per_target.as_str(), "TARGET_CC", "CC"]
        .iter()
        .find_map(|v| std::env::var(v).ok().filter(|c| !c.trim().is_empty()))
        .unwrap_or_else(|| "cc".into());
    let mut words = cc.split_whitespace();
    let program = words.next().unwrap_or("cc");
    let status = Command::new(program)
        .args(words)
        .args([
            "-static",
            "-nostdlib",
            "-ffreestanding",
            "-fno-builtin",
            "-fno-stack-protector",
            "-fno-asynchronous-unwind-tables",
            "-fno-unwind-tables",
            "-fno-pie",
            "-no-pie",
            "-Os",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-Wl,--build-id=none",
            "-Wl,-z,noexecstack",
            "-s",
            "-o",
        ])
        .arg(&out)
        .arg(SOURCE)
        .status();
    match status {
        Ok(s) if s.success() => {}
        Ok(s) => panic!("building {SOURCE} with `{cc}` failed ({s})"),
        Err(e) => panic!("building {SOURCE}: cannot run `{cc}`: {e}"),
    }
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
