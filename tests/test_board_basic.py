import pytest

from gammago.go.board import Board, IllegalMoveError, parse_vertex, format_vertex


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


def _eye_reference(b, vertex, color):
    """The playout eye rule written plainly: 4 neighbours own or off-board; diagonals hold at
    most one opponent stone, none when the point is on the edge."""
    from gammago.go.board import parse_vertex, format_vertex
    row, col = parse_vertex(vertex, b.size)

    def at(r, c):
        if 0 <= r < b.size and 0 <= c < b.size:
            return b.color_at(format_vertex((r, c)))
        return "#"

    own = color
    opp = "w" if color == "b" else "b"
    if any(at(row + dr, col + dc) not in (own, "#") for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))):
        return False
    diag = [at(row + dr, col + dc) for dr, dc in ((1, 1), (1, -1), (-1, 1), (-1, -1))]
    edge = "#" in diag
    return diag.count(opp) + (1 if edge else 0) < 2


def test_eye_rule_matches_reference():
    import random
    rnd = random.Random(5)
    checked = 0
    for size in (5, 7, 9):
        for _ in range(20):
            b = Board(size)
            for _ in range(rnd.randrange(size * size)):
                moves = b.legal_moves()
                if not moves:
                    break
                b.play(rnd.choice(moves))
            for row in range(size):
                for col in range(size):
                    v = format_vertex((row, col))
                    if b.color_at(v) == ".":
                        for c in ("b", "w"):
                            assert b.is_eye(v, c) == _eye_reference(b, v, c), (v, c, b.showboard())
                            checked += 1
    assert checked > 1000
