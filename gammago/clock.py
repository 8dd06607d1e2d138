"""Time management: one Clock per side (GTP time_settings / kgs-time_settings /
kata-time_settings / time_left).

Clock.budget says how long a move may think, Clock.bankable how much of that the clock keeps
for later moves if the search stops early (Engine._run_search), Clock.spend keeps our own
account between time_left commands.
"""
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
