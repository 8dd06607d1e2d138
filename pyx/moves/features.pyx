# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Move features (see gammago/moves/features.pxd for the definitions): the nogil C functions that the
rollouts call per point, the all-legal-moves call used by training and prediction, and the
Python entry points that replay whole games in C (extract_game for MM training, evaluate_game
for prediction metrics)."""
from libc.stdlib cimport malloc, free, qsort
from libc.string cimport memset
from libc.math cimport log
from libc.stdint cimport int32_t, int16_t, int64_t, uint16_t, uint32_t, uint64_t, uint8_t
from gammago.go.board cimport (board_t, Board, board_copy, board_play, board_is_legal,
                            board_check_move, code_swap, other, EMPTY, BLACK, WHITE, BORDER,
                            PASS, MAX_PTS, CODE_BITS, CODE_ATARI_SHIFT, MOVE_OK, MAX_HIST)
from gammago.go.tactics cimport (tac_neighbours, tac_join_libs, libs_after, tac_atari_works,
                              tac_escape_fails, tac_saves_2lib, tac_nakade_point, TAC_YES,
                              TAC_NO, TAC_BUDGET)

from gammago.moves.spatial cimport spatial_dict_t, spatial_match, SpatialDict

import numpy as np

cdef extern from *:
    int __builtin_ctzll(unsigned long long) nogil

# ---------------------------------------------------------------------------------------------
# The 3x3 pattern table: code seen from Black (the mover) -> local G_PAT3 id, for all 2^20 codes.
# ---------------------------------------------------------------------------------------------
cdef uint16_t PAT3[1 << CODE_BITS]
cdef uint32_t PAT3_CODE[NPAT3 + 1]      # local id -> its canonical code (id 0 unused)

# The 8 symmetries as permutations of the 8 neighbour fields. Field k sits at offset
# (drow, dcol) = N(-1,0) E(0,1) S(1,0) W(0,-1) NE(-1,1) SE(1,1) SW(1,-1) NW(-1,-1).
cdef int SYM[8][8]
cdef int DR[8]
cdef int DC[8]
DR[:] = [-1, 0, 1, 0, -1, 1, 1, -1]
DC[:] = [0, 1, 0, -1, 1, 1, -1, -1]

cdef int _field_of(int dr, int dc) noexcept nogil:
    cdef int k
    for k in range(8):
        if DR[k] == dr and DC[k] == dc:
            return k
    return -1

cdef uint32_t _transform(uint32_t code, const int* perm) noexcept nogil:
    cdef uint32_t out = 0
    cdef int k
    for k in range(8):
        out |= ((code >> (2 * k)) & 3) << (2 * perm[k])
    for k in range(4):
        if (code >> (CODE_ATARI_SHIFT + k)) & 1:
            out |= (<uint32_t>1) << (CODE_ATARI_SHIFT + perm[k])
    return out

cdef bint _valid(uint32_t code) noexcept nogil:
    """Could this be the code of an on-board point? Border fields form nothing, one side, or a
    corner; atari bits only on orthogonal stones."""
    cdef int k, col, mask = 0
    for k in range(8):
        if ((code >> (2 * k)) & 3) == BORDER:
            mask |= 1 << k
    # sides: N = fields 0,4,7; S = 2,5,6; E = 1,4,5; W = 3,6,7
    if mask not in (0, 0x91, 0x64, 0x32, 0xC8, 0x91 | 0x32, 0x91 | 0xC8, 0x64 | 0x32, 0x64 | 0xC8):
        return 0
    for k in range(4):
        if (code >> (CODE_ATARI_SHIFT + k)) & 1:
            col = (code >> (2 * k)) & 3
            if col != BLACK and col != WHITE:
                return 0
    return 1

cdef int _init_pat3() noexcept nogil:
    cdef int s, k, n = 0, swap, f1, f2, dr, dc
    cdef uint32_t code, t, best
    for s in range(8):
        swap = s >> 2
        f1 = 1 if (s & 1) == 0 else -1
        f2 = 1 if (s & 2) == 0 else -1
        for k in range(8):
            if swap:
                dr = DC[k] * f1
                dc = DR[k] * f2
            else:
                dr = DR[k] * f1
                dc = DC[k] * f2
            SYM[s][k] = _field_of(dr, dc)
    # representatives (the smallest code of each orbit) get ids in increasing code order
    for code in range(1 << CODE_BITS):
        PAT3[code] = PAT3_RARE
        if not _valid(code):
            continue
        best = code
        for s in range(1, 8):
            t = _transform(code, SYM[s])
            if t < best:
                best = t
        if best == code:
            n += 1
            if n <= NPAT3:
                PAT3_CODE[n] = code
                PAT3[code] = n
    if n != NPAT3:
        return n
    for code in range(1 << CODE_BITS):
        if not _valid(code) or PAT3[code] != PAT3_RARE:
            continue
        best = code
        for s in range(1, 8):
            t = _transform(code, SYM[s])
            if t < best:
                best = t
        PAT3[code] = PAT3[best]
    return n

_npat = _init_pat3()
if _npat != NPAT3:
    raise ImportError(f"gammago.moves.features: {_npat} canonical 3x3 patterns, features.pxd says {NPAT3}")

cdef const uint16_t* pat3_table() noexcept nogil:
    return PAT3

# ---------------------------------------------------------------------------------------------
# The features of one move
# ---------------------------------------------------------------------------------------------
cdef int feat_pat3(const board_t* b, int p, int c) noexcept nogil:
    cdef uint32_t code = b.code[p]
    if c == WHITE:
        code = code_swap(code)
    return FB_PAT3 + PAT3[code]

cdef inline uint32_t _pat12_code(const board_t* b, int p, int c) noexcept nogil:
    """The diamond's canonical 28-bit code (features.pxd G_PAT12), colours seen from c."""
    cdef uint32_t code = b.code[p], outer = 0, t, o, best = 0xFFFFFFFF, col
    cdef int k, s, q
    for k in range(4):
        q = p + b.off[k]
        col = BORDER if b.color[q] == BORDER else b.color[q + b.off[k]]
        if c == WHITE and (col == BLACK or col == WHITE):
            col = 3 - col
        outer |= col << (2 * k)
    if c == WHITE:
        code = code_swap(code)
    for s in range(8):
        t = _transform(code, SYM[s])
        o = 0
        for k in range(4):
            o |= ((outer >> (2 * k)) & 3) << (2 * SYM[s][k])
        t |= o << CODE_BITS
        if t < best:
            best = t
    return best

cdef inline uint32_t _pat12_bucket(uint32_t x) noexcept nogil:
    # a 32-bit mix (the murmur3 finaliser), then the top PAT12_BITS bits
    x ^= x >> 16
    x *= 0x85EBCA6BU
    x ^= x >> 13
    x *= 0xC2B2AE35U
    x ^= x >> 16
    return x >> (32 - PAT12_BITS)

cdef int feat_pat12(const board_t* b, int p, int c) noexcept nogil:
    return FB_PAT12 + 1 + <int>_pat12_bucket(_pat12_code(b, p, c))

cdef int EDGE_START[6]
EDGE_START[:] = [0, 0, 7, 13, 18, 22]     # by a = 1..5: levels before a's run of b = a..7

cdef int feat_edge(const board_t* b, int p) noexcept nogil:
    cdef int row = p // b.W - 1, col = p % b.W - 1
    cdef int r = row if row < b.size - 1 - row else b.size - 1 - row
    cdef int c = col if col < b.size - 1 - col else b.size - 1 - col
    cdef int lo = (r if r < c else c) + 1
    cdef int hi = (c if r < c else r) + 1
    if lo > 5:
        lo = 5
    if hi > 7:
        hi = 7
    return FB_EDGE + 1 + EDGE_START[lo] + hi - lo

cdef int feat_dist(const board_t* b, int p, int q, int base) noexcept nogil:
    cdef int dx, dy, d
    if q == PASS or p == PASS:
        return base
    dy = p // b.W - q // b.W
    dx = p % b.W - q % b.W
    if dx < 0:
        dx = -dx
    if dy < 0:
        dy = -dy
    d = dx + dy + (dx if dx > dy else dy)
    if d < 2:          # q itself: the stone played there has been captured since
        d = 2
    if d > 17:
        return base + 17
    return base + d - 1

cdef inline bint _touches(const board_t* b, int q, int h) noexcept nogil:
    """Is point q orthogonally next to a stone of the string with head h?"""
    cdef int k, r
    for k in range(4):
        r = q + b.off[k]
        if (b.color[r] == BLACK or b.color[r] == WHITE) and b.head[r] == h:
            return 1
    return 0

cdef bint _next_to_own_atari(const board_t* b, int h, int c) noexcept nogil:
    """Does the string with head h touch a string of colour c that has one liberty?"""
    cdef int s = h, k, r
    while True:
        for k in range(4):
            r = s + b.off[k]
            if b.color[r] == c and b.nlibs[b.head[r]] == 1:
                return 1
        s = b.next[s]
        if s == h:
            return 0

cdef void feat_tactics(const board_t* b, int p, int c, int32_t* out) noexcept nogil:
    cdef int o = other(c)
    cdef int h, i, j
    cdef int16_t own[4]
    cdef int16_t opp[4]
    cdef int16_t capd[4]
    cdef int nown, nopp, ncapd = 0, ncap = 0, newsize = 1
    cdef int16_t libs[4]
    cdef int nlib
    cdef int kind = 4, atari_size = 0, own_atari = 0, ext_new = 0
    cdef int last = b.last
    out[G_CAPTURE] = FB_CAPTURE
    out[G_EXTENSION] = FB_EXTENSION
    out[G_SELFATARI] = FB_SELFATARI
    out[G_ATARI] = FB_ATARI
    nlib = tac_neighbours(b, p, c, libs, own, &nown, opp, &nopp)
    # captures and ataris on opponent strings
    for i in range(nopp):
        h = opp[i]
        if b.nlibs[h] == 1:
            capd[ncapd] = h
            ncapd += 1
            ncap += b.ssize[h]
            if last != PASS and b.color[last] == o and b.head[last] == h:
                j = 0
            elif _next_to_own_atari(b, h, c):
                j = 1
            elif last != PASS and (p - last == b.W or last - p == b.W or p - last == 1 or
                                   last - p == 1 or p - last == b.W + 1 or last - p == b.W + 1 or
                                   p - last == b.W - 1 or last - p == b.W - 1):
                j = 2
            else:
                j = 3
            if j < kind:
                kind = j
        elif b.nlibs[h] == 2:
            if b.ssize[h] > atari_size:
                atari_size = b.ssize[h]
    if ncap:
        out[G_CAPTURE] = FB_CAPTURE + 1 + 3 * kind + (0 if ncap == 1 else (1 if ncap <= 3 else 2))
    if atari_size:
        out[G_ATARI] = FB_ATARI + 1 + (2 if b.ko != PASS else 0) + (1 if atari_size >= 2 else 0)
    # liberties of the new string, counted up to 3
    for i in range(nown):
        h = own[i]
        newsize += b.ssize[h]
        if b.nlibs[h] == 1:
            own_atari = 1
            if last != PASS and _touches(b, last, h):
                ext_new = 1
    nlib = tac_join_libs(b, p, c, own, nown, capd, ncapd, libs, nlib, 3)
    if own_atari and nlib >= 2:
        out[G_EXTENSION] = FB_EXTENSION + 1 + (0 if ext_new else 2) + (1 if nlib >= 3 else 0)
    if nlib == 1 and ncap == 0:
        out[G_SELFATARI] = FB_SELFATARI + (1 if newsize <= 2 else 2)

cdef void feat_reading(const board_t* b, int p, int c, int32_t* out) noexcept nogil:
    cdef int k, q, escape = 0, capture = 0, r
    out[G_LADDER] = FB_LADDER
    out[G_RACE] = FB_RACE
    out[G_NAKADE] = FB_NAKADE
    for k in range(4):
        q = p + b.off[k]
        if b.color[q] == c and b.nlibs[b.head[q]] == 1:
            escape = 1
        elif b.color[q] == 3 - c and b.nlibs[b.head[q]] == 1:
            capture = 1
    if escape and not capture:
        r = tac_escape_fails(b, p, c, TAC_BUDGET)
        if r == TAC_YES:
            out[G_LADDER] = FB_LADDER + 2
        elif r == TAC_NO:
            out[G_LADDER] = FB_LADDER + 3
    elif tac_atari_works(b, p, c, TAC_BUDGET) == TAC_YES:
        out[G_LADDER] = FB_LADDER + 1
    if tac_saves_2lib(b, p, c, TAC_BUDGET) == TAC_YES:
        out[G_RACE] = FB_RACE + 1
    if b.last != PASS and tac_nakade_point(b, b.last) == p:
        out[G_NAKADE] = FB_NAKADE + 1

cdef int rollout_features(const board_t* b, int p, int c, int32_t* out) noexcept nogil:
    if p == PASS:
        out[G_PASS] = FB_PASS + (1 if (b.last == PASS and b.nmoves > 0) else 2)
        out[G_CAPTURE] = FB_CAPTURE
        out[G_EXTENSION] = FB_EXTENSION
        out[G_SELFATARI] = FB_SELFATARI
        out[G_ATARI] = FB_ATARI
        out[G_DIST1] = FB_DIST1
        out[G_DIST2] = FB_DIST2
        out[G_EDGE] = FB_EDGE
        out[G_LADDER] = FB_LADDER
        out[G_RACE] = FB_RACE
        out[G_NAKADE] = FB_NAKADE
        out[G_PAT12] = FB_PAT12
        out[G_PAT3] = FB_PAT3
        return NGROUPS
    out[G_PASS] = FB_PASS
    feat_tactics(b, p, c, out)
    out[G_DIST1] = feat_dist(b, p, b.last, FB_DIST1)
    out[G_DIST2] = feat_dist(b, p, b.last2, FB_DIST2)
    out[G_EDGE] = feat_edge(b, p)
    out[G_LADDER] = FB_LADDER
    out[G_RACE] = FB_RACE
    out[G_NAKADE] = FB_NAKADE
    out[G_PAT12] = FB_PAT12
    out[G_PAT3] = feat_pat3(b, p, c)
    return NGROUPS

cdef int move_features(const board_t* b, int p, int c, int32_t* out) noexcept nogil:
    rollout_features(b, p, c, out)
    if p != PASS:
        feat_reading(b, p, c, out)
        out[G_PAT12] = feat_pat12(b, p, c)
    return NGROUPS

cdef int move_features_d(const board_t* b, int p, int c, const spatial_dict_t* d,
                         int32_t* out) noexcept nogil:
    cdef int i
    if d == NULL:
        return move_features(b, p, c, out)
    rollout_features(b, p, c, out)
    if p != PASS:
        feat_reading(b, p, c, out)
        i = spatial_match(d, b, p, c)
        out[G_PAT12] = FB_PAT12 + (i if i else PAT12_RARE)
    return NGROUPS

cdef int position_features(const board_t* b, int c, int16_t* moves, int32_t* feats) noexcept nogil:
    return position_features_d(b, c, NULL, moves, feats)

cdef int position_features_d(const board_t* b, int c, const spatial_dict_t* d, int16_t* moves,
                             int32_t* feats) noexcept nogil:
    cdef int i, p, n = 0
    for i in range(b.nempty):
        p = b.empty[i]
        if board_is_legal(b, p, c):
            moves[n] = p
            move_features_d(b, p, c, d, &feats[n * NGROUPS])
            n += 1
    moves[n] = PASS
    move_features_d(b, PASS, c, d, &feats[n * NGROUPS])
    return n + 1

# ---------------------------------------------------------------------------------------------
# Tables with a spatial dictionary: the table's G_PAT12 "absent" entry (gamma 1 for every move
# that lacks the group: only a pass) holds 1 + tag * 2^-52, the tag naming a registered
# dictionary, so that any copy of the table (a scaled one, the tree's) still finds it; a pass's
# strength moves by less than 2^-32 of itself.
# ---------------------------------------------------------------------------------------------
cdef enum:
    MAX_DICTS = 64
    TAG_BITS = 20
cdef int NDICTS = 0
cdef long DICT_TAGS[MAX_DICTS]
cdef const spatial_dict_t* DICT_PTRS[MAX_DICTS]
_DICTS = {}          # tag -> SpatialDict (kept alive)
cdef double TAG_UNIT_C = 2.0 ** -52
TAG_UNIT = TAG_UNIT_C


def dict_tag(SpatialDict sd):
    """The tag (1 .. 2^20 - 1) of a dictionary: from its checksum."""
    return int(sd.checksum, 16) % ((1 << TAG_BITS) - 1) + 1


def register_dict(SpatialDict sd):
    """Make `sd` findable by its tag (table_dict); returns the value of a table's G_PAT12
    absent entry that names it. ValueError when another dictionary has the same tag."""
    global NDICTS
    tag = dict_tag(sd)
    have = _DICTS.get(tag)
    if have is not None:
        if have.checksum != sd.checksum:
            raise ValueError(f"two spatial dictionaries with the tag {tag}: {have.checksum} "
                             f"and {sd.checksum}")
        return 1.0 + tag * TAG_UNIT
    if NDICTS >= MAX_DICTS:
        raise ValueError(f"more than {MAX_DICTS} spatial dictionaries in one process")
    _DICTS[tag] = sd
    DICT_TAGS[NDICTS] = tag
    DICT_PTRS[NDICTS] = &sd.d
    NDICTS += 1
    return 1.0 + tag * TAG_UNIT


cdef const spatial_dict_t* table_dict(const double* gamma) noexcept nogil:
    cdef double v = gamma[FB_PAT12]
    cdef long tag
    cdef int i
    if v == 1.0 or NDICTS == 0:
        return NULL
    tag = <long>((v - 1.0) / TAG_UNIT_C + 0.5)
    for i in range(NDICTS):
        if DICT_TAGS[i] == tag:
            return DICT_PTRS[i]
    return NULL


def find_dict(gamma):
    """The registered SpatialDict a gamma table names, or None."""
    v = float(np.asarray(gamma)[FB_PAT12])
    if v == 1.0:
        return None
    return _DICTS.get(int(round((v - 1.0) / TAG_UNIT)))


cdef const spatial_dict_t* _dict_arg(dictionary, gamma) except? NULL:
    cdef SpatialDict sd
    if dictionary is None and gamma is not None:
        dictionary = find_dict(gamma)
    if dictionary is None:
        return NULL
    sd = dictionary
    return &sd.d

# =============================================================================================
# Python layer
# =============================================================================================
GROUP_NAMES = ("pass", "capture", "extension", "selfatari", "atari", "dist1", "dist2", "edge",
               "ladder", "race", "nakade", "pat12", "pat3")
GROUP_BASES = (FB_PASS, FB_CAPTURE, FB_EXTENSION, FB_SELFATARI, FB_ATARI, FB_DIST1, FB_DIST2,
               FB_EDGE, FB_LADDER, FB_RACE, FB_NAKADE, FB_PAT12, FB_PAT3)
GROUP_SIZES = (FN_PASS, FN_CAPTURE, FN_EXTENSION, FN_SELFATARI, FN_ATARI, FN_DIST, FN_DIST,
               FN_EDGE, FN_LADDER, FN_RACE, FN_NAKADE, FN_PAT12, FN_PAT3)
# the groups the rollouts weigh (features.pxd: not the ones read by the tactical reader)
ROLLOUT_GROUPS = tuple(n for n in GROUP_NAMES if n not in ("ladder", "race", "nakade", "pat12"))
# the pattern groups: (group, number of patterns, local id of the merged default); training
# merges the rare ones into the default, a gamma file lists the kept ones
PATTERN_GROUPS = ((G_PAT12, PAT12_BUCKETS, PAT12_RARE), (G_PAT3, NPAT3, PAT3_RARE))
VERSION = FEATURES_VERSION
N_FEATURES = NFEAT
N_GROUPS = NGROUPS
N_PAT3 = NPAT3
PAT3_DEFAULT = PAT3_RARE
# bits each group's local id takes in a packed team key (extract_game)
KEY_BITS = (2, 4, 3, 2, 3, 5, 5, 5, 2, 1, 1, 17, 13)
KEY_SHIFTS = tuple(sum(KEY_BITS[:g]) for g in range(NGROUPS))
cdef int KSHIFT[NGROUPS]
KSHIFT[:] = list(KEY_SHIFTS)
cdef int KBASE[NGROUPS]
KBASE[:] = list(GROUP_BASES)
assert all(GROUP_SIZES[g] <= (1 << KEY_BITS[g]) for g in range(NGROUPS))
assert GROUP_BASES[NGROUPS - 1] + GROUP_SIZES[NGROUPS - 1] == NFEAT
assert all(GROUP_BASES[g] + GROUP_SIZES[g] == GROUP_BASES[g + 1] for g in range(NGROUPS - 1))


def level_name(int fid):
    """Readable name of a global feature id, e.g. 'capture:last/1', 'dist1:5', 'pat3:0x1a2b'."""
    if fid < 0 or fid >= NFEAT:
        raise ValueError(f"feature id {fid} out of range 0..{NFEAT - 1}")
    g = max(i for i in range(NGROUPS) if GROUP_BASES[i] <= fid)
    lv = fid - GROUP_BASES[g]
    name = GROUP_NAMES[g]
    if lv == 0:
        return f"{name}:absent"
    if g == G_PASS:
        return f"{name}:{'after-pass' if lv == 1 else 'other'}"
    if g == G_CAPTURE:
        kind, sc = divmod(lv - 1, 3)
        return f"{name}:{('last', 'save', 'near', 'other')[kind]}/{('1', '2-3', '4+')[sc]}"
    if g == G_EXTENSION:
        old, many = divmod(lv - 1, 2)
        return f"{name}:{'old' if old else 'new'}/{'3+' if many else '2'}libs"
    if g == G_SELFATARI:
        return f"{name}:{'1-2' if lv == 1 else '3+'}stones"
    if g == G_ATARI:
        ko, big = divmod(lv - 1, 2)
        return f"{name}:{'ko' if ko else 'noko'}/{'2+' if big else '1'}"
    if g in (G_DIST1, G_DIST2):
        return f"{name}:{lv + 1 if lv < 17 else '18+'}"
    if g == G_EDGE:
        a = max(x for x in range(1, 6) if EDGE_START[x] < lv)
        b = a + lv - 1 - EDGE_START[a]
        return f"{name}:{a}{'+' if a == 5 else ''}/{b}{'+' if b == 7 else ''}"
    if g == G_LADDER:
        return f"{name}:{('atari-works', 'escape-fails', 'escape-works')[lv - 1]}"
    if g == G_RACE:
        return f"{name}:saves-2libs"
    if g == G_NAKADE:
        return f"{name}:vital-point"
    if g == G_PAT12:
        return f"{name}:default" if lv == PAT12_RARE else f"{name}:{lv - 1:04x}"
    if lv == PAT3_RARE:
        return f"{name}:default"
    return f"{name}:0x{PAT3_CODE[lv]:05x}"


def pat3_codes():
    """numpy uint32 array: the canonical code (seen from the mover) of each local pattern id
    (index 0 and PAT3_RARE hold 0)."""
    a = np.zeros(FN_PAT3, dtype=np.uint32)
    cdef int i
    for i in range(1, NPAT3 + 1):
        a[i] = PAT3_CODE[i]
    return a


def pat3_id(code, color="b"):
    """Local pattern id of a 3x3 code (absolute colours) for the colour to move."""
    cdef uint32_t cd = code
    if cd >= (1 << CODE_BITS):
        raise ValueError(f"3x3 code {code:#x} has more than {CODE_BITS} bits")
    if color in ("w", "white", WHITE):
        cd = code_swap(cd)
    return PAT3[cd]


def move_ids(Board board, vertex, color=None, dictionary=None):
    """The NGROUPS global feature ids of one move (a GTP vertex or 'pass') as a list (the
    G_PAT12 slot through `dictionary`, a SpatialDict, when given)."""
    cdef int c = board.b.to_move if color is None else (BLACK if str(color).lower()[0] == "b" else WHITE)
    cdef int p = board.point(vertex)
    cdef int32_t out[NGROUPS]
    cdef const spatial_dict_t* d = _dict_arg(dictionary, None)
    if p != PASS and board.b.color[p] != EMPTY:
        raise ValueError(f"{vertex} is occupied")
    move_features_d(board.b, p, c, d, out)
    return [out[g] for g in range(NGROUPS)]


def liberties_after(Board board, vertex, color=None, int kmax=4):
    """Liberties of the string at vertex after color (default: the side to move) plays there,
    counted up to kmax (1..4), captures included (libs_after: what feat_tactics and the light
    rollout tail count). The point must be empty; legality is not checked."""
    cdef int c = board.b.to_move if color is None else (BLACK if str(color).lower()[0] == "b" else WHITE)
    cdef int p = board.point(vertex)
    if not 1 <= kmax <= 4:
        raise ValueError(f"kmax must be 1..4, not {kmax}")
    if p == PASS or board.b.color[p] != EMPTY:
        raise ValueError(f"{vertex} is not an empty point")
    return libs_after(board.b, p, c, kmax)


def legal_features(Board board, color=None, dictionary=None):
    """Features of every legal move (simple ko) and pass: (list of vertices, int32 array of
    shape (n, NGROUPS) with global ids; the G_PAT12 slot through `dictionary` when given)."""
    cdef int c = board.b.to_move if color is None else (BLACK if str(color).lower()[0] == "b" else WHITE)
    cdef int16_t moves[MAX_PTS + 1]
    feats = np.empty((board.b.nempty + 1, NGROUPS), dtype=np.int32)
    cdef int32_t[:, ::1] f = feats
    cdef int n, i
    cdef const spatial_dict_t* d = _dict_arg(dictionary, None)
    n = position_features_d(board.b, c, d, moves, &f[0, 0])
    return [board.vertex(moves[i]) for i in range(n)], feats[:n].copy()


def decode_keys(keys):
    """Packed team keys (extract_game) -> int32 array (n, NGROUPS) of global feature ids."""
    keys = np.asarray(keys, dtype=np.int64)
    out = np.empty((len(keys), NGROUPS), dtype=np.int32)
    for g in range(NGROUPS):
        out[:, g] = ((keys >> KEY_SHIFTS[g]) & ((1 << KEY_BITS[g]) - 1)) + GROUP_BASES[g]
    return out


def encode_ids(ids):
    """The inverse of decode_keys."""
    ids = np.asarray(ids, dtype=np.int64).reshape(-1, NGROUPS)
    keys = np.zeros(len(ids), dtype=np.int64)
    for g in range(NGROUPS):
        keys |= (ids[:, g] - GROUP_BASES[g]) << KEY_SHIFTS[g]
    return keys


cdef int _colour_code(str s) except -1:
    if s == "b":
        return BLACK
    if s == "w":
        return WHITE
    raise ValueError(f"invalid colour {s!r}")


cdef int _prepare(Board board, moves, int16_t* pts, uint8_t* cols) except -1:
    cdef int i = 0
    for colour, vertex in moves:
        cols[i] = _colour_code(colour)
        pts[i] = board.point(vertex)
        i += 1
    return i


_REASONS = {1: "occupied", 2: "suicide", 3: "ko", 5: "off the board"}


# ---------------------------------------------------------------------------------------------
# Game replay in C: one skeleton (check each move, list the features of each sampled position,
# play), and one visitor per use: MM training keys (extract_game), prediction ranks
# (evaluate_game).
# ---------------------------------------------------------------------------------------------
ctypedef int (*visit_fn)(void* ctx, int i, int played, int m, const int16_t* cand,
                         const int32_t* feats) noexcept nogil


cdef int _replay(const board_t* start, board_t* b, int n, const int16_t* pts, const uint8_t* cols,
                 const uint8_t* smp, visit_fn visit, void* ctx, int* err_at,
                 const spatial_dict_t* d) noexcept nogil:
    """Replay the n moves from start on b; at each sampled position call visit with the legal
    moves' features. Returns 0, or an error code (MOVE_* of board_check_move, 8 = the played
    move is missing from the legal list, 9 = game too long) with err_at = the move's index."""
    cdef int i, m, r
    cdef int16_t cand[MAX_PTS + 1]
    cdef int32_t feats[(MAX_PTS + 1) * NGROUPS]
    board_copy(b, start)
    for i in range(n):
        if b.nmoves >= MAX_HIST - 2:
            err_at[0] = i
            return 9
        r = board_check_move(b, pts[i], cols[i], 0)
        if r != MOVE_OK:
            err_at[0] = i
            return r
        if smp[i]:
            m = position_features_d(b, cols[i], d, cand, feats)
            r = visit(ctx, i, pts[i], m, cand, feats)
            if r:
                err_at[0] = i
                return r
        board_play(b, pts[i], cols[i])
    return 0


cdef object _sample_mask(sample, int n):
    """The positions to visit: all when sample is None, else a length-n boolean-like array."""
    if sample is None:
        return np.ones(n, dtype=np.uint8)
    smp = np.ascontiguousarray(sample, dtype=np.uint8)
    if smp.shape[0] != n:
        raise ValueError(f"sample has {smp.shape[0]} entries for {n} moves")
    return smp


cdef int _run_replay(Board board, moves, uint8_t[::1] smp, visit_fn visit, void* ctx,
                     const spatial_dict_t* d=NULL) except -1:
    """Replay moves ([(colour, vertex)]) from board (unchanged) with visit; raise ValueError
    naming the first illegal move."""
    cdef int n = len(moves), err = 0, err_at = -1
    cdef int16_t* pts = <int16_t*>malloc((n + 1) * sizeof(int16_t))
    cdef uint8_t* cols = <uint8_t*>malloc(n + 1)
    cdef board_t* b = <board_t*>malloc(sizeof(board_t))
    cdef uint8_t none = 0
    cdef const uint8_t* sp = &smp[0] if n else &none
    if pts == NULL or cols == NULL or b == NULL:
        free(pts); free(cols); free(b)
        raise MemoryError()
    try:
        _prepare(board, moves, pts, cols)
        with nogil:
            err = _replay(board.b, b, n, pts, cols, sp, visit, ctx, &err_at, d)
        if err:
            mv = moves[err_at]
            raise ValueError(f"move {err_at + 1} ({mv[0]} {mv[1]}) is illegal: "
                             f"{_REASONS.get(err, 'game too long' if err == 9 else 'illegal')}")
    finally:
        free(pts); free(cols); free(b)
    return 0


cdef struct extract_ctx:
    int64_t* keys
    int32_t* counts
    int32_t* offs
    int32_t* win
    int32_t* mvn
    int total
    int npos


cdef int _visit_extract(void* ctx, int i, int played, int m, const int16_t* cand,
                        const int32_t* feats) noexcept nogil:
    """Record the position's distinct team keys (sorted, with counts) and the played one."""
    cdef extract_ctx* x = <extract_ctx*>ctx
    cdef int j, g, k = 0, total = x.total
    cdef int64_t key, wkey = -1
    cdef int64_t tmp[MAX_PTS + 1]
    for j in range(m):
        key = 0
        for g in range(NGROUPS):
            key |= (<int64_t>(feats[j * NGROUPS + g] - _base(g))) << KSHIFT[g]
        tmp[j] = key
        if cand[j] == played:
            wkey = key
    if wkey < 0:      # legal by board_check_move but not listed: cannot happen
        return 8
    qsort(tmp, m, sizeof(int64_t), _cmp_key)
    for j in range(m):
        if k and x.keys[total + k - 1] == tmp[j]:
            x.counts[total + k - 1] += 1
        else:
            x.keys[total + k] = tmp[j]
            x.counts[total + k] = 1
            if tmp[j] == wkey:
                x.win[x.npos] = k
            k += 1
    x.mvn[x.npos] = i
    x.total = total + k
    x.npos += 1
    x.offs[x.npos] = x.total
    return 0


def extract_game(Board board, moves, sample=None, dictionary=None):
    """Replay `moves` ([(colour 'b'/'w', vertex)], from the position on `board`, which is not
    changed) and record, for each position i with sample[i] true (all when None), the packed
    team keys (encode_ids layout) of its legal moves, each distinct key once with its count,
    and which of them was played.

    Returns (keys int64 [total], counts int32 [total], offsets int32 [npos+1], winner int32
    [npos] (index within the position's keys), move_number int32 [npos] (index into moves)).
    Raises ValueError naming the move when a move is illegal (simple ko, suicide, occupied).
    dictionary: a SpatialDict for the G_PAT12 slot (None: the diamond)."""
    cdef int n = len(moves)
    cdef const spatial_dict_t* d = _dict_arg(dictionary, None)
    smp = _sample_mask(sample, n)
    nsamp = int(smp.astype(bool).sum())
    keys_a = np.empty(max(1, nsamp) * (board.b.npts + 1), dtype=np.int64)
    cnt_a = np.empty(max(1, nsamp) * (board.b.npts + 1), dtype=np.int32)
    offs_a = np.zeros(nsamp + 1, dtype=np.int32)
    win_a = np.zeros(max(1, nsamp), dtype=np.int32)
    mvn_a = np.zeros(max(1, nsamp), dtype=np.int32)
    cdef int64_t[::1] kv = keys_a
    cdef int32_t[::1] cv = cnt_a, ov = offs_a, wv = win_a, mv = mvn_a
    cdef extract_ctx x
    x.keys = &kv[0]
    x.counts = &cv[0]
    x.offs = &ov[0]
    x.win = &wv[0]
    x.mvn = &mv[0]
    x.total = 0
    x.npos = 0
    _run_replay(board, moves, smp, _visit_extract, &x, d)
    return (keys_a[:x.total].copy(), cnt_a[:x.total].copy(), offs_a, win_a[:nsamp],
            mvn_a[:nsamp])


cdef int _cmp_key(const void* a, const void* b) noexcept nogil:
    cdef int64_t x = (<const int64_t*>a)[0], y = (<const int64_t*>b)[0]
    return (x > y) - (x < y)


cdef inline int _base(int g) noexcept nogil:
    return KBASE[g]


cdef struct evaluate_ctx:
    const double* gamma
    int32_t* mvn
    int32_t* ncand
    int32_t* greater
    int32_t* equal
    int32_t* pat
    double* logev
    int npos


cdef int _visit_evaluate(void* ctx, int i, int played, int m, const int16_t* cand,
                         const int32_t* feats) noexcept nogil:
    """Rank the played move among the legal ones by team strength; its log-probability."""
    cdef evaluate_ctx* x = <evaluate_ctx*>ctx
    cdef int j, win_i = -1, gt = 0, eq = 0, k = x.npos
    cdef double s, sw, tot = 0
    cdef double strength[MAX_PTS + 1]
    for j in range(m):
        s = team_gamma(x.gamma, &feats[j * NGROUPS])
        strength[j] = s
        tot += s
        if cand[j] == played:
            win_i = j
    if win_i < 0:
        return 8
    sw = strength[win_i]
    for j in range(m):
        if strength[j] > sw:
            gt += 1
        elif strength[j] == sw and j != win_i:
            eq += 1
    x.mvn[k] = i
    x.ncand[k] = m
    x.greater[k] = gt
    x.equal[k] = eq
    x.pat[k] = feats[win_i * NGROUPS + G_PAT12] - FB_PAT12
    x.logev[k] = log(sw / tot) if sw > 0 and tot > 0 else -1e300
    x.npos = k + 1
    return 0


def evaluate_game(Board board, moves, gamma, sample=None, dictionary=None):
    """Replay `moves` as extract_game does and, at each sampled position, rank the played move
    by its strength under `gamma` (float64 array of N_FEATURES).

    Returns a dict of numpy arrays, one entry per evaluated position: move_number, ncand,
    greater (legal moves strictly stronger than the played one), equal (others as strong),
    log_evidence (log of the played move's probability), pattern (the played move's local
    G_PAT12 id: with a dictionary, its spatial id, 0 none). dictionary: a SpatialDict, or None
    for the one the table names (register_dict), if any."""
    cdef double[::1] gm = np.ascontiguousarray(gamma, dtype=np.float64)
    if gm.shape[0] != NFEAT:
        raise ValueError(f"gamma table has {gm.shape[0]} entries, the features need {NFEAT}")
    cdef int n = len(moves)
    smp = _sample_mask(sample, n)
    nsamp = int(smp.astype(bool).sum())
    alloc = max(1, nsamp)
    out = {"move_number": np.zeros(alloc, dtype=np.int32),
           "ncand": np.zeros(alloc, dtype=np.int32),
           "greater": np.zeros(alloc, dtype=np.int32),
           "equal": np.zeros(alloc, dtype=np.int32),
           "pattern": np.zeros(alloc, dtype=np.int32),
           "log_evidence": np.zeros(alloc, dtype=np.float64)}
    cdef int32_t[::1] mv = out["move_number"], nc = out["ncand"], gt = out["greater"]
    cdef int32_t[::1] eq = out["equal"], pt = out["pattern"]
    cdef const spatial_dict_t* d = _dict_arg(dictionary, gm)
    cdef double[::1] lv = out["log_evidence"]
    cdef evaluate_ctx x
    x.gamma = &gm[0]
    x.mvn = &mv[0]
    x.ncand = &nc[0]
    x.greater = &gt[0]
    x.equal = &eq[0]
    x.pat = &pt[0]
    x.logev = &lv[0]
    x.npos = 0
    _run_replay(board, moves, smp, _visit_evaluate, &x, d)
    return {k: v[:nsamp] for k, v in out.items()}


def bench_position(Board board, int repeats=1000):
    """Seconds per call of position_features on `board` (total / repeats) and the number of
    moves it lists: (seconds_per_call, nmoves). The ids are summed so that no call can be
    optimised away."""
    import time
    cdef int16_t cand[MAX_PTS + 1]
    cdef int32_t feats[(MAX_PTS + 1) * NGROUPS]
    cdef int i, j, m = 0
    cdef int c = board.b.to_move
    cdef long check = 0
    t0 = time.perf_counter()
    with nogil:
        for i in range(repeats):
            m = position_features(board.b, c, cand, feats)
            check += feats[(i % m) * NGROUPS + i % NGROUPS] + cand[i % m]
    t = time.perf_counter() - t0
    if check < 0:
        raise AssertionError("impossible checksum")
    return t / repeats, m
