#!/usr/bin/env python3
"""Before/after of one CLI call, in pairs: each round runs `run -- /bin/true` of both builds, the
two taking turns at going first, 10 ms apart, and the result is the median of the rounds'
differences. A load that changes during the run weighs on both alike; hyperfine's rows, run one
after the other, cannot give that.

    scripts/bench-cli-pairs.py NEW/hullward OLD/hullward [ROUNDS] [-- ARGS...]

Runs in the current directory (the workspace), each build with a state directory of its own in
a temporary directory, removed at the end. ARGS replace `run -- /bin/true`. Needs root.
"""
import os, shutil, statistics, sys, tempfile, time

argv = sys.argv[1:]
extra = argv[argv.index("--") + 1:] if "--" in argv else ["run", "--", "/bin/true"]
argv = argv[: argv.index("--")] if "--" in argv else argv
new, old = argv[0], argv[1]
rounds = int(argv[2]) if len(argv) > 2 else 200
scratch = tempfile.mkdtemp()


def one(binary, state):
    env = dict(os.environ, HULLWARD_HOME=os.path.join(scratch, state))
    start = time.perf_counter()
    pid = os.posix_spawn(binary, [binary] + extra, env)
    _, status = os.waitpid(pid, 0)
    took = (time.perf_counter() - start) * 1000
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{binary} {' '.join(extra)} failed")
    return took


try:
    for _ in range(5):
        one(new, "new")
        one(old, "old")
    load = " ".join(open("/proc/loadavg").read().split()[:3])
    times = {"new": [], "old": []}
    diffs = []
    for i in range(rounds):
        order = ("new", "old") if i % 2 else ("old", "new")
        took = {}
        for k in order:
            took[k] = one(new if k == "new" else old, k)
            time.sleep(0.01)
        for k in took:
            times[k].append(took[k])
        diffs.append(took["new"] - took["old"])
    print(f"CLI pairs, {rounds} rounds, load {load} (before): "
          f"new {statistics.median(times['new']):.2f} ms, old {statistics.median(times['old']):.2f} ms, "
          f"paired difference {statistics.median(diffs) * 1000:+.0f} us")
finally:
    shutil.rmtree(scratch, ignore_errors=True)
