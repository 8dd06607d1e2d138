"""gammago selfplay: its records, --resume, what the net's trainer reads of them, and the choice of
the net by board size."""
import json
import math
import logging
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from gammago.net import runtime as N
from gammago.engine import selfplay as S
from gammago.net import selfplay_positions as D
from gammago.net import selfplay_record as R
from gammago.go.board import Board
from tool_module import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def selfplay(out, *extra, games=3, size=7, check=True):
    cmd = [sys.executable, "-m", "gammago", "selfplay", "--size", str(size), "--games", str(games),
           "--out", str(out), "--playouts", "40", "--seed", "5", *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=check, cwd=ROOT)


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    """Four 7x7 games of net-root with root noise, half of them with resignation off."""
    out = tmp_path_factory.mktemp("selfplay") / "run"
    r = selfplay(out, "--mode", "net-root", "--no-resign-share", "0.5", games=4)
    assert "self-play: 4 games (4 played now)" in r.stdout, r.stdout + r.stderr
    return out


def test_records_replay_and_hold_the_searchs_visits(run_dir):
    files = R.game_files([str(run_dir)])
    assert len(files) == 4
    for path in files:
        rec = R.read_game(path)            # replays every move and checks the score
        assert rec["format"] == R.FORMAT and rec["size"] == 7
        assert len(rec["search"]) == len(rec["moves"]) > 0
        for s in rec["search"]:
            assert s["visits"] and sum(s["visits"].values()) == s["root_visits"] > 0
            assert 0 <= s["winrate"] <= 1 and s["full"]
        # the first moves are drawn by visits, the later ones are the most visited
        for i, s in enumerate(rec["search"]):
            if i >= rec["settings"]["random_moves"]:
                assert not s["sampled"]
        board = Board(7, rec["komi"])
        for colour, vertex in rec["moves"]:
            board.play(vertex, colour)
        if rec["end"] == "passes":
            assert rec["score"] == board.score()
            assert rec["winner"] == ("b" if board.score() > 0 else "w" if board.score() < 0 else "")
        assert rec["settings"]["engine"]["mode"] == "net-root"
        assert rec["build"] and rec["seed"]
        assert not os.path.isabs(rec["build"].split()[0]), rec["build"]   # no path of the machine
        assert os.path.getsize(R.sgf_path(str(run_dir), rec["game"])) > 0


def test_drawn_moves_follow_the_visits():
    rng = np.random.default_rng(1)
    visits = {"C3": 30, "D4": 10, "pass": 60}
    draws = [S._draw_by_visits(visits, rng) for _ in range(2000)]
    assert set(draws) == {"C3", "D4"}                 # pass is never drawn
    assert 0.70 < draws.count("C3") / 2000 < 0.80


def test_root_noise_changes_the_root_priors_and_repeats_with_the_seed():
    from gammago.engine.settings import EngineConfig
    from gammago.engine.engine import Engine
    eng = Engine(EngineConfig(mode="net-root", playouts=32, seed=3, net_symmetry="average"))
    eng.new_game(9, 7)

    def root(noise, seed=1):
        eng.set_root_noise(0.3, noise, np.random.default_rng(seed))
        eng.clear_cache()
        eng.decide("b")
        return {eng.board.vertex(p): round(prior, 6) for p, _, _, prior in eng.search.children()}

    plain, noisy, again = root(0.0), root(0.5), root(0.5)
    assert plain != noisy and noisy == again
    assert eng.set_root_noise(0.3, 0.0) is True
    small = Engine(EngineConfig(mode="rollouts", playouts=32))
    small.new_game(7, 7)
    assert small.set_root_noise(0.3, 0.25) is False     # no noise on the rollouts-only tree


def test_resume_after_a_kill_keeps_no_partial_game_and_plays_only_the_missing(tmp_path):
    out = tmp_path / "run"
    cmd = [sys.executable, "-m", "gammago", "selfplay", "--size", "7", "--games", "6", "--out",
           str(out), "--playouts", "60", "--seed", "9", "--mode", "rollouts"]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.time() + 120
    while time.time() < deadline and len(R.finished_games(str(out))) < 2:
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)      # mid-game: the third is under way
    proc.wait()
    # a partial record, as a kill during the write would leave it
    (out / "games" / "000005.json.tmp123").write_text('{"format": "gammago-selfplay 1", "mo')
    done = R.finished_games(str(out))
    assert 2 <= len(done) < 6
    stamps = {i: os.path.getmtime(R.game_path(str(out), i)) for i in done}
    r = selfplay(out, games=6, check=False)
    assert r.returncode == 2 and "--resume" in r.stderr        # no silent overwrite
    r = subprocess.run(cmd + ["--resume"], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    assert f"self-play: 6 games ({6 - len(done)} played now)" in r.stdout
    assert R.finished_games(str(out)) == set(range(6))
    assert not [f for f in os.listdir(out / "games") if ".tmp" in f]
    for i, t in stamps.items():
        assert os.path.getmtime(R.game_path(str(out), i)) == t      # not replayed
    other = subprocess.run(cmd[:-6] + ["--playouts", "80", "--seed", "9", "--mode", "rollouts",
                                       "--resume"], capture_output=True, text=True, cwd=ROOT)
    assert other.returncode == 2 and "other settings" in other.stderr


def test_resume_takes_a_run_recorded_with_options_retired_since(tmp_path):
    """A run's settings recorded before options were retired (retired.RETIRED) name them: at
    their old defaults the run resumes, at another value it was not played as this engine plays
    and is refused."""
    import argparse
    from gammago.core.retired import RETIRED
    p = argparse.ArgumentParser()
    S.add_arguments(p)
    import dataclasses
    cfg = S.config_from_args(p.parse_args(["--size", "7", "--games", "1", "--out",
                                           str(tmp_path / "run"), "--playouts", "40"]))
    cfg = dataclasses.replace(cfg, games=0)          # the comparison alone, no game to play
    os.makedirs(cfg.out)
    old = S._jsonable(cfg.settings())
    R.write_settings(cfg.out, dict(old, engine=dict(old["engine"], **RETIRED)))
    S.run(cfg, resume=True, progress=False)
    R.write_settings(cfg.out, dict(old, engine=dict(old["engine"], **dict(RETIRED, lgrf=True))))
    with pytest.raises(ValueError, match=r"other settings \(engine\)"):
        S.run(cfg, resume=True, progress=False)


def test_bad_options_are_refused_before_any_game(tmp_path):
    r = selfplay(tmp_path / "x", "--full-share", "0", check=False)
    assert r.returncode == 2 and "--full-share" in r.stderr
    r = selfplay(tmp_path / "y", "--size", "4", check=False)
    assert r.returncode == 2 and "--size" in r.stderr
    assert not (tmp_path / "x").exists() and not (tmp_path / "y").exists()


def test_playout_cap_randomization_keeps_only_full_searches_as_policy_targets(tmp_path):
    out = tmp_path / "cap"
    selfplay(out, "--mode", "rollouts", "--full-share", "0.3", "--cheap-playouts", "10", games=2)
    recs = [R.read_game(p) for p in R.game_files([str(out)])]
    flags = [s["full"] for rec in recs for s in rec["search"]]
    assert any(flags) and not all(flags)
    full = [s["root_visits"] for rec in recs for s in rec["search"] if s["full"]]
    cheap = [s["root_visits"] for rec in recs for s in rec["search"] if not s["full"]]
    assert np.median(full) > np.median(cheap)
    data = D.read_positions([str(out)], value_per_game=0, heldout_permille=0, progress=False)
    nfull = sum(flags)
    assert (data["train_move"] >= 0).sum() == nfull               # policy: full searches only
    assert len(data["train_move"]) == len(flags)                   # value: every position


def test_trainer_reads_the_records(run_dir):
    data = D.read_positions([str(run_dir)], value_per_game=3, heldout_permille=600, progress=False)
    assert len(data["heldout_names"]) == 1 and len(data["train_names"]) == 3   # run/000000 (533)
    assert int(data["size"]) == 7
    n = sum(len(data[f"{w}_names"]) for w in ("train", "heldout"))
    assert n == 4
    for w in ("train", "heldout"):
        if not len(data[f"{w}_move"]):
            continue
        p = data[f"{w}_pprob"].astype(np.float64)
        has = data[f"{w}_move"] >= 0
        np.testing.assert_allclose(p[has].sum(1), 1, atol=2e-3)
        assert (data[f"{w}_pidx"][has, 0] == data[f"{w}_move"][has]).all()   # most visited first
        assert data[f"{w}_x"].shape[1] == (20 * 49 + 7) // 8
        assert set(np.unique(data[f"{w}_value"])) <= {-1, 0, 1}
        # 3 value positions a game
        for g in np.unique(data[f"{w}_game"]):
            assert data[f"{w}_vmask"][data[f"{w}_game"] == g].sum() == 3
    # the value target is the result from the mover's view
    rec = R.read_game(R.game_files([str(run_dir)])[0])
    pos = D.game_positions(rec, 0, np.random.default_rng(0))
    for (_, _, _, value, _, ply) in pos:
        colour = rec["moves"][ply][0]
        assert value == (0 if not rec["winner"] else 1 if colour == rec["winner"] else -1)


def test_bad_records_are_named_and_skipped(run_dir, tmp_path, capsys):
    import shutil
    bad = tmp_path / "bad"
    shutil.copytree(run_dir, bad)
    files = sorted((bad / "games").iterdir())
    text = files[0].read_text()
    files[0].write_text(text[: len(text) // 2])                       # truncated
    rec = json.loads(files[1].read_text())
    rec["format"] = "gammago-selfplay 0"
    files[1].write_text(json.dumps(rec))                              # another format
    data = D.read_positions([str(bad)], heldout_permille=0, progress=False)
    err = capsys.readouterr().err
    assert str(files[0]) in err and "truncated" in err
    assert str(files[1]) in err and "gammago-selfplay 0" in err
    assert len(data["train_names"]) == 2 and int(data["skipped"]) == 2
    rec = json.loads(files[2].read_text())
    rec["moves"][1] = rec["moves"][0]                                  # an illegal replay
    files[2].write_text(json.dumps(rec))
    with pytest.raises(R.RecordError, match="does not replay"):
        R.read_game(str(files[2]))


def test_train_net_trains_a_small_board_net_on_selfplay_records(run_dir, tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("onnx")
    from gammago import cli
    from gammago.net import torch_training as net_training
    out = tmp_path / "sp7.onnx"
    threads = torch.get_num_threads()
    try:
        rc = cli.main(["train-net", "--selfplay", str(run_dir), "--heldout-permille", "600", "--out", str(out),
                       "--blocks", "1", "--channels", "8", "--minutes", "0.02", "--batch", "16",
                       "--eval-every", "1000", "--device", "cpu", "--generation", "1"])
    finally:
        torch.set_num_threads(threads)
    assert rc == 0
    net = N.Net(str(out))
    assert net.metadata["board_sizes"] == "7" and net.metadata["trained_board_size"] == "7"
    assert net.metadata["generation"] == "1"
    assert N.covers(net.metadata, 7) and not N.covers(net.metadata, 9)
    # the soft target's loss is the cross-entropy with the visit distribution
    logits = torch.tensor([[0.0, 1.0, 2.0]])
    target = (torch.tensor([[2, 1]]), torch.tensor([[0.75, 0.25]]))
    logp = torch.log_softmax(logits, 1)[0]
    want = -(0.75 * logp[2] + 0.25 * logp[1])
    assert abs(net_training.policy_loss(logits, None, target).item() - want.item()) < 1e-6


def test_symmetric_targets_turn_with_the_planes(run_dir):
    torch = pytest.importorskip("torch")
    from gammago.net import torch_batches as net_batches
    data = D.read_positions([str(run_dir)], value_per_game=0, heldout_permille=0, progress=False)
    pos = net_batches.Positions(data, "train", "cpu")
    idx = torch.arange(min(8, pos.n))
    x0, move0, _, _ = pos.batch(idx)
    for k in range(8):
        ks = torch.full((len(idx),), k)
        x, move, _, _ = pos.batch(idx, ks)
        pidx, pprob = pos.policy_targets(idx, ks)
        assert (pidx[:, 0] == move).all()
        # the own stone at the move's point moves with the planes: the target's point in the
        # turned planes is the turned point of the original
        flat0, flat = x0.reshape(len(idx), 20, -1), x.reshape(len(idx), 20, -1)
        n = 49
        for i in range(len(idx)):
            m0, m = int(move0[i]), int(move[i])
            if m0 < n:
                assert torch.equal(flat0[i, :, m0], flat[i, :, m])


# --- the net for the board size ---------------------------------------------------------------
def _model_with(tmp_path, name, **meta):
    """The shipped small net with its metadata changed (onnx), as a model trained for a size."""
    onnx = pytest.importorskip("onnx")
    proto = onnx.load(str(N.MODELS_DIR / "gammago-net-b4c32.onnx"))
    have = {p.key: p for p in proto.metadata_props}
    for k, v in meta.items():
        if k in have:
            have[k].value = str(v)
        else:
            e = proto.metadata_props.add()
            e.key, e.value = k, str(v)
    path = tmp_path / name
    onnx.save(proto, str(path))
    return str(path)


def test_a_model_trained_for_9x9_is_chosen_on_9x9_only(tmp_path, monkeypatch, caplog):
    models = tmp_path / "models"
    models.mkdir()
    g1 = _model_with(models, "net-9x9-g1.onnx", board_sizes="9", trained_board_size=9, generation=1)
    g2 = _model_with(models, "net-9x9-g2.onnx", board_sizes="9", trained_board_size=9, generation=2)
    _model_with(models, "other.onnx", board_sizes="5-19", trained_board_size=19)
    found = N.shipped_models(str(models))
    assert len(found) == 3
    path, why = N.choose_model(9, models=found)
    assert path == g2 and "generation 2" in why
    path, why = N.choose_model(19, models=found)
    assert path == N.DEFAULT_MODEL and "none is trained for 19x19" in why
    assert N.choose_model(9, given=g1, models=found)[0] == g1              # --model overrides
    with caplog.at_level(logging.WARNING, logger="gammago"):
        path, why = N.choose_model(13, given=g1, models=found)
    assert path == N.DEFAULT_MODEL
    assert g1 in caplog.text and "not 13x13" in caplog.text and "gammago-net-b6c64.onnx" in caplog.text
    assert N.parse_sizes("7-9,13") == {7, 8, 9, 13}
    with pytest.raises(ValueError, match="board_sizes"):
        N.parse_sizes("nine")

    # the engine: the 9x9 net on 9x9, the default on 19x19, and the log says which and why
    from gammago.engine.settings import EngineConfig
    from gammago.engine.engine import Engine
    monkeypatch.setattr(N, "_SHIPPED", found)
    with caplog.at_level(logging.INFO, logger="gammago"):
        eng = Engine(EngineConfig(playouts=16))
        eng.new_game(9, 7)
        assert eng.net.path == g2 and eng.search.net is eng.net
        assert eng.genmove("b") != "resign"
        eng.new_game(19, 7.5)
        assert eng.net.path == N.DEFAULT_MODEL and eng.search.net is eng.net
        eng.new_game(9, 7)
        assert eng.net.path == g2
    assert "net-9x9-g2.onnx for 9x9: trained for 9x9 by self-play, generation 2" in caplog.text
    assert "gammago-net-b6c64.onnx for 19x19: the default net" in caplog.text
    eng = Engine(EngineConfig(playouts=16, model=g1))
    eng.new_game(19, 7.5)
    assert eng.net.path == N.DEFAULT_MODEL
    eng.new_game(9, 7)
    assert eng.net.path == g1


def test_the_nets_own_lambda_is_the_default_and_net_lambda_overrides(tmp_path, monkeypatch):
    from gammago.engine.settings import EngineConfig
    from gammago.engine.engine import Engine
    models = tmp_path / "models"
    models.mkdir()
    g1 = _model_with(models, "net-9x9-g1.onnx", board_sizes="9", trained_board_size=9,
                     generation=1, net_lambda=0.5)
    bad = _model_with(models, "bad.onnx", board_sizes="9", net_lambda="lots")
    monkeypatch.setattr(N, "_SHIPPED", N.shipped_models(str(models))[1:])     # g1 only
    eng = Engine(EngineConfig(playouts=16))
    eng.new_game(9, 7)
    assert eng.net.path == g1 and eng.search.lam == 0.5
    eng.new_game(19, 7.5)
    assert eng.search.lam == 0.0                       # the default net names none
    eng = Engine(EngineConfig(playouts=16, net_lambda=0.0))
    eng.new_game(9, 7)
    assert eng.net.path == g1 and eng.search.lam == 0.0
    with pytest.raises(ValueError, match="bad.onnx.*net_lambda 'lots'"):
        Engine(EngineConfig(playouts=16, model=bad)).new_game(9, 7)


def test_model_metadata_tool_sets_a_key_in_place(tmp_path, capsys):
    pytest.importorskip("onnx")
    path = _model_with(tmp_path, "m.onnx", board_sizes="9")
    tool = load_tool("model_metadata")
    assert tool.main([path, "net_lambda=0.25"]) == 0
    assert "net_lambda: 0.25" in capsys.readouterr().out
    assert N.Net(path).metadata["net_lambda"] == "0.25" and not os.path.exists(path + ".tmp")
    with pytest.raises(SystemExit, match="KEY=VALUE"):
        tool.main([path, "oops"])


def test_the_most_visited_move_as_the_policy_target(run_dir):
    data = D.read_positions([str(run_dir)], value_per_game=0, heldout_permille=0, progress=False,
                            policy_target="best")
    has = data["train_move"] >= 0
    assert (data["train_pprob"][has, 0] == 1).all() and (data["train_pprob"][has, 1:] == 0).all()
    assert (data["train_pidx"][has, 0] == data["train_move"][has]).all()
    with pytest.raises(ValueError, match="policy target"):
        D.read_positions([str(run_dir)], policy_target="played", progress=False)


def test_gumbel_root_halves_the_candidates_and_targets_the_completed_q():
    from gammago.engine.settings import EngineConfig
    from gammago.engine.engine import Engine
    eng = Engine(EngineConfig(mode="net-root", playouts=320, seed=3, net_symmetry="average"))
    eng.new_game(9, 7)
    assert eng.set_root_gumbel(8, np.random.default_rng(4)) is True
    eng.decide("b")
    rs = eng.search
    searched = [k for k in rs.kids if k["new"] > 0]
    # 8 candidates, log2(8) = 3 rounds: each gets a batch, the best 4 then 2 get more
    assert len(searched) == 8
    assert sum(k["new"] for k in rs.kids) == 320
    assert len(rs._halving["alive"]) == 2
    alive = {k["move"] for k in rs._halving["alive"]}
    assert all(k["new"] > max(j["new"] for j in searched if j["move"] not in alive)
               for k in rs._halving["alive"])
    assert rs.gumbel_choice() in alive
    pol = rs.improved_policy()
    assert abs(sum(pol.values()) - 1) < 1e-9 and set(pol) >= {k["move"] for k in rs.kids}
    # sigma(q) moves the target off the prior toward the better-valued children
    qhat, vmix, scale = rs._sigma()
    best_q = max(searched, key=lambda k: qhat[k["move"]])["move"]
    prior = {k["move"]: k["prior"] for k in rs.kids}
    assert pol[best_q] / sum(pol[m] for m in prior) > prior[best_q]
    # another position (the engine may decide a move without a search): no choice, no target
    other = eng.board.copy()
    other.play(rs.gumbel_choice())
    assert rs.gumbel_choice(other) is None and rs.improved_policy(other) is None
    assert rs.gumbel_choice(eng.board) is not None
    # off again: PUCT, no halving state
    eng.set_root_gumbel(0)
    eng.clear_cache()
    eng.decide("b")
    assert eng.search.gumbel_choice() is None and eng.search.improved_policy() is None


def test_gumbel_selfplay_records_the_improved_target_for_the_trainer(tmp_path):
    out = tmp_path / "gumbel"
    r = selfplay(out, "--mode", "net-root", "--gumbel", "4", "--playouts", "96", games=1, size=9)
    assert "1 games (1 played now)" in r.stdout, r.stdout + r.stderr
    rec = R.read_game(R.game_files([str(out)])[0])
    assert rec["settings"]["gumbel"] == 4
    # a pass the engine decides is not the halving's choice, nor is a move after the opponent's
    # pass (the rollouts-only tree plays it, to take dead stones off): those have no target
    after_pass = [i > 0 and rec["moves"][i - 1][1] == "pass" for i in range(len(rec["moves"]))]
    assert all("improved" in s for s, (_, move), ap in zip(rec["search"], rec["moves"], after_pass)
               if move != "pass" and not ap)
    searched = [s for s in rec["search"] if "improved" in s]
    for s in searched:
        assert s["improved"] and abs(sum(s["improved"].values()) - 1) < 0.01
        assert len(s["improved"]) <= R.IMPROVED_TOP
    data = D.read_positions([str(out)], value_per_game=0, heldout_permille=0, progress=False,
                            policy_target="improved")
    assert len(data["train_move"]) == len(rec["moves"])
    has = data["train_move"] >= 0
    assert has.sum() == len(searched)
    assert np.allclose(data["train_pprob"][has].sum(axis=1), 1, atol=0.01)
    bad = selfplay(tmp_path / "x", "--gumbel", "3", check=False)       # 7x7 with --playouts: fine
    assert bad.returncode == 0
    for args in (["--gumbel", "1"], ["--gumbel", "4", "--playouts", "0", "--move-time", "0.1"]):
        r = selfplay(tmp_path / "y", *args, check=False)
        assert r.returncode == 2 and "--gumbel" in r.stderr, r.stderr


def test_forced_playouts_reach_every_child_and_pruning_takes_them_out():
    from gammago.engine.settings import EngineConfig
    from gammago.engine.engine import Engine
    from gammago.search import net_root as RS
    eng = Engine(EngineConfig(mode="net-root", playouts=960, seed=3, net_symmetry="average"))
    eng.new_game(9, 7)
    assert eng.set_root_forced(2.0) is True
    eng.decide("b")
    rs = eng.search
    batches = rs.root_visits / rs.batch
    # every child has its forced batches, give or take the last batch
    for k in rs.kids:
        assert k["visits"] / rs.batch >= math.sqrt(2.0 * k["prior"] * batches) - 1.0, k
    pruned = rs.pruned_visits()
    visits = {k["move"]: k["visits"] for k in rs.kids}
    best = max(visits, key=visits.get)
    assert set(pruned) == set(visits) and pruned[best] == visits[best]
    assert all(0 <= pruned[m] <= visits[m] for m in visits)
    assert sum(pruned.values()) < sum(visits.values())
    # a child is pruned only where its PUCT value stays below the best one's
    sq = math.sqrt(rs.root_visits + 1)
    best_kid = next(k for k in rs.kids if k["move"] == best)
    top = rs.q(best_kid) + rs.c_puct * best_kid["prior"] * sq / (1 + visits[best])
    for k in rs.kids:
        if 0 < pruned[k["move"]] < k["visits"]:
            assert rs.q(k) + rs.c_puct * k["prior"] * sq / (1 + pruned[k["move"]]) < top
        if pruned[k["move"]] == 0:
            assert k["visits"] == 0 or rs.q(k) < top
    # the engine gives the same for the searched position, none for another
    assert eng.root_pruned_visits(eng.board) == pruned
    other = eng.board.copy()
    other.play(best)
    assert rs.pruned_visits(other) == {} == eng.root_pruned_visits(other)
    # the rollouts-only tree has no pruned visits
    flat = Engine(EngineConfig(mode="rollouts", playouts=200, seed=3))
    flat.new_game(9, 7)
    flat.decide("b")
    assert flat.root_pruned_visits(flat.board) == {}
    eng.set_root_forced(0)
    assert rs._forced == 0
    with pytest.raises(ValueError):
        rs.set_forced(-1)
    assert RS.FORCED_K == 2.0


def test_forced_playouts_selfplay_records_the_pruned_target_for_the_trainer(tmp_path):
    out = tmp_path / "forced"
    r = selfplay(out, "--mode", "net-root", "--forced-playouts", "2", "--playouts", "96", games=1)
    assert "1 games (1 played now)" in r.stdout, r.stdout + r.stderr
    rec = R.read_game(R.game_files([str(out)])[0])
    assert rec["settings"]["forced"] == 2
    with_target = [s for s in rec["search"] if "pruned" in s]
    assert with_target
    for s in with_target:
        assert all(0 < v <= s["visits"][m] for m, v in s["pruned"].items())
        best = max(s["visits"], key=s["visits"].get)
        assert s["pruned"][best] == s["visits"][best]
    data = D.read_positions([str(out)], value_per_game=0, heldout_permille=0, progress=False,
                            policy_target="pruned")
    has = data["train_move"] >= 0
    assert has.sum() == len(with_target)
    assert np.allclose(data["train_pprob"][has].sum(axis=1), 1, atol=0.01)
    for args in (["--forced-playouts", "-1"], ["--forced-playouts", "2", "--gumbel", "4"]):
        r = selfplay(tmp_path / "y", *args, check=False)
        assert r.returncode == 2 and "--forced-playouts" in r.stderr, r.stderr


def test_the_value_target_mixes_in_the_searchs_win_rate(run_dir):
    assert D.value_target(1, 0.75, 0.0) == 1.0
    assert D.value_target(1, 0.75, 0.5) == pytest.approx(0.75)      # (1 + 0.5) / 2
    assert D.value_target(-1, 0.75, 1.0) == pytest.approx(0.5)
    assert D.value_target(-1, None, 0.5) == -1.0
    plain = D.read_positions([str(run_dir)], value_per_game=0, heldout_permille=500, progress=False)
    mixed = D.read_positions([str(run_dir)], value_per_game=0, heldout_permille=500, progress=False,
                             value_q=0.5)
    assert set(np.unique(plain["train_value"])) <= {-1, 0, 1}
    # the training targets move toward the search's values; the held-out ones stay the results
    assert not np.array_equal(plain["train_value"], mixed["train_value"])
    assert np.abs(mixed["train_value"]).max() <= 1
    assert np.array_equal(plain["heldout_value"], mixed["heldout_value"])
    with pytest.raises(ValueError, match="value q"):
        D.read_positions([str(run_dir)], value_q=1.5, progress=False)


def test_value_siblings_tool_scores_a_net_on_held_out_positions(run_dir, capsys, monkeypatch):
    tool = load_tool("value_siblings")
    monkeypatch.setattr(tool, "MIN_VISITS", 1)
    pos = tool.positions([str(run_dir)], 50, 1000, 1)
    assert pos and all(len(kids) >= 3 for _, kids in pos)
    assert tool.main(["--selfplay", str(run_dir), "--heldout-permille", "1000", "--positions", "20",
                      N.DEFAULT_MODEL]) == 0
    row = capsys.readouterr().out.strip().splitlines()[-1].split(" | ")
    assert row[0] == N.DEFAULT_MODEL and all(0 <= float(x) <= 1 for x in row[1:3])
    assert -1 <= float(row[3]) <= 1
    assert tool.main(["--selfplay", str(run_dir), "--heldout-permille", "1000", "/nonexistent.onnx"]) == 2
