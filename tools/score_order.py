#!/usr/bin/env python3
"""How far the candidates' own scores agree with their win rates: positions of real games searched
by the engine, and for each pair of candidates with enough visits whether the one with the higher
win rate also has the higher score (the rollouts' mean count over the komi), as KaTrain and
Lizzie rank them. Also: how many positions have candidates whose scores are not all equal, and
how often the most visited move's score lies within the root's spread (mean +- one standard
deviation of the playouts' scores).

    python tools/score_order.py tests/data/2006-11-27-43.sgf tests/games9/selfplay-game_0001.sgf \\
        --playouts 2000 --every 10 --mode auto

A benchmark, not a test: docs/BENCHMARKS.md quotes its figures.
"""
import argparse
import itertools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gammago.engine.engine import Engine  # noqa: E402
from gammago.engine.settings import EngineConfig  # noqa: E402
from gammago.go import sgf  # noqa: E402


def positions(path, every):
    """(size, komi, moves so far) every `every` moves of the game at path."""
    for game in sgf.iter_games([path], errors="yield"):
        if not hasattr(game, "moves"):
            print(f"{path}: {game}", file=sys.stderr)
            continue
        for k in range(every, len(game.moves), every):
            yield game.size, game.komi, game.moves[:k]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="+")
    ap.add_argument("--playouts", type=int, default=2000)
    ap.add_argument("--every", type=int, default=10, help="a position every N moves")
    ap.add_argument("--min-visits", type=int, default=50, help="candidates compared from N visits")
    ap.add_argument("--mode", default="auto")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    agree = pairs = differ = searched = within = 0
    for path in args.games:
        for size, komi, moves in positions(path, args.every):
            e = Engine(EngineConfig(playouts=args.playouts, mode=args.mode, seed=args.seed))
            e.new_game(size, komi)
            for colour, vertex in moves:
                e.play(colour, vertex)
            c = "w" if moves and moves[-1][0] == "b" else "b"
            e.decide(c, allow_resign=False)
            infos = [d for d in e.last_infos if d["visits"] >= args.min_visits and "score_mean" in d]
            searched += 1
            if len({round(d["score_mean"], 2) for d in e.last_infos if "score_mean" in d}) > 1:
                differ += 1
            root = e.root_score(1 if c == "b" else 2)
            best = e.last_infos[0] if e.last_infos else None
            if root and best and "score_mean" in best and abs(best["score_mean"] - root[0]) <= root[1]:
                within += 1
            for a, b in itertools.combinations(infos, 2):
                if a["winrate"] == b["winrate"] or a["score_mean"] == b["score_mean"]:
                    continue
                pairs += 1
                agree += (a["winrate"] > b["winrate"]) == (a["score_mean"] > b["score_mean"])
    print(f"positions {searched}: candidates' scores not all equal in {differ}; the most visited "
          f"move's score within the root's spread in {within}")
    print(f"candidate pairs ({args.min_visits}+ visits each): {pairs}, score order = win-rate "
          f"order in {agree} ({100.0 * agree / max(pairs, 1):.1f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
