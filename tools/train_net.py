#!/usr/bin/env python
"""Train gammago's policy/value net on SGF games and export it to ONNX.

    python tools/train_net.py --data ../shared/data --minutes 35 --out models/gammago-net-b4c32.onnx

Needs PyTorch (`pip install torch==2.13.0` or `pip install -e ".[train]"`) and onnx; nothing else in
gammago imports torch. The input planes come from gammago.planes (the same function the engine
calls), so a model and the engine see positions identically.

Steps: (1) sample games from the SGF archives, a few positions per game so that no game's result
dominates the value targets; games are split train / held-out by a hash of their name;
(2) train a fully convolutional residual net (policy: softmax over points + pass; value: tanh
through global pooling), each position under a random one of the 8 symmetries, for a bounded
wall time with a cosine learning-rate schedule over that time; (3) score the held-out positions
(policy top-1 / top-5, value MSE), draw the loss/accuracy curve, export ONNX with metadata.
Trains on a CUDA GPU when torch sees one (`--device auto`, the default; the CPU wheel has none),
else on the CPU with `--threads` torch threads.
"""
import argparse
import io
import json
import math
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
from gammago.net import MODEL_FORMAT  # noqa: E402  (the format the runtime reads)

SIZE = 19                       # the corpus is 19x19; the net itself is size-free
NPLANES = P.PLANES
PACKED = (NPLANES * SIZE * SIZE + 7) // 8


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


def base_metadata(model):
    return {"format": MODEL_FORMAT, "plane_version": P.VERSION, "planes": NPLANES,
            "board_sizes": "5-19", "trained_board_size": SIZE,
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


def read_game(data):
    """sgfmill game -> (winner 'b'/'w', [(colour, vertex)]) or raise ValueError."""
    from sgfmill import sgf
    game = sgf.Sgf_game.from_bytes(data)
    if game.get_size() != SIZE:
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


def positions_of_game(winner, moves, picks):
    """Replay and return (planes list, move index list, value list) at the move numbers picked
    (in increasing order). The value is +1 when the side to move at that position (the colour of
    the move played there) won the game, -1 when it lost."""
    board = Board(SIZE, 7.5)
    out_planes, out_moves, out_values = [], [], []
    picks = sorted(set(picks))
    j = 0
    for i, (colour, vertex) in enumerate(moves):
        if j < len(picks) and picks[j] == i:
            board.to_move = colour
            x = P.planes(board)
            if vertex == "pass":
                target = SIZE * SIZE
            else:
                p = board.point(vertex)
                target = (p // (SIZE + 2) - 1) * SIZE + (p % (SIZE + 2) - 1)
            out_planes.append(np.packbits(x.astype(bool).ravel()))
            out_moves.append(target)
            out_values.append(1 if colour == winner else -1)
            j += 1
            if j == len(picks):
                break
        board.play(vertex, colour)
    return out_planes, out_moves, out_values


def build_dataset(paths, games, per_game, heldout_games, seed, total_games_hint):
    """Sample about `games` training games and `heldout_games` held-out games across the whole
    corpus; per_game positions from each. Returns dict of numpy arrays."""
    rng = np.random.default_rng(seed)
    permille = max(1, round(1000 * heldout_games / total_games_hint))
    p_train = min(1.0, games / (total_games_hint * (1 - permille / 1000)))
    split = {"train": ([], [], [], [], []), "heldout": ([], [], [], [], [])}
    names = {"train": [], "heldout": []}
    lengths = {"train": [], "heldout": []}
    skipped, seen = 0, 0
    bar = tqdm(iter_sgf_sources(paths), total=total_games_hint, desc="reading games", unit="game",
               mininterval=2)
    for name, data in bar:
        seen += 1
        held = is_heldout(name, permille)
        if not held and rng.random() >= p_train:
            continue
        try:
            winner, moves = read_game(data)
        except Exception as e:  # noqa: BLE001 (sgfmill raises several kinds)
            skipped += 1
            tqdm.write(f"train_net: skipping {name}: {e}")
            continue
        if len(moves) < 2:
            continue
        which = "heldout" if held else "train"
        gid = len(names[which])
        k = min(per_game, len(moves))
        picks = np.sort(rng.choice(len(moves), size=k, replace=False))
        try:
            xs, ms, vs = positions_of_game(winner, moves, picks)
        except ValueError as e:
            skipped += 1
            tqdm.write(f"train_net: skipping {name}: {e}")
            continue
        names[which].append(name)
        lengths[which].append(len(moves))
        s = split[which]
        s[0].extend(xs)
        s[1].extend(ms)
        s[2].extend(vs)
        s[3].extend([gid] * len(xs))
        s[4].extend(picks.tolist())           # sorted, as positions_of_game visits them
        bar.set_postfix(train=len(names["train"]), heldout=len(names["heldout"]), refresh=False)
    bar.close()
    out = {"seen": seen, "skipped": skipped}
    for which, (xs, ms, vs, gs, ps) in split.items():
        out[f"{which}_x"] = np.stack(xs) if xs else np.zeros((0, PACKED), np.uint8)
        out[f"{which}_move"] = np.array(ms, np.int16)
        out[f"{which}_value"] = np.array(vs, np.int8)
        out[f"{which}_game"] = np.array(gs, np.int32)
        out[f"{which}_ply"] = np.array(ps, np.int16)             # moves played before the position
        out[f"{which}_plies"] = np.array([lengths[which][g] for g in gs], np.int16)  # moves in its game
        out[f"{which}_names"] = np.array(names[which])
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


def unpack(packed):
    n = packed.shape[0]
    bits = np.unpackbits(packed, axis=1, count=NPLANES * SIZE * SIZE)
    return bits.reshape(n, NPLANES, SIZE, SIZE).astype(np.float32)


# where each move goes under each symmetry: SYM_PERM[k][i] = index of move i after symmetry k.
# transform_policy(arange) gives the inverse (entry j = the move that lands on j); for the quarter
# turns (k = 1, 3) the two differ, and using it directly rotated those targets the wrong way.
SYM_PERM = np.stack([np.argsort(P.transform_policy(np.arange(SIZE * SIZE + 1), SIZE, k))
                     for k in range(8)]).astype(np.int64)


def batch_tensors(data, which, idx, rng, augment):
    x = unpack(data[f"{which}_x"][idx])
    move = data[f"{which}_move"][idx].astype(np.int64)
    value = data[f"{which}_value"][idx].astype(np.float32)
    if augment:
        ks = rng.integers(0, 8, size=len(idx))
        for k in range(1, 8):
            sel = ks == k
            if sel.any():
                x[sel] = P.transform(x[sel], k)
                move[sel] = SYM_PERM[k][move[sel]]
    return torch.from_numpy(x), torch.from_numpy(move), torch.from_numpy(value)


# ---------------------------------------------------------------------------------------------
# Training and evaluation
# ---------------------------------------------------------------------------------------------
def _check_value_shape(v, value):
    """The value output and its targets are both [N]: a [N, 1] output against [N] targets would
    broadcast to [N, N] and make the value loss (and MSE) meaningless."""
    if v.shape != value.shape:
        raise ValueError(f"train_net: value output {tuple(v.shape)} vs targets {tuple(value.shape)}")


@torch.no_grad()
def evaluate(model, data, limit=None, batch=256):
    """Held-out policy top-1 / top-5 / NLL and value MSE (targets +-1 for the side to move);
    with the game phase in the data (caches made since the "own" value head), the value MSE of
    each third of the game too (by the move number over the game's length)."""
    model.eval()
    dev = next(model.parameters()).device
    n = len(data["heldout_move"]) if limit is None else min(limit, len(data["heldout_move"]))
    top1 = top5 = 0
    nll = 0.0
    se = np.zeros(n)
    for s in range(0, n, batch):
        idx = np.arange(s, min(n, s + batch))
        x, move, value = (t.to(dev) for t in batch_tensors(data, "heldout", idx, None, False))
        logits, v = model(x)
        _check_value_shape(v, value)
        nll += F.cross_entropy(logits, move, reduction="sum").item()
        best5 = logits.topk(5, dim=1).indices
        top1 += (best5[:, 0] == move).sum().item()
        top5 += (best5 == move[:, None]).any(dim=1).sum().item()
        se[idx] = ((v - value) ** 2).cpu().numpy()
    train_mode(model)
    out = {"positions": n, "policy_top1": top1 / n, "policy_top5": top5 / n,
           "policy_nll": nll / n, "value_mse": float(se.mean())}
    if "heldout_ply" in data:
        third = np.minimum(2, 3 * data["heldout_ply"][:n].astype(np.int64)
                           // np.maximum(1, data["heldout_plies"][:n].astype(np.int64)))
        for k, name in enumerate(("first", "middle", "last")):
            sel = third == k
            out[f"value_mse_{name}_third"] = float(se[sel].mean()) if sel.any() else float("nan")
            out[f"positions_{name}_third"] = int(sel.sum())
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


def train_step(model, opt, x, move, value, value_weight=1.0):
    """One optimiser step on a batch; returns (loss, policy loss, value loss, policy logits).
    The value's shape is checked against the targets' (_check_value_shape)."""
    logits, v = model(x)
    _check_value_shape(v, value)
    p_loss = F.cross_entropy(logits, move)
    v_loss = F.mse_loss(v, value)
    loss = p_loss + value_weight * v_loss
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss, p_loss, v_loss, logits


def train(model, data, minutes, batch, lr, weight_decay, value_weight, seed, eval_every_s, eval_limit,
          optimizer="sgd"):
    rng = np.random.default_rng(seed + 1)
    params = [p for p in model.parameters() if p.requires_grad]
    if optimizer == "adam":
        opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    else:
        opt = torch.optim.SGD(params, lr=lr, momentum=0.9, nesterov=True, weight_decay=weight_decay)
    train_mode(model)
    dev = next(model.parameters()).device
    ntrain = len(data["train_move"])
    budget = minutes * 60.0
    curve = {"t": [], "train_loss": [], "train_acc": [], "eval_t": [], "eval_nll": [], "eval_top1": [],
             "eval_mse": [], "eval_mse_last_third": []}
    ema_loss = ema_acc = None
    start = time.perf_counter()
    last_eval = start
    step = seen = 0
    bar = tqdm(total=int(budget), desc="training", unit="s", mininterval=5,
               bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} s [{elapsed}<{remaining}{postfix}]")
    perm = rng.permutation(ntrain)
    pos = 0
    while True:
        now = time.perf_counter()
        frac = (now - start) / budget
        if frac >= 1.0:
            break
        # linear warm-up over the first 3%, then cosine to zero at the end of the budget
        scale = min(1.0, frac / 0.03) * 0.5 * (1 + math.cos(math.pi * frac))
        for g in opt.param_groups:
            g["lr"] = lr * scale
        if pos + batch > ntrain:
            perm, pos = rng.permutation(ntrain), 0
        idx = np.sort(perm[pos:pos + batch])
        pos += batch
        x, move, value = (t.to(dev, non_blocking=True) for t in batch_tensors(data, "train", idx, rng, True))
        loss, p_loss, v_loss, logits = train_step(model, opt, x, move, value, value_weight)
        step += 1
        seen += len(idx)
        acc = (logits.argmax(1) == move).float().mean().item()
        ema_loss = loss.item() if ema_loss is None else 0.98 * ema_loss + 0.02 * loss.item()
        ema_acc = acc if ema_acc is None else 0.98 * ema_acc + 0.02 * acc
        t = time.perf_counter() - start
        if step % 10 == 0:
            curve["t"].append(t)
            curve["train_loss"].append(ema_loss)
            curve["train_acc"].append(ema_acc)
        if time.perf_counter() - last_eval >= eval_every_s:
            t_eval0 = time.perf_counter()
            e = evaluate(model, data, eval_limit)
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
        bar.n = min(int(budget), int(time.perf_counter() - start))
        bar.set_postfix(loss=f"{ema_loss:.3f}", acc=f"{ema_acc:.3f}", lr=f"{lr * scale:.4f}", pos=seen, refresh=False)
        bar.update(0)
    bar.close()
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
    ap.add_argument("--data", nargs="+", default=["../shared/data"],
                    help="SGF files, directories or tar archives (read in place)")
    ap.add_argument("--out", default="models/gammago-net.onnx", help="ONNX file to write")
    ap.add_argument("--games", type=int, default=30000, help="training games sampled across the corpus")
    ap.add_argument("--heldout-games", type=int, default=1500, help="held-out games (split by name hash)")
    ap.add_argument("--per-game", type=int, default=4, help="positions sampled per game")
    ap.add_argument("--total-games", type=int, default=169924, help="games in --data (for the sampling rate)")
    ap.add_argument("--cache", default=None, help="npz of the sampled positions (made if missing)")
    ap.add_argument("--blocks", type=int, default=4)
    ap.add_argument("--value-head", choices=GoNet.VALUE_HEADS, default="own",
                    help="own: board mean of a per-point ownership map (+ pooled correction); pool: pooled features only")
    ap.add_argument("--channels", type=int, default=48)
    ap.add_argument("--minutes", type=float, default=30.0, help="training wall time")
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
        data = build_dataset(args.data, args.games, args.per_game, args.heldout_games, args.seed, args.total_games)
        if args.cache:
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
    nparams = sum(p.numel() for p in model.parameters())
    model.to(device)
    curve, stats = train(model, data, args.minutes, args.batch, args.lr, args.weight_decay,
                         args.value_weight, args.seed, args.eval_every, args.eval_limit, args.optimizer)
    final = evaluate(model, data)
    model.cpu()   # export and save from the CPU
    thirds = " / ".join(f"{final[f'value_mse_{k}_third']:.4f}" for k in ("first", "middle", "last")
                        if f"value_mse_{k}_third" in final)
    print(f"train_net: held-out ({final['positions']} positions): top-1 {final['policy_top1']:.4f} "
          f"top-5 {final['policy_top5']:.4f} value MSE {final['value_mse']:.4f}"
          + (f" (by third of the game: {thirds})" if thirds else ""), file=sys.stderr)

    stem = os.path.splitext(args.out)[0]
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    plot_curve(curve, stem + ".png", f"{os.path.basename(stem)}: {args.blocks} blocks x {args.channels} channels")
    command = "python tools/train_net.py " + " ".join(argv if argv is not None else sys.argv[1:])
    meta = base_metadata(model)
    meta.update({
        "heldout_policy_top1": f"{final['policy_top1']:.4f}",
        "heldout_policy_top5": f"{final['policy_top5']:.4f}",
        "heldout_value_mse": f"{final['value_mse']:.4f}",
        **{f"heldout_{k}": f"{v:.4f}" for k, v in final.items() if k.startswith("value_mse_")},
        "heldout_positions": final["positions"],
        "heldout_games": len(data["heldout_names"]),
        "train_positions": ntr, "train_games": len(data["train_names"]),
        "positions_seen": stats["positions_seen"], "train_minutes": f"{stats['train_seconds'] / 60:.1f}",
        "parameters": nparams, "data": " ".join(os.path.basename(os.path.normpath(d)) for d in args.data),
        "command": command, "torch": torch.__version__,
    })
    if base:   # the run this one started from
        meta.update({"base_command": base.get("command"), "base_train_minutes": base.get("train_minutes"),
                     "base_positions_seen": base.get("positions_seen")})
    export_onnx(model, args.out, meta)
    torch.save(model.state_dict(), stem + ".pt")
    summary = dict(meta, curve=curve, prep_seconds=round(prep_s, 1), steps=stats["steps"])
    with open(stem + ".json", "w") as fh:
        json.dump(summary, fh, indent=1)
    print(f"train_net: wrote {args.out}, {stem}.png, {stem}.json, {stem}.pt", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
