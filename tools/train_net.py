#!/usr/bin/env python
"""Train gammago's policy/value net on SGF games and export it to ONNX.

    python tools/train_net.py --data ../shared/data --minutes 35 --out models/gammago-net.onnx
    # on a GPU machine (the shipped net's run; models/README.md): every game, 64 positions each
    python tools/train_net.py --data ../shared/data --games 170000 --per-game 64 --value-per-game 4 \
        --workers 16 --blocks 6 --channels 64 --batch 1024 --optimizer adam --lr 0.002 \
        --weight-decay 0.01 --minutes 60 --total-minutes 9 --checkpoint OUT/state.pt \
        --out OUT/gammago-net-b6c64.onnx

Needs PyTorch (`pip install torch==2.13.0` or `pip install -e ".[train]"`) and onnx; nothing else in
gammago imports torch. The input planes come from gammago.planes (the same function the engine
calls), so a model and the engine see positions identically.

Steps: (1) sample games from the SGF archives, a few positions per game so that no game's result
dominates the value targets; games are split train / held-out by a hash of their name (a held-out
game whose moves repeat a training game's is named and left out); the name is the path as given
(`DATA/archive.tar.gz:member`, `DATA/dir/game.sgf`), so the same split needs `--data` written the
same way (the models' cards give the commands);
(2) train a fully convolutional residual net (policy: softmax over points + pass; value: tanh
through global pooling), each position under a random one of the 8 symmetries, for a bounded
wall time with a cosine learning-rate schedule over that time; (3) score the held-out positions
(policy top-1 / top-5, value MSE), draw the loss/accuracy curve, export ONNX with metadata.
Trains on a CUDA GPU when torch sees one (`--device auto`, the default; the CPU wheel has none),
else on the CPU with `--threads` torch threads. On the GPU the packed positions live in the GPU's
memory and are unpacked and turned there, and the net runs in bfloat16 (autocast), so the data
pipeline keeps up; `--workers` reads the games in parallel, `--checkpoint` saves the training
state every few minutes and `--resume` goes on from it, and `--total-minutes` bounds the whole run
(reading, training, the held-out check and the export) for a machine lent by the hour.
"""
import argparse
import contextlib
import functools
import io
import json
import math
import multiprocessing
import os
import sys
import tarfile
import time
import warnings
import zlib

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from tqdm import tqdm  # noqa: E402

from gammago import planes as P  # noqa: E402
from gammago.board import Board, format_vertex  # noqa: E402
from gammago.sgf import moves_digest, split_repeats  # noqa: E402
from gammago.net import MODEL_FORMAT  # noqa: E402  (the format the runtime reads)

SIZE = 19                       # the corpus is 19x19; the net itself is size-free
NPLANES = P.PLANES


# ---------------------------------------------------------------------------------------------
# The net: a residual tower; both heads are size-free (1x1 convs and global pooling)
# ---------------------------------------------------------------------------------------------
class ResBlock(nn.Module):
    def __init__(self, c):
        super().__init__()
        self.c1 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(c)
        self.c2 = nn.Conv2d(c, c, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(c)

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        return F.relu(x + self.b2(self.c2(y)))


class GoNet(nn.Module):
    """planes [N, NPLANES, H, W] -> (policy logits [N, H*W + 1] (last: pass), value [N] in -1..1
    for the side to move).

    Value heads: "own" (the default) predicts a per-point ownership map (tanh, +1 = the mover's
    point) and adds its board mean, times a learnt scale, to a correction from globally pooled
    features before the final tanh: area scoring counts points, so the map gives the value a
    direct, size-free path from "whose is each point" to "who wins". "pool" (the first shipped
    net's head) only sees mean- and max-pooled features through two dense layers."""

    VALUE_HEADS = ("own", "pool")

    def __init__(self, blocks=4, channels=48, head=32, value_hidden=64, value_head="own"):
        super().__init__()
        if value_head not in self.VALUE_HEADS:
            raise ValueError(f"value_head must be one of {self.VALUE_HEADS}, not {value_head!r}")
        self.blocks, self.channels, self.value_head = blocks, channels, value_head
        self.stem = nn.Sequential(nn.Conv2d(NPLANES, channels, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(channels), nn.ReLU())
        self.tower = nn.Sequential(*[ResBlock(channels) for _ in range(blocks)])
        self.p_conv = nn.Sequential(nn.Conv2d(channels, head, 1, bias=False), nn.BatchNorm2d(head), nn.ReLU())
        self.p_point = nn.Conv2d(head, 1, 1)
        self.p_pass = nn.Linear(2 * head, 1)
        self.v_conv = nn.Sequential(nn.Conv2d(channels, head, 1, bias=False), nn.BatchNorm2d(head), nn.ReLU())
        self.v_fc = nn.Sequential(nn.Linear(2 * head, value_hidden), nn.ReLU(), nn.Linear(value_hidden, 1))
        if value_head == "own":
            self.v_own = nn.Conv2d(head, 1, 1)
            self.v_scale = nn.Parameter(torch.tensor(3.0))
            self.reset_value_head()

    def reset_value_head(self):
        """Fresh value-head weights; with the "own" head the pooled correction starts at zero, so
        the value starts as tanh(scale * mean ownership)."""
        for part in (self.v_conv, self.v_fc) + ((self.v_own,) if self.value_head == "own" else ()):
            for m in part.modules():
                if hasattr(m, "reset_parameters"):
                    m.reset_parameters()
        if self.value_head == "own":
            with torch.no_grad():
                nn.init.zeros_(self.v_fc[-1].weight)
                nn.init.zeros_(self.v_fc[-1].bias)
                self.v_scale.fill_(3.0)

    def value_parameters(self):
        return [p for name, p in self.named_parameters() if name.startswith("v_")]

    @staticmethod
    def _pool(x):
        # mean and max over the board: the same size of vector for every board size
        return torch.cat([x.mean(dim=(2, 3)), x.amax(dim=(2, 3))], dim=1)

    def forward(self, x):
        h = self.tower(self.stem(x))
        p = self.p_conv(h)
        points = self.p_point(p).flatten(1)
        policy = torch.cat([points, self.p_pass(self._pool(p))], dim=1)
        v = self.v_conv(h)
        z = self.v_fc(self._pool(v)).squeeze(1)                                  # [N]
        if self.value_head == "own":
            z = z + self.v_scale * torch.tanh(self.v_own(v)).mean(dim=(1, 2, 3))  # [N]
        return policy, torch.tanh(z)


def export_onnx(model, path, metadata, opset=17):
    """Export with dynamic batch and board size, then write the metadata properties."""
    import onnx
    model = model.eval()
    dummy = torch.zeros(1, NPLANES, 9, 9)
    dummy[:, 2] = 1
    dummy[:, NPLANES - 1] = 1
    buf = io.BytesIO()
    with warnings.catch_warnings():  # the TorchScript exporter (no onnxscript needed) is deprecated
        warnings.simplefilter("ignore", DeprecationWarning)
        torch.onnx.export(model, (dummy,), buf, dynamo=False, opset_version=opset,
                          input_names=["planes"], output_names=["policy", "value"],
                          dynamic_axes={"planes": {0: "batch", 2: "height", 3: "width"},
                                        "policy": {0: "batch", 1: "moves"}, "value": {0: "batch"}})
    proto = onnx.load_from_string(buf.getvalue())
    del proto.metadata_props[:]
    for k, v in metadata.items():
        entry = proto.metadata_props.add()
        entry.key, entry.value = str(k), str(v)
    onnx.checker.check_model(proto)
    tmp = path + ".tmp"
    onnx.save(proto, tmp)
    os.replace(tmp, path)


def base_metadata(model, size=SIZE, board_sizes="5-19"):
    """The ONNX metadata every model carries; board_sizes: the sizes the engine may choose it
    for (gammago.net.parse_sizes: "5-19", "9", "9,13")."""
    return {"format": MODEL_FORMAT, "plane_version": P.VERSION, "planes": NPLANES,
            "board_sizes": board_sizes, "trained_board_size": size,
            "blocks": model.blocks, "channels": model.channels, "value_head": model.value_head}


# ---------------------------------------------------------------------------------------------
# Data: SGF archives -> sampled positions (packed planes, move index, value target)
# ---------------------------------------------------------------------------------------------
def iter_sgf_sources(paths):
    """(name, bytes) of every .sgf under paths: files, directories, tar archives (read in place)."""
    for path in paths:
        if os.path.isdir(path):
            for root, _, files in sorted(os.walk(path)):
                for f in sorted(files):
                    full = os.path.join(root, f)
                    if f.endswith(".sgf"):
                        with open(full, "rb") as fh:
                            yield full, fh.read()
                    elif ".tar" in f:
                        yield from iter_sgf_sources([full])
        elif ".tar" in os.path.basename(path):
            with tarfile.open(path, "r:*") as tf:
                for m in tf:
                    if m.isfile() and m.name.endswith(".sgf"):
                        yield f"{path}:{m.name}", tf.extractfile(m).read()
        elif path.endswith(".sgf"):
            with open(path, "rb") as fh:
                yield path, fh.read()
        else:
            raise SystemExit(f"train_net: {path}: not an .sgf file, a directory or a tar archive")


def read_game(data, size=SIZE):
    """sgfmill game -> (winner 'b'/'w', [(colour, vertex)]) or raise ValueError."""
    from sgfmill import sgf
    game = sgf.Sgf_game.from_bytes(data)
    if game.get_size() != size:
        raise ValueError(f"size {game.get_size()}")
    winner = game.get_winner()
    if winner not in ("b", "w"):
        raise ValueError("no winner")
    root = game.get_root()
    if root.has_setup_stones():
        raise ValueError("setup stones")
    moves = []
    for node in game.get_main_sequence()[1:]:
        colour, move = node.get_move()
        if colour is not None:
            moves.append((colour, format_vertex(move)))
    return winner, moves


def is_heldout(name, permille):
    return zlib.crc32(name.encode()) % 1000 < permille


def positions_of_game(winner, moves, picks, size=SIZE):
    """Replay and return (planes list, move index list, value list) at the move numbers picked
    (in increasing order). The value is +1 when the side to move at that position (the colour of
    the move played there) won the game, -1 when it lost."""
    board = Board(size, 7.5)
    out_planes, out_moves, out_values = [], [], []
    picks = sorted(set(picks))
    j = 0
    for i, (colour, vertex) in enumerate(moves):
        if j < len(picks) and picks[j] == i:
            board.to_move = colour
            x = P.planes(board)
            if vertex == "pass":
                target = size * size
            else:
                p = board.point(vertex)
                target = (p // (size + 2) - 1) * size + (p % (size + 2) - 1)
            out_planes.append(np.packbits(x.astype(bool).ravel()))
            out_moves.append(target)
            out_values.append(1 if colour == winner else -1)
            j += 1
            if j == len(picks):
                break
        board.play(vertex, colour)
    return out_planes, out_moves, out_values


def game_rng(seed, name):
    """The random stream of one game (its sampling and its picks): the same whatever the number of
    workers and whichever games come before it."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def read_share(paths, wid, workers, p_train, permille, per_game, value_per_game, seed, size=SIZE,
               counter=None):
    """Read the games whose index in the corpus is wid modulo workers. Returns the sampled
    positions as arrays, each position with its game's index in the corpus (`src`), the games'
    names and lengths, and the skip messages."""
    xs, ms, vs, vm, srcs, plies, held = [], [], [], [], [], [], []
    games = {}                     # src -> (name, length, heldout, digest of the moves)
    skipped = []
    seen = 0
    for i, (name, data) in enumerate(iter_sgf_sources(paths)):
        if i % workers != wid:
            continue
        seen += 1
        if counter is not None and seen % 16 == 0:
            with counter.get_lock():
                counter.value += 16
        rng = game_rng(seed, name)
        is_held = is_heldout(name, permille)
        if not is_held and rng.random() >= p_train:
            continue
        try:
            winner, moves = read_game(data, size)
        except Exception as e:  # noqa: BLE001 (sgfmill raises several kinds)
            skipped.append(f"train_net: skipping {name}: {e}")
            continue
        if len(moves) < 2:
            continue
        k = min(per_game, len(moves))
        picks = np.sort(rng.choice(len(moves), size=k, replace=False))
        try:
            x, m, v = positions_of_game(winner, moves, picks, size)
        except ValueError as e:
            skipped.append(f"train_net: skipping {name}: {e}")
            continue
        mask = np.ones(len(picks), np.int8)
        if value_per_game and len(picks) > value_per_game:   # the value learns from a few of them
            mask[:] = 0
            mask[rng.choice(len(picks), size=value_per_game, replace=False)] = 1
        games[i] = (name, len(moves), is_held, moves_digest(size, moves))
        xs.extend(x)
        ms.extend(m)
        vs.extend(v)
        vm.append(mask)
        srcs.extend([i] * len(x))
        plies.extend(picks.tolist())
        held.extend([is_held] * len(x))
    return {"x": np.stack(xs) if xs else np.zeros((0, (NPLANES * size * size + 7) // 8), np.uint8),
            "move": np.array(ms, np.int16), "value": np.array(vs, np.int8),
            "vmask": np.concatenate(vm) if vm else np.zeros(0, np.int8),
            "src": np.array(srcs, np.int64), "ply": np.array(plies, np.int16),
            "held": np.array(held, bool), "games": games, "skipped": skipped, "seen": seen}


def _share_to_queue(job, queue, counter):
    try:
        queue.put((job[1], read_share(*job, counter=counter)))
    except BaseException as e:  # noqa: BLE001 (the parent reports it)
        queue.put((job[1], f"{type(e).__name__}: {e}"))


def build_dataset(paths, games, per_game, heldout_games, seed, total_games_hint, workers=1, value_per_game=0,
                  size=SIZE):
    """Sample about `games` training games and `heldout_games` held-out games across the whole
    corpus; per_game positions from each (value targets on value_per_game of them, 0 = all).
    Each game draws from its own random stream (game_rng), so the sample is the same for any
    number of workers. Returns dict of numpy arrays, games in corpus order."""
    # at least 1 per mille when any game is to be held out; none at all when none is asked for
    permille = max(1, round(1000 * heldout_games / total_games_hint)) if heldout_games > 0 else 0
    p_train = min(1.0, games / (total_games_hint * (1 - permille / 1000)))
    jobs = [(paths, w, workers, p_train, permille, per_game, value_per_game, seed, size)
            for w in range(workers)]
    counter = multiprocessing.Value("q", 0)
    bar = tqdm(total=total_games_hint, desc="reading games", unit="game", mininterval=2)
    if workers == 1:
        shares = [read_share(*jobs[0], counter=counter)]
    else:   # forked processes: nothing of this module is pickled, only the shares they send back
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        procs = [ctx.Process(target=_share_to_queue, args=(job, queue, counter), daemon=True) for job in jobs]
        for pr in procs:
            pr.start()
        got = {}
        while len(got) < workers:
            try:
                wid, share = queue.get(timeout=2)
            except Exception:  # noqa: BLE001 (queue.Empty: nothing yet)
                dead = [pr for pr in procs if pr.exitcode not in (None, 0)]
                if dead:
                    raise SystemExit(f"train_net: a reading process died (exit code {dead[0].exitcode})")
            else:
                if isinstance(share, str):
                    raise SystemExit(f"train_net: reading process {wid} failed: {share}")
                got[wid] = share
            bar.n = min(total_games_hint, counter.value)
            bar.refresh()
        for pr in procs:
            pr.join()
        shares = [got[w] for w in range(workers)]
    bar.n = min(total_games_hint, counter.value)
    bar.close()
    skipped = [msg for sh in shares for msg in sh["skipped"]]
    for msg in skipped:
        print(msg, file=sys.stderr)
    allgames = {}
    for sh in shares:
        allgames.update(sh["games"])
    cat = {k: np.concatenate([sh[k] for sh in shares]) for k in ("x", "move", "value", "vmask", "src", "ply", "held")}
    # a held-out game whose moves repeat a training game's (or an earlier held-out game's) is
    # left out: a corpus may file one game twice, under names the hash sends to both sides
    trained = {}                                           # digest -> its first training game
    for s, (name, _, held, d) in sorted(allgames.items()):
        if not held:
            trained.setdefault(d, name)
    held_srcs = [s for s in sorted(allgames) if allgames[s][2]]
    kept, twins = split_repeats([(allgames[s][0], allgames[s][3]) for s in held_srcs], trained)
    for name, twin in twins[:10]:
        print(f"train_net: not evaluated: held-out {name} repeats the moves of {twin}", file=sys.stderr)
    if len(twins) > 10:
        print(f"train_net: not evaluated: {len(twins) - 10} more held-out games that repeat another game's "
              "moves", file=sys.stderr)
    repeats = sorted(set(held_srcs) - {held_srcs[i] for i in kept})
    if repeats:
        keep = ~np.isin(cat["src"], repeats)
        cat = {k: v[keep] for k, v in cat.items()}
    order = np.argsort(cat["src"], kind="stable")      # corpus order, whatever the workers
    out = {"seen": sum(sh["seen"] for sh in shares), "skipped": len(skipped), "repeats": len(repeats),
           "size": np.int64(size)}
    for which, held in (("train", False), ("heldout", True)):
        sel = order[cat["held"][order] == held]
        srcs = cat["src"][sel]
        game_src = np.unique(srcs)                                   # sorted: corpus order
        gid = np.searchsorted(game_src, srcs).astype(np.int32)
        out[f"{which}_x"] = cat["x"][sel] if len(sel) else np.zeros((0, cat["x"].shape[1]), np.uint8)
        out[f"{which}_move"] = cat["move"][sel]
        out[f"{which}_value"] = cat["value"][sel]
        out[f"{which}_vmask"] = cat["vmask"][sel]
        out[f"{which}_game"] = gid
        out[f"{which}_ply"] = cat["ply"][sel]                          # moves played before the position
        out[f"{which}_plies"] = np.array([allgames[s][1] for s in srcs], np.int16)   # moves in its game
        out[f"{which}_names"] = np.array([allgames[s][0] for s in game_src])
    return out


def as_sparse_targets(data, k):
    """A dataset of SGF moves with its move targets also as self-play's sparse distributions
    (the move played with probability 1), so that it can be mixed with self-play positions."""
    out = dict(data)
    for which in ("train", "heldout"):
        move = data[f"{which}_move"]
        pidx = np.zeros((len(move), k), np.int16)
        pprob = np.zeros((len(move), k), np.float16)
        pidx[:, 0] = np.maximum(move, 0)
        pprob[:, 0] = move >= 0
        out[f"{which}_pidx"], out[f"{which}_pprob"] = pidx, pprob
    return out


def merge_datasets(a, b):
    """Self-play positions (a) and SGF records of the same board size (b) in one dataset."""
    if data_size(a) != data_size(b):
        raise SystemExit(f"train_net: cannot mix {data_size(a)}x{data_size(a)} self-play positions with "
                         f"{data_size(b)}x{data_size(b)} records")
    b = as_sparse_targets(b, a["train_pidx"].shape[1])
    out = {"size": np.int64(data_size(a))}
    for which in ("train", "heldout"):
        for key in ("x", "move", "pidx", "pprob", "value", "vmask", "ply", "plies", "names"):
            out[f"{which}_{key}"] = np.concatenate([a[f"{which}_{key}"], b[f"{which}_{key}"]])
        out[f"{which}_game"] = np.concatenate([a[f"{which}_game"],
                                               b[f"{which}_game"] + len(a[f"{which}_names"])])
    return out


def write_heldout_tar(names, out, limit=0):
    """Copy the held-out records (names 'archive:member' or file paths) into the tar `out`."""
    names = [str(n) for n in names]
    if limit and len(names) > limit:      # evenly spread over the corpus, not just its start
        names = [names[i * len(names) // limit] for i in range(limit)]
    by_archive = {}
    for n in names:
        archive, sep, member = n.rpartition(":") if ".tar" in n else ("", "", n)
        by_archive.setdefault(archive, set()).add(member)
    with tarfile.open(out, "w") as tout:
        for archive, members in sorted(by_archive.items()):
            if not archive:
                for m in sorted(members):
                    tout.add(m, arcname=os.path.basename(m))
                continue
            with tarfile.open(archive, "r:*") as tin:
                for m in tin:
                    if m.name in members:
                        tout.addfile(m, tin.extractfile(m))
    print(f"train_net: wrote {len(names)} held-out records to {out}", file=sys.stderr)


# where each move goes under each symmetry: sym_perm(n)[k][i] = index of move i after symmetry k.
# transform_policy(arange) gives the inverse (entry j = the move that lands on j); for the quarter
# turns (k = 1, 3) the two differ, and using it directly rotated those targets the wrong way.
@functools.lru_cache(maxsize=None)
def sym_perm(n):
    return np.stack([np.argsort(P.transform_policy(np.arange(n * n + 1), n, k))
                     for k in range(8)]).astype(np.int64)


# where each point of a transformed plane comes from: P.transform(x, k)[..., j] = x[..., perm[k][j]]
# (points flattened); with it a batch turns in one gather, on whatever device holds it
@functools.lru_cache(maxsize=None)
def point_perm(n):
    return np.stack([P.transform(np.arange(n * n, dtype=np.float64).reshape(n, n), k).ravel()
                     for k in range(8)]).astype(np.int64)


SYM_PERM, POINT_PERM = sym_perm(SIZE), point_perm(SIZE)


def data_size(data):
    """The board size of a dataset: 'size' where it says (self-play), else the corpus' 19."""
    return int(data["size"]) if "size" in data else SIZE


class Positions:
    """One split's packed positions as tensors on `device` (the GPU's memory when training there),
    unpacked and turned by a symmetry batch by batch on that device, so the data pipeline is a
    few tensor operations and never waits on the CPU."""

    def __init__(self, data, which, device):
        self.device = torch.device(device)
        self.size = n = data_size(data)
        self.x = torch.from_numpy(np.ascontiguousarray(data[f"{which}_x"])).to(self.device)
        self.move = torch.from_numpy(data[f"{which}_move"].astype(np.int64)).to(self.device)
        self.value = torch.from_numpy(data[f"{which}_value"].astype(np.float32)).to(self.device)
        vmask = data.get(f"{which}_vmask")
        if vmask is None:           # caches made before value masks: every position's value trains
            vmask = np.ones(len(self.move), np.int8)
        self.vmask = torch.from_numpy(vmask.astype(np.float32)).to(self.device)
        self.n = len(self.move)
        self._shifts = torch.arange(7, -1, -1, dtype=torch.uint8, device=self.device)   # np.packbits' order
        self._points = torch.from_numpy(point_perm(n)).to(self.device)
        self._moves = torch.from_numpy(sym_perm(n)).to(self.device)
        # self-play's policy targets: the search's visit distribution, sparse ([N, K] point
        # indices and probabilities; a value-only position has none); SGF's: the move played
        self.pidx = self.pprob = None
        if f"{which}_pidx" in data:
            self.pidx = torch.from_numpy(data[f"{which}_pidx"].astype(np.int64)).to(self.device)
            self.pprob = torch.from_numpy(data[f"{which}_pprob"].astype(np.float32)).to(self.device)

    def batch(self, idx, ks=None):
        """idx: long tensor of positions; ks: a symmetry (0..7) for each, or None. Returns planes
        [B, NPLANES, n, n] float32, move targets (-1: none), value targets and value masks."""
        b, n = len(idx), self.size
        bits = (self.x[idx].unsqueeze(2) >> self._shifts) & 1
        x = bits.reshape(b, -1)[:, :NPLANES * n * n].reshape(b, NPLANES, n * n)
        move = self.move[idx]
        if ks is not None:
            x = x.gather(2, self._points[ks].unsqueeze(1).expand(-1, NPLANES, -1))
            move = torch.where(move < 0, move, self._moves[ks, move.clamp(min=0)])
        return x.reshape(b, NPLANES, n, n).float(), move, self.value[idx], self.vmask[idx]

    def policy_targets(self, idx, ks=None):
        """The sparse visit-distribution targets of positions idx under symmetries ks, as
        (point indices [B, K], probabilities [B, K]); None for a dataset of SGF moves."""
        if self.pidx is None:
            return None
        pidx = self.pidx[idx]
        if ks is not None:
            pidx = self._moves[ks].gather(1, pidx)
        return pidx, self.pprob[idx]


def batch_tensors(data, which, idx, rng, augment):
    """The positions idx of a split (numpy arrays) as tensors on the CPU, each under a random
    symmetry when augment: (planes, move targets, value targets)."""
    sub = {f"{which}_{k}": data[f"{which}_{k}"][idx] for k in ("x", "move", "value", "vmask")
           if f"{which}_{k}" in data}
    ks = torch.from_numpy(rng.integers(0, 8, size=len(idx))) if augment else None
    x, move, value, _ = Positions(sub, which, "cpu").batch(torch.arange(len(idx)), ks)
    return x, move, value


# ---------------------------------------------------------------------------------------------
# Training and evaluation
# ---------------------------------------------------------------------------------------------
def _check_value_shape(v, value):
    """The value output and its targets are both [N]: a [N, 1] output against [N] targets would
    broadcast to [N, N] and make the value loss (and MSE) meaningless."""
    if v.shape != value.shape:
        raise ValueError(f"train_net: value output {tuple(v.shape)} vs targets {tuple(value.shape)}")


PLY_BUCKETS = ((0, 50), (50, 100), (100, 150), (150, 200), (200, 10000))   # moves played before


def autocast_for(device):
    """bfloat16 autocast on a CUDA device (the convolutions in bf16, batch norm and losses in
    float32); nothing on the CPU."""
    if torch.device(device).type == "cuda":
        return torch.autocast("cuda", dtype=torch.bfloat16)
    return contextlib.nullcontext()


@torch.no_grad()
def evaluate(model, data, limit=None, batch=256, heldout=None):
    """Held-out policy top-1 / top-5 / NLL and value MSE (targets +-1 for the side to move);
    with the game phase in the data (caches made since the "own" value head), the value MSE of
    each third of the game and the policy top-1 / top-5 by move number too. heldout: the
    held-out Positions already on the model's device (made here when None)."""
    model.eval()
    dev = next(model.parameters()).device
    pos = heldout if heldout is not None else Positions(data, "heldout", dev)
    n = pos.n if limit is None else min(limit, pos.n)
    nll = 0.0
    hit1, hit5, se = (torch.zeros(n, device=dev) for _ in range(3))
    for s in range(0, n, batch):
        idx = torch.arange(s, min(n, s + batch), device=dev)
        x, move, value, _ = pos.batch(idx)
        if dev.type == "cuda":
            x = x.contiguous(memory_format=torch.channels_last)
        with autocast_for(dev):
            logits, v = model(x)
        logits, v = logits.float(), v.float()
        _check_value_shape(v, value)
        nll += policy_loss(logits, move, pos.policy_targets(idx), reduction="sum").item()
        best5 = logits.topk(5, dim=1).indices
        hit1[idx] = (best5[:, 0] == move).float()
        hit5[idx] = (best5 == move[:, None]).any(dim=1).float()
        se[idx] = (v - value) ** 2
    train_mode(model)
    hit1, hit5, se = hit1.cpu().numpy(), hit5.cpu().numpy(), se.cpu().numpy()
    # the move figures over the positions with a move target (a self-play position kept for
    # its value alone has none); the value's over all of them
    has = pos.move[:n].cpu().numpy() >= 0
    hit1, hit5 = np.where(has, hit1, np.nan), np.where(has, hit5, np.nan)
    npol = max(1, int(has.sum()))
    out = {"positions": n, "policy_positions": int(has.sum()),
           "policy_top1": float(np.nansum(hit1) / npol), "policy_top5": float(np.nansum(hit5) / npol),
           "policy_nll": nll / npol, "value_mse": float(se.mean())}
    if "heldout_ply" in data:
        ply = data["heldout_ply"][:n].astype(np.int64)
        third = np.minimum(2, 3 * ply // np.maximum(1, data["heldout_plies"][:n].astype(np.int64)))
        for k, name in enumerate(("first", "middle", "last")):
            sel = third == k
            out[f"value_mse_{name}_third"] = float(se[sel].mean()) if sel.any() else float("nan")
            out[f"positions_{name}_third"] = int(sel.sum())
        for lo, hi in PLY_BUCKETS:
            sel = (ply >= lo) & (ply < hi)
            name = f"moves_{lo + 1}_{hi}" if hi < 10000 else f"moves_{lo + 1}_up"
            sel &= has
            if sel.any():
                out[f"top1_{name}"] = float(hit1[sel].mean())
                out[f"top5_{name}"] = float(hit5[sel].mean())
                out[f"positions_{name}"] = int(sel.sum())
    return out


def train_mode(model):
    """Training mode, except frozen parts (value-only training) keep their batch-norm statistics."""
    model.train()
    if getattr(model, "value_only", False):
        for part in (model.stem, model.tower, model.p_conv):
            part.eval()


def value_head_only(model):
    """Freeze everything but a freshly initialised value head (to retrain a value head on the
    trunk the policy taught)."""
    model.value_only = True
    for p in model.parameters():
        p.requires_grad_(False)
    model.reset_value_head()
    for p in model.value_parameters():
        p.requires_grad_(True)


def policy_loss(logits, move, target=None, reduction="mean"):
    """Cross-entropy of the policy against the move played (SGF) or, with target = (point
    indices, probabilities), against the search's visit distribution (self-play); positions
    without a target (move -1, no probabilities) count for nothing."""
    if target is None:
        return F.cross_entropy(logits, move, ignore_index=-1, reduction=reduction)
    pidx, pprob = target
    per = -(pprob * F.log_softmax(logits, dim=1).gather(1, pidx)).sum(1)
    if reduction == "sum":
        return per.sum()
    has = (pprob.sum(1) > 0).float()
    return (per * has).sum() / has.sum().clamp(min=1.0)


def train_step(model, opt, x, move, value, value_weight=1.0, vmask=None, target=None):
    """One optimiser step on a batch; returns (loss, policy loss, value loss, policy logits) as
    tensors (reading them waits for the device). vmask: which positions' value targets train
    (all when None); target: self-play's visit distributions (policy_loss). The value's shape
    is checked against the targets' (_check_value_shape)."""
    with autocast_for(x.device):
        logits, v = model(x)
    logits, v = logits.float(), v.float()
    _check_value_shape(v, value)
    p_loss = policy_loss(logits, move, target)
    if vmask is None:
        v_loss = F.mse_loss(v, value)
    else:
        v_loss = ((v - value) ** 2 * vmask).sum() / vmask.sum().clamp(min=1.0)
    loss = p_loss + value_weight * v_loss
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss, p_loss, v_loss, logits


def make_optimizer(model, optimizer, lr, weight_decay):
    params = [p for p in model.parameters() if p.requires_grad]
    if optimizer == "adam":
        return torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    return torch.optim.SGD(params, lr=lr, momentum=0.9, nesterov=True, weight_decay=weight_decay)


def save_checkpoint(path, model, opt, state):
    """The training state (weights, optimiser, time spent, curve), written atomically."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    torch.save({"model": model.state_dict(), "opt": opt.state_dict(), **state}, tmp)
    os.replace(tmp, path)


def train(model, data, minutes, batch, lr, weight_decay, value_weight, seed, eval_every_s, eval_limit,
          optimizer="sgd", checkpoint=None, checkpoint_every_s=300.0, resume=None, heldout=None):
    """Train for `minutes` of wall time (held-out checks not counted): linear warm-up over the
    first 3%, then a cosine to zero at the end. With `checkpoint`, the state is saved there every
    checkpoint_every_s seconds; `resume` (a state read from such a file) goes on where it
    stopped, in the same schedule. heldout: the held-out Positions on the model's device (made
    here when None), for the periodic checks."""
    dev = next(model.parameters()).device
    gen = torch.Generator(device=dev)
    gen.manual_seed(seed + 1)
    opt = make_optimizer(model, optimizer, lr, weight_decay)
    train_mode(model)
    channels_last = dev.type == "cuda"
    if channels_last:
        model.to(memory_format=torch.channels_last)
    pos = Positions(data, "train", dev)
    if heldout is None:
        heldout = Positions(data, "heldout", dev)
    budget = minutes * 60.0
    curve = {"t": [], "train_loss": [], "train_acc": [], "eval_t": [], "eval_nll": [], "eval_top1": [],
             "eval_mse": [], "eval_mse_last_third": []}
    step = seen = 0
    done = 0.0                       # training seconds before this run (a resumed one)
    if resume is not None:
        opt.load_state_dict(resume["opt"])
        curve, step, seen, done = resume["curve"], resume["step"], resume["seen"], resume["elapsed"]
        gen.manual_seed(seed + 1 + step)
        tqdm.write(f"train_net: resuming at {done / 60:.1f} min, {seen} positions seen")
    ema_loss = curve["train_loss"][-1] if curve["train_loss"] else None
    ema_acc = curve["train_acc"][-1] if curve["train_acc"] else None
    start = time.perf_counter() - done
    last_eval = last_ckpt = time.perf_counter()
    bar = tqdm(total=int(budget), initial=int(done), desc="training", unit="s", mininterval=5,
               bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} s [{elapsed}<{remaining}{postfix}]")
    perm, at = torch.randperm(pos.n, device=dev, generator=gen), 0
    sums = torch.zeros(2, device=dev)       # loss and top-1 since the last read, summed on the device
    nsum = 0
    while True:
        now = time.perf_counter()
        frac = (now - start) / budget
        if frac >= 1.0:
            break
        scale = min(1.0, frac / 0.03) * 0.5 * (1 + math.cos(math.pi * frac))
        for g in opt.param_groups:
            g["lr"] = lr * scale
        if at + batch > pos.n:
            perm, at = torch.randperm(pos.n, device=dev, generator=gen), 0
        idx = perm[at:at + batch]
        at += batch
        ks = torch.randint(0, 8, (len(idx),), device=dev, generator=gen)
        x, move, value, vmask = pos.batch(idx, ks)
        if channels_last:
            x = x.contiguous(memory_format=torch.channels_last)
        loss, p_loss, v_loss, logits = train_step(model, opt, x, move, value, value_weight, vmask,
                                                  pos.policy_targets(idx, ks))
        step += 1
        seen += len(idx)
        sums += torch.stack([loss.detach(), (logits.detach().argmax(1) == move).float().mean()])
        nsum += 1
        if step % 10 == 0:         # one read of the device every 10 steps
            l, a = (sums / nsum).tolist()
            sums.zero_()
            nsum = 0
            ema_loss = l if ema_loss is None else 0.8 * ema_loss + 0.2 * l
            ema_acc = a if ema_acc is None else 0.8 * ema_acc + 0.2 * a
            curve["t"].append(time.perf_counter() - start)
            curve["train_loss"].append(ema_loss)
            curve["train_acc"].append(ema_acc)
            bar.n = min(int(budget), int(time.perf_counter() - start))
            bar.set_postfix(loss=f"{ema_loss:.3f}", acc=f"{ema_acc:.3f}", lr=f"{lr * scale:.4f}", pos=seen,
                            refresh=False)
            bar.update(0)
        if time.perf_counter() - last_eval >= eval_every_s:
            t_eval0 = time.perf_counter()
            t = t_eval0 - start
            e = evaluate(model, data, eval_limit, heldout=heldout)
            curve["eval_t"].append(t)
            curve["eval_nll"].append(e["policy_nll"])
            curve["eval_top1"].append(e["policy_top1"])
            curve["eval_mse"].append(e["value_mse"])
            curve["eval_mse_last_third"].append(e.get("value_mse_last_third", float("nan")))
            tqdm.write(f"train_net: {t / 60:5.1f} min, {seen} positions: held-out top-1 "
                       f"{e['policy_top1']:.3f} nll {e['policy_nll']:.3f} value MSE {e['value_mse']:.3f}"
                       f" (last third {e.get('value_mse_last_third', float('nan')):.3f})")
            last_eval = time.perf_counter()
            start += last_eval - t_eval0  # held-out checks do not eat the training budget
        if checkpoint and time.perf_counter() - last_ckpt >= checkpoint_every_s:
            t_ck0 = time.perf_counter()
            save_checkpoint(checkpoint, model, opt, {"elapsed": t_ck0 - start, "step": step, "seen": seen,
                                                      "curve": curve})
            last_ckpt = time.perf_counter()
            start += last_ckpt - t_ck0
    bar.close()
    if checkpoint:
        save_checkpoint(checkpoint, model, opt, {"elapsed": time.perf_counter() - start, "step": step,
                                                  "seen": seen, "curve": curve})
    if channels_last:
        model.to(memory_format=torch.contiguous_format)
    return curve, {"steps": step, "positions_seen": seen, "train_seconds": time.perf_counter() - start}


def plot_curve(curve, path, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(15, 4))
    tm = [t / 60 for t in curve["t"]]
    em = [t / 60 for t in curve["eval_t"]]
    a1.plot(tm, curve["train_loss"], label="train loss (policy CE + value MSE, EMA)")
    if em:
        a1.plot(em, [n + m for n, m in zip(curve["eval_nll"], curve["eval_mse"])], "o-",
                label="held-out loss")
    a1.set_xlabel("training minutes")
    a1.set_ylabel("loss")
    a1.legend()
    a2.plot(tm, curve["train_acc"], label="train top-1 (EMA, augmented)")
    if em:
        a2.plot(em, curve["eval_top1"], "o-", label="held-out top-1")
    a2.set_xlabel("training minutes")
    a2.set_ylabel("policy top-1")
    a2.legend()
    if em:
        a3.plot(em, curve["eval_mse"], "o-", label="held-out value MSE")
        late = curve.get("eval_mse_last_third", [])
        if late and not all(math.isnan(m) for m in late):
            a3.plot(em, late, "o-", label="held-out value MSE, last third of the game")
    a3.axhline(1.0, color="grey", lw=0.8, ls="--")
    a3.set_xlabel("training minutes")
    a3.set_ylabel("value MSE (targets +-1)")
    if em:
        a3.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", nargs="+", default=None,
                    help="SGF files, directories or tar archives (read in place; default "
                         "../shared/data, none with --selfplay unless given)")
    ap.add_argument("--selfplay", nargs="+", default=None, metavar="DIR",
                    help="gammago selfplay runs (folders) to train on: policy = the search's visits, "
                         "value = the game's result; with --data, mixed with SGF records of the same size")
    ap.add_argument("--size", type=int, default=None,
                    help="board size of the positions (default: 19 for SGF, the records' for --selfplay)")
    ap.add_argument("--policy-target", choices=("visits", "best"), default="visits",
                    help="--selfplay: the policy learns the root's visit distribution, or the most "
                         "visited move alone")
    ap.add_argument("--heldout-permille", type=int, default=50,
                    help="--selfplay: games held out, per mille (by a hash of the run and game names)")
    ap.add_argument("--board-sizes", default=None,
                    help="the sizes the engine may pick the model for, in its metadata (default: "
                         "the trained size with --selfplay, else 5-19)")
    ap.add_argument("--generation", type=int, default=0,
                    help="the self-play generation the model is (its metadata; the engine prefers the "
                         "highest generation trained for a board size)")
    ap.add_argument("--out", default="models/gammago-net.onnx", help="ONNX file to write")
    ap.add_argument("--games", type=int, default=30000, help="training games sampled across the corpus")
    ap.add_argument("--heldout-games", type=int, default=1500, help="held-out games (split by name hash)")
    ap.add_argument("--per-game", type=int, default=4, help="positions sampled per game")
    ap.add_argument("--value-per-game", type=int, default=None,
                    help="positions of a game whose value trains (0: all; default 0 for SGF, where "
                         "--per-game samples, and 8 for --selfplay); a few per game keep the value "
                         "from learning the games' results by heart")
    ap.add_argument("--workers", type=int, default=1, help="processes reading the games")
    ap.add_argument("--total-games", type=int, default=169924, help="games in --data (for the sampling rate)")
    ap.add_argument("--cache", default=None, help="npz of the sampled positions (made if missing)")
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--value-head", choices=GoNet.VALUE_HEADS, default="own",
                    help="own: board mean of a per-point ownership map (+ pooled correction); pool: pooled features only")
    ap.add_argument("--channels", type=int, default=48)
    ap.add_argument("--minutes", type=float, default=30.0,
                    help="training wall time (0: no training, the held-out figures of --init)")
    ap.add_argument("--total-minutes", type=float, default=0,
                    help="bound on the whole run: the training gets what reading the games leaves, less "
                         "--reserve-minutes for the held-out check and the export (0: no bound)")
    ap.add_argument("--reserve-minutes", type=float, default=1.0)
    ap.add_argument("--checkpoint", default=None, help="save the training state here every --checkpoint-every s")
    ap.add_argument("--checkpoint-every", type=float, default=300.0)
    ap.add_argument("--resume", action="store_true", help="go on from --checkpoint when it exists")
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--weight-decay", type=float, default=1e-4)
    ap.add_argument("--optimizer", choices=("sgd", "adam"), default="sgd", help="SGD with Nesterov momentum, or AdamW")
    ap.add_argument("--value-weight", type=float, default=1.0)
    ap.add_argument("--threads", type=int, default=1,
                    help="torch threads (on the shared 2-core machine 2 threads ran at ~40 positions/s, 1 at ~470)")
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                    help="where torch trains: cuda when a GPU is visible (auto), else the CPU")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--eval-every", type=float, default=180.0, help="seconds between held-out checks")
    ap.add_argument("--eval-limit", type=int, default=2000, help="held-out positions per periodic check")
    ap.add_argument("--heldout-list", default=None, help="write the held-out game names here")
    ap.add_argument("--heldout-tar", default=None,
                    help="write the held-out games' SGF records to this tar (for gammago predict)")
    ap.add_argument("--heldout-max", type=int, default=0, help="at most this many games in --heldout-tar")
    ap.add_argument("--no-train", action="store_true", help="stop after the data (and held-out files)")
    ap.add_argument("--init", default=None, help="start from these weights (a .pt written by this tool)")
    ap.add_argument("--value-only", action="store_true",
                    help="train only a freshly initialised value head on the frozen rest of --init")
    args = ap.parse_args(argv)

    if args.resume and not args.checkpoint:
        raise SystemExit("train_net: --resume needs --checkpoint")
    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    if args.device == "cuda" and not torch.cuda.is_available():
        raise SystemExit("train_net: --device cuda, but torch sees no CUDA device "
                         f"(torch {torch.__version__}; the CPU wheel has no CUDA)")
    device = torch.device("cuda" if args.device != "cpu" and torch.cuda.is_available() else "cpu")
    print(f"train_net: training on {device}"
          + (f" ({torch.cuda.get_device_name(0)})" if device.type == "cuda" else
             f" ({args.threads} torch thread{'s' if args.threads != 1 else ''})"), file=sys.stderr)
    t0 = time.perf_counter()
    if args.cache and os.path.exists(args.cache):
        with np.load(args.cache) as z:
            data = {k: z[k] for k in z.files}
        print(f"train_net: positions from {args.cache}", file=sys.stderr)
    else:
        data = None
        if args.selfplay:
            from gammago import selfplay_data
            data = selfplay_data.read_positions(
                args.selfplay, value_per_game=8 if args.value_per_game is None else args.value_per_game,
                heldout_permille=args.heldout_permille, seed=args.seed, size=args.size,
                policy_target=args.policy_target)
            print(f"train_net: {len(data['train_names'])} + {len(data['heldout_names'])} self-play games "
                  f"({int(data['skipped'])} skipped)", file=sys.stderr)
        if args.data or not args.selfplay:
            size = args.size or (data_size(data) if data is not None else SIZE)
            sgf = build_dataset(args.data or ["../shared/data"], args.games, args.per_game, args.heldout_games,
                                args.seed, args.total_games, workers=args.workers,
                                value_per_game=args.value_per_game or 0, size=size)
            data = sgf if data is None else merge_datasets(data, sgf)
        if args.cache:
            os.makedirs(os.path.dirname(os.path.abspath(args.cache)), exist_ok=True)
            np.savez(args.cache, **data)
    prep_s = time.perf_counter() - t0
    ntr, nho = len(data["train_move"]), len(data["heldout_move"])
    print(f"train_net: {ntr} training positions from {len(data['train_names'])} games, {nho} held-out "
          f"positions from {len(data['heldout_names'])} games ({prep_s:.0f} s)", file=sys.stderr)
    if ntr == 0 or nho == 0:
        raise SystemExit("train_net: no training or no held-out positions; check --data")
    if args.heldout_list:
        with open(args.heldout_list, "w") as fh:
            fh.write("\n".join(str(n) for n in data["heldout_names"]) + "\n")

    if args.heldout_tar:
        write_heldout_tar(data["heldout_names"], args.heldout_tar, args.heldout_max)
    if args.no_train:
        return 0

    model = GoNet(args.blocks, args.channels, value_head=args.value_head)
    if args.init:
        try:
            state = torch.load(args.init, map_location="cpu")
        except Exception as e:  # noqa: BLE001 (torch raises several kinds)
            raise SystemExit(f"train_net: --init {args.init}: cannot read it ({type(e).__name__}: {e})")
        missing, unexpected = model.load_state_dict(state, strict=False)
        if unexpected or any(not k.startswith("v_") for k in missing):
            raise SystemExit(f"train_net: --init {args.init}: does not fit a {args.blocks} x {args.channels} net "
                             f"(missing {missing[:4]}, unexpected {unexpected[:4]})")
        if missing:   # a value head the file does not have (e.g. "own" from a "pool" net)
            model.reset_value_head()
        print(f"train_net: starting from {args.init}" + (f" (new value-head parts: {', '.join(missing)};"
              " the value head starts fresh)" if missing else ""), file=sys.stderr)
    base = {}
    if args.init and os.path.exists(os.path.splitext(args.init)[0] + ".json"):
        with open(os.path.splitext(args.init)[0] + ".json") as fh:
            base = json.load(fh)
    if args.value_only:
        value_head_only(model)
    resume = None
    if args.resume and os.path.exists(args.checkpoint):
        try:
            resume = torch.load(args.checkpoint, map_location="cpu", weights_only=False)
            model.load_state_dict(resume["model"])
        except Exception as e:  # noqa: BLE001 (torch raises several kinds)
            raise SystemExit(f"train_net: --checkpoint {args.checkpoint}: cannot resume from it "
                             f"({type(e).__name__}: {e})")
    nparams = sum(p.numel() for p in model.parameters())
    model.to(device)
    if device.type == "cuda":
        torch.backends.cudnn.benchmark = True
    heldout = Positions(data, "heldout", device)     # the periodic checks' and the final one's
    minutes = args.minutes
    if args.total_minutes:
        left = args.total_minutes - (time.perf_counter() - t0) / 60 - args.reserve_minutes
        if left < minutes:
            print(f"train_net: {left:.1f} min left for training within --total-minutes {args.total_minutes}",
                  file=sys.stderr)
            minutes = max(0.05, left)
    if args.minutes > 0:
        curve, stats = train(model, data, minutes, args.batch, args.lr, args.weight_decay,
                             args.value_weight, args.seed, args.eval_every, args.eval_limit, args.optimizer,
                             checkpoint=args.checkpoint, checkpoint_every_s=args.checkpoint_every,
                             resume=resume, heldout=heldout)
    else:   # --minutes 0: the held-out figures of --init as it is (and its export)
        curve = {"t": [], "train_loss": [], "train_acc": [], "eval_t": [], "eval_nll": [], "eval_top1": [],
                 "eval_mse": [], "eval_mse_last_third": []}
        stats = {"steps": 0, "positions_seen": 0, "train_seconds": 0.0}
    final = evaluate(model, data, heldout=heldout)
    model.cpu()   # export and save from the CPU
    thirds = " / ".join(f"{final[f'value_mse_{k}_third']:.4f}" for k in ("first", "middle", "last")
                        if f"value_mse_{k}_third" in final)
    print(f"train_net: held-out ({final['positions']} positions): top-1 {final['policy_top1']:.4f} "
          f"top-5 {final['policy_top5']:.4f} value MSE {final['value_mse']:.4f}"
          + (f" (by third of the game: {thirds})" if thirds else ""), file=sys.stderr)
    for lo, hi in PLY_BUCKETS:
        name = f"moves_{lo + 1}_{hi}" if hi < 10000 else f"moves_{lo + 1}_up"
        if f"top1_{name}" in final:
            print(f"train_net:   moves {lo + 1}-{hi if hi < 10000 else ''}: top-1 {final[f'top1_{name}']:.4f} "
                  f"top-5 {final[f'top5_{name}']:.4f} ({final[f'positions_{name}']} positions)", file=sys.stderr)

    stem = os.path.splitext(args.out)[0]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    plot_curve(curve, stem + ".png", f"{os.path.basename(stem)}: {args.blocks} blocks x {args.channels} channels")
    command = "python tools/train_net.py " + " ".join(argv if argv is not None else sys.argv[1:])
    size = data_size(data)
    meta = base_metadata(model, size, args.board_sizes or (str(size) if args.selfplay else "5-19"))
    if args.generation:
        meta["generation"] = args.generation
    meta.update({
        "heldout_policy_top1": f"{final['policy_top1']:.4f}",
        "heldout_policy_top5": f"{final['policy_top5']:.4f}",
        "heldout_value_mse": f"{final['value_mse']:.4f}",
        **{f"heldout_{k}": f"{v:.4f}" for k, v in final.items() if k.startswith(("value_mse_", "top1_", "top5_"))},
        "heldout_positions": final["positions"],
        "heldout_games": len(data["heldout_names"]),
        "train_positions": ntr, "train_games": len(data["train_names"]),
        "positions_seen": stats["positions_seen"], "train_minutes": f"{stats['train_seconds'] / 60:.1f}",
        "device": str(device) + (f" ({torch.cuda.get_device_name(0)})" if device.type == "cuda" else ""),
        "parameters": nparams,
        "data": " ".join(os.path.basename(os.path.normpath(d)) for d in (args.selfplay or []) + (args.data or [])),
        "command": command, "torch": torch.__version__,
    })
    if base:   # the run this one started from
        meta.update({"base_command": base.get("command"), "base_train_minutes": base.get("train_minutes"),
                     "base_positions_seen": base.get("positions_seen")})
    torch.save(model.state_dict(), stem + ".pt")      # first: the weights survive a failed export
    export_onnx(model, args.out, meta)
    summary = dict(meta, curve=curve, prep_seconds=round(prep_s, 1), steps=stats["steps"])
    with open(stem + ".json", "w") as fh:
        json.dump(summary, fh, indent=1)
    print(f"train_net: wrote {args.out}, {stem}.png, {stem}.json, {stem}.pt", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
