#!/usr/bin/env python3
"""Quality yardstick of the gamma rollouts: two flat Monte-Carlo players with the same
number of playouts per move, one playing its playouts out with the gamma policy, the other with
uniform (light) playouts, play each other on 9x9. Colours alternate game by game; every game has
its own seeds. Prints the gamma player's score with a Wilson 95% interval.

    PYTHONPATH=. python tools/flat_mc_match.py --games 200 --playouts 1000 --seed 1001
    PYTHONPATH=. python tools/flat_mc_match.py --gammas patterns/gammas19.gamma --json

A flat Monte-Carlo player spreads its playouts evenly over every legal move that does not fill
one of its own true eyes (positional superko), and plays the move with the best win rate; it
passes when no such move is left. A game ends on two passes (or a move cap) and is scored by
Tromp-Taylor area with komi.

1,000 playouts a move is the default: with about 60 candidates, 256 playouts give each 3-5, so
the choice is mostly noise for both players (ties at 100% go to the first candidate) and the
gamma player's score sits near 75%; at 1,000 it is 85-90% (docs/BENCHMARKS.md, "Rollouts:
quality"). --pass-candidate lets both players pass when passing evaluates best. (Softened
gammas, gamma ** P, were played here until c38f670: no P was better,
docs/notebook/experiments/rollout-power.md.)
"""
import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tqdm import tqdm  # noqa: E402

from gammago.go.board import Board  # noqa: E402
from gammago.rollout import flat_mc  # noqa: E402
from gammago.rollout import playout
from gammago.rollout import gamma_policy as rollout
from gammago.arena.stats import wilson_interval  # noqa: E402


def flat_move(board, playouts, policy, seed, with_pass):
    """The flat Monte-Carlo move of `policy` ('light' or a GammaPolicy). with_pass: pass is a
    candidate too, evaluated like the others with its even share of the playouts (after the
    opponent's pass it ends the game, so its playouts score the board as it stands)."""
    if not with_pass:
        return flat_mc.flat_mc_move(board, playouts, policy, seed)
    n = len(board.legal_moves(include_eyes=False))
    if n == 0:
        return "pass", 0.0
    k = max(1, playouts // (n + 1))
    after = board.copy()
    after.play("pass")
    evaluate = playout.light_evaluate if policy == "light" else policy.evaluate
    black = evaluate(after, k, seed ^ 0x5DEECE66D)["black_winrate"]
    rate_pass = black if board.to_move == "b" else 1.0 - black
    move, rate = flat_mc.flat_mc_move(board, playouts - k, policy, seed)
    if rate_pass > rate or (board.passes and rate_pass >= rate):
        return "pass", rate_pass
    return move, rate


def play_game(size, komi, playouts, gamma_policy, gamma_black, seed, with_pass=False):
    """One game; returns (score for Black, moves, True if the gamma player won)."""
    board = Board(size, komi)
    cap = 3 * size * size
    n = 0
    while board.passes < 2 and n < cap:
        gamma_to_move = (board.to_move == "b") == gamma_black
        policy = gamma_policy if gamma_to_move else "light"
        move, _ = flat_move(board, playouts, policy, seed * 100003 + n, with_pass)
        board.play(move)
        n += 1
    score = board.score()
    gamma_won = (score > 0) == gamma_black if score != 0 else None
    return score, n, gamma_won


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=100, help="games to play (default 100)")
    ap.add_argument("--playouts", type=int, default=1000, help="playouts per move, both players")
    ap.add_argument("--size", type=int, default=9, help="board size (default 9)")
    ap.add_argument("--komi", type=float, default=7.5)
    ap.add_argument("--gammas", default=None, help="gamma file (default: the shipped gammas)")
    ap.add_argument("--pass-candidate", action="store_true",
                    help="both players consider passing (evaluated by playouts like any move) "
                         "instead of passing only when no move is left")
    ap.add_argument("--seed", type=int, default=1, help="seed of the first game")
    ap.add_argument("--json", action="store_true", help="print one JSON object at the end")
    args = ap.parse_args(argv)
    if args.games < 1 or args.playouts < 1:
        ap.error("--games and --playouts must be at least 1")
    try:
        from gammago.moves import gammas as G
        table = G.load(args.gammas) if args.gammas else G.load_default(args.size)
        policy = rollout.GammaPolicy(table)
    except (ValueError, OSError) as e:
        print(f"flat_mc_match: {e}", file=sys.stderr)
        return 2
    wins = draws = 0
    moves = 0
    as_black = [0, 0]           # gamma player's wins and games as Black
    margins = []                # the gamma player's final score margin, game by game
    t0 = time.perf_counter()
    bar = tqdm(range(args.games), desc="games", unit="game", file=sys.stderr)
    for i in bar:
        black = i % 2 == 0
        score, n, won = play_game(args.size, args.komi, args.playouts, policy, black,
                                  args.seed + i, args.pass_candidate)
        moves += n
        margins.append(score if black else -score)
        if black:
            as_black[1] += 1
            as_black[0] += bool(won)
        if won is None:
            draws += 1
        elif won:
            wins += 1
        bar.set_postfix(gamma=f"{wins + 0.5 * draws:g}/{i + 1}")
    elapsed = time.perf_counter() - t0
    score = wins + 0.5 * draws
    lo, hi = wilson_interval(score, args.games)
    out = {"games": args.games, "gamma_wins": wins, "draws": draws,
           "gamma_score": score / args.games, "wilson95": [round(lo, 4), round(hi, 4)],
           "playouts_per_move": args.playouts, "size": args.size, "komi": args.komi,
           "pass_candidate": args.pass_candidate, "mean_moves": moves / args.games,
           "gamma_black_wins": as_black[0], "gamma_black_games": as_black[1],
           "gamma_margins": margins, "seconds": round(elapsed, 1), "seed": args.seed}
    if args.json:
        print(json.dumps(out))
    else:
        print(f"flat MC, {args.playouts} playouts/move, {args.size}x{args.size} komi {args.komi:g}: "
              f"gamma playouts won {wins} of {args.games} games ({draws} drawn) = "
              f"{100 * score / args.games:.1f}%, Wilson 95% [{100 * lo:.1f}%, {100 * hi:.1f}%]; "
              f"{moves / args.games:.0f} moves/game, {elapsed:.0f} s; as Black {as_black[0]}/"
              f"{as_black[1]}, as White {wins - as_black[0]}/{args.games - as_black[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
