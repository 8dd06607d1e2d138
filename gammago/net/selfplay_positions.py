"""Self-play records as training positions for the net (gammago train-net --selfplay), torch-free.

Every position of a game whose move was searched at the full playouts gives a policy target: the
root's visit distribution (at most TOPK moves, the most visited, renormalised), stored sparse as
point indices and probabilities (row * size + col, pass = size * size: the net's policy index).
Its value target is the game's result from the mover's view (+1 won, -1 lost, 0 a draw), trained
on `value_per_game` positions drawn from each game (0: every position), as AlphaGo drew one a game
against the value learning games by heart; a cheap search's position (playout-cap randomization)
trains the value only. Games are split into training and held-out by a hash of the run's folder
name and the game's file name (not of the path as given), `heldout_permille` per mille held out.

A record that does not read (truncated, another format, moves that do not replay: gammago.
selfplay_record.read_game) is named with its path and skipped; the rest goes on.
"""
import os
import sys
import zlib

import numpy as np

from gammago.net import planes as P
from gammago.net import selfplay_record as R
from gammago.go.board import Board

TOPK = 32                 # policy target entries kept per position (net-root searches 20 moves)


def record_name(path):
    """RUN/games/000042.json -> 'RUN/000042.json': the split's key, whatever the path's prefix."""
    path = os.path.abspath(path)
    games = os.path.dirname(path)
    return f"{os.path.basename(os.path.dirname(games))}/{os.path.basename(path)}"


HELDOUT_PERMILLE = 50    # games held out, per mille (the trainer's default split)


def is_heldout(name, permille):
    return zlib.crc32(name.encode()) % 1000 < permille


def policy_index(board, vertex):
    n = board.size
    if vertex == "pass":
        return n * n
    p = board.point(vertex)
    return (p // (n + 2) - 1) * n + (p % (n + 2) - 1)


POLICY_TARGETS = ("visits", "best", "improved", "pruned")
RECORDED_TARGETS = ("improved", "pruned")     # targets a record holds under their own name, or lacks


def value_target(result, winrate, value_q):
    """The value target of a position: the game's result for the mover (+1, 0, -1), mixed with
    the search's win rate there (2 * winrate - 1) at weight value_q (0: the result alone; a
    position without a win rate keeps the result)."""
    if not value_q or winrate is None:
        return float(result)
    return (1 - value_q) * result + value_q * (2 * float(winrate) - 1)


def game_positions(rec, value_per_game, rng, topk=TOPK, policy_target="visits", value_q=0.0):
    """One checked record -> lists (packed planes, best move index, [(index, prob)], value,
    value mask, ply) for the positions kept. policy_target: "visits", the root's visit
    distribution; "best", the most visited move alone (the search's choice, one-hot);
    "improved", the Gumbel policy target the record holds (selfplay --gumbel); "pruned", the
    visits after policy target pruning the record holds; a position without the target it
    names trains the value only. value_q: the weight of the search's win rate in the value
    target (value_target)."""
    n = rec["size"]
    moves, search = rec["moves"], rec["search"]
    winner = rec["winner"]
    nmoves = len(moves)
    vpick = np.ones(nmoves, bool)
    if value_per_game and nmoves > value_per_game:
        vpick[:] = False
        vpick[rng.choice(nmoves, size=value_per_game, replace=False)] = True
    board = Board(n, float(rec["komi"]))
    out = []
    for i, ((colour, vertex), s) in enumerate(zip(moves, search)):
        dist = s.get(policy_target) if policy_target in RECORDED_TARGETS else s["visits"]
        keep_policy = bool(s.get("full", True)) and bool(dist)
        if keep_policy or vpick[i]:
            board.to_move = colour
            x = np.packbits(P.planes(board).astype(bool).ravel())
            target = []
            if keep_policy:
                items = sorted(dist.items(), key=lambda kv: -kv[1])[:topk]
                total = sum(v for _, v in items)
                if total > 0:
                    target = [(policy_index(board, m), v / total) for m, v in items if v > 0]
                    if policy_target == "best":
                        target = [(target[0][0], 1.0)]
            best = target[0][0] if target else -1
            value = value_target(0 if not winner else (1 if colour == winner else -1),
                                 s.get("winrate"), value_q)
            out.append((x, best, target, value, bool(vpick[i]), i))
        board.play(vertex, colour)
    return out


def read_positions(paths, value_per_game=8, heldout_permille=HELDOUT_PERMILLE, seed=1, size=None, topk=TOPK,
                   progress=True, policy_target="visits", value_q=0.0):
    """The positions of every self-play record under paths (run folders or record files), in
    train_net's dataset layout: {which}_x packed planes, _move (the most visited move, -1 for a
    value-only position), _pidx / _pprob (the sparse policy target, [N, topk]), _value, _vmask,
    _ply, _plies, _game, _names for which in (train, heldout), and 'size'. size: the board size
    to keep (None: the first record's); records of another size are skipped and counted.
    policy_target: as game_positions takes it (held-out figures are scored the same way).
    value_q: the search's win rate's weight in the training positions' value targets; the
    held-out ones keep the game's result, so that their value MSE stays comparable."""
    if not 0 <= value_q <= 1:
        raise ValueError(f"value q weight must be in [0, 1], not {value_q}")
    if policy_target not in POLICY_TARGETS:
        raise ValueError(f"policy target must be one of {POLICY_TARGETS}, not {policy_target!r}")
    from tqdm import tqdm
    files = R.game_files(paths)
    split = {"train": [], "heldout": []}
    names = {"train": [], "heldout": []}
    skipped, other_size = [], 0
    for path in tqdm(files, desc="reading self-play", unit="game", disable=not progress, mininterval=2):
        try:
            rec = R.read_game(path)
        except R.RecordError as e:
            skipped.append(str(e))
            print(f"train_net: skipping {e}", file=sys.stderr)
            continue
        if size is None:
            size = rec["size"]
        if rec["size"] != size:
            other_size += 1
            continue
        name = record_name(path)
        which = "heldout" if is_heldout(name, heldout_permille) else "train"
        rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
        pos = game_positions(rec, value_per_game, rng, topk, policy_target,
                             value_q if which == "train" else 0.0)
        if not pos:
            continue
        gid = len(names[which])
        names[which].append(name)
        split[which].extend((gid, len(rec["moves"])) + p for p in pos)
    if other_size:
        print(f"train_net: left out {other_size} self-play games of other sizes than {size}x{size}",
              file=sys.stderr)
    size = size or 9
    packed = (P.PLANES * size * size + 7) // 8
    data = {"size": np.int64(size), "skipped": np.int64(len(skipped))}
    for which, rows in split.items():
        k = len(rows)
        pidx = np.zeros((k, topk), np.int16)
        pprob = np.zeros((k, topk), np.float16)
        for r, row in enumerate(rows):
            for j, (idx, pr) in enumerate(row[4]):
                pidx[r, j], pprob[r, j] = idx, pr
        data[f"{which}_x"] = np.stack([r[2] for r in rows]) if rows else np.zeros((0, packed), np.uint8)
        data[f"{which}_move"] = np.array([r[3] for r in rows], np.int16)
        data[f"{which}_pidx"] = pidx
        data[f"{which}_pprob"] = pprob
        data[f"{which}_value"] = np.array([r[5] for r in rows], np.float32 if value_q else np.int8)
        data[f"{which}_vmask"] = np.array([r[6] for r in rows], np.int8)
        data[f"{which}_ply"] = np.array([r[7] for r in rows], np.int16)
        data[f"{which}_plies"] = np.array([r[1] for r in rows], np.int16)
        data[f"{which}_game"] = np.array([r[0] for r in rows], np.int32)
        data[f"{which}_names"] = np.array(names[which])
    return data
