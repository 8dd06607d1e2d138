"""Simulation balancing: the gradient playouts of pyx/rollout/balance.pyx, the parameter map and the
`gammago train-balance` command, and `--rollout-gammas` in the engine."""
import gzip
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from gammago.rollout import balance
from gammago.rollout import tail
from gammago.moves import features as F
from gammago.moves import gammas as G
from gammago.go.board import Board
from gammago.engine.settings import EngineConfig, rollout_gammas
from gammago.engine.engine import Engine
from gammago.rollout.gamma_policy import GammaPolicy
from gammago.engine.train_balance import param_map, table_from

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GAMES = os.path.join(ROOT, "tests", "games9")


def _table(size=9):
    return np.ascontiguousarray(rollout_gammas(G.rollout_base(size), size), dtype=np.float64)


def _position(size, moves):
    b = Board(size, 0.5 if size < 9 else 7.0)
    for v in moves:
        b.play(v, b.to_move)
    return b


@pytest.mark.parametrize("light_after, rules", [(0, ("shapes", "lone")), (5, ("shapes", "lone")),
                                                (3, ("lone", "seki"))])
def test_value_is_the_rollouts_policy(light_after, rules):
    """balance.value samples as the gamma rollouts do (the gammas to the end, or light_after
    moves and then the light tail, with its shapes and the lone-stone rule, or without the
    shapes and with the seki rule):
    Black's win rate agrees with GammaPolicy.evaluate within the noise of 20,000 playouts each,
    and not with a table that prefers other moves."""
    t = _table(7)
    b = _position(7, ["D4", "C3", "E3", "C5"])
    n = 20000
    word = tail.rules(*rules)
    ours = balance.value(b, t, n, 1, light_after, tail=word)
    theirs = GammaPolicy(t, light_after=light_after, tail=word).evaluate(
        b, n, 2)["black_winrate"]
    se = np.sqrt(0.25 / n) * np.sqrt(2)
    assert abs(ours - theirs) < 4 * se
    flat = np.ones_like(t)      # uniform playouts judge the position differently
    assert abs(balance.value(b, flat, n, 3) - theirs) > 4 * se


def test_the_tails_lone_stone_and_seki_rules_follow_the_board_size():
    """Unset, the light tail's rules are the engine's for the board's size (the lone-stone and
    seki rules on below 13x13, off from 13x13 up: gammago.engine.settings.rollout_tail_lone_for,
    rollout_tail_seki_for); set, they are as given."""
    from gammago.engine.settings import rollout_tail_for, rollout_tail_lone_for, rollout_tail_seki_for
    for size, moves in ((7, ["D4", "C3", "E3", "C5"]), (13, ["D4", "K10", "K4", "D10"])):
        t = _table(size)
        b = _position(size, moves)
        lone = rollout_tail_lone_for(size)
        assert lone == (size < 13) == rollout_tail_seki_for(size)
        word = rollout_tail_for(size)
        assert word == tail.rules("shapes", *(["lone", "seki"] if lone else []))
        default = balance.value(b, t, 300, 5, 5)
        assert default == balance.value(b, t, 300, 5, 5, tail=word)
        for rule in ("lone", "seki"):      # each rule changes some playouts' course
            assert any(balance.value(b, t, 300, seed, 5, tail=word) !=
                       balance.value(b, t, 300, seed, 5, tail=word ^ tail.RULES[rule])
                       for seed in (5, 6, 7)), rule
        with pytest.raises(ValueError, match="rules word"):
            balance.value(b, t, 300, 5, 5, tail=2 * max(tail.RULES.values()))


def _check_gradient_by_finite_differences(light_after=0, word=None):
    """The likelihood-ratio gradient of P(Black wins) on a 5x5 position (where playouts are
    cheap) agrees with a central finite difference on the steepest parameter."""
    base = _table(5)
    listed = G.load_rollout_default(5).listed
    param, nparams = param_map(listed)
    theta = np.zeros(nparams)
    for i in np.nonzero(param >= 0)[0]:
        theta[param[i]] = np.log(base[i])
    b = _position(5, ["C3", "B2", "D2", "C2"])
    t = table_from(theta, param, base)
    v = balance.value(b, t, 20000, 7, light_after, tail=word)
    g, z = balance.gradient(b, t, param, nparams, 20000, v, 11, light_after, tail=word)
    assert abs(z - v) < 0.02
    k = int(np.argmax(np.abs(g)))
    assert abs(g[k]) > 0.02
    eps = 0.3
    vals = []
    for sgn in (1, -1):
        th = theta.copy()
        th[k] += sgn * eps
        vals.append(balance.value(b, table_from(th, param, base), 100000, 13 + sgn, light_after,
                                  tail=word))
    fd = (vals[0] - vals[1]) / (2 * eps)
    # SE of fd: sqrt(2 * 0.25 / 100000) / 0.6 ~ 0.0037; of g (20,000 playouts) ~ 0.007
    assert abs(fd - g[k]) < 0.025, (F.level_name(int(np.nonzero(param == k)[0][0])), g[k], fd)
    assert np.sign(fd) == np.sign(g[k])


def test_gradient_matches_finite_differences():
    """The gammas to the end: every parameter may be the steepest."""
    _check_gradient_by_finite_differences()


def test_gradient_with_the_refusal_matches_finite_differences():
    """The gammas to the end refusing bad self-ataris (TAIL_REFUSE, as the engine's rollouts
    with --rollout-light-after 0): the refusal changes playouts, and the gradient is that of
    the distribution they are drawn from."""
    word = tail.rules("lone", "seki", "refuse")
    t = _table(5)
    b = _position(5, ["C3", "B2", "D2", "C2"])
    assert balance.value(b, t, 3000, 5, 0, tail=word) != balance.value(
        b, t, 3000, 5, 0, tail=word & ~tail.RULES["refuse"])
    _check_gradient_by_finite_differences(0, word)


def test_gradient_rejects_bad_arguments():
    t = _table(9)
    param, nparams = param_map(G.load_rollout_default(9).listed)
    b = Board(9)
    with pytest.raises(ValueError):
        balance.gradient(b, t[:-1].copy(), param, nparams, 4, 0.5)
    with pytest.raises(ValueError):
        balance.gradient(b, t, param, nparams - 1, 4, 0.5)     # param holds nparams - 1
    with pytest.raises(ValueError):
        balance.value(b, t, 0)


def test_param_map():
    g = G.load_rollout_default(9)
    param, nparams = param_map(g.listed)
    names = list(F.GROUP_NAMES)
    for name in ("pass", "ladder", "race", "nakade", "pat12"):
        gi = names.index(name)
        assert np.all(param[F.GROUP_BASES[gi]:F.GROUP_BASES[gi] + F.GROUP_SIZES[gi]] == -1), name
    for gi in range(F.N_GROUPS):
        assert param[F.GROUP_BASES[gi]] == -1       # absent levels are fixed at 1
    pat3 = names.index("pat3")
    ids = np.arange(F.GROUP_BASES[pat3] + 1, F.GROUP_BASES[pat3] + F.GROUP_SIZES[pat3])
    unlisted = ids[~g.listed[ids]]
    listed = ids[g.listed[ids]]
    assert len(unlisted) and len(listed)
    # every unlisted pattern shares one parameter (the default's); listed ones have their own
    assert len(set(param[unlisted])) == 1
    assert len(set(param[listed])) == len(listed)
    assert param[unlisted[0]] == param[F.GROUP_BASES[pat3] + F.PAT3_DEFAULT]
    assert nparams == len(set(param[param >= 0]))
    # table_from round-trips the table it was built from
    theta = np.zeros(nparams)
    for i in np.nonzero(param >= 0)[0]:
        theta[param[i]] = np.log(g.table[i])
    assert np.allclose(table_from(theta, param, g.table), g.table)


def _run(args, **kw):
    return subprocess.run([sys.executable, "-m", "gammago", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=600, **kw)


def test_train_balance_end_to_end(tmp_path):
    """train-balance on four 9x9 games: labels, a held-out split, a gamma file the engine
    reads with --rollout-gammas, a plot; a second run reuses the labels, and a run on more
    games labels only the positions it adds."""
    out = tmp_path / "sb.gamma"
    args = ["train-balance", GAMES, "--out", str(out), "--per-game", "5",
            "--label-playouts", "64", "--epochs", "1", "--batch", "4", "--value-playouts", "8",
            "--grad-playouts", "8", "--eval-playouts", "16", "--holdout", "0.25", "--threads", "2"]
    r0 = _run(args + ["--max-games", "3"])
    assert r0.returncode == 0, r0.stderr
    assert len(json.loads((tmp_path / "sb.gamma.labels.json").read_text())["labels"]) == 15
    r = _run(args)
    assert r.returncode == 0, r.stderr
    assert "15 labels from" in r.stderr and "5 positions to label" in r.stderr
    summary = json.loads(r.stdout)
    assert summary["games"] == 4
    assert summary["training_positions"] == 15 and summary["held_out_positions"] == 5
    assert [h["epoch"] for h in summary["history"]] == [0, 1]
    assert (tmp_path / "sb.png").stat().st_size > 0
    labels = json.loads((tmp_path / "sb.gamma.labels.json").read_text())
    assert len(labels["labels"]) == 20 and all(0 <= y <= 1 for y in labels["labels"])
    trained = G.load(out)
    assert any("simulation balancing" in c for c in trained.comments)
    base = rollout_gammas(G.rollout_base(9), 9)
    assert not np.allclose(trained.table, base)            # the update moved something
    # groups the rollouts do not weigh are left as they were
    pat12 = list(F.GROUP_NAMES).index("pat12")
    s = slice(F.GROUP_BASES[pat12], F.GROUP_BASES[pat12] + F.GROUP_SIZES[pat12])
    assert np.allclose(trained.table[s], base[s])
    r2 = _run(args)
    assert r2.returncode == 0 and "labels from" in r2.stderr
    assert "label:" not in r2.stderr
    # a shipped table by its name as the start
    r2b = _run(args + ["--base", "rollout19.gamma"])
    assert r2b.returncode == 0, r2b.stderr
    assert any(c.startswith("start: ") and c.endswith("patterns/rollout19.gamma")
               for c in G.load(out).comments)
    # the engine plays with it
    e = Engine(EngineConfig(mode="rollouts", playouts=200, rollout_gammas=str(out)))
    e.new_game(9, 7.0)
    assert e.genmove("b") not in ("resign", "pass")
    # balanced for 3 gamma moves and the light tail: the file's settings line says so, and the
    # engine plays it so unless told otherwise
    r3 = _run(args + ["--light-after", "3"])
    assert r3.returncode == 0, r3.stderr
    assert G.load(out).settings == {"rollout_light_after": 3}
    assert G.load(out).settings_size == 9
    e = Engine(EngineConfig(mode="rollouts", playouts=100, rollout_gammas=str(out)))
    e.new_game(9, 7.0)
    assert e.search.light_after == 3
    # labels by the search with the net at the root: the cache made by rollouts is not reused
    r4 = _run(args + ["--label-mode", "net-root"])
    assert r4.returncode == 0, r4.stderr
    assert "label:" in r4.stderr and "labels from" not in r4.stderr
    labels4 = json.loads((tmp_path / "sb.gamma.labels.json").read_text())
    assert labels4["mode"] == "net-root" and len(labels4["labels"]) == 20
    assert any("labels: engine search (net-root) at 64 playouts" in c
               for c in G.load(out).comments)
    # a cache named .gz is read and written compressed: 15 of the 20 labels in it, 5 to add
    gz = tmp_path / "labels.json.gz"
    gz.write_bytes(gzip.compress(json.dumps(
        dict(labels4, positions=labels4["positions"][:15], labels=labels4["labels"][:15])).encode()))
    r5 = _run(args + ["--label-mode", "net-root", "--labels", str(gz)])
    assert r5.returncode == 0, r5.stderr
    assert "15 labels from" in r5.stderr and "5 positions to label" in r5.stderr
    labels5 = json.loads(gzip.decompress(gz.read_bytes()))
    assert labels5["positions"][:15] == labels4["positions"][:15]
    assert len(labels5["labels"]) == 20


def test_unreadable_label_cache_is_named_and_relabelled(tmp_path, capsys):
    """A label cache that is not gzip (though named .gz) or not JSON is named on stderr, the
    positions are labelled again, and a good cache is written in its place."""
    from gammago.go import sgf
    from gammago.engine.position_labels import load_or_label, sample_positions
    games = [g for g in sgf.iter_games([GAMES], max_games=1)]
    positions = sample_positions(games, 2, 4, 1)
    for name, junk in (("labels.json.gz", b"not gzip"), ("cut.json.gz", gzip.compress(b"{}")[:12]),
                       ("labels.json", b"{not json")):
        path = tmp_path / name
        path.write_bytes(junk)
        labels = load_or_label(path, games, positions, 9, 16, 1, 1)
        err = capsys.readouterr().err
        assert f"cannot read {path}" in err and "labelling again" in err
        assert len(labels) == 2 and all(0 <= y <= 1 for y in labels)
        assert load_or_label(path, games, positions, 9, 16, 1, 1) == labels   # read back


def test_label_cache_keys_positions_by_what_they_are(tmp_path, capsys):
    """The cache keys a position by its size, komi, stones and moves: a game given under
    another name, or a second game through the same moves, finds its label; komi or one move
    more is another position. A cache of version 1 (keyed by game name and move number) is
    read by the names of the games given, its other labels kept aside and written back."""
    import dataclasses
    from gammago.go import sgf
    from gammago.engine.position_labels import load_or_label, position_key, read_label_cache, sample_positions
    game, other = list(sgf.iter_games([GAMES], max_games=2))
    renamed = dataclasses.replace(game, name="elsewhere/games.sgf#7")
    assert position_key(renamed, 20) == position_key(game, 20)
    assert position_key(game, 20) != position_key(game, 21)
    assert position_key(dataclasses.replace(game, komi=game.komi + 1), 20) != position_key(game, 20)
    assert position_key(game, 20) != position_key(other, 20)
    positions = sample_positions([game], 3, 4, 1)
    path = tmp_path / "labels.json"
    labels = load_or_label(path, [game], positions, 9, 16, 1, 1)
    assert len(json.loads(path.read_text())["labels"]) == 3
    capsys.readouterr()
    # the same game under another name, twice: nothing to label, the same labels
    assert load_or_label(path, [renamed, game], positions + [(1, i, b) for _, i, b in positions],
                         9, 16, 1, 1) == labels * 2
    assert "labels from" in capsys.readouterr().err
    # version 1: the labels of the games given are keyed by position; the others kept aside
    v1 = tmp_path / "v1.json"
    v1.write_text(json.dumps({"version": 1, "playouts": 16, "mode": "rollouts",
                              "positions": [[game.name, i] for _, i, _ in positions]
                              + [["gone.sgf#1", 9]],
                              "labels": [0.25, 0.5, 0.75, 0.1]}))
    playouts, mode, known, aside = read_label_cache(v1, [game])
    assert (playouts, mode, aside) == (16, "rollouts", {("gone.sgf#1", 9): 0.1})
    assert load_or_label(v1, [game], positions, 9, 16, 1, 1) == [0.25, 0.5, 0.75]
    more = sample_positions([other], 2, 4, 2)
    both = load_or_label(v1, [game, other], positions + [(1, i, b) for _, i, b in more],
                         9, 16, 1, 1)
    assert both[:3] == [0.25, 0.5, 0.75] and len(both) == 5
    err = capsys.readouterr().err
    assert "3 labels from" in err and "2 positions to label" in err
    assert "1 of the labels in" in err and "kept as they were" in err
    d = json.loads(v1.read_text())
    assert d["version"] == 2 and len(d["positions"]) == 5
    assert d["unkeyed"] == {"positions": [["gone.sgf#1", 9]], "labels": [0.1]}


def test_train_balance_refuses_bad_input(tmp_path):
    r = _run(["train-balance", GAMES, "--out", str(tmp_path / "x.gamma"), "--size", "13"])
    assert r.returncode == 2 and "usable 13x13 games" in r.stderr
    r = _run(["train-balance", GAMES, "--out", str(tmp_path / "x.gamma"), "--light-after", "-1"])
    assert r.returncode == 2 and "--light-after must be >= 0" in r.stderr
    r = _run(["train-balance", GAMES, "--out", str(tmp_path / "x.gamma"), "--tail-gammas"])
    assert r.returncode == 2 and "unrecognized arguments: --tail-gammas" in r.stderr
    bad = tmp_path / "bad.gamma"
    bad.write_text("not a gamma file\n")
    r = _run(["train-balance", GAMES, "--out", str(tmp_path / "x.gamma"), "--base", str(bad)])
    assert r.returncode == 2 and str(bad) in r.stderr


def test_rollout_gammas_bad_file_is_refused_with_its_path(tmp_path):
    bad = tmp_path / "old.gamma"
    bad.write_text("gammago-gammas 1 features=1\n")
    with pytest.raises(ValueError, match=str(bad)):
        Engine(EngineConfig(rollout_gammas=str(bad)))
    r = _run(["gtp", "--rollout-gammas", str(bad)], input="quit\n")
    assert r.returncode == 2 and str(bad) in r.stderr


def test_param_map_groups():
    """--groups: only the named groups get parameters; train-balance refuses a group the
    rollouts do not weigh."""
    g = G.load_rollout_default(9)
    param, nparams = param_map(g.listed, ["capture", "dist1"])
    names = list(F.GROUP_NAMES)
    trained = {names[gi] for gi in range(F.N_GROUPS)
               if np.any(param[F.GROUP_BASES[gi]:F.GROUP_BASES[gi] + F.GROUP_SIZES[gi]] >= 0)}
    assert trained == {"capture", "dist1"}
    assert nparams == (F.GROUP_SIZES[names.index("capture")] - 1 +
                       F.GROUP_SIZES[names.index("dist1")] - 1)
    r = _run(["train-balance", GAMES, "--out", "x.gamma", "--groups", "capture,pat12"])
    assert r.returncode == 2 and "pat12" in r.stderr


def test_rollout_gammas_finds_a_shipped_table_by_name(tmp_path):
    """--rollout-gammas patterns/NAME (or NAME) works from any directory: the shipped table;
    a name that is neither there nor shipped is refused with that name."""
    r = subprocess.run([sys.executable, "-m", "gammago", "gtp", "--mode", "rollouts",
                        "--playouts", "100", "--rollout-gammas", "patterns/rollout19.gamma"],
                       input="boardsize 9\ngenmove b\nquit\n", capture_output=True, text=True,
                       cwd=tmp_path, timeout=120,
                       env=dict(os.environ, PYTHONPATH=ROOT + os.pathsep +
                                os.environ.get("PYTHONPATH", "")))
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("\n\n")[1].startswith("= "), r.stdout
    cwd = os.getcwd()
    try:
        os.chdir(tmp_path)
        e = Engine(EngineConfig(mode="rollouts", playouts=50,
                                rollout_gammas="rollout19.gamma"))
        e.new_game(9, 7.0)
        assert e.genmove("b") not in ("resign", "pass")
        with pytest.raises(ValueError, match="no-such.gamma"):
            Engine(EngineConfig(rollout_gammas="patterns/no-such.gamma"))
    finally:
        os.chdir(cwd)


def test_label_engine_options_reach_the_labelling_search(tmp_path, capsys):
    """--label-engine: gammago gtp options of the search that labels. They are parsed as the
    engine parses them, train-balance's own settings win and may not be given, the search they
    make labels otherwise (uniform rollouts here), and a cache made by another search is not
    reused: it is named and labelled again, and records the options it was made with."""
    from gammago.go import sgf
    from gammago.engine.position_labels import label_engine_config, label_search, load_or_label, read_label_cache, sample_positions
    cfg = label_engine_config("--rollout-light-after 0 --rollout-tail-seki off", "net-root",
                              500, 7)
    assert (cfg.rollout_light_after, cfg.rollout_tail_seki) == (0, False)
    assert (cfg.mode, cfg.playouts, cfg.seed, cfg.threads, cfg.resign, cfg.early_stop) == (
        "net-root", 500, 7, 1, 0.0, False)
    for bad, says in (("--playouts 5", "--playouts is set by train-balance"),
                      ("--seed=3", "--seed is set by train-balance"),
                      ("--bogus 1", "not an option of gammago gtp: --bogus 1"),
                      ("--rollout-light-after -1", "--rollout-light-after must be"),
                      ("--rollout-tail-seki maybe", "invalid choice: 'maybe'"),
                      ("'--rollout", "No closing quotation")):
        with pytest.raises(ValueError, match="--label-engine: .*" + says.split(":")[0]):
            label_engine_config(bad)
    assert label_search("rollouts") == "rollouts"
    assert label_search("net-root", " --rollout  light ") == "net-root --rollout light"
    games = list(sgf.iter_games([GAMES], max_games=1))
    positions = sample_positions(games, 4, 8, 1)
    path = tmp_path / "labels.json"
    gamma = load_or_label(path, games, positions, 9, 64, 1, 1)
    uniform = load_or_label(path, games, positions, 9, 64, 1, 1, engine="--rollout light")
    assert "made by another search (rollouts, 64 playouts; this run: rollouts --rollout " \
           "light, 64)" in capsys.readouterr().err
    assert uniform != gamma and all(0 <= y <= 1 for y in uniform)
    assert json.loads(path.read_text())["engine"] == "--rollout light"
    playouts, search, known, _ = read_label_cache(path, games)
    assert (playouts, search, sorted(known.values())) == (64, "rollouts --rollout light",
                                                          sorted(uniform))
    assert load_or_label(path, games, positions, 9, 64, 1, 1, engine="--rollout light") == uniform
    assert "labels from" in capsys.readouterr().err


def test_train_balance_refuses_a_bad_label_engine_before_any_work(tmp_path):
    """A --label-engine option that the engine refuses, or a file it cannot read, stops
    train-balance at once with its name, before anything is labelled."""
    for opts, says in (("--rollout-gammas " + str(tmp_path / "none.gamma"), "none.gamma"),
                       ("--threads 4", "--threads is set by train-balance itself")):
        r = subprocess.run([sys.executable, "-m", "gammago", "train-balance", GAMES, "--out",
                            str(tmp_path / "t.gamma"), "--label-engine", opts],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2 and says in r.stderr, r.stderr
        assert not (tmp_path / "t.gamma.labels.json").exists()
