//! Kernel enforcement: everything between "this call is allowed" and the program running
//! confined. The only module with `unsafe` code (in [`sys`]).
//!
//! Order of use:
//! 1. [`kernel::KernelSupport::probe_env`] — what this kernel can enforce (Landlock ABI, seccomp,
//!    namespaces, cgroups);
//! 2. [`plan::build`] — the [`plan::SandboxPlan`] for one call: strict-mode decision promise by
//!    promise ([`plan::promises`]; with `--no-strict`, a probe child first tries the plan and
//!    what the machine refuses is dropped and reported), program,
//!    environment ([`env`](mod@env)), the masks from the deny globs ([`masks`]), the filesystem view
//!    ([`view`]), the Landlock rules ([`landlock`]), the seccomp policy ([`seccomp`]), limits;
//! 3. [`cgroup::CallCgroup::create`] — the call's cgroups (process, memory and CPU limits, tree
//!    kill);
//! 4. [`egress::Pending::open`] for `--net proxy` — the channel the child hands its listener back on;
//! 5. [`spawn::spawn`] — kernel objects, `clone3` (or `clone` where a seccomp profile refuses it),
//!    and in the child [`child::run`], which applies the plan with raw system calls in DESIGN.md's
//!    order and `exec`s; then [`egress::Pending::start`] runs the proxy on the child's listener.

pub mod cgroup;
pub mod changes;
pub mod child;
pub mod egress;
pub mod enumerate;
pub mod env;
pub mod etc;
pub mod grants;
pub mod hardlinks;
pub mod held;
pub mod home;
pub mod index;
pub mod kernel;
pub mod landlock;
pub mod masks;
pub mod pid1;
pub mod plan;
pub mod protect;
pub mod reads;
pub mod seccomp;
pub mod seen;
pub mod spawn;
pub mod sys;
pub mod view;
