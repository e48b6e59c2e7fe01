#!/usr/bin/env bash
# `hullward serve` under load: CALLS calls of `run /bin/true` from CONNS connections at once
# (each connection sends its share of requests at once and reads their events as they come).
# Reports throughput (calls/s over the whole burst), per-call latency from request to exit
# event (median, p99, max) and the server's resident memory: after start, and its peak (VmHWM).
#
#   scripts/bench-serve.sh [CALLS] [CONNS]     (default 200 20; BIN=path/to/hullward)
#
# Needs root (namespaces, cgroups) and python3. The machine may be shared: the load average
# before and after is printed with the numbers.
set -euo pipefail
cd "$(dirname "$0")/.."
calls=${1:-200}
conns=${2:-20}

. scripts/bench-lib.sh
bench_setup
work=$(mktemp -d "$PWD/target/bench-serve.XXXXXX")
sockdir=$(mktemp -d /tmp/hw-bench.XXXXXX)
server=
trap '[ -n "$server" ] && kill "$server" 2>/dev/null; wait 2>/dev/null; rm -rf "$work" "$sockdir"' EXIT
mkdir -p "$work/ws/src" && echo 'fn main() {}' > "$work/ws/src/main.rs" && echo 'TOKEN=abcdefgh' > "$work/ws/.env"
cd "$work/ws"
sock=$sockdir/s.sock
HULLWARD_HOME=$work/state "$BIN" serve --socket "$sock" --unattended-policy allow --hitl off </dev/null 2>"$work/serve.log" &
server=$!
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (before) on $(nproc) cores"
python3 - "$sock" "$calls" "$conns" "$server" <<'PY'
import json, socket, sys, threading, time

path, calls, conns, pid = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]

def status(field):
    for line in open(f"/proc/{pid}/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")

def connect():
    for _ in range(200):
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(path)
            return s
        except OSError:
            time.sleep(0.05)
    sys.exit("the server never listened")

def burst(n, latencies, errors):
    s = connect()
    f = s.makefile("rwb")
    sent = {}
    for i in range(n):
        sent[i] = time.perf_counter()
        f.write((json.dumps({"id": i, "method": "run", "argv": ["/bin/true"]}) + "\n").encode())
    f.flush()
    left = n
    while left:
        line = f.readline()
        if not line:
            errors.append("connection closed early")
            return
        ev = json.loads(line)
        if ev.get("event") == "exit":
            latencies.append(time.perf_counter() - sent[ev["id"]])
            if ev["code"] != 0:
                errors.append(ev)
            left -= 1
    s.close()

# Warm-up: one call, then the resident size of a warm, idle server.
burst(1, [], [])
rss_idle = status("VmRSS")
latencies, errors = [], []
per = [calls // conns + (1 if i < calls % conns else 0) for i in range(conns)]
threads = [threading.Thread(target=burst, args=(n, latencies, errors)) for n in per]
start = time.perf_counter()
for t in threads:
    t.start()
for t in threads:
    t.join()
wall = time.perf_counter() - start
latencies.sort()
pct = lambda p: latencies[min(len(latencies) - 1, int(p * len(latencies)))] * 1000
print(f"{len(latencies)}/{calls} calls from {conns} connections in {wall:.2f} s: {len(latencies)/wall:.0f} calls/s")
print(f"latency request -> exit event: median {pct(0.5):.1f} ms, p99 {pct(0.99):.1f} ms, max {latencies[-1]*1000:.1f} ms")
print(f"server resident memory: {rss_idle:.1f} MiB warm and idle, peak {status('VmHWM'):.1f} MiB")
if errors:
    sys.exit(f"errors: {errors[:5]}")
PY
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) (after)"
