"""The policy/value net at run time: an ONNX model (made by `gammago train-net`) in onnxruntime.

    net = Net("models/gammago-net-b6c64.onnx")         # refuses a mismatched or corrupt file
    probs, values = net.evaluate([board1, board2])     # batched; probs [N, size*size + 1]
    net.priors(board)                                  # {vertex: prior} over the legal moves
    net.child_values(board, ["D4", "Q16"])             # net value of each child, for the mover

Providers: CUDA when it can load (probed once, quietly), else CPU; the one that runs is said once
on stderr (logger 'gammago'). Symmetries: each position is evaluated under one random symmetry of
the 8 ("random", the default) or under all 8, averaged ("average"). The net sees the input planes of
gammago.net.planes (the same function `gammago train-net` trains on); its metadata must name the same
plane version, or the model is refused with its path and the reason.

Policy vectors index points as row * size + col (row 0 = line 1, col 0 = column A), pass last.
Values are in -1..1 for the side to move of the position evaluated.
"""
import contextlib
import importlib.util
import io
import logging
import os

import numpy as np

from gammago.net import planes as P
from gammago import find_shipped, shipped_dir
from gammago.go.board import format_vertex, parse_vertex

log = logging.getLogger("gammago")

MODEL_FORMAT = "gammago-net 1"     # what models carry; gammago.net.onnx_export writes this value
VALUE_HEADS = ("own", "pool")      # the value heads a model's metadata may name (net_model.GoNet)
SYMMETRY_MODES = ("random", "average")
MODELS_DIR = shipped_dir("models")
DEFAULT_MODEL = str(MODELS_DIR / "gammago-net-b6c64.onnx")

_PROVIDERS = None            # probed once per process
_SAID = set()                # providers already announced on stderr


class NetError(ValueError):
    """A model file that cannot be used: the message names the path and the reason."""


def _ort():
    import onnxruntime as ort
    return ort


def providers(model=None):
    """['CUDAExecutionProvider', 'CPUExecutionProvider'] when CUDA loads here, else CPU only.
    The probe opens the shipped model (`model`, a path, where that is missing) on CUDA with
    onnxruntime's logging silenced, so a machine without CUDA prints nothing; it needs no other
    package. Where the machine has an NVIDIA GPU and CUDA does not load, or the onnxruntime
    installed offers no CUDA provider (its CPU build), that is said once on stderr, with the
    reason; a machine without one hears nothing of CUDA."""
    global _PROVIDERS
    if _PROVIDERS is None:
        ort = _ort()
        _PROVIDERS = ["CPUExecutionProvider"]
        probe = next((m for m in (DEFAULT_MODEL, model) if m and os.path.isfile(m)), None)
        if probe and "CUDAExecutionProvider" in ort.get_available_providers():
            loaded, why = _cuda_loads(ort, probe)
            if loaded:
                _PROVIDERS = ["CUDAExecutionProvider", "CPUExecutionProvider"]
            elif _nvidia_gpu_present():     # (onnxruntime-gpu offers CUDA on machines without a GPU too)
                log.warning("onnxruntime offers CUDA but it did not load (%s): the net runs on the CPU; "
                            "pip install 'onnxruntime-gpu[cuda,cudnn]' brings CUDA's libraries", why)
        elif probe and _nvidia_gpu_present():
            # the CPU build of onnxruntime (package onnxruntime, not onnxruntime-gpu) on a machine
            # with an NVIDIA GPU: both packages install the same module, so the CPU build may
            # shadow the GPU one
            log.warning("onnxruntime %s offers no CUDA provider (providers: %s): the net runs on the "
                        "CPU; pip uninstall onnxruntime, then pip install 'onnxruntime-gpu[cuda,cudnn]'",
                        getattr(ort, "__version__", "?"), ", ".join(ort.get_available_providers()))
    return list(_PROVIDERS)


def _nvidia_gpu_present():
    """The NVIDIA driver is loaded here (its device node or its /proc entry)."""
    return os.path.exists("/dev/nvidiactl") or os.path.exists("/proc/driver/nvidia/version")


def _cuda_loads(ort, model):
    """Open the model file on CUDA with logging at FATAL only: (True, '') if CUDA took it, else
    (False, why)."""
    ort.set_default_logger_severity(4)
    try:
        if hasattr(ort, "preload_dlls") and importlib.util.find_spec("nvidia") is not None:
            # CUDA/cuDNN from the onnxruntime-gpu[cuda,cudnn] pip extra; it prints when libs miss
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                try:
                    ort.preload_dlls()
                except Exception:  # noqa: BLE001 (missing libraries just mean no CUDA)
                    pass
        so = ort.SessionOptions()
        so.log_severity_level = 4
        s = ort.InferenceSession(model, sess_options=so,
                                 providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
        if s.get_providers()[0] == "CUDAExecutionProvider":
            return True, ""
        return False, "onnxruntime fell back to the CPU, usually for missing CUDA or cuDNN libraries"
    except Exception as e:  # noqa: BLE001
        return False, f"{type(e).__name__}: {str(e).strip()[:160]}"
    finally:
        ort.set_default_logger_severity(2)


# The policy vector's layout: index row * size + col (row 0 = line 1, col 0 = column A), pass
# last. Vertices and points convert through gammago.go.board (parse_vertex / format_vertex,
# Board.point), the one place that knows the board's layout.
def index_to_vertex(i, size):
    """GTP vertex of policy index i on a size x size board."""
    return "pass" if i == size * size else format_vertex(divmod(int(i), size))


def vertex_index(board, vertex):
    """Policy index of a GTP vertex on `board` (size*size for pass)."""
    n = board.size
    rc = parse_vertex(vertex, n)
    return n * n if rc is None else rc[0] * n + rc[1]


def find(path):
    """A model named on the command line: the path as given when it is there, else a bare NAME
    or models/NAME among the shipped models (MODELS_DIR, where `pip install .` put them), else
    the path as given (for Net to refuse with its name)."""
    return find_shipped(path, MODELS_DIR, "models")


class Net:
    """One ONNX policy/value model; see the module docstring."""

    def __init__(self, path, symmetry="random", seed=None, threads=0, provider_list=None):
        if symmetry not in SYMMETRY_MODES:
            raise ValueError(f"symmetry must be one of {SYMMETRY_MODES}, not {symmetry!r}")
        path = str(find(path))
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
        wanted = provider_list or providers(path)
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

    def reseed(self, seed):
        """Restart the stream of random symmetries (a self-play game repeats with its seed)."""
        self.rng = np.random.default_rng(seed)

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

    def child_values(self, board, vertices):
        """{vertex: value for the side to move at `board`} of the position after each move,
        evaluated in one batch. Illegal vertices raise ValueError."""
        children = []
        for v in vertices:
            child = board.copy()
            child.play(v)
            children.append(child)
        _probs, values = self.evaluate(children)
        return {v: -float(x) for v, x in zip(vertices, values)}

    def best_move(self, board, allow_pass=False):
        """The legal move the policy likes most (net policy alone, no search); pass if none."""
        pri = self.priors(board, include_pass=allow_pass)
        if not pri:
            return "pass"
        return max(pri.items(), key=lambda kv: kv[1])[0]


def _softmax(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def load(path=None, **kw):
    """Net(path or the shipped model)."""
    return Net(path or DEFAULT_MODEL, **kw)


# --- which net for which board size ------------------------------------------------------------
ALL_SIZES = "5-19"          # what a model without a board_sizes entry is taken to cover
_SHIPPED = None             # [(path, metadata)] of the shipped models, read once per process


def parse_sizes(text):
    """A model's board_sizes metadata ("5-19", "9", "9,13", "7-9,13") as a set of sizes."""
    out = set()
    for part in str(text or ALL_SIZES).replace(" ", "").split(","):
        if not part:
            continue
        lo, _, hi = part.partition("-")
        try:
            lo, hi = int(lo), int(hi or lo)
        except ValueError:
            raise ValueError(f"board_sizes {text!r}: not sizes like 5-19 or 9,13") from None
        out.update(range(lo, hi + 1))
    return out


def read_metadata(path):
    """A model's ONNX metadata (opening it on the CPU), or NetError naming the file."""
    if not os.path.isfile(path):
        raise NetError(f"{path}: no such model file")
    ort = _ort()
    so = ort.SessionOptions()
    so.log_severity_level = 3
    try:
        sess = ort.InferenceSession(str(path), sess_options=so, providers=["CPUExecutionProvider"])
    except Exception as e:  # noqa: BLE001 (onnxruntime raises its own classes)
        raise NetError(f"{path}: not a usable ONNX model ({type(e).__name__}: {str(e).strip()[:200]})") from None
    return dict(sess.get_modelmeta().custom_metadata_map)


def covers(metadata, size):
    """Whether a model's metadata names `size` among its board sizes."""
    return int(size) in parse_sizes(metadata.get("board_sizes"))


def shipped_models(directory=None):
    """[(path, metadata)] of the models in the shipped folder (those that open), sorted by name."""
    global _SHIPPED
    if directory is not None or _SHIPPED is None:
        found = []
        folder = directory or MODELS_DIR
        for name in sorted(os.listdir(folder)) if os.path.isdir(folder) else []:
            if name.endswith(".onnx"):
                path = os.path.join(str(folder), name)
                try:
                    found.append((path, read_metadata(path)))
                except NetError as e:
                    log.warning("shipped model left out: %s", e)
        if directory is not None:
            return found
        _SHIPPED = found
    return _SHIPPED


def choose_model(size, given=None, models=None, default=None):
    """(path, why) of the net to play `size` with. given (--model): that one when its metadata
    covers the size; when it does not, it is refused for this size (said in the log with its
    path and reason) and the choice falls back as if none were given. Otherwise: among the
    shipped models trained for this size by self-play (trained_board_size == size, covering it,
    a `generation` of 1 or more), the highest generation; else the default model (DEFAULT_MODEL),
    which covers every size. Only gated nets are shipped, so the newest shipped is the best."""
    default = str(default or DEFAULT_MODEL)
    if given:
        path = str(find(given))
        meta = read_metadata(path)        # NetError: unreadable, named
        if covers(meta, size):
            return path, f"--model {given}"
        fallback, why = choose_model(size, None, models, default)
        log.warning("--model %s is for board sizes %s, not %dx%d: playing %dx%d with %s (%s)", path,
                    meta.get("board_sizes"), size, size, size, size, os.path.basename(fallback), why)
        return fallback, f"{why}; --model {given} is for sizes {meta.get('board_sizes')}"
    models = shipped_models() if models is None else models
    trained = [(int(m.get("generation", 0) or 0), p) for p, m in models
               if covers(m, size) and str(m.get("trained_board_size")) == str(size)
               and int(m.get("generation", 0) or 0) > 0]
    if trained:
        gen, path = max(trained)
        return path, f"trained for {size}x{size} by self-play, generation {gen}"
    return default, f"the default net (none is trained for {size}x{size})"
