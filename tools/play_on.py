#!/usr/bin/env python3
"""Were the resignations sound? Play on the games a player resigned, from the position it
resigned in, and count how many it would still have won.

Each record that ended by resignation (RE[B+R] or RE[W+R]; with --player, only those the
named player resigned, matched in PB/PW) is played on from its last position: --engine
takes the side that resigned (give it resignation off, as the default does) and --opponent
the other, under the referee of `gammago match` (gammago/arena/referee.py: its rules, time
limits and Tromp-Taylor score). Each game is played on --repeats times, each with its own
{seed}. The summary says how many of the resigned games the resigner won or drew on, and
in how many of the plays:

    PYTHONPATH=. python tools/play_on.py docs/notebook/matches/9x9-seki-mercy-gnugo-0.2s-20000/games.sgf \\
        --player gammago --engine "gammago --threads 1 --seed {seed} --quiet --resign 0" \\
        --opponent gnugo:10 --time-per-move 0.2 --time-settings-to engine --repeats 2 \\
        --parallel 2 --json play_on.json

A record whose moves cannot be replayed, or with setup stones other than a fixed handicap's,
is named on stderr and skipped. A play that ends in an engine's failure (a crash, a timeout,
an illegal move) is counted as that engine's loss, as a match counts it, and named.
"""
import argparse
import concurrent.futures
import json
import sys

from tqdm import tqdm

from gammago.go import sgf
from gammago.go.handicap import fixed_points
from gammago.arena.match_record import MatchConfig
from gammago.arena.referee import play_game

DEFAULT_ENGINE = "gammago --threads 1 --seed {seed} --quiet --resign 0"
SEEDS_PER_GAME = 1000        # game g's repeat r gets seed --seed + g * SEEDS_PER_GAME + r


def resigned_by(game, player=None):
    """'b' or 'w': the side that resigned the game (the loser of an RE of 'B+R' / 'W+R'), or
    None if it did not end by resignation or (with player) another player resigned."""
    result = (game.result or "").strip().upper()
    if result not in ("B+R", "W+R", "B+RESIGN", "W+RESIGN"):
        return None
    side = "w" if result.startswith("B") else "b"
    name = game.players[0 if side == "b" else 1]
    if player is not None and player.lower() not in name.lower():
        return None
    return side


def handicap_of(game):
    """The game's handicap as `gammago match --handicap` places it, or ValueError when its setup
    is not the fixed layout (or it has White setup stones)."""
    if game.setup_white:
        raise ValueError("White setup stones are not supported")
    if not game.setup_black:
        return 0
    n = len(game.setup_black)
    try:
        fixed = fixed_points(game.size, n)
    except ValueError:
        fixed = None
    if fixed is None or sorted(fixed) != sorted(game.setup_black):
        raise ValueError("setup stones other than the fixed handicap layout are not supported")
    return n


def play_on(game, side, handicap, engine, opponent, repeat, seed, time_per_move,
            time_settings_to, sgf_dir="", number=0):
    """One play from the end of `game` by `engine` as `side` against `opponent`: its result
    as a dict (the resigner's outcome 1 won, 0.5 drawn, 0 lost). With sgf_dir, the game is
    written there as game_NNNN.sgf, NNNN = number + 1."""
    black, white = (engine, opponent) if side == "b" else (opponent, engine)
    to = {"both": "both", "none": "none", "engine": "1" if side == "b" else "2",
          "opponent": "2" if side == "b" else "1"}[time_settings_to]
    cfg = MatchConfig(engines={1: black, 2: white}, names={1: "black", 2: "white"}, games=1,
                      size=game.size, komi=game.komi, handicap=handicap,
                      alternate=False, seed=seed - number, time_per_move=time_per_move,
                      time_settings_to=to, sgf_dir=sgf_dir)
    res = play_game(cfg, number, start=game.moves)      # its seed: cfg.seed + number
    outcome = 1.0 if res.winner == side else 0.5 if res.winner == "" else 0.0
    return {"name": game.name, "resigned": side, "after_move": len(game.moves), "repeat": repeat,
            "seed": seed, "winner": res.winner or "draw", "reason": res.reason,
            "detail": res.detail, "result": res.result, "sgf": res.sgf,
            "moves_added": res.moves - len(game.moves), "outcome": outcome}


def summary(plays):
    """Per resigned game, and in all: the plays the resigner won, drew and lost."""
    by_game = {}
    for p in plays:
        by_game.setdefault(p["name"], []).append(p["outcome"])
    saved = sum(1 for v in by_game.values() if any(o > 0 for o in v))
    return {"games": len(by_game), "plays": len(plays),
            "won": sum(p["outcome"] == 1.0 for p in plays),
            "drawn": sum(p["outcome"] == 0.5 for p in plays),
            "lost": sum(p["outcome"] == 0.0 for p in plays),
            "score": sum(p["outcome"] for p in plays) / len(plays) if plays else 0.0,
            "games_not_lost_once": saved}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("records", nargs="+", help="SGF files, folders, archives or collections")
    p.add_argument("--player", help="only the games this player resigned (a part of its PB/PW name)")
    p.add_argument("--engine", default=DEFAULT_ENGINE,
                   help=f"plays on for the side that resigned (default: {DEFAULT_ENGINE!r})")
    p.add_argument("--opponent", default="gnugo:10", help="plays the other side (default gnugo:10)")
    p.add_argument("--repeats", type=int, default=1, help="plays of each game (default 1)")
    p.add_argument("--parallel", type=int, default=1, help="plays at the same time (default 1)")
    p.add_argument("--seed", type=int, default=1,
                   help=f"{{seed}} of game g's repeat r: SEED + g * {SEEDS_PER_GAME} + r")
    p.add_argument("--time-per-move", type=float, default=0.0, metavar="S",
                   help="time_settings 0 S 1, as gammago match sends it (0: none)")
    p.add_argument("--time-settings-to", choices=("both", "engine", "opponent", "none"),
                   default="both", help="which side is sent the time settings (default both)")
    p.add_argument("--max-games", type=int, default=None, help="read at most this many records")
    p.add_argument("--sgf-dir", default="", help="write every play's game here")
    p.add_argument("--json", metavar="FILE", help="write every play and the summary")
    args = p.parse_args(argv)
    if args.repeats < 1 or args.parallel < 1:
        p.error("--repeats and --parallel must be at least 1")

    jobs, games = [], 0
    for item in sgf.iter_games(args.records, max_games=args.max_games):
        if isinstance(item, sgf.GameError):
            print(f"{item}: skipped", file=sys.stderr)
            continue
        side = resigned_by(item, args.player)
        if side is None:
            continue
        try:
            handicap = handicap_of(item)
        except ValueError as e:
            print(f"{item.name}: skipped: {e}", file=sys.stderr)
            continue
        jobs += [(item, side, handicap, r, args.seed + games * SEEDS_PER_GAME + r)
                 for r in range(args.repeats)]
        games += 1
    if not jobs:
        sys.exit("no resigned game to play on" + (f" by {args.player!r}" if args.player else ""))

    plays = []
    with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool, \
            tqdm(total=len(jobs), unit="play", file=sys.stderr) as bar:
        futures = {pool.submit(play_on, game, side, handicap, args.engine, args.opponent, r, seed,
                               args.time_per_move, args.time_settings_to, args.sgf_dir, k): game
                   for k, (game, side, handicap, r, seed) in enumerate(jobs)}
        for fut in concurrent.futures.as_completed(futures):
            try:
                play = fut.result()
            except ValueError as e:
                tqdm.write(f"{futures[fut].name}: skipped: {e}", file=sys.stderr)
                bar.update(1)
                continue
            plays.append(play)
            bar.update(1)
            if play["reason"] not in ("score", "resign", "max-moves"):
                tqdm.write(f"{play['name']}: repeat {play['repeat']}: {play['detail']}", file=sys.stderr)
            if play["outcome"] > 0:
                tqdm.write(f"{play['name']}: {play['resigned'].upper()} resigned after move "
                           f"{play['after_move']}; played on: {play['result']} "
                           f"({play['moves_added']} moves more)", file=sys.stdout)
    plays.sort(key=lambda x: (x["name"], x["repeat"]))
    s = summary(plays)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"engine": args.engine, "opponent": args.opponent,
                       "time_per_move": args.time_per_move, "summary": s, "plays": plays}, f, indent=1)
    print(f"{s['games']} resigned games, {s['plays']} plays: the resigner won {s['won']}, "
          f"drew {s['drawn']}, lost {s['lost']} (score {100 * s['score']:.1f}%); "
          f"{s['games_not_lost_once']} of the {s['games']} games were won or drawn at least once")


if __name__ == "__main__":
    main()
