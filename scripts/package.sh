#!/usr/bin/env bash
# Builds the release artefacts into dist/:
#   dist/hullward_VERSION-1_amd64.deb          cargo-deb package: binary, man pages, completions,
#                                               /etc/hullward/config.yaml, systemd units, AppArmor profile
#   dist/hullward-VERSION-x86_64-linux-musl     the static binary (packaging/build-static.sh)
#   dist/SHA256SUMS                             sha256 of both
# then shows what the package holds (dpkg-deb) and runs lintian when it is installed.
#
#   scripts/package.sh            both
#   scripts/package.sh deb        only the .deb
#   scripts/package.sh static     only the static binary
#
# Every asset listed in Cargo.toml [package.metadata.deb] must exist first: a missing one stops
# the build with its name, rather than a package without it.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
fail() { echo "package.sh: $*" >&2; exit 1; }
version=$(cargo metadata --no-deps --format-version 1 | python3 -c 'import json,sys; print(json.load(sys.stdin)["packages"][0]["version"])')
mkdir -p dist

check_assets() {
  local missing
  missing=$(cargo metadata --no-deps --format-version 1 | python3 -c '
import glob, json, sys
deb = json.load(sys.stdin)["packages"][0]["metadata"]["deb"]
for src, _dest, _mode in deb["assets"]:
    if not src.startswith("target/") and not glob.glob(src):
        print(src)
')
  [ -z "$missing" ] || fail "missing asset(s) listed in Cargo.toml [package.metadata.deb]: $(echo $missing)"
}

build_deb() {
  check_assets
  command -v cargo-deb >/dev/null || cargo install --locked cargo-deb
  # The package carries the revision it was built from (hullward --version).
  local deb
  deb=$(cargo deb --locked --output dist/ | tail -1)
  [ -f "$deb" ] || fail "cargo deb did not produce a package"
  echo "== $deb"
  dpkg-deb --info "$deb"
  dpkg-deb --contents "$deb"
  smoke_deb "$deb"
  if command -v lintian >/dev/null; then
    lintian --fail-on error "$deb"
  else
    echo "(lintian not installed: apt-get install lintian to check the package)"
  fi
}

# The unpacked package: the binary runs, the man page renders, the bash completion loads.
smoke_deb() {
  local tree
  tree=$(mktemp -d)
  dpkg-deb --extract "$1" "$tree"
  "$tree/usr/bin/hullward" --version
  if command -v man >/dev/null; then
    MANWIDTH=80 man -l "$tree/usr/share/man/man1/hullward.1.gz" | grep -q '^NAME' || fail "the packaged man page does not render"
  fi
  bash -c "source '$tree/usr/share/bash-completion/completions/hullward' && complete -p hullward" >/dev/null ||
    fail "the packaged bash completion does not load"
  rm -rf "$tree"
}

build_static() {
  packaging/build-static.sh
  local out="dist/hullward-$version-x86_64-linux-musl"
  mv dist/hullward "$out"
  "$out" --version
}

case $what in
  all) build_deb; build_static ;;
  deb) build_deb ;;
  static) build_static ;;
  *) fail "usage: scripts/package.sh [all|deb|static]" ;;
esac
(cd dist && sha256sum -- hullward_*.deb hullward-*-x86_64-linux-musl 2>/dev/null > SHA256SUMS || true)
[ -s dist/SHA256SUMS ] || fail "nothing was built"
(cd dist && sha256sum -c SHA256SUMS)
