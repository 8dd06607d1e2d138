#!/usr/bin/env python3
"""Label the positions of a train-balance label cache again, by another search: does the
judge depend on who made the labels?

    PYTHONPATH=. python tools/relabel.py patterns/labels/rollout9-tail-net-root-10000.labels.json.gz \\
        docs/notebook/matches/9x9-v2net-root-0.5s/games.sgf [...] --size 9 --holdout 0.2 \\
        --label-mode net-root --label-playouts 10000 \\
        --label-engine "--rollout-gammas balanced.gamma" --out balanced.labels.json.gz

The positions are those of the given games that CACHE holds, each once, picked as
`tools/rollout_accuracy.py --labels CACHE` picks them (with `--holdout F --split-seed S`, only
the held-out games of train-balance's split, less the positions a training game reaches). They
are labelled by the search that `gammago train-balance` runs (`--label-mode`,
`--label-playouts`, `--label-engine`, `--seed`, `--threads`: the same options) and written to
OUT, a label cache of the same kind that names the search that made it;
`tools/rollout_accuracy.py --labels OUT` then judges the rollouts against the new labels, on the
same positions. Positions that OUT already holds from the same search are not labelled again.
It prints the number of positions, and how far the new labels lie from CACHE's: the mean of
each, and their mean squared difference.
"""
import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402

from gammago.go import sgf  # noqa: E402
from gammago.engine.position_labels import (add_label_arguments, label_engine_config,  # noqa: E402
                                             load_or_label, read_label_cache)
from rollout_accuracy import judged_positions  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cache", help="the label cache whose positions are labelled again")
    ap.add_argument("paths", nargs="+", help="SGF files, directories or archives")
    ap.add_argument("--out", required=True, help="label cache to write (.gz: compressed)")
    ap.add_argument("--size", type=int, default=9, help="board size of the games used")
    ap.add_argument("--holdout", type=float, default=None, metavar="F",
                    help="only the games train-balance --holdout F held out")
    ap.add_argument("--split-seed", type=int, default=1,
                    help="train-balance's --seed of that split (default 1, its default)")
    add_label_arguments(ap)
    ap.add_argument("--seed", type=int, default=1, help="seed of the labelling searches")
    ap.add_argument("--threads", type=int, default=2, help="processes that label")
    args = ap.parse_args(argv)
    if args.holdout is not None and not 0 < args.holdout < 1:
        print("relabel: --holdout must be between 0 and 1", file=sys.stderr)
        return 2
    if args.label_playouts < 1 or args.threads < 1:
        print("relabel: --label-playouts and --threads must be >= 1", file=sys.stderr)
        return 2
    try:
        label_engine_config(args.label_engine, args.label_mode, args.label_playouts, args.seed)
        games = [g for g in sgf.iter_games(args.paths)
                 if g.size == args.size and not g.setups]
        _, _, known, _ = read_label_cache(args.cache, games)
    except (OSError, EOFError, ValueError) as e:
        print(f"relabel: {e}", file=sys.stderr)
        return 2
    games, positions = judged_positions(games, known, args.holdout, args.split_seed)
    if not positions:
        print(f"relabel: {args.cache} holds no position of these games", file=sys.stderr)
        return 2
    print(f"relabel: {len(positions)} positions of {args.cache}", file=sys.stderr)
    try:
        new = np.array(load_or_label(
            Path(args.out), games, [(gi, i, b) for b, _, i, gi in positions], args.size,
            args.label_playouts, args.threads, args.seed, args.label_mode, args.label_engine))
    except (OSError, ValueError) as e:
        print(f"relabel: {e}", file=sys.stderr)
        return 2
    old = np.array([y for _, y, _, _ in positions])
    print(f"{len(positions)} positions: mean label {old.mean():.4f} in {args.cache}, "
          f"{new.mean():.4f} in {args.out}; mean squared difference "
          f"{float(np.mean((new - old) ** 2)):.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
