#!/usr/bin/env python3
"""Where a game turned: replay SGF records through a GTP engine that speaks Leela Zero's
`lz-genmove_analyze` (gammago, Leela Zero, KataGo) and list the moves after which the win
rate fell most.

Each position of a game is searched once, with the side to move to play: the engine's best
line gives that side's win rate w(k) before move k and its choice. Move k, by P, then cost P

    drop(k) = w(k) - (1 - w(k+1))

(P's win rate before its move, less what is left to it once the opponent is to move). The
moves of the reviewed side (--side: the loser by default, else b, w or both) with the largest
drops are printed game by game, the played move beside the engine's choice; --boards prints
the position before each of them. The engine is asked with `lz-genmove_analyze`, then `undo`,
then the game's move is played, so an engine needs those and `play`, `boardsize`, `komi` and
`clear_board` (a handicap's setup stones go by `set_free_handicap`).

    PYTHONPATH=. python tools/review.py games.sgf --engine "gammago --playouts 20000 --resign 0 --quiet" \\
        --top 3 --boards --json review.json

Records are files, folders or archives as `gammago train-mm` reads them; a collection (a
`gammago match` games.sgf) gives each of its games. A malformed record is named on stderr
and skipped. The search budget is the engine's own (gammago: --playouts or --move-time), so
a review is as good as the reviewer: use more playouts than the games were played with.
"""
import argparse
import json
import re
import sys

from tqdm import tqdm

from gammago.go import sgf
from gammago.arena.gtp_process import EngineFailure, GtpProcess, expand_command

DEFAULT_ENGINE = "gammago --playouts 20000 --seed 1 --quiet --resign 0"
INFO = re.compile(r"info move (\S+) visits (\d+) winrate (\d+)")
MOVE_TIMEOUT_S = 300.0               # one search of the reviewer
INTERVAL_CS = 50                     # lz-genmove_analyze's report interval; the last report counts


def best_line(text):
    """(best move, win rate 0..1, played move) of an lz-genmove_analyze answer: the first
    `info` entry (order 0) of its last report, and its `play` line; the best move is the played
    one, and the win rate None, when the answer has no report."""
    m = re.search(r"^play (\S+)", text, re.M)
    played = m.group(1) if m else None
    reports = [line for line in text.splitlines() if line.startswith("info ")]
    m = INFO.search(reports[-1]) if reports else None
    if m:
        return m.group(1), int(m.group(3)) / 10000.0, played
    return played, None, played


def drops(rates, moves):
    """[(k, colour, drop)] for each move k (0-based) whose position and the next both have a
    win rate: drop = rates[k] - (1 - rates[k+1])."""
    out = []
    for k, (colour, _) in enumerate(moves):
        if k + 1 < len(rates) and rates[k] is not None and rates[k + 1] is not None:
            out.append((k, colour, rates[k] - (1.0 - rates[k + 1])))
    return out


def reviewed_colours(side, game):
    """The colours whose moves are reviewed: side b / w / both, or loser / winner by RE
    (every colour when RE names no winner)."""
    if side in ("b", "w"):
        return {side}
    winner = game.winner
    if side == "both" or winner is None:
        return {"b", "w"}
    if side == "winner":
        return {winner}
    return {"w" if winner == "b" else "b"}


def review_game(g, game, max_moves, progress=None):
    """Win rates and best moves of the engine before each move of `game` (up to max_moves):
    ([win rate or None], [best move]) for positions 0 .. n (n: the moves replayed)."""
    if game.setup_white or (game.setup_black and game.to_move != "w"):
        raise ValueError("setup stones other than a handicap's are not supported")
    g.send(f"boardsize {game.size}")
    g.send("clear_board")
    g.send(f"komi {game.komi}")
    if game.setup_black:
        g.send("set_free_handicap " + " ".join(game.setup_black))
    moves = game.moves[:max_moves] if max_moves else game.moves
    rates, best = [], []
    for k in range(len(moves) + 1):
        if k < len(moves):
            colour = moves[k][0]
        else:
            colour = "w" if moves[-1][0] == "b" else "b"
        text = g.send(f"lz-genmove_analyze {colour} {INTERVAL_CS}", timeout=MOVE_TIMEOUT_S)
        move, rate, played = best_line(text)
        rates.append(rate)
        best.append(move)
        if played is not None and played.lower() != "resign":
            g.send("undo")                   # the engine played its move: take it back
        if k < len(moves):
            g.send(f"play {moves[k][0]} {moves[k][1]}")
        if progress is not None:
            progress.update(1)
    return rates, best


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("records", nargs="+", help="SGF files, folders or archives")
    p.add_argument("--engine", default=DEFAULT_ENGINE,
                   help=f"the reviewing GTP engine (default: {DEFAULT_ENGINE!r})")
    p.add_argument("--side", choices=("loser", "winner", "b", "w", "both"), default="loser",
                   help="whose moves to list (default: the loser's, by the record's RE)")
    p.add_argument("--top", type=int, default=3, help="moves listed a game (default 3)")
    p.add_argument("--max-moves", type=int, default=0,
                   help="review the first N moves of a game only (0: all)")
    p.add_argument("--max-games", type=int, default=None)
    p.add_argument("--boards", action="store_true", help="print the position before each listed move")
    p.add_argument("--seed", type=int, default=1, help="{seed} in --engine")
    p.add_argument("--json", metavar="FILE", help="write every game's win rates and best moves")
    args = p.parse_args(argv)
    if args.top < 0 or args.max_moves < 0:
        p.error("--top and --max-moves must not be negative")

    games = []
    for item in sgf.iter_games(args.records, max_games=args.max_games):
        if isinstance(item, sgf.GameError):
            print(f"{item}: skipped", file=sys.stderr)
        elif item.moves:
            games.append(item)
    if not games:
        sys.exit("no game to review")
    total = sum(min(len(x.moves), args.max_moves or len(x.moves)) + 1 for x in games)
    record, listed = [], []
    with GtpProcess(expand_command(args.engine, args.seed), "reviewer") as g, \
            tqdm(total=total, unit="position", file=sys.stderr) as bar:
        for game in games:
            try:
                rates, best = review_game(g, game, args.max_moves, bar)
            except (ValueError, EngineFailure) as e:
                print(f"{game.name}: skipped: {e}", file=sys.stderr)
                continue
            moves = game.moves[:len(rates) - 1]
            colours = reviewed_colours(args.side, game)
            worst = sorted((d for d in drops(rates, moves) if d[1] in colours),
                           key=lambda d: -d[2])[:args.top]
            record.append({"name": game.name, "result": game.result, "moves": moves,
                           "winrate": rates, "best": best, "reviewed": sorted(colours),
                           "worst": [{"move": k + 1, "colour": c, "played": moves[k][1],
                                      "best": best[k], "before": rates[k],
                                      "after": 1.0 - rates[k + 1], "drop": d}
                                     for k, c, d in worst]})
            tqdm.write(f"{game.name}  {game.result or '?'}  {len(moves)} moves", file=sys.stdout)
            for w in record[-1]["worst"]:
                listed.append(w["drop"])
                tqdm.write(f"  move {w['move']:3d} {w['colour'].upper()} {w['played']:>4}"
                           f"  (best {w['best'] or '?':>4})  {w['before']:.2f} -> {w['after']:.2f}"
                           f"  drop {w['drop']:+.2f}", file=sys.stdout)
                if args.boards:
                    b = game.board()
                    for c, v in moves[:w["move"] - 1]:
                        b.play(v, c)
                    tqdm.write("    " + str(b).replace("\n", "\n    "), file=sys.stdout)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"engine": args.engine, "side": args.side, "games": record}, f, indent=1)
    big = sum(d >= 0.2 for d in listed)
    print(f"reviewed {len(record)} of {len(games)} games; {len(listed)} moves listed, "
          f"{big} of them dropped the win rate by 0.20 or more")


if __name__ == "__main__":
    main()
