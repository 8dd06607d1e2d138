"""The match runner: statistics against known values, the referee's forfeits (with a scripted
misbehaving GTP program), and real tiny 9x9 games: gammago vs gammago and gammago vs GNU Go."""
import json
import math
import os
import re
import subprocess
import sys

import pytest
from scipy.stats import binom, binomtest
from sgfmill import sgf as sgfmill_sgf

from gammago.go.board import Board, format_vertex
from gammago.arena import gtp_process
from gammago.arena.gtp_process import expand_command
from gammago.arena.match import engine_identity, run_match, wrong_build
from gammago.arena.referee import play_game
from gammago.arena.match_record import MatchConfig
from gammago.arena.stats import (elo_from_score, elo_interval, score_from_elo, sprt_bounds, sprt_llr,
                           wilson_interval)

from json_strings import strings
from tool_module import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTED = f"{sys.executable} {os.path.join(ROOT, 'tests', 'misbehaving_gtp.py')}"
TINY = "gammago --playouts 20 --seed {seed} --quiet"


# --- statistics ------------------------------------------------------------------------------------
def test_wilson_known_values():
    lo, hi = wilson_interval(0, 10)
    assert lo == 0 and hi == pytest.approx(0.277533, abs=1e-6)        # textbook: 0 of 10
    lo, hi = wilson_interval(81, 100)
    assert (lo, hi) == (pytest.approx(0.722212, abs=1e-6), pytest.approx(0.874852, abs=1e-6))
    for x, n in [(50, 100), (7, 9), (100, 100), (3, 250), (1, 1)]:
        ref = binomtest(x, n).proportion_ci(method="wilson")
        lo, hi = wilson_interval(x, n)
        assert lo == pytest.approx(ref.low, abs=1e-9) and hi == pytest.approx(ref.high, abs=1e-9)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_elo_known_values():
    assert elo_from_score(0.5) == 0
    assert elo_from_score(0.75) == pytest.approx(190.848, abs=1e-3)     # 400*log10(3)
    assert elo_from_score(0.9) == pytest.approx(381.697, abs=1e-3)      # 400*log10(9)
    assert elo_from_score(0.25) == pytest.approx(-190.848, abs=1e-3)
    assert elo_from_score(1.0) == math.inf and elo_from_score(0.0) == -math.inf
    for e in (-500, -100, 0, 35, 400):
        assert elo_from_score(score_from_elo(e)) == pytest.approx(e)


def test_elo_interval_is_wilson_mapped():
    elo, lo, hi = elo_interval(75, 0, 25)
    assert elo == pytest.approx(190.848, abs=1e-3)
    wl, wh = wilson_interval(75, 100)
    assert lo == pytest.approx(elo_from_score(wl)) and hi == pytest.approx(elo_from_score(wh))
    assert lo == pytest.approx(112.87, abs=0.01) and hi == pytest.approx(268.82, abs=0.01)
    elo, lo, hi = elo_interval(10, 0, 0)                    # all wins: unbounded above
    assert elo == math.inf and hi == math.inf and lo > 0
    elo, lo, hi = elo_interval(5, 10, 5)                    # draws count half
    assert elo == 0 and lo == -hi


def test_sprt_llr_known_values():
    assert sprt_llr(60, 0, 40, 0, 50) == pytest.approx(1.846259, abs=1e-6)
    p0, p1 = score_from_elo(0), score_from_elo(50)
    for w, l in [(60, 40), (10, 30), (0, 5), (123, 100)]:
        ref = binom.logpmf(w, w + l, p1) - binom.logpmf(w, w + l, p0)
        assert sprt_llr(w, 0, l, 0, 50) == pytest.approx(ref, abs=1e-9)
    assert sprt_llr(10, 4, 6, -20, 30) == pytest.approx(sprt_llr(12, 0, 8, -20, 30))
    lo, hi = sprt_bounds(0.05, 0.05)
    assert lo == pytest.approx(-2.944439, abs=1e-6) and hi == pytest.approx(2.944439, abs=1e-6)
    lo, hi = sprt_bounds(0.05, 0.10)
    assert lo == pytest.approx(math.log(0.10 / 0.95)) and hi == pytest.approx(math.log(0.90 / 0.05))


def test_expand_command():
    argv = expand_command("gnugo:3", 17)
    assert argv[0].endswith("gnugo") and argv[-4:] == ["--level", "3", "--seed", "17"]
    assert "--chinese-rules" in argv and "--capture-all-dead" in argv and "--positional-superko" in argv
    assert expand_command("gammago --playouts 5 --seed {seed}", 4) == [
        sys.executable, *gtp_process.SAFE_PATH, "-m", "gammago", "gtp", "--playouts", "5", "--seed", "4"]
    assert expand_command("'my engine' -x", 0) == ["my engine", "-x"]
    with pytest.raises(ValueError):
        expand_command("gnugo:ten", 0)
    with pytest.raises(ValueError):
        expand_command("   ", 0)


def test_a_gammago_folder_in_the_working_directory_does_not_stand_in_for_gammago(tmp_path, monkeypatch):
    """Run from a folder holding a `gammago/` that is not this one (a checkout's sources beside an
    installed gammago), `gammago` in an engine command still runs this gammago."""
    fake = tmp_path / "gammago"
    fake.mkdir()
    (fake / "__init__.py").write_text("raise ImportError('the wrong gammago')\n")
    (fake / "__main__.py").write_text("raise SystemExit('the wrong gammago')\n")
    monkeypatch.chdir(tmp_path)
    with gtp_process.GtpProcess(expand_command("gammago --playouts 5", 1), "gammago") as g:
        assert g.send("name") == "gammago"


# --- the referee ---------------------------------------------------------------------------------
def cfg(e1, e2, **kw):
    base = dict(engines={1: e1, 2: e2}, names={1: "one", 2: "two"}, games=2, size=9, komi=7.0)
    base.update(kw)
    return MatchConfig(**base)


def test_passing_game_is_scored_by_tromp_taylor():
    r = play_game(cfg(f"{SCRIPTED} pass", f"{SCRIPTED} pass"), 0)
    assert (r.reason, r.winner, r.result, r.moves) == ("score", "w", "W+7", 2)
    r = play_game(cfg(f"{SCRIPTED} pass", f"{SCRIPTED} pass", komi=0), 1)
    assert (r.winner, r.result, r.winner_engine) == ("", "0", 0)          # a draw


@pytest.mark.parametrize("mode, reason, result", [
    ("illegal", "illegal", "W+F"),
    ("garbage", "illegal", "W+F"),
    ("crash", "crash", "W+F"),
    ("slow", "timeout", "W+T"),
    ("resign", "resign", "W+R"),
])
def test_forfeits(mode, reason, result):
    # engine1 (Black in game 0) misbehaves, engine2 passes
    r = play_game(cfg(f"{SCRIPTED} {mode}", f"{SCRIPTED} pass", move_timeout=1.0), 0)
    assert (r.reason, r.result, r.winner_engine) == (reason, result, 2), r.detail
    assert r.black == 1
    if mode == "crash":
        assert "exit code 3" in r.detail
    if mode == "illegal":
        assert "occupied" in r.detail and r.moves == 2        # E5, pass, then E5 again


def test_refusing_a_legal_move_loses():
    r = play_game(cfg(f"{SCRIPTED} pass", f"{SCRIPTED} refuse"), 0)
    assert (r.reason, r.winner_engine, r.result) == ("refused", 2 - 1, "B+F")


def test_sprt_stops_early():
    c = cfg(f"{SCRIPTED} pass", f"{SCRIPTED} resign", games=40, sprt=(0, 400), parallel=1)
    results, s = run_match(c, progress=False)
    wins_needed = math.ceil(sprt_bounds()[1] / math.log(score_from_elo(400) / 0.5))
    assert s["games"] == wins_needed == s["engine1"]["wins"] == s["sprt_decided_after"]
    assert s["llr"] >= s["llr_bounds"][1]
    # colours alternate: engine1 was Black in even games
    assert [r.black for r in results[:4]] == [1, 2, 1, 2]
    assert s["engine1_as_black"]["wins"] + s["engine1_as_white"]["wins"] == wins_needed


def test_summary_counts_forfeits_and_colours():
    c = cfg(f"{SCRIPTED} illegal", f"{SCRIPTED} pass", games=2, komi=0.5)
    results, s = run_match(c, progress=False)
    # game 0: engine1 Black forfeits on its 2nd move; game 1: engine1 White, forfeits too
    assert s["engine1"] == {"wins": 0, "draws": 0, "losses": 2}
    assert s["forfeits"][1] == {"illegal": 2} and s["forfeits"][2] == {}
    assert s["engine1_as_black"]["losses"] == 1 and s["engine1_as_white"]["losses"] == 1


# --- real games ------------------------------------------------------------------------------------
def _check_sgf_replays(path, size, komi, r):
    game = sgfmill_sgf.Sgf_game.from_bytes(open(path, "rb").read())
    assert game.get_size() == size and game.get_komi() == komi
    assert game.get_root().get("RE") == r.result
    board = Board(size, komi)
    for node in game.get_main_sequence()[1:]:
        colour, move = node.get_move()
        board.play(format_vertex(move), colour)             # legal on our board, or raises
    if r.reason == "score":
        s = board.score()
        assert r.result == (f"B+{s:g}" if s > 0 else f"W+{-s:g}" if s < 0 else "0")
        assert board.moves[-1][1] == "pass" and board.moves[-2][1] == "pass"
    return board


def test_gammago_vs_gammago_two_tiny_games(tmp_path):
    c = cfg(TINY, TINY.replace("20", "40"), games=2, parallel=2, sgf_dir=str(tmp_path),
            max_moves=200)
    results, s = run_match(c, progress=False)
    assert s["games"] == 2 and s["abandoned"] == 0
    assert [r.black for r in results] == [1, 2]
    for r in results:
        assert r.reason in ("score", "resign", "max-moves"), r.detail      # nobody forfeits
        assert os.path.basename(r.sgf) == f"game_{r.index + 1:04d}.sgf"
        _check_sgf_replays(r.sgf, 9, 7.0, r)


@pytest.mark.gnugo
def test_gammago_vs_gnugo_level1_cli(tmp_path, gnugo_path):
    """The whole command: two games against GNU Go level 1, SGF and JSON written, table printed."""
    sgf_dir, js = tmp_path / "sgf", tmp_path / "m.json"
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    gnugo = (f"{gnugo_path} --mode gtp --chinese-rules --capture-all-dead --positional-superko "
             "--level 1 --seed {seed}")
    p = subprocess.run([sys.executable, "-m", "gammago", "match", "--engine1", TINY,
                        "--engine2", gnugo, "--games", "2", "--parallel", "2", "--size", "9",
                        "--komi", "7", "--sgf-dir", str(sgf_dir), "--json", str(js), "--quiet"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=300)
    assert p.returncode == 0, p.stderr
    assert "GNU Go 3.8" in p.stdout and "95% CI" in p.stdout and "Elo" in p.stdout
    data = json.loads(js.read_text())
    assert data["summary"]["games"] == 2
    for g in data["games"]:
        assert g["reason"] in ("score", "resign"), g["detail"]        # nobody forfeits
        class R:
            result, reason = g["result"], g["reason"]
        _check_sgf_replays(g["sgf"], 9, 7.0, R)
    assert sorted(os.listdir(sgf_dir)) == ["game_0001.sgf", "game_0002.sgf"]


def _match_cli(*args, timeout=120, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "gammago", "match", "--quiet", *args],
                          capture_output=True, text=True, env=env, cwd=cwd, timeout=timeout)


def _match_in_background(js, *args, **popen):
    """`gammago match --quiet ARGS` started in the background, returned once its record `js`
    holds a finished game (or after 60 s)."""
    import time
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.Popen([sys.executable, "-m", "gammago", "match", "--quiet", *args],
                         env=env, cwd=ROOT, **popen)
    deadline = time.monotonic() + 60
    while not js.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return p


def test_a_killed_match_resumes_from_its_record(tmp_path):
    """The record is rewritten after every game; a match killed (SIGKILL, nothing to clean up)
    goes on with --resume from its last finished game, keeps what it played and plays the rest."""
    js = tmp_path / "m.json"
    # every game lasts ~1.5 s: the slow engine thinks 1.5 s, then both pass
    args = ["--engine1", f"{SCRIPTED} pass", "--engine2", f"{SCRIPTED} slow 1.5",
            "--move-timeout", "20", "--json", str(js), "--sgf-dir", str(tmp_path / "sgf")]
    p = _match_in_background(js, "--games", "6", "--komi", "0.5", *args,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    p.kill()
    p.wait()
    first = json.loads(js.read_text())
    assert first["finished"] is False and 1 <= len(first["games"]) < 6
    assert first["summary"]["games"] == len(first["games"])

    p = _match_cli("--games", "3", "--komi", "0.5", "--resume", *args)
    assert p.returncode == 0, p.stderr
    assert f"{len(first['games'])} games recorded" in p.stderr
    data = json.loads(js.read_text())
    assert data["finished"] is True
    assert [g["index"] for g in data["games"]] == list(range(max(3, len(first["games"]))))
    assert data["games"][:len(first["games"])] == first["games"]      # kept as they were
    # komi 0.5, two passes: White wins every game; engine1 was White in the odd games
    s = data["summary"]
    assert s["games"] == len(data["games"]) and s["white_wins"] == s["games"]
    assert s["engine1"]["wins"] == sum(1 for g in data["games"] if g["index"] % 2 == 1)
    assert sorted(os.listdir(tmp_path / "sgf")) == [f"game_{i + 1:04d}.sgf" for i in
                                                    range(s["games"])]
    assert not [f for f in os.listdir(tmp_path) if ".tmp" in f]     # nothing half-written left
    # complete: a further --resume plays nothing and says so
    p = _match_cli("--games", "3", "--komi", "0.5", "--resume", *args)
    assert p.returncode == 0 and "0 to play" in p.stderr, p.stderr
    assert json.loads(js.read_text())["games"] == data["games"]
    # another match may not continue this record
    p = _match_cli("--games", "3", "--komi", "7", "--resume", *args)
    assert p.returncode == 2 and str(js) in p.stderr and "komi" in p.stderr, p.stderr
    assert json.loads(js.read_text())["games"] == data["games"]       # left as it was
    js.write_text("{not json")
    p = _match_cli("--games", "3", "--komi", "0.5", "--resume", *args)
    assert p.returncode == 2 and str(js) in p.stderr and "not a match record" in p.stderr


def test_a_match_stopped_by_a_signal_to_its_process_group_abandons_the_game_in_progress(tmp_path):
    """`timeout` and a terminal's Ctrl-C signal the whole process group. The engines do not get
    it; the match stops, the game in progress is abandoned, not scored as an engine's crash."""
    import signal
    import time
    js = tmp_path / "m.json"
    thinking = tmp_path / "thinking"     # exists while a slow engine thinks
    args = ["--engine1", f"{SCRIPTED} pass", "--engine2", f"{SCRIPTED} slow 2 {thinking}",
            "--move-timeout", "20", "--json", str(js)]
    p = _match_in_background(js, "--games", "6", "--komi", "0.5", *args,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                             start_new_session=True)
    assert js.exists()                   # a game is over (its slow engine done thinking) ...
    deadline = time.monotonic() + 60
    while not thinking.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    assert thinking.exists()             # ... and the next game's is thinking
    os.killpg(p.pid, signal.SIGTERM)     # as `timeout` does
    _, err = p.communicate(timeout=60)
    data = json.loads(js.read_text())
    s = data["summary"]
    assert data["finished"] is False and 1 <= s["games"] < 6, err
    assert s["abandoned"] == 1 and set(s["reasons"]) == {"score"}, (s, err)
    assert not any(s["forfeits"][k] for k in s["forfeits"])
    assert all(g["reason"] == "score" for g in data["games"])


def test_an_engine_names_its_build_and_a_baseline_that_runs_other_code_is_refused(tmp_path):
    """`gammago-build` names the package an engine runs; a command that puts a directory on
    PYTHONPATH but runs another gammago (`python -m` puts the working directory first) is refused
    before any game, naming both; one that runs what it names is not."""
    name, build = engine_identity(TINY)
    assert name.startswith("gammago ") and build.startswith(os.path.join(ROOT, "gammago"))
    assert engine_identity(f"{SCRIPTED} pass")[1] == ""          # not a gammago: no build
    other = tmp_path / "old-build"
    other.mkdir()
    assert wrong_build(f"env PYTHONPATH={other} python -m gammago gtp", build)
    assert not wrong_build(f"env PYTHONPATH={ROOT} python -m gammago gtp", build)
    assert not wrong_build("gammago --playouts 20", build)       # no PYTHONPATH: nothing to check
    assert not wrong_build(f"env PYTHONPATH={other} python -m gammago gtp", "")   # older gammago
    assert not wrong_build("sh -c 'cd /x && exec env PYTHONPATH=$PWD python -m gammago gtp'", build)
    # a relative PYTHONPATH after a cd is where the shell takes it from: that directory
    assert not wrong_build(f"sh -c 'cd {ROOT} && exec env PYTHONPATH=. python -m gammago gtp'", build)
    assert wrong_build(f"sh -c 'cd {other} && exec env PYTHONPATH=. python -m gammago gtp'", build)
    js = tmp_path / "m.json"
    # run from the checkout (cwd=ROOT): the engine imports ROOT's gammago, not the one it names
    p = _match_cli("--engine1", TINY, "--engine2",
                   f"env PYTHONPATH={other} {sys.executable} -m gammago gtp --playouts 20 --quiet",
                   "--games", "1", "--json", str(js))
    assert p.returncode == 2 and "engine2" in p.stderr and str(other) in p.stderr, p.stderr
    assert os.path.join(ROOT, "gammago") in p.stderr and not js.exists()
    # the same build started in its own directory is what it names: the match runs, recorded;
    # run from elsewhere with the paths given relative, the record names them so, the builds too
    # (as the command names the directory; this gammago relative to the working directory)
    rel = os.path.relpath(ROOT, tmp_path)
    p = _match_cli("--engine1", TINY, "--engine2",
                   f"sh -c 'cd {rel} && exec env PYTHONPATH=. {sys.executable} -m gammago "
                   "gtp --playouts 20 --quiet'", "--games", "1", "--max-moves", "20",
                   "--sgf-dir", "sgf", "--json", "m.json", timeout=300, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    data = json.loads((tmp_path / "m.json").read_text())
    commit = build[len(os.path.join(ROOT, "gammago")):].strip()
    recorded = f"{os.path.join(rel, 'gammago')} {commit}".strip()
    assert data["config"]["builds"] == {"1": recorded, "2": recorded}
    assert f"runs {recorded}" in p.stderr
    assert data["config"]["sgf_dir"] == "sgf"
    assert data["games"][0]["sgf"] == os.path.join("sgf", "game_0001.sgf")
    assert (tmp_path / "sgf" / "game_0001.sgf").exists()
    absolute = [w for s in strings(data) for w in re.split(r"[\s'\"=:]+", s)
                if any(w == d or w.startswith(d + os.sep) for d in (ROOT, str(tmp_path)))]
    assert not absolute, absolute


def test_sprt_decided_before_resuming_plays_nothing():
    c = cfg(f"{SCRIPTED} pass", f"{SCRIPTED} resign", games=40, sprt=(0, 400), parallel=1)
    results, s = run_match(c, progress=False)
    again, s2 = run_match(c, progress=False, done=results)
    assert again == results and s2["sprt_decided_after"] == s["games"]


def test_bad_options_are_named():
    import argparse
    from gammago.arena import match
    parser = argparse.ArgumentParser()
    match.add_arguments(parser)
    for extra, word in ((["--engine1", "x"], "--engine2"),
                        (["--engine1", "x", "--engine2", "y", "--games", "0"], "--games"),
                        (["--engine1", "x", "--engine2", "y", "--sprt", "5"], "--sprt"),
                        (["--black", "x", "--engine2", "y"], "--black"),
                        (["--engine1", "x", "--engine2", "y", "--size", "25"], "--size"),
                        (["--engine1", "x", "--engine2", "y", "--resume"], "--json"),
                        (["--engine1", "gnugo:x", "--engine2", "y"], "gnugo:LEVEL")):
        with pytest.raises(ValueError, match=word):
            match.config_from_args(parser.parse_args(extra))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-m", "gammago", "match", "--engine1", "x"],
                       capture_output=True, text=True, env=env, cwd=ROOT, timeout=60)
    assert p.returncode == 2 and p.stderr.startswith("gammago match: ")


@pytest.mark.gnugo
def test_a_handicap_game(tmp_path, gnugo_path):
    """--handicap: both engines place the spec's stones (fixed_handicap), White moves first,
    the SGF holds the stones (AB, HA) and replays; an engine that does not place them loses."""
    c = cfg(TINY, "gnugo:1", games=1, size=9, komi=0.5, handicap=2, sgf_dir=str(tmp_path),
            alternate=False, max_moves=200)
    r = play_game(c, 0)
    assert r.reason in ("score", "resign", "max-moves"), r.detail
    game = sgfmill_sgf.Sgf_game.from_bytes(open(r.sgf, "rb").read())
    root = game.get_root()
    assert sorted(format_vertex(p) for p in root.get_setup_stones()[0]) == ["C3", "G7"]
    assert root.get("HA") == 2 and game.get_komi() == 0.5
    assert game.get_main_sequence()[1].get_move()[0] == "w"
    r = play_game(cfg(f"{SCRIPTED} pass", "gnugo:1", komi=0.5, handicap=2, alternate=False), 0)
    assert (r.reason, r.winner_engine) == ("error", 2) and "handicap" in r.detail
    import argparse
    from gammago.arena import match
    parser = argparse.ArgumentParser()
    match.add_arguments(parser)
    with pytest.raises(ValueError, match="--handicap 5 on 8x8: invalid number of stones"):
        match.config_from_args(parser.parse_args(["--engine1", "x", "--engine2", "y",
                                                  "--handicap", "5", "--size", "8"]))


def test_speed_vs_build_tool(capsys, tmp_path):
    """tools/speed_vs_build.py times one genmove per build and position from the engine's log."""
    tool = load_tool("speed_vs_build")
    medians = tool.main([ROOT, ROOT, "--playouts", "300", "--reps", "1"])
    out = capsys.readouterr().out
    assert "9x9, 300 playouts a genmove" in out and out.count("position 2:") == 2
    # the same build twice: two rows, timed apart (the machine's noise between them)
    assert set(medians) == {ROOT, f"{ROOT} (#2)"} and f"{ROOT} (#2): position 1:" in out
    assert all(len(m) == len(tool.POSITIONS[9]) and all(t > 0 for t in m)
               for m in medians.values())
    # a variant: the same build timed with more options too, a row of its own
    medians = tool.main([ROOT, "--playouts", "300", "--reps", "1",
                         "--variant", "--rollout-light-after 1"])
    out = capsys.readouterr().out
    assert set(medians) == {ROOT, f"{ROOT} --rollout-light-after 1"}
    assert f"{ROOT} --rollout-light-after 1: position 1:" in out
    with pytest.raises(SystemExit):                    # options the engine refuses: said
        tool.main([ROOT, "--playouts", "300", "--reps", "1", "--variant", "--rollout-light-after -1"])
    with pytest.raises(SystemExit):
        tool.main([str(tmp_path)])                     # not a checkout: refused
    # --seconds: each genmove has that long (time_settings), and the playouts reached are given
    medians = tool.main([ROOT, "--seconds", "0.2", "--reps", "1"])
    out = capsys.readouterr().out
    assert "9x9, 0.2 s a genmove" in out and "median playouts reached" in out
    # playouts reached in the time, not a count (the fixed default would be 60,000): how many
    # depends on the machine and its load
    assert all(len(m) == len(tool.POSITIONS[9]) and all(0 < n < 60000 for n in m)
               for m in medians.values())
    with pytest.raises(SystemExit):
        tool.main([ROOT, "--seconds", "0.2", "--playouts", "300"])   # one budget or the other
