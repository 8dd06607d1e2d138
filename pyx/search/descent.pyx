# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""One playout of the search (declarations: gammago/search/descent.pxd): expansion with the children
rated by the prior hook, the walk down by the selection, the rollout, the backup.

Threads share one tree: a descent adds its visit on the way down (a virtual loss that keeps
other threads off the same line until the result comes back), counters move by atomic adds,
and a node is expanded by the one thread that wins a compare-and-swap on its state.
"""
from libc.stdlib cimport qsort
from libc.math cimport log, lround
from libc.stdint cimport int32_t, int16_t, uint8_t
from gammago.go.board cimport (board_t, board_copy, board_play, board_check_move, board_is_eye,
                            board_area, board_score, BLACK, WHITE, PASS, MAX_PTS, MOVE_OK)
from gammago.rollout.playout cimport policy_t, playout_run, playout_run_mercy, playout_default_maxmoves
from gammago.search.prior cimport prior_ladders
from gammago.core.atomic cimport gg_add32, gg_addf, gg_cas8, gg_load8, gg_store8
from gammago.search.node_pool cimport (node_t, node_init, pool_alloc, NODE_LEAF, NODE_EXPANDING,
                                NODE_EXPANDED, NODE_NOROOM)
from gammago.search.tree_state cimport tree_t, worker_t, ND, MAX_DEPTH
from gammago.search.selection cimport select_child, crit_open_next, crit_gather, crit_refresh, CRIT_EVERY

# ---------------------------------------------------------------------------------------------
# Expansion
# ---------------------------------------------------------------------------------------------
ctypedef struct rated_t:
    float r
    int16_t move

cdef int _by_rating(const void* a, const void* b) noexcept nogil:
    cdef float x = (<const rated_t*>a).r
    cdef float y = (<const rated_t*>b).r
    if x > y:
        return -1
    if x < y:
        return 1
    return (<const rated_t*>a).move - (<const rated_t*>b).move

cdef double RATING_LOG_DECADES = 4.0

cdef inline float _rating(double r, double best) noexcept nogil:
    """A child's rating in [0, 1] from its prior r (best: the best sibling's), log-scaled: 1 for
    the best, 0 at RATING_LOG_DECADES below it. Gammas span orders of magnitude, so r / best
    left all but the top few near 0; the log scale spreads them out
    (docs/notebook/experiments/search-settings.md)."""
    cdef double x
    if r <= 0:
        return 0
    x = 1.0 + log(r / best) / (RATING_LOG_DECADES * 2.302585092994046)
    return <float>(x if x > 0 else 0)

cdef void _rate_sorted(tree_t* t, const board_t* b, const int16_t* moves, int n, rated_t* out,
                       float* best) noexcept nogil:
    """Prior ratings of moves by the side to move on b: the tree's prior, then the ladder
    reader's adjustment (prior_ladders).
    out: (rating, move) sorted best first (ties by move); best: the best rating (1 when all
    are 0), as _rating takes it."""
    cdef float r[MAX_PTS + 1]
    cdef int i, c = b.to_move
    t.prior.rate(t.prior.ctx, b, c, moves, n, r)
    prior_ladders(b, c, moves, n, r)
    best[0] = 0
    for i in range(n):
        if r[i] > best[0]:
            best[0] = r[i]
        out[i].r = r[i]
        out[i].move = moves[i]
    if best[0] <= 0:
        best[0] = 1
    qsort(out, n, sizeof(rated_t), _by_rating)

cdef inline bint _avoided(const tree_t* t, int c, int p, int depth) noexcept nogil:
    """True when move p of colour c is kept out of the children of a node `depth` plies below
    the root (Search.set_avoid)."""
    return t.has_avoid and t.avoid[c][p] > depth + t.avoid_base


cdef int expand_node(tree_t* t, int32_t idx, const board_t* b, int depth) noexcept nogil:
    cdef node_t* nd = ND(t, idx)
    cdef int c = b.to_move
    cdef int i, p, n = 0
    cdef int32_t first
    cdef int16_t moves[MAX_PTS + 1]
    cdef rated_t sorted_[MAX_PTS + 1]
    cdef float best
    if not gg_cas8(&nd.state, NODE_LEAF, NODE_EXPANDING):
        return 0
    for i in range(b.nempty):
        p = b.empty[i]
        if board_is_eye(b, p, c):
            continue
        if board_check_move(b, p, c, 1) != MOVE_OK:
            continue
        if _avoided(t, c, p, depth):
            continue
        moves[n] = p
        n += 1
    if n == 0 or not _avoided(t, c, PASS, depth):
        moves[n] = PASS
        n += 1
    first = pool_alloc(&t.pool, n)
    if first < 0:
        gg_store8(&nd.state, NODE_NOROOM)
        return 0
    _rate_sorted(t, b, moves, n, sorted_, &best)
    for i in range(n):
        node_init(ND(t, first + i), sorted_[i].move, _rating(sorted_[i].r, best))
    nd.first = first
    nd.nchildren = n
    if t.prm.crit > 0:
        for i in range(t.prm.pw_init if t.prm.pw_init < n else n):
            crit_open_next(t, nd, i)
    nd.nopen = t.prm.pw_init if t.prm.pw_init < n else n
    gg_store8(&nd.state, NODE_EXPANDED)
    return 1

# ---------------------------------------------------------------------------------------------
# One playout: down, out, back up
# ---------------------------------------------------------------------------------------------
cdef void descend(tree_t* t, worker_t* w) noexcept nogil:
    cdef board_t* b = w.b
    cdef int32_t node = 0, child
    cdef int depth = 0, st, i, p, s, res2, maxmoves, mercy_won = 0
    cdef uint8_t owner[MAX_PTS]
    cdef policy_t* pol
    board_copy(b, t.root)
    gg_add32(&ND(t, 0).visits, 1)
    w.path[0] = 0
    while True:
        st = gg_load8(&ND(t, node).state)
        if st != NODE_EXPANDED:
            if b.npass >= 2 or depth >= MAX_DEPTH:
                break
            if st != NODE_LEAF or ND(t, node).visits < t.prm.expand_visits:
                break
            if not expand_node(t, node, b, depth):
                break
        child = select_child(t, ND(t, node), depth == 0)
        w.mover[depth + 1] = b.to_move
        board_play(b, ND(t, child).move, b.to_move)
        gg_add32(&ND(t, child).visits, 1)
        depth += 1
        w.path[depth] = child
        node = child
    if depth > w.maxdepth:
        w.maxdepth = depth
    pol = &w.pol
    if b.npass < 2:
        maxmoves = playout_default_maxmoves(b)
        if t.prm.mercy > 0:
            playout_run_mercy(b, pol, &w.rng, maxmoves, t.prm.mercy,
                              t.root.captured[WHITE] - t.root.captured[BLACK], &mercy_won)
        else:
            playout_run(b, pol, &w.rng, maxmoves)
    if mercy_won:
        # ended by the mercy rule: the side far ahead in captures wins. The board is not played
        # out (dead stones may stand), so its owners are counted neither in the ownership nor
        # in criticality; its score is the count as the board stands
        s = <int>lround(board_score(b) + b.komi)    # Black's area minus White's
        res2 = 2 if mercy_won == BLACK else 0
    else:
        board_area(b, owner)
        s = 0
        for i in range(b.nempty):          # empty points owned by one side
            p = b.empty[i]
            if owner[p] == BLACK:
                s += 1
                w.own[p] += 1
            elif owner[p] == WHITE:
                s -= 1
                w.own[p] -= 1
            else:
                w.own_none[p] += 1
        for p in range(b.npts):            # stones
            if b.color[p] == BLACK:
                s += 1
                w.own[p] += 1
            elif b.color[p] == WHITE:
                s -= 1
                w.own[p] -= 1
        w.own_n += 1
        w.score_sq += <double>s * s
        if s > b.komi:
            res2 = 2
        elif s == b.komi:
            res2 = 1
        else:
            res2 = 0
        if t.prm.crit > 0:
            crit_gather(w, b, owner, res2)
    for i in range(1, depth + 1):
        gg_add32(&ND(t, w.path[i]).wins2, res2 if w.mover[i] == BLACK else 2 - res2)
    for i in range(depth + 1):               # the score, from Black's view, in every node
        gg_addf(&ND(t, w.path[i]).score, <float>s)
        gg_addf(&ND(t, w.path[i]).score_sq, <float>(s * s))
    # the root is scored for the player who moved into it (the one not to move there)
    gg_add32(&ND(t, 0).wins2, res2 if t.root.to_move == WHITE else 2 - res2)
    w.playouts += 1
    if t.prm.crit > 0 and (w.playouts % CRIT_EVERY) == 0:
        crit_refresh(t)
