#!/usr/bin/env bash
# The test suite, in tiers (see docs/testing.md):
#
#   scripts/test.sh            the full test suite = `all`
#   scripts/test.sh fast       cargo test: unit, property and integration tests on this kernel
#   scripts/test.sh host       the promise checks on this kernel as root, uid 1000, in a simulated
#                              Docker-default container and a Kubernetes-style pod
#   scripts/test.sh kernel     the promise checks on stock distro kernels (Debian 12 6.1, Ubuntu
#                              22.04 5.15, Ubuntu 24.04 6.8, Debian 13 6.12) booted in qemu
#   scripts/test.sh matrix     host + kernel
#   scripts/test.sh all        fast, host and kernel
#   scripts/test.sh ARGS…      (anything else) cargo test --locked ARGS…
#
# Needs root (namespaces, mounts, cgroups) on Linux with Landlock; the kernel tiers need qemu,
# busybox-static, cpio and musl-tools (scripts/ci-deps.sh). cargo's own closing lines stay as they
# are; the other tiers end with `matrix: N passed, N failed`.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
fast() { cargo test --locked "$@"; }
case ${1:-all} in
  fast) shift; fast "$@" ;;
  host|kernel|matrix) exec scripts/matrix/run.sh "$@" ;;
  all)
    fast; cargo_rc=$?
    scripts/matrix/run.sh all; matrix_rc=$?
    [ "$cargo_rc" = 0 ] && [ "$matrix_rc" = 0 ] ;;
  *) fast "$@" ;;
esac
