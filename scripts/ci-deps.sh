#!/usr/bin/env bash
# Installs what a fresh machine (Rust toolchain, gcc, python3 only) lacks for the test suite.
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
command -v ip >/dev/null || need+=(iproute2)
command -v curl >/dev/null || need+=(curl)
command -v openssl >/dev/null || need+=(openssl)
if [ ${#need[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${need[@]}"
fi
rustup component list --installed 2>/dev/null | grep -q '^clippy' || rustup component add clippy rustfmt
