//! `raw-disk-op`: formatting a filesystem or writing straight to a block device.
//!
//! Formatters (`mkfs`, `mkfs.*`, `mke2fs`, `mkswap`, `mkdosfs`, `mkntfs`, `blkdiscard`) are
//! refused outright, `wipefs` when it erases (`-a`, `-o`, unless `--no-act`). A block device —
//! `/dev/sd*`, `nvme*`, `mmcblk*`, `vd*`, `xvd*`, `hd*`, `loop*`, `dm-*`, `md*`, `nbd*`, `zram*`,
//! `mapper/…`, `disk/by-…/…`, and `/dev/mem`, `kmem`, `port` — is refused as `dd of=`, as the
//! file `tee` or `shred` writes, as the destination of `cp`/`mv`/`install`, and as the target of
//! any output redirection (`cat img > /dev/sdb`). Reading a device, or `dd if=a of=b`, is fine.

use std::borrow::Cow;
use std::path::{Component, Path};

use crate::guard::shell::analysis::{Analysis, Cmd};
use crate::guard::shell::ast::Word;
use crate::guard::shell::normalize;
use crate::guard::Decision;

/// Programs that only format or discard.
const FORMATTERS: &[&str] = &["mke2fs", "mkswap", "mkdosfs", "mkntfs", "mkexfatfs", "blkdiscard"];

/// Device names followed by a letter (`sda`, `vdb1`).
const LETTERED: &[&str] = &["sd", "hd", "vd", "xvd"];

/// Device names followed by a number (`nvme0n1`, `loop3`).
const NUMBERED: &[&str] =
    &["nvme", "mmcblk", "loop", "dm-", "md", "nbd", "zram", "rbd", "ram", "sr", "mtdblock", "bcache", "fd"];

/// Whether a path names a block device (or raw memory), lexically.
fn block_device(value: &str) -> bool {
    let mut names = Vec::new();
    for c in Path::new(value).components() {
        match c {
            Component::Normal(n) => names.push(n.to_string_lossy().into_owned()),
            Component::ParentDir => {
                names.pop();
            }
            _ => {}
        }
    }
    match names.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        ["dev", "mapper" | "disk" | "md", _, ..] => true,
        ["dev", "mem" | "kmem" | "port"] => true,
        ["dev", name] => {
            let after = |prefixes: &[&str], ok: fn(char) -> bool| {
                prefixes.iter().any(|p| name.strip_prefix(p).and_then(|r| r.chars().next()).is_some_and(ok))
            };
            after(LETTERED, |c| c.is_ascii_lowercase()) || after(NUMBERED, |c| c.is_ascii_digit())
        }
        _ => false,
    }
}

fn word_is_device(word: &Word) -> bool {
    word.value().is_some_and(|v| block_device(&normalize::fold(&v)))
}

fn writes_device(cmd: &Cmd, name: &str) -> bool {
    if name == "mkfs" || name.starts_with("mkfs.") || FORMATTERS.contains(&name) {
        return true;
    }
    if !["wipefs", "dd", "tee", "shred", "cp", "mv", "install"].contains(&name) {
        return false;
    }
    let args: Vec<Cow<'_, str>> = (1..cmd.argv.len()).filter_map(|i| cmd.arg(i)).collect();
    let short = |a: &str, flags: &[char]| a.starts_with('-') && !a.starts_with("--") && a.contains(flags);
    let mut operands = args.iter().filter(|a| !a.starts_with('-'));
    match name {
        "wipefs" => {
            let erases =
                args.iter().any(|a| a == "--all" || a.starts_with("--offset") || short(a, &['a', 'o']));
            let dry = args.iter().any(|a| a == "--no-act" || short(a, &['n']));
            erases && !dry
        }
        "dd" => args.iter().any(|a| a.strip_prefix("of=").is_some_and(block_device)),
        "tee" | "shred" => operands.any(|o| block_device(o)),
        _ => operands.next_back().is_some_and(|o| block_device(o)),
    }
}

pub fn check(analysis: &Analysis) -> Option<Decision> {
    let hit = analysis.cmds.iter().any(|c| c.names().any(|n| writes_device(c, n)))
        || analysis.writes.iter().any(word_is_device);
    hit.then(|| {
        Decision::deny(
            "raw-disk-op",
            format!(
                "[DENIED] Shell command blocked: it formats a filesystem or writes straight to a block device (raw-disk-op).\n{}",
                super::ASK_THE_USER
            ),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_devices() {
        for d in [
            "/dev/sda",
            "/dev/sdb1",
            "/dev/nvme0n1",
            "/dev/nvme0n1p2",
            "/dev/mmcblk0",
            "/dev/vda",
            "/dev/xvdf",
            "/dev/loop0",
            "/dev/dm-0",
            "/dev/md0",
            "/dev/mapper/root",
            "/dev/disk/by-uuid/abc",
            "/dev/mem",
            "//dev/./sda",
            "/dev/../dev/sda",
            "/dev/fd0",
        ] {
            assert!(block_device(d), "{d}");
        }
        for d in [
            "/dev/null",
            "/dev/zero",
            "/dev/stdout",
            "/dev/fd/1",
            "/dev/tty",
            "/dev/urandom",
            "sda",
            "/tmp/sda",
            "/dev/shm/x",
        ] {
            assert!(!block_device(d), "{d}");
        }
    }
}
