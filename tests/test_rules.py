"""The rules (gammago/go/rules.py): names and KataGo's JSON objects, the GTP commands that set them
(kgs-rules, kata-get-rules, kata-set-rules, kata-set-rule) and the analysis engine's `rules`
field; Japanese counting (territory + prisoners, no points in seki) against GNU Go's own
final_score, whose default is Japanese; and the end of a game under Japanese rules: no move
into one's own territory once the score is settled, a pass instead.
"""
import io
import json

import pytest

from gammago.go import rules
from gammago.go import scoring
from gammago.protocol.json_analysis import AnalysisServer
from gammago.engine.settings import EngineConfig
from gammago.engine.engine import Engine
from gammago.protocol.gtp import Gtp
from gammago.arena.gtp_process import GtpProcess


def make_gtp(**kw):
    return Gtp(Engine(EngineConfig(mode="rollouts", playouts=60, seed=1, max_nodes=20000, **kw)),
               io.StringIO())


def ok(g, line):
    reply = g.execute(line)
    assert reply.startswith("="), f"{line!r} -> {reply!r}"
    return reply[1:].strip()


def err(g, line):
    reply = g.execute(line)
    assert reply.startswith("?"), f"{line!r} -> {reply!r}"
    return reply[1:].strip()


# --- names, objects, the komi the search plays ---------------------------------------------
def test_rule_sets_objects_and_what_the_engine_plays():
    assert rules.named("JP").territory and rules.named("japanese").tax == "SEKI"
    assert rules.named("tromp_taylor") == rules.Rules()               # the default
    assert rules.DEFAULT == "tromp-taylor" and EngineConfig().rules == "tromp-taylor"
    assert rules.named("aga").handicap_bonus(3) == 2 and rules.named("chinese").handicap_bonus(3) == 3
    assert rules.named("chinese").handicap_bonus(1) == 0 and rules.named("japanese").handicap_bonus(4) == 0
    custom = rules.parse('{"scoring":"TERRITORY","ko":"positional"}')    # KataGo's defaults
    assert custom.territory and custom.tax == "SEKI" and custom.suicide and custom.name == "custom"
    assert rules.parse({"scoring": "AREA"}).tax == "NONE"
    with pytest.raises(rules.RulesError, match="unknown rules go"):
        rules.parse("go")
    for bad in ({"scoring": "COUNT"}, {"colour": 1}, {"suicide": "yes"}, "{not json"):
        with pytest.raises(rules.RulesError):
            rules.parse(bad)
    for unplayable in ("stone-scoring", {"hasButton": True}, {"tax": "SEKI"}):
        with pytest.raises(rules.RulesError, match="not supported"):
            rules.playable(unplayable)
    assert rules.with_field(rules.named("japanese"), "ko", "positional").ko == "POSITIONAL"
    assert rules.with_field(rules.Rules(), "friendlyPassOk", "true").friendlyPassOk
    # Pachi's parity komi: 9x9 with komi 6.5 (6 + 9 odd) counts one point against the side
    # searched for under territory rules; komi 7.5 (7 + 9 even) or area rules: none
    jp = rules.named("japanese")
    assert rules.search_komi_shift(jp, 6.5, 9, 1) == 1.0 and rules.search_komi_shift(jp, 6.5, 9, 2) == -1.0
    assert rules.search_komi_shift(jp, 7.5, 9, 1) == 0.0
    assert rules.search_komi_shift(rules.Rules(), 6.5, 9, 1) == 0.0
    with pytest.raises(ValueError, match="--rules"):
        EngineConfig(rules="go-rules").validate()


def test_white_handicap_bonus_in_the_score_and_the_search_komi():
    e = Engine(EngineConfig(mode="rollouts", rules="chinese", seed=1))
    e.new_game(9, 0.5)
    e.setup_stones(["C3", "G7"], [])                  # two handicap stones
    want = {"chinese": (78.5, 2.0), "aga": (79.5, 1.0), "tromp-taylor": (80.5, 0.0),
            "japanese": (78.5, -1.0)}                 # 79 points of territory; the parity point
    for name, (score, komi) in want.items():
        e.set_rules(name)
        assert e._score_with([], []) == score and e.rules_komi(2) == komi, name


# --- GTP ---------------------------------------------------------------------------------
def test_gtp_rules_commands():
    g = make_gtp()
    listed = ok(g, "list_commands").split("\n")
    for cmd in ("kgs-rules", "kata-get-rules", "kata-set-rules", "kata-set-rule",
                "cgos-genmove_analyze"):
        assert cmd in listed
    start = json.loads(ok(g, "kata-get-rules"))
    assert start == {"ko": "POSITIONAL", "scoring": "AREA", "tax": "NONE", "suicide": True,
                     "hasButton": False, "whiteHandicapBonus": "0", "friendlyPassOk": False}
    for name in ("chinese", "aga", "new_zealand", "japanese"):        # kgsGtp's names
        assert ok(g, f"kgs-rules {name}") == ""
    assert json.loads(ok(g, "kata-get-rules"))["scoring"] == "TERRITORY"
    ok(g, "kgs-rules chinese")                                         # KGS's: positional superko
    assert json.loads(ok(g, "kata-get-rules")) == dict(rules.RULE_SETS["chinese-kgs"])
    before = ok(g, "kata-get-rules")
    assert err(g, "kgs-rules go-rules") == "unknown rules go-rules"
    assert err(g, "kata-set-rules go-rules") == "unknown rules go-rules"
    assert "not supported" in err(g, "kata-set-rules stone-scoring")
    assert err(g, "kgs-rules").startswith("syntax error")
    assert ok(g, "kata-get-rules") == before                           # unchanged
    ok(g, 'kata-set-rules {"scoring": "TERRITORY", "ko": "SIMPLE"}')   # JSON with spaces
    got = json.loads(ok(g, "kata-get-rules"))
    assert got["scoring"] == "TERRITORY" and got["tax"] == "SEKI" and got["ko"] == "SIMPLE"
    ok(g, "kata-set-rule scoring AREA")
    assert "not supported" in err(g, "kata-set-rule hasButton true")
    assert json.loads(ok(g, "kata-get-rules"))["scoring"] == "AREA"
    ok(g, "kata-set-rules japanese")
    ok(g, "boardsize 9")                                               # rules outlive a new game
    assert json.loads(ok(g, "kata-get-rules"))["scoring"] == "TERRITORY"
    jp = make_gtp(rules="japanese")                                    # --rules japanese
    assert json.loads(ok(jp, "kata-get-rules")) == dict(rules.RULE_SETS["japanese"])


def test_cgos_genmove_analyze_answers_json_then_the_move():
    g = make_gtp()
    ok(g, "boardsize 9")
    out = io.StringIO()
    g.out = out
    assert g.execute("cgos-genmove_analyze b") == ""
    lines = out.getvalue().split("\n")
    assert lines[0] == "=" and lines[2].startswith("play ") and lines[3:] == ["", ""]
    info = json.loads(lines[1])
    assert 0 <= info["winrate"] <= 1 and info["visits"] > 0 and "score" in info
    assert info["moves"][0]["move"] == lines[2].split()[1]
    assert all(m["visits"] > 0 and "prior" in m for m in info["moves"])
    assert len(info["ownership"]) == 81 and set(info["ownership"]) <= set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
    assert ok(g, "list_stones b") == lines[2].split()[1]          # the move is played
    assert err(g, "cgos-genmove_analyze").startswith("syntax error")


# --- the analysis engine ---------------------------------------------------------------------
class _Lines(io.StringIO):
    def answers(self):
        return [json.loads(l) for l in self.getvalue().splitlines() if l.strip()]


@pytest.mark.parametrize("mode", ["rollouts", "auto"])
def test_analysis_rules_field(mode):
    """The rules of each query, in rollouts and in the default mode (auto: the net at the root
    on 9x9), one worker answering the queries one after the other."""
    out = _Lines()
    engine = Engine(EngineConfig(mode=mode, seed=1, max_nodes=50_000))
    server = AnalysisServer([engine], out, max_visits=30)
    base = {"moves": [["B", "E5"]], "boardXSize": 9, "boardYSize": 9, "maxVisits": 30}
    server.handle(json.dumps(dict(base, id="bad", rules="go-rules")))
    server.handle(json.dumps(dict(base, id="jp", rules="japanese")))
    server.handle(json.dumps(dict(base, id="obj", rules={"scoring": "TERRITORY"})))
    server.handle(json.dumps(dict(base, id="button", rules="stone-scoring", komi=7)))
    server.close()
    got = {d["id"]: d for d in out.answers() if "warning" not in d}
    warned = [d for d in out.answers() if "warning" in d]
    assert [d["id"] for d in warned] == ["button"] and warned[0]["field"] == "rules"
    assert got["button"]["moveInfos"]                  # played without the tax, answered
    assert "unknown rules" in got["bad"]["error"] and got["bad"]["field"] == "rules"
    assert got["jp"]["moveInfos"] and "warning" not in got["jp"]
    assert got["obj"]["moveInfos"]
    for qid in ("button", "jp", "obj"):
        assert {"scoreLead", "scoreMean", "scoreStdev"} <= set(got[qid]["rootInfo"])
        assert got[qid]["rootInfo"]["visits"] >= 30


# --- Japanese counting against GNU Go -------------------------------------------------------
def _gnugo_position(gnugo_path, black, white, moves=(), komi=6.5):
    """GNU Go's (Japanese) final_score, dead and seki lists of a position set up by moves."""
    with GtpProcess([gnugo_path, "--mode", "gtp"], "gnugo") as g:
        g.send("boardsize 9")
        g.send("clear_board")
        g.send(f"komi {komi:g}")
        for v in black:
            g.send(f"play b {v}")
        for v in white:
            g.send(f"play w {v}")
        for c, v in moves:
            g.send(f"play {c} {v}")
        return (g.send("final_score"), g.send("final_status_list dead").split(),
                g.send("final_status_list seki").split())


# A seki in the corner (one eye each, A9 and E9, and the shared liberty C9), walls down the B
# and C files, Black's territory on the right with a few stones in it
SEKI_BLACK = (["B9", "A8", "B8"] + [f"C{i}" for i in range(1, 8)]
              + ["D7", "E7", "F7", "G7", "G8", "G9", "E3", "H3"])
SEKI_WHITE = ["C8", "D9", "D8", "E8", "F9", "F8", "A7"] + [f"B{i}" for i in range(1, 8)]


@pytest.mark.gnugo
def test_japanese_count_of_a_seki_agrees_with_gnugo(gnugo_path):
    want, dead, seki = _gnugo_position(gnugo_path, SEKI_BLACK, SEKI_WHITE)
    e = Engine(EngineConfig(mode="rollouts", rules="japanese", seed=1))
    e.new_game(9, 6.5)
    e.setup_stones(SEKI_BLACK, SEKI_WHITE)
    assert sorted(e.final_status_list("seki")) == sorted(seki) and len(seki) == 9
    assert e.final_status_list("dead") == sorted(dead) == []
    assert e.final_score() == want == "B+27.5"       # 39 - 6 - 6.5: no points in the seki
    e.set_rules("tromp-taylor")                      # by area: the eyes and stones count
    assert e.final_score() == "B+31.5"


@pytest.mark.gnugo
@pytest.mark.parametrize("seed", [2, 4, 6])
def test_japanese_count_of_finished_gnugo_games_agrees_with_gnugo(gnugo_path, seed):
    """GNU Go plays itself to two passes (level 1, Japanese rules); its final_score (territory
    and prisoners, dead stones taken off) and ours from our own dead-stone estimate agree."""
    with GtpProcess([gnugo_path, "--mode", "gtp", "--level", "1", "--seed", str(seed)],
                    "gnugo") as g:
        g.send("boardsize 9")
        g.send("clear_board")
        g.send("komi 6.5")
        moves, c, passes = [], "b", 0
        while passes < 2 and len(moves) < 200:
            m = g.send(f"genmove {c}").lower()
            assert m != "resign"
            moves.append((c, m))
            passes = passes + 1 if m == "pass" else 0
            c = "w" if c == "b" else "b"
        want = g.send("final_score")
        dead = g.send("final_status_list dead").split()
        captures = int(g.send("captures b")) + int(g.send("captures w"))
    e = Engine(EngineConfig(mode="rollouts", rules="japanese", seed=1))
    e.new_game(9, 6.5)
    for c, m in moves:
        e.play(c, m)
    assert e.final_score() == want, (moves, dead)
    assert sorted(e.final_status_list("dead")) == sorted(dead)
    assert scoring.score_text(scoring.territory_score(e.board, dead)) == want
    assert captures + len(dead) > 0        # prisoners count in these games


# --- the end of a game under Japanese rules ---------------------------------------------------
# Black's walls on the E and F files, White's on the B and C files, the D file dame between
# them; Black's territory G-J (27 points), White's the A file (9)
WALL_BLACK = [f"{c}{i}" for c in "EF" for i in range(1, 10)]
WALL_WHITE = [f"{c}{i}" for c in "BC" for i in range(1, 10)]
BLACK_TERRITORY = {f"{c}{i}" for c in "GHJ" for i in range(1, 10)}
WHITE_TERRITORY = {f"A{i}" for i in range(1, 10)}


def _walls(rules_name, dame=True):
    e = Engine(EngineConfig(mode="rollouts", rules=rules_name, playouts=600, seed=5))
    e.new_game(9, 6.5)
    white = WALL_WHITE if dame else WALL_WHITE + [f"D{i}" for i in range(1, 10)]
    e.setup_stones(WALL_BLACK, white)
    e.board.to_move = "b"
    return e


def test_japanese_endgame_passes_once_the_score_is_settled():
    e = _walls("japanese")
    owner = e._status_owner()
    dead, _ = e._dead_strings(owner)
    assert dead == [] and scoring.territory_settled(e.board, owner, dead)
    assert all(scoring.idle_point(e.board, owner, dead, v) for v in ("D5", "H5", "A5"))
    assert e.final_score() == "B+11.5"               # 27 - 9 - 6.5
    assert e.genmove("b") == "pass"                  # no dame, no fill of its own territory
    e.play("w", "pass")
    assert e.genmove("b") == "pass"                  # and the game ends
    # by area the count is the same (45 - 27 - 6.5), the dame worth a point each
    assert _walls("tromp-taylor").final_score() == "B+11.5"


def test_japanese_endgame_no_move_into_own_territory():
    """Played out from a settled position under Japanese rules the engine never puts a stone
    into its own territory unless the opponent has stones there (it answers an invasion): it
    passes first, and the game ends (two passes, or the invader's side resigns)."""
    e = _walls("japanese", dame=False)
    move = None
    for i in range(40):
        color = "b" if i % 2 == 0 else "w"
        own = BLACK_TERRITORY if color == "b" else WHITE_TERRITORY
        invaded = set(e.board.stones("w" if color == "b" else "b")) & own
        move = e.genmove(color)
        assert move == "pass" or move not in own or invaded, (i, move, e.board.moves)
        if move == "resign" or e.board.passes >= 2:
            break
    assert e.board.moves[0] == ("b", "pass")
    assert move == "resign" or e.board.passes >= 2        # the game ended
