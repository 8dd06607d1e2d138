# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Playouts: the loop that plays a game out to the end behind the policy seam of playout.pxd,
the light (uniform random) policy, and pure Monte-Carlo evaluation of a position."""
from libc.stdlib cimport malloc, free
from libc.stdint cimport uint8_t, uint64_t, int16_t
from libc.string cimport memset
from gammago.go.board cimport (board_t, Board, board_copy, board_play, board_is_legal, board_is_eye,
                            board_area, board_score, EMPTY, BLACK, WHITE, PASS, MAX_PTS)
from gammago.core.rng cimport rng_t, rng_seed, rng_below

cdef enum:
    LIGHT_TRIES = 8     # random draws before the light policy lists every candidate

# ---------------------------------------------------------------------------------------------
# The light policy: uniform over legal moves that do not fill an own eye.
# Rejection sampling from the empty points, then (after LIGHT_TRIES misses) a uniform pick from
# the full candidate list: both steps are uniform over the same set, so the mix is too.
# ---------------------------------------------------------------------------------------------
cdef inline bint _light_ok(const board_t* b, int p, int c) noexcept nogil:
    return not board_is_eye(b, p, c) and board_is_legal(b, p, c)

cdef void _light_setboard(void* ctx, board_t* b) noexcept nogil:
    pass

cdef void _light_played(void* ctx, board_t* b, int move) noexcept nogil:
    pass

cdef int light_choose(void* ctx, board_t* b, rng_t* r) noexcept nogil:
    cdef int c = b.to_move
    cdef int n = b.nempty
    cdef int i, p, m = 0
    cdef short cand[MAX_PTS]
    if n == 0:
        return PASS
    for i in range(LIGHT_TRIES):
        p = b.empty[rng_below(r, n)]
        if _light_ok(b, p, c):
            return p
    for i in range(n):
        p = b.empty[i]
        if _light_ok(b, p, c):
            cand[m] = p
            m += 1
    if m == 0:
        return PASS
    return cand[rng_below(r, m)]

cdef void policy_light(policy_t* pol) noexcept nogil:
    pol.ctx = NULL
    pol.setboard = _light_setboard
    pol.choose = light_choose
    pol.played = _light_played

# ---------------------------------------------------------------------------------------------
# The playout loop
# ---------------------------------------------------------------------------------------------
cdef int playout_default_maxmoves(const board_t* b) noexcept nogil:
    return 3 * b.size * b.size

cdef int playout_run(board_t* b, policy_t* pol, rng_t* r, int maxmoves) noexcept nogil:
    """Play b out: two passes in a row, or maxmoves. Returns the number of moves played. (The
    loop of playout_run_mercy without its test: the light playouts ran 1-5% slower on 9x9 when
    this one called that one with a threshold never reached.)"""
    cdef int n = 0, m
    pol.setboard(pol.ctx, b)
    while b.npass < 2 and n < maxmoves:
        m = pol.choose(pol.ctx, b, r)
        board_play(b, m, b.to_move)
        pol.played(pol.ctx, b, m)
        n += 1
    return n

cdef inline int _mercy_winner(const board_t* b, int mercy, int base) noexcept nogil:
    """The side (BLACK or WHITE) that has taken more than `mercy` stones beyond the other since
    a start whose lead was `base` (White stones taken less Black stones taken), else 0; and
    only where the komi against that side could be overcome: those stones, two points each
    (the stone and its point), outweigh it, and so would the whole board (the stones a random
    playout takes are counted again each time an area is refilled and taken, so a komi of 100
    on 9x9 is never overturned)."""
    cdef int d = b.captured[WHITE] - b.captured[BLACK] - base
    cdef int area = b.size * b.size
    if d > mercy and 2 * d > b.komi and area > b.komi:
        return BLACK
    if d < -mercy and -2 * d > -b.komi and area > -b.komi:
        return WHITE
    return 0

cdef int playout_run_mercy(board_t* b, policy_t* pol, rng_t* r, int maxmoves, int mercy,
                           int base, int* winner) noexcept nogil:
    """playout_run with a mercy rule: the playout also ends as soon as one side has taken more
    than `mercy` stones beyond the other since the search's root, whose lead in captures was
    `base` (White stones taken less Black stones taken), where the komi against that side could
    be overcome (_mercy_winner); *winner is then that side (BLACK or WHITE), else 0.
    Returns the number of moves played."""
    cdef int n = 0, m
    winner[0] = 0
    pol.setboard(pol.ctx, b)
    while b.npass < 2 and n < maxmoves:
        m = pol.choose(pol.ctx, b, r)
        board_play(b, m, b.to_move)
        pol.played(pol.ctx, b, m)
        n += 1
        winner[0] = _mercy_winner(b, mercy, base)
        if winner[0]:
            break
    return n

cdef void mc_evaluate(const board_t* start, policy_t* pol, rng_t* r, int n,
                      double* black_wins, double* owner_black, long* moves, int mercy,
                      long* owned) noexcept nogil:
    """n playouts from start: black_wins counts Black's wins (a jigo is half a win),
    owner_black[p] sums +1 for Black / -1 for White ownership at the end (may be NULL) over
    the playouts played out, *owned of them: with mercy > 0 the mercy rule ends the others
    (playout_run_mercy; their winner wins, and their owners are not counted)."""
    cdef board_t* b = <board_t*>malloc(sizeof(board_t))
    cdef uint8_t owner[MAX_PTS]
    cdef int i, p, winner = 0, maxmoves = playout_default_maxmoves(start)
    cdef int base = start.captured[WHITE] - start.captured[BLACK]
    cdef double s
    black_wins[0] = 0
    moves[0] = 0
    owned[0] = 0
    if b == NULL:
        return
    for i in range(n):
        board_copy(b, start)
        if mercy > 0:
            moves[0] += playout_run_mercy(b, pol, r, maxmoves, mercy, base, &winner)
            if winner:
                if winner == BLACK:
                    black_wins[0] += 1
                continue
        else:
            moves[0] += playout_run(b, pol, r, maxmoves)
        owned[0] += 1
        board_area(b, owner)
        s = 0
        for p in range(b.npts):
            if owner[p] == BLACK:
                s += 1
                if owner_black != NULL:
                    owner_black[p] += 1
            elif owner[p] == WHITE:
                s -= 1
                if owner_black != NULL:
                    owner_black[p] -= 1
        s -= b.komi
        if s > 0:
            black_wins[0] += 1
        elif s == 0:
            black_wins[0] += 0.5
    free(b)

# ---------------------------------------------------------------------------------------------
# Python entry points
# ---------------------------------------------------------------------------------------------
cdef object evaluate_policy(Board board, policy_t* pol, int n, unsigned long long seed,
                            int mercy=0):
    import numpy as np
    cdef rng_t r
    cdef double wins
    cdef long moves, owned
    cdef double[::1] own = np.zeros(board.b.npts)
    if n <= 0:
        raise ValueError("need at least one playout")
    if mercy < 0:
        raise ValueError(f"mercy must be >= 0, not {mercy}")
    rng_seed(&r, seed)
    with nogil:
        mc_evaluate(board.b, pol, &r, n, &wins, &own[0], &moves, mercy, &owned)
    W = board.b.W
    grid = np.asarray(own).reshape(W, W)[1:W - 1, 1:W - 1] / max(owned, 1)
    return {"black_winrate": wins / n, "ownership": grid, "moves": moves, "owned": owned}


def light_evaluate(Board board, int n, unsigned long long seed=1):
    """Pure Monte-Carlo with light playouts: {'black_winrate', 'ownership' (size x size,
    +1 Black .. -1 White), 'moves'}."""
    cdef policy_t pol
    policy_light(&pol)
    return evaluate_policy(board, &pol, n, seed)


def light_playout(Board board, unsigned long long seed=1):
    """Play one light playout on a copy of board; returns (final Board, moves played)."""
    cdef Board out = board.copy()
    cdef policy_t pol
    cdef rng_t r
    cdef int n
    policy_light(&pol)
    rng_seed(&r, seed)
    with nogil:
        n = playout_run(out.b, &pol, &r, playout_default_maxmoves(out.b))
    return out, n


def light_playout_mercy(Board board, int mercy, unsigned long long seed=1):
    """One light playout on a copy of board under the mercy rule (playout_run_mercy, the
    board's own captures as the base): (final Board, moves played, the winner 'b' or 'w' when
    the rule ended it, else None)."""
    cdef Board out = board.copy()
    cdef policy_t pol
    cdef rng_t r
    cdef int n, winner = 0
    cdef int base = board.b.captured[WHITE] - board.b.captured[BLACK]
    if mercy < 0:
        raise ValueError(f"mercy must be >= 0, not {mercy}")
    policy_light(&pol)
    rng_seed(&r, seed)
    with nogil:
        n = playout_run_mercy(out.b, &pol, &r, playout_default_maxmoves(out.b), mercy, base,
                              &winner)
    return out, n, {BLACK: "b", WHITE: "w"}.get(winner)


cdef object bench_policy(int size, policy_t* pol, int n, unsigned long long seed):
    import time
    cdef Board start = Board(size)
    cdef board_t* b = <board_t*>malloc(sizeof(board_t))
    cdef rng_t r
    cdef long moves = 0
    cdef int i, maxmoves = playout_default_maxmoves(start.b)
    cdef double s = 0
    if b == NULL:
        raise MemoryError()
    rng_seed(&r, seed)
    t0 = time.perf_counter()
    with nogil:
        for i in range(n):
            board_copy(b, start.b)
            moves += playout_run(b, pol, &r, maxmoves)
            s += board_score(b)
    t = time.perf_counter() - t0
    free(b)
    return t, moves


def bench_light(int size, int n, unsigned long long seed=1):
    """n light playouts from the empty board, timed inside C: (seconds, total moves)."""
    cdef policy_t pol
    policy_light(&pol)
    return bench_policy(size, &pol, n, seed)
