# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Large spatial patterns (definitions: gammago/moves/spatial.pxd): the hashes of the shape around
a point, the dictionary that maps them to feature ids, and the counter and game replay that
train-mm's harvest uses."""
import hashlib

import numpy as np

from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from libc.stdint cimport uint64_t, uint32_t, int32_t, int16_t, uint8_t
from gammago.go.board cimport (board_t, Board, board_copy, board_play, board_check_move,
                               EMPTY, BLACK, WHITE, BORDER, PASS, MOVE_OK, MAX_HIST, MAX_SIZE)

# ---------------------------------------------------------------------------------------------
# The points by ring, the symmetries and the Zobrist keys
# ---------------------------------------------------------------------------------------------
cdef int PDR[SPATIAL_NPTS]
cdef int PDC[SPATIAL_NPTS]
cdef int RING_END[SPATIAL_NSIZES]          # points with d <= SPATIAL_MIN + k
cdef uint64_t ZT[SPATIAL_NPTS][4][8]       # ZT[j][colour][s]: the key of point j's image
                                           # under symmetry s for that colour (empty: 0)
cdef uint64_t SIZEKEY[SPATIAL_NSIZES]
cdef uint8_t COLMAP[3][4]                  # [mover][board colour] -> 0 empty, 1 own, 2 opp, 3 off
cdef int LARGEST_K[MAX_SIZE + 1]           # by board size: the largest size spatial_match
                                           # hashes and looks up, as an index into SIZES


def gridcular(dr, dc):
    """Pachi's gridcular distance of an offset: dx + dy + max(dx, dy)."""
    dr, dc = abs(dr), abs(dc)
    return dr + dc + max(dr, dc)


def _points():
    pts = [(dr, dc) for dr in range(-SPATIAL_MAX, SPATIAL_MAX + 1)
           for dc in range(-SPATIAL_MAX, SPATIAL_MAX + 1)
           if 2 <= gridcular(dr, dc) <= SPATIAL_MAX]
    pts.sort(key=lambda t: (gridcular(*t), t))
    return pts


def _splitmix(state):
    state = (state + 0x9E3779B97F4A7C15) & 0xFFFFFFFFFFFFFFFF
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & 0xFFFFFFFFFFFFFFFF
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & 0xFFFFFFFFFFFFFFFF
    return state, z ^ (z >> 31)


def _init():
    pts = _points()
    if len(pts) != SPATIAL_NPTS:
        raise ImportError(f"gammago.moves.spatial: {len(pts)} points up to d = {SPATIAL_MAX}, "
                          f"spatial.pxd says {SPATIAL_NPTS}")
    index = {t: j for j, t in enumerate(pts)}
    syms = [lambda r, c: (r, c), lambda r, c: (-r, c), lambda r, c: (r, -c),
            lambda r, c: (-r, -c), lambda r, c: (c, r), lambda r, c: (-c, r),
            lambda r, c: (c, -r), lambda r, c: (-c, -r)]
    state, keys = 0x5EED5A7141, []
    for j in range(SPATIAL_NPTS):
        row = [0]
        for k in range(3):
            state, z = _splitmix(state)
            row.append(z)
        keys.append(row)
    for k in range(SPATIAL_NSIZES):
        state, SIZEKEY[k] = _splitmix(state)
        RING_END[k] = sum(1 for t in pts if gridcular(*t) <= SPATIAL_MIN + k)
    for j, (dr, dc) in enumerate(pts):
        PDR[j] = dr
        PDC[j] = dc
        for s, f in enumerate(syms):
            img = index[f(dr, dc)]
            for k in range(4):
                ZT[j][k][s] = keys[img][k]
    for m in range(3):
        for v in range(4):
            COLMAP[m][v] = 3 if v == BORDER else 0 if v == EMPTY else (1 if v == m else 2)
    for m in range(MAX_SIZE + 1):
        LARGEST_K[m] = SPATIAL_NSIZES - 1

_init()

SIZES = tuple(range(SPATIAL_MIN, SPATIAL_MAX + 1))
N_SIZES = SPATIAL_NSIZES
MAX_DICT = SPATIAL_MAXDICT
POINTS = tuple(_points())

# ---------------------------------------------------------------------------------------------
# Hashing
# ---------------------------------------------------------------------------------------------
def _board_size(int board_size):
    if not 5 <= board_size <= MAX_SIZE:
        raise ValueError(f"board size {board_size}: not in 5..{MAX_SIZE}")
    return board_size


def set_largest(int board_size, size):
    """Make spatial_match on boards of board_size look up patterns of at most `size` points
    of gridcular distance (None: SPATIAL_MAX, every size); the smaller sizes' hashes and the
    harvest are unchanged. Process-wide: the engine sets it for the board it plays."""
    _board_size(board_size)
    size = SPATIAL_MAX if size is None else int(size)
    if not SPATIAL_MIN <= size <= SPATIAL_MAX:
        raise ValueError(f"largest pattern size {size}: not in {SPATIAL_MIN}..{SPATIAL_MAX}")
    LARGEST_K[board_size] = size - SPATIAL_MIN


def largest(int board_size):
    """The largest pattern size spatial_match looks up on boards of board_size."""
    return SPATIAL_MIN + LARGEST_K[_board_size(board_size)]


cdef void spatial_hashes(const board_t* b, int p, int c, uint64_t* out) noexcept nogil:
    _hashes_upto(b, p, c, out, SPATIAL_NSIZES - 1)


cdef void _hashes_upto(const board_t* b, int p, int c, uint64_t* out, int last) noexcept nogil:
    """spatial_hashes of the sizes SPATIAL_MIN .. SPATIAL_MIN + last only."""
    cdef uint64_t h[8]
    cdef uint64_t m
    cdef const uint64_t* z
    cdef int j, k, s, rr, cc, ring = 0
    cdef int W = b.W, size = b.size
    cdef int r = p // W - 1, col = p % W - 1
    cdef bint inside = r >= 5 and r < size - 5 and col >= 5 and col < size - 5
    cdef const uint8_t* cmap = COLMAP[c]
    memset(h, 0, sizeof(h))
    for j in range(SPATIAL_NPTS):
        if inside:
            k = cmap[b.color[p + PDR[j] * W + PDC[j]]]
        else:
            rr = r + PDR[j]
            cc = col + PDC[j]
            if rr < 0 or rr >= size or cc < 0 or cc >= size:
                k = 3
            else:
                k = cmap[b.color[(rr + 1) * W + cc + 1]]
        if k:
            z = &ZT[j][k][0]
            for s in range(8):
                h[s] ^= z[s]
        if j + 1 == RING_END[ring]:
            m = h[0]
            for s in range(1, 8):
                if h[s] < m:
                    m = h[s]
            # the size in the low 4 bits: sizes never collide, and a hash names its size
            out[ring] = ((m ^ SIZEKEY[ring]) & ~(<uint64_t>0xF)) | <uint64_t>(SPATIAL_MIN + ring)
            if ring == last:
                return
            ring += 1


cdef inline uint64_t _slot(uint64_t h, uint64_t mask) noexcept nogil:
    return ((h * <uint64_t>0x9E3779B97F4A7C15) >> 29) & mask


cdef int spatial_lookup(const spatial_dict_t* d, uint64_t h) noexcept nogil:
    cdef uint64_t i = _slot(h, d.mask)
    while d.keys[i]:
        if d.keys[i] == h:
            return d.ids[i]
        i = (i + 1) & d.mask
    return 0


cdef int spatial_match(const spatial_dict_t* d, const board_t* b, int p, int c) noexcept nogil:
    cdef uint64_t hs[SPATIAL_NSIZES]
    cdef int k, i, last = LARGEST_K[b.size]
    _hashes_upto(b, p, c, hs, last)
    for k in range(last, -1, -1):
        i = spatial_lookup(d, hs[k])
        if i:
            return i
    return 0


def hashes_at(Board board, vertex, color=None):
    """The canonical hashes (SIZES order) of the pattern around an empty point for the colour
    to move (or `color`): a list of ints."""
    cdef int c = board.b.to_move if color is None else (BLACK if str(color).lower()[0] == "b" else WHITE)
    cdef int p = board.point(vertex)
    cdef uint64_t out[SPATIAL_NSIZES]
    if p == PASS:
        raise ValueError("a pass has no pattern")
    spatial_hashes(board.b, p, c, out)
    return [int(out[k]) for k in range(SPATIAL_NSIZES)]


def dictionary_checksum(hashes, sizes):
    """The checksum that binds a dictionary to its gamma table: 16 hex digits of the SHA-256
    of its hashes and sizes in id order."""
    h = hashlib.sha256(np.ascontiguousarray(hashes, dtype="<u8").tobytes())
    h.update(np.ascontiguousarray(sizes, dtype=np.uint8).tobytes())
    return h.hexdigest()[:16]


cdef class SpatialDict:
    """The dictionary: hashes[i] (uint64) has id i + 1 and size sizes[i]."""

    def __cinit__(self, hashes, sizes):
        h = np.ascontiguousarray(hashes, dtype=np.uint64)
        sz = np.ascontiguousarray(sizes, dtype=np.uint8)
        cdef int n = len(h), i
        cdef uint64_t slots = 16, j
        memset(&self.d, 0, sizeof(spatial_dict_t))
        if len(sz) != n:
            raise ValueError(f"{n} hashes but {len(sz)} sizes")
        if n > SPATIAL_MAXDICT:
            raise ValueError(f"{n} patterns, at most {SPATIAL_MAXDICT}")
        if n and (h == 0).any():
            raise ValueError("a pattern hash of 0")
        if n and ((sz < SPATIAL_MIN) | (sz > SPATIAL_MAX)).any():
            raise ValueError(f"a pattern size outside {SPATIAL_MIN}..{SPATIAL_MAX}")
        if len(np.unique(h)) != n:
            raise ValueError("a pattern hash listed twice")
        while slots < 2 * <uint64_t>n + 2:
            slots *= 2
        self.d.keys = <uint64_t*>calloc(slots, sizeof(uint64_t))
        self.d.ids = <int32_t*>calloc(slots, sizeof(int32_t))
        self.d.sizes = <uint8_t*>calloc(n + 1, 1)
        if self.d.keys == NULL or self.d.ids == NULL or self.d.sizes == NULL:
            raise MemoryError()
        self.d.mask = slots - 1
        self.d.n = n
        cdef uint64_t[::1] hv = h if n else np.zeros(1, np.uint64)
        cdef uint8_t[::1] sv = sz if n else np.zeros(1, np.uint8)
        for i in range(n):
            j = _slot(hv[i], self.d.mask)
            while self.d.keys[j]:
                j = (j + 1) & self.d.mask
            self.d.keys[j] = hv[i]
            self.d.ids[j] = i + 1
            self.d.sizes[i + 1] = sv[i]
        self.hashes = h
        self.sizes_of = np.concatenate([np.zeros(1, np.uint8), sz])
        self.checksum = dictionary_checksum(h, sz)

    def __dealloc__(self):
        free(self.d.keys)
        free(self.d.ids)
        free(self.d.sizes)

    def __len__(self):
        return self.d.n

    def __repr__(self):
        return f"SpatialDict({self.d.n} patterns, checksum {self.checksum})"

    def lookup(self, h):
        return spatial_lookup(&self.d, <uint64_t>h)

    def match(self, Board board, vertex, color=None):
        """(id, size) of the largest pattern around an empty point that the dictionary holds,
        (0, 0) when none."""
        cdef int c = board.b.to_move if color is None else (BLACK if str(color).lower()[0] == "b" else WHITE)
        cdef int p = board.point(vertex)
        if p == PASS:
            return 0, 0
        i = spatial_match(&self.d, board.b, p, c)
        return i, int(self.d.sizes[i]) if i else 0


# ---------------------------------------------------------------------------------------------
# Harvest: the played moves' hashes, and a bounded counter
# ---------------------------------------------------------------------------------------------
def harvest_game(Board board, moves, first=0, last=None):
    """Replay moves ([(colour 'b'/'w', vertex)]) from board (unchanged) and return the hashes
    of the pattern around every move played (passes skipped) with index in [first, last), as
    a uint64 array (moves x SIZES). ValueError names an illegal move."""
    cdef int n = len(moves), i, r, p, c, m = 0
    cdef int lo = first, hi = n if last is None else min(n, last)
    out = np.zeros((max(0, hi - lo), SPATIAL_NSIZES), dtype=np.uint64)
    cdef uint64_t[:, ::1] ov = out if hi > lo else np.zeros((1, SPATIAL_NSIZES), np.uint64)
    cdef board_t* b = <board_t*>malloc(sizeof(board_t))
    if b == NULL:
        raise MemoryError()
    try:
        board_copy(b, board.b)
        for i in range(min(n, hi)):
            colour, vertex = moves[i]
            c = BLACK if colour == "b" else WHITE
            p = board.point(vertex)
            if b.nmoves >= MAX_HIST - 2:
                raise ValueError(f"move {i + 1}: game too long")
            r = board_check_move(b, p, c, 0)
            if r != MOVE_OK:
                raise ValueError(f"move {i + 1} ({colour} {vertex}) is illegal")
            if i >= lo and p != PASS:
                spatial_hashes(b, p, c, &ov[m, 0])
                m += 1
            board_play(b, p, c)
    finally:
        free(b)
    return out[:m]


cdef class HashCounter:
    """Counts of 64-bit hashes (never 0) in an open-addressing table of `slots` entries; when
    it is 70% full, the entries of the lowest counts are dropped (their counts are lost: the
    counts of frequent hashes stay exact from the first time they survive a prune, the rare
    ones are undercounted) until it is at most 35% full. `pruned_below` says the count under
    which hashes may have been dropped."""
    cdef uint64_t* keys
    cdef uint32_t* counts
    cdef uint64_t mask
    cdef public long n
    cdef public long pruned_below
    cdef public long prunes

    def __cinit__(self, long slots=1 << 24):
        cdef uint64_t s = 1024
        while s < <uint64_t>slots:
            s *= 2
        self.keys = <uint64_t*>calloc(s, sizeof(uint64_t))
        self.counts = <uint32_t*>calloc(s, sizeof(uint32_t))
        if self.keys == NULL or self.counts == NULL:
            raise MemoryError()
        self.mask = s - 1
        self.n = 0
        self.pruned_below = 0
        self.prunes = 0

    def __dealloc__(self):
        free(self.keys)
        free(self.counts)

    cdef void _put(self, uint64_t h, uint32_t k) noexcept nogil:
        cdef uint64_t i = _slot(h, self.mask)
        while self.keys[i]:
            if self.keys[i] == h:
                self.counts[i] += k
                return
            i = (i + 1) & self.mask
        self.keys[i] = h
        self.counts[i] = k
        self.n += 1

    def add(self, hashes, counts=None):
        """Count each hash (uint64 array) once, or counts[i] times."""
        cdef uint64_t[::1] hv = np.ascontiguousarray(np.ravel(hashes), dtype=np.uint64)
        cdef uint32_t[::1] cv
        cdef long i, m = hv.shape[0]
        cdef bint weighted = counts is not None
        cdef uint64_t limit = (self.mask + 1) * 7 // 10
        if weighted:
            cv = np.ascontiguousarray(np.ravel(counts), dtype=np.uint32)
        for i in range(m):
            if hv[i] == 0:
                continue
            self._put(hv[i], cv[i] if weighted else 1)
            if <uint64_t>self.n >= limit:
                self._prune()

    cdef void _prune(self):
        cdef uint64_t s = self.mask + 1, i
        cdef uint32_t below = 2
        cdef long keep
        cdef uint64_t* ok = self.keys
        cdef uint32_t* oc = self.counts
        while True:
            keep = 0
            for i in range(s):
                if ok[i] and oc[i] >= below:
                    keep += 1
            if keep <= <long>(s * 35 // 100):
                break
            below *= 2
        self.keys = <uint64_t*>calloc(s, sizeof(uint64_t))
        self.counts = <uint32_t*>calloc(s, sizeof(uint32_t))
        self.n = 0
        for i in range(s):
            if ok[i] and oc[i] >= below:
                self._put(ok[i], oc[i])
        free(ok)
        free(oc)
        if below > self.pruned_below:
            self.pruned_below = below
        self.prunes += 1

    def items(self, long min_count=1):
        """(hashes uint64, counts uint32) of the entries counted at least min_count times."""
        cdef uint64_t s = self.mask + 1, i
        cdef long k = 0
        for i in range(s):
            if self.keys[i] and self.counts[i] >= min_count:
                k += 1
        h = np.empty(k, dtype=np.uint64)
        c = np.empty(k, dtype=np.uint32)
        cdef uint64_t[::1] hv = h if k else np.zeros(1, np.uint64)
        cdef uint32_t[::1] cv = c if k else np.zeros(1, np.uint32)
        k = 0
        for i in range(s):
            if self.keys[i] and self.counts[i] >= min_count:
                hv[k] = self.keys[i]
                cv[k] = self.counts[i]
                k += 1
        return h, c
