# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The light tail of the gamma rollouts (declarations: gammago/rollout/tail.pxd): cheap rule-based moves
after a rollout's first gamma moves, beside the light (uniform) policy of pyx/rollout/playout.pyx."""
from libc.string cimport memset
from libc.stdint cimport uint8_t, uint32_t
from gammago.go.board cimport (board_t, Board, board_is_legal, board_is_eye, board_first_lib,
                            EMPTY, BLACK, WHITE, BORDER, PASS, MAX_PTS)
from gammago.rollout.playout cimport light_choose
from gammago.core.rng cimport rng_t, rng_below
from gammago.go.tactics cimport libs_after, tac_selfatari, tac_bad_selfatari

# ---------------------------------------------------------------------------------------------
# The light tail (gamma_policy_t.light_after): after a playout's first light_after moves the
# gamma weights are no longer kept (their upkeep is most of a move's cost) and moves follow a
# few rules, as Mogo's and Pachi's playouts do: capture the string of the last move when it is
# in atari; save a string of the mover that the last move put in atari, by extending when that
# leaves it two liberties or by capturing a string next to it (one of these, uniformly; reading
# whether the extension runs into a working ladder did not pay for its cost:
# docs/notebook/experiments/prior-full.md);
# else (TAIL_SHAPES in gamma_policy_t.tail, the rules word) one of Mogo's 3x3 shapes among the
# 8 neighbours of the last move (_tail_shape, uniformly); otherwise a uniform random legal
# point that fills no own eye and is no bad self-atari of a string of two or more stones
# (TAIL_LONE: nor of a lone stone; tac_bad_selfatari: a killing shape in the
# opponent's eye space, or a snapback, is a good one; TAIL_TRIES draws, then any legal non-eye
# point, or with TAIL_SEKI a uniform choice among the points that are no bad self-atari of two
# or more stones and a pass when there is none, so that a seki stands: _random_scan). The
# 2-liberty and capture-anywhere rules, which won neither in games nor in the rollouts'
# accuracy, stand at c38f670 (docs/notebook/experiments/tail-2lib.md); TAIL_LONE:
# docs/notebook/experiments/tail-lone.md; TAIL_SEKI: docs/notebook/experiments/tail-seki.md.
# ---------------------------------------------------------------------------------------------
cdef inline bint _joins_selfatari(const board_t* b, int p, int c) noexcept nogil:
    """c playing p joins a string of c in a self-atari that is no good (tac_bad_selfatari: a
    killing shape in the opponent's eye is allowed)."""
    cdef int k
    for k in range(4):
        if b.color[p + b.off[k]] == c:
            return tac_bad_selfatari(b, p, c)
    return 0

cdef inline int _keep_playable(const board_t* b, int* cand, int n, int c) noexcept nogil:
    """Keep the points of cand[0..n-1] that c may play (legal, not c's own eye), in order;
    their count."""
    cdef int i, p, m = 0
    for i in range(n):
        p = cand[i]
        if board_is_legal(b, p, c) and not board_is_eye(b, p, c):
            cand[m] = p
            m += 1
    return m

cdef inline int _pick(const int* cand, int n, rng_t* r) noexcept nogil:
    """One of cand[0..n-1], uniformly; -1 when n is 0."""
    if n == 0:
        return -1
    return cand[rng_below(r, n)]

cdef int _tail_reply(const board_t* b, rng_t* r) noexcept nogil:
    """A rule's answer to the last move (see above), or -1 when no rule applies."""
    cdef int c = b.to_move, last = b.last, k, q, h, p, s, k2, q2, n = 0
    cdef int cand[24]
    if last == PASS or b.color[last] != 3 - c:
        return -1
    h = b.head[last]
    if b.nlibs[h] == 1:
        cand[n] = board_first_lib(b, h)
        n += 1
    for k in range(4):
        q = last + b.off[k]
        if b.color[q] != c or b.nlibs[b.head[q]] != 1 or n >= 20:
            continue
        h = b.head[q]
        p = board_first_lib(b, h)
        if libs_after(b, p, c, 2) >= 2:
            cand[n] = p
            n += 1
        s = h
        while n < 20:
            for k2 in range(4):
                q2 = s + b.off[k2]
                if b.color[q2] == 3 - c and b.nlibs[b.head[q2]] == 1 and n < 20:
                    cand[n] = board_first_lib(b, b.head[q2])
                    n += 1
            s = b.next[s]
            if s == h:
                break
    return _pick(cand, _keep_playable(b, cand, n, c), r)

cdef uint8_t MOGO_SHAPES[8192]   # bit per 16-bit colour code (board_t.code): a Mogo shape

# Mogo's 3x3 playout shapes (Gelly, Wang, Munos, Teytaud 2006, "Modification of UCT with
# patterns in Monte-Carlo Go", fig. 2-5, as Michi lists them), the move at the centre: X and O
# stones of either side, . empty, ? anything, x not X (empty, O or edge), o not O, # off the
# board. They match in every rotation and reflection and with the colours swapped.
TAIL_SHAPES_SRC = (
        ("XOX", "...", "???"),   # hane enclosing a stone
        ("XO.", "...", "?.?"),   # hane that leaves no cut
        ("XO?", "X..", "x.?"),   # magari
        (".O.", "X..", "..."),   # diagonal attachment
        ("XO?", "O.o", "?o?"),   # unprotected cut
        ("XO?", "O.X", "???"),   # peeping cut
        ("?X?", "O.O", "ooo"),   # cut between two stones
        ("OX?", "o.O", "???"),   # keima cut
        ("X.?", "O.?", "###"),   # edge: chase
        ("OX?", "X.O", "###"),   # edge: block the cut
        ("?X?", "x.O", "###"),   # edge: block the connection
        ("?XO", "x.x", "###"),   # edge: sagari
        ("?OX", "X.O", "###"),   # edge: cut
)

def _tail_shape_codes():
    """The colour codes (board_t.code & 0xFFFF) of the empty points where one of
    TAIL_SHAPES_SRC matches: numpy bool[65536]."""
    import numpy as np
    allowed = {"X": (BLACK,), "O": (WHITE,), ".": (EMPTY,), "?": (EMPTY, BLACK, WHITE, BORDER),
               "x": (EMPTY, WHITE, BORDER), "o": (EMPTY, BLACK, BORDER), "#": (BORDER,)}
    # grid cell (row, col) -> field k of the code (board.pxd: k 0..3 orthogonal -W, +1, +W, -1;
    # 4..7 diagonal -W+1, +W+1, +W-1, -W-1)
    field = {(0, 1): 0, (1, 2): 1, (2, 1): 2, (1, 0): 3, (0, 2): 4, (2, 2): 5, (2, 0): 6, (0, 0): 7}
    match = np.zeros(65536, dtype=bool)
    swap = str.maketrans("XOxo", "OXox")
    for rows in TAIL_SHAPES_SRC:
        variants = set()
        grid = tuple(rows)
        for _ in range(4):
            grid = tuple("".join(grid[2 - c][r] for c in range(3)) for r in range(3))  # rotate
            for g in (grid, tuple(r[::-1] for r in grid)):                             # mirror
                variants.add(g)
                variants.add(tuple(r.translate(swap) for r in g))
        for g in variants:
            # every code the variant allows: the sums over the fields of colour << 2k
            codes = np.zeros(1, dtype=np.int64)
            for (r, c), k in field.items():
                codes = (codes[:, None] | (np.array(allowed[g[r][c]]) << (2 * k))[None, :]).ravel()
            match[codes] = True
    return match

def tail_shape_moves(Board board not None):
    """The points where the light tail would answer the last move with a Mogo shape
    (_shape_points), as vertices; [] when it would not."""
    cdef int cand[8]
    cdef int i, n = _shape_points(board.b, cand)
    return [board.vertex(cand[i]) for i in range(n)]

def _fill_tail_shapes():
    cdef int i
    m = _tail_shape_codes()
    memset(MOGO_SHAPES, 0, sizeof(MOGO_SHAPES))
    for i in range(65536):
        if m[i]:
            MOGO_SHAPES[i >> 3] |= <uint8_t>(1 << (i & 7))

_fill_tail_shapes()

cdef inline bint _shape_move(const board_t* b, int q, int c) noexcept nogil:
    """q is empty, a Mogo shape matches there, and c may play it: legal, not c's own eye, no
    self-atari (a single stone included)."""
    cdef uint32_t code
    if b.color[q] != EMPTY:
        return 0
    code = b.code[q] & 0xFFFF
    if not (MOGO_SHAPES[code >> 3] >> (code & 7)) & 1:
        return 0
    return board_is_legal(b, q, c) and not board_is_eye(b, q, c) and not tac_selfatari(b, q, c)

cdef int _shape_points(const board_t* b, int* cand) noexcept nogil:
    """The empty 8 neighbours of the last move where a Mogo shape matches (MOGO_SHAPES) and the
    side to move may play (_shape_move), into cand[0..7]; their count."""
    cdef int c = b.to_move, last = b.last, k, q, n = 0
    if last == PASS:
        return 0
    for k in range(8):
        q = last + b.off[k]
        if _shape_move(b, q, c):
            cand[n] = q
            n += 1
    return n

cdef int _tail_shape(const board_t* b, rng_t* r) noexcept nogil:
    """A uniform choice among the shape points around the last move (_shape_points); -1 when
    there is none."""
    cdef int cand[8]
    return _pick(cand, _shape_points(b, cand), r)

cdef inline bint _random_ok(const board_t* b, int p, int c, int rules) noexcept nogil:
    """The empty point p is a random move the tail permits c: legal, not c's own eye, no bad
    self-atari of a string of two or more stones (TAIL_LONE in rules: nor of a lone stone)."""
    return not board_is_eye(b, p, c) and board_is_legal(b, p, c) and not tail_refused(b, p, c,
                                                                                   rules)

cdef int _random_scan(const board_t* b, rng_t* r) noexcept nogil:
    """A uniform choice among every empty point that is a random move without the lone-stone
    rule (_random_ok), or PASS when there is none (TAIL_SEKI): when the only moves left fill the
    shared liberties of a seki, the playout ends with the seki standing, as Pachi's and Fuego's
    playouts do, instead of breaking it with a self-atari."""
    cdef int c = b.to_move, i, p, m = 0
    cdef int cand[MAX_PTS]
    for i in range(b.nempty):
        p = b.empty[i]
        if _random_ok(b, p, c, 0):
            cand[m] = p
            m += 1
    p = _pick(cand, m, r)
    return p if p >= 0 else PASS

cdef int _tail_random(board_t* b, rng_t* r, int rules) noexcept nogil:
    """The tail's random move: TAIL_TRIES uniform draws of an empty point the rules permit
    (_random_ok), then any legal non-eye point (with TAIL_SEKI the scan or a pass); PASS when no
    point is empty."""
    cdef int c = b.to_move, i, p, n = b.nempty
    if n == 0:
        return PASS
    for i in range(TAIL_TRIES):
        p = b.empty[rng_below(r, n)]
        if _random_ok(b, p, c, rules):
            return p
    if rules & TAIL_SEKI:
        return _random_scan(b, r)
    return light_choose(NULL, b, r)

cdef int tail_choose(board_t* b, rng_t* r, int rules) noexcept nogil:
    """The light tail's move for b.to_move; rules: the TAIL_* bits that are on (TAIL_SHAPES:
    after the capture and escape rules the Mogo shapes around the last move; TAIL_LONE: a random
    move may not be a bad self-atari of a lone stone either; TAIL_SEKI: when the random draws
    find no move, pass rather than break a seki)."""
    cdef int p = _tail_reply(b, r)
    if p >= 0:
        return p
    if rules & TAIL_SHAPES:
        p = _tail_shape(b, r)
        if p >= 0:
            return p
    return _tail_random(b, r, rules)

cdef bint tail_refused(const board_t* b, int p, int c, int rules) noexcept nogil:
    return tac_bad_selfatari(b, p, c) if rules & TAIL_LONE else _joins_selfatari(b, p, c)

# the rules' names, as the command line and the tools give them
RULES = {"shapes": TAIL_SHAPES, "lone": TAIL_LONE, "seki": TAIL_SEKI, "refuse": TAIL_REFUSE}
RULES_DEFAULT = TAIL_RULES_DEFAULT

def rules(*names):
    """The rules word (an int of TAIL_* bits) of the named rules (names of RULES)."""
    cdef int word = 0
    for name in names:
        if name not in RULES:
            raise ValueError(f"no light-tail rule {name!r} (rules: {', '.join(RULES)})")
        word |= RULES[name]
    return word

def rule_names(int word):
    """The names of the rules on in a rules word, in RULES' order."""
    if word & ~sum(RULES.values()):
        raise ValueError(f"not a light-tail rules word: {word}")
    return tuple(name for name, bit in RULES.items() if word & bit)
