"""SGF reading: files, directories, archives, handicap setup, bad records reported and skipped."""
import io
import tarfile
from pathlib import Path

import pytest

from gammago import sgf

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


def test_unreadable_sources_are_reported(tmp_path):
    broken = tmp_path / "broken.tar.gz"
    broken.write_bytes(b"not a tar file at all")
    items = list(sgf.iter_games([broken, tmp_path / "missing.sgf"], errors="yield"))
    assert len(items) == 2 and all(isinstance(i, sgf.GameError) for i in items)
    assert "broken.tar.gz" in items[0].name and "missing.sgf" in items[1].name
