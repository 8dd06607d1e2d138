# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The net's input planes: ONE definition, used by tools/train_net.py and by gammago/net/runtime.py.

Plane spec, version PLANE_VERSION (also in models/README.md; a model records the version it was
trained on and gammago/net/runtime.py refuses any other). All planes are from the side to move's view,
shape [NPLANES, size, size], index [plane, row, col], row 0 = line 1, col 0 = column A:

    0  own stones              1  opponent stones          2  empty points
    3  own string, 1 liberty   4  own string, 2 liberties  5  own string, 3+ liberties
    6  opp string, 1 liberty   7  opp string, 2 liberties  8  opp string, 3+ liberties
    9..16  the move k = 1..8 plies ago (one point set; nothing for a pass or before the start)
    17 the simple-ko point the side to move may not play
    18 all ones when Black is to move, zeros when White is
    19 all ones (a constant: with the zero padding of convolutions it marks the board's edge)

The planes are equivariant under the 8 symmetries of the square: the planes of a transformed
position are the transformed planes (tests/test_planes.py checks it). `transform` and
`transform_policy` apply symmetry k to plane stacks and to policy vectors (points + pass).
"""
import numpy as np
from libc.string cimport memset
from gammago.go.board cimport board_t, Board, EMPTY, BLACK, WHITE, PASS, point_of

PLANES = NPLANES
VERSION = PLANE_VERSION
HISTORY_MOVES = HISTORY
PLANE_NAMES = (["own", "opponent", "empty"]
               + [f"own_libs_{k}" for k in ("1", "2", "3+")]
               + [f"opp_libs_{k}" for k in ("1", "2", "3+")]
               + [f"move_minus_{k}" for k in range(1, HISTORY + 1)]
               + ["ko", "black_to_move", "ones"])
NSYM = 8


cdef void planes_fill(const board_t* b, const int* recent, int nrecent, float* out) noexcept nogil:
    cdef int n = b.size
    cdef int area = n * n
    cdef int me = b.to_move
    cdef int row, col, p, i, c, libs, k
    memset(out, 0, NPLANES * area * sizeof(float))
    for row in range(n):
        for col in range(n):
            p = point_of(b, row, col)
            i = row * n + col
            c = b.color[p]
            if c == EMPTY:
                out[2 * area + i] = 1.0
            else:
                libs = b.nlibs[b.head[p]]
                if libs > 3:
                    libs = 3
                if c == me:
                    out[i] = 1.0
                    out[(2 + libs) * area + i] = 1.0
                else:
                    out[area + i] = 1.0
                    out[(5 + libs) * area + i] = 1.0
            out[19 * area + i] = 1.0
            if me == BLACK:
                out[18 * area + i] = 1.0
    if nrecent > HISTORY:
        nrecent = HISTORY
    for k in range(nrecent):
        p = recent[k]
        if p != PASS:
            row = p // b.W - 1
            col = p % b.W - 1
            out[(9 + k) * area + row * n + col] = 1.0
    if b.ko != PASS:
        row = b.ko // b.W - 1
        col = b.ko % b.W - 1
        out[17 * area + row * n + col] = 1.0


def recent_moves(Board board):
    """Points of the last HISTORY moves of board.moves, most recent first (0 for a pass)."""
    moves = board.moves
    out = []
    for k in range(1, min(HISTORY, len(moves)) + 1):
        out.append(board.point(moves[len(moves) - k][1]))
    return out


def planes(Board board, out=None):
    """The input planes of `board` for its side to move: float32 [NPLANES, size, size].
    `out`, if given, is a C-contiguous float32 array of that shape and is filled in place."""
    cdef board_t* b = board.b
    cdef int n = b.size
    cdef int recent[HISTORY]
    cdef int nrecent = 0
    cdef float[:, :, ::1] view
    for p in recent_moves(board):
        recent[nrecent] = p
        nrecent += 1
    if out is None:
        out = np.empty((NPLANES, n, n), dtype=np.float32)
    elif out.shape != (NPLANES, n, n) or out.dtype != np.float32:
        raise ValueError(f"planes: out must be float32 {(NPLANES, n, n)}, got {out.dtype} {out.shape}")
    view = out
    planes_fill(b, recent, nrecent, &view[0, 0, 0])
    return out


def transform(a, int k):
    """Symmetry k (0..7) of the last two axes of `a`: k & 3 quarter turns, then a transpose if
    k & 4. k = 0 is the identity."""
    a = np.rot90(a, k & 3, axes=(-2, -1))
    if k & 4:
        a = np.swapaxes(a, -2, -1)
    return np.ascontiguousarray(a)


def inverse_transform(a, int k):
    """Undo transform(., k)."""
    if k & 4:
        a = np.swapaxes(a, -2, -1)
    return np.ascontiguousarray(np.rot90(a, -(k & 3), axes=(-2, -1)))


def transform_policy(p, int size, int k, bint inverse=False):
    """Apply symmetry k (or its inverse) to policy vectors [..., size*size + 1]; pass stays last."""
    p = np.asarray(p)
    lead = p.shape[:-1]
    grid = p[..., :size * size].reshape(lead + (size, size))
    grid = inverse_transform(grid, k) if inverse else transform(grid, k)
    return np.concatenate([grid.reshape(lead + (size * size,)), p[..., size * size:]], axis=-1)
