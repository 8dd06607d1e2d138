"""train-mm's first pass: the dictionary of large spatial patterns (gammago/moves/spatial.pxd).

The training games (the held-out ones never) are replayed in C on the workers, and the pattern
around every move played is hashed at every size (spatial.harvest_game); each chunk's hashes
come back counted (np.unique), and this process adds them to a bounded counter
(spatial.HashCounter: an open-addressing table that drops its lowest counts when it fills, so
memory stays fixed however large the corpus). The dictionary keeps the patterns played at
least --spatial-min-count times, the most frequent --spatial-max of them when more qualify,
numbered by size and hash; the second pass (extraction) then gives each candidate the largest
of them that matches (spatial.spatial_match)."""
import sys

import numpy as np
from tqdm import tqdm

from gammago.core import cluster
from gammago.go import sgf
from gammago.moves import predict
from gammago.moves import spatial as S

MIN_COUNT = 10               # a pattern joins the dictionary when played at least this often
MAX_PATTERNS = S.MAX_DICT    # and the most frequent of them when more qualify
SLOTS = 1 << 25              # the counter's table (12 bytes a slot: 400 MB)
CHUNK = 64                   # records per task

_CFG = {}


def _init(cfg):
    _CFG.update(cfg)


def _harvest_chunk(chunk):
    """[(name, bytes|SgfError, source index)] -> (distinct hashes, their counts, games read,
    records) of
    the moves played in the chunk's training games (bad records are skipped here: extraction
    reports them)."""
    from gammago.moves.train_mm import held_out
    hs, n = [], 0
    for name, data, _src in chunk:
        if isinstance(data, sgf.SgfError) or held_out(name, _CFG["seed"], _CFG["holdout"]):
            continue
        try:
            game = sgf.parse_game(name, data)
            h = S.harvest_game(game.board(), game.moves)
        except (sgf.SgfError, ValueError):
            continue
        hs.append(h.ravel())
        n += 1
    if not hs:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint32), 0, len(chunk)
    u, c = np.unique(np.concatenate(hs), return_counts=True)
    return u, c.astype(np.uint32), n, len(chunk)


def harvest(sources, args, workers, client=None, total=None):
    """Count the played moves' patterns of the training games among `sources` ((name, bytes,
    index) records). Returns the HashCounter and the number of games read."""
    counter = S.HashCounter(SLOTS)
    cfg = {"seed": args.seed, "holdout": args.holdout}
    bar = tqdm(total=total, desc="harvest", unit="game", file=sys.stderr, dynamic_ncols=True)
    chunks = predict.chunked(sources, CHUNK)
    if client is not None:
        outs = cluster.map_chunks(client, _harvest_chunk, chunks, _init, (cfg,))
    else:
        outs = predict.map_chunks(_harvest_chunk, chunks, workers, _init, (cfg,))
    games = 0
    for u, c, n, nrec in outs:
        counter.add(u, c)
        games += n
        bar.update(nrec)
        bar.set_postfix(games=games, patterns=f"{counter.n:,}")
    bar.close()
    return counter, games


def build(counter, min_count=MIN_COUNT, max_patterns=MAX_PATTERNS):
    """The SpatialDict of the counted patterns played at least min_count times (the
    max_patterns most frequent when more), ids in order of size and hash; and a line that
    says how many of each size it holds."""
    h, c = counter.items(min_count)
    qualified = len(h)
    if len(h) > max_patterns:
        keep = np.lexsort((h, -c.astype(np.int64)))[:max_patterns]
        h, c = h[keep], c[keep]
    sizes = (h & np.uint64(0xF)).astype(np.uint8)
    order = np.lexsort((h, sizes))
    h, sizes = h[order], sizes[order]
    d = S.SpatialDict(h, sizes)
    per = ", ".join(f"{s}: {int((sizes == s).sum()):,}" for s in S.SIZES)
    note = (f"spatial dictionary: {len(h):,} patterns of sizes {S.SIZES[0]}-{S.SIZES[-1]} "
            f"played >= {min_count} times in the training games"
            + (f" (the {max_patterns:,} most frequent of {qualified:,})" if qualified > len(h)
               else "")
            + f" (by size {per}); checksum {d.checksum}"
            + (f"; the counter dropped counts under {counter.pruned_below} in {counter.prunes} "
               f"prunes" if counter.prunes else ""))
    return d, note


def add_arguments(p):
    p.add_argument("--spatial", choices=("on", "off"), default="on",
                   help="large spatial patterns (a dictionary harvested from the training games, "
                        "in the diamond's place; off: the 12-point diamond, a version 1 table; "
                        "off whenever --hold-groups holds pat12)")
    p.add_argument("--spatial-min-count", type=int, default=MIN_COUNT, metavar="K",
                   help=f"patterns played fewer times stay out of the dictionary (default {MIN_COUNT})")
    p.add_argument("--spatial-max", type=int, default=MAX_PATTERNS, metavar="N",
                   help=f"at most the N most frequent patterns (default and most {MAX_PATTERNS:,})")
    p.add_argument("--harvest-games", type=int, metavar="N",
                   help="harvest the dictionary from the first N records only (default: all)")
