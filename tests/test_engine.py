"""The engine (gammago/engine/engine.py): interface, clock, tactics, passing, resigning, real games."""
import os
import subprocess
import sys
import threading
import time

import pytest

from gammago.net import runtime as _net
from gammago.go import scoring
from gammago.go.board import Board
from gammago.engine.clock import Clock
from gammago.engine.settings import (AUTO_NET_MIN_SIZE, FIELDS, MAX_MEMORY_MB, MAX_NODES_LIMIT, MIN_MEMORY_MB,
                            NODE_BYTES, PLAYER, EngineConfig)
from gammago.engine.engine import Engine
from gammago.arena.gtp_process import GtpProcess
from gammago.go.handicap import fixed_points

from engine_args import engine_config

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def engine(**kw):
    """A 9x9 engine; UCT with rollouts unless a test names another mode (--mode auto, the
    default, puts the net at the root from 9x9 up)."""
    kw.setdefault("playouts", 1000)
    kw.setdefault("mode", "rollouts")
    e = Engine(EngineConfig(**kw))
    e.new_game(9, 7)
    return e


def position(black, white, to_move, **kw):
    e = engine(**kw)
    e.setup_stones(black, white)
    e.board.to_move = to_move
    return e


# --- configuration ---------------------------------------------------------------------------
def test_config_from_command_line():
    cfg = engine_config(
        ["--playouts", "50", "--seed", "7", "--threads", "2", "--max-nodes", "5000",
         "--expand-visits", "8", "--pw-factor", "1.8", "--no-reuse"])
    assert (cfg.playouts, cfg.seed, cfg.threads, cfg.max_nodes) == (50, 7, 2, 5000)
    assert cfg.expand_visits == 8 and cfg.pw_factor == 1.8 and not cfg.reuse
    with pytest.raises(ValueError, match="--threads"):
        engine_config(["--threads", "0"])
    with pytest.raises(ValueError, match="--resign"):
        EngineConfig(resign=1.5).validate()


# every setting: (a value as given on the command line, the field's value, a value refused)
SETTINGS = {
    "playouts": ("50", 50, "-1"), "seed": ("7", 7, "x"), "threads": ("2", 2, "0"),
    "move_time": ("0.5", 0.5, "0"), "max_memory": ("64", 64, "8"), "resign": ("0.2", 0.2, "1"),
    "rules": ("japanese", "japanese", "no-such-rules"), "ponder": (None, True, None),
    "verbose": (None, True, None), "mode": ("rollouts", "rollouts", "uct"),
    "model": ("m.onnx", "m.onnx", None), "dynkomi": ("linear", "linear", "adaptive"),
    "max_nodes": ("5000", 5000, "999"), "margin": ("0.5", 0.5, "-1"),
    "pass_dead_removed": ("on", True, "yes"), "reuse": ("off", False, "no"),
    "early_stop": ("off", False, "0"), "rollout": ("light", "light", "heavy"),
    "prior": ("cheap", "cheap", "net"), "rollout_light_after": ("0", 0, "-1"),
    "rollout_tail_shapes": ("off", False, "auto"), "rollout_tail_lone": ("on", True, "1"),
    "rollout_tail_seki": ("off", False, "true"),
    "rollout_scale": ("selfatari=2", "selfatari=2", "nope=2"),
    "rollout_gammas": ("t.gamma", "t.gamma", None), "prior_gammas": ("s.gamma", "s.gamma", None),
    "prior_largest": ("6", 6, "11"),
    "expand_visits": ("5", 5, "-1"),
    "pw_init": ("2", 2, "0"), "pw_base": ("20", 20.0, "-1"), "pw_factor": ("1.8", 1.8, "0.5"),
    "ucb_c": ("0.5", 0.5, "-1"), "bonus_weight": ("0", 0.0, "nan"),
    "bonus_equiv": ("500", 500.0, "0"), "fpu": ("1.1", 1.1, "inf"), "crit": ("0", 0.0, "-2"),
    "mercy": ("0", 0, "-1"), "net_lambda": ("0.5", 0.5, "1.5"),
    "net_symmetry": ("average", "average", "mean"), "net_children": ("8", 8, "0"),
    "net_cpuct": ("2", 2.0, "-1"), "policy_temperature": ("1", 1.0, "-1"),
    "dynkomi_moves": ("30", 30, "-1"),
}


def test_every_setting_has_a_case_here():
    assert set(SETTINGS) == set(FIELDS)


@pytest.mark.parametrize("name", sorted(SETTINGS))
def test_each_setting_parses_and_is_checked(name):
    """A player's option by its flag, a tuning setting by --set (both spellings) and by its old
    flag: the value reaches the field; a bad value is refused naming the option or key."""
    good, value, bad = SETTINGS[name]
    f = FIELDS[name]
    flag = "--" + name.replace("_", "-")
    if f.metadata["tier"] == PLAYER:
        assert getattr(engine_config([flag] if good is None else [flag, good]), name) == value
        if bad is not None:
            try:                                    # argparse's own error (exit 2), or ours
                engine_config([flag, bad])
                raise AssertionError(f"{flag} {bad} was taken")
            except ValueError as e:
                assert str(e).startswith(flag), e
            except SystemExit as e:
                assert e.code == 2
            with pytest.raises(ValueError, match=f"--set {name}=1: {name} is an option of its "
                                                 f"own: give {flag}"):
                engine_config(["--set", f"{name}=1"])
        return
    for key in {name, name.replace("_", "-")}:
        assert getattr(engine_config(["--set", f"{key}={good}"]), name) == value
    old = f.metadata.get("flag")
    if old:                                         # --no-reuse, --pass-dead-removed
        assert getattr(engine_config([old[0]]), name) == old[1] == value
    else:
        assert getattr(engine_config([flag, good]), name) == value
    if bad is not None:
        with pytest.raises(ValueError) as e:
            engine_config(["--set", f"{name}={bad}"])
        given = f"--set {name}={bad}: "
        said = str(e.value)
        assert said.startswith(given) and (name in said[len(given):] or flag in said), said


def test_set_refuses_what_it_cannot_take_and_says_what_it_may():
    with pytest.raises(ValueError, match=r"--set pw_bse=3: no such setting \(did you mean "
                                         r"pw_base\?\); the keys: max_nodes, .*--help-all"):
        engine_config(["--set", "pw_bse=3"])
    with pytest.raises(ValueError, match="--set pw_base=x: pw_base must be a number >= 0, or auto$"):
        engine_config(["--set", "pw_base=x"])
    with pytest.raises(ValueError, match=r"--set net_lambda=1.5: net_lambda must be a number in "
                                         r"\[0, 1\], or auto, not 1.5"):
        engine_config(["--set", "net_lambda=1.5"])
    with pytest.raises(ValueError, match="--set reuse=maybe: reuse must be on or off$"):
        engine_config(["--set", "reuse=maybe"])
    with pytest.raises(ValueError, match="--set net-symmetry=mean: net_symmetry must be one of "
                                         "random, average"):
        engine_config(["--set", "net-symmetry=mean"])
    with pytest.raises(ValueError, match="expected KEY=VALUE, not 'crit'"):
        engine_config(["--set", "ucb_c=1,crit"])
    with pytest.raises(ValueError, match="rollout_power was retired; the code of commit c38f670"):
        engine_config(["--set", "rollout_power=2"])
    with pytest.raises(SystemExit):                 # an old flag's bad value: argparse's error
        engine_config(["--pw-base", "x"])


def test_set_takes_several_keys_and_the_later_wins():
    cfg = engine_config(["--pw-base", "7", "--set", "ucb-c=0.5,crit=3", "--set", "pw_base=auto",
                         "--set", "rollout_scale=capture:save=2,selfatari=3,mercy=4",
                         "--set", "crit=1", "--no-reuse"])
    assert (cfg.ucb_c, cfg.crit, cfg.pw_base, cfg.mercy, cfg.reuse) == (0.5, 1.0, None, 4, False)
    assert cfg.rollout_scale == "capture:save=2,selfatari=3"     # a value with commas
    assert engine_config(["--set", "expand_visits=auto,dynkomi_moves=auto"]) == EngineConfig()


def test_auto_settings_resolve_by_board_size():
    """`auto` (the default) is resolved by the board size, as the per-size constants say."""
    auto = engine_config(["--set", "pw_base=auto,crit=auto,mercy=auto,expand_visits=auto"])
    assert auto == EngineConfig()
    assert auto.tree_params(9) == dict(EngineConfig().tree_params(9), expand_visits=8, crit=2.0,
                                       pw_base=10.0, mercy=20)
    assert auto.tree_params(19) == dict(EngineConfig().tree_params(19), expand_visits=40,
                                        crit=0.0, pw_base=40.0, mercy=0)
    given = engine_config(["--set", "pw_base=20,crit=0.5,mercy=3,expand_visits=4"])
    assert {k: given.tree_params(19)[k] for k in ("pw_base", "crit", "mercy", "expand_visits")} == \
        {"pw_base": 20.0, "crit": 0.5, "mercy": 3, "expand_visits": 4}


def test_settings_reach_the_engine():
    """What the command line sets is what the engine's searches play with."""
    from gammago.engine.settings import rollout_plan
    tree = {"expand_visits": 5, "pw_init": 2, "pw_base": 20.0, "pw_factor": 1.8, "ucb_c": 0.5,
            "bonus_weight": 0.2, "bonus_equiv": 500.0, "fpu": 1.1, "crit": 0.5, "mercy": 3}
    rollouts = {"rollout_light_after": 3, "rollout_tail_shapes": False, "rollout_tail_lone": False,
                "rollout_tail_seki": False}
    text = ",".join(f"{k}={'off' if v is False else v}" for k, v in {**tree, **rollouts}.items())
    cfg = engine_config(["--mode", "rollouts", "--playouts", "64", "--seed", "5", "--threads",
                         "2", "--max-memory", "64", "--rules", "chinese", "--set", text])
    e = Engine(cfg)
    e.new_game(9, 7.0)
    assert {k: e.search.params[k] for k in tree} == tree
    plan = rollout_plan(9, cfg)
    assert (e.search.light_after, e.search.tail) == (plan["light_after"], plan["tail"]) == (
        3, rollout_plan(9, EngineConfig(**rollouts))["tail"])
    assert e.mode == "rollouts" and e.rules.name == "chinese"
    assert e.budget.limit_bytes <= 64 << 20 and e.nodes == cfg.node_budget()
    e.genmove("b")
    assert e.search.playouts == 64
    assert engine_config(["--set", "max_nodes=5000"]).node_budget() == 5000
    if not os.path.exists(_net.DEFAULT_MODEL):
        return
    net = Engine(engine_config(["--mode", "net-root", "--set", "net_children=8,net_cpuct=2,"
                                "net_lambda=0.25,net_symmetry=average,crit=0.5"]))
    net.new_game(9, 7.0)
    root = net.search
    assert (root.nchildren, root.c_puct, root.lam, net.net.symmetry) == (8, 2.0, 0.25, "average")
    assert root.make_search().params["crit"] == 0.5      # the child trees take the tree settings


def test_expand_visits_follow_the_board_size_unless_given():
    e = engine(mode="rollouts")
    assert e.search.params["expand_visits"] == 8
    e.new_game(19, 7.5)
    assert e.search.params["expand_visits"] == 40
    e.new_game(13, 7.5)
    assert 8 < e.search.params["expand_visits"] < 40
    fixed = engine(expand_visits=5, mode="rollouts")
    fixed.new_game(19, 7.5)
    assert fixed.search.params["expand_visits"] == 5
    with pytest.raises(ValueError, match="--expand-visits"):
        EngineConfig(expand_visits=-1).validate()


def _rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _status_kb(key):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def test_memory_bound_default_and_limits():
    """--max-memory: 2 GB or a quarter of the machine's memory by default; --max-nodes, the
    expert form, gives the bound in nodes instead."""
    phys_mb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
    d = EngineConfig()
    assert MIN_MEMORY_MB <= d.max_memory <= min(MAX_MEMORY_MB, max(MIN_MEMORY_MB, phys_mb // 4))
    assert d.max_nodes == 0 and d.node_budget() * NODE_BYTES <= (d.max_memory << 20)
    assert EngineConfig(max_memory=64).node_budget() * NODE_BYTES <= 64 << 20
    assert EngineConfig(max_memory=64, max_nodes=5000).node_budget() == 5000
    with pytest.raises(ValueError, match="--max-nodes"):
        EngineConfig(max_nodes=MAX_NODES_LIMIT + 1).validate()
    with pytest.raises(ValueError, match="--max-memory"):
        EngineConfig(max_memory=MIN_MEMORY_MB - 1).validate()


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs Linux /proc")
def test_trees_reserve_what_they_use_not_the_bound():
    """The bound is a ceiling, not a reservation: the address space grows with the tree, by
    far less than the bound, and a tree at the bound stops growing and says so once."""
    e = engine(mode="rollouts", playouts=2000, max_memory=1024)
    assert e.budget.limit_bytes >= 1023 << 20
    e.genmove("b")                  # (threads started, their malloc arenas made)
    before = max(_status_kb("VmSize"), _status_kb("VmPeak"))
    e.genmove("w")                  # and the subtree kept for the next move (in place)
    e.genmove("b")
    assert 0 < e.search.nodes < 100_000
    assert (_status_kb("VmPeak") - before) << 10 < 256 << 20     # far from the bound
    assert e.budget.used_bytes <= 8 * e.search.memory_of_chunks(1)


def test_a_new_game_gives_back_every_tree_of_the_last_one():
    """A new game (clear_board, boardsize) empties every tree, net-root's child trees of
    another board size included, so their chunks go back to the budget and the system instead
    of staying held until that size's next search."""
    e = engine(mode="auto", playouts=300)
    e.new_game(19, 7.5)
    e.genmove("b")
    root = e.search
    if root is e._tree_search:
        pytest.skip("the shipped model did not load: no net-root search")
    assert root.nodes > 0 and e.budget.used_bytes > 0
    small = AUTO_NET_MIN_SIZE - 1         # --mode auto plays rollouts only here
    e.new_game(small, 7.0)
    assert e.search is e._tree_search and root.kids == [] and root.nodes == 0
    assert e.budget.used_bytes <= e.search.memory_of_chunks(1)
    e.genmove("b")
    used = e.budget.used_bytes
    assert used > 0
    e.new_game(small, 7.0)
    assert e.budget.used_bytes <= min(used, e.search.memory_of_chunks(1))


def test_release_free_memory_trims_the_c_heap_where_glibc_has_malloc_trim(monkeypatch):
    """It calls glibc's malloc_trim(0) and says so (True); without it (no libc, or a libc
    without malloc_trim) it does nothing and says False."""
    import ctypes
    from gammago.engine import engine as engine_module
    calls = []

    class Libc:
        def malloc_trim(self, pad):
            calls.append(pad)
            return 1

    monkeypatch.setattr(engine_module, "_LIBC", Libc())
    assert engine_module.release_free_memory() is True and calls == [0]
    for missing in (OSError("no libc"), object()):     # no libc; a libc without malloc_trim
        def cdll(name, missing=missing):
            if isinstance(missing, Exception):
                raise missing
            return missing
        monkeypatch.setattr(engine_module, "_LIBC", None)
        monkeypatch.setattr(ctypes, "CDLL", cdll)
        assert engine_module.release_free_memory() is False
        assert engine_module._LIBC is False                 # asked once per process
        assert engine_module.release_free_memory() is False
    assert calls == [0]


RELEASE_SCRIPT = """
import ctypes, os, sys
from gammago.engine.engine import release_free_memory
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
blocks = [libc.malloc(4096) for _ in range(16384)]       # 64 MiB of small blocks in the heap
for b in blocks:
    ctypes.memset(b, 1, 4096)
top = libc.malloc(4096)                                  # holds the heap's top: free() cannot
for b in blocks:                                         # shrink the heap by itself
    libc.free(b)
before = resident()
said = release_free_memory()
print(said, before, resident())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or os.confstr("CS_GNU_LIBC_VERSION") is None,
                    reason="glibc's malloc_trim")
def test_release_free_memory_gives_freed_heap_pages_back_on_glibc():
    """64 MiB freed below a block still in use stay resident until release_free_memory()
    (malloc_trim) hands them back to the system (in a process of its own: a clean heap)."""
    p = subprocess.run([sys.executable, "-c", RELEASE_SCRIPT], capture_output=True, text=True,
                       cwd=ROOT, timeout=120)
    assert p.returncode == 0, p.stderr
    said, before, after = p.stdout.split()
    assert said == "True"
    assert int(before) - int(after) > 48 * 2**20, (before, after)


def test_a_full_budget_stops_growth_and_is_said_once(caplog):
    import logging
    e = engine(mode="rollouts", playouts=3000, max_nodes=20000, expand_visits=1)
    with caplog.at_level(logging.WARNING, logger="gammago"):
        for c in "bwbw":
            e.genmove(c)
    assert e.search.memory <= 2 * e.search.memory_of_chunks(1)
    assert sum("--max-memory" in m for m in caplog.messages) == 1


# --- the clock -------------------------------------------------------------------------------
def test_clock_budgets():
    c = Clock()
    assert c.budget(81, 1.0, 2.5) == 2.5                  # no time settings: move time
    c.set("absolute", 60)
    assert 0.05 < c.budget(81, 1.0, 9) <= 60 / 15
    c.time_left(2.0, 0)
    assert c.budget(81, 1.0, 9) <= 2.0 - 0.3 + 1e-9      # never the last of the main time
    c.set("canadian", 0, 10, 5)                           # 10 s for 5 stones
    assert c.in_byo and c.budget(81, 1.0, 9) == pytest.approx(2 - 0.3)
    c.time_left(3.0, 1)                                   # 3 s for the last stone
    assert c.budget(81, 1.0, 9) == pytest.approx(3 - 0.45)
    c.set("byoyomi", 0, 5, 1, 3)                          # Japanese: 5 s periods
    assert c.budget(81, 1.0, 9) == pytest.approx(4.25)
    c.set("canadian", 0, 1, 1)                            # time_settings 0 1 1
    assert c.budget(81, 1.0, 9) == pytest.approx(0.85)
    c.set("canadian", 600, 30, 10)                        # long main time: spend it
    assert c.budget(81, 1.0, 9) > 3


def test_fischer_clock():
    """Fischer time (kata-time_settings fischer / fischer-capped): a share of the main time plus
    the increment a move, never more than the main time holds; the increment is added after
    each move, up to the cap; saved time counts but for what the cap cuts off."""
    c = Clock()
    c.set("fischer", 60, increment=5)
    moves_left = 0.35 * 81
    assert c.budget(81, 1.0, 9) == pytest.approx(60 / moves_left + 5)
    c.time_left(2.0, 0)                                   # 2 s left: the increment is not there yet
    assert c.budget(81, 1.0, 9) == pytest.approx(2 - 0.3)
    c.spend(1.5)
    assert c.main_left == pytest.approx(5.5)
    assert c.bankable(4.0) == 4.0                         # no cap: all of it
    c.set("fischer", 60, increment=5, cap=61)
    c.spend(3)
    assert c.main_left == 61                              # 62, cut to the cap
    c.time_left(60, 0)
    assert c.bankable(4.0) == 0.0                         # 60 - 4 + 5 = 61: the cap is reached
    assert c.bankable(10.0) == pytest.approx(6.0)         # 60 - 10 + 5 = 55: 6 s of room
    c.set("fischer", 600, increment=10, max_move=5)
    assert c.budget(81, 1.0, 9) == pytest.approx(5 - 0.75)   # at most 5 s a move


def test_clock_says_how_much_saved_time_can_be_spent_later():
    """Clock.bankable: the part of a move's budget that, saved now, is still on the clock for a
    later move (early stop may end a search only within it), for every kind of clock."""
    c = Clock()
    assert c.bankable(1.0) == 0.0                         # --move-time: every move gets 1 s anyway
    c.set("absolute", 60)
    assert c.bankable(4.0) == 4.0                         # sudden death: all of it
    c.set("canadian", 0, 10, 3)                           # 3 stones in 10 s: saved time helps
    assert c.bankable(3.0) == 3.0
    for _ in range(2):
        c.spend(1.0)
    assert c.stones_left == 1 and c.bankable(7.0) == 0.0  # the period's last stone
    c.spend(1.0)
    assert c.stones_left == 3 and c.bankable(3.0) == 3.0  # a new period
    c.set("canadian", 0, 1, 1)                            # time_settings 0 1 1
    assert c.bankable(0.85) == 0.0
    c.set("canadian", 2, 5, 1)                            # main time, then one stone in 5 s
    assert c.bankable(4.0) == 2.0                         # the rest of the move is the period's
    c.set("canadian", 2, 30, 10)                          # ... then 10 stones in 30 s: all of it
    assert c.bankable(4.0) == 4.0
    c.set("byoyomi", 60, 5, 1, 3)                         # Japanese: main time first
    assert c.bankable(4.0) == 4.0
    c.time_left(3.0, 0)                                   # 3 s of main time left
    assert c.bankable(4.25) == 3.0                        # the last 1.25 s come from a period
    c.time_left(5, 3)                                     # in the periods now
    assert c.bankable(4.25) == 0.0
    c.set("byoyomi", 0, 5, 1, 3)                          # periods from the start
    assert c.bankable(4.25) == 0.0


@pytest.mark.parametrize("settings, window", [
    (None, 0.0),                                  # --move-time 1: no early stop
    (("time_settings", 0, 1, 0), 0.0),            # GTP "no time limit": --move-time as well
    (("time_settings", 600, 0, 0), "budget"),     # absolute
    (("time_settings", 0, 10, 5), "budget"),      # Canadian period, 5 stones to come
    (("time_settings", 0, 2, 1), 0.0),            # Canadian period of one stone
    (("kgs_time_settings", "byoyomi", 0, 5, 3), 0.0),      # Japanese periods
    (("kgs_time_settings", "byoyomi", 600, 5, 3), "budget"),  # ... in main time
    (("kgs_time_settings", "canadian", 600, 30, 10), "budget"),
    (("kgs_time_settings", "none"), 0.0),
    (("kata_time_settings", "fischer", 600, 5), "budget"),
    (("kata_time_settings", "byo-yomi", 0, 5, 3), 0.0),
])
def test_early_stop_window_per_clock(settings, window):
    e = engine(playouts=0)
    if settings:
        getattr(e, settings[0])(*settings[1:])
    clock = e.clocks[1]
    budget = clock.budget(81, e.config.margin, e.config.move_time)
    want = budget if window == "budget" else window
    assert e.early_stop_window(clock, budget) == pytest.approx(want)
    e.config.early_stop = False                   # --no-early-stop
    assert e.early_stop_window(clock, budget) == 0.0


def test_early_stop_only_where_saved_time_counts(monkeypatch):
    e = engine(playouts=0, move_time=0.3)
    checks = []
    real = Engine._settled_early
    monkeypatch.setattr(Engine, "_settled_early",
                        lambda self, *a: checks.append(a) or real(self, *a))
    e.genmove("b")                       # --move-time: the time saved would be lost
    assert checks == []
    e.time_settings(0, 1, 1)             # one stone per 1 s period: the whole budget is used
    e.genmove("w")
    assert checks == []
    e.time_settings(8, 0, 0)             # absolute time: stop once the best move is sure
    e.genmove("b")
    assert checks


def test_time_settings_commands():
    e = engine()
    e.time_settings(0, 1, 0)                              # GTP: no time limit
    assert e.clocks[1].kind == "none"
    e.time_settings(30, 0, 0)
    assert e.clocks[2].kind == "absolute"
    e.kgs_time_settings("byoyomi", 60, 10, 5)
    assert e.clocks[1].kind == "byoyomi" and e.clocks[1].periods == 5
    e.kgs_time_settings("canadian", 60, 30, 10)
    e.time_left("b", 25, 4)
    assert e.clocks[1].in_byo and e.clocks[1].stones_left == 4
    with pytest.raises(ValueError, match="kgs-time_settings"):
        e.kgs_time_settings("fischer", 1, 2)
    with pytest.raises(ValueError, match="needs 3"):
        e.kgs_time_settings("byoyomi", 1)
    with pytest.raises(ValueError, match="negative"):
        e.time_settings(-1, 0, 0)
    e.kata_time_settings("fischer-capped", 300, 2.5, 600, -1)
    assert e.clocks[2].kind == "fischer" and e.clocks[2].increment == 2.5
    assert e.clocks[2].cap == 600 and e.clocks[2].max_move == -1
    e.kata_time_settings("byo-yomi", 60, 10, 5)
    assert e.clocks[1].kind == "byoyomi" and e.clocks[1].periods == 5
    for bad, why in [(("fischer", 1), "needs 2"), (("sudden", 1), "unknown kind"),
                     (("fischer", 1, -2), "negative"), (("canadian", 60, 30, 2.5), "whole"),
                     (("fischer-capped", 300, 2, 100, -1), "limit"), (("absolute", "nan"), "finite"),
                     (("absolute", "x"), "bad value")]:
        with pytest.raises(ValueError, match=why):
            e.kata_time_settings(*bad)
    assert e.clocks[1].kind == "byoyomi"                  # a refused setting changes nothing


def test_one_second_byoyomi_never_overruns():
    # the budget the engine gives each move keeps a reserve inside the 1 s period (what the
    # wall clock shows on a loaded machine is not the engine's to promise)
    e = engine(playouts=0)
    e.time_settings(0, 1, 1)
    for i in range(6):
        e.genmove("bw"[i % 2])
        assert 0 < e.last_budget <= 0.9, e.last_budget


# --- the interface ---------------------------------------------------------------------------
def test_fixed_playouts_are_reproducible():
    games = []
    for _ in range(2):
        e = engine(playouts=500, seed=11)
        games.append([e.genmove("bw"[i % 2]) for i in range(5)])
    assert games[0] == games[1]


def test_play_undo_errors_keep_state():
    e = engine()
    e.play("b", "E5")
    with pytest.raises(ValueError):
        e.play("w", "E5")
    with pytest.raises(ValueError):
        e.play("w", "Z9")
    assert e.board.moves == [("b", "E5")]
    e.undo()
    assert e.board.moves == []
    with pytest.raises(ValueError):
        e.undo()
    with pytest.raises(ValueError):
        e.new_game(4, 7)
    assert e.board.size == 9


def test_genmove_plays_and_reg_genmove_does_not():
    e = engine(playouts=300)
    m = e.reg_genmove("b")
    assert e.board.moves == []
    m = e.genmove("b")
    assert e.board.moves == [("b", m)]
    m2 = e.genmove("b")                 # genmove for the side not to move works too
    assert e.board.moves[-1] == ("b", m2)


def test_analyze_emits_infos_until_stopped():
    e = engine(playouts=0)
    got = []
    stop = threading.Event()
    th = threading.Thread(target=e.analyze, args=("b", 0.05, stop, got.append))
    th.start()
    end = time.monotonic() + 60             # a guard against a hang, not a speed bound
    while len(got) < 3 and time.monotonic() < end:
        time.sleep(0.01)
    stop.set()
    th.join(60)
    assert not th.is_alive() and len(got) >= 3
    # every report is of the same growing search: the root's visits never fall
    totals = [sum(d["visits"] for d in infos) for infos in got]
    assert totals == sorted(totals) and totals[-1] > 0
    infos = got[-1]
    assert [d["order"] for d in infos] == list(range(len(infos)))
    visits = [d["visits"] for d in infos]
    assert visits == sorted(visits, reverse=True)
    for d in infos:
        assert set(d) == {"move", "visits", "winrate", "prior", "lcb", "order", "pv", "score_mean",
                          "score_stdev"}
        assert 0 <= d["lcb"] <= d["winrate"] <= 1 and 0 <= d["prior"] <= 1
        assert abs(d["score_mean"]) <= 19 * 19 + 7.5 and 0 <= d["score_stdev"] <= 19 * 19
        assert d["pv"][0] == d["move"]
    assert e.board.moves == []
    emitted = []
    m = e.genmove_analyze("b", 0.05, emitted.append)
    assert emitted and e.board.moves == [("b", m)]


@pytest.mark.parametrize("mode", ["rollouts", "net-root"])
def test_avoided_moves_stay_out_of_the_search_to_their_depth(mode):
    """lz-analyze's avoid: a move of a colour avoided until depth d is in no node's children
    in the first d plies of either search, and is one again below them; the next search
    without avoid starts afresh and opens it again."""
    e = engine(playouts=800, mode=mode, seed=3)
    for c, v in [("b", "E5"), ("w", "D5"), ("b", "D4"), ("w", "C4")]:
        e.play(c, v)
    b = e.board
    black = {b.point(v) for v in ("E4", "C5", "D6", "E6", "F5", "D3")}
    white = {b.point(v) for v in ("E4", "C5", "D6", "E3", "F4")}
    avoid = [(1, p, 1) for p in black] + [(2, p, 2) for p in white]
    emitted = []
    move = e.genmove_analyze("b", 10.0, emitted.append, avoid=avoid)
    assert b.point(move) not in black and emitted
    assert e.search.avoid[0] == tuple(sorted(avoid))
    s = e.search
    root = [ch[0] for ch in s.children()]
    assert root and not set(root) & black
    deeper = 0
    for p in root:
        replies = [ch[0] for ch in s.children((p,))]
        assert not set(replies) & white, b.vertex(p)
        for q in replies:
            third = {ch[0] for ch in s.children((p, q))}
            if third:       # ply 3: Black's avoided moves are moves again
                assert black - {p, q} <= third, (b.vertex(p), b.vertex(q))
                deeper += 1
    assert deeper, "no node expanded at ply 3"
    e.undo()
    e.genmove("b")
    assert e.search.avoid[0] == ()
    if mode == "rollouts":             # the tree opens every legal move at its root again
        assert black <= {ch[0] for ch in e.search.children()}


def test_place_free_handicap():
    e = engine()
    pts = e.place_free_handicap(4)
    assert len(pts) == 4 and sorted(e.board.stones("b")) == sorted(pts)
    assert e.board.to_move == "w"
    with pytest.raises(ValueError, match="not empty"):
        e.place_free_handicap(2)
    e.new_game(19, 7.5)
    pts = e.place_free_handicap(9)
    assert len(set(pts)) == 9 and "K10" in pts and "D4" in pts
    e.new_game(9, 7)
    with pytest.raises(ValueError):
        e.place_free_handicap(1)
    for size, n in ((5, 2), (5, 4), (6, 3), (19, 12)):      # beyond the spec's layouts too
        e.new_game(size, 0.5)
        pts = e.place_free_handicap(n)
        assert len(set(pts)) == n == len(e.board.stones("b"))
    e.new_game(19, 0.5)
    assert e.place_free_handicap(4) == fixed_points(19, 4)   # the spec's layout where it has one


# --- tactics at small budgets ------------------------------------------------------------------
# a capturing race, one liberty each: whoever moves first captures four stones (Black G5,
# White G4) and wins; any other move loses them (the position before, where the white string
# could not escape, was won by any move, so it tested nothing)
CAPTURE = (["C6", "D6", "E6", "F6", "B5", "C4", "D4", "E4", "F4"],
           ["C5", "D5", "E5", "F5", "C3", "D3", "E3", "F3", "B4"])
# Black's four stones in atari connect out at G5 (to H5, five liberties); any other move loses
# them. (The position before had them inside White's wall, lost whatever Black played.)
SAVE = (["C5", "D5", "E5", "F5", "H5", "H7", "H3"],
        ["B5", "C6", "D6", "E6", "F6", "C4", "D4", "E4", "F4"])
LADDER_WHITE = ["C4", "D3", "E3", "D5"]          # black D4 in atari, escape at E4


@pytest.mark.parametrize("seed", [1, 2])
def test_captures_the_string_that_decides_the_game(seed):
    e = position(*CAPTURE, "b", playouts=1000, seed=seed)
    assert e.genmove("b") == "G5"
    e = position(*CAPTURE, "w", playouts=1000, seed=seed)
    assert e.genmove("w") == "G4"


@pytest.mark.parametrize("seed", [1, 2])
def test_saves_its_own_string(seed):
    e = position(*SAVE, "b", playouts=1000, seed=seed)
    assert e.genmove("b") == "G5"


@pytest.mark.parametrize("seed", [1, 2])
def test_does_not_run_a_working_ladder(seed):
    e = position(["D4"], LADDER_WHITE, "b", playouts=2000, seed=seed)
    assert e.genmove("b") != "E4"


@pytest.mark.parametrize("seed", [1, 2])
def test_runs_when_a_stone_breaks_the_ladder(seed):
    # With G7 breaking the ladder the reader leaves the escape E4 among the best-rated moves
    # and the search tries it. Which move Black then plays is not asserted: Black is behind
    # whatever it plays here (win rate ~0.2 at komi 7), and even 6000 light playouts at komi
    # -20 do not rate E4 above G4, so a move assertion would test noise, not tactics.
    # crit=0: widening in rating order, which is what the ladder reader sets. (With the
    # criticality order, the default, other points of this position rank above E4 and it is
    # not opened within 2000 playouts; no move here is better than another by much.)
    e = position(["D4", "G7"], LADDER_WHITE, "b", playouts=2000, seed=seed, crit=0)
    e.reg_genmove("b")
    info = {d["move"]: d for d in e.last_infos}
    assert "E4" in info and info["E4"]["visits"] >= 20
    best_prior = max(d["prior"] for d in e.last_infos)
    assert info["E4"]["prior"] >= 0.8 * best_prior
    working = position(["D4"], LADDER_WHITE, "b", playouts=2000, seed=seed)
    working.reg_genmove("b")
    assert {d["move"]: d["prior"] for d in working.last_infos}.get("E4", 0) < 0.3 * best_prior


def test_captures_a_breaker_less_ladder_escape_with_the_ladder():
    # white to move: E4 would let D4 out, D5 starts a ladder that works
    e = position(["D4"], ["C4", "D3", "E3"], "w", playouts=2000)
    assert e.genmove("w") == "D5"


# --- resigning, passing, cleanup, scoring --------------------------------------------------------
def _played(n_each, komi):
    e = engine(playouts=400)
    e.set_komi(komi)
    row1 = ["A1", "B1", "C1", "D1", "E1", "F1", "G1", "H1", "J1", "A2"]
    row9 = ["A9", "B9", "C9", "D9", "E9", "F9", "G9", "H9", "J9", "A8"]
    for b, w in list(zip(row1, row9))[:n_each]:
        e.play("b", b)
        e.play("w", w)
    return e


def test_resigns_when_hopeless_but_not_before_move_n2_over_4():
    # komi 100: Black cannot win whatever happens
    assert _played(10, 100).genmove("b") == "resign"    # 20 moves = 81 // 4
    early = _played(9, 100)                             # 18 moves: too early
    assert early.genmove("b") != "resign"
    assert _played(10, 100).reg_genmove("b") != "resign"
    never = _played(10, 100)
    never.config.resign = 0
    assert never.genmove("b") != "resign"


def test_passes_after_opponent_pass_when_winning_by_tromp_taylor():
    e = engine(playouts=300)
    e.set_komi(0.5)
    e.setup_stones([f"E{r}" for r in range(1, 10)] + ["B5", "H5"], [])
    e.board.to_move = "w"
    e.play("w", "pass")
    assert e.genmove("b") == "pass"


DEAD_IN_BLACKS_AREA = ([f"E{r}" for r in range(1, 10)] + ["H5", "C3", "B7", "C8", "F7", "G6"],
                       ["G7", "B8"])


def dead_stones_position(mode, **kw):
    """9x9, White to move: Black owns the board, White's G7 and B8 are dead in it. mode "auto"
    searches with the net at the root (skipped without the shipped model)."""
    if mode == "auto" and not os.path.exists(_net.DEFAULT_MODEL):
        pytest.skip("shipped model missing")
    e = engine(playouts=1500, mode=mode, **kw)
    e.setup_stones(*DEAD_IN_BLACKS_AREA)
    e.board.to_move = "w"
    return e


def black_plays_until_it_passes(e, cleanup=False, limit=12):
    """Black's genmoves, White passing after each, until Black passes or `limit` moves."""
    moves = []
    for _ in range(limit):
        moves.append(e.genmove("b", cleanup=cleanup))
        if moves[-1] == "pass":
            break
        e.play("w", "pass")
    return moves


@pytest.mark.parametrize("mode", ["rollouts", "auto"])
def test_after_a_pass_it_takes_dead_stones_off_when_the_score_needs_it(mode):
    """After the opponent's pass, Black loses the area count as the board stands (komi 10.5
    above it) and wins once the dead stone at B8 is off: it takes it before passing, in
    net-root too, whose 20 root moves would not hold the capture (there it filled its own
    area, D5 C5 D6, and passed)."""
    e = dead_stones_position(mode, resign=0)
    e.set_komi(e.board.score() + e.board.komi + 10.5)
    e.play("w", "pass")
    moves = black_plays_until_it_passes(e)
    assert moves[-1] == "pass" and "B8" not in e.board.stones("w"), moves
    assert e.board.score() > 0, moves


@pytest.mark.parametrize("mode", ["rollouts", "auto"])
def test_cleanup_captures_dead_stones_before_passing(mode):
    """kgs-genmove_cleanup takes out the dead stones, then passes; in net-root too (auto on 9x9),
    where the moves that capture them are not among the net's best."""
    e = dead_stones_position(mode)
    e.set_komi(0.5)
    e.play("w", "pass")
    assert sorted(e.final_status_list("dead")) == ["B8", "G7"]
    assert e.final_score().startswith("B+")
    moves = black_plays_until_it_passes(e, cleanup=True)
    assert moves[-1] == "pass", moves
    assert e.board.stones("w") == []                # both captured before the pass
    assert e.board.score() > 0


def _walls(open_cols):
    """7x7: Black's columns A..C and White's E..G, each with two eyes (A2, A5 / G2, G5); the
    columns in open_cols left empty."""
    black = [f"{c}{r}" for c in "ABC" for r in range(1, 8)
             if f"{c}{r}" not in ("A2", "A5") and c not in open_cols]
    white = [f"{c}{r}" for c in "EFG" for r in range(1, 8)
             if f"{c}{r}" not in ("G2", "G5") and c not in open_cols]
    b = Board(7)
    b.setup(black, white)
    return b


def test_settled_means_only_dame_left():
    assert not scoring.settled(Board(9))            # nothing is decided on an empty board
    assert scoring.settled(_walls(""))              # column D: each point next to both colours
    assert not scoring.settled(_walls("C"))         # columns C and D: a point to gain for each


@pytest.mark.parametrize("mode", ["rollouts", "auto"])
def test_clean_up_on_an_empty_board_plays(mode):
    e = engine(mode=mode, playouts=300)
    assert e.genmove("w", cleanup=True) != "pass"


def test_final_status_alive_and_score_of_a_settled_board():
    e = engine()
    e.set_komi(0.5)
    e.setup_stones(["D1", "D2", "D3", "D4", "D5", "D6", "D7", "D8", "D9"],
                   ["E1", "E2", "E3", "E4", "E5", "E6", "E7", "E8", "E9"])
    assert e.final_status_list("dead") == []
    assert len(e.final_status_list("alive")) == 18
    assert e.final_score() == "W+9.5"                # 36 + 9 vs 36 + 9 + ... by area
    with pytest.raises(ValueError):
        e.final_status_list("zombie")


@pytest.mark.skipif(not os.path.exists(_net.DEFAULT_MODEL), reason="shipped model missing")
@pytest.mark.parametrize("mode", ["rollouts", "net-root"])
def test_final_status_runs_flat_monte_carlo_in_every_mode(mode):
    """final_status_list / final_score judge life and death by flat Monte-Carlo on the
    rollouts-only tree, also when the net-root search (the default from 13x13 up) plays."""
    e = engine(mode=mode)
    e.set_komi(0.5)
    black = [f"E{r}" for r in range(1, 10)] + ["H5", "C3", "B7", "C8", "F7", "G6"]
    e.setup_stones(black, ["G7", "B8"])             # two dead white stones in Black's area
    e.board.to_move = "w"
    e.play("w", "pass")
    assert e.mode == mode
    assert sorted(e.final_status_list("dead")) == ["B8", "G7"]
    assert e.final_status_list("seki") == []
    assert e.final_score() == "B+80.5"


# --- whole games -------------------------------------------------------------------------------
def _self_play(e, max_moves=200):
    colour, passes = "b", 0
    for _ in range(max_moves):
        before = e.board.copy()
        m = e.genmove(colour)
        if m == "resign":
            return "resign"
        assert m == "pass" or before.is_legal(m, colour), m
        passes = passes + 1 if m == "pass" else 0
        if passes == 2:
            return "passes"
        colour = "w" if colour == "b" else "b"
    return "cap"


def test_self_play_game_finishes():
    e = engine(playouts=150, seed=3)
    assert _self_play(e) in ("passes", "resign")


@pytest.mark.gnugo
@pytest.mark.parametrize("game", [0, 1])
def test_games_against_gnugo_are_legal_and_finish(gnugo_path, game):
    ours = "bw"[game]
    e = engine(playouts=200, seed=game + 1)
    g = GtpProcess([gnugo_path, "--mode", "gtp", "--chinese-rules", "--capture-all-dead",
                    "--positional-superko", "--level", "1", "--seed", str(game + 1)], "gnugo")
    try:
        for cmd in ("boardsize 9", "clear_board", "komi 7"):
            g.send(cmd)
        colour, passes, end = "b", 0, None
        for _ in range(250):
            if colour == ours:
                m = e.genmove(colour)
                if m == "resign":
                    end = "resign"
                    break
                ok, msg = g.ask(f"play {colour} {m}")
                assert ok, f"GNU Go refuses our move {m}: {msg}"
            else:
                m = g.send(f"genmove {colour}")
                if m.lower() == "resign":
                    end = "resign"
                    break
                e.play(colour, m)
            passes = passes + 1 if m.lower() == "pass" else 0
            if passes == 2:
                end = "passes"
                break
            colour = "w" if colour == "b" else "b"
        assert end is not None, "game did not finish in 250 moves"
    finally:
        g.close()


# --- dynamic komi ------------------------------------------------------------------------------
def test_linear_dynkomi_shrinks_from_the_handicap_to_zero():
    e = engine(dynkomi="linear", dynkomi_moves=10)
    e.set_komi(0.5)
    assert e.extra_komi() == 0.0                    # no handicap
    e.place_free_handicap(4)
    assert e.handicap == 4
    assert e.extra_komi() == pytest.approx(4 * 7 + 0.5 - 0.5)
    e.play("w", "E5")
    e.play("b", "C5")
    assert e.extra_komi() == pytest.approx(28 * 8 / 10)
    for i, v in enumerate(["A9", "A1", "C9", "C1", "E9", "E1"]):
        e.play("wb"[i % 2], v)
    assert e.extra_komi() == pytest.approx(28 * 2 / 10)
    e.play("w", "G9")
    e.play("b", "G1")
    assert e.extra_komi() == 0.0                    # after 10 moves: the real komi again
    assert e.board.komi == 0.5
    off = engine(dynkomi="off")
    off.set_komi(0.5)
    off.place_free_handicap(4)
    assert off.extra_komi() == 0.0                  # --dynkomi off
    e.new_game(9, 0.5)
    assert e.handicap == 0 and e.extra_komi() == 0.0


def test_auto_dynkomi_only_when_taking_stones_on_19x19():
    """--dynkomi auto (the default): the linear extra komi on 19x19 once the engine has played
    Black in a handicap game, never as White and never on smaller boards."""
    assert EngineConfig().dynkomi == "auto"
    for size, expect in ((19, True), (9, False)):
        e = engine(playouts=100, mode="rollouts")
        e.new_game(size, 0.5)
        e.place_free_handicap(3)
        assert e.extra_komi() == 0.0                # no genmove yet: the engine's side unknown
        m = e.genmove("w")                          # the engine gives the stones: off
        assert e.extra_komi() == 0.0 and m != "resign"
        e.genmove("b")                              # now it takes them
        assert (e.extra_komi() > 0) == expect, size
        if expect:
            n = len(e.board.moves)
            assert e.extra_komi() == pytest.approx((3 * 7 + 0.5 - 0.5) * (200 - n) / 200)
    explicit = engine(playouts=100, mode="rollouts", dynkomi="linear")
    explicit.new_game(9, 0.5)
    explicit.place_free_handicap(3)
    assert explicit.extra_komi() > 0                # linear: whoever plays


def test_linear_dynkomi_is_what_the_search_plays_against():
    """With 4 handicap stones and komi 0.5 on 9x9 White is lost: its win rate is low with the
    real komi (0.20 at 1,500 playouts), informative with the extra komi (0.44); White does not
    resign while it applies."""
    rates = {}
    for mode in ("off", "linear"):
        e = engine(playouts=1500, dynkomi=mode, resign=0.3)
        e.set_komi(0.5)
        e.place_free_handicap(4)
        m = e.genmove("w")
        rates[mode] = e.last_infos[0]["winrate"]
        assert m != "resign"                        # before move N*N/4 anyway
        assert e.board.komi == 0.5
    assert rates["off"] < 0.25 < rates["linear"]


def test_dynkomi_flags():
    cfg = engine_config(["--dynkomi", "linear", "--dynkomi-moves", "30"])
    assert cfg.dynkomi == "linear" and cfg.dynkomi_moves == 30
    assert engine_config([]).dynkomi == "auto"
    with pytest.raises(ValueError, match="dynkomi"):
        EngineConfig(dynkomi="adaptive").validate()
    with pytest.raises(ValueError, match="dynkomi-moves"):
        EngineConfig(dynkomi_moves=-1).validate()


# --- the search protocol -------------------------------------------------------------------------
class _FlatNet:
    """A stand-in for the net: two candidate moves, value 0."""

    def priors(self, board, include_pass=True):
        return {"E5": 0.6, "C3": 0.4}

    def child_values(self, board, vertices):
        return {v: 0.0 for v in vertices}


def test_both_searches_meet_the_search_protocol():
    """The engine drives tree.Search and net-root's RootSearch through SearchProtocol alone; a
    RootSearch passes configure() on to its child trees, present and future."""
    from gammago.search import tree
    from gammago.search.net_root import RootSearch
    from gammago.search.protocol import SearchProtocol
    made = []

    def make():
        made.append(tree.Search(5000, seed=1))
        return made[-1]

    rs = RootSearch(_FlatNet(), make)
    assert isinstance(tree.Search(5000), SearchProtocol) and isinstance(rs, SearchProtocol)
    with pytest.raises(ValueError):
        rs.ownership()                      # no position yet
    rs.configure(expand_visits=3)           # before the child trees exist
    rs.set_root(Board(9))
    rs.run(1, 64)
    assert len(made) == 2 and all(s.params["expand_visits"] == 3 for s in made)
    rs.configure(pw_base=20.0)              # and after
    assert all(s.params["pw_base"] == 20.0 and s.params["expand_visits"] == 3 for s in made)
    assert rs.playouts == 64 and rs.ownership().shape == (9, 9)


def test_root_search_pools_the_child_trees_spreads():
    """net-root's spreads pool the child trees' playouts: from each tree's count, mean and
    standard deviation, the standard deviation of all their playouts together."""
    import numpy as np
    from gammago.search.net_root import RootSearch
    rng = np.random.default_rng(5)

    class Kid:
        def __init__(self, owners):
            self.x = owners
            self.owned = len(owners)

        def ownership(self):
            return self.x.mean(axis=0)

        def ownership_stdev(self):
            return self.x.std(axis=0)

        def score_stdev(self):
            return float(self.x.sum(axis=(1, 2)).std())

    parts = [rng.choice([-1.0, 0.0, 1.0], size=(n, 5, 5), p=p)
             for n, p in ((40, (0.7, 0.1, 0.2)), (15, (0.2, 0.0, 0.8)), (0, (0.5, 0, 0.5)))]
    rs = RootSearch(_FlatNet(), lambda: None)
    with pytest.raises(ValueError):
        rs.ownership_stdev()                # no position yet
    rs.board = Board(5)
    rs.kids = [{"search": Kid(x)} for x in parts]
    every = np.concatenate(parts)
    np.testing.assert_allclose(rs.ownership_stdev(), every.std(axis=0), atol=1e-12)
    assert rs.score_stdev() == pytest.approx(every.sum(axis=(1, 2)).std(), abs=1e-9)
    rs.kids = [{"search": Kid(parts[2])}]   # no playout: zeros
    assert not rs.ownership_stdev().any() and rs.score_stdev() == 0.0
