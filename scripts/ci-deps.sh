#!/usr/bin/env bash
# Installs what a fresh machine (Rust toolchain, gcc, python3 only) lacks for the test suite.
# What the cargo tests need is required; what only the kernel tier needs (qemu, busybox-static,
# cpio, musl-tools, the Rust musl target) is best effort: when it cannot be installed (no network,
# an apt hiccup) the tier prints `skipped: …` instead of failing the build.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=()
command -v git >/dev/null || need+=(git)
command -v ip >/dev/null || need+=(iproute2)
command -v curl >/dev/null || need+=(curl)
command -v openssl >/dev/null || need+=(openssl)
command -v man >/dev/null || need+=(man-db)
# tests/mcp.rs makes a virtual environment for the MCP Python SDK client.
python3 -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt

matrix=()
command -v qemu-system-x86_64 >/dev/null || matrix+=(qemu-system-x86)
[ -x /bin/busybox ] && file -L /bin/busybox 2>/dev/null | grep -q static || matrix+=(busybox-static)
command -v cpio >/dev/null || matrix+=(cpio)
command -v file >/dev/null || matrix+=(file)
command -v musl-gcc >/dev/null || matrix+=(musl-tools)
if [ ${#matrix[@]} -gt 0 ]; then
  { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${matrix[@]}"; } ||
    echo "ci-deps: could not install ${matrix[*]}: the kernel tier will be skipped"
fi
musl=x86_64-unknown-linux-musl
rustup target list --installed 2>/dev/null | grep -qx "$musl" || rustup target add "$musl" ||
  echo "ci-deps: could not add the Rust target $musl: the kernel tier will be skipped"
