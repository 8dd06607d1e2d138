import pytest

from gammago.board import Board, IllegalMoveError, parse_vertex, format_vertex


def test_sizes():
    for n in range(5, 20):
        b = Board(n)
        assert len(b.legal_moves()) == n * n
        b.check()
    for n in (4, 20, 0, -1):
        with pytest.raises(ValueError, match="size"):
            Board(n)


def test_vertices():
    assert parse_vertex("A1", 19) == (0, 0)
    assert parse_vertex("t19", 19) == (18, 18)
    assert parse_vertex("J1", 9) == (0, 8)
    assert parse_vertex("PASS", 9) is None
    assert format_vertex((0, 8)) == "J1"
    for bad in ("I5", "Z1", "A0", "A20", "", "5A", "A", "K1"):
        with pytest.raises(ValueError):
            parse_vertex(bad, 9)


def test_capture_and_illegal_moves_keep_state():
    b = Board(9)
    b.play("E5")
    b.play("E6")
    before = (b.hash, b.to_move, list(b.moves))
    with pytest.raises(IllegalMoveError, match="occupied"):
        b.play("E5")
    with pytest.raises(ValueError):
        b.play("Z9")
    assert (b.hash, b.to_move, list(b.moves)) == before
    b.check()
