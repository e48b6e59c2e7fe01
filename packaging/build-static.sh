#!/usr/bin/env bash
# Builds hullward as one static binary (musl, static-pie) at dist/hullward.
#
#   packaging/build-static.sh
#
# Needs the musl target of the Rust toolchain and musl-gcc (Debian: musl-tools); installs both
# when missing. The result has no runtime dependency: copy it to a CI runner or a server and run.
set -euo pipefail
cd "$(dirname "$0")/.."
target=x86_64-unknown-linux-musl
rustup target list --installed | grep -qx "$target" || rustup target add "$target"
command -v musl-gcc >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq musl-tools >/dev/null
cargo build --release --locked --target "$target"
mkdir -p dist
cp "${CARGO_TARGET_DIR:-target}/$target/release/hullward" dist/hullward
strip dist/hullward
file dist/hullward
ls -la dist/hullward
