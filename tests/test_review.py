"""`gammago review`: a game's positions searched, the record written back with a comment on
every move, the graph, the summary, --resume, and bad records (malformed, illegal moves)."""
import json
import shutil
from pathlib import Path

import pytest
from sgfmill import sgf as sgfmill_sgf

from gammago import cli
from gammago.engine import review, review_output

DATA = Path(__file__).resolve().parent / "data"

# Black's three stones D5 E5 F5 are in atari (their last liberty F4) when Black, move 15,
# plays A1; White captures them with F4, and the game goes on to move 22.
BLUNDER = ("(;GM[1]FF[4]SZ[9]KM[7]RE[W+R]PB[black]PW[white]"
           ";B[de];W[ce];B[ee];W[dd];B[fe];W[ed];B[cc];W[fd];B[gc];W[ge];B[cg];W[df];B[gg];W[ef]"
           ";B[ai];W[ff];B[eg];W[hh];B[bb];W[hb];B[bh];W[fh])")
FAST = ["--mode", "rollouts", "--playouts", "60", "--seed", "3", "--no-progress"]


def _review(capsys, *argv):
    rc = cli.main(["review", *map(str, argv)])
    got = capsys.readouterr()
    return rc, got.out, got.err


def _moves(path):
    """[(colour, comment, properties)] of each move node of an SGF file, read by sgfmill."""
    game = sgfmill_sgf.Sgf_game.from_bytes(Path(path).read_bytes())
    out = []
    for node in game.get_main_sequence():
        colour, _ = node.get_move()
        if colour is not None:
            out.append((colour, node.get("C") if node.has_property("C") else "",
                        set(node.properties())))
    return out


def _positions(outdir, stem):
    return json.loads((Path(outdir) / f"{stem}.review.json").read_text())["positions"]


def test_a_game_reviewed_by_rollouts(tmp_path, capsys):
    (tmp_path / "blunder.sgf").write_text(BLUNDER)
    out = tmp_path / "out"
    rc, stdout, stderr = _review(capsys, tmp_path / "blunder.sgf", "--out", out, *FAST)
    assert rc == 0, stderr
    moves = _moves(out / "blunder.sgf")
    assert len(moves) == 22
    for i, (colour, text, _) in enumerate(moves, 1):
        assert text.startswith(f"Move {i} {colour.upper()}"), text
        assert "gammago: " in text and "Lost: " in text and "Black " in text
    assert any(props & {"BM", "DO"} for _, _, props in moves)
    assert (out / "blunder.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    positions = _positions(out, "blunder")
    assert sorted(map(int, positions)) == list(range(23))
    assert all(0 <= p["winrate"] <= 1 and p["search"] == "rollouts" for p in positions.values())
    # the summary: each side's points lost by phase, the worst moves
    assert "blunder.sgf: 22 moves reviewed, 9x9" in stdout
    assert "opening 1-10" in stdout and "middle 11-40" in stdout and "endgame 41-" in stdout
    assert "  Black " in stdout and "  White " in stdout and "worst moves:" in stdout
    assert stdout.count("    move ") == review.TOP
    assert "reviewed 1 of 1 games (23 positions searched now)" in stdout
    assert "searched by rollouts" in stderr


def test_mode_auto_plays_the_net_on_9x9_and_rollouts_below(tmp_path, capsys):
    games = tmp_path / "games"
    games.mkdir()
    (games / "nine.sgf").write_text(BLUNDER)
    (games / "seven.sgf").write_text("(;GM[1]FF[4]SZ[7]KM[9];B[dd];W[cc];B[ec];W[ce])")
    out = tmp_path / "out"
    rc, stdout, stderr = _review(capsys, games, "--out", out, "--mode", "auto", "--playouts", "24",
                                 "--max-moves", "4", "--no-progress")
    assert rc == 0, stderr
    assert "nine.sgf: 9x9, searched by net-root " in stderr
    assert "seven.sgf: 7x7, searched by rollouts" in stderr
    for stem in ("nine", "seven"):
        moves = _moves(out / f"{stem}.sgf")
        assert all(text.startswith("Move ") for _, text, _ in moves[:4])
        assert (out / f"{stem}.png").exists()
    assert "(net-root gammago-net-" in (out / "nine.sgf").read_text()
    assert "reviewed 2 of 2 games" in stdout


def test_resume_searches_only_the_positions_left(tmp_path, capsys):
    (tmp_path / "g.sgf").write_text(BLUNDER)
    out = tmp_path / "out"
    args = [tmp_path / "g.sgf", "--out", out, *FAST, "--max-moves", "10"]
    rc, stdout, _ = _review(capsys, *args, "--max-positions", "4")
    assert rc == 0
    first = _positions(out, "g")
    assert sorted(map(int, first)) == [0, 1, 2, 3]
    assert not (out / "g.sgf").exists()                  # written once the game is reviewed
    assert "4 of 11 positions reviewed; --resume goes on" in stdout
    rc, stdout, stderr = _review(capsys, *args, "--resume")
    assert rc == 0, stderr
    assert "4 positions kept" in stderr and "7 to search" in stderr
    assert "(7 positions searched now)" in stdout
    second = _positions(out, "g")
    assert sorted(map(int, second)) == list(range(11))
    for k, p in first.items():                           # the kept ones were not searched again
        assert second[k]["time"] == p["time"]
    assert min(second[str(k)]["time"] for k in range(4, 11)) >= max(p["time"] for p in first.values())
    assert len(_moves(out / "g.sgf")) == 22
    assert sum(1 for _, text, _ in _moves(out / "g.sgf") if text) == 10
    # other settings are not mixed into a review
    rc, _, stderr = _review(capsys, *args, "--resume", "--playouts", "61")
    assert rc == 1 and "other settings (playouts)" in stderr


def test_bad_records_are_named_and_the_others_reviewed(tmp_path, capsys):
    games = tmp_path / "games"
    games.mkdir()
    shutil.copy(DATA / "bad" / "garbage.sgf", games / "a-garbage.sgf")
    # move 4 is played on a stone
    (games / "b-illegal.sgf").write_text("(;GM[1]FF[4]SZ[9]KM[7];B[ee];W[cc];B[gg];W[ee];B[cg])")
    (games / "c-good.sgf").write_text(BLUNDER)
    out = tmp_path / "out"
    rc, stdout, stderr = _review(capsys, games, "--out", out, *FAST, "--max-moves", "6")
    assert rc == 1
    assert "a-garbage.sgf: not a readable SGF record" in stderr
    assert "b-illegal.sgf: move 4: W E5 is illegal" in stderr
    assert not (out / "a-garbage.sgf").exists()
    illegal = _moves(out / "b-illegal.sgf")
    assert [bool(text) for _, text, _ in illegal] == [True, True, True, True, False]
    assert illegal[2][1].startswith("Move 3 B G3")
    assert illegal[3][1].startswith("Not reviewed: W E5 is illegal")
    assert sorted(map(int, _positions(out, "b-illegal"))) == [0, 1, 2, 3]
    assert "stopped at move 4" in stdout
    assert len(_moves(out / "c-good.sgf")) == 22
    assert "reviewed 2 of 2 games" in stdout and "2 record(s) with problems" in stdout


def test_points_lost_are_the_movers():
    job = review.Job("x", "x", b"", None, [("b", "E5"), ("w", "C3"), ("w", "D4")])
    pos = lambda colour, w, s, best="A1": {"colour": colour, "winrate": w, "score": s,   # noqa: E731
                                           "best": best, "playouts": 10}
    # Black to move: 60%, +3; White then 30%, -2 (Black 70%, +2); White again (a second
    # move in a row): 40%, -5; then Black 75%, +6
    job.positions = {0: pos("b", 0.6, 3.0, "E5"), 1: pos("w", 0.3, -2.0), 2: pos("w", 0.4, -5.0),
                     3: pos("b", 0.75, 6.0)}
    m = review.move_reviews(job, bad=3.0)
    assert [x["lost"] for x in m] == [pytest.approx(1.0), pytest.approx(3.0), pytest.approx(1.0)]
    assert [x["lost_winrate"] for x in m] == [pytest.approx(-0.1), pytest.approx(-0.1),
                                              pytest.approx(0.15)]
    assert [x["mark"] for x in m] == [None, "DO", None]
    assert "(the move played)" in review_output.move_comment(m[0])
    job.positions[3] = pos("b", 0.9, 20.0)
    assert review.move_reviews(job, bad=3.0)[2]["mark"] == "BM2"        # lost 15 >= 4 * 3


def test_phases_by_board_size():
    assert review_output.phase_limits(19) == (45, 180)
    assert review_output.phase_limits(9) == (10, 40)
    assert [review_output.phase_of(n, 9) for n in (1, 10, 11, 40, 41)] == [
        "opening", "opening", "middle", "middle", "endgame"]


def test_scheduler_spreads_the_positions_over_a_cluster(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    (tmp_path / "g.sgf").write_text(BLUNDER)
    args = [tmp_path / "g.sgf", *FAST, "--max-moves", "8"]
    rc, _, stderr = _review(capsys, *args, "--out", tmp_path / "local")
    assert rc == 0, stderr
    with distributed.LocalCluster(n_workers=1, processes=False, threads_per_worker=2,
                                  dashboard_address=None) as c:
        rc, stdout, stderr = _review(capsys, *args, "--out", tmp_path / "cluster",
                                     "--scheduler", c.scheduler_address, "--chunk", "3")
    assert rc == 0, stderr
    assert "(9 positions searched now)" in stdout
    local, spread = _positions(tmp_path / "local", "g"), _positions(tmp_path / "cluster", "g")
    assert sorted(map(int, spread)) == list(range(9))
    # each position's search is its own (a fresh tree, the position's seed): the same anywhere
    assert [(spread[k]["best"], spread[k]["winrate"]) for k in sorted(spread, key=int)] == \
        [(local[k]["best"], local[k]["winrate"]) for k in sorted(local, key=int)]
    assert len(_moves(tmp_path / "cluster" / "g.sgf")) == 22
