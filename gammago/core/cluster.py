"""Scale-out on a Dask cluster: what `--scheduler ADDRESS` does in `gammago match`, `regress`
and `train-mm` (docs/CLUSTER.md: starting a scheduler and workers, what must be on them).

    dask scheduler                                         # on one machine: tcp://HOST:8786
    dask worker tcp://HOST:8786 --nthreads 1 --nworkers N  # on every machine (N: its cores)
    gammago match ... --scheduler tcp://HOST:8786

One task per unit of work, run in a worker thread:
  * match:    one task per game (gammago.arena.cluster_games: `play_game`, both engines
              started on the worker, the SGF sent back and written by the client); results
              stream back as they finish, into the same loop, record, resume and SPRT as a
              local match;
  * regress:  one task per .tst file (`run_file`);
  * train-mm: one task per chunk of records (the same `_extract_chunk` as the local processes),
              the records' bytes sent with the task, the results taken back in order.

A worker that dies (killed, out of memory, its machine gone) loses its running tasks: the
scheduler runs them again elsewhere, up to `distributed.scheduler.allowed-failures` times
(default 3) before it gives up on one (KilledWorker: a match counts that game as abandoned, so
`--resume` plays it again). A scheduler that goes away cancels everything in flight: the command
stops with ClusterLost, and a match's record (written after every game) continues with
`--resume`, on a cluster or locally.

dask is imported here, inside the functions, and only when --scheduler is given: without it the
commands run as they always did (`pip install ".[cluster]"` is optional).
"""
import collections
import concurrent.futures
import sys
import time

# --- constants ----------------------------------------------------------------------------------
CONNECT_TIMEOUT_S = 10.0     # a scheduler that does not answer within this fails the command
STOP_POLL_S = 1.0            # how often a game on a worker asks whether the match has stopped
CHUNKS_PER_THREAD = 2        # train-mm: chunks in flight per worker thread (one queued behind each)
CLOSE_TIMEOUT_S = 3.0        # closing the client after the scheduler has gone


class ClusterError(Exception):
    """The cluster cannot be used: no dask, no scheduler at the address, a worker without gammago."""


class ClusterLost(ClusterError):
    """The scheduler went away while work was in flight."""


def add_arguments(p):
    """--scheduler and --connect-timeout, the same for every command that can use a cluster."""
    p.add_argument("--scheduler", default="", metavar="ADDRESS",
                   help="run the work on the workers of the cluster whose scheduler is at ADDRESS "
                        "(tcp://HOST:8786; needs the extra: pip install \"gammago[cluster]\"; "
                        "docs/CLUSTER.md)")
    p.add_argument("--connect-timeout", type=float, default=CONNECT_TIMEOUT_S, metavar="S",
                   help=f"seconds to wait for the scheduler to answer (default {CONNECT_TIMEOUT_S:g})")


# --- connecting -----------------------------------------------------------------------------------
def _worker_info(layout=None):
    """Run on every worker: what it would compute with; layout (a module-level function, run
    there too) adds what the command's work depends on (train-mm: the feature layout)."""
    import sys

    import gammago
    info = {"version": gammago.__version__, "python": "%d.%d" % sys.version_info[:2]}
    if layout is not None:
        info["layout"] = layout()
    return info


def local_info(layout=None):
    return _worker_info(layout)


def connect_from_args(args, command):
    """(client, 0) for a command's --scheduler (None without one), or (None, 2) after saying
    `gammago COMMAND: why` on stderr when the scheduler does not answer or is refused."""
    if not getattr(args, "scheduler", None):
        return None, 0
    try:
        return connect(args.scheduler, args.connect_timeout,
                       log=lambda m: print(m, file=sys.stderr)), 0
    except ClusterError as e:
        print(f"gammago {command}: {e}", file=sys.stderr)
        return None, 2


def connect(address, timeout=CONNECT_TIMEOUT_S, layout=None, log=print):
    """A dask.distributed Client of the scheduler at `address`, after checking that every worker
    now connected imports the same gammago (and, with layout, answers layout() as this process
    does: train-mm passes the feature layout). ClusterError says what is wrong."""
    try:
        from dask.distributed import Client
    except ImportError:
        raise ClusterError("--scheduler needs dask.distributed: pip install \"gammago[cluster]\" "
                           "(or pip install \"dask[distributed]\")") from None
    t0 = time.monotonic()
    try:
        client = Client(address, timeout=timeout)
    except (OSError, TimeoutError, ValueError, TypeError) as e:
        raise ClusterError(f"scheduler {address} does not answer ({time.monotonic() - t0:.0f} s, "
                           f"--connect-timeout {timeout:g}): {e}") from None
    try:
        mine = local_info(layout)
        try:
            theirs = client.run(_worker_info, layout, on_error="return")
        except Exception as e:          # noqa: BLE001 -- any failure here is the cluster's
            raise ClusterError(f"cannot ask the workers of {address}: {type(e).__name__}: {e}") from None
        for worker, info in sorted(theirs.items()):
            if isinstance(info, BaseException):
                raise ClusterError(f"worker {worker} cannot run gammago: {type(info).__name__}: {info}")
            if info != mine:
                raise ClusterError(f"worker {worker} runs {info}, this process {mine}: install "
                                   "the same gammago on every worker")
        n = threads(client)
        log(f"cluster {address}: {len(theirs)} worker(s), {n} thread(s)"
            + ("; waiting for workers to join" if not n else ""))
    except BaseException:
        close(client)
        raise
    return client


def threads(client):
    """Worker threads of the cluster now (workers may join and leave at any time)."""
    return sum(client.nthreads().values())


def close(client, lost=False):
    """Close the client; after a lost scheduler, without the reconnection tracebacks."""
    if lost:                            # dask sets a level for each of its loggers
        import logging
        for name in ["distributed"] + list(logging.root.manager.loggerDict):
            if name.split(".")[0] == "distributed":
                logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    try:
        client.close(timeout=CLOSE_TIMEOUT_S)
    except Exception:                   # noqa: BLE001 -- closing a broken client
        pass


def _lost(client, e):
    return ClusterLost(f"the scheduler {client.scheduler.address} went away ({type(e).__name__}: "
                       "the work in flight is lost)")


def _result(client, fut, what, killed=False):
    """fut.result(); ClusterLost when the scheduler went away, ClusterError for a task that raised
    or that killed its worker too often (KilledWorker itself when `killed`)."""
    from distributed import KilledWorker
    try:
        return fut.result()
    except concurrent.futures.CancelledError as e:
        raise _lost(client, e) from None
    except KilledWorker as e:
        if killed:
            raise
        raise ClusterError(f"{what}: its worker died every time it ran: {e}") from None
    except Exception as e:              # noqa: BLE001 -- a task's own exception, from a worker
        raise ClusterError(f"{what} failed on a worker: {type(e).__name__}: {e}") from e


def call(client, fn, *args, what="a task"):
    """fn(*args) on a worker, waited for; fn's own exceptions are raised here as they are."""
    from distributed import KilledWorker
    try:
        return client.submit(fn, *args, pure=False).result()
    except concurrent.futures.CancelledError as e:
        raise _lost(client, e) from None
    except KilledWorker as e:
        raise ClusterError(f"{what}: its worker died every time it ran: {e}") from None


# --- match: one task per game ---------------------------------------------------------------------
# --- train-mm: one task per chunk, results in order -------------------------------------------
def _call_chunk(fn, initializer, initargs, chunk):
    if initializer is not None:
        initializer(*initargs)
    return fn(chunk)


def map_chunks(client, fn, chunks, initializer=None, initargs=(), window=None):
    """fn(chunk) for every chunk on the workers, yielded in the order of the chunks (as
    predict.map_chunks does with local processes); initializer(*initargs) runs before each chunk
    (it must be cheap). At most `window` chunks are in flight (default CHUNKS_PER_THREAD per
    worker thread), so that the chunks are read as the workers take them."""
    if window is None:
        window = max(2, CHUNKS_PER_THREAD * threads(client))
    pending = collections.deque()
    for chunk in chunks:
        pending.append(client.submit(_call_chunk, fn, initializer, initargs, chunk, pure=False))
        if len(pending) >= window:
            yield _result(client, pending.popleft(), "a chunk")
    while pending:
        yield _result(client, pending.popleft(), "a chunk")


# --- regress: one task per file, results as they finish -------------------------------------------
def map_unordered(client, fn, items, what="a task"):
    """(i, fn(*items[i])) for every item, as the tasks finish."""
    from distributed import as_completed
    futs = {client.submit(fn, *args, pure=False): i for i, args in enumerate(items)}
    try:
        for fut in as_completed(futs):
            yield futs[fut], _result(client, fut, what.format(i=futs[fut]))
    except concurrent.futures.CancelledError as e:
        raise _lost(client, e) from None
