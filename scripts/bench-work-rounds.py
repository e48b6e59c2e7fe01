#!/usr/bin/env python3
"""Interleaved rounds of one workload: each round runs every row once, in an order that rotates
from round to round, and reports each row against bare *of the same round* (the median of the
rounds' ratios). On a shared 2-core machine a build's time drifts by 10-20 % within minutes, so
rows that hyperfine runs one after the other compare different minutes; a round's rows share
them.

    scripts/bench-work-rounds.py ROUNDS PAUSE PREPARE SERVER_PID NAME=COMMAND...

PREPARE runs (through sh, not timed) before every timed command; PAUSE seconds separate the
commands, as an agent runtime's calls are apart (a server then has the next call's sandbox
ready). The first NAME is the baseline. Each command runs through sh -c from the current
directory. CPU is user + sys of the command's whole tree (wait4's rusage: children it reaped,
and theirs); a row whose name starts with "served" also gets the CPU the server (SERVER_PID, 0
for none) spent from the start of that command to the start of the next row: its sandboxes,
reaped by it, and its work after the call.
"""
import os
import statistics
import subprocess
import sys
import time


def server_cpu(pid):
    """User + sys of PID and of the children it reaped, in seconds."""
    if pid == 0:
        return 0.0
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    ticks = sum(int(x) for x in fields[11:15])
    return ticks / os.sysconf("SC_CLK_TCK")


def run(command):
    """Wall seconds and CPU seconds of the command's tree."""
    start = time.perf_counter()
    proc = subprocess.Popen(["sh", "-c", command], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench-work-rounds: '{command}' failed ({status})")
    return wall, usage.ru_utime + usage.ru_stime


def main():
    rounds, pause, prepare, server = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3], int(sys.argv[4])
    rows = [arg.split("=", 1) for arg in sys.argv[5:]]
    names = [name for name, _ in rows]
    wall = {name: [] for name in names}
    cpu = {name: [] for name in names}
    for r in range(rounds):
        order = rows[r % len(rows):] + rows[:r % len(rows)]
        pending = None  # a served row whose server CPU is still being counted
        for name, command in order:
            subprocess.run(["sh", "-c", prepare], stdout=subprocess.DEVNULL, check=True)
            time.sleep(pause)
            now = server_cpu(server)
            if pending:
                cpu[pending[0]][-1] += now - pending[1]
                pending = None
            w, c = run(command)
            wall[name].append(w)
            cpu[name].append(c)
            if name.startswith("served"):
                pending = (name, now)
        if pending:
            time.sleep(pause)
            cpu[pending[0]][-1] += server_cpu(server) - pending[1]
    base = names[0]
    print(f"  {rounds} interleaved rounds, {pause * 1000:.0f} ms apart; each row against {base} of the same round "
          "(median of the rounds' ratios):")
    for name in names:
        w = statistics.median(wall[name]) * 1000
        c = statistics.median(cpu[name]) * 1000
        dw = statistics.median(a / b - 1 for a, b in zip(wall[name], wall[base])) * 100
        dc = statistics.median(a / b - 1 for a, b in zip(cpu[name], cpu[base])) * 100
        spread = (max(wall[base]) / min(wall[base]) - 1) * 100
        note = f"   ({base}'s rounds spread {spread:.0f} %)" if name == base else ""
        print(f"  {name:>9}: median {w:9.1f} ms ({dw:+6.1f} %)   cpu {c:9.1f} ms ({dc:+6.1f} %){note}")


if __name__ == "__main__":
    main()
