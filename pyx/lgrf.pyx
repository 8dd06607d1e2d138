# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Last-Good-Reply-with-Forgetting (LGRF-2) for the rollouts: a policy_t that wraps a rollout
policy and plays the stored reply to the last moves first, and the update of the reply tables
from a playout's result (declarations and the scheme: gammago/lgrf.pxd)."""
from libc.stdint cimport int64_t, int16_t, uint8_t
from gammago.board cimport board_t, board_is_eye, board_is_legal, EMPTY, BLACK, WHITE, PASS
from gammago.playout cimport policy_t
from gammago.rng cimport rng_t
from gammago.rollout cimport gamma_policy_t, gamma_policy_premove, gamma_policy_check
from gammago.tactics cimport tac_selfatari

cdef inline bint _lgrf_ok(const board_t* b, int m, int c) noexcept nogil:
    return b.color[m] == EMPTY and not board_is_eye(b, m, c) and board_is_legal(b, m, c)

cdef void _lgrf_setboard(void* ctx, board_t* b) noexcept nogil:
    cdef lgrf_t* g = <lgrf_t*>ctx
    g.inner.setboard(g.inner.ctx, b)

cdef void _lgrf_played(void* ctx, board_t* b, int m) noexcept nogil:
    cdef lgrf_t* g = <lgrf_t*>ctx
    g.inner.played(g.inner.ctx, b, m)

cdef int _lgrf_reply(lgrf_t* g, const board_t* b) noexcept nogil:
    """The stored reply for the side to move (to the last two moves, else to the last one) when
    it can be played and is no self-atari; PASS when none applies, and when the last move is in
    atari or put a string of the side to move in atari (tactics are the policy's). Plain LGRF-2
    (no such checks) lost 18-80-2 to LGRF off (9x9, 2000 playouts a move). Each entry is read
    once (another thread may be writing it) and checked before use."""
    cdef int c = b.to_move, prev = b.last, prev2 = b.last2, n = g.npts, m
    cdef int k, q
    if prev == PASS or g.r1 == NULL or b.npts != n:
        return PASS
    # tactics first: when the last move is in atari or put one of ours in atari, the policy
    # (which rates captures and escapes) decides
    if b.color[prev] != EMPTY and b.nlibs[b.head[prev]] == 1:
        return PASS
    for k in range(4):
        q = prev + b.off[k]
        if b.color[q] == c and b.nlibs[b.head[q]] == 1:
            return PASS
    if prev2 != PASS:
        m = g.r2[lgrf_lg2(n, c, prev2, prev)]
        if m != PASS and _lgrf_ok(b, m, c) and not tac_selfatari(b, m, c):
            g.hits2 += 1
            return m
    m = g.r1[lgrf_lg1(n, c, prev)]
    if m != PASS and _lgrf_ok(b, m, c) and not tac_selfatari(b, m, c):
        g.hits1 += 1
        return m
    return PASS

cdef int _lgrf_choose(void* ctx, board_t* b, rng_t* r) noexcept nogil:
    cdef lgrf_t* g = <lgrf_t*>ctx
    cdef int c = b.to_move
    cdef int m = _lgrf_reply(g, b)
    cdef char msg[256]
    g.moves += 1
    if m != PASS:
        if g.gamma != NULL:
            gamma_policy_premove(g.gamma, b, m)     # the gamma policy did not choose it
    else:
        # check > 1: the gamma weights, kept incrementally across the replies the policy did
        # not choose, against a recomputation (its choose() flushes the same way next)
        if g.check > 1 and g.gamma != NULL and gamma_policy_check(g.gamma, b, msg, 256):
            g.bad += 1
        m = g.inner.choose(g.inner.ctx, b, r)
    if g.check and m != PASS and not _lgrf_ok(b, m, c):
        g.bad += 1
    return m

cdef void lgrf_wrap(lgrf_t* g, policy_t* wrapper, policy_t* inner, gamma_policy_t* gamma) noexcept nogil:
    g.inner = inner[0]
    g.gamma = gamma
    g.r1 = NULL
    g.r2 = NULL
    g.npts = 0
    g.hits1 = 0
    g.hits2 = 0
    g.moves = 0
    g.bad = 0
    wrapper.ctx = g
    wrapper.setboard = _lgrf_setboard
    wrapper.choose = _lgrf_choose
    wrapper.played = _lgrf_played

cdef void lgrf_update(int16_t* r1, int16_t* r2, int n, const int16_t* mv, const uint8_t* col,
                       int nmv, int start, int res2) noexcept nogil:
    """Learn from one playout's moves mv[0..nmv) (colours col) for the moves from index start on:
    the winner's reply to the previous move (and to the previous two) is stored, the loser's is
    forgotten where it is the stored one. res2: 2 Black won, 0 White won, 1 jigo (no update).
    Passes are neither keys nor replies."""
    cdef int i, m, c, prev, prev2, win
    cdef int64_t k
    if res2 == 1 or r1 == NULL:
        return
    win = BLACK if res2 == 2 else WHITE
    if start < 1:
        start = 1
    for i in range(start, nmv):
        m = mv[i]
        prev = mv[i - 1]
        if m == PASS or prev == PASS:
            continue
        c = col[i]
        k = lgrf_lg1(n, c, prev)
        if c == win:
            r1[k] = <int16_t>m
        elif r1[k] == m:
            r1[k] = PASS
        if i >= 2:
            prev2 = mv[i - 2]
            if prev2 != PASS:
                k = lgrf_lg2(n, c, prev2, prev)
                if c == win:
                    r2[k] = <int16_t>m
                elif r2[k] == m:
                    r2[k] = PASS
