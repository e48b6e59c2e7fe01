#!/bin/busybox sh
# shellcheck shell=dash
# PID 1 of a matrix guest (scripts/matrix/kernel.sh boots it).
#
# Why: the guest must look like the machines users run hullward on — a cgroup v2 tree with the
# controllers systemd enables, a login session's leaf scope, a delegated service — using only
# busybox. Order: stage 1 copies the initramfs into a tmpfs and switch_roots there (pivot_root,
# which hullward's child uses, is refused on the initramfs rootfs); stage 2 mounts proc, sys, dev,
# tmp, cgroup2 (+pids +memory at the root, as systemd does), runs check.sh once per case named by
# mxcases= on the kernel command line, and powers off. Every result line goes to the console.
B=/bin/busybox
if [ ! -e /.stage2 ]; then
  $B mkdir -p /proc /newroot && $B mount -t proc proc /proc
  $B mount -t tmpfs -o size=512m,mode=755 tmpfs /newroot
  for d in bin etc mx init; do $B cp -a /$d /newroot/; done
  $B touch /newroot/.stage2
  $B umount /proc
  exec $B switch_root /newroot /init
fi

$B --install -s /bin
export PATH=/bin HOME=/root TERM=dumb
mkdir -p /proc /sys /dev /tmp /run /var/tmp /root /srv /home/u
mount -t proc proc /proc; mount -t sysfs sys /sys; mount -t devtmpfs dev /dev
mkdir -p /dev/pts /dev/shm; mount -t devpts devpts /dev/pts; mount -t tmpfs shm /dev/shm
mount -t tmpfs -o mode=1777 tmp /tmp; mount -t tmpfs run /run; chmod 1777 /var/tmp
mount -t securityfs securityfs /sys/kernel/security 2>/dev/null
mount -t cgroup2 cgroup2 /sys/fs/cgroup
ip link set lo up
chown 1000:1000 /home/u
G=/sys/fs/cgroup
echo "+pids +memory" > $G/cgroup.subtree_control

arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^$1=//p" | tail -1; }
ENVNAME=$(arg mxenv); CASES=$(arg mxcases | tr , ' '); MODES=$(arg mxmodes | tr , ' ')
CONTROL_MODES=$(arg mxcontrolmodes | tr , ' ')
echo; echo "MXBOOT|$ENVNAME|kernel=$(uname -r)|lsm=$(cat /sys/kernel/security/lsm 2>/dev/null)|controllers=$(cat $G/cgroup.controllers)"
export HW=/mx/hullward PROBE=/mx/probe ENV=$ENVNAME MODES
for c in $CASES; do
  echo "MXCASE|$ENVNAME|$c"
  case $c in
  root)       # root in the root cgroup, the controllers enabled below it
    CASE=root WS=/srv/ws-root sh /mx/check.sh ;;
  session)    # root in a login session's leaf, as systemd-logind makes it: nothing delegated
    d=$G/user.slice/user-0.slice/session-1.scope
    mkdir -p $d
    echo "+pids +memory" > $G/user.slice/cgroup.subtree_control
    echo "+pids +memory" > $G/user.slice/user-0.slice/cgroup.subtree_control
    sh -c "echo \$\$ > $d/cgroup.procs && CASE=session WS=/srv/ws-session exec sh /mx/check.sh" ;;
  delegated)  # root as the main process of a Delegate=yes service: the controllers are
              # available in its cgroup, which it owns, but not yet enabled below it
    # (and marked trusted.delegate=1, as systemd marks a delegated unit); check.sh and its
    # listeners share it with hullward, as a service's main process and its helpers do
    d=$G/system.slice/agent.service
    mkdir -p $d
    echo "+pids +memory" > $G/system.slice/cgroup.subtree_control
    /mx/probe setxattr $d trusted.delegate 1
    sh -c "echo \$\$ > $d/cgroup.procs && CASE=delegated WS=/srv/ws-delegated exec sh /mx/check.sh" ;;
  uid1000)    # an ordinary user, user namespaces as the kernel's defaults allow them
    HOME=/home/u CASE=uid1000 WS=/home/u/ws /mx/probe runas 1000 1000 sh /mx/check.sh ;;
  unconfined) # the harness's control under busybox: no sandbox, every attack must succeed
    HW=/mx/unconfined CASE=unconfined WS=/srv/ws-unconfined MODES=$CONTROL_MODES sh /mx/check.sh ;;
  *) echo "MXCASE|$ENVNAME|$c|unknown case" ;;
  esac
done
echo "MXEND|$ENVNAME"
sync
poweroff -f
