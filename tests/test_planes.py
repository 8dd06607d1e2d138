"""The net's input planes (pyx/net/planes.pyx): meaning of each plane and equivariance under the
8 symmetries of the board."""
import random

import numpy as np
import pytest

from gammago.net import planes as P
from gammago.go.board import Board, format_vertex


def random_game(size, moves, seed):
    """A legal random game: the list of (colour, vertex) played (a few passes mixed in)."""
    rng = random.Random(seed)
    b = Board(size)
    played = []
    for _ in range(moves):
        legal = b.legal_moves(include_eyes=False)
        v = "pass" if not legal or rng.random() < 0.03 else rng.choice(legal)
        colour = b.to_move
        b.play(v)
        played.append((colour, v))
    return played


def sym_vertex(v, size, k):
    """The vertex that symmetry k of P.transform sends v to."""
    if v == "pass":
        return v
    b = Board(size)
    p = b.point(v)
    w = size + 2
    g = np.zeros((size, size))
    g[p // w - 1, p % w - 1] = 1
    row, col = np.argwhere(P.transform(g, k))[0]
    return format_vertex((int(row), int(col)))


def test_spec_constants():
    assert P.PLANES == len(P.PLANE_NAMES) == 20
    assert P.VERSION == 1
    assert P.HISTORY_MOVES == 8


@pytest.mark.parametrize("size,moves,seed", [(9, 60, 1), (19, 120, 2), (13, 90, 3)])
def test_planes_equivariant_under_the_8_symmetries(size, moves, seed):
    game = random_game(size, moves, seed)
    for k in range(8):
        a, b = Board(size), Board(size)
        for i, (colour, v) in enumerate(game):
            a.play(v, colour)
            b.play(sym_vertex(v, size, k), colour)
            if i % 7 == 0 or i == len(game) - 1:
                np.testing.assert_array_equal(P.planes(b), P.transform(P.planes(a), k),
                                              err_msg=f"symmetry {k} after move {i + 1}")


def test_transform_inverse_and_policy_roundtrip():
    rng = np.random.default_rng(0)
    x = rng.random((3, 5, 7, 7))
    pol = rng.random((3, 50))
    for k in range(8):
        np.testing.assert_array_equal(P.inverse_transform(P.transform(x, k), k), x)
        back = P.transform_policy(P.transform_policy(pol, 7, k), 7, k, inverse=True)
        np.testing.assert_array_equal(back, pol)
        assert P.transform_policy(pol, 7, k)[:, -1].tolist() == pol[:, -1].tolist()   # pass stays
    # the 8 transforms are distinct
    g = np.arange(49).reshape(7, 7)
    assert len({P.transform(g, k).tobytes() for k in range(8)}) == 8


def idx(board, v):
    n = board.size
    p = board.point(v)
    return (p // (n + 2) - 1, p % (n + 2) - 1)


def test_plane_meanings():
    b = Board(9)
    for v in ["C3", "D3", "C4", "pass", "E5"]:
        b.play(v)
    # Black: C3, C4, E5 (3 stones), White: D3; White to move
    x = P.planes(b)
    assert x.shape == (20, 9, 9) and x.dtype == np.float32
    own, opp, empty = x[0], x[1], x[2]
    assert own.sum() == 1 and own[idx(b, "D3")] == 1          # White's view
    assert opp.sum() == 3 and opp[idx(b, "C3")] == 1
    assert empty.sum() == 81 - 4
    np.testing.assert_array_equal(own + opp + empty, np.ones((9, 9)))
    # liberties: D3 has 3 (D2, E3, D4); the C3-C4 string has 5; E5 has 4
    assert x[5][idx(b, "D3")] == 1 and x[3:5].sum() == 0
    assert x[8][idx(b, "C3")] == 1 and x[8][idx(b, "E5")] == 1 and x[6:8].sum() == 0
    # history: 1 ply ago E5, 2 ago pass (empty plane), 3 ago C4, ..., 5 ago C3, nothing before
    assert x[9][idx(b, "E5")] == 1 and x[9].sum() == 1
    assert x[10].sum() == 0
    assert x[11][idx(b, "C4")] == 1
    assert x[13][idx(b, "C3")] == 1
    assert x[14:17].sum() == 0
    assert x[17].sum() == 0                     # no ko
    assert x[18].sum() == 0                     # White to move
    assert x[19].sum() == 81
    b.play("A1")
    assert P.planes(b)[18].sum() == 81          # Black to move


def test_atari_and_ko_planes():
    b = Board(9)
    # a ko: Black B2 A3? build the classic shape around C2/D2
    for v in ["C1", "D1", "B2", "E2", "C3", "D3", "pass", "C2"]:
        b.play(v)
    # White C2 is in atari (its only liberty D2); Black to move
    x = P.planes(b)
    assert x[6][idx(b, "C2")] == 1              # opponent string with 1 liberty
    b.play("D2")                                # Black captures C2: ko at C2 for White
    assert b.ko == "C2"
    x = P.planes(b)
    assert x[17][idx(b, "C2")] == 1 and x[17].sum() == 1
    assert x[1][idx(b, "D2")] == 1              # White's view: D2 is an opponent stone
    assert x[6][idx(b, "D2")] == 1              # ... in atari (ko)


def test_out_parameter_and_errors():
    b = Board(9)
    out = np.full((20, 9, 9), 7, np.float32)
    assert P.planes(b, out) is out
    assert out[2].sum() == 81 and out[0].sum() == 0
    with pytest.raises(ValueError, match="float32"):
        P.planes(b, np.zeros((20, 19, 19), np.float32))
