"""`gammago train-mm`: learn move-feature gammas from SGF records with MM (gammago.mm).

Phases, each with a progress bar:
  1. extract  read the records (files, directories, tar archives), split the games into
              training and held-out BY GAME, replay each training game in C and record, at
              sampled positions, the feature team of every legal move (both cores, or
              with --scheduler ADDRESS the workers of a Dask cluster: docs/CLUSTER.md)
  2. teams    one table of distinct teams; rare 3x3 patterns merged into the default pattern
  3. MM       Coulom's MM, group by group, until the log-posterior stops improving
  4. held-out rank the moves of every position of the held-out games with the new gammas
Then it writes the gamma file, a report PNG (log-likelihood per iteration, held-out accuracy by
move number) beside it, and prints top-1 / top-5 / mean log-evidence on the held-out games.
"""
import shlex
import sys
import time
import zlib
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from tqdm import tqdm

from gammago import cluster
from gammago import features as F
from gammago import gammas as gammas_mod
from gammago import mm, predict, sgf

HOLDOUT = 0.1               # fraction of games held out (chosen by a hash of name and seed)
POSITIONS_PER_GAME = 50     # positions sampled per training game (0: every position)
MIN_PATTERN_COUNT = 20      # patterns seen fewer times among the candidates join the default
CHUNK = 32                  # records per task sent to a worker
MAX_ITER = 60               # MM sweeps at most
TOL = 1e-4                  # stop when a sweep gains less log-posterior per position


def held_out(name, seed, fraction):
    """Deterministic split by game: the same name and seed always land on the same side."""
    return zlib.crc32(f"{seed}:{name}".encode()) / 2.0 ** 32 < fraction


def _sample(name, n, k, seed):
    if k <= 0 or n <= k:
        return None
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    mask = np.zeros(n, dtype=np.uint8)
    mask[rng.choice(n, k, replace=False)] = 1
    return mask


_CFG = {}


def _init(cfg):
    _CFG.update(cfg)


def _extract_chunk(chunk):
    """[(name, bytes|SgfError)] -> [('train', name, arrays) | ('held', name, Game) | ('error', ...)]."""
    out = []
    for name, data in chunk:
        try:
            if isinstance(data, sgf.SgfError):
                raise data
            game = sgf.parse_game(name, data)
            if held_out(name, _CFG["seed"], _CFG["holdout"]):
                # checked now so that a bad held-out game is reported with the others
                F.extract_game(game.board(), game.moves, np.zeros(len(game.moves), np.uint8))
                out.append(("held", name, game))
                continue
            mask = _sample(name, len(game.moves), _CFG["positions"], _CFG["seed"])
            keys, counts, offs, win, mvn = F.extract_game(game.board(), game.moves, mask)
            out.append(("train", name, (keys, counts, offs, win)))
        except sgf.SgfError as e:
            out.append(("error", name, e.problem))
        except ValueError as e:
            out.append(("error", name, str(e)))
    return out


def extract(paths, args, workers, client=None):
    """Phase 1. Returns (train arrays list, held-out games, errors, records read). The chunks go
    to `workers` local processes, or to the workers of a Dask cluster (`client`): the same
    _extract_chunk on the same chunks, its results taken in the same order."""
    train, held, errors = [], [], []
    sources = sgf.iter_sources(paths)
    if args.max_games is not None:
        sources = (s for _, s in zip(range(args.max_games), sources))
    cfg = {"seed": args.seed, "holdout": args.holdout, "positions": args.positions_per_game}
    bar = tqdm(total=args.max_games, desc="extract", unit="game", file=sys.stderr,
               dynamic_ncols=True)
    n = 0
    chunks = predict.chunked(sources, CHUNK)
    if client is not None:
        from gammago import cluster
        outs = cluster.map_chunks(client, _extract_chunk, chunks, _init, (cfg,))
    else:
        outs = predict.map_chunks(_extract_chunk, chunks, workers, _init, (cfg,))
    for out in outs:
        for kind, name, payload in out:
            n += 1
            if kind == "train":
                train.append(payload)
            elif kind == "held":
                held.append(payload)
            else:
                errors.append((name, payload))
                bar.write(f"skipped {name}: {payload}", file=sys.stderr)
        bar.update(len(out))
        bar.set_postfix(train=len(train), held=len(held), bad=len(errors))
    bar.close()
    return train, held, errors, n


def build_teams(train, min_count):
    """Phase 2: distinct teams, the candidates matrix, winners, and per-feature counts."""
    bar = tqdm(total=4, desc="teams", file=sys.stderr, dynamic_ncols=True)
    keys = np.concatenate([t[0] for t in train])
    counts = np.concatenate([t[1] for t in train])
    # offsets and winners re-based onto the concatenation
    sizes = np.array([len(t[0]) for t in train], dtype=np.int64)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    offsets = np.concatenate([t[2][:-1] + s for t, s in zip(train, starts)] + [[len(keys)]])
    winner_entry = np.concatenate([t[2][:-1] + t[3] + s for t, s in zip(train, starts)])
    train.clear()            # the per-game arrays are copied: free them
    bar.update(1)
    uniq, inverse = np.unique(keys, return_inverse=True)
    del keys
    inverse = inverse.astype(np.int32 if len(uniq) < 2**31 else np.int64, copy=False)
    bar.update(1)
    teams = F.decode_keys(uniq)
    nfeat = F.N_FEATURES
    seen = np.zeros(nfeat)
    team_count = np.bincount(inverse, weights=counts, minlength=len(uniq))
    for g in range(F.N_GROUPS):
        seen += np.bincount(teams[:, g], weights=team_count, minlength=nfeat)
    winners = inverse[winner_entry]
    # rare patterns -> their group's default pattern id, group by group
    kept, nrare = {}, {}
    for g, npat, default in F.PATTERN_GROUPS:
        base = F.GROUP_BASES[g]
        pats = np.arange(base + 1, base + 1 + npat)
        rare = pats[(seen[pats] < min_count)]
        remap = np.arange(nfeat, dtype=np.int32)
        remap[rare] = base + default
        teams[:, g] = remap[teams[:, g]]
        seen[base + default] += seen[rare].sum()
        kept[F.GROUP_NAMES[g]] = len(pats) - len(rare)
        nrare[F.GROUP_NAMES[g]] = len(rare)
    bar.update(1)
    cand = mm.candidates_matrix(offsets, inverse, counts, nteams=len(uniq))
    bar.update(1)
    bar.close()
    wins = np.bincount(teams[winners].ravel(), minlength=nfeat)
    return teams, cand, winners, seen, wins, kept, nrare


def groups_and_fixed(held=()):
    """The MM groups and the ids fixed at 1: every group's "absent" id, and every id of the
    groups named in `held` (feature group names), which then weigh nothing."""
    groups, fixed = [], np.zeros(F.N_FEATURES, dtype=bool)
    for g in range(F.N_GROUPS):
        base = F.GROUP_BASES[g]
        fixed[base] = True
        if F.GROUP_NAMES[g] in held:
            fixed[base: base + F.GROUP_SIZES[g]] = True
        groups.append(np.arange(base + 1, base + F.GROUP_SIZES[g]))
    return groups, fixed


def parse_held(text):
    """--hold-groups text ("pat12,ladder" or "rollout": the groups the rollouts do not weigh)
    -> a tuple of group names; ValueError naming an unknown group."""
    names = []
    for part in (p.strip() for p in str(text or "").split(",")):
        if not part:
            continue
        if part == "rollout":
            names += [n for n in F.GROUP_NAMES if n not in F.ROLLOUT_GROUPS]
        elif part in F.GROUP_NAMES:
            names.append(part)
        else:
            raise ValueError(f"--hold-groups: unknown group {part!r} (groups: "
                             f"{', '.join(F.GROUP_NAMES)}, or 'rollout')")
    return tuple(dict.fromkeys(names))


def write_report(path, history, results, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(12, 4.5))
    it = [h["iteration"] for h in history]
    a1.plot(it, [h["log_likelihood"] for h in history], "o-")
    a1.set_xlabel("MM sweep (all groups)")
    a1.set_ylabel("mean log-likelihood per training position")
    a1.grid(alpha=0.3)
    a1.set_title("MM training")
    if results:
        predict.plot_by_move_number(a2, results)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def add_arguments(p):
    p.add_argument("paths", nargs="+", metavar="SGF_OR_DIR_OR_TAR",
                   help="SGF files, directories, or tar archives of SGF files")
    p.add_argument("--out", required=True, metavar="FILE", help="gamma file to write")
    p.add_argument("--max-games", type=int, metavar="N", help="read at most N records")
    p.add_argument("--holdout", type=float, default=HOLDOUT,
                   help=f"fraction of games held out for evaluation (default {HOLDOUT})")
    p.add_argument("--seed", type=int, default=1, help="seed of the split and the sampling")
    p.add_argument("--positions-per-game", type=int, default=POSITIONS_PER_GAME, metavar="K",
                   help=f"positions sampled per training game, 0 for all (default {POSITIONS_PER_GAME})")
    p.add_argument("--min-pattern-count", type=int, default=MIN_PATTERN_COUNT, metavar="N",
                   help=f"patterns seen fewer times join the default (default {MIN_PATTERN_COUNT})")
    p.add_argument("--hold-groups", default="", metavar="GROUPS",
                   help="feature groups held at gamma 1 (comma-separated names; 'rollout': the "
                        "groups the rollouts do not weigh), for gammas trained for the rollouts")
    p.add_argument("--max-iter", type=int, default=MAX_ITER, help="MM sweeps at most")
    p.add_argument("--tol", type=float, default=TOL,
                   help="stop when a sweep gains less log-posterior per position")
    p.add_argument("--workers", type=int, default=predict.WORKERS, help="processes (default 2)")
    p.add_argument("--report", metavar="PNG", help="report image (default: OUT with .png)")
    cluster.add_arguments(p)      # phase 1 on a Dask cluster; MM and held-out stay here


def main(args):
    t_start = time.perf_counter()
    out = Path(args.out)
    report = Path(args.report) if args.report else out.with_suffix(".png")
    if not 0 <= args.holdout < 1:
        print(f"gammago train-mm: --holdout {args.holdout} must be in [0, 1)", file=sys.stderr)
        return 2
    try:
        held_groups = parse_held(getattr(args, "hold_groups", ""))
    except ValueError as e:
        print(f"gammago train-mm: {e}", file=sys.stderr)
        return 2
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with open(out.with_name(out.name + ".tmp"), "w"):
            pass
        out.with_name(out.name + ".tmp").unlink()
    except OSError as e:
        print(f"gammago train-mm: cannot write {out}: {e.strerror or e}", file=sys.stderr)
        return 2
    workers = max(1, args.workers)
    times = {}

    client = None
    try:
        if args.scheduler:
            client = cluster.connect(args.scheduler, args.connect_timeout, need_features=True,
                                     log=lambda m: print(m, file=sys.stderr))
        t = time.perf_counter()
        train, held, errors, nrec = extract(args.paths, args, workers, client)
        times["extract"] = time.perf_counter() - t
    except cluster.ClusterError as e:
        print(f"gammago train-mm: {e}", file=sys.stderr)
        return 2 if client is None else 1
    finally:
        if client is not None:
            cluster.close(client, lost=client.status != "running")
    if not train:
        print(f"gammago train-mm: no usable training game in {nrec} records "
              f"({len(errors)} skipped)", file=sys.stderr)
        return 1

    t = time.perf_counter()
    ntrain = len(train)
    teams, cand, winners, seen, wins, kept, nrare = build_teams(train, args.min_pattern_count)
    npos = cand.shape[0]
    times["teams"] = time.perf_counter() - t

    t = time.perf_counter()
    groups, fixed = groups_and_fixed(held_groups)
    bar = tqdm(total=args.max_iter, desc="MM", unit="sweep", file=sys.stderr, dynamic_ncols=True)

    def progress(it, h):
        bar.update(1)
        bar.set_postfix(loglik=f"{h['log_likelihood']:.4f}")

    gamma, history = mm.fit(teams, cand, winners, F.N_FEATURES, groups, fixed=fixed,
                            max_iter=args.max_iter, tol=args.tol, progress=progress)
    bar.close()
    times["MM"] = time.perf_counter() - t
    del cand, teams

    t = time.perf_counter()
    held_summary = None
    results = []
    if held:
        results, ngames, herr = predict.evaluate(((g.name, g) for g in held), table=gamma,
                                                 workers=workers, desc="held-out",
                                                 total=len(held))
        held_summary = predict.summarize(results, ngames)
    times["held-out"] = time.perf_counter() - t
    times["total"] = time.perf_counter() - t_start

    # the gamma file: every trained feature; patterns only when kept (others take the default);
    # the held groups at 1 (their patterns through their default)
    listed = ~fixed
    patterns = {g: (npat, default) for g, npat, default in F.PATTERN_GROUPS}
    for g in range(F.N_GROUPS):
        base = F.GROUP_BASES[g]
        if F.GROUP_NAMES[g] in held_groups:
            if g in patterns:
                listed[base + patterns[g][1]] = True
            else:
                listed[base + 1: base + F.GROUP_SIZES[g]] = True
        elif g in patterns:
            pats = slice(base + 1, base + 1 + patterns[g][0])
            listed[pats] &= seen[pats] >= args.min_pattern_count
    command = "gammago train-mm " + " ".join(shlex.quote(a) for a in sys.argv[2:]) \
        if len(sys.argv) > 1 and sys.argv[1] == "train-mm" else f"gammago train-mm {vars(args)}"
    comments = [
        f"trained {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} by: {command}",
        f"data: {nrec} records read, {ntrain} training games ({npos:,} positions, "
        f"{args.positions_per_game or 'all'} per game), {len(held)} held out, {len(errors)} skipped",
        "patterns: " + "; ".join(
            f"{name} {kept[name]} kept (seen >= {args.min_pattern_count} times among "
            f"candidates), {nrare[name]} merged into {name}:default" for name in kept),
        (f"held at 1 (not trained): {', '.join(held_groups)}; " if held_groups else "") +
        f"MM: {len(history)} sweeps, mean log-likelihood per position "
        f"{history[-1]['log_likelihood']:.4f}",
        "held out: " + (predict.format_summary(held_summary) if held_summary else "none"),
        "seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in times.items()),
    ]
    gammas_mod.save(out, gamma, listed, comments, wins=wins, seen=seen)
    write_report(report, history, results, f"{out.name}: {comments[1]}\n{comments[4]}")
    gammas_mod.load(out)     # what we wrote reads back
    for c in comments[1:]:
        print(c)
    print(f"wrote {out} and {report}")
    return 0
