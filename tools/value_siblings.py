#!/usr/bin/env python3
"""Does a net's value tell the root's moves apart? On the held-out games of self-play runs (the
trainer's split: gammago.net.selfplay_positions.is_heldout), at positions where the search gave three or
more moves at least two root batches, how often the move whose resulting position the net values
most is the search's most visited one, and the mean Spearman correlation between the net's values
of those moves and their visits. net-root mixes the value into each root move's value
(--set net_lambda=L): it needs this ranking, not the game-result MSE the trainer reports.

    python tools/value_siblings.py --selfplay RUN [RUN ...] --positions 400 NET.onnx [NET.onnx ...]

The policy column is the same share for the net's priors; it favours the net that ran the search
(the visits follow its priors), the value column does not while the search ran with
net_lambda 0.
"""
import argparse
import sys

import numpy as np
from scipy.stats import spearmanr

from gammago.net import runtime as N
from gammago.net import selfplay_record as R
from gammago.go.board import Board
from gammago.net.selfplay_positions import HELDOUT_PERMILLE, is_heldout, record_name

MIN_VISITS = 32        # two root batches: a move the search looked at beyond its first batch


def positions(runs, limit, permille, seed):
    out = []
    for path in R.game_files(runs):
        if not is_heldout(record_name(path), permille):
            continue
        try:
            rec = R.read_game(path)
        except R.RecordError as e:
            print(f"value_siblings: skipping {e}", file=sys.stderr)
            continue
        board = Board(rec["size"], float(rec["komi"]))
        for (colour, vertex), s in zip(rec["moves"], rec["search"]):
            board.to_move = colour
            kids = {m: n for m, n in s["visits"].items() if n >= MIN_VISITS and m != "pass"}
            if len(kids) >= 3 and s.get("full", True):
                out.append((board.copy(), kids))
            board.play(vertex, colour)
    pick = np.random.default_rng(seed).permutation(len(out))[:limit]
    return [out[i] for i in pick]


def score(net, pos):
    top = pol = rho_sum = 0.0
    for board, kids in pos:
        values = net.child_values(board, list(kids))
        best = max(kids, key=kids.get)
        top += max(values, key=values.get) == best
        pri = net.priors(board)
        pol += max(kids, key=lambda m: pri.get(m, 0.0)) == best
        rho = spearmanr([kids[m] for m in kids], [values[m] for m in kids]).correlation
        rho_sum += 0.0 if np.isnan(rho) else rho
    n = max(1, len(pos))
    return top / n, pol / n, rho_sum / n


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("nets", nargs="+", help="ONNX models to score")
    p.add_argument("--selfplay", nargs="+", required=True, metavar="RUN", help="self-play run folders")
    p.add_argument("--positions", type=int, default=400, help="positions drawn from the held-out games")
    p.add_argument("--heldout-permille", type=int, default=HELDOUT_PERMILLE,
                   help="the trainer's split (its default)")
    p.add_argument("--seed", type=int, default=1)
    args = p.parse_args(argv)
    pos = positions(args.selfplay, args.positions, args.heldout_permille, args.seed)
    if not pos:
        print("value_siblings: no held-out position with three moves searched", file=sys.stderr)
        return 1
    print(f"{len(pos)} held-out positions")
    print("net | value's best = most visited | policy's best = most visited | Spearman(value, visits)")
    for path in args.nets:
        try:
            net = N.load(path, symmetry="average")
        except N.NetError as e:
            print(f"value_siblings: {e}", file=sys.stderr)
            return 2
        top, pol, rho = score(net, pos)
        print(f"{path} | {top:.3f} | {pol:.3f} | {rho:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
