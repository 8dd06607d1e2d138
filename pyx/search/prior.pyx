# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Prior ratings of candidate moves for the tree (declarations: gammago/search/prior.pxd): the cheap
rule-based rating, the gamma rating, and the ladder adjustment read by pyx/tactics. The tree
(pyx/search/tree.pyx) plugs one of the ratings into its prior_t hook and applies the ladder adjustment
on top."""
import array
from libc.string cimport memset
from libc.stdint cimport int16_t, int32_t, uint64_t
from gammago.go.board cimport Board, board_t, board_lib_list, EMPTY, PASS, LIB_WORDS
from gammago.moves.features cimport (move_features, move_features_d, rollout_features, table_dict,
                                    team_gamma, NGROUPS)
from gammago.moves.spatial cimport spatial_dict_t
from gammago.go.tactics cimport libs_after, tac_selfatari, tac_escape_fails, tac_atari_works, TAC_YES, TAC_NO, TAC_BUDGET

cdef extern from *:
    int popcount64 "__builtin_popcountll"(unsigned long long) nogil

# =============================================================================================
# Priors: the default cheap rating (captures, escapes, self-atari, nearness to the last move,
# the edge). A gamma prior plugs in through the same prior_t hook.
# =============================================================================================
cdef void prior_cheap(void* ctx, const board_t* b, int c, const int16_t* moves, int n,
                      float* out) noexcept nogil:
    cdef int i, k, p, q, h, col, w, nl, cap, save, atari, line, row, colm, dr, dc
    cdef int o = 3 - c
    cdef uint64_t u[LIB_WORDS]
    cdef double r
    for i in range(n):
        p = moves[i]
        if p == PASS:
            out[i] = 1.0 if b.npass > 0 else 0.001
            continue
        memset(u, 0, sizeof(u))
        cap = 0
        save = 0
        atari = 0
        for k in range(4):
            q = p + b.off[k]
            col = b.color[q]
            if col == EMPTY:
                u[q >> 6] |= (<uint64_t>1) << (q & 63)
            elif col == c:
                h = b.head[q]
                for w in range(b.nwords):
                    u[w] |= b.libs[h * b.nwords + w]
                if b.nlibs[h] == 1 and b.ssize[h] > save:
                    save = b.ssize[h]
            elif col == o:
                h = b.head[q]
                if b.nlibs[h] == 1:
                    cap += b.ssize[h]
                elif b.nlibs[h] == 2:
                    atari += 1
        u[p >> 6] &= ~((<uint64_t>1) << (p & 63))
        nl = 0
        for w in range(b.nwords):
            nl += popcount64(u[w])
        if cap:
            nl += 1
        r = 1.0
        if cap:
            r *= 6.0 + (cap if cap < 10 else 10)
        if save:
            if nl >= 3:
                r *= 8.0
            elif nl == 2:
                r *= 2.0
        if tac_selfatari(b, p, c):
            r *= 0.05
        elif atari:
            r *= 1.8
        if b.last != PASS:
            dr = p // b.W - b.last // b.W
            dc = p % b.W - b.last % b.W
            if dr < 0:
                dr = -dr
            if dc < 0:
                dc = -dc
            if dr <= 1 and dc <= 1:
                r *= 3.0
            elif dr + dc <= 3:
                r *= 1.5
        row = p // b.W - 1
        colm = p % b.W - 1
        line = row
        if colm < line:
            line = colm
        if b.size - 1 - row < line:
            line = b.size - 1 - row
        if b.size - 1 - colm < line:
            line = b.size - 1 - colm
        if line == 0 and not cap and not save:
            r *= 0.2
        elif (line == 2 or line == 3) and b.nempty > b.size * b.size * 3 // 4:
            r *= 1.5
        out[i] = <float>r

ctypedef int (*features_fn)(const board_t* b, int p, int c, int32_t* out) noexcept nogil

cdef inline void _rate_by(features_fn features, const double* gamma, const board_t* b, int c,
                          const int16_t* moves, int n, float* out) noexcept nogil:
    cdef int32_t ids[NGROUPS]
    cdef int i
    for i in range(n):
        features(b, moves[i], c, ids)
        out[i] = <float>team_gamma(gamma, ids)

cdef void prior_gamma(void* ctx, const board_t* b, int c, const int16_t* moves, int n,
                      float* out) noexcept nogil:
    """The gamma prior: the product of the move's feature gammas (gammago/moves/features.pxd);
    a table with a spatial dictionary (it names it: features.table_dict) rates the largest
    pattern of its dictionary in the diamond's place."""
    cdef const double* gamma = <const double*>ctx
    cdef const spatial_dict_t* d = table_dict(gamma)
    cdef int32_t ids[NGROUPS]
    cdef int i
    if d == NULL:
        _rate_by(move_features, gamma, b, c, moves, n, out)
        return
    for i in range(n):
        move_features_d(b, moves[i], c, d, ids)
        out[i] = <float>team_gamma(gamma, ids)

cdef void prior_gamma_rollout(void* ctx, const board_t* b, int c, const int16_t* moves, int n,
                              float* out) noexcept nogil:
    """prior_gamma for a table that holds the groups the rollouts do not weigh at 1: the same
    ratings without reading those groups (rollout_features)."""
    _rate_by(rollout_features, <const double*>ctx, b, c, moves, n, out)

# ---------------------------------------------------------------------------------------------
# Ladder tactics on top of any prior (read by pyx/tactics): an escape from atari that is still
# captured is rated down, an atari whose string then dies (a working ladder or net) is rated up.
# ---------------------------------------------------------------------------------------------
cdef double LADDER_ESCAPE_FACTOR = 1e-4   # 4 decades: the bottom of the log-scaled rating
cdef double LADDER_ATARI_FACTOR = 4.0
cdef double LADDER_FUTILE_FACTOR = 0.1    # an atari that starts a ladder that fails

cdef inline bint _ladder_start(const board_t* b, int p, int c) noexcept nogil:
    """c playing p puts an opponent string in atari, captures nothing, and the string's
    extension at its last liberty leaves it two liberties: the first move of a ladder."""
    cdef int k, q, h, l, res = 0
    cdef int16_t libs[2]
    for k in range(4):
        q = p + b.off[k]
        if b.color[q] == 3 - c:
            h = b.head[q]
            if b.nlibs[h] == 1:
                return 0
            if b.nlibs[h] == 2:
                board_lib_list(b, h, libs)
                l = libs[1] if libs[0] == p else libs[0]
                # the extension's liberties on this board count p, which c will hold
                if libs_after(b, l, 3 - c, 4) - 1 == 2:
                    res = 1
    return res

cdef void prior_ladders(const board_t* b, int c, const int16_t* moves, int n, float* r) noexcept nogil:
    cdef int i, p, a
    for i in range(n):
        p = moves[i]
        if p == PASS:
            continue
        if tac_escape_fails(b, p, c, TAC_BUDGET) == TAC_YES:
            r[i] *= LADDER_ESCAPE_FACTOR
        else:
            a = tac_atari_works(b, p, c, TAC_BUDGET)
            if a == TAC_YES:
                r[i] *= LADDER_ATARI_FACTOR
            elif a == TAC_NO and LADDER_FUTILE_FACTOR != 1.0 and _ladder_start(b, p, c):
                r[i] *= LADDER_FUTILE_FACTOR


def gamma_ratings(Board board not None, table, vertices, color=None):
    """prior_gamma's rating of each move in `vertices` (GTP vertices or 'pass') for the side to
    move (or `color`) under a gamma table (a float64 array of NFEAT, or a Gammas), as the tree
    rates a node's children: a list of floats."""
    import numpy as np
    from gammago.moves.features import N_FEATURES
    a = np.ascontiguousarray(getattr(table, "table", table), dtype=np.float64)
    if a.shape != (N_FEATURES,):
        raise ValueError(f"gamma table must have {N_FEATURES} entries, not {a.shape}")
    if not vertices:
        return []
    cdef double[::1] g = a
    cdef int c = board.b.to_move if color is None else (1 if str(color).lower()[0] == "b" else 2)
    cdef int16_t[:] moves = array.array("h", [board.point(v) for v in vertices])
    cdef float[:] r = array.array("f", [0.0] * len(vertices))
    prior_gamma(<void*>&g[0], board.b, c, &moves[0], len(vertices), &r[0])
    return list(r)


def ladder_factors(Board board not None, vertices):
    """The ladder adjustment (prior_ladders) of each move in `vertices` for the side to move:
    LADDER_ESCAPE_FACTOR, LADDER_ATARI_FACTOR, LADDER_FUTILE_FACTOR or 1.0. For priors made
    outside the tree (the net's, at net-root's root)."""
    if not vertices:
        return []
    cdef int16_t[:] moves = array.array("h", [board.point(v) for v in vertices])
    cdef float[:] r = array.array("f", [1.0] * len(vertices))
    prior_ladders(board.b, board.b.to_move, &moves[0], len(vertices), &r[0])
    return list(r)
