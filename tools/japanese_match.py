"""gammago against GNU Go under Japanese rules: GNU Go plays and scores as it does by default
(territory + prisoners, no --chinese-rules), the games end by two passes or a resignation, and
each finished game is scored by GNU Go's final_score, next to gammago's own final_score.

    python tools/japanese_match.py --games 10 --move-time 0.3 --rules japanese
    python tools/japanese_match.py --games 10 --move-time 0.3 --rules tromp-taylor

The second line is the cost's baseline: the same engine playing area rules into a game that is
counted Japanese-style. Colours alternate, GNU Go gets one seed a game; moves are checked on a
board (positional superko, as both engines play it). One line a game, then the tally.
"""
import argparse
import os
import sys

from gammago.go.board import Board
from gammago.arena.gtp_process import GNUGO, GtpProcess, expand_command

MAX_MOVES = 250


def play_game(i, args):
    gammago_black = i % 2 == 0
    gnugo = [GNUGO, "--mode", "gtp", "--positional-superko", "--level", str(args.level),
             "--seed", str(1000 + i)]
    ours = expand_command(f"gammago --rules {args.rules} --move-time {args.move_time} "
                          f"--threads 1 --seed {i + 1} --quiet {args.extra}", i)
    with GtpProcess(gnugo, "gnugo") as g, GtpProcess(ours, "gammago") as e:
        for p in (g, e):
            p.send(f"boardsize {args.size}")
            p.send("clear_board")
            p.send(f"komi {args.komi:g}")
        board = Board(args.size, args.komi)
        players = {"b": e if gammago_black else g, "w": g if gammago_black else e}
        color, passes, result = "b", 0, None
        for _ in range(MAX_MOVES):
            move = players[color].send(f"genmove {color}", 300).lower()
            if move == "resign":
                result = ("W" if color == "b" else "B") + "+R"
                break
            board.play(move, color)
            other = players["w" if color == "b" else "b"]
            other.send(f"play {color} {move}")
            passes = passes + 1 if move == "pass" else 0
            if passes >= 2:
                break
            color = "w" if color == "b" else "b"
        ours_score = None
        if result is None:
            result = g.send("final_score", 120)
            ours_score = e.send("final_score", 120)
    winner = result[0] if result[0] in "BW" else None
    won = winner == ("B" if gammago_black else "W")
    if args.sgf_dir:
        from gammago.go.sgf_write import game_sgf
        os.makedirs(args.sgf_dir, exist_ok=True)
        names = ("gammago", f"gnugo-{args.level}")
        with open(os.path.join(args.sgf_dir, f"game{i:03d}.sgf"), "wb") as f:
            f.write(game_sgf(args.size, args.komi, list(board.moves), result=result,
                             black=names[0] if gammago_black else names[1],
                             white=names[1] if gammago_black else names[0],
                             comment=f"gammago --rules {args.rules}; gammago's final_score "
                                     f"{ours_score}"))
    return {"game": i, "gammago": "B" if gammago_black else "W", "result": result,
            "gammago_final_score": ours_score, "moves": len(board.moves), "won": won}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--games", type=int, default=10)
    p.add_argument("--rules", default="japanese", help="gammago's --rules")
    p.add_argument("--move-time", type=float, default=0.3)
    p.add_argument("--level", type=int, default=10, help="GNU Go's level")
    p.add_argument("--size", type=int, default=9)
    p.add_argument("--komi", type=float, default=6.5)
    p.add_argument("--extra", default="", help="more gammago options")
    p.add_argument("--sgf-dir", help="write each game's record there")
    p.add_argument("--first", type=int, default=0,
                   help="the first game's index (its seeds and colours): a second run goes on")
    args = p.parse_args(argv)
    wins = agree = scored = 0
    for i in range(args.first, args.first + args.games):
        r = play_game(i, args)
        wins += r["won"]
        if r["gammago_final_score"] is not None:
            scored += 1
            agree += r["gammago_final_score"] == r["result"]
        print(f"game {i}: gammago {r['gammago']}, {r['moves']} moves, GNU Go's count "
              f"{r['result']}, gammago's {r['gammago_final_score']}, "
              f"{'won' if r['won'] else 'lost'}", flush=True)
    print(f"rules {args.rules}: gammago won {wins} of {args.games} against GNU Go {args.level} "
          f"(Japanese counting, {args.move_time} s a move); gammago's final_score agreed with "
          f"GNU Go's in {agree} of {scored} games counted", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
