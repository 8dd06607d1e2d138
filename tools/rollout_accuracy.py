#!/usr/bin/env python3
"""How well do the gamma rollouts judge positions? The mean squared error of pure Monte-Carlo
(gamma playouts from the position, no tree) against the game's result, over positions sampled
from finished games, for the rollout table as the engine builds it and for variants of it.

    PYTHONPATH=. python tools/rollout_accuracy.py DIR_OF_SGF [...] \\
        --variant "capture:save=3,extension:new=3" --variant "selfatari=5"

Each variant is a `--rollout-scale` text (gammago.moves.gammas.scale: the gammas of the features
whose name starts with PREFIX times F); "" is the trained table as it is. A part `light=N` sets
the rollouts' `--rollout-light-after` (default: the engine's for `--size`, ROLLOUT_LIGHT_AFTER
without it; `light=0`: gammas to the end), `shapes=0|1`, `lone=0|1`, `seki=0|1` the light
tail's rules (`--rollout-tail-shapes`, `--rollout-tail-lone`, `--rollout-tail-seki`; `lone`
and `seki` default to the engine's for `--size`, on without it), `refuse=0|1` the gamma moves'
refusal of bad self-ataris (by default, as in the engine, on where the gammas play to the end),
`mercy=N` the rollouts' mercy rule (`--mercy`; 0, the default, off: a playout ends, won by the
side ahead, once one side has taken more than N stones beyond the other) and `table=FILE` their
gamma table (`--rollout-gammas`: the file's table as it is, scaled only by the variant's own
scale parts, with the settings its `rollout-settings` line names where the variant has no
`light=` part, as the engine plays it; a line for another board size than `--size` is left
aside). The base is the engine's default for `--size` (`--base`; gammago.engine.settings.rollout_scale_for,
ROLLOUT_SCALE without --size).

With `--labels CACHE` (a label cache of `gammago train-balance`, such as
patterns/labels/rollout9-tail-net-root-10000.labels.json.gz), the positions are those of the
given games that the cache holds (each once, where several games reach it), and each is judged
against the search's win rate there in place of the game's result: a label that is not the
noise of one finished game. The cache keys a position by what it is (board size, komi, stones
and moves: position_labels.position_key), so the games may be given by any path. `--holdout F
--split-seed S` keeps only the games that train-balance with `--holdout F --seed S` held out,
for a table balanced on the rest, and of their positions only those that no other game given
reaches (an opening that a training game played too is left out); that split is drawn over
the games' names (path and number), so for it the games must be named as train-balance was
given them.

For every variant it prints:
  mse        mean of (P(Black wins) - result)^2, result 1 for a Black win, 0 for a White win
             (with --labels: the search's P(Black wins) in place of the result)
  late_mse   the same over the positions from move --late on (where results are more settled)
  accuracy   fraction of positions where P(Black wins) > 0.5 agrees with the winner (with
             --labels: with the search)
  moves/playout  the mean length of its playouts
  d_mse      the variant's mse minus the base's, with a 95% interval from a paired bootstrap
             over games (positions of one game are not independent)
Every variant sees the same positions with the same playout seeds. Games without a winner
(draws, no RE) are skipped, except with --labels (which skips games with set-up stones, as
train-balance does); a malformed record is named on stderr and the rest go on.
The game's result is a noisy label for an early position (the players decided it later), so
only differences between variants on the same positions mean something.
"""
import argparse
import json
import sys
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from tqdm import tqdm  # noqa: E402

from gammago.moves import gammas as G  # noqa: E402
from gammago.go import sgf  # noqa: E402
from gammago.rollout import tail as T  # noqa: E402
from gammago.engine.settings import (ROLLOUT_LIGHT_AFTER, ROLLOUT_SCALE,  # noqa: E402
                            rollout_gammas, rollout_light_after_for, rollout_scale_for,
                            rollout_refuse_for, rollout_settings_for, rollout_tail_for)
from gammago.rollout.gamma_policy import GammaPolicy  # noqa: E402


def positions_of(games, label):
    """[(board, label, move_number, game_index)] of every position of games, before move i,
    for which label(game, i) is not None."""
    out = []
    for gi, game in enumerate(games):
        b = game.board()
        for i, (colour, vertex) in enumerate(game.moves):
            y = label(game, i)
            if y is not None:
                out.append((b.copy(), y, i, gi))
            b.play(vertex, colour)
    return out


def sample_positions(games, start, step):
    """positions_of, labelled by the game's result (1.0 a Black win), every `step` moves from
    `start`, up to two moves before the end."""
    return positions_of(games, lambda game, i: (1.0 if game.winner == "b" else 0.0) if (
        i >= start and (i - start) % step == 0 and i < len(game.moves) - 2) else None)


# the numeric parts of a variant text: NAME=VALUE -> (how to read VALUE, its check, what it must be)
NUMBER_PARTS = {"light": (int, lambda v: v >= 0, "a move count >= 0"),
                "mercy": (int, lambda v: v >= 0, "a stone count >= 0")}


def split_variant(spec, light_after=ROLLOUT_LIGHT_AFTER, tail=rollout_tail_for(9)):
    """A variant text -> {"scale": its --rollout-scale text, "light": the light_after moves (light_after when the text names none), "tail": the light
    tail's rules word (tail with the rules a part NAME=0|1 turns off or on, NAME one of
    gammago.rollout.tail.RULES: shapes, lone, seki, refuse; refuse, unless given, on where
    light is 0, as in the engine), "mercy": the mercy threshold (0 for off), "table": the gamma
    file of a part table=FILE (None: the shipped rollout
    gammas), "given": the names of the parts given (those of NUMBER_PARTS and T.RULES)}."""
    values = {"light": light_after, "mercy": 0, "table": None}
    given = set()
    parts = []
    for part in (p.strip() for p in spec.split(",")):
        name, eq, value = part.partition("=")
        if eq and name == "table":
            if not value:
                raise ValueError(f"variant {spec!r}: table must name a gamma file")
            values["table"] = value
        elif eq and name in NUMBER_PARTS:
            cast, ok, what = NUMBER_PARTS[name]
            try:
                values[name] = cast(value)
            except ValueError:
                values[name] = None
            if values[name] is None or not ok(values[name]):
                raise ValueError(f"variant {spec!r}: {name} must be {what}")
            given.add(name)
        elif name in T.RULES:
            if value not in ("0", "1"):
                raise ValueError(f"variant {spec!r}: {name} must be 0 or 1")
            tail = _with_rule(tail, T.RULES[name], value == "1")
            given.add(name)
        elif part:
            parts.append(part)
    return dict(values, scale=",".join(parts), tail=_refuse_as_engine(tail, values["light"], given),
                given=given)


def _with_rule(tail, bit, on):
    """The rules word tail with the rule bit on or off."""
    return tail | bit if on else tail & ~bit


def _refuse_as_engine(tail, light, given):
    """The rules word with the gamma moves' refusal as the engine sets it
    (gammago.engine.settings.rollout_refuse_for: on where the gammas play to the end), unless the variant
    has a part refuse= of its own."""
    if "refuse" in given:
        return tail
    return _with_rule(tail, T.RULES["refuse"], rollout_refuse_for(light))


def take_table_settings(variant, settings, size):
    """A variant of split_variant with the settings of its table's `rollout-settings` line
    (Gammas.settings) where it has no part of its own for them, as the engine plays a
    --rollout-gammas table on a board of `size` (gammago.engine.settings.rollout_settings_for, with the
    variant's parts as the options given): light= for --rollout-light-after."""
    given = variant["given"]
    own = SimpleNamespace(rollout_light_after=variant["light"] if "light" in given else None)
    s = rollout_settings_for(size, own, settings)
    tail = _refuse_as_engine(variant["tail"], s["rollout_light_after"], given)
    return dict(variant, light=s["rollout_light_after"], tail=tail)


def labelled_positions(games, known, others=()):
    """positions_of, labelled by known ({position_key: Black's win rate}, a train-balance
    label cache): every position of games that it holds, once (in the first game that reaches
    it), except those that a game of `others` reaches as well (the training games, for a
    held-out judgement)."""
    from gammago.engine.position_labels import position_key
    seen = {position_key(game, i) for game in others for i in range(len(game.moves) + 1)}

    def label(game, i):
        k = position_key(game, i)
        if k in seen or k not in known:
            return None
        seen.add(k)
        return known[k]
    return positions_of(games, label)


def judged_positions(games, known, holdout=None, split_seed=1):
    """(the games judged, their labelled_positions): with holdout, only the games that
    train-balance --holdout holdout --seed split_seed held out, less the positions a training
    game reaches; else every game (tools/relabel.py labels the same positions again)."""
    if holdout is None:
        return games, labelled_positions(games, known)
    from gammago.engine.position_labels import held_out_names
    held = held_out_names(games, holdout, split_seed) if games else set()
    test = [g for g in games if g.name in held]
    return test, labelled_positions(test, known, [g for g in games if g.name not in held])


def evaluate(positions, table, playouts, seed, light_after=0,
             tail=T.RULES_DEFAULT, mercy=0):
    """(P(Black wins) of each position by pure Monte-Carlo, the moves played in all);
    tail: the light tail's rules word, mercy: the mercy rule's threshold (split_variant)."""
    pol = GammaPolicy(table, light_after=light_after, tail=tail)
    out = [pol.evaluate(b, playouts, seed + k, mercy) for k, (b, _, _, _) in enumerate(positions)]
    return np.array([o["black_winrate"] for o in out]), sum(o["moves"] for o in out)


def bootstrap_diff(err_v, err_b, game_ids, n_boot, seed):
    """95% interval of mean(err_v) - mean(err_b), resampling whole games."""
    rng = np.random.default_rng(seed)
    games = np.unique(game_ids)
    d = err_v - err_b
    sums = np.array([d[game_ids == g].sum() for g in games])
    counts = np.array([(game_ids == g).sum() for g in games])
    stats = []
    for _ in range(n_boot):
        pick = rng.integers(0, len(games), len(games))
        stats.append(sums[pick].sum() / counts[pick].sum())
    return float(np.percentile(stats, 2.5)), float(np.percentile(stats, 97.5))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("paths", nargs="+", help="SGF files, directories or archives")
    ap.add_argument("--size", type=int, default=0, help="only games of this board size")
    ap.add_argument("--games", type=int, default=None, help="at most this many games")
    ap.add_argument("--start", type=int, default=12, help="first move number sampled")
    ap.add_argument("--step", type=int, default=4, help="sample every STEP moves")
    ap.add_argument("--late", type=int, default=40, help="late_mse counts moves from this on")
    ap.add_argument("--playouts", type=int, default=64, help="playouts per position")
    ap.add_argument("--base", default=None,
                    help="the base --rollout-scale (default: the engine's for --size)")
    ap.add_argument("--variant", action="append", default=[],
                    help="a --rollout-scale text to compare (repeat for several)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--bootstrap", type=int, default=2000)
    ap.add_argument("--worst", type=int, default=0,
                    help="also show the N late positions the base misjudges most (board, game, "
                         "move number, P(Black wins), winner)")
    ap.add_argument("--labels", default=None, metavar="CACHE",
                    help="judge against the search's win rates of a train-balance label cache "
                         "(its positions of these games) in place of the games' results")
    ap.add_argument("--holdout", type=float, default=None, metavar="F",
                    help="with --labels: only the games train-balance --holdout F held out")
    ap.add_argument("--split-seed", type=int, default=1,
                    help="train-balance's --seed of that split (default 1, its default)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    if args.holdout is not None and (args.labels is None or not 0 < args.holdout < 1):
        print("rollout_accuracy: --holdout needs --labels and a fraction between 0 and 1",
              file=sys.stderr)
        return 2
    base = args.base if args.base is not None else (
        rollout_scale_for(args.size) if args.size else ROLLOUT_SCALE)
    specs = [base] + [v for v in args.variant if v != base]
    try:
        size = args.size or 19
        raw = G.rollout_base(size)
        rules = args.size or 9                  # the size whose rollout rules hold without --size
        split = [split_variant(s, rollout_light_after_for(rules), rollout_tail_for(rules))
                 for s in specs]
        files = {v["table"]: G.load(G.find(v["table"]))
                 for v in split if v["table"] is not None}
        split = [take_table_settings(v, files[v["table"]].settings_on(args.size or None), rules)
                 if v["table"] else v for v in split]
        tables = [rollout_gammas(files[v["table"]].table if v["table"] else raw, size,
                                 v["scale"]) for v in split]
    except (ValueError, OSError, EOFError) as e:
        print(f"rollout_accuracy: {e}", file=sys.stderr)
        return 2
    games, skipped = [], 0
    for game in sgf.iter_games(args.paths, max_games=args.games):
        if (args.size and game.size != args.size) or (
                game.setups if args.labels else game.winner is None):
            skipped += 1
            continue
        games.append(game)
    known = None
    if args.labels:
        from gammago.engine.position_labels import read_label_cache
        try:
            label_playouts, label_mode, known, _ = read_label_cache(args.labels, games)
        except (ValueError, OSError, EOFError) as e:
            print(f"rollout_accuracy: {e}", file=sys.stderr)
            return 2
    if known is None:
        positions = sample_positions(games, args.start, args.step)
    else:
        games, positions = judged_positions(games, known, args.holdout, args.split_seed)
    if not positions:
        if known is not None:
            print(f"rollout_accuracy: {args.labels} holds no position of these games "
                  f"({len(known)} positions of other games)", file=sys.stderr)
        else:
            print("rollout_accuracy: no positions (no finished games with a winner?)",
                  file=sys.stderr)
        return 2
    ys = np.array([p[1] for p in positions])
    late = np.array([p[2] >= args.late for p in positions])
    gid = np.array([p[3] for p in positions])
    rows = []
    base_err = None
    for spec, v, table in zip(tqdm(specs, desc="variants", file=sys.stderr), split, tables):
        ps, moves = evaluate(positions, table, args.playouts, args.seed, v["light"],
                             v["tail"], v["mercy"])
        err = (ps - ys) ** 2
        row = {"variant": spec, "light_after": v["light"], "tail": list(T.rule_names(v["tail"])),
               "mercy": v["mercy"], "table": v["table"],
               "moves_per_playout": moves / (len(positions) * args.playouts),
               "mse": float(err.mean()),
               "late_mse": float(err[late].mean()) if late.any() else None,
               "accuracy": float(np.mean((ps > 0.5) == (ys > 0.5))),
               "mean_black": float(ps.mean())}
        if base_err is None:
            base_err = err
            base_ps = ps
        else:
            row["d_mse"] = float(err.mean() - base_err.mean())
            row["d_mse_ci"] = bootstrap_diff(err, base_err, gid, args.bootstrap, args.seed)
        rows.append(row)
    summary = {"games": len(games), "skipped": skipped, "positions": len(positions),
               "late_positions": int(late.sum()), "black_won": float(ys.mean()),
               "playouts": args.playouts, "rows": rows,
               "labels": None if known is None else {
                   "cache": args.labels, "playouts": label_playouts, "mode": label_mode,
                   "holdout": args.holdout, "split_seed": args.split_seed}}
    worst = [int(i) for i in np.argsort(-np.where(late, base_err, -1))[:args.worst]
             if late[i]]
    summary["worst"] = [{"game": games[gid[i]].name, "move": positions[i][2],
                         "p_black": float(base_ps[i]),
                         **({"winner": "b" if ys[i] else "w"} if known is None
                            else {"label": float(ys[i])})} for i in worst]
    if args.json:
        print(json.dumps(summary, indent=1))
        return 0
    print(f"{len(games)} games ({skipped} skipped), {len(positions)} positions "
          f"({int(late.sum())} from move {args.late}), {args.playouts} playouts each; " + (
              f"Black won {ys.mean():.3f}" if known is None else
              f"labels: {args.labels} ({label_mode} search, {label_playouts} playouts), "
              f"mean {ys.mean():.3f}"))
    f = 4 if known is None else 5      # search labels: errors some ten times smaller
    for r in rows:
        d = ""
        if "d_mse" in r:
            lo, hi = r["d_mse_ci"]
            d = f"  d_mse {r['d_mse']:+.{f}f} ({lo:+.{f}f} .. {hi:+.{f}f})"
        late_s = f"{r['late_mse']:.{f}f}" if r["late_mse"] is not None else "-"
        label = (r["variant"] or "(trained gammas)") + (
            f" [light after {r['light_after']}]" if r["light_after"] and "light=" not in r["variant"] else "")
        print(f"{label:45s} mse {r['mse']:.{f}f}  late_mse {late_s}  "
              f"accuracy {r['accuracy']:.3f}  moves/playout {r['moves_per_playout']:.1f}{d}")
    for i, w in zip(worst, summary["worst"]):
        print(f"\n{w['game']} after move {w['move']}, {positions[i][0].to_move} to move: "
              f"P(Black wins) {w['p_black']:.2f}, " + (
                  f"{w['winner'].upper()} won" if known is None else
                  f"the search's {w['label']:.2f}"))
        print(positions[i][0].showboard())
    return 0


if __name__ == "__main__":
    sys.exit(main())
