//! Helpers of the attack battery (`tests/sandbox_view.rs`): scripts that try one thing after
//! another inside the child and print `NAME=blocked` or `NAME=WORKED`, and small C programs for
//! what the shell cannot do (`renameat2(RENAME_EXCHANGE)`).
#![allow(dead_code)]

use std::path::Path;

use crate::support::{compile_c, Out};

/// A shell function the scripts start with: `try NAME CMD…` runs CMD and prints whether it
/// worked (`NAME=WORKED`) or failed (`NAME=blocked`).
pub const TRY: &str = "try() { n=$1; shift; if \"$@\" >/dev/null 2>&1; then echo \"$n=WORKED\"; \
                       else echo \"$n=blocked\"; fi; }; ";

/// `xchg A B`: swaps two paths atomically with `renameat2(RENAME_EXCHANGE)`; `xchg -l A B N`
/// swaps them back and forth N times (a racing attacker).
const XCHG_SRC: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
static int xchg(const char *a, const char *b) {
    return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}
int main(int argc, char **argv) {
    if (argc == 5 && strcmp(argv[1], "-l") == 0) {
        long n = atol(argv[4]);
        for (long i = 0; i < n; i++) xchg(argv[2], argv[3]);
        return 0;
    }
    if (argc != 3) return 2;
    if (xchg(argv[1], argv[2]) != 0) { perror("renameat2"); return 1; }
    return 0;
}
"#;

/// Compiles `xchg` into `dst`.
pub fn install_xchg(dst: &Path) {
    compile_c(XCHG_SRC, dst);
}

/// The outcome `try NAME` printed.
pub fn outcome<'a>(out: &'a Out, name: &str) -> &'a str {
    let prefix = format!("{name}=");
    out.stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap_or_else(|| panic!("no outcome for {name}\n{out}"))
}

/// Asserts that each of `names` was blocked.
#[track_caller]
pub fn all_blocked(out: &Out, names: &[&str]) {
    let worked: Vec<&str> = names.iter().copied().filter(|n| outcome(out, n) != "blocked").collect();
    assert!(worked.is_empty(), "these attacks worked: {worked:?}\n{out}");
}

/// Asserts that each of `names` worked.
#[track_caller]
pub fn all_worked(out: &Out, names: &[&str]) {
    let failed: Vec<&str> = names.iter().copied().filter(|n| outcome(out, n) != "WORKED").collect();
    assert!(failed.is_empty(), "this legitimate work failed: {failed:?}\n{out}");
}

/// `race DIR A B`: watches DIR with inotify and, as soon as a reader closes the directory itself
/// (a walk has listed it), swaps `DIR/A` and `DIR/B` once with `renameat2(RENAME_EXCHANGE)`.
/// Prints `ready` once the watch is in place; gives up after 20 s.
const RACE_SRC: &str = r#"
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/syscall.h>
#include <unistd.h>
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
int main(int argc, char **argv) {
    if (argc != 4) return 2;
    alarm(20);
    int in = inotify_init1(IN_CLOEXEC);
    if (in < 0 || inotify_add_watch(in, argv[1], IN_CLOSE_NOWRITE | IN_ONLYDIR) < 0) return 1;
    int dir = open(argv[1], O_PATH | O_DIRECTORY | O_CLOEXEC);
    printf("ready\n");
    fflush(stdout);
    char buf[4096] __attribute__((aligned(8)));
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n <= 0) return 1;
        for (char *p = buf; p < buf + n;) {
            struct inotify_event *e = (struct inotify_event *)p;
            if ((e->mask & IN_ISDIR) && e->len == 0) {
                if (syscall(SYS_renameat2, dir, argv[2], dir, argv[3], RENAME_EXCHANGE) != 0) return 1;
                printf("swapped\n");
                return 0;
            }
            p += sizeof *e + e->len;
        }
    }
}
"#;

/// Compiles `race` into `dst`.
pub fn install_race(dst: &Path) {
    compile_c(RACE_SRC, dst);
}
