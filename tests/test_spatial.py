"""Large spatial patterns (gammago/moves/spatial.pxd): the hash is the same under the 8
symmetries and the colour swap, the off-board points count, the dictionary finds the largest
pattern, and a table with a dictionary round-trips through its file."""
import random

import numpy as np
import pytest

from gammago.moves import spatial as S
from gammago.go.board import Board, parse_vertex, format_vertex


def _transform(vertex, size, s):
    r, c = parse_vertex(vertex, size)
    if s & 4:
        r, c = c, r
    if s & 1:
        r = size - 1 - r
    if s & 2:
        c = size - 1 - c
    return format_vertex((r, c))


def _random_stones(size, n, seed):
    """The stones after n random moves, and the empty points (shuffled)."""
    rnd = random.Random(seed)
    b = Board(size)
    for _ in range(n):
        b.play(rnd.choice(b.legal_moves(include_eyes=False)))
    empty = [format_vertex((r, c)) for r in range(size) for c in range(size)
             if b.color_at(format_vertex((r, c))) == "."]
    rnd.shuffle(empty)
    return b.stones("b"), b.stones("w"), empty


def _board(size, black, white, to_move="b"):
    b = Board(size)
    b.setup(black=black, white=white)
    b.to_move = to_move
    return b


def test_points_and_sizes():
    assert len(S.POINTS) == 72
    assert S.SIZES == tuple(range(4, 11))
    # the rings d = 2, 3, 4 are the 12-point diamond
    assert sorted(p for p in S.POINTS if S.gridcular(*p) <= 4) == sorted(
        [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1),
         (2, 0), (-2, 0), (0, 2), (0, -2)])


@pytest.mark.parametrize("seed", range(4))
def test_hash_symmetric_and_colour_swapped(seed):
    size = 19
    black, white, empty = _random_stones(size, 90, seed)
    base = _board(size, black, white)
    for v in empty[:40]:
        h = S.hashes_at(base, v)
        assert len(set(h)) == len(h)                       # each size its own hash
        assert [x & 0xF for x in h] == list(S.SIZES)       # the size in the low bits
        for s in range(1, 8):
            t = _board(size, [_transform(x, size, s) for x in black],
                       [_transform(x, size, s) for x in white])
            assert S.hashes_at(t, _transform(v, size, s)) == h, (v, s)
        # colours swapped and the other side to move: the mover sees the same shape
        sw = _board(size, white, black, "w")
        assert S.hashes_at(sw, v) == h
        # the same stones for the other mover: another pattern (unless it is symmetric in colour)
        if S.hashes_at(base, v, "w") == h:
            assert not black and not white


def test_hash_from_scratch_equals_replayed():
    """The hash after a game's moves equals the hash of the same stones set up from scratch."""
    b = Board(19)
    rnd = random.Random(3)
    for _ in range(60):
        mv = rnd.choice(b.legal_moves(include_eyes=False))
        b.play(mv)
    black, white = b.stones("b"), b.stones("w")
    fresh = _board(19, black, white, b.to_move)
    for v in b.legal_moves()[:30]:
        assert S.hashes_at(b, v) == S.hashes_at(fresh, v)


def test_off_board_points_are_hashed():
    """An edge pattern differs from the same stones mid-board; a corner from a side."""
    mid = _board(19, ["K10"], ["L11"])
    edge = _board(19, ["K2"], ["L3"])
    hm, he = S.hashes_at(mid, "K9"), S.hashes_at(edge, "K1")
    assert all(a != b for a, b in zip(hm, he))
    # an empty board: the 4-4 point and the centre differ from size 6 on (d = 5 reaches the
    # edge from the 4-4 point only at ... the first line is 3 steps away: d = 6)
    empty = Board(19)
    c, star = S.hashes_at(empty, "K10"), S.hashes_at(empty, "D4")
    assert c[0] == star[0]          # d <= 4 does not reach the edge from D4
    assert c[-1] != star[-1]
    # every star point's pattern is the same (symmetry)
    assert len({tuple(S.hashes_at(empty, v)) for v in ("D4", "Q4", "D16", "Q16")}) == 1


def test_dictionary_largest_match():
    b = _board(19, ["D4", "Q16"], ["C6"])
    h = S.hashes_at(b, "D5")
    d = S.SpatialDict([h[0], h[3], 12345 << 4 | 5], [4, 7, 5])
    assert d.match(b, "D5") == (2, 7)            # the largest held: size 7
    assert d.lookup(h[0]) == 1
    assert d.match(b, "K10") == (0, 0)
    assert d.checksum == S.SpatialDict([h[0], h[3], 12345 << 4 | 5], [4, 7, 5]).checksum
    with pytest.raises(ValueError):
        S.SpatialDict([h[0], h[0]], [4, 4])


def test_counter_prunes_and_counts():
    c = S.HashCounter(1024)
    c.add(np.arange(1, 101, dtype=np.uint64).repeat(5))
    h, k = c.items(5)
    assert sorted(h.tolist()) == list(range(1, 101)) and set(k.tolist()) == {5}
    c.add(np.arange(1000, 3000, dtype=np.uint64))       # forces prunes of the singletons
    assert c.prunes >= 1
    h, k = c.items(5)
    assert sorted(h.tolist()) == list(range(1, 101))


def test_harvest_game_hashes_the_played_moves():
    moves = [("b", "D4"), ("w", "Q16"), ("b", "pass"), ("w", "C3")]
    out = S.harvest_game(Board(19), moves)
    assert out.shape == (3, len(S.SIZES))
    b = Board(19)
    assert out[0].tolist() == S.hashes_at(b, "D4")
    b.play("D4", "b")
    b.play("Q16", "w")
    b.play("pass", "b")
    assert out[2].tolist() == S.hashes_at(b, "C3", "w")
