"""Time management: one Clock per side (GTP time_settings / kgs-time_settings /
kata-time_settings / time_left).

The settings commands' values are checked and turned into one Clock setting (time_settings,
kgs_time_settings, kata_time_settings: the keywords of Clock.set). Clock.budget says how long a
move may think, Clock.bankable how much of that the clock keeps for later moves if the search
stops early (Engine._run_search), Clock.spend keeps our own account between time_left commands.
EngineClocks is the engine's side of it: the commands set both clocks, and each move's budget
and early-stop window are read from the clock of the side to move.
"""
import math
import time

from gammago.go.board import parse_color

MIN_MOVES_LEFT = 15          # a game always has at least this many own moves left
MOVES_LEFT_PER_EMPTY = 0.35  # own moves still to come per empty point
MIN_BUDGET_S = 0.05          # the shortest think we ever plan
MARGIN_SHARE = 0.15          # never keep more than this share of a byo-yomi period in reserve
                             # (a search overruns its budget by ~10 ms: BENCHMARKS "Strength")


class Clock:
    """One side's clock: kind none | absolute | canadian | byoyomi (Japanese) | fischer (an
    increment added after each move; optionally the main time capped and the most a move may
    take, KataGo's fischer-capped)."""

    def __init__(self):
        self.set("none")

    def set(self, kind, main=0.0, byo=0.0, stones=0, periods=0, increment=0.0, cap=-1.0,
            max_move=-1.0):
        """increment, cap (the most the main time may hold after an increment) and max_move (the
        most one move may take): fischer only; a negative cap or max_move is none."""
        self.kind = kind
        self.main, self.byo, self.stones, self.periods = float(main), float(byo), int(stones), int(periods)
        self.increment, self.cap, self.max_move = float(increment), float(cap), float(max_move)
        self.main_left = self.main
        self.byo_left = self.byo          # seconds left in the current period (canadian/byoyomi)
        self.stones_left = self.stones    # canadian: stones still to play in this period
        self.in_byo = self.main <= 0 and kind in ("canadian", "byoyomi")

    def time_left(self, seconds, stones):
        """GTP time_left: stones 0 = in main time; else in byo-yomi (canadian: stones to play in
        the period; Japanese byo-yomi as KGS sends it: periods left)."""
        if self.kind == "none":
            return
        if stones == 0 or self.kind in ("absolute", "fischer"):
            self.main_left = seconds
            self.in_byo = False
        else:
            self.in_byo = True
            self.main_left = 0.0
            self.byo_left = seconds
            if self.kind == "canadian":
                self.stones_left = stones

    def bankable(self, budget):
        """How much of this move's budget (seconds) is time that, if not used now, can be used
        on a later move: early stop may end the search only within it (Engine._run_search).
          none      (--move-time, or no time limit): 0, every move gets the same time anyway
          absolute  all of it: what is saved stays on the clock
          fischer   all of it, but for what the cap would cut off the main time after the
                    move's increment
          canadian  in a period: all of it while other stones of the period are to come (they
                    share its time), 0 for its last stone (the period restarts full); in main
                    time: all of it, but for the part past the main time left when the budget
                    spills into a one-stone period
          byoyomi   (Japanese, KGS `byoyomi`): 0 in the periods (each restarts full after a
                    move); in main time only the main time left (the budget past it is paid by
                    a period, which restarts full)"""
        if self.kind == "none":
            return 0.0
        if self.kind == "absolute":
            return budget
        if self.kind == "fischer":
            if self.cap < 0:
                return budget
            room = self.cap - (self.main_left - budget + self.increment)
            return min(budget, max(0.0, room))
        if self.in_byo:
            if self.kind == "canadian" and self.stones_left > 1:
                return budget
            return 0.0
        if self.kind == "canadian" and self.stones > 1:
            return budget
        return min(budget, max(0.0, self.main_left))

    def budget(self, empty_points, margin, default):
        """Seconds to think on this move (the reserve already taken off)."""
        if self.kind == "none":
            return default
        moves_left = max(MIN_MOVES_LEFT, MOVES_LEFT_PER_EMPTY * empty_points)
        if self.kind == "fischer":
            # the increment comes back after every move: spend it, and a share of the main time
            left = self.main_left - min(margin, MARGIN_SHARE * max(0.0, self.main_left))
            t = min(self.main_left / moves_left + self.increment, left)
            if self.max_move >= 0:
                t = min(t, self.max_move - min(margin, MARGIN_SHARE * self.max_move))
            return max(MIN_BUDGET_S, t)
        per_stone = {"canadian": self.byo / max(1, self.stones), "byoyomi": self.byo}.get(self.kind, 0.0)
        if self.in_byo and self.kind != "absolute":
            left = self.byo_left / max(1, self.stones_left) if self.kind == "canadian" else self.byo_left
            return max(MIN_BUDGET_S, left - min(margin, MARGIN_SHARE * left))
        t = self.main_left / moves_left
        if per_stone > 0:
            # main time, then byo-yomi: never plan less than a byo-yomi move's worth
            return max(MIN_BUDGET_S, t, per_stone - min(margin, MARGIN_SHARE * per_stone))
        return max(MIN_BUDGET_S, min(t, self.main_left - min(margin, MARGIN_SHARE * self.main_left)))

    def spend(self, seconds):
        """Keep our own account of the clock between time_left commands."""
        if self.kind == "none":
            return
        if self.kind == "fischer":
            self.main_left += self.increment - seconds
            if self.cap >= 0:
                self.main_left = min(self.main_left, self.cap)
            return
        if not self.in_byo:
            self.main_left -= seconds
            if self.main_left >= 0 or self.kind == "absolute":
                return
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
            self.byo_left = self.byo           # each period restarts full after a move


# --- the time-settings commands -> one setting of Clock.set ---------------------------------
KGS_TIME_KINDS = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}   # kind: its values
KATA_TIME_KINDS = {"none": 0, "absolute": 1, "byo-yomi": 3, "canadian": 3, "fischer": 2,
                   "fischer-capped": 4}


def time_settings(main_s, byo_s, byo_stones):
    """GTP time_settings MAIN BYO_YOMI STONES: byo-yomi time with 0 stones is no time limit,
    no byo-yomi time absolute time, else Canadian byo-yomi."""
    main_s, byo_s, byo_stones = float(main_s), float(byo_s), int(byo_stones)
    if main_s < 0 or byo_s < 0 or byo_stones < 0:
        raise ValueError("time_settings: negative value")
    if byo_s > 0 and byo_stones == 0:
        return {"kind": "none"}                      # GTP: no time limit
    if byo_s == 0:
        return {"kind": "absolute", "main": main_s}
    return {"kind": "canadian", "main": main_s, "byo": byo_s, "stones": byo_stones}


def _time_values(command, kind, values, need):
    """(kind in lower case, the values as floats) of a time-settings command, checked
    against need ({kind: how many values}); ValueError naming the command otherwise."""
    kind = str(kind).lower()
    if kind not in need:
        raise ValueError(f"{command}: unknown kind {kind!r} ({', '.join(need)})")
    try:
        vals = [float(v) for v in values]
    except ValueError:
        raise ValueError(f"{command}: bad value in {' '.join(map(str, values))}")
    if len(vals) != need[kind]:
        raise ValueError(f"{command} {kind} needs {need[kind]} values")
    if not all(math.isfinite(v) for v in vals):
        raise ValueError(f"{command}: values must be finite")
    return kind, vals


def _setting(kind, vals):
    """One checked setting: none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN
    PERIOD STONES | fischer MAIN INCREMENT | fischer-capped MAIN INCREMENT MAIN_LIMIT
    MAX_PER_MOVE."""
    if kind == "none":
        return {"kind": "none"}
    if kind == "absolute":
        return {"kind": "absolute", "main": vals[0]}
    if kind == "byoyomi":
        return {"kind": "byoyomi", "main": vals[0], "byo": vals[1], "stones": 1, "periods": int(vals[2])}
    if kind == "canadian":
        return {"kind": "canadian", "main": vals[0], "byo": vals[1], "stones": int(vals[2])}
    capped = kind == "fischer-capped"
    return {"kind": "fischer", "main": vals[0], "increment": vals[1],
            "cap": vals[2] if capped else -1.0, "max_move": vals[3] if capped else -1.0}


def kgs_time_settings(kind, *values):
    """kgsGtp's kgs-time_settings: none | absolute MAIN | byoyomi MAIN PERIOD PERIODS |
    canadian MAIN PERIOD STONES."""
    kind, vals = _time_values("kgs-time_settings", kind, values, KGS_TIME_KINDS)
    if any(v < 0 for v in vals):
        raise ValueError(f"kgs-time_settings {kind}: negative value")
    return _setting(kind, vals)


def kata_time_settings(kind, *values):
    """KataGo's kata-time_settings: none | absolute MAIN | byo-yomi MAIN PERIOD PERIODS |
    canadian MAIN PERIOD STONES | fischer MAIN INCREMENT | fischer-capped MAIN INCREMENT
    MAIN_LIMIT MAX_PER_MOVE (a negative limit is none; a main limit must be >= MAIN).
    Seconds may be fractional; the stones and periods are whole numbers."""
    kind, vals = _time_values("kata-time_settings", kind, values, KATA_TIME_KINDS)
    signed = 2 if kind == "fischer-capped" else len(vals)   # its limits may be negative
    if any(v < 0 for v in vals[:signed]):
        raise ValueError("kata-time_settings: negative value")
    if kind in ("byo-yomi", "canadian") and vals[2] != int(vals[2]):
        raise ValueError(f"kata-time_settings {kind}: the {'periods' if kind == 'byo-yomi' else 'stones'} "
                         f"must be a whole number, not {values[2]}")
    if kind == "fischer-capped" and 0 <= vals[2] < vals[0]:
        raise ValueError("kata-time_settings fischer-capped: the main time limit must be >= "
                         "the main time")
    return _setting("byoyomi" if kind == "byo-yomi" else kind, vals)


# --- the engine's two clocks -------------------------------------------------------------------
class EngineClocks:
    """The engine's clock handling, a base of gammago.engine.engine.Engine: the GTP time
    commands on its two clocks (`clocks`: {1: Black's Clock, 2: White's}), the budget of each
    move and the window in which its search may stop early. Reads the engine's `config` and
    `board`; sets `last_budget`."""

    KATA_TIME_KINDS = KATA_TIME_KINDS      # what kata-list_time_settings lists

    def _set_clocks(self, setting):
        """Both clocks to one setting (the keywords of Clock.set)."""
        for c in self.clocks.values():
            c.set(**setting)

    def time_settings(self, main_s, byo_s, byo_stones):
        self._set_clocks(time_settings(main_s, byo_s, byo_stones))

    def kgs_time_settings(self, kind, *values):
        self._set_clocks(kgs_time_settings(kind, *values))

    def kata_time_settings(self, kind, *values):
        """KataGo's kata-time_settings (clock.kata_time_settings)."""
        self._set_clocks(kata_time_settings(kind, *values))

    def time_left(self, color, seconds, stones):
        self.clocks[parse_color(color)].time_left(float(seconds), int(stones))

    def _move_budget(self, clock, started, pondered):
        """Seconds the search of this move may take on `clock` (Clock.budget, on the empty
        points of the board); after pondering, less the time since `started` (perf_counter
        when the command came: stopping the pondering is this move's time). Kept in
        last_budget (tests read it)."""
        empty = int((self.board.to_array() == 0).sum())
        budget = clock.budget(empty, self.config.margin, self.config.move_time)
        if pondered:
            budget = max(MIN_BUDGET_S, budget - (time.perf_counter() - started))
        self.last_budget = budget
        return budget

    def early_stop_window(self, clock, budget):
        """Seconds from the start of a search of `budget` seconds during which it may stop early
        (once the best move can no longer be overtaken): the part of the budget whose saving the
        clock keeps for later moves (Clock.bankable); 0 with --no-early-stop or --playouts."""
        if not self.config.early_stop or self.config.playouts:
            return 0.0
        return clock.bankable(budget)
