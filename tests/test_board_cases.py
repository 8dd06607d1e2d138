"""Hand-made positions for the hard cases of the board: snapback, multi-string captures,
suicide, ko, positional superko (a triple ko), seki scoring, Benson pass-alive groups, the exact
3x3 codes at edges and corners, every board size, undo and setup stones."""
import pytest

from gammago.go.board import Board, IllegalMoveError

COLUMNS = "ABCDEFGHJKLMNOPQRST"


def from_diagram(rows, komi=7.5, to_move="b"):
    """A board from a diagram, top row first (as printed): X black, O white, . empty."""
    rows = [r.replace(" ", "") for r in rows]
    n = len(rows)
    assert all(len(r) == n for r in rows), "diagram must be square"
    black, white = [], []
    for i, r in enumerate(rows):
        line = n - i
        for col, ch in enumerate(r):
            v = f"{COLUMNS[col]}{line}"
            if ch == "X":
                black.append(v)
            elif ch == "O":
                white.append(v)
            else:
                assert ch == ".", ch
    b = Board(n, komi)
    b.setup(black=black, white=white)
    b.to_move = to_move
    b.check()
    return b


def state(b):
    return (b.hash, b.to_move, list(b.moves), b.ko, b.captures("b"), b.captures("w"),
            b.showboard(), sorted(b.legal_moves()))


# ---------------------------------------------------------------------------------------------
# Captures
# ---------------------------------------------------------------------------------------------
def test_snapback():
    b = from_diagram([
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        "X X X X . . . . .",
        "X O O O X . . . .",
        "X O . . X . . . .",
    ])
    assert b.liberties("B2") == ["C1", "D1"]
    assert b.play("C1") == 0                 # the throw-in: a black stone in atari
    assert b.liberties("C1") == ["D1"] and b.liberties("B2") == ["D1"]
    assert b.play("D1") == 1                 # White takes it ...
    assert b.ko is None                      # ... with a 5-stone string: no ko
    assert b.string("D1") == ["B1", "B2", "C2", "D1", "D2"]
    assert b.liberties("D1") == ["C1"]
    assert b.play("C1") == 5                 # ... and Black snaps back
    assert b.color_at("C1") == "b"
    for v in ("B1", "B2", "C2", "D1", "D2"):
        assert b.color_at(v) == "."
    assert b.captures("b") == 5 and b.captures("w") == 1
    assert sorted(b.liberties("C1")) == ["B1", "C2", "D1"]
    b.check()


def test_one_move_captures_three_strings():
    b = from_diagram([
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . X . . .",
        ". . . . X O X . .",
        ". . . X O . O X .",
        ". . . X O X X . .",
        ". . . . X . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
    ])
    # three white strings (E5-E4, F6, G5), each with F5 as its only liberty
    for v in ("E5", "F6", "G5"):
        assert b.liberties(v) == ["F5"], v
    assert b.string("E5") == ["E4", "E5"]
    before = b.hash
    assert b.play("F5") == 4
    assert b.stones("w") == []
    assert b.ko is None
    assert b.hash != before
    # F5 joined F4-G4; the captured points are its liberties now
    assert b.string("F5") == ["F4", "F5", "G4"]
    assert b.liberties("F5") == ["E4", "E5", "F3", "F6", "G3", "G5", "H4"]
    b.check()


def test_suicide_of_a_multi_stone_string_is_illegal():
    b = from_diagram([
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        "O O O O . . . . .",
        ". X X O . . . . .",
    ])
    assert b.liberties("B1") == ["A1"]
    before = state(b)
    assert b.check_move("A1", "b") == "suicide"
    assert not b.is_legal("A1", "b")
    assert "A1" not in b.legal_moves("b")
    with pytest.raises(IllegalMoveError, match="suicide"):
        b.play("A1", "b")
    assert state(b) == before
    b.check()
    # the same point captures for White
    assert b.check_move("A1", "w") is None
    assert b.play("A1", "w") == 2
    assert b.stones("b") == []
    b.check()


def test_single_stone_suicide_and_filling_the_last_liberty_that_captures():
    b = from_diagram([
        ". O . . .",
        "O . . . .",
        ". . . . .",
        ". . . . .",
        ". . . . .",
    ])
    assert b.check_move("A5", "b") == "suicide"
    assert b.check_move("A5", "w") is None     # own eye: legal for the owner
    b.setup(black=["B4", "C5", "A3"])
    b.check()
    # now White A4 and B5 are each in atari; Black A5 captures both
    assert b.check_move("A5", "b") is None
    assert b.play("A5", "b") == 2
    b.check()


# ---------------------------------------------------------------------------------------------
# Ko and superko
# ---------------------------------------------------------------------------------------------
KO_ROWS = [
    ". . . . . . . . .",
    ". . . . . . . . .",
    ". . . . . . . . .",
    ". . . X O . . . .",
    ". . X O . O . . .",
    ". . . X O . . . .",
    ". . . . . . . . .",
    ". . . . . . . . .",
    ". . . . . . . . .",
]


def test_ko_recapture_is_illegal_until_a_threat_is_exchanged():
    b = from_diagram(KO_ROWS)
    assert b.play("E5") == 1                 # Black takes the ko (captures D5)
    assert b.ko == "D5"
    assert b.check_move("D5") == "ko"        # White may not retake at once
    assert b.check_move("D5", superko=False) == "ko"
    assert "D5" not in b.legal_moves()
    before = state(b)
    with pytest.raises(IllegalMoveError, match="ko"):
        b.play("D5")
    assert state(b) == before
    b.play("J9")                             # White's ko threat elsewhere
    assert b.ko is None
    b.play("J8")                             # Black answers
    assert b.check_move("D5") is None        # now White may retake
    assert b.play("D5") == 1
    assert b.ko == "E5"
    assert b.check_move("E5") == "ko"        # and Black in turn may not
    b.check()


def test_ko_ends_with_a_pass_and_filling_the_ko_is_legal():
    b = from_diagram(KO_ROWS)
    b.play("E5")
    b.play("pass")                           # a pass lifts the simple-ko ban
    assert b.ko is None
    # Black may fill the ko himself; afterwards White has no ko point
    assert b.check_move("D5") is None
    b.play("D5")
    assert b.ko is None
    b.check()


def test_capturing_two_stones_is_not_a_ko():
    b = from_diagram([
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        "X X X O . . . . .",
        "X O O . O . . . .",
    ])
    assert b.liberties("B1") == ["D1"]
    assert b.play("D1") == 2                 # a lone stone with one liberty, but 2 captured
    assert b.liberties("D1") == ["C1"]
    assert b.ko is None
    assert b.check_move("C1") is None        # White may take back at once
    assert b.play("C1") == 1
    assert b.ko is None                      # C1 has two liberties: no ko either
    b.check()


# Three kos on 19x19 (same as tests/test_board_gnugo.py, where GNU Go confirms the verdict).
TRIPLE_KO_BLACK = ["D4", "E3", "E5", "D10", "E9", "E11", "D16", "E15", "E17", "F10"]
TRIPLE_KO_WHITE = ["F3", "F5", "G4", "F9", "F11", "G10", "F15", "F17", "G16", "E4", "E16"]
TRIPLE_KO_CYCLE = ["F4", "E10", "F16", "E4", "F10", "E16"]


def test_triple_ko_positional_superko():
    b = Board(19)
    b.setup(black=TRIPLE_KO_BLACK, white=TRIPLE_KO_WHITE)
    start = b.hash
    seen = {start}
    for v in TRIPLE_KO_CYCLE[:5]:
        assert b.check_move(v) is None, v     # each capture is a legal simple-ko move
        assert b.play(v) == 1
        assert b.hash not in seen
        seen.add(b.hash)
        b.check()
    last = TRIPLE_KO_CYCLE[5]
    assert b.to_move == "w"
    assert b.ko == "E10"                     # the simple ko forbids another point ...
    assert b.check_move(last, superko=False) is None
    assert b.check_move(last) == "superko"   # ... but this one repeats the starting position
    assert last not in b.legal_moves()
    assert last in b.legal_moves(superko=False)
    before = state(b)
    with pytest.raises(IllegalMoveError, match="superko"):
        b.play(last)
    assert state(b) == before
    # after a pass by White and one by Black the cycle position is still forbidden
    b.play("pass")
    b.play("pass")
    assert b.check_move(last) == "superko"
    b.check()


def test_double_ko_with_a_pass_repeats_a_position():
    # two kos; Black takes K1, White takes K2, Black passes, White retakes K1: Black's
    # recapture of K2 (legal by simple ko) would recreate the starting position
    b = Board(19)
    b.setup(black=["D4", "E3", "E5", "D10", "E9", "E11", "F10"],
            white=["F3", "F5", "G4", "F9", "F11", "G10", "E4"])
    start = b.hash
    b.play("F4")            # Black captures E4
    b.play("E10")           # White captures F10
    b.play("pass")
    b.play("E4")            # White captures F4
    assert b.check_move("F10", superko=False) is None
    assert b.check_move("F10") == "superko"
    b.play("pass")
    b.play("pass")
    assert b.check_move("F10", "b") == "superko"
    # a position that never occurred is fine: Black may fill elsewhere
    assert b.check_move("A1", "b") is None
    assert start != b.hash
    b.check()


# ---------------------------------------------------------------------------------------------
# Scoring and life
# ---------------------------------------------------------------------------------------------
SEKI_ROWS = [
    ". X . O . O X . X",
    "X X X O O O X X X",
    "O O O X X X X . X",
    ". O O X X X X X X",
    "O O O X X X X X X",
    "O O O X X X X X X",
    "O O O X X X X . X",
    ". O O X X X X X X",
    "O O O X X X X X X",
]


def test_seki_scoring_counts_shared_liberty_as_neutral():
    b = from_diagram(SEKI_ROWS, komi=7.5)
    # the seki: Black A8-C8,B9 (eye A9) and White D9,D8-F8,F9 (eye E9) share the liberty C9
    assert b.liberties("B8") == ["A9", "C9"]
    assert b.liberties("D9") == ["C9", "E9"]
    assert b.check_move("E9", "b") == "suicide"
    assert b.check_move("A9", "w") == "suicide"
    area = b.area()
    assert area["C9"] == "."                 # shared liberty: nobody's
    assert area["A9"] == "b" and area["E9"] == "w"   # the seki eyes: their owner's
    assert area["H9"] == area["H7"] == area["H3"] == "b"
    assert area["A6"] == area["A2"] == "w"
    # 49 black stones + 4 black points, 24 white stones + 3 white points, 1 neutral
    assert sum(1 for o in area.values() if o == "b") == 53
    assert sum(1 for o in area.values() if o == "w") == 27
    assert b.score() == 53 - 27 - 7.5
    # playing the shared liberty is self-atari: the other side then captures
    b.play("C9", "b")
    assert b.liberties("B8") == ["A9"]
    assert b.play("A9", "w") == 5
    b.check()


def test_seki_groups_are_not_pass_alive_but_the_two_eyed_walls_are():
    b = from_diagram(SEKI_ROWS)
    alive = b.pass_alive()
    black_wall = [v for v in b.stones("b") if v not in ("A8", "B8", "C8", "B9")]
    white_wall = [v for v in b.stones("w") if v not in ("D9", "D8", "E8", "F8", "F9")]
    expected = {v: "b" for v in black_wall + ["H9", "H7", "H3"]}
    expected.update({v: "w" for v in white_wall + ["A6", "A2"]})
    assert alive == expected


def test_pass_alive_two_eyes_versus_one_eye():
    b = from_diagram([
        ". . . . . X . . .",
        ". . . . . X X X X",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . O . . . .",
        ". . . . . . . . .",
        "X X X X X . . . .",
        ". X O . X . . . .",
    ])
    alive = b.pass_alive()
    # bottom left: one block with two vital regions, A1 and {C1 (a White stone), D1}: the block
    # and the regions it encloses, the White stone included, are Black's
    block = ["A2", "B2", "C2", "D2", "E2", "B1", "E1"]
    assert b.string("A2") == sorted(block)
    assert alive == {v: "b" for v in block + ["A1", "C1", "D1"]}
    # top right: one eye of three points ({G9, H9, J9} is one region): not pass-alive
    top = ["F9", "F8", "G8", "H8", "J8"]
    for v in top + ["G9", "H9", "J9"]:
        assert v not in alive
    # H9 splits it into two one-point eyes: pass-alive
    b.setup(black=["H9"])
    alive = b.pass_alive()
    for v in top + ["G9", "H9", "J9"]:
        assert alive.get(v) == "b", v
    assert "G7" not in alive and "E4" not in alive


def test_pass_alive_needs_every_empty_point_of_a_region_to_be_a_liberty():
    # the wall encloses the 3x3 corner A1-C3 and the one-point eye E3; the corner's inner points
    # (A1, B2, ...) are not liberties of the wall, so Benson does not count it as an eye
    b = from_diagram([
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        ". . . . . . . . .",
        "X X X X X . . . .",
        ". . . X . X . . .",
        ". . . X X X . . .",
        ". . . X X X . . .",
    ])
    assert len(b.string("A4")) == len(b.stones("b"))
    assert b.pass_alive() == {}
    # a Black line B1-B3 splits the corner into A1-A3 and C1-C3, both made of liberties
    b.setup(black=["B1", "B2", "B3"])
    expected = {v: "b" for v in b.stones("b") + ["A1", "A2", "A3", "C1", "C2", "C3", "E3"]}
    assert b.pass_alive() == expected
    b.check()


def test_empty_board_scores_nothing_and_komi():
    for n in (5, 9, 19):
        b = Board(n, 6.5)
        assert b.score() == -6.5
        assert set(b.area().values()) == {"."}
        assert b.pass_alive() == {}


# ---------------------------------------------------------------------------------------------
# 3x3 codes: exact values against the layout documented in gammago/go/board.pxd
# ---------------------------------------------------------------------------------------------
# off[k] for k = 0..7 is -W, +1, +W, -1, -W+1, +W+1, +W-1, -W-1 on an array whose row index grows
# with the GTP line number: as (d_line, d_column) that is
NEIGHBOUR_STEPS = [(-1, 0), (0, 1), (1, 0), (0, -1), (-1, 1), (1, 1), (1, -1), (-1, -1)]
EMPTY, BLACK, WHITE, BORDER = 0, 1, 2, 3


def reference_code(b, vertex):
    """The 3x3 code of an empty point recomputed in Python from colours and liberties."""
    n = b.size
    col, line = COLUMNS.index(vertex[0]), int(vertex[1:])
    code = 0
    for k, (dl, dc) in enumerate(NEIGHBOUR_STEPS):
        l2, c2 = line + dl, col + dc
        if 1 <= l2 <= n and 0 <= c2 < n:
            v2 = f"{COLUMNS[c2]}{l2}"
            colour = ".bw".index(b.color_at(v2))
            if k < 4 and colour and len(b.liberties(v2)) == 1:
                code |= 1 << (16 + k)
        else:
            colour = BORDER
        code |= colour << (2 * k)
    return code


def test_codes_corner_and_edge_exact_values():
    b = Board(9)
    # A1: border at k = 0 (line 0), 3 (column -1), 4, 6, 7; empty elsewhere
    assert b.code("A1") == 0xF3C3
    # J9 (the opposite corner): border at k = 1, 2, 4, 5, 6
    assert b.code("J9") == (3 << 2) | (3 << 4) | (3 << 8) | (3 << 10) | (3 << 12) == 0x3F3C
    # E1 (bottom edge): border at k = 0, 4, 7
    assert b.code("E1") == 0xC303
    # A5 (left edge): border at k = 3, 6, 7
    assert b.code("A5") == (3 << 6) | (3 << 12) | (3 << 14) == 0xF0C0
    # E5 (centre): all empty
    assert b.code("E5") == 0
    for v in ("A1", "J9", "E1", "A5", "E5", "J1", "A9"):
        assert b.code(v) == reference_code(b, v), v


def test_codes_with_stones_and_atari_bits():
    b = Board(9)
    b.play("B1")          # Black B1
    b.play("C1")          # White C1
    # A1: k1 (east) is Black B1, not in atari (liberties A1, B2)
    assert b.code("A1") == 0xF3C3 | (BLACK << 2)
    b.play("pass")
    b.play("B2")          # White B2: Black B1 is now in atari on A1
    assert b.liberties("B1") == ["A1"]
    assert b.code("A1") == 0xF3C3 | (BLACK << 2) | (WHITE << 10) | (1 << 17)
    # A2: k0 (line below) empty A1, k1 White B2 (3 liberties), k5 empty B3, k4 Black B1
    assert b.code("A2") == (WHITE << 2) | (BLACK << 8) | (3 << 6) | (3 << 12) | (3 << 14)
    # D1: k3 (west) White C1 with liberties D1, C2: not in atari
    assert b.code("D1") == (3 << 0) | (WHITE << 6) | (3 << 8) | (3 << 14)
    for v in b.legal_moves() + ["A1"]:
        assert b.code(v) == reference_code(b, v), v
    # White captures B1: A1 and B1 codes change, atari bit gone
    assert b.play("A1", "w") == 1
    assert b.code("B1") == reference_code(b, "B1")
    assert b.code("B1") & 0xF0000 == 0
    b.check()


def test_codes_everywhere_in_a_played_position():
    import random
    for n in (5, 9, 13, 19):
        rng = random.Random(n)
        b = Board(n)
        for _ in range(n * n):
            moves = b.legal_moves(include_eyes=False)
            b.play(rng.choice(moves) if moves else "pass")
        for line in range(1, n + 1):
            for col in range(n):
                v = f"{COLUMNS[col]}{line}"
                if b.color_at(v) == ".":
                    assert b.code(v) == reference_code(b, v), (n, v)
        b.check()


# ---------------------------------------------------------------------------------------------
# Every size, undo, setup
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("n", range(5, 20))
def test_every_size_play_capture_score(n):
    b = Board(n, 0.5)
    top = COLUMNS[n - 1]
    assert len(b.legal_moves()) == n * n
    # capture in the lower-left corner and in the upper-right corner
    for v in ("A2", "A1"):
        b.play(v)
    assert b.play("B1") == 1                            # Black captures A1
    assert b.play(f"{top}{n - 1}") == 0                 # White
    assert b.play(f"{top}{n}") == 0                     # Black, in atari
    assert b.play(f"{COLUMNS[n - 2]}{n}") == 1          # White captures it
    b.check()
    assert sorted(b.stones("b")) == sorted(["A2", "B1"])
    assert sorted(b.stones("w")) == sorted([f"{top}{n - 1}", f"{COLUMNS[n - 2]}{n}"])
    assert b.captures("b") == 1 and b.captures("w") == 1
    # the two captured corners are enclosed; the rest of the empty board touches both colours
    area = b.area()
    assert area["A1"] == "b" and area[f"{top}{n}"] == "w"
    assert sum(1 for o in area.values() if o == ".") == n * n - 6
    assert b.score() == -0.5
    # fill: a Black wall on line 3 makes lines 1-2 Black's; the rest still touches White
    for col in range(n):
        if b.color_at(f"{COLUMNS[col]}3") == ".":
            b.play(f"{COLUMNS[col]}3", "b")
    b.check()
    area = b.area()
    black_area = sum(1 for o in area.values() if o == "b")
    assert black_area == 3 * n
    assert b.score() == 3 * n - 3 - 0.5
    assert len(b.showboard().splitlines()) == n + 3


def test_undo_restores_hash_captures_ko_and_history():
    b = from_diagram(KO_ROWS)
    h_setup = b.hash
    b.play("A1")
    b.play("A2")
    s0 = state(b)
    assert b.play("E5") == 1                  # Black takes the ko
    s1 = state(b)
    assert b.ko == "D5" and b.captures("b") == 1
    b.undo()
    assert state(b) == s0
    b.check()
    assert b.play("E5") == 1                  # replay: same position, same hash
    assert state(b) == s1
    b.undo()
    b.undo()
    b.undo()
    assert b.hash == h_setup and b.moves == [] and b.to_move == "b"
    # undo of a pass restores the pass count and the ko
    b.play("A1")
    b.play("A2")
    b.play("E5")
    b.play("pass")
    assert b.ko is None and b.passes == 1
    b.undo()
    assert b.ko == "D5" and b.passes == 0
    b.check()


def test_undo_of_superko_history():
    b = Board(19)
    b.setup(black=TRIPLE_KO_BLACK, white=TRIPLE_KO_WHITE)
    for v in TRIPLE_KO_CYCLE[:5]:
        b.play(v)
    assert b.check_move(TRIPLE_KO_CYCLE[5]) == "superko"
    b.undo()
    b.undo()
    # two moves back, the sixth capture is not even a capture yet; replaying restores the ban
    b.play(TRIPLE_KO_CYCLE[3])
    b.play(TRIPLE_KO_CYCLE[4])
    assert b.check_move(TRIPLE_KO_CYCLE[5]) == "superko"
    b.check()


def test_setup_stones_equal_played_stones():
    black = ["C3", "D4", "Q16", "R17"]
    white = ["C4", "D3", "Q17", "R16"]
    a = Board(19)
    a.setup(black=black, white=white)
    p = Board(19)
    for bv, wv in zip(black, white):
        p.play(bv)
        p.play(wv)
    assert a.hash == p.hash
    assert a.to_array().tolist() == p.to_array().tolist()
    assert a.moves == [] and a.to_move == "b"
    assert a.ko is None
    a.check()
    # setup is not a move: nothing to undo
    with pytest.raises(ValueError, match="undo"):
        a.undo()
    # stones set up after moves join the position; the history restarts there
    p.setup(black=["K10"])
    assert p.color_at("K10") == "b"
    p.check()
