#!/usr/bin/env bash
# Throughput and memory of `hullward filter` against `cat` on the same data, in the same run.
#
# Generates SIZE_MIB (default 1024) of realistic mixed tool output — log lines, JSON lines, stack
# traces, indented and table lines, git diffs of ordinary and of protected files — with 100
# distinct secrets (50 from secret-named environment variables, 50 from a .env in the root) spread
# through it, then times, with the data in the page cache:
#   cat < data > /dev/null          and   hullward filter < data > /dev/null
#   cat data | cat > /dev/null      and   cat data | hullward filter > /dev/null
#   hullward run -- cat data > /dev/null   (the pumps: the sandboxed child's output, filtered)
# and reports peak RSS (/usr/bin/time -v) for the full size and for a 1/16 size input, to show
# that memory does not grow with the input. With BEFORE set to another hullward binary (main's, say),
# its filter and run rows are timed in the same run, each right after BIN's, with BIN's speedup.
#
# Usage: [RUNS=3] [BIN=…] [BEFORE=…] scripts/bench-filter.sh [SIZE_MIB]
#        (BIN defaults to this checkout's release build, built first; work files go to target/bench-filter)
set -euo pipefail

SIZE_MIB=${1:-1024}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK="$ROOT/target/bench-filter"
if [ -z "${BIN:-}" ]; then
  BIN="$ROOT/target/release/hullward"
  cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml"
fi
rm -rf "$WORK"
mkdir -p "$WORK/root" "$WORK/home"

# 100 secrets: 50 in the environment, 50 in the root's .env; the generator plants all of them.
python3 - "$WORK" "$SIZE_MIB" <<'PY'
import os, random, sys
work, size_mib = sys.argv[1], int(sys.argv[2])
rng = random.Random(20240501)
alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
def token(n): return "".join(rng.choice(alnum) for _ in range(n))
secrets = [f"sk_{token(rng.randint(16, 48))}" for _ in range(100)]
with open(f"{work}/env.sh", "w") as f:
    for i, s in enumerate(secrets[:50]):
        f.write(f"export BENCH_SERVICE_{i}_TOKEN='{s}'\n")
with open(f"{work}/root/.env", "w") as f:
    f.write("PORT=3000\nNODE_ENV=production\n")
    for i, s in enumerate(secrets[50:]):
        f.write(f"SERVICE_{i}_API_KEY={s}\n")

users = ["alice", "bob", "carol", "dave", "erin"]
paths = ["/api/v1/items", "/api/v1/users", "/healthz", "/api/v2/orders/search", "/static/app.js"]
def log_line():
    ts = f"2024-05-{rng.randint(1,28):02d}T{rng.randint(0,23):02d}:{rng.randint(0,59):02d}:{rng.randint(0,59):02d}.{rng.randint(0,999):03d}Z"
    lvl = rng.choice(["INFO ", "INFO ", "INFO ", "WARN ", "DEBUG", "ERROR"])
    return (f"{ts} {lvl} api::handler: request_id={token(12)} method=GET path={rng.choice(paths)}/{rng.randint(1,99999)} "
            f"status={rng.choice([200,200,200,201,304,404,500])} duration_ms={rng.randint(1,900)} user={rng.choice(users)}\n")
def json_line():
    return (f'{{"ts":"2024-05-01T12:00:{rng.randint(10,59)}Z","level":"info","msg":"job finished","job_id":"{token(10)}",'
            f'"items":{rng.randint(0,5000)},"elapsed_ms":{rng.randint(1,99999)}}}\n')
def trace():
    out = [f"Error: connection reset by peer (os error 104)\n"]
    for i in range(rng.randint(4, 12)):
        out.append(f"    at module{i}::function_{token(6)} (src/module{i}.rs:{rng.randint(1,999)}:{rng.randint(1,80)})\n")
    return "".join(out)
def table():
    return "".join(f"| {token(8)} | {rng.randint(0,1000):>6} | {rng.choice(users):<6} |\n" for _ in range(rng.randint(3, 8)))
def diff(protected):
    name = rng.choice([".env", "backend/.env.local", "secrets/key.pem"]) if protected else \
        rng.choice(["src/main.rs", "src/filter/mask.rs", "docs/README.md", "tests/cli.rs"])
    out = [f"diff --git a/{name} b/{name}\n", f"index {token(7).lower()}..{token(7).lower()} 100644\n",
           f"--- a/{name}\n", f"+++ b/{name}\n"]
    for _ in range(rng.randint(1, 4)):
        out.append(f"@@ -{rng.randint(1,500)},7 +{rng.randint(1,500)},8 @@ fn {token(8)}() {{\n")
        for _ in range(rng.randint(4, 20)):
            kind = rng.choice([" ", " ", " ", "+", "-"])
            out.append(f"{kind}    let {token(6)} = compute({token(10)}, {rng.randint(0, 999)});\n")
    return "".join(out)
def commit():
    return (f"commit {token(40).lower()}\nAuthor: Dev <dev@example.com>\nDate:   Wed May 1 12:00:00 2024 +0000\n\n"
            f"    change {token(20)}\n\n")
def block(target):
    parts, n = [], 0
    while n < target:
        r = rng.random()
        if r < 0.70: p = log_line()
        elif r < 0.82: p = json_line()
        elif r < 0.86: p = trace()
        elif r < 0.89: p = table()
        elif r < 0.91: p = commit()
        elif r < 0.99: p = diff(False)
        else: p = diff(True)
        parts.append(p); n += len(p)
    return parts

# A 4 MiB base corpus; each 4 MiB of output is the corpus with ~4 secrets planted at random lines,
# so every secret occurs about 10 times per GiB.
base = block(4 << 20)
blocks = size_mib // 4 or 1
with open(f"{work}/data", "w") as out, open(f"{work}/data-small", "w") as small:
    for b in range(blocks):
        parts = list(base)
        for _ in range(4):
            i = rng.randrange(len(parts))
            parts[i] = parts[i].rstrip("\n") + f" leaked={secrets[rng.randrange(100)]}\n"
        text = "".join(parts)
        out.write(text)
        if b < max(blocks // 16, 1):
            small.write(text)
PY

# shellcheck disable=SC1091
source "$WORK/env.sh"
export HOME="$WORK/home"
cd "$WORK/root"

bytes=$(stat -c %s "$WORK/data")
small_bytes=$(stat -c %s "$WORK/data-small")
cat "$WORK/data" > /dev/null  # into the page cache

# "wall user sys" seconds of one command, the best of RUNS (default 3) by wall time; the machine
# may be shared, so CPU time (user + sys of the measured process alone) is reported as well.
measure() { /usr/bin/time -f '%e %U %S' "$@" 2>&1 >/dev/null | tail -1; }
best() {
  local i line all=""
  for ((i = 0; i < ${RUNS:-3}; i++)); do
    line=$("$@")
    all+="$line"$'\n'
  done
  printf '%s' "$all" | sort -n | head -1
}
cat_file() { measure cat "$WORK/data"; }
filter_file() { measure "$1" filter < "$WORK/data"; }
cat_pipe() { cat "$WORK/data" | measure cat; }
filter_pipe() { cat "$WORK/data" | measure "$1" filter; }
run_cat() { measure "$1" run --config "$WORK/big-output.yaml" -- cat "$WORK/root/data"; }
report() {
  local label=$1 wall user sys
  read -r wall user sys <<<"$2"
  printf '%-42s wall %6.3f s %6s GB/s   cpu %6.3f s %6s GB/s\n' "$label" "$wall" \
    "$(echo "scale=2; $bytes / $wall / 1000000000" | bc -l)" "$(echo "$user + $sys" | bc -l)" \
    "$(echo "scale=2; $bytes / ($user + $sys) / 1000000000" | bc -l)"
}
# BIN's row, then (with BEFORE) BEFORE's row and the ratio of BEFORE's wall and CPU time to BIN's.
report_pair() {
  local label=$1 now=$2 before=$3 w1 u1 s1 w0 u0 s0
  report "$label" "$now"
  [ -n "${BEFORE:-}" ] || return 0
  report "  the same with BEFORE" "$before"
  read -r w1 u1 s1 <<<"$now"
  read -r w0 u0 s0 <<<"$before"
  printf '%-42s wall %5sx   cpu %5sx\n' "  speedup (BEFORE / BIN)" \
    "$(echo "scale=2; $w0 / $w1" | bc -l)" "$(echo "scale=2; ($u0 + $s0) / ($u1 + $s1)" | bc -l)"
}
old() { if [ -n "${BEFORE:-}" ]; then best "$1" "$BEFORE"; fi; }

ln -f "$WORK/data" "$WORK/root/data"
printf 'Sandbox:\n  Limits: {OutputBytes: %s}\n' $((bytes * 2)) > "$WORK/big-output.yaml"
t_cat=$(best cat_file)
t_filter=$(best filter_file "$BIN") b_filter=$(old filter_file)
t_cat_pipe=$(best cat_pipe)
t_filter_pipe=$(best filter_pipe "$BIN") b_filter_pipe=$(old filter_pipe)
t_run_cat=$(best run_cat "$BIN") b_run_cat=$(old run_cat)

"$BIN" filter < "$WORK/data" > "$WORK/out"
leaks=$(python3 - "$WORK" <<'PY'
import re, sys
work = sys.argv[1]
secrets = [l.split("=", 1)[1] for l in open(f"{work}/root/.env") if "API_KEY" in l]
secrets += [l.split("'")[1] for l in open(f"{work}/env.sh")]
data = open(f"{work}/out", "rb").read()
print(sum(data.count(s.encode()) for s in secrets))
PY
)
masked=$(grep -o '<secret-hidden>' "$WORK/out" | wc -l)
hidden=$(grep -c '^\[content hidden: ' "$WORK/out" || true)

rss() { /usr/bin/time -v "$BIN" filter < "$1" 2>&1 >/dev/null | awk -F': ' '/Maximum resident set size/ {print $2}'; }
rss_full=$(rss "$WORK/data")
rss_small=$(rss "$WORK/data-small")

echo "input: $bytes bytes ($((bytes >> 20)) MiB), 100 secrets; output: $masked masks, $hidden diff bodies hidden, $leaks secrets left"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores"
report "cat FILE > /dev/null" "$t_cat"
report_pair "hullward filter < FILE > /dev/null" "$t_filter" "$b_filter"
report "cat FILE | cat > /dev/null" "$t_cat_pipe"
report_pair "cat FILE | hullward filter" "$t_filter_pipe" "$b_filter_pipe"
report_pair "hullward run -- cat FILE > /dev/null" "$t_run_cat" "$b_run_cat"
echo "peak RSS of hullward filter: $rss_full KiB for $((bytes >> 20)) MiB, $rss_small KiB for $((small_bytes >> 20)) MiB"
[ "$leaks" -eq 0 ]
