"""The engine: owns the game and decides moves (the GTP front end, gammago/protocol/gtp.py,
calls its public methods).

A move is decided in four short steps (_decide):
  1. budget   - how long to think (Clock.budget, EngineClocks._move_budget) or how many
                playouts (--playouts)
  2. search   - UCT on the tree of pyx/search/tree.pyx, reusing the subtree of the moves since the
                last search, threads working nogil while this thread watches the clock and
                stops early once the best move can no longer be overtaken (where the clock
                keeps the time saved: Clock.bankable)
  3. choose   - the most visited root move
  4. override - resign when hopeless (never before move N*N/4), pass when the game is settled
                (GameEnd._override)
Every tunable is a named constant below, in the module of its concept (the list below), or in
gammago/engine/settings.py (EngineConfig: one field and one command-line flag each). The search
is pyx/search/tree.pyx's Search, or net-root's RootSearch (gammago/search/net_root.py); both
meet gammago.search.protocol.SearchProtocol.

Engine holds the game, the search of a move and its analysis output, and the komi the search
plays against (the rules' and dynamic komi); its other concepts are its bases, each in a
module of its own:
  search_choice.SearchChoice  which search, net and gamma tables play each board size
  pondering.Pondering         searching on the opponent's time (--ponder)
  clock.EngineClocks          the time commands on both clocks, each move's budget
  game_end.GameEnd            resigning, passing, the clean-up phase, dead-stone scoring
  selfplay_root.SelfPlayRoot  self-play's root noise, Gumbel and forced playouts
"""
import contextlib
import logging
import math
import threading
import time

import numpy as np

from gammago.go import handicap
from gammago.engine import players
from gammago.go import rules as _rules
from gammago.search import tree as _tree
from gammago.go.board import Board, parse_color
from gammago.engine.clock import Clock, EngineClocks
from gammago.engine.game_end import GameEnd
from gammago.engine.pondering import Pondering
from gammago.engine.search_choice import SearchChoice
from gammago.engine.selfplay_root import SelfPlayRoot
from gammago.engine.settings import DYNKOMI_AUTO_MIN_SIZE, DYNKOMI_STONE, EngineConfig, dynkomi_moves_for
from gammago.search.protocol import avoid_entries
from gammago.core.seeds import derive

log = logging.getLogger("gammago")

# --- constants ----------------------------------------------------------------------------
POLL_S = 0.01                # how often the watching thread looks at the search
EARLY_STOP_AFTER = 0.1       # consider stopping early only after this share of the budget
OWNED_MIN_SHARE = 0.25       # a search whose playouts were played out less often (the mercy rule
                             # ended the rest) leaves no ownership for the pass decisions
MAX_REUSE_MOVES = 8          # moves since the last search root that tree reuse follows
CRIT_PROBE = 1e-6            # criticality weight that gathers it without changing the order
_LIBC = None                 # glibc, for malloc_trim (False where there is none)


def release_free_memory():
    """Give the C heap's free pages back to the system (glibc's malloc_trim), so that a
    long-running engine's resident size follows what it holds, not the largest search it once
    ran (the node pool's chunks, the threads' malloc arenas). A no-op without glibc. Returns
    whether it ran."""
    global _LIBC
    if _LIBC is None:
        import ctypes
        import ctypes.util
        try:
            lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
            _LIBC = lib if hasattr(lib, "malloc_trim") else False
        except OSError:
            _LIBC = False
    if not _LIBC:
        return False
    _LIBC.malloc_trim(0)
    return True


# --- the engine ------------------------------------------------------------------------------
class Engine(SearchChoice, Pondering, EngineClocks, GameEnd, SelfPlayRoot):
    """The game and the engine's moves; the module docstring names what its bases hold."""

    name = "gammago"

    def __init__(self, config=None):
        from gammago import __version__
        self.version = __version__
        self.config = config or EngineConfig()
        self.config.validate()
        self.clocks = {1: Clock(), 2: Clock()}
        # one memory budget for every tree of the engine (--max-memory)
        self.nodes = self.config.node_budget()
        self.budget = _tree.NodeBudget(self.nodes)
        self._full_said = False
        self.search = _tree.Search(self.nodes, seed=self.config.seed, budget=self.budget,
                                   **self.config.tree_params())
        self._tree_search = self.search   # rollouts-only search (--mode auto switches by size)
        self._root_search = None          # net-root search, once the net is loaded
        self._net_failed = None           # --mode auto: why the net did not load
        self.net = None
        self._nets = {}                   # path -> Net: the nets loaded, one per board size's choice
        self._net_choice = {}             # board size -> (path, why): net.choose_model, once a size
        # --policy-temperature > 0: one seeded stream of policy draws per engine
        self._policy_rng = np.random.default_rng(self.config.seed)
        if self.config.mode in ("net-root", "net-policy"):
            self._use_net(19)
        self.last_owner = None      # ownership of the last search, +1 Black .. -1 White
        self.last_infos = []        # its root moves (_infos), best first ...
        self.last_infos_color = None    # ... with win rates for this colour (1 Black, 2 White)
        self._ponder = None         # (thread, stop event) while pondering
        self.pondered = 0           # playouts of the last pondering
        self.interrupted = threading.Event()    # interrupt(): the move under way stops now
        self._rollout_loaded = None  # --rollout-gammas FILE's Gammas, once loaded
        self._prior_loaded = None    # --set prior_gammas=FILE's Gammas, once loaded
        self._aside_told = set()     # board sizes its settings line is not for, told in the log
        self.rules = _rules.playable(self.config.rules)   # --rules; kata-set-rules, kgs-rules
        self.new_game(19, 7.5)

    def _policy_move(self, c, emit=None):
        """--mode net-policy / gamma-policy: the policy's favourite legal move, no search."""
        b = self.board.copy()
        b.to_move = c
        t = self.config.policy_temperature
        rng = self._policy_rng if t > 0 else None
        if self.config.mode == "net-policy":
            move = players.net_policy_move(self.net, b, t, rng)
        else:
            move = players.gamma_policy_move(b, temperature=t, rng=rng)
        if emit is not None:
            emit([])
        return move

    def interrupt(self):
        """Stop the move under way (genmove, reg_genmove, kgs-genmove_cleanup and the
        genmove_analyze commands) now: it plays the best move found so far. GoGui's `# interrupt`
        line; the GTP front end clears the event before each command, and calls this from its
        reader thread while a command runs."""
        self.interrupted.set()

    # --- game state ---
    def new_game(self, size, komi):
        self.ponder_stop()
        board = Board(int(size), float(komi))   # ValueError for a bad size, state kept
        if self.config.mode == "auto":
            self._auto_search(board.size)
        elif self.net is not None:
            self._use_net(board.size)          # the net for this size (net-root, net-policy)
        self.board = board
        self.handicap = 0               # handicap stones of this game (setup_stones)
        self.my_color = 0               # the colour of the last genmove (--dynkomi auto)
        # the rollouts-only tree is kept ready for the size even when the net-root search plays:
        # final_status_list and final_score run on it (_status_owner)
        for s in self._searches():
            s.configure(**self.config.tree_params(self.board.size))
        self._set_prior(int(size))
        self._forget()
        # a new game: no tree of the last one is of use, net-root's child trees of another
        # board size included (they would hold their chunks until its next search); their
        # memory goes back to the system
        for s in {id(s): s for s in (self._tree_search, self._root_search, self.search)
                  if s is not None}.values():
            s.clear()
        release_free_memory()

    def clear_cache(self):
        """Forget the search trees (GTP clear_cache): the next search starts afresh."""
        self.ponder_stop()
        for s in self._searches():
            s.clear()
        self._forget()

    def _forget(self):
        self._tree_moves = None
        self.last_owner = None
        self.last_infos = []
        self.last_infos_color = None

    def set_komi(self, komi):
        self.ponder_stop()
        self.board.komi = float(komi)
        self._forget()

    def set_rules(self, rules):
        """Play under `rules` (a name, KataGo's JSON object or its text, or a rules.Rules) from
        now on, over new games too, the position kept (kata-set-rules, kgs-rules). RulesError
        (a ValueError) for rules unknown or not played; the rules stay as they were."""
        rules = _rules.playable(rules)
        self.ponder_stop()
        self.rules = rules
        self._forget()
        return rules

    def rules_komi(self, c):
        """The komi the search adds for the rules, c to move: White's handicap bonus
        (whiteHandicapBonus) and, under territory scoring, Pachi's parity point
        (rules.search_komi_shift)."""
        b = self.board
        return (self.rules.handicap_bonus(self.handicap)
                + _rules.search_komi_shift(self.rules, b.komi, b.size, c))

    def play(self, color, vertex):
        self.ponder_stop()
        self.board.play(vertex, parse_color(color))

    def undo(self):
        self.ponder_stop()
        self.board.undo()
        self._forget()

    def setup_stones(self, black, white):
        self.ponder_stop()
        b = self.board.copy()
        b.setup(black, white)
        self.board = b
        self._forget()
        # black stones alone on an empty board: a handicap (for --dynkomi)
        self.handicap = len(black) if len(black) >= 2 and not white and not b.moves \
            and len(b.stones("b")) == len(black) else 0

    def dynkomi_on(self):
        """Whether the search counts a dynamic komi in this game: --dynkomi linear in any
        handicap game; auto only on boards of DYNKOMI_AUTO_MIN_SIZE and up when the engine takes
        the stones (its last genmove was for Black: pondering keeps the genmove's komi)."""
        mode = self.config.dynkomi
        if mode == "auto":
            return self.board.size >= DYNKOMI_AUTO_MIN_SIZE and self.my_color == 1
        return mode == "linear"

    def extra_komi(self):
        """Dynamic komi, as Pachi's linear scheme (uct/dynkomi.c): in a game of H >= 2 handicap
        stones the search counts H * DYNKOMI_STONE + 0.5 - komi more komi for White at the first
        move, shrinking linearly to 0 at move --dynkomi-moves; 0 otherwise or when dynkomi_on()
        says no. Scores, passing and final_score keep the real komi."""
        if self.handicap < 2 or not self.dynkomi_on():
            return 0.0
        n = self.config.dynkomi_moves or dynkomi_moves_for(self.board.size)
        played = len(self.board.moves)
        if played >= n:
            return 0.0
        base = max(0.0, self.handicap * DYNKOMI_STONE + 0.5 - self.board.komi)
        return base * (n - played) / n

    def place_free_handicap(self, n):
        size = self.board.size
        n = int(n)
        if self.board.moves or self.board.stones("b") or self.board.stones("w"):
            raise ValueError("board not empty")
        pts = handicap.free_points(size, n)
        self.setup_stones(pts, [])
        self.board.to_move = "w"
        return pts

    # --- moves ---
    def genmove(self, color, cleanup=False):
        move = self._decide(color, cleanup=cleanup)
        if move != "resign":
            self.board.play(move, parse_color(color))
        return move

    def reg_genmove(self, color):
        return self._decide(color, allow_resign=False, spend_clock=False)

    def decide(self, color, allow_resign=True):
        """The move genmove would play (the most visited, or resign or pass), neither played
        nor charged to the clock; last_infos then lists the root's moves with their visits and
        search.root_visits their total (gammago.engine.selfplay reads both)."""
        return self._decide(color, allow_resign=allow_resign, spend_clock=False)

    def genmove_analyze(self, color, interval_s, emit, avoid=()):
        """genmove with emit(infos) every interval_s seconds and at the end; avoid: moves kept
        out of the search, as analyze takes them (the policy modes, which do not search, refuse
        them)."""
        if avoid and self.config.mode in ("net-policy", "gamma-policy"):
            raise ValueError(f"avoid / allow need a search; --mode {self.config.mode} has none")
        move = self._decide(color, emit=emit, interval_s=interval_s, avoid=avoid)
        if move != "resign":
            self.board.play(move, parse_color(color))
        return move

    def analyze(self, color, interval_s, stop, emit, avoid=()):
        """Search for color until stop is set, emit(infos) every interval_s seconds and at the
        end. avoid: (colour, point, until) triples (colour 1 Black, 2 White; point PASS = 0
        included): moves kept out of the first `until` plies of the search (lz-analyze's avoid
        and allow). The tree starts afresh when they change, and again at the next search
        without them."""
        self.ponder_stop()
        c = parse_color(color)
        self._run_search(c, budget=None, no_pass=False, emit=emit, interval_s=interval_s, stop=stop,
                         avoid=avoid)
        emit(self._infos(c))

    def pv_visits(self, pv):
        """The visits of the position after each move of pv (a line from the root, as _infos
        gives it) in the current search; 0 past where the tree ends."""
        b, path, out = self.board, [], []
        for v in pv:
            p = b.point(v)
            n = next((ch[1] for ch in self.search.children(tuple(path)) if ch[0] == p), None)
            if n is None:
                break
            out.append(int(n))
            path.append(p)
        return out + [0] * (len(pv) - len(out))

    def ownership(self):
        """Mean final ownership over the playouts of the current (or last) search, +1 Black ..
        -1 White, [row][col] with row 0 = line 1; None before any search."""
        try:
            return self.search.ownership()
        except ValueError:
            return self.last_owner

    def ownership_stdev(self):
        """The standard deviation of each point's final owner (+1 Black, -1 White, 0 neither)
        over the playouts of the current search, laid out as ownership(); None before any
        search."""
        try:
            return self.search.ownership_stdev()
        except ValueError:
            return None

    def score_stdev(self):
        """The standard deviation of the final area difference over the playouts of the current
        search, in points; None before any search."""
        try:
            return self.search.score_stdev()
        except ValueError:
            return None

    def with_unvisited(self, infos, minmoves):
        """infos (the analysis dicts of the current search, best first) with root moves no
        playout has visited yet appended in prior order until there are minmoves (when the
        root has that many): each with 0 visits, lcb 0, its prior, its move alone as the line,
        and the visited moves' mean win rate (0.5 without one) for a win rate."""
        if len(infos) >= minmoves:
            return infos
        b = self.board
        kids = self.search.children()
        total_rating = sum(ch[3] for ch in kids) or 1.0
        shown = {d["move"] for d in infos}
        visits = sum(d["visits"] for d in infos)
        winrate = sum(d["visits"] * d["winrate"] for d in infos) / visits if visits else 0.5
        out = list(infos)
        for move, _, _, rating in sorted(kids, key=lambda ch: -ch[3]):
            if len(out) >= minmoves:
                break
            v = b.vertex(move)
            if v in shown:
                continue
            out.append({"move": v, "visits": 0, "winrate": winrate,
                        "prior": rating / total_rating, "lcb": 0.0, "order": len(out),
                        "pv": [v]})
        return out

    def criticality(self, color, seconds):
        """Criticality of each point ([row][col], row 0 = line 1; tree.Search.criticality) from
        a search of `seconds` on the rollouts-only tree with `color` to move. The tree gathers
        it only with a criticality weight > 0: with --crit 0 (the default from 13x13 up) it
        searches with CRIT_PROBE, which leaves the widening order the rating order but for ties."""
        c = parse_color(color)
        b = self.board.copy()
        b.to_move = c
        with self._side_search(b) as search:
            if search.params["crit"] <= 0:
                search.configure(crit=CRIT_PROBE)
            search.run(self.config.threads, 0, float(seconds), False, self.config.seed)
        crit = search.criticality()
        search.clear()
        return crit

    @contextlib.contextmanager
    def _side_search(self, board):
        """The rollouts-only tree (tree.Search) at `board` for a search that plays no move
        (criticality, the status of the stones): pondering stopped, an analysis's avoided moves
        and the tree a move kept for reuse let go; the search's parameters, as the body may
        configure them, restored when it ends."""
        self.ponder_stop()
        search = self._tree_search
        if search.avoid[0]:
            search.set_avoid(())       # an analysis's avoided moves are not this search's
        search.set_root(board, None)
        if search is self.search:
            self._tree_moves = None
        kept = dict(search.params)
        try:
            yield search
        finally:
            search.configure(**kept)

    def _decide(self, color, cleanup=False, allow_resign=True, emit=None, interval_s=1.0,
                spend_clock=True, avoid=()):
        t0 = time.perf_counter()
        pondered = self.pondering
        self.ponder_stop()
        c = parse_color(color)
        self.my_color = c
        if self.config.mode in ("net-policy", "gamma-policy"):
            return self._policy_move(c, emit)
        clock = self.clocks[c]
        budget = self._move_budget(clock, t0, pondered)
        played = self.search
        if (cleanup or self.board.passes) and played is self._root_search:
            # after the opponent's pass, and in the clean-up phase (kgs-genmove_cleanup), dead
            # stones may have to come off the board before the game ends (area scoring counts
            # them as they stand): moves the net, trained on games that ended before that,
            # seldom ranks among its 20 best, so the rollouts-only tree, which opens every
            # move, plays them
            self._switch_search(self._tree_search)
        try:
            self._run_search(c, budget=budget, no_pass=cleanup, emit=emit, interval_s=interval_s,
                             stop=self.interrupted, avoid=avoid,
                             early_stop_s=self.early_stop_window(clock, budget))
            infos = self._infos(c)
            move = self._override(c, infos, cleanup, allow_resign)
            used = self.search
        finally:
            self._switch_search(played)
        if emit is not None:
            emit(infos)
        took = time.perf_counter() - t0
        if spend_clock:
            clock.spend(took)
        best = infos[0] if infos else None
        extra = self.extra_komi()
        log.info("%s %s: winrate %.3f%s, %d playouts (%d root visits, %d nodes%s), %.2f of %.2f s",
                 "B" if c == 1 else "W", move, best["winrate"] if best else float("nan"),
                 f" (extra komi {extra:.1f})" if extra else "",
                 used.playouts, used.root_visits, used.nodes,
                 ", POOL FULL" if used.full else "", took, budget)
        return move

    # --- search ---
    def _switch_search(self, search):
        """Search with `search` from the next move on; it keeps no subtree of the other's."""
        if search is not self.search:
            self.search, self._tree_moves = search, None

    def _root(self, c, avoid=()):
        """The position to search (the board, with c to move) and reuse the old subtree; avoid:
        the moves kept out of the search (analyze), a fresh tree when they change."""
        b = self.board
        t = self._rollout_loaded
        if t is not None and t.settings and not t.settings_on(b.size) and \
                b.size not in self._aside_told:
            self._aside_told.add(b.size)
            from gammago.moves.gammas import settings_options
            log.warning("rollouts: %s's settings (%s) are for %dx%d; on %dx%d the options and "
                        "defaults hold", t.path, settings_options(t.settings), t.settings_size,
                        t.settings_size, b.size, b.size)
        avoid = avoid_entries(avoid)
        if tuple(self.search.avoid[0]) != avoid:
            self.search.set_avoid(avoid)
            self._tree_moves = None
        elif avoid and self._tree_moves != list(b.moves):
            # avoided moves are kept out by ply from the root: a subtree kept after moves would
            # hold them at the plies it moved up to (the same position keeps its tree)
            self._tree_moves = None
        extra = self.extra_komi() + self.rules_komi(c)
        if extra:
            b = b.copy()
            b.komi += extra            # the search plays against it (--dynkomi, the rules)
        if b.to_move != ("b" if c == 1 else "w"):
            b = b.copy() if b is self.board else b
            b.to_move = c
            self.search.set_root(b, None)
            self._tree_moves = None
            return b
        moves = list(b.moves)
        keep = None
        old = self._tree_moves
        if self.config.reuse and old is not None and moves[:len(old)] == old \
                and len(moves) - len(old) <= MAX_REUSE_MOVES:
            keep = [b.point(v) for _, v in moves[len(old):]]
        self.search.set_root(b, keep)
        self._tree_moves = moves
        return b

    def _run_search(self, c, budget, no_pass, emit=None, interval_s=1.0, stop=None,
                    early_stop_s=0.0, ponder=False, avoid=()):
        """Search from the current position for c. budget: seconds (None: until stop is set);
        early_stop_s: within this many seconds of the start, stop once the best move can no
        longer be overtaken in the budget (early_stop_window); ponder: stop when the trees
        are full (pondering on would only spend CPU); avoid: as analyze takes it."""
        cfg = self.config
        self._root(c, avoid)
        fixed = cfg.playouts if budget is not None else 0
        seconds = budget if (budget is not None and not fixed) else 0
        seed = derive(cfg.seed, len(self.board.moves))
        self.search.prepare(cfg.threads, fixed, seconds, no_pass, seed)
        workers = [threading.Thread(target=self.search.work, args=(i,), daemon=True)
                   for i in range(cfg.threads)]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        next_emit = t0 + interval_s
        warned = False
        try:
            while any(w.is_alive() for w in workers):
                workers[0].join(POLL_S)
                now = time.perf_counter()
                if stop is not None and stop.is_set():
                    self.search.stop()
                if emit is not None and now >= next_emit:
                    emit(self._infos(c))
                    next_emit = now + interval_s
                if self.search.full and not warned:
                    self._say_full()
                    warned = True
                if ponder and self.search.full:
                    self.search.stop()
                if (seconds and now - t0 < early_stop_s
                        and self._settled_early(now - t0, seconds)):
                    self.search.stop()
        finally:
            self.search.stop()
            for w in workers:
                w.join()
        # where the mercy rule ended most playouts (a big dead group stands), their owners were
        # not counted: the pass and clean-up decisions then read a status search of their own
        # (_dead_strings without an owner)
        if self.search.owned >= OWNED_MIN_SHARE * self.search.playouts:
            self.last_owner = self.search.ownership()
        else:
            self.last_owner = None

    def _say_full(self):
        """The trees used up their memory: a warning the first time, a log line after."""
        text = ("the search trees hold their whole --max-memory (%d MB, %d nodes): they stop "
                "growing, the search goes on in them")
        args = (self.budget.used_bytes >> 20, self.budget.used_nodes)
        if not self._full_said:
            log.warning(text, *args)
            self._full_said = True
        else:
            log.debug(text, *args)

    def _settled_early(self, elapsed, seconds):
        """True when the runner-up cannot catch the best move in the time left."""
        if elapsed < EARLY_STOP_AFTER * seconds:
            return False
        visits = sorted((ch[1] for ch in self.search.children()), reverse=True)
        if len(visits) < 2:
            return True
        rate = self.search.playouts / max(elapsed, 1e-3)
        return visits[0] - visits[1] > rate * (seconds - elapsed)

    def _points_for(self, c, score):
        """(mean, spread) of the playouts' area difference (Black - White, search.score()'s) as
        points for c over the komi: the rollouts' count, area scoring whatever the rules."""
        mean, sd = score
        mean = float(mean) - self.board.komi
        return (mean if c == 1 else -mean), float(sd)

    def root_score(self, c):
        """(mean, spread) of the current search's playouts' scores, points for c over the komi
        (every playout of the search tree, as each candidate's score_mean in _infos); None
        before any playout."""
        got = self.search.score()
        return None if got is None else self._points_for(c, got)

    def _infos(self, c):
        """Root moves best first as lz-analyze dicts (winrate for c)."""
        b = self.board
        kids = self.search.children()
        scores = self.search.child_scores()
        total_rating = sum(ch[3] for ch in kids) or 1.0
        out = []
        for move, visits, winrate, rating in kids:
            if visits <= 0:
                continue
            n = visits
            lcb = max(0.0, winrate - 1.96 * math.sqrt(max(winrate * (1 - winrate), 1e-4) / n))
            info = {"move": b.vertex(move), "visits": visits, "winrate": winrate,
                    "prior": rating / total_rating, "lcb": lcb, "order": 0,
                    "pv": [b.vertex(p) for p in self.search.pv((move,), 16)]}
            if move in scores:
                info["score_mean"], info["score_stdev"] = self._points_for(c, scores[move])
            out.append(info)
        out.sort(key=lambda d: (-d["visits"], -d["winrate"]))
        for i, d in enumerate(out):
            d["order"] = i
        self.last_infos = out
        self.last_infos_color = c
        return out

