"""Rollout quality tools: softened gamma tables (gammas.soften) and the flat Monte-Carlo match
(tools/flat_mc_match.py), see docs/BENCHMARKS.md "Rollouts", Quality."""
import importlib.util
import json
import os

import numpy as np
import pytest

from gammago import features as F
from gammago import gammas as G
from gammago import rollout
from gammago.board import Board

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _tool():
    spec = importlib.util.spec_from_file_location(
        "flat_mc_match", os.path.join(ROOT, "tools", "flat_mc_match.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _group(name):
    g = list(F.GROUP_NAMES).index(name)
    return slice(F.GROUP_BASES[g], F.GROUP_BASES[g] + F.GROUP_SIZES[g])


def test_soften_powers_and_groups():
    raw = G.load_default().table
    assert np.array_equal(G.soften(raw, 1.0), raw)
    assert np.all(G.soften(raw, 0.0) == 1.0)
    half = G.soften(raw, 0.5)
    assert np.allclose(half, np.sqrt(raw))
    assert raw is not half and np.array_equal(raw, G.load_default().table)  # no aliasing
    only = G.soften(raw, 0.5, ["pat3", "dist1"])
    for name in F.GROUP_NAMES:
        want = np.sqrt(raw[_group(name)]) if name in ("pat3", "dist1") else raw[_group(name)]
        assert np.allclose(only[_group(name)], want), name


@pytest.mark.parametrize("power", [-0.5, float("nan"), float("inf")])
def test_soften_refuses_bad_power(power):
    with pytest.raises(ValueError, match="power"):
        G.soften(G.load_default().table, power)


def test_soften_refuses_unknown_group():
    with pytest.raises(ValueError, match="unknown feature group 'pat4'"):
        G.soften(G.load_default().table, 0.5, ["pat4"])


def test_softened_policy_is_the_raw_policy_to_the_power():
    """A move's weight is a product of gammas, so raising every gamma to p raises the weight to
    p: the softened rollout distribution is the raw one to the power p, renormalised."""
    b = Board(9)
    for v in ("E5", "C3", "D4", "F6", "G3", "E3", "D3"):
        b.play(v)
    raw = rollout.GammaPolicy().probabilities(b)
    for p in (0.3, 0.7):
        soft = rollout.GammaPolicy(G.soften(G.load_default(), p)).probabilities(b)
        want = raw ** p
        want /= want.sum()
        assert np.allclose(soft, want, rtol=1e-9, atol=1e-15)
        # flatter: the favourite loses probability, the least likely legal move gains
        legal = raw > 0
        assert soft[legal].max() < raw[legal].max()
        assert soft[legal].min() > raw[legal].min()


def test_pass_candidate_ends_a_won_game():
    """After the opponent's pass, a player who wins the board as it stands passes (its pass
    playouts score the board exactly); without the pass candidate it plays on."""
    tool = _tool()
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


def test_flat_mc_match_runs_and_refuses_bad_power(capsys):
    tool = _tool()
    assert tool.main(["--games", "2", "--playouts", "8", "--size", "5", "--rollout-power",
                      "0.7", "--pass-candidate", "--json"]) == 0
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert out["games"] == 2 and out["rollout_power"] == 0.7 and out["pass_candidate"]
    assert len(out["gamma_margins"]) == 2 and out["gamma_black_games"] == 1
    assert tool.main(["--games", "1", "--rollout-power", "-1"]) == 2
    assert "power" in capsys.readouterr().err


def test_engine_rollout_power_option():
    from gammago.engine import EngineConfig
    with pytest.raises(ValueError, match="--rollout-power"):
        EngineConfig(rollout_power=-0.5).validate()
    EngineConfig(rollout_power=0.7).validate()
