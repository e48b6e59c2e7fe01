#!/usr/bin/env python3
"""Before/after of the warm walk, interleaved: one call of each binary in turn, so that a load
that changes during the run weighs on both alike (bench-walk.sh's hyperfine rows run one after
the other). Rows: the CLI's warm `run -- /bin/true` and a served call (`run --connect SOCK --
/bin/true` against a `serve` of the same binary started in the tree); medians of ROUNDS rounds.

    BIN=new/hullward BEFORE=old/hullward scripts/bench-walk-interleaved.py TREE [ROUNDS]

TREE is a tree of bench-walk.sh (target/bench-plan/tree-N). Needs root. State goes to a
temporary directory, removed at the end.
"""
import os, statistics, subprocess, sys, tempfile, time

tree, rounds = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20
bins = {"after": os.environ["BIN"], "before": os.environ["BEFORE"]}
os.chdir(tree)
scratch = tempfile.TemporaryDirectory()
servers = {}
for k, b in bins.items():
    sock = os.path.join(scratch.name, f"{k}.sock")
    env = dict(os.environ, HULLWARD_HOME=os.path.join(scratch.name, f"served-{k}"))
    argv = [b, "serve", "--socket", sock, "--unattended-policy", "allow", "--hitl", "off"]
    servers[k] = (subprocess.Popen(argv, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL), sock)
for _ in range(200):
    if all(os.path.exists(sock) for _, sock in servers.values()):
        break
    time.sleep(0.05)


def one(k, mode):
    env = dict(os.environ, HULLWARD_HOME=os.path.join(scratch.name, f"cli-{k}"))
    argv = [bins[k], "run"] + (["--connect", servers[k][1]] if mode == "served" else []) + ["--", "/bin/true"]
    start = time.perf_counter()
    subprocess.run(argv, env=env, check=True)
    return (time.perf_counter() - start) * 1000


rows = {f"{k}-{m}": [] for k in bins for m in ("warm", "served")}
for k in bins:
    for m in ("warm", "served"):
        for _ in range(3):
            one(k, m)
load = " ".join(open("/proc/loadavg").read().split()[:3])
for _ in range(rounds):
    for k in bins:
        for m in ("warm", "served"):
            rows[f"{k}-{m}"].append(one(k, m))
print(f"{tree}: {rounds} interleaved rounds, load {load} (before) on {os.cpu_count()} cores")
for name, times in rows.items():
    print(f"  {name:>14}: median {statistics.median(times):6.1f} ms  min {min(times):6.1f} ms")
for m in ("warm", "served"):
    ratio = statistics.median(rows[f"after-{m}"]) / statistics.median(rows[f"before-{m}"])
    print(f"  after / before {m}: {ratio:.2f}")
for proc, _ in servers.values():
    proc.terminate()
    proc.wait()
