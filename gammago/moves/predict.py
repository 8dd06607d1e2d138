"""`gammago predict`: how well a move model predicts the moves of game records.

For every position of every game, the legal moves (and pass) are ranked by the model and the
move actually played is looked up: top-1 and top-5 are the fractions of positions where it is
the first / among the first five (ties shared out evenly, as a random tie-break would), and
the mean log-evidence is the mean natural log of the probability the model gave it.

The metric functions below take per-position arrays (greater, equal, log_evidence,
move_number), so any model that can rank moves reuses them: the gammas (in worker processes)
and the net (gammago.net.runtime, loaded only for --model).
"""
import json
import multiprocessing
import sys
import time

import numpy as np
from tqdm import tqdm

from gammago.moves import gammas as gammas_mod
from gammago.go import sgf

WORKERS = 2          # processes; the machine has two cores
CHUNK = 16           # games per task sent to a worker
MOVE_BIN = 20        # move-number bin width for accuracy by move number
# the ranges of move numbers (1-based, inclusive) of the table by move number; the last one
# holds every later move too
SPATIAL_SIZES = range(4, 11)     # spatial.SIZES (not imported: the net's path needs no Cython)
RANGES = ((1, 30), (31, 60), (61, 90), (91, 150), (151, 300))


# ---------------------------------------------------------------------------------------------
# Metrics (model-independent)
# ---------------------------------------------------------------------------------------------
def topk_credit(greater, equal, k):
    """Per position: the probability that the played move lands in the first k under a random
    tie-break, given `greater` moves ranked strictly above it and `equal` others tied with it."""
    greater = np.asarray(greater, dtype=np.float64)
    equal = np.asarray(equal, dtype=np.float64)
    return np.clip((k - greater) / (equal + 1.0), 0.0, 1.0)


def concat_results(results):
    """Concatenate per-game result dicts (arrays of equal keys) into one."""
    results = [r for r in results if len(r["greater"])]
    if not results:
        return {"greater": np.zeros(0), "equal": np.zeros(0), "log_evidence": np.zeros(0),
                "move_number": np.zeros(0, dtype=np.int32)}
    return {k: np.concatenate([r[k] for r in results]) for k in results[0]}


def summarize(results, games):
    """The headline figures: {games, positions, top1, top5, mean_log_evidence}."""
    r = concat_results(results) if isinstance(results, list) else results
    n = len(r["greater"])
    if n == 0:
        return {"games": games, "positions": 0, "top1": None, "top5": None,
                "mean_log_evidence": None}
    return {"games": games, "positions": int(n),
            "top1": float(topk_credit(r["greater"], r["equal"], 1).mean()),
            "top5": float(topk_credit(r["greater"], r["equal"], 5).mean()),
            "mean_log_evidence": float(np.mean(r["log_evidence"]))}


def by_move_number(results, bin_width=MOVE_BIN, max_move=300):
    """Accuracy by move number: (bin starts, top1, top5, positions) over bins of bin_width."""
    r = concat_results(results) if isinstance(results, list) else results
    mv = np.minimum(np.asarray(r["move_number"]), max_move - 1) // bin_width
    nb = max_move // bin_width
    cnt = np.bincount(mv, minlength=nb)[:nb]
    t1 = np.bincount(mv, weights=topk_credit(r["greater"], r["equal"], 1), minlength=nb)[:nb]
    t5 = np.bincount(mv, weights=topk_credit(r["greater"], r["equal"], 5), minlength=nb)[:nb]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.arange(nb) * bin_width, t1 / cnt, t5 / cnt, cnt


def by_range(results, dictionary=None, ranges=RANGES):
    """Top-1 / top-5 by ranges of move numbers (moves after the last range count in 'all'
    only), and 'all': [{moves, positions, top1, top5,
    sizes}], sizes (with a spatial dictionary) the fraction of the range's positions whose
    played move matched a pattern of each size ('none': no pattern of the dictionary, or a
    pass)."""
    r = concat_results(results) if isinstance(results, list) else results
    mv = np.asarray(r["move_number"]) + 1
    t1 = topk_credit(r["greater"], r["equal"], 1)
    t5 = topk_credit(r["greater"], r["equal"], 5)
    size = None
    if dictionary is not None and "pattern" in r:
        pat = np.asarray(r["pattern"])
        of = np.asarray(dictionary.sizes_of)
        size = np.where(pat <= len(dictionary), of[np.minimum(pat, len(dictionary))], 0)
    out = []
    for lo, hi in list(ranges) + [(1, None)]:
        if hi is None:
            sel, label = np.ones(len(mv), bool), "all"
        else:
            sel = (mv >= lo) & (mv <= hi)
            label = f"{lo}-{hi}"
        n = int(sel.sum())
        row = {"moves": label, "positions": n,
               "top1": float(t1[sel].mean()) if n else None,
               "top5": float(t5[sel].mean()) if n else None}
        if size is not None:
            row["sizes"] = {("none" if k == 0 else str(k)):
                            (float((size[sel] == k).mean()) if n else 0.0)
                            for k in (0,) + tuple(SPATIAL_SIZES)}
        out.append(row)
    return out


def format_ranges(rows):
    """by_range's rows as text, one line per range."""
    lines = ["by move number: top-1 / top-5" + ("; the played move's pattern size"
                                                 if rows and "sizes" in rows[0] else "")]
    for row in rows:
        if not row["positions"]:
            lines.append(f"  {row['moves']:>9s}: no positions")
            continue
        text = (f"  {row['moves']:>9s}: {100 * row['top1']:5.1f}% / {100 * row['top5']:5.1f}% "
                f"({row['positions']:,} positions)")
        if "sizes" in row:
            text += "; " + " ".join(f"{k}:{100 * v:.0f}%" for k, v in row["sizes"].items())
        lines.append(text)
    return "\n".join(lines)


def plot_by_move_number(ax, results, title="held-out prediction by move number"):
    starts, t1, t5, cnt = by_move_number(results)
    ok = cnt > 0
    ax.plot(starts[ok] + MOVE_BIN / 2, 100 * t1[ok], "o-", label="top-1")
    ax.plot(starts[ok] + MOVE_BIN / 2, 100 * t5[ok], "s-", label="top-5")
    ax.set_xlabel(f"move number (bins of {MOVE_BIN}; the last bin holds all later moves)")
    ax.set_ylabel("% of positions")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend()
    ax.set_title(title)


def format_summary(s):
    if not s["positions"]:
        return f"{s['games']} games, no positions"
    return (f"{s['games']} games, {s['positions']:,} positions: top-1 {100 * s['top1']:.1f}%, "
            f"top-5 {100 * s['top5']:.1f}%, mean log-evidence {s['mean_log_evidence']:.3f}")


# ---------------------------------------------------------------------------------------------
# Evaluating gammas on games (in worker processes)
# ---------------------------------------------------------------------------------------------
_W = {}      # per worker: the gamma table (fixed) or a loader by board size


def _init_worker(table, path, spatial=None):
    _W.clear()
    _W["table"] = table
    _W["path"] = path
    if spatial is not None:      # the hashes of the table's dictionary (a table from train-mm)
        from gammago.moves import spatial as S
        _W["dict"] = S.SpatialDict(spatial, (spatial & np.uint64(0xF)).astype(np.uint8))


def _table_for(size):
    if _W.get("table") is not None:
        return _W["table"]
    if _W.get("path"):
        if "loaded" not in _W:
            _W["loaded"] = gammas_mod.load(_W["path"]).table
        return _W["loaded"]
    return gammas_mod.load_default(size).table


def evaluate_records(chunk):
    """[(name, bytes or SgfError)] -> [('ok', name, result dict) | ('error', name, problem)]."""
    from gammago.moves import features
    out = []
    for name, data in chunk:
        try:
            if isinstance(data, sgf.SgfError):
                raise data
            if isinstance(data, sgf.Game):
                game = data
            else:
                game = sgf.parse_game(name, data)
            res = features.evaluate_game(game.board(), game.moves, _table_for(game.size),
                                         dictionary=_W.get("dict"))
            out.append(("ok", name, res))
        except (sgf.SgfError, gammas_mod.GammaFileError) as e:
            out.append(("error", name, getattr(e, "problem", None) or str(e)))
        except ValueError as e:
            out.append(("error", name, str(e)))
    return out


def chunked(items, n):
    buf = []
    for it in items:
        buf.append(it)
        if len(buf) >= n:
            yield buf
            buf = []
    if buf:
        yield buf


def map_chunks(fn, chunks, workers, initializer=None, initargs=()):
    """fn over chunks in `workers` processes (in this process when workers <= 1), in order."""
    if workers <= 1:
        if initializer:
            initializer(*initargs)
        for c in chunks:
            yield fn(c)
        return
    ctx = multiprocessing.get_context("fork")
    with ctx.Pool(workers, initializer=initializer, initargs=initargs) as pool:
        yield from pool.imap(fn, chunks)


def evaluate(sources, table=None, path=None, workers=WORKERS, desc="predict", report=None,
             total=None, dictionary=None):
    """Evaluate gammas (a table, a file path, or the shipped default by board size) on
    (name, bytes|Game) sources; dictionary: the spatial dictionary of a bare table (a file
    carries its own). Returns (per-game results list, games, errors list)."""
    results, errors = [], []
    bar = tqdm(total=total, desc=desc, unit="game", file=sys.stderr, dynamic_ncols=True)
    for out in map_chunks(evaluate_records, chunked(sources, CHUNK), workers,
                          _init_worker, (table, path,
                                         None if dictionary is None else dictionary.hashes)):
        for kind, name, payload in out:
            if kind == "ok":
                results.append(payload)
            else:
                errors.append((name, payload))
                (report or (lambda m: bar.write(m, file=sys.stderr)))(f"skipped {name}: {payload}")
            bar.update(1)
    bar.close()
    return results, len(results), errors


# ---------------------------------------------------------------------------------------------
# Evaluating a net on games (`gammago predict --model FILE`; onnxruntime only then)
# ---------------------------------------------------------------------------------------------
def evaluate_net_game(net, game, batch=64):
    """Per-position arrays for the metrics above on one sgf.Game, from a gammago.net.runtime.Net: for
    each position, the legal moves (superko respected) and pass are ranked by the net's
    probability; `greater` and
    `equal` count the moves above / tied with the one played, `log_evidence` is the log of its
    probability after illegal points are removed."""
    from gammago.net.runtime import vertex_index
    board = game.board()
    n = board.size
    boards, legal, played = [], [], []
    for i, (colour, vertex) in enumerate(game.moves):
        board.to_move = colour
        snap = board.copy()
        boards.append(snap)
        mask = np.zeros(n * n + 1, bool)
        for v in snap.legal_moves():
            mask[vertex_index(snap, v)] = True
        mask[n * n] = True
        legal.append(mask)
        played.append(vertex_index(board, vertex))
        board.play(vertex, colour)
    greater, equal, logev = [], [], []
    for s in range(0, len(boards), batch):
        probs, _ = net.evaluate(boards[s:s + batch])
        for j, pr in enumerate(probs):
            k = s + j
            mask = legal[k]
            pr = np.where(mask, pr, 0.0)
            total = pr.sum()
            pr = pr / total if total > 0 else mask / mask.sum()
            cand = mask.copy()
            cand[played[k]] = True
            mine = pr[played[k]]
            greater.append(int((pr[cand] > mine).sum()))
            equal.append(int((pr[cand] == mine).sum()) - 1)
            logev.append(float(np.log(max(mine, 1e-12))))
    return {"greater": np.array(greater, np.float64), "equal": np.array(equal, np.float64),
            "log_evidence": np.array(logev), "move_number": np.arange(1, len(greater) + 1, dtype=np.int32)}


def predict_net(args):
    """`gammago predict --model FILE`: the net's policy scored like gammas (same summary and
    JSON)."""
    from gammago.net.runtime import Net, NetError
    t0 = time.perf_counter()
    try:
        net = Net(args.model, symmetry=getattr(args, "symmetry", "random"), seed=getattr(args, "seed", 1))
    except NetError as e:
        print(f"gammago predict: {e}", file=sys.stderr)
        return 2
    results, errors = [], []
    items = sgf.iter_games(args.paths, max_games=args.max_games, errors="yield")
    bar = tqdm(items, total=args.max_games, desc="predict (net)", unit="game", file=sys.stderr)
    for item in bar:
        if isinstance(item, sgf.GameError):
            errors.append(str(item))
            bar.write(f"skipped {item}", file=sys.stderr)
            continue
        try:
            results.append(evaluate_net_game(net, item))
        except ValueError as e:
            errors.append(f"{item.name}: {e}")
            bar.write(f"skipped {item.name}: {e}", file=sys.stderr)
    bar.close()
    summary = summarize(results, len(results))
    summary["skipped"] = len(errors)
    summary["model"] = str(args.model)
    summary["symmetry"] = net.symmetry
    report(summary, summary["model"], t0, args.json)
    return 0 if results else 1


# ---------------------------------------------------------------------------------------------
# The command
# ---------------------------------------------------------------------------------------------
def add_arguments(p):
    p.add_argument("paths", nargs="+", metavar="SGF_OR_DIR",
                   help="SGF files, directories, or tar archives of SGF files")
    p.add_argument("--gammas", metavar="FILE",
                   help="gamma file (default: the shipped gammas for each game's board size)")
    p.add_argument("--max-games", type=int, metavar="N", help="read at most N records")
    p.add_argument("--workers", type=int, default=WORKERS, help="processes (default 2)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--model", metavar="FILE", help="score an ONNX policy net instead of gammas")


def main(args):
    if args.model:
        return predict_net(args)
    t0 = time.perf_counter()
    try:                                         # refuse a bad file before any work
        loaded = gammas_mod.load(args.gammas) if args.gammas else gammas_mod.load_default(19)
    except gammas_mod.GammaFileError as e:
        print(f"gammago predict: {e}", file=sys.stderr)
        return 2
    sources = sgf.iter_sources(args.paths)
    if args.max_games is not None:
        sources = (s for i, s in zip(range(args.max_games), sources))
    results, games, errors = evaluate(sources, path=args.gammas, workers=max(1, args.workers),
                                      total=args.max_games)
    summary = summarize(results, games)
    summary["skipped"] = len(errors)
    summary["gammas"] = str(args.gammas or gammas_mod.default_path(19))
    summary["by_move_number"] = by_range(results, loaded.dictionary) if results else []
    if loaded.dictionary is not None:
        summary["spatial_patterns"] = len(loaded.dictionary)
    report(summary, summary["gammas"], t0, args.json)
    return 0 if games else 1


def report(summary, label, t0, as_json):
    """Print a predict summary (gammas or net) as one JSON object or one line; adds 'seconds'."""
    summary["seconds"] = round(time.perf_counter() - t0, 2)
    if as_json:
        print(json.dumps(summary))
    else:
        print(f"predict ({label}): {format_summary(summary)}; "
              f"{summary['skipped']} records skipped; {summary['seconds']:.1f} s")
        if summary.get("by_move_number"):
            print(format_ranges(summary["by_move_number"]))
