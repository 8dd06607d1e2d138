"""A rollout table's settings line (gammago.moves.gammas: `# rollout-settings: ...`): read and written
exactly, refused with the file and line when it is wrong, and taken by the engine for the
options left unset, the options given winning."""
import logging

import pytest

from gammago.moves import gammas as G
from gammago.engine.settings import EngineConfig, rollout_settings_for
from gammago.core.retired import RETIRED_AT
from gammago.engine.engine import Engine


def _table_with(tmp_path, *lines, name="t.gamma"):
    """The shipped rollout table, saved with extra comment lines."""
    g = G.load_rollout_default(9)
    path = tmp_path / name
    G.save(path, g.table, g.listed, comments=list(lines))
    return path


def test_settings_line_round_trip(tmp_path):
    settings = {"rollout_light_after": 10}
    line = G.settings_comment(settings)
    assert line == "rollout-settings: --rollout-light-after 10"
    g = G.load(_table_with(tmp_path, "trained for 10 gamma moves", line))
    assert g.settings == settings
    assert G.load(_table_with(tmp_path, "no settings")).settings == {}


def test_settings_line_names_its_board_size(tmp_path):
    settings = {"rollout_light_after": 5}
    line = G.settings_comment(settings, 9)
    assert line == "rollout-settings for 9x9: --rollout-light-after 5"
    g = G.load(_table_with(tmp_path, line))
    assert (g.settings, g.settings_size) == (settings, 9)
    assert g.settings_on(9) == settings and g.settings_on(19) == {}
    assert g.settings_on(None) == settings
    plain = G.load(_table_with(tmp_path, G.settings_comment(settings)))
    assert plain.settings_size is None and plain.settings_on(13) == settings
    with pytest.raises(ValueError, match="no board size"):
        G.settings_comment(settings, 4)


@pytest.mark.parametrize("line, says", [
    ("rollout-settings for 9x13: --rollout-light-after 5", "9x13 is not a square board"),
    ("rollout-settings for 21x21: --rollout-light-after 5", "21x21 is not a square board"),
    ("rollout-settings for nine: --rollout-light-after 5", "not 'rollout-settings: OPTIONS'"),
    ("rollout-settings: --rollout-power 2", "'--rollout-power' is not one of"),
    ("rollout-settings: --rollout-light-after", "every option needs one value"),
    ("rollout-settings: --rollout-light-after -1", "--rollout-light-after must be >= 0, not -1"),
    ("rollout-settings: --rollout-light-after 2.5", "--rollout-light-after must be a whole number"),
    ("rollout-settings: --rollout-light-after 5 --rollout-light-after 6", "given twice"),
])
def test_bad_settings_line_is_refused_with_file_and_line(tmp_path, line, says):
    path = _table_with(tmp_path, "comment", line)
    with pytest.raises(G.GammaFileError) as e:
        G.load(path)
    assert str(path) in str(e.value) and "line 3:" in str(e.value) and says in str(e.value)


@pytest.mark.parametrize("option", ["--rollout-tail-gammas on", "--rollout-tail-far 0.3717",
                                    "--rollout-answer on"])
def test_a_table_trained_for_retired_rollouts_is_refused_with_the_commit(tmp_path, option):
    """Tables that train-balance wrote for the gamma tail or the gamma moves' answers name a
    setting the engine no longer plays: refused, naming the commit whose code plays them."""
    path = _table_with(tmp_path, f"rollout-settings for 19x19: --rollout-light-after 10 {option}")
    with pytest.raises(G.GammaFileError) as e:
        G.load(path)
    said = str(e.value)
    assert str(path) in said and option.split()[0] + " was retired" in said
    assert RETIRED_AT in said


def test_two_settings_lines_are_refused(tmp_path):
    path = _table_with(tmp_path, "rollout-settings: --rollout-light-after 3",
                       "rollout-settings: --rollout-light-after 4")
    with pytest.raises(G.GammaFileError, match="line 3: a second rollout-settings line"):
        G.load(path)


def test_settings_resolve_option_then_table_then_default():
    table = {"rollout_light_after": 3}
    assert rollout_settings_for(9) == {"rollout_light_after": 5}
    assert rollout_settings_for(19) == {"rollout_light_after": 10}
    assert rollout_settings_for(9, EngineConfig(), table) == table
    assert rollout_settings_for(9, EngineConfig(rollout_light_after=0), table) == {
        "rollout_light_after": 0}


def test_engine_plays_a_table_with_its_settings_unless_told_otherwise(tmp_path, caplog):
    path = _table_with(tmp_path, G.settings_comment({"rollout_light_after": 3}))
    with caplog.at_level(logging.INFO, logger="gammago"):
        e = Engine(EngineConfig(mode="rollouts", playouts=200, rollout_gammas=str(path)))
        e.new_game(9, 7.0)
    assert e.search.light_after == 3
    assert any("settings: --rollout-light-after 3" in r.getMessage() for r in caplog.records)
    assert e.genmove("b") not in ("resign", "pass")
    # the option given wins, and the log says the table was trained for something else
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="gammago"):
        e = Engine(EngineConfig(mode="rollouts", playouts=50, rollout_gammas=str(path),
                                rollout_light_after=7))
        e.new_game(9, 7.0)
    assert e.search.light_after == 7
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any("was trained for --rollout-light-after 3" in m and
               "playing with --rollout-light-after 7 as given" in m for m in warned), warned
    # no --rollout-gammas: the table's settings play no part, the defaults hold
    e = Engine(EngineConfig(mode="rollouts", playouts=50))
    e.new_game(9, 7.0)
    assert e.search.light_after == 5


def test_gtp_option_left_unset_is_none():
    """--rollout-light-after defaults to unset (None), so that a table's settings can tell it
    apart from a value given."""
    import argparse
    p = argparse.ArgumentParser()
    EngineConfig.add_arguments(p)
    assert EngineConfig.from_args(p.parse_args([])).rollout_light_after is None
    cfg = EngineConfig.from_args(p.parse_args(["--rollout-light-after", "5"]))
    assert cfg.rollout_light_after == 5


def test_engine_leaves_a_table_for_another_size_aside(tmp_path, caplog):
    path = _table_with(tmp_path, G.settings_comment({"rollout_light_after": 3}, 9))
    with caplog.at_level(logging.INFO, logger="gammago"):
        e = Engine(EngineConfig(mode="rollouts", playouts=50, rollout_gammas=str(path)))
        e.new_game(9, 7.0)
        assert e.search.light_after == 3
        assert not [r for r in caplog.records if r.levelno == logging.WARNING]
        assert e.genmove("b") not in ("resign", "pass")
        assert not [r for r in caplog.records if r.levelno == logging.WARNING]
        e.new_game(13, 7.5)
        e.genmove("b")
        e.new_game(13, 7.5)
        e.genmove("b")
    assert e.search.light_after == 10
    warned = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warned) == 1 and "are for 9x9; on 13x13 the options and defaults hold" in warned[0]
    e.new_game(9, 7.0)
    assert e.search.light_after == 3


def test_every_entry_checks_the_rollout_settings_the_same_way():
    """rollout.check_settings is the one check of the gamma rollouts' settings: the engine's
    options, the tree's rollouts, a GammaPolicy and simulation balancing's playouts refuse a
    negative light_after and a rules word with a bit no rule has, in the same words."""
    import numpy as np
    from gammago.rollout import balance
    from gammago.rollout import gamma_policy as rollout
    from gammago.rollout import tail
    from gammago.search import tree
    from gammago.go.board import Board
    table = np.ascontiguousarray(G.rollout_base(9), dtype=np.float64)
    bad_word = 2 * max(tail.RULES.values())
    entries = [lambda la, t: rollout.GammaPolicy(table, light_after=la, tail=t),
               lambda la, t: tree.Search(10000).use_gamma_rollouts(table, la, t),
               lambda la, t: balance.value(Board(9), table, 1, 1, la, tail=t)]
    for make in entries:
        with pytest.raises(ValueError, match="^--rollout-light-after must be >= 0, not -1$"):
            make(-1, tail.RULES_DEFAULT)
        with pytest.raises(ValueError, match="not a light-tail rules word"):
            make(0, bad_word)
        make(0, tail.RULES_DEFAULT)
    with pytest.raises(ValueError, match="^--rollout-light-after must be >= 0, not -1$"):
        EngineConfig(rollout_light_after=-1).validate()


def test_bench_times_the_rollouts_the_engine_plays(monkeypatch):
    """config.rollout_plan is what the engine gives its searches and what `gammago bench` times
    as the engine's rollouts: on 9x9 the light tail's lone-stone and seki rules are in both,
    on 19x19 neither."""
    from gammago.engine import bench
    from gammago.rollout import gamma_policy as rollout
    from gammago.rollout import tail
    from gammago.engine.settings import rollout_plan
    for size, options in ((9, {}), (19, {}), (9, {"rollout_tail_seki": False,
                                                 "rollout_light_after": 2})):
        e = Engine(EngineConfig(mode="rollouts", playouts=50, **options))
        e.new_game(size, 7.0)
        plan = rollout_plan(size, EngineConfig(**options))
        s = e.search
        assert (s.light_after, s.tail) == (plan["light_after"], plan["tail"])
    on9, on19 = (set(tail.rule_names(rollout_plan(size)["tail"])) for size in (9, 19))
    assert {"lone", "seki"} <= on9 and not {"lone", "seki"} & on19
    off = rollout_plan(9, EngineConfig(rollout_tail_seki=False))
    assert "seki" not in tail.rule_names(off["tail"])

    made, real = [], rollout.GammaPolicy

    def policy(*args, **kw):
        made.append(kw)
        return real(*args, **kw)
    monkeypatch.setattr(rollout, "GammaPolicy", policy)
    monkeypatch.setattr(bench, "GAMMA_PLAYOUTS", {9: 500, 19: 500})
    out = bench.gamma_figures(1, True, 1)
    assert out["rollout_playouts_per_s_9"] > 0 and out["rollout_playouts_per_s_19"] > 0
    assert rollout_plan(9) in made and rollout_plan(19) in made
