//! The `/etc` files of the child's view that depend on the network mode.
//!
//! The static ones (`/etc/os-release`, `/etc/nsswitch.conf`, `/etc/ld.so.cache`, the CA
//! certificates, time zone and locale data, …) are `System` entries of the `default` profile.
//! Name resolution is different: with the host's network (`--net host`) the child resolves names
//! as the host does, so the host's `/etc/hosts` and `/etc/resolv.conf` are shown read-only; in a
//! network namespace of its own there is no DNS to reach (the egress proxy resolves names for
//! the child), so the host's resolver configuration stays outside and the child gets a generated
//! `/etc/hosts` that names only the loopback: `localhost` and this machine's host name, which
//! programs look up for themselves (test servers, `hostname -f`, JVMs).
//!
//! Called by the planner once the network plan is known: [`host_files`] for what is bound from
//! the host, [`generated`] for what is written into the new root.

use std::path::PathBuf;

/// Host files shown for `--net host`.
const HOST_NETWORK_FILES: &[&str] = &["/etc/hosts", "/etc/resolv.conf"];

/// Files bound from the host: canonical paths, and the symlinks on the way as (link, target) so
/// the view can show the same link (`/etc/resolv.conf` → `../run/systemd/resolve/stub-resolv.conf`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostFiles {
    pub paths: Vec<PathBuf>,
    pub links: Vec<(PathBuf, PathBuf)>,
}

/// What the host's network needs from the host's `/etc`; nothing in a namespace of its own.
pub fn host_files(host_network: bool) -> HostFiles {
    let mut out = HostFiles::default();
    if !host_network {
        return out;
    }
    for file in HOST_NETWORK_FILES {
        let Ok(canonical) = std::fs::canonicalize(file) else { continue };
        if let Ok(target) = std::fs::read_link(file) {
            out.links.push((PathBuf::from(file), target));
        }
        out.paths.push(canonical);
    }
    out
}

/// Files written into the new root: `/etc/hosts` for a network namespace of the child's own.
pub fn generated(host_network: bool) -> Vec<(PathBuf, Vec<u8>)> {
    if host_network {
        return Vec::new();
    }
    let hostname = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    vec![(PathBuf::from("/etc/hosts"), hosts(hostname.trim()).into_bytes())]
}

/// `/etc/hosts` naming the loopback addresses, and `hostname` on 127.0.1.1 (as Debian does)
/// when it is a valid name.
fn hosts(hostname: &str) -> String {
    let mut out = String::from("127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n");
    let valid = !hostname.is_empty()
        && hostname != "localhost"
        && hostname.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '.');
    if valid {
        out.push_str(&format!("127.0.1.1\t{hostname}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generated_hosts_file_names_localhost_and_a_valid_host_name_only() {
        let h = hosts("build-7");
        assert!(h.starts_with("127.0.0.1\tlocalhost\n"), "{h}");
        assert!(h.contains("::1\tlocalhost"), "{h}");
        assert!(h.ends_with("127.0.1.1\tbuild-7\n"), "{h}");
        assert!(!hosts("evil\n10.0.0.1 x").contains("10.0.0.1"));
        assert!(!hosts("").contains("127.0.1.1"));
    }

    #[test]
    fn the_host_network_shows_the_hosts_resolver_files_and_an_own_namespace_does_not() {
        assert_eq!(host_files(false), HostFiles::default());
        assert_eq!(generated(true), Vec::new());
        let shown = host_files(true);
        for file in HOST_NETWORK_FILES {
            if let Ok(c) = std::fs::canonicalize(file) {
                assert!(shown.paths.contains(&c), "{file}: {shown:?}");
            }
        }
    }
}
