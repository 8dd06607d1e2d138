# The Go board as a C struct: declarations shared by every Cython module (pyx/go/board.pyx
# implements them). A board is plain data: copying one is board_copy(), never Python.
#
# Points are indices into a (size+2) x (size+2) array with a one-point BORDER frame.
# Point 0 is a border corner, never a playable point, so 0 doubles as PASS and as "none".
from libc.stdint cimport uint64_t, uint32_t, int16_t, uint8_t

cdef enum:
    EMPTY = 0
    BLACK = 1
    WHITE = 2
    BORDER = 3

cdef enum:
    MIN_SIZE = 5
    MAX_SIZE = 19
    MAX_W = 21            # MAX_SIZE + 2
    MAX_PTS = 441         # MAX_W * MAX_W
    LIB_WORDS = 7         # 64-bit words for a liberty set of MAX_PTS bits
    MAX_HIST = 2048       # position hashes kept for the superko check
    PASS = 0              # the pass move; also "no point"
    MAX_CHANGED = 256     # entries of board_t.changed before it says "everything changed"

# Why a move is refused (board_check_move); 0 means legal.
cdef enum:
    MOVE_OK = 0
    MOVE_OCCUPIED = 1
    MOVE_SUICIDE = 2
    MOVE_KO = 3
    MOVE_SUPERKO = 4
    MOVE_OFFBOARD = 5

# The 3x3 code of a point: bits 2k..2k+1 hold the colour (EMPTY/BLACK/WHITE/BORDER) of the
# neighbour at offset off[k]: k = 0..3 the orthogonal steps -W, +1, +W, -1 (towards line 1,
# towards the last column, towards the last line, towards column A), k = 4..7 the diagonals
# -W+1, +W+1, +W-1, -W-1; bit 16+k (k = 0..3) is set when the orthogonal neighbour is a stone whose string
# has exactly one liberty. Codes are absolute-coloured; code_swap() gives the other side's view.
cdef enum:
    CODE_COLOR_MASK = 0xFFFF
    CODE_ATARI_SHIFT = 16
    CODE_BITS = 20

# Undoable moves, for tactical reading (pyx/go/tactics.pyx): board_try_play records the old value
# of every array entry the move writes in a journal, and saves the small header (everything
# before board_t.color) in an undo_t; board_undo puts both back. No copy of the board, no malloc.
ctypedef struct jentry_t:
    void* addr
    uint64_t old
    int size            # bytes: 1, 2, 4 or 8

ctypedef struct journal_t:
    jentry_t* e
    int n               # entries in use
    int cap

cdef enum:
    UNDO_HEADER = 768   # bytes of an undo_t's header copy (checked at import: >= the header)

ctypedef struct undo_t:
    int mark            # journal.n before the move
    unsigned char header[UNDO_HEADER]

ctypedef struct board_t:
    int size            # lines on the board (5..19)
    int W               # row stride: size + 2
    int npts            # W * W
    int nwords          # words of a liberty bitset actually used
    int off[8]          # neighbour offsets, see the code layout above
    int to_move         # BLACK or WHITE
    int ko              # point the side to move may not play (simple ko), or 0
    int last            # last move (PASS or a point), 0 at the start too
    int last2           # the move before it
    int npass           # consecutive passes at the end of the history
    int nmoves          # moves played (passes included) since the setup
    int nempty          # number of entries in empty[]
    int captured[3]     # stones captured OF each colour (index BLACK / WHITE)
    double komi
    uint64_t hash       # Zobrist hash of the stones (not of the side to move)
    int nchanged        # points whose 3x3 code the last play changed, or -1: "too many"
    int16_t changed[MAX_CHANGED]
    journal_t* journal  # while not NULL, every write below is recorded there (board_try_play)
    uint8_t color[MAX_PTS]
    int16_t head[MAX_PTS]       # per stone: the head point of its string
    int16_t next[MAX_PTS]       # per stone: next stone in its string's ring
    int16_t ssize[MAX_PTS]      # per string head: number of stones
    int16_t nlibs[MAX_PTS]      # per string head: number of liberties
    int16_t atari_lib[MAX_PTS]  # per string head: the liberty its codes say it is in atari on
    int16_t empty[MAX_PTS]      # the empty points, in no order
    int16_t empty_pos[MAX_PTS]  # per empty point: its index in empty[]
    uint32_t code[MAX_PTS]      # per point: the 3x3 code (exact for empty points only)
    uint64_t hist[MAX_HIST]     # hist[k]: hash after k moves (hist[0]: after the setup)
    uint64_t libs[MAX_PTS * LIB_WORDS]  # per string head h: bitset words h*nwords .. +nwords

# --- set-up and copies ---
cdef void board_init(board_t* b, int size, double komi) noexcept nogil
cdef void board_copy(board_t* dst, const board_t* src) noexcept nogil

# --- moves ---
cdef int board_check_move(const board_t* b, int p, int c, bint superko) noexcept nogil
cdef void board_play(board_t* b, int p, int c) noexcept nogil   # p must be legal for c
cdef void board_place_setup(board_t* b, int p, int c) noexcept nogil
cdef uint64_t board_hash_after(const board_t* b, int p, int c) noexcept nogil

# --- undoable moves (see journal_t) ---
# Play p (legal for c, PASS allowed) recording what changes; 0 (and nothing played) when the
# journal lacks room for this move. Undo the moves in the reverse order of playing them.
cdef bint board_try_play(board_t* b, int p, int c, journal_t* j, undo_t* u) noexcept nogil
cdef void board_undo(board_t* b, journal_t* j, const undo_t* u) noexcept nogil

# --- queries ---
cdef int board_first_lib(const board_t* b, int h) noexcept nogil
cdef int board_lib_list(const board_t* b, int h, int16_t* out) noexcept nogil
cdef double board_score(const board_t* b) noexcept nogil
cdef void board_area(const board_t* b, uint8_t* owner) noexcept nogil
cdef void board_pass_alive(const board_t* b, uint8_t* status) noexcept nogil
cdef uint32_t board_scratch_code(const board_t* b, int p) noexcept nogil
cdef int board_check_consistency(const board_t* b, char* msg, int msglen) noexcept nogil

# --- small helpers, inlined everywhere ---
cdef inline int other(int c) noexcept nogil:
    return 3 - c

cdef inline bint lib_has(const board_t* b, int h, int p) noexcept nogil:
    return (b.libs[h * b.nwords + (p >> 6)] >> (p & 63)) & 1

cdef inline int str_head(const board_t* b, int p) noexcept nogil:
    return b.head[p]

cdef inline uint32_t code_swap(uint32_t code) noexcept nogil:
    # exchange BLACK (1) and WHITE (2) in every 2-bit colour field; EMPTY and BORDER stay
    cdef uint32_t m = (code ^ (code >> 1)) & 0x5555
    return code ^ (m * 3)

cdef inline int point_of(const board_t* b, int row, int col) noexcept nogil:
    # row, col in 0..size-1, row 0 = the first line (GTP "1")
    return (row + 1) * b.W + col + 1

cdef class Board:
    cdef board_t* b
    cdef list _undo
    cdef public list moves
    cdef int _point(self, vertex) except -1
    cdef bytes _snapshot(self)
    cdef void _restore(self, bytes snap)

# --- the two tests a playout makes for every candidate, inlined ---
cdef inline int board_basic_legality(const board_t* b, int p, int c) noexcept nogil:
    """MOVE_OK, MOVE_OCCUPIED, MOVE_KO (simple ko) or MOVE_SUICIDE for a point p on the board."""
    cdef int k, q, col
    if b.color[p] != EMPTY:
        return MOVE_OCCUPIED
    if p == b.ko and c == b.to_move:
        return MOVE_KO
    for k in range(4):
        q = p + b.off[k]
        col = b.color[q]
        if col == EMPTY:
            return MOVE_OK
        if col == c:
            if b.nlibs[b.head[q]] > 1:
                return MOVE_OK
        elif col == 3 - c:
            if b.nlibs[b.head[q]] == 1:
                return MOVE_OK
    return MOVE_SUICIDE

cdef inline bint board_is_legal(const board_t* b, int p, int c) noexcept nogil:
    """Legal under simple ko (no superko check): what playouts use. PASS is legal."""
    if p == PASS:
        return 1
    return board_basic_legality(b, p, c) == MOVE_OK

cdef extern from *:
    int _popcount32 "__builtin_popcount"(unsigned int) nogil

cdef inline bint board_is_eye(const board_t* b, int p, int c) noexcept nogil:
    """An eye of c for playouts: the 4 neighbours are c or border, and the diagonals hold at
    most one opponent stone (none at the edge). Read from the 3x3 code with bit operations:
    a field is c-or-border when its bit (c-1) is set; BORDER is 3."""
    cdef unsigned int code = b.code[p]
    cdef unsigned int orth = code & 0xFF
    cdef unsigned int diag = (code >> 8) & 0xFF
    cdef unsigned int want = 0x55 if c == BLACK else 0xAA
    cdef unsigned int lo, hi, opp, border
    if (orth & want) != want:
        return 0
    lo = diag & 0x55
    hi = (diag >> 1) & 0x55
    border = lo & hi
    opp = (hi & ~lo) if c == BLACK else (lo & ~hi)
    return _popcount32(opp) + (1 if border else 0) < 2
