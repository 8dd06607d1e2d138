# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The tactical reader (see gammago/go/tactics.pxd): liberties after a move, self-atari, capture
reading of strings with one or two liberties (ladders, nets, short capture races) by play and
undo on the board, and eye shapes (nakade vital points, false eyes), as nogil functions on the
board struct, plus thin Python entry points for tests and tools."""
from libc.stdlib cimport malloc, free
from libc.stdint cimport int16_t, uint64_t
from gammago.go.board cimport (board_t, Board, board_try_play, board_undo, board_check_move,
                            board_first_lib, board_lib_list, board_is_eye, journal_t, jentry_t,
                            undo_t, EMPTY, BLACK, WHITE, BORDER, PASS, MAX_PTS, MOVE_OK)
from cpython.bytes cimport PyBytes_FromStringAndSize

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil

cdef extern from "<pthread.h>" nogil:
    ctypedef unsigned int pthread_key_t
    int pthread_key_create(pthread_key_t* key, void (*destructor)(void*))
    void* pthread_getspecific(pthread_key_t key)
    int pthread_setspecific(pthread_key_t key, const void* value)

# ---------------------------------------------------------------------------------------------
# The reader's scratch: one per thread, malloc'd at the thread's first question and freed when
# the thread ends. A question plays at most READ_DEPTH moves deep, recording their writes in a
# journal of READ_JOURNAL entries; a move that would not fit is not read (the answer is then
# TAC_UNKNOWN, or for self-atari "bad").
# ---------------------------------------------------------------------------------------------
cdef enum:
    READ_DEPTH = 160
    READ_JOURNAL = 32768

ctypedef struct reader_t:
    journal_t j
    int depth
    int nodes            # reading nodes left for the current question
    int out              # the question ran out of nodes, depth or journal
    undo_t u[READ_DEPTH]

cdef pthread_key_t _KEY

cdef void _reader_free(void* p) noexcept nogil:
    cdef reader_t* r = <reader_t*>p
    if r != NULL:
        free(r.j.e)
        free(r)

if pthread_key_create(&_KEY, _reader_free) != 0:
    raise ImportError("tactics: cannot create the reader's thread key")

cdef reader_t* _reader(int budget) noexcept nogil:
    """This thread's reader, ready for a question of `budget` reading nodes (NULL when out of
    memory)."""
    cdef reader_t* r = <reader_t*>pthread_getspecific(_KEY)
    if r == NULL:
        r = <reader_t*>malloc(sizeof(reader_t))
        if r == NULL:
            return NULL
        r.j.e = <jentry_t*>malloc(READ_JOURNAL * sizeof(jentry_t))
        if r.j.e == NULL:
            free(r)
            return NULL
        r.j.cap = READ_JOURNAL
        pthread_setspecific(_KEY, r)
    r.j.n = 0
    r.depth = 0
    r.out = 0
    r.nodes = budget
    return r

cdef inline bint _play(reader_t* R, board_t* b, int p, int c) noexcept nogil:
    """Play p for c (legal under simple ko, else nothing happens); 0 when not played."""
    if board_check_move(b, p, c, 0) != MOVE_OK:
        return 0
    if R.depth >= READ_DEPTH or not board_try_play(b, p, c, &R.j, &R.u[R.depth]):
        R.out = 1
        return 0
    R.depth += 1
    return 1

cdef inline void _back(reader_t* R, board_t* b) noexcept nogil:
    R.depth -= 1
    board_undo(b, &R.j, &R.u[R.depth])

# =============================================================================================
# Liberties
# =============================================================================================
cdef inline int _add_once(int16_t* a, int n, int q) noexcept nogil:
    """Append q to a[0..n-1] unless it is there already; the new count."""
    cdef int i
    for i in range(n):
        if a[i] == q:
            return n
    a[n] = q
    return n + 1

cdef inline int _neighbours(const board_t* b, int p, int c, int16_t* libs, int16_t* own,
                            int* nown, int16_t* opp, int* nopp) noexcept nogil:
    # tac_neighbours, inlined where this module uses it (libs_after runs for every candidate
    # move of the rollouts)
    cdef int k, q, col, nlib = 0
    nown[0] = 0
    nopp[0] = 0
    for k in range(4):
        q = p + b.off[k]
        col = b.color[q]
        if col == EMPTY:
            libs[nlib] = <int16_t>q
            nlib += 1
        elif col == c:
            nown[0] = _add_once(own, nown[0], b.head[q])
        elif col == 3 - c:
            nopp[0] = _add_once(opp, nopp[0], b.head[q])
    return nlib

cdef inline int _join_libs(const board_t* b, int p, int c, const int16_t* own, int nown,
                           const int16_t* capd, int ncapd, int16_t* libs, int nlib,
                           int kmax) noexcept nogil:
    # tac_join_libs, inlined where this module uses it
    cdef int i, j, k, w, q, h, s, r
    cdef uint64_t x
    if nlib >= kmax:
        return kmax
    for i in range(nown):
        h = own[i]
        for w in range(b.nwords):
            x = b.libs[h * b.nwords + w]
            while x and nlib < kmax:
                q = (w << 6) + __builtin_ctzll(x)
                x &= x - 1
                if q != p:
                    nlib = _add_once(libs, nlib, q)
            if nlib >= kmax:
                return kmax
    # captured stones next to p, then those next to the strings that join p
    for i in range(ncapd):
        for k in range(4):
            q = p + b.off[k]
            if b.color[q] == 3 - c and b.head[q] == capd[i] and nlib < kmax:
                nlib = _add_once(libs, nlib, q)
    for i in range(ncapd):
        if nlib >= kmax:
            break
        s = capd[i]
        while nlib < kmax:
            for k in range(4):
                r = s + b.off[k]
                if b.color[r] == c:
                    h = b.head[r]
                    for j in range(nown):
                        if own[j] == h:
                            nlib = _add_once(libs, nlib, s)
                            break
            s = b.next[s]
            if s == capd[i]:
                break
    return nlib

cdef int tac_neighbours(const board_t* b, int p, int c, int16_t* libs, int16_t* own,
                        int* nown, int16_t* opp, int* nopp) noexcept nogil:
    return _neighbours(b, p, c, libs, own, nown, opp, nopp)

cdef int tac_join_libs(const board_t* b, int p, int c, const int16_t* own, int nown,
                       const int16_t* capd, int ncapd, int16_t* libs, int nlib, int kmax) noexcept nogil:
    return _join_libs(b, p, c, own, nown, capd, ncapd, libs, nlib, kmax)

cdef int libs_after(const board_t* b, int p, int c, int kmax) noexcept nogil:
    cdef int i, nown, nopp, ncapd = 0, nlib
    cdef int16_t own[4]
    cdef int16_t opp[4]
    cdef int16_t capd[4]
    cdef int16_t libs[4]
    cdef int k, q, ne = 0
    # the common answers first: kmax empty neighbours, or a string of c next to p with more
    # than kmax liberties
    for k in range(4):
        q = p + b.off[k]
        if b.color[q] == EMPTY:
            ne += 1
        elif b.color[q] == c and b.nlibs[b.head[q]] > kmax:
            return kmax
    if ne >= kmax:
        return kmax
    nlib = _neighbours(b, p, c, libs, own, &nown, opp, &nopp)
    for i in range(nopp):
        if b.nlibs[opp[i]] == 1:
            capd[ncapd] = opp[i]
            ncapd += 1
    return _join_libs(b, p, c, own, nown, capd, ncapd, libs, nlib, kmax)

# =============================================================================================
# Self-atari
# =============================================================================================
cdef inline bint _captures(const board_t* b, int p, int c) noexcept nogil:
    cdef int k, q
    for k in range(4):
        q = p + b.off[k]
        if b.color[q] == 3 - c and b.nlibs[b.head[q]] == 1:
            return 1
    return 0

cdef bint tac_selfatari(const board_t* b, int p, int c) noexcept nogil:
    return libs_after(b, p, c, 2) <= 1 and not _captures(b, p, c)

cdef int _shape_degrees(const board_t* b, const int16_t* pts, int n, int* cnt) noexcept nogil:
    """cnt[d] (d = 0..4): how many of the n points have d neighbours among them. Returns the
    point with the most, or PASS when two share the most (eye shapes are told apart this way,
    as Fuego's GoEyeUtil and Pachi's nakade do)."""
    cdef int i, j, t, d, e, best = PASS, bestd = -1, nbest = 0
    for d in range(5):
        cnt[d] = 0
    for i in range(n):
        d = 0
        for j in range(4):
            e = pts[i] + b.off[j]
            for t in range(n):
                if pts[t] == e:
                    d += 1
                    break
        cnt[d] += 1
        if d > bestd:
            bestd = d
            best = pts[i]
            nbest = 1
        elif d == bestd:
            nbest += 1
    return best if nbest == 1 else PASS

cdef inline bint _killable(int n, const int* cnt) noexcept nogil:
    """A connected region of n points with these degree counts is an eye space that one stone
    on its vital point leaves with one eye: straight or bent three, pyramid four, crossed or
    bulky five, rabbity six."""
    return ((n == 3 and cnt[1] == 2 and cnt[2] == 1) or               # straight / bent three
            (n == 4 and cnt[1] == 3 and cnt[3] == 1) or               # pyramid four
            (n == 5 and cnt[1] == 4 and cnt[4] == 1) or               # crossed five
            (n == 5 and cnt[1] == 1 and cnt[2] == 3 and cnt[3] == 1) or   # bulky five
            (n == 6 and cnt[1] == 2 and cnt[2] == 3 and cnt[4] == 1))     # rabbity six

cdef bint _one_eye_shape(const int16_t* pts, int n, const board_t* b) noexcept nogil:
    """Do the n points (connected) make an eye space that gives one eye at most: 1 to 3
    points, a killable shape (_killable), or the square four (dead as it stands)."""
    cdef int cnt[5]
    if n <= 3:
        return n >= 1
    if n > 6:
        return 0
    _shape_degrees(b, pts, n, cnt)
    return _killable(n, cnt) or (n == 4 and cnt[2] == 4)

cdef bint _killing_shape(const board_t* b, int s, int c) noexcept nogil:
    """The string of c at stone s (one liberty) fills an eye space of the opponent but for that
    liberty: the string and its liberty touch nothing but each other, opponent stones and the
    edge; and the points the string leaves when captured make a one-eye shape."""
    cdef int16_t pts[6]
    cdef int n = 0, hd = b.head[s], t, k, q, lib, col
    if b.ssize[hd] > 6:
        return 0
    lib = board_first_lib(b, hd)
    t = hd
    while True:
        pts[n] = <int16_t>t
        n += 1
        for k in range(4):
            q = t + b.off[k]
            col = b.color[q]
            if col == EMPTY and q != lib:
                return 0
        t = b.next[t]
        if t == hd:
            break
    for k in range(4):
        q = lib + b.off[k]
        col = b.color[q]
        if col == EMPTY or (col == c and b.head[q] != hd):
            return 0
    return _one_eye_shape(pts, n, b)

cdef bint _killing_join(const board_t* b, int p, int c) noexcept nogil:
    """_killing_shape of the string that c playing p makes, read off the board as it stands
    (no move played); the move is a self-atari that captures nothing (tac_selfatari). The
    string is p and the stones of the strings it joins (none for a lone stone); its liberty is
    the one that p or a joined string has besides p."""
    cdef int16_t pts[6]
    cdef int16_t heads[4]
    cdef int n = 1, nh = 0, lib = 0, t, k, q, i, col, hd
    pts[0] = <int16_t>p
    for k in range(4):
        q = p + b.off[k]
        col = b.color[q]
        if col == EMPTY:
            if lib and lib != q:
                return 0                # two liberties: not a self-atari
            lib = q
        elif col == c:
            hd = b.head[q]
            for i in range(nh):
                if heads[i] == hd:
                    break
            else:
                heads[nh] = <int16_t>hd
                nh += 1
                if n + b.ssize[hd] > 6:
                    return 0
                t = hd
                while True:
                    pts[n] = <int16_t>t
                    n += 1
                    t = b.next[t]
                    if t == hd:
                        break
    # every stone's empty neighbours: p (the new stone) or the one liberty
    for i in range(1, n):
        for k in range(4):
            q = pts[i] + b.off[k]
            if b.color[q] == EMPTY and q != p:
                if lib and lib != q:
                    return 0
                lib = q
    if not lib:
        return 0                        # no liberty: suicide
    for k in range(4):
        q = lib + b.off[k]
        if q == p:
            continue
        col = b.color[q]
        if col == EMPTY:
            return 0
        if col == c:
            for i in range(nh):
                if heads[i] == b.head[q]:
                    break
            else:
                return 0
    return _one_eye_shape(pts, n, b)

cdef bint _snapback(const board_t* b, int p, int c) noexcept nogil:
    """A lone stone of c on p (no stone of c next to it), a self-atari that captures nothing:
    does the opponent's capture at its liberty leave the capturing string (2+ stones) in atari
    on p? Read off the board as it stands: the capturing string is the liberty and the
    opponent's strings next to it, and its liberties are the empty points next to the liberty
    and theirs, p included (empty again after the capture)."""
    cdef int o = 3 - c, lib = 0, k, q, col, w, h, n = 0
    cdef uint64_t x
    for k in range(4):
        q = p + b.off[k]
        if b.color[q] == EMPTY:
            lib = q
    if not lib:
        return 0
    for k in range(4):
        q = lib + b.off[k]
        if q == p:
            continue
        col = b.color[q]
        if col == EMPTY:
            return 0                    # a second liberty
        if col == c and b.nlibs[b.head[q]] == 1:
            return 0                    # captured as well: more liberties
        if col == o:
            h = b.head[q]
            n += 1
            for w in range(b.nwords):   # its liberties other than lib and p
                x = b.libs[h * b.nwords + w]
                if (lib >> 6) == w:
                    x &= ~((<uint64_t>1) << (lib & 63))
                if (p >> 6) == w:
                    x &= ~((<uint64_t>1) << (p & 63))
                if x:
                    return 0
    return n > 0

cdef bint _bad_selfatari_read(const board_t* b, int p, int c) noexcept nogil:
    """tac_bad_selfatari by playing p and reading the string it makes: a killing shape, or a
    lone stone whose capture is a snapback (the capturing string left in atari on p)."""
    cdef board_t* B = <board_t*>b     # read and restored (tactics.pxd)
    cdef reader_t* R
    cdef int lib, q
    cdef bint good = 0
    R = _reader(0)
    if R == NULL or not _play(R, B, p, c):
        return 1
    if B.nlibs[B.head[p]] == 1:
        if _killing_shape(B, p, c):
            good = 1
        elif B.ssize[B.head[p]] == 1:
            # snapback: the capture leaves the capturing string in atari on p, with 2+ stones
            lib = board_first_lib(B, B.head[p])
            if _play(R, B, lib, 3 - c):
                q = B.head[lib]
                good = B.nlibs[q] == 1 and B.ssize[q] >= 2 and board_first_lib(B, q) == p
                _back(R, B)
    _back(R, B)
    return not good

cdef bint tac_bad_selfatari(const board_t* b, int p, int c) noexcept nogil:
    # read off the board as it stands, no move played (the rollouts' tail asks this of its
    # random moves); _bad_selfatari_read plays the move, and tests compare the two
    cdef int k
    if not tac_selfatari(b, p, c):
        return 0
    if _killing_join(b, p, c):
        return 0
    for k in range(4):
        if b.color[p + b.off[k]] == c:
            return 1                    # a string of two or more stones: no snapback
    return not _snapback(b, p, c)

# =============================================================================================
# Capture reading: strings with one or two liberties. _attack: the attacker is to move against
# the string at stone s; _defend: its owner is. Each answers yes/no; a node past the budget
# answers "the string lives" and sets R.out, so a "captured" verdict is always fully read.
# =============================================================================================

cdef int _attack(reader_t* R, board_t* b, int s, int* move) noexcept nogil:
    """Can the attacker capture the string at s (1 or 2 liberties), the attacker to move? Its
    moves are the string's liberties, the one with more empty neighbours first (the atari from
    the other side drives the string towards the open side). Nets (geta) are read apart
    (_net), by tac_capture and tac_net: not inside the ladders, which stay a rollout's depth."""
    cdef int hd = b.head[s], n = b.nlibs[hd], att = 3 - b.color[s], i, d
    cdef int16_t libs[2]
    if n == 1:
        libs[0] = <int16_t>board_first_lib(b, hd)
        if board_check_move(b, libs[0], att, 0) == MOVE_OK:
            if move != NULL:
                move[0] = libs[0]
            return 1
        return 0
    if n > 2:
        return 0
    R.nodes -= 1
    if R.nodes < 0:
        R.out = 1
        return 0
    board_lib_list(b, hd, libs)
    if libs_after(b, libs[1], att, 3) > libs_after(b, libs[0], att, 3):
        libs[0], libs[1] = libs[1], libs[0]
    for i in range(2):
        if not _play(R, b, libs[i], att):
            continue
        d = _defend(R, b, s, NULL)
        _back(R, b)
        if not d:
            if move != NULL:
                move[0] = libs[i]
            return 1
    return 0

cdef int _owner_moves(const board_t* b, int hd, int16_t* cand) noexcept nogil:
    """The owner's candidate answers for its string at head hd (1 or 2 liberties), each once, at
    most 39 (cand holds 40): the liberty of each attacker string next to it in atari (a capture),
    with two liberties of its own also both liberties of each attacker string next to it with
    two (a counter-atari), then its own liberties."""
    cdef int n = b.nlibs[hd], att = 3 - b.color[hd], nc = 0, j, t, k, q, h, nl
    cdef int16_t libs[2]
    t = hd
    while True:
        for k in range(4):
            q = t + b.off[k]
            if b.color[q] == att:
                h = b.head[q]
                if b.nlibs[h] == 1 and nc < 36:
                    nc = _add_once(cand, nc, board_first_lib(b, h))
                elif b.nlibs[h] == 2 and n == 2 and nc < 36:
                    board_lib_list(b, h, libs)
                    nc = _add_once(cand, nc, libs[0])
                    nc = _add_once(cand, nc, libs[1])
        t = b.next[t]
        if t == hd:
            break
    nl = board_lib_list(b, hd, libs)
    for j in range(nl):
        nc = _add_once(cand, nc, libs[j])
    return nc

cdef int _defend(reader_t* R, board_t* b, int s, int* move) noexcept nogil:
    """Can the owner of the string at s (1 or 2 liberties) save it, the owner to move? The
    candidates: _owner_moves."""
    cdef int hd = b.head[s], n = b.nlibs[hd], own = b.color[s]
    cdef int16_t cand[40]
    cdef int nc, i, nl, ok
    if n >= 3:
        return 1
    R.nodes -= 1
    if R.nodes < 0:
        R.out = 1
        return 1
    nc = _owner_moves(b, hd, cand)
    for i in range(nc):
        if not _play(R, b, cand[i], own):
            continue
        nl = b.nlibs[b.head[s]]
        if nl >= 3:
            ok = 1
        elif nl <= 1:
            ok = 0
        else:
            ok = not _attack(R, b, s, NULL)
        _back(R, b)
        if ok:
            if move != NULL:
                move[0] = cand[i]
            return 1
    return 0

# ---------------------------------------------------------------------------------------------
# Nets (geta): the attacker plays next to a liberty of a string of two, not on it, and the
# string cannot get out. Read one level deeper than the ladders: each answer of the owner
# (the _defend candidates, ataris on the net stone, and the liberties of the owner's strings
# of up to three liberties that an extension would join) that leaves the string three
# liberties is met by the attacker taking one of them, and then the plain reading (ladders,
# short races) must capture it; an answer that leaves it two must lose the plain reading.
# A net inside a net is not read: the owner's string with three liberties after the
# attacker's second move lives.
# ---------------------------------------------------------------------------------------------
cdef enum:
    NET_CANDIDATES = 8

cdef int _net_candidates(const board_t* b, int s, int16_t* out) noexcept nogil:
    """The empty points next to a liberty of the string at s (two liberties) that are not
    liberties themselves: first those next to both liberties, then the others."""
    cdef int16_t libs[2]
    cdef int16_t one[8]
    cdef int n = 0, n1 = 0, i, j, k, q, both
    board_lib_list(b, b.head[s], libs)
    for i in range(2):
        for k in range(4):
            q = libs[i] + b.off[k]
            if b.color[q] != EMPTY or q == libs[0] or q == libs[1]:
                continue
            both = 0
            for j in range(4):
                if q + b.off[j] == libs[1 - i]:
                    both = 1
            if both:
                n = _add_once(out, n, q)
            else:
                n1 = _add_once(one, n1, q)
    for i in range(n1):
        if n < NET_CANDIDATES:
            n = _add_once(out, n, one[i])
    return n

cdef int _attack3(reader_t* R, board_t* b, int s) noexcept nogil:
    """The attacker to move against the string at s with three liberties: does taking one of
    them leave a string of two that the plain reading captures?"""
    cdef int hd = b.head[s], att = 3 - b.color[s], i, d
    cdef int16_t libs[3]
    if b.nlibs[hd] != 3:
        return 0
    R.nodes -= 1
    if R.nodes < 0:
        R.out = 1
        return 0
    board_lib_list(b, hd, libs)
    for i in range(3):
        if not _play(R, b, libs[i], att):
            continue
        if b.color[s] == EMPTY or b.nlibs[b.head[s]] > 2:
            _back(R, b)
            continue
        d = _defend(R, b, s, NULL)
        _back(R, b)
        if not d:
            return 1
    return 0

cdef int _net_defend(reader_t* R, board_t* b, int s, int net) noexcept nogil:
    """The owner of the string at s (two liberties) to move after the attacker's net stone at
    `net`: can it get out? The _defend candidates, the liberties of the owner's strings of up
    to three liberties next to s's liberties, and those of the net stone's string when it has
    two or fewer."""
    cdef int hd = b.head[s], own = b.color[s]
    cdef int16_t cand[48]
    cdef int16_t libs[2]
    cdef int16_t more[3]
    cdef int nc, i, j, k, q, h, nl, ok
    R.nodes -= 1
    if R.nodes < 0:
        R.out = 1
        return 1
    nc = _owner_moves(b, hd, cand)
    nl = board_lib_list(b, hd, libs)
    # the liberties of the owner's weak strings that an extension would join: strengthening
    # one of them first can make the extension work
    for j in range(nl):
        for k in range(4):
            q = libs[j] + b.off[k]
            if b.color[q] == own and b.head[q] != hd and b.nlibs[b.head[q]] <= 3 and nc < 40:
                h = board_lib_list(b, b.head[q], more)
                for i in range(h):
                    nc = _add_once(cand, nc, more[i])
    h = b.head[net]
    if b.nlibs[h] <= 2:
        nl = board_lib_list(b, h, libs)
        for j in range(nl):
            nc = _add_once(cand, nc, libs[j])
    for i in range(nc):
        if not _play(R, b, cand[i], own):
            continue
        nl = b.nlibs[b.head[s]]
        if nl >= 4:
            ok = 1
        elif nl == 3:
            ok = not _attack3(R, b, s)
        elif nl == 2:
            ok = not _attack(R, b, s, NULL)
        else:
            ok = 0
        _back(R, b)
        if ok:
            return 1
    return 0

cdef int _net_works(reader_t* R, board_t* b, int s, int q) noexcept nogil:
    """The attacker's stone at the empty q against the string at s (two liberties, q not one
    of them) captures it whatever its owner answers."""
    cdef int att = 3 - b.color[s], ok = 0
    if not _play(R, b, q, att):
        return 0
    if b.color[s] != EMPTY and b.nlibs[b.head[s]] == 2 and b.nlibs[b.head[q]] >= 2:
        ok = not _net_defend(R, b, s, q)
    _back(R, b)
    return ok

cdef int _net(reader_t* R, board_t* b, int s, int* move) noexcept nogil:
    cdef int16_t cand[NET_CANDIDATES]
    cdef int n = _net_candidates(b, s, cand), i
    for i in range(n):
        if _net_works(R, b, s, cand[i]):
            if move != NULL:
                move[0] = cand[i]
            return 1
    return 0

cdef int _verdict(reader_t* R, int yes) noexcept nogil:
    if yes:
        return TAC_YES
    return TAC_UNKNOWN if R.out else TAC_NO

cdef int tac_capture(const board_t* b, int s, int budget, int* move) noexcept nogil:
    cdef board_t* B = <board_t*>b
    cdef reader_t* R
    if b.color[s] != BLACK and b.color[s] != WHITE:
        return TAC_NO
    if b.nlibs[b.head[s]] > 2:
        return TAC_NO
    R = _reader(budget)
    if R == NULL:
        return TAC_UNKNOWN
    if _attack(R, B, s, move):
        return TAC_YES
    if b.nlibs[b.head[s]] == 2 and _net(R, B, s, move):
        return TAC_YES
    return _verdict(R, 0)

cdef int tac_save(const board_t* b, int s, int budget, int* move) noexcept nogil:
    cdef board_t* B = <board_t*>b
    cdef reader_t* R
    cdef int ok
    if b.color[s] != BLACK and b.color[s] != WHITE:
        return TAC_NO
    if b.nlibs[b.head[s]] > 2:
        return TAC_YES
    R = _reader(budget)
    if R == NULL:
        return TAC_UNKNOWN
    ok = _defend(R, B, s, move)
    if ok and R.out:
        return TAC_UNKNOWN       # "saved" may only mean "not read to the end"
    return TAC_YES if ok else TAC_NO

cdef int tac_atari_works(const board_t* b, int p, int c, int budget) noexcept nogil:
    cdef board_t* B = <board_t*>b
    cdef reader_t* R
    cdef int k, q, res = TAC_NO, d
    cdef int16_t targets[4]
    cdef int nt = 0
    for k in range(4):
        q = p + b.off[k]
        if b.color[q] == 3 - c:
            if b.nlibs[b.head[q]] == 1:
                return TAC_NO            # a capture, no atari question
            if b.nlibs[b.head[q]] == 2:
                nt = _add_once(targets, nt, b.head[q])
    if nt == 0:
        return TAC_NO
    R = _reader(budget)
    if R == NULL:
        return TAC_UNKNOWN
    if not _play(R, B, p, c):
        return _verdict(R, 0)
    if B.nlibs[B.head[p]] >= 2:          # an atari that can be captured at once is no atari
        for k in range(nt):
            q = targets[k]
            if B.color[q] != EMPTY and B.nlibs[B.head[q]] == 1:
                d = _defend(R, B, q, NULL)
                if not d:
                    res = TAC_YES
                    break
                if R.out:
                    res = TAC_UNKNOWN
    _back(R, B)
    return res

cdef int tac_escape_fails(const board_t* b, int p, int c, int budget) noexcept nogil:
    cdef board_t* B = <board_t*>b
    cdef reader_t* R
    cdef int k, q, res = TAC_NO, esc = 0
    for k in range(4):
        q = p + b.off[k]
        if b.color[q] == c and b.nlibs[b.head[q]] == 1:
            esc = 1
        elif b.color[q] == 3 - c and b.nlibs[b.head[q]] == 1:
            return TAC_NO                # a capture: no escape question
    if not esc:
        return TAC_NO
    R = _reader(budget)
    if R == NULL:
        return TAC_UNKNOWN
    if not _play(R, B, p, c):
        return _verdict(R, 0)
    if B.nlibs[B.head[p]] <= 1:
        res = TAC_YES
    elif B.nlibs[B.head[p]] == 2:
        res = _verdict(R, _attack(R, B, p, NULL))
    _back(R, B)
    return res

cdef int tac_net(const board_t* b, int p, int c, int budget) noexcept nogil:
    cdef board_t* B = <board_t*>b
    cdef reader_t* R = NULL
    cdef int k, j, q, r
    cdef int16_t targets[12]
    cdef int nt = 0
    if b.color[p] != EMPTY:
        return TAC_NO
    for k in range(4):
        q = p + b.off[k]
        if b.color[q] == 3 - c and b.nlibs[b.head[q]] <= 2:
            return TAC_NO                # an atari or a capture: not a net
    for k in range(4):
        q = p + b.off[k]
        if b.color[q] != EMPTY:
            continue
        for j in range(4):
            r = q + b.off[j]
            if b.color[r] == 3 - c and b.nlibs[b.head[r]] == 2 and nt < 12:
                nt = _add_once(targets, nt, b.head[r])
    if nt == 0:
        return TAC_NO
    R = _reader(budget)
    if R == NULL:
        return TAC_UNKNOWN
    for k in range(nt):
        if _net_works(R, B, targets[k], p):
            return TAC_YES
    return _verdict(R, 0)

cdef int tac_saves_2lib(const board_t* b, int p, int c, int budget) noexcept nogil:
    cdef board_t* B = <board_t*>b
    cdef reader_t* R
    cdef int k, q, i, res = TAC_NO, before = 0
    cdef int16_t own[4]
    cdef int n = 0
    for k in range(4):
        q = p + b.off[k]
        if b.color[q] == c and b.nlibs[b.head[q]] == 2:
            n = _add_once(own, n, b.head[q])
    if n == 0:
        return TAC_NO
    R = _reader(budget)
    if R == NULL:
        return TAC_UNKNOWN
    for i in range(n):
        if _attack(R, B, own[i], NULL):
            before = 1
            break
    if not before:
        return _verdict(R, 0)
    if not _play(R, B, p, c):
        return _verdict(R, 0)
    res = TAC_NO if B.nlibs[B.head[p]] <= 1 or _attack(R, B, p, NULL) else TAC_YES
    if res == TAC_YES and R.out:
        res = TAC_UNKNOWN
    _back(R, B)
    return res

# =============================================================================================
# Eyes
# =============================================================================================
cdef int tac_nakade_point(const board_t* b, int last) noexcept nogil:
    """The vital point of a killable eye shape next to the last move: an empty region of 3 to
    6 points that touches `last` and that stones of last's colour alone enclose (with the
    edge), shaped so that one stone on the vital point leaves one eye: straight or bent three,
    pyramid four, crossed or bulky five, rabbity six. The shapes are told apart by how many
    region neighbours each point has (as Fuego's GoEyeUtil and Pachi's nakade do): the vital
    point is the one point with the most. PASS when there is none. (Marking the regions
    already flooded from another neighbour of last, or bitmaps for the membership tests, cost
    more instructions than the short scans: callgrind.)"""
    cdef int16_t reg[6]
    cdef int cnt[5]
    cdef int k, j, i, n, q, s, e, col, own, ok, t, vital
    if last == PASS:
        return PASS
    own = b.color[last]
    if own != BLACK and own != WHITE:
        return PASS
    for k in range(4):
        q = last + b.off[k]
        if b.color[q] != EMPTY:
            continue
        # flood the empty region from q: at most 6 points, no stone of the other colour around
        reg[0] = <int16_t>q
        n = 1
        i = 0
        ok = 1
        while i < n and ok:
            s = reg[i]
            i += 1
            for j in range(4):
                e = s + b.off[j]
                col = b.color[e]
                if col == EMPTY:
                    for t in range(n):
                        if reg[t] == e:
                            break
                    else:
                        if n == 6:
                            ok = 0
                            break
                        reg[n] = <int16_t>e
                        n += 1
                elif col == 3 - own:
                    ok = 0
                    break
        if not ok or n < 3:
            continue
        vital = _shape_degrees(b, reg, n, cnt)
        if vital != PASS and _killable(n, cnt):
            return vital
    return PASS

cdef bint tac_false_eye(const board_t* b, int p, int c) noexcept nogil:
    cdef int k, col, opp = 0, edge = 0
    if b.color[p] != EMPTY:
        return 0
    for k in range(4):
        col = b.color[p + b.off[k]]
        if col != c and col != BORDER:
            return 0
    for k in range(4, 8):
        col = b.color[p + b.off[k]]
        if col == 3 - c:
            opp += 1
        elif col == BORDER:
            edge = 1
    return opp + edge >= 2

# =============================================================================================
# Python layer: for tests and tools (vertices in GTP text, colours 'b' / 'w')
# =============================================================================================
_ANSWER = {TAC_YES: True, TAC_NO: False, TAC_UNKNOWN: None}
BUDGET = TAC_BUDGET           # reading nodes a question, as the engine asks them

cdef int _colour(Board board, color) except -1:
    if color is None:
        return board.b.to_move
    s = str(color).lower()[:1]
    if s == "b":
        return BLACK
    if s == "w":
        return WHITE
    raise ValueError(f"invalid colour {color!r}")

cdef int _stone(Board board, vertex) except -1:
    cdef int p = board.point(vertex)
    if p == PASS or board.b.color[p] not in (BLACK, WHITE):
        raise ValueError(f"no stone at {vertex}")
    return p

cdef int _empty(Board board, vertex) except -1:
    cdef int p = board.point(vertex)
    if p == PASS or board.b.color[p] != EMPTY:
        raise ValueError(f"{vertex} is not an empty point")
    return p

def capture(Board board not None, vertex, int budget=TAC_BUDGET):
    """Can the string at `vertex` be captured, its opponent to move? (True / False / None when
    the budget ran out, and the first move of the capture or None)."""
    cdef int m = PASS
    cdef int r = tac_capture(board.b, _stone(board, vertex), budget, &m)
    return _ANSWER[r], (board.vertex(m) if r == TAC_YES else None)

def net(Board board not None, vertex, color=None, int budget=TAC_BUDGET):
    """color playing `vertex` next to a liberty of an opponent string of two liberties, not on
    one, captures that string whatever it answers: a net (True / False / None)."""
    return _ANSWER[tac_net(board.b, _empty(board, vertex), _colour(board, color), budget)]

def save(Board board not None, vertex, int budget=TAC_BUDGET):
    """Can the string at `vertex` be saved, its owner to move? (True / False / None, and the
    saving move or None)."""
    cdef int m = PASS
    cdef int r = tac_save(board.b, _stone(board, vertex), budget, &m)
    return _ANSWER[r], (board.vertex(m) if r == TAC_YES else None)

def atari_works(Board board not None, vertex, color=None, int budget=TAC_BUDGET):
    """color playing `vertex` puts an opponent string in atari that then dies (True / False /
    None)."""
    return _ANSWER[tac_atari_works(board.b, _empty(board, vertex), _colour(board, color), budget)]

def escape_fails(Board board not None, vertex, color=None, int budget=TAC_BUDGET):
    """color extending its string in atari at `vertex` is still captured (True / False / None)."""
    return _ANSWER[tac_escape_fails(board.b, _empty(board, vertex), _colour(board, color), budget)]

def saves_2lib(Board board not None, vertex, color=None, int budget=TAC_BUDGET):
    """color playing `vertex` saves its own 2-liberty string there that the opponent would
    capture (True / False / None)."""
    return _ANSWER[tac_saves_2lib(board.b, _empty(board, vertex), _colour(board, color), budget)]

def selfatari(Board board not None, vertex, color=None):
    """color playing the empty `vertex` leaves its string one liberty and captures nothing."""
    return bool(tac_selfatari(board.b, _empty(board, vertex), _colour(board, color)))

def bad_selfatari(Board board not None, vertex, color=None):
    """A self-atari that is neither a killing shape in the opponent's eye nor a snapback."""
    return bool(tac_bad_selfatari(board.b, _empty(board, vertex), _colour(board, color)))

def bad_selfatari_read(Board board not None, vertex, color=None):
    """bad_selfatari's answer found by playing the move and reading the string it makes (what
    bad_selfatari does for a lone stone; tests compare the two on strings that join)."""
    cdef int p = _empty(board, vertex), c = _colour(board, color)
    return bool(tac_selfatari(board.b, p, c) and _bad_selfatari_read(board.b, p, c))

def nakade_point(Board board not None, last=None):
    """The vital point of a killable eye shape next to `last` (default: the last move), or
    None."""
    cdef int q = board.b.last if last is None else board.point(last)
    cdef int p = tac_nakade_point(board.b, q)
    return None if p == PASS else board.vertex(p)

def false_eye(Board board not None, vertex, color):
    """The empty `vertex` looks like an eye of color but the opponent's diagonals make it false."""
    return bool(tac_false_eye(board.b, _empty(board, vertex), _colour(board, color)))

def undo_roundtrip(Board board not None, vertex, color=None):
    """Play `vertex` with board_try_play and undo it: the board's bytes right after the move
    (None when the move is not legal under simple ko); the board is as before afterwards."""
    cdef int c = _colour(board, color)
    cdef int p = board.point(vertex)
    cdef reader_t* R = _reader(0)
    cdef bytes after
    if R == NULL:
        raise MemoryError("tactics: no reader")
    if not _play(R, board.b, p, c):
        return None
    after = PyBytes_FromStringAndSize(<char*>board.b, sizeof(board_t))
    _back(R, board.b)
    return after
