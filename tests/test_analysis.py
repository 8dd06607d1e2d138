"""`gammago analysis`: KataGo's JSON analysis protocol, on queries shaped as KaTrain's
KataGoEngine.request_analysis builds them, against the real Engine (small budgets): most tests
in rollouts on 9x9, the bursts of queries in the default mode (auto: the shipped net at the
root) on 9x9 and 19x19.

Answers come in any order (several workers); reportDuringSearchEvery gives partial answers
marked isDuringSearch; terminate stops a running query and cancels a queued one (noResults);
queries sent together are each answered with moves, values and scores; every bad line or field
answers KataGo's {"id", "error", "field"} and the engine goes on. The last test drives
KaTrain's own KataGoEngine through its custom backend (skipped without katrain).
"""
import itertools
import json
import math
import os
import queue
import shlex
import subprocess
import sys
import threading
import time

import pytest

from gammago.protocol.json_analysis import AnalysisServer
from gammago.protocol.json_answer import build_answer
from gammago.protocol.json_query import QueryError, handicap_bonus, parse_query, parse_rules
from gammago.engine.engine import Engine, EngineConfig

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAME9 = os.path.join(ROOT, "tests", "games9", "selfplay-game_0001.sgf")
WAIT_S = 60
MOVE_KEYS = {"move", "visits", "winrate", "scoreLead", "scoreMean", "scoreStdev", "prior", "lcb",
             "order", "pv"}
LONG = 10_000_000          # visits no test waits for: such a query ends by terminate


class Lines:
    """The server's output: one JSON answer a line, waited for by a predicate."""

    def __init__(self):
        self.got = []
        self._cond = threading.Condition()
        self._buf = ""

    def write(self, text):
        with self._cond:
            self._buf += text
            while "\n" in self._buf:
                line, self._buf = self._buf.split("\n", 1)
                self.got.append(json.loads(line))
            self._cond.notify_all()

    def flush(self):
        pass

    def wait(self, pred, timeout=WAIT_S):
        """The first answer (in output order) for which pred holds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for d in self.got:
                    if pred(d):
                        return d
                left = deadline - time.monotonic()
                assert left > 0, f"no such answer; got {[_brief(d) for d in self.got]}"
                self._cond.wait(left)

    def final(self, qid, turn=None):
        return self.wait(lambda d: d.get("id") == qid and d.get("isDuringSearch") is False
                         and (turn is None or d.get("turnNumber") == turn))

    def index(self, d):
        with self._cond:
            return next(i for i, x in enumerate(self.got) if x is d)


def _brief(d):
    return {k: v for k, v in d.items() if k not in ("moveInfos", "ownership", "policy")}


def _server(workers=2, **kw):
    engines = [Engine(EngineConfig(mode="rollouts", seed=1 + i, max_nodes=100_000))
               for i in range(workers)]
    out = Lines()
    return AnalysisServer(engines, out, **kw), out


@pytest.fixture
def served():
    server, out = _server()
    yield server, out
    server.close(wait=False)


def katrain_query(qid, moves=(), **extra):
    """A query as KaTrain's KataGoEngine.request_analysis sends it (9x9)."""
    q = {"id": qid, "rules": "chinese", "priority": 0, "analyzeTurns": [len(moves)],
         "maxVisits": 60, "komi": 7, "boardXSize": 9, "boardYSize": 9,
         "includeOwnership": True, "includeMovesOwnership": True, "includePolicy": True,
         "initialStones": [], "initialPlayer": "B", "moves": [list(m) for m in moves],
         "overrideSettings": {"reportAnalysisWinratesAs": "BLACK", "wideRootNoise": 0.04,
                              "maxTime": 8.0}}
    q.update(extra)
    return q


def send(server, q):
    server.handle(json.dumps(q))


OPENING = [("B", "E5"), ("W", "C4"), ("B", "D6"), ("W", "F4")]


# --- rules ------------------------------------------------------------------------------------
def test_rules_names_shorthands_objects_and_their_warnings():
    for name in ("chinese", "CN", "tromp-taylor", "tt", "aga", "new zealand", "nz",
                 "chinese-ogs", "stone_scoring", "japanese", "jp", "korean"):
        rules, _ = parse_rules(name)
        assert rules.scoring in ("AREA", "TERRITORY")
    assert parse_rules("chinese")[1] == [] and parse_rules("tromp-taylor")[1] == []
    rules, warnings = parse_rules("japanese")         # territory scoring is played: no warning
    assert rules.territory and rules.tax == "SEKI" and warnings == []
    rules, warnings = parse_rules({"ko": "positional", "scoring": "TERRITORY", "suicide": True})
    assert rules.ko == "POSITIONAL" and rules.suicide and rules.tax == "SEKI" and not warnings
    rules, warnings = parse_rules("stone-scoring")    # what the engine does not play: warned
    assert rules.tax == "ALL" and any("tax" in w for w in warnings)
    assert parse_rules({"hasButton": True})[1]
    for bad in ("go", {"scoring": "COUNTING"}, {"foo": 1}, {"suicide": "yes"}, 7):
        with pytest.raises(QueryError):
            parse_rules(bad)
    # White's points for handicap stones: Chinese N, AGA N-1, Japanese none
    stones = ("D4", "F6", "D6")
    assert handicap_bonus(parse_rules("chinese")[0], stones, ()) == 3
    assert handicap_bonus(parse_rules("aga")[0], stones, ()) == 2
    assert handicap_bonus(parse_rules("japanese")[0], stones, ()) == 0
    assert handicap_bonus(parse_rules("chinese")[0], stones, ("E5",)) == 0


def _jobs(**q):
    base = {"id": "j", "moves": [], "rules": "chinese", "boardXSize": 9, "boardYSize": 9}
    return parse_query({**base, **q}, {"max_visits": 0, "max_time": 1.0,
                                       "perspective": "SIDETOMOVE"}, itertools.count())


def test_query_details_komi_handicap_locations_limits():
    (job,), warnings = _jobs(rules="japanese")
    assert job.komi == 6.5 and warnings == [] and job.rules.territory    # KataGo's defaults
    assert _jobs()[0][0].komi == 7.5 and _jobs()[1] == []
    (job,), _ = _jobs(komi=0.5, initialStones=[["B", "C3"], ["B", "G7"]], initialPlayer="W")
    assert job.komi == 2.5 and job.to_move == "w"                 # Chinese: N for N stones
    (job,), _ = _jobs(moves=[["B", "(0,0)"], ["W", "(8,8)"]])      # (x,y), y from the top
    assert job.moves == (("b", "A9"), ("w", "J1")) and job.to_move == "b"
    (job,), _ = _jobs(maxVisits=50, overrideSettings={"maxVisits": 9, "maxTime": 2.5,
                                                      "maxPlayouts": 30})
    assert (job.max_visits, job.max_playouts, job.max_time) == (50, 30, 2.5)
    (job,), _ = _jobs()
    assert (job.max_visits, job.max_time) == (0, 1.0)              # no limit: --move-time
    jobs, _ = _jobs(moves=[["B", "E5"], ["W", "C4"]], analyzeTurns=[2, 0],
                    priorities=[1, 7])
    assert [(j.turn, j.priority, j.to_move) for j in jobs] == [(2, 1, "b"), (0, 7, "b")]


def test_pv_length_pv_visits_and_ownership_spread(served):
    server, out = served
    send(server, katrain_query("extras", OPENING, maxVisits=400, analysisPVLen=2,
                               includePVVisits=True, includeOwnershipStdev=True))
    a = out.final("extras")
    for m in a["moveInfos"]:
        assert 1 <= len(m["pv"]) <= 3 and len(m["pvVisits"]) == len(m["pv"])
        assert m["pvVisits"][0] == m["visits"]
    assert len(a["ownershipStdev"]) == 81 and all(0 <= x <= 1 for x in a["ownershipStdev"])


# --- one query ---------------------------------------------------------------------------------
def test_a_katrain_query_gets_katago_fields(served):
    server, out = served
    send(server, katrain_query("QUERY:1", OPENING))
    a = out.final("QUERY:1")
    assert a["turnNumber"] == 4 and not a.get("noResults")
    infos = a["moveInfos"]
    assert infos and [m["order"] for m in infos] == list(range(len(infos)))
    occupied = {v for _, v in OPENING}
    for m in infos:
        assert MOVE_KEYS <= set(m), m
        assert m["move"] not in occupied and m["pv"][0] == m["move"]
        assert 0 <= m["winrate"] <= 1 and 0 <= m["prior"] <= 1 and m["visits"] > 0
    root = a["rootInfo"]
    assert root["visits"] >= 60 and root["currentPlayer"] == "B"
    assert {"winrate", "scoreLead", "scoreStdev"} <= set(root)
    assert len(a["ownership"]) == 81 and all(-1 <= x <= 1 for x in a["ownership"])
    policy = a["policy"]
    assert len(policy) == 82
    # row by row from the top: E5 is row 4 from the top, column 4; C4 row 5, column 2
    assert policy[4 * 9 + 4] == -1 and policy[5 * 9 + 2] == -1
    assert abs(sum(p for p in policy if p >= 0) - 1) < 1e-6 and policy[-1] >= 0
    # the fields KaTrain sends that this engine does not compute get a warning, not an error
    warned = {d["field"] for d in out.got if "warning" in d and d["id"] == "QUERY:1"}
    assert {"includeMovesOwnership", "overrideSettings"} <= warned
    assert not any("error" in d for d in out.got)
    # fields KataGo computes and this engine does not are left out
    assert not {"utility", "scoreSelfplay", "ownership"} & set(infos[0])
    assert not {"thisHash", "symHash", "utility"} & set(root)


def test_ownership_rows_run_from_the_top_and_the_perspective_flips_everything():
    engine = Engine(EngineConfig(mode="rollouts", seed=3, max_nodes=100_000))
    server = AnalysisServer([engine], Lines())
    server.close()                               # no worker thread: the engine is this test's
    q = katrain_query("own", [], initialStones=[["B", v] for v in ("B7", "C7", "D7", "E7", "F7",
                                                                     "G7", "H7")]
                      + [["W", v] for v in ("B3", "C3", "D3", "E3", "F3", "G3", "H3")],
                      initialPlayer="W", maxVisits=300)
    (job,), _ = parse_query(q, {"max_visits": 0, "max_time": 1.0, "perspective": "SIDETOMOVE"},
                            itertools.count())
    server._set_position(server.workers[0], job)
    stop = threading.Event()
    got = []
    threading.Timer(0.3, stop.set).start()
    engine.analyze("w", 1e9, stop, lambda infos: got.append(infos))
    infos = got[-1]
    black = build_answer(job, engine, infos, False)                       # BLACK, as KaTrain asks
    job.perspective = "SIDETOMOVE"                                        # White to move
    white = build_answer(job, engine, infos, False)
    top, bottom = sum(black["ownership"][:27]), sum(black["ownership"][-27:])
    assert top > 5 > -5 > bottom, (top, bottom)
    assert all(abs(b + w) < 1e-9 for b, w in zip(black["ownership"], white["ownership"]))
    for mb, mw in zip(black["moveInfos"], white["moveInfos"]):
        assert mb["move"] == mw["move"] and abs(mb["winrate"] + mw["winrate"] - 1) < 1e-9
        assert abs(mb["scoreLead"] + mw["scoreLead"]) < 1e-9
    assert abs(black["rootInfo"]["winrate"] + white["rootInfo"]["winrate"] - 1) < 1e-9
    assert black["rootInfo"]["currentPlayer"] == "W"


def test_every_answer_has_scores_a_move_s_own_or_the_root_s():
    """A move's scoreMean and scoreStdev are its info's (points for the side to move) where
    the search gives them, else the root's; the root's is every playout's (Engine.root_score)
    where the engine has it; with no playout played out (none yet, or the mercy rule ending
    every one) and no such score, the stones as they stand, minus komi, and the ownership those
    stones."""
    from types import SimpleNamespace
    from gammago.go.board import Board
    (job,), _ = _jobs(moves=[["B", "E5"], ["W", "C4"], ["B", "D6"]], komi=7,
                      includeOwnership=True, includeOwnershipStdev=True)
    board = Board(9, 7.0)
    for c, v in job.moves:
        board.play(v, c)
    engine = SimpleNamespace(board=board, search=SimpleNamespace(owned=0, root_visits=4),
                             root_score=lambda c: None)          # no playout counted yet
    infos = [{"move": "E4", "visits": 3, "winrate": 0.6, "prior": 0.3, "lcb": 0.5, "order": 0,
              "pv": ["E4", "D4"], "score_mean": 2.5, "score_stdev": 4.0},
             {"move": "F5", "visits": 1, "winrate": 0.4, "prior": 0.1, "order": 1, "pv": ["F5"]}]
    for perspective, sign in (("SIDETOMOVE", 1), ("WHITE", 1), ("BLACK", -1)):
        job.perspective = perspective                     # White to move
        a = build_answer(job, engine, infos, False)
        root, (m0, m1) = a["rootInfo"], a["moveInfos"]
        assert root["scoreLead"] == root["scoreMean"] == -sign * (2 - 1 - 7)
        assert root["scoreStdev"] == 0.0 and root["visits"] == 4
        assert m0["scoreLead"] == m0["scoreMean"] == sign * 2.5 and m0["scoreStdev"] == 4.0
        assert m1["scoreLead"] == m1["scoreMean"] == root["scoreLead"]
        assert m1["scoreStdev"] == 0.0
        assert sorted(a["ownership"]).count(sign * -1.0) == 2        # Black's two stones
        assert a["ownershipStdev"] == [0.0] * 81
        assert MOVE_KEYS <= set(m0) and MOVE_KEYS <= set(m1)
    # the root's score is every playout's where the engine gives one (points for Black here)
    engine.root_score = lambda c: (3.0, 5.0) if c == 1 else (-3.0, 5.0)
    job.perspective = "WHITE"
    a = build_answer(job, engine, infos, False)
    root, (m0, m1) = a["rootInfo"], a["moveInfos"]
    assert (root["scoreLead"], root["scoreMean"], root["scoreStdev"]) == (-3.0, -3.0, 5.0)
    assert (m1["scoreLead"], m1["scoreStdev"]) == (-3.0, 5.0) and m0["scoreLead"] == 2.5


def test_analyze_turns_answer_each_turn_with_its_side_to_move(served):
    server, out = served
    send(server, katrain_query("turns", OPENING[:3], analyzeTurns=[0, 1, 3], maxVisits=30))
    answers = [out.final("turns", t) for t in (0, 1, 3)]
    assert [a["rootInfo"]["currentPlayer"] for a in answers] == ["B", "W", "W"]
    # each answer is its own turn's position: E5 (row 4 from the top, column 4 of the policy)
    # is open at turn 0 and taken from turn 1 on, C4 and D6 by turn 3
    e5 = 4 * 9 + 4
    assert answers[0]["policy"][e5] >= 0 and answers[1]["policy"][e5] == -1
    assert all(a["moveInfos"] for a in answers)
    assert "E5" not in {m["move"] for m in answers[1]["moveInfos"]}
    assert not {"E5", "C4", "D6"} & {m["move"] for m in answers[2]["moveInfos"]}


def test_avoid_and_allow_moves(served):
    server, out = served
    allowed = {"C3", "G7", "pass"}
    send(server, katrain_query("allow", allowMoves=[{"player": "B", "moves": ["C3", "G7"],
                                                     "untilDepth": 1}]))
    send(server, katrain_query("avoid", avoidMoves=[{"player": "B", "moves": ["E5", "D5", "E4"],
                                                     "untilDepth": 1}]))
    assert {m["move"] for m in out.final("allow")["moveInfos"]} <= allowed
    assert not {m["move"] for m in out.final("avoid")["moveInfos"]} & {"E5", "D5", "E4"}


def test_a_query_on_the_game_of_the_last_one_searches_on_its_tree():
    server, out = _server(workers=1)
    try:
        send(server, katrain_query("first", OPENING[:3], maxVisits=200))
        first = out.final("first")
        for qid, moves in (("again", OPENING[:3]), ("next", OPENING)):
            send(server, katrain_query(qid, moves, maxVisits=200))
            a = out.final(qid)
            # the visits kept come on top of the playouts asked; ownership and score are those
            # of this search's playouts
            assert a["rootInfo"]["visits"] >= 200 and "scoreLead" in a["moveInfos"][0]
            assert len(a["ownership"]) == 81
        assert out.final("again")["rootInfo"]["visits"] > first["rootInfo"]["visits"]
    finally:
        server.close(wait=False)


# --- several queries, partial answers, terminate ---------------------------------------------
def test_queries_answer_as_they_finish_with_partial_reports_and_terminate(served):
    server, out = served
    send(server, katrain_query("long", OPENING, maxVisits=LONG, reportDuringSearchEvery=0.05,
                               overrideSettings={"reportAnalysisWinratesAs": "BLACK"}))
    partial = out.wait(lambda d: d.get("id") == "long" and d.get("isDuringSearch"))
    assert partial["moveInfos"] and len(partial["ownership"]) == 81
    send(server, katrain_query("short", OPENING[:2], maxVisits=40))
    short = out.final("short")                  # answered while "long" still runs
    assert not any(d.get("id") == "long" and d.get("isDuringSearch") is False for d in out.got)
    send(server, {"id": "stop", "action": "terminate", "terminateId": "long"})
    echo = out.wait(lambda d: d.get("id") == "stop")
    assert echo == {"id": "stop", "action": "terminate", "terminateId": "long"}
    final = out.final("long")
    assert final["moveInfos"] and final["rootInfo"]["visits"] < LONG
    assert out.index(short) < out.index(final)
    later = [d for d in out.got[out.index(final) + 1:] if d.get("id") == "long"]
    assert not later                             # nothing after the final answer


def test_priority_orders_the_queue_and_terminate_cancels_queued_jobs():
    server, out = _server(workers=1)
    try:
        send(server, katrain_query("busy", maxVisits=LONG, reportDuringSearchEvery=0.05))
        out.wait(lambda d: d.get("id") == "busy" and d.get("isDuringSearch"))  # holds the worker
        send(server, katrain_query("low", OPENING[:1], maxVisits=20, priority=-5))
        send(server, katrain_query("high", OPENING[:2], maxVisits=20, priority=10))
        send(server, katrain_query("gone", OPENING[:3], maxVisits=20, priority=50))
        send(server, {"id": "t1", "action": "terminate", "terminateId": "gone"})
        gone = out.final("gone")
        assert gone == {"id": "gone", "turnNumber": 3, "isDuringSearch": False,
                        "noResults": True}
        send(server, {"id": "t2", "action": "terminate", "terminateId": "busy",
                      "turnNumbers": [0]})
        busy, high, low = out.final("busy"), out.final("high"), out.final("low")
        assert out.index(busy) < out.index(high) < out.index(low)
        assert not high.get("noResults") and not low.get("noResults")
    finally:
        server.close(wait=False)


def test_terminate_all(served):
    server, out = served
    for i in range(3):
        send(server, katrain_query(f"q{i}", OPENING[:i], maxVisits=LONG,
                                   reportDuringSearchEvery=0.05))
    for qid in ("q0", "q1"):                     # the two workers search them, q2 waits
        out.wait(lambda d: d.get("id") == qid and d.get("isDuringSearch"))
    send(server, {"id": "all", "action": "terminate_all"})
    assert out.wait(lambda d: d.get("id") == "all") == {"id": "all", "action": "terminate_all"}
    answers = [out.final(f"q{i}") for i in range(3)]
    assert [bool(a.get("noResults")) for a in answers] == [False, False, True]
    assert answers[0]["moveInfos"] and answers[1]["moveInfos"]


def test_actions(served):
    server, out = served
    send(server, {"id": "v", "action": "query_version"})
    v = out.wait(lambda d: d.get("id") == "v")
    assert v["action"] == "query_version" and v["version"] and "git_hash" in v
    send(server, {"id": "c", "action": "clear_cache"})
    assert out.wait(lambda d: d.get("id") == "c") == {"id": "c", "action": "clear_cache"}
    send(server, {"id": "x", "action": "dance"})
    err = out.wait(lambda d: d.get("id") == "x")
    assert "error" in err and err["field"] == "action"


# --- bad input -----------------------------------------------------------------------------------
BAD = [
    ({"rules": None}, "rules"),                # None: the field left out
    ({"boardYSize": 13}, "boardYSize"),
    ({"boardXSize": 25, "boardYSize": 25}, "boardXSize"),
    ({"komi": "seven"}, "komi"),
    ({"komi": 7.3}, "komi"),
    ({"moves": [["B", "E5"], ["W", "E5"]]}, "moves"),
    ({"moves": [["B", "Z5"]]}, "moves"),
    ({"moves": [["X", "E5"]]}, "moves"),
    ({"rules": "go-rules"}, "rules"),
    ({"analyzeTurns": [3]}, "analyzeTurns"),
    ({"maxVisits": 0}, "maxVisits"),
    ({"includeOwnership": "yes"}, "includeOwnership"),
    ({"initialStones": [["B", "E5"], ["W", "E5"]]}, "initialStones"),
    ({"avoidMoves": [{"player": "B", "moves": ["E5"]}]}, "avoidMoves"),
    ({"overrideSettings": {"reportAnalysisWinratesAs": "GREEN"}}, "overrideSettings"),
    ({"reportDuringSearchEvery": -1}, "reportDuringSearchEvery"),
]


@pytest.mark.parametrize("change,field", BAD)
def test_a_bad_field_answers_an_error_and_the_engine_goes_on(served, change, field):
    server, out = served
    q = katrain_query("bad", maxVisits=20)
    q.update(change)
    q = {k: v for k, v in q.items() if v is not None}
    send(server, q)
    err = out.wait(lambda d: d.get("id") == "bad")
    assert set(err) == {"id", "error", "field"} and err["field"] == field, err
    if change.get("moves") == [["B", "E5"], ["W", "E5"]]:     # KaTrain looks for the words
        assert err["error"].startswith("Illegal move 1: W E5")
    send(server, katrain_query("good", maxVisits=20))
    assert out.final("good")["moveInfos"]
    assert not any(d.get("id") == "bad" and "moveInfos" in d for d in out.got)


def test_lines_that_are_not_queries(served):
    server, out = served
    server.handle("this is not json")
    server.handle("[1, 2]")
    server.handle(json.dumps({"moves": []}))
    server.handle("")                                  # an empty line is skipped
    errors = [d for d in out.got if "error" in d]
    assert len(errors) == 3 and errors[2]["field"] == "id"
    send(server, katrain_query("after", maxVisits=20))
    assert out.final("after")["moveInfos"]


# --- the command over pipes --------------------------------------------------------------------
def _spawn(*args):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "gammago", "analysis", *args],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT)


def test_the_command_answers_json_lines_and_finishes_queued_queries_at_the_end_of_input():
    p = _spawn("--playouts", "80", "--mode", "rollouts", "--threads", "2", "--seed", "5",
               "--max-memory", "64")
    q1 = katrain_query("p1", OPENING)
    del q1["maxVisits"]                          # --playouts gives it its visits
    q2 = katrain_query("p2", OPENING[:1], maxVisits=40, includePolicy=False)
    lines = [json.dumps(q1), "not json", json.dumps(q2),
             json.dumps(katrain_query("p3", boardXSize=9, boardYSize=7))]
    out, err = p.communicate("\n".join(lines) + "\n", timeout=WAIT_S)
    assert p.returncode == 0, err[-2000:]
    answers = [json.loads(line) for line in out.splitlines()]    # stdout: JSON lines only
    finals = {d["id"]: d for d in answers if d.get("isDuringSearch") is False}
    assert set(finals) == {"p1", "p2"}
    for a in finals.values():
        assert a["moveInfos"] and all(MOVE_KEYS <= set(m) for m in a["moveInfos"]), a
    assert 80 <= finals["p1"]["rootInfo"]["visits"] < 400
    assert 40 <= finals["p2"]["rootInfo"]["visits"] < 400 and "policy" not in finals["p2"]
    assert sum("error" in d for d in answers) == 2
    assert any(d.get("id") == "p3" and d.get("field") == "boardYSize" for d in answers)


def test_net_policy_where_the_net_runs():
    """--mode net-root: the policy is the net's (legal points only, summing to one)."""
    engine = Engine(EngineConfig(mode="net-root", seed=1, max_nodes=100_000))
    out = Lines()
    server = AnalysisServer([engine], out)
    try:
        send(server, katrain_query("net", OPENING, maxVisits=30))
        a = out.final("net")
        policy = a["policy"]
        assert len(policy) == 82 and policy[4 * 9 + 4] == -1
        assert abs(sum(p for p in policy if p >= 0) - 1) < 1e-5
        assert a["moveInfos"] and len(a["ownership"]) == 81
    finally:
        server.close(wait=False)


# --- the default mode: --mode auto, the shipped net at the root from 9x9 up ---------------------
# Queries sent together each get an answer of their own search: a worker's next job used to be
# stopped before its first playout (noResults, or the last tree's visits without scores).
ROOT_KEYS = {"visits", "winrate", "scoreLead", "scoreMean", "scoreStdev"}
ANSWER_MOVE_KEYS = {"move", "order", "visits", "winrate", "scoreLead", "scoreMean", "prior", "pv"}


def _auto_server(workers):
    engines = [Engine(EngineConfig(seed=1 + i, max_nodes=100_000)) for i in range(workers)]
    out = Lines()
    return AnalysisServer(engines, out), out


def assert_full(a):
    """An answer of a search: rootInfo's and every moveInfo's fields, finite numbers."""
    assert not a.get("noResults") and a["moveInfos"], _brief(a)
    root = a["rootInfo"]
    assert ROOT_KEYS <= set(root) and root["visits"] >= 1, root
    assert all(math.isfinite(root[k]) for k in ROOT_KEYS), root
    for m in a["moveInfos"]:
        assert ANSWER_MOVE_KEYS <= set(m), m
        assert all(math.isfinite(m[k]) for k in ("visits", "winrate", "scoreLead", "scoreMean",
                                                 "prior")), m
        assert m["pv"] and m["pv"][0] == m["move"]


def spread_moves(size, n):
    """n moves of a game on a size x size board, Black first: stones two points apart from the
    third line in, so that none is ever captured (every prefix a different position)."""
    points = [(r, c) for r in range(2, size - 2, 2) for c in range(2, size - 2, 2)]
    assert n <= len(points)
    return [("B" if i % 2 == 0 else "W", "ABCDEFGHJKLMNOPQRST"[c] + str(r + 1))
            for i, (r, c) in enumerate(points[:n])]


def plain_query(qid, size, moves, visits, **extra):
    q = {"id": qid, "moves": [list(m) for m in moves], "rules": "chinese", "komi": 7,
         "boardXSize": size, "boardYSize": size, "maxVisits": visits}
    q.update(extra)
    return q


@pytest.mark.parametrize("size", [9, 19])
@pytest.mark.parametrize("threads", [1, 2])
def test_a_burst_of_queries_is_answered_in_the_default_mode(threads, size):
    """10 queries written back to back to `gammago analysis --threads N`: 10 answers with moves
    and scores, none noResults; a bad line and a bad query among them answer errors."""
    lines = [json.dumps(plain_query(f"b{i}", size, spread_moves(size, i), 8)) for i in range(10)]
    lines[4:4] = ["not json", json.dumps(plain_query("bad", size, [["B", "C3"], ["W", "C3"]], 8))]
    p = _spawn("--threads", str(threads), "--seed", "1", "--max-memory", "64", "--quiet")
    out, err = p.communicate("\n".join(lines) + "\n", timeout=WAIT_S)
    assert p.returncode == 0, err[-2000:]
    answers = [json.loads(line) for line in out.splitlines()]
    finals = {d["id"]: d for d in answers if d.get("isDuringSearch") is False}
    assert sorted(finals) == sorted(f"b{i}" for i in range(10)), [_brief(d) for d in answers]
    for a in finals.values():
        assert_full(a)
    errors = [d for d in answers if "error" in d]
    assert len(errors) == 2 and errors[1]["id"] == "bad" and errors[1]["field"] == "moves"


@pytest.mark.parametrize("workers", [1, 2])
def test_a_terminate_in_a_burst_answers_no_results_for_that_query_alone(workers):
    server, out = _auto_server(workers)
    try:
        holders = [f"hold{i}" for i in range(workers)]
        for h in holders:
            send(server, plain_query(h, 9, [], LONG, reportDuringSearchEvery=0.05))
        for h in holders:                        # every worker searches one: the burst waits
            out.wait(lambda d: d.get("id") == h and d.get("isDuringSearch"))
        burst = [f"b{i}" for i in range(10)]
        for i, qid in enumerate(burst):
            send(server, plain_query(qid, 9, spread_moves(9, i), 8))
            if i == 5:
                send(server, {"id": "t", "action": "terminate", "terminateId": "b5"})
        for h in holders:
            send(server, {"id": f"t-{h}", "action": "terminate", "terminateId": h})
        finals = {qid: out.final(qid) for qid in holders + burst}
        assert [qid for qid, a in finals.items() if a.get("noResults")] == ["b5"]
        for qid, a in finals.items():
            if qid != "b5":
                assert_full(a)
        reports = [d for d in out.got if d.get("isDuringSearch")]
        assert reports
        for d in reports:                        # the holders' reports during their search
            assert_full(d)
    finally:
        server.close(wait=False)


@pytest.mark.parametrize("size", [9, 19])
def test_a_time_limit_shorter_than_a_playout_still_answers_with_scores(size):
    server, out = _auto_server(1)
    try:
        for i in range(3):
            send(server, plain_query(f"t{i}", size, spread_moves(size, i), LONG,
                                     overrideSettings={"maxTime": 0.0001}))
        for i in range(3):
            assert_full(out.final(f"t{i}"))
    finally:
        server.close(wait=False)


def _game9_moves():
    from gammago.go import sgf
    with open(GAME9, "rb") as f:
        game = sgf.parse_game(GAME9, f.read())
    return [(c.upper(), v) for c, v in game.moves]


@pytest.mark.parametrize("workers", [1, 2])
def test_katrain_s_burst_for_a_loaded_game(workers):
    """A game loaded in KaTrain: one query a turn, all at once (priority -98, maxTime 8,
    reports during the search every second, ownership of the moves asked), here with few
    visits: every answer, during the search or final, has the root's and every move's fields;
    what the engine ignores still gets its warning."""
    moves = _game9_moves()
    server, out = _auto_server(workers)
    try:
        for n in range(len(moves) + 1):
            send(server, katrain_query(f"QUERY:{n}", moves[:n], maxVisits=10, priority=-98,
                                       rules="japanese", reportDuringSearchEvery=1.0,
                                       _kt_continuous=False))
        finals = [out.final(f"QUERY:{n}") for n in range(len(moves) + 1)]
        for a in finals + [d for d in out.got if d.get("isDuringSearch")]:
            assert_full(a)
            assert len(a["ownership"]) == 81 and len(a["policy"]) == 82
        warned = {(d["id"], d["field"]) for d in out.got if "warning" in d}
        for n in range(len(moves) + 1):
            assert {(f"QUERY:{n}", "includeMovesOwnership"),
                    (f"QUERY:{n}", "overrideSettings")} <= warned
        assert not any("error" in d for d in out.got)
    finally:
        server.close(wait=False)


@pytest.mark.parametrize("workers", [1, 2])
def test_two_board_sizes_interleaved(workers):
    server, out = _auto_server(workers)
    try:
        sizes = [9, 19] * 4
        for i, size in enumerate(sizes):
            send(server, plain_query(f"s{i}", size, spread_moves(size, i), 8,
                                     includeOwnership=True, priority=i % 3))
        for i, size in enumerate(sizes):
            a = out.final(f"s{i}")
            assert_full(a)
            assert len(a["ownership"]) == size * size
            taken = {v for _, v in spread_moves(size, i)}
            for m in a["moveInfos"]:
                assert m["move"] not in taken
                assert m["move"] == "pass" or int(m["move"][1:]) <= size
    finally:
        server.close(wait=False)


# --- KaTrain itself ------------------------------------------------------------------------------
class MockKaTrain:
    """What KataGoEngine calls on its KaTrain: log() and, for error popups, the object itself."""

    def __init__(self):
        self.logs = []

    def log(self, message, level=None):
        self.logs.append((level, str(message)))

    def __call__(self, *args, **kwargs):
        self.logs.append(("call", repr(args)))


def _katrain():
    for k in ("KIVY_NO_ARGS", "KIVY_NO_CONSOLELOG", "KIVY_NO_FILELOG"):
        os.environ.setdefault(k, "1")
    pytest.importorskip("kivy")
    engine_mod = pytest.importorskip("katrain.core.engine")
    game_mod = pytest.importorskip("katrain.core.game")
    return engine_mod, game_mod


@pytest.mark.parametrize("mode", ["rollouts", "auto"])
def test_katrain_drives_the_engine_through_its_custom_backend(mode):
    """KaTrain's KataGoEngine: one analysis read into KaTrain's node, pondering stopped by its
    terminate, then a loaded game's analysis (every node asked at once), in the default mode
    (auto: the net at the root) and in rollouts."""
    engine_mod, game_mod = _katrain()
    # KaTrain starts a custom command through the shell and stops it with SIGTERM: `exec`
    # makes the shell become the engine, so that the signal reaches it (dash, Debian's sh,
    # would otherwise keep a child that holds KaTrain's pipes open)
    command = "exec " + " ".join(shlex.quote(x) for x in (
        sys.executable, "-m", "gammago", "analysis", "--mode", mode, "--threads", "2",
        "--seed", "1", "--max-memory", "64", "--quiet"))
    config = {"backend": "custom", "altcommand": command, "max_visits": 150, "fast_visits": 25,
              "max_time": 8.0, "wide_root_noise": 0.04, "_enable_ownership": True}
    katrain = MockKaTrain()
    engine = engine_mod.KataGoEngine(katrain, config)
    try:
        with open(GAME9) as f:
            root = game_mod.KaTrainSGF.parse_sgf(f.read())
        node = root
        for _ in range(20):                       # the position after 20 moves of a real game
            node = node.children[0]
        got = queue.Queue()
        engine.request_analysis(node, callback=lambda a, partial: got.put((a, partial)),
                                error_callback=lambda a: got.put((a, "error")))
        a, partial = got.get(timeout=WAIT_S)
        while partial:
            a, partial = got.get(timeout=WAIT_S)
        assert partial is False, a
        assert a["moveInfos"] and len(a["ownership"]) == 81 and len(a["policy"]) == 82
        assert a["rootInfo"]["visits"] >= 150
        # KaTrain's own reading of the answer
        node.set_analysis(a)
        best = node.candidate_moves[0]
        assert best["move"] == a["moveInfos"][0]["move"] and "pointsLost" in best
        assert node.score is not None and node.ownership == a["ownership"]

        # pondering: partial answers until KaTrain terminates the query, then its last answer
        ponder = queue.Queue()
        engine.request_analysis(node, callback=lambda a, partial: ponder.put((a, partial)),
                                ponder=True)
        a, partial = ponder.get(timeout=WAIT_S)
        assert partial is True and a["isDuringSearch"] and a["moveInfos"]
        engine.stop_pondering()
        deadline = time.monotonic() + WAIT_S
        while partial:
            a, partial = ponder.get(timeout=max(0.1, deadline - time.monotonic()))
        assert a["isDuringSearch"] is False and a["rootInfo"]["visits"] < 10_000_000

        # a game loaded: every node's analysis asked at once, as KaTrain's analyze_all_nodes
        # does (here with few visits); each answered in full, and read by KaTrain
        nodes = list(root.nodes_in_tree)
        answers = queue.Queue()
        for i, n in enumerate(nodes):
            engine.request_analysis(n, callback=lambda a, partial, i=i: answers.put((i, a, partial)),
                                    error_callback=lambda a, i=i: answers.put((i, a, "error")),
                                    visits=10, priority=-98, report_every=1.0)
        finals = {}
        while len(finals) < len(nodes):
            i, a, partial = answers.get(timeout=WAIT_S)
            assert partial != "error", a
            assert_full(a)
            if partial is False:
                assert i not in finals
                finals[i] = a
        for i, n in enumerate(nodes):
            n.set_analysis(finals[i])
            assert n.score is not None and n.candidate_moves
        engine.wait_to_finish()
        assert engine.is_idle()
        errors = [m for level, m in katrain.logs if "error" in m.lower() and "rror" in m
                  and "received from KataGo" in m and "warning" not in m]
        assert not errors, errors
    finally:
        engine.shutdown(finish=False)
