#!/usr/bin/env python3
"""Soak test: many games in ONE gammago engine process against GNU Go, with the commands a GUI
or server sends between moves, counting what goes wrong and watching the engine's memory.

    nice -n 5 python tools/soak.py --games 200              # 9x9, 0.1 s a move, GNU Go level 1
    python tools/soak.py --games 1 --size 19 --move-time 2 --plain \
        --engine "gammago --threads 2 --quiet --max-memory 64"     # one plain game: memory

Between moves (unless --plain), at random: `undo` (two moves, in all three: engine, GNU Go and
the referee), `loadsgf` of the game so far (saved by this script), a `boardsize` change and back
(then `loadsgf` to restore the game), and an analysis interrupt (`lz-analyze 10`, then an empty
line a moment later). The referee is gammago's own board (positional superko); an engine move it
refuses is an illegal move (the game is scored a forfeit). A crash (the engine process died or
stopped answering) is counted and the engine restarted. The engine's VmRSS is sampled from
/proc/PID/status after every game; the summary gives it at game 20 and at the end, and the
process's VmPeak (address space) and VmHWM (peak RSS).
"""
import argparse
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gammago.go.board import Board, IllegalMoveError  # noqa: E402
from gammago.arena.gtp_process import GNUGO, EngineFailure, GtpProcess, expand_command  # noqa: E402
from gammago.go.sgf_write import game_sgf  # noqa: E402

P_UNDO = 0.03          # chances, before each engine move, of each disturbance
P_LOADSGF = 0.03
P_BOARDSIZE = 0.02
P_ANALYZE = 0.05
ANALYZE_S = 0.2        # how long an analysis runs before the empty line stops it
RSS_AT = 20            # the game whose RSS is the reference
RSS_DRIFT = 0.10       # "stayed within" this share of it


def status(pid):
    """{'VmRSS': kB, 'VmHWM': kB, 'VmPeak': kB, 'VmSize': kB} of a process (empty if gone)."""
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                key = line.split(":", 1)[0]
                if key in ("VmRSS", "VmHWM", "VmPeak", "VmSize"):
                    out[key] = int(line.split()[1])
    except OSError:
        pass
    return out


def analyze_interrupt(eng, timeout=30):
    """lz-analyze 10, an empty line ANALYZE_S later; the answer read up to its blank line."""
    eng.proc.stdin.write("lz-analyze 10\n")
    eng.proc.stdin.flush()
    time.sleep(ANALYZE_S)
    eng.proc.stdin.write("\n")
    eng.proc.stdin.flush()
    deadline = time.monotonic() + timeout
    started = False
    while time.monotonic() < deadline:
        try:
            line = eng.lines.get(timeout=1)
        except Exception:    # queue.Empty
            continue
        if line is None:
            raise eng._crash("died during lz-analyze")
        if not started:
            if line.startswith("?"):
                raise EngineFailure("error", f"lz-analyze answered {line}")
            started = line.startswith("=")
            continue
        if line.strip() == "":
            return
    raise EngineFailure("timeout", "lz-analyze did not stop on an empty line")


class Soak:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.tmp = tempfile.mkdtemp(prefix="gammago-soak-")
        self.counts = dict(games=0, crashes=0, illegal=0, refused=0, errors=0, undo=0,
                           loadsgf=0, boardsize=0, analyze=0, wins=0)
        self.rss = []
        self.peak = {}
        self.eng = None

    def start_engine(self):
        cmd = f"{self.args.engine} --move-time {self.args.move_time} --seed {self.rng.randrange(1 << 30)}"
        self.eng = GtpProcess(expand_command(cmd, 1), "gammago")
        self.eng.send("name", 60)

    def send(self, command, timeout=None):
        return self.eng.send(command, timeout or max(30.0, 20 * self.args.move_time))

    def save(self, size, moves):
        path = os.path.join(self.tmp, "game.sgf")
        with open(path, "wb") as f:
            f.write(game_sgf(size, self.args.komi, moves))
        return path

    def disturb(self, ref, moves, gnugo):
        """Random GUI-like commands between moves; the engine ends in the referee's position."""
        a, r, size = self.args, self.rng, ref.size
        if r.random() < P_UNDO and len(moves) >= 2:
            for _ in range(2):
                self.send("undo")
                gnugo.send("undo", 30)
                ref.undo()
                moves.pop()
            self.counts["undo"] += 1
        if r.random() < P_LOADSGF and moves:
            self.send(f"loadsgf {self.save(size, moves)}")
            self.counts["loadsgf"] += 1
        if r.random() < P_BOARDSIZE:
            other = r.choice([s for s in (7, 9, 13, 19) if s != size])
            self.send(f"boardsize {other}")
            self.send("clear_board")
            if r.random() < 0.5:
                self.send(f"genmove {r.choice('bw')}")     # a move on the other board
            self.send(f"boardsize {size}")
            self.send("clear_board")
            self.send(f"komi {a.komi}")
            if moves:
                self.send(f"loadsgf {self.save(size, moves)}")
            self.counts["boardsize"] += 1
        if r.random() < P_ANALYZE:
            analyze_interrupt(self.eng)
            self.counts["analyze"] += 1

    def game(self, index):
        a = self.args
        size = a.size
        gnugo = GtpProcess(expand_command(f"{a.gnugo} --seed {index + 1}", index + 1), "gnugo")
        try:
            for g in (self.eng, gnugo):
                g.send(f"boardsize {size}", 60)
                g.send("clear_board", 60)
                g.send(f"komi {a.komi}", 60)
            ref = Board(size, a.komi)
            moves = []
            ours = "b" if index % 2 == 0 else "w"
            passes = 0
            while len(moves) < a.max_moves:
                c = "b" if len(moves) % 2 == 0 else "w"
                if c == ours:
                    if not a.plain:
                        self.disturb(ref, moves, gnugo)
                    move = self.send(f"genmove {c}").lower()
                    if move == "resign":
                        return "resign"
                    try:
                        ref.play(move, c)
                    except (IllegalMoveError, ValueError) as e:
                        self.counts["illegal"] += 1
                        print(f"game {index}: illegal move {c} {move}: {e}", flush=True)
                        return "illegal"
                    gnugo.send(f"play {c} {move}", 30)
                else:
                    move = gnugo.send(f"genmove {c}", 60).lower()
                    if move == "resign":
                        self.counts["wins"] += 1
                        return "won"
                    ref.play(move, c)
                    try:
                        self.send(f"play {c} {move}")
                    except EngineFailure as e:
                        if e.reason != "error":
                            raise
                        self.counts["refused"] += 1
                        print(f"game {index}: engine refused {c} {move}: {e}", flush=True)
                        return "refused"
                moves.append((c, move))
                self.moves = len(moves)
                passes = passes + 1 if move == "pass" else 0
                if passes >= 2:
                    break
            score = ref.score()
            if (score > 0) == (ours == "b"):
                self.counts["wins"] += 1
            return "scored"
        finally:
            gnugo.close()

    def run(self):
        a = self.args
        self.start_engine()
        t0 = time.monotonic()
        for i in range(a.games):
            if a.minutes and time.monotonic() - t0 > a.minutes * 60:
                break
            self.moves = 0
            try:
                end = self.game(i)
            except EngineFailure as e:
                if e.reason == "error" and self.eng.proc.poll() is None:
                    self.counts["errors"] += 1
                    end = "error"
                else:
                    self.counts["crashes"] += 1
                    end = "crash"
                print(f"game {i}: {e}", flush=True)
                if self.eng.proc.poll() is not None or e.reason != "error":
                    self.eng.kill()
                    self.start_engine()
            self.counts["games"] += 1
            st = status(self.eng.proc.pid)
            self.rss.append(st.get("VmRSS", 0))
            self.peak = st
            print(f"game {i}: {end} after {self.moves} moves; engine VmRSS {st.get('VmRSS', 0) / 1024:.1f} MB, "
                  f"VmHWM {st.get('VmHWM', 0) / 1024:.1f} MB, VmPeak {st.get('VmPeak', 0) / 1024:.1f} MB "
                  f"({time.monotonic() - t0:.0f} s)", flush=True)
        self.eng.close()
        self.summary(time.monotonic() - t0)

    def summary(self, seconds):
        c, rss = self.counts, self.rss
        print(f"\n{c['games']} games in {seconds / 60:.1f} min ({self.args.size}x{self.args.size}, "
              f"{self.args.move_time:g} s a move, {'plain' if self.args.plain else 'disturbed'})")
        print(f"crashes {c['crashes']}, illegal moves {c['illegal']}, refused plays {c['refused']}, "
              f"error answers {c['errors']}; wins {c['wins']}")
        print(f"disturbances: undo {c['undo']}, loadsgf {c['loadsgf']}, boardsize {c['boardsize']}, "
              f"analysis interrupts {c['analyze']}")
        if rss:
            ref = rss[min(RSS_AT, len(rss)) - 1]
            end = rss[-1]
            within = abs(end - ref) <= RSS_DRIFT * ref
            print(f"engine VmRSS at game {min(RSS_AT, len(rss))}: {ref / 1024:.1f} MB, at the end: "
                  f"{end / 1024:.1f} MB ({'within' if within else 'NOT within'} "
                  f"{RSS_DRIFT:.0%}); min {min(rss) / 1024:.1f}, max {max(rss) / 1024:.1f} MB")
            print(f"engine VmHWM (peak RSS) {self.peak.get('VmHWM', 0) / 1024:.1f} MB, "
                  f"VmPeak (address space) {self.peak.get('VmPeak', 0) / 1024:.1f} MB")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--games", type=int, default=200)
    p.add_argument("--minutes", type=float, default=0, help="stop after this long (0: no limit)")
    p.add_argument("--size", type=int, default=9)
    p.add_argument("--komi", type=float, default=7.0)
    p.add_argument("--move-time", type=float, default=0.1, help="the engine's seconds a move")
    p.add_argument("--engine", default="gammago --threads 1 --quiet",
                   help="the engine's command (--move-time and --seed are added)")
    p.add_argument("--gnugo", default=f"{GNUGO} --mode gtp --level 1 --chinese-rules",
                   help="the opponent's command (--seed N is added: game N's)")
    p.add_argument("--plain", action="store_true", help="no disturbances between moves")
    p.add_argument("--max-moves", type=int, default=0, help="0: 3 x the board's points")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    if not args.max_moves:
        args.max_moves = 3 * args.size * args.size
    Soak(args).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
