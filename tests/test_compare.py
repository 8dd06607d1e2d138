"""`gammago compare`: the Bradley-Terry fit against hand-computed ratings and against the pairwise
Elo of gammago.arena.stats; a tiny real round robin (5x5, a few playouts); a run killed and resumed; a
player crashing mid-run; bad input refused before any game; the same run on a Dask cluster."""
import argparse
import json
import math
import os
import subprocess
import sys
import time

import pytest

from gammago.arena import compare
from gammago.arena.ratings import ELO_PER_NAT, fit_ratings, tally
from gammago.arena.stats import Z95, elo_from_score, elo_interval

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPTED = f"{sys.executable} {os.path.join(ROOT, 'tests', 'misbehaving_gtp.py')}"
LOG3 = 400 * math.log10(3)                  # the Elo of a 75% score


def _games(a, b, wins, draws, losses):
    return [(a, b, 1.0)] * wins + [(a, b, 0.5)] * draws + [(a, b, 0.0)] * losses


def _env():
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _compare(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "gammago", "compare", "--quiet", *args],
                          capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=timeout)


def _records(out):
    d = os.path.join(out, "pairings")
    return {f[:-5]: json.load(open(os.path.join(d, f))) for f in sorted(os.listdir(d))}


# --- the fit -----------------------------------------------------------------------------------
def test_fit_of_three_players_against_hand_computed_ratings():
    """A beats B 3-1, B beats C 3-1, A beats C 9-1: every pairing's score is what ratings 2d, d, 0
    with d = 400 log10 3 predict (75%, 75%, 90%), so they are the maximum-likelihood ratings.
    Their standard errors, by hand from the information matrix with C fixed (natural units:
    pairing weights n p (1-p) = 0.75, 0.75, 0.9): I = [[1.65, -0.75], [-0.75, 1.5]], det 1.9125,
    var A = 1.5 / 1.9125, var B = 1.65 / 1.9125."""
    games = (_games("A", "B", 3, 0, 1) + _games("B", "C", 3, 0, 1) + _games("C", "A", 1, 0, 9))
    fit = fit_ratings(games, ["A", "B", "C"], anchor="C", method="fit", samples=0)
    assert fit.ratings["A"] == pytest.approx(2 * LOG3, abs=1e-6)
    assert fit.ratings["B"] == pytest.approx(LOG3, abs=1e-6)
    assert fit.ratings["C"] == 0 and not fit.prior
    se_a, se_b = ELO_PER_NAT * math.sqrt(1.5 / 1.9125), ELO_PER_NAT * math.sqrt(1.65 / 1.9125)
    assert (fit.se["A"], fit.se["B"], fit.se["C"]) == (pytest.approx(se_a), pytest.approx(se_b), 0)
    assert fit.interval["A"] == (pytest.approx(2 * LOG3 - Z95 * se_a),
                                 pytest.approx(2 * LOG3 + Z95 * se_a))
    assert fit.interval["C"] == (0, 0)
    assert fit.games == {"A": 14, "B": 8, "C": 14} and fit.score["A"] == 12
    # another anchor, another rating: the same differences
    fit = fit_ratings(games, ["A", "B", "C"], anchor="B", anchor_rating=1500, samples=0)
    assert (fit.ratings["A"], fit.ratings["C"]) == (pytest.approx(1500 + LOG3),
                                                   pytest.approx(1500 - LOG3))
    # a cycle of 2-1 wins, and a pairing of draws: all equal
    cycle = _games("A", "B", 2, 0, 1) + _games("B", "C", 2, 0, 1) + _games("C", "A", 2, 0, 1)
    fit = fit_ratings(cycle + _games("A", "D", 0, 3, 0), list("ABCD"), anchor="A", samples=0)
    assert all(fit.ratings[p] == pytest.approx(0, abs=1e-6) for p in "ABCD")
    assert tally(cycle, ["A", "B", "C"]) == {("A", "B"): [2, 0, 1], ("B", "C"): [2, 0, 1],
                                             ("A", "C"): [1, 0, 2]}


def test_an_unbeaten_player_gets_one_virtual_draw_against_the_anchor():
    """3-0: the plain fit is infinite; with one virtual draw A has 3.5 of 4 points against the
    anchor, 400 log10(3.5 / 0.5) = 400 log10 7; the interval is the fit's (every resample of
    3-0 is 3-0). A player who drew a game with the anchor and lost nothing else needs none."""
    fit = fit_ratings(_games("A", "B", 3, 0, 0), ["A", "B"], anchor="B")
    assert fit.prior and "virtual draw" in fit.prior
    assert fit.ratings["A"] == pytest.approx(400 * math.log10(7), abs=1e-6)
    assert fit.method == "fit" and fit.interval["A"][0] < fit.ratings["A"] < fit.interval["A"][1]
    assert fit.games["A"] == 3                                   # the virtual draw not counted
    fit = fit_ratings(_games("A", "B", 3, 1, 0), ["A", "B"], anchor="B")
    assert not fit.prior and fit.ratings["A"] == pytest.approx(elo_from_score(3.5 / 4))


@pytest.mark.parametrize("wins, draws, losses", [(75, 0, 25), (25, 50, 25), (60, 8, 32), (12, 0, 88)])
def test_two_players_fit_the_pairwise_elo_of_stats(wins, draws, losses):
    games = _games("A", "B", wins, draws, losses)
    fit = fit_ratings(games, ["A", "B"], anchor="B", seed=3)
    elo, lo, hi = elo_interval(wins, draws, losses)
    assert fit.ratings["A"] == pytest.approx(elo, abs=1e-6) and fit.ratings["B"] == 0
    flo, fhi = fit.intervals["fit"]["A"]                    # Wald on the logit, near Wilson's
    assert flo == pytest.approx(lo, abs=3) and fhi == pytest.approx(hi, abs=3)
    blo, bhi = fit.intervals["bootstrap"]["A"]              # the default: a bootstrap, whose
    assert fit.method == "bootstrap" and fit.interval["A"] == (blo, bhi)   # ends, over 100
    # games, lie within a few tens of Elo of Wilson's (further in the skewed 12-88)
    assert blo < elo < bhi and blo == pytest.approx(lo, abs=40) and bhi == pytest.approx(hi, abs=40)
    # the anchor is the other player: the mirror image
    fit = fit_ratings(games, ["A", "B"], anchor="A", samples=0)
    assert fit.ratings["B"] == pytest.approx(-elo, abs=1e-6)


def test_the_fit_refuses_what_it_cannot_rate():
    with pytest.raises(ValueError, match="two or more"):
        fit_ratings([], ["A"])
    with pytest.raises(ValueError, match="anchor 'Z'"):
        fit_ratings(_games("A", "B", 1, 0, 1), ["A", "B"], anchor="Z")
    with pytest.raises(ValueError, match="no games recorded for C"):
        fit_ratings(_games("A", "B", 1, 0, 1), ["A", "B", "C"])


# --- bad input: said before any game -------------------------------------------------------------
def _settings(*argv):
    p = argparse.ArgumentParser()
    compare.add_arguments(p)
    return compare.settings_from_args(p.parse_args(list(argv) + ["--out", "x"]))


def test_bad_input_is_named_before_anything_starts():
    two = ["--player", "a=gnugo:1", "--player", "b=--playouts 5"]
    for argv, word in ((["--player", "a=gnugo:1", "--player", "a=gnugo:2"], "'a' is given twice"),
                       (["--player", "a=gnugo:1"], "two or more players"),
                       ([], "two or more players"),
                       (two + ["--anchor", "c=0"], "--anchor 'c' is not a player"),
                       (two + ["--gauntlet", "c"], "--gauntlet c: not a player"),
                       (two + ["--gauntlet", "a,b"], "nobody is left"),
                       (two + ["--untimed", "z"], "--untimed z"),
                       (two + ["--anchor", "a=x"], "NAME=ELO"),
                       (["--player", "a", "--player", "b=gnugo:1"], "NAME=COMMAND"),
                       (["--player", "a b=gnugo:1", "--player", "b=gnugo:1"], "player name"),
                       (["--player", "a=gnugo:x", "--player", "b=gnugo:1"], "player a: gnugo:LEVEL"),
                       (two + ["--games", "0"], "--games"), (two + ["--size", "4"], "--size"),
                       (two + ["--playouts", "5", "--time-per-move", "1"], "not both")):
        with pytest.raises(ValueError, match=word):
            _settings(*argv)
    players, pairs, anchor, settings = _settings(*two, "--player", "c=gnugo:2", "--playouts", "7")
    assert [p.command for p in players] == ["gnugo:1", "gammago --playouts 5 --seed {seed}",
                                            "gnugo:2"]
    assert pairs == [("a", "b"), ("a", "c"), ("b", "c")] and anchor == ("a", 0.0)
    assert [p.timed for p in players] == [False, True, False]           # gnugo: untimed
    players, pairs, anchor, _ = _settings(*two, "--player", "c=gammago --mode net-policy",
                                          "--gauntlet", "a", "--playouts", "9")
    assert players[2].command == "gammago --mode net-policy --seed {seed} --playouts 9"
    assert pairs == [("a", "b"), ("a", "c")] and anchor == ("a", 0.0)


def test_a_player_that_does_not_start_is_named_with_its_stderr_and_nothing_is_played(tmp_path):
    dying = f"{sys.executable} -c 'import sys; sys.stderr.write(\"first\\nlast words\\n\"); sys.exit(1)'"
    out = tmp_path / "cmp"
    p = _compare("--player", f"ok={SCRIPTED} pass", "--player", f"dies={dying}", "--out", str(out))
    assert p.returncode == 2 and "player dies" in p.stderr and "does not start" in p.stderr
    assert "the last line of its stderr: last words" in p.stderr, p.stderr
    assert not (out / "pairings").exists()
    p = _compare("--player", f"ok={SCRIPTED} pass", "--player", "bad=--mode nonsense",
                 "--out", str(out))
    assert p.returncode == 2 and "player bad" in p.stderr
    assert "invalid choice: 'nonsense'" in p.stderr.splitlines()[-1], p.stderr
    p = _compare("--player", f"ok={SCRIPTED} pass", "--player", f"ok={SCRIPTED} pass",
                 "--out", str(out))
    assert p.returncode == 2 and p.stderr.startswith("gammago compare: player 'ok' is given twice")
    assert not (out / "pairings").exists()


# --- runs ----------------------------------------------------------------------------------------
@pytest.mark.gnugo
def test_a_tiny_round_robin_plays_every_pairing_and_writes_the_table_and_the_plot(tmp_path,
                                                                                 gnugo_path):
    """5x5 at a few playouts: rollouts, the net's policy and GNU Go level 1, two games a
    pairing, colours alternating; the records, the SGF, the table and the PNG."""
    out = tmp_path / "cmp"
    p = _compare("--player", "rollouts=--mode rollouts", "--player", "policy=--mode net-policy",
                 "--player", "gnugo=gnugo:1", "--anchor", "gnugo=0", "--playouts", "8",
                 "--size", "5", "--komi", "3.5", "--games", "2", "--parallel", "2",
                 "--out", str(out), "--bootstrap", "200")
    assert p.returncode == 0, p.stderr
    records = _records(out)
    assert sorted(records) == ["policy_vs_gnugo", "rollouts_vs_gnugo", "rollouts_vs_policy"]
    for label, rec in records.items():
        a, b = label.split("_vs_")
        assert rec["finished"] and rec["config"]["names"] == {"1": a, "2": b}
        assert rec["config"]["size"] == 5 and rec["config"]["time_settings_to"] == "both"
        assert [g["black"] for g in rec["games"]] == [1, 2]             # colours alternate
        for g in rec["games"]:
            assert g["reason"] in ("score", "resign", "max-moves"), g["detail"]   # no forfeit
            assert os.path.exists(g["sgf"]) and f"{label}{os.sep}game_" in g["sgf"]
        assert "--playouts 8" in rec["config"]["engines"]["1"] or a == "gnugo"
    data = json.loads((out / "ratings.json").read_text())
    assert data["finished"] and data["ratings"]["gnugo"]["elo"] == 0
    assert set(data["ratings"]) == {"rollouts", "policy", "gnugo"}
    assert all(r["games"] == 4 for r in data["ratings"].values())
    assert data["players"][2]["engine"].startswith("GNU Go")
    # the build as the records keep it: this gammago relative to where compare ran (ROOT)
    assert data["players"][0]["build"].split(" ")[0] == "gammago"
    assert records["rollouts_vs_policy"]["config"]["builds"]["1"] == data["players"][0]["build"]
    table = (out / "table.md").read_text()
    assert table.strip() == p.stdout.strip()
    assert "| W-L-D | rollouts | policy | gnugo |" in table and "gnugo fixed at +0" in table
    assert (out / "ratings.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_killed_run_resumes_without_replaying_a_finished_game(tmp_path):
    """Every game lasts about a second (the slow player thinks 0.6 s, then both pass); the run
    is killed (SIGKILL) once a game is recorded; --resume keeps the recorded games as they were
    and plays only the others; a further --resume plays nothing."""
    out = tmp_path / "cmp"
    args = ["--player", f"pass={SCRIPTED} pass", "--player", f"slow={SCRIPTED} slow 0.6",
            "--player", f"resign={SCRIPTED} resign", "--games", "4", "--komi", "0.5",
            "--size", "5", "--out", str(out)]
    proc = subprocess.Popen([sys.executable, "-m", "gammago", "compare", "--quiet", *args],
                            env=_env(), cwd=ROOT, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        d = out / "pairings"
        if d.exists() and any(json.loads(f.read_text())["games"] for f in d.glob("*.json")):
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    first = _records(out)
    kept = sum(len(r["games"]) for r in first.values())
    assert 1 <= kept < 12 and not any(r["finished"] for r in first.values())
    p = _compare(*args)                                  # without --resume: refused
    assert p.returncode == 2 and "--resume" in p.stderr
    p = _compare(*args, "--resume")
    assert p.returncode == 0, p.stderr
    assert f"{kept} games recorded, {12 - kept} to play" in p.stderr
    final = _records(out)
    assert sorted(final) == ["pass_vs_resign", "pass_vs_slow", "slow_vs_resign"]
    for label, rec in final.items():
        assert rec["finished"] and [g["index"] for g in rec["games"]] == [0, 1, 2, 3]
        old = {g["index"]: g for g in first.get(label, {"games": []})["games"]}
        assert all(g == old[g["index"]] for g in rec["games"] if g["index"] in old)
        assert sorted(os.listdir(out / "sgf" / label)) == [f"game_{k:04d}.sgf" for k in range(1, 5)]
    # komi 0.5, two passes: White wins; a resignation loses at once
    assert [g["winner"] for g in final["pass_vs_slow"]["games"]] == ["w"] * 4
    data = json.loads((out / "ratings.json").read_text())
    assert data["finished"] and sum(p["wins"] + p["draws"] + p["losses"]
                                    for p in data["pairings"]) == 12
    p = _compare(*args, "--resume")
    assert p.returncode == 0 and "12 games recorded, 0 to play" in p.stderr, p.stderr
    assert _records(out) == final


def test_a_player_that_crashes_mid_run_loses_by_forfeit_and_the_run_goes_on(tmp_path):
    out = tmp_path / "cmp"
    p = _compare("--player", f"pass={SCRIPTED} pass", "--player", f"crash={SCRIPTED} crash",
                 "--player", f"resign={SCRIPTED} resign", "--games", "2", "--size", "5",
                 "--out", str(out), "--anchor", "resign=0")
    assert p.returncode == 0, p.stderr                   # it starts and answers: it plays
    records = _records(out)
    assert all(r["finished"] and len(r["games"]) == 2 for r in records.values())
    crash_games = [g for k, r in records.items() if "crash" in k for g in r["games"]]
    # it crashes at its first genmove; as White against a resigning Black, it never moves
    assert {g["reason"] for g in crash_games} == {"crash", "resign"}
    data = json.loads((out / "ratings.json").read_text())
    assert data["forfeits_lost"] == {"crash": {"crash": 3}}
    assert "| crash |" in p.stdout and "3 crash" in p.stdout
    assert data["fit"]["prior"]                          # pass won everything: the prior is said
    assert data["ratings"]["pass"]["elo"] > data["ratings"]["resign"]["elo"] == 0


def test_a_comparison_on_a_dask_cluster_plays_the_local_games(tmp_path):
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    common = ["--player", f"pass={SCRIPTED} pass", "--player", f"resign={SCRIPTED} resign",
              "--player", f"slow={SCRIPTED} slow 0.1", "--games", "2", "--size", "5"]
    with distributed.LocalCluster(n_workers=1, processes=True, threads_per_worker=2,
                                  host="127.0.0.1", dashboard_address="127.0.0.1:0") as c:
        p = _compare(*common, "--out", str(tmp_path / "c"), "--scheduler", c.scheduler_address)
    assert p.returncode == 0, p.stderr
    assert "1 worker(s), 2 thread(s)" in p.stderr
    q = _compare(*common, "--out", str(tmp_path / "l"))
    assert q.returncode == 0, q.stderr

    def strip(records):
        return {k: [{f: v for f, v in g.items() if f not in ("seconds", "max_move_s", "sgf")}
                    for g in r["games"]] for k, r in records.items()}
    assert strip(_records(tmp_path / "c")) == strip(_records(tmp_path / "l"))
    assert sorted(os.listdir(tmp_path / "c" / "sgf" / "pass_vs_resign")) == [
        "game_0001.sgf", "game_0002.sgf"]
    assert (tmp_path / "c" / "table.md").read_text().splitlines()[1:] == \
        (tmp_path / "l" / "table.md").read_text().splitlines()[1:]
