#!/usr/bin/env bash
# The cost of `--workspace overlay` next to `direct`, in ONE hyperfine run per workload (the
# machine may be shared: only differences within a run mean anything), with the load average
# and the CPU time (user + sys of the whole tree).
#
#   scripts/bench-overlay.sh [RUNS]     (default 10; BIN=path/to/hullward to compare builds)
#
# Workloads (generated under target/bench-overlay; the git repository is bench-work's, shared):
#   true         `hullward run -- /bin/true` (a call that writes nothing)
#   git-status   `git status --porcelain` in a 50k-file repository (committed, clean: a call
#                that reads a lot and writes nothing)
#   c-build      `make -j2` of 200 small C files, from clean; the overlay run applies its
#                201 objects and the program after the call
#   apply-10k    a call that rewrites 10,000 files, applied after it (direct: written in place)
# Targets (issue 13): overlay adds < 2 ms to a call that writes nothing, < 10 % to a build.
# Needs root, git, gcc, make; installs hyperfine.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}

. scripts/bench-lib.sh
bench_setup
work=$PWD/target/bench-overlay
rm -rf "$work"
mkdir -p "$work/home" "$work/true"
export HULLWARD_HOME=$work/home
hw="$BIN run --hitl off --timeout 10m"

# One workload: NAME, then hyperfine's options; the commands are named direct and overlay.
# Prints the medians, overlay's difference to direct (ms and %), and the CPU of both.
pair() {
  local name=$1 load
  shift
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  hyperfine -N --export-json "$work/$name.json" "$@" >/dev/null
  report_against "$work/$name.json" "$name" "$load" direct
}

pair true -w 3 -r "$runs" \
  -n direct "$hw --root $work/true -- /bin/true" \
  -n overlay "$hw --root $work/true --workspace overlay -- /bin/true"

repo=$PWD/target/bench-work/repo-50000
make_git_repo "$repo" 50000
(cd "$repo" && pair git-status -w 2 -r "$((runs < 5 ? runs : 5))" \
  -n direct "$hw --root $repo -- /usr/bin/git status --porcelain" \
  -n overlay "$hw --root $repo --workspace overlay -- /usr/bin/git status --porcelain")

cbuild=$work/cbuild
mkdir -p "$cbuild"
make_c_project "$cbuild"
pair c-build -w 1 -r "$((runs < 3 ? runs : 3))" \
  -p "make -s -C $cbuild clean" \
  -n direct "$hw --root $cbuild -- /usr/bin/make -s -j2" \
  -n overlay "$hw --root $cbuild --workspace overlay -- /usr/bin/make -s -j2"

many=$work/many
mkdir -p "$many"
python3 - "$many" <<'PY'
import os, sys
root = sys.argv[1]
for i in range(10000):
    d = os.path.join(root, f"d{i // 500}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"f{i}.txt"), "w") as f:
        f.write(f"line {i}\n")
PY
script='for d in d*; do for f in $d/*.txt; do echo changed >> $f; done; done'
pair apply-10k -w 1 -r 3 \
  -n direct "$hw --root $many -- /bin/sh -c '$script'" \
  -n overlay "$hw --root $many --workspace overlay -- /bin/sh -c '$script'"
echo "backups kept: $(du -sh "$HULLWARD_HOME/backups" | cut -f1) (capped at 1 GiB)"
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (after)"
