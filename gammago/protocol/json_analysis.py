"""The `gammago analysis` command: KataGo's JSON analysis engine on stdin/stdout.

One JSON query a line in, one JSON answer a line out (KataGo's docs/Analysis_Engine.md), as
KaTrain's KataGoEngine speaks it:

    {"id":"q1","moves":[["B","E5"],["W","C4"]],"rules":"chinese","komi":7,"boardXSize":9,
     "boardYSize":9,"analyzeTurns":[2],"maxVisits":500,"includeOwnership":true}
 -> {"id":"q1","turnNumber":2,"isDuringSearch":false,"moveInfos":[{"move":"D5","visits":..,
     "winrate":..,"scoreLead":..,"prior":..,"lcb":..,"order":0,"pv":[..]},..],
     "rootInfo":{..},"ownership":[..]}

This module holds the queue and the workers; a query is read and checked into jobs in
gammago.protocol.json_query, and answered by gammago.protocol.json_answer. (GTP's streaming
analysis commands, lz-analyze and kata-analyze, are gammago.protocol.gtp_analyze.)

Each turn of analyzeTurns is a job; jobs wait in one queue, highest priority first (ties: the
earlier first), and --workers engines take them, each an Engine of its own with its share of
--threads; answers go out as jobs finish, in any order. A job searches with Engine.analyze until
a watcher stops it: maxVisits (or maxPlayouts) playouts of its own search, maxTime seconds, or
a terminate; a job on the game of its worker's last one searches on from that tree. Every job
that is not terminated gets an answer with moves, values and scores: the time limit stops a
search only once it has run a playout. Only a job terminated before any playout answers
noResults. The actions terminate, terminate_all, query_version and clear_cache are answered at
once. A bad line or query answers {"id":..,"error":..,"field":..} and the engine goes on; a
field it ignores gets a warning.

The rules are the query's: its worker's Engine plays them (territory scoring counts territory
and prisoners; the search keeps its area-scored rollouts with Pachi's parity komi).

stdout belongs to the protocol: logs and stray prints go to stderr.
"""
import dataclasses
import heapq
import itertools
import json
import logging
import sys
import threading
import time

import gammago
from gammago.go.board import format_vertex, parse_color
from gammago.protocol.json_answer import build_answer, no_results, policy_of
from gammago.protocol.json_query import PERSPECTIVES, QueryError, parse_query

log = logging.getLogger("gammago")

NO_REPORTS_S = 1e9          # the analysis interval when no reportDuringSearchEvery is asked
WATCH_MIN_S = 0.0005        # how often the watcher looks at a search near its visit limit ...
WATCH_MAX_S = 0.01          # ... and far from it
FIRST_PLAYOUT_WAIT_S = 30.0 # past maxTime, how long a search with no playout yet is waited
                            # for before it is stopped all the same (a search that cannot run)


# --- the server ---------------------------------------------------------------------------
class Worker:
    """One Engine and the position it holds (for tree reuse between jobs)."""

    def __init__(self, engine):
        self.engine = engine
        self.key = None          # the position_key of the game on its board
        self.moves = ()          # the moves played on it
        self.job = None          # the job it runs (None: idle)
        self.clear = False       # clear_cache arrived while it ran a job


class AnalysisServer:
    """The analysis engine on top of Engines: handle(line) answers a line (actions at once,
    queries queued), the workers answer jobs as they finish; serve() reads a stream to its end
    and waits for the queued jobs."""

    def __init__(self, engines, out=None, max_visits=0, max_time=1.0, perspective="SIDETOMOVE"):
        self.out = out if out is not None else sys.stdout
        self.defaults = {"max_visits": max_visits, "max_time": max_time,
                         "perspective": perspective}
        self.workers = [Worker(e) for e in engines]
        self._lock = threading.Condition()
        self._write_lock = threading.Lock()
        self._heap = []                  # (-priority, seq, job)
        self._jobs = []                  # queued and running jobs (terminate looks here)
        self._seq = itertools.count()
        self._closing = False
        self._threads = [threading.Thread(target=self._work, args=(w,), daemon=True,
                                          name=f"analysis-{i}")
                         for i, w in enumerate(self.workers)]
        for t in self._threads:
            t.start()

    # --- output ---
    def send(self, obj):
        text = json.dumps(obj, separators=(",", ":"))
        with self._write_lock:
            try:
                self.out.write(text + "\n")
                self.out.flush()
            except (BrokenPipeError, ValueError):     # the reader is gone
                self._closing = True

    def _error(self, message, qid=None, field=None):
        obj = {"error": message}
        if field is not None:
            obj["field"] = field
        if qid is not None:
            obj["id"] = qid
        self.send(obj)

    # --- input ---
    def handle(self, line):
        """Answer one input line: an action at once, a query's errors and warnings at once and
        its jobs queued."""
        line = line.strip()
        if not line:
            return
        try:
            q = json.loads(line)
        except ValueError as e:
            self._error(f"Could not parse input line as json request: {e}")
            return
        if not isinstance(q, dict):
            self._error("Request line was valid json but was not an object")
            return
        qid = q.get("id")
        if not isinstance(qid, str):
            self._error("Request must have a string id field", qid, "id")
            return
        if "action" in q:
            self._action(q)
            return
        try:
            jobs, warnings = parse_query(q, self.defaults, self._seq)
        except QueryError as e:
            self._error(str(e), qid, e.field)
            return
        for field, message in warnings:
            self.send({"id": qid, "field": field, "warning": message})
        with self._lock:
            for job in jobs:
                heapq.heappush(self._heap, (-job.priority, job.seq, job))
                self._jobs.append(job)
            self._lock.notify_all()

    def _action(self, q):
        action = q["action"]
        if action == "query_version":
            build = gammago.build().split()
            self.send(dict(q, version=gammago.__version__,
                           git_hash=build[1] if len(build) > 1 else "<omitted>"))
        elif action == "clear_cache":
            with self._lock:
                for w in self.workers:
                    if w.job is None:
                        w.engine.clear_cache()
                        w.key, w.moves = None, ()
                    else:
                        w.clear = True
            self.send(q)
        elif action in ("terminate", "terminate_all"):
            self._terminate(q, action == "terminate")
        else:
            self._error(f"unknown action {action!r} (query_version, clear_cache, terminate, "
                        "terminate_all)", q["id"], "action")

    def _terminate(self, q, one):
        if one and not isinstance(q.get("terminateId"), str):
            self._error("terminate needs a string terminateId", q["id"], "terminateId")
            return
        turns = q.get("turnNumbers")
        if turns is not None and (not isinstance(turns, list) or
                                  not all(isinstance(t, int) and not isinstance(t, bool)
                                          for t in turns)):
            self._error("turnNumbers must be a list of integers", q["id"], "turnNumbers")
            return
        unstarted = []
        with self._lock:
            for job in self._jobs:
                if (one and job.id != q["terminateId"]) or (turns is not None
                                                           and job.turn not in turns):
                    continue
                job.stop.set()
                if job.state == "queued":
                    job.state = "cancelled"
                    unstarted.append(job)
            self._jobs = [j for j in self._jobs if j.state != "cancelled"]
            self._lock.notify_all()
        self.send(q)
        for job in unstarted:
            self.send(no_results(job))

    def serve(self, inp=None):
        """Answer the lines of inp (default: stdin) until it ends; then finish the queued jobs
        and stop the workers (as KataGo does when its input closes)."""
        if inp is None:
            inp = iter(lambda: sys.stdin.buffer.readline().decode("utf-8", "replace"), "")
        for line in inp:
            if self._closing:
                break
            self.handle(line)
        self.close(wait=not self._closing)
        return 0

    def close(self, wait=True):
        """Stop the workers: after the queued jobs (wait) or now, the running ones terminated."""
        with self._lock:
            self._closing = True
            if not wait:
                for job in self._jobs:
                    job.stop.set()
            self._lock.notify_all()
        for t in self._threads:
            t.join()

    # --- the workers ---
    def _work(self, worker):
        while True:
            with self._lock:
                while not self._heap and not self._closing:
                    self._lock.wait()
                if not self._heap:
                    return
                _, _, job = heapq.heappop(self._heap)
                if job.state == "cancelled":
                    continue
                if self._closing and job.stop.is_set():
                    job.state = "cancelled"
                    self._jobs.remove(job)
                    continue
                job.state = "running"
                worker.job = job
                clear, worker.clear = worker.clear, False
            try:
                if clear:
                    worker.engine.clear_cache()
                    worker.key, worker.moves = None, ()
                self._run(worker, job)
            except Exception as e:          # keep the engine answering the other queries
                log.exception("analysis: query %s turn %d failed", job.id, job.turn)
                worker.key, worker.moves = None, ()
                self._error(f"internal error: {type(e).__name__}: {e}", job.id)
            finally:
                with self._lock:
                    job.state = "done"
                    worker.job = None
                    if job in self._jobs:
                        self._jobs.remove(job)

    def _set_position(self, worker, job):
        """Put the job's position on the worker's engine: the moves since the last job when it
        extends that game (the tree keeps their subtree), else a new game."""
        engine = worker.engine
        if not self._extends(worker, job):
            engine.set_rules(job.rules)
            engine.new_game(job.size, job.komi)
            if job.black or job.white:
                engine.setup_stones(list(job.black), list(job.white))
            engine.board.to_move = job.initial
            worker.key, worker.moves = job.position_key(), ()
        for c, v in job.moves[len(worker.moves):]:
            engine.play(c, v)
        worker.moves = job.moves

    @staticmethod
    def _extends(worker, job):
        """Whether the job's moves continue the game on the worker's board, the new ones
        alternating from the side to move there (the tree's subtree follows points, not
        colours)."""
        old = worker.moves
        if worker.key != job.position_key() or job.moves[:len(old)] != old:
            return False
        expected = worker.engine.board.to_move
        for c, _ in job.moves[len(old):]:
            if c != expected:
                return False
            expected = "w" if c == "b" else "b"
        return True

    def _avoid(self, engine, job):
        """avoidMoves and allowMoves as Engine.analyze takes them: (colour, point, until)."""
        board, out = engine.board, []
        for c, vertices, until in job.avoid:
            out += [(parse_color(c), board.point(v), until) for v in vertices]
        n = board.size
        every = [format_vertex((r, k)) for r in range(n) for k in range(n)]
        for c, vertices, until in job.allow:
            allowed = set(vertices)
            out += [(parse_color(c), board.point(v), until) for v in every if v not in allowed]
        return out

    def _run(self, worker, job):
        engine = worker.engine
        self._set_position(worker, job)
        policy = policy_of(engine, job.size) if job.policy else None
        avoid = self._avoid(engine, job)
        if job.stop.is_set():
            self.send(no_results(job))
            return
        latest = []
        halt = threading.Event()

        def emit(infos):
            latest[:] = [infos]
            if job.report_every and infos and not engine.search.stopped and not halt.is_set():
                self.send(build_answer(job, engine, infos, True, policy))

        done = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(engine, job, halt, done),
                                   daemon=True, name="analysis-watch")
        watcher.start()
        try:
            engine.analyze(job.to_move, job.report_every or NO_REPORTS_S, halt, emit, avoid)
        finally:
            done.set()
            watcher.join()
        infos = latest[0] if latest else []
        if not infos and job.stop.is_set():      # terminated before its first playout
            self.send(no_results(job))
            return
        if not infos:                  # a search that ran no playout (FIRST_PLAYOUT_WAIT_S)
            infos = engine.with_unvisited([], 1)
        self.send(build_answer(job, engine, infos, False, policy))

    def _watch(self, engine, job, halt, done):
        """Stop the job's search at its limits or when it is terminated. maxVisits and
        maxPlayouts both count the playouts of this search: the visits a tree kept from the
        last job come on top, and the ownership and the score (this search's playouts alone)
        rest on as many playouts as asked. maxTime counts from the job's start, and stops the
        search once it has run a playout (every answer has a value and a score), or
        FIRST_PLAYOUT_WAIT_S past maxTime without one. Looks often enough near the visit limit
        not to run far past it.

        The engine's search is this job's while it is not stopped: the search of the worker's
        last job stays stopped until this job's has its own counters (SearchProtocol.prepare
        resets them before the search runs), so a playout count read then is this job's."""
        cap = min((n for n in (job.max_visits, job.max_playouts) if n), default=0)
        t0 = time.perf_counter()
        started = None                 # when this job's search was first seen running
        searched = False               # whether it has run a playout
        wait = WATCH_MIN_S
        while not done.wait(wait):
            s = engine.search
            now = time.perf_counter()
            wait = WATCH_MAX_S
            playouts = 0
            if not s.stopped:
                started = started or now
                playouts = s.playouts
                searched = searched or playouts > 0
            over = job.stop.is_set()
            if job.max_time and now - t0 >= job.max_time:
                over = over or searched or now - t0 >= job.max_time + FIRST_PLAYOUT_WAIT_S
            if cap and started is not None:
                over = over or playouts >= cap
                rate = playouts / max(now - started, 1e-3)
                if rate > 0:
                    wait = min(WATCH_MAX_S, max(WATCH_MIN_S, 0.5 * (cap - playouts) / rate))
            if over:
                halt.set()
                s.stop()
                wait = WATCH_MAX_S


# --- the command -----------------------------------------------------------------------------
def add_arguments(parser):
    from gammago.engine.settings import EngineConfig
    EngineConfig.add_arguments(parser)
    g = parser.add_argument_group("analysis")
    g.add_argument("--workers", type=int, default=0, metavar="N",
                   help="positions analysed at once (KataGo's numAnalysisThreads), one engine "
                        "each, --threads shared among them, at least one each (default: as "
                        "many as --threads)")
    g.add_argument("--report-winrates-as", choices=PERSPECTIVES, default="SIDETOMOVE",
                   type=str.upper,
                   help="whose win rates, scores and ownership the answers give, unless a query's "
                        "overrideSettings says (KataGo's reportAnalysisWinratesAs; default: "
                        "%(default)s; KaTrain asks for BLACK)")
    g.add_argument("--quiet", action="store_true", help="log only warnings and errors to stderr")
    parser.epilog = ("KataGo's JSON analysis protocol on stdin/stdout (one query a line); "
                     "--playouts N: the visits of a query that gives no maxVisits (0: "
                     "--move-time seconds instead); logs go to stderr. KaTrain: docs/GUI.md.")


def worker_configs(config, workers):
    """The EngineConfig of each of `workers` engines: --threads shared out (at least one each),
    the memory bound shared out, each its own seed."""
    from gammago.engine.settings import MIN_MEMORY_MB
    from gammago.core.seeds import derive
    out = []
    for i in range(workers):
        threads = max(1, config.threads // workers + (i < config.threads % workers))
        out.append(dataclasses.replace(
            config, threads=threads, seed=derive(config.seed, i), ponder=False,
            max_memory=max(MIN_MEMORY_MB, config.max_memory // workers),
            max_nodes=max(1000, config.max_nodes // workers) if config.max_nodes else 0))
    return out


def main(args):
    from gammago.engine.settings import EngineConfig
    from gammago.engine.engine import Engine
    level = logging.WARNING if args.quiet else (logging.DEBUG if getattr(args, "verbose", False)
                                                else logging.INFO)
    logging.basicConfig(stream=sys.stderr, level=level, format="%(name)s: %(message)s")
    workers = args.workers or args.threads
    try:
        if workers < 1:
            raise ValueError(f"--workers must be >= 1, not {args.workers}")
        config = EngineConfig.from_args(args)
        engines = [Engine(c) for c in worker_configs(config, workers)]
    except ValueError as e:
        print(f"gammago analysis: {e}", file=sys.stderr)
        return 2
    out = sys.stdout
    sys.stdout = sys.stderr        # stdout is the protocol's
    log.info("gammago %s analysis engine ready: %d worker(s), %s", gammago.__version__, workers,
             ", ".join(f"{c.config.threads} thread(s)" for c in engines))
    try:
        server = AnalysisServer(engines, out, max_visits=config.playouts,
                                max_time=config.move_time, perspective=args.report_winrates_as)
        return server.serve()
    except BrokenPipeError:
        return 0
    finally:
        sys.stdout = out
