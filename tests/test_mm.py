"""MM recovers the gammas of a synthetic generalized Bradley-Terry model."""
import numpy as np
import pytest

from gammago.moves import mm


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
    """Fit on some positions and score others, drawn from the same model, that MM never saw."""
    rng = np.random.default_rng(11)
    true, teams, cand, winners, nfeat, groups = _synthetic(rng, n_pos=2500)
    train, held = slice(0, 1500), slice(1500, 2500)
    gamma, _ = mm.fit(teams, cand[train], winners[train], nfeat, groups)

    def per_position(g):
        return mm.log_likelihood(g, teams, cand[held], winners[held]) / 1000

    assert per_position(gamma) > per_position(np.ones(nfeat)) + 0.1
    # and it generalises: nearly as well as the true gammas on the unseen positions
    assert per_position(gamma) > per_position(true) - 0.05


def test_compact_teams_fit_as_the_id_array_does(monkeypatch):
    rng = np.random.default_rng(5)
    true, teams, cand, winners, nfeat, groups = _synthetic(rng, n_pos=400)
    compact = mm.Teams.from_ids(teams)
    assert compact.nbytes < teams.nbytes / 4
    a, _ = mm.fit(teams, cand, winners, nfeat, groups)
    b, _ = mm.fit(compact, cand, winners, nfeat, groups)
    assert np.allclose(a, b, rtol=1e-6)
    # the threads' row blocks are views of the matrix, never copies
    for b in mm.row_blocks(cand, 3):
        assert np.shares_memory(b.indices, cand.indices) and np.shares_memory(b.data, cand.data)
    # threads share the products and the per-team sums: the very same gammas
    monkeypatch.setattr(mm, "TEAM_SLICE", 7)
    c, _ = mm.fit(compact, cand, winners, nfeat, groups)
    d, _ = mm.fit(compact, cand, winners, nfeat, groups, threads=3)
    assert np.array_equal(c, d)


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


# ---------------------------------------------------------------------------------------------
# End to end: train-mm on the fixture games, predict, and the gamma file checks
# ---------------------------------------------------------------------------------------------
import json
from pathlib import Path

from gammago import cli
from gammago.moves import gammas
from gammago.moves import features as F

DATA = Path(__file__).parent / "data"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    out = tmp_path_factory.mktemp("mm") / "fix.gamma"
    rc = cli.main(["train-mm", str(DATA), "--out", str(out), "--holdout", "0.2", "--workers", "1",
                   "--min-pattern-count", "3", "--seed", "2"])
    assert rc == 0
    return out


def test_train_mm_end_to_end(trained, capsys):
    assert trained.exists() and trained.with_suffix(".png").stat().st_size > 1000
    g = gammas.load(trained)
    text = trained.read_text()
    assert text.splitlines()[0] == gammas.header_line(g.dictionary)
    assert g.dictionary is not None and len(g.dictionary) > 0   # --spatial on: the default
    # captures of a string in atari are strong moves, and the learned table is not flat
    cap = F.GROUP_BASES[F.GROUP_NAMES.index("capture")]
    pat = F.GROUP_BASES[-1]
    assert g.table[cap + 1:cap + 13].max() > 2.0
    assert g.table[pat + 1:].std() > 0.1
    # the rare patterns take the default gamma
    unlisted = np.flatnonzero(~g.listed[pat + 1:pat + 1 + F.N_PAT3]) + pat + 1
    assert len(unlisted) and np.all(g.table[unlisted] == g.table[pat + F.PAT3_DEFAULT])


def test_train_mm_holds_the_groups_the_rollouts_do_not_weigh(trained, tmp_path, monkeypatch):
    """--hold-groups rollout: the read groups and the diamond stay at 1, the others are
    trained; the engine's rollouts start from that file when it is shipped."""
    out = tmp_path / "rollout19.gamma"
    rc = cli.main(["train-mm", str(DATA), "--out", str(out), "--holdout", "0", "--workers", "1",
                   "--min-pattern-count", "3", "--seed", "2", "--hold-groups", "rollout"])
    assert rc == 0
    held, full = gammas.load(out), gammas.load(trained)
    for g, name in enumerate(F.GROUP_NAMES):
        lo, hi = F.GROUP_BASES[g], F.GROUP_BASES[g] + F.GROUP_SIZES[g]
        if name in F.ROLLOUT_GROUPS:
            continue
        assert np.all(held.table[lo:hi] == 1.0), name
    pat12 = F.GROUP_BASES[F.GROUP_NAMES.index("pat12")]
    assert full.table[pat12 + 1:pat12 + F.GROUP_SIZES[F.GROUP_NAMES.index("pat12")]].std() > 0.01
    cap = F.GROUP_BASES[F.GROUP_NAMES.index("capture")]
    assert held.table[cap + 1:cap + 13].max() > 2.0
    assert "held at 1 (not trained): ladder, race, nakade, pat12" in out.read_text()
    # the shipped-file lookup: the rollouts use it when it is there, the default table if not
    monkeypatch.setattr(gammas, "PATTERNS_DIR", tmp_path)
    monkeypatch.setattr(gammas, "DEFAULT_FILE", trained.name)
    gammas._cache.clear()
    assert np.array_equal(gammas.rollout_base(9), held.table)
    out.unlink()
    gammas._cache.clear()
    monkeypatch.setattr(gammas, "PATTERNS_DIR", trained.parent)
    assert np.array_equal(gammas.rollout_base(9), full.table)
    gammas._cache.clear()
    assert cli.main(["train-mm", str(DATA), "--out", str(tmp_path / "x.gamma"),
                     "--hold-groups", "nosuch"]) == 2


def test_train_mm_reports_bad_records(trained, capsys, tmp_path):
    rc = cli.main(["train-mm", str(DATA / "bad"), str(DATA / "2001-02-16-7.sgf"),
                   "--out", str(tmp_path / "x.gamma"), "--holdout", "0", "--workers", "1"])
    assert rc == 0
    cap = capsys.readouterr()
    assert "truncated.sgf" in cap.err and "occupied.sgf" in cap.err
    assert "1 training games" in cap.out and "4 skipped" in cap.out


def test_predict_json_and_beats_uniform(trained, capsys, tmp_path):
    rc = cli.main(["predict", "--gammas", str(trained), "--json", "--workers", "1", str(DATA)])
    assert rc == 0
    res = json.loads(capsys.readouterr().out)
    assert res["games"] == 7 and res["skipped"] == 4     # tests/data: 7 games (regress/capture.sgf too), 4 bad
    assert res["positions"] == sum(len(g.moves) for g in __import__("gammago.go.sgf").go.sgf.iter_games([DATA], errors="yield") if hasattr(g, "moves"))
    # a uniform model over ~300 legal moves would score about 0.3% top-1 and log-evidence -5.7
    assert res["top1"] > 0.15 and res["top5"] > 0.35 and res["mean_log_evidence"] > -4.0
    # the same figures from a flat gamma file are far worse
    flat = tmp_path / "flat.gamma"
    listed = np.ones(F.N_FEATURES, dtype=bool)
    gammas.save(flat, np.ones(F.N_FEATURES), listed)
    assert cli.main(["predict", "--gammas", str(flat), "--json", "--workers", "1", str(DATA)]) == 0
    res_flat = json.loads(capsys.readouterr().out)
    assert res_flat["top1"] < 0.05 and res_flat["mean_log_evidence"] < res["mean_log_evidence"] - 1


def test_gamma_files_refused_with_path_and_reason(trained, tmp_path, capsys):
    text = trained.read_text().splitlines()
    cases = {
        "missing.gamma": None,
        "garbage.gamma": "hello\n",
        "version.gamma": "\n".join([text[0].replace("features=", "features=9")] + text[1:]),
        "badnum.gamma": "\n".join(text[:-1] + [text[-1].split()[0] + " abc"]),
        "negative.gamma": "\n".join(text[:-1] + [text[-1].split()[0] + " -1"]),
        "unknown.gamma": "\n".join(text + ["nosuch:feature 1.0"]),
        "short.gamma": "\n".join(l for l in text if not l.startswith("capture:last/1 ")),
    }
    for name, body in cases.items():
        p = tmp_path / name
        if body is not None:
            p.write_text(body)
        with pytest.raises(gammas.GammaFileError) as e:
            gammas.load(p)
        assert str(p) in str(e.value), name
    assert "another feature set" in str(pytest.raises(gammas.GammaFileError, gammas.load,
                                                      tmp_path / "version.gamma").value)
    # the command refuses it too, naming the file, before reading any game
    assert cli.main(["predict", "--gammas", str(tmp_path / "garbage.gamma"), str(DATA)]) == 2
    assert "garbage.gamma" in capsys.readouterr().err


def test_default_gamma_path_serves_every_size():
    assert gammas.default_path(19) == gammas.default_path(9) == gammas.PATTERNS_DIR / "gammas19.gamma"


# ---------------------------------------------------------------------------------------------
# The budget of positions: bounded whatever the corpus, the same sample whatever the order
# ---------------------------------------------------------------------------------------------
from gammago.moves import train_mm  # noqa: E402


def _games(rng, n):
    """Synthetic extracted games: (keys, counts, offsets, winner, priorities, sampled)."""
    out = []
    for _ in range(n):
        sizes = rng.integers(1, 9, rng.integers(1, 12))
        keys = np.concatenate([np.sort(rng.choice(60, k, replace=False)) for k in sizes])
        out.append((keys.astype(np.int64), rng.integers(1, 4, len(keys)).astype(np.uint16),
                    np.concatenate([[0], np.cumsum(sizes)]).astype(np.int32),
                    rng.integers(0, sizes).astype(np.int16), rng.random(len(sizes)), len(sizes)))
    return out


def _positions(keys, index, counts, offsets, winner_entry):
    """The sample as a sorted list of positions, each (its (team key, count)s, key played)."""
    return sorted((tuple((int(keys[index[e]]), float(counts[e])) for e in range(a, b)),
                   int(keys[index[w]])) for a, b, w in zip(offsets[:-1], offsets[1:], winner_entry))


def test_sample_keeps_the_lowest_priorities_whatever_the_order(monkeypatch):
    monkeypatch.setattr(train_mm, "BLOCK_ENTRIES", 64)        # many blocks, cut and merged
    games = _games(np.random.default_rng(5), 80)
    budget = 100
    want = []                     # the positions of the `budget` lowest priorities, by hand
    for keys, counts, offs, win, prio, _ in games:
        for j in range(len(prio)):
            want.append((prio[j], (tuple((int(k), float(c)) for k, c in
                                         zip(keys[offs[j]:offs[j + 1]], counts[offs[j]:offs[j + 1]])),
                                   int(keys[offs[j] + win[j]]))))
    want = sorted(p for _, p in sorted(want)[:budget])
    for order in (range(len(games)), reversed(range(len(games))),
                  np.random.default_rng(1).permutation(len(games))):
        s = train_mm.Sample(budget)
        peak = 0
        for i in order:
            s.add(*games[i])
            peak = max(peak, s.positions)
        assert peak <= budget * (1 + train_mm.SLACK)
        assert s.sampled == sum(g[-1] for g in games)
        assert _positions(*s.finish()) == want
    # no budget: every position, in the order they came
    s = train_mm.Sample(0)
    for g in games:
        s.add(*g)
    assert len(_positions(*s.finish())) == sum(len(g[4]) for g in games)


def test_train_mm_budget_the_same_gammas_from_one_or_two_workers(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(train_mm, "BLOCK_ENTRIES", 4096)
    common = [str(DATA), "--holdout", "0.2", "--min-pattern-count", "3", "--seed", "2",
              "--max-positions", "60"]
    for w in ("1", "2"):
        assert cli.main(["train-mm", *common, "--workers", w, "--out", str(tmp_path / f"{w}.gamma")]) == 0
    out = capsys.readouterr().out
    assert "60 positions kept of " in out and "--max-positions 60 of lowest priority" in out
    a, b = gammas.load(tmp_path / "1.gamma"), gammas.load(tmp_path / "2.gamma")
    assert np.array_equal(a.table, b.table) and np.array_equal(a.listed, b.listed)
    assert cli.main(["train-mm", str(DATA), "--out", str(tmp_path / "x.gamma"),
                     "--max-positions", "-1"]) == 2


def test_train_mm_budget_on_the_cluster_learns_the_local_gammas(tmp_path, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(train_mm, "BLOCK_ENTRIES", 4096)
    common = [str(DATA), "--holdout", "0.2", "--min-pattern-count", "3", "--seed", "2",
              "--max-positions", "60", "--workers", "1"]
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  host="127.0.0.1", dashboard_address="127.0.0.1:0") as c:
        assert cli.main(["train-mm", *common, "--out", str(tmp_path / "dask.gamma"),
                         "--scheduler", c.scheduler_address]) == 0
    assert cli.main(["train-mm", *common, "--out", str(tmp_path / "local.gamma")]) == 0
    a, b = gammas.load(tmp_path / "local.gamma"), gammas.load(tmp_path / "dask.gamma")
    assert np.array_equal(a.table, b.table) and np.array_equal(a.listed, b.listed)


def test_train_mm_held_out_by_input_path(tmp_path, capsys):
    rc = cli.main(["train-mm", str(DATA / "2001-02-16-7.sgf"), str(DATA), "--out",
                   str(tmp_path / "x.gamma"), "--holdout", "0.5", "--workers", "1", "--seed", "3"])
    assert rc == 0
    out = capsys.readouterr().out
    assert f"held out, {DATA}: " in out


def test_train_mm_leaves_out_held_out_repeats_of_other_games(tmp_path, capsys):
    """One game filed under many names: the copies the split holds out repeat a training
    copy's moves (or each other's) and are named and counted, not evaluated; a game that
    differs only in its header is the same game."""
    src = (DATA / "2001-02-16-7.sgf").read_bytes()
    games = tmp_path / "games"
    games.mkdir()
    is_held = lambda name: train_mm.held_out(str(games / name), 5, 0.5)   # noqa: E731
    # names the split sends to both sides (they hang on tmp_path): 12 held, 3 trained copies
    names = [f"copy{i}.sgf" for i in range(200)]
    held = [n for n in names if is_held(n)][:12]
    trained = [n for n in names if not is_held(n)][:3]
    for i, name in enumerate(held + trained):
        data = src.replace(b"(;", f"(;GN[copy {i}]C[filed again]".encode(), 1) if i % 2 else src
        (games / name).write_bytes(data)
    other = next(n for n in (f"other{i}.sgf" for i in range(200)) if not is_held(n))
    (games / other).write_bytes((DATA / "2003-10-23-9.sgf").read_bytes())
    rc = cli.main(["train-mm", str(games), "--out", str(tmp_path / "x.gamma"),
                   "--holdout", "0.5", "--workers", "1", "--seed", "5",
                   "--min-pattern-count", "1"])
    assert rc == 0
    cap = capsys.readouterr()
    shown = train_mm.REPEATS_SHOWN
    assert cap.err.count("not evaluated: held-out ") == min(len(held), shown)
    assert (f"not evaluated: {len(held) - shown} more" in cap.err) == (len(held) > shown)
    assert (f"0 held out (and {len(held)} left out of the evaluation: their moves repeat "
            f"another game's), 0 skipped") in cap.out
    assert "held out: none" in cap.out
