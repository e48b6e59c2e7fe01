#!/usr/bin/env bash
# mkinitrd.sh OUT.cpio.gz HULLWARD PROBE UNCONFINED — the matrix guests' initramfs: busybox
# (static), the static hullward and probe, the unconfined control, check.sh, and guest-init.sh as
# /init.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(realpath -m "$1") hw=$2 probe=$3 unconfined=$4
busybox=${BUSYBOX:-/bin/busybox}
for f in "$hw" "$probe" "$busybox"; do
  file -L "$f" | grep -q 'statically linked\|static-pie' || { echo "mkinitrd: $f is not a static binary" >&2; exit 1; }
done
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/bin" "$tmp/etc" "$tmp/mx"
cp "$busybox" "$tmp/bin/busybox"
for a in sh mount mkdir cp touch umount switch_root; do ln -s busybox "$tmp/bin/$a"; done
cp "$hw" "$tmp/mx/hullward"; cp "$probe" "$tmp/mx/probe"; cp "$here/check.sh" "$tmp/mx/check.sh"; cp "$unconfined" "$tmp/mx/unconfined"
cp "$here/guest-init.sh" "$tmp/init"
chmod 755 "$tmp/init" "$tmp/mx/"*
printf 'root:x:0:0:root:/root:/bin/sh\nu:x:1000:1000:u:/home/u:/bin/sh\n' > "$tmp/etc/passwd"
printf 'root:x:0:\nu:x:1000:\n' > "$tmp/etc/group"
printf '127.0.0.1 localhost\n' > "$tmp/etc/hosts"
(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) > "$out"
