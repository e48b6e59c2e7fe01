#!/usr/bin/env bash
# Per-call cost of the workspace protections (issue 9: pins, read-only binds, stand-ins, Read
# globs as Landlock rules, deny paths through symlinks) — one hyperfine run, medians, ratios.
#
#   BEFORE=path/to/old/hullward scripts/bench-view.sh [RUNS]     (default 200; BIN as in bench-lib)
#
# Rows (hyperfine -N; warm-up first), each `run -- /bin/true` in the same workspace: a git
# repository with a tracked .env.example, a nested repository, a policy file in .agent/, a
# persistence file, and 200 source files:
#   bare            /bin/true
#   before-plain    BEFORE, no flags
#   after-plain     BIN, no flags
#   before-guarded  BEFORE with --read 'src/**' --read '**/*.md' --deny alias/dir/secret.txt
#   after-guarded   BIN with the same flags (the Read globs and the symlinked deny enforced)
# Needs root, git, python3. Installs hyperfine and bubblewrap when missing (bench-lib).
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-200}
: "${BEFORE:?set BEFORE to the hullward binary to compare against}"

. scripts/bench-lib.sh
bench_setup
work=$(mktemp -d "$PWD/target/bench-view.XXXXXX")
trap 'rm -rf "$work"' EXIT
ws=$work/ws
mkdir -p "$ws/src" "$ws/real/dir" "$ws/.agent" "$ws/sub"
for i in $(seq 1 200); do echo "fn f$i() {}" > "$ws/src/f$i.rs"; done
echo 'API_KEY=example' > "$ws/.env.example"
echo 'TOKEN=abcdefgh' > "$ws/.env"
echo 'secret' > "$ws/real/dir/secret.txt"
ln -s real "$ws/alias"
echo 'Sandbox: {Timeout: 30s}' > "$ws/.agent/hullward.yaml"
echo 'use flake' > "$ws/.envrc"
echo '# notes' > "$ws/README.md"
gitc() { git -c user.name=b -c user.email=b@b -c advice.addEmbeddedRepo=false "$@"; }
(cd "$ws" && touch -d '2024-01-01' .env.example && git init -q -b main sub \
  && gitc -C sub commit -q --allow-empty -m sub && git init -q -b main . && gitc add -A && gitc commit -qm one)
cd "$ws"
guard=(--config .agent/hullward.yaml --read 'src/**' --read '**/*.md' --deny alias/dir/secret.txt)
g="${guard[*]}"
rows=(
  "bare|/bin/true"
  "before-plain|$BEFORE run -- /bin/true"
  "after-plain|$BIN run -- /bin/true"
  "before-guarded|$BEFORE run $g -- /bin/true"
  "after-guarded|$BIN run $g -- /bin/true"
)
args=()
for row in "${rows[@]}"; do
  args+=(-n "${row%%|*}" "${row#*|}")
done
load=$(cut -d' ' -f1-3 /proc/loadavg)
hyperfine -N --warmup 20 --runs "$runs" --export-json "$work/view.json" "${args[@]}" >/dev/null

python3 - "$work/view.json" "$load" "$(nproc)" <<'PY'
import json, sys
res = json.load(open(sys.argv[1]))["results"]
med = {r["command"]: r["median"] * 1000 for r in res}
print(f"load average {sys.argv[2]} (before) on {sys.argv[3]} cores; medians of one hyperfine run")
for r in res:
    k = r["command"]
    print(f"{k:>15}  {med[k]:6.2f} ms  min {r['min']*1000:5.2f} ms")
for kind in ("plain", "guarded"):
    b, a = med[f"before-{kind}"], med[f"after-{kind}"]
    print(f"{kind:>8}: after - before = {a-b:+.2f} ms ({a/b:.3f} x)")
PY
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (after)"
