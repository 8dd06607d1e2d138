"""gammago train-balance: simulation balancing of the rollout gammas.

MM fits the gammas to predict strong players' moves; a playout policy is judged by something
else: how close the win rate of its playouts comes to the true value of a position. Simulation
balancing (Silver & Tesauro 2009; Huang, Coulom & Lin, "Monte-Carlo Simulation Balancing in
Practice", 2010) fits the log-gammas theta of the rollout features to minimise

    sum over training positions s of (V*(s) - V_theta(s))^2

where V_theta(s) is the playouts' mean result for Black (gammas to the end, or with
`--light-after N` N gamma moves and then the light tail, whose moves carry no gradient) and
V*(s) a better estimate of the position's value. For each position, M playouts give V_hat,
N others the gradient g = E[(z - V_hat) * sum_t d log pi(a_t) / d theta] (pyx/rollout/balance.pyx), and
theta += rate * (V* - V_hat) * g, averaged over a batch.

Positions are sampled from SGF games (`--per-game` from each, from `--start` on) and labelled
with V* = the win rate of the engine's own search (`--label-mode`: `rollouts`, or `net-root`
with the shipped net's priors at the root; the engine's defaults for the board size otherwise,
or the `gammago gtp` options given by `--label-engine`, `--label-playouts` playouts, no early
stop): the labels are cached next to the
output (OUT.labels.json), so a second run with other training settings does not search again.
The cache keys a position by what it is (position_key: the board size, komi, setup stones and
the moves that led to it), not by where it was found, so it serves games given by any path, in
any order, and a position met in several games is searched once.
Games are split into training and held-out positions by game. The output is a gamma file whose table is what the rollouts
sample with as it is (`gammago gtp --rollout-gammas FILE`), with a settings line that names the
rollout settings it was trained for (its gamma moves), which the engine takes where its options
leave them unset; a PNG beside it shows the held-out error by
epoch.
"""
import argparse
import json
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from tqdm import tqdm

from gammago.engine.position_labels import (add_label_arguments, held_out_names, label_engine_config,
                                             label_search, load_or_label,
                                             sample_positions)

def add_arguments(p: argparse.ArgumentParser):
    p.add_argument("paths", nargs="+", help="SGF files, directories or archives")
    p.add_argument("--out", required=True, help="gamma file to write")
    p.add_argument("--size", type=int, default=9,
                   help="board size of the games used (default: %(default)s)")
    p.add_argument("--max-games", type=int, default=None, help="read at most this many games")
    p.add_argument("--per-game", type=int, default=8,
                   help="positions sampled from a game (default: %(default)s)")
    p.add_argument("--start", type=int, default=4,
                   help="first move number sampled (default: %(default)s)")
    p.add_argument("--holdout", type=float, default=0.1,
                   help="share of games held out (default: %(default)s)")
    add_label_arguments(p)
    p.add_argument("--labels", default=None,
                   help="label cache (default: OUT with .labels.json): the positions it holds "
                        "at the same --label-playouts, --label-mode and --label-engine are not "
                        "labelled again, "
                        "and the new labels are added to it; a name ending in .gz is kept "
                        "compressed")
    p.add_argument("--base", default=None,
                   help="gamma file to start from, used as it is, or a shipped table by its name "
                        "(default: the engine's rollout "
                        "table for --size: patterns/rollout19.gamma with the size's "
                        "--rollout-scale)")
    p.add_argument("--light-after", type=int, default=0, metavar="N",
                   help="balance rollouts that play N gamma moves and then the light tail (as "
                        "--rollout-light-after N; the tail's moves carry no gradient); 0: the "
                        "gammas to the end (default: %(default)s)")
    p.add_argument("--groups", default="",
                   help="comma-separated feature groups to train (default: every group the "
                        "rollouts weigh but pass: capture, extension, selfatari, atari, dist1, "
                        "dist2, edge, pat3); the others keep the start table's gammas")
    p.add_argument("--epochs", type=int, default=10,
                   help="passes over the training positions (default: %(default)s)")
    p.add_argument("--batch", type=int, default=32,
                   help="positions per update (default: %(default)s)")
    p.add_argument("--rate", type=float, default=1.0,
                   help="step size on the log-gammas (default: %(default)s)")
    p.add_argument("--value-playouts", type=int, default=64,
                   help="M: playouts for V_hat, the baseline (default: %(default)s)")
    p.add_argument("--grad-playouts", type=int, default=64,
                   help="N: playouts for the gradient (default: %(default)s)")
    p.add_argument("--eval-playouts", type=int, default=256,
                   help="playouts a held-out position is judged with after each epoch "
                        "(default: %(default)s)")
    p.add_argument("--max-step", type=float, default=0.2,
                   help="largest change of one log-gamma in one update (default: %(default)s)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                   help="threads for the playouts, processes for the labels (default: %(default)s, "
                        "the machine's cores)")
    p.add_argument("--seed", type=int, default=1,
                   help="seed of the sampling, the split and the playouts (default: %(default)s)")


# --- parameters ---------------------------------------------------------------------------
def param_map(listed, groups=None):
    """(param, nparams): param[id] is the index of the parameter that holds feature id (-1 for
    ids that are not trained: absent levels, pass, the groups the rollouts do not weigh, and
    those not in `groups` when given); the patterns a gamma file does not list share their
    group's default's parameter."""
    from gammago.moves import features as F
    from gammago.moves.gammas import absent_ids
    n = F.N_FEATURES
    canon = np.full(n, -1, np.int64)
    pattern_default = {g: F.GROUP_BASES[g] + d for g, _n, d in F.PATTERN_GROUPS}
    for g, name in enumerate(F.GROUP_NAMES):
        if name not in F.ROLLOUT_GROUPS or name == "pass" or (groups and name not in groups):
            continue
        base = F.GROUP_BASES[g]
        for i in range(base + 1, base + F.GROUP_SIZES[g]):
            canon[i] = i
            if g in pattern_default and not listed[i]:
                canon[i] = pattern_default[g]
    for i in absent_ids():
        canon[i] = -1
    keys = np.unique(canon[canon >= 0])
    index = {int(k): j for j, k in enumerate(keys)}
    param = np.array([index[int(c)] if c >= 0 else -1 for c in canon], dtype=np.int32)
    return param, len(keys)


def table_from(theta, param, base):
    """The gamma table of log-gammas theta: base where param is -1."""
    t = base.copy()
    m = param >= 0
    t[m] = np.exp(theta[param[m]])
    return np.ascontiguousarray(t)


# --- training -----------------------------------------------------------------------------
def tail_word(size, light_after=None):
    """The light tail's rules word of the balancing playouts: the engine's for the board size
    with the gammas for light_after moves (None: the default; 0 to the end, where their moves
    refuse bad self-ataris)."""
    from gammago.engine.settings import EngineConfig, rollout_tail_for
    return rollout_tail_for(size, EngineConfig(rollout_light_after=light_after))


def evaluate(boards, table, playouts, threads, seed, light_after=0, tail=None):
    from gammago.rollout import balance
    with ThreadPoolExecutor(max_workers=threads) as ex:
        return np.array(list(ex.map(
            lambda kb: balance.value(kb[1], table, playouts, seed + kb[0], light_after,
                                     tail=tail),
            enumerate(boards))))


def held_out_mse(v, labels, playouts):
    """The MSE of V_hat against V*, and the same less the variance that `playouts` playouts add
    (an estimate of the error of the policy's true value)."""
    err = float(np.mean((v - labels) ** 2))
    noise = float(np.mean(v * (1 - v))) / max(1, playouts - 1)
    return err, err - noise


def train(train_boards, train_labels, test_boards, test_labels, base, listed, args, log=print):
    from gammago.rollout import balance
    groups = [g.strip() for g in args.groups.split(",") if g.strip()]
    param, nparams = param_map(listed, groups)
    theta = np.zeros(nparams)
    # start from the base table (a parameter shared by several ids takes its default's value)
    for i in np.nonzero(param >= 0)[0]:
        theta[param[i]] = math.log(base[i])
    table = table_from(theta, param, base)
    history = []
    word = tail_word(args.size, args.light_after)
    v = evaluate(test_boards, table, args.eval_playouts, args.threads, args.seed + 10_000_000,
                 args.light_after, word)
    mse, mse_true = held_out_mse(v, test_labels, args.eval_playouts)
    history.append({"epoch": 0, "held_out_mse": mse, "held_out_mse_policy": mse_true})
    log(f"epoch 0: held-out MSE {mse:.4f} (less playout noise {mse_true:.4f})")
    rng = np.random.default_rng(args.seed)
    labels = np.asarray(train_labels, dtype=np.float64)
    seed = args.seed * 1_000_003
    for epoch in range(1, args.epochs + 1):
        order = rng.permutation(len(train_boards))
        bar = tqdm(total=len(order), desc=f"epoch {epoch}", unit="pos", file=sys.stderr,
                   dynamic_ncols=True)
        sq = []
        for s in range(0, len(order), args.batch):
            batch = order[s:s + args.batch]

            def one(k):
                b = train_boards[k]
                sd = seed + 2 * int(k) + epoch * 7_919_993
                vhat = balance.value(b, table, args.value_playouts, sd, args.light_after,
                                     tail=word)
                g, _ = balance.gradient(b, table, param, nparams, args.grad_playouts, vhat, sd + 1,
                                        args.light_after, tail=word)
                return vhat, g

            with ThreadPoolExecutor(max_workers=args.threads) as ex:
                results = list(ex.map(one, batch))
            step = np.zeros(nparams)
            for k, (vhat, g) in zip(batch, results):
                step += (labels[k] - vhat) * g
                sq.append((labels[k] - vhat) ** 2)
            step *= args.rate / len(batch)
            np.clip(step, -args.max_step, args.max_step, out=step)
            theta += step
            table = table_from(theta, param, base)
            bar.update(len(batch))
        bar.close()
        v = evaluate(test_boards, table, args.eval_playouts, args.threads, args.seed + 10_000_000,
                     args.light_after, word)
        mse, mse_true = held_out_mse(v, test_labels, args.eval_playouts)
        history.append({"epoch": epoch, "held_out_mse": mse, "held_out_mse_policy": mse_true,
                        "train_mse": float(np.mean(sq))})
        log(f"epoch {epoch}: held-out MSE {mse:.4f} (less playout noise {mse_true:.4f}), "
            f"training batches {np.mean(sq):.4f}")
    return table, history


def plot(history, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    ep = [h["epoch"] for h in history]
    ax.plot(ep, [h["held_out_mse"] for h in history], "o-", label="held-out MSE")
    ax.plot(ep, [h["held_out_mse_policy"] for h in history], "s--",
            label="held-out, less playout noise")
    tr = [(h["epoch"], h["train_mse"]) for h in history if "train_mse" in h]
    if tr:
        ax.plot(*zip(*tr), "^:", label="training batches (M playouts)")
    ax.set_xlabel("epoch")
    ax.set_ylabel("(V* - V)^2")
    ax.set_title("simulation balancing")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(args):
    from gammago.moves import gammas as G
    from gammago.go import sgf
    from gammago.engine.settings import rollout_gammas
    t0 = time.time()
    out = Path(args.out)
    for name in ("epochs", "batch", "value_playouts", "grad_playouts", "eval_playouts",
                 "label_playouts", "per_game", "threads"):
        if getattr(args, name) < 1:
            print(f"train-balance: --{name.replace('_', '-')} must be >= 1", file=sys.stderr)
            return 2
    from gammago.moves import features as F
    bad = [g for g in args.groups.split(",") if g.strip() and
           (g.strip() not in F.ROLLOUT_GROUPS or g.strip() == "pass")]
    if bad:
        print(f"train-balance: --groups: {', '.join(bad)} not among the groups the rollouts "
              f"weigh ({', '.join(g for g in F.ROLLOUT_GROUPS if g != 'pass')})",
              file=sys.stderr)
        return 2
    if args.light_after < 0:
        print("train-balance: --light-after must be >= 0", file=sys.stderr)
        return 2
    if not 0 < args.holdout < 1:
        print("train-balance: --holdout must be between 0 and 1", file=sys.stderr)
        return 2
    try:        # the labelling engine's options, and its net and gamma files, before any work
        from gammago.engine.engine import Engine
        Engine(label_engine_config(args.label_engine, args.label_mode, args.label_playouts,
                                   args.seed)).new_game(args.size, 7.0)
    except (OSError, ValueError) as e:
        print(f"train-balance: {e}", file=sys.stderr)
        return 2
    try:
        if args.base:
            g = G.load(G.find(args.base))
            base, listed, base_name = g.table, g.listed, str(g.path)
        else:
            g = G.load_rollout_base(args.size)
            base = rollout_gammas(g.table, args.size)
            listed = g.listed
            base_name = f"{g.path} with the rollouts' scale for {args.size}x{args.size}"
    except (OSError, ValueError) as e:
        print(f"train-balance: {e}", file=sys.stderr)
        return 2
    base = np.ascontiguousarray(base, dtype=np.float64)
    games = [gm for gm in sgf.iter_games(args.paths, max_games=args.max_games)
             if gm.size == args.size and not gm.setups]
    if len(games) < 2:
        print(f"train-balance: {len(games)} usable {args.size}x{args.size} games; need 2 or more",
              file=sys.stderr)
        return 2
    positions = sample_positions(games, args.per_game, args.start, args.seed)
    labels = load_or_label(args.labels or out.with_name(out.name + ".labels.json"), games,
                           positions, args.size, args.label_playouts, args.threads, args.seed,
                           args.label_mode, args.label_engine)
    held = held_out_names(games, args.holdout, args.seed)
    tr = [(b, y) for (gi, _, b), y in zip(positions, labels) if games[gi].name not in held]
    te = [(b, y) for (gi, _, b), y in zip(positions, labels) if games[gi].name in held]
    if not tr or not te:
        print(f"train-balance: {len(tr)} training and {len(te)} held-out positions from "
              f"{len(games)} games; need some of each (more games, --per-game, --holdout)",
              file=sys.stderr)
        return 2
    print(f"train-balance: {len(games)} games, {len(positions)} positions "
          f"({len(tr)} training, {len(te)} held out from {len(held)} games)", file=sys.stderr)
    table, history = train([b for b, _ in tr], [y for _, y in tr], [b for b, _ in te],
                           np.array([y for _, y in te]), base, listed, args,
                           log=lambda s: print("train-balance: " + s, file=sys.stderr))
    png = out.with_suffix(".png")
    plot(history, png)
    first, last = history[0], history[-1]
    settings = {"rollout_light_after": args.light_after}
    comments = [
        "simulation balancing (gammago train-balance): the rollouts' table as it is "
        "(use with --rollout-gammas)" + (
            f", for {args.light_after} gamma moves and the light tail" if args.light_after
            else ", gammas to the end") +
        "; the engine plays it with the settings below "
        "where its options leave them unset",
        G.settings_comment(settings, args.size),
        "command: gammago train-balance " + " ".join(sys.argv[2:] if len(sys.argv) > 2 else []),
        f"start: {base_name}",
        f"data: {len(games)} {args.size}x{args.size} games, {len(tr)} training / {len(te)} "
        f"held-out positions, labels: engine search "
        f"({label_search(args.label_mode, args.label_engine)}) at "
        f"{args.label_playouts} playouts",
        f"held-out MSE against the labels ({args.eval_playouts} playouts): "
        f"{first['held_out_mse']:.4f} -> {last['held_out_mse']:.4f} "
        f"(less playout noise {first['held_out_mse_policy']:.4f} -> "
        f"{last['held_out_mse_policy']:.4f})",
    ]
    G.save(out, table, listed, comments=comments)
    print(json.dumps({"out": str(out), "plot": str(png), "games": len(games),
                      "training_positions": len(tr), "held_out_positions": len(te),
                      "history": history, "seconds": round(time.time() - t0, 1)}, indent=1))
    return 0
