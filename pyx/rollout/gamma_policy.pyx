# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Gamma rollouts from Python: GammaPolicy (the gamma sampler of pyx/rollout/gamma_sampler.pyx for one
gamma table), pure Monte-Carlo evaluation and timing with it, the whole-playout self-check, and
the one check of the rollouts' settings (check_settings)."""
from libc.stdint cimport int32_t
from gammago.go.board cimport (board_t, Board, board_play, board_is_legal, board_is_eye, EMPTY,
                            WHITE, PASS)
from gammago.rollout.playout cimport (policy_t, playout_run, playout_default_maxmoves, policy_light,
                              bench_policy, evaluate_policy)
from gammago.core.rng cimport rng_t, rng_seed
from gammago.rollout.tail cimport tail_refused, TAIL_RULES_DEFAULT, TAIL_REFUSE
from gammago.rollout.tail import rule_names
from gammago.moves.features cimport rollout_features, team_gamma, NGROUPS, NFEAT
from gammago.rollout.gamma_sampler cimport (gamma_policy_new, gamma_policy_free, policy_gamma,
                                    gamma_policy_premove, gamma_policy_check,
                                    gamma_policy_setboard, gamma_policy_choose,
                                    gamma_policy_played)


def _as_table(gammas):
    """A float64 table of NFEAT positive finite gammas from a Gammas object, a path, an array,
    or None (the shipped gammas the rollouts use: gammago.moves.gammas.rollout_base)."""
    import numpy as np
    if gammas is None:
        from gammago.moves import gammas as G
        gammas = G.rollout_base()
    if isinstance(gammas, (str, bytes)) or hasattr(gammas, "__fspath__"):
        from gammago.moves import gammas as G
        gammas = G.load(gammas)
    table = getattr(gammas, "table", gammas)
    table = np.ascontiguousarray(table, dtype=np.float64)
    if table.ndim != 1 or table.shape[0] != NFEAT:
        raise ValueError(f"gamma table has shape {table.shape}, the features need ({NFEAT},)")
    if not (np.all(np.isfinite(table)) and np.all(table > 0)):
        raise ValueError("gamma table: every gamma must be positive and finite")
    return table


def check_settings(int light_after=0, int tail=TAIL_RULES_DEFAULT):
    """The one check of the gamma rollouts' settings, for everything that takes them
    (GammaPolicy, tree.Search.use_gamma_rollouts, balance.gradient and value,
    EngineConfig.validate): light_after, the gamma moves before the light tail
    (--rollout-light-after), >= 0; tail, the light tail's rules word, no bits but its rules'
    (gammago.rollout.tail.rule_names). ValueError names the option."""
    if light_after < 0:
        raise ValueError(f"--rollout-light-after must be >= 0, not {light_after}")
    rule_names(tail)


cdef class GammaPolicy:
    """The gamma rollout policy for one gamma table (a gammago.moves.gammas.Gammas, a gamma file path,
    an array of N_FEATURES floats, or None for the shipped gammas). One instance per thread.
    light_after: a playout's moves after its first
    light_after follow the light tail's rules (tail_choose), not the gammas (0: never);
    tail: the tail's optional rules, a rules word (gammago.rollout.tail.rules; its shapes by default)."""

    def __cinit__(self, gammas=None, int near_d=0, int light_after=0,
                  int tail=TAIL_RULES_DEFAULT):
        cdef double[::1] t
        check_settings(light_after, tail)
        self.table = _as_table(gammas)
        t = self.table
        self.g = gamma_policy_new(&t[0], near_d)
        if self.g == NULL:
            raise MemoryError()
        self.g.light_after = light_after
        self.g.tail = tail
        self.near_d = self.g.near_d

    def __dealloc__(self):
        gamma_policy_free(self.g)

    @property
    def table(self):
        return self.table

    @property
    def tail(self):
        """The light tail's rules word (gamma_policy_t.tail)."""
        return self.g.tail

    @property
    def tail_rules(self):
        """The names of the light tail's rules that are on (gammago.rollout.tail.rule_names)."""
        return rule_names(self.g.tail)

    @property
    def stats(self):
        """Counters since creation: choices, sampling attempts, weights recomputed, full
        recomputations, exact fallback draws, weights through feat_tactics, playout starts
        that reused the cached start position's weights, moves
        of the light tail (light_after), gamma moves refused (TAIL_REFUSE in tail) and drawn
        again."""
        return {"choose": self.g.n_choose, "light": self.g.n_light,
                "attempts": self.g.n_attempts,
                "recompute": self.g.n_recompute, "full": self.g.n_full,
                "fallback": self.g.n_fallback, "slow": self.g.n_slow, "cached": self.g.n_cached,
                "refused": self.g.n_refused}

    def evaluate(self, Board board, int n, unsigned long long seed=1, int mercy=0):
        """Pure Monte-Carlo with gamma playouts from board: {'black_winrate', 'ownership'
        (size x size, +1 Black .. -1 White), 'moves', 'owned'} (mercy > 0: with the mercy rule,
        gammago.rollout.playout.evaluate_policy)."""
        cdef policy_t pol
        policy_gamma(&pol, self.g)
        return evaluate_policy(board, &pol, n, seed, mercy)

    def playout(self, Board board, unsigned long long seed=1, int maxmoves=0):
        """One gamma playout on a copy of board: (final Board, moves played)."""
        cdef Board out = board.copy()
        cdef policy_t pol
        cdef rng_t r
        cdef int n
        policy_gamma(&pol, self.g)
        rng_seed(&r, seed)
        if maxmoves <= 0:
            maxmoves = playout_default_maxmoves(out.b)
        with nogil:
            n = playout_run(out.b, &pol, &r, maxmoves)
        out._undo = []
        return out, n

    def first_moves(self, Board board, int n, unsigned long long seed=1):
        """Draw the first rollout move n times (a fresh start each time): numpy int64 counts
        indexed by point (index 0: pass)."""
        import numpy as np
        cdef policy_t pol
        cdef rng_t r
        cdef int i, m
        cdef board_t* b = board.b
        counts = np.zeros(b.npts, dtype=np.int64)
        cdef long long[::1] cv = counts
        policy_gamma(&pol, self.g)
        rng_seed(&r, seed)
        with nogil:
            pol.setboard(pol.ctx, b)
            for i in range(n):
                m = pol.choose(pol.ctx, b, &r)
                cv[m] += 1
        return counts

    def probabilities(self, Board board):
        """The exact first-move distribution from rollout_features (the training definition,
        less the groups the rollouts do not weigh): numpy float64 indexed by point, over
        legal moves that are not own true eyes (nor, with TAIL_REFUSE in the rules word, the
        bad self-ataris it refuses)."""
        import numpy as np
        cdef board_t* b = board.b
        cdef int p, c = b.to_move
        cdef int32_t ids[NGROUPS]
        out = np.zeros(b.npts, dtype=np.float64)
        for p in range(b.npts):
            if b.color[p] == EMPTY and board_is_legal(b, p, c) and not board_is_eye(b, p, c) \
                    and not (self.g.tail & TAIL_REFUSE and tail_refused(b, p, c, self.g.tail)):
                rollout_features(b, p, c, ids)
                out[p] = team_gamma(self.g.gamma, ids)
        s = out.sum()
        if s > 0:
            out /= s
        else:
            out[0] = 1.0
        return out

    def check(self, Board board):
        """Bring the side to move's weights up to date and compare each with a recomputation;
        AssertionError naming the point if one differs."""
        cdef char msg[256]
        if gamma_policy_check(self.g, board.b, msg, 256):
            raise AssertionError(msg.decode())

    def reset(self, Board board):
        """Start tracking board (as a playout start does)."""
        gamma_policy_setboard(self.g, board.b)

    def step(self, Board board, vertex):
        """Play a move on board (GTP vertex or point) and update the weights incrementally, as
        inside a playout; for tests. The move must be legal under simple ko."""
        cdef int p = vertex if isinstance(vertex, int) else board.point(vertex)
        cdef board_t* b = board.b
        if p != PASS and not board_is_legal(b, p, b.to_move):
            raise ValueError(f"illegal move {vertex}")
        gamma_policy_premove(self.g, b, p)
        board_play(b, p, b.to_move)
        gamma_policy_played(self.g, b, p)
        board._undo = []
        board.moves.append(("b" if b.to_move == WHITE else "w", board.vertex(p)))

    def choose(self, Board board, unsigned long long seed=1):
        """The move the policy would play next on board (a point), without playing it."""
        cdef rng_t r
        rng_seed(&r, seed)
        return gamma_policy_choose(self.g, board.b, &r)


def selfcheck(gammas=None, int size=9, int games=10, unsigned long long seed=1,
              bint uniform=False, int near_d=0, int tail=TAIL_RULES_DEFAULT):
    """Play `games` playouts from the empty board (moves by the gamma policy, or uniform legal
    non-eye moves with uniform=True; tail: its rules word, whose TAIL_REFUSE sets weights
    aside), checking every weight after every move. Returns the number of moves checked;
    AssertionError on the first difference."""
    cdef GammaPolicy gp = GammaPolicy(gammas, near_d, tail=tail)
    cdef Board board
    cdef policy_t light
    cdef rng_t r
    cdef int i, m, n = 0, k
    cdef char msg[256]
    policy_light(&light)
    rng_seed(&r, seed)
    for i in range(games):
        board = Board(size)
        gamma_policy_setboard(gp.g, board.b)
        k = 0
        while board.b.npass < 2 and k < 3 * size * size:
            if gamma_policy_check(gp.g, board.b, msg, 256):
                raise AssertionError(f"game {i} move {k}: " + msg.decode())
            if uniform:
                m = light.choose(light.ctx, board.b, &r)
                gamma_policy_premove(gp.g, board.b, m)
            else:
                m = gamma_policy_choose(gp.g, board.b, &r)
            board_play(board.b, m, board.b.to_move)
            gamma_policy_played(gp.g, board.b, m)
            k += 1
            n += 1
    return n


def gamma_evaluate(Board board, int n, gammas=None, unsigned long long seed=1):
    """Pure Monte-Carlo with gamma playouts (a fresh GammaPolicy for `gammas`)."""
    return GammaPolicy(gammas).evaluate(board, n, seed)


def bench_gamma(int size, int n, unsigned long long seed=1, GammaPolicy policy=None):
    """n gamma playouts from the empty board, timed inside C: (seconds, total moves)."""
    cdef policy_t pol
    if policy is None:
        policy = GammaPolicy()
    policy_gamma(&pol, policy.g)
    return bench_policy(size, &pol, n, seed)
