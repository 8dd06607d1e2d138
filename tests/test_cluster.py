"""`--scheduler`: matches, regression runs and train-mm's extraction on a real Dask cluster (a
LocalCluster of two worker processes on the loopback address): the same results as a local run,
a worker killed in the middle of a game, a scheduler that goes away, one that never answers."""
import json
import math
import os
import subprocess
import sys
import time

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="dask.distributed is not installed (pip install -e \".[cluster]\")")

from gammago import cli  # noqa: E402
from gammago.moves import gammas
from gammago.arena.cluster_games import ClusterGames  # noqa: E402
from gammago.arena.match import run_match  # noqa: E402
from gammago.arena.match_record import MatchConfig  # noqa: E402
from gammago.arena.stats import score_from_elo, sprt_bounds  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
SCRIPTED = f"{sys.executable} {os.path.join(ROOT, 'tests', 'misbehaving_gtp.py')}"
SMALL = "gammago --playouts 50 --seed {seed} --quiet"
NOWHERE = "tcp://127.0.0.1:9"             # nothing listens on the discard port


def _env():
    return dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))


def _local_cluster():
    return distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                    host="127.0.0.1", dashboard_address="127.0.0.1:0")


@pytest.fixture(scope="module")
def cluster():
    with _local_cluster() as c:
        yield c


@pytest.fixture
def address(cluster):
    """The scheduler's address, with both workers up (a test before may have killed one)."""
    with distributed.Client(cluster.scheduler_address) as c:
        c.wait_for_workers(2, timeout=30)
    return cluster.scheduler_address


def _match(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "gammago", "match", "--quiet", *args],
                          capture_output=True, text=True, env=_env(), cwd=ROOT, timeout=timeout)


def _games(path):
    """The record's games without what varies from run to run (times, where the SGF went)."""
    return [{k: v for k, v in g.items() if k not in ("seconds", "max_move_s", "sgf")}
            for g in json.loads(open(path).read())["games"]]


def _moves(path):
    text = open(path).read()
    return [t for t in text.replace("\n", "").split(";")[2:]]


# --- selfplay ------------------------------------------------------------------------------------
def test_selfplay_on_the_cluster_plays_the_local_games(address, tmp_path):
    """One task a game on the workers: the same games, move for move, as one local process."""
    from gammago.net import selfplay_record as R

    def run(out, *extra):
        r = subprocess.run([sys.executable, "-m", "gammago", "selfplay", "--size", "7", "--games",
                            "3", "--out", str(out), "--playouts", "40", "--seed", "4", "--mode",
                            "net-root", *extra], capture_output=True, text=True, env=_env(),
                           cwd=ROOT, timeout=300)
        assert r.returncode == 0, r.stderr
        assert "self-play: 3 games (3 played now)" in r.stdout
        return [R.read_game(p)["moves"] for p in R.game_files([str(out)])]

    assert run(tmp_path / "local") == run(tmp_path / "cluster", "--scheduler", address)


# --- match ---------------------------------------------------------------------------------------
def test_match_on_the_cluster_plays_the_local_games(address, tmp_path):
    """4 games of gammago against itself on two workers: the record and every SGF (written by
    the client) equal those of the same match played here."""
    common = ["--engine1", SMALL, "--engine2", SMALL.replace("50", "60"), "--games", "4",
              "--size", "9", "--max-moves", "160"]
    p = _match(*common, "--scheduler", address, "--json", str(tmp_path / "c.json"),
               "--sgf-dir", str(tmp_path / "c"))
    assert p.returncode == 0, p.stderr
    assert "cluster tcp://127.0.0.1:" in p.stderr and "2 worker(s), 2 thread(s)" in p.stderr
    assert "4 games planned, 4 played" in p.stdout
    p = _match(*common, "--parallel", "2", "--json", str(tmp_path / "l.json"),
               "--sgf-dir", str(tmp_path / "l"))
    assert p.returncode == 0, p.stderr
    assert _games(tmp_path / "c.json") == _games(tmp_path / "l.json")
    record = json.loads((tmp_path / "c.json").read_text())
    assert record["finished"] and record["summary"]["games"] == 4
    for g in record["games"]:
        assert g["reason"] in ("score", "resign", "max-moves"), g["detail"]
        assert g["sgf"] == str(tmp_path / "c" / f"game_{g['index'] + 1:04d}.sgf")
        assert _moves(g["sgf"]) == _moves(tmp_path / "l" / os.path.basename(g["sgf"]))


def test_sprt_stops_a_cluster_match_early(address):
    cfg = MatchConfig(engines={1: f"{SCRIPTED} pass", 2: f"{SCRIPTED} resign"},
                      names={1: "one", 2: "two"}, games=40, sprt=(0, 400))
    with distributed.Client(address) as client:
        results, s = run_match(cfg, progress=False, games=ClusterGames(client, cfg))
    needed = math.ceil(sprt_bounds()[1] / math.log(score_from_elo(400) / 0.5))
    assert s["sprt_decided_after"] == needed
    # the game that was still running when the test decided may have finished too (as locally
    # with --parallel 2); no other game was started
    assert s["games"] in (needed, needed + 1) and s["engine1"]["wins"] == s["games"]
    assert max(r.index for r in results) <= needed


def test_a_game_whose_worker_dies_is_played_again(address, tmp_path):
    """engine1 kills its worker (SIGKILL) at its first move of the match: the scheduler runs the
    game again on a live worker, which plays it to the end; nothing is lost or counted twice."""
    marker = tmp_path / "killed"
    p = _match("--engine1", f"{SCRIPTED} kill-parent {marker}", "--engine2", f"{SCRIPTED} pass",
               "--games", "4", "--komi", "0.5", "--scheduler", address,
               "--json", str(tmp_path / "m.json"))
    assert p.returncode == 0, p.stderr
    assert marker.exists()                               # a worker was killed
    data = json.loads((tmp_path / "m.json").read_text())
    assert data["finished"] and data["summary"]["abandoned"] == 0
    assert [g["index"] for g in data["games"]] == [0, 1, 2, 3]
    assert all(g["reason"] == "score" and g["result"] == "W+0.5" for g in data["games"])


def test_a_game_that_kills_its_workers_too_often_is_abandoned_then_resumed(tmp_path):
    """With no failures allowed (distributed.scheduler.allowed-failures = 0), the first worker
    death gives the game up (KilledWorker): it is counted as abandoned, not recorded, and a
    resumed match plays it."""
    import dask
    marker = tmp_path / "killed"
    cfg = MatchConfig(engines={1: f"{SCRIPTED} kill-parent {marker}", 2: f"{SCRIPTED} pass"},
                      names={1: "one", 2: "two"}, games=3, komi=0.5)
    with dask.config.set({"distributed.scheduler.allowed-failures": 0}):
        with _local_cluster() as c, distributed.Client(c) as client:
            results, s = run_match(cfg, progress=False, games=ClusterGames(client, cfg))
            assert marker.exists() and s["abandoned"] == 1 and s["games"] == 2
            lost = [r for r in results if r.winner == "x"]
            # the game whose engine1 asked for a move first (0 or 1: they start together)
            assert len(lost) == 1 and lost[0].index in (0, 1) and "worker died" in lost[0].detail
            again, s = run_match(cfg, progress=False, done=results, games=ClusterGames(client, cfg))
    assert [r.index for r in again] == [0, 1, 2] and s["abandoned"] == 0
    assert all(r.result == "W+0.5" for r in again)


def test_a_scheduler_that_goes_away_leaves_a_record_that_resumes(tmp_path):
    """The cluster is shut down while its games run: the command stops within seconds, saying
    so; its record keeps the finished games, and --resume (here locally) plays the rest: the
    record then equals that of an uninterrupted match."""
    js = tmp_path / "m.json"
    args = ["--engine1", f"{SCRIPTED} pass", "--engine2", f"{SCRIPTED} slow 1",
            "--move-timeout", "20", "--games", "8", "--komi", "0.5", "--json", str(js)]
    with _local_cluster() as c:
        p = subprocess.Popen([sys.executable, "-m", "gammago", "match", "--quiet", *args,
                              "--scheduler", c.scheduler_address], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, env=_env(), cwd=ROOT)
        deadline = time.monotonic() + 60
        while not js.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
    out, err = p.communicate(timeout=60)          # a command that hangs fails here
    assert p.returncode == 1, err
    assert "went away" in err and "--resume" in err
    first = json.loads(js.read_text())
    assert first["finished"] is False and 1 <= len(first["games"]) < 8

    p = _match(*args, "--resume")
    assert p.returncode == 0, p.stderr
    data = json.loads(js.read_text())
    assert data["finished"]
    by_index = {g["index"]: g for g in data["games"]}
    assert all(by_index[g["index"]] == g for g in first["games"])        # kept as they were
    assert [g["index"] for g in data["games"]] == list(range(8))
    assert all(g["result"] == "W+0.5" and g["black"] == 1 + g["index"] % 2 for g in data["games"])
    assert data["summary"]["engine1"]["wins"] == 4


def test_a_scheduler_that_does_not_answer_fails_within_seconds(tmp_path, capsys):
    p = _match("--engine1", f"{SCRIPTED} pass", "--engine2", f"{SCRIPTED} pass",
               "--scheduler", NOWHERE, "--connect-timeout", "2")    # _match's timeout: no hang
    assert p.returncode == 2
    assert p.stderr.startswith(f"gammago match: scheduler {NOWHERE} does not answer"), p.stderr
    assert "--connect-timeout 2)" in p.stderr              # it gave up after the time it was given
    assert cli.main(["train-mm", DATA, "--out", str(tmp_path / "x.gamma"), "--scheduler", NOWHERE,
                     "--connect-timeout", "1"]) == 2
    assert cli.main(["regress", os.path.join(DATA, "regress"), "--quiet", "--scheduler", NOWHERE,
                     "--connect-timeout", "1"]) == 2
    assert cli.main(["selfplay", "--size", "5", "--games", "1", "--out", str(tmp_path / "sp"),
                     "--scheduler", NOWHERE, "--connect-timeout", "1"]) == 2
    assert cli.main(["compare", "--player", f"a={SCRIPTED} pass", "--player", f"b={SCRIPTED} pass",
                     "--games", "1", "--size", "5", "--out", str(tmp_path / "cmp"),
                     "--scheduler", NOWHERE, "--connect-timeout", "1"]) == 2
    err = capsys.readouterr().err
    assert f"gammago compare: scheduler {NOWHERE} does not answer" in err
    assert f"gammago train-mm: scheduler {NOWHERE} does not answer" in err
    assert f"gammago regress: scheduler {NOWHERE} does not answer" in err
    assert f"gammago selfplay: scheduler {NOWHERE} does not answer" in err
    assert not (tmp_path / "sp").exists()                   # nothing written before it answers


# --- train-mm and regress --------------------------------------------------------------------------
def test_train_mm_on_the_cluster_learns_the_local_gammas(address, tmp_path):
    common = [DATA, "--holdout", "0.2", "--workers", "1", "--min-pattern-count", "3", "--seed", "2"]
    assert cli.main(["train-mm", *common, "--out", str(tmp_path / "local.gamma")]) == 0
    assert cli.main(["train-mm", *common, "--out", str(tmp_path / "dask.gamma"),
                     "--scheduler", address]) == 0
    a, b = gammas.load(tmp_path / "local.gamma"), gammas.load(tmp_path / "dask.gamma")
    assert np.array_equal(a.table, b.table) and np.array_equal(a.listed, b.listed)
    data = lambda p: [x for x in p.read_text().splitlines() if x.startswith("# data:")]  # noqa: E731
    assert data(tmp_path / "local.gamma") == data(tmp_path / "dask.gamma")


def test_regress_on_the_cluster_one_task_per_file(address, tmp_path, capsys):
    suite = os.path.join(DATA, "regress")
    engine = "gammago --playouts 200 --seed 1"
    for name, extra in (("local", []), ("dask", ["--scheduler", address])):
        assert cli.main(["regress", suite, "--engine", engine, "--quiet",
                         "--json", str(tmp_path / f"{name}.json"), *extra]) == 0
    a, b = (json.loads((tmp_path / f"{n}.json").read_text()) for n in ("local", "dask"))
    strip = lambda t: {k: v for k, v in t.items() if k != "seconds"}  # noqa: E731
    assert [strip(t) for t in a["tests"]] == [strip(t) for t in b["tests"]]
    assert list(b["files"]) == ["capture.tst", "forms.tst"] and b["finished"]
    for k in ("tests", "PASS", "FAIL", "skipped"):
        assert a["total"][k] == b["total"][k]
    assert "2 worker(s)" in capsys.readouterr().err
