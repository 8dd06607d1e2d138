"""`gammago train-mm`: learn move-feature gammas from SGF records with MM (gammago.moves.mm).

Phases, each with a progress bar:
  0. harvest  (--spatial on, the default) replay the training games and count the large
              spatial pattern around every move played, at every size; the dictionary keeps
              the frequent ones (gammago.moves.harvest) and takes the diamond's slot in the
              features of the next phases (gammago/moves/spatial.pxd)
  1. extract  read the records (files, directories, tar archives), split the games into
              training and held-out BY GAME, replay each training game in C and record, at
              sampled positions, the feature team of every legal move (both cores, or
              with --scheduler ADDRESS the workers of a Dask cluster: docs/CLUSTER.md).
              Memory does not grow with the corpus: at most --max-positions positions are
              kept (those of lowest priority, a hash of game, move number and seed, over the
              whole corpus), their teams deduplicated block by block as the games arrive
  2. teams    one table of distinct teams; the 3x3 and diamond patterns seen too rarely
              among the kept candidates merged into their group's default pattern
  3. MM       Coulom's MM, group by group, until the log-posterior stops improving
  4. held-out rank the moves of every position of the held-out games with the new gammas
              (a held-out game whose moves repeat a training game's, or an earlier held-out
              game's, is left out of the evaluation and counted: a corpus may file one game
              twice, under two names that the split sends to different sides)
Then it writes the gamma file (with its dictionary, file version 2), a report PNG (log-likelihood per iteration, held-out accuracy by
move number) beside it, and prints top-1 / top-5 / mean log-evidence on the held-out games
(and for each input path apart when there are several).
"""
import shlex
import sys
import time
import zlib
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from tqdm import tqdm

from gammago.core import cluster
from gammago.moves import features as F
from gammago.moves import gammas as gammas_mod
from gammago.moves import mm
from gammago.moves import predict
from gammago.moves import harvest as harvest_mod
from gammago.moves import spatial as S
from gammago.moves.sample import Sample, SLACK, BLOCK_ENTRIES  # noqa: F401  (train_mm.Sample)
from gammago.go import sgf

HOLDOUT = 0.1               # fraction of games held out (chosen by a hash of name and seed)
POSITIONS_PER_GAME = 50     # positions sampled per training game (0: every position)
MAX_POSITIONS = 1_500_000   # positions kept over the whole corpus (0: all): bounds memory and time
MIN_PATTERN_COUNT = 20      # patterns seen fewer times among the candidates join the default
CHUNK = 32                  # records per task sent to a worker
MAX_ITER = 60               # MM sweeps at most
TOL = 1e-4                  # stop when a sweep gains less log-posterior per position
REPEATS_SHOWN = 10          # held-out repeats named one by one on stderr; the rest counted
STEP = 1 << 24              # candidate entries per slice of the whole-sample passes


def _release_memory(first=False):
    """Hand freed heap memory back to the system (glibc): the big arrays of one phase are gone
    before the next phase allocates its own, and before the held-out workers are forked. On
    the first call, arrays of 1 MiB and more are set to come from the system directly, so that
    freeing one returns it (glibc's dynamic threshold would keep them in the heap)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None)
        if first:
            libc.mallopt(-3, 1 << 20)           # M_MMAP_THRESHOLD
        libc.malloc_trim(0)
    except (OSError, AttributeError):           # not glibc: nothing to do
        pass


def held_out(name, seed, fraction):
    """Deterministic split by game: the same name and seed always land on the same side."""
    return zlib.crc32(f"{seed}:{name}".encode()) / 2.0 ** 32 < fraction


def game_digest(game):
    """The game's sgf.moves_digest: equal for two records of the same game."""
    return sgf.moves_digest(game.size, game.moves, game.setup_black, game.setup_white)


def _sample(name, n, k, seed):
    if k <= 0 or n <= k:
        return None
    rng = np.random.default_rng([seed, zlib.crc32(name.encode())])
    mask = np.zeros(n, dtype=np.uint8)
    mask[rng.choice(n, k, replace=False)] = 1
    return mask


def priorities(name, n, seed):
    """Each position's priority for the corpus-wide budget, uniform in [0, 1): a function of the
    game's name, the move number and the seed only, so that the positions kept (the lowest
    priorities) do not depend on the order or the chunking in which the games are read."""
    return np.random.default_rng([seed, zlib.crc32(name.encode()), 1]).random(n)


_CFG = {}


def feature_layout():
    """The feature layout extraction depends on: every cluster worker must answer the same."""
    return [int(F.N_FEATURES), [int(g) for g in F.GROUP_SIZES]]


def _init(cfg):
    _CFG.update(cfg)
    hashes = cfg.get("spatial")
    if hashes is None:
        _CFG["dict"] = None
    elif _CFG.get("dict") is None or len(_CFG["dict"]) != len(hashes) or \
            not np.array_equal(_CFG["dict"].hashes, hashes):
        _CFG["dict"] = S.SpatialDict(hashes, (hashes & np.uint64(0xF)).astype(np.uint8))


def _extract_chunk(task):
    """(threshold, [(name, bytes|SgfError, source index)]) -> {"keys": the chunk's distinct team
    keys, "records": [('train', name, (index into keys, counts, offsets, winner, priorities,
    positions sampled), digest) | ('held', name, (source index, bytes), digest) |
    ('error', name, problem, None)]}, digest being the game's game_digest.
    Positions of priority at or above the threshold are not extracted: the budget has no room
    for them. Each chunk's teams are deduplicated here, on the workers."""
    threshold, chunk = task
    out, train = [], []
    for name, data, src in chunk:
        try:
            if isinstance(data, sgf.SgfError):
                raise data
            game = sgf.parse_game(name, data)
            n = len(game.moves)
            if held_out(name, _CFG["seed"], _CFG["holdout"]):
                # checked now so that a bad held-out game is reported with the others
                F.extract_game(game.board(), game.moves, np.zeros(n, np.uint8))
                out.append(("held", name, (src, data), game_digest(game)))
                continue
            mask = _sample(name, n, _CFG["positions"], _CFG["seed"])
            take = np.ones(n, dtype=bool) if mask is None else mask.astype(bool)
            sampled = int(take.sum())
            prio = priorities(name, n, _CFG["seed"])
            take &= prio < threshold
            keys, counts, offs, win, mvn = F.extract_game(game.board(), game.moves,
                                                          take.astype(np.uint8),
                                                          dictionary=_CFG.get("dict"))
            train.append(keys)
            out.append(("train", name, [None, counts.astype(np.uint16), offs,
                                        win.astype(np.int16), prio[mvn], sampled],
                        game_digest(game)))
        except sgf.SgfError as e:
            out.append(("error", name, e.problem, None))
        except ValueError as e:
            out.append(("error", name, str(e), None))
    uniq = np.zeros(0, dtype=np.int64)
    if train:
        uniq, index = np.unique(np.concatenate(train), return_inverse=True)
        parts = np.split(index.astype(np.int32), np.cumsum([len(k) for k in train])[:-1])
        for (kind, _, payload, _), part in zip((r for r in out if r[0] == "train"), parts):
            payload[0] = part
    return {"keys": uniq, "records": out}


def _sources(paths):
    """(name, bytes|SgfError, index of the path it came from) for every record."""
    for i, path in enumerate(paths):
        for name, data in sgf.iter_sources([path]):
            yield name, data, i


def _limited(sources, max_games):
    return sources if max_games is None else (s for _, s in zip(range(max_games), sources))


def extract(paths, args, workers, client=None, dictionary=None):
    """Phase 1. Returns (Sample, held-out games [(name, path index, bytes)], errors, records
    read, training games, repeats: the held-out games left out because their moves repeat a
    training game's or an earlier held-out game's [(name, the other's name)]). The chunks go
    to `workers` local processes, or to the workers of a Dask cluster (`client`): the same
    _extract_chunk on the same chunks, its results taken in the same order."""
    held, errors = [], []
    trained, held_digests = {}, []            # digest -> first training game's name
    sample = Sample(args.max_positions)
    sources = _limited(_sources(paths), args.max_games)
    cfg = {"seed": args.seed, "holdout": args.holdout, "positions": args.positions_per_game,
           "spatial": None if dictionary is None else dictionary.hashes}
    bar = tqdm(total=args.max_games, desc="extract", unit="game", file=sys.stderr,
               dynamic_ncols=True)
    n = ntrain = 0
    # each chunk carries the threshold as it stands when the chunk is sent
    chunks = ((sample.threshold, c) for c in predict.chunked(sources, CHUNK))
    if client is not None:
        outs = cluster.map_chunks(client, _extract_chunk, chunks, _init, (cfg,))
    else:
        outs = predict.map_chunks(_extract_chunk, chunks, workers, _init, (cfg,))
    for out in outs:
        games = []
        for kind, name, payload, digest in out["records"]:
            n += 1
            if kind == "train":
                ntrain += 1
                games.append(payload)
                trained.setdefault(digest, name)
            elif kind == "held":
                held.append((name, *payload))
                held_digests.append(digest)
            else:
                errors.append((name, payload))
                bar.write(f"skipped {name}: {payload}", file=sys.stderr)
        sample.add_chunk(out["keys"], games)
        bar.update(len(out["records"]))
        bar.set_postfix(train=ntrain, held=len(held), bad=len(errors),
                        positions=f"{sample.positions:,}")
    bar.close()
    # the repeats are known only once every training game is read
    kept, repeats = sgf.split_repeats([(g[0], d) for g, d in zip(held, held_digests)], trained)
    return sample, [held[i] for i in kept], errors, n, ntrain, repeats


def _team_columns(keys):
    """Packed team keys -> one column of local ids per group, each in a small dtype."""
    return [((keys >> F.KEY_SHIFTS[g]) & ((1 << F.KEY_BITS[g]) - 1))
            .astype(mm.small_uint(F.GROUP_SIZES[g])) for g in range(F.N_GROUPS)]


def build_teams(sample, min_count):
    """Phase 2: the distinct teams (rare patterns merged into their group's default, teams
    numbered by how often they occur), the candidates matrix, winners, per-feature counts."""
    bar = tqdm(total=4, desc="teams", file=sys.stderr, dynamic_ncols=True)
    keys, index, counts, offsets, winner_entry = sample.finish()
    _release_memory()
    bar.update(1)
    nfeat = F.N_FEATURES
    team_count = np.zeros(len(keys))
    for a in range(0, len(index), STEP):          # slice by slice: bincount copies to int64
        team_count += np.bincount(index[a: a + STEP], weights=counts[a: a + STEP],
                                  minlength=len(keys))
    columns = _team_columns(keys)
    seen = np.zeros(nfeat)
    for g, col in enumerate(columns):
        seen[F.GROUP_BASES[g]: F.GROUP_BASES[g] + F.GROUP_SIZES[g]] += \
            np.bincount(col, weights=team_count, minlength=F.GROUP_SIZES[g])
    # rare patterns -> their group's default pattern, group by group
    kept, nrare = {}, {}
    for g, npat, default in F.PATTERN_GROUPS:
        base = F.GROUP_BASES[g]
        rare = np.flatnonzero(seen[base + 1: base + 1 + npat] < min_count) + 1    # local ids
        remap = np.arange(F.GROUP_SIZES[g], dtype=columns[g].dtype)
        remap[rare] = default
        keys = (keys & ~np.int64(((1 << F.KEY_BITS[g]) - 1) << F.KEY_SHIFTS[g])) | \
            (remap[columns[g]].astype(np.int64) << F.KEY_SHIFTS[g])
        seen[base + default] += seen[base + rare].sum()
        kept[F.GROUP_NAMES[g]] = npat - len(rare)
        nrare[F.GROUP_NAMES[g]] = len(rare)
    del columns
    bar.update(1)
    # teams made equal by the merge become one; the most frequent teams first (locality)
    keys, merged = np.unique(keys, return_inverse=True)
    team_count = np.bincount(merged, weights=team_count, minlength=len(keys))
    order = np.argsort(-team_count, kind="stable")
    rank = np.empty(len(keys), dtype=np.int32)
    rank[order] = np.arange(len(keys), dtype=np.int32)
    renumber = rank[merged]
    del merged, rank, team_count
    for a in range(0, len(index), STEP):         # in place, slice by slice
        index[a: a + STEP] = renumber[index[a: a + STEP]]
    teams = mm.Teams(_team_columns(keys[order]), F.GROUP_BASES)
    del keys, order, renumber
    bar.update(1)
    cand = mm.candidates_matrix(offsets, index, counts, nteams=len(teams))
    winners = index[winner_entry]
    del index, counts, offsets, winner_entry
    bar.update(1)
    bar.close()
    wins = np.zeros(nfeat)
    for k in range(F.N_GROUPS):
        wins += np.bincount(teams.ids(k, winners), minlength=nfeat)
    return teams, cand, winners, seen, wins, kept, nrare


def _shown(name, dictionary):
    """A pattern group's name in the table: the diamond's slot is 'spatial' with a dictionary."""
    return "spatial" if name == "pat12" and dictionary is not None else name


def _unused(name, dictionary):
    """The slot's ids that no pattern of the dictionary takes (counted as merged otherwise)."""
    if name != "pat12" or dictionary is None:
        return 0
    return F.PATTERN_GROUPS[0][1] - len(dictionary)


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
    p.add_argument("--max-positions", type=int, default=MAX_POSITIONS, metavar="N",
                   help=f"training positions kept over the whole corpus, those of lowest "
                        f"priority (a hash of game, move number and seed): memory and time stay "
                        f"bounded however many games are read; 0 keeps all (default {MAX_POSITIONS:,})")
    p.add_argument("--min-pattern-count", type=int, default=MIN_PATTERN_COUNT, metavar="N",
                   help=f"patterns seen fewer times join the default (default {MIN_PATTERN_COUNT})")
    p.add_argument("--hold-groups", default="", metavar="GROUPS",
                   help="feature groups held at gamma 1 (comma-separated names; 'rollout': the "
                        "groups the rollouts do not weigh), for gammas trained for the rollouts")
    harvest_mod.add_arguments(p)
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
    if args.max_positions < 0:
        print(f"gammago train-mm: --max-positions {args.max_positions} must be 0 (all) or more",
              file=sys.stderr)
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
    spatial = getattr(args, "spatial", "off") == "on" and "pat12" not in held_groups
    workers = max(1, args.workers)
    times = {}
    _release_memory(first=True)

    client = None
    dictionary, dict_note = None, None
    try:
        if args.scheduler:
            client = cluster.connect(args.scheduler, args.connect_timeout, layout=feature_layout,
                                     log=lambda m: print(m, file=sys.stderr))
        if spatial:
            t = time.perf_counter()
            limit = args.max_games if args.harvest_games is None else \
                min(args.harvest_games, args.max_games or args.harvest_games)
            counter, hgames = harvest_mod.harvest(_limited(_sources(args.paths), limit), args,
                                                  workers, client, total=limit)
            dictionary, dict_note = harvest_mod.build(counter, args.spatial_min_count,
                                                      min(args.spatial_max, S.MAX_DICT))
            dict_note += f"; harvested from {hgames:,} training games"
            del counter
            _release_memory()
            print(dict_note, file=sys.stderr)
            times["harvest"] = time.perf_counter() - t
        t = time.perf_counter()
        sample, held, errors, nrec, ntrain, repeats = extract(args.paths, args, workers, client,
                                                              dictionary)
        times["extract"] = time.perf_counter() - t
    except cluster.ClusterError as e:
        print(f"gammago train-mm: {e}", file=sys.stderr)
        return 2 if client is None else 1
    finally:
        if client is not None:
            cluster.close(client, lost=client.status != "running")
    for name, twin in repeats[:REPEATS_SHOWN]:
        print(f"not evaluated: held-out {name} repeats the moves of {twin}", file=sys.stderr)
    if len(repeats) > REPEATS_SHOWN:
        print(f"not evaluated: {len(repeats) - REPEATS_SHOWN} more held-out games that repeat "
              f"another game's moves", file=sys.stderr)
    if not sample.positions:
        print(f"gammago train-mm: no usable training game in {nrec} records "
              f"({len(errors)} skipped)", file=sys.stderr)
        return 1

    t = time.perf_counter()
    nsampled = sample.sampled
    teams, cand, winners, seen, wins, kept, nrare = build_teams(sample, args.min_pattern_count)
    del sample
    _release_memory()
    npos, nteams = cand.shape
    times["teams"] = time.perf_counter() - t

    t = time.perf_counter()
    groups, fixed = groups_and_fixed(held_groups)
    bar = tqdm(total=args.max_iter, desc="MM", unit="sweep", file=sys.stderr, dynamic_ncols=True)

    def progress(it, h):
        bar.update(1)
        bar.set_postfix(loglik=f"{h['log_likelihood']:.4f}")

    gamma, history = mm.fit(teams, cand, winners, F.N_FEATURES, groups, fixed=fixed,
                            max_iter=args.max_iter, tol=args.tol, progress=progress,
                            threads=workers)
    bar.close()
    times["MM"] = time.perf_counter() - t
    del cand, teams, winners
    _release_memory()                 # before the held-out workers are forked

    # the gamma file: every trained feature; patterns only when kept (others take the default);
    # the held groups at 1 (their patterns through their default)
    listed = ~fixed
    patterns = {g: (npat, default) for g, npat, default in F.PATTERN_GROUPS}
    if dictionary is not None:        # no spatial id beyond the dictionary's
        base = F.GROUP_BASES[F.GROUP_NAMES.index("pat12")]
        listed[base + 1 + len(dictionary): base + 1 + F.PATTERN_GROUPS[0][1]] = False
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
    # the held-out games are ranked with the table as it will load: the patterns not listed
    # take their group's default gamma (not the 1 MM leaves on ids it never saw)
    for g, npat, default in F.PATTERN_GROUPS:
        base = F.GROUP_BASES[g]
        pats = np.arange(base + 1, base + 1 + npat)
        gamma[pats[~listed[pats]]] = gamma[base + default]

    t = time.perf_counter()
    held_summary, by_path, results = None, [], []
    if held:
        results, ngames, herr = predict.evaluate(((name, data) for name, _, data in held),
                                                 table=gamma, workers=workers, desc="held-out",
                                                 total=len(held), dictionary=dictionary)
        held_summary = predict.summarize(results, ngames)
        bad = {name for name, _ in herr}
        src = np.array([i for name, i, _ in held if name not in bad])
        if len(args.paths) > 1:
            for i, path in enumerate(args.paths):
                mine = [r for r, s in zip(results, src) if s == i]
                if mine:
                    by_path.append(f"held out, {path}: "
                                   + predict.format_summary(predict.summarize(mine, len(mine))))
    times["held-out"] = time.perf_counter() - t
    times["total"] = time.perf_counter() - t_start

    command = "gammago train-mm " + " ".join(shlex.quote(a) for a in sys.argv[2:]) \
        if len(sys.argv) > 1 and sys.argv[1] == "train-mm" else f"gammago train-mm {vars(args)}"
    comments = [
        f"trained {datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC')} by: {command}",
        f"data: {nrec} records read, {ntrain} training games ({npos:,} positions"
        + (f" kept of {nsampled:,}, the --max-positions {args.max_positions:,} of lowest priority"
           if npos < nsampled else "")
        + f"; {args.positions_per_game or 'all'} per game), {len(held)} held out"
        + (f" (and {len(repeats)} left out of the evaluation: their moves repeat another "
           f"game's)" if repeats else "")
        + f", {len(errors)} skipped",
        "patterns: " + "; ".join(
            f"{_shown(name, dictionary)} {kept[name]} kept (seen >= "
            f"{args.min_pattern_count} times among candidates), "
            f"{nrare[name] - _unused(name, dictionary)} merged into "
            f"{_shown(name, dictionary)}:default" for name in kept),
        (f"held at 1 (not trained): {', '.join(held_groups)}; " if held_groups else "") +
        f"MM: {nteams:,} distinct teams, {len(history)} sweeps, mean log-likelihood per position "
        f"{history[-1]['log_likelihood']:.4f}",
        "held out: " + (predict.format_summary(held_summary) if held_summary else "none"),
        *by_path,
        *([dict_note] if dict_note else []),
        *([predict.format_ranges(predict.by_range(results, dictionary))] if results else []),
        "seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in times.items()),
    ]
    gammas_mod.save(out, gamma, listed, comments, wins=wins, seen=seen, dictionary=dictionary)
    write_report(report, history, results, f"{out.name}: {comments[1]}\n{comments[4]}")
    gammas_mod.load(out)     # what we wrote reads back
    for c in comments[1:]:
        print(c)
    print(f"wrote {out} and {report}")
    return 0
