#!/usr/bin/env python3
"""How well does the FIRST move of a gamma rollout predict the moves of strong players, next to
what `gammago predict` reports for the same gammas on the same positions?

    PYTHONPATH=. python tools/rollout_predict.py --games 50 /work/shared/data/kgs6d_19x19_even.tar.xz

For every position of every game (handicap/setup honoured) it reports:
  predict_top1      the played move is the strongest legal move (features.evaluate_game, ties
                    broken against it: greater == 0 and equal == 0), as `gammago predict` counts
  rollout_top1      the played move is the most likely first rollout move (the rollout's exact
                    distribution: legal moves but own true eyes, no pass)
  rollout_mean_p    mean probability the rollout's first move is the played move
  predict_mean_p    mean of the same probability under the predict model (exp log-evidence;
                    candidates include pass and own eyes)
  rollout_sampled   fraction of positions where one sampled first rollout move (a real draw of
                    the sampler, seeded) is the played move; its expectation is rollout_mean_p
"""
import argparse
import json
import math
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

from gammago.moves import features as F  # noqa: E402
from gammago.rollout import gamma_policy as rollout  # noqa: E402
from gammago.go import sgf
from gammago.core.seeds import derive  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="SGF files, directories or archives")
    ap.add_argument("--games", type=int, default=50, help="games to read (default 50)")
    ap.add_argument("--gammas", default=None, help="gamma file (default: the shipped gammas)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    try:
        gp = rollout.GammaPolicy(args.gammas)
    except (ValueError, OSError) as e:
        print(f"rollout_predict: {e}", file=sys.stderr)
        return 2
    table = gp.table
    n = pred_top1 = roll_top1 = sampled = 0
    roll_p = pred_p = 0.0
    games = 0
    for game in tqdm(list(sgf.iter_games(args.paths, max_games=args.games)), desc="games",
                     file=sys.stderr):
        if not hasattr(game, "moves"):
            continue
        games += 1
        ev = F.evaluate_game(game.board(), game.moves, table)
        b = game.board()
        k = 0
        for i, (colour, vertex) in enumerate(game.moves):
            if k < len(ev["move_number"]) and ev["move_number"][k] == i and vertex != "pass":
                b.to_move = colour
                probs = gp.probabilities(b)
                p = b.point(vertex)
                n += 1
                pred_top1 += int(ev["greater"][k] == 0 and ev["equal"][k] == 0)
                pred_p += math.exp(ev["log_evidence"][k])
                roll_p += probs[p]
                roll_top1 += int(probs[p] > 0 and probs[p] == probs.max()
                                 and (probs == probs.max()).sum() == 1)
                first = int(np.argmax(gp.first_moves(b, 1, seed=derive(args.seed, n))))
                sampled += int(first == p)
            if k < len(ev["move_number"]) and ev["move_number"][k] == i:
                k += 1
            b.play(vertex, colour)
    if n == 0:
        print("rollout_predict: no positions", file=sys.stderr)
        return 1
    out = {"games": games, "positions": n, "predict_top1": pred_top1 / n,
           "rollout_top1": roll_top1 / n, "predict_mean_p": pred_p / n,
           "rollout_mean_p": roll_p / n, "rollout_sampled": sampled / n}
    if args.json:
        print(json.dumps(out))
    else:
        for key, v in out.items():
            print(f"  {key:<16} {v:.4f}" if isinstance(v, float) else f"  {key:<16} {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
