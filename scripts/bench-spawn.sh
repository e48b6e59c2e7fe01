#!/usr/bin/env bash
# Per-call cost of `hullward run` against its neighbours, all in ONE hyperfine run (the machine may
# be shared: only ratios within one run mean anything), as medians with the load average.
#
#   scripts/bench-spawn.sh [RUNS]          (default 200; BIN=path/to/hullward to compare builds)
#   BEFORE=path/to/old/hullward …          adds that binary's hullward, served and connect rows
#                                          (before-*, a server of its own) to the SAME runs
#
# Rows (hyperfine -N: no shell in between; warm-up first):
#   bare      /bin/true
#   floor     benches/floor.c (built here with gcc): the same isolation as hullward's child —
#             PID/mount/IPC/cgroup/network namespaces, the same fresh-root view (the paths of
#             `hullward explain --json`), Landlock, seccomp — and nothing else
#   hullward  hullward run -- /bin/true        (default profile, in a small workspace)
#   served    benches/serve_client.c: one `run /bin/true` request to a `hullward serve` started
#             here on the same workspace (release build, --unattended-policy allow), waiting for
#             the call's exit event — the per-call cost an agent runtime pays on a warm server
#   connect   hullward run --connect SOCK -- /bin/true (the CLI sending the call to that server)
#   bwrap     bwrap --ro-bind / / --dev /dev --unshare-net --die-with-parent true
#   firejail  firejail --quiet --noprofile --net=none true   (only when installed)
# Another row is one line in `rows` below. A second run, "paced", measures bare, served, connect
# and bwrap again with a 30 ms pause before each call (hyperfine --prepare, not timed): an agent
# runtime's calls come seconds apart, so the server has made the next call's sandbox by then
# (supervisor::ready), which back-to-back calls leave it no time to.
# A third table, "one connection": what an agent runtime sees, a connection kept open and each
# call timed by the client from its request to its exit event (benches/serve_rounds.c), round by
# round with bare and bwrap timed the same way by the same process, 30 ms before each (with
# BEFORE, that build's server in the same rounds, and the median of the rounds' differences);
# the served rows above also pay the client's own process start, which costs what bare costs.
# With BEFORE, last, both builds' CLI calls in pairs (scripts/bench-cli-pairs.py).
# Then: the plan time for 10k- and 100k-file workspaces
# (cargo bench --bench plan). Targets (issue 14): hullward <= 1.0 x bwrap; (issue 11) served <=
# 0.5 x bwrap and within 1.5 ms of bare, connect not slower than bwrap.
# Needs root (namespaces, cgroups), gcc, python3. Installs hyperfine and bubblewrap when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
runs=${1:-200}

. scripts/bench-lib.sh
bench_setup
work=$(mktemp -d "$PWD/target/bench-spawn.XXXXXX")
sockdir=$(mktemp -d /tmp/hw-bench.XXXXXX)
servers=()
trap 'for s in "${servers[@]}"; do kill "$s" 2>/dev/null; done; wait 2>/dev/null; rm -rf "$work" "$sockdir"' EXIT
gcc -O2 -o "$work/floor" benches/floor.c
gcc -O2 -o "$work/serve_client" benches/serve_client.c
gcc -O2 -o "$work/serve_rounds" benches/serve_rounds.c
mkdir -p "$work/ws/src" && echo 'fn main() {}' > "$work/ws/src/main.rs" && echo 'TOKEN=abcdefgh' > "$work/ws/.env"
cd "$work/ws"

# The floor gets the view hullward's plan has for this workspace.
floor_args=$("$BIN" explain --json -- /bin/true | python3 -c '
import json, shlex, sys
plan = json.load(sys.stdin)["plan"]
args = []
for r in plan["landlock"]["rules"]:
    if r["access"] in ("read+exec", "read"):
        args += ["-r", r["path"]]
view = plan["view"]
args += [a for p in view["read_write"] for a in ("-w", p)]
if view.get("home", {}).get("kind") == "private tmpfs":
    args += ["-t", view["home"]["path"]]
print(shlex.join(args))')

# serve_here BIN SOCK STATE: a server for the served and connect rows, on the same workspace;
# ready once a call answers.
serve_here() {
  HULLWARD_HOME=$3 "$1" serve --socket "$2" --unattended-policy allow --hitl off </dev/null 2>"$3.log" &
  servers+=($!)
  for _ in $(seq 100); do
    "$work/serve_client" "$2" /bin/true 2>/dev/null && return
    sleep 0.05
  done
}
sock=$sockdir/s.sock
serve_here "$BIN" "$sock" "$work/state"

# name | command (hyperfine -N splits it like a shell would)
rows=(
  "bare|/bin/true"
  "floor|$work/floor $floor_args -- /bin/true"
  "hullward|$BIN run -- /bin/true"
  "served|$work/serve_client $sock /bin/true"
  "connect|$BIN run --connect $sock -- /bin/true"
  "bwrap|bwrap --ro-bind / / --dev /dev --unshare-net --die-with-parent true"
)
command -v firejail >/dev/null && rows+=("firejail|firejail --quiet --noprofile --net=none true")
if [ -n "${BEFORE:-}" ]; then
  serve_here "$BEFORE" "$sockdir/before.sock" "$work/state-before"
  rows+=(
    "before-hullward|$BEFORE run -- /bin/true"
    "before-served|$work/serve_client $sockdir/before.sock /bin/true"
    "before-connect|$BEFORE run --connect $sockdir/before.sock -- /bin/true"
  )
fi

args=()
for row in "${rows[@]}"; do
  args+=(-n "${row%%|*}" "${row#*|}")
done
load=$(cut -d' ' -f1-3 /proc/loadavg)
hyperfine -N --warmup 20 --runs "$runs" --export-json "$work/spawn.json" "${args[@]}" >/dev/null

# One table per hyperfine run: each row's median and min, its ratios to bare, the floor (when the
# run has one) and bwrap, then the targets' ratios.
summary() {
  python3 - "$@" <<'EOF'
import json, sys
path, title = sys.argv[1], sys.argv[2]
res = json.load(open(path))["results"]
med = {r["command"]: r["median"] * 1000 for r in res}
bases = [b for b in ("bare", "floor", "bwrap") if b in med]
print(title)
print(f"{'':>14}  {'median':>9}  {'min':>8}" + "".join(f"  {'/' + b:>6}" for b in bases))
for r in res:
    k = r["command"]
    print(f"{k:>14}  {med[k]:6.2f} ms  {r['min']*1000:5.2f} ms" + "".join(f"  {med[k]/med[b]:6.2f}" for b in bases))
if "hullward" in med:
    print(f"hullward / bwrap: {med['hullward']/med['bwrap']:.2f} (target <= 1.0); "
          f"hullward - floor: {med['hullward']-med['floor']:.2f} ms")
print(f"served / bwrap: {med['served']/med['bwrap']:.2f} (target <= 0.5); "
      f"served - bare: {med['served']-med['bare']:.2f} ms (target <= 1.5); "
      f"connect / bwrap: {med['connect']/med['bwrap']:.2f} (target <= 1.0)")
if "before-served" in med:
    print(f"served after / before: {med['served']/med['before-served']:.2f}; "
          f"connect after / before: {med['connect']/med['before-connect']:.2f}"
          + (f"; hullward after / before: {med['hullward']/med['before-hullward']:.2f}" if "before-hullward" in med else ""))
EOF
}
summary "$work/spawn.json" "load average $load (before) on $(nproc) cores; medians of one hyperfine run"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (after)"

paced=()
for row in "${rows[@]}"; do
  case ${row%%|*} in bare|served|connect|bwrap|before-served|before-connect) paced+=(-n "${row%%|*}" "${row#*|}") ;; esac
done
load=$(cut -d' ' -f1-3 /proc/loadavg)
hyperfine -N --warmup 10 --runs "$runs" --prepare 'sleep 0.03' --export-json "$work/paced.json" "${paced[@]}" >/dev/null
summary "$work/paced.json" "paced (30 ms between calls), load average $load (before); medians of one hyperfine run"

# The one-connection table: each round times bare, served, (with BEFORE: that build's server,
# right after served, on a connection of its own) and bwrap in this order, so that a noisy
# stretch of the machine falls on every row of that round.
rounds_load=$(cut -d' ' -f1-3 /proc/loadavg)
"$work/serve_rounds" "$sock" /bin/true "$runs" 30 ${BEFORE:+"$sockdir/before.sock"} >"$work/rounds.txt"
python3 "$repo/scripts/bench-rounds.py" "$work/rounds.txt" "one connection, load average $rounds_load (before)"
# With BEFORE, the CLI of both builds in pairs (scripts/bench-cli-pairs.py), in this workspace.
if [ -n "${BEFORE:-}" ]; then
  python3 "$repo/scripts/bench-cli-pairs.py" "$BIN" "$BEFORE" "$runs"
fi
cd - >/dev/null
cargo bench --quiet --bench plan 2>/dev/null | grep '^plan' || true
