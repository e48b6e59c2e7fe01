#!/usr/bin/env bash
# fetch-kernels.sh CACHE [NAME...] — downloads the stock distribution kernels of the matrix by
# package name with `apt-get download` and unpacks each one's /boot into CACHE/NAME/.
#
# Why: the kernel tier boots the kernels users run (not one we build), so it needs the distros' own
# packages. apt runs on private list/cache directories (APT_CONFIG), so the host's sources and
# package state are untouched; nothing of this is committed.
#
# Order: resolve the current image package through the distro's meta package (point releases
# replace linux-image-6.1.0-N), download it, unpack ./boot, write CACHE/NAME/package (the name
# that was booted) and CACHE/NAME/vmlinuz. A kernel that is already in CACHE is not fetched again.
# Each failure prints `fetch NAME: skipped: WHY` and leaves NAME absent; the exit status is 0
# when at least one of the requested kernels is present.
#
# NAMEs (default: all): deb12 (Debian 12, 6.1), deb13 (Debian 13, 6.12), u2204 (Ubuntu 22.04,
# 5.15 generic), u2404 (Ubuntu 24.04, 6.8 generic). Ubuntu's signing key comes from Debian trixie's
# ubuntu-keyring package.
set -uo pipefail
cache=$(realpath -m "${1:?usage: fetch-kernels.sh CACHE [NAME...]}"); shift
names=("$@"); [ ${#names[@]} -gt 0 ] || names=(deb12 deb13 u2204 u2404)
mkdir -p "$cache"
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# One private apt state per archive: sources.list and lists/cache under $work/$1.
apt_env() {
  local d=$work/$1
  mkdir -p "$d/lists/partial" "$d/cache/archives/partial"
  cat > "$d/apt.conf" <<C
Dir::Etc::SourceList "$d/sources.list";
Dir::Etc::SourceParts "/nonexistent";
Dir::State::Lists "$d/lists";
Dir::Cache "$d/cache";
Dir::State::status "/var/lib/dpkg/status";
Acquire::Languages "none";
Acquire::Retries "3";
Acquire::http::Timeout "30";
APT::Architecture "amd64";
C
  echo "$d/apt.conf"
}

# The image package a meta package depends on in one suite: meta_dep CONF META SUITE
meta_dep() {
  local ver
  ver=$(APT_CONFIG=$1 apt-cache madison "$2" 2>/dev/null | awk -v s="$3" '$0 ~ s {print $3; exit}')
  [ -n "$ver" ] || return 1
  APT_CONFIG=$1 apt-cache depends "$2=$ver" 2>/dev/null |
    sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\).*/\1/p' | head -1
}

# unpack NAME CONF PACKAGE: download the package, unpack its vmlinuz into $cache/NAME
unpack() {
  local name=$1 conf=$2 pkg=$3 dir=$work/dl-$1 out=$cache/$1
  mkdir -p "$dir"
  if ! (cd "$dir" && APT_CONFIG=$conf apt-get download -q "$pkg" >"$dir/log" 2>&1); then
    echo "fetch $name: skipped: apt-get download $pkg failed: $(tail -1 "$dir/log")"; return 1
  fi
  mkdir -p "$dir/x"
  dpkg-deb --fsys-tarfile "$dir"/*.deb | tar -x -C "$dir/x" ./boot || {
    echo "fetch $name: skipped: $pkg has no ./boot"; return 1; }
  local vmlinuz; vmlinuz=$(find "$dir/x/boot" -name 'vmlinuz-*' | head -1)
  [ -n "$vmlinuz" ] || { echo "fetch $name: skipped: no vmlinuz in $pkg"; return 1; }
  mkdir -p "$out"; cp "$vmlinuz" "$out/vmlinuz"; echo "$pkg" > "$out/package"
  echo "fetch $name: $pkg ($(basename "$vmlinuz"))"
}

want() { local n; for n in "${names[@]}"; do [ "$n" = "$1" ] && return 0; done; return 1; }
have() { [ -s "$cache/$1/vmlinuz" ] && echo "fetch $1: cached $(cat "$cache/$1/package")"; }

# updated CONF NAME: apt-get update, and package lists to show for it (apt exits 0 even when
# every source failed, so the lists are what tells)
updated() {
  local log=$work/$2/update.log
  APT_CONFIG=$1 apt-get update -q >"$log" 2>&1
  if ls "$work/$2/lists/"*_Packages* >/dev/null 2>&1; then return 0; fi
  echo "fetch: $2 archive: no package lists after apt-get update: $(grep -E '^(Err|E|W):' "$log" | head -1)"
  return 1
}

deb=$(apt_env debian)
cat > "$work/debian/sources.list" <<S
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security bookworm-security main
deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main
S
deb_ready=
debian_update() {
  [ -n "$deb_ready" ] && return "$deb_ready"
  if updated "$deb" debian; then deb_ready=0; else deb_ready=1; fi
  return "$deb_ready"
}
debian_kernel() { # NAME SUITE
  have "$1" && return 0
  debian_update || { echo "fetch $1: skipped: Debian archive unreachable"; return 1; }
  local pkg; pkg=$(meta_dep "$deb" linux-image-amd64 "$2") || pkg=
  [ -n "$pkg" ] || { echo "fetch $1: skipped: no linux-image-amd64 in $2"; return 1; }
  unpack "$1" "$deb" "$pkg"
}

ubu=$(apt_env ubuntu) ubu_ready=
ubuntu_update() {
  [ -n "$ubu_ready" ] && return "$ubu_ready"
  ubu_ready=1
  debian_update || return 1
  local kr=$work/ubuntu/keyring
  mkdir -p "$kr"
  if ! (cd "$kr" && APT_CONFIG=$deb apt-get download -q ubuntu-keyring/trixie >/dev/null 2>&1 &&
    dpkg-deb -x "$kr"/ubuntu-keyring_*.deb "$kr/x"); then
    echo "fetch: ubuntu-keyring/trixie not available from the Debian archive"; return 1
  fi
  local key=$kr/x/usr/share/keyrings/ubuntu-archive-keyring.gpg
  cat > "$work/ubuntu/sources.list" <<S
deb [arch=amd64 signed-by=$key] http://archive.ubuntu.com/ubuntu jammy-updates main
deb [arch=amd64 signed-by=$key] http://archive.ubuntu.com/ubuntu noble-updates main
S
  if updated "$ubu" ubuntu; then ubu_ready=0; fi
  return "$ubu_ready"
}
ubuntu_kernel() { # NAME SUITE
  have "$1" && return 0
  ubuntu_update || { echo "fetch $1: skipped: archive.ubuntu.com unreachable"; return 1; }
  local pkg; pkg=$(meta_dep "$ubu" linux-image-generic "$2") || pkg=
  [ -n "$pkg" ] || { echo "fetch $1: skipped: no linux-image-generic in $2"; return 1; }
  unpack "$1" "$ubu" "$pkg"
}

got=0
for n in "${names[@]}"; do
  case $n in
    deb12) debian_kernel deb12 bookworm ;;
    deb13) debian_kernel deb13 trixie ;;
    u2204) ubuntu_kernel u2204 jammy-updates ;;
    u2404) ubuntu_kernel u2404 noble-updates ;;
    *) echo "fetch $n: skipped: unknown kernel name (deb12 deb13 u2204 u2404)" ;;
  esac && got=$((got + 1))
done
[ "$got" -gt 0 ]
