//! The built-in profiles, embedded in the binary from `profiles/*.yaml`.
//!
//! `default` is always the base layer; `--profile NAME` layers one of the others (or a file) on
//! top of it. A profile is an ordinary config file: the same keys, the same validation.

/// A built-in profile: its name and YAML text.
pub struct Profile {
    pub name: &'static str,
    pub summary: &'static str,
    pub yaml: &'static str,
}

/// Every built-in profile; `default` first.
pub const PROFILES: &[Profile] = &[
    Profile {
        name: "default",
        summary: "current directory read+write, system dirs read+exec, no network, strict",
        yaml: include_str!("../../profiles/default.yaml"),
    },
    Profile {
        name: "ci",
        summary: "CI runners: root and /tmp writable, no network, strict, 30 min timeout",
        yaml: include_str!("../../profiles/ci.yaml"),
    },
    Profile {
        name: "readonly",
        summary: "review agents: root read-only, private /tmp, no network",
        yaml: include_str!("../../profiles/readonly.yaml"),
    },
    Profile {
        name: "registries",
        summary: "builds that fetch dependencies: only package registries via the egress proxy",
        yaml: include_str!("../../profiles/registries.yaml"),
    },
    Profile {
        name: "toolchains",
        summary:
            "toolchains under $HOME (rustup, pyenv, nvm, ...) read+exec only; caches in the private home",
        yaml: include_str!("../../profiles/toolchains.yaml"),
    },
    Profile {
        name: "agent",
        summary: "coding agents: model APIs via the egress proxy, provider keys forwarded",
        yaml: include_str!("../../profiles/agent.yaml"),
    },
];

/// The built-in profile called `name`.
pub fn builtin(name: &str) -> Option<&'static Profile> {
    PROFILES.iter().find(|p| p.name == name)
}

/// The names of all built-in profiles, comma-separated (for error messages).
pub fn names() -> String {
    PROFILES.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
}
