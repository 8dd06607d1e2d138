# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The gamma sampler: a playout policy that samples each move in proportion to the product of
the gammas of its features, with incrementally kept weights (declarations and the scheme:
gammago/rollout/gamma_sampler.pxd); nogil throughout. Its Python edge is pyx/rollout/gamma_policy.pyx (GammaPolicy)."""
from libc.stdlib cimport calloc, free
from libc.string cimport memset, memcpy
from libc.stdio cimport snprintf
from libc.math cimport fabs
from libc.stdint cimport int16_t, int32_t, uint8_t, uint32_t, uint64_t
from gammago.go.board cimport (board_t, board_is_legal, board_is_eye, board_first_lib, EMPTY, BLACK,
                            WHITE, BORDER, PASS, MAX_PTS, MAX_W, MAX_SIZE, code_swap,
                            CODE_ATARI_SHIFT, lib_has)
from gammago.rollout.playout cimport policy_t
from gammago.core.rng cimport rng_t, rng_unit
from gammago.rollout.tail cimport tail_choose, tail_refused, TAIL_REFUSE
from gammago.moves.features cimport (rollout_features, feat_tactics, feat_edge, feat_dist, pat3_table,
                               team_gamma, NGROUPS, G_CAPTURE, G_EXTENSION, G_SELFATARI, G_ATARI,
                               G_DIST1, G_DIST2, FB_PAT3, FB_CAPTURE, FB_EXTENSION, FB_ATARI,
                               FB_DIST1, FB_SELFATARI, FB_DIST2)

cdef extern from *:
    int _ctz64 "__builtin_ctzll"(unsigned long long) nogil
    int _ctz32 "__builtin_ctz"(unsigned int) nogil
    int _popcount64 "__builtin_popcountll"(unsigned long long) nogil

# Coulom radius of the near set. Larger: more points weighed explicitly each move; smaller:
# looser row bounds for far points and more rejections. With the trained gammas 2 costs the
# fewest instructions per move on 9x9 and 19x19 (callgrind;
# docs/notebook/experiments/rollout-speed.md).
cdef enum:
    DEF_NEAR_D = 2
    WIN_ROWS = 2     # the window of far proposals: rows within WIN_ROWS of the last move,
    WIN_COLS = 3     # columns within WIN_COLS of it (see gamma_policy_t.fw1 / fo1)
    F_DIRTY = 1
    F_L = 2
    F_K = 4

# ---------------------------------------------------------------------------------------------
# Geometry and tables
# ---------------------------------------------------------------------------------------------
cdef inline int _dindex(const gamma_policy_t* g, int p, int q) noexcept nogil:
    """Index of the (|drow|, |dcol|) pair of p and q in the distance tables."""
    cdef int dy = <int>g.rowof[p] - <int>g.rowof[q]
    cdef int dx = <int>g.colof[p] - <int>g.colof[q]
    if dx < 0:
        dx = -dx
    if dy < 0:
        dy = -dy
    return dy * MAX_SIZE + dx

cdef void _set_geometry(gamma_policy_t* g, const board_t* b) noexcept nogil:
    cdef int p, q, dr, dc, adr, adc, d, n = 0, R
    cdef double x
    g.size = b.size
    g.W = b.W
    g.cache_ok = 0
    for p in range(MAX_PTS):
        g.rowof[p] = 0
        g.colof[p] = 0
        g.edge_g[p] = 0
    for p in range(b.npts):
        g.rowof[p] = p // b.W
        g.colof[p] = p % b.W
        g.dpos[p] = (p // b.W) * DX_W + p % b.W
        if b.color[p] != BORDER:
            g.edge_g[p] = g.gamma[feat_edge(b, p)]
    # distance gammas by (|drow|, |dcol|), from feat_dist itself; the bounds Mf over the pairs
    # outside the near set
    R = g.near_d
    g.mf1 = 0
    g.mf2 = 0
    q = b.W + 1
    for adr in range(MAX_SIZE):
        for adc in range(MAX_SIZE):
            if adr < b.size and adc < b.size:
                p = q + adr * b.W + adc
                g.gd1[adr * MAX_SIZE + adc] = g.gamma[feat_dist(b, p, q, FB_DIST1)]
                g.gd2[adr * MAX_SIZE + adc] = g.gamma[feat_dist(b, p, q, FB_DIST2)]
                if adr + adc + (adr if adr > adc else adc) > R:
                    if g.gd1[adr * MAX_SIZE + adc] > g.mf1:
                        g.mf1 = g.gd1[adr * MAX_SIZE + adc]
                    if g.gd2[adr * MAX_SIZE + adc] > g.mf2:
                        g.mf2 = g.gd2[adr * MAX_SIZE + adc]
            else:
                g.gd1[adr * MAX_SIZE + adc] = 0
                g.gd2[adr * MAX_SIZE + adc] = 0
    # by signed offset (for the offsets of two board points)
    for dr in range(-(MAX_SIZE - 1), MAX_SIZE):
        for dc in range(-(MAX_SIZE - 1), MAX_SIZE):
            adr = dr if dr >= 0 else -dr
            adc = dc if dc >= 0 else -dc
            g.gx1[DX_C + dr * DX_W + dc] = g.gd1[adr * MAX_SIZE + adc]
            g.gx2[DX_C + dr * DX_W + dc] = g.gd2[adr * MAX_SIZE + adc]
    for p in range(DX_W * DX_W):
        g.ones[p] = 1.0
    # fm[dy]: the largest distance gamma of a far pair (d > near_d) dy rows apart
    for adr in range(MAX_SIZE):
        g.fm1[adr] = 0
        g.fm2[adr] = 0
        for adc in range(b.size):
            if adr < b.size and adr + adc + (adr if adr > adc else adc) > R:
                if g.gd1[adr * MAX_SIZE + adc] > g.fm1[adr]:
                    g.fm1[adr] = g.gd1[adr * MAX_SIZE + adc]
                if g.gd2[adr * MAX_SIZE + adc] > g.fm2[adr]:
                    g.fm2[adr] = g.gd2[adr * MAX_SIZE + adc]
    # the window's bounds: far pairs dy rows apart within 2 * WIN_COLS columns (the window
    # shifted at an edge reaches that far), and beyond WIN_COLS columns
    for adr in range(MAX_SIZE):
        g.fw1[adr] = 0
        g.fo1[adr] = 0
        for adc in range(b.size):
            if adr < b.size and adr + adc + (adr if adr > adc else adc) > R:
                x = g.gd1[adr * MAX_SIZE + adc]
                if adc <= 2 * WIN_COLS:
                    if x > g.fw1[adr]:
                        g.fw1[adr] = x
                if adc > WIN_COLS:
                    if x > g.fo1[adr]:
                        g.fo1[adr] = x
    # near offsets, nearest first (the point itself included: a captured last2 stone leaves
    # an empty point at distance 0)
    for d in range(R + 1):
        for dr in range(-R, R + 1):
            for dc in range(-R, R + 1):
                adr = dr if dr >= 0 else -dr
                adc = dc if dc >= 0 else -dc
                if adr + adc + (adr if adr > adc else adc) == d and n < NEAR_MAX_OFFS:
                    g.off_dr[n] = dr
                    g.off_dc[n] = dc
                    g.off_idx[n] = adr * MAX_SIZE + adc
                    n += 1
    g.noffs = n
    # row bounds by the row of the last (second-last) move; row 0 stands for a pass (factor 1)
    for adr in range(MAX_W):
        for dr in range(MAX_W):
            d = adr - dr if adr > dr else dr - adr
            if adr == 0:
                g.fr1[adr][dr] = 1.0
                g.fr2[adr][dr] = 1.0
            elif dr < 1 or dr > b.size:
                g.fr1[adr][dr] = 0
                g.fr2[adr][dr] = 0
            else:
                g.fr1[adr][dr] = g.fm1[d]
                g.fr2[adr][dr] = g.fm2[d]

# ---------------------------------------------------------------------------------------------
# Dirty bookkeeping
# ---------------------------------------------------------------------------------------------
cdef inline void _mark(gamma_policy_t* g, int c, int p) noexcept nogil:
    # branch-free: p is written past the list's end in any case and counted only when it was
    # not in the list yet (at most every board point is listed, so the write stays in dlist)
    cdef uint8_t f = g.flags[c][p]
    g.dlist[c][g.nd[c]] = p
    g.nd[c] += 1 - (f & F_DIRTY)
    g.flags[c][p] = f | F_DIRTY

cdef inline void _mark2(gamma_policy_t* g, int p) noexcept nogil:
    _mark(g, BLACK, p)
    _mark(g, WHITE, p)

cdef inline void _mark_libs(gamma_policy_t* g, const board_t* b, int h) noexcept nogil:
    """Mark every liberty of the string with head h, for both colours."""
    cdef int w
    cdef uint64_t x
    cdef const uint64_t* L = &b.libs[h * b.nwords]
    cdef uint32_t nz = 0
    # the non-empty words first (a loop of fixed length), then only their bits: fewer
    # unpredictable loop exits than a bit loop over every word
    for w in range(b.nwords):
        nz |= (<uint32_t>(L[w] != 0)) << w
    while nz:
        w = _ctz32(nz)
        nz &= nz - 1
        x = L[w]
        while True:
            _mark2(g, (w << 6) + _ctz64(x))
            x &= x - 1
            if x == 0:
                break

cdef void _mark_atari_neighbours(gamma_policy_t* g, const board_t* b, int h) noexcept nogil:
    """For every string of the other colour next to string h that has one liberty, mark that
    liberty (capture kind 1, "saves a string in atari", depends on h's atari state)."""
    cdef int col = b.color[h]
    cdef int o = 3 - col
    cdef int s = h, k, r, hr
    while True:
        for k in range(4):
            r = s + b.off[k]
            if b.color[r] == o:
                hr = b.head[r]
                if b.nlibs[hr] == 1:
                    _mark2(g, board_first_lib(b, hr))
        s = b.next[s]
        if s == h:
            break

cdef inline void _set_all_full(gamma_policy_t* g) noexcept nogil:
    g.full[BLACK] = 1
    g.full[WHITE] = 1

# ---------------------------------------------------------------------------------------------
# Weights
# ---------------------------------------------------------------------------------------------
cdef inline void _mark_k(gamma_policy_t* g, int c, int p) noexcept nogil:
    """Put p on colour c's K list: its weight has an atari feature, whose level depends on the
    ko flag (recomputed when the flag changes)."""
    if not (g.flags[c][p] & F_K):
        g.flags[c][p] |= F_K
        g.klist[c][g.nk[c]] = p
        g.nk[c] += 1

cdef inline void _side_fields(uint32_t code, int c, uint32_t* om, uint32_t* xm) noexcept nogil:
    """The 4 orthogonal neighbours in a 3x3 code: bit 2k of om (xm) set when field k holds a
    stone of c (of the opponent). In the code, bit 2k of lo (hi) is set for a black (white)
    stone; a border field sets both, so it is in neither mask."""
    cdef uint32_t lo = code & 0x55, hi = (code >> 1) & 0x55
    if c == BLACK:
        om[0] = lo & ~hi
        xm[0] = hi & ~lo
    else:
        om[0] = hi & ~lo
        xm[0] = lo & ~hi

cdef inline int _atari_size(const board_t* b, int p, uint32_t xm) noexcept nogil:
    """The largest opponent string with exactly 2 liberties among p's neighbours in the fields
    xm (_side_fields): what playing p puts in atari; 0 when none."""
    cdef int k, h, s, asize = 0
    # branch-free over the 4 fields (head[] of a non-stone point is stale but in range)
    for k in range(4):
        h = b.head[p + b.off[k]]
        s = b.ssize[h] * (<int>((xm >> (2 * k)) & 1) & <int>(b.nlibs[h] == 2))
        asize = s if s > asize else asize
    return asize

cdef double _slow_weight(gamma_policy_t* g, const board_t* b, int c, int p) noexcept nogil:
    """The base weight of a legal, non-eye point through feat_tactics (and the L/K lists)."""
    cdef int32_t ids[NGROUPS]
    cdef int lv
    cdef double w
    feat_tactics(b, p, c, ids)
    w = (_pat_gamma(g, b, p, c) * g.edge_g[p] * g.gamma[ids[G_CAPTURE]] *
         g.gamma[ids[G_EXTENSION]] * g.gamma[ids[G_SELFATARI]] * g.gamma[ids[G_ATARI]])
    lv = ids[G_CAPTURE] - FB_CAPTURE
    if (lv and ((lv - 1) // 3 == 0 or (lv - 1) // 3 == 2)) or \
       (ids[G_EXTENSION] - FB_EXTENSION == 1 or ids[G_EXTENSION] - FB_EXTENSION == 2):
        if not (g.flags[c][p] & F_L):
            g.flags[c][p] |= F_L
            g.llist[c][g.nl[c]] = p
            g.nl[c] += 1
    if ids[G_ATARI] != FB_ATARI:
        _mark_k(g, c, p)
    g.n_slow += 1
    return w

cdef inline double _pat_gamma(const gamma_policy_t* g, const board_t* b, int p, int c) noexcept nogil:
    # feat_pat3 through its table (features.pxd: indexed by the code seen from Black)
    cdef uint32_t code = b.code[p]
    if c == WHITE:
        code = code_swap(code)
    return g.gamma[FB_PAT3 + g.pat3[code]]

cdef uint8_t NE_TAB[256]       # empty fields among the 4 orthogonal ones of a code's low byte
cdef int _k
for _k in range(256):
    NE_TAB[_k] = (((_k & 3) == 0) + (((_k >> 2) & 3) == 0) + (((_k >> 4) & 3) == 0) +
                  (((_k >> 6) & 3) == 0))

cdef double _weight_tight(gamma_policy_t* g, const board_t* b, int c, int p, uint32_t code, int ne,
                          int asize, const int* heads, int nh, uint32_t own_atari) noexcept nogil:
    """_weight of an empty point next to no opponent string in atari (nothing can be captured)
    that is either next to a string of c in atari (own_atari: their fields, bit k for field k)
    or has at most one empty neighbour and no string of c with 3+ liberties next to it.
    heads[0..nh-1]: the strings of c next to p (repeats possible). The tactical features are
    extension (out of atari, the new string keeping 2+ liberties), self-atari (one liberty
    left) and atari (asize: the largest opponent string with 2 liberties next to p); the new
    string's liberties are the empty neighbours and the strings' liberties other than p, as a
    union of bitsets. The same result as feat_tactics and board_is_legal, without them."""
    cdef int i, j, wd, nw = b.nwords, n = 0, e, k, newsize = 1, lv, last = b.last, r, h
    cdef int ext_new = 0
    cdef uint64_t x
    cdef uint32_t em
    cdef double wt
    for wd in range(nw):
        x = 0
        for i in range(nh):
            x |= b.libs[heads[i] * nw + wd]
        n += _popcount64(x)
    if nh:
        n -= 1                  # p, a liberty of each of them
    em = ~((code & 0x55) | ((code >> 1) & 0x55)) & 0x55     # the empty neighbours' fields
    while em:
        k = _ctz32(em) >> 1
        em &= em - 1
        e = p + b.off[k]
        for i in range(nh):
            if lib_has(b, heads[i], e):
                break
        else:
            n += 1
    if n == 0 or p == b.ko:
        return 0                # suicide (nothing to capture), or ko
    if ne == 0 and board_is_eye(b, p, c):
        return 0
    wt = _pat_gamma(g, b, p, c) * g.edge_g[p]
    if own_atari and n >= 2:
        # extension (features.pxd: 1 + 2*old + (libs >= 3); old = 0 when the last move touches
        # a string in atari that p joins: then the weight used the last move, the L list)
        if last != PASS:
            while own_atari:
                h = b.head[p + b.off[_ctz32(own_atari)]]
                own_atari &= own_atari - 1
                for k in range(4):
                    r = last + b.off[k]
                    if (b.color[r] == BLACK or b.color[r] == WHITE) and b.head[r] == h:
                        ext_new = 1
        lv = 1 + (0 if ext_new else 2) + (1 if n >= 3 else 0)
        wt *= g.gamma[FB_EXTENSION + lv]
        if ext_new and not (g.flags[c][p] & F_L):
            g.flags[c][p] |= F_L
            g.llist[c][g.nl[c]] = p
            g.nl[c] += 1
    if n == 1:
        # self-atari (features.pxd: 1 string of 1-2 stones, 2 larger)
        for i in range(nh):
            for j in range(i):
                if heads[j] == heads[i]:
                    break
            else:
                newsize += b.ssize[heads[i]]
        wt *= g.gamma[FB_SELFATARI + (1 if newsize <= 2 else 2)]
    if asize:
        _mark_k(g, c, p)
        wt *= g.gamma[FB_ATARI + 1 + (2 if b.ko != PASS else 0) + (1 if asize >= 2 else 0)]
    return wt

cdef inline double _weight(gamma_policy_t* g, const board_t* b, int c, int p) noexcept nogil:
    """base[c][p] from the features (c is the side to move); the slow path records whether the
    result used the last move (L) or has an atari feature (K, whose level depends on the ko
    flag)."""
    cdef int k, ne, own3, asize, h, nh = 0
    cdef int heads[4]
    cdef uint32_t code, om, xm, am, xk
    if b.color[p] != EMPTY:
        return 0
    code = b.code[p]
    if (code >> CODE_ATARI_SHIFT) == 0:
        # No string next to p is in atari, so no capture and no extension. Self-atari needs
        # the move's string to end with one liberty: impossible with two empty neighbours or
        # a neighbour string of c with 3+ liberties (which also makes p legal but for ko).
        # An atari feature needs an opponent string with two liberties next to p.
        ne = NE_TAB[code & 0xFF]
        own3 = 0
        asize = 0
        if ne < 4:
            _side_fields(code, c, &om, &xm)
            if ne < 2:
                while om:
                    k = _ctz32(om) >> 1
                    om &= om - 1
                    h = b.head[p + b.off[k]]
                    if b.nlibs[h] >= 3:
                        own3 = 1
                        break
                    heads[nh] = h
                    nh += 1
            asize = _atari_size(b, p, xm)
        if ne >= 2 or own3:
            # legal but for ko, never an eye with an empty neighbour, no self-atari
            if p == b.ko or not (ne or not board_is_eye(b, p, c)):
                return 0
            if asize == 0:
                return _pat_gamma(g, b, p, c) * g.edge_g[p]
            # only the atari feature (features.pxd: 1 + 2*(ko on the board) + (2+ stones)),
            # whose level depends on the ko flag: the K list
            _mark_k(g, c, p)
            return (_pat_gamma(g, b, p, c) * g.edge_g[p] *
                    g.gamma[FB_ATARI + 1 + (2 if b.ko != PASS else 0) + (1 if asize >= 2 else 0)])
        return _weight_tight(g, b, c, p, code, ne, asize, heads, nh, 0)
    # strings in atari next to p, but none of the opponent's (nothing to capture): extensions
    _side_fields(code, c, &om, &xm)
    am = (code >> CODE_ATARI_SHIFT) & 0xF
    xk = (xm & 1) | ((xm >> 1) & 2) | ((xm >> 2) & 4) | ((xm >> 3) & 8)
    if (am & xk) == 0:
        ne = NE_TAB[code & 0xFF]
        asize = _atari_size(b, p, xm)
        while om:
            k = _ctz32(om) >> 1
            om &= om - 1
            heads[nh] = b.head[p + b.off[k]]
            nh += 1
        return _weight_tight(g, b, c, p, code, ne, asize, heads, nh, am)
    if board_is_legal(b, p, c) and not board_is_eye(b, p, c):
        return _slow_weight(g, b, c, p)
    return 0

cdef void _flush(gamma_policy_t* g, const board_t* b, int c) noexcept nogil:
    """Bring colour c's base weights up to date (c is the side to move)."""
    cdef int i, p, r, n, kf = 1 if b.ko != PASS else 0, size = g.size
    cdef double s, w, old
    cdef uint32_t rd
    cdef double* wc = g.w[c]
    cdef uint8_t* fl = g.flags[c]
    cdef const int16_t* dl = g.dlist[c]
    cdef double* rs = g.rowsum[c]
    cdef double* re = g.rowerr[c]
    if g.full[c]:
        g.full[c] = 0
        g.n_full += 1
        memset(wc, 0, sizeof(g.w[c]))
        memset(fl, 0, sizeof(g.flags[c]))
        g.nl[c] = 0
        g.nk[c] = 0
        for i in range(b.nempty):
            g.dlist[c][i] = b.empty[i]
        g.nd[c] = b.nempty
        g.rowdirty[c] = 0xFFFFFFFF
    elif kf != g.kostate[c]:
        for i in range(g.nk[c]):
            p = g.klist[c][i]
            fl[p] &= ~F_K
            _mark(g, c, p)
        g.nk[c] = 0
    n = g.nd[c]
    rd = g.rowdirty[c]
    g.n_recompute += n
    for i in range(n):
        p = dl[i]
        fl[p] &= ~F_DIRTY
        w = _weight(g, b, c, p)
        old = wc[p]
        wc[p] = w
        # the row sum follows the change (branch-free: an unchanged weight adds 0); its
        # rounding error is bounded (each addition errs by at most 2^-53 of its operands) and
        # the row is summed again exactly once the bound could reach 1e-12 of the sum
        r = g.rowof[p]
        s = rs[r]
        re[r] += (s + w + old) * 2.3e-16
        s += w - old
        rs[r] = s
        if not (re[r] <= 1e-12 * s):
            rd |= (<uint32_t>1) << r
    g.nd[c] = 0
    g.kostate[c] = kf
    rd &= ((<uint32_t>2) << size) - 2
    g.rowdirty[c] = 0
    while rd:
        r = _ctz64(rd)
        rd &= rd - 1
        _resum_row(g, c, r)

cdef inline void _resum_row(gamma_policy_t* g, int c, int r) noexcept nogil:
    """Colour c's row sum of row r computed again exactly (its rounding error bound reset)."""
    cdef const double* row = &g.w[c][r * g.W + 1]
    cdef double s = 0, t = 0
    cdef int col, size = g.size
    for col in range(0, size - 1, 2):
        s += row[col]
        t += row[col + 1]
    if size & 1:
        s += row[size - 1]
    g.rowsum[c][r] = s + t
    g.rowerr[c][r] = 0

# ---------------------------------------------------------------------------------------------
# Sampling
# ---------------------------------------------------------------------------------------------
cdef inline int _draw_base(gamma_policy_t* g, int c, rng_t* r, double total) noexcept nogil:
    """A point drawn with probability base[c][p] / total (0 if rounding left nothing)."""
    cdef double u = rng_unit(r) * total
    cdef double acc = 0
    cdef int row, col, lastpos = 0
    cdef const double* w
    for row in range(1, g.size + 1):
        if u < acc + g.rowsum[c][row]:
            break
        acc += g.rowsum[c][row]
    else:
        row = g.size
        while row >= 1 and not (g.rowsum[c][row] > 0):
            row -= 1
        if row < 1:
            return 0
        acc = 0
        u = g.rowsum[c][row] * 0.5
    w = &g.w[c][row * g.W + 1]
    for col in range(g.size):
        if w[col] > 0:
            acc += w[col]
            lastpos = col + 1
            if u < acc:
                return row * g.W + col + 1
    if lastpos:
        return row * g.W + lastpos
    return 0

cdef inline const double* _dtab(const gamma_policy_t* g, const double* gx, int q) noexcept nogil:
    """The distance gammas around q (gx: g.gx1 or g.gx2) as a table indexed by dpos[p] (a
    board point p); all 1 when q is PASS."""
    if q == PASS:
        return g.ones
    return &gx[DX_C - g.dpos[q]]

cdef inline double _dist_factor(const gamma_policy_t* g, const board_t* b, int p) noexcept nogil:
    """The distance groups' gammas of p (1 for a group whose move was a pass or none)."""
    return _dtab(g, g.gx1, b.last)[g.dpos[p]] * _dtab(g, g.gx2, b.last2)[g.dpos[p]]

cdef int _exact_draw(gamma_policy_t* g, const board_t* b, int c, rng_t* r) noexcept nogil:
    """The fallback: every weight computed explicitly, O(points)."""
    cdef int i, p, pick = PASS
    cdef double tot = 0, f, u, acc = 0
    for i in range(b.nempty):
        p = b.empty[i]
        if g.w[c][p] > 0:
            tot += g.w[c][p] * _dist_factor(g, b, p)
    if not (tot > 0):
        return PASS             # no point left (not counted as a fallback)
    g.n_fallback += 1
    u = rng_unit(r) * tot
    for i in range(b.nempty):
        p = b.empty[i]
        if g.w[c][p] > 0:
            f = g.w[c][p] * _dist_factor(g, b, p)
            acc += f
            pick = p
            if u < acc:
                return p
    return pick

cdef inline void _near_take(gamma_policy_t* g, int p, double f, const double* to,
                            double* sa, int c) noexcept nogil:
    """Put p in the near set (once per draw, by stamp) when its weight is positive: weight times
    f (its distance factor to the centre) times its factor to the other centre (to: _dtab of
    the other centre)."""
    # without branches: p is written past the set's end in any case and counted when it
    # qualifies (stamping a point of weight 0 is harmless: it is never proposed)
    cdef double w = g.w[c][p] * (f * to[g.dpos[p]])
    cdef int ok = (w > 0) & (g.stamp[p] != g.curstamp)
    g.stamp[p] = g.curstamp
    g.near[g.nnear] = p
    g.wnear[g.nnear] = w
    g.nnear += ok
    sa[0] += w * ok

cdef inline void _add_near(gamma_policy_t* g, const board_t* b, int c, int q, const double* gq,
                           const double* to, double* sa) noexcept nogil:
    """Add the positive-weight points within near_d of q (not yet stamped) to the near set:
    gq is q's distance table (by |drow|, |dcol|), to the other centre's _dtab."""
    cdef int i, row, col, qr = g.rowof[q], qc = g.colof[q]
    if g.near_d <= 3:
        # offsets within one row and column: q's neighbours are array points (the border
        # included, whose weight is 0), no bounds to check
        for i in range(g.noffs):
            _near_take(g, q + g.off_dr[i] * g.W + g.off_dc[i], gq[g.off_idx[i]], to, sa, c)
        return
    for i in range(g.noffs):
        row = qr + g.off_dr[i]
        col = qc + g.off_dc[i]
        if <unsigned>(row - 1) >= <unsigned>g.size or <unsigned>(col - 1) >= <unsigned>g.size:
            continue
        _near_take(g, row * g.W + col, gq[g.off_idx[i]], to, sa, c)

cdef inline int _first_above(const double* a, int n, double u) noexcept nogil:
    """The first index i < n with a[i] > u in the non-decreasing a[0..n-1] (n - 1 when none):
    a branch-free binary search."""
    cdef int base = 0, half
    while n > 1:
        half = n >> 1
        base = base + half if a[base + half - 1] <= u else base
        n -= half
    return base

cdef int _sample(gamma_policy_t* g, const board_t* b, int c, rng_t* r) noexcept nogil:
    """Draw a point with probability base * f / sum (f: the distance factor), or PASS when no
    point has a positive weight. Near points are weighed explicitly; a far point is proposed
    from row r with weight rowsum[r] * bound[r] (bound[r] >= f of every far point of row r)
    and accepted with probability f / bound[r]."""
    cdef int row, i, p, attempt, last = b.last, last2 = b.last2, col, size = g.size
    cdef int has1 = last != PASS, has2 = last2 != PASS
    cdef int r0, r1, c0 = 1, c1 = 0, lr = 0, lc, dy
    cdef double total = 0, sa = 0, far = 0, u, acc, f, bnd, lo, s, o, t
    cdef double* cum = g.rowprop
    cdef const double* w
    cdef const double* b1
    cdef const double* b2
    cdef const double* rs
    cdef const double* t1
    cdef const double* t2
    if not has1 and not has2:
        for row in range(1, size + 1):
            total += g.rowsum[c][row]
        if not (total > 0):
            return PASS
        p = _draw_base(g, c, r, total)
        if p:
            return p
        return _exact_draw(g, b, c, r)
    # the near set
    g.curstamp += 1
    if g.curstamp == 0:
        memset(g.stamp, 0, sizeof(g.stamp))
        g.curstamp = 1
    g.nnear = 0
    t1 = _dtab(g, g.gx1, last)
    t2 = _dtab(g, g.gx2, last2)
    if has1:
        _add_near(g, b, c, last, g.gd1, t2, &sa)
    if has2:
        _add_near(g, b, c, last2, g.gd2, t1, &sa)
    # far proposal mass, cumulative by row (fr rows of a pass are all 1); in the rows of the
    # window the mass inside it and outside it are bounded apart
    b1 = g.fr1[g.rowof[last]]
    b2 = g.fr2[g.rowof[last2]]
    rs = g.rowsum[c]
    cum[0] = 0
    r0 = size + 1
    r1 = 0
    if has1:
        lr = g.rowof[last]
        lc = g.colof[last]
        # a window of fixed shape, shifted inside the board at the edges (its columns may
        # include the border, whose weights are 0): sums without loops or branches
        r0 = lr - WIN_ROWS if lr > WIN_ROWS else 1
        if r0 > size - 2 * WIN_ROWS:
            r0 = size - 2 * WIN_ROWS
        r1 = r0 + 2 * WIN_ROWS
        c0 = lc - WIN_COLS if lc > WIN_COLS else 0
        if c0 > g.W - 1 - 2 * WIN_COLS:
            c0 = g.W - 1 - 2 * WIN_COLS
        c1 = c0 + 2 * WIN_COLS
    # (when every positive point is near, far proposals land on near points and fail)
    for row in range(1, r0 if r0 <= size else size + 1):
        far += rs[row] * b1[row] * b2[row]
        cum[row] = far
    for row in range(r0, r1 + 1):
        w = &g.w[c][row * g.W + c0]
        s = ((w[0] + w[1]) + (w[2] + w[3])) + ((w[4] + w[5]) + w[6])     # WIN_COLS = 3
        g.winmass[row] = s
        dy = row - lr if row >= lr else lr - row
        o = rs[row] - s
        if not (o > 0):
            o = 0
        far += s * g.fw1[dy] * b2[row] + o * g.fo1[dy] * b2[row]
        cum[row] = far
    for row in range(r1 + 1 if r1 >= r0 else size + 1, size + 1):
        far += rs[row] * b1[row] * b2[row]
        cum[row] = far
    if not (sa + far > 0):
        return _exact_draw(g, b, c, r)
    for attempt in range(GP_MAX_ATTEMPTS):
        g.n_attempts += 1
        u = rng_unit(r) * (sa + far)
        if u < sa:
            acc = 0
            for i in range(g.nnear):
                acc += g.wnear[i]
                if u < acc:
                    return g.near[i]
            return g.near[g.nnear - 1]
        # a far proposal: row by its proposal mass, then a point of the row (or of the row's
        # window segment) by base weight (the position of u inside its share is itself uniform)
        u -= sa
        row = _first_above(&cum[1], size, u) + 1
        lo = cum[row - 1]
        if not (u < cum[row]) or not (cum[row] > lo):
            continue                # rounding
        u -= lo
        w = &g.w[c][row * g.W]
        acc = 0
        p = 0
        if r0 <= row <= r1:
            dy = row - lr if row >= lr else lr - row
            s = g.winmass[row]
            t = s * g.fw1[dy] * b2[row]
            if u < t:
                bnd = g.fw1[dy] * b2[row]
                u = u / t * s
                for col in range(c0, c1 + 1):
                    acc += w[col]
                    if u < acc:
                        p = row * g.W + col
                        break
            else:
                bnd = g.fo1[dy] * b2[row]
                o = rs[row] - s
                f = cum[row] - lo - t   # the outside's proposal mass
                if not (o > 0) or not (f > 0):
                    continue        # rounding
                u = (u - t) / f * o
                for col in range(1, c0):
                    acc += w[col]
                    if u < acc:
                        p = row * g.W + col
                        break
                else:
                    for col in range(c1 + 1, size + 1):
                        acc += w[col]
                        if u < acc:
                            p = row * g.W + col
                            break
        else:
            bnd = b1[row] * b2[row]
            u = u / (cum[row] - lo) * rs[row]
            for col in range(1, size + 1):
                acc += w[col]
                if u < acc:         # u >= 0, so acc just grew: w[col] > 0
                    p = row * g.W + col
                    break
        if p == 0 or g.stamp[p] == g.curstamp:
            continue                # rounding, or a near point: this proposal fails
        if rng_unit(r) * bnd < t1[g.dpos[p]] * t2[g.dpos[p]]:
            return p
    return _exact_draw(g, b, c, r)

# ---------------------------------------------------------------------------------------------
# The policy seam
# ---------------------------------------------------------------------------------------------
cdef void gamma_policy_premove(gamma_policy_t* g, const board_t* b, int m) noexcept nogil:
    cdef int c = b.to_move, k, q, h, j, n
    g.chosen = m
    g.chosen_n = b.nmoves
    g.pre_ko = b.ko
    g.pre_minlibs = 1000
    g.ncapst = 0
    g.ncapstones = 0
    if m == PASS:
        return
    for k in range(4):
        q = m + b.off[k]
        if b.color[q] == c:
            n = b.nlibs[b.head[q]]
            if n < g.pre_minlibs:
                g.pre_minlibs = n
        elif b.color[q] == 3 - c and b.nlibs[b.head[q]] == 1:
            h = b.head[q]
            for j in range(g.ncapst):
                if b.head[g.capst[j]] == h:
                    break
            else:
                g.capst[g.ncapst] = q
                g.ncapst += 1
                g.ncapstones += b.ssize[h]

cdef inline bint _cache_matches(const gamma_policy_t* g, const board_t* b) noexcept nogil:
    return (g.cache_ok and g.cache_hash == b.hash and g.cache_c == b.to_move and
            g.cache_size == b.size and g.cache_ko == b.ko and g.cache_last == b.last and
            g.cache_last2 == b.last2 and g.cache_nempty == b.nempty)

cdef void gamma_policy_setboard(void* ctx, board_t* b) noexcept nogil:
    """A playout starts: every weight is recomputed at each colour's first turn, except the
    side to move's when the start is the cached position (then they are copied)."""
    cdef gamma_policy_t* g = <gamma_policy_t*>ctx
    cdef int c = b.to_move
    if b.size != g.size or b.W != g.W:
        _set_geometry(g, b)
    _set_all_full(g)
    g.chosen = -1
    g.nplayed = 0
    if _cache_matches(g, b):
        g.n_cached += 1
        g.full[c] = 0
        memcpy(g.w[c], g.cache_w, sizeof(g.cache_w))
        memcpy(g.flags[c], g.cache_flags, sizeof(g.cache_flags))
        memcpy(g.rowsum[c], g.cache_rowsum, sizeof(g.cache_rowsum))
        memcpy(g.rowerr[c], g.cache_rowerr, sizeof(g.cache_rowerr))
        memcpy(g.llist[c], g.cache_llist, g.cache_nl * sizeof(int16_t))
        memcpy(g.klist[c], g.cache_klist, g.cache_nk * sizeof(int16_t))
        g.nl[c] = g.cache_nl
        g.nk[c] = g.cache_nk
        g.kostate[c] = g.cache_kostate
        g.nd[c] = 0
        g.rowdirty[c] = 0
        return
    # compute the side to move's weights now and keep them for the next start
    _flush(g, b, c)
    g.cache_ok = 1
    g.cache_c = c
    g.cache_hash = b.hash
    g.cache_size = b.size
    g.cache_ko = b.ko
    g.cache_last = b.last
    g.cache_last2 = b.last2
    g.cache_nempty = b.nempty
    memcpy(g.cache_w, g.w[c], sizeof(g.cache_w))
    memcpy(g.cache_flags, g.flags[c], sizeof(g.cache_flags))
    memcpy(g.cache_rowsum, g.rowsum[c], sizeof(g.cache_rowsum))
    memcpy(g.cache_rowerr, g.rowerr[c], sizeof(g.cache_rowerr))
    memcpy(g.cache_llist, g.llist[c], g.nl[c] * sizeof(int16_t))
    memcpy(g.cache_klist, g.klist[c], g.nk[c] * sizeof(int16_t))
    g.cache_nl = g.nl[c]
    g.cache_nk = g.nk[c]
    g.cache_kostate = g.kostate[c]

cdef int gamma_policy_choose(void* ctx, board_t* b, rng_t* r) noexcept nogil:
    cdef gamma_policy_t* g = <gamma_policy_t*>ctx
    cdef int c = b.to_move, m
    if g.light_after > 0 and g.nplayed >= g.light_after:
        # the light tail: the weights are left as they are (gamma_policy_played starts over on a
        # move it did not see chosen, and setboard does at the next playout)
        g.n_light += 1
        g.chosen = -1
        return tail_choose(b, r, g.tail)
    if b.size != g.size or b.W != g.W:
        _set_geometry(g, b)
        _set_all_full(g)
    _flush(g, b, c)
    g.n_choose += 1
    m = _sample(g, b, c, r)
    if g.tail & TAIL_REFUSE:
        # a refused move's weight is set aside for this draw (recomputed at c's next flush) and
        # the draw made again among the rest: the gammas' distribution less the refused points
        while m != PASS and tail_refused(b, m, c, g.tail):
            g.n_refused += 1
            _set_aside(g, c, m)
            m = _sample(g, b, c, r)
    gamma_policy_premove(g, b, m)
    return m

cdef void _set_aside(gamma_policy_t* g, int c, int p) noexcept nogil:
    """Colour c's weight of p is 0 until c's next flush, which recomputes it; its row summed
    again."""
    g.w[c][p] = 0
    _mark(g, c, p)
    _resum_row(g, c, g.rowof[p])

cdef inline int _gained(const gamma_policy_t* g, const board_t* b, int h) noexcept nogil:
    """Liberties of the string with head h among the stones the last move captured."""
    cdef int i, s, n = 0
    for i in range(g.ncapst):
        s = g.capst[i]
        while True:
            n += lib_has(b, h, s)
            s = b.next[s]
            if s == g.capst[i]:
                break
    return n

cdef void gamma_policy_played(void* ctx, board_t* b, int m) noexcept nogil:
    """After board_play(b, m, X): mark what the move may have changed (see the notes in the
    header of gamma_sampler.pxd and the comments below)."""
    cdef gamma_policy_t* g = <gamma_policy_t*>ctx
    cdef int X = 3 - b.to_move, Y = b.to_move
    cdef int i, k, q, h, s, r, hr, S, pre
    g.nplayed += 1
    if m != g.chosen or b.nmoves != g.chosen_n + 1 or b.size != g.size:
        # a move the policy did not see beforehand: start over
        _set_all_full(g)
        g.chosen = -1
        return
    g.chosen = -1
    # the last move changed: X's weights that used the previous one are stale
    for i in range(g.nl[X]):
        q = g.llist[X][i]
        g.flags[X][q] &= ~F_L
        _mark(g, X, q)
    g.nl[X] = 0
    # ko points (legality for the side to move)
    if g.pre_ko != PASS:
        _mark2(g, g.pre_ko)
    if b.ko != PASS:
        _mark2(g, b.ko)
    if m == PASS:
        return
    # every point whose 3x3 code changed (the move, its 8 neighbours, captured stones, atari bits)
    if b.nchanged < 0:
        _set_all_full(g)
        return
    for i in range(b.nchanged):
        _mark2(g, b.changed[i])
    S = b.head[m]
    # the mover's new string: its liberties when it or a string it absorbed has few liberties
    # (liberty counts up to 3 decide extension and self-atari; sizes matter only then)
    if b.nlibs[S] <= 3 or g.pre_minlibs <= 3:
        _mark_libs(g, b, S)
    # capture kind 1 needs the atari state of the mover's strings next to opponent strings
    if b.nlibs[S] == 1 or g.pre_minlibs == 1:
        _mark_atari_neighbours(g, b, S)
    # opponent strings that lost the liberty m
    g.curg += 1
    if g.curg == 0:
        memset(g.gstamp, 0, sizeof(g.gstamp))
        g.curg = 1
    for k in range(4):
        q = m + b.off[k]
        if b.color[q] == Y:
            h = b.head[q]
            if g.gstamp[h] == g.curg:
                continue
            g.gstamp[h] = g.curg
            if b.nlibs[h] <= 3:
                _mark_libs(g, b, h)
            if b.nlibs[h] == 1:
                _mark_atari_neighbours(g, b, h)
    # strings next to captured stones gained liberties (and may have left atari). The mover's
    # string S is covered above. Another string's features at its liberties depend on its
    # liberty count only up to 3, and on its atari state; before the move it had nlibs minus
    # the captured stones next to it (m is not next to it, or it would be part of S).
    g.gstamp[S] = g.curg
    for i in range(g.ncapst):
        s = g.capst[i]          # the ring of a captured string stays intact after removal
        while True:
            for k in range(4):
                r = s + b.off[k]
                if b.color[r] == X:
                    hr = b.head[r]
                    if g.gstamp[hr] != g.curg:
                        g.gstamp[hr] = g.curg
                        if b.nlibs[hr] <= 3 + g.ncapstones:
                            pre = b.nlibs[hr] - _gained(g, b, hr)
                            if pre <= 3:
                                _mark_libs(g, b, hr)
                            if pre == 1:
                                _mark_atari_neighbours(g, b, hr)
            s = b.next[s]
            if s == g.capst[i]:
                break
    # features of Y that depend on the new last move m: capturing m's string (kind 0), a
    # capture next to m (kind 2: the 8 neighbours, already in b.changed), extending a string
    # that m put in atari
    if b.nlibs[S] == 1:
        _mark(g, Y, board_first_lib(b, S))
    for k in range(4):
        q = m + b.off[k]
        if (b.color[q] == BLACK or b.color[q] == WHITE) and b.nlibs[b.head[q]] == 1:
            _mark(g, Y, board_first_lib(b, b.head[q]))

cdef void policy_gamma(policy_t* pol, gamma_policy_t* g) noexcept nogil:
    pol.ctx = g
    pol.setboard = gamma_policy_setboard
    pol.choose = gamma_policy_choose
    pol.played = gamma_policy_played

cdef gamma_policy_t* gamma_policy_new(const double* gamma, int near_d) noexcept nogil:
    cdef gamma_policy_t* g = <gamma_policy_t*>calloc(1, sizeof(gamma_policy_t))
    if g == NULL:
        return NULL
    g.gamma = gamma
    g.pat3 = pat3_table()
    g.near_d = near_d if near_d > 0 else DEF_NEAR_D
    if g.near_d > 17:
        g.near_d = 17
    g.size = 0
    g.W = 0
    g.chosen = -1
    _set_all_full(g)
    return g

cdef void gamma_policy_free(gamma_policy_t* g) noexcept nogil:
    free(g)

cdef int rollout_make_gamma(void* arg, policy_t* pol) noexcept nogil:
    cdef const gamma_maker_t* m = <const gamma_maker_t*>arg
    cdef gamma_policy_t* g = gamma_policy_new(m.gamma, 0)
    if g == NULL:
        return 0
    g.light_after = m.light_after
    g.tail = m.tail
    policy_gamma(pol, g)
    return 1

cdef void rollout_release_gamma(void* arg, policy_t* pol) noexcept nogil:
    gamma_policy_free(<gamma_policy_t*>pol.ctx)
    pol.ctx = NULL

# ---------------------------------------------------------------------------------------------
# Checking against a recomputation from scratch
# ---------------------------------------------------------------------------------------------
cdef int gamma_policy_check(gamma_policy_t* g, board_t* b, char* msg, int msglen) noexcept nogil:
    cdef int c = b.to_move, p, n = 0, row
    cdef int32_t ids[NGROUPS]
    cdef double ref, full, s
    if b.size != g.size or b.W != g.W:
        _set_geometry(g, b)
        _set_all_full(g)
    _flush(g, b, c)
    for p in range(b.npts):
        ref = 0
        full = 0
        if b.color[p] == EMPTY and board_is_legal(b, p, c) and not board_is_eye(b, p, c):
            rollout_features(b, p, c, ids)
            full = team_gamma(g.gamma, ids)
            ids[G_DIST1] = FB_DIST1
            ids[G_DIST2] = FB_DIST2
            ref = team_gamma(g.gamma, ids)
        if fabs(g.w[c][p] - ref) > 1e-12 * ref or (ref == 0) != (g.w[c][p] == 0):
            snprintf(msg, msglen, "colour %d point %d (row %d col %d): stored weight %.17g, "
                     "recomputed %.17g", c, p, p // b.W, p % b.W, g.w[c][p], ref)
            return 1
        if ref > 0:
            n += 1
            # the distance factor the sampler applies must give rollout_features' full strength
            s = ref * _dist_factor(g, b, p)
            if fabs(s - full) > 1e-12 * full:
                snprintf(msg, msglen, "point %d: distance factor gives %.17g, rollout_features %.17g",
                         p, s, full)
                return 1
    for row in range(1, b.size + 1):
        s = 0
        for p in range(row * b.W + 1, row * b.W + b.size + 1):
            s += g.w[c][p]
        if fabs(s - g.rowsum[c][row]) > 1e-9 * (s + 1e-300):
            snprintf(msg, msglen, "colour %d row %d: sum %.17g, kept %.17g", c, row, s,
                     g.rowsum[c][row])
            return 1
    return 0
