//! The path guard (`check path OP PATH`): decides a file operation the way the seed's file tools
//! do, on the canonical path.
//!
//! Order (the first rule that fires names the decision):
//! 1. resolve to the canonical absolute form ([`resolve`]: symlinks followed — also a dangling
//!    final symlink, since writing through it creates its target — and `..` removed);
//! 2. deny rules, for every operation including metadata ones: the `.env` default, the credential
//!    files, `FileSystemPermissions.Deny` — checked on the path as written *and* as resolved, so
//!    neither a symlink to a secret nor a secret-named symlink gets through; a deny is never a prompt;
//! 3. repository metadata write protection (`.git/hooks`, `.git/config`, Decision 8);
//! 4. containment: inside a root (component-wise, Decision 6), a `Writable` directory (`/tmp` and
//!    `/run` excepted: a sandboxed program gets private ones, so the host's are outside, as
//!    `run` shows them), or — for
//!    read, list and exec only — a `System` or read-only (`--ro`) directory; anything else is
//!    `ask` with HITL on and `deny` without (writes into `System` and read-only directories are
//!    always `deny`, also where a read-only directory lies inside a root);
//! 5. inside a root: read-only roots, then `Write` and `ChangeEnvelope` for writes and deletes,
//!    `Read` for reads and exec (listing is exempt from `Read`).

use std::io;
use std::path::{Component, Path, PathBuf};
use std::str::FromStr;

use super::Decision;
use crate::policy::globs::{match_key, outside_key, within};
use crate::policy::{GlobRule, Origin, Policy};
use crate::sandbox::hardlinks;
use crate::sandbox::masks::{package_managed, ReadOnlyTrees};
use crate::sandbox::view::PRIVATE_TMPFS;

/// A file operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
    List,
    Delete,
    Exec,
}

impl FromStr for Op {
    type Err = String;
    fn from_str(s: &str) -> Result<Op, String> {
        match s {
            "read" => Ok(Op::Read),
            "write" => Ok(Op::Write),
            "list" => Ok(Op::List),
            "delete" => Ok(Op::Delete),
            "exec" => Ok(Op::Exec),
            _ => Err(format!("unknown operation '{s}' (expected read, write, list, delete or exec)")),
        }
    }
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Read => "read",
            Op::Write => "write",
            Op::List => "list",
            Op::Delete => "delete",
            Op::Exec => "exec",
        }
    }

    fn mutates(self) -> bool {
        matches!(self, Op::Write | Op::Delete)
    }
}

/// Symlinks followed before giving up (the kernel's own limit).
const MAX_SYMLINKS: usize = 40;

/// The canonical absolute form of `path` (relative paths against `cwd`): every symlink followed,
/// `.` and `..` removed. Components that do not exist yet are appended as written (a file about
/// to be created). Errors: a symlink loop, or an existing component that cannot be inspected.
pub fn resolve(path: &Path, cwd: &Path) -> io::Result<PathBuf> {
    let mut budget = MAX_SYMLINKS;
    let start = if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) };
    resolve_inner(&start, &mut budget)
}

fn resolve_inner(path: &Path, budget: &mut usize) -> io::Result<PathBuf> {
    let mut out = PathBuf::from("/");
    let mut missing = false;
    let comps: Vec<Component<'_>> = path.components().collect();
    for comp in comps {
        match comp {
            Component::RootDir | Component::Prefix(_) | Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                out.push(name);
                if missing {
                    continue;
                }
                match std::fs::symlink_metadata(&out) {
                    Ok(meta) if meta.file_type().is_symlink() => {
                        if *budget == 0 {
                            return Err(io::Error::other(format!(
                                "too many levels of symbolic links at '{}'",
                                out.display()
                            )));
                        }
                        *budget -= 1;
                        let target = std::fs::read_link(&out)?;
                        out.pop();
                        let joined = if target.is_absolute() { target } else { out.join(target) };
                        out = resolve_inner(&joined, budget)?;
                    }
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotFound => missing = true,
                    Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => missing = true,
                    Err(e) => return Err(e),
                }
            }
        }
    }
    Ok(out)
}

/// `path` with `.` and `..` removed lexically, absolute against `cwd` (no symlinks followed).
pub fn lexical(path: &Path, cwd: &Path) -> PathBuf {
    let start = if path.is_absolute() { path.to_path_buf() } else { cwd.join(path) };
    let mut out = PathBuf::from("/");
    for comp in start.components() {
        match comp {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// The rule id of a deny glob, from its origin.
fn deny_rule_id(rule: &GlobRule) -> &'static str {
    match rule.origin {
        Origin::Builtin("env-file") => "env-file",
        Origin::Builtin("credential-file") => "credential-file",
        _ => "fs-deny",
    }
}

/// How a path is shown in messages: relative to the root containing it, else absolute.
fn shown(policy: &Policy, path: &Path) -> String {
    let roots = policy.roots();
    match roots.iter().find_map(|r| path.strip_prefix(r).ok()) {
        Some(rel) if !rel.as_os_str().is_empty() => rel.display().to_string(),
        _ => path.display().to_string(),
    }
}

/// The deny rule covering `path`, if any. Patterns are relative to the root containing the path,
/// else to the read-only directory or walked `System` directory containing it (the masks are
/// laid out the same way), else to `/` — but not inside a package-managed tree outside those
/// (`/usr` but `/usr/local`, `/nix`, `/snap`), where `run` applies no deny glob either.
pub fn deny_match<'p>(policy: &'p Policy, path: &Path) -> Option<&'p GlobRule> {
    deny_match_in(policy, &deny_bases(policy), path)
}

/// The directories [`deny_match`] takes patterns relative to, in order: the roots, then the
/// read-only and walked `System` directories (one `stat` each; a caller with many paths to
/// judge computes them once).
pub fn deny_bases(policy: &Policy) -> Vec<PathBuf> {
    deny_bases_in(policy, &ReadOnlyTrees::of(policy))
}

/// [`deny_bases`] with the read-only trees already told apart.
pub fn deny_bases_in(policy: &Policy, read_only: &ReadOnlyTrees) -> Vec<PathBuf> {
    [policy.roots(), read_only.dirs.clone()].concat()
}

/// [`deny_match`] with the bases computed by [`deny_bases`].
pub fn deny_match_in<'p>(policy: &'p Policy, bases: &[PathBuf], path: &Path) -> Option<&'p GlobRule> {
    let base = within(path, bases);
    if package_managed(path) && base.is_none() {
        return None;
    }
    policy.deny.match_covering(base.unwrap_or_else(|| outside_key(path)))
}

/// A write or delete inside a read-only directory (`--ro`, `Sandbox.ReadOnlyDirs`), which wins
/// over a root or a writable directory around it.
fn read_only_dir_write(policy: &Policy, op: Op, resolved: &Path) -> Option<Decision> {
    let dir = policy.sandbox.read_only_dirs.iter().find(|d| resolved.starts_with(d))?;
    op.mutates().then(|| {
        Decision::deny(
            "read-only-dir",
            format!(
                "[DENIED] '{}': Path is inside the read-only directory '{}' (read and execute only).",
                resolved.display(),
                dir.display()
            ),
        )
    })
}

/// Decides `op` on `path`; relative paths are taken against `cwd`.
pub fn check(policy: &Policy, op: Op, path: &Path, cwd: &Path) -> Decision {
    let written = lexical(path, cwd);
    let resolved = match resolve(path, cwd) {
        Ok(p) => p,
        Err(e) => {
            return Decision::deny(
                "path-resolve",
                format!("[DENIED] Path '{}' cannot be resolved: {e}.", written.display()),
            )
        }
    };

    let bases = deny_bases(policy);
    for candidate in [&written, &resolved] {
        if let Some(rule) = deny_match_in(policy, &bases, candidate) {
            return Decision::deny(
                deny_rule_id(rule),
                format!(
                    "[DENIED] '{}': Path is blocked by a configured FileSystem deny rule.",
                    shown(policy, candidate)
                ),
            );
        }
    }

    if let Some(of) = hardlinks::denied_name(policy, &resolved) {
        return Decision::deny(
            deny_match_in(policy, &bases, &of).map_or("fs-deny", deny_rule_id),
            format!(
                "[DENIED] '{}': Path is blocked by a configured FileSystem deny rule (it is another name of '{}').",
                shown(policy, &resolved),
                shown(policy, &of)
            ),
        );
    }

    if op.mutates() {
        let roots = policy.roots();
        for candidate in [&written, &resolved] {
            if let Some(rule) = policy.write_protect.match_covering(match_key(candidate, &roots)) {
                if rule.origin == Origin::Builtin("git-metadata") {
                    return Decision::deny(
                        "git-metadata",
                        format!(
                            "[DENIED] '{}': Path is write-protected repository metadata (a planted hook or config runs later, outside any sandbox).",
                            shown(policy, candidate)
                        ),
                    );
                }
                return Decision::deny(
                    "write-protect",
                    format!(
                        "[DENIED] '{}': Path is write-protected ('{}', {}): what is planted there runs later, outside any sandbox.",
                        shown(policy, candidate),
                        rule.pattern,
                        rule.origin
                    ),
                );
            }
        }
    }

    if let Some(denied) = read_only_dir_write(policy, op, &resolved) {
        return denied;
    }
    let Some(root) = policy.root_containing(&resolved) else {
        return outside(policy, op, &resolved);
    };

    let rel = resolved.strip_prefix(root).unwrap_or(Path::new(""));
    if op.mutates() {
        if policy.sandbox.read_only {
            return Decision::deny(
                "read-only-root",
                format!(
                    "[DENIED] '{}': the sandbox root is read-only in this profile.",
                    shown(policy, &resolved)
                ),
            );
        }
        if !policy.write.is_empty() && policy.write.match_covering(rel).is_none() {
            return Decision::deny(
                "fs-write",
                format!(
                    "[DENIED] '{}': Path is outside the configured FileSystem write permissions.",
                    shown(policy, &resolved)
                ),
            );
        }
        if let Some(env) = &policy.change_envelope {
            if env.match_covering(rel).is_none() {
                return Decision::deny(
                    "change-envelope",
                    format!(
                        "[DENIED] Path '{}' is outside the configured change envelope.\nOnly files matching the declared envelope globs may be written in this session.\nAsk the Planner to expand the scope if this file needs to change.",
                        shown(policy, &resolved)
                    ),
                );
            }
        }
    }
    if matches!(op, Op::Read | Op::Exec)
        && !policy.read.is_empty()
        && policy.read.match_covering(rel).is_none()
    {
        return Decision::deny(
            "fs-read",
            format!(
                "[DENIED] '{}': Path is outside the configured FileSystem read permissions.",
                shown(policy, &resolved)
            ),
        );
    }
    Decision::allow("sandbox")
}

/// The directories every sandboxed call gets a private tmpfs on (`/tmp`, `/run`): listed in
/// `Sandbox.Writable`, they grant the program its own empty directory, never the host's.
fn private_dir(path: &Path) -> Option<&'static str> {
    PRIVATE_TMPFS.iter().map(|(d, _)| *d).find(|d| path.starts_with(d))
}

/// Whether `resolved` lies in a host directory the program may write: a `Writable` entry other
/// than a private one (a `Writable` directory below `/tmp` is the host's, bound into the view).
fn host_writable(policy: &Policy, resolved: &Path) -> bool {
    policy
        .sandbox
        .writable
        .iter()
        .any(|w| resolved.starts_with(w) && !PRIVATE_TMPFS.iter().any(|(d, _)| w == Path::new(d)))
}

fn outside(policy: &Policy, op: Op, resolved: &Path) -> Decision {
    if host_writable(policy, resolved) {
        return Decision::allow("writable");
    }
    let in_system = policy.sandbox.system.iter().any(|s| resolved.starts_with(s));
    if in_system && !op.mutates() {
        return Decision::allow("system");
    }
    if policy.sandbox.read_only_dirs.iter().any(|d| resolved.starts_with(d)) {
        return Decision::allow("read-only-dir");
    }
    if in_system {
        return Decision { rule: "system-read-only".into(), ..outside_denial(policy, resolved) };
    }
    // A human may grant the containing directory of a file operation; listing (and exec) outside
    // the roots stays deny-only, as the seed keeps it (INTERFACE.md, "Session grants").
    if policy.session.hitl && matches!(op, Op::Read | Op::Write | Op::Delete) {
        let grant = resolved.parent().unwrap_or(resolved);
        return Decision::ask(
            "outside-sandbox",
            format!(
                "{} — {} is outside the current sandbox — grants '{}' for the rest of this session",
                op.as_str(),
                resolved.display(),
                grant.display()
            ),
        );
    }
    outside_denial(policy, resolved)
}

/// The denial of a path outside every root where no human may grant it (rule `outside-sandbox`).
pub fn outside_denial(policy: &Policy, resolved: &Path) -> Decision {
    let mut text = format!(
        "[DENIED] Path '{}' is outside the configured sandbox '{}'.\nAll file operations must stay within the sandbox.",
        resolved.display(),
        policy.root.display()
    );
    if let Some(dir) = private_dir(resolved) {
        text.push_str(&format!(
            "\nA sandboxed program's {dir} is a private directory of its own call: the host's {dir} is not shown to it."
        ));
    }
    Decision::deny("outside-sandbox", text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::guard::Verdict;
    use crate::policy::load::{load, LoadRequest};
    use std::os::unix::fs::symlink;

    struct Fixture {
        _dir: tempfile::TempDir,
        root: PathBuf,
        outside: PathBuf,
    }

    /// A scratch tree in the checkout's `target/`: outside every host-writable directory
    /// wherever the checkout lives (see `policy_with`).
    fn fixture() -> Fixture {
        let scratch = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/test-scratch");
        std::fs::create_dir_all(&scratch).unwrap();
        let dir = tempfile::tempdir_in(scratch).unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("myapp");
        let outside = base.join("elsewhere");
        for d in
            ["src/auth", "src/billing", "docs", "tests", "secrets", "infra/prod", "backend", ".git/hooks"]
        {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::create_dir_all(&outside).unwrap();
        for f in ["src/auth/token.go", "src/billing/a.go", "docs/x.md", "backend/.env", ".env", "secrets/k"] {
            std::fs::write(root.join(f), "x").unwrap();
        }
        std::fs::write(outside.join("file.txt"), "x").unwrap();
        Fixture { _dir: dir, root, outside }
    }

    /// The policy of `yaml` over the fixture. The default profile lists `/tmp` as writable, which
    /// grants a private `/tmp`, never the host's: the fixture is outside wherever the checkout is.
    fn policy_with(fx: &Fixture, yaml: &str, hitl: bool) -> Policy {
        let cfg = fx.root.join("hullward.yaml");
        std::fs::write(&cfg, yaml).unwrap();
        let mut req = LoadRequest { cwd: fx.root.clone(), config: Some(cfg), ..Default::default() };
        req.flags.hitl = Some(hitl);
        load(&req).unwrap()
    }

    const SEED_PERMS: &str = "Security:\n  FileSystemSandboxPath: .\n  FileSystemPermissions:\n    Read: [src/**, docs/**]\n    Write: [tests/**, docs/**]\n    Deny: [secrets/**, infra/prod/**, .env]\n";

    fn decide(p: &Policy, fx: &Fixture, op: Op, path: &str) -> Decision {
        check(p, op, Path::new(path), &fx.root)
    }

    #[test]
    fn seed_permission_table_both_directions() {
        let fx = fixture();
        let p = policy_with(&fx, SEED_PERMS, false);
        let cases: &[(Op, &str, Verdict, &str)] = &[
            (Op::Read, "infra/prod/deploy.sh", Verdict::Deny, "fs-deny"),
            (Op::List, "secrets/k", Verdict::Deny, "fs-deny"),
            (Op::Read, "src/auth/token.go", Verdict::Allow, "sandbox"),
            (Op::Read, "tests/t.go", Verdict::Deny, "fs-read"),
            (Op::List, "tests", Verdict::Allow, "sandbox"),
            (Op::Write, "src/auth/token.go", Verdict::Deny, "fs-write"),
            (Op::Write, "tests/new_test.go", Verdict::Allow, "sandbox"),
            (Op::Write, "docs/x.md", Verdict::Allow, "sandbox"),
            (Op::Delete, "src/billing/a.go", Verdict::Deny, "fs-write"),
            (Op::Read, ".env", Verdict::Deny, "env-file"),
            (Op::Read, "backend/.env", Verdict::Deny, "env-file"),
        ];
        for (op, path, verdict, rule) in cases {
            let d = decide(&p, &fx, *op, path);
            assert_eq!((d.verdict, d.rule.as_str()), (*verdict, *rule), "{op:?} {path}: {}", d.message);
        }
        let d = decide(&p, &fx, Op::Read, "infra/prod/deploy.sh");
        assert_eq!(
            d.message,
            "[DENIED] 'infra/prod/deploy.sh': Path is blocked by a configured FileSystem deny rule."
        );
        let d = decide(&p, &fx, Op::Write, "src/auth/token.go");
        assert_eq!(
            d.message,
            "[DENIED] 'src/auth/token.go': Path is outside the configured FileSystem write permissions."
        );
    }

    #[test]
    fn change_envelope_and_write_list_both_apply() {
        let fx = fixture();
        let p = policy_with(
            &fx,
            "Security:\n  ChangeEnvelope: [src/billing/**, tests/billing/**]\n  FileSystemPermissions:\n    Write: [src/**]\n",
            false,
        );
        assert!(decide(&p, &fx, Op::Write, "src/billing/a.go").is_allowed());
        let d = decide(&p, &fx, Op::Write, "src/auth/token.go");
        assert_eq!(d.rule, "change-envelope");
        assert!(d
            .message
            .starts_with("[DENIED] Path 'src/auth/token.go' is outside the configured change envelope."));
        assert_eq!(decide(&p, &fx, Op::Write, "tests/billing/x.go").rule, "fs-write");
        assert!(decide(&p, &fx, Op::Read, "src/auth/token.go").is_allowed());
    }

    #[test]
    fn outside_is_ask_with_hitl_and_deny_without_but_deny_rules_never_ask() {
        let fx = fixture();
        let outside_file = fx.outside.join("file.txt");
        let p = policy_with(&fx, "", true);
        let d = check(&p, Op::Read, &outside_file, &fx.root);
        assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Ask, "outside-sandbox"));
        assert!(d.message.contains(&format!("grants '{}'", fx.outside.display())), "{}", d.message);
        std::fs::write(fx.outside.join(".env"), "K=v").unwrap();
        let d = check(&p, Op::Read, &fx.outside.join(".env"), &fx.root);
        assert_eq!(d.verdict, Verdict::Deny);
        for op in [Op::List, Op::Exec] {
            let d = check(&p, op, &fx.outside, &fx.root);
            assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Deny, "outside-sandbox"), "{op:?}");
        }
        let p = policy_with(&fx, "", false);
        let d = check(&p, Op::Read, Path::new("/etc/passwd"), &fx.root);
        assert_eq!(d.verdict, Verdict::Deny);
        assert_eq!(
            d.message,
            format!(
                "[DENIED] Path '/etc/passwd' is outside the configured sandbox '{}'.\nAll file operations must stay within the sandbox.",
                fx.root.display()
            )
        );
    }

    #[test]
    fn system_dirs_are_read_exec_only_and_writable_dirs_are_writable() {
        let fx = fixture();
        let p = policy_with(&fx, "", true);
        assert!(check(&p, Op::Exec, Path::new("/usr/bin/env"), &fx.root).is_allowed());
        let d = check(&p, Op::Write, Path::new("/usr/bin/evil"), &fx.root);
        assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Deny, "system-read-only"));
        let scratch = fx.outside.join("scratch.txt");
        assert_eq!(check(&p, Op::Write, &scratch, &fx.root).verdict, Verdict::Ask);
        let p = policy_with(&fx, &format!("Sandbox:\n  Writable: [{}]\n", fx.outside.display()), true);
        let d = check(&p, Op::Write, &scratch, &fx.root);
        assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Allow, "writable"));
    }

    #[test]
    fn the_hosts_private_directories_are_outside_and_a_writable_one_below_them_is_not() {
        let fx = fixture();
        let p = policy_with(&fx, "", false);
        assert!(p.sandbox.writable.contains(&PathBuf::from("/tmp")), "{:?}", p.sandbox.writable);
        for path in ["/tmp/hw-host-file", "/run/hw-host-file", "/dev/shm/hw-host-file", "/tmp"] {
            for op in [Op::Read, Op::Write, Op::Delete, Op::List] {
                let d = check(&p, op, Path::new(path), &fx.root);
                assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Deny, "outside-sandbox"), "{op:?} {path}");
            }
        }
        let d = check(&p, Op::Write, Path::new("/tmp/x"), &fx.root);
        assert!(d.message.contains("private directory of its own call"), "{}", d.message);
        // A directory of the host's /tmp named in Writable is bound into the view: it is the host's.
        let dir = tempfile::tempdir_in("/tmp").unwrap();
        let cache = dir.path().canonicalize().unwrap();
        let p = policy_with(&fx, &format!("Sandbox:\n  Writable: [/tmp, {}]\n", cache.display()), false);
        let d = check(&p, Op::Write, &cache.join("f"), &fx.root);
        assert_eq!((d.verdict, d.rule.as_str()), (Verdict::Allow, "writable"));
    }

    #[test]
    fn symlinks_in_and_out() {
        let fx = fixture();
        let p = policy_with(&fx, "", false);
        symlink(fx.outside.join("file.txt"), fx.root.join("docs/out-link")).unwrap();
        symlink(fx.root.join("docs/x.md"), fx.outside.join("in-link")).unwrap();
        symlink(fx.root.join(".env"), fx.root.join("docs/harmless")).unwrap();
        symlink(fx.root.join("docs/x.md"), fx.root.join("docs/.env.local")).unwrap();
        symlink(fx.outside.join("new.txt"), fx.root.join("docs/dangling")).unwrap();
        assert_eq!(decide(&p, &fx, Op::Read, "docs/out-link").rule, "outside-sandbox");
        assert!(check(&p, Op::Read, &fx.outside.join("in-link"), &fx.root).is_allowed());
        assert_eq!(decide(&p, &fx, Op::Read, "docs/harmless").rule, "env-file");
        assert_eq!(decide(&p, &fx, Op::Read, "docs/.env.local").rule, "env-file");
        assert_eq!(decide(&p, &fx, Op::Write, "docs/dangling").rule, "outside-sandbox");
    }

    #[test]
    fn dotdot_inside_is_fine_and_prefix_is_by_component() {
        let fx = fixture();
        let p = policy_with(&fx, "", false);
        assert!(decide(&p, &fx, Op::Read, "src/../docs/x.md").is_allowed());
        assert_eq!(decide(&p, &fx, Op::Read, "../elsewhere/file.txt").rule, "outside-sandbox");
        let sibling = fx.root.parent().unwrap().join("myapp-old");
        std::fs::create_dir_all(&sibling).unwrap();
        assert_eq!(check(&p, Op::Read, &sibling, &fx.root).rule, "outside-sandbox");
    }

    #[test]
    fn git_metadata_is_write_protected_but_readable() {
        let fx = fixture();
        let p = policy_with(&fx, "", false);
        assert_eq!(decide(&p, &fx, Op::Write, ".git/hooks/pre-commit").rule, "git-metadata");
        assert_eq!(decide(&p, &fx, Op::Write, ".git/config").rule, "git-metadata");
        assert!(decide(&p, &fx, Op::Read, ".git/config").is_allowed());
        for redirect in
            [".git/info/attributes", ".git/commondir", ".git/worktrees/w/gitdir", ".git/modules/m/config"]
        {
            assert_eq!(decide(&p, &fx, Op::Write, redirect).rule, "git-metadata", "{redirect}");
        }
        assert!(decide(&p, &fx, Op::Write, ".git/objects/ab/cdef").is_allowed());
        assert!(decide(&p, &fx, Op::Write, ".git/refs/heads/main").is_allowed());
        let p = policy_with(&fx, "Sandbox:\n  ProtectGitMetadata: false\n", false);
        assert!(decide(&p, &fx, Op::Write, ".git/hooks/pre-commit").is_allowed());
    }

    #[test]
    fn credential_files_at_any_depth_and_the_opt_out() {
        let fx = fixture();
        let p = policy_with(&fx, "", false);
        for f in [
            "id_rsa",
            "a/.ssh/id_ed25519",
            ".aws/credentials",
            "x/.netrc",
            "_netrc",
            ".pgpass",
            ".git-credentials",
        ] {
            assert_eq!(decide(&p, &fx, Op::Read, f).rule, "credential-file", "{f}");
        }
        assert!(decide(&p, &fx, Op::Read, "a/.ssh/id_rsa.pub").is_allowed());
        assert!(decide(&p, &fx, Op::Read, ".npmrc").is_allowed());
        let p = policy_with(&fx, "Security:\n  DenyCredentialFiles: false\n", false);
        assert!(decide(&p, &fx, Op::Read, "id_rsa").is_allowed());
        assert_eq!(decide(&p, &fx, Op::Read, ".env").rule, "env-file");
    }

    #[test]
    fn symlink_loops_are_denied_not_hung() {
        let fx = fixture();
        let p = policy_with(&fx, "", false);
        symlink(fx.root.join("loop-b"), fx.root.join("loop-a")).unwrap();
        symlink(fx.root.join("loop-a"), fx.root.join("loop-b")).unwrap();
        assert_eq!(decide(&p, &fx, Op::Read, "loop-a").rule, "path-resolve");
    }

    mod containment {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig::with_cases(256))]
            /// No path whose canonical form lies outside every root, writable and system directory
            /// is ever allowed, whatever mix of `..`, `.`, symlinks and names it is spelled with.
            #[test]
            fn nothing_outside_is_ever_allowed(parts in proptest::collection::vec(
                prop_oneof![
                    Just("..".to_string()), Just(".".to_string()), Just("src".to_string()),
                    Just("out".to_string()), Just("in".to_string()), Just("elsewhere".to_string()),
                    Just("myapp".to_string()), Just("myapp-old".to_string()), "[a-z]{1,3}",
                ], 1..8),
                op in prop_oneof![Just(Op::Read), Just(Op::Write), Just(Op::List), Just(Op::Delete), Just(Op::Exec)],
                absolute in any::<bool>())
            {
                let fx = fixture();
                let _ = symlink(&fx.outside, fx.root.join("src/out"));
                let _ = symlink(&fx.root, fx.outside.join("in"));
                let p = policy_with(&fx, "", false);
                let rel: PathBuf = parts.iter().collect();
                let path = if absolute { fx.root.parent().unwrap().join(&rel) } else { rel.clone() };
                let d = check(&p, op, &path, &fx.root);
                let canonical = resolve(&path, &fx.root).unwrap();
                let inside = canonical.starts_with(&fx.root)
                    || p.sandbox.writable.iter().any(|w| canonical.starts_with(w))
                    || (!op.mutates() && p.sandbox.system.iter().any(|s| canonical.starts_with(s)));
                if !inside {
                    prop_assert_ne!(d.verdict, Verdict::Allow, "{:?} {} -> {}", op, path.display(), canonical.display());
                }
                // Cross-check the resolver against the kernel wherever the path exists.
                if let Ok(real) = std::fs::canonicalize(fx.root.join(&path)) {
                    prop_assert_eq!(real, canonical);
                }
            }
        }
    }
}
