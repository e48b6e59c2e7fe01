#!/usr/bin/env bash
# Whole-call time of `hullward run -- /bin/true` in big workspaces, where the deny-glob walk of
# the root (issue 14) is what grows: cold (no walk index — a fresh HULLWARD_HOME before every run,
# as for the first call on a tree) and warm (the index of the previous call, nothing changed),
# with bare /bin/true and bubblewrap rows in the SAME hyperfine run (the machine may be shared:
# only ratios within one run mean anything), as medians with the load average.
#
#   scripts/bench-walk.sh [FILES…]     (default 10000 100000; BIN=path/to/hullward, RUNS=N)
#   BEFORE=path/to/old/hullward …      adds that binary's cold and warm rows to the SAME run
#                                      (before-cold, before-warm: a before/after table)
#   scripts/bench-walk.sh 1000000      the 1M-file root too (BENCH_WALK_1M=1 does the same): it
#                                      takes minutes to create, once
#
# The served rows (served, and before-served with BEFORE): `hullward run --connect SOCK -- /bin/true`
# against a `hullward serve` started in the tree for the row's binary (warm: its index is in
# memory and, where the kernel allows, its change tracker tells it nothing changed). The client
# process is part of the row's time. Then, per size, the same servers paced (benches/serve_rounds.c,
# 300 ms between calls, at most 20 rounds; with BEFORE, that build's server in the same rounds).
#
# The workspaces are those of benches/plan.rs (`make_plan_tree` in bench-lib.sh: directories of
# 50 files, a `.env` in every 10th), under target/bench-plan/tree-N, created once and reused.
# Every row starts through `env HULLWARD_HOME=…` (hyperfine -N sets no variables), so the ratios
# compare like with like.
# Target (issue 14): a warm call on a 1M-file root < 20 ms.
# Needs root (namespaces, cgroups), python3; installs hyperfine and bubblewrap when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-30}
paced=$((runs < 20 ? runs : 20))
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(10000 100000)
[ "${BENCH_WALK_1M:-0}" = 1 ] && [[ " ${sizes[*]} " != *" 1000000 "* ]] && sizes+=(1000000)

. scripts/bench-lib.sh
bench_setup
base=$PWD/target/bench-plan
work=$(mktemp -d "$PWD/target/bench-walk.XXXXXX")
sockdir=$(mktemp -d /tmp/hw-bench-walk.XXXXXX)
servers=()
gcc -O2 -o "$work/serve_rounds" benches/serve_rounds.c
trap 'for p in "${servers[@]}"; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work" "$sockdir"' EXIT

# Starts `BINARY serve` in TREE on SOCKET with state STATE and waits for its socket.
serve_in() {
  local binary=$1 tree=$2 socket=$3 state=$4
  # `exec`: the pid is the server's own, for the trap to stop it.
  (cd "$tree" && HULLWARD_HOME=$state exec "$binary" serve --socket "$socket" --unattended-policy allow \
    --hitl off </dev/null 2>>"$work/serve.log") &
  servers+=($!)
  for _ in $(seq 200); do [ -S "$socket" ] && return; sleep 0.05; done
  echo "the server on $socket never listened" >&2; exit 1
}

for files in "${sizes[@]}"; do
  tree=$base/tree-$files
  make_plan_tree "$tree" "$files"
  cold=$work/cold-$files
  warm=$work/warm-$files
  mkdir -p "$warm"
  before=()
  serve_in "$BIN" "$tree" "$sockdir/after-$files.sock" "$work/served-$files"
  if [ -n "${BEFORE:-}" ]; then
    mkdir -p "$warm-before"
    serve_in "$BEFORE" "$tree" "$sockdir/before-$files.sock" "$work/served-before-$files"
    # Its own state directories: an index file is the version's own (the fingerprint names it).
    before=(--prepare "rm -rf $cold-before" -n before-cold "env HULLWARD_HOME=$cold-before $BEFORE run -- /bin/true"
      --prepare true -n before-warm "env HULLWARD_HOME=$warm-before $BEFORE run -- /bin/true"
      --prepare true -n before-served "env HULLWARD_HOME=$warm-before $BEFORE run --connect $sockdir/before-$files.sock -- /bin/true")
  fi
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  # One --prepare per command, in order: only the cold rows throw their state away (the warm
  # rows' warm-up calls write their index).
  (cd "$tree" && hyperfine -N --warmup 3 --runs "$runs" --export-json "$work/walk-$files.json" \
    --prepare true --prepare "rm -rf $cold" --prepare true --prepare true \
    -n bare "env HULLWARD_HOME=$warm /bin/true" \
    -n cold "env HULLWARD_HOME=$cold $BIN run -- /bin/true" \
    -n warm "env HULLWARD_HOME=$warm $BIN run -- /bin/true" \
    -n bwrap "env HULLWARD_HOME=$warm bwrap --ro-bind / / --dev /dev --unshare-net --die-with-parent true" \
    --prepare true -n served "env HULLWARD_HOME=$warm $BIN run --connect $sockdir/after-$files.sock -- /bin/true" \
    "${before[@]}" >/dev/null)
  python3 - "$work/walk-$files.json" "$files" "$load" "$(nproc)" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
med = {r["command"]: r["median"] * 1000 for r in res}
files, load, cores = int(sys.argv[2]), sys.argv[3], sys.argv[4]
print(f"{files} files; load average {load} (before) on {cores} cores; medians of one hyperfine run")
print(f"{'':>11}  {'median':>10}  {'min':>10}  {'/bare':>7}  {'/bwrap':>7}")
for r in res:
    k = r["command"]
    print(f"{k:>11}  {med[k]:7.2f} ms  {r['min'] * 1000:7.2f} ms  {med[k] / med['bare']:7.2f}  "
          f"{med[k] / med['bwrap']:7.2f}")
print(f"warm / cold: {med['warm'] / med['cold']:.2f}; warm / bwrap: {med['warm'] / med['bwrap']:.2f}"
      + (f"; warm {med['warm']:.1f} ms (target < 20 ms)" if files >= 1_000_000 else ""))
if "before-warm" in med:
    print(f"after / before: cold {med['cold'] / med['before-cold']:.2f}, "
          f"warm {med['warm'] / med['before-warm']:.2f}, served {med['served'] / med['before-served']:.2f}")
PY
  # Paced: calls 300 ms apart on one connection (an agent's calls come seconds apart; the next
  # call's sandbox is then made before it comes), bare and bwrap in every round.
  rounds_load=$(cut -d' ' -f1-3 /proc/loadavg)
  (cd "$tree" && "$work/serve_rounds" "$sockdir/after-$files.sock" /bin/true "$paced" 300 \
    ${BEFORE:+"$sockdir/before-$files.sock"} >"$work/rounds-$files.txt")
  python3 scripts/bench-rounds.py "$work/rounds-$files.txt" \
    "$files files served, paced (300 ms apart), load average $rounds_load (before)"
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (after)"
