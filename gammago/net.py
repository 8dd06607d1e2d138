"""The policy/value net at run time: an ONNX model (made by tools/train_net.py) in onnxruntime.

    net = Net("models/gammago-net-b4c32.onnx")         # refuses a mismatched or corrupt file
    probs, values = net.evaluate([board1, board2])     # batched; probs [N, size*size + 1]
    net.priors(board)                                  # {vertex: prior} over the legal moves
    net.child_values(board, ["D4", "Q16"])             # net value of each child, for the mover

Providers: CUDA when it can load (probed once, quietly), else CPU; the one that runs is said once
on stderr (logger 'gammago'). Symmetries: each position is evaluated under one random symmetry of
the 8 ("random", the default) or under all 8, averaged ("average"). The net sees the input planes of
gammago.planes (the same function tools/train_net.py trains on); its metadata must name the same
plane version, or the model is refused with its path and the reason.

Policy vectors index points as row * size + col (row 0 = line 1, col 0 = column A), pass last.
Values are in -1..1 for the side to move of the position evaluated.
"""
import contextlib
import math
import importlib.util
import io
import logging
import os
import threading
import time

import numpy as np

from gammago import planes as P
from gammago import shipped_dir
from gammago.board import format_vertex

log = logging.getLogger("gammago")

MODEL_FORMAT = "gammago-net 1"     # tools/train_net.py writes it; bump both together
SYMMETRY_MODES = ("random", "average")
DEFAULT_MODEL = str(shipped_dir("models") / "gammago-net-b4c32.onnx")

_PROVIDERS = None            # probed once per process
_SAID = set()                # providers already announced on stderr


class NetError(ValueError):
    """A model file that cannot be used: the message names the path and the reason."""


def _ort():
    import onnxruntime as ort
    return ort


def providers():
    """['CUDAExecutionProvider', 'CPUExecutionProvider'] when CUDA loads here, else CPU only.
    The probe asks for CUDA with onnxruntime's logging silenced, so a machine without CUDA
    prints nothing."""
    global _PROVIDERS
    if _PROVIDERS is None:
        ort = _ort()
        _PROVIDERS = ["CPUExecutionProvider"]
        if "CUDAExecutionProvider" in ort.get_available_providers():
            _PROVIDERS = ["CUDAExecutionProvider", "CPUExecutionProvider"] if _cuda_loads(ort) else _PROVIDERS
    return list(_PROVIDERS)


def _cuda_loads(ort):
    """Build a one-node model on CUDA with logging at FATAL only; True if CUDA took it."""
    try:
        from onnx import TensorProto, helper
    except ImportError:
        helper = None
    ort.set_default_logger_severity(4)
    try:
        if hasattr(ort, "preload_dlls") and importlib.util.find_spec("nvidia") is not None:
            # CUDA/cuDNN from the onnxruntime-gpu[cuda,cudnn] pip extra; it prints when libs miss
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                try:
                    ort.preload_dlls()
                except Exception:  # noqa: BLE001 (missing libraries just mean no CUDA)
                    pass
        if helper is None:
            return False
        node = helper.make_node("Identity", ["x"], ["y"])
        graph = helper.make_graph([node], "probe", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        so = ort.SessionOptions()
        so.log_severity_level = 4
        s = ort.InferenceSession(model.SerializeToString(), sess_options=so,
                                 providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        return s.get_providers()[0] == "CUDAExecutionProvider"
    except Exception:  # noqa: BLE001
        return False
    finally:
        ort.set_default_logger_severity(2)


def index_to_vertex(i, size):
    return "pass" if i == size * size else format_vertex(divmod(int(i), size))


def vertex_index(board, vertex):
    """Policy index of a GTP vertex on `board` (size*size for pass)."""
    p = board.point(vertex)
    n = board.size
    if p == 0:
        return n * n
    w = n + 2
    return (p // w - 1) * n + (p % w - 1)


def point_policy(probs, n):
    """A policy [n*n + 1] (vertex_index order) as an array by the board's point index
    (point (row + 1) * (n + 2) + col + 1, pass at 0), as gammago.tree takes priors."""
    w = n + 2
    out = np.zeros(w * w, np.float64)
    rows, cols = np.divmod(np.arange(n * n), n)
    out[(rows + 1) * w + cols + 1] = probs[:n * n]
    out[0] = probs[n * n]
    return out


class Net:
    """One ONNX policy/value model; see the module docstring."""

    def __init__(self, path, symmetry="random", seed=None, threads=0, provider_list=None):
        if symmetry not in SYMMETRY_MODES:
            raise ValueError(f"symmetry must be one of {SYMMETRY_MODES}, not {symmetry!r}")
        self.path = path
        self.symmetry = symmetry
        self.rng = np.random.default_rng(seed)
        if not os.path.isfile(path):
            raise NetError(f"{path}: no such model file")
        ort = _ort()
        so = ort.SessionOptions()
        so.log_severity_level = 3
        if threads:
            # an engine's net shares the machine with its search threads: as many onnxruntime
            # threads as search threads, and none left spinning after a run (spinning workers
            # took CPU from the rollouts, and from the opponent in a match)
            so.intra_op_num_threads = threads
            so.inter_op_num_threads = 1
            so.add_session_config_entry("session.intra_op.allow_spinning", "0")
        wanted = provider_list or providers()
        try:
            self.session = ort.InferenceSession(path, sess_options=so, providers=wanted)
        except Exception as e:  # noqa: BLE001 (onnxruntime raises its own classes)
            raise NetError(f"{path}: not a usable ONNX model ({type(e).__name__}: {str(e).strip()[:200]})") from None
        self.metadata = dict(self.session.get_modelmeta().custom_metadata_map)
        self._check(path)
        self.provider = self.session.get_providers()[0]
        if (path, self.provider) not in _SAID:
            _SAID.add((path, self.provider))
            log.warning("net %s runs on %s", os.path.basename(path), self.provider)

    def _check(self, path):
        m = self.metadata
        if m.get("format") != MODEL_FORMAT:
            raise NetError(f"{path}: model format {m.get('format')!r}, this gammago reads {MODEL_FORMAT!r}")
        if m.get("plane_version") != str(P.VERSION):
            raise NetError(f"{path}: input plane version {m.get('plane_version')!r}, "
                           f"this gammago computes version {P.VERSION}")
        if m.get("planes") != str(P.PLANES):
            raise NetError(f"{path}: {m.get('planes')!r} input planes, this gammago computes {P.PLANES}")
        ins = self.session.get_inputs()
        outs = [o.name for o in self.session.get_outputs()]
        if len(ins) != 1 or ins[0].name != "planes" or outs != ["policy", "value"]:
            raise NetError(f"{path}: expected input 'planes' and outputs ['policy', 'value'], "
                           f"got {[i.name for i in ins]} -> {outs}")
        shape = ins[0].shape
        if len(shape) != 4 or (isinstance(shape[1], int) and shape[1] != P.PLANES):
            raise NetError(f"{path}: input shape {shape} is not [batch, {P.PLANES}, height, width]")
        lo, _, hi = m.get("board_sizes", "19-19").partition("-")
        self.sizes = (int(lo), int(hi or lo))

    # --- raw evaluation ---
    def run(self, x):
        """x float32 [N, PLANES, n, n] -> (policy logits [N, n*n+1], value [N]); no symmetry."""
        logits, value = self.session.run(None, {"planes": np.ascontiguousarray(x, dtype=np.float32)})
        return logits, value

    def evaluate_planes(self, x):
        """Policy probabilities and values of plane stacks [N, PLANES, n, n] under the symmetry mode."""
        x = np.asarray(x, dtype=np.float32)
        n = x.shape[-1]
        if self.symmetry == "average":
            syms = [(k, P.transform(x, k)) for k in range(P.NSYM)]
            xs = np.concatenate([s for _, s in syms])
            logits, value = self.run(xs)
            probs = _softmax(logits).reshape(P.NSYM, len(x), -1)
            probs = np.mean([P.transform_policy(probs[k], n, k, inverse=True) for k in range(P.NSYM)], axis=0)
            return probs, value.reshape(P.NSYM, len(x)).mean(axis=0)
        ks = self.rng.integers(0, P.NSYM, size=len(x))
        xt = np.empty_like(x)
        for k in range(P.NSYM):
            sel = ks == k
            if sel.any():
                xt[sel] = P.transform(x[sel], k)
        logits, value = self.run(xt)
        probs = _softmax(logits)
        for k in range(1, P.NSYM):
            sel = ks == k
            if sel.any():
                probs[sel] = P.transform_policy(probs[sel], n, k, inverse=True)
        return probs, value

    # --- positions ---
    def evaluate(self, boards, batch=64):
        """Boards (all one size, each for its own side to move) -> (probs [N, n*n+1], values [N])."""
        boards = list(boards)
        if not boards:
            return np.zeros((0, 0), np.float32), np.zeros(0, np.float32)
        n = boards[0].size
        if any(b.size != n for b in boards):
            raise ValueError("Net.evaluate: boards of different sizes in one call")
        probs, values = [], []
        for s in range(0, len(boards), batch):
            chunk = boards[s:s + batch]
            x = np.empty((len(chunk), P.PLANES, n, n), np.float32)
            for i, b in enumerate(chunk):
                P.planes(b, x[i])
            p, v = self.evaluate_planes(x)
            probs.append(p)
            values.append(v)
        return np.concatenate(probs), np.concatenate(values)

    def priors(self, board, include_pass=True):
        """{vertex: probability} over the legal moves of the side to move (superko respected),
        renormalised after illegal points are removed."""
        moves = board.legal_moves()
        if include_pass:
            moves.append("pass")
        if not moves:      # no legal point and pass not asked for
            return {}
        probs, _ = self.evaluate([board])
        probs = probs[0]
        w = np.array([probs[vertex_index(board, v)] for v in moves], dtype=np.float64)
        total = w.sum()
        w = w / total if total > 0 else np.full(len(moves), 1.0 / len(moves))
        return dict(zip(moves, w.tolist()))

    def value(self, board):
        """Net value for the side to move, -1..1."""
        return float(self.evaluate([board])[1][0])

    def child_values(self, board, vertices, policies=False):
        """{vertex: value for the side to move at `board`} of the position after each move,
        evaluated in one batch. Illegal vertices raise ValueError. policies: also return the
        policy of each of those positions, {vertex: probabilities by point index} (see
        point_policy)."""
        children = []
        for v in vertices:
            child = board.copy()
            child.play(v)
            children.append(child)
        probs, values = self.evaluate(children)
        out = {v: -float(x) for v, x in zip(vertices, values)}
        if policies:
            return out, {v: point_policy(p, board.size) for v, p in zip(vertices, probs)}
        return out

    def best_move(self, board, allow_pass=False):
        """The legal move the policy likes most (net policy alone, no search); pass if none."""
        pri = self.priors(board, include_pass=allow_pass)
        if not pri:
            return "pass"
        return max(pri.items(), key=lambda kv: kv[1])[0]

    def describe(self):
        m = self.metadata
        return (f"{os.path.basename(self.path)}: {m.get('blocks', '?')} blocks x {m.get('channels', '?')} "
                f"channels, planes v{m.get('plane_version')}, held-out top-1 {m.get('heldout_policy_top1', '?')}, "
                f"on {self.provider}")


def _softmax(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def load(path=None, **kw):
    """Net(path or the shipped model)."""
    return Net(path or DEFAULT_MODEL, **kw)


# --- speed: evaluations per second (gammago bench) ---
def bench_evals(path=None, size=19, batch=1, seconds=2.0, threads=0, seed=1):
    """Positions evaluated per second at a batch size, single symmetry, on the chosen provider.
    Returns (evals_per_s, provider)."""
    net = Net(path or DEFAULT_MODEL, threads=threads, seed=seed)
    rng = np.random.default_rng(seed)
    x = (rng.random((batch, P.PLANES, size, size)) < 0.3).astype(np.float32)
    net.run(x)  # warm-up
    n, t0 = 0, time.perf_counter()
    while True:
        net.run(x)
        n += batch
        t = time.perf_counter() - t0
        if t >= seconds:
            return n / t, net.provider


# ---------------------------------------------------------------------------------------------
# `gammago predict --model FILE`: the net's policy scored with predict.py's metrics
# ---------------------------------------------------------------------------------------------
def evaluate_game(net, game, batch=64):
    """Per-position arrays for gammago.predict's metrics on one sgf.Game: for each position, the
    legal moves (superko respected) and pass are ranked by the net's probability; `greater` and
    `equal` count the moves above / tied with the one played, `log_evidence` is the log of its
    probability after illegal points are removed."""
    board = game.board()
    n = board.size
    boards, legal, played = [], [], []
    for i, (colour, vertex) in enumerate(game.moves):
        board.to_move = colour
        snap = board.copy()
        boards.append(snap)
        mask = np.zeros(n * n + 1, bool)
        for v in snap.legal_moves():
            mask[vertex_index(snap, v)] = True
        mask[n * n] = True
        legal.append(mask)
        played.append(vertex_index(board, vertex))
        board.play(vertex, colour)
    greater, equal, logev = [], [], []
    for s in range(0, len(boards), batch):
        probs, _ = net.evaluate(boards[s:s + batch])
        for j, pr in enumerate(probs):
            k = s + j
            mask = legal[k]
            pr = np.where(mask, pr, 0.0)
            total = pr.sum()
            pr = pr / total if total > 0 else mask / mask.sum()
            cand = mask.copy()
            cand[played[k]] = True
            mine = pr[played[k]]
            greater.append(int((pr[cand] > mine).sum()))
            equal.append(int((pr[cand] == mine).sum()) - 1)
            logev.append(float(np.log(max(mine, 1e-12))))
    return {"greater": np.array(greater, np.float64), "equal": np.array(equal, np.float64),
            "log_evidence": np.array(logev), "move_number": np.arange(1, len(greater) + 1, dtype=np.int32)}


def predict_command(args):
    """Body of `gammago predict --model FILE` (same summary and JSON as the gamma predict)."""
    import sys
    from tqdm import tqdm
    from gammago import predict, sgf
    t0 = time.perf_counter()
    try:
        net = Net(args.model, symmetry=getattr(args, "symmetry", "random"), seed=getattr(args, "seed", 1))
    except NetError as e:
        print(f"gammago predict: {e}", file=sys.stderr)
        return 2
    results, errors = [], []
    items = sgf.iter_games(args.paths, max_games=args.max_games, errors="yield")
    bar = tqdm(items, total=args.max_games, desc="predict (net)", unit="game", file=sys.stderr)
    for item in bar:
        if isinstance(item, sgf.GameError):
            errors.append(str(item))
            bar.write(f"skipped {item}", file=sys.stderr)
            continue
        try:
            results.append(evaluate_game(net, item))
        except ValueError as e:
            errors.append(f"{item.name}: {e}")
            bar.write(f"skipped {item.name}: {e}", file=sys.stderr)
    bar.close()
    summary = predict.summarize(results, len(results))
    summary["skipped"] = len(errors)
    summary["model"] = str(args.model)
    summary["symmetry"] = net.symmetry
    predict.report(summary, summary["model"], t0, args.json)
    return 0 if results else 1


# ---------------------------------------------------------------------------------------------
# Players without search: the net's policy alone, the gammas alone
# ---------------------------------------------------------------------------------------------
def _pass_or_first(board, ranked):
    """First legal move of `ranked` (vertices, best first) that does not fill an own eye; pass
    when none is left or when the opponent passed and passing wins by area now."""
    me = board.to_move
    if board.passes > 0 and (board.score() > 0) == (me == "b") and board.score() != 0:
        return "pass"
    no_eyes = set(board.legal_moves(include_eyes=False))
    for v in ranked:
        if v in no_eyes:
            return v
    return "pass"


def ranked_by_policy(weights, temperature=0.0, rng=None):
    """Indices of `weights` (non-negative) best first. temperature 0: by weight (ties keep their
    order). temperature T > 0: a random order drawn without replacement with probability
    proportional to weight ** (1/T) (T = 1: as the policy says; smaller: closer to argmax), from
    `rng` (a numpy Generator), so a seeded player repeats its games."""
    w = np.asarray(weights, dtype=np.float64)
    if temperature < 0:
        raise ValueError(f"policy temperature must be >= 0, not {temperature}")
    if temperature == 0 or len(w) <= 1:
        return np.argsort(-w, kind="stable")
    if rng is None:
        raise ValueError("a policy temperature > 0 needs a random generator (seed)")
    pos = w > 0
    logw = np.where(pos, np.log(np.where(pos, w, 1.0)) / temperature, -np.inf)
    # Gumbel top-k: sorting log-weight + Gumbel noise draws an order without replacement
    keys = logw + rng.gumbel(size=len(w))      # -inf stays -inf: zero weights come last
    return np.argsort(-keys, kind="stable")


def net_policy_move(net, board, temperature=0.0, rng=None):
    """The net's favourite legal move (no search); with a temperature, a move sampled from
    its policy (see ranked_by_policy)."""
    pri = net.priors(board, include_pass=False)
    moves = list(pri)
    order = ranked_by_policy([pri[m] for m in moves], temperature, rng)
    return _pass_or_first(board, [moves[i] for i in order])


def gamma_policy_move(board, gammas=None, temperature=0.0, rng=None):
    """The move with the highest gamma strength (no search); with a temperature, a move sampled
    from the gammas' move probabilities (see ranked_by_policy). gammas default: the shipped file."""
    from gammago import features
    from gammago import gammas as gammas_mod
    table = gammas or gammas_mod.load_default(board.size)
    vertices, feats = features.legal_features(board)
    strength = table.strength(feats)
    order = ranked_by_policy(strength, temperature, rng)
    return _pass_or_first(board, [vertices[i] for i in order if vertices[i] != "pass"])


# ---------------------------------------------------------------------------------------------
# Net at the root: PUCT over the root moves, each root child searched by its own UCT tree
# ---------------------------------------------------------------------------------------------
ROOT_CHILDREN = 20      # root moves searched: the net's top moves
ROOT_BATCH = 16         # playouts per visit of a root child before the root selects again
ROOT_CPUCT = 1.5        # PUCT exploration weight at the root
ROOT_LAMBDA = 0.0       # weight of the net's value in a root child's value (--net-lambda): the
                        # shipped net's value is weak (held-out MSE 0.948), and 0 beat 0.5 by
                        # +111 Elo (+16 .. +206) in 19x19 self-play (BENCHMARKS); at 0 it only
                        # stands in for a child that no rollout has reached yet


class RootSearch:
    """Net at the root, rollouts below (AlphaGo's mix, on our UCT tree).

    The root's candidate moves are the net's ROOT_CHILDREN best (its priors renormalised over
    them); each root child gets its own gammago.tree.Search, whose descents keep the cheap/gamma
    move ordering and rollouts. The root picks the child to search next by PUCT,
        Q(a) + c_puct * P(a) * sqrt(N) / (1 + n(a)),   Q(a) = (1 - lambda) * rollouts(a) + lambda * net(a)
    with net(a) the net's value of the position after a (one batched evaluation per search),
    rollouts(a) the child tree's win rate, both for the player at the root (0..1). lambda is
    0 by default (ROOT_LAMBDA): the shipped net's value is too weak to mix in, and serves only
    as Q(a) for a child without rollouts.

    It answers the same calls as tree.Search (set_root, prepare, work, stop, run, children, pv,
    ownership, playouts, root_visits, nodes, capacity, full), so gammago.engine drives it unchanged.

    reply_priors (--net-reply-priors): the policy of the net's evaluation of each root move (the
    one that gives its value, so no extra evaluation) orders and rates the replies to it, the
    children of its tree's root, instead of the gammas (tree.Search.set_root_prior).

    The child trees are kept between moves (set_root): after our move and the reply, each new
    root child's tree starts as the old tree's subtree for that line (tree.Search.graft).
    Every search thread runs the root loop (work) on its own worker of the child trees.

    The child trees share one node budget: each may grow into what the others leave, so the
    child the search favours gets the nodes it needs (a fixed split gave each of 20 children
    1/20 of the pool, and the favourite's tree filled up within a few thousand playouts on
    19x19). The engine's make_search gives every tree the same tree.NodeBudget (--max-memory):
    a tree takes memory in chunks as it grows, from that one budget, so the memory of all the
    trees together never passes it. `max_nodes` (0: none) is a cap in nodes on top of that, set
    on a tree when a batch starts on it while no other batch runs there (tree.Search.limit_nodes
    is for between runs), so trees growing at once can pass it by about what their batches add.
    """

    def __init__(self, net, make_search, lam=ROOT_LAMBDA, children=ROOT_CHILDREN, batch=ROOT_BATCH,
                 c_puct=ROOT_CPUCT, max_nodes=0, reply_priors=False):
        if not 0.0 <= lam <= 1.0:
            raise ValueError(f"net lambda must be in [0, 1], not {lam}")
        self.net, self.make_search, self.lam = net, make_search, float(lam)
        self.reply_priors = bool(reply_priors)
        self.nchildren, self.batch, self.c_puct = int(children), int(batch), float(c_puct)
        self.max_nodes = int(max_nodes)   # 0: each tree keeps its own pool
        self.board = None
        self.kids = []            # [{'move', 'point', 'prior', 'net', 'search'}]
        self._stop = False
        self._calls = []
        self._old = None          # (old root child's tree, moves below it) for _expand to graft
        self._done = 0

    # configuration calls of tree.Search (child ordering, rollout policy): remembered and
    # passed on to every child tree, present and future
    def _configure(self, name, args, kw):
        self._calls = [c for c in self._calls if c[0] != name] + [(name, args, kw)]
        for k in self.kids:
            getattr(k["search"], name)(*args, **kw)

    def use_gammas(self, *args, **kw):
        self._configure("use_gammas", args, kw)

    def use_gamma_rollouts(self, *args, **kw):
        self._configure("use_gamma_rollouts", args, kw)

    def set_root(self, board, moves=None):
        """Search from board. moves: the points played since the last root (as tree.Search
        takes them), to keep the work below them; None starts afresh. The same root (no moves)
        keeps every child tree. After moves, the first of them names the old root child whose
        tree holds the new position; each new root child's tree starts as that tree's subtree
        below the rest of the moves and the child (tree.Search.graft), when it has one. Returns
        the visits kept at the new root."""
        old_board, kids = self.board, self.kids
        self.board = board.copy()
        self.kids, self._old = [], None
        if moves is None or old_board is None or old_board.size != board.size:
            return 0
        moves = tuple(moves)
        if not moves:
            self.kids = kids
            return self.root_visits
        for k in kids:
            if k["point"] == moves[0]:
                # the old tree keeps only the new position's subtree (in place, no memory
                # taken), so the grafts below draw on what the rest of it gave back
                old = k["search"]
                old.set_root(board, moves[1:])
                self._old = (old, ())
                return sum(v for _, v, _, _ in old.children())
        return 0

    def clear(self):
        self.kids, self._old = [], None

    def _expand(self, no_pass):
        b = self.board
        pri = self.net.priors(b, include_pass=not no_pass)
        moves = sorted(pri, key=pri.get, reverse=True)[:self.nchildren]
        if not moves:
            moves = ["pass"]
            pri = {"pass": 1.0}
        total = sum(pri[m] for m in moves) or 1.0
        if self.reply_priors:
            values, policies = self.net.child_values(b, moves, policies=True)
        else:
            values, policies = self.net.child_values(b, moves), None
        self.kids = []
        old, self._old = self._old, None
        for m in moves:
            child = b.copy()
            child.play(m)
            s = self.make_search()
            for name, args, kw in self._calls:
                getattr(s, name)(*args, **kw)
            s.set_root(child, None)
            k = {"move": m, "point": b.point(m), "prior": pri[m] / total,
                 "net": (values[m] + 1) / 2, "search": s, "visits": 0, "pending": 0, "rate": None}
            if old is not None:
                if self.max_nodes:
                    s.limit_nodes(self.max_nodes - self.nodes)
                k["visits"] = s.graft(old[0], old[1] + (k["point"],))
                k["rate"] = self._rollout_rate(k)
            if policies is not None:
                s.set_root_prior(policies[m])   # the replies to m, rated by the net
            self.kids.append(k)

    def prepare(self, threads=1, max_playouts=0, seconds=0.0, no_pass=False, seed=None):
        if self.board is None:
            raise ValueError("set_root() first")
        self.threads = max(1, threads)
        self.max_playouts = max_playouts
        self.deadline = time.perf_counter() + seconds if seconds > 0 else 0.0
        self.seed = 1 if seed is None else int(seed)
        self._stop = False
        if not self.kids or (no_pass and any(k["move"] == "pass" for k in self.kids)):
            self._expand(no_pass)
        # every child tree gets one worker per thread for the whole search (work_batch)
        for j, k in enumerate(self.kids):
            k["search"].prepare(self.threads, 0, 0, False, self.seed * 7919 + j)
            k["pending"] = 0
        self._done = 0
        self._lock = threading.Lock()

    def _rollout_rate(self, k):
        """Win rate of the rollouts below root child k for the player at the root."""
        kids = k["search"].children()
        n = sum(v for _, v, _, _ in kids)
        if n == 0:
            return None
        return 1.0 - sum(v * w for _, v, w, _ in kids) / n

    def q(self, k):
        """Mixed value of root child k; its rollout rate is cached after each batch (reading the
        child tree's root children for every kid at every selection cost a quarter of the time)."""
        r = k["rate"]
        return k["net"] if r is None else (1 - self.lam) * r + self.lam * k["net"]

    def _select(self):
        """PUCT over the root children, counting the playouts other threads are running."""
        total = sum(k["visits"] + k["pending"] for k in self.kids)
        sq = math.sqrt(total + 1)
        return max(self.kids, key=lambda k: self.q(k) + self.c_puct * k["prior"] * sq
                   / (1 + k["visits"] + k["pending"]))

    def work(self, i):
        """Worker i's root loop: pick a child by PUCT, run a batch of playouts on worker i of
        its tree (nogil), book the result. Every thread runs this loop; two threads may run
        the same child's tree at once (its own virtual loss keeps them apart)."""
        if i >= self.threads:
            return
        while True:
            with self._lock:
                if self._stop:
                    break
                if self.max_playouts:
                    left = self.max_playouts - self._done - sum(o["pending"] for o in self.kids)
                else:
                    left = self.batch
                if left <= 0 or (self.deadline and time.perf_counter() >= self.deadline):
                    break
                k = self._select()
                n = min(self.batch, left)
                s = k["search"]
                if self.max_nodes and not k["pending"]:
                    # what the others leave; only while no other thread runs this tree
                    # (tree.Search.limit_nodes is for between runs): a tree that is busy keeps
                    # the cap it was given when its running batch started
                    s.limit_nodes(self.max_nodes - self.nodes + s.nodes)
                k["pending"] += n
            got = s.work_batch(i, n)
            with self._lock:
                k["pending"] -= n
                k["visits"] += got
                self._done += got
                if got:
                    k["rate"] = self._rollout_rate(k)
        self._stop = True

    def run(self, threads=1, max_playouts=0, seconds=0.0, no_pass=False, seed=None):
        t0 = time.perf_counter()
        self.prepare(threads, max_playouts, seconds, no_pass, seed)
        workers = [threading.Thread(target=self.work, args=(i,)) for i in range(1, self.threads)]
        for w in workers:
            w.start()
        self.work(0)
        for w in workers:
            w.join()
        return time.perf_counter() - t0

    def stop(self):
        self._stop = True

    @property
    def stopped(self):
        return self._stop

    # --- results, as tree.Search gives them ---
    @property
    def playouts(self):
        """Playouts of the current search (not those kept from earlier ones)."""
        return self._done

    @property
    def root_visits(self):
        return sum(k["visits"] for k in self.kids)

    @property
    def nodes(self):
        return sum(k["search"].nodes for k in self.kids)

    @property
    def capacity(self):
        return self.max_nodes or sum(k["search"].capacity for k in self.kids)

    @property
    def full(self):
        return any(k["search"].full for k in self.kids)

    @property
    def max_depth(self):
        return 1 + max((k["search"].max_depth for k in self.kids), default=0)

    def children(self, path=()):
        """Root: [(point, visits, mixed win rate for the mover, net prior)] in prior order;
        deeper paths are answered by the child's own tree."""
        if not path:
            return [(k["point"], k["visits"], self.q(k), k["prior"]) for k in self.kids]
        for k in self.kids:
            if k["point"] == path[0]:
                return k["search"].children(tuple(path[1:]))
        return []

    def pv(self, path=(), maxlen=20):
        if not path:
            if not self.kids:
                return []
            best = max(self.kids, key=lambda k: k["visits"])
            path = (best["point"],)
        for k in self.kids:
            if k["point"] == path[0]:
                return [path[0]] + list(k["search"].pv(tuple(path[1:]), maxlen - 1))
        return list(path)

    def ownership(self):
        """Mean final ownership over this search's playouts (every child tree's)."""
        n = self.board.size
        acc, tot = np.zeros((n, n)), 0
        for k in self.kids:
            got = k["search"].playouts
            if got:
                acc = acc + got * k["search"].ownership()
                tot += got
        return acc / tot if tot else acc
