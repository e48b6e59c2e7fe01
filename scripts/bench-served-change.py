#!/usr/bin/env python3
"""Before/after of a served call when one directory changed since the last call, in pairs: what
an agent's calls in a git repository look like (git creates and removes `.git/index.lock` on
every run, so the change tracker always reports `.git` changed).

    scripts/bench-served-change.py NEW/hullward OLD/hullward [ROUNDS] [-- ARGV...]

Starts `serve` of both builds in the current directory (each with a state directory of its own,
removed at the end), and in each round, for each server in turn (taking turns at going first),
creates and removes a file in the first subdirectory of the current directory, waits 50 ms, and
times one `run` of ARGV (default /bin/true) from its request to its exit event; rounds are
300 ms apart. Prints both medians and the median of the rounds' differences. Needs root.
"""
import json, os, shutil, socket, statistics, subprocess, sys, tempfile, time

argv = sys.argv[1:]
program = argv[argv.index("--") + 1:] if "--" in argv else ["/bin/true"]
argv = argv[: argv.index("--")] if "--" in argv else argv
new, old = argv[0], argv[1]
rounds = int(argv[2]) if len(argv) > 2 else 20
scratch = tempfile.mkdtemp()
subdir = next(e.path for e in sorted(os.scandir("."), key=lambda e: e.name) if e.is_dir())
lock = os.path.join(subdir, ".hw-bench-change")


def serve(binary, name):
    state, sock = os.path.join(scratch, name), os.path.join(scratch, name + ".sock")
    env = dict(os.environ, HULLWARD_HOME=state)
    flags = ["serve", "--socket", sock, "--unattended-policy", "allow", "--hitl", "off"]
    proc = subprocess.Popen([binary] + flags, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(400):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    conn = socket.socket(socket.AF_UNIX)
    conn.connect(sock)
    stream = conn.makefile("rw")
    stream.write(json.dumps({"id": 0, "method": "hello", "human": False}) + "\n")
    stream.flush()
    stream.readline()
    return proc, stream


def call(stream, call_id):
    open(lock, "w").close()
    os.unlink(lock)
    time.sleep(0.05)
    start = time.perf_counter()
    stream.write(json.dumps({"id": call_id, "method": "run", "argv": program}) + "\n")
    stream.flush()
    while True:
        event = json.loads(stream.readline())
        if event.get("id") == call_id and event.get("event") == "exit":
            if event.get("code") != 0:
                sys.exit(f"the call failed: {event}")
            return (time.perf_counter() - start) * 1000


servers = {"new": serve(new, "new"), "old": serve(old, "old")}
try:
    times = {"new": [], "old": []}
    for n in range(3 + rounds):
        order = ["new", "old"] if n % 2 == 0 else ["old", "new"]
        for name in order:
            took = call(servers[name][1], n + 1)
            if n >= 3:
                times[name].append(took)
            time.sleep(0.3)
    median = statistics.median
    paired = median(a - b for a, b in zip(times["new"], times["old"]))
    print(f"served with {subdir} changed before each call, {rounds} rounds: new {median(times['new']):.2f} ms, "
          f"old {median(times['old']):.2f} ms, paired difference {paired:+.2f} ms")
finally:
    for proc, _ in servers.values():
        proc.terminate()
        proc.wait()
    shutil.rmtree(scratch)
