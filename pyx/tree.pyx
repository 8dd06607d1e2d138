# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""UCT search with progressive widening (declarations and the map: gammago/tree.pxd).

Storage, descent, selection policy, priors and the search loop are separate sections below.
Threads share one tree: a descent adds its visit on the way down (a virtual loss that keeps
other threads off the same line until the result comes back), counters move by atomic adds,
and a node is expanded by the one thread that wins a compare-and-swap on its state.
"""
from libc.stdlib cimport malloc, calloc, free, qsort
from libc.string cimport memset, memcpy
from libc.math cimport log, sqrt
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t, uint64_t
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
from gammago.board cimport (board_t, Board, board_copy, board_play, board_check_move, board_is_eye,
                            board_is_legal,
                            board_area, board_first_lib, board_lib_list, EMPTY, BLACK, WHITE, BORDER, PASS, MAX_PTS, MOVE_OK,
                            LIB_WORDS)
from gammago.playout cimport (policy_t, policy_light, playout_run, playout_run_mercy,
                              playout_default_maxmoves)
from gammago.rng cimport rng_t, rng_seed
from gammago.features cimport move_features, team_gamma, NGROUPS, NFEAT
from gammago.prior cimport prior_cheap, prior_gamma, prior_gamma_rollout, prior_ladders
from gammago.rollout cimport rollout_make_gamma, rollout_release_gamma, gamma_policy_t
from gammago.tail cimport TAIL_RULES_DEFAULT
from gammago.tail import rule_names
from gammago.rollout import check_settings
from gammago.seeds import derive

cdef extern from *:
    """
    #include <stdint.h>
    static inline int32_t gg_add32(int32_t* p, int32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
    static inline int64_t gg_add64(int64_t* p, int64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
    static inline int gg_cas8(uint8_t* p, uint8_t expect, uint8_t want) {
        return __atomic_compare_exchange_n(p, &expect, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); }
    static inline uint8_t gg_load8(uint8_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void gg_store8(uint8_t* p, uint8_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline int gg_loadi(int* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline void gg_storei(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    static inline int16_t gg_load16(int16_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void gg_store16(int16_t* p, int16_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline void* gg_loadp(void** p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline int gg_casp(void** p, void* want) { void* expect = 0;
        return __atomic_compare_exchange_n(p, &expect, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); }
    """
    int32_t gg_add32(int32_t* p, int32_t v) nogil
    int64_t gg_add64(int64_t* p, int64_t v) nogil
    int gg_cas8(uint8_t* p, uint8_t expect, uint8_t want) nogil
    uint8_t gg_load8(uint8_t* p) nogil
    void gg_store8(uint8_t* p, uint8_t v) nogil
    int gg_loadi(int* p) nogil
    void gg_storei(int* p, int v) nogil
    int16_t gg_load16(int16_t* p) nogil
    void gg_store16(int16_t* p, int16_t v) nogil
    int popcount64 "__builtin_popcountll"(unsigned long long) nogil
    int ctz64 "__builtin_ctzll"(unsigned long long) nogil
    void* gg_loadp(void** p) nogil
    int gg_casp(void** p, void* want) nogil

cdef inline double _now() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9

# =============================================================================================
# Storage: the node pool
# =============================================================================================
cdef inline void _node_init(node_t* n, int move, float rating) noexcept nogil:
    n.visits = 0
    n.wins2 = 0
    n.first = -1
    n.rating = rating
    n.move = move
    n.nchildren = 0
    n.nopen = 0
    n.state = NODE_LEAF
    n.widening = 0

cdef inline node_t* ND(tree_t* t, int32_t i) noexcept nogil:
    """Node i of the tree's pool (its chunk must exist: indices come from _alloc)."""
    return &t.chunks[i >> CHUNK_BITS].nodes[i & CHUNK_MASK]

cdef inline bint _fail_alloc(tree_t* t) noexcept nogil:
    """Test hook (Search.fail_allocs): True while allocations of the tree are to fail."""
    if t.fail_allocs > 0:
        t.fail_allocs -= 1
        return 1
    return 0

cdef int _chunk_ensure(tree_t* t, int32_t k) noexcept nogil:
    """Make chunk k exist: drawn from the budget and malloc'd by whichever thread gets there
    first (a compare-and-swap publishes it). 0 when the table, the budget or malloc says no."""
    cdef chunk_t* c
    if k >= (t.alloc + CHUNK_MASK) >> CHUNK_BITS:
        return 0
    if gg_loadp(<void**>&t.chunks[k]) != NULL:
        return 1
    if gg_add64(&t.budget.used, 1) >= t.budget.limit:
        gg_add64(&t.budget.used, -1)
        return 0
    c = NULL if _fail_alloc(t) else <chunk_t*>malloc(sizeof(chunk_t))
    if c == NULL:
        gg_add64(&t.budget.used, -1)
        return 0
    if gg_casp(<void**>&t.chunks[k], <void*>c):
        gg_add32(&t.nchunks, 1)
    else:                        # another thread made it meanwhile
        free(c)
        gg_add64(&t.budget.used, -1)
    return 1

cdef void _chunks_release(tree_t* t, int32_t from_k) noexcept nogil:
    """Free chunks from_k.. and give them back to the budget (no thread may be in the tree)."""
    cdef int32_t k
    for k in range(from_k, (t.alloc + CHUNK_MASK) >> CHUNK_BITS):
        if t.chunks[k] != NULL:
            free(t.chunks[k])
            t.chunks[k] = NULL
            t.nchunks -= 1
            gg_add64(&t.budget.used, -1)

cdef int32_t _alloc(tree_t* t, int n) noexcept nogil:
    """Reserve n contiguous nodes; -1 (and t.full set) when the pool has no room."""
    cdef int32_t first
    if gg_loadi(&t.full):
        return -1
    first = gg_add32(&t.top, n)
    if (first + n > t.cap or not _chunk_ensure(t, first >> CHUNK_BITS)
            or not _chunk_ensure(t, (first + n - 1) >> CHUNK_BITS)):
        gg_storei(&t.full, 1)
        return -1
    return first

cdef void _tree_clear(tree_t* t) noexcept nogil:
    """An empty tree (the root alone); its chunks but the first go back to the budget."""
    _chunks_release(t, 1)
    t.top = 1
    t.full = 0
    _node_init(ND(t, 0), PASS, 1.0)

cdef inline void _as_leaf(node_t* nd) noexcept nogil:
    """A node kept without its children (expanded again when next visited)."""
    nd.state = NODE_LEAF
    nd.first = -1
    nd.nchildren = 0
    nd.nopen = 0

cdef int32_t _copy_subtree(tree_t* src, int32_t r, tree_t* dst) noexcept nogil:
    """Copy the subtree of src's node r into dst (cleared) with r at index 0, children blocks
    kept contiguous in breadth-first order, within dst's cap and the chunks its budget gives: a
    node whose children do not fit becomes a leaf (with its statistics). Returns the nodes used."""
    cdef int32_t top = 1, i = 0, n, k
    cdef node_t* d
    ND(dst, 0)[0] = ND(src, r)[0]
    while i < top:
        d = ND(dst, i)
        n = d.nchildren
        if (d.state == NODE_EXPANDED and top + n <= dst.cap
                and _chunk_ensure(dst, top >> CHUNK_BITS)
                and _chunk_ensure(dst, (top + n - 1) >> CHUNK_BITS)):
            for k in range(n):
                ND(dst, top + k)[0] = ND(src, d.first + k)[0]
            d.first = top
            top += n
        else:
            _as_leaf(d)
        d.widening = 0
        i += 1
    return top

cdef inline void _mark(tree_t* t, int32_t i) noexcept nogil:
    t.chunks[i >> CHUNK_BITS].live[(i & CHUNK_MASK) >> 6] |= (<uint64_t>1) << (i & 63)

cdef inline int32_t _next_marked(tree_t* t, int32_t i, int32_t end) noexcept nogil:
    """The first marked node at index >= i (end when none before end)."""
    cdef chunk_t* c
    cdef uint64_t word
    while i < end:
        c = t.chunks[i >> CHUNK_BITS]
        if c == NULL:
            i = ((i >> CHUNK_BITS) + 1) << CHUNK_BITS
            continue
        word = c.live[(i & CHUNK_MASK) >> 6] >> (i & 63)
        if word == 0:
            i = (i | 63) + 1
            continue
        return i + ctz64(word)
    return end

cdef inline int32_t _new_index(tree_t* t, int32_t i) noexcept nogil:
    """Where marked node i goes: the marked nodes before it (chunk_t.rank and the word's bits)."""
    cdef chunk_t* c = t.chunks[i >> CHUNK_BITS]
    cdef int w = (i & CHUNK_MASK) >> 6
    return c.rank[w] + popcount64(c.live[w] & (((<uint64_t>1) << (i & 63)) - 1))

cdef int _keep_subtree(tree_t* t, int32_t r) noexcept nogil:
    """Make node r the new root, dropping everything else, in place: mark r's subtree (a node's
    children always lie above it in the pool, so one upward sweep finds them all), then slide
    the marked nodes down in order (each block of children stays contiguous; r, the lowest,
    lands at 0), and give the chunks no longer needed back to the budget. Takes no memory.
    Returns 1, or 2 when a chunk below the new top is missing (an allocation failed in the
    middle of the pool): then r is copied over the root and its subtree stays where it is."""
    cdef int32_t end = t.top, i, j, n, k, nk
    cdef int32_t kept = 0
    cdef int w
    cdef node_t tmp
    cdef node_t* nd
    if end > t.cap:
        end = t.cap
    nk = (end + CHUNK_MASK) >> CHUNK_BITS
    for k in range(nk):
        if t.chunks[k] != NULL:
            memset(t.chunks[k].live, 0, sizeof(t.chunks[k].live))
    _mark(t, r)
    i = _next_marked(t, r, end)
    while i < end:
        nd = ND(t, i)
        if nd.state == NODE_EXPANDED:
            for j in range(nd.first, nd.first + nd.nchildren):
                _mark(t, j)
        i = _next_marked(t, i + 1, end)
    for k in range(nk):
        if t.chunks[k] != NULL:
            for w in range(CHUNK_WORDS):
                t.chunks[k].rank[w] = kept
                kept += popcount64(t.chunks[k].live[w])
    for k in range(((kept - 1) >> CHUNK_BITS) + 1):
        if t.chunks[k] == NULL:
            tmp = ND(t, r)[0]
            ND(t, 0)[0] = tmp
            nd = ND(t, 0)
            if nd.state != NODE_EXPANDED:
                _as_leaf(nd)
            nd.widening = 0
            return 2
    i = _next_marked(t, r, end)
    while i < end:
        tmp = ND(t, i)[0]
        if tmp.state == NODE_EXPANDED:
            tmp.first = _new_index(t, tmp.first)
        else:
            _as_leaf(&tmp)
        tmp.widening = 0
        ND(t, _new_index(t, i))[0] = tmp
        i = _next_marked(t, i + 1, end)
    t.top = kept
    t.full = 0
    _chunks_release(t, ((kept - 1) >> CHUNK_BITS) + 1)
    return 1

# =============================================================================================
# Descent: expansion, one playout, backup
# =============================================================================================
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
    left all but the top few near 0: the log scale beat it by +288 Elo
    (docs/experiments/search-settings.md)."""
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


cdef int _expand(tree_t* t, int32_t idx, const board_t* b, int depth) noexcept nogil:
    """Give node idx (whose position is b, `depth` plies below the root) its children: every
    legal move (positional superko) that does not fill an own eye and is not avoided there
    (_avoided), plus PASS (unless avoided while another move is left), sorted by prior rating.
    1 on success."""
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
    first = _alloc(t, n)
    if first < 0:
        gg_store8(&nd.state, NODE_NOROOM)
        return 0
    _rate_sorted(t, b, moves, n, sorted_, &best)
    for i in range(n):
        _node_init(ND(t, first + i), sorted_[i].move, _rating(sorted_[i].r, best))
    nd.first = first
    nd.nchildren = n
    if t.prm.crit > 0:
        for i in range(t.prm.pw_init if t.prm.pw_init < n else n):
            _open_next(t, nd, i)
    nd.nopen = t.prm.pw_init if t.prm.pw_init < n else n
    gg_store8(&nd.state, NODE_EXPANDED)
    return 1


cdef void _playout(tree_t* t, worker_t* w) noexcept nogil:
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
            if not _expand(t, node, b, depth):
                break
        child = _select(t, ND(t, node), depth == 0)
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
        # in criticality
        s = 0
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
            _crit_gather(w, b, owner, res2)
    for i in range(1, depth + 1):
        gg_add32(&ND(t, w.path[i]).wins2, res2 if w.mover[i] == BLACK else 2 - res2)
    # the root is scored for the player who moved into it (the one not to move there)
    gg_add32(&ND(t, 0).wins2, res2 if t.root.to_move == WHITE else 2 - res2)
    w.playouts += 1
    if t.prm.crit > 0 and (w.playouts % CRIT_EVERY) == 0:
        _crit_refresh(t)

# =============================================================================================
# Criticality (Coulom, "Criticality: a Monte-Carlo heuristic for Go programs", 2009; Ray and
# Crazy Stone use it to order progressive widening): a point is critical when whoever owns it
# at the end of a playout tends to win. With params_t.crit > 0 the next child opened at a node
# is the unopened one with the highest rating + crit * criticality (from all playouts of the
# search so far, the root's statistics used at every node), not simply the next in rating
# order, so a vital point of a fight that the gammas rate low is searched early.
# =============================================================================================
cdef enum:
    CRIT_EVERY = 128     # a worker refreshes tree_t.crit after this many of its playouts
    CRIT_MIN = 256       # playouts (all workers) before criticality is trusted

cdef inline void _crit_gather(worker_t* w, const board_t* b, const uint8_t* owner, int res2) noexcept nogil:
    """Count one playout's final owners (owner: board_area's) and result (res2: 2 Black won,
    1 jigo, 0 White won) into w's criticality statistics."""
    cdef int p, o
    for p in range(b.npts):
        o = owner[p]
        if o == BLACK:
            w.crit_black[p] += 1
            w.crit_winner2[p] += res2
        elif o == WHITE:
            w.crit_white[p] += 1
            w.crit_winner2[p] += 2 - res2
    w.crit_bwins2 += res2

cdef void _crit_refresh(tree_t* t) noexcept nogil:
    """tree_t.crit from the sum of every worker's statistics. The other workers' counters are
    read while they run: a count a playout behind changes nothing that matters here."""
    cdef int i, p, npts = t.root.npts
    cdef int64_t n = 0, bw2 = 0
    cdef double inv, wb, c
    cdef int64_t cb, cw, cv
    for i in range(t.nworkers):
        n += t.workers[i].own_n
        bw2 += t.workers[i].crit_bwins2
    if n < CRIT_MIN:
        return
    inv = 1.0 / n
    wb = bw2 * 0.5 * inv
    for p in range(npts):
        cb = 0
        cw = 0
        cv = 0
        for i in range(t.nworkers):
            cb += t.workers[i].crit_black[p]
            cw += t.workers[i].crit_white[p]
            cv += t.workers[i].crit_winner2[p]
        c = cv * 0.5 * inv - (cb * inv * wb + cw * inv * (1.0 - wb))
        t.crit[p] = <float>(c if c > 0 else 0)

cdef void _open_next(tree_t* t, node_t* nd, int k) noexcept nogil:
    """Make child k of nd the best by rating + crit * criticality among children k.. (by
    swapping two unopened children, which no other thread reads: selection only looks at the
    first nopen, and nopen is published after the swap). Ties keep the rating order."""
    cdef int j, best = k
    cdef node_t* ch
    cdef node_t tmp
    cdef double key, bestkey = -1e300
    for j in range(k, nd.nchildren):
        ch = ND(t, nd.first + j)
        key = ch.rating + t.prm.crit * t.crit[ch.move]
        if key > bestkey:
            bestkey = key
            best = j
    if best != k:
        tmp = ND(t, nd.first + k)[0]
        ND(t, nd.first + k)[0] = ND(t, nd.first + best)[0]
        ND(t, nd.first + best)[0] = tmp

cdef int _widen_critical(tree_t* t, node_t* nd, int32_t N) noexcept nogil:
    """Progressive widening with criticality: open children while the parent's visits N pass
    the schedule, one thread at a time per node (the others go on with what is open).
    Returns the children open."""
    cdef int nopen = gg_load16(&nd.nopen)
    while nopen < nd.nchildren and N >= t.pw[nopen]:
        if not gg_cas8(&nd.widening, 0, 1):
            break
        nopen = gg_load16(&nd.nopen)
        if nopen < nd.nchildren and N >= t.pw[nopen]:
            _open_next(t, nd, nopen)
            nopen += 1
            gg_store16(&nd.nopen, <int16_t>nopen)
        gg_store8(&nd.widening, 0)
    return nopen

# =============================================================================================
# Selection policy: UCB1-Tuned + rating bonus over the open children
# =============================================================================================
cdef int32_t _select(tree_t* t, node_t* nd, bint at_root) noexcept nogil:
    cdef int32_t N = nd.visits
    cdef int nopen = nd.nopen
    cdef int n = nd.nchildren
    cdef int i, best = -1
    cdef node_t* ch
    cdef double logN, bonus, v, u, var, bestv = -1e300, p
    cdef params_t* prm = &t.prm
    # progressive widening: open the next children as the parent's visits pass pw[k]
    if prm.crit > 0:
        nopen = _widen_critical(t, nd, N)
    else:
        while nopen < n and N >= t.pw[nopen]:
            nopen += 1
        if nopen != nd.nopen:
            nd.nopen = nopen
    logN = log(N + 1.0)
    bonus = prm.bonus_weight * sqrt(prm.bonus_equiv / (N + prm.bonus_equiv))
    for i in range(nopen):
        ch = ND(t, nd.first + i)
        if at_root and t.root_no_pass and ch.move == PASS:
            continue
        v = ch.visits
        if v <= 0:
            u = prm.fpu + bonus * ch.rating
        else:
            p = ch.wins2 * 0.5 / v
            var = p - p * p + sqrt(2.0 * logN / v)
            if var > 0.25:
                var = 0.25
            u = prm.ucb_c * sqrt(logN / v * var) + bonus * ch.rating
            u += p
        if u > bestv:
            bestv = u
            best = i
    if best < 0:
        # only PASS is open at a root that may not pass: take the best-rated other move
        for i in range(n):
            if ND(t, nd.first + i).move != PASS:
                best = i
                break
        if best < 0:
            best = 0
    return nd.first + best

# =============================================================================================
# The search loop
# =============================================================================================
cdef void _work(tree_t* t, worker_t* w, int64_t n) noexcept nogil:
    """Run worker w until the search ends, or for at most n playouts (n >= 0)."""
    cdef int64_t k
    cdef int64_t tick = 0
    while not gg_loadi(&t.stop) and (n < 0 or tick < n):
        if t.max_playouts > 0:
            k = gg_add64(&t.issued, 1)
            if k >= t.max_playouts:
                break
        _playout(t, w)
        tick += 1
        if t.deadline > 0 and (tick & 7) == 0 and _now() >= t.deadline:
            gg_storei(&t.stop, 1)
            break

cdef int _light_make(void* arg, policy_t* pol) noexcept nogil:
    policy_light(pol)
    return 1

cdef void _no_release(void* arg, policy_t* pol) noexcept nogil:
    pass

# =============================================================================================
# Python edge
# =============================================================================================
DEFAULTS = dict(expand_visits=40, pw_init=1, pw_base=40.0, pw_factor=1.4, ucb_c=1.0,
                bonus_weight=0.35, bonus_equiv=1000.0, fpu=1.0, crit=0.0, mercy=0)
_SAID = set()       # warnings given once per process (_say_once)


def _say_once(key, text):
    """Log a warning (logger 'gammago', stderr) the first time `key` comes up in the process."""
    import logging
    if key not in _SAID:
        _SAID.add(key)
        logging.getLogger("gammago").warning("tree: %s", text)

CHUNK_BYTES = sizeof(chunk_t)   # memory a chunk of the pool takes (CHUNK_NODES nodes and marks)
NODE_BYTES = sizeof(node_t)     # one node (24 bytes)
NODES_PER_CHUNK = CHUNK_NODES


cdef budget_t* _budget_new(int64_t chunks) except NULL:
    cdef budget_t* b = <budget_t*>calloc(1, sizeof(budget_t))
    if b == NULL:
        raise MemoryError()
    b.limit = chunks
    b.refs = 1
    return b


cdef void _budget_drop(budget_t* b) noexcept:
    b.refs -= 1
    if b.refs == 0:
        free(b)


def chunks_for(long long nodes):
    """Chunks of the pool that hold `nodes` nodes (at least 1)."""
    return max(1, (nodes + CHUNK_NODES - 1) // CHUNK_NODES)


cdef class NodeBudget:
    """The memory of one or more trees: at most `nodes` nodes (rounded up to whole chunks of
    CHUNK_NODES, CHUNK_BYTES each) held by all the trees made with it together (Search(...,
    budget=...)). A tree takes chunks as it grows and gives them back when it is cleared, keeps
    a subtree or is freed; a tree always holds its first chunk, even past the limit."""
    cdef budget_t* b

    def __cinit__(self, long long nodes):
        if nodes < 1:
            raise ValueError(f"a node budget must be positive, not {nodes}")
        self.b = _budget_new(chunks_for(nodes))

    def __dealloc__(self):
        if self.b != NULL:
            _budget_drop(self.b)

    @property
    def limit_nodes(self):
        """Nodes the trees may hold together (whole chunks). Set it between runs, while no
        thread is in any of the trees; lowering it takes nothing away, it stops growth."""
        return self.b.limit * CHUNK_NODES

    @limit_nodes.setter
    def limit_nodes(self, long long nodes):
        if nodes < 1:
            raise ValueError(f"a node budget must be positive, not {nodes}")
        self.b.limit = chunks_for(nodes)

    @property
    def used_nodes(self):
        """Nodes of the chunks the trees hold now."""
        return self.b.used * CHUNK_NODES

    @property
    def used_bytes(self):
        return self.b.used * CHUNK_BYTES

    @property
    def limit_bytes(self):
        return self.b.limit * CHUNK_BYTES


def _unweighed_at_one(table):
    """Does the gamma table hold every group the rollouts do not weigh at 1?"""
    from gammago import features as F
    for g, name in enumerate(F.GROUP_NAMES):
        if name not in F.ROLLOUT_GROUPS:
            lo = F.GROUP_BASES[g]
            if (table[lo:lo + F.GROUP_SIZES[g]] != 1.0).any():
                return False
    return True


cdef class Search:
    """A UCT tree over a node pool of at most max_nodes nodes, taken in chunks as the tree
    grows from `budget` (a NodeBudget shared with other trees; None: one of max_nodes for this
    tree alone); see gammago/tree.pxd."""
    cdef tree_t t
    cdef worker_t* workers
    cdef int nworkers
    cdef rollout_maker_t maker
    cdef public object params
    cdef uint64_t seed
    cdef object _gamma        # the numpy table behind the gamma prior (kept alive here)
    cdef object _rollout_table  # the numpy table behind the gamma rollouts (kept alive here)
    cdef int _light_after     # gamma rollouts: moves before the light tail (0 never)
    cdef int _tail            # gamma rollouts: the light tail's rules word (gamma_policy_t.tail)

    def __cinit__(self, int max_nodes=1000000, seed=1, NodeBudget budget=None, **params):
        if max_nodes < 1000:
            raise ValueError(f"max_nodes must be at least 1000, not {max_nodes}")
        memset(&self.t, 0, sizeof(tree_t))
        if budget is None:
            self.t.budget = _budget_new(chunks_for(max_nodes))
        else:
            self.t.budget = budget.b
            self.t.budget.refs += 1
        self.t.cap = max_nodes
        self.t.alloc = max_nodes
        self.t.chunks = <chunk_t**>calloc(chunks_for(max_nodes), sizeof(chunk_t*))
        self.t.root = <board_t*>malloc(sizeof(board_t))
        if self.t.chunks == NULL or self.t.root == NULL:
            raise MemoryError(f"no memory for a tree of {max_nodes} nodes")
        # the first chunk (the root's) is always held, whatever the budget says
        self.t.chunks[0] = <chunk_t*>malloc(sizeof(chunk_t))
        if self.t.chunks[0] == NULL:
            raise MemoryError("no memory for the first chunk of a tree")
        self.t.nchunks = 1
        self.t.budget.used += 1
        self.t.prior.ctx = NULL
        self.t.prior.rate = prior_cheap
        self.maker.arg = NULL
        self.maker.make = _light_make
        self.maker.release = _no_release
        self.workers = NULL
        self.nworkers = 0
        self.seed = seed
        _tree_clear(&self.t)
        self.t.root.size = 0
        self.params = dict(DEFAULTS)
        self.configure(**params)

    def __dealloc__(self):
        self._free_workers()
        if self.t.chunks != NULL:
            _chunks_release(&self.t, 0)
            free(self.t.chunks)
        if self.t.budget != NULL:
            _budget_drop(self.t.budget)
        free(self.t.root)

    cdef void _free_workers(self):
        cdef int i
        if self.workers != NULL:
            for i in range(self.nworkers):
                if self.workers[i].has_pol:
                    self.maker.release(self.maker.arg, &self.workers[i].pol)
                free(self.workers[i].b)
            free(self.workers)
        self.workers = NULL
        self.nworkers = 0
        self.t.workers = NULL
        self.t.nworkers = 0

    def use_gammas(self, table):
        """Rate children by the product of their feature gammas (a float64 table of NFEAT
        entries, as gammago.gammas loads); None goes back to the cheap built-in rating. The
        ladder reader's adjustment (prior_ladders) applies on top of either: the gammas'
        G_LADDER group is learned from what strong players play (they leave a working ladder
        unplayed until it matters: atari-works gets a gamma below 1), the adjustment says what
        the search should look at first."""
        import numpy as np
        if table is None:
            self._gamma = None
            self.t.prior.ctx = NULL
            self.t.prior.rate = prior_cheap
            return
        a = np.ascontiguousarray(table, dtype=np.float64)
        if a.ndim != 1 or a.shape[0] != NFEAT:
            raise ValueError(f"gamma table must have {NFEAT} entries, not {a.shape}")
        if not np.all(np.isfinite(a)) or (a <= 0).any():
            raise ValueError("gamma table holds a non-positive or non-finite value")
        cdef double[::1] view = a
        self._gamma = a
        self.t.prior.ctx = <void*>&view[0]
        # a table that holds the groups the rollouts do not weigh at 1 (the rollouts' gammas)
        # rates the same without reading them
        self.t.prior.rate = prior_gamma_rollout if _unweighed_at_one(a) else prior_gamma

    def use_gamma_rollouts(self, table, int light_after=0, int tail=TAIL_RULES_DEFAULT):
        """Roll out with the gamma policy of gammago.rollout (one policy context per worker)
        for a float64 gamma table; None goes back to light (uniform) rollouts. light_after: a
        rollout's moves after its first light_after follow the light tail's rules, not the
        gammas (gamma_policy_t.light_after; 0 never). tail: the light tail's optional rules, a
        rules word (gammago.tail.rules; gamma_policy_t.tail)."""
        import numpy as np
        cdef double[::1] view
        check_settings(light_after, tail)
        self._light_after = light_after
        self._tail = tail
        if table is None:
            self._free_workers()
            self._rollout_table = None
            self.maker.arg = NULL
            self.maker.make = _light_make
            self.maker.release = _no_release
            return
        a = np.ascontiguousarray(table, dtype=np.float64)
        if a.ndim != 1 or a.shape[0] != NFEAT:
            raise ValueError(f"gamma table must have {NFEAT} entries, not {a.shape}")
        if not np.all(np.isfinite(a)) or (a <= 0).any():
            raise ValueError("gamma table holds a non-positive or non-finite value")
        self._free_workers()
        view = a
        self._rollout_table = a
        self.maker.arg = <void*>&view[0]
        self.maker.make = rollout_make_gamma
        self.maker.release = rollout_release_gamma

    @property
    def rollouts(self):
        return "gamma" if self._rollout_table is not None else "light"

    @property
    def light_after(self):
        """The gamma rollouts' moves before their light tail (use_gamma_rollouts; 0 never)."""
        return self._light_after

    @property
    def tail(self):
        """The gamma rollouts' light tail's rules word (use_gamma_rollouts)."""
        return self._tail

    @property
    def tail_rules(self):
        """The names of the light tail's rules that are on (gammago.tail.rule_names)."""
        return rule_names(self._tail)

    @property
    def prior(self):
        return "gamma" if self._gamma is not None else "cheap"

    def configure(self, **params):
        """Set search parameters (names as in DEFAULTS); ValueError for unknown or bad ones."""
        cdef params_t* prm = &self.t.prm
        cdef int k
        cdef double acc = 0, step
        p = dict(self.params)          # checked in full before any of it is used
        for name, v in params.items():
            if name not in DEFAULTS:
                raise ValueError(f"unknown search parameter {name!r} (known: {', '.join(DEFAULTS)})")
            p[name] = type(DEFAULTS[name])(v)
        if p["expand_visits"] < 1 or p["pw_init"] < 1 or p["pw_base"] < 0 or p["pw_factor"] < 1:
            raise ValueError(f"bad search parameters: {p}")
        if p["crit"] < 0:
            raise ValueError(f"crit must be >= 0, not {p['crit']}")
        if p["mercy"] < 0:
            raise ValueError(f"mercy must be >= 0, not {p['mercy']}")
        self.params = p
        prm.expand_visits = p["expand_visits"]
        prm.pw_init = p["pw_init"]
        prm.pw_base = p["pw_base"]
        prm.pw_factor = p["pw_factor"]
        prm.ucb_c = p["ucb_c"]
        prm.bonus_weight = p["bonus_weight"]
        prm.bonus_equiv = p["bonus_equiv"]
        prm.fpu = p["fpu"]
        prm.crit = p["crit"]
        prm.mercy = p["mercy"]
        # pw[k]: parent visits from which child k (0-based) is open
        step = prm.pw_base
        for k in range(MAX_PTS + 2):
            if k < prm.pw_init:
                self.t.pw[k] = 0
            else:
                acc += step
                step *= prm.pw_factor
                self.t.pw[k] = acc if acc < 1e15 else 1e15

    # --- the root ---
    def set_root(self, Board board, moves=None):
        """Search from board. moves: the points played since the last root (each a point index,
        0 = pass), to keep that subtree; None clears the tree. Returns the visits kept."""
        cdef int32_t node = 0, i, found
        cdef int kept
        cdef node_t* nd
        if moves is not None and self.t.root.size == board.b.size and self.t.top > 1:
            for m in moves:
                nd = ND(&self.t, node)
                found = -1
                if nd.state == NODE_EXPANDED:
                    for i in range(nd.nchildren):
                        if ND(&self.t, nd.first + i).move == m:
                            found = nd.first + i
                            break
                if found < 0:
                    node = -1
                    break
                node = found
        else:
            node = -1
        if node > 0:
            with nogil:
                kept = _keep_subtree(&self.t, node)
            if kept == 2:
                _say_once("reuse", "no memory for a compact copy of the kept subtree: it is "
                          "kept in place, the rest of the tree is not reclaimed")
        elif node < 0:
            _tree_clear(&self.t)
        board_copy(self.t.root, board.b)
        return ND(&self.t, 0).visits

    def graft(self, Search other, path):
        """Make this tree a copy of the subtree of `other` reached by path (points from other's
        root), at most this tree's node limit of it: the search of a position reached in
        another tree (gammago.root_search.RootSearch keeps its child trees' work this way). Call
        set_root with that position first; `other` must not be searching. Returns the visits
        kept (0, and the tree cleared, when path is not in other's tree)."""
        cdef int32_t node
        if other is self:
            raise ValueError("a tree cannot graft from itself (set_root keeps a subtree)")
        node = other._find(path)
        _tree_clear(&self.t)
        if node < 0 or (node == 0 and other.t.top <= 1):
            return 0
        with nogil:
            self.t.top = _copy_subtree(&other.t, node, &self.t)
        return ND(&self.t, 0).visits

    def set_avoid(self, avoid=(), int base=0):
        """Keep moves out of the tree (lz-analyze's and kata-analyze's avoid and allow):
        `avoid` holds (colour, point, until) triples: point (PASS included) is not a move of
        colour (1 Black, 2 White) in the first `until` plies of the search (1: not as the
        root's move). `base`: plies played before this tree's root (1 for a tree below a root
        move, as gammago.root_search.RootSearch keeps). Applies to the nodes expanded from now
        on: start the tree afresh (set_root(board, None)) after a change. () clears it."""
        from gammago.search import avoid_entries
        cdef int c, p, until
        entries = avoid_entries(avoid)
        for c, p, until in entries:
            if p >= MAX_PTS:
                raise ValueError(f"avoid: bad entry (colour {c}, point {p}, until {until})")
        if base < 0:
            raise ValueError(f"avoid: base must be >= 0, not {base}")
        memset(self.t.avoid, 0, sizeof(self.t.avoid))
        for c, p, until in entries:
            self.t.avoid[c][p] = until
        self.t.avoid_base = base
        self.t.has_avoid = 1 if entries else 0

    @property
    def avoid(self):
        """The (colour, point, until) triples set_avoid keeps out, sorted, and its base."""
        cdef int c, p
        out = []
        if self.t.has_avoid:
            for c in (1, 2):
                for p in range(MAX_PTS):
                    if self.t.avoid[c][p]:
                        out.append((c, p, int(self.t.avoid[c][p])))
        return tuple(out), self.t.avoid_base

    def clear(self):
        _tree_clear(&self.t)

    def fail_allocs(self, int n):
        """Test hook: the tree's next n memory allocations fail, as malloc would without memory."""
        self.t.fail_allocs = n

    # --- running ---
    def prepare(self, int threads=1, long max_playouts=0, double seconds=0, bint no_pass=False,
                seed=None):
        """Get ready for a search by `threads` workers (then call work(i) for each i, from as
        many threads): stop after max_playouts in all (0: no cap) or `seconds` (0: no limit)."""
        cdef int i
        if self.t.root.size == 0:
            raise ValueError("set_root() first")
        if threads < 1:
            raise ValueError("threads must be >= 1")
        if seed is not None:
            self.seed = seed
        self._free_workers()
        self.workers = <worker_t*>calloc(threads, sizeof(worker_t))
        if self.workers == NULL:
            raise MemoryError()
        self.nworkers = threads
        for i in range(threads):
            self.workers[i].b = <board_t*>malloc(sizeof(board_t))
            if self.workers[i].b == NULL:
                self._free_workers()
                raise MemoryError()
            rng_seed(&self.workers[i].rng, derive(self.seed, i))
            if not self.maker.make(self.maker.arg, &self.workers[i].pol):
                self._free_workers()
                raise MemoryError("rollout policy could not be created")
            self.workers[i].has_pol = 1
            if self.maker.make == rollout_make_gamma:
                (<gamma_policy_t*>self.workers[i].pol.ctx).light_after = self._light_after
                (<gamma_policy_t*>self.workers[i].pol.ctx).tail = self._tail
        # criticality statistics belong to one search (calloc zeroed the workers' counters)
        self.t.workers = self.workers
        self.t.nworkers = threads
        memset(self.t.crit, 0, sizeof(self.t.crit))
        self.t.root_no_pass = no_pass
        self.t.stop = 0
        # a tree refused room by a shared budget may find some now (other trees freed theirs)
        if self.t.top < self.t.cap:
            self.t.full = 0
        self.t.issued = 0
        self.t.max_playouts = max_playouts
        self.t.deadline = (_now() + seconds) if seconds > 0 else 0
        # the root is always open
        if ND(&self.t, 0).state != NODE_EXPANDED:
            ND(&self.t, 0).state = NODE_LEAF
            _expand(&self.t, 0, self.t.root, 0)

    def work(self, int i):
        """Run worker i until the search ends (releases the GIL)."""
        if i < 0 or i >= self.nworkers:
            raise ValueError(f"no worker {i}")
        with nogil:
            _work(&self.t, &self.workers[i], -1)

    def work_batch(self, int i, long n):
        """Run worker i for n playouts (fewer when the search ends first: its playout cap,
        deadline or stop) and return how many it ran. Threads may run batches of distinct
        workers on one tree at once, as work() does; gammago.root_search.RootSearch drives its child
        trees this way, each thread moving between trees without new threads or barriers."""
        cdef int64_t before
        if i < 0 or i >= self.nworkers:
            raise ValueError(f"no worker {i}")
        before = self.workers[i].playouts
        with nogil:
            _work(&self.t, &self.workers[i], n)
        return self.workers[i].playouts - before

    def stop(self):
        gg_storei(&self.t.stop, 1)

    @property
    def stopped(self):
        return bool(gg_loadi(&self.t.stop))

    def run(self, int threads=1, long max_playouts=0, double seconds=0, bint no_pass=False,
            seed=None):
        """prepare + work on `threads` threads + join. Returns seconds taken, prepare's
        included (the deadline counts from there)."""
        import threading, time
        t0 = time.perf_counter()
        self.prepare(threads, max_playouts, seconds, no_pass, seed)
        if threads == 1:
            self.work(0)
        else:
            ts = [threading.Thread(target=self.work, args=(i,)) for i in range(threads)]
            for th in ts:
                th.start()
            for th in ts:
                th.join()
        return time.perf_counter() - t0

    # --- results ---
    @property
    def playouts(self):
        """Playouts finished in the current search."""
        cdef int64_t s = 0
        cdef int i
        for i in range(self.nworkers):
            s += self.workers[i].playouts
        return s

    @property
    def root_visits(self):
        return ND(&self.t, 0).visits

    @property
    def nodes(self):
        return min(self.t.top, self.t.cap, self.t.nchunks * CHUNK_NODES)

    @property
    def capacity(self):
        return self.t.cap

    @property
    def memory(self):
        """Bytes of the chunks this tree holds now."""
        return self.t.nchunks * CHUNK_BYTES

    @staticmethod
    def memory_of_chunks(int n):
        """Bytes of n chunks."""
        return n * CHUNK_BYTES

    def limit_nodes(self, int n):
        """Let the tree grow to at most n nodes (never beyond max_nodes given at creation, never
        below the nodes it has): a cap of its own, beside the budget's for all the trees that
        share it (gammago.root_search.RootSearch). Call it between runs, not during one."""
        self.t.cap = max(min(n, self.t.alloc), min(self.t.top, self.t.cap))
        if self.t.top < self.t.cap:
            self.t.full = 0

    @property
    def full(self):
        return bool(self.t.full)

    @property
    def max_depth(self):
        cdef int i, d = 0
        for i in range(self.nworkers):
            if self.workers[i].maxdepth > d:
                d = self.workers[i].maxdepth
        return d

    def children(self, path=()):
        """[(point, visits, winrate for the mover, rating)] of the node reached by the points in
        path from the root, in the pool's order (rating order; with crit > 0 the opened
        children are moved up in the order they were opened); [] if not expanded."""
        cdef int32_t node = self._find(path)
        cdef node_t* nd
        cdef node_t* ch
        cdef int i
        if node < 0:
            return []
        nd = ND(&self.t, node)
        if nd.state != NODE_EXPANDED:
            return []
        out = []
        for i in range(nd.nchildren):
            ch = ND(&self.t, nd.first + i)
            out.append((ch.move, ch.visits, ch.wins2 * 0.5 / ch.visits if ch.visits else 0.0,
                        ch.rating))
        return out

    cdef int32_t _find(self, path):
        cdef int32_t node = 0, i, found
        cdef node_t* nd
        for m in path:
            nd = ND(&self.t, node)
            if nd.state != NODE_EXPANDED:
                return -1
            found = -1
            for i in range(nd.nchildren):
                if ND(&self.t, nd.first + i).move == m:
                    found = nd.first + i
                    break
            if found < 0:
                return -1
            node = found
        return node

    def pv(self, path=(), int maxlen=20):
        """Most-visited line from the node reached by path (path's moves included)."""
        cdef int32_t node = self._find(path)
        cdef node_t* nd
        cdef int i, best, bv
        out = list(path)
        if node < 0:
            return out
        while len(out) < maxlen:
            nd = ND(&self.t, node)
            if nd.state != NODE_EXPANDED:
                break
            best = -1
            bv = 0
            for i in range(nd.nchildren):
                if ND(&self.t, nd.first + i).visits > bv:
                    bv = ND(&self.t, nd.first + i).visits
                    best = nd.first + i
            if best < 0:
                break
            node = best
            out.append(ND(&self.t, node).move)
        return out

    def criticality(self):
        """Criticality of each point over this search's played-out playouts (gathered only with
        crit > 0; zeros before CRIT_MIN of them), as a numpy array [row, col] (row 0 = line 1)."""
        import numpy as np
        cdef int W = self.t.root.W, p
        a = np.zeros(W * W)
        for p in range(W * W):
            a[p] = self.t.crit[p]
        return a.reshape(W, W)[1:W - 1, 1:W - 1]

    @property
    def owned(self):
        """This search's playouts that were played out (not ended by the mercy rule): those
        that ownership() and criticality() count."""
        cdef int64_t n = 0
        cdef int i
        for i in range(self.nworkers):
            n += self.workers[i].own_n
        return n

    def ownership(self):
        """Mean final ownership over this search's playouts that were played out (owned),
        +1 Black .. -1 White, as a numpy array [row, col] (row 0 = line 1); zeros without one."""
        import numpy as np
        cdef int W = self.t.root.W, n = self.t.root.size, i, p
        cdef int64_t tot = 0
        a = np.zeros(W * W)
        for i in range(self.nworkers):
            tot += self.workers[i].own_n
            for p in range(W * W):
                a[p] += self.workers[i].own[p]
        a = a.reshape(W, W)[1:W - 1, 1:W - 1]
        return a / tot if tot else a

    def ownership_stdev(self):
        """The standard deviation over the same playouts of each point's final owner (+1 Black,
        -1 White, 0 neither), as ownership() lays it out: 0 where every playout agreed, 1 where
        they split evenly between the two sides; zeros without a playout."""
        import numpy as np
        cdef int W = self.t.root.W, i, p
        cdef int64_t tot = 0
        a = np.zeros(W * W)
        none = np.zeros(W * W)
        for i in range(self.nworkers):
            tot += self.workers[i].own_n
            for p in range(W * W):
                a[p] += self.workers[i].own[p]
                none[p] += self.workers[i].own_none[p]
        if tot == 0:
            return np.zeros((W - 2, W - 2))
        mean = a / tot
        owned = 1.0 - none / tot             # the mean square: the share owned by either side
        return np.sqrt(np.maximum(owned - mean * mean, 0.0)).reshape(W, W)[1:W - 1, 1:W - 1]

    def score_stdev(self):
        """The standard deviation of the final area difference over the same playouts (0
        without one): how widely the playouts' scores spread around ownership()'s sum."""
        cdef int i, p, W = self.t.root.W
        cdef int64_t tot = 0
        cdef double s = 0, sq = 0, m
        for i in range(self.nworkers):
            tot += self.workers[i].own_n
            sq += self.workers[i].score_sq
            for p in range(W * W):
                s += self.workers[i].own[p]
        if tot == 0:
            return 0.0
        m = s / tot
        return sqrt(max(sq / tot - m * m, 0.0))
