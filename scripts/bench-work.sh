#!/usr/bin/env bash
# What users feel on real work: one command bare, under `hullward run` and under bubblewrap, in
# ONE hyperfine run per workload (the machine may be shared: only ratios within a run mean
# anything), with the load average and the CPU time (user + sys of the whole tree).
#
#   scripts/bench-work.sh [RUNS]     (default 5; BIN=path/to/hullward to compare builds)
#                                    rows: bare, hullward (the CLI), served (through a server
#                                    started in the workload's folder), bwrap
#   BEFORE=path/to/old/hullward …    adds that binary's row (before) to the SAME run
#   ROUNDS=N                         then N interleaved rounds of the same rows (default 6; 0: none),
#                                    300 ms apart, each row against bare of its own round
#                                    (scripts/bench-work-rounds.py): rows that hyperfine runs one
#                                    after the other see the machine drift between them
#
# Workloads (generated once under target/bench-work, reused while present):
#   git-status   `git status` in a 50k-file repository (committed, clean)
#   c-build      `make -j2` of 200 small C files (each run from clean)
#   py-import    `python3 -c 'import …'`: a dozen standard-library packages
# Targets (issue 14): git status <= +10 %; builds <= +3 % CPU.
# Needs root (namespaces, cgroups), git, gcc, make, python3; installs hyperfine and bubblewrap.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
rounds=${ROUNDS:-6}
repo_dir=$PWD
FILES=${FILES:-50000}

. scripts/bench-lib.sh
bench_setup
work=$PWD/target/bench-work
mkdir -p "$work"
# System tools only: the child's home is a private tmpfs, so per-user installs are not visible.
git=/usr/bin/git
python=/usr/bin/python3
bwrap_cmd="bwrap --ro-bind / / --dev /dev --bind $work $work --unshare-net --die-with-parent"

repo=$work/repo-$FILES
make_git_repo "$repo" "$FILES"

cbuild=$work/cbuild
if [ ! -e "$cbuild/.done" ]; then
  rm -rf "$cbuild" && mkdir -p "$cbuild"
  make_c_project "$cbuild"
  touch "$cbuild/.done"
fi

sockdir=$(mktemp -d /tmp/hw-bench-work.XXXXXX)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$sockdir"' EXIT

# The CPU time (user + sys, its reaped children included: every call's sandbox) of process PID,
# in seconds.
cpu_of() {
  awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15 + $16 + $17) / hz }' "/proc/$1/stat"
}

# One workload: NAME DIR PREPARE COMMAND — bare, hullward, served (`run --connect` to a
# `hullward serve` started in DIR), bwrap; prints medians, ratios, CPU. The served row's CPU is
# the server's own over the row's calls (its warm-up calls included) divided by their number,
# plus the client's: hyperfine sees only the client.
bench() {
  local name=$1 dir=$2 prepare=$3 cmd=$4 load before=() sock=$sockdir/$1.sock cpu0 cpu1
  rm -rf "$work/serve-$name" && mkdir -p "$work/serve-$name"
  (cd "$dir" && HULLWARD_HOME=$work/serve-$name exec "$BIN" serve --socket "$sock" \
    --unattended-policy allow --hitl off </dev/null 2>>"$work/serve-$name.log") &
  server=$!
  for _ in $(seq 200); do [ -S "$sock" ] && break; sleep 0.05; done
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  [ -n "${BEFORE:-}" ] && before=(-n before "$BEFORE run -- $cmd")
  cpu0=$(cpu_of "$server")
  (cd "$dir" && hyperfine -N --warmup 2 --runs "$runs" --prepare "$prepare" \
    --export-json "$work/$name.json" \
    -n bare "$cmd" -n hullward "$BIN run -- $cmd" -n served "$BIN run --connect $sock -- $cmd" \
    -n bwrap "$bwrap_cmd $cmd" "${before[@]}" >/dev/null)
  cpu1=$(cpu_of "$server")
  python3 - "$work/$name.json" "$cpu0" "$cpu1" "$runs" <<'PY'
import json, sys
path, cpu0, cpu1, runs = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
doc = json.load(open(path))
for r in doc["results"]:
    if r["command"] == "served":
        r["system"] += (cpu1 - cpu0) / (runs + 2)
json.dump(doc, open(path, "w"))
PY
  report_against "$work/$name.json" "$name" "$load" bare
  if [ "$rounds" -gt 0 ]; then
    (cd "$dir" && python3 "$repo_dir/scripts/bench-work-rounds.py" "$rounds" 0.3 "$prepare" "$server" \
      "bare=$cmd" "hullward=$BIN run -- $cmd" "served=$BIN run --connect $sock -- $cmd" "bwrap=$bwrap_cmd $cmd" \
      ${BEFORE:+"before=$BEFORE run -- $cmd"})
  fi
  kill "$server"; wait "$server" 2>/dev/null || true; server=
}

bench git-status "$repo" "true" "$git status --porcelain"
bench c-build "$cbuild" "make -s clean" "/usr/bin/make -s -j2"
mkdir -p "$work/py"
bench py-import "$work/py" "true" \
  "$python -c 'import json, decimal, asyncio, email.parser, http.client, xml.etree.ElementTree, sqlite3, argparse, csv, subprocess, unittest, logging'"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (after)"
