#!/usr/bin/env python3
"""The tactical reader's capture and save answers against GNU Go 3.8's `attack` and `defend`,
on real positions.

Positions are sampled from SGF records (files, directories or .tar.* archives, as train-mm
reads them): one position a game, at a random move from --from to --to. In each, every string
of one or two liberties is asked twice: `gammago.go.tactics.capture` (its opponent to move: can it
be captured?) and GNU Go's `attack` on the same stone (0: no attack; 1, 2 or 3: an attack, the
last two through a ko). The counts:

    both_yes      both find a capture
    both_no       neither does
    ours_only     the reader captures, GNU Go finds no attack (a reading error, or a ko the
                  reader does not see)
    gnugo_only    GNU Go captures, the reader does not (deeper reading: strings of three
                  liberties, nets in nets, ko); of these, gnugo_net where GNU Go's move is
                  not a liberty of the string (a net or an approach)
    unknown       the reader ran out of its node budget (--budget)

For the strings GNU Go can attack, the owner to move: `gammago.go.tactics.save` against GNU Go's
`defend` (0: no defence), counted the same way under save_both_yes (both save it),
save_both_no, save_ours_only (the reader saves a string GNU Go finds no defence for),
save_gnugo_only and save_unknown.

    PYTHONPATH=. python tools/tactics_vs_gnugo.py ../shared/data/tygem9d_19x19_2010-2011.tar.xz \\
        --games 300 --seed 5 --json out.json

A malformed record is named on stderr and skipped. --list prints each disagreement (record,
move number, stone, both answers) so it can be looked at on a board.
"""
import argparse
import json
import random
import sys

from tqdm import tqdm

from gammago.go import sgf
from gammago.go import tactics
from gammago.go.board import Board
from gammago.arena.gtp_process import GNUGO, GtpProcess


def sample_positions(paths, games, seed, first, last):
    """[(record name, size, moves up to a random move number)] for `games` records drawn at
    random (seeded) from every record in `paths`."""
    records = []
    for name, data in sgf.iter_sources(paths):
        if isinstance(data, Exception):
            print(f"{name}: skipped: {data}", file=sys.stderr)
        else:
            records.append((name, data))
    rng = random.Random(seed)
    picked = rng.sample(records, min(games, len(records)))
    out = []
    for name, data in picked:
        try:
            game = sgf.parse_game(name, data)
        except sgf.SgfError as e:
            print(f"{name}: skipped: {e}", file=sys.stderr)
            continue
        if len(game.moves) <= first:
            continue
        k = rng.randrange(first, min(len(game.moves), last) + 1)
        out.append((name, game.size, game.moves[:k]))
    return out


def _tally(counts, prefix, ours, theirs):
    """Count one question under prefix + both_yes / both_no / ours_only / gnugo_only / unknown
    (ours: True / False / None, theirs: GNU Go's yes or no); the key counted."""
    if ours is None:
        key = "unknown"
    elif ours and theirs:
        key = "both_yes"
    elif not ours and not theirs:
        key = "both_no"
    else:
        key = "ours_only" if ours else "gnugo_only"
    counts[prefix + key] += 1
    return key


def compare(positions, budget, gnugo=GNUGO):
    counts = dict(both_yes=0, both_no=0, ours_only=0, gnugo_only=0, gnugo_net=0, unknown=0,
                  save_both_yes=0, save_both_no=0, save_ours_only=0, save_gnugo_only=0,
                  save_unknown=0)
    listed = []
    with GtpProcess([gnugo, "--mode", "gtp", "--chinese-rules"], "gnugo") as g:
        size = None
        for name, n, moves in tqdm(positions, desc="positions", unit="pos"):
            if n != size:
                g.send(f"boardsize {n}")
                size = n
            g.send("clear_board")
            b = Board(n, 7.5)
            for c, v in moves:
                b.play(v or "pass", c)
            g.pipeline([f"play {c} {v or 'pass'}" for c, v in moves])
            seen = set()
            for col in "bw":
                for v in b.stones(col):
                    s = frozenset(b.string(v))
                    if s in seen:
                        continue
                    seen.add(s)
                    libs = b.liberties(v)
                    if len(libs) > 2:
                        continue
                    ours, move = tactics.capture(b, v, budget)
                    answer = g.send(f"attack {v}").split()
                    theirs = answer[0] != "0"
                    key = _tally(counts, "", ours, theirs)
                    if key == "gnugo_only":
                        counts["gnugo_net"] += answer[1] not in libs
                    if key in ("ours_only", "gnugo_only"):
                        listed.append((name, len(moves), v, move, " ".join(answer)))
                    if theirs:
                        ours, move = tactics.save(b, v, budget)
                        answer = g.send(f"defend {v}").split()
                        key = _tally(counts, "save_", ours, answer[0] != "0")
                        if key in ("ours_only", "gnugo_only"):
                            listed.append((name, len(moves), v, f"save {move or '-'}",
                                           "defend " + " ".join(answer)))
    return counts, listed


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+", help="SGF files, directories or .tar.* archives")
    ap.add_argument("--games", type=int, default=300, help="records sampled (one position each)")
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--from", dest="first", type=int, default=40, help="earliest move number")
    ap.add_argument("--to", dest="last", type=int, default=220, help="latest move number")
    ap.add_argument("--budget", type=int, default=tactics.BUDGET,
                    help="the reader's nodes a question (default: the engine's)")
    ap.add_argument("--gnugo", default=GNUGO, help="GNU Go's path")
    ap.add_argument("--json", help="write the counts and disagreements here")
    ap.add_argument("--list", action="store_true", help="print every disagreement")
    args = ap.parse_args(argv)
    positions = sample_positions(args.paths, args.games, args.seed, args.first, args.last)
    if not positions:
        ap.error("no position: no readable record with enough moves")
    counts, listed = compare(positions, args.budget, args.gnugo)
    strings = sum(v for k, v in counts.items() if k != "gnugo_net" and not k.startswith("save"))
    theirs = counts["both_yes"] + counts["gnugo_only"]
    print(f"{len(positions)} positions, {strings} strings of 1-2 liberties, budget {args.budget}")
    for k, v in counts.items():
        print(f"  {k:11s} {v}")
    if theirs:
        print(f"  GNU Go's captures the reader finds: {counts['both_yes'] / theirs:.1%}")
    if args.list:
        for row in listed:
            print("  ", *row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(dict(counts=counts, positions=len(positions), budget=args.budget,
                           seed=args.seed, disagreements=listed), f, indent=1)


if __name__ == "__main__":
    main()
