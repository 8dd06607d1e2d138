"""Bad input to the Board: every refusal is a clear Python exception naming the reason, and the
board is exactly as it was (hash, side to move, move list, ko, captures, consistency)."""
import pytest

from gammago.go.board import Board, IllegalMoveError, parse_vertex


def snapshot(b):
    return (b.hash, b.to_move, list(b.moves), b.ko, b.passes, b.captures("b"), b.captures("w"),
            b.showboard(), sorted(b.legal_moves()))


@pytest.fixture
def ko_board():
    """9x9, Black has just taken a ko at E5 (White may not retake at D5)."""
    b = Board(9)
    b.setup(black=["D6", "C5", "D4"], white=["E6", "F5", "E4", "D5"])
    b.play("E5")
    assert b.ko == "D5"
    return b


def refuses(b, exc, match, call):
    before = snapshot(b)
    with pytest.raises(exc, match=match) as info:
        call()
    assert snapshot(b) == before
    b.check()
    return info.value


# ---------------------------------------------------------------------------------------------
# Illegal moves
# ---------------------------------------------------------------------------------------------
def test_occupied(ko_board):
    e = refuses(ko_board, IllegalMoveError, r"E5: occupied", lambda: ko_board.play("E5"))
    assert e.reason == "occupied" and e.vertex == "E5"
    refuses(ko_board, IllegalMoveError, "occupied", lambda: ko_board.play("d6", "w"))
    assert ko_board.check_move("E6") == "occupied"


def test_suicide():
    b = Board(5)
    b.setup(white=["A2", "B1"])
    e = refuses(b, IllegalMoveError, r"A1: suicide", lambda: b.play("A1"))
    assert e.reason == "suicide"
    # a multi-stone string: Black B1-C1 with its last liberty at A1
    b = Board(5)
    b.setup(black=["B1", "C1"], white=["A2", "B2", "C2", "D1"])
    refuses(b, IllegalMoveError, "suicide", lambda: b.play("A1"))


def test_ko(ko_board):
    e = refuses(ko_board, IllegalMoveError, r"D5: ko", lambda: ko_board.play("D5"))
    assert e.reason == "ko"


def test_superko():
    b = Board(19)
    b.setup(black=["D4", "E3", "E5", "D10", "E9", "E11", "D16", "E15", "E17", "F10"],
            white=["F3", "F5", "G4", "F9", "F11", "G10", "F15", "F17", "G16", "E4", "E16"])
    for v in ("F4", "E10", "F16", "E4", "F10"):
        b.play(v)
    e = refuses(b, IllegalMoveError, r"E16: superko", lambda: b.play("E16"))
    assert e.reason == "superko"


# ---------------------------------------------------------------------------------------------
# Off-board and malformed vertices and colours
# ---------------------------------------------------------------------------------------------
BAD_VERTICES = ["Z9", "A0", "I3", "", None, 5, "J10", "T19", "A", "3A", "A-1", "pass1", " ", "AA1",
                3.5, b"A1", ("A", 1)]


@pytest.mark.parametrize("vertex", BAD_VERTICES, ids=[repr(v) for v in BAD_VERTICES])
def test_bad_vertex_is_refused_everywhere(ko_board, vertex):
    b = ko_board
    e = refuses(b, ValueError, "vertex", lambda: b.play(vertex))
    assert not isinstance(e, IllegalMoveError) or e.reason == "off the board"
    assert repr(vertex) in str(e) or str(vertex) in str(e)
    refuses(b, ValueError, "vertex", lambda: b.check_move(vertex))
    refuses(b, ValueError, "vertex", lambda: b.is_legal(vertex))
    refuses(b, ValueError, "vertex", lambda: b.setup(black=[vertex]))
    refuses(b, ValueError, "vertex", lambda: b.color_at(vertex))
    refuses(b, ValueError, "vertex", lambda: b.point(vertex))


def test_vertices_that_are_fine():
    b = Board(9)
    for v in ("a1", " J9 ", "PASS", "Pass", "e5"):
        b.play(v)
    assert [m for _, m in b.moves] == ["A1", "J9", "pass", "pass", "E5"]
    assert parse_vertex("T19", 19) == (18, 18)


def test_pass_is_not_a_point(ko_board):
    b = ko_board
    for call in (lambda: b.color_at("pass"), lambda: b.liberties("pass"),
                 lambda: b.string("pass"), lambda: b.code("pass"),
                 lambda: b.is_eye("pass", "b"), lambda: b.setup(black=["pass"])):
        refuses(b, ValueError, "pass", call)


def test_no_stone_there(ko_board):
    refuses(ko_board, ValueError, "no stone at A1", lambda: ko_board.liberties("A1"))
    refuses(ko_board, ValueError, "no stone at A1", lambda: ko_board.string("A1"))


@pytest.mark.parametrize("colour", ["x", "", 0, 3, "bw", "blackish"])  # None means "side to move"
def test_bad_colour(ko_board, colour):
    b = ko_board
    refuses(b, ValueError, "color", lambda: b.play("A1", colour))
    refuses(b, ValueError, "color", lambda: b.check_move("A1", colour))
    refuses(b, ValueError, "color", lambda: b.legal_moves(colour))

    def set_to_move():
        b.to_move = colour
    refuses(b, ValueError, "color", set_to_move)


def test_bad_internal_point(ko_board):
    for p in (-1, -5, 10_000, 441, 11):    # 11 = row 1, column 0 of the 11-wide array: border
        refuses(ko_board, ValueError, "not on the board", lambda: ko_board.vertex(p))


# ---------------------------------------------------------------------------------------------
# Sizes, undo, setup
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("size", [4, 20, -1, 0, 1, 25])
def test_bad_sizes(size):
    with pytest.raises(ValueError, match=rf"board size {size} is not supported \(sizes 5 to 19\)"):
        Board(size)


def test_size_of_the_wrong_type():
    with pytest.raises(TypeError):
        Board("9")


def test_undo_with_nothing_to_undo():
    b = Board(9)
    refuses(b, ValueError, "no move to undo", b.undo)
    b.play("E5")
    b.undo()
    refuses(b, ValueError, "no move to undo", b.undo)
    b.setup(black=["C3"])
    refuses(b, ValueError, "no move to undo", b.undo)


def test_setup_on_an_occupied_point_changes_nothing(ko_board):
    b = ko_board
    # the bad stone comes after good ones: none of them may stay on the board
    e = refuses(b, IllegalMoveError, "E5: occupied", lambda: b.setup(black=["A1", "B1", "E5"]))
    assert e.reason == "occupied"
    refuses(b, IllegalMoveError, "occupied", lambda: b.setup(black=["A1"], white=["A1"]))
    refuses(b, IllegalMoveError, "occupied", lambda: b.setup(white=["G7", "D6"]))


def test_setup_suicide_changes_nothing():
    b = Board(9)
    b.setup(white=["A2", "B1"])
    refuses(b, IllegalMoveError, "A1: suicide", lambda: b.setup(black=["C3", "A1"]))


def test_setup_stones_never_capture():
    b = Board(9)
    b.setup(black=["A1"])
    e = refuses(b, ValueError, "capture", lambda: b.setup(white=["A2", "B1"]))
    assert "B1" in str(e) and "A1" in str(e)


def test_game_too_long_is_refused_cleanly():
    b = Board(5)
    n = 0
    with pytest.raises(ValueError, match="game too long") as info:
        while True:
            b.play("pass")
            n += 1
    assert n > 2000 and len(b.moves) == n
    assert not isinstance(info.value, IllegalMoveError)
    b.check()
    b.undo()
    b.play("pass")


def test_illegal_move_error_pickles_whole(ko_board):
    """A self-play worker process's error reaches its parent pickled."""
    import pickle
    try:
        ko_board.play("E5")
    except IllegalMoveError as e:
        back = pickle.loads(pickle.dumps(e))
        assert (back.vertex, back.reason, str(back)) == (e.vertex, e.reason, str(e))
    else:
        raise AssertionError("E5 is occupied")
