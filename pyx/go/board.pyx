# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The Go board: strings with incremental liberty sets, Zobrist hashing, positional superko,
area scoring, Benson pass-alive regions and incrementally kept 3x3 codes, as nogil functions on
a C struct (see gammago/go/board.pxd), plus the thin Python `Board` class used by tests and GTP.
"""
from libc.string cimport memset, memcpy
from libc.stdlib cimport malloc, calloc, free
from libc.stdio cimport snprintf
from libc.stdint cimport uint64_t, uint32_t, uint16_t, int16_t, uint8_t
from cpython.bytes cimport PyBytes_FromStringAndSize, PyBytes_AS_STRING

cdef extern from *:
    int popcount64 "__builtin_popcountll"(unsigned long long) nogil
    int ctz64 "__builtin_ctzll"(unsigned long long) nogil

# ---------------------------------------------------------------------------------------------
# Zobrist keys, built once at import from a fixed seed.
# ---------------------------------------------------------------------------------------------
cdef uint64_t ZOB[3][MAX_PTS]

cdef uint64_t _splitmix(uint64_t* s) noexcept nogil:
    s[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = s[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)

cdef void _init_tables() noexcept nogil:
    cdef uint64_t s = 20071007  # fixed: hashes are the same in every process
    cdef int c, p
    for c in range(3):
        for p in range(MAX_PTS):
            ZOB[c][p] = _splitmix(&s) if c else 0

_init_tables()

cdef board_t _probe
# bytes of board_t before its arrays: what board_try_play saves and board_undo puts back
cdef size_t _HEADER = <size_t>(<char*>&_probe.color[0] - <char*>&_probe)
if _HEADER > UNDO_HEADER:
    raise ImportError(f"board_t's header is {_HEADER} bytes, undo_t keeps {UNDO_HEADER}")

# ---------------------------------------------------------------------------------------------
# Writes to the board's arrays: recorded in b.journal by a journaled move (board_try_play).
# Every write below the header (board_t.color onwards) goes through one of these. The code that
# writes is compiled twice through the fused type _mode, with the test `_mode is _journaled`
# resolved at compile time: a plain move (board_play, every playout) pays nothing for the
# journal, not even a test per write.
# ---------------------------------------------------------------------------------------------
ctypedef struct _plain:
    char unused
ctypedef struct _journaled:
    char unused
ctypedef fused _mode:
    _plain
    _journaled

cdef inline void _log(board_t* b, void* a, int size, uint64_t old) noexcept nogil:
    cdef journal_t* j = b.journal
    cdef jentry_t* e = &j.e[j.n]
    j.n += 1
    e.addr = a
    e.size = size
    e.old = old

cdef inline void _w8(_mode* m, board_t* b, uint8_t* a, uint8_t v) noexcept nogil:
    if _mode is _journaled:
        _log(b, a, 1, a[0])
    a[0] = v

cdef inline void _w16(_mode* m, board_t* b, int16_t* a, int v) noexcept nogil:
    if _mode is _journaled:
        _log(b, a, 2, <uint16_t>a[0])
    a[0] = <int16_t>v

cdef inline void _w32(_mode* m, board_t* b, uint32_t* a, uint32_t v) noexcept nogil:
    if _mode is _journaled:
        _log(b, a, 4, a[0])
    a[0] = v

cdef inline void _w64(_mode* m, board_t* b, uint64_t* a, uint64_t v) noexcept nogil:
    if _mode is _journaled:
        _log(b, a, 8, a[0])
    a[0] = v

cdef inline void _w64_word(_mode* m, board_t* b, uint64_t* a, uint64_t v) noexcept nogil:
    # a word of a liberty set: a journaled move logs it only when it changes (a merge or a new
    # stone rewrites every word of a set, most of them as they were)
    if _mode is _journaled:
        if a[0] == v:
            return
        _log(b, a, 8, a[0])
    a[0] = v

# ---------------------------------------------------------------------------------------------
# Small internal helpers
# ---------------------------------------------------------------------------------------------
cdef inline void _empty_add(_mode* m, board_t* b, int p) noexcept nogil:
    _w16(m, b, &b.empty_pos[p], b.nempty)
    _w16(m, b, &b.empty[b.nempty], p)
    b.nempty += 1

cdef inline void _empty_remove(_mode* m, board_t* b, int p) noexcept nogil:
    cdef int i = b.empty_pos[p]
    cdef int q
    b.nempty -= 1
    q = b.empty[b.nempty]
    _w16(m, b, &b.empty[i], q)
    _w16(m, b, &b.empty_pos[q], i)

cdef inline void _mark_changed(board_t* b, int p) noexcept nogil:
    if b.nchanged >= 0:
        if b.nchanged < MAX_CHANGED:
            b.changed[b.nchanged] = p
            b.nchanged += 1
        else:
            b.nchanged = -1

cdef inline void _set_field(_mode* m, board_t* b, int q, int shift, uint32_t c) noexcept nogil:
    # only empty points keep an exact code: a stone's point gets its code from scratch when
    # it is captured (_place), so stones and the border are skipped here
    if b.color[q] == EMPTY:
        _w32(m, b, &b.code[q], (b.code[q] & ~((<uint32_t>3) << shift)) | (c << shift))
        _mark_changed(b, q)

cdef inline void _set_neighbour_colour(_mode* m, board_t* b, int p, int c) noexcept nogil:
    # p changed colour to c: rewrite the field that each of its 8 neighbours keeps for it.
    # Neighbour q = p - off[k] keeps p in field k (shift 2k); unrolled, see off[] in board_init.
    cdef int W = b.W
    _set_field(m, b, p + W, 0, c)
    _set_field(m, b, p - 1, 2, c)
    _set_field(m, b, p - W, 4, c)
    _set_field(m, b, p + 1, 6, c)
    _set_field(m, b, p + W - 1, 8, c)
    _set_field(m, b, p - W - 1, 10, c)
    _set_field(m, b, p - W + 1, 12, c)
    _set_field(m, b, p + W + 1, 14, c)

cdef inline bint _lib_add(_mode* m, board_t* b, int h, int p) noexcept nogil:
    cdef uint64_t* w = &b.libs[h * b.nwords + (p >> 6)]
    cdef uint64_t bit = (<uint64_t>1) << (p & 63)
    if w[0] & bit:
        return 0
    _w64(m, b, w, w[0] | bit)
    _w16(m, b, &b.nlibs[h], b.nlibs[h] + 1)
    return 1

cdef inline bint _lib_remove(_mode* m, board_t* b, int h, int p) noexcept nogil:
    cdef uint64_t* w = &b.libs[h * b.nwords + (p >> 6)]
    cdef uint64_t bit = (<uint64_t>1) << (p & 63)
    if not (w[0] & bit):
        return 0
    _w64(m, b, w, w[0] & ~bit)
    _w16(m, b, &b.nlibs[h], b.nlibs[h] - 1)
    return 1

cdef inline void _atari_bits(_mode* m, board_t* b, int q) noexcept nogil:
    # recompute the 4 atari bits of empty point q from the strings around it
    cdef uint32_t code = b.code[q] & CODE_COLOR_MASK
    cdef int k, r
    for k in range(4):
        r = q + b.off[k]
        if (b.color[r] == BLACK or b.color[r] == WHITE) and b.nlibs[b.head[r]] == 1:
            code |= (<uint32_t>1) << (CODE_ATARI_SHIFT + k)
    if code != b.code[q]:
        _w32(m, b, &b.code[q], code)
        _mark_changed(b, q)

cdef int board_first_lib(const board_t* b, int h) noexcept nogil:
    cdef int w
    cdef uint64_t x
    for w in range(b.nwords):
        x = b.libs[h * b.nwords + w]
        if x:
            return (w << 6) + ctz64(x)
    return 0

cdef int board_lib_list(const board_t* b, int h, int16_t* out) noexcept nogil:
    cdef int w, n = 0
    cdef uint64_t x
    for w in range(b.nwords):
        x = b.libs[h * b.nwords + w]
        while x:
            out[n] = (w << 6) + ctz64(x)
            n += 1
            x &= x - 1
    return n

cdef uint32_t board_scratch_code(const board_t* b, int p) noexcept nogil:
    """The 3x3 code of p computed from nothing but colours and liberty counts."""
    cdef uint32_t code = 0
    cdef int k, r
    for k in range(8):
        code |= (<uint32_t>b.color[p + b.off[k]]) << (2 * k)
    for k in range(4):
        r = p + b.off[k]
        if (b.color[r] == BLACK or b.color[r] == WHITE) and b.nlibs[b.head[r]] == 1:
            code |= (<uint32_t>1) << (CODE_ATARI_SHIFT + k)
    return code

# ---------------------------------------------------------------------------------------------
# Set-up and copies
# ---------------------------------------------------------------------------------------------
cdef void board_init(board_t* b, int size, double komi) noexcept nogil:
    cdef int W = size + 2
    cdef int p, row, col
    memset(b, 0, sizeof(board_t))
    b.size = size
    b.W = W
    b.npts = W * W
    b.nwords = (b.npts + 63) >> 6
    b.off[0] = -W
    b.off[1] = 1
    b.off[2] = W
    b.off[3] = -1
    b.off[4] = -W + 1
    b.off[5] = W + 1
    b.off[6] = W - 1
    b.off[7] = -W - 1
    b.to_move = BLACK
    b.komi = komi
    for p in range(b.npts):
        row = p // W
        col = p % W
        if row == 0 or col == 0 or row == W - 1 or col == W - 1:
            b.color[p] = BORDER
        else:
            b.color[p] = EMPTY
            _empty_add(<_plain*>NULL, b, p)
    for row in range(1, W - 1):
        for col in range(1, W - 1):
            p = row * W + col
            b.code[p] = board_scratch_code(b, p)

cdef void board_copy(board_t* dst, const board_t* src) noexcept nogil:
    # the fixed header, then only the used part of each array
    cdef size_t header = <size_t>(<const char*>&src.color[0] - <const char*>src)
    cdef int n = src.npts
    cdef int nh = src.nmoves + 1
    if nh > MAX_HIST:
        nh = MAX_HIST
    memcpy(dst, src, header)
    memcpy(dst.color, src.color, n * sizeof(uint8_t))
    memcpy(dst.head, src.head, n * sizeof(int16_t))
    memcpy(dst.next, src.next, n * sizeof(int16_t))
    memcpy(dst.ssize, src.ssize, n * sizeof(int16_t))
    memcpy(dst.nlibs, src.nlibs, n * sizeof(int16_t))
    memcpy(dst.atari_lib, src.atari_lib, n * sizeof(int16_t))
    memcpy(dst.empty, src.empty, n * sizeof(int16_t))
    memcpy(dst.empty_pos, src.empty_pos, n * sizeof(int16_t))
    memcpy(dst.code, src.code, n * sizeof(uint32_t))
    memcpy(dst.hist, src.hist, nh * sizeof(uint64_t))
    memcpy(dst.libs, src.libs, n * src.nwords * sizeof(uint64_t))

# ---------------------------------------------------------------------------------------------
# Legality
# ---------------------------------------------------------------------------------------------
cdef uint64_t board_hash_after(const board_t* b, int p, int c) noexcept nogil:
    """The stone hash after c plays at p (captures included), without playing."""
    cdef uint64_t h = b.hash ^ ZOB[c][p]
    cdef int k, q, hd, s, j
    cdef int seen[4]
    cdef int nseen = 0
    cdef int o = 3 - c
    for k in range(4):
        q = p + b.off[k]
        if b.color[q] == o and b.nlibs[b.head[q]] == 1:
            hd = b.head[q]
            for j in range(nseen):
                if seen[j] == hd:
                    hd = -1
                    break
            if hd < 0:
                continue
            seen[nseen] = hd
            nseen += 1
            s = hd
            while True:
                h ^= ZOB[o][s]
                s = b.next[s]
                if s == hd:
                    break
    return h

cdef int board_check_move(const board_t* b, int p, int c, bint superko) noexcept nogil:
    cdef int r, i, n
    cdef uint64_t h
    if p == PASS:
        return MOVE_OK
    if p < 0 or p >= b.npts or b.color[p] == BORDER:
        return MOVE_OFFBOARD
    r = board_basic_legality(b, p, c)
    if r != MOVE_OK or not superko:
        return r
    h = board_hash_after(b, p, c)
    n = b.nmoves
    if n >= MAX_HIST:
        n = MAX_HIST - 1
    for i in range(n + 1):
        if b.hist[i] == h:
            return MOVE_SUPERKO
    return MOVE_OK

# ---------------------------------------------------------------------------------------------
# Playing a stone
# ---------------------------------------------------------------------------------------------
cdef int _remove_string(_mode* m, board_t* b, int hd, int16_t* gained, int* ngained) noexcept nogil:
    """Take string hd off the board; the strings next to it gain liberties. Returns its size."""
    cdef int o = b.color[hd]
    cdef int s = hd, k, q, n = 0, nxt, j
    while True:
        nxt = b.next[s]
        _w8(m, b, &b.color[s], EMPTY)
        b.hash ^= ZOB[o][s]
        _empty_add(m, b, s)
        _set_neighbour_colour(m, b, s, EMPTY)
        for k in range(4):
            q = s + b.off[k]
            if b.color[q] == 3 - o and _lib_add(m, b, b.head[q], s):
                # remember one stone of each string that gained liberties
                for j in range(ngained[0]):
                    if b.head[gained[j]] == b.head[q]:
                        break
                else:
                    gained[ngained[0]] = q
                    ngained[0] += 1
        n += 1
        s = nxt
        if s == hd:
            break
    _w16(m, b, &b.atari_lib[hd], 0)
    b.captured[o] += n
    return n

cdef inline void _merge(_mode* m, board_t* b, int a, int c) noexcept nogil:
    """Merge the string with head c into the string with head a (a is the larger)."""
    cdef int s = c, w, n = 0
    cdef int tmp
    while True:
        _w16(m, b, &b.head[s], a)
        s = b.next[s]
        if s == c:
            break
    tmp = b.next[a]
    _w16(m, b, &b.next[a], b.next[c])
    _w16(m, b, &b.next[c], tmp)
    _w16(m, b, &b.ssize[a], b.ssize[a] + b.ssize[c])
    for w in range(b.nwords):
        _w64_word(m, b, &b.libs[a * b.nwords + w], b.libs[a * b.nwords + w] | b.libs[c * b.nwords + w])
        n += popcount64(b.libs[a * b.nwords + w])
    _w16(m, b, &b.nlibs[a], n)

cdef void _place(_mode* m, board_t* b, int p, int c) noexcept nogil:
    """Put a stone of c on empty point p, capture, merge, and bring every 3x3 code up to date."""
    cdef int o = 3 - c
    cdef int k, q, hd, hq, i, n, ncap = 0, cap_point = 0, w, col
    cdef int16_t recompute[2 * MAX_PTS]   # points whose atari bits need a look
    cdef int nre = 0
    cdef int16_t touched[8]         # stones of strings whose liberty count changed
    cdef int ntouched = 0
    cdef int16_t gained[MAX_PTS]      # one stone of each string next to captured stones
    cdef int ngained = 0
    cdef int16_t capstart[4]
    cdef int ncapstr = 0

    b.nchanged = 0
    _mark_changed(b, p)
    _w8(m, b, &b.color[p], c)
    b.hash ^= ZOB[c][p]
    _empty_remove(m, b, p)
    _set_neighbour_colour(m, b, p, c)
    _w16(m, b, &b.head[p], p)
    _w16(m, b, &b.next[p], p)
    _w16(m, b, &b.ssize[p], 1)
    _w16(m, b, &b.nlibs[p], 0)
    _w16(m, b, &b.atari_lib[p], 0)
    for w in range(b.nwords):
        _w64_word(m, b, &b.libs[p * b.nwords + w], 0)
    # one pass over the neighbours: liberties, captures, merges
    for k in range(4):
        q = p + b.off[k]
        col = b.color[q]
        if col == EMPTY:
            # q's atari bit towards p stays 0 unless the new string ends in atari, and then
            # its single liberty is refreshed below
            _lib_add(m, b, b.head[p], q)
        elif col == c or col == o:
            hq = b.head[q]
            if b.atari_lib[hq]:
                recompute[nre] = b.atari_lib[hq]
                nre += 1
            _lib_remove(m, b, hq, p)
            if col == c:
                hd = b.head[p]
                if hq != hd:
                    if b.ssize[hd] >= b.ssize[hq]:
                        _merge(m, b, hd, hq)
                    else:
                        _merge(m, b, hq, hd)
                touched[ntouched] = q
                ntouched += 1
            elif b.nlibs[hq] == 0:
                capstart[ncapstr] = q
                ncapstr += 1
                cap_point = q
                ncap += _remove_string(m, b, hq, gained, &ngained)
            else:
                touched[ntouched] = q
                ntouched += 1
    # atari bits: old atari liberties of strings that gained libs
    for i in range(ngained):
        hq = b.head[gained[i]]
        if b.atari_lib[hq]:
            recompute[nre] = b.atari_lib[hq]
            nre += 1
    # refresh the atari liberty of every string whose liberty count changed
    for i in range(ntouched + ngained):
        q = touched[i] if i < ntouched else gained[i - ntouched]
        if b.color[q] == EMPTY:
            continue
        hq = b.head[q]
        n = board_first_lib(b, hq) if b.nlibs[hq] == 1 else 0
        if b.atari_lib[hq] != n:
            if b.atari_lib[hq]:
                recompute[nre] = b.atari_lib[hq]
                nre += 1
            _w16(m, b, &b.atari_lib[hq], n)
        if n:
            recompute[nre] = n
            nre += 1
    hd = b.head[p]
    n = board_first_lib(b, hd) if b.nlibs[hd] == 1 else 0
    _w16(m, b, &b.atari_lib[hd], n)
    if n:
        recompute[nre] = n
        nre += 1
    for i in range(nre):
        if b.color[recompute[i]] == EMPTY:
            _atari_bits(m, b, recompute[i])
    # the captured points are empty now: their codes from scratch
    for i in range(ncapstr):
        q = capstart[i]
        # the ring of a captured string is intact: walk it from its start stone
        hq = q
        while True:
            _w32(m, b, &b.code[hq], board_scratch_code(b, hq))
            _mark_changed(b, hq)
            hq = b.next[hq]
            if hq == q:
                break
    if ncap == 1 and b.ssize[hd] == 1 and b.nlibs[hd] == 1:
        b.ko = cap_point
    else:
        b.ko = 0

cdef inline void _play(_mode* m, board_t* b, int p, int c) noexcept nogil:
    if p != PASS:
        _place(m, b, p, c)
        b.npass = 0
    else:
        b.nchanged = 0
        b.ko = 0
        b.npass += 1
    b.to_move = 3 - c
    b.last2 = b.last
    b.last = p
    b.nmoves += 1
    if b.nmoves < MAX_HIST:
        _w64(m, b, &b.hist[b.nmoves], b.hash)

cdef void board_play(board_t* b, int p, int c) noexcept nogil:
    _play(<_plain*>NULL, b, p, c)

cdef bint board_try_play(board_t* b, int p, int c, journal_t* j, undo_t* u) noexcept nogil:
    cdef int k, q, h, n = 0
    if p != PASS:
        # room for the worst this move can write: its own point and neighbours, every stone
        # it captures or joins (its head, colour, codes around it, liberties it gives) and the
        # liberty words of the strings involved
        for k in range(4):
            q = p + b.off[k]
            if b.color[q] == BLACK or b.color[q] == WHITE:
                h = b.head[q]
                if b.color[q] == c or b.nlibs[h] == 1:
                    n += b.ssize[h]
        if j.cap - j.n < 32 * n + 16 * b.nwords + 128:
            return 0
    elif j.cap - j.n < 2:
        return 0
    u.mark = j.n
    memcpy(u.header, b, _HEADER)
    b.journal = j
    _play(<_journaled*>NULL, b, p, c)
    b.journal = NULL
    return 1

cdef void board_undo(board_t* b, journal_t* j, const undo_t* u) noexcept nogil:
    cdef int i
    cdef jentry_t* e
    for i in range(j.n - 1, u.mark - 1, -1):
        e = &j.e[i]
        if e.size == 1:
            (<uint8_t*>e.addr)[0] = <uint8_t>e.old
        elif e.size == 2:
            (<uint16_t*>e.addr)[0] = <uint16_t>e.old
        elif e.size == 4:
            (<uint32_t*>e.addr)[0] = <uint32_t>e.old
        else:
            (<uint64_t*>e.addr)[0] = e.old
    j.n = u.mark
    memcpy(b, u.header, _HEADER)

cdef void board_place_setup(board_t* b, int p, int c) noexcept nogil:
    """A setup stone (handicap, SGF AB/AW): no move is made, the history restarts here."""
    _place(<_plain*>NULL, b, p, c)
    b.ko = 0
    if b.nmoves < MAX_HIST:
        b.hist[b.nmoves] = b.hash

# ---------------------------------------------------------------------------------------------
# Scoring and life
# ---------------------------------------------------------------------------------------------
cdef void board_area(const board_t* b, uint8_t* owner) noexcept nogil:
    """Tromp-Taylor ownership: a stone's colour, or the one colour an empty region reaches."""
    cdef int16_t stack[MAX_PTS]
    cdef int16_t region[MAX_PTS]
    cdef uint8_t seen[MAX_PTS]
    cdef int p, q, r, k, sp, nreg, reach, i, col
    memset(seen, 0, b.npts)
    for p in range(b.npts):
        col = b.color[p]
        owner[p] = col if (col == BLACK or col == WHITE) else EMPTY
    for i in range(b.nempty):
        p = b.empty[i]
        if seen[p]:
            continue
        reach = 0
        nreg = 0
        sp = 0
        stack[sp] = p
        sp += 1
        seen[p] = 1
        while sp:
            sp -= 1
            q = stack[sp]
            region[nreg] = q
            nreg += 1
            for k in range(4):
                r = q + b.off[k]
                col = b.color[r]
                if col == EMPTY:
                    if not seen[r]:
                        seen[r] = 1
                        stack[sp] = r
                        sp += 1
                elif col != BORDER:
                    reach |= col
        if reach == BLACK or reach == WHITE:
            for k in range(nreg):
                owner[region[k]] = reach

cdef double board_score(const board_t* b) noexcept nogil:
    """Area score, Black minus White minus komi."""
    cdef uint8_t owner[MAX_PTS]
    cdef int p, s = 0
    board_area(b, owner)
    for p in range(b.npts):
        if owner[p] == BLACK:
            s += 1
        elif owner[p] == WHITE:
            s -= 1
    return s - b.komi

cdef void _benson(const board_t* b, int c, uint8_t* status) noexcept nogil:
    """Benson's unconditional life for colour c: marks status[p] = c for the stones of
    pass-alive strings and for the empty/opponent points of the regions they enclose."""
    cdef int16_t* region = <int16_t*>calloc(MAX_PTS, sizeof(int16_t))   # region id + 1 per non-c point
    cdef int16_t* stack = <int16_t*>malloc(MAX_PTS * sizeof(int16_t))
    cdef int* rempty = <int*>calloc(MAX_PTS + 1, sizeof(int))           # empty points per region
    # per (region, block) pair: how many of the region's empty points are liberties of the block
    cdef int* pair_r = <int*>malloc(4 * MAX_PTS * sizeof(int))
    cdef int* pair_h = <int*>malloc(4 * MAX_PTS * sizeof(int))
    cdef int* pair_n = <int*>malloc(4 * MAX_PTS * sizeof(int))
    cdef uint8_t* alive = <uint8_t*>calloc(MAX_PTS, 1)
    cdef uint8_t* rok = <uint8_t*>calloc(MAX_PTS + 1, 1)
    cdef int npairs = 0, nreg = 0
    cdef int p, q, r, k, sp, j, i, hd, changed, nvital, rid, found
    cdef int hs[4]
    cdef int nh
    if (region == NULL or stack == NULL or rempty == NULL or pair_r == NULL or pair_h == NULL
            or pair_n == NULL or alive == NULL or rok == NULL):
        free(region); free(stack); free(rempty); free(pair_r); free(pair_h); free(pair_n)
        free(alive); free(rok)
        return
    # regions: connected sets of points that are not c
    for p in range(b.npts):
        if b.color[p] == BORDER or b.color[p] == c or region[p]:
            continue
        nreg += 1
        rok[nreg] = 1
        sp = 0
        stack[sp] = p
        sp += 1
        region[p] = nreg
        while sp:
            sp -= 1
            q = stack[sp]
            for k in range(4):
                r = q + b.off[k]
                if b.color[r] != BORDER and b.color[r] != c and not region[r]:
                    region[r] = nreg
                    stack[sp] = r
                    sp += 1
    # blocks of c start alive
    for p in range(b.npts):
        if b.color[p] == c:
            alive[b.head[p]] = 1
    # the (region, block) pairs: adjacency, and liberty counts over the region's empty points
    for p in range(b.npts):
        rid = region[p]
        if not rid:
            continue
        if b.color[p] == EMPTY:
            rempty[rid] += 1
        nh = 0
        for k in range(4):
            q = p + b.off[k]
            if b.color[q] != c:
                continue
            hd = b.head[q]
            found = 0
            for j in range(nh):
                if hs[j] == hd:
                    found = 1
            if found:
                continue
            hs[nh] = hd
            nh += 1
            found = -1
            for j in range(npairs):
                if pair_r[j] == rid and pair_h[j] == hd:
                    found = j
                    break
            if found < 0:
                found = npairs
                pair_r[npairs] = rid
                pair_h[npairs] = hd
                pair_n[npairs] = 0
                npairs += 1
            if b.color[p] == EMPTY:
                pair_n[found] += 1
    changed = 1
    while changed:
        changed = 0
        # a block needs two vital regions still in the set
        for p in range(b.npts):
            if b.color[p] != c or b.head[p] != p or not alive[p]:
                continue
            nvital = 0
            for j in range(npairs):
                if pair_h[j] == p and rok[pair_r[j]] and pair_n[j] == rempty[pair_r[j]]:
                    nvital += 1
            if nvital < 2:
                alive[p] = 0
                changed = 1
        # a region stays only while every block around it is alive
        for j in range(npairs):
            if rok[pair_r[j]] and not alive[pair_h[j]]:
                rok[pair_r[j]] = 0
                changed = 1
    for p in range(b.npts):
        if b.color[p] == c and alive[b.head[p]]:
            status[p] = c
        elif region[p] and rok[region[p]]:
            # territory only where the region is vital to some living block
            for j in range(npairs):
                if (pair_r[j] == region[p] and alive[pair_h[j]]
                        and pair_n[j] == rempty[region[p]]):
                    status[p] = c
                    break
    free(region); free(stack); free(rempty); free(pair_r); free(pair_h); free(pair_n)
    free(alive); free(rok)

cdef void board_pass_alive(const board_t* b, uint8_t* status) noexcept nogil:
    memset(status, 0, b.npts)
    _benson(b, BLACK, status)
    _benson(b, WHITE, status)

# ---------------------------------------------------------------------------------------------
# Consistency: every incremental structure against a recomputation from the colours alone
# ---------------------------------------------------------------------------------------------
cdef int board_check_consistency(const board_t* b, char* msg, int msglen) noexcept nogil:
    cdef int16_t lab[MAX_PTS]
    cdef int16_t stack[MAX_PTS]
    cdef uint8_t islib[MAX_PTS]
    cdef int p, q, r, k, sp, n, nl, hd, col, cnt, i
    cdef uint64_t h = 0
    for p in range(b.npts):
        lab[p] = -1
    for p in range(b.npts):
        col = b.color[p]
        if col == BLACK or col == WHITE:
            h ^= ZOB[col][p]
    if h != b.hash:
        snprintf(msg, msglen, "hash differs from a recomputation")
        return 1
    cnt = 0
    for p in range(b.npts):
        if b.color[p] == EMPTY:
            cnt += 1
            if b.empty_pos[p] < 0 or b.empty_pos[p] >= b.nempty or b.empty[b.empty_pos[p]] != p:
                snprintf(msg, msglen, "empty list lost point %d", p)
                return 1
    if cnt != b.nempty:
        snprintf(msg, msglen, "empty list has %d entries, board has %d empty points", b.nempty, cnt)
        return 1
    for p in range(b.npts):
        col = b.color[p]
        if (col != BLACK and col != WHITE) or lab[p] >= 0:
            continue
        # flood fill the string of p
        memset(islib, 0, b.npts)
        sp = 0
        stack[sp] = p
        sp += 1
        lab[p] = p
        n = 0
        nl = 0
        hd = b.head[p]
        while sp:
            sp -= 1
            q = stack[sp]
            n += 1
            if b.head[q] != hd:
                snprintf(msg, msglen, "stone %d has head %d, its string has head %d", q, b.head[q], hd)
                return 1
            for k in range(4):
                r = q + b.off[k]
                if b.color[r] == col and lab[r] < 0:
                    lab[r] = p
                    stack[sp] = r
                    sp += 1
                elif b.color[r] == EMPTY and not islib[r]:
                    islib[r] = 1
                    nl += 1
                    if not lib_has(b, hd, r):
                        snprintf(msg, msglen, "string %d lacks liberty %d", hd, r)
                        return 1
        if n != b.ssize[hd]:
            snprintf(msg, msglen, "string %d has %d stones, ssize says %d", hd, n, b.ssize[hd])
            return 1
        if nl != b.nlibs[hd]:
            snprintf(msg, msglen, "string %d has %d liberties, nlibs says %d", hd, nl, b.nlibs[hd])
            return 1
        cnt = 0
        for i in range(b.nwords * 64):
            if i < b.npts and lib_has(b, hd, i):
                cnt += 1
        if cnt != nl:
            snprintf(msg, msglen, "string %d liberty set has %d bits, %d liberties", hd, cnt, nl)
            return 1
        # the ring visits exactly the string
        q = hd
        cnt = 0
        while True:
            if lab[q] != p and b.head[q] != hd:
                snprintf(msg, msglen, "ring of string %d reaches %d", hd, q)
                return 1
            cnt += 1
            q = b.next[q]
            if q == hd or cnt > n:
                break
        if cnt != n:
            snprintf(msg, msglen, "ring of string %d has %d stones, string has %d", hd, cnt, n)
            return 1
    for p in range(b.npts):
        if b.color[p] == EMPTY and b.code[p] != board_scratch_code(b, p):
            snprintf(msg, msglen, "3x3 code of point %d is %x, recomputed %x", p,
                     b.code[p], board_scratch_code(b, p))
            return 1
    return 0

# =============================================================================================
# Python layer: vertices, colours and the Board class
# =============================================================================================
COLUMNS = "ABCDEFGHJKLMNOPQRST"
SIZES = range(MIN_SIZE, MAX_SIZE + 1)    # the board sizes a Board takes
_REASONS = {MOVE_OCCUPIED: "occupied", MOVE_SUICIDE: "suicide", MOVE_KO: "ko",
            MOVE_SUPERKO: "superko", MOVE_OFFBOARD: "off the board"}


class IllegalMoveError(ValueError):
    """A move the rules forbid; .reason is one of occupied, suicide, ko, superko."""

    def __init__(self, vertex, reason):
        super().__init__(f"illegal move {vertex}: {reason}")
        self.vertex = vertex
        self.reason = reason

    def __reduce__(self):      # pickled whole (a self-play worker's error reaches its parent)
        return (IllegalMoveError, (self.vertex, self.reason))


def parse_color(color):
    """'b', 'black', 'w', 'white' (any case) -> BLACK / WHITE; ints 1 and 2 pass through."""
    if color in (BLACK, WHITE):
        return int(color)
    if isinstance(color, str):
        c = color.strip().lower()
        if c in ("b", "black"):
            return BLACK
        if c in ("w", "white"):
            return WHITE
    raise ValueError(f"invalid color {color!r}")


def color_name(int c):
    return "b" if c == BLACK else "w"


def parse_vertex(text, int size):
    """GTP vertex text -> (row, col), 0-based from the lower left, or None for pass."""
    if not isinstance(text, str):
        raise ValueError(f"invalid vertex {text!r}")
    t = text.strip().upper()
    if t == "PASS":
        return None
    if len(t) < 2 or t[0] not in COLUMNS or not t[1:].isdigit():
        raise ValueError(f"invalid vertex {text!r}")
    col = COLUMNS.index(t[0])
    row = int(t[1:]) - 1
    if col >= size or row < 0 or row >= size:
        raise ValueError(f"vertex {text!r} is off the {size}x{size} board")
    return row, col


def format_vertex(rowcol):
    """(row, col) -> GTP text; None -> 'pass'."""
    if rowcol is None:
        return "pass"
    row, col = rowcol
    return f"{COLUMNS[col]}{row + 1}"


cdef class Board:
    """A Go board for Python callers (tests, GTP, SGF replay). Moves are GTP vertices."""

    def __cinit__(self, int size=19, double komi=7.5):
        if size < MIN_SIZE or size > MAX_SIZE:
            raise ValueError(f"board size {size} is not supported (sizes {MIN_SIZE} to {MAX_SIZE})")
        self.b = <board_t*>malloc(sizeof(board_t))
        if self.b == NULL:
            raise MemoryError()
        board_init(self.b, size, komi)
        self._undo = []
        self.moves = []

    def __dealloc__(self):
        free(self.b)

    # --- conversion, in one place ---
    cdef int _point(self, vertex) except -1:
        rc = parse_vertex(vertex, self.b.size)
        if rc is None:
            return PASS
        return point_of(self.b, rc[0], rc[1])

    def point(self, vertex):
        """Internal point index of a GTP vertex (0 for pass)."""
        return self._point(vertex)

    def vertex(self, int p):
        """GTP vertex text of an internal point index."""
        if p == PASS:
            return "pass"
        if p < 0 or p >= self.b.npts or self.b.color[p] == BORDER:
            raise ValueError(f"point {p} is not on the board")
        return format_vertex((p // self.b.W - 1, p % self.b.W - 1))

    # --- state ---
    @property
    def size(self):
        return self.b.size

    @property
    def komi(self):
        return self.b.komi

    @komi.setter
    def komi(self, double value):
        self.b.komi = value

    @property
    def to_move(self):
        return color_name(self.b.to_move)

    @to_move.setter
    def to_move(self, color):
        self.b.to_move = parse_color(color)

    @property
    def hash(self):
        return self.b.hash

    @property
    def ko(self):
        return None if self.b.ko == PASS else self.vertex(self.b.ko)

    @property
    def last_move(self):
        return self.moves[len(self.moves) - 1] if self.moves else None

    @property
    def passes(self):
        return self.b.npass

    def captures(self, color):
        """Stones of the OTHER colour that `color` has captured."""
        return self.b.captured[3 - parse_color(color)]

    def color_at(self, vertex):
        """'b', 'w' or '.'"""
        cdef int p = self._point(vertex)
        if p == PASS:
            raise ValueError("pass has no colour")
        return ".bw"[self.b.color[p]]

    def stones(self, color):
        cdef int c = parse_color(color)
        return [self.vertex(p) for p in range(self.b.npts) if self.b.color[p] == c]

    def to_array(self):
        """numpy int8 array [row, col]: 0 empty, 1 black, 2 white (row 0 = line 1)."""
        import numpy as np
        cdef int row, col
        a = np.zeros((self.b.size, self.b.size), dtype=np.int8)
        for row in range(self.b.size):
            for col in range(self.b.size):
                a[row, col] = self.b.color[point_of(self.b, row, col)]
        return a

    # --- moves ---
    def check_move(self, vertex, color=None, superko=True):
        """None if legal, else the reason ('occupied', 'suicide', 'ko', 'superko')."""
        cdef int c = self.b.to_move if color is None else parse_color(color)
        cdef int r = board_check_move(self.b, self._point(vertex), c, superko)
        return _REASONS.get(r)

    def is_legal(self, vertex, color=None, superko=True):
        return self.check_move(vertex, color, superko) is None

    def legal_moves(self, color=None, superko=True, bint include_eyes=True):
        """Legal points (not pass) as vertices; include_eyes=False leaves out own true eyes."""
        cdef int c = self.b.to_move if color is None else parse_color(color)
        cdef int p
        out = []
        for p in range(self.b.npts):
            if self.b.color[p] == EMPTY and board_check_move(self.b, p, c, superko) == MOVE_OK:
                if include_eyes or not board_is_eye(self.b, p, c):
                    out.append(self.vertex(p))
        return out

    def play(self, vertex, color=None):
        """Play a move (GTP vertex or 'pass'); returns the number of stones captured.
        Raises IllegalMoveError (a ValueError) and leaves the board as it was."""
        cdef int c = self.b.to_move if color is None else parse_color(color)
        cdef int p = self._point(vertex)
        cdef int r = board_check_move(self.b, p, c, True)
        cdef int before
        if r != MOVE_OK:
            raise IllegalMoveError(vertex, _REASONS[r])
        if self.b.nmoves >= MAX_HIST - 1:
            raise ValueError(f"game too long: more than {MAX_HIST - 2} moves")
        self._undo.append(self._snapshot())
        before = self.b.captured[3 - c]
        board_play(self.b, p, c)
        self.moves.append((color_name(c), self.vertex(p)))
        return self.b.captured[3 - c] - before

    def undo(self):
        if not self._undo:
            raise ValueError("no move to undo")
        self._restore(self._undo.pop())
        self.moves.pop()

    def setup(self, black=(), white=()):
        """Place setup stones (handicap, SGF AB/AW) without making moves. All or nothing: a bad
        stone (off the board, occupied, suicide, or one that would capture) raises ValueError
        and leaves the board as it was."""
        cdef int p, c, k, q
        cdef bytes snap = self._snapshot()
        try:
            for color, vertices in ((BLACK, black), (WHITE, white)):
                for v in vertices:
                    p = self._point(v)
                    c = color
                    if p == PASS:
                        raise ValueError("pass is not a setup stone")
                    if self.b.color[p] != EMPTY:
                        raise IllegalMoveError(v, "occupied")
                    for k in range(4):
                        q = p + self.b.off[k]
                        if self.b.color[q] == 3 - c and self.b.nlibs[self.b.head[q]] == 1:
                            raise ValueError(f"setup stone {v} would capture the string at "
                                             f"{self.vertex(q)}: setup stones never capture")
                    if board_check_move(self.b, p, c, False) == MOVE_SUICIDE:
                        raise IllegalMoveError(v, "suicide")
                    board_place_setup(self.b, p, c)
        except BaseException:
            self._restore(snap)
            raise
        self._undo = []

    def copy(self):
        cdef Board other = Board(self.b.size, self.b.komi)
        board_copy(other.b, self.b)
        other._undo = list(self._undo)
        other.moves = list(self.moves)
        return other

    def snapshot_bytes(self):
        """The board struct's bytes: tests compare them to show that a read (or a move and its
        undo) leaves every byte as it was."""
        return self._snapshot()

    def restore_bytes(self, bytes data not None):
        """Put back bytes from snapshot_bytes() (of a board of any size); the Python-side
        history (moves, undo) is cleared."""
        if len(data) != sizeof(board_t):
            raise ValueError(f"a board snapshot has {sizeof(board_t)} bytes, not {len(data)}")
        self._restore(data)
        self._undo = []
        self.moves = []

    cdef bytes _snapshot(self):
        return PyBytes_FromStringAndSize(<char*>self.b, sizeof(board_t))

    cdef void _restore(self, bytes snap):
        memcpy(self.b, PyBytes_AS_STRING(snap), sizeof(board_t))

    # --- scoring and life ---
    def score(self):
        """Tromp-Taylor area score: Black minus White minus komi."""
        return board_score(self.b)

    def area(self):
        """Dict vertex -> 'b' / 'w' / '.': Tromp-Taylor owner of every point."""
        cdef uint8_t owner[MAX_PTS]
        board_area(self.b, owner)
        return {self.vertex(p): ".bw"[owner[p]] for p in range(self.b.npts)
                if self.b.color[p] != BORDER}

    def pass_alive(self):
        """Dict vertex -> 'b' / 'w' for points that are pass-alive (Benson): the stones of
        unconditionally alive strings and the regions they enclose."""
        cdef uint8_t status[MAX_PTS]
        board_pass_alive(self.b, status)
        return {self.vertex(p): ".bw"[status[p]] for p in range(self.b.npts)
                if self.b.color[p] != BORDER and status[p]}

    # --- strings and codes, for tests and tools ---
    def liberties(self, vertex):
        cdef int p = self._point(vertex)
        cdef int16_t out[MAX_PTS]
        cdef int n, i
        if p == PASS or self.b.color[p] not in (BLACK, WHITE):
            raise ValueError(f"no stone at {vertex}")
        n = board_lib_list(self.b, self.b.head[p], out)
        return sorted(self.vertex(out[i]) for i in range(n))

    def string(self, vertex):
        cdef int p = self._point(vertex)
        cdef int s, hd
        if p == PASS or self.b.color[p] not in (BLACK, WHITE):
            raise ValueError(f"no stone at {vertex}")
        hd = self.b.head[p]
        s = hd
        out = []
        while True:
            out.append(self.vertex(s))
            s = self.b.next[s]
            if s == hd:
                break
        return sorted(out)

    def code(self, vertex):
        """The incrementally kept 3x3 code of a point (see board.pxd for the layout)."""
        cdef int p = self._point(vertex)
        if p == PASS:
            raise ValueError("pass has no 3x3 code")
        return self.b.code[p]

    def is_eye(self, vertex, color):
        cdef int p = self._point(vertex)
        if p == PASS:
            raise ValueError("pass is not a point: it cannot be an eye")
        return bool(board_is_eye(self.b, p, parse_color(color)))

    def check(self):
        """Compare every incremental structure with a recomputation; AssertionError if not."""
        cdef char msg[256]
        if board_check_consistency(self.b, msg, 256):
            raise AssertionError(msg.decode())

    # --- text ---
    def showboard(self):
        cdef int row, col, n = self.b.size
        letters = "   " + " ".join(COLUMNS[:n])
        lines = [letters]
        for row in range(n - 1, -1, -1):
            cells = []
            for col in range(n):
                cells.append(".XO"[self.b.color[point_of(self.b, row, col)]])
            lines.append(f"{row + 1:2d} " + " ".join(cells) + f" {row + 1:d}")
        lines.append(letters)
        lines.append(f"{'Black' if self.b.to_move == BLACK else 'White'} to move, "
                     f"captures B {self.b.captured[WHITE]} W {self.b.captured[BLACK]}, komi {self.b.komi:g}")
        return "\n".join(lines)

    def __str__(self):
        return self.showboard()
