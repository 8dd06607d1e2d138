"""SGF reading: files, directories, archives, handicap setup, bad records reported and skipped."""
import io
import tarfile
from pathlib import Path

import pytest

from gammago.go import sgf
from gammago.go.board import Board

DATA = Path(__file__).parent / "data"
GOOD = sorted(p for p in DATA.glob("*.sgf"))


def test_reads_the_fixture_games():
    games = list(sgf.iter_games(GOOD))
    assert len(games) == 5
    g = games[0]
    assert g.size == 19 and g.handicap == 0 and g.komi == 5.5
    assert g.moves[:3] == [("b", "R10"), ("w", "R16"), ("b", "K17")]   # ;B[qj];W[qd];B[jc]
    assert g.result == "B+Resign" and g.winner == "b"
    board = g.replay()
    assert len(board.moves) == len(g.moves)


def test_handicap_setup_is_honoured():
    (g,) = sgf.iter_games([DATA / "handicap"])
    assert g.handicap == 2 and g.size == 9
    assert sorted(g.setup_black) == ["C7", "G3"]
    assert g.to_move == "w" and g.moves[0][0] == "w"
    b = g.board()
    assert b.color_at("C7") == "b" and b.color_at("G3") == "b" and b.to_move == "w"
    assert b.moves == []          # setup stones are not moves
    g.replay()


def test_bad_records_are_reported_and_skipped(capsys):
    items = list(sgf.iter_games([DATA], errors="yield"))
    errors = {Path(e.name).name: e.problem for e in items if isinstance(e, sgf.GameError)}
    games = [g for g in items if isinstance(g, sgf.Game)]
    assert len(games) == 7                      # five corpus games, the handicap game, regress/capture.sgf
    assert set(errors) == {"truncated.sgf", "garbage.sgf", "occupied.sgf", "size25.sgf"}
    assert "move 5" in errors["occupied.sgf"] and "occupied" in errors["occupied.sgf"]
    assert "size 25" in errors["size25.sgf"]
    # the default reports on stderr, naming the file, and goes on
    games = list(sgf.iter_games([DATA / "bad", *GOOD]))
    assert len(games) == 5
    err = capsys.readouterr().err
    assert "truncated.sgf" in err and "garbage.sgf" in err
    with pytest.raises(sgf.SgfError, match="truncated.sgf"):
        list(sgf.iter_games([DATA / "bad" / "truncated.sgf"], errors="raise"))


def test_archives_are_read_in_memory(tmp_path):
    arch = tmp_path / "games.tar.xz"
    with tarfile.open(arch, "w:xz") as tf:
        for p in GOOD[:3] + [DATA / "bad" / "garbage.sgf"]:
            tf.add(p, arcname=f"sub/{p.name}")
        info = tarfile.TarInfo("sub/readme.txt")
        info.size = 2
        tf.addfile(info, io.BytesIO(b"hi"))
    items = list(sgf.iter_games([arch], errors="yield"))
    assert [type(i).__name__ for i in items] == ["Game", "Game", "Game", "GameError"]
    assert items[0].name == f"{arch}:sub/{GOOD[0].name}"
    assert items[3].name.endswith(":sub/garbage.sgf")
    assert len(list(sgf.iter_games([arch], max_games=2))) == 2


def test_a_collection_gives_each_of_its_games(tmp_path):
    """A file of several game trees (GoGui, Sabaki, gammago match's games.sgf) yields every
    game, named file#N, from a file and from an archive; a damaged one is reported by name."""
    singles = list(sgf.iter_games(GOOD[:3]))
    coll = tmp_path / "three.sgf"
    coll.write_bytes(b"\n".join(p.read_bytes().strip() for p in GOOD[:3]) + b"\n")
    games = list(sgf.iter_games([coll]))
    assert [g.name for g in games] == [f"{coll}#{i}" for i in (1, 2, 3)]
    assert [g.moves for g in games] == [g.moves for g in singles]
    assert [g.result for g in games] == [g.result for g in singles]
    arch = tmp_path / "c.tar.gz"
    with tarfile.open(arch, "w:gz") as tf:
        tf.add(coll, arcname="three.sgf")
    assert [g.name for g in sgf.iter_games([arch])] == [f"{arch}:three.sgf#{i}" for i in (1, 2, 3)]
    # one game with variations stays one game
    var = tmp_path / "var.sgf"
    var.write_bytes(b"(;GM[1]FF[4]SZ[9];B[ee](;W[cc];B[gg])(;W[gc]))")
    (g,) = sgf.iter_games([var])
    assert g.name == str(var) and g.moves == [("b", "E5"), ("w", "C7"), ("b", "G3")]
    # a damaged collection: an error that names the file, and the batch goes on
    bad = tmp_path / "damaged.sgf"
    bad.write_bytes(coll.read_bytes()[:-200])
    items = list(sgf.iter_games([bad, GOOD[0]], errors="yield"))
    assert isinstance(items[0], sgf.GameError) and items[0].name == str(bad)
    assert "the rest does not" in items[0].problem
    assert isinstance(items[1], sgf.Game) and len(items) == 2


def test_unreadable_sources_are_reported(tmp_path):
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"not a tar file at all")
    items = list(sgf.iter_games([broken, tmp_path / "missing.sgf"], errors="yield"))
    assert len(items) == 2 and all(isinstance(i, sgf.GameError) for i in items)
    assert "broken.tar.gz" in items[0].name and "missing.sgf" in items[1].name


# ---------------------------------------------------------------------------------------------
# Records that are positions: setup nodes after the root, a move that superko forbids.
# Game.position (what GTP loadsgf plays) is checked against GNU Go's own loadsgf.
# ---------------------------------------------------------------------------------------------
SETUP_BEFORE_MOVES = b"(;GM[1]FF[4]SZ[9]KM[7];AB[cc][gg]AW[cg]PL[W];W[ee];B[dd];W[ef])"
# moves, then a setup node that adds stones, then moves
SETUP_IN_GAME = (b"(;GM[1]FF[4]SZ[9]KM[7]AB[cc];W[ee];B[dd];W[ef];B[de]"
                 b";AB[gg][hh]AW[bb];W[cd];B[fc])")


def _sgf_of_moves(size, moves):
    cols = "abcdefghjklmnopqrst"
    def point(v):
        col, row = cols.index(v[0].lower()), int(v[1:])
        return "abcdefghijklmnopqrs"[col] + "abcdefghijklmnopqrs"[size - row]
    return (f"(;GM[1]FF[4]SZ[{size}]KM[7.5]"
            + "".join(f";{c.upper()}[{point(v)}]" for c, v in moves) + ")").encode()


def _gnugo_position(gnugo_path, path, upto=None):
    from gammago.arena.gtp_process import GtpProcess
    with GtpProcess([gnugo_path, "--mode", "gtp", "--chinese-rules"], "gnugo") as g:
        load = f"loadsgf {path}" + ("" if upto is None else f" {upto + 1}")
        (ok, colour), (_, black), (_, white) = g.pipeline([load, "list_stones black",
                                                           "list_stones white"])
        assert ok, colour
    return set(black.split()), set(white.split()), colour.strip().lower()[0]


def _our_position(game, upto=None):
    black, white, to_move, moves = game.position(upto)
    b = Board(game.size, game.komi)
    b.setup(black=black, white=white)
    b.to_move = to_move
    for colour, vertex in moves:
        b.play(vertex, colour)
    b.check()
    return set(b.stones("b")), set(b.stones("w")), b.to_move[0]


@pytest.mark.gnugo
def test_setup_nodes_load_as_gnu_go_loads_them(gnugo_path, tmp_path):
    before = sgf.parse_game("before.sgf", SETUP_BEFORE_MOVES)
    # a setup node before the first move is part of the setup: the record is still a game
    assert before.setup_black == ["C7", "G3"] and before.setup_white == ["C3"]
    assert before.to_move == "w" and not before.setups
    assert len(before.replay().moves) == 3
    # one after the first move makes it a position: refused where a game of moves is needed
    with pytest.raises(sgf.SgfError, match="setup stones inside the game"):
        sgf.parse_game("in_game.sgf", SETUP_IN_GAME)
    in_game = sgf.parse_game("in_game.sgf", SETUP_IN_GAME, setup_in_game=True)
    assert list(in_game.setups) == [4]
    with pytest.raises(sgf.SgfError, match="position"):
        in_game.replay()
    for name, data, game in (("before.sgf", SETUP_BEFORE_MOVES, before),
                             ("in_game.sgf", SETUP_IN_GAME, in_game)):
        path = tmp_path / name
        path.write_bytes(data)
        for upto in (None, 0, 1, 3, 4, 5):
            assert _our_position(game, upto) == _gnugo_position(gnugo_path, path, upto), (name, upto)
    black, white, to_move, moves = in_game.position()
    assert {"C7", "G3", "H2"} <= set(black) and {"E5", "B8"} <= set(white)
    assert to_move == "w" and moves == [("w", "C6"), ("b", "F7")]
    # AE empties points (GNU Go 3.8's loadsgf ignores AE, so this one is checked by hand)
    cleared = sgf.parse_game("ae.sgf", SETUP_IN_GAME.replace(b"AW[bb]", b"AW[bb]AE[ee][cc]"),
                             setup_in_game=True)
    black, white, to_move, moves = cleared.position()
    assert "C7" not in black and "E5" not in white and {"G3", "H2", "D6", "D5"} <= set(black)


@pytest.mark.gnugo
def test_a_move_superko_forbids_loads_as_gnu_go_loads_it(gnugo_path, tmp_path):
    """A record is a fact: its sixth triple-ko capture, which positional superko forbids, is
    loaded (as GNU Go's loadsgf does) on a board that starts afresh there."""
    from test_board_gnugo import TRIPLE_KO_CYCLE, triple_ko_setup_moves
    moves = triple_ko_setup_moves() + TRIPLE_KO_CYCLE + [("b", "K10")]
    path = tmp_path / "triple_ko.sgf"
    path.write_bytes(_sgf_of_moves(19, moves))
    game = sgf.parse_game(str(path), path.read_bytes())
    with pytest.raises(sgf.SgfError, match="superko"):
        game.replay()
    black, white, to_move, rest = game.position()
    assert rest == [("b", "K10")]             # the board starts afresh after the superko move
    for upto in (None, len(moves) - 2, len(moves) - 1):
        assert _our_position(game, upto) == _gnugo_position(gnugo_path, path, upto), upto
    # a move that is illegal without superko is still refused
    path.write_bytes(_sgf_of_moves(9, [("b", "E5"), ("w", "E5")]))
    with pytest.raises(sgf.SgfError, match="move 2 .* occupied"):
        sgf.parse_game("occupied.sgf", path.read_bytes()).position()


def test_a_board_size_the_board_does_not_take_is_named():
    for size in (4, 21):
        with pytest.raises(sgf.SgfError,
                           match=rf"big\.sgf: board size {size} is not supported \(5 to 19\)"):
            sgf.parse_game("big.sgf", f"(;SZ[{size}];B[aa])".encode())
    assert sgf.parse_game("five.sgf", b"(;SZ[5];B[aa])").size == 5


def test_bad_setup_stones_are_named():
    """A setup point that cannot be read, at the root or in a later node, and setup stones that
    leave a string without liberties, are refused with the record's name and what is wrong."""
    with pytest.raises(sgf.SgfError, match=r"root\.sgf: bad setup stones: a point off the board"):
        sgf.parse_game("root.sgf", b"(;SZ[9]AB[zz];B[ee])")
    with pytest.raises(sgf.SgfError, match=r"node\.sgf: bad setup stones in node 2: a point off"):
        sgf.parse_game("node.sgf", b"(;SZ[9];B[ee];AB[zz])", setup_in_game=True)
    game = sgf.parse_game("dead.sgf", b"(;SZ[9];B[ee];AW[aa];AB[ab][ba])", setup_in_game=True)
    with pytest.raises(sgf.SgfError, match=r"dead\.sgf: bad setup stones: .*suicide"):
        game.position()
