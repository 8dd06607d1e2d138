"""MM recovers the gammas of a synthetic generalized Bradley-Terry model."""
import numpy as np
import pytest

from gammago import mm


def _synthetic(rng, n_pos=3000, n_cand=25, sizes=(6, 4, 3)):
    """Teams of one feature per group; each position draws candidate teams at random and the
    winner in proportion to the product of the true gammas."""
    bases = np.cumsum((0,) + sizes[:-1])
    nfeat = int(sum(sizes))
    true = np.exp(rng.normal(0, 1.0, nfeat))
    # every team: one feature per group
    all_teams = np.array(np.meshgrid(*[np.arange(n) + b for n, b in zip(sizes, bases)],
                                     indexing="ij")).reshape(len(sizes), -1).T
    strength = np.prod(true[all_teams], axis=1)
    offsets, idx, winners = [0], [], []
    for j in range(n_pos):
        c = rng.choice(len(all_teams), n_cand, replace=False)
        p = strength[c] / strength[c].sum()
        winners.append(c[rng.choice(n_cand, p=p)])
        idx.extend(c)
        offsets.append(len(idx))
    cand = mm.candidates_matrix(offsets, np.array(idx), nteams=len(all_teams))
    groups = [np.arange(n) + b for n, b in zip(sizes, bases)]
    return true, all_teams, cand, np.array(winners), nfeat, groups


def _centred(logg, groups):
    out = logg.copy()
    for ids in groups:
        out[ids] -= out[ids].mean()
    return out


def test_mm_recovers_synthetic_gammas():
    rng = np.random.default_rng(7)
    true, teams, cand, winners, nfeat, groups = _synthetic(rng)
    gamma, hist = mm.fit(teams, cand, winners, nfeat, groups, tol=1e-7, max_iter=300)
    # the model fixes each group's gammas up to a common factor: compare within groups
    err = _centred(np.log(gamma), groups) - _centred(np.log(true), groups)
    assert np.max(np.abs(err)) < 0.25, err
    assert np.sqrt(np.mean(err ** 2)) < 0.1
    # and the fit explains the data better than the truth does only by a small margin
    ll_fit = mm.log_likelihood(gamma, teams, cand, winners)
    ll_true = mm.log_likelihood(true, teams, cand, winners)
    assert ll_fit >= ll_true - 1.0
    # MM never lowers the posterior
    lp = [h["log_posterior"] for h in hist]
    assert all(b >= a - 1e-9 for a, b in zip(lp, lp[1:]))


def test_mm_beats_uniform_on_held_out_choices():
    rng = np.random.default_rng(11)
    true, teams, cand, winners, nfeat, groups = _synthetic(rng, n_pos=1500)
    gamma, _ = mm.fit(teams, cand, winners, nfeat, groups)
    uniform = mm.log_likelihood(np.ones(nfeat), teams, cand, winners)
    assert mm.log_likelihood(gamma, teams, cand, winners) > uniform + 0.1 * cand.shape[0]


def test_fixed_features_stay_at_one():
    rng = np.random.default_rng(3)
    true, teams, cand, winners, nfeat, groups = _synthetic(rng, n_pos=500)
    fixed = np.zeros(nfeat, dtype=bool)
    fixed[[0, 6]] = True
    gamma, _ = mm.fit(teams, cand, winners, nfeat, groups, fixed=fixed)
    assert gamma[0] == 1.0 and gamma[6] == 1.0
    assert not np.allclose(gamma[~fixed], 1.0)


def test_mm_rejects_empty_data():
    with pytest.raises(ValueError):
        mm.fit(np.zeros((0, 2), dtype=np.int64), mm.candidates_matrix([0], np.zeros(0, np.int64), nteams=0),
               np.zeros(0, np.int64), 4, [np.arange(2), np.arange(2, 4)])
