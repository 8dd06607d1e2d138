"""gammago train-balance: simulation balancing of the rollout gammas.

MM fits the gammas to predict strong players' moves; a playout policy is judged by something
else: how close the win rate of its playouts comes to the true value of a position. Simulation
balancing (Silver & Tesauro 2009; Huang, Coulom & Lin, "Monte-Carlo Simulation Balancing in
Practice", 2010) fits the log-gammas theta of the rollout features to minimise

    sum over training positions s of (V*(s) - V_theta(s))^2

where V_theta(s) is the playouts' mean result for Black (gammas to the end, or with
`--light-after N` N gamma moves and then the light tail, whose moves carry no gradient) and
V*(s) a better estimate of the position's value. For each position, M playouts give V_hat,
N others the gradient g = E[(z - V_hat) * sum_t d log pi(a_t) / d theta] (pyx/balance.pyx), and
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
import dataclasses
import gzip
import hashlib
import json
import math
import os
import random
import shlex
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
from tqdm import tqdm

LABELS_VERSION = 2     # 1 keyed a position by its game's name and move number


def add_label_arguments(p: argparse.ArgumentParser):
    """The options of the search that labels (--label-playouts, --label-mode, --label-engine),
    which tools/relabel.py takes as well."""
    p.add_argument("--label-playouts", type=int, default=10000,
                   help="playouts of the engine search that labels a position "
                        "(default: %(default)s)")
    p.add_argument("--label-mode", choices=("rollouts", "net-root"), default="rollouts",
                   help="the engine search that labels a position: rollouts only, or with the "
                        "net at the root (default: %(default)s)")
    p.add_argument("--label-engine", default="", metavar="OPTIONS",
                   help="further `gammago gtp` options of the search that labels, as one "
                        "string (such as \"--rollout-gammas FILE --rollout-light-after 0\"): "
                        "labels by another engine than the defaults; the mode, playouts, "
                        "seed, threads, resign and early stop are train-balance's own; a "
                        "single flag is given with '=', as --label-engine=--no-reuse "
                        "(default: none)")


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
    from gammago import features as F
    from gammago.gammas import absent_ids
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


# --- positions and labels ---------------------------------------------------------------
def sample_positions(games, per_game, start, seed):
    """[(game index, move number, board)]: up to per_game positions of each game, from move
    `start` to two moves before its end, the same for the same seed."""
    rng = random.Random(seed)
    out = []
    for gi, game in enumerate(games):
        n = len(game.moves)
        cand = list(range(start, n - 1))
        picks = set(rng.sample(cand, min(per_game, len(cand)))) if cand else set()
        b = game.board()
        for i, (colour, vertex) in enumerate(game.moves):
            if i in picks:
                out.append((gi, i, b.copy()))
            b.play(vertex, colour)
    return out


def held_out_names(games, holdout, seed):
    """The names of the games held out of training: a share `holdout` of them (at least one),
    drawn by `seed` (--holdout, --seed; tools/rollout_accuracy.py draws the same)."""
    names = sorted({g.name for g in games})
    return set(random.Random(seed).sample(names, max(1, round(len(names) * holdout))))


def _board_at(game, i):
    b = game.board()
    for colour, vertex in game.moves[:i]:
        b.play(vertex, colour)
    return b


# the settings of the labelling search that train-balance sets itself
_LABEL_OWN = ("--mode", "--playouts", "--seed", "--threads", "--resign", "--no-early-stop",
              "--ponder")


def label_engine_config(options="", mode="rollouts", playouts=10000, seed=1):
    """The EngineConfig of the search that labels: the engine's defaults, changed by the
    `gammago gtp` options in `options` (one string, as --label-engine takes it), with
    train-balance's own mode, playouts and seed, one thread, no resignation, no early stop and
    no pondering. Raises ValueError naming an option that is unknown, has a bad value, or is
    one that train-balance sets itself."""
    from gammago.config import EngineConfig
    try:
        words = shlex.split(options)
    except ValueError as e:
        raise ValueError(f"--label-engine: {e}") from None
    own = [w.split("=")[0] for w in words if w.split("=")[0] in _LABEL_OWN]
    if own:
        raise ValueError(f"--label-engine: {own[0]} is set by train-balance itself "
                         f"(--label-mode, --label-playouts, --seed)")
    p = argparse.ArgumentParser(prog="--label-engine", add_help=False, exit_on_error=False)
    EngineConfig.add_arguments(p)
    try:
        args, extra = p.parse_known_args(words)
    except (argparse.ArgumentError, SystemExit) as e:
        raise ValueError(f"--label-engine: {e}") from None
    if extra:
        raise ValueError(f"--label-engine: not an option of gammago gtp: {' '.join(extra)}")
    try:
        cfg = EngineConfig.from_args(args)
    except ValueError as e:
        raise ValueError(f"--label-engine: {e}") from None
    return dataclasses.replace(cfg, mode=mode, playouts=playouts, seed=seed, threads=1,
                               early_stop=False, resign=0.0, ponder=False)


def label_engine_options(options=""):
    """--label-engine options as a label cache records them: quoted as shlex would ("" for
    none)."""
    return shlex.join(shlex.split(options))


def label_search(mode, options=""):
    """The label cache's name of a labelling search: its mode, then its --label-engine options
    (label_engine_options), if any. Labels are reused only where it is the same."""
    words = label_engine_options(options)
    return f"{mode} {words}" if words else mode


def _label_worker(args):
    """V* of a list of positions (game, move number) by the engine's search (cfg, an
    EngineConfig: label_engine_config): Black's win rate at the root."""
    size, items, cfg = args
    from gammago.engine import Engine
    e = Engine(cfg)
    out = []
    for game, i in items:
        b = _board_at(game, i)
        e.new_game(size, b.komi)
        e.board = b
        c = b.to_move
        e.reg_genmove(c)
        infos = e.last_infos
        wr = infos[0]["winrate"] if infos else 0.5
        out.append(wr if c == "b" else 1.0 - wr)
    return out


def label_positions(games, positions, size, playouts, threads, seed, mode="rollouts",
                    engine=""):
    """Black's win rate at each of positions by the labelling search (label_engine_config of
    engine, mode, playouts), in threads processes, each chunk of 16 with its own seed."""
    from concurrent.futures import ProcessPoolExecutor
    cfg = label_engine_config(engine, mode, playouts, seed)
    items = [(games[gi], i) for gi, i, _ in positions]
    chunks = [items[i:i + 16] for i in range(0, len(items), 16)]
    labels = []
    with ProcessPoolExecutor(max_workers=max(1, threads)) as pool:
        jobs = [(size, ch, dataclasses.replace(cfg, seed=seed + k))
                for k, ch in enumerate(chunks)]
        bar = tqdm(total=len(positions), desc="label", unit="pos", file=sys.stderr,
                   dynamic_ncols=True)
        for res in pool.map(_label_worker, jobs):
            labels.extend(res)
            bar.update(len(res))
        bar.close()
    return labels


def position_key(game, i):
    """The label cache's key of the position before move i of game: 16 hex digits of a SHA-1
    over the board size, komi, setup stones, first mover and the moves before it, which are
    what the search that labels it sees (the record's path and the game's place in it are
    not)."""
    text = "SZ{} KM{!r} AB{} AW{} PL{};".format(
        game.size, float(game.komi), ",".join(sorted(game.setup_black)),
        ",".join(sorted(game.setup_white)), game.to_move)
    text += ";".join(colour + vertex.lower() for colour, vertex in game.moves[:i])
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _positions_key(games, positions):
    return [position_key(games[gi], i) for gi, i, _ in positions]


def _read_labels(path):
    """A label cache's text; a name ending in .gz is read through gzip."""
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def _write_labels(path, text):
    """Write a label cache's text in place of path's (through a temporary file), compressed
    where the name ends in .gz, as _read_labels reads it."""
    data = text.encode()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
    os.replace(tmp, path)


def read_label_cache(path, games=()):
    """A label cache: (its playouts, its labelling search (label_search: the mode, and the
    --label-engine options it was made with, if any), {position_key: Black's win rate}, the
    labels it holds by game name and move number alone: {(name, move number): Black's win
    rate}). A cache of version 1 keyed every position by its game's name and move number: those
    that name a position of `games` are keyed by the position (position_key) here, the rest
    are returned aside, to be written back with the cache until a run is given their games.
    Raises ValueError (naming path) on a cache of another version or a malformed one, OSError
    or EOFError (a truncated .gz) where it cannot be read."""
    path = Path(path)
    try:
        d = json.loads(_read_labels(path))
        version = d.get("version")
        ok = (version in (1, LABELS_VERSION) and isinstance(d.get("playouts"), int)
              and len(d["positions"]) == len(d["labels"]))
        if ok and version == 1:
            named = {(name, i): y for (name, i), y in zip(d["positions"], d["labels"])}
            known = {}
        elif ok:
            known = {str(k): y for k, y in zip(d["positions"], d["labels"])}
            aside = d.get("unkeyed", {"positions": [], "labels": []})
            named = {(name, i): y for (name, i), y in zip(aside["positions"], aside["labels"])}
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise ValueError(f"{path}: not a label cache of train-balance ({e})") from None
    if not ok:
        raise ValueError(f"{path}: not a label cache of this version (version "
                         f"{d.get('version')!r}, this code reads {LABELS_VERSION} and 1)")
    for game in games:
        for i in range(len(game.moves) + 1):
            y = named.pop((game.name, i), None)
            if y is not None:
                known.setdefault(position_key(game, i), y)
    return (d["playouts"], label_search(d.get("mode", "rollouts"), d.get("engine", "")), known,
            named)


def load_or_label(path, games, positions, size, playouts, threads, seed, mode="rollouts",
                  engine=""):
    """The labels of positions, from the cache at path where it has them (made at the same
    playouts, mode and engine options; a position is keyed by what it is: position_key) and by
    the search for
    the rest, each position once. The cache is written back with every label it held and the
    new ones, so a run on more games labels only what it adds."""
    key = _positions_key(games, positions)
    path = Path(path)
    search = label_search(mode, engine)
    known, named = {}, {}
    if path.exists():
        try:
            made_playouts, made_mode, cached, aside = read_label_cache(path, games)
            if made_playouts == playouts and made_mode == search:
                known, named = cached, aside
            else:
                print(f"train-balance: {path} was made by another search ({made_mode}, "
                      f"{made_playouts} playouts; this run: {search}, "
                      f"{playouts}); labelling again", file=sys.stderr)
        except (OSError, EOFError, ValueError) as e:   # EOFError: a truncated .gz
            print(f"train-balance: cannot read {path} ({e}); labelling again", file=sys.stderr)
    todo, wanted = [], set()          # the first position of each key the cache lacks
    for k, h in enumerate(key):
        if h not in known and h not in wanted:
            wanted.add(h)
            todo.append(k)
    if not todo:
        print(f"train-balance: labels from {path}", file=sys.stderr)
        return [known[h] for h in key]
    if known:
        print(f"train-balance: {sum(h in known for h in key)} labels from {path}, "
              f"{len(todo)} positions to label", file=sys.stderr)
    new = label_positions(games, [positions[k] for k in todo], size, playouts, threads, seed,
                          mode, engine)
    for k, y in zip(todo, new):
        known[key[k]] = y
    record = {"version": LABELS_VERSION, "playouts": playouts, "mode": mode,
              "positions": list(known), "labels": list(known.values())}
    options = label_engine_options(engine)
    if options:
        record["engine"] = options
    if named:
        print(f"train-balance: {len(named)} of the labels in {path} name games not given (a "
              f"cache of version 1 keyed positions by game); kept as they were",
              file=sys.stderr)
        record["unkeyed"] = {"positions": [list(k) for k in named],
                             "labels": list(named.values())}
    _write_labels(path, json.dumps(record))
    return [known[h] for h in key]


# --- training -----------------------------------------------------------------------------
def tail_word(size, light_after=None):
    """The light tail's rules word of the balancing playouts: the engine's for the board size
    with the gammas for light_after moves (None: the default; 0 to the end, where their moves
    refuse bad self-ataris)."""
    from gammago.config import EngineConfig, rollout_tail_for
    return rollout_tail_for(size, EngineConfig(rollout_light_after=light_after))


def evaluate(boards, table, playouts, threads, seed, light_after=0, tail=None):
    from gammago import balance
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
    from gammago import balance
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
    from gammago import gammas as G
    from gammago import sgf
    from gammago.config import rollout_gammas
    t0 = time.time()
    out = Path(args.out)
    for name in ("epochs", "batch", "value_playouts", "grad_playouts", "eval_playouts",
                 "label_playouts", "per_game", "threads"):
        if getattr(args, name) < 1:
            print(f"train-balance: --{name.replace('_', '-')} must be >= 1", file=sys.stderr)
            return 2
    from gammago import features as F
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
        from gammago.engine import Engine
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
