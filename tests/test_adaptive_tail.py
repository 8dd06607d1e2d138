"""The adaptive gamma tail (--rollout-adapt): factors on the gamma tail's near candidates, learnt
during a search by policy gradient from the playouts' results (gamma_policy_adapt)."""
import numpy as np
import pytest
from gammago import rollout
from gammago.board import Board
from test_rollout import _tail_word, random_position, shipped_or_random

RATE = 0.3
BLACK = 1                  # the colour codes of gammago/board.pxd, as adapt_trace gives them


def _policy(rate=RATE):
    return rollout.GammaPolicy(shipped_or_random(), light_after=1,
                               tail=_tail_word(tail_gammas=True), adapt=rate)


def test_a_playout_learns_along_the_policy_gradient():
    """Each near draw of a playout moves the log-factor of every candidate by
    rate * (z - baseline, for the side that drew) * ([drawn] - its probability); the trace is
    then empty."""
    gp = _policy()
    b = random_position(9, 12, seed=5)
    gp.playout(b, seed=3)
    trace = gp.adapt_trace()
    assert len(trace) > 10
    z, base = 1.0, 0.25
    want = {}
    for colour, drawn, keys, probs in trace:
        assert -1 <= drawn < len(keys) <= 8
        assert all(0 < p <= 1 for p in probs) and sum(probs) <= 1 + 1e-5
        adv = (z - base) if colour == BLACK else -(z - base)
        for j, (key, p) in enumerate(zip(keys, probs)):
            step = RATE * adv * ((1.0 if j == drawn else 0.0) - p)
            want[key] = float(np.clip(want.get(key, 0.0) + step, -4, 4))
    assert gp.adapt(z, base) == len(trace)
    assert gp.adapt_trace() == []
    for key, theta in want.items():
        assert gp.adapt_theta(key) == pytest.approx(theta, abs=1e-4)
    assert any(abs(t) > 0.01 for t in want.values())


def test_a_result_at_the_baseline_teaches_nothing():
    gp = _policy()
    b = random_position(9, 12, seed=6)
    gp.playout(b, seed=4)
    keys = {k for _, _, ks, _ in gp.adapt_trace() for k in ks}
    gp.adapt(0.5, 0.5)
    assert keys and all(gp.adapt_theta(k) == 0.0 for k in keys)


def test_off_keeps_no_trace():
    gp = _policy(rate=0.0)
    gp.playout(random_position(9, 12, seed=7), seed=5)
    assert gp.adapt_rate == 0 and gp.adapt_trace() == [] and gp.adapt(1.0, 0.0) == 0
    with pytest.raises(ValueError, match="adapt"):
        rollout.GammaPolicy(shipped_or_random(), adapt=-0.1)


def test_rewarding_one_answer_makes_the_tail_draw_it_more():
    """A bandit: after Black's E5, White's tail draws among E5's neighbours; a playout is won by
    White exactly when the tail drew D5. Learning from those results raises D5's share."""
    gp = _policy(rate=0.5)
    start = Board(9)
    start.setup(black=["C3", "G7"], white=["G3", "C7"])
    target = start.point("D5")

    def draw(seed):
        b = start.copy()
        gp.reset(b)
        gp.step(b, "E5")
        assert b.to_move == "w"
        return gp.choose(b, seed=seed)

    before = np.mean([draw(s) == target for s in range(1, 2001)])
    gp.adapt(0.5, 0.5)                     # forget the draws above without learning
    for s in range(3001, 4001):
        m = draw(s)
        gp.adapt(0.0 if m == target else 1.0, 0.5)    # Black's result
    after = np.mean([draw(s) == target for s in range(5001, 7001)])
    assert 0.01 < before < 0.3
    assert after > 2 * before


def test_the_engine_option_reaches_the_search():
    """--rollout-adapt sets the search's rate and the engine plays with it; a rate below 0, or
    one without the gamma tail, is refused with the option's name."""
    from gammago.config import EngineConfig
    from gammago.engine import Engine
    for bad in (-0.1, float("inf")):
        with pytest.raises(ValueError, match="--rollout-adapt"):
            EngineConfig(rollout_adapt=bad, rollout_tail_gammas=True).validate()
    with pytest.raises(ValueError, match="--rollout-tail-gammas"):
        EngineConfig(rollout_adapt=0.1, rollout_tail_gammas=False).validate()
    e = Engine(EngineConfig(mode="rollouts", playouts=400, rollout_tail_gammas=True,
                            rollout_adapt=0.2))
    e.new_game(9, 7.0)
    assert e.search.adapt == 0.2
    assert e.genmove("b") not in ("resign", "pass")
    assert e.search.adapt_table.learnt() > 100     # the tree's own table, reset by prepare
    e.search.prepare(1, 10)
    assert e.search.adapt_table.learnt() == 0
    assert Engine(EngineConfig(mode="rollouts", playouts=10)).search.adapt == 0.0


def test_a_search_learns_into_one_table_that_its_trees_share():
    """Under net-root every child tree's rollouts learn into one AdaptTable; a search leaves
    factors in it, and the next search starts from none."""
    from gammago.config import EngineConfig
    from gammago.engine import Engine
    e = Engine(EngineConfig(mode="net-root", playouts=600, rollout_tail_gammas=True,
                            rollout_adapt=0.2))
    e.new_game(9, 7.0)
    assert e.genmove("b") not in ("resign", "pass")
    tables = {id(k["search"].adapt_table) for k in e.search.kids}
    assert len(tables) == 1
    table = e.search.kids[0]["search"].adapt_table
    assert table.learnt() > 100
    e.search.prepare(1, 10)
    assert table.learnt() == 0
