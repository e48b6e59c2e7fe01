#!/usr/bin/env bash
# Per-call overhead of `hullward run` against a bare exec and bubblewrap, in one run, as medians.
#
#   scripts/bench-spawn.sh [RUNS]
#
# Measures (hyperfine, no shell in between, warm-up first):
#   1. /bin/true                                        bare exec
#   2. hullward run -- /bin/true                        default profile, in a small workspace
#   3. bwrap --ro-bind / / --dev /dev --unshare-net true
# then the plan time for 10k- and 100k-file workspaces (cargo bench --bench plan).
# Targets (issue 4): hullward - bare <= 1.5 ms, and hullward <= bwrap / 2; plan(100k) < 100 ms.
# Needs root (namespaces, cgroups). Installs hyperfine and bubblewrap when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-300}

need=()
command -v hyperfine >/dev/null || need+=(hyperfine)
command -v bwrap >/dev/null || need+=(bubblewrap)
if [ ${#need[@]} -gt 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

cargo build --release --quiet
bin=$PWD/target/release/hullward
work=$(mktemp -d "$PWD/target/bench-spawn.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src" && echo 'fn main() {}' > "$work/src/main.rs" && echo 'TOKEN=abcdefgh' > "$work/.env"
cd "$work"

hyperfine -N --warmup 30 --runs "$runs" --export-json "$work/spawn.json" \
  -n bare '/bin/true' \
  -n hullward "$bin run -- /bin/true" \
  -n bwrap 'bwrap --ro-bind / / --dev /dev --unshare-net true' >/dev/null

python3 - "$work/spawn.json" <<'EOF'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
med = {k: v["median"] * 1000 for k, v in r.items()}
for k in ("bare", "hullward", "bwrap"):
    print(f"{k:>9}: median {med[k]:6.2f} ms  (mean {r[k]['mean']*1000:6.2f} ms, min {r[k]['min']*1000:6.2f} ms)")
print(f"overhead above bare exec: {med['hullward'] - med['bare']:.2f} ms (target <= 1.5 ms)")
print(f"hullward / bwrap:         {med['hullward'] / med['bwrap']:.2f} (target <= 0.5)")
EOF
cd - >/dev/null
cargo bench --quiet --bench plan 2>/dev/null | grep '^plan'
