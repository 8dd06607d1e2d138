# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Which child a descent takes (declarations: gammago/search/selection.pxd): progressive widening and
UCB1-Tuned + the rating bonus over the open children, and criticality.

Criticality (Coulom, "Criticality: a Monte-Carlo heuristic for Go programs", 2009; Ray and
Crazy Stone use it to order progressive widening): a point is critical when whoever owns it at
the end of a playout tends to win. With params_t.crit > 0 the next child opened at a node is
the unopened one with the highest rating + crit * criticality (from all playouts of the search
so far, the root's statistics used at every node), not simply the next in rating order, so a
vital point of a fight that the gammas rate low is searched early.
"""
from libc.math cimport log, sqrt
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t
from gammago.go.board cimport board_t, BLACK, WHITE, PASS
from gammago.core.atomic cimport gg_cas8, gg_store8, gg_load16, gg_store16
from gammago.search.node_pool cimport node_t
from gammago.search.tree_state cimport tree_t, worker_t, params_t, ND

# ---------------------------------------------------------------------------------------------
# Criticality
# ---------------------------------------------------------------------------------------------
cdef void crit_gather(worker_t* w, const board_t* b, const uint8_t* owner, int res2) noexcept nogil:
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

cdef void crit_refresh(tree_t* t) noexcept nogil:
    """The other workers' counters are read while they run: a count a playout behind changes
    nothing that matters here."""
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

cdef void crit_open_next(tree_t* t, node_t* nd, int k) noexcept nogil:
    """By swapping two unopened children, which no other thread reads: selection only looks at
    the first nopen, and nopen is published after the swap. Ties keep the rating order."""
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
            crit_open_next(t, nd, nopen)
            nopen += 1
            gg_store16(&nd.nopen, <int16_t>nopen)
        gg_store8(&nd.widening, 0)
    return nopen

# ---------------------------------------------------------------------------------------------
# Selection: UCB1-Tuned + rating bonus over the open children
# ---------------------------------------------------------------------------------------------
cdef int32_t select_child(tree_t* t, node_t* nd, bint at_root) noexcept nogil:
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
