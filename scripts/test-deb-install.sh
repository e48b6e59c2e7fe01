#!/usr/bin/env bash
# Installs dist/hullward_*.deb with apt into a fresh Debian 12 root (debootstrap minbase) and
# checks what a user gets: `hullward --version`, a sandboxed run, `man hullward`, the bash
# completion, the config template and the units. Everything happens in a private mount
# namespace under target/debroot (removed afterwards); the host's mounts are not touched.
#
#   scripts/package.sh deb && scripts/test-deb-install.sh
#
# Needs root and debootstrap (installed when missing); downloads Debian's base packages.
set -euo pipefail
cd "$(dirname "$0")/.."
deb=$(ls dist/hullward_*_amd64.deb 2>/dev/null | tail -1)
[ -n "$deb" ] || { echo "test-deb-install: no dist/hullward_*_amd64.deb (run scripts/package.sh deb)" >&2; exit 1; }
command -v debootstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null
root=$PWD/target/debroot
rm -rf "$root"
trap 'rm -rf "$root"' EXIT
debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
cp "$deb" "$root/tmp/hullward.deb"
cp /etc/resolv.conf "$root/etc/resolv.conf"
unshare -m --propagation private sh -c '
  root=$1
  mount --bind "$root" "$root" && mount -t proc proc "$root/proc" &&
  mount --rbind /sys "$root/sys" && mount --rbind /dev "$root/dev"
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root /bin/bash -euo pipefail -c "
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null
    apt-get install -y -qq /tmp/hullward.deb man-db bash-completion >/dev/null
    hullward --version
    cd /root
    test \"\$(hullward --hitl off run -- sh -c \"echo sandboxed\")\" = sandboxed
    MANWIDTH=80 man hullward | grep -q \"^NAME\"
    bash -c \". /usr/share/bash-completion/bash_completion; _completion_loader hullward; complete -p hullward\" | grep -q _hullward
    test -f /etc/hullward/config.yaml && hullward validate --config /etc/hullward/config.yaml >/dev/null
    ls /usr/lib/systemd/system/hullward.socket /usr/lib/systemd/system/hullward.service /etc/apparmor.d/hullward >/dev/null
    echo \"test-deb-install: apt install on a fresh Debian 12 root gives hullward, its man page, completion, config and units\"
  "
' sh "$root"
