"""Rollout quality tools: scaled gamma tables (gammas.scale, the engine's --rollout-scale), the
flat Monte-Carlo match
(tools/flat_mc_match.py) and the evaluation accuracy tool (tools/rollout_accuracy.py), see
docs/BENCHMARKS.md "Rollouts", Quality."""
import json
import os

import numpy as np
import pytest

from gammago.moves import features as F
from gammago.moves import gammas as G
from gammago.rollout import gamma_policy as rollout
from gammago.rollout import tail
from gammago.go.board import Board

from engine_args import engine_config
from tool_module import load_tool

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _group(name):
    g = list(F.GROUP_NAMES).index(name)
    return slice(F.GROUP_BASES[g], F.GROUP_BASES[g] + F.GROUP_SIZES[g])


def test_pass_candidate_ends_a_won_game():
    """After the opponent's pass, a player who wins the board as it stands passes (its pass
    playouts score the board exactly); without the pass candidate it plays on."""
    tool = load_tool("flat_mc_match")
    b = Board(5, 0.5)
    b.setup(black=["B1", "B2", "B3", "B4", "B5"], white=["D1", "D2", "D3", "D4", "D5"])
    b.play("C3")
    b.play("pass")
    assert b.to_move == "b" and b.passes == 1
    assert b.score() > 0
    for policy in ("light", rollout.GammaPolicy()):
        move, rate = tool.flat_move(b, 64, policy, 7, True)
        assert move == "pass" and rate == 1.0
        move, _ = tool.flat_move(b, 64, policy, 7, False)
        assert move != "pass"


def test_flat_mc_match_runs_and_refuses_a_bad_table(capsys, tmp_path):
    tool = load_tool("flat_mc_match")
    assert tool.main(["--games", "2", "--playouts", "8", "--size", "5", "--pass-candidate",
                      "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["games"] == 2 and out["pass_candidate"]
    assert len(out["gamma_margins"]) == 2 and out["gamma_black_games"] == 1
    bad = tmp_path / "bad.gamma"
    bad.write_text("not gammas\n")
    assert tool.main(["--games", "1", "--gammas", str(bad)]) == 2
    assert "bad.gamma" in capsys.readouterr().err


def test_scale_multiplies_the_named_features_only():
    raw = G.load_default().table
    names = G._names()
    out = G.scale(raw, "capture:save=3, extension:new/2libs=0.5")
    changed = {n for n, i in names.items() if out[i] != raw[i]}
    assert changed == {"capture:save/1", "capture:save/2-3", "capture:save/4+",
                       "extension:new/2libs"}
    assert out[names["capture:save/2-3"]] == pytest.approx(3 * raw[names["capture:save/2-3"]])
    assert out[names["extension:new/2libs"]] == pytest.approx(
        0.5 * raw[names["extension:new/2libs"]])
    assert np.array_equal(G.scale(raw, ""), raw) and G.scale(raw, "") is not raw
    assert np.array_equal(raw, G.load_default().table)          # no aliasing
    assert G.parse_scale("selfatari=2,,atari:ko=0.5") == [("selfatari", 2.0), ("atari:ko", 0.5)]
    for bad, why in (("nosuch=2", "no feature name starts"), ("capture=0", "factor > 0"),
                     ("capture", "PREFIX=FACTOR"), ("capture=x", "PREFIX=FACTOR"),
                     ("capture=inf", "factor > 0"), ("=2", "PREFIX=FACTOR")):
        with pytest.raises(ValueError, match=why):
            G.parse_scale(bad)


def test_engine_rollout_gammas_default_and_option():
    from gammago.engine.settings import EngineConfig, ROLLOUT_SCALE, rollout_gammas, rollout_scale_for
    from gammago.engine.engine import Engine
    raw = G.load_default().table
    assert rollout_scale_for(9) == ROLLOUT_SCALE != "" and rollout_scale_for(13) == ""
    assert EngineConfig().rollout_scale is None     # by board size unless given
    assert np.array_equal(rollout_gammas(raw, 9, ""), raw)
    assert np.array_equal(rollout_gammas(raw, 9), G.scale(raw, ROLLOUT_SCALE))
    assert np.array_equal(rollout_gammas(raw, 19), raw)
    assert np.array_equal(rollout_gammas(raw, 19, "selfatari=4"), G.scale(raw, "selfatari=4"))
    with pytest.raises(ValueError, match="--rollout-scale: .*nope"):
        EngineConfig(rollout_scale="nope=2").validate()
    e = Engine(EngineConfig(playouts=64, seed=3, mode="rollouts", rollout_scale="selfatari=2"))
    e.new_game(9, 7.0)
    move = e.genmove("b")
    assert move not in ("pass", "resign") and e.board.color_at(move) == "b"


def test_engine_rollout_light_after_default_and_option():
    from gammago.engine.settings import (EngineConfig, ROLLOUT_LIGHT_AFTER, ROLLOUT_LIGHT_AFTER_LARGE,
                                ROLLOUT_TAIL_LONE_MAX_SIZE, ROLLOUT_TAIL_SEKI_MAX_SIZE,
                                rollout_light_after_for, rollout_tail_for,
                                rollout_tail_lone_for, rollout_tail_seki_for)
    from gammago.engine.engine import Engine
    # the rollout module's default rules are the engine's but for the size-bound lone and seki
    # rules
    assert rollout.GammaPolicy().tail == tail.RULES_DEFAULT == rollout_tail_for(13)
    assert set(rollout.GammaPolicy().tail_rules) == {"shapes"}
    assert rollout_tail_for(9) == rollout_tail_for(13) | tail.RULES["lone"] | tail.RULES["seki"]
    with pytest.raises(ValueError, match="rules word"):
        rollout.GammaPolicy(tail=2 * max(tail.RULES.values()))     # a bit no rule has
    with pytest.raises(ValueError, match="no light-tail rule 'ladder'"):
        tail.rules("shapes", "ladder")
    assert rollout_tail_lone_for(9) is True and rollout_tail_lone_for(13) is False
    assert rollout_tail_lone_for(ROLLOUT_TAIL_LONE_MAX_SIZE - 1) is True
    assert EngineConfig().rollout_tail_lone is None         # by board size unless given
    assert rollout_tail_seki_for(9) is True and rollout_tail_seki_for(13) is False
    assert rollout_tail_seki_for(ROLLOUT_TAIL_SEKI_MAX_SIZE - 1) is True
    assert EngineConfig().rollout_tail_seki is None
    assert rollout_light_after_for(9) == ROLLOUT_LIGHT_AFTER > 0
    assert rollout_light_after_for(13) == ROLLOUT_LIGHT_AFTER_LARGE == rollout_light_after_for(19)
    assert ROLLOUT_LIGHT_AFTER_LARGE > ROLLOUT_LIGHT_AFTER
    assert EngineConfig().rollout_light_after is None      # by board size unless given
    with pytest.raises(ValueError, match="--rollout-light-after"):
        EngineConfig(rollout_light_after=-1).validate()
    e = Engine(EngineConfig(mode="rollouts"))
    e.new_game(9, 7.0)
    assert e.search.light_after == ROLLOUT_LIGHT_AFTER
    e.new_game(19, 7.5)
    assert e.search.light_after == ROLLOUT_LIGHT_AFTER_LARGE
    cfg = engine_config(["--rollout-light-after", "5", "--playouts", "64", "--mode", "rollouts"])
    e = Engine(cfg)
    e.new_game(9, 7.0)
    assert e.search.light_after == 5
    assert "shapes" in e.search.tail_rules                 # the default
    move = e.genmove("b")
    assert move not in ("pass", "resign") and e.board.color_at(move) == "b"
    cfg = engine_config(["--rollout-tail-shapes", "off", "--playouts", "64", "--mode", "rollouts"])
    assert cfg.rollout_tail_shapes is False
    e = Engine(cfg)
    e.new_game(9, 7.0)
    assert "shapes" not in e.search.tail_rules
    assert e.genmove("w") not in ("pass", "resign")
    for rule in ("lone", "seki"):                                 # the size-bound rules
        e.new_game(9, 7.0)
        assert rule in e.search.tail_rules                        # the 9x9 default
        e.new_game(19, 7.5)
        assert rule not in e.search.tail_rules                    # the 19x19 default
        for flag, on in (("off", False), ("on", True)):
            cfg = engine_config([f"--rollout-tail-{rule}", flag, "--playouts", "64",
                                 "--mode", "rollouts"])
            assert getattr(cfg, f"rollout_tail_{rule}") is on
            set_rule = Engine(cfg)
            for size in (9, 19):
                set_rule.new_game(size, 7.0)
                assert (rule in set_rule.search.tail_rules) is on
                assert "shapes" in set_rule.search.tail_rules
            assert set_rule.genmove("w") not in ("pass", "resign")


def test_the_gamma_moves_refuse_where_they_play_to_the_end():
    """The gamma moves refuse bad self-ataris where the gammas play to the end
    (--rollout-light-after 0) and not before a light tail, on both sizes, in the engine and in
    train-balance's playouts for the --light-after they balance."""
    from gammago.engine.settings import EngineConfig, rollout_tail_for
    from gammago.engine.engine import Engine
    from gammago.engine.train_balance import tail_word
    bit = tail.RULES["refuse"]
    for size in (9, 19):
        assert not rollout_tail_for(size) & bit
        assert rollout_tail_for(size, EngineConfig(rollout_light_after=0)) & bit
        assert tail_word(size, 0) & bit and not tail_word(size, 5) & bit
        assert tail_word(size) == rollout_tail_for(size)
    for args, on in ((["--rollout-light-after", "0"], True), ([], False)):
        e = Engine(engine_config(args + ["--playouts", "64", "--mode", "rollouts"]))
        e.new_game(9, 7.0)
        assert ("refuse" in e.search.tail_rules) is on
        assert e.genmove("b") not in ("pass", "resign")


def test_rollout_accuracy_tool(capsys):
    from gammago.engine.settings import ROLLOUT_LIGHT_AFTER, ROLLOUT_SCALE
    tool = load_tool("rollout_accuracy")
    data = os.path.join(ROOT, "tests", "data")
    sgfs = sorted(os.path.join(data, f) for f in os.listdir(data) if f.endswith(".sgf"))
    rc = tool.main(sgfs + [os.path.join(data, "bad"), "--playouts", "4", "--step", "60",
                           "--start", "20", "--late", "150", "--variant", "", "--variant",
                           "light=0", "--variant", "shapes=0", "--variant",
                           "lone=0,seki=0", "--variant", "mercy=3", "--worst", "2",
                           "--bootstrap", "200", "--json"])
    assert rc == 0
    cap = capsys.readouterr()
    out = json.loads(cap.out)
    assert "truncated.sgf" in cap.err and "garbage.sgf" in cap.err   # named, the batch goes on
    assert out["games"] == len(sgfs) and out["positions"] > 10 and out["late_positions"] > 0
    base, plain, gamma_only, no_shapes, rules, mercy = out["rows"]
    assert base["variant"] == ROLLOUT_SCALE and plain["variant"] == ""
    assert base["light_after"] == ROLLOUT_LIGHT_AFTER == plain["light_after"]
    assert gamma_only["light_after"] == 0
    # the gamma moves refuse bad self-ataris where they play to the end, as in the engine
    assert "refuse" in gamma_only["tail"] and "refuse" not in base["tail"]
    assert "shapes" in base["tail"] and "shapes" not in no_shapes["tail"]
    assert {"lone", "seki"} <= set(base["tail"]) and not {"lone", "seki"} & set(rules["tail"])
    # the mercy rule ends playouts early: the same positions and draws, shorter playouts
    assert base["mercy"] == 0 and mercy["mercy"] == 3
    assert 0 < mercy["moves_per_playout"] < plain["moves_per_playout"]
    assert 0 <= base["mse"] <= 1 and 0 <= plain["accuracy"] <= 1
    lo, hi = plain["d_mse_ci"]
    assert lo <= plain["d_mse"] <= hi
    assert plain["d_mse"] == pytest.approx(plain["mse"] - base["mse"])
    assert len(out["worst"]) == 2 and out["worst"][0]["move"] >= 150
    assert tool.main(sgfs[:1] + ["--variant", "nope=2"]) == 2
    assert "nope" in capsys.readouterr().err
    assert tool.main(sgfs[:1] + ["--variant", "light=x"]) == 2
    assert "light must be" in capsys.readouterr().err
    assert tool.main(sgfs[:1] + ["--variant", "shapes=2"]) == 2
    assert "shapes must be" in capsys.readouterr().err
    assert tool.main(sgfs[:1] + ["--variant", "mercy=-2"]) == 2
    assert "mercy must be" in capsys.readouterr().err


def test_rollout_accuracy_tool_judges_against_a_label_cache(tmp_path, capsys):
    """--labels: the positions are the cache's, each judged against its label, whatever path
    names the games (and a cache of version 1, keyed by game name and move number, by the
    names it holds); --holdout keeps the games train-balance holds out; table= and a scale set
    the variant's gammas."""
    import shutil
    from gammago.go import sgf
    from gammago.engine.position_labels import LABELS_VERSION, held_out_names, position_key
    tool = load_tool("rollout_accuracy")
    data = os.path.join(ROOT, "tests", "data")
    sgfs = sorted(os.path.join(data, f) for f in os.listdir(data) if f.endswith(".sgf"))
    games = list(sgf.iter_games(sgfs))
    keys = [position_key(g, i) for g in games for i in (30, 61)]
    assert len(set(keys)) == len(keys)

    def run(label, *extra, paths=sgfs, version=LABELS_VERSION, positions=keys):
        cache = tmp_path / f"labels{label}.json"
        cache.write_text(json.dumps({"version": version, "playouts": 100,
                                     "mode": "net-root", "positions": positions,
                                     "labels": [label] * len(positions)}))
        assert tool.main(paths + ["--labels", str(cache), "--playouts", "8", "--bootstrap",
                                  "50", "--json", *extra]) == 0
        return json.loads(capsys.readouterr().out)

    zero, one = run(0.0), run(1.0)
    assert zero["positions"] == one["positions"] == len(keys)
    assert zero["labels"]["mode"] == "net-root" and zero["labels"]["playouts"] == 100
    for z, o in zip(zero["rows"], one["rows"]):
        # the same playouts against labels 0 and 1: mean(p^2) - mean((1-p)^2) = 2 mean(p) - 1
        assert z["mse"] - o["mse"] == pytest.approx(2 * z["mean_black"] - 1)
        assert z["mean_black"] == o["mean_black"]
    # the same records under another path: the same positions, the same judgement
    copies = tmp_path / "copies"
    copies.mkdir()
    moved = [shutil.copy(f, copies / f"x{k}.sgf") for k, f in enumerate(sgfs)]
    assert run(0.0, paths=[str(p) for p in moved])["rows"] == zero["rows"]
    # version 1: keyed by the names the games had
    v1 = run(0.0, version=1, positions=[[g.name, i] for g in games for i in (30, 61)])
    assert v1["rows"] == zero["rows"]
    # a position is judged once however many games reach it, and not at all in a held-out
    # judgement when a training game reaches it
    known = dict.fromkeys(keys, 0.5)
    assert len(tool.labelled_positions(games + games, known)) == len(keys)
    assert tool.labelled_positions(games[:1], known, games[:1]) == []
    held = held_out_names(games, 0.4, 3)
    part = run(1.0, "--holdout", "0.4", "--split-seed", "3")
    assert part["games"] == len(held) and part["positions"] == 2 * len(held) < len(keys)
    shipped = os.path.join(ROOT, "patterns", "rollout19.gamma")
    out = run(1.0, "--base", "", "--variant", f"table={shipped}", "--variant", "selfatari=4")
    base, same, soft = out["rows"]
    assert same["table"] == shipped and base["table"] is None
    assert same["mse"] == base["mse"]          # the shipped table, unscaled, is the raw base
    assert soft["mse"] != base["mse"]
    # a table's settings line sets what the variant leaves unset, as the engine plays it
    g = G.load(shipped)
    named = tmp_path / "named.gamma"
    G.save(named, g.table, g.listed, comments=[G.settings_comment({"rollout_light_after": 0})])
    _, by_file, overridden = run(1.0, "--variant", f"table={named}",
                                 "--variant", f"table={named},light=7")["rows"]
    assert (by_file["light_after"], "refuse" in by_file["tail"]) == (0, True)
    assert (overridden["light_after"], "refuse" in overridden["tail"]) == (7, False)
    # bad input: named, refused
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"version": LABELS_VERSION, "playouts": 100, "mode": "rollouts",
                                 "positions": ["0123456789abcdef"], "labels": [0.5]}))
    assert tool.main(sgfs + ["--labels", str(other)]) == 2
    assert "holds no position of these games" in capsys.readouterr().err
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"version": 0, "playouts": 1, "positions": [], "labels": []}))
    assert tool.main(sgfs + ["--labels", str(old)]) == 2
    assert str(old) in capsys.readouterr().err
    assert tool.main(sgfs + ["--holdout", "0.2"]) == 2
    assert "--holdout needs --labels" in capsys.readouterr().err
    missing = tmp_path / "missing.gamma"
    assert tool.main(sgfs + ["--variant", f"table={missing}"]) == 2
    assert "missing.gamma" in capsys.readouterr().err
    assert tool.main(sgfs + ["--variant", "nope=2"]) == 2
    assert "nope" in capsys.readouterr().err


def test_bench_times_the_engine_rollouts_beside_the_gamma_playouts():
    from gammago.engine import bench
    out = bench.gamma_figures(1, True, 1)
    for size in (9, 19):
        # a playout from the empty board plays out the board: between half and three times as
        # many moves as it has points (the moves-per-second figure is of the same runs)
        moves = out[f"gamma_moves_per_s_{size}"] / out[f"gamma_playouts_per_s_{size}"]
        assert 0.5 * size * size < moves < 3 * size * size
        assert out[f"gamma_vs_light_{size}"] > 0
    # the engine's rollouts go light after a few gamma moves on every size (rollout_light_after_for):
    # timed beside them (how much faster is for docs/BENCHMARKS.md, not for a timed test); with
    # one run, the ratio is the ratio of the two rates
    for size in (9, 19):
        assert out[f"rollout_vs_gamma_{size}"] == pytest.approx(
            out[f"rollout_playouts_per_s_{size}"] / out[f"gamma_playouts_per_s_{size}"], rel=1e-3)


def test_relabel_tool_labels_a_caches_positions_by_another_search(tmp_path, capsys):
    """tools/relabel.py: the positions rollout_accuracy would judge against a cache (with
    --holdout, the held-out ones) are labelled by the search --label-engine sets, into a cache
    that names that search and that rollout_accuracy reads; a second run labels nothing; a
    cache that holds none of the games, or a refused engine option, stops it with its name."""
    from gammago.go import sgf
    from gammago.engine.position_labels import held_out_names, position_key, read_label_cache
    tool, accuracy = load_tool("relabel"), load_tool("rollout_accuracy")
    data = os.path.join(ROOT, "tests", "data")
    sgfs = sorted(os.path.join(data, f) for f in os.listdir(data) if f.endswith(".sgf"))
    games = list(sgf.iter_games(sgfs))
    cache = tmp_path / "labels.json"
    keys = [position_key(g, i) for g in games for i in (20, 40)]
    cache.write_text(json.dumps({"version": 2, "playouts": 100, "mode": "net-root",
                                 "positions": keys, "labels": [0.5] * len(keys)}))
    out = tmp_path / "new.json.gz"
    argv = [str(cache), *sgfs, "--out", str(out), "--size", "19", "--holdout", "0.5",
            "--label-playouts", "32", "--label-engine", "--rollout light", "--threads", "1"]
    assert tool.main(argv) == 0
    held = held_out_names(games, 0.5, 1)
    want = {position_key(g, i) for g in games if g.name in held for i in (20, 40)}
    playouts, search, known, _ = read_label_cache(out)
    assert (playouts, search, set(known)) == (32, "rollouts --rollout light", want)
    assert all(0 <= y <= 1 for y in known.values())
    assert f"{len(want)} positions: mean label 0.5000 in" in capsys.readouterr().out
    assert tool.main(argv) == 0
    assert "labels from" in capsys.readouterr().err
    assert accuracy.main([*sgfs, "--labels", str(out), "--playouts", "8", "--bootstrap", "20",
                          "--json"]) == 0
    judged = json.loads(capsys.readouterr().out)
    assert judged["positions"] == len(want)
    assert judged["labels"]["mode"] == "rollouts --rollout light"
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps({"version": 2, "playouts": 100, "mode": "net-root",
                                 "positions": ["0" * 16], "labels": [0.5]}))
    assert tool.main([str(empty), *sgfs, "--out", str(tmp_path / "x.json"), "--size", "19"]) == 2
    assert "holds no position of these games" in capsys.readouterr().err
    assert tool.main(argv[:-4] + ["--label-engine", "--threads 3"]) == 2
    assert "--threads is set by train-balance itself" in capsys.readouterr().err
