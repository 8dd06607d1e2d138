"""tools/play_on.py: which games were resigned and by whom, and real plays on from a resigned
position by gammago against gammago under the match referee (its start moves)."""
import json

import pytest
from sgfmill import sgf as sgfmill_sgf

from gammago.arena.match_record import MatchConfig
from gammago.arena.referee import play_game
from gammago.go.sgf import Game, parse_game
from tool_module import load_tool

play_on = load_tool("play_on")

# A short 9x9 game (the one of tests/test_review.py): Black resigned after White's move 22.
RESIGNED = ("(;GM[1]FF[4]SZ[9]KM[7]RE[W+R]PB[gammago 0.1.0]PW[GNU Go 3.8]"
            ";B[de];W[ce];B[ee];W[dd];B[fe];W[ed];B[cc];W[fd];B[gc];W[ge];B[cg];W[df];B[gg];W[ef]"
            ";B[ai];W[ff];B[eg];W[hh];B[bb];W[hb];B[bh];W[fh])")
ENGINE = "gammago --playouts 100 --seed {seed} --quiet --resign 0"


def test_who_resigned():
    g = Game(name="x", size=9, komi=7, handicap=0, result="W+R", players=("gammago", "GNU Go 3.8"))
    assert play_on.resigned_by(g) == "b"
    assert play_on.resigned_by(g, "gammago") == "b"
    assert play_on.resigned_by(g, "GNU") is None           # GNU Go did not resign this one
    g.result = "B+Resign"
    assert play_on.resigned_by(g, "gnu go") == "w"
    for result in ("B+3.5", "0", None, "W+T"):
        g.result = result
        assert play_on.resigned_by(g) is None


def test_players_read_from_the_record():
    g = parse_game("r.sgf", RESIGNED.encode())
    assert g.players == ("gammago 0.1.0", "GNU Go 3.8")
    assert parse_game("s.sgf", b"(;GM[1]SZ[9];B[ee])").players == ("", "")


def test_handicap_layouts():
    g = Game(name="x", size=9, komi=0.5, handicap=2, setup_black=["G7", "C3"])
    assert play_on.handicap_of(g) == 2
    g.setup_black = ["C3", "D4"]
    with pytest.raises(ValueError, match="fixed handicap"):
        play_on.handicap_of(g)
    g.setup_black, g.setup_white = [], ["E5"]
    with pytest.raises(ValueError, match="White setup"):
        play_on.handicap_of(g)


def test_an_illegal_start_is_refused_before_any_engine_starts():
    cfg = MatchConfig(engines={1: "no-such-engine-xyz", 2: "no-such-engine-xyz"},
                      names={1: "a", 2: "b"}, size=9, komi=7)
    with pytest.raises(ValueError, match=r"start move 2 \(w E5\)"):
        play_game(cfg, 0, start=[("b", "E5"), ("w", "E5")])


def test_play_on_a_resigned_game(tmp_path, capsys):
    rec = tmp_path / "lost.sgf"
    rec.write_text(RESIGNED)
    other = tmp_path / "scored.sgf"
    other.write_text(RESIGNED.replace("RE[W+R]", "RE[W+3]"))  # not a resignation: not played
    bad = tmp_path / "bad.sgf"
    bad.write_text("(;GM[1]SZ[9];B[ee];W[ee])")               # an illegal move: named, skipped
    out, games = tmp_path / "p.json", tmp_path / "games"
    play_on.main([str(bad), str(other), str(rec), "--player", "gammago", "--engine", ENGINE,
                  "--opponent", ENGINE, "--repeats", "2", "--parallel", "2", "--seed", "5",
                  "--sgf-dir", str(games), "--json", str(out)])
    printed = capsys.readouterr()
    assert "bad.sgf" in printed.err
    assert "1 resigned games, 2 plays" in printed.out
    rec_json = json.loads(out.read_text())
    plays = rec_json["plays"]
    assert [(p["repeat"], p["seed"]) for p in plays] == [(0, 5), (1, 6)]
    won = 0
    for p in plays:
        assert p["name"].endswith("lost.sgf") and p["resigned"] == "b" and p["after_move"] == 22
        assert p["reason"] in ("score", "resign", "max-moves") and p["moves_added"] >= 1
        assert p["winner"] in ("b", "w", "draw")
        assert p["outcome"] == {"b": 1.0, "w": 0.0, "draw": 0.5}[p["winner"]]
        won += p["outcome"] == 1.0
    s = rec_json["summary"]
    assert (s["games"], s["plays"], s["won"]) == (1, 2, won)
    assert s["won"] + s["drawn"] + s["lost"] == 2
    # the game written begins with the resigned game's 22 moves, then the play on
    written = sorted(games.glob("*.sgf"))
    assert [w.name for w in written] == ["game_0001.sgf", "game_0002.sgf"]
    assert sorted(p["sgf"] for p in plays) == [str(w) for w in written]
    game = sgfmill_sgf.Sgf_game.from_bytes(written[0].read_bytes())
    moves = [n.get_move() for n in game.get_main_sequence()[1:]]
    original = [n.get_move() for n in sgfmill_sgf.Sgf_game.from_bytes(RESIGNED.encode())
                .get_main_sequence()[1:]]
    assert moves[:22] == original and len(moves) > 22
    assert moves[22][0] == "b"                                # Black, who resigned, moves next


def test_nothing_to_play_on(tmp_path):
    rec = tmp_path / "lost.sgf"
    rec.write_text(RESIGNED)
    with pytest.raises(SystemExit, match="no resigned game to play on by 'GNU'"):
        play_on.main([str(rec), "--player", "GNU", "--engine", ENGINE, "--opponent", ENGINE])
