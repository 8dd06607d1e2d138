"""The ONNX policy/value net at run time: the runtime's checks on model files (gammago.net.runtime),
symmetry handling, the engine's net modes, net-root's search (gammago.search.net_root), the policy
players (gammago.engine.players). The net's predict scoring: tests/test_predict_net.py; the
trainer's tests: tests/test_train_net.py."""
import os
import shutil

import numpy as np
import pytest

from gammago.net import runtime as N
from gammago.net import planes as P
from gammago.engine import players
from gammago.search.net_root import ROOT_LAMBDA, RootSearch
from gammago.go.board import Board

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHIPPED = N.DEFAULT_MODEL

needs_model = pytest.mark.skipif(not os.path.exists(SHIPPED), reason="shipped model missing")


def position(size, moves=("D4", "F6", "C6", "pass", "E3")):
    b = Board(size)
    for v in moves:
        b.play(v)
    return b


def test_cuda_probe_is_quiet(capfd):
    N._PROVIDERS = None
    provs = N.providers()
    assert provs[-1] == "CPUExecutionProvider"
    err = capfd.readouterr()
    assert "Failed" not in err.err + err.out and "cuda" not in (err.err + err.out).lower()


class _FakeOrt:
    """onnxruntime as a GPU build shows it: CUDA offered (`offers`: False for the CPU build);
    `loads` says whether a model opened on CUDA gets it."""

    __version__ = "1.30.0"

    def __init__(self, real, loads, offers=True):
        self.real, self.loads, self.offers, self.opened = real, loads, offers, []

    def get_available_providers(self):
        return (["CUDAExecutionProvider"] if self.offers else []) + ["CPUExecutionProvider"]

    def set_default_logger_severity(self, level):
        pass

    def SessionOptions(self):
        return self.real.SessionOptions()

    def InferenceSession(self, model, sess_options=None, providers=None):
        self.opened.append(model)
        got = providers if self.loads else ["CPUExecutionProvider"]

        class Session:
            def get_providers(self):
                return list(got)
        return Session()


@pytest.mark.parametrize("loads, gpu", [(True, True), (False, True), (False, False)])
def test_cuda_probe_needs_no_onnx_package_and_says_why_it_falls_back(monkeypatch, caplog, loads, gpu):
    """A plain install on a GPU machine has onnxruntime-gpu but not the onnx package: the probe
    opens the shipped model itself, so CUDA is used when it loads; where the machine has a GPU
    and CUDA does not load, the log says the net runs on the CPU and why; without a GPU it says
    nothing of CUDA."""
    import sys
    real = N._ort()
    fake = _FakeOrt(real, loads)
    monkeypatch.setattr(N, "_ort", lambda: fake)
    monkeypatch.setattr(N, "_nvidia_gpu_present", lambda: gpu)
    monkeypatch.setitem(sys.modules, "onnx", None)          # import onnx fails
    monkeypatch.setattr(N, "_PROVIDERS", None)
    with caplog.at_level("WARNING", logger="gammago"):
        provs = N.providers()
    assert fake.opened and os.path.isfile(fake.opened[0])
    if loads:
        assert provs == ["CUDAExecutionProvider", "CPUExecutionProvider"]
        assert "did not load" not in caplog.text
    else:
        assert provs == ["CPUExecutionProvider"]
        said = "did not load" in caplog.text and "runs on the CPU" in caplog.text
        assert said == gpu and ("CUDA" in caplog.text) == gpu
    monkeypatch.setattr(N, "_PROVIDERS", None)


@pytest.mark.parametrize("gpu", [True, False])
def test_cpu_build_of_onnxruntime_on_a_gpu_machine_is_named(monkeypatch, caplog, gpu):
    """onnxruntime's CPU build (it offers no CUDA provider) on a machine with an NVIDIA GPU: the
    net runs on the CPU and the log says why and what to install; without a GPU, nothing."""
    fake = _FakeOrt(N._ort(), loads=False, offers=False)
    monkeypatch.setattr(N, "_ort", lambda: fake)
    monkeypatch.setattr(N, "_nvidia_gpu_present", lambda: gpu)
    monkeypatch.setattr(N, "_PROVIDERS", None)
    with caplog.at_level("WARNING", logger="gammago"):
        provs = N.providers()
    assert provs == ["CPUExecutionProvider"] and not fake.opened
    said = "offers no CUDA provider" in caplog.text and "onnxruntime-gpu" in caplog.text
    assert said == gpu and ("1.30.0" in caplog.text) == gpu
    monkeypatch.setattr(N, "_PROVIDERS", None)


@needs_model
def test_shipped_model_evaluates_batches_of_any_size():
    net = N.Net(SHIPPED, seed=3)
    for size in (9, 19):
        boards = [position(size), Board(size)]
        probs, values = net.evaluate(boards)
        assert probs.shape == (2, size * size + 1) and values.shape == (2,)
        np.testing.assert_allclose(probs.sum(axis=1), 1.0, atol=1e-5)
        assert np.all(np.abs(values) <= 1.0)
    b = position(9)
    pri = net.priors(b)
    assert set(pri) == set(b.legal_moves()) | {"pass"}
    assert abs(sum(pri.values()) - 1.0) < 1e-9
    assert net.best_move(b) in b.legal_moves()
    kids = net.child_values(b, ["A1", "G7"])
    assert set(kids) == {"A1", "G7"} and all(-1 <= v <= 1 for v in kids.values())


@needs_model
def test_average_of_8_symmetries_is_equivariant():
    net = N.Net(SHIPPED, symmetry="average")
    x = P.planes(position(9))[None]
    probs, value = net.evaluate_planes(x)
    for k in (1, 5, 6):
        pk, vk = net.evaluate_planes(P.transform(x, k))
        np.testing.assert_allclose(pk, P.transform_policy(probs, 9, k), atol=1e-5)
        np.testing.assert_allclose(vk, value, atol=1e-5)


def test_missing_and_corrupt_models_are_refused(tmp_path):
    with pytest.raises(N.NetError, match="no such model file"):
        N.Net(str(tmp_path / "none.onnx"))
    bad = tmp_path / "garbage.onnx"
    bad.write_bytes(b"this is not a protobuf\x00\xff" * 10)
    with pytest.raises(N.NetError, match=f"{bad}: not a usable ONNX model"):
        N.Net(str(bad))
    with pytest.raises(ValueError, match="symmetry"):
        N.Net(str(bad), symmetry="sometimes")


@needs_model
def test_a_shipped_model_is_found_by_name_from_any_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    name = os.path.basename(N.DEFAULT_MODEL)
    for given in (name, f"models/{name}"):
        assert N.Net(given).path == N.DEFAULT_MODEL
    # a file in the working directory comes first; a name found nowhere is refused as given
    shutil.copy(N.DEFAULT_MODEL, tmp_path / name)
    assert N.Net(name).path == name
    with pytest.raises(N.NetError, match="models/none.onnx: no such model file"):
        N.Net("models/none.onnx")


@needs_model
def test_truncated_and_mismatched_models_are_refused(tmp_path):
    data = open(SHIPPED, "rb").read()
    cut = tmp_path / "cut.onnx"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(N.NetError, match=f"{cut}: not a usable ONNX model"):
        N.Net(str(cut))
    # metadata entries are key (field 1) / value (field 2) strings: change values in place
    key = b"plane_version\x12\x01" + str(P.VERSION).encode()
    assert key in data
    other = tmp_path / "planes9.onnx"
    other.write_bytes(data.replace(key, key[:-1] + b"9"))
    with pytest.raises(N.NetError, match=f"{other}: input plane version '9'"):
        N.Net(str(other))
    fmt = N.MODEL_FORMAT.encode()
    assert fmt in data
    old = tmp_path / "format.onnx"
    old.write_bytes(data.replace(fmt, fmt[:-1] + b"7"))
    with pytest.raises(N.NetError, match="model format"):
        N.Net(str(old))


def test_engine_runs_without_a_model_file(tmp_path):
    """Where no net is needed, none is loaded: --mode rollouts never opens --model (even on
    19x19), nor does --mode auto below 13x13; --mode auto refuses the same file once a board
    needs the net."""
    from gammago.engine.engine import Engine, EngineConfig
    for name, data in (("absent.onnx", None), ("corrupt.onnx", b"\x08\x07garbage")):
        path = tmp_path / name
        if data is not None:
            path.write_bytes(data)
        e = Engine(EngineConfig(mode="rollouts", model=str(path), playouts=100))
        for size in (19, 9):
            e.new_game(size, 7.5)
            assert e.net is None and e.mode == "rollouts"
        assert e.genmove("b") in Board(9).legal_moves()
        with pytest.raises(ValueError, match=name):
            Engine(EngineConfig(mode="auto", model=str(path)))     # it starts on 19x19


def test_engine_refuses_a_corrupt_model(tmp_path):
    from gammago.engine.engine import Engine, EngineConfig
    bad = tmp_path / "bad.onnx"
    bad.write_bytes(b"\x08\x07garbage")
    for mode in ("net-root", "net-policy", "auto"):
        with pytest.raises(ValueError, match=str(bad)):
            Engine(EngineConfig(mode=mode, model=str(bad)))
    with pytest.raises(ValueError, match="--net-lambda"):
        EngineConfig(net_lambda=1.5).validate()


@needs_model
def test_auto_mode_uses_the_net_on_large_boards_only():
    from gammago.engine import settings as C
    from gammago.engine import engine as E
    e = E.Engine(E.EngineConfig(playouts=200, net_children=4, seed=3))
    assert e.config.mode == "auto"
    for size, mode in ((7, "rollouts"), (19, "net-root"), (C.AUTO_NET_MIN_SIZE, "net-root"),
                       (C.AUTO_NET_MIN_SIZE - 1, "rollouts"), (19, "net-root")):
        e.new_game(size, 7.5)
        assert e.mode == mode
        before = e.board.copy()
        assert e.genmove("b") in before.legal_moves()
        assert isinstance(e.search, RootSearch) == (mode == "net-root")
        if mode == "rollouts":       # the tree was configured for this size
            assert e.search.params["expand_visits"] == C.expand_visits_for(size)


def test_auto_mode_plays_rollouts_when_the_shipped_model_is_missing(tmp_path, monkeypatch, caplog):
    from gammago.engine.engine import Engine, EngineConfig
    monkeypatch.setattr(N, "DEFAULT_MODEL", str(tmp_path / "gone.onnx"))
    with caplog.at_level("WARNING", logger="gammago"):
        e = Engine(EngineConfig(playouts=100))
    assert "gone.onnx" in caplog.text and "rollouts only" in caplog.text
    e.new_game(19, 7.5)
    assert e.mode == "rollouts" and e.net is None
    assert e.genmove("b") in Board(19).legal_moves()


@needs_model
@pytest.mark.parametrize("mode", ["net-root", "net-policy"])
def test_engine_net_modes_play_legal_moves(mode):
    from gammago.engine.engine import Engine, EngineConfig
    e = Engine(EngineConfig(mode=mode, playouts=300, net_children=6, seed=5))
    e.new_game(9, 7.5)
    for colour in "bwbw":
        before = e.board.copy()
        move = e.genmove(colour)
        assert move in before.legal_moves()
    if mode == "net-root":
        infos = e.last_infos
        assert infos and sum(d["visits"] for d in infos) >= 300
        assert all(0 <= d["winrate"] <= 1 and 0 <= d["prior"] <= 1 for d in infos)
        assert len(infos) <= 6
        assert e.search.playouts >= 300


@needs_model
@pytest.mark.parametrize("threads", [1, 2])
def test_engine_net_uses_the_search_threads(threads):
    """The engine's net runs on as many onnxruntime threads as the search has, so a 1-thread
    engine in a match does not take a second core for its net."""
    from gammago.engine.engine import Engine, EngineConfig
    e = Engine(EngineConfig(mode="net-policy", threads=threads, seed=5))
    opts = e.net.session.get_session_options()
    assert opts.intra_op_num_threads == threads
    assert opts.inter_op_num_threads == 1


@needs_model
def test_root_search_mixes_net_value_and_rollouts():
    from gammago.search import tree
    net = N.Net(SHIPPED, seed=1)
    b = position(9)
    only_net = RootSearch(net, lambda: tree.Search(5000, seed=1), lam=1.0, children=4)
    only_net.set_root(b)
    only_net.run(1, 200)
    for k in only_net.kids:
        assert abs(only_net.q(k) - k["net"]) < 1e-12      # lambda 1: the net alone
    mixed = RootSearch(net, lambda: tree.Search(5000, seed=1), lam=0.5, children=4)
    mixed.set_root(b)
    mixed.run(1, 200)
    k = max(mixed.kids, key=lambda k: k["visits"])
    r = mixed._rollout_rate(k)
    assert r is not None and abs(mixed.q(k) - (0.5 * r + 0.5 * k["net"])) < 1e-12
    assert mixed.playouts >= 200 and mixed.ownership().shape == (9, 9)
    default = RootSearch(net, lambda: tree.Search(5000, seed=1), children=4)
    assert default.lam == ROOT_LAMBDA == 0.0                  # the default: rollouts alone
    default.set_root(b)
    default.run(1, 200)
    for k in default.kids:
        r = default._rollout_rate(k)
        # the net's value only stands in for a child no rollout has reached yet
        assert default.q(k) == (k["net"] if r is None else r)
    assert any(default._rollout_rate(k) is not None for k in default.kids)


@needs_model
def test_root_children_share_one_node_budget():
    """The child trees share max_nodes: the favourite grows past an even split of it, the total
    never passes it, and the search says it is full when the budget is spent."""
    from gammago.search import tree
    net = N.Net(SHIPPED, seed=1)
    b = position(9)
    rs = RootSearch(net, lambda: tree.Search(6000, seed=1, expand_visits=2), children=4,
                      max_nodes=6000)
    rs.set_root(b)
    rs.run(1, 6000)
    used = [k["search"].nodes for k in rs.kids]
    assert rs.full and rs.capacity == 6000
    assert sum(used) <= 6000
    assert max(used) > 6000 // 4                # more than a fixed quarter would have given it
    assert rs.playouts >= 6000


@needs_model
def test_engine_defaults_on_19x19_reach_the_child_trees():
    """--mode auto on 19x19: net-root with the rollouts' value alone (--net-lambda 0) and the
    light tail after ROLLOUT_LIGHT_AFTER_LARGE gamma moves in every root child's tree."""
    from gammago.engine.settings import ROLLOUT_LIGHT_AFTER_LARGE
    from gammago.engine.engine import Engine, EngineConfig
    e = Engine(EngineConfig(playouts=200, seed=3))
    e.new_game(19, 7.5)
    rs = e.search
    assert isinstance(rs, RootSearch) and rs.lam == 0.0
    assert e.genmove("b") not in ("pass", "resign")
    assert ROLLOUT_LIGHT_AFTER_LARGE > 0
    assert rs.kids and all(k["search"].light_after == ROLLOUT_LIGHT_AFTER_LARGE for k in rs.kids)


@needs_model
def test_root_search_on_two_threads_runs_exactly_its_playouts():
    """Both threads run the root loop, each on its own worker of whichever child tree PUCT
    picks: the playout cap is met exactly and every playout is booked to one child."""
    from gammago.search import tree
    net = N.Net(SHIPPED, seed=1)
    rs = RootSearch(net, lambda: tree.Search(50000, seed=1), children=5, max_nodes=50000)
    rs.set_root(position(9))
    rs.run(2, 3001)
    assert rs.playouts == 3001 == rs.root_visits
    assert sum(k["search"].playouts for k in rs.kids) == 3001
    assert all(k["pending"] == 0 for k in rs.kids)
    assert sum(1 for k in rs.kids if k["visits"]) >= 2 and rs.ownership().shape == (9, 9)


@needs_model
def test_root_search_keeps_the_work_below_the_moves_played():
    """After our move and the reply, each new root child's tree starts from the old tree's
    subtree for that line (visits and win rates kept); the same root keeps every child tree;
    None starts afresh."""
    from gammago.search import tree
    net = N.Net(SHIPPED, seed=1)
    b = position(9)
    rs = RootSearch(net, lambda: tree.Search(50000, seed=1), children=6, max_nodes=50000)
    rs.set_root(b)
    rs.run(1, 3000)
    best = max(rs.kids, key=lambda k: k["visits"])
    m1 = best["point"]
    m2 = max(best["search"].children(), key=lambda c: c[1])[0]
    below = {p: v for p, v, _, _ in best["search"].children((m2,))}
    b.play(b.vertex(m1))
    b.play(b.vertex(m2))
    kept = rs.set_root(b, [m1, m2])
    assert kept == sum(below.values()) > 0
    rs.prepare(1, 500)
    assert rs.playouts == 0 and rs.root_visits > 0
    grafted = 0
    for k in rs.kids:
        assert k["visits"] == k["search"].root_visits == below.get(k["point"], 0)
        if k["visits"]:
            grafted += 1
            assert k["rate"] == rs._rollout_rate(k)
    assert grafted >= 2
    before = rs.root_visits
    rs.work(0)
    assert rs.playouts == 500 and rs.root_visits == before + 500
    assert rs.nodes <= 50000 and rs.ownership().shape == (9, 9)
    # the same root again (an analysis, then genmove): every child tree kept
    kids = [(k["point"], k["search"]) for k in rs.kids]
    assert rs.set_root(b, []) == before + 500
    rs.run(1, 100)
    assert [(k["point"], k["search"]) for k in rs.kids] == kids
    assert rs.root_visits == before + 600 and rs.playouts == 100
    # a move no root child had, or None: afresh
    assert rs.set_root(b, None) == 0
    rs.run(1, 100)
    assert rs.root_visits == 100


@needs_model
def test_a_root_childs_win_rate_counts_every_playout_through_it():
    """A root child's rollout win rate is the mean of all the playouts through its tree's root.
    After a move and its reply, each line kept from the old tree keeps that tree's win rate for
    it, playouts made before it was expanded (expand_visits) included; an average over its
    children left those out (a kept line of 42 visits read 0% from its children's 3 on 19x19,
    where the nodes expand at 40 visits)."""
    from gammago.search import tree
    net = N.Net(SHIPPED, seed=1)
    b = position(9)
    rs = RootSearch(net, lambda: tree.Search(50000, seed=1, expand_visits=40), children=6,
                    max_nodes=50000)
    rs.set_root(b)
    rs.run(1, 3000)
    best = max(rs.kids, key=lambda k: k["visits"])
    m1 = best["point"]
    m2 = max(best["search"].children(), key=lambda c: c[1])[0]
    below = {p: (v, w) for p, v, w, _ in best["search"].children((m2,)) if v}
    b.play(b.vertex(m1))
    b.play(b.vertex(m2))
    rs.set_root(b, [m1, m2])
    rs.prepare(1, 500)                       # the new root children, from the old tree's lines
    differs = 0
    for k in rs.kids:
        if k["point"] in below:
            v, w = below[k["point"]]
            assert k["visits"] == v and abs(k["rate"] - w) < 1e-12
            sub = k["search"].children()
            n = sum(c[1] for c in sub)
            differs += n < v
    assert differs >= 1      # lines whose children hold fewer playouts than the line itself


def test_ranked_by_policy_argmax_and_sampling():
    w = np.array([0.1, 0.6, 0.0, 0.3])
    assert list(players.ranked_by_policy(w)) == [1, 3, 0, 2]            # temperature 0: by weight
    with pytest.raises(ValueError):
        players.ranked_by_policy(w, -1.0)
    with pytest.raises(ValueError):
        players.ranked_by_policy(w, 1.0, rng=None)                      # sampling needs a generator
    firsts = [players.ranked_by_policy(w, 1.0, np.random.default_rng(s))[0] for s in range(4000)]
    freq = np.bincount(firsts, minlength=4) / len(firsts)
    assert abs(freq[1] - 0.6) < 0.04 and abs(freq[3] - 0.3) < 0.04 and freq[2] == 0
    cold = [players.ranked_by_policy(w, 0.25, np.random.default_rng(s))[0] for s in range(2000)]
    assert np.mean(np.array(cold) == 1) > 0.9                     # T < 1: sharper (0.6^4 vs 0.3^4)
    order = players.ranked_by_policy(w, 1.0, np.random.default_rng(3))
    assert sorted(order) == [0, 1, 2, 3] and order[-1] == 2       # a permutation; zero weight last
    assert list(order) == list(players.ranked_by_policy(w, 1.0, np.random.default_rng(3)))   # seeded


@needs_model
@pytest.mark.parametrize("mode", ["net-policy", "gamma-policy"])
def test_policy_temperature_varies_games_and_repeats_with_the_seed(mode):
    from gammago.engine.engine import Engine, EngineConfig

    def opening(seed, temperature):
        e = Engine(EngineConfig(mode=mode, seed=seed, policy_temperature=temperature))
        e.new_game(9, 7)
        moves = []
        for colour in "bwbwbw":
            before = e.board.copy()
            m = e.genmove(colour)
            assert m == "pass" or m in before.legal_moves()
            moves.append(m)
        return moves

    assert opening(1, 1.0) == opening(1, 1.0)                     # same seed, same game
    assert len({tuple(opening(s, 1.0)) for s in range(1, 5)}) > 1   # seeds give different games
    if mode == "gamma-policy":                                    # argmax ignores the seed
        assert opening(1, 0.0) == opening(2, 0.0)
    with pytest.raises(ValueError, match="policy-temperature"):
        EngineConfig(mode=mode, policy_temperature=-1).validate()


@needs_model
def test_net_policy_passes_with_no_legal_point():
    b = Board(5)                      # Black fills all but two eyes, A1 and C3: White has no move
    for r in range(5):
        for c in range(5):
            if (r, c) not in ((0, 0), (2, 2)):
                b.play(f"{'ABCDE'[c]}{r + 1}", "b")
    b.to_move = "w"
    if b.legal_moves():
        pytest.skip("A1 legal for White here")
    net = N.Net(SHIPPED, seed=1)
    assert net.priors(b, include_pass=False) == {}
    assert players.net_policy_move(net, b) == "pass"
    assert players.net_policy_move(net, b, 1.0, np.random.default_rng(1)) == "pass"


@needs_model
def test_bench_compares_net_root_with_rollouts():
    from gammago.engine import bench
    out = bench.net_root_figures(1, True, 1)
    assert set(out) == {f"net_root_{k}_19_{t}t" for k in ("playouts_per_s", "rollouts_playouts_per_s",
                                                         "vs_rollouts") for t in (1, 2)}
    for t in (1, 2):
        net_root, rollouts = out[f"net_root_playouts_per_s_19_{t}t"], out[f"net_root_rollouts_playouts_per_s_19_{t}t"]
        assert net_root > 0 and rollouts > 0
        # one run: the ratio is the quotient of the two rates it printed
        assert out[f"net_root_vs_rollouts_19_{t}t"] == pytest.approx(net_root / rollouts, abs=2e-3)


class _WatchedSearch:
    """A tree.Search that records a limit_nodes call made while a batch runs on it (the tree's
    rule: limit_nodes between runs only); work_batch holds each batch open a little so that two
    threads overlap on it."""

    def __init__(self, inner, log):
        self._inner, self._log, self._running = inner, log, 0

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def work_batch(self, i, n):
        import time
        self._running += 1
        try:
            got = self._inner.work_batch(i, n)
            time.sleep(0.002)
            return got
        finally:
            self._running -= 1

    def limit_nodes(self, n):
        if self._running:
            self._log.append(("limit_nodes during a batch", n))
        return self._inner.limit_nodes(n)


@needs_model
def test_root_search_limits_a_child_tree_only_between_its_runs():
    """Two threads on one root child (children=1): neither may change the node cap of the tree
    while the other runs a batch on it."""
    from gammago.search import tree
    net = N.Net(SHIPPED, seed=1)
    bad = []
    rs = RootSearch(net, lambda: _WatchedSearch(tree.Search(50000, seed=1), bad), children=1,
                      max_nodes=50000)
    rs.set_root(position(9))
    rs.run(2, 1200)
    assert rs.playouts == 1200
    assert bad == []


@needs_model
def test_net_root_child_trees_share_the_engine_memory_bound():
    """net-root's child trees draw on the engine's one budget (--max-memory): twenty trees hold
    their first chunk each, not a full pool each, and all of them together stay within the
    bound (plus those first chunks) over moves with tree reuse."""
    from gammago.search import tree
    from gammago.engine.engine import Engine, EngineConfig
    e = Engine(EngineConfig(mode="net-root", playouts=3000, seed=3, max_memory=16,
                            expand_visits=1))
    e.new_game(9, 7)
    assert e.budget.limit_bytes <= 16 << 20
    for c in "bwb":
        e.genmove(c)
        kids = e.search.kids
        assert len(kids) == 20 and all(k["search"].memory >= tree.CHUNK_BYTES for k in kids)
        held = sum(k["search"].memory for k in kids) + e._tree_search.memory
        assert held == e.budget.used_bytes <= e.budget.limit_bytes + 21 * tree.CHUNK_BYTES
    assert e.search.root_visits > 0


@needs_model
def test_root_search_reads_ladders_on_the_nets_priors():
    """At net-root's root, the net's prior of an escape into a working ladder is cut as the
    trees' priors are (prior.ladder_factors), so a net that likes the escape does not make it
    a root move."""
    from gammago.search import tree
    from test_board_cases import from_diagram
    from test_tactics import LADDER
    board = from_diagram(LADDER)
    board.play("D5", "b")                 # white D4 in atari; E4 runs into a working ladder

    class LikesTheEscape:
        def __init__(self, net):
            self.net = net

        def priors(self, b, include_pass=True):
            pri = self.net.priors(b, include_pass=include_pass)
            pri["E4"] = 10.0 * max(pri.values())
            return pri

        def child_values(self, *args, **kw):
            return self.net.child_values(*args, **kw)

    net = LikesTheEscape(N.Net(SHIPPED, seed=1))
    for ladders in (False, True):
        rs = RootSearch(net, lambda: tree.Search(5000, seed=1), children=4)
        rs.ladders = ladders
        rs.set_root(board)
        rs.run(1, 50)
        moves = [k["move"] for k in rs.kids]
        assert ("E4" in moves) == (not ladders), moves
