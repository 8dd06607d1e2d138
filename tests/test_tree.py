"""The UCT tree (pyx/search/tree.pyx): pool cap, accounting, widening, reuse, superko, threads."""
import numpy as np
import pytest

from gammago.go.board import Board
from gammago.search.tree import DEFAULTS, NODE_BYTES, Search

from engine_args import engine_config, engine_parser


def _children(s):
    return {m: (v, w) for m, v, w, _ in s.children()}


def test_visits_add_up_and_fixed_playouts_are_exact():
    b = Board(9, 7)
    s = Search(100000, seed=1)
    s.set_root(b)
    s.run(1, 3000)
    assert s.playouts == 3000
    assert s.root_visits == 3000
    kids = s.children()
    assert sum(v for _, v, _, _ in kids) == 3000      # the root is open from the start
    assert all(0.0 <= w <= 1.0 for _, _, w, _ in kids)
    assert s.nodes > 1 + len(kids)                     # the tree grew below the root


def test_same_seed_same_tree_other_seed_other_tree():
    b = Board(9, 7)
    b.play("E5")
    stats = []
    for seed in (5, 5, 6):
        s = Search(100000, seed=seed)
        s.set_root(b)
        s.run(1, 2000)
        stats.append(sorted(_children(s).items()))
    assert stats[0] == stats[1]
    assert stats[0] != stats[2]


def test_pool_cap_stops_growth_without_crashing():
    b = Board(9, 7)
    s = Search(1000, seed=1, expand_visits=2)
    s.set_root(b)
    s.run(1, 20000)
    assert s.full
    assert s.nodes <= s.capacity == 1000
    assert s.playouts == 20000 and s.root_visits == 20000


def test_limit_nodes_caps_a_tree_below_its_pool():
    b = Board(9, 7)
    s = Search(20000, seed=1, expand_visits=2)
    s.limit_nodes(1500)
    assert s.capacity == 1500
    s.set_root(b)
    s.run(1, 3000)
    assert s.full and s.nodes <= 1500
    used = s.nodes
    s.limit_nodes(100)                    # never below what the tree holds
    assert s.capacity == used
    s.limit_nodes(10 ** 9)                # never beyond the pool
    assert s.capacity == 20000 and not s.full
    s.run(1, 3000)                        # grows again, into the rest of the pool
    assert s.nodes > used and s.nodes <= 20000


def test_progressive_widening_schedule():
    b = Board(9, 7)
    s = Search(100000, seed=2, pw_init=1, pw_base=40, pw_factor=1.4)
    s.set_root(b)
    s.run(1, 1000)
    visited = sum(1 for _, v, _, _ in s.children() if v > 0)
    # t_0 = 0, t_{n+1} = t_n + 40 * 1.4**n: children open by 1000 visits
    t, step, opened = 0.0, 40.0, 1
    while t + step <= 1000:
        t += step
        step *= 1.4
        opened += 1
    assert visited <= opened
    assert visited >= 2
    # the children are in rating order, and the visited ones are a prefix of it
    kids = s.children()
    ratings = [r for _, _, _, r in kids]
    assert ratings == sorted(ratings, reverse=True) and ratings[0] == pytest.approx(1.0)
    assert all(v == 0 for _, v, _, _ in kids[opened:])


def test_tree_reuse_keeps_the_subtree():
    b = Board(9, 7)
    s = Search(200000, seed=3)
    s.set_root(b)
    s.run(1, 4000)
    best = max(s.children(), key=lambda c: c[1])
    best_move, best_visits = best[0], best[1]
    reply = max(s.children((best_move,)), key=lambda c: c[1])
    b.play(b.vertex(best_move))
    b.play(b.vertex(reply[0]))
    kept = s.set_root(b, [best_move, reply[0]])
    assert kept == reply[1] > 0
    s.run(1, 1000)
    assert s.root_visits == kept + 1000
    # a move the tree does not know clears it
    b2 = Board(9, 7)
    b2.play("A1")
    assert s.set_root(b2, [b2.point("A1")]) == 0
    assert s.set_root(b2, None) == 0


def _subtree(s, path=(), depth=3):
    """{path: children} of every node with visits down to `depth` plies below path."""
    out = {tuple(path): s.children(path)}
    if depth:
        for p, v, _, _ in s.children(path):
            if v > 20:
                out.update(_subtree(s, tuple(path) + (p,), depth - 1))
    return out


def test_reuse_takes_no_memory_keeps_the_subtree_and_frees_the_rest():
    """Subtree reuse compacts the pool in place: no allocation (fail_allocs makes every one
    fail, as malloc would without memory), the same statistics at every node of the subtree,
    fewer chunks held, and a search that goes on from it."""
    b = Board(9, 7)
    s = Search(400000, seed=3, expand_visits=2)
    s.set_root(b)
    s.run(1, 8000)
    assert s.memory >= 3 * s.memory_of_chunks(1)
    a = max(s.children(), key=lambda c: c[1])[0]
    r = max(s.children((a,)), key=lambda c: c[1])
    expect = {k[2:]: v for k, v in _subtree(s, (a, r[0])).items()}
    before = s.memory
    b.play(b.vertex(a))
    b.play(b.vertex(r[0]))
    s.fail_allocs(1 << 20)
    kept = s.set_root(b, [a, r[0]])
    assert kept == r[1] > 0
    assert _subtree(s) == expect
    assert s.memory < before and s.nodes < s.memory // NODE_BYTES
    s.fail_allocs(0)
    s.run(1, 1000)
    assert s.root_visits == kept + 1000
    # a move the tree does not know clears it to the root's chunk
    b2 = Board(9, 7)
    b2.play("A1")
    assert s.set_root(b2, [b2.point("A1")]) == 0
    assert s.nodes == 1 and s.memory == s.memory_of_chunks(1)


def test_trees_sharing_a_budget_stay_within_it():
    """Trees made with one NodeBudget hold at most its chunks together (each at least its
    first): the address space taken follows the budget, not max_nodes."""
    from gammago.search.tree import NodeBudget, CHUNK_BYTES, NODES_PER_CHUNK
    budget = NodeBudget(6 * NODES_PER_CHUNK)
    trees = [Search(50_000_000, seed=i, budget=budget) for i in range(4)]
    assert budget.used_bytes == 4 * CHUNK_BYTES          # first chunks only, not 50 M nodes each
    b = Board(9, 7)
    for t in trees:
        t.set_root(b)
    trees[0].run(1, 40000)
    assert trees[0].full and budget.used_nodes <= budget.limit_nodes
    assert trees[0].memory == 3 * CHUNK_BYTES
    trees[1].run(1, 40000)            # no chunk left: it fills its first one and searches on
    assert trees[1].full and trees[1].memory == CHUNK_BYTES and trees[1].root_visits == 40000
    assert budget.used_bytes == 6 * CHUNK_BYTES
    trees[0].clear()                                      # gives its chunks back
    assert budget.used_bytes == 4 * CHUNK_BYTES
    trees[1].run(1, 20000)
    assert trees[1].memory > CHUNK_BYTES
    del trees[2:]
    assert budget.used_nodes <= 4 * NODES_PER_CHUNK


def test_graft_copies_a_subtree_of_another_tree():
    """graft makes a tree the subtree of another tree below a path: the same statistics at every
    node, a search that goes on from them, and at most the tree's node limit of it."""
    b = Board(9, 7)
    src = Search(200000, seed=3)
    src.set_root(b)
    src.run(1, 4000)
    a = max(src.children(), key=lambda c: c[1])[0]
    r = max(src.children((a,)), key=lambda c: c[1])[0]
    b.play(b.vertex(a))
    b.play(b.vertex(r))
    dst = Search(200000, seed=4)
    dst.set_root(b)
    kept = dst.graft(src, (a, r))
    assert kept == next(v for p, v, _, _ in src.children((a,)) if p == r) > 0
    assert dst.root_visits == kept
    assert dst.children() == src.children((a, r))
    for p, v, _, _ in dst.children():
        if v > 50:
            assert dst.children((p,)) == src.children((a, r, p))
    assert dst.pv() == src.pv((a, r))[2:]
    used = dst.nodes
    dst.run(1, 1000)
    assert dst.root_visits == kept + 1000 and dst.nodes >= used
    # a node limit below the subtree's size keeps the top of it, whole blocks of children
    small = Search(200000, seed=4)
    small.limit_nodes(1000)
    small.set_root(b)
    assert small.graft(src, (a, r)) == kept
    assert small.nodes <= 1000 and small.children() == src.children((a, r))
    small.run(1, 500)
    assert small.root_visits == kept + 500
    # a path the other tree does not have clears the tree
    assert dst.graft(src, (a, r, a)) == 0 and dst.root_visits == 0 and dst.nodes == 1
    with pytest.raises(ValueError):
        dst.graft(dst, ())


def test_work_batch_runs_a_worker_for_n_playouts():
    """work_batch: worker i runs n playouts and returns; two threads with their own workers may
    run batches on one tree at once; the search's playout cap still ends a batch early."""
    import threading
    b = Board(9, 7)
    s = Search(100000, seed=5)
    s.set_root(b)
    s.prepare(2, 0)
    assert s.work_batch(0, 16) == 16 and s.playouts == 16
    ts = [threading.Thread(target=lambda i=i: [s.work_batch(i, 50) for _ in range(10)])
          for i in range(2)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert s.playouts == 1016 and s.root_visits == 1016
    s.prepare(1, 30)
    assert s.work_batch(0, 100) == 30
    with pytest.raises(ValueError):
        s.work_batch(1, 1)


def test_superko_moves_are_not_children():
    # Black takes a ko, both pass: the recapture is legal by simple ko but repeats a position
    b = Board(5, 0.5)
    b.setup(["C4", "B3", "C2"], ["C3", "D4", "E3", "D2"])
    b.to_move = "b"
    b.play("D3")
    b.play("pass")
    b.play("pass")
    assert b.check_move("C3", "w", superko=False) is None
    assert b.check_move("C3", "w") == "superko"
    s = Search(10000, seed=1)
    s.set_root(b)
    s.run(1, 50)
    moves = {b.vertex(m) for m, _, _, _ in s.children()}
    assert "C3" not in moves and "pass" in moves and "A1" in moves


def test_every_tree_move_is_legal():
    b = Board(7, 7)
    for v in ("D4", "C3", "E5", "C5", "D5", "D3", "E3", "C4"):
        b.play(v)
    s = Search(100000, seed=4, expand_visits=5)
    s.set_root(b)
    s.run(1, 3000)
    for m, v, _, _ in s.children():
        if v < 50:
            continue
        nb = b.copy()
        nb.play(nb.vertex(m))
        for m2, _, _, _ in s.children((m,)):
            assert nb.is_legal(nb.vertex(m2)), (nb.vertex(m), nb.vertex(m2))
            assert not (m2 and nb.is_eye(nb.vertex(m2), nb.to_move))


def test_two_threads_same_accounting():
    b = Board(9, 7)
    s = Search(200000, seed=1)
    s.set_root(b)
    s.run(2, 6000)
    assert s.playouts == 6000
    assert s.root_visits == 6000
    assert sum(v for _, v, _, _ in s.children()) == 6000
    own = s.ownership()
    assert own.shape == (9, 9) and np.all(np.abs(own) <= 1)


def test_deadline_and_stop():
    import threading
    import time
    b = Board(9, 7)
    s = Search(200000, seed=1)
    s.set_root(b)
    t = s.run(1, 0, 0.2)
    # the deadline ended it (no playout cap was given); how long past it depends on the load
    assert s.stopped and t >= 0.2 and s.playouts > 0
    s.prepare(1)                         # no cap, no deadline: only stop() ends it
    th = threading.Thread(target=s.work, args=(0,))
    th.start()
    deadline = time.monotonic() + 60     # (against a hang only)
    while s.playouts < 50 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert s.playouts >= 50 and th.is_alive()
    s.stop()
    th.join(60)
    assert not th.is_alive() and s.stopped
    n = s.playouts
    time.sleep(0.05)
    assert s.playouts == n               # nothing runs on after it


def test_bad_parameters_are_refused():
    with pytest.raises(ValueError, match="unknown search parameter"):
        Search(10000, nonsense=1)
    with pytest.raises(ValueError):
        Search(10)
    s = Search(10000)
    with pytest.raises(ValueError, match="set_root"):
        s.prepare(1, 10)
    with pytest.raises(ValueError, match="gamma table"):
        s.use_gammas(np.ones(5))
    assert set(DEFAULTS) >= {"expand_visits", "pw_base", "pw_factor", "bonus_weight", "bonus_equiv"}


def test_gamma_prior_orders_children():
    from gammago.moves import features as F
    b = Board(9, 7)
    b.play("E5")
    table = np.ones(F.N_FEATURES)
    # make every line-1 move (edge level 1) much stronger than anything else
    table[F.GROUP_BASES[list(F.GROUP_NAMES).index("edge")] + 1] = 50.0
    s = Search(10000, seed=1)
    s.use_gammas(table)
    assert s.prior == "gamma"
    s.set_root(b)
    s.run(1, 10)
    first = s.children()[0]
    v = b.vertex(first[0])
    assert v[0] in "AJ" or v[1:] in ("1", "9"), v


def test_ladder_reader_rates_escapes():
    # D4 is in atari; E4 runs into a ladder that works unless G7 breaks it
    def rating_of(black, move):
        b = Board(9, 7)
        b.setup(black, ["C4", "D3", "E3", "D5"])
        b.to_move = "b"
        s = Search(10000, seed=1)
        s.set_root(b)
        s.run(1, 1)
        return {b.vertex(m): r for m, _, _, r in s.children()}[move]
    assert rating_of(["D4"], "E4") < 0.1
    assert rating_of(["D4", "G7"], "E4") == pytest.approx(1.0)


def test_ratings_are_the_prior_log_scaled():
    """A child's rating is 1 + log10(prior / the best sibling's prior) / 4, never below 0: the
    scale that beat prior / best by +288 Elo (docs/notebook/experiments/search-settings.md)."""
    from gammago.moves import features as F
    b = Board(9, 7)
    b.play("E5")
    table = np.ones(F.N_FEATURES)
    corner = F.GROUP_BASES[list(F.GROUP_NAMES).index("edge")] + 1      # edge:1/1
    for ratio, want in ((100.0, 0.5), (1e6, 0.0)):
        table[corner] = ratio         # a corner point's prior this many times another's
        s = Search(10000, seed=1)
        s.use_gammas(table)
        s.set_root(b)
        s.run(1, 1)
        got = {b.vertex(m): r for m, _, _, r in s.children()}
        assert got["A1"] == pytest.approx(1.0) and got["J9"] == pytest.approx(1.0)
        assert got["C3"] == pytest.approx(want, abs=1e-6) and got["F6"] == got["C3"]
        assert min(got.values()) >= 0


# --- helpers, RAVE ----------------------------------------------------------------------------
def _gamma_search(size=9, rollouts="gamma", seed=1, **kw):
    """A Search with the shipped gammas as prior (and as rollouts unless rollouts="light")."""
    from gammago.moves import gammas
    table = gammas.load_default(size).table
    s = Search(300000, seed=seed, **kw)
    s.use_gammas(table)
    if rollouts == "gamma":
        s.use_gamma_rollouts(table)
    return s


@pytest.mark.parametrize("param, flag", [("rave", ["--rave", "on"]), ("lgrf", ["--lgrf", "on"]),
                                         ("score_bonus", ["--score-bonus", "0.1"]),
                                         ("rating", ["--rating", "max"])])
def test_retired_search_options_are_gone_from_the_tree_and_the_engine(param, flag):
    """RAVE, LGRF, the score bonus and the other rating scales lost their matches and were
    retired (docs/notebook/experiments/rave-lgrf.md, score-bonus.md, search-settings.md): the tree
    refuses their parameters, the engine their flags; a node is 32 bytes (24 with no score)."""
    from gammago.search import tree
    with pytest.raises(ValueError, match="unknown search parameter"):
        Search(10000, **{param: 1})
    p = engine_parser()
    with pytest.raises(SystemExit):
        p.parse_args(flag)
    assert tree.NODE_BYTES == 32


# --- criticality in the widening order ------------------------------------------------------------
def _crit_search(crit, seed=5):
    return _gamma_search(9, "gamma", seed, crit=crit, expand_visits=8)


def _fight():
    b = Board(9, 7)
    for v in "E5 C4 D3 C3 D4 D5 C5 E6 F5 F6 G6 G7 B5 E4".split():
        b.play(v)
    return b


def test_criticality_is_gathered_only_when_asked_and_is_a_probability_gap():
    b = _fight()
    off = _crit_search(0.0)
    off.set_root(b)
    off.run(1, 2000)
    assert not off.criticality().any()
    on = _crit_search(2.0)
    on.set_root(b)
    on.run(1, 2000)
    c = on.criticality()
    assert c.shape == (9, 9) and (c >= 0).all() and (c <= 1).all()
    assert c.max() > 0.05                    # some points decide the game in this fight
    # a stone whose owner decides the game is critical; the criticality of a point follows the
    # ownership statistics: recomputed from a second search it agrees closely
    again = _crit_search(2.0, seed=6)
    again.set_root(b)
    again.run(1, 4000)
    assert np.corrcoef(c.ravel(), again.criticality().ravel())[0, 1] > 0.8
    with pytest.raises(ValueError, match="crit"):
        Search(10000, crit=-1)


def test_criticality_opens_critical_children_before_better_rated_ones():
    b = _fight()
    plain = _crit_search(0.0)
    plain.set_root(b)
    plain.run(1, 3000)
    heavy = _crit_search(50.0)                # criticality decides the order almost alone
    heavy.set_root(b)
    heavy.run(1, 3000)
    crit = heavy.criticality()
    kids = heavy.children()
    opened = [m for m, v, _, _ in kids if v > 0]
    closed = [m for m, v, _, _ in kids if v == 0 and m != 0]
    order_plain = [m for m, v, _, _ in plain.children() if v > 0]
    assert opened != order_plain[:len(opened)]     # not the rating order any more

    def crit_at(m):
        x, y = b.vertex(m)[0], int(b.vertex(m)[1:])
        return crit[y - 1, "ABCDEFGHJ".index(x)]
    assert np.mean([crit_at(m) for m in opened if m]) > np.mean([crit_at(m) for m in closed])


@pytest.mark.parametrize("threads", [1, 2])
def test_criticality_widening_keeps_every_child_once(threads):
    b = _fight()
    s = _crit_search(2.0)
    s.set_root(b)
    s.run(threads, 6000)
    assert s.root_visits == 6000 == sum(v for _, v, _, _ in s.children())

    def check(path, depth):
        kids = s.children(path)
        moves = [m for m, _, _, _ in kids]
        assert len(moves) == len(set(moves))          # a swap never duplicates or loses a child
        for m, v, _, _ in kids:
            if depth < 3 and v >= 40:
                check(path + (m,), depth + 1)
        return moves
    root_moves = check((), 0)
    plain = _crit_search(0.0)
    plain.set_root(b)
    plain.run(1, 10)
    assert sorted(root_moves) == sorted(m for m, _, _, _ in plain.children())


def test_engine_crit_flag_reaches_the_tree():
    from gammago.engine.engine import Engine
    cfg = engine_config(["--crit", "1.5", "--playouts", "600", "--mode", "rollouts"])
    e = Engine(cfg)
    e.new_game(9, 7)
    assert e.search.params["crit"] == 1.5
    assert e.genmove("b") not in ("pass", "resign")
    with pytest.raises(ValueError, match="crit"):
        engine_config(["--crit", "-1"])


def test_engine_crit_default_goes_by_board_size():
    from gammago.engine.settings import CRIT, CRIT_MAX_SIZE
    from gammago.engine.engine import EngineConfig, Engine
    e = Engine(EngineConfig(playouts=200, mode="rollouts"))
    for size, want in ((9, CRIT), (CRIT_MAX_SIZE - 1, CRIT), (CRIT_MAX_SIZE, 0.0), (19, 0.0)):
        e.new_game(size, 7)
        assert e.search.params["crit"] == want, size
    pinned = Engine(EngineConfig(playouts=200, mode="rollouts", crit=0.5))
    pinned.new_game(19, 7.5)
    assert pinned.search.params["crit"] == 0.5


def test_engine_pw_base_default_goes_by_board_size():
    from gammago.engine.settings import PW_BASE, PW_BASE_MAX_SIZE
    from gammago.engine.engine import EngineConfig, Engine
    e = Engine(EngineConfig(playouts=200, mode="rollouts"))
    for size, want in ((9, PW_BASE), (PW_BASE_MAX_SIZE - 1, PW_BASE),
                       (PW_BASE_MAX_SIZE, DEFAULTS["pw_base"]), (19, DEFAULTS["pw_base"])):
        e.new_game(size, 7)
        assert e.search.params["pw_base"] == want, size
    assert PW_BASE != DEFAULTS["pw_base"]
    pinned = Engine(EngineConfig(playouts=200, mode="rollouts", pw_base=25.0))
    pinned.new_game(9, 7)
    assert pinned.search.params["pw_base"] == 25.0
    assert engine_config(["--pw-base", "0"]).pw_base == 0.0
    with pytest.raises(ValueError, match="pw-base"):
        engine_config(["--pw-base", "-1"])


# A 9x9 position where White's 16 stones inside Black's wall (one eye at D6) are dead: every
# rollout takes them, so the mercy rule ends nearly all of them.
DEAD_GROUP = ["..X...X..",
              "XXXXXXXXX",
              "XOOOOOOX.",
              "XOO.OOOX.",
              "XOOOOO.X.",
              "XXXXXXXXX",
              "........X",
              "..X......",
              "........."]


def _dead_group_board():
    b = Board(9, 7)
    black, white = [], []
    for i, row in enumerate(DEAD_GROUP):
        for j, ch in enumerate(row):
            v = "ABCDEFGHJ"[j] + str(9 - i)
            (black if ch == "X" else white if ch == "O" else []).append(v)
    b.setup(black, white)
    b.to_move = "w"
    return b


def test_mercy_rule_decides_rollouts_and_counts_owners_of_played_out_ones_only():
    b = _dead_group_board()
    res = {}
    for mercy in (0, 5, 1000):
        s = Search(200000, seed=4, mercy=mercy, crit=2.0)
        s.set_root(b)
        s.run(1, 3000)
        assert s.root_visits == s.playouts == 3000
        kids = s.children()
        winrate = sum(v * w for _, v, w, _ in kids) / sum(v for _, v, _, _ in kids)
        crit = s.criticality()
        assert (crit >= 0).all() and (crit <= 1).all()
        res[mercy] = (winrate, s.owned, s.ownership())
    # White (to move) is lost whatever the rule; taking the dead group decides nearly every
    # rollout under a threshold of 5, none under one no game reaches
    for mercy, (winrate, owned, own) in res.items():
        assert winrate < 0.1, (mercy, winrate)
    assert res[0][1] == res[1000][1] == 3000 and res[5][1] < 300
    assert res[0][0] == res[1000][0] and (res[0][2] == res[1000][2]).all()   # never reached: no change
    # the owners come from played-out rollouts only: a rollout the rule ended may leave the
    # dead stones standing, and they would count as White's
    assert res[0][2][4:7, 1:7].mean() > 0.95 and res[1000][2][4:7, 1:7].mean() > 0.95
    if res[5][1]:
        assert res[5][2][4:7, 1:7].mean() > 0.95
    with pytest.raises(ValueError, match="mercy"):
        Search(10000, mercy=-1)


def test_engine_mercy_flag_default_by_size_and_dead_stones_from_played_out_rollouts():
    from gammago.engine.settings import MERCY, mercy_for
    from gammago.engine.engine import Engine, EngineConfig
    assert DEFAULTS["mercy"] == 0
    e = Engine(EngineConfig(playouts=200, mode="rollouts"))
    for size in (5, 9, 13, 19):
        e.new_game(size, 7)
        assert e.search.params["mercy"] == MERCY.get(size, 0) == mercy_for(size), size
    with pytest.raises(ValueError, match="--mercy"):
        engine_config(["--mercy", "-1"])
    e = Engine(engine_config(["--mercy", "4", "--playouts", "600", "--mode", "rollouts"]))
    e.new_game(9, 7)
    assert e.search.params["mercy"] == 4
    b = _dead_group_board()
    e.setup_stones(b.stones("b"), b.stones("w"))
    e.genmove("w")
    # the rule ended nearly every playout: the search leaves no ownership, and the dead stones
    # come from a status search that plays its rollouts out, the game's setting given back
    assert e.search.owned < 0.25 * e.search.playouts and e.last_owner is None
    assert set(b.stones("w")) <= set(e.final_status_list("dead"))
    assert e.search.params["mercy"] == 4


def test_ownership_and_score_spread_are_those_of_the_playouts():
    """ownership_stdev() and score_stdev() are the standard deviations of the playouts' final
    owners and area differences: the playouts, read one at a time from the running totals,
    give the same numbers."""
    b = Board(9, 7)
    for v in ["E5", "D5", "D4", "C4", "E4", "D6"]:
        b.play(v)
    s = Search(200000, seed=3)
    s.set_root(b)
    s.prepare(1)
    assert s.score_stdev() == 0.0 and not s.ownership_stdev().any()     # no playout yet
    before, owners = np.zeros((9, 9)), []
    for _ in range(200):
        assert s.work_batch(0, 1) == 1
        total = s.ownership() * s.owned
        owners.append(total - before)
        before = total
    owners = np.array(owners)
    assert set(np.unique(np.round(owners, 9))) <= {-1.0, 0.0, 1.0}
    np.testing.assert_allclose(s.ownership_stdev(), owners.std(axis=0), atol=1e-9)
    assert s.score_stdev() == pytest.approx(owners.sum(axis=(1, 2)).std(), abs=1e-9)
    assert 0 < s.score_stdev() < 81


def test_a_node_keeps_the_mean_and_spread_of_its_playouts_scores():
    """Every node adds up its playouts' final area differences: played one at a time, the
    root's and each root child's mean and spread are those of the playouts that went through
    it (each playout's score read from the ownership totals, its child from the visits)."""
    b = Board(9, 7)
    for v in ["E5", "D5", "D4", "C4", "E4", "D6"]:
        b.play(v)
    s = Search(200000, seed=4, mercy=0)
    s.set_root(b)
    s.prepare(1)
    assert s.score() is None and s.child_scores() == {}
    before, visits = 0.0, {}
    by_child = {}
    scores = []
    for _ in range(300):
        assert s.work_batch(0, 1) == 1
        total = float(s.ownership().sum()) * s.owned
        score, before = total - before, total
        scores.append(score)
        now = {m: v for m, v, _, _ in s.children()}
        moved = [m for m in now if now[m] != visits.get(m, 0)]
        assert len(moved) == 1
        by_child.setdefault(moved[0], []).append(score)
        visits = now
    mean, sd = s.score()
    assert mean == pytest.approx(np.mean(scores), abs=1e-3)
    assert sd == pytest.approx(np.std(scores), abs=1e-3)
    got = s.child_scores()
    assert set(got) == set(by_child)
    for m, xs in by_child.items():
        assert got[m][0] == pytest.approx(np.mean(xs), abs=1e-3)
        assert got[m][1] == pytest.approx(np.std(xs), abs=1e-3)
    assert len({round(m, 3) for m, _ in got.values()}) > 1     # the moves are told apart


@pytest.mark.parametrize("threads", [1, 2])
def test_the_root_score_is_the_visit_weighted_mean_of_its_childrens(threads):
    b = Board(9, 7)
    b.play("E5")
    s = Search(200000, seed=2)
    s.set_root(b)
    s.run(threads, 4000)
    kids = {m: v for m, v, _, _ in s.children()}
    got = s.child_scores()
    weighted = sum(kids[m] * mean for m, (mean, _) in got.items()) / sum(kids.values())
    assert s.score()[0] == pytest.approx(weighted, abs=1e-3)
    # a score survives reuse: the kept child's becomes the new root's
    best = max(kids, key=kids.get)
    kept = got[best]
    b.play(b.vertex(best))
    s.set_root(b, [best])
    assert s.score() == pytest.approx(kept, abs=1e-6)
