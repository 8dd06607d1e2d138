"""GTP conformance suite for `gammago gtp`, run against the real Engine (tiny fixed budgets).

Every command of the GTP v2 set and our extensions; ids; the preprocessing rules; and every
error (unknown command, bad vertex, illegal move, bad boardsize, ...) answers `?` with a message
and leaves the game exactly as it was.
"""
import io
import os
import re
import subprocess
import sys

import pytest
from sgfmill import sgf as sgfmill_sgf

from gammago.go.board import format_vertex
from gammago.engine.engine import Engine, EngineConfig
from gammago.protocol.gtp import Gtp
from gammago.protocol.gtp_analyze import info_line, kata_info_line, kata_ownership
from gammago.go.handicap import fixed_points as fixed_handicap_vertices

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
VERTEX = r"(?:[A-HJ-T](?:1[0-9]|[1-9])|pass)"
# Leela Zero's line, with each candidate's scoreMean where the search has one (Lizzie reads it)
INFO = re.compile(rf"info move {VERTEX} visits \d+ winrate \d+ (?:scoreMean -?\d+\.\d+ )?prior \d+ "
                  rf"lcb \d+ order \d+ pv(?: {VERTEX})+")
UNIT = r"(?:0\.\d+|1\.0+)"
SCORE = r"scoreMean (-?\d+\.\d+) scoreStdev \d+\.\d+ scoreLead (-?\d+\.\d+)"
KATA_INFO = re.compile(rf"info move {VERTEX} visits \d+ winrate {UNIT} {SCORE} "
                       rf"prior {UNIT} lcb {UNIT} order \d+ pv(?: {VERTEX})+")

REQUIRED = """protocol_version name version known_command list_commands quit boardsize clear_board
komi play genmove undo showboard final_score final_status_list fixed_handicap place_free_handicap
set_free_handicap loadsgf time_settings time_left reg_genmove printsgf list_stones
kgs-time_settings kgs-genmove_cleanup lz-analyze lz-genmove_analyze kata-analyze kata-genmove_analyze
analyze genmove_analyze is_legal all_legal captures get_komi kgs-chat kgs-game_over
gogui-analyze_commands gammago-analyze gammago-ownership gammago-criticality gammago-build""".split()


def make_gtp(playouts=40):
    engine = Engine(EngineConfig(playouts=playouts, seed=1, max_nodes=20000))
    return Gtp(engine, io.StringIO())


@pytest.fixture
def g():
    gtp = make_gtp()
    gtp.execute("boardsize 9")
    gtp.execute("komi 7")
    return gtp


def ok(gtp, line):
    reply = gtp.execute(line)
    assert reply is not None and reply.startswith("="), f"{line!r} -> {reply!r}"
    assert reply.endswith("\n\n") and "\n\n" not in reply[:-2], f"blank line inside: {reply!r}"
    return reply[1:].lstrip("0123456789").strip()


def err(gtp, line):
    reply = gtp.execute(line)
    assert reply is not None and reply.startswith("?"), f"{line!r} -> {reply!r}"
    assert reply.endswith("\n\n")
    msg = reply[1:].lstrip("0123456789").strip()
    assert msg, f"{line!r}: an error needs a message"
    return msg


def state(gtp):
    b = gtp.engine.board
    return (b.size, b.komi, b.to_move, list(b.moves), b.to_array().tolist(), b.captures("b"),
            b.captures("w"), b.hash, list(gtp.setup_black), gtp.handicap)


def midgame(gtp):
    for line in ["play b E5", "play w D5", "play b D4", "play w C4", "play b E4", "play w D6"]:
        ok(gtp, line)


# --- administrative ----------------------------------------------------------------------
def test_admin_commands(g):
    assert ok(g, "protocol_version") == "2"
    assert ok(g, "name") == "gammago"
    assert re.fullmatch(r"\d+\.\d+\.\d+\S*", ok(g, "version"))
    listed = ok(g, "list_commands").split("\n")
    for c in REQUIRED:
        assert c in listed, c
        assert ok(g, f"known_command {c}") == "true"
    assert ok(g, "known_command frobnicate") == "false"
    float(ok(g, "cputime"))
    assert float(ok(g, "gomill-cpu_time")) >= 0


def test_clear_cache_forgets_the_trees_and_keeps_the_game(g):
    midgame(g)
    ok(g, "genmove b")
    e = g.engine
    assert e.search.root_visits > 0 and e.search.children()
    before = state(g)
    assert err(g, "clear_cache now").startswith("syntax error")
    assert e.search.root_visits > 0
    ok(g, "clear_cache")
    assert e.search.root_visits == 0 and e.search.children() == []
    assert state(g) == before
    ok(g, "genmove w")                  # and the next search runs afresh
    assert e.search.root_visits > 0


def test_ids_and_preprocessing(g):
    assert g.execute("17 name") == "=17 gammago\n\n"
    assert g.execute("18 frobnicate") == "?18 unknown command\n\n"
    assert g.execute("") is None
    assert g.execute("   ") is None
    assert g.execute("# a comment") is None
    assert g.execute("name # trailing comment") == "= gammago\n\n"
    assert g.execute("\tname\t\r\n") == "= gammago\n\n"                    # HT -> space, CR gone
    assert g.execute("na\x01me\x7f") == "= gammago\n\n"                    # control chars removed
    assert g.execute("5\tplay\tB\te5") == "=5\n\n"                        # tabs split arguments
    assert g.engine.board.color_at("E5") == "b"
    assert g.execute("6").startswith("?6 ")


def test_unknown_command_keeps_state(g):
    midgame(g)
    before = state(g)
    assert err(g, "frobnicate E5") == "unknown command"
    assert state(g) == before


# --- setup -------------------------------------------------------------------------------------
def test_boardsize_and_errors(g):
    midgame(g)
    before = state(g)
    for bad in ("boardsize 30", "boardsize 4", "boardsize 0", "boardsize -9"):
        assert err(g, bad) == "unacceptable size"
        assert state(g) == before
    for bad in ("boardsize x", "boardsize", "boardsize 9 9"):
        assert "syntax error" in err(g, bad)
        assert state(g) == before
    ok(g, "boardsize 13")
    b = g.engine.board
    assert b.size == 13 and b.moves == [] and b.komi == 7 and not b.stones("b")
    ok(g, "boardsize 5")
    ok(g, "boardsize 19")
    assert g.engine.board.size == 19


def test_clear_board_keeps_size_and_komi(g):
    ok(g, "komi 6.5")
    midgame(g)
    ok(g, "clear_board")
    b = g.engine.board
    assert (b.size, b.komi, b.moves, b.to_move) == (9, 6.5, [], "b")
    assert not b.stones("b") and not b.stones("w")


def test_komi(g):
    ok(g, "komi -3.5")
    assert g.engine.board.komi == -3.5
    before = state(g)
    for bad in ("komi x", "komi", "komi nan", "komi 1 2"):
        err(g, bad)
        assert state(g) == before


# --- play, genmove, undo -------------------------------------------------------------------
def test_play_case_insensitive(g):
    ok(g, "play B e5")
    ok(g, "play white D5")
    ok(g, "play BLACK c3")
    ok(g, "play W pass")
    ok(g, "play b PASS")
    b = g.engine.board
    assert b.color_at("E5") == "b" and b.color_at("D5") == "w" and b.color_at("C3") == "b"
    assert b.moves[-2:] == [("w", "pass"), ("b", "pass")]


@pytest.mark.parametrize("line, expect", [
    ("play b E5", "illegal move"),                 # occupied
    ("play w E5", "illegal move"),
    ("play b Z1", "invalid vertex"),
    ("play b J10", "invalid vertex"),              # off a 9x9 board
    ("play b I5", "invalid vertex"),               # there is no I column
    ("play b A0", "invalid vertex"),
    ("play b 55", "invalid vertex"),
    ("play x E5", "invalid color"),
    ("play b", "syntax error"),
    ("play", "syntax error"),
    ("play b A1 A2", "syntax error"),
])
def test_play_errors_keep_state(g, line, expect):
    midgame(g)
    before = state(g)
    assert err(g, line).startswith(expect)
    assert state(g) == before


def test_suicide_and_ko_are_illegal(g):
    # White stones around A1 make it suicide for Black; then a ko on the edge.
    for line in ["play w A2", "play w B1"]:
        ok(g, line)
    before = state(g)
    assert err(g, "play b A1") == "illegal move"
    assert state(g) == before
    ok(g, "clear_board")
    # ko: B at D5 E6 E4 F5(later), W at E5.. standard shape
    for line in ["play b D5", "play w E5", "play b E6", "play w F6", "play b E4", "play w F4",
                 "play b A9", "play w G5", "play b F5"]:       # B captures E5
        ok(g, line)
    assert g.engine.board.color_at("E5") == "."
    before = state(g)
    assert err(g, "play w E5") == "illegal move"                # immediate retake: ko
    assert state(g) == before


def test_genmove_plays_a_legal_move(g):
    midgame(g)
    n = len(g.engine.board.moves)
    move = ok(g, "genmove b")
    assert re.fullmatch(VERTEX + "|resign", move)
    b = g.engine.board
    assert len(b.moves) == n + 1 and b.moves[-1] == ("b", move)
    assert b.color_at(move) == "b"
    move = ok(g, "genmove WHITE")
    assert g.engine.board.moves[-1] == ("w", move)
    before = state(g)
    for bad in ("genmove", "genmove x", "genmove b w"):
        err(g, bad)
        assert state(g) == before


def test_reg_genmove_plays_nothing(g):
    midgame(g)
    before = state(g)
    move = ok(g, "reg_genmove b")
    assert re.fullmatch(VERTEX, move)
    assert g.engine.board.is_legal(move, "b") or move == "pass"
    assert state(g) == before


def test_kgs_genmove_cleanup(g):
    midgame(g)
    move = ok(g, "kgs-genmove_cleanup w")
    assert re.fullmatch(VERTEX, move)
    assert g.engine.board.moves[-1] == ("w", move)


def test_undo(g):
    assert err(g, "undo") == "cannot undo"
    before = state(g)
    ok(g, "play b E5")
    ok(g, "play w D5")
    ok(g, "undo")
    ok(g, "undo")
    assert state(g) == before
    assert err(g, "undo") == "cannot undo"
    assert state(g) == before


# --- state and scoring -------------------------------------------------------------------
def test_showboard_and_list_stones(g):
    midgame(g)
    reply = g.execute("showboard")
    assert reply.startswith("= \n") and reply.endswith("\n\n") and "\n\n" not in reply[:-2]
    assert "X" in reply and "O" in reply and "A B C D E F G H J" in reply
    assert set(ok(g, "list_stones b").split()) == {"E5", "D4", "E4"}
    assert set(ok(g, "list_stones white").split()) == {"D5", "C4", "D6"}
    err(g, "list_stones x")


DEAD_STONE_SGF = (b"(;GM[1]FF[4]SZ[9]KM[7]AB[ca][cb][cc][cd][ce][cf][cg][ch][ci]"
                  b"AW[da][db][dc][dd][de][df][dg][dh][di][ae];B[tt];W[tt])")


def test_final_score_and_status(g, tmp_path):
    assert ok(g, "final_score") == "W+7"                          # empty board, komi 7
    path = tmp_path / "dead.sgf"
    path.write_bytes(DEAD_STONE_SGF)
    ok(g, f"loadsgf {path}")
    # Black: column C and the 18 points left of it, where White's A5 is dead; White: D to J.
    assert ok(g, "final_status_list dead") == "A5"
    alive = ok(g, "final_status_list alive").split("\n")
    assert len(alive) == 2                                         # one string per line
    assert {frozenset(l.split()) for l in alive} == {
        frozenset(f"C{i}" for i in range(1, 10)), frozenset(f"D{i}" for i in range(1, 10))}
    assert ok(g, "final_status_list seki") == ""
    assert ok(g, "final_score") == "W+34"             # 27 - 54 - 7
    before = state(g)
    for bad in ("final_status_list", "final_status_list zombie"):
        err(g, bad)
        assert state(g) == before


# --- handicap ------------------------------------------------------------------------------------
GNUGO_19 = {2: "Q16 D4", 3: "D16 Q16 D4", 4: "D16 Q16 D4 Q4", 5: "D16 Q16 K10 D4 Q4",
            9: "D16 K16 Q16 D10 K10 Q10 D4 K4 Q4"}      # GNU Go 3.8's answers (sorted differently)


def test_fixed_handicap_positions():
    for n, expect in GNUGO_19.items():
        assert set(fixed_handicap_vertices(19, n)) == set(expect.split())
    assert set(fixed_handicap_vertices(19, 6)) == {"D4", "Q16", "D16", "Q4", "D10", "Q10"}
    assert set(fixed_handicap_vertices(19, 8)) == {"D4", "Q16", "D16", "Q4", "D10", "Q10", "K4", "K16"}
    assert set(fixed_handicap_vertices(13, 9)) == set("D10 G10 K10 D7 G7 K7 D4 G4 K4".split())
    assert set(fixed_handicap_vertices(9, 5)) == set("C7 G7 E5 C3 G3".split())
    assert set(fixed_handicap_vertices(7, 4)) == set("C5 E5 C3 E3".split())
    assert set(fixed_handicap_vertices(8, 2)) == {"F6", "C3"}
    assert set(fixed_handicap_vertices(10, 4)) == set("C8 H8 C3 H3".split())


def test_fixed_handicap_command(g):
    assert set(ok(g, "fixed_handicap 4").split()) == {"C3", "G7", "C7", "G3"}
    b = g.engine.board
    assert set(b.stones("b")) == {"C3", "G7", "C7", "G3"} and b.to_move == "w"
    before = state(g)
    assert err(g, "fixed_handicap 2") == "board not empty"
    assert state(g) == before
    ok(g, "clear_board")
    before = state(g)
    for bad in ("fixed_handicap 1", "fixed_handicap 10", "fixed_handicap x", "fixed_handicap"):
        err(g, bad)
        assert state(g) == before
    ok(g, "boardsize 8")
    err(g, "fixed_handicap 5")                      # even sizes: at most 4
    ok(g, "boardsize 6")
    err(g, "fixed_handicap 2")                      # no fixed handicap below 7x7


def test_place_free_handicap(g):
    stones = ok(g, "place_free_handicap 3").split()
    assert len(stones) == 3 == len(set(stones))
    assert set(g.engine.board.stones("b")) == set(stones) and g.engine.board.to_move == "w"
    before = state(g)
    assert err(g, "place_free_handicap 2") == "board not empty"
    assert state(g) == before
    ok(g, "clear_board")
    for bad in ("place_free_handicap 1", "place_free_handicap 81", "place_free_handicap x"):
        err(g, bad)
        assert not g.engine.board.stones("b")


def test_set_free_handicap(g):
    ok(g, "set_free_handicap c3 G7 e5")
    assert set(g.engine.board.stones("b")) == {"C3", "G7", "E5"}
    assert g.engine.board.to_move == "w"
    ok(g, "play w D4")
    before = state(g)
    assert err(g, "set_free_handicap A1 B2") == "board not empty"
    assert state(g) == before
    ok(g, "clear_board")
    before = state(g)
    for bad in ("set_free_handicap A1", "set_free_handicap A1 A1", "set_free_handicap A1 pass",
                "set_free_handicap A1 Z9", "set_free_handicap"):
        err(g, bad)
        assert state(g) == before


# --- SGF -------------------------------------------------------------------------------------------
GAME_SGF = b"(;GM[1]FF[4]SZ[9]KM[6.5]HA[2]AB[cc][gg];W[ee];B[ce];W[dd];B[tt];W[ec])"


def test_loadsgf(g, tmp_path):
    path = tmp_path / "game.sgf"
    path.write_bytes(GAME_SGF)
    ok(g, "boardsize 13")
    ok(g, f"loadsgf {path}")
    b = g.engine.board
    assert (b.size, b.komi) == (9, 6.5)
    assert set(b.stones("b")) == {"C7", "G3", "C5"}
    assert b.moves == [("w", "E5"), ("b", "C5"), ("w", "D6"), ("b", "pass"), ("w", "E7")]
    assert b.to_move == "b"
    ok(g, f"loadsgf {path} 3")                       # the position before move 3
    b = g.engine.board
    assert b.moves == [("w", "E5"), ("b", "C5")] and b.to_move == "w"
    ok(g, f"loadsgf {path} 1")
    b = g.engine.board
    assert b.moves == [] and set(b.stones("b")) == {"C7", "G3"} and b.to_move == "w"
    ok(g, f"loadsgf {path} 99")
    assert len(g.engine.board.moves) == 5


def test_loadsgf_errors_keep_state(g, tmp_path):
    midgame(g)
    before = state(g)
    bad_move = tmp_path / "illegal.sgf"
    bad_move.write_bytes(b"(;GM[1]FF[4]SZ[9];B[ee];W[ee])")
    garbage = tmp_path / "garbage.sgf"
    garbage.write_bytes(b"this is not sgf")
    big = tmp_path / "big.sgf"
    big.write_bytes(b"(;GM[1]FF[4]SZ[25];B[aa])")
    for line in (f"loadsgf {tmp_path / 'missing.sgf'}", f"loadsgf {bad_move}", f"loadsgf {garbage}",
                 f"loadsgf {big}", f"loadsgf {bad_move} x", f"loadsgf {bad_move} 0", "loadsgf"):
        msg = err(g, line)
        assert state(g) == before, line
        if "syntax" not in msg:
            assert msg.startswith("cannot load file"), msg


def test_printsgf_roundtrip(g, tmp_path):
    ok(g, "fixed_handicap 2")
    for line in ["play w E5", "play b D4", "play w pass"]:
        ok(g, line)
    text = ok(g, "printsgf")
    game = sgfmill_sgf.Sgf_game.from_string(text)
    assert game.get_size() == 9 and game.get_komi() == 7 and game.get_handicap() == 2
    black, white, _ = game.get_root().get_setup_stones()
    assert len(black) == 2 and not white
    moves = [n.get_move() for n in game.get_main_sequence()[1:]]
    assert moves == [("w", (4, 4)), ("b", (3, 3)), ("w", None)]
    path = tmp_path / "out.sgf"
    assert ok(g, f"printsgf {path}") == ""
    assert sgfmill_sgf.Sgf_game.from_bytes(path.read_bytes()).get_size() == 9
    ok(g, f"loadsgf {path}")                          # what we print, we read back
    assert g.engine.board.moves == [("w", "E5"), ("b", "D4"), ("w", "pass")]
    assert err(g, f"printsgf {tmp_path / 'no' / 'such' / 'dir.sgf'}").startswith("cannot write")


# --- time -----------------------------------------------------------------------------------------
def test_time_commands(g):
    ok(g, "time_settings 300 30 5")
    ok(g, "time_left b 120 0")
    ok(g, "time_left WHITE 25 3")
    for line in ("kgs-time_settings none", "kgs-time_settings absolute 600",
                 "kgs-time_settings byoyomi 600 30 5", "kgs-time_settings canadian 600 300 25"):
        ok(g, line)
    midgame(g)
    before = state(g)
    for bad in ("time_settings 1 2", "time_settings a b c", "time_settings -1 0 0",
                "time_left x 10 0", "time_left b ten 0", "time_left b 10",
                "kgs-time_settings", "kgs-time_settings sudden 10", "kgs-time_settings absolute",
                "kgs-time_settings byoyomi 1 2", "kgs-time_settings canadian 1 2 x",
                "kata-time_settings", "kata-time_settings fischer 60", "kata-time_settings x 1",
                "kata-time_settings fischer-capped 60 5 30 -1"):
        err(g, bad)
        assert state(g) == before


def test_kata_time_settings(g):
    """KataGo's time settings: the kinds it lists, Fischer ones included, fractional seconds."""
    assert ok(g, "kata-list_time_settings").split() == [
        "none", "absolute", "byo-yomi", "canadian", "fischer", "fischer-capped"]
    ok(g, "kata-time_settings fischer 120.5 2.5")
    clock = g.engine.clocks[1]
    assert clock.kind == "fischer" and clock.main == 120.5 and clock.increment == 2.5
    ok(g, "time_left b 30 0")
    assert clock.main_left == 30
    ok(g, "genmove b")
    assert g.engine.last_budget <= 30
    ok(g, "kata-time_settings none")
    assert clock.kind == "none"


def test_time_left_sets_the_clock_of_the_colour_it_names(g):
    """time_left for either colour is accepted (servers send both); it sets that colour's clock
    only; before any time settings it changes nothing; a colour that is none is refused."""
    clocks = g.engine.clocks
    ok(g, "time_left w 30 0")                       # no time settings yet: nothing to set
    assert clocks[1].kind == clocks[2].kind == "none"
    ok(g, "time_settings 300 30 5")
    ok(g, "time_left w 100 0")
    assert clocks[2].main_left == 100 and clocks[1].main_left == 300
    ok(g, "time_left black 20 3")
    assert clocks[1].in_byo and clocks[1].stones_left == 3 and not clocks[2].in_byo
    before = (state(g), vars(clocks[1]).copy(), vars(clocks[2]).copy())
    for bad in ("time_left x 10 0", "time_left pass 10 0", "time_left b 10 -1", "time_left 10 0"):
        err(g, bad)
        assert (state(g), vars(clocks[1]), vars(clocks[2])) == before


def test_byoyomi_one_second_is_respected():
    gtp = make_gtp(playouts=0)                        # the clock decides
    ok(gtp, "boardsize 9")
    ok(gtp, "time_settings 0 1 1")
    for color in ("b", "w", "b"):
        ok(gtp, f"genmove {color}")
        assert 0 < gtp.engine.last_budget <= 0.9, gtp.engine.last_budget


# --- analysis -------------------------------------------------------------------------------------
def test_info_line_format():
    line = info_line([{"move": "E4", "visits": 1178, "winrate": 0.4802, "prior": 0.2211,
                       "lcb": 0.4781, "order": 0, "pv": ["E4", "E3"]},
                      {"move": "pass", "visits": 3, "winrate": 1.2, "prior": 0.0, "lcb": -0.1,
                       "order": 1, "pv": []}])
    assert line == ("info move E4 visits 1178 winrate 4802 prior 2211 lcb 4781 order 0 pv E4 E3 "
                    "info move pass visits 3 winrate 10000 prior 0 lcb 0 order 1 pv pass")
    assert info_line([]) == ""
    d = {"move": "E4", "visits": 9, "winrate": 0.5, "prior": 0.25, "lcb": 0.25, "order": 0,
         "pv": ["E4"]}
    assert info_line([d], score=-2.5) == ("info move E4 visits 9 winrate 5000 scoreLead -2.50 "
                                          "prior 2500 lcb 2500 order 0 pv E4")


def test_lz_genmove_analyze(g):
    midgame(g)
    g.out = io.StringIO()
    assert g.execute("9 lz-genmove_analyze b 5") == ""
    text = g.out.getvalue()
    lines = text.split("\n")
    assert lines[0] == "=9"
    assert text.endswith("\n\n") and "\n\n" not in text[:-2]
    play = [l for l in lines if l.startswith("play ")]
    assert len(play) == 1 and lines.index(play[0]) == len(lines) - 3
    move = play[0].split()[1]
    assert g.engine.board.moves[-1] == ("b", move)
    infos = [l for l in lines[1:-3]]
    assert infos, "no info line"
    for l in infos:
        parts = ["info " + p for p in l.split("info ")[1:]]
        assert all(INFO.fullmatch(p.strip()) for p in parts), l
    before = state(g)
    assert err(g, "lz-genmove_analyze").startswith("syntax error")      # needs a colour
    assert err(g, "lz-genmove_analyze b 10 minmoves -3").startswith("syntax error")
    assert err(g, "lz-genmove_analyze b 10 ownership true").startswith("syntax error")
    assert state(g) == before


def test_gogui_analyze(g):
    midgame(g)
    entries = ok(g, "gogui-analyze_commands").split("\n")
    known = set(ok(g, "list_commands").split("\n"))
    for e in entries:
        kind, label, command = e.split("/", 2)
        assert kind in ("string", "plist", "gfx", "none", "sboard", "cboard", "dboard", "pspairs")
        assert label and command.split()[0] in known
    gfx = ok(g, "gammago-analyze 0.3 b").split("\n")
    keys = {l.split()[0] for l in gfx}
    assert {"LABEL", "VAR", "TEXT"} <= keys and keys <= {"LABEL", "VAR", "TEXT", "INFLUENCE"}
    var = next(l for l in gfx if l.startswith("VAR")).split()[1:]
    assert var[0] == "b" and re.fullmatch(VERTEX, var[1])
    err(g, "gammago-analyze 0")
    err(g, "gammago-analyze x")
    assert "gfx/Ownership/gammago-ownership 1" in entries
    assert "gfx/Criticality/gammago-criticality 1" in entries
    own = ok(g, "gammago-ownership 0.3").split("\n")
    assert [l.split()[0] for l in own] == ["INFLUENCE", "TEXT"]
    pairs = own[0].split()[1:]
    assert len(pairs) > 2 * 60                      # most points of a midgame board, owned a bit
    vals = {pairs[i]: float(pairs[i + 1]) for i in range(0, len(pairs), 2)}
    assert all(-1 <= v <= 1 for v in vals.values())
    assert vals["E5"] > 0 and vals["D6"] < 0        # +1 Black .. -1 White
    crit = ok(g, "gammago-criticality 0.3 w").split("\n")
    assert [l.split()[0] for l in crit] == ["INFLUENCE", "TEXT"]
    cvals = [float(x) for x in crit[0].split()[2::2]]
    assert max(cvals) == 1.0 and all(0 < v <= 1 for v in cvals)
    before = state(g)
    for bad in ("gammago-ownership 0", "gammago-ownership 1 x", "gammago-criticality -1",
                "gammago-ownership 1 b 2"):
        err(g, bad)
        assert state(g) == before


# --- the real command over pipes ------------------------------------------------------------------
def _spawn(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "gammago", "gtp", *args], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT)


def test_stdio_session_stdout_is_protocol_only():
    p = _spawn("--playouts", "30", "--seed", "2")
    out, errs = p.communicate("1 boardsize 9\n2 genmove b\n3 play w 5\n4 showboard\n"
                              "5 final_score\n6 quit\n7 name\n", timeout=120)
    assert p.returncode == 0
    blocks = out.split("\n\n")
    assert blocks[-1] == "" and len(blocks) == 7                   # 6 answers, none after quit
    heads = [b.split("\n")[0] for b in blocks[:-1]]
    assert [h.split()[0] if h.split() else h for h in heads] == ["=1", "=2", "?3", "=4", "=5", "=6"]
    assert "gammago" in errs                                       # the log went to stderr


def _read_until(p, last):
    """Lines from the engine up to and including `last`."""
    got = []
    while True:
        line = p.stdout.readline()
        assert line, f"engine died; got {got[-3:]}"
        got.append(line)
        if line == last:
            return got


def _infos_of(lines, pattern=INFO):
    for line in lines:
        parts = ["info " + x for x in line.strip().split("info ")[1:]]
        assert parts and all(pattern.fullmatch(x.strip()) for x in parts), line


def test_lz_analyze_streams_until_any_input_line():
    p = _spawn("--seed", "3", "--quiet")
    try:
        p.stdin.write("boardsize 9\n")
        p.stdin.flush()
        assert p.stdout.readline() == "=\n" and p.stdout.readline() == "\n"
        p.stdin.write("12 lz-analyze b 10\n")
        p.stdin.flush()
        assert p.stdout.readline() == "=12\n"
        infos = []
        while len(infos) < 3:
            line = p.stdout.readline()
            assert line.startswith("info move"), line
            infos.append(line)
        # the lines report one growing search: the best move's visits never fall
        best = [int(line.split(" visits ")[1].split()[0]) for line in infos]
        assert best == sorted(best)
        p.stdin.write("\n")                                    # an empty line stops it ...
        p.stdin.flush()
        rest = _read_until(p, "\n")
        _infos_of(infos + rest[:-1])
        p.stdin.write("13 name\n")                             # ... and gets no answer
        p.stdin.flush()
        assert p.stdout.readline() == "=13 gammago\n" and p.stdout.readline() == "\n"
        # a command stops it and is answered next: genmove plays its move
        p.stdin.write("14 lz-analyze w 10\n")
        p.stdin.flush()
        assert p.stdout.readline() == "=14\n"
        assert p.stdout.readline().startswith("info move")
        p.stdin.write("15 genmove b\n16 list_stones b\n")
        p.stdin.flush()
        rest = _read_until(p, "\n")
        _infos_of(rest[:-1])
        head = p.stdout.readline()
        assert re.fullmatch(rf"=15 {VERTEX}\n", head), head
        assert p.stdout.readline() == "\n"
        assert p.stdout.readline() == f"=16 {head.split()[1]}\n"
        assert p.stdout.readline() == "\n"
        # kata-analyze: KataGo's line, ownership of the 81 points for the side analysed
        p.stdin.write("17 kata-analyze w 10 ownership true\n")
        p.stdin.flush()
        assert p.stdout.readline() == "=17\n"
        line = p.stdout.readline()
        body, own = line.rstrip("\n").split(" ownership ")
        _infos_of([body], KATA_INFO)
        assert len(own.split()) == 81 and all(-1 <= float(v) <= 1 for v in own.split())
        p.stdin.write("# a comment stops it too\n")
        p.stdin.flush()
        rest = _read_until(p, "\n")
        assert all(l.startswith("info move") for l in rest[:-1])
        p.stdin.write("quit\n")
        p.stdin.flush()
        assert p.stdout.readline() == "=\n"
        assert p.wait(30) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


# --- streaming answers without pipes: the input queue filled beforehand ----------------------------
def _stream(gtp, line, *inputs):
    """Answer a streaming command with `inputs` already waiting; (output, lines left to answer)."""
    for x in inputs:
        gtp._lines.put(x)
    gtp.out = io.StringIO()
    assert gtp.execute(line) == ""
    return gtp.out.getvalue(), list(gtp._pending)


@pytest.mark.parametrize("command", ["lz-analyze b 1", "kata-analyze 1 ownership true"])
@pytest.mark.parametrize("stopper, left", [("\n", []), ("  # comment\n", []),
                                           ("name\n", ["name\n"]), (None, [None])])
def test_analysis_stops_on_any_line_and_consumes_only_empty_ones(g, command, stopper, left):
    midgame(g)
    before = state(g)
    out, pending = _stream(g, "5 " + command, stopper, None)
    assert out.startswith("=5\n") and out.endswith("\n\n") and "\n\n" not in out[:-2]
    assert pending == left
    assert state(g) == before


def test_analysis_stops_at_once_when_a_line_is_already_waiting(g):
    g._pending.append("name\n")            # read before the analysis began
    out, pending = _stream(g, "lz-analyze b 1")
    assert out.startswith("=\n") and out.endswith("\n\n") and pending == ["name\n"]


@pytest.mark.parametrize("command", ["3 lz-analyze b 10", "3 kata-analyze b 10",
                                     "3 lz-genmove_analyze b 10", "3 kata-genmove_analyze b 10"])
def test_engine_error_in_analysis_answers_an_error(g, command, monkeypatch):
    midgame(g)
    before = state(g)

    def boom(*a, **k):
        raise RuntimeError("search failed")
    monkeypatch.setattr(g.engine, "analyze", boom)
    monkeypatch.setattr(g.engine, "genmove_analyze", boom)
    out, pending = _stream(g, command, "\n")
    assert out == "?3 internal error: RuntimeError: search failed\n\n"
    assert state(g) == before


def test_engine_error_after_output_ends_the_answer(g, monkeypatch):
    midgame(g)
    before = state(g)

    def half(color, interval, stop, emit, avoid=()):
        emit([{"move": "E4", "visits": 3, "winrate": 0.5, "prior": 0.1, "lcb": 0.2, "order": 0,
               "pv": ["E4"]}])
        raise RuntimeError("search failed")
    monkeypatch.setattr(g.engine, "analyze", half)
    out, _ = _stream(g, "lz-analyze b 10", "\n")
    assert out == "=\ninfo move E4 visits 3 winrate 5000 prior 1000 lcb 2000 order 0 pv E4\n\n"
    assert state(g) == before
    assert ok(g, "name") == "gammago"                 # still serving


def test_lz_genmove_analyze_is_not_stopped_by_input(g):
    """Like Leela Zero's and KataGo's: the move is searched and played; the line that arrived
    meanwhile waits its turn."""
    out, pending = _stream(g, "lz-genmove_analyze b 10", "\n", "name\n")
    assert re.search(rf"^play {VERTEX}$", out, re.M) and out.endswith("\n\n")
    assert len(g.engine.board.moves) == 1 and pending == []
    assert g._lines.get_nowait() == "\n"


def test_kata_info_line_and_ownership_order():
    line = kata_info_line([{"move": "Q16", "visits": 120, "winrate": 0.4799, "prior": 0.0779,
                            "lcb": 0.4416, "order": 0, "pv": ["Q16", "D4"]}], score=-0.1,
                          ownership=[0.5, -1.0])
    assert line == ("info move Q16 visits 120 winrate 0.479900 scoreMean -0.10 scoreLead -0.10 "
                    "prior 0.077900 lcb 0.441600 order 0 pv Q16 D4 ownership 0.5000 -1.0000")
    line = kata_info_line([{"move": "Q16", "visits": 120, "winrate": 0.4799, "prior": 0.0779,
                            "lcb": 0.4416, "order": 0, "pv": ["Q16"]}], score=2.0,
                          score_stdev=31.25, ownership=[0.5, -1.0], ownership_stdev=[0.25, 0.0])
    assert line == ("info move Q16 visits 120 winrate 0.479900 scoreMean 2.00 scoreStdev 31.25 "
                    "scoreLead 2.00 prior 0.077900 lcb 0.441600 order 0 pv Q16 "
                    "ownership 0.5000 -1.0000 ownershipStdev 0.2500 0.0000")
    owner = [[1.0, 0.5], [-0.25, 0.0]]            # [row][col], row 0 = line 1: A1 B1 / A2 B2
    assert kata_ownership(owner, "b") == [-0.25, 0.0, 1.0, 0.5]    # A2 B2 A1 B1
    assert kata_ownership(owner, "w") == [0.25, -0.0, -1.0, -0.5]


def test_kata_analyze_arguments(g):
    before = state(g)
    for bad in ("kata-analyze b 10 ownership maybe", "kata-analyze b 10 ownershipStdev 1",
                "kata-analyze b 10 movesOwnership true", "kata-analyze b 10 minmoves x",
                "kata-analyze b 10 rootInfo yes", "kata-analyze b 10 pvVisits",
                "kata-analyze x", "kata-analyze b 10 maxmoves -1", "kata-analyze b 10 ownership"):
        err(g, bad)
        assert state(g) == before
    out, _ = _stream(g, "kata-analyze b 5 maxmoves 2", "\n")
    for line in out.split("\n")[1:-2]:
        assert line.count("info move") <= 2


SABAKI_INFO = re.compile(rf"info move {VERTEX} visits \d+ winrate \d+ scoreLead (-?\d+\.\d+) "
                         rf"prior \d+ lcb \d+ order \d+ pv(?: {VERTEX})+")


def _parts(line):
    return ["info " + p.strip() for p in line.split("info ")[1:]]


def test_sabaki_analyze_and_genmove_analyze(g):
    """Sabaki's own analysis commands: lz-analyze's line with each move's scoreLead (the
    score for the side analysed, the one kata-analyze reports), and genmove_analyze ending
    with `play MOVE`."""
    midgame(g)
    before = state(g)
    out, pending = _stream(g, "4 analyze w 1", "\n")
    lines = out.split("\n")
    assert lines[0] == "=4" and out.endswith("\n\n") and pending == []
    leads = set()
    for l in lines[1:-2]:
        for part in _parts(l):
            m = SABAKI_INFO.fullmatch(part)
            assert m, part
            leads.add(m.group(1))
    assert len(leads) >= 1 and state(g) == before
    for bad in ("genmove_analyze", "analyze b 10 ownership true", "analyze b 10 maxmoves -1"):
        assert err(g, bad).startswith("syntax error"), bad
    out, _ = _stream(g, "genmove_analyze b 1")
    lines = out.split("\n")
    assert re.fullmatch(rf"play {VERTEX}", lines[-3])
    assert g.engine.board.moves[-1] == ("b", lines[-3].split()[1])
    assert all(SABAKI_INFO.fullmatch(p) for l in lines[1:-3] for p in _parts(l)), out


@pytest.mark.parametrize("mode", ["rollouts", "net-root"])
@pytest.mark.parametrize("command", ["lz-analyze", "analyze", "kata-analyze"])
def test_minmoves_adds_unvisited_moves_in_prior_order(command, mode):
    """minmoves N (KataGo's): at least N moves where the root has them, the searched ones first
    and then moves no playout visited yet (0 visits, lcb 0), by prior; maxmoves cuts after."""
    g = Gtp(Engine(EngineConfig(playouts=40, seed=1, max_nodes=20000, mode=mode)), io.StringIO())
    ok(g, "boardsize 9")
    midgame(g)
    out, _ = _stream(g, f"{command} b 1 minmoves 40", "\n")
    last = out.split("\n")[-3]
    parts = _parts(last)
    # the root's moves: every legal one in a tree, the net's top ones under net-root
    n = min(40, len(g.engine.search.children()))
    assert n >= 15 and len(parts) == n, last
    words = [p.split() for p in parts]
    visits = [int(w[w.index("visits") + 1]) for w in words]
    orders = [int(w[w.index("order") + 1]) for w in words]
    priors = [float(w[w.index("prior") + 1]) for w in words]
    assert orders == list(range(n))
    first_zero = visits.index(0)
    assert all(visits[:first_zero]) and not any(visits[first_zero:])
    assert priors[first_zero:] == sorted(priors[first_zero:], reverse=True)
    moves = [w[2] for w in words]
    assert len(set(moves)) == n
    for w in words[first_zero:]:
        assert float(w[w.index("lcb") + 1]) == 0 and w[w.index("pv") + 1:] == [w[2]]
    out, _ = _stream(g, f"{command} b 1 minmoves 40 maxmoves 5", "\n")
    assert all(len(_parts(l)) <= 5 for l in out.split("\n")[1:-2])


def test_kata_ownership_stdev(g):
    """ownershipStdev true: after ownership, the standard deviation of each point's final
    owner over the playouts, in KataGo's order; with the mean it never passes 1, and it is
    the same for either side analysed."""
    midgame(g)
    g.engine.config.playouts = 300
    spreads = {}
    for color in ("b", "w"):
        out, _ = _stream(g, f"kata-analyze {color} 1 ownership true ownershipStdev true", "\n")
        line = out.split("\n")[-3]
        head, rest = line.split(" ownership ")
        own, spread = rest.split(" ownershipStdev ")
        own = [float(x) for x in own.split()]
        spread = [float(x) for x in spread.split()]
        assert len(own) == len(spread) == 81
        assert all(0 <= sd <= 1 and sd * sd + m * m <= 1 + 1e-3 for sd, m in zip(spread, own))
        assert all(KATA_INFO.fullmatch(p) for p in _parts(head)), head
        spreads[color] = spread
    # the same search statistics, whichever side they are read for (fresh searches differ a
    # little): the settled points (a stone that never falls) agree
    assert max(spreads["b"]) > 0.5
    assert sum(abs(a - b) for a, b in zip(spreads["b"], spreads["w"])) / 81 < 0.2


def test_kata_info_line_root_info_and_pv_visits():
    d = {"move": "C3", "visits": 9, "winrate": 0.5, "prior": 0.25, "lcb": 0.25, "order": 0,
         "pv": ["C3", "D4"], "pv_visits": [9, 4]}
    line = kata_info_line([d], score=1.5, root={"visits": 12, "winrate": 0.625,
                                                "currentPlayer": "W"},
                          pv_visits=True, pv_edge_visits=True)
    assert line == ("info move C3 visits 9 winrate 0.500000 scoreMean 1.50 scoreLead 1.50 "
                    "prior 0.250000 lcb 0.250000 order 0 pv C3 D4 pvVisits 9 4 pvEdgeVisits 9 4 "
                    "rootInfo visits 12 winrate 0.625000 scoreMean 1.50 scoreLead 1.50 "
                    "currentPlayer W")


@pytest.mark.parametrize("bad", ["avoid b E6 0", "avoid b Z99 1", "avoid q E6 1", "avoid b E6",
                                 "avoid b E6 x", "allow b E6 1 avoid b C5 1",
                                 "avoid b C5 1 allow b E6 1", "allow b E6 1 allow w C5 1"])
@pytest.mark.parametrize("command", ["lz-analyze b 10", "kata-analyze b 10",
                                     "lz-genmove_analyze b 10", "kata-genmove_analyze b 10"])
def test_bad_avoid_and_allow_arguments_are_refused(g, command, bad):
    midgame(g)
    before = state(g)
    assert err(g, f"{command} {bad}").startswith(("syntax error", "invalid"))
    assert state(g) == before


def _info_moves(line):
    """The moves an analysis line reports."""
    return [part.split()[0] for part in line.split("info move ")[1:]]


@pytest.mark.parametrize("command", ["lz-genmove_analyze", "kata-genmove_analyze"])
def test_genmove_analyze_keeps_out_avoided_moves_and_plays_an_allowed_one(g, command):
    """Leela Zero's avoid / allow (KataGo's too): the moves avoided at the root are neither
    reported nor played; with allow, only the moves listed (or a pass) are."""
    midgame(g)
    avoided = {"E6", "C5", "F5", "F4", "E3", "C3"}
    out, _ = _stream(g, f"{command} b 1 avoid b {','.join(sorted(avoided))} 1 avoid w D3 2")
    lines = out.split("\n")
    played = lines[-3].split()[1]
    reported = {m for l in lines[1:-3] for m in _info_moves(l)}
    assert reported and not reported & avoided and played not in avoided, out
    ok(g, "undo")
    out, _ = _stream(g, f"{command} b 1 allow b G7,C7 1")
    lines = out.split("\n")
    reported = {m for l in lines[1:-3] for m in _info_moves(l)}
    assert reported <= {"G7", "C7", "pass"} and lines[-3].split()[1] in {"G7", "C7"}, out


def test_kata_root_info_and_pv_visits(g):
    """rootInfo: the root's visits and win rate, the side to move; pvVisits (and
    pvEdgeVisits, the same in a tree): one count per move of the line, the first the move's
    visits, never rising down the line."""
    midgame(g)
    out, _ = _stream(g, "kata-genmove_analyze b 1 rootInfo true pvVisits true pvEdgeVisits true")
    lines = out.split("\n")[1:-3]
    assert lines
    for l in lines:
        body, root = l.split(" rootInfo ")
        m = re.fullmatch(rf"visits (\d+) winrate {UNIT} {SCORE} currentPlayer B", root)
        assert m, root
        for part in body.split("info ")[1:]:
            words = part.split()
            visits = int(words[words.index("visits") + 1])
            pv = words[words.index("pv") + 1:words.index("pvVisits")]
            seen = [int(x) for x in words[words.index("pvVisits") + 1:words.index("pvEdgeVisits")]]
            edge = [int(x) for x in words[words.index("pvEdgeVisits") + 1:]]
            assert len(seen) == len(pv) and seen == edge and seen[0] == visits, part
            assert seen == sorted(seen, reverse=True), part
            assert int(m.group(1)) >= visits


def test_kata_genmove_analyze(g):
    """KataGo's genmove with analysis: kata-analyze's lines (ownership when asked), then
    `play MOVE`, played on the board; input meanwhile waits its turn; bad arguments answer
    `? message` and leave the game as it was."""
    midgame(g)
    before = state(g)
    for bad in ("kata-genmove_analyze", "kata-genmove_analyze b 10 ownership maybe",
                "kata-genmove_analyze b 10 maxmoves -1", "kata-genmove_analyze x 10"):
        assert err(g, bad).startswith("syntax error"), bad
        assert state(g) == before
    n = len(g.engine.board.moves)
    out, pending = _stream(g, "7 kata-genmove_analyze w 5 ownership true maxmoves 3", "name\n")
    lines = out.split("\n")
    assert lines[0] == "=7" and out.endswith("\n\n") and "\n\n" not in out[:-2]
    assert re.fullmatch(rf"play {VERTEX}", lines[-3]) and pending == []
    assert g.engine.board.moves[-1] == ("w", lines[-3].split()[1]) and len(g.engine.board.moves) == n + 1
    infos = lines[1:-3]
    assert infos, "no info line"
    size = g.engine.board.size
    for l in infos:
        head, own = l.split(" ownership ")
        parts = ["info " + p for p in head.split("info ")[1:]]
        assert 1 <= len(parts) <= 3 and all(KATA_INFO.fullmatch(p.strip()) for p in parts), l
        assert len(own.split()) == size * size
    assert g._lines.get_nowait() == "name\n"


# --- pondering (--ponder) ----------------------------------------------------------------------
def _ponder_gtp(**kw):
    """A pondering engine over GTP on 9x9; the root visits each search kept when it set its
    root are listed in engine.kept_roots (the first genmove's search, then its pondering, ...)."""
    engine = Engine(EngineConfig(playouts=200, seed=1, ponder=True, mode="rollouts", **kw))
    gtp = Gtp(engine, io.StringIO())
    ok(gtp, "boardsize 9")
    ok(gtp, "komi 7")
    engine.kept_roots = []
    real_root = engine._root

    def root(*a, **kw):
        result = real_root(*a, **kw)
        engine.kept_roots.append(engine.search.root_visits)
        return result

    engine._root = root
    return gtp


def _wait_for_playouts(engine, n=1, limit_s=60):
    """Poll until the pondering after the first genmove (the second search) has run n playouts:
    its root has n visits more than it kept (the playout counter may still be the genmove's a
    moment after pondering starts); a deadline only against a hang. Returns its playouts."""
    import time
    end = time.monotonic() + limit_s

    def ran():
        kept = engine.kept_roots
        return engine.search.root_visits - kept[1] if len(kept) >= 2 else 0

    while ran() < n and time.monotonic() < end:
        time.sleep(0.02)
    return ran()


def test_kgs_game_over_stops_pondering_and_frees_the_trees():
    """The opponent resigned after our move: kgsGtp's kgs-game_over ends the pondering that
    would otherwise run on, and the trees are emptied; the game record stays."""
    gtp = _ponder_gtp()
    e = gtp.engine
    ok(gtp, "genmove b")
    assert e.pondering and _wait_for_playouts(e, 20) >= 20
    before = state(gtp)
    ok(gtp, "kgs-game_over")
    assert not e.pondering and e.search.root_visits == 0 and e.search.children() == []
    assert state(gtp) == before
    err(gtp, "kgs-game_over now")
    ok(gtp, "name")
    assert not e.pondering


def test_ponder_searches_after_genmove_and_any_command_stops_it():
    gtp = _ponder_gtp()
    e = gtp.engine
    assert not e.pondering
    ok(gtp, "genmove b")
    assert e.pondering                       # the opponent's time: searching White's move
    assert _wait_for_playouts(e, 50) >= 50
    assert ok(gtp, "name") == "gammago"      # any command stops it first
    assert not e.pondering and e.pondered >= 50
    ok(gtp, "genmove w")                     # not after a refused or non-move command
    assert e.pondering
    err(gtp, "play b Z99")
    assert not e.pondering
    ok(gtp, "genmove b")
    assert e.pondering
    ok(gtp, "stop")                          # KataGo's: stops it, and nothing else
    assert not e.pondering and len(e.board.moves) == 3
    # off by default
    plain = make_gtp()
    ok(plain, "genmove b")
    assert not plain.engine.pondering


def test_ponder_keeps_the_subtree_of_the_opponents_move():
    gtp = _ponder_gtp()
    e = gtp.engine
    ok(gtp, "genmove b")
    _wait_for_playouts(e, 1500)
    e.ponder_stop()
    best = max(e.search.children(), key=lambda c: c[1])
    reply = e.board.vertex(best[0])
    assert best[1] > 0
    ok(gtp, f"play w {reply}")
    e._root(1)                               # what the next genmove starts from
    assert e.search.root_visits == best[1] > 0
    e.genmove("b")                           # (the engine's own: GTP's would ponder again)
    assert e.search.root_visits == best[1] + 200


def test_analysis_and_quit_while_pondering():
    """lz-analyze during pondering stops pondering, then analyses on its tree: the root keeps
    the visits pondering gave it (and kata-analyze after it those of both); quit ends the loop
    with nothing left running."""
    import threading
    import time
    gtp = _ponder_gtp()
    e = gtp.engine
    out = io.StringIO()
    gtp.out = out
    roots = []                    # root visits before and after each search's _root()
    real_root = e._root

    def root(*a, **kw):
        before = e.search.root_visits
        result = real_root(*a, **kw)
        roots.append((before, e.search.root_visits))
        return result

    e._root = root
    pondered = {}

    def grown(k, n, limit_s=60):
        """Wait until the k-th search has set its root and its root has n visits more than it
        kept (its own playouts: the playout counter may still be the last search's for a
        moment); a deadline only against a hang."""
        end = time.monotonic() + limit_s
        while time.monotonic() < end and (len(roots) < k or e.search.root_visits < roots[k - 1][1] + n):
            time.sleep(0.02)

    def lines():
        yield "genmove b\n"
        pondered["playouts"] = _wait_for_playouts(e, 500)     # pondering under way
        yield "lz-analyze w 10\n"
        grown(3, 300)
        yield "\n"
        yield "kata-analyze w 10\n"
        grown(4, 300)
        yield "name\n"
        yield "genmove w\n"
        yield "quit\n"

    gtp.serve(lines())
    text = out.getvalue()
    assert text.count("\n=") + text.startswith("=") >= 5 and "?" not in text
    assert "info move" in text
    assert pondered["playouts"] >= 500
    # genmove b, pondering, lz-analyze, kata-analyze, genmove w (and its pondering, stopped by quit)
    assert len(roots) >= 5, roots
    (_, ponder), (lz_before, lz_after), (kata_before, kata_after) = roots[1:4]
    assert lz_before >= ponder + 500 and lz_after == lz_before          # the ponder tree, kept
    assert kata_before >= lz_after + 300 and kata_after == kata_before   # and the analysis' too
    assert not e.pondering
    assert not [t for t in threading.enumerate() if t.name == "gammago-ponder"]


# --- GoGui's interrupt (`# interrupt` while a command runs) --------------------------------------
def test_interrupt_line_stops_the_move_under_way_and_no_later_one():
    """gogui-interrupt is listed; a `# interrupt` line read while genmove searches (its clock
    gives it 60 s) makes it play its best move at once; the next genmove is not cut short by
    it (it runs its fixed playouts)."""
    import time
    engine = Engine(EngineConfig(seed=1, mode="rollouts", move_time=60, early_stop=False,
                                 max_nodes=200000))
    gtp = Gtp(engine, io.StringIO())
    assert "gogui-interrupt" in ok(gtp, "list_commands").split("\n")
    assert ok(gtp, "known_command gogui-interrupt") == "true"
    took = {}

    def lines():
        yield "boardsize 9\n"
        yield "genmove b\n"
        t0 = time.monotonic()
        while engine.search.playouts < 200 and time.monotonic() - t0 < 30:
            time.sleep(0.01)              # the search is under way
        took["start"] = time.monotonic()
        yield "# interrupt\n"
        while not engine.board.moves and time.monotonic() - t0 < 90:
            time.sleep(0.01)
        took["stop"] = time.monotonic()
        yield "# interrupt\n"             # between commands: dropped by the next command
        yield "10 genmove w\n"
        yield "quit\n"

    out = io.StringIO()
    gtp.out = out
    real = engine._run_search

    def fixed_second(c, budget, *a, **k):
        if len(engine.board.moves) == 1:  # the second genmove: 300 playouts, not the clock
            engine.config.playouts = 300
        return real(c, budget, *a, **k)
    engine._run_search = fixed_second
    gtp.serve(lines())
    text = out.getvalue()
    assert "?" not in text and len(engine.board.moves) == 2, text
    assert took["stop"] - took["start"] < 10          # far inside the 60 s it was given
    assert engine.search.playouts == 300               # the later genmove ran its whole budget


# --- a controller that vanishes -----------------------------------------------------------------
def test_a_killed_controller_stops_the_move_under_way():
    """When the input ends and nobody reads the engine's output any more (the controller was
    killed: both pipes closed), the move under way stops at once and the engine exits, instead
    of thinking out its 60 s."""
    import time
    p = _spawn("--mode", "rollouts", "--move-time", "60", "--no-early-stop", "--quiet")
    try:
        p.stdin.write("boardsize 9\n")
        p.stdin.flush()
        assert p.stdout.readline() == "=\n" and p.stdout.readline() == "\n"
        p.stdin.write("genmove b\n")
        p.stdin.flush()
        time.sleep(1.0)                       # the search is under way
        t0 = time.monotonic()
        p.stdin.close()
        p.stdout.close()
        p.wait(30)                            # a guard against a hang: 60 s would fail it
        assert time.monotonic() - t0 < 30
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_input_that_ends_while_the_output_is_read_lets_the_move_finish():
    """`printf 'genmove b\\n' | gammago gtp`: the input ends at once but the output is still
    read, so the move runs its whole budget (its fixed playouts) and is answered."""
    p = _spawn("--mode", "rollouts", "--playouts", "3000", "--threads", "1", "--seed", "4")
    out, errs = p.communicate("boardsize 9\ngenmove b\n", timeout=120)
    assert p.returncode == 0
    assert re.search(rf"^= {VERTEX}$", out, re.M), out
    assert re.search(r"\b3000 playouts\b", errs), errs


# --- GNU Go's position queries, checked against GNU Go itself -------------------------------------
@pytest.mark.gnugo
@pytest.mark.parametrize("size, seed", [(7, 1), (9, 2)])
def test_position_queries_agree_with_gnugo(gnugo_path, size, seed):
    """is_legal, all_legal, captures and get_komi answer as GNU Go does over a random game
    (capture-biased: single-stone captures make kos), after every move."""
    import random
    from gammago.arena.gtp_process import GtpProcess
    rng = random.Random(seed)
    g = make_gtp()
    head = [f"boardsize {size}", "clear_board", "komi 6.5"]
    for line in head:
        ok(g, line)
    with GtpProcess([gnugo_path, "--mode", "gtp", "--chinese-rules", "--positional-superko"],
                    "gnugo") as gnu:
        assert all(a for a, _ in gnu.pipeline(head))
        assert float(gnu.send("get_komi")) == float(ok(g, "get_komi")) == 6.5
        color, singles, moves = "b", 0, 0
        while moves < 4 * size * size:
            queries = ["all_legal b", "all_legal w", "captures b", "captures w"]
            points = [format_vertex((rng.randrange(size), rng.randrange(size))) for _ in range(3)]
            queries += [f"is_legal {c} {v}" for v in points for c in "bw"] + ["is_legal b pass"]
            theirs = gnu.pipeline(queries)
            for q, (fine, text) in zip(queries, theirs):
                mine = ok(g, q)
                if q.startswith("all_legal"):
                    assert set(mine.split()) == set(text.split()), (q, moves)
                else:
                    assert fine and mine == text.strip(), (q, mine, text, moves)
            legal = ok(g, f"all_legal {color}").split()
            if not legal:
                break
            board = g.engine.board
            takes = [v for v in legal if board.copy().play(v, color) > 0]
            move = rng.choice(takes if takes and rng.random() < 0.7 else legal)
            singles += board.copy().play(move, color) == 1
            ok(g, f"play {color} {move}")
            gnu.send(f"play {color} {move}")
            color = "w" if color == "b" else "b"
            moves += 1
        assert moves > 2 * size and singles > 0


def test_kgs_chat(g):
    """kgs-chat (kgsGtp passes players' chat): `winrate` and `score` answer the last search's
    view for the side it searched, `version` and `help` answer too; other talk and bad
    arguments answer `?`, the game unchanged."""
    before = state(g)
    assert "winrate" in ok(g, "kgs-chat private bob help")
    assert ok(g, "kgs-chat game bob winrate") == "no search yet in this game"
    assert ok(g, "kgs-chat game bob Version").startswith("gammago ")
    for bad in ("kgs-chat game bob gg", "kgs-chat game bob thanks for the game", "kgs-chat game bob",
                "kgs-chat lobby bob winrate", "kgs-chat"):
        err(g, bad)
    assert state(g) == before
    move = ok(g, "genmove w")
    text = ok(g, "kgs-chat game bob winrate?")
    m = re.fullmatch(rf"my last search, for White: {move} after ([\d,]+) playouts, win rate "
                     rf"(\d+\.\d)% for White; expected score (?:[BW]\+\d+(?:\.\d)?|0)", text)
    assert m and int(m.group(1).replace(",", "")) > 0 and 0 <= float(m.group(2)) <= 100, text
    assert ok(g, "kgs-chat private bob score") == text


# a 9x9 position of two strings in atari side by side: Black's C1-C7 (last liberty C8) and
# White's D1-D7 (last liberty D8); Black to play captures seven stones at D8 (or wins the race by
# extending at C8), a move elsewhere lets White capture Black's seven at C8
CAPTURE_SETUP = ([f"{c} {x}{k}" for k in range(1, 8) for c, x in (("b", "C"), ("w", "D"))]
                 + [f"{c} {x}{k}" for k in range(1, 8) for c, x in (("b", "E"), ("w", "B"))])


@pytest.mark.parametrize("mode", ["rollouts", "net-root"])
def test_candidates_carry_their_own_scores(mode):
    """kata-analyze, analyze and lz-analyze give each candidate the score of its own playouts:
    the capture that decides a race of seven stones against seven is worth more than the other
    moves, and far more than the worst: the candidates' scores differ, the capture's highest."""
    g = Gtp(Engine(EngineConfig(playouts=1500, seed=2, mode=mode, max_nodes=200000)), io.StringIO())
    ok(g, "boardsize 9")
    ok(g, "komi 7")
    for move in CAPTURE_SETUP:
        ok(g, f"play {move}")
    out, _ = _stream(g, "kata-genmove_analyze b 1")
    last = out.split("\n")[-4]
    scores = {}
    for part in _parts(last):
        m = KATA_INFO.fullmatch(part.strip())
        assert m, part
        words = part.split()
        scores[words[2]] = float(words[words.index("scoreMean") + 1])
        assert words[words.index("scoreLead") + 1] == words[words.index("scoreMean") + 1]
    assert len(set(scores.values())) > 1, scores
    assert max(scores, key=scores.get) == "D8", scores
    if len(scores) > 2:          # a move elsewhere among them (net-root may visit two alone)
        assert scores["D8"] > min(scores.values()) + 5, scores
    ok(g, "undo")
    for command, key in (("analyze b 1", "scoreLead"), ("lz-analyze b 1", "scoreMean")):
        out, _ = _stream(g, command, "\n")
        parts = _parts(out.split("\n")[-3])
        got = {p.split()[2]: float(p.split()[p.split().index(key) + 1]) for p in parts}
        assert len(set(got.values())) > 1, (command, got)
