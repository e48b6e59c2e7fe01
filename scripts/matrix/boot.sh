#!/usr/bin/env bash
# boot.sh VMLINUZ INITRD LOG KERNEL-ARGS… — one bounded guest boot under qemu, serial console to
# LOG (carriage returns stripped). Software emulation (TCG) with one vCPU: it runs stock distro
# kernels everywhere (a nested /dev/kvm may not, and two TCG vCPUs can oops while patching kernel
# text). MX_BOOT_TIMEOUT bounds the boot (default 900 s); the exit status is qemu's, 124 on timeout.
set -u
kernel=$1 initrd=$2 log=$3; shift 3
timeout --foreground -k 10 "${MX_BOOT_TIMEOUT:-900}" nice -n "${MX_NICE:-10}" qemu-system-x86_64 \
  -accel tcg -cpu max -m "${MX_MEM:-1024}" -smp 1 -nographic -no-reboot -nic none -monitor none \
  -serial stdio -kernel "$kernel" -initrd "$initrd" \
  -append "console=ttyS0 panic=-1 loglevel=3 $*" </dev/null >"$log.raw" 2>&1
rc=$?
tr -d '\r' <"$log.raw" >"$log" && rm -f "$log.raw"
exit $rc
