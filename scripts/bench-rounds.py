#!/usr/bin/env python3
"""Summarizes the rounds of benches/serve_rounds.c (a row per name, microseconds per round).

    scripts/bench-rounds.py ROUNDS_FILE TITLE

Medians per row, each against bare and bwrap of the same rounds, the served targets of issue 11,
and with a `before` row (another build's server in the same rounds) the median of the rounds'
differences, served - before.
"""
import statistics
import sys

rows = {l.split()[0]: [int(x) / 1000 for x in l.split()[1:]] for l in open(sys.argv[1])}
med = {k: statistics.median(v) for k, v in rows.items()}
print(f"{sys.argv[2]}; medians of {len(rows['bare'])} rounds")
print(f"{'':>14}  {'median':>9}  {'min':>8}  {'/bare':>6}  {'/bwrap':>6}")
for k, v in rows.items():
    print(f"{k:>14}  {med[k]:6.2f} ms  {min(v):5.2f} ms  {med[k]/med['bare']:6.2f}  {med[k]/med['bwrap']:6.2f}")
print(f"served / bwrap: {med['served']/med['bwrap']:.2f} (target <= 0.5); "
      f"served - bare: {med['served']-med['bare']:.2f} ms (target <= 1.5)")
if "before" in rows:
    paired = statistics.median(a - b for a, b in zip(rows["served"], rows["before"]))
    print(f"served - before, median of the rounds' differences: {paired * 1000:+.0f} us")
