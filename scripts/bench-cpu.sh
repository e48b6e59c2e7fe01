#!/usr/bin/env bash
# CPU per call — what a call costs the machine, which load on a shared machine barely moves (wall
# times do: see bench-spawn.sh for those) — for one or more hullward builds, one after another.
#
#   scripts/bench-cpu.sh [N] [BIN...]     (default 200 calls; default BIN target/release/hullward)
#
# Per build: `hullward --hitl off run -- /bin/true` N times, user + sys of hullward and its
# children per call; then a `hullward serve` on the same small workspace answering N
# benches/serve_client.c `run /bin/true` requests one after another: the server process's own
# utime + stime per call and its children's (from /proc/PID/stat, clock ticks).
# Needs root (namespaces, cgroups), gcc.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-200}
shift || true
bins=("$@")
[ ${#bins[@]} -gt 0 ] || bins=("$PWD/target/release/hullward")
work=$(mktemp -d "$PWD/target/bench-cpu.XXXXXX")
sockdir=$(mktemp -d /tmp/hw-bench.XXXXXX)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work" "$sockdir"' EXIT
gcc -O2 -o "$work/serve_client" benches/serve_client.c
mkdir -p "$work/ws"
cd "$work/ws"
tick=$(getconf CLK_TCK)
for bin in "${bins[@]}"; do
  TIMEFORMAT='%U %S'
  cli=$( { time (for _ in $(seq "$n"); do "$bin" --hitl off run -- /bin/true; done); } 2>&1 | tail -1)
  sock=$sockdir/s.sock
  rm -f "$sock"
  HULLWARD_HOME=$work/state "$bin" serve --socket "$sock" --unattended-policy allow --hitl off \
    </dev/null 2>"$work/serve.log" &
  server=$!
  for _ in $(seq 100); do "$work/serve_client" "$sock" /bin/true 2>/dev/null && break; sleep 0.1; done
  read -r u0 s0 cu0 cs0 < <(awk '{print $14, $15, $16, $17}' "/proc/$server/stat")
  for _ in $(seq "$n"); do "$work/serve_client" "$sock" /bin/true >/dev/null; done
  read -r u1 s1 cu1 cs1 < <(awk '{print $14, $15, $16, $17}' "/proc/$server/stat")
  kill "$server"
  wait "$server" 2>/dev/null || true
  server=
  awk -v name="$bin" -v cli="$cli" -v n="$n" -v t="$tick" \
    -v own=$((u1 - u0 + s1 - s0)) -v kids=$((cu1 - cu0 + cs1 - cs0)) 'BEGIN {
      split(cli, c, " ")
      printf "%s\n  CLI call: %.2f ms CPU; served call: server %.2f ms, its children %.2f ms\n",
        name, (c[1] + c[2]) * 1000 / n, own * 1000 / t / n, kids * 1000 / t / n }'
done
