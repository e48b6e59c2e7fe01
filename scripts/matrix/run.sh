#!/usr/bin/env bash
# run.sh TIER [ENV…] — the non-cargo test tiers: hullward's promises checked where users run it.
#
#   host    this kernel: root, uid 1000, a Docker-default container (also one with a writable
#           cgroup) and a Kubernetes-style pod
#           (scripts/matrix/container-sim.c), all on the host kernel; and the harness's control
#           (env "unconfined": no sandbox at all, every attack must be seen to succeed)
#   kernel  the stock kernels (MX_KERNELS, default "deb12 u2204 u2404 deb13") booted in qemu,
#           every case
#   matrix  host + every kernel of the matrix (deb12 u2204 u2404 deb13)
#   all     host + kernel (what scripts/test.sh runs by default, after cargo test)
#   ENV…    only these environments (e.g. `run.sh matrix deb13-6.12 docker-default`)
#
# Stages: build the tools (probe, container-sim, hullward: the debug build for the host, a static
# musl build for the guests), run each environment's cases (check.sh) into MX_OUT/ENV.log,
# evaluate every env × case × mode against expect.tsv, print the table and the closing line
# `matrix: N passed, N failed`. Anything that keeps an environment from running and is not
# hullward's doing (no qemu, a kernel that cannot be fetched or does not boot) prints
# `skipped: …` and counts neither way. Exit status 1 when a row failed.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
tier=${1:?usage: run.sh host|kernel|matrix|all [ENV...]}; shift
only=("$@")
out=$(realpath -m "${MX_OUT:-${CARGO_TARGET_DIR:-$repo/target}/matrix}")
cache=$(realpath -m "${MX_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/hullward-matrix}")
target_dir=$(realpath -m "${CARGO_TARGET_DIR:-$repo/target}")
musl=x86_64-unknown-linux-musl
declare -A kernel_env=([deb12]=deb12-6.1 [u2204]=u2204-5.15 [u2404]=u2404-6.8 [deb13]=deb13-6.12)
read -r -a kernel_list <<<"${MX_KERNELS:-deb12 u2204 u2404 deb13}"
CASES_GUEST=root,session,delegated,uid1000,unconfined
MODES=strict,nostrict,served-strict,served-nostrict
# The harness's control has no server: its "hullward" only runs what follows `--`.
CONTROL_MODES=strict,nostrict
skipped=() planned=()

skip() { echo "skipped: $*"; skipped+=("$*"); }
selected() { # ENV: is it asked for (no ENV arguments = all of the tier)
  [ ${#only[@]} -eq 0 ] && return 0
  local e; for e in "${only[@]}"; do [ "$e" = "$1" ] && return 0; done; return 1
}
plan() { # ENV CASES [MODES]: the rows this environment must produce
  local c m modes
  for c in ${2//,/ }; do
    modes=${3:-$MODES}; [ "$c" = unconfined ] && modes=$CONTROL_MODES
    for m in ${modes//,/ }; do planned+=("$1|$c|$m"); done
  done
}

# --- tools -------------------------------------------------------------------------------------
tools() {
  rm -rf "$out"; mkdir -p "$out/bin"
  cc -O2 -Wall -o "$out/bin/container-sim" "$here/container-sim.c" || return 1
  if command -v musl-gcc >/dev/null; then
    musl-gcc -static -O2 -Wall -o "$out/bin/probe" "$here/probe.c"
  else
    cc -static -O2 -Wall -o "$out/bin/probe" "$here/probe.c"
  fi || return 1
  (cd "$repo" && cargo build --locked --quiet --bin hullward) || return 1
  cp "$target_dir/debug/hullward" "$out/bin/hullward"
  cp "$here/check.sh" "$out/bin/check.sh"
  # The harness's own control: a "hullward" that enforces nothing, under which every attack must
  # be seen to succeed (expect.tsv: exposed), so that each check is shown able to fail.
  # shellcheck disable=SC2016 # the script's own $1 and $@
  printf '#!/bin/sh\n[ "$1" = --version ] && { echo "no sandbox"; exit 0; }\nwhile [ "$1" != -- ]; do shift; done\nshift\nexec "$@"\n' >"$out/bin/unconfined"
  chmod 755 "$out/bin/unconfined"
  chmod -R a+rX "$out"
}

static_hullward() {
  rustup target list --installed 2>/dev/null | grep -qx "$musl" || {
    echo "the Rust target $musl is not installed (scripts/ci-deps.sh adds it)"; return 1; }
  command -v musl-gcc >/dev/null || { echo "musl-gcc is missing (Debian: musl-tools)"; return 1; }
  (cd "$repo" && nice -n 10 cargo build --release --locked --quiet --target "$musl" --bin hullward) || return 2
  cp "$target_dir/$musl/release/hullward" "$out/bin/hullward-static"
}

# --- host environments -------------------------------------------------------------------------
# host_case ENV CASE UID WRAPPER…: check.sh under WRAPPER, in a fresh work dir that UID owns
host_case() {
  local env=$1 case=$2 uid=$3; shift 3
  local dir=$out/ws/$env-$case
  mkdir -p "$dir"; chown "$uid:$uid" "$dir"; chmod 755 "$out" "$out/ws"
  "$@" env HW="${HW_UNDER_TEST:-$out/bin/hullward}" PROBE="$out/bin/probe" WS="$dir/w" ENV="$env" CASE="$case" \
    MODES="${MODES//,/ }" sh "$out/bin/check.sh" </dev/null
}
as_uid1000() { setpriv --reuid 1000 --regid 1000 --clear-groups "$@"; }
docker_default() { "$out/bin/container-sim" --mask-proc --ro-cgroup --caps docker --seccomp docker "$@"; }
k8s_pod() { "$out/bin/container-sim" --mask-proc --ro-cgroup --caps docker --seccomp none "$@"; }
# Docker's default profile with a cgroup the container may write (a private cgroup namespace
# with delegation: podman, sysbox, a CI runner's own cgroup): Landlock-only mode with limits.
docker_cgroup() { "$out/bin/container-sim" --mask-proc --caps docker --seccomp docker "$@"; }

host_envs() {
  [ "$(id -u)" = 0 ] || { skip "host tier: needs root (container-sim and setpriv start as root)"; return; }
  local log
  if selected host; then
    plan host root,uid1000; log=$out/host.log
    { host_case host root 0; host_case host uid1000 1000 as_uid1000; } >"$log" 2>&1
  fi
  if selected unconfined; then
    plan unconfined root $CONTROL_MODES; log=$out/unconfined.log
    MODES=$CONTROL_MODES HW_UNDER_TEST=$out/bin/unconfined host_case unconfined root 0 >"$log" 2>&1
  fi
  if selected docker-default; then
    plan docker-default root,uid1000; log=$out/docker-default.log
    { host_case docker-default root 0 docker_default --
      host_case docker-default uid1000 1000 docker_default --user 1000:1000 --; } >"$log" 2>&1
  fi
  if selected docker-cgroup; then
    plan docker-cgroup root,uid1000; log=$out/docker-cgroup.log
    { host_case docker-cgroup root 0 docker_cgroup --
      host_case docker-cgroup uid1000 1000 docker_cgroup --user 1000:1000 --; } >"$log" 2>&1
  fi
  if selected k8s-pod; then
    plan k8s-pod root,uid1000; log=$out/k8s-pod.log
    { host_case k8s-pod root 0 k8s_pod --; host_case k8s-pod uid1000 1000 k8s_pod --user 1000:1000 --; } >"$log" 2>&1
  fi
}

# --- kernel environments -----------------------------------------------------------------------
kernel_envs() { # KERNEL-NAMES…
  local names=() n
  for n in "$@"; do selected "${kernel_env[$n]}" && names+=("$n"); done
  [ ${#names[@]} -gt 0 ] || return 0
  local missing=() t
  for t in qemu-system-x86_64 cpio file; do command -v $t >/dev/null || missing+=("$t"); done
  [ -x "${BUSYBOX:-/bin/busybox}" ] || missing+=(busybox-static)
  if [ ${#missing[@]} -gt 0 ]; then
    skip "kernel tier: ${missing[*]} not installed (scripts/ci-deps.sh installs them)"; return
  fi
  [ "$(id -u)" = 0 ] || { skip "kernel tier: needs root to build the guest's files owned by root"; return; }
  local why rc
  why=$(static_hullward); rc=$?
  if [ $rc = 1 ]; then skip "kernel tier: $why"; return; fi
  if [ $rc != 0 ]; then
    echo "FAIL static hullward: cargo build --target $musl failed"; build_failed=1; return
  fi
  "$here/mkinitrd.sh" "$out/initrd.gz" "$out/bin/hullward-static" "$out/bin/probe" "$out/bin/unconfined" || {
    echo "FAIL initramfs: mkinitrd.sh failed"; build_failed=1; return; }
  "$here/fetch-kernels.sh" "$cache/kernels" "${names[@]}" | tee "$out/fetch.log"
  for n in "${names[@]}"; do boot_env "$n"; done
}

boot_env() { # KERNEL-NAME
  local name=$1 env=${kernel_env[$1]} k=$cache/kernels/$1/vmlinuz
  [ -s "$k" ] || { skip "$env: kernel not fetched ($(grep "^fetch $name:" "$out/fetch.log" | tail -1))"; return; }
  local start=$SECONDS rc
  "$here/boot.sh" "$k" "$out/initrd.gz" "$out/$env.log" \
    mxenv="$env" mxcases="$CASES_GUEST" mxmodes="$MODES" mxcontrolmodes="$CONTROL_MODES"
  rc=$?
  echo "boot $env ($(cat "$cache/kernels/$name/package")): $((SECONDS - start)) s, qemu exit $rc"
  if ! grep -q "MXBOOT|$env|" "$out/$env.log"; then
    skip "$env: the kernel did not reach the guest's init (qemu exit $rc; log $out/$env.log)"; return
  fi
  plan "$env" "$CASES_GUEST"
}

# --- evaluation --------------------------------------------------------------------------------
# expect ENV CASE MODE → "EXPECT DETAIL" from the first matching row of expect.tsv; a served mode
# is held to its CLI mode's row (a call through `serve` keeps the promises of `hullward run`)
expect() {
  local e c m x f mode=${3#served-}
  while read -r e c m x f; do
    [[ -z $e || $e == \#* ]] && continue
    # shellcheck disable=SC2053 # the table's fields are globs
    [[ $1 == $e && $2 == $c && $mode == $m ]] && { echo "$x ${f:--}"; return; }
  done <"$here/expect.tsv"
  echo "run -"
}

# reason STDERR: the lines of a refusal that say why ("missing: …"), else its last line
reason() {
  local m; m=$(tr -s ' ' <<<"$1" | grep -o 'missing: [^/]*' | paste -sd ';' | sed 's/ *;/;/g; s/ *$//')
  echo "${m:-${1##* // }}"
}

# listed_dropped CHECK STDERR: --no-strict named the promise CHECK attacks among those it runs without
listed_dropped() {
  local pattern
  case $1 in
    fork_past_limit) pattern='process limit' ;;
    signal_host|abstract_host) pattern='signals|abstract' ;;
    unix_host) pattern='named Unix sockets' ;;
    proc_environ_host) pattern="the host's /proc" ;;
    tcp_*) pattern='network|egress' ;;
    env_read) pattern='deny-rule masks' ;;
    *) return 1 ;;
  esac
  grep -Eq "running without.*($pattern)" <<<"${2// \/\/ /$'\n'}"
}

passed=0 failed=0 known=0 build_failed=0
verdict() { # PASS|FAIL|KNOWN ROW TEXT
  printf '%-5s %-32s %s\n' "$1" "$2" "$3" | tee -a "$out/summary.txt"
  case $1 in PASS) passed=$((passed + 1)) ;; FAIL) failed=$((failed + 1)) ;; *) known=$((known + 1)) ;; esac
}

# judge ROW WANT MAY → sets st (PASS|FAIL) and text: what the row's lines say against WANT
judge() {
  local row=$1 want=$2 may=$3 env=${1%%|*}
  local run; run=$(grep -aoh "MXRUN|$row|.*" "$out"/*.log 2>/dev/null | head -1)
  if [ -z "$run" ]; then st=FAIL text="no result: the case ended early (log $out/$env.log)"; return; fi
  local rc=${run#*|rc=}; rc=${rc%%|*}
  local err=${run#*|err=}
  local last=${err##* // } why
  why=$(reason "$err")
  if [ "$want" = exposed ]; then exposed "$row" "$rc"; return; fi
  if [ "$rc" = 3 ]; then
    if [ -z "$err" ]; then st=FAIL text="exit 3 without a message"
    elif [ "$want" = run ]; then st=FAIL text="expected a run, refused (exit 3): $why"
    else st=PASS text="refused (exit 3): $why"; fi
    return
  fi
  if [ "$rc" != 0 ]; then st=FAIL text="exit $rc (a refusal must be exit 3 with a message): $last"; return; fi
  local broken=() dropped=() held=0 name ok answer mode=${row##*|}
  while IFS='|' read -r _ _ _ _ name ok answer; do
    [ -n "$name" ] || continue
    if [ "$ok" = held=yes ] || [[ ",$may," == *",$name,"* ]]; then held=$((held + 1))
    elif [ "${mode#served-}" = nostrict ] && listed_dropped "$name" "$err"; then dropped+=("$name")
    else broken+=("$name: $answer"); fi
  done < <(grep -aoh "MXCHK|$row|.*" "$out"/*.log)
  if [ $held -eq 0 ] && [ ${#broken[@]} -eq 0 ]; then st=FAIL text="ran, but no check answered"; return; fi
  if [ ${#broken[@]} -gt 0 ]; then
    local IFS=';'; st=FAIL text="ran, promise broken: ${broken[*]}"; return
  fi
  st=PASS text="ran, all $held checks held"
  [ "$may" != - ] && text+=" (counting $may, excused in expect.tsv)"
  [ ${#dropped[@]} -eq 0 ] || text="ran, $held checks held, ${dropped[*]} broken as --no-strict said (dropped)"
  [[ $mode == served-* ]] && text+=$(made_ahead "$row")
  [ "$want" = run ] || text+=" — runs now: set this row to run in scripts/matrix/expect.tsv"
}

# made_ahead ROW → how the served call's sandbox was made: ahead of the request (its PID 1 older
# than the 2 s pause before the call, less a margin) or on the spot (the server may not make one
# ahead here: supervisor::ready needs birth times on every path it holds)
made_ahead() {
  local age; age=$(grep -aoh "MXINFO|$1|pid1_age=.*" "$out"/*.log | head -1); age=${age##*=}
  if ! [[ $age =~ ^[0-9]+$ ]]; then echo "; ${age:-no answer}: how its sandbox was made is not seen"
  elif [ "$age" -ge 100 ]; then echo "; in a sandbox made ahead (its PID 1 $age ticks old)"
  else echo "; in a sandbox made for the request (its PID 1 $age ticks old)"; fi
}

# exposed ROW RC → st, text: with nothing enforced, every attack must be seen to succeed and every
# neighbour to work; a check that still "holds" cannot detect the breach it is there for
exposed() {
  local blind=() n=0 name ok
  [ "$2" = 0 ] || { st=FAIL text="the unconfined control exited $2"; return; }
  while IFS='|' read -r _ _ _ _ name ok _; do
    n=$((n + 1))
    case $name in
      inside_*|signal_self|fork_within_limit) [ "$ok" = held=yes ] || blind+=("$name") ;; # neighbour
      *) [ "$ok" = held=no ] || blind+=("$name") ;;
    esac
  done < <(grep -aoh "MXCHK|$1|.*" "$out"/*.log)
  if [ $n -eq 0 ]; then st=FAIL text="the unconfined control gave no check"
  elif [ ${#blind[@]} -gt 0 ]; then st=FAIL text="checks blind to an unconfined program: ${blind[*]}"
  else st=PASS text="with nothing enforced all $n checks see the breach or the neighbour working"; fi
}

# neighbour CHECK: a legitimate action (its failure is lost function, never a broken promise)
neighbour() { case $1 in inside_*|signal_self|fork_within_limit) return 0 ;; *) return 1 ;; esac; }
attacks_in() { # DETAIL → the checks in it that are attacks
  local c; for c in ${1//,/ }; do neighbour "$c" || printf '%s ' "$c"; done
}

evaluate_row() { # ENV|CASE|MODE
  local row=$1 env case mode; IFS='|' read -r env case mode <<<"$row"
  local want detail st text; read -r want detail <<<"$(expect "$env" "$case" "$mode")"
  case $want in
    run|refuse|exposed)
      if [ "${mode#served-}" = strict ] && [ "$detail" != - ] && [ -n "$(attacks_in "$detail")" ]; then
        verdict FAIL "$env $case $mode" "expect.tsv: a strict row can excuse only neighbours, not $(attacks_in "$detail")"; return
      fi
      judge "$row" "$want" "$detail"; verdict "$st" "$env $case $mode" "$text" ;;
    bug) # a known hullward bug: its symptom is counted apart; anything else is judged as refuse
      judge "$row" refuse -
      if [ "$st" = FAIL ] && [[ $text == *"$detail"* ]]; then verdict KNOWN "$env $case $mode" "known bug: $text"
      elif [ "$st" = PASS ]; then verdict PASS "$env $case $mode" "$text — the known bug is gone: set this row to run or refuse"
      else verdict FAIL "$env $case $mode" "$text"; fi ;;
    *) verdict FAIL "$env $case $mode" "expect.tsv: unknown expectation '$want'" ;;
  esac
}

evaluate() {
  : >"$out/summary.txt"
  local row; for row in "${planned[@]}"; do evaluate_row "$row"; done
  [ "$build_failed" = 0 ] || failed=$((failed + 1))
  echo "logs: $out/*.log · table: $out/summary.txt"
  [ "$known" -eq 0 ] || echo "known bugs: $known rows (marked bug in scripts/matrix/expect.tsv, counted apart)"
  local s; for s in "${skipped[@]}"; do echo "skipped: $s"; done
  echo "matrix: $passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}

case $tier in
  host|kernel|matrix|all) ;;
  *) echo "usage: run.sh host|kernel|matrix|all [ENV...]" >&2; exit 2 ;;
esac
tools || { echo "FAIL building the tools (probe, container-sim, hullward)"; echo "matrix: 0 passed, 1 failed"; exit 1; }
case $tier in
  host) host_envs ;;
  kernel) kernel_envs "${kernel_list[@]}" ;;
  matrix) host_envs; kernel_envs deb12 u2204 u2404 deb13 ;;
  all) host_envs; kernel_envs "${kernel_list[@]}" ;;
esac
evaluate
