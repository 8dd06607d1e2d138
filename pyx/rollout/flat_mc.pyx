# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Flat Monte-Carlo move choice, the quality yardstick of tools/flat_mc_match.py: playouts spread
evenly over every candidate first move, played out by the light policy or a GammaPolicy."""
from libc.stdlib cimport malloc, free
from libc.stdint cimport int16_t
from gammago.go.board cimport (board_t, Board, board_copy, board_play, board_is_eye, board_score,
                            BLACK, WHITE, MAX_PTS)
from gammago.rollout.playout cimport policy_t, playout_run, playout_default_maxmoves, policy_light
from gammago.core.rng cimport rng_t, rng_seed
from gammago.rollout.gamma_sampler cimport policy_gamma
from gammago.rollout.gamma_policy cimport GammaPolicy


cdef void _flat_mc(const board_t* start, policy_t* pol, rng_t* r, int n, const int16_t* cands,
                   int ncand, double* wins, int* visits, board_t* b) noexcept nogil:
    """n playouts spread round-robin over the candidate first moves; wins for the side to move
    (a jigo is half a win)."""
    cdef int i, k, c = start.to_move, maxmoves = playout_default_maxmoves(start)
    cdef double s
    for i in range(n):
        k = i % ncand
        board_copy(b, start)
        board_play(b, cands[k], c)
        playout_run(b, pol, r, maxmoves)
        s = board_score(b)
        visits[k] += 1
        if (s > 0 and c == BLACK) or (s < 0 and c == WHITE):
            wins[k] += 1
        elif s == 0:
            wins[k] += 0.5


def flat_mc_move(Board board, int playouts, policy=None, unsigned long long seed=1):
    """A flat Monte-Carlo move for the side to move: `playouts` playouts spread evenly over
    every legal move (positional superko) that does not fill an own true eye, each played out
    by `policy` (a GammaPolicy, or None / 'light' for uniform playouts). Returns (vertex or
    'pass', win rate of the chosen move)."""
    cdef GammaPolicy gp
    cdef policy_t pol
    cdef rng_t r
    cdef int16_t cands[MAX_PTS]
    cdef double wins[MAX_PTS]
    cdef int visits[MAX_PTS]
    cdef int i, p, n = 0, best = -1, c = board.b.to_move
    cdef double rate, best_rate = -1
    cdef board_t* b
    if playouts < 1:
        raise ValueError("need at least one playout per move")
    for i in range(board.b.nempty):
        p = board.b.empty[i]
        if not board_is_eye(board.b, p, c) and board.is_legal(board.vertex(p)):
            cands[n] = p
            wins[n] = 0
            visits[n] = 0
            n += 1
    if n == 0:
        return "pass", 0.0
    if policy is None or policy == "light":
        policy_light(&pol)
    elif isinstance(policy, GammaPolicy):
        gp = policy
        policy_gamma(&pol, gp.g)
    else:
        raise ValueError(f"policy must be a GammaPolicy or 'light', not {policy!r}")
    b = <board_t*>malloc(sizeof(board_t))
    if b == NULL:
        raise MemoryError()
    rng_seed(&r, seed)
    with nogil:
        _flat_mc(board.b, &pol, &r, playouts if playouts >= n else n, cands, n, wins, visits, b)
    free(b)
    for i in range(n):
        rate = wins[i] / visits[i]
        if rate > best_rate:
            best_rate = rate
            best = i
    return board.vertex(cands[best]), best_rate
