#!/usr/bin/env python3
"""Queries sent together to `gammago analysis`: N valid queries written back to back (9x9 and
19x19 mixed, each a different position, a small maxVisits) to `gammago analysis --threads T`
for each T, then the input closed; prints how many came back with moveInfos, how many answered
noResults or anything else, and the time from the first line written to the last answer.

    python tools/analysis_burst.py                      # 100 queries, 1, 2 and 4 threads
    python tools/analysis_burst.py -n 20 --threads 2 --visits 50 --args "--mode rollouts"

Every query is valid and none is terminated, so every one should come back with moveInfos. A
benchmark, not a test: its times depend on the machine and its load.
"""
import argparse
import json
import os
import shlex
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = "ABCDEFGHJKLMNOPQRST"


def spread_moves(size, n):
    """n moves, Black first, on points two apart from the third line in (none is captured, so
    every prefix is a legal and different position)."""
    points = [(r, c) for r in range(2, size - 2, 2) for c in range(2, size - 2, 2)]
    n = n % (len(points) + 1)
    return [["B" if i % 2 == 0 else "W", COLUMNS[c] + str(r + 1)]
            for i, (r, c) in enumerate(points[:n])]


def queries(n, visits):
    """n queries, 9x9 and 19x19 in turn, each a different position."""
    out = []
    for i in range(n):
        size = 9 if i % 2 == 0 else 19
        out.append({"id": f"q{i}", "moves": spread_moves(size, i // 2), "rules": "chinese",
                    "komi": 7, "boardXSize": size, "boardYSize": size, "maxVisits": visits})
    return out


def burst(qs, threads, extra=()):
    """Write qs to a fresh `gammago analysis --threads threads` and read its answers to the end:
    ({id: final answer}, seconds from the first line written to the end of the output)."""
    cmd = [sys.executable, "-m", "gammago", "analysis", "--threads", str(threads), "--quiet",
           *extra]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, cwd=ROOT)
    text = "".join(json.dumps(q) + "\n" for q in qs)
    t0 = time.perf_counter()
    out, _ = p.communicate(text)
    took = time.perf_counter() - t0
    finals = {}
    for line in out.splitlines():
        d = json.loads(line)
        if d.get("isDuringSearch") is False or "error" in d:
            finals[d.get("id")] = d
    return finals, took


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-n", type=int, default=100, help="queries (default: %(default)s)")
    ap.add_argument("--threads", type=int, nargs="+", default=[1, 2, 4],
                    help="the --threads of each run (default: 1 2 4)")
    ap.add_argument("--visits", type=int, default=16, help="each query's maxVisits "
                                                           "(default: %(default)s)")
    ap.add_argument("--args", default="", help="more arguments for `gammago analysis`")
    args = ap.parse_args(argv)
    qs = queries(args.n, args.visits)
    print(f"{args.n} queries (9x9 and 19x19 in turn), maxVisits {args.visits}")
    for t in args.threads:
        finals, took = burst(qs, t, shlex.split(args.args))
        answered = sum(1 for d in finals.values() if d.get("moveInfos"))
        no_results = sum(1 for d in finals.values() if d.get("noResults"))
        other = len(qs) - answered - no_results
        print(f"--threads {t}: {answered} of {len(qs)} answered with moveInfos, {no_results} "
              f"noResults, {other} other or missing; {took:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
