"""`gammago review`: every position of a game searched by the engine, as KaTrain and Lizzie
review a game in a window, written back as the record with a comment on each move, a graph,
and a summary of each side's points lost.

    gammago review games/ --out review/ --playouts 2000

Each position before move k (and the one after the last move) is searched from a fresh tree
with the side to move of move k: its win rate, its score (the best candidate's score_mean:
its mean final area count for that side over the komi), and the engine's choice. Move k by P
then lost

    points lost = score before k (for P) - score after k (for P)

and as much win rate likewise. The engine is the engine of `gammago gtp` (--mode, --model,
--playouts or --move-time, --set ...), with dynamic komi off (the values are against the
record's komi). Records are files, folders or archives (a collection gives each of its
games); each game NAME gives

    DIR/NAME.sgf          the record, each move commented (Black's view and the mover's),
                          BM / DO on the moves that lost most
    DIR/NAME.png          Black's win rate and score over the game
    DIR/NAME.review.json  each position's search, written after each position (--resume)

A malformed record is named on stderr and the others reviewed; an illegal move stops its
game's review there (the moves before it are reviewed and written). --scheduler sends chunks
of positions to a Dask cluster (gammago.core.cluster), each task with an engine of its own.
The SGF, PNG and summary: gammago.engine.review_output.
"""
import dataclasses
import json
import logging
import os
import sys
import threading
import time

from gammago.engine import review_output as out

log = logging.getLogger("gammago")

FORMAT = 1
TOP = 5                      # worst moves listed a game
BAD_POINTS = 3.0             # DO from this loss, BM[1] from twice, BM[2] from four times it
CHUNK = 8                    # --scheduler: positions a task
# the settings a review's JSON must share with the run that resumes it
NOT_COMPARED = ("threads", "max_memory", "max_nodes", "verbose", "ponder", "resign")


def add_arguments(p):
    from gammago.core import cluster
    from gammago.engine.settings import EngineConfig
    o, e = phase_limits_text()
    p.description = (
        "Search every position of the games and write each back as DIR/NAME.sgf (a comment on "
        "each move: its win rate and score from Black's view and the mover's, the engine's "
        "choice, the points and win rate it lost; BM / DO on the worst), DIR/NAME.png (win rate "
        "and score over the game) and DIR/NAME.review.json (each position's search, for "
        "--resume); print each side's mean points lost by phase and the worst moves. A "
        "position's score is its best candidate's score_mean (the playouts' final area count "
        "for the side to move, over the komi); a move that gained counts as 0 lost in the "
        f"means. Phases by move number on an NxN board: the opening to N*N/8 ({o}), the endgame "
        f"after N*N/2 ({e}), the middle game between.")
    r = p.add_argument_group("review")
    r.add_argument("records", nargs="+", metavar="GAME.sgf",
                   help="SGF files, folders or tar archives (a collection: each of its games)")
    r.add_argument("--out", required=True, metavar="DIR", help="folder of the reviews")
    r.add_argument("--resume", action="store_true",
                   help="keep the positions DIR/NAME.review.json holds and search the others "
                        "(the same engine settings); without it a review starts afresh")
    r.add_argument("--bad", type=float, default=BAD_POINTS, metavar="P",
                   help=f"a move that lost P points or more is doubtful (DO), 2P bad (BM[1]), "
                        f"4P very bad (BM[2]) (default {BAD_POINTS:g})")
    r.add_argument("--top", type=int, default=TOP, metavar="N",
                   help=f"worst moves listed a game (default {TOP})")
    r.add_argument("--max-moves", type=int, default=0, metavar="N",
                   help="review the first N moves of a game only (0: all)")
    r.add_argument("--max-positions", type=int, default=0, metavar="N",
                   help="stop after searching N positions (the review goes on with --resume; "
                        "0: no limit)")
    r.add_argument("--chunk", type=int, default=CHUNK, metavar="N",
                   help=f"--scheduler: positions a task (default {CHUNK})")
    r.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    cluster.add_arguments(p)
    EngineConfig.add_arguments(p)


def phase_limits_text():
    o19, e19 = out.phase_limits(19)
    o9, e9 = out.phase_limits(9)
    return f"move {o19} on 19x19, {o9} on 9x9", f"move {e19} on 19x19, {e9} on 9x9"


# --- the games -------------------------------------------------------------------------------
@dataclasses.dataclass
class Job:
    """One game to review: its record, where its review goes, the positions to search."""
    name: str                  # the record's name (path, file.sgf#N, archive:member)
    stem: str                  # NAME of DIR/NAME.*
    data: bytes                # the record's SGF
    game: object               # gammago.go.sgf.Game
    moves: list                # the moves reviewed (up to an illegal one, --max-moves)
    stopped: tuple = None      # (move number, why) of an illegal move
    positions: dict = dataclasses.field(default_factory=dict)   # k -> its search
    kept: int = 0              # positions of an earlier run

    @property
    def todo(self):
        return [k for k in range(len(self.moves) + 1) if k not in self.positions]

    def spec(self):
        g = self.game
        from gammago.go.sgf import moves_digest
        key = f"{self.name}:{moves_digest(g.size, self.moves, g.setup_black, g.setup_white).hex()}"
        return {"key": key, "size": g.size, "komi": g.komi, "setup_black": g.setup_black,
                "setup_white": g.setup_white, "to_move": g.to_move,
                "moves": [list(m) for m in self.moves]}

    def colour_at(self, k):
        """The side to move at position k: the mover of move k, after the last move its
        opponent."""
        if k < len(self.moves):
            return self.moves[k][0]
        if self.moves:
            return "w" if self.moves[-1][0] == "b" else "b"
        return self.game.to_move


def _stem(name, taken):
    base = os.path.basename(name.split(":")[-1])
    base, _, index = base.partition("#")
    if base.lower().endswith(".sgf"):
        base = base[:-4]
    stem = f"{base}-{index}" if index else base
    n, unique = 1, stem
    while unique in taken:
        n += 1
        unique = f"{stem}-{n}"
    taken.add(unique)
    return unique


def first_illegal(game, moves):
    """(move number, why) of the first illegal move of `moves` on the game's board, or None."""
    from gammago.go.board import Board
    b = Board(game.size, game.komi)
    b.setup(black=game.setup_black, white=game.setup_white)
    for i, (colour, vertex) in enumerate(moves):
        try:
            b.play(vertex, colour)
        except ValueError as e:
            return i + 1, f"{colour.upper()} {vertex} is illegal ({getattr(e, 'reason', str(e))})"
    return None


def read_jobs(records, max_moves, say):
    """The games of the records, each a Job; say(text) names each bad record (the others go on).
    Returns (jobs, bad records)."""
    from gammago.go import sgf
    jobs, taken, bad = [], set(), 0
    for name, data in sgf.iter_sources(records):
        try:
            if isinstance(data, sgf.SgfError):
                raise data
            game = sgf.parse_game(name, data)
            game.board()                          # setup stones placeable
        except sgf.SgfError as e:
            say(f"{e.name or name}: {e.problem}; not reviewed")
            bad += 1
            continue
        moves = game.moves[:max_moves] if max_moves else list(game.moves)
        stopped = first_illegal(game, moves)
        if stopped:
            say(f"{name}: move {stopped[0]}: {stopped[1]}; the review stops there "
                f"(moves 1-{stopped[0] - 1} reviewed)")
            moves = moves[:stopped[0] - 1]
            bad += 1
        jobs.append(Job(name, _stem(name, taken), data, game, moves, stopped))
    return jobs, bad


# --- the review's file ---------------------------------------------------------------------
def json_path(outdir, job):
    return os.path.join(outdir, job.stem + ".review.json")


def compared(fields):
    return {k: v for k, v in fields.items() if k not in NOT_COMPARED}


def load_kept(outdir, job, fields, say):
    """With --resume: the positions of job's earlier review, when it is of the same moves with
    the same settings (else None after saying why)."""
    path = json_path(outdir, job)
    if not os.path.exists(path):
        return {}
    try:
        with open(path) as f:
            rec = json.load(f)
        moves = [tuple(m) for m in rec["moves"]]
        positions = {int(k): v for k, v in rec["positions"].items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        say(f"{path}: unreadable ({e}); the review starts afresh")
        return {}
    if moves[:len(job.moves)] != [tuple(m) for m in job.moves][:len(moves)]:
        say(f"{path} is the review of another game than {job.name}: not resumed (another --out, "
            "or remove it)")
        return None
    theirs, mine = compared(rec.get("engine", {})), compared(fields)
    if theirs != mine:
        diff = sorted(k for k in set(theirs) | set(mine) if theirs.get(k) != mine.get(k))
        say(f"{path} was reviewed with other settings ({', '.join(diff)}): --resume needs the "
            "same ones")
        return None
    return {k: v for k, v in positions.items() if k <= len(job.moves)}


def save(outdir, job, fields):
    """DIR/NAME.review.json, written whole (a temporary file and a rename)."""
    rec = {"format": FORMAT, "name": job.name, "size": job.game.size, "komi": job.game.komi,
           "moves": [list(m) for m in job.moves], "engine": fields,
           "positions": {str(k): job.positions[k] for k in sorted(job.positions)}}
    path = json_path(outdir, job)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(rec, f, indent=1)
    os.replace(tmp, path)


# --- searching positions -----------------------------------------------------------------------
_LOCAL = threading.local()     # per thread (a Dask worker may run tasks in threads): its engine


class _Reviewer:
    """An engine and the game it stands in: positions of one game in order play forward."""

    def __init__(self, fields):
        from gammago.engine.engine import Engine
        from gammago.engine.settings import EngineConfig
        self.engine = Engine(EngineConfig(**fields))
        self.game, self.played = None, 0

    def go_to(self, spec, k):
        eng = self.engine
        if self.game != spec["key"] or k < self.played:
            eng.new_game(spec["size"], spec["komi"])
            if spec["setup_black"] or spec["setup_white"]:
                eng.setup_stones(spec["setup_black"], spec["setup_white"])
            self.game, self.played = spec["key"], 0
        for colour, vertex in spec["moves"][self.played:k]:
            eng.play(colour, vertex)
        self.played = k

    def search(self, colour):
        """One search of the position for colour, from a fresh tree: its result dict."""
        from gammago.go.board import parse_color
        eng = self.engine
        c = parse_color(colour)
        eng.clear_cache()
        t0 = time.perf_counter()
        eng.decide(colour, allow_resign=False)
        infos = eng.last_infos
        root = eng.root_score(c)
        best = infos[0] if infos else {}
        score = best.get("score_mean")
        if score is None and root is not None:
            score = root[0]
        mode = eng.mode
        if mode == "net-root" and eng.net is not None:
            mode += " " + os.path.basename(eng.net.path)
        return {"colour": colour, "winrate": best.get("winrate"), "score": score,
                "score_stdev": best.get("score_stdev", root[1] if root else None),
                "root_score": list(root) if root else None, "best": best.get("move", "pass"),
                "pv": list(best.get("pv", []))[:10], "visits": int(sum(d["visits"] for d in infos)),
                "playouts": int(eng.search.playouts), "search": mode,
                "candidates": [{k: d.get(k) for k in ("move", "visits", "winrate", "score_mean")}
                               for d in infos[:5]],
                "seconds": round(time.perf_counter() - t0, 3), "time": time.time()}


def review_positions(fields, spec, ks, colours):
    """Search positions ks (ascending) of the game `spec` with an engine of this thread's
    (built once per settings): [(k, result)]. The task of a local run and of a cluster's."""
    rv = getattr(_LOCAL, "reviewer", None)
    key = repr(sorted(fields.items()))
    if rv is None or getattr(_LOCAL, "key", None) != key:
        rv = _LOCAL.reviewer = _Reviewer(fields)
        _LOCAL.key = key
    got = []
    for k, colour in zip(ks, colours):
        rv.go_to(spec, k)
        res = rv.search(colour)
        res["k"] = k
        got.append((k, res))
    return got


def _cluster_task(fields, spec, ks, colours):
    logging.getLogger("gammago").setLevel(logging.WARNING)
    return review_positions(fields, spec, ks, colours)


def _local_results(jobs, fields):
    for i, job in enumerate(jobs):
        spec = job.spec()
        for k in job.todo:
            yield i, review_positions(fields, spec, [k], [job.colour_at(k)])


def _cluster_results(client, jobs, fields, chunk):
    from gammago.core import cluster
    tasks, owner = [], []
    for i, job in enumerate(jobs):
        spec, todo = job.spec(), job.todo
        for s in range(0, len(todo), chunk):
            ks = todo[s:s + chunk]
            tasks.append((fields, spec, ks, [job.colour_at(k) for k in ks]))
            owner.append(i)
    for t, got in cluster.map_unordered(client, _cluster_task, tasks,
                                        what="review task {i}"):
        yield owner[t], got


# --- a game's review -----------------------------------------------------------------------
def move_reviews(job, bad):
    """Each reviewed move's dict (review_output's): the positions before and after it."""
    P = job.positions
    moves = []
    for k, (colour, vertex) in enumerate(job.moves):
        before, after = P.get(k), P.get(k + 1)
        m = {"number": k + 1, "colour": colour, "vertex": vertex, "best": None,
             "before_winrate": None, "before_score": None, "after_winrate": None,
             "after_score": None, "lost": None, "lost_winrate": None, "mark": None,
             "playouts": 0}
        if before is not None:
            m.update(best=before["best"], before_winrate=before["winrate"],
                     before_score=before["score"], playouts=before["playouts"])
        if after is not None and after["winrate"] is not None:
            same = after["colour"] == colour
            m["after_winrate"] = after["winrate"] if same else 1 - after["winrate"]
            if after["score"] is not None:
                m["after_score"] = after["score"] if same else -after["score"]
        if m["before_score"] is not None and m["after_score"] is not None:
            m["lost"] = m["before_score"] - m["after_score"]
            m["lost_winrate"] = m["before_winrate"] - m["after_winrate"]
            lost = m["lost"]
            m["mark"] = ("BM2" if lost >= 4 * bad else "BM1" if lost >= 2 * bad
                         else "DO" if lost >= bad else None)
        moves.append(m)
    return moves


def searched_by(job, fields):
    from gammago import __version__
    modes = sorted({p["search"] for p in job.positions.values()})
    budget = (f"{fields['playouts']} playouts" if fields.get("playouts")
              else f"{fields.get('move_time')} s") + " a position"
    return f"gammago {__version__} ({', '.join(modes)}; {budget})"


def finish(outdir, job, fields, args):
    """Write a reviewed game's SGF and PNG; its summary lines."""
    moves = move_reviews(job, args.bad)
    by = searched_by(job, fields)
    out.write_sgf(os.path.join(outdir, job.stem + ".sgf"), job.data, moves, by, job.stopped)
    g = job.game
    players = " vs ".join(x or "?" for x in g.players)
    title = f"{os.path.basename(job.name)}: {players}, {g.result or '?'}"
    positions = [dict(job.positions[k], k=k) for k in sorted(job.positions)]
    out.write_png(os.path.join(outdir, job.stem + ".png"), title, positions, moves)
    header = (f"{len(job.moves)} moves reviewed, {g.size}x{g.size}, komi {g.komi:g}, "
              f"B {g.players[0] or '?'} W {g.players[1] or '?'}, {g.result or 'no result'}; "
              f"by {by}")
    if job.stopped:
        header += f"; stopped at move {job.stopped[0]} ({job.stopped[1]})"
    return out.summary_lines(job.name, header, moves, g.size, args.top)


def main(args):
    level = logging.INFO if args.verbose else logging.WARNING
    logging.basicConfig(stream=sys.stderr, level=level, format="%(name)s: %(message)s")

    def say(text):
        from tqdm import tqdm
        tqdm.write(f"gammago review: {text}", file=sys.stderr)

    from gammago.engine.settings import EngineConfig
    try:
        cfg = EngineConfig.from_args(args)
        if cfg.mode in ("net-policy", "gamma-policy"):
            raise ValueError(f"--mode {cfg.mode} does not search: a review needs rollouts, "
                             "net-root or auto")
        for name in ("top", "max_moves", "max_positions"):
            if getattr(args, name) < 0:
                raise ValueError(f"--{name.replace('_', '-')} must not be negative")
        if args.chunk < 1 or not args.bad > 0:
            raise ValueError("--chunk must be >= 1 and --bad > 0")
    except ValueError as e:
        print(f"gammago review: {e}", file=sys.stderr)
        return 2
    cfg.ponder, cfg.dynkomi = False, "off"
    fields = json.loads(json.dumps(dataclasses.asdict(cfg)))
    jobs, bad = read_jobs(args.records, args.max_moves, say)
    os.makedirs(args.out, exist_ok=True)
    ready = []
    for job in jobs:
        if args.resume:
            kept = load_kept(args.out, job, fields, say)
            if kept is None:
                bad += 1
                continue
            job.positions, job.kept = kept, len(kept)
        elif os.path.exists(json_path(args.out, job)):
            say(f"{json_path(args.out, job)}: replaced by a new review (--resume keeps it)")
        ready.append(job)
    if not ready:
        say("no game to review")
        return 1 if bad else 0
    for job in ready:
        if job.kept:
            say(f"{job.name}: {job.kept} positions kept from {json_path(args.out, job)}, "
                f"{len(job.todo)} to search")
    from gammago.core import cluster
    client, rc = cluster.connect_from_args(args, "review")
    if rc:
        return rc
    from tqdm import tqdm
    total = sum(len(j.moves) + 1 for j in ready)
    bar = tqdm(total=total, initial=total - sum(len(j.todo) for j in ready), unit="position",
               desc="review", file=sys.stderr, disable=args.no_progress, mininterval=0.5)
    searched, told, summaries = 0, set(), {}
    results = (_cluster_results(client, ready, fields, args.chunk) if client is not None
               else _local_results(ready, fields))
    try:
        for i, job in enumerate(ready):          # the games whose review an earlier run ended
            if not job.todo:
                summaries[i] = finish(args.out, job, fields, args)
        for i, got in results:
            job = ready[i]
            for k, res in got:
                job.positions[k] = res
                log.info("review: %s position %d (%s to move): %s, winrate %.3f, score %.1f",
                         job.name, k, res["colour"], res["best"], res["winrate"] or 0.5,
                         res["score"] or 0.0)
            save(args.out, job, fields)
            if i not in told:
                told.add(i)
                say(f"{job.name}: {job.game.size}x{job.game.size}, searched by "
                    f"{', '.join(sorted({p['search'] for p in job.positions.values()}))}")
            searched += len(got)
            bar.update(len(got))
            if not job.todo:
                summaries[i] = finish(args.out, job, fields, args)
            if args.max_positions and searched >= args.max_positions:
                break
    except cluster.ClusterError as e:
        bar.close()
        say(f"{e}; --resume goes on")
        return 2
    except KeyboardInterrupt:
        bar.close()
        say(f"stopped after {searched} positions: --resume goes on")
        return 130
    finally:
        bar.close()
        if client is not None:
            cluster.close(client)
    for i in sorted(summaries):
        print("\n".join(summaries[i]))
    left = [j for j in ready if j.todo]
    for job in left:
        print(f"{job.name}: {len(job.positions)} of {len(job.moves) + 1} positions reviewed; "
              "--resume goes on")
    print(f"reviewed {len(summaries)} of {len(ready)} games ({searched} positions searched now)"
          + (f"; {bad} record(s) with problems (above, on stderr)" if bad else ""))
    return 1 if bad else 0
