"""The engine: owns the game, decides moves, manages the clock (interface: ENGINE_API.md).

Every tunable is a named constant below or an EngineConfig field with a command-line flag.
This first version searches by flat Monte-Carlo (light playouts per candidate move); the UCT
tree of pyx/tree.pyx replaces it behind the same interface.
"""
import argparse
import dataclasses
import logging
import math
import threading
import time

import numpy as np

from gammago.board import Board, IllegalMoveError, parse_color
from gammago import playout

log = logging.getLogger("gammago")

# --- constants ----------------------------------------------------------------------------
MIN_MOVES_LEFT = 15          # a game always has at least this many own moves left (clock)
MOVES_LEFT_PER_EMPTY = 0.35  # own moves still to come per empty point (clock)
MIN_BUDGET_S = 0.05          # the shortest think we ever plan
DEAD_OWNERSHIP = 0.5         # a string is dead when the other colour owns its points this much
SEKI_OWNERSHIP = 0.3         # ... and in seki when its liberties are owned by nobody this much
FLAT_BATCH = 8               # flat MC: playouts per candidate per round


@dataclasses.dataclass
class EngineConfig:
    playouts: int = 0              # fixed playouts per move (0: use the clock)
    seed: int = 1                  # seed of the playout generators
    threads: int = 1
    move_time: float = 1.0         # seconds per move when no time settings are given
    max_nodes: int = 1_000_000     # node pool cap of the tree
    margin: float = 1.0            # seconds kept in reserve on every clock
    resign: float = 0.10           # resign below this win rate (0 never)
    pass_dead_removed: bool = False  # after an opponent pass, pass when winning once dead
                                     # stones are removed (else only when winning by Tromp-Taylor)
    verbose: bool = False

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser):
        d = EngineConfig()
        p.add_argument("--playouts", type=int, default=d.playouts,
                       help="fixed playouts per move, reproducible with --seed (0: use the clock)")
        p.add_argument("--seed", type=int, default=d.seed, help="seed of the playout generators")
        p.add_argument("--threads", type=int, default=d.threads, help="search threads")
        p.add_argument("--move-time", type=float, default=d.move_time,
                       help="seconds per move when the controller gives no time settings")
        p.add_argument("--max-nodes", type=int, default=d.max_nodes, help="tree node pool cap")
        p.add_argument("--margin", type=float, default=d.margin,
                       help="seconds kept in reserve on the clock")
        p.add_argument("--resign", type=float, default=d.resign,
                       help="resign below this win rate (0: never)")
        p.add_argument("--pass-dead-removed", action="store_true",
                       help="after an opponent pass, pass when winning with dead stones removed")
        p.add_argument("--verbose", action="store_true", help="log search details to stderr")

    @classmethod
    def from_args(cls, args):
        kw = {}
        for f in dataclasses.fields(cls):
            if hasattr(args, f.name):
                kw[f.name] = getattr(args, f.name)
        cfg = cls(**kw)
        cfg.validate()
        return cfg

    def validate(self):
        if self.playouts < 0:
            raise ValueError(f"--playouts must be >= 0, not {self.playouts}")
        if self.threads < 1:
            raise ValueError(f"--threads must be >= 1, not {self.threads}")
        if self.move_time <= 0:
            raise ValueError(f"--move-time must be > 0, not {self.move_time}")
        if self.max_nodes < 1000:
            raise ValueError(f"--max-nodes must be >= 1000, not {self.max_nodes}")
        if not 0 <= self.resign < 1:
            raise ValueError(f"--resign must be in [0, 1), not {self.resign}")


# --- the clock ------------------------------------------------------------------------------
class Clock:
    """One side's clock: kind none | absolute | canadian | byoyomi (Japanese)."""

    def __init__(self):
        self.set("none")

    def set(self, kind, main=0.0, byo=0.0, stones=0, periods=0):
        self.kind = kind
        self.main, self.byo, self.stones, self.periods = float(main), float(byo), int(stones), int(periods)
        self.main_left = self.main
        self.byo_left = self.byo          # seconds left in the current period (canadian/byoyomi)
        self.stones_left = self.stones    # canadian: stones still to play in this period
        self.periods_left = self.periods  # byoyomi: periods left
        self.in_byo = self.main <= 0 and kind in ("canadian", "byoyomi")

    def time_left(self, seconds, stones):
        """GTP time_left: stones 0 = in main time; else in byo-yomi (canadian: stones to play in
        the period; Japanese byo-yomi as KGS sends it: periods left)."""
        if self.kind == "none":
            return
        if stones == 0 or self.kind == "absolute":
            self.main_left = seconds
            self.in_byo = False
        else:
            self.in_byo = True
            self.main_left = 0.0
            self.byo_left = seconds
            if self.kind == "canadian":
                self.stones_left = stones
            else:
                self.periods_left = stones

    def budget(self, empty_points, margin, default):
        """Seconds to think on this move."""
        if self.kind == "none":
            return default
        moves_left = max(MIN_MOVES_LEFT, MOVES_LEFT_PER_EMPTY * empty_points)
        if self.kind == "canadian":
            per_stone = self.byo / max(1, self.stones)
        elif self.kind == "byoyomi":
            per_stone = self.byo
        else:
            per_stone = 0.0
        if self.kind != "absolute" and self.in_byo:
            if self.kind == "canadian":
                left = self.byo_left / max(1, self.stones_left)
            else:
                left = self.byo_left
            m = min(margin, 0.3 * left)
            return max(MIN_BUDGET_S, left - m)
        # main time
        t = self.main_left / moves_left
        if per_stone > 0:
            m = min(margin, 0.3 * per_stone)
            t = max(t, per_stone - m)
            return max(MIN_BUDGET_S, t)
        m = min(margin, 0.3 * self.main_left)
        return max(MIN_BUDGET_S, min(t, self.main_left - m))

    def spend(self, seconds):
        """Keep our own account of the clock between time_left commands."""
        if self.kind == "none":
            return
        if not self.in_byo:
            self.main_left -= seconds
            if self.main_left >= 0 or self.kind == "absolute":
                return
            if self.main > 0 or self.main_left < 0:
                seconds = -self.main_left
            self.main_left = 0.0
            self.in_byo = True
            self.byo_left = self.byo
            self.stones_left = self.stones
        if self.kind == "canadian":
            self.byo_left -= seconds
            self.stones_left -= 1
            if self.stones_left <= 0:
                self.byo_left = self.byo
                self.stones_left = self.stones
        elif self.kind == "byoyomi":
            if seconds > self.byo_left:
                self.periods_left -= 1
            self.byo_left = self.byo


# --- search results --------------------------------------------------------------------------
@dataclasses.dataclass
class MoveInfo:
    move: str           # GTP vertex or 'pass'
    visits: int
    winrate: float      # for the side to move
    prior: float
    pv: list

    def as_dict(self, order):
        n = max(1, self.visits)
        lcb = max(0.0, self.winrate - 1.96 * math.sqrt(max(self.winrate * (1 - self.winrate), 1e-4) / n))
        return {"move": self.move, "visits": self.visits, "winrate": self.winrate,
                "prior": self.prior, "lcb": lcb, "order": order, "pv": list(self.pv)}


class FlatSearch:
    """Flat Monte-Carlo: rounds of FLAT_BATCH light playouts after each candidate."""

    def __init__(self, config):
        self.config = config
        self.reset(None)

    def reset(self, board):
        self.board = board
        self.stats = {}
        self.ownership = None
        self.playouts = 0

    def start(self, board, color, allow_pass=True):
        self.reset(board)
        self.color = color
        c = "b" if color == 1 else "w"
        self.after = {}
        for v in board.legal_moves(c, include_eyes=False):
            nb = board.copy()
            nb.play(v, c)
            self.after[v] = nb
        if allow_pass or not self.after:
            nb = board.copy()
            nb.play("pass", c)
            self.after["pass"] = nb
        self.stats = {v: [0, 0.0] for v in self.after}
        self.own_sum = np.zeros((board.size, board.size))
        self.seed = self.config.seed * 1_000_003 + len(board.moves) * 7919

    def step(self):
        """One round; returns playouts done."""
        n = 0
        for v, nb in self.after.items():
            self.seed += 1
            r = playout.light_evaluate(nb, FLAT_BATCH, self.seed)
            w = r["black_winrate"] if self.color == 1 else 1 - r["black_winrate"]
            s = self.stats[v]
            s[0] += FLAT_BATCH
            s[1] += w * FLAT_BATCH
            self.own_sum += r["ownership"] * FLAT_BATCH
            n += FLAT_BATCH
        self.playouts += n
        return n

    def infos(self):
        out = []
        for v, (n, w) in self.stats.items():
            out.append(MoveInfo(v, n, w / n if n else 0.0, 1.0 / len(self.stats), [v]))
        out.sort(key=lambda m: (-m.winrate, -m.visits))
        return out

    def owner(self):
        """Mean ownership, +1 Black .. -1 White, array [row, col]."""
        return self.own_sum / max(1, self.playouts)


# --- the engine ------------------------------------------------------------------------------
class Engine:
    name = "gammago"

    def __init__(self, config=None):
        from gammago import __version__
        self.version = __version__
        self.config = config or EngineConfig()
        self.config.validate()
        self.clocks = {1: Clock(), 2: Clock()}
        self.search = FlatSearch(self.config)
        self.new_game(19, 7.5)

    # --- game state ---
    def new_game(self, size, komi):
        board = Board(int(size), float(komi))   # ValueError for a bad size, state kept
        self.board = board
        self.last_owner = None

    def set_komi(self, komi):
        self.board.komi = float(komi)

    def play(self, color, vertex):
        self.board.play(vertex, parse_color(color))

    def undo(self):
        self.board.undo()

    def setup_stones(self, black, white):
        b = self.board.copy()
        b.setup(black, white)
        self.board = b

    def place_free_handicap(self, n):
        size = self.board.size
        if self.board.moves or any(self.board.stones("b")) or any(self.board.stones("w")):
            raise ValueError("board not empty")
        if n < 2 or n > size * size - 1:
            raise ValueError(f"invalid number of handicap stones {n}")
        pts = _handicap_points(size, n)
        self.setup_stones(pts, [])
        self.board.to_move = "w"
        return pts

    # --- clock ---
    def time_settings(self, main_s, byo_s, byo_stones):
        main_s, byo_s, byo_stones = float(main_s), float(byo_s), int(byo_stones)
        if main_s < 0 or byo_s < 0 or byo_stones < 0:
            raise ValueError("time_settings: negative value")
        for c in self.clocks.values():
            if byo_s > 0 and byo_stones == 0:
                c.set("none")                      # GTP: no time limit
            elif byo_s == 0:
                c.set("absolute", main_s)
            else:
                c.set("canadian", main_s, byo_s, byo_stones)

    def kgs_time_settings(self, kind, *values):
        kind = kind.lower()
        try:
            vals = [float(v) for v in values]
        except ValueError:
            raise ValueError(f"kgs-time_settings: bad value in {values}")
        need = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
        if kind not in need:
            raise ValueError(f"kgs-time_settings: unknown kind {kind!r}")
        if len(vals) != need[kind] or any(v < 0 for v in vals):
            raise ValueError(f"kgs-time_settings {kind} needs {need[kind]} non-negative values")
        for c in self.clocks.values():
            if kind == "none":
                c.set("none")
            elif kind == "absolute":
                c.set("absolute", vals[0])
            elif kind == "byoyomi":
                c.set("byoyomi", vals[0], vals[1], 1, int(vals[2]))
            else:
                c.set("canadian", vals[0], vals[1], int(vals[2]))

    def time_left(self, color, seconds, stones):
        self.clocks[parse_color(color)].time_left(float(seconds), int(stones))

    # --- moves ---
    def genmove(self, color, cleanup=False):
        move = self._decide(color, cleanup=cleanup)
        if move != "resign":
            self.board.play(move, parse_color(color))
        return move

    def reg_genmove(self, color):
        return self._decide(color, cleanup=False, allow_resign=False)

    def genmove_analyze(self, color, interval_s, emit):
        move = self._decide(color, emit=emit, interval_s=interval_s)
        if move != "resign":
            self.board.play(move, parse_color(color))
        return move

    def analyze(self, color, interval_s, stop, emit):
        c = parse_color(color)
        self.search.start(self.board, c)
        next_emit = time.perf_counter() + interval_s
        while not stop.is_set():
            self.search.step()
            if time.perf_counter() >= next_emit:
                emit([m.as_dict(i) for i, m in enumerate(self.search.infos())])
                next_emit = time.perf_counter() + interval_s

    def _decide(self, color, cleanup=False, allow_resign=True, emit=None, interval_s=1.0):
        t0 = time.perf_counter()
        c = parse_color(color)
        b = self.board
        clock = self.clocks[c]
        budget = clock.budget(len(b.legal_moves(c)), self.config.margin, self.config.move_time)
        self.search.start(b, c, allow_pass=not cleanup)
        next_emit = t0 + interval_s
        while True:
            self.search.step()
            now = time.perf_counter()
            if emit is not None and now >= next_emit:
                emit([m.as_dict(i) for i, m in enumerate(self.search.infos())])
                next_emit = now + interval_s
            if self.config.playouts:
                if self.search.playouts >= self.config.playouts:
                    break
            elif now - t0 >= budget * 0.9:
                break
        infos = self.search.infos()
        self.last_owner = self.search.owner()
        best = infos[0]
        move = best.move
        if allow_resign and self._should_resign(best.winrate):
            move = "resign"
        elif not cleanup and self._should_pass(c, best):
            move = "pass"
        if emit is not None:
            emit([m.as_dict(i) for i, m in enumerate(infos)])
        clock.spend(time.perf_counter() - t0)
        log.info("%s %s: winrate %.3f, %d playouts, %.2f s", "B" if c == 1 else "W", move,
                 best.winrate, self.search.playouts, time.perf_counter() - t0)
        return move

    def _should_resign(self, winrate):
        n = self.board.size
        return (self.config.resign > 0 and winrate < self.config.resign
                and len(self.board.moves) >= n * n // 4)

    def _should_pass(self, c, best):
        b = self.board
        if best.move == "pass":
            return True
        if b.passes > 0:   # opponent passed: pass when we win now
            score = b.score() if c == 1 else -b.score()
            if score > 0:
                return True
            if self.config.pass_dead_removed:
                s = self._score_dead_removed(self.last_owner)
                if (s > 0) == (c == 1) and s != 0:
                    return True
        return False

    # --- scoring ---
    def _dead_strings(self, owner):
        """(dead vertices, seki vertices) from ownership +1 Black .. -1 White."""
        b = self.board
        alive_pa = b.pass_alive()
        dead, seki, seen = [], [], set()
        for col in ("b", "w"):
            sign = 1 if col == "b" else -1
            for v in b.stones(col):
                if v in seen:
                    continue
                string = b.string(v)
                seen.update(string)
                if alive_pa.get(v) == col:
                    continue
                own = np.mean([owner[_rc(b, s)] for s in string]) * sign
                if own < -DEAD_OWNERSHIP:
                    dead.extend(string)
                elif own < DEAD_OWNERSHIP:
                    libs = b.liberties(v)
                    if len(libs) <= 2 and all(abs(owner[_rc(b, l)]) < SEKI_OWNERSHIP for l in libs):
                        seki.extend(string)
        return dead, seki

    def _ownership(self, n=None):
        n = n or (400 if self.board.size <= 9 else 200)
        r = playout.light_evaluate(self.board, n, self.config.seed)
        return r["ownership"]

    def _score_dead_removed(self, owner=None):
        b = self.board
        if owner is None:
            owner = self._ownership()
        dead, _ = self._dead_strings(owner)
        grid = b.to_array().astype(np.int8)
        for v in dead:
            grid[_rc(b, v)] = 0
        return _area_score(grid, b.komi)

    def final_score(self):
        s = self._score_dead_removed()
        if s == 0:
            return "0"
        return f"B+{s:g}" if s > 0 else f"W+{-s:g}"

    def final_status_list(self, status):
        status = status.lower()
        if status not in ("alive", "dead", "seki"):
            raise ValueError(f"final_status_list: unknown status {status!r}")
        b = self.board
        dead, seki = self._dead_strings(self._ownership())
        if status == "dead":
            return sorted(dead)
        if status == "seki":
            return sorted(seki)
        gone = set(dead) | set(seki)
        return sorted(v for col in ("b", "w") for v in b.stones(col) if v not in gone)


# --- helpers ---------------------------------------------------------------------------------
def _rc(board, vertex):
    p = board.point(vertex)
    W = board.size + 2
    return p // W - 1, p % W - 1


def _area_score(grid, komi):
    """Tromp-Taylor area score of a colour grid (0 empty, 1 B, 2 W): Black - White - komi."""
    n = grid.shape[0]
    score = int((grid == 1).sum()) - int((grid == 2).sum())
    seen = np.zeros_like(grid, dtype=bool)
    for r0 in range(n):
        for c0 in range(n):
            if grid[r0, c0] or seen[r0, c0]:
                continue
            stack, region, reach = [(r0, c0)], 0, 0
            seen[r0, c0] = True
            while stack:
                r, c = stack.pop()
                region += 1
                for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                    if 0 <= rr < n and 0 <= cc < n:
                        g = grid[rr, cc]
                        if g == 0 and not seen[rr, cc]:
                            seen[rr, cc] = True
                            stack.append((rr, cc))
                        elif g:
                            reach |= int(g)
            if reach == 1:
                score += region
            elif reach == 2:
                score -= region
    return score - komi


def _handicap_points(size, n):
    """Star points first (GTP fixed-handicap layout), then points far from every stone."""
    from gammago.board import format_vertex
    e = 2 if size < 13 else 3
    lo, mid, hi = e, size // 2, size - 1 - e
    stars = [(lo, hi), (hi, lo), (lo, lo), (hi, hi)]
    if size % 2:
        stars += [(mid, lo), (mid, hi), (lo, mid), (hi, mid), (mid, mid)]
    if size < 9:
        stars = stars[:4]
    # the GTP layout for n stones: centre added for odd n >= 5
    if n <= len(stars):
        if n in (5, 7) and size % 2 and size >= 9:
            chosen = stars[:n - 1] + [(mid, mid)]
        else:
            chosen = stars[:n]
    else:
        chosen = list(stars)
        while len(chosen) < n:
            best, bestd = None, -1
            for r in range(size):
                for c in range(size):
                    if (r, c) in chosen:
                        continue
                    d = min(abs(r - r2) + abs(c - c2) for r2, c2 in chosen)
                    if d > bestd:
                        best, bestd = (r, c), d
            chosen.append(best)
    return [format_vertex(rc) for rc in chosen]
