"""Search speed of gammago builds against each other, measured in the same run.

Each build is a checkout directory with its extensions built (a worktree of an older commit, as
docs/notebook/matches/README.md makes one). For every repetition and every position, each build in turn
runs one `genmove` at a fixed number of playouts with --no-early-stop, in a fresh engine started
in its own directory; the search time comes from the engine's log line ("N playouts (...), T of
B s"), so start-up is left out. The builds alternate, so a change in the machine's load falls on
all of them; the summary gives each build's median search time per position and its ratio to
the first build's.

With --variant OPTIONS (repeatable), each build is also timed with those engine options, in the
same rounds: the cost of a configuration against the default, one build or several.

With --seconds S, each genmove gets S seconds instead (GTP `time_settings 0 S 1`: S a move) and
the summary gives the playouts each build reached: what a user's clock buys, fixed costs of a
search (set-up, the net at the root) included.

    python tools/speed_vs_build.py /tmp/base .           # the current checkout against /tmp/base
    python tools/speed_vs_build.py /tmp/base . --size 19 --playouts 8000 --reps 5
    python tools/speed_vs_build.py . --variant "--rollout-light-after 0"
    python tools/speed_vs_build.py . .                   # the same build twice: the noise
    python tools/speed_vs_build.py /tmp/base . --size 19 --seconds 1   # playouts in 1 s moves

A row given twice (a build, or a build with the same options) is timed apart, its second turn
named "DIR (#2)".
"""
import argparse
import os
import re
import shlex
import statistics
import subprocess
import sys

from tqdm import tqdm

# openings played before the timed genmove, one list of moves per position
POSITIONS = {
    9: [["E5", "C4"],
        ["E5", "C4", "G4", "D6", "F6", "C6", "E3", "G6", "D7", "C7", "E6", "F3"]],
    19: [["Q16", "D4"],
         ["Q16", "D4", "Q4", "D16", "R10", "C10", "F3", "O17", "K4", "P3", "Q3", "F17"]],
}
LOG_TIME = re.compile(r"(\d+) playouts \(.*\), ([0-9.]+) of [0-9.]+ s")


def search_time(build, size, moves, playouts, seed, extra, seconds=0.0):
    """Seconds that one genmove's search took in `build`, and its playouts; with seconds > 0
    the genmove has that many seconds (a byo-yomi of one move) instead of a playout count."""
    where = os.path.abspath(build)           # for the engine; messages name it as given
    budget = "" if seconds > 0 else f"--playouts {playouts} "
    cmd = (f"cd {shlex.quote(where)} && exec env PYTHONPATH={shlex.quote(where)} "
           f"{shlex.quote(sys.executable)} -m gammago gtp --threads 1 {budget}"
           f"--no-early-stop --seed {seed} {extra}")
    colour = "bw"
    gtp = [f"boardsize {size}", "clear_board", "komi 7"]
    if seconds > 0:
        gtp.append(f"time_settings 0 {seconds:g} 1")
    gtp += [f"play {colour[i % 2]} {m}" for i, m in enumerate(moves)]
    gtp += [f"genmove {colour[len(moves) % 2]}", "quit"]
    r = subprocess.run(["sh", "-c", cmd], input="\n".join(gtp) + "\n", capture_output=True,
                       text=True, timeout=600)
    if r.returncode != 0 or "? " in r.stdout:
        raise SystemExit(f"{build} {extra}".strip() + f": the engine failed (exit {r.returncode}):\n"
                         f"{r.stdout[-2000:]}{r.stderr[-2000:]}")
    found = LOG_TIME.findall(r.stderr)
    if not found:
        raise SystemExit(f"{build}: no search line in the engine's log:\n{r.stderr[-2000:]}")
    n, t = found[-1]
    return float(t), int(n)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("builds", nargs="+", help="checkout directories; the first is the reference")
    ap.add_argument("--size", type=int, default=9, choices=sorted(POSITIONS))
    ap.add_argument("--playouts", type=int, default=0,
                    help="playouts per genmove (default 60,000 on 9x9, 10,000 on 19x19)")
    ap.add_argument("--seconds", type=float, default=0.0,
                    help="seconds per genmove instead of a playout count; the summary gives the "
                         "playouts reached")
    ap.add_argument("--reps", type=int, default=5, help="repetitions (seeds 1..REPS)")
    ap.add_argument("--engine-args", default="",
                    help="more options for every engine (not --quiet: the search time is read from the log)")
    ap.add_argument("--variant", action="append", default=[], metavar="OPTIONS",
                    help="engine options to time as well, on every build, beside the builds "
                         "without them (repeatable)")
    a = ap.parse_args(argv)
    for d in a.builds:
        if not os.path.isdir(os.path.join(d, "gammago")):
            ap.error(f"{d}: not a gammago checkout (no gammago/ in it)")
    if a.seconds < 0 or (a.seconds and a.playouts):
        ap.error("--seconds takes a positive number, and not with --playouts")
    playouts = a.playouts or (60000 if a.size < 13 else 10000)
    positions = POSITIONS[a.size]
    # what is timed: each build as it is, then with each variant; rows are named by the build,
    # and the variant's options after it; a row given again (the same build twice, to see the
    # machine's noise) is timed apart, named with its turn: "DIR (#2)"
    runs, named = [], {}
    for d in a.builds:
        for v in [""] + a.variant:
            name = f"{d} {v}".strip()
            named[name] = named.get(name, 0) + 1
            if named[name] > 1:
                name += f" (#{named[name]})"
            runs.append((name, d, f"{a.engine_args} {v}".strip()))
    # per row and position: the search seconds, or with --seconds the playouts reached
    values = {(r, i): [] for r, _, _ in runs for i in range(len(positions))}
    jobs = [(rep, i, run) for rep in range(1, a.reps + 1) for i in range(len(positions))
            for run in runs]
    for rep, i, (r, build, extra) in tqdm(jobs, desc="genmoves", unit="move"):
        t, n = search_time(build, a.size, positions[i], playouts, rep, extra, a.seconds)
        if not a.seconds and n != playouts:
            raise SystemExit(f"{r}: searched {n} playouts, not {playouts}")
        values[r, i].append(n if a.seconds else t)
    if a.seconds:      # what the clock bought: playouts reached
        unit, fmt, head = "median playouts reached", "{:.0f}", f"{a.seconds:g} s a genmove"
    else:              # what a fixed count cost: seconds
        unit, fmt, head = "median search seconds", "{:.3f} s", f"{playouts} playouts a genmove"
    print(f"{a.size}x{a.size}, {head}, 1 thread, {a.reps} repetitions; {unit} "
          "(ratio to the first row)")
    medians = {r: [statistics.median(values[r, i]) for i in range(len(positions))]
               for r, _, _ in runs}
    first = runs[0][0]
    for r, _, _ in runs:
        print(f"  {r}: " + "; ".join(
            f"position {i + 1}: {fmt.format(m)} ({m / medians[first][i]:.3f})"
            for i, m in enumerate(medians[r])))
    return medians


if __name__ == "__main__":
    main()
