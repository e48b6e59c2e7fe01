//! Kernel enforcement: everything between "this call is allowed" and the program running
//! confined. The only module with `unsafe` code (in [`sys`]).
//!
//! Order of use:
//! 1. [`kernel::KernelSupport::probe_env`] — what this kernel can enforce (Landlock ABI, seccomp,
//!    namespaces, cgroups);
//! 2. [`plan::build`] — the [`plan::SandboxPlan`] for one call: strict-mode decision, program,
//!    environment ([`env`](mod@env)), the masks from the deny globs ([`masks`]), the filesystem view
//!    ([`view`]), the Landlock rules ([`landlock`]), the seccomp policy ([`seccomp`]), limits;
//! 3. [`cgroup::CallCgroup::create`] — the call's cgroups (process limit, tree kill);
//! 4. [`spawn::spawn`] — kernel objects, `clone3`, and in the child [`child::run`], which applies
//!    the plan with raw system calls in DESIGN.md's order and `exec`s.

pub mod cgroup;
pub mod child;
pub mod egress;
pub mod env;
pub mod etc;
pub mod grants;
pub mod home;
pub mod kernel;
pub mod landlock;
pub mod masks;
pub mod plan;
pub mod seccomp;
pub mod spawn;
pub mod sys;
pub mod view;
