"""tools/review.py: reading lz-genmove_analyze answers, the drop of each move, and a real review
by gammago of a short game whose last move loses three stones."""
import json

import pytest

from tool_module import load_tool

review = load_tool("review")

# Black's three stones D5 E5 F5 are in atari (their last liberty F4) when Black, move 15,
# plays A1; White captures them with F4, and the game goes on to move 22. Black's other moves
# are ordinary stones. The reviewer resigns (--resign 0.3) where Black is to move from move 20
# on (no resignation comes earlier), and the review goes on past its resignation.
BLUNDER = ("(;GM[1]FF[4]SZ[9]KM[7]RE[W+R]PB[black]PW[white]"
           ";B[de];W[ce];B[ee];W[dd];B[fe];W[ed];B[cc];W[fd];B[gc];W[ge];B[cg];W[df];B[gg];W[ef]"
           ";B[ai];W[ff];B[eg];W[hh];B[bb];W[hb];B[bh];W[fh])")


def test_best_line_takes_the_first_entry_of_the_last_report():
    text = ("info move D4 visits 10 winrate 5100 prior 100 order 0 pv D4\n"
            "info move E5 visits 90 winrate 4321 prior 200 order 0 pv E5 D4 "
            "info move D4 visits 50 winrate 4000 prior 100 order 1 pv D4\n"
            "play E5")
    assert review.best_line(text) == ("E5", pytest.approx(0.4321), "E5")
    assert review.best_line("play pass") == ("pass", None, "pass")
    # an engine that resigns still reports its best move; it played nothing
    assert review.best_line(text.replace("play E5", "play resign")) == (
        "E5", pytest.approx(0.4321), "resign")


def test_drops_are_the_movers_loss():
    moves = [("b", "E5"), ("w", "C3"), ("b", "A1")]
    rates = [0.6, 0.45, 0.5, None]
    # move 1: Black 0.6 before, 1 - 0.45 after; move 2: White 0.45, 1 - 0.5; move 3: no after
    got = review.drops(rates, moves)
    assert [(k, c) for k, c, _ in got] == [(0, "b"), (1, "w")]
    assert [d for _, _, d in got] == [pytest.approx(0.05), pytest.approx(-0.05)]


def test_reviewed_colours():
    from gammago.go.sgf import Game
    g = Game(name="x", size=9, komi=7, handicap=0, result="W+R")
    assert review.reviewed_colours("loser", g) == {"b"}
    assert review.reviewed_colours("winner", g) == {"w"}
    assert review.reviewed_colours("w", g) == {"w"}
    assert review.reviewed_colours("both", g) == {"b", "w"}
    g.result = "0"
    assert review.reviewed_colours("loser", g) == {"b", "w"}


def test_review_of_a_short_game_by_gammago(tmp_path, capsys):
    sgf = tmp_path / "blunder.sgf"
    sgf.write_text(BLUNDER)
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;GM[1]SZ[9];B[ee];W[ee])")          # an illegal move: skipped, named
    out = tmp_path / "r.json"
    review.main([str(bad), str(sgf), "--engine", "gammago --playouts 800 --seed {seed} --quiet --resign 0.3",
                 "--top", "4", "--boards", "--json", str(out)])
    printed = capsys.readouterr()
    assert "bad.sgf" in printed.err
    assert "reviewed 1 of 1 games" in printed.out
    rec = json.loads(out.read_text())["games"]
    assert len(rec) == 1
    g = rec[0]
    assert g["reviewed"] == ["b"] and len(g["moves"]) == 22
    assert len(g["winrate"]) == 23 and all(0 <= w <= 1 for w in g["winrate"])
    assert len(g["best"]) == 23
    # the win rate is the side to move's: White, to capture three stones, wins; then Black,
    # three stones down, loses
    assert g["winrate"][15] > 0.7 and g["winrate"][16] < 0.25
    worst = g["worst"]
    assert len(worst) == 4 and all(w["colour"] == "b" for w in worst)
    assert [w["drop"] for w in worst] == sorted((w["drop"] for w in worst), reverse=True)
    for w in worst:
        k = w["move"] - 1
        assert w["played"] == g["moves"][k][1]
        assert w["drop"] == pytest.approx(g["winrate"][k] - (1 - g["winrate"][k + 1]))
    assert (worst[0]["move"], worst[0]["played"], worst[0]["best"]) == (15, "A1", "F4")
    assert worst[0]["drop"] > 0.2
    assert "Black to move" in printed.out                    # --boards
