"""The games of a match or a comparison as Dask tasks (gammago.core.cluster connects and
reports lost workers): one task per game, both engines started on the worker, the SGF sent back
and written by the client, results streaming back into the same loop as a local match's."""
import concurrent.futures
import os
import shutil
import tempfile
import time
import uuid

from gammago.arena.referee import abandoned_result, play_game
from gammago.core.cluster import STOP_POLL_S, ClusterError, _lost, _result, threads


class _RemoteStop:
    """On a worker: the match's stop flag (a dask Event), asked at most every STOP_POLL_S."""

    def __init__(self, name):
        self.name = name
        self.event = None
        self.checked = 0.0
        self.value = False

    def is_set(self):
        now = time.monotonic()
        if not self.value and now - self.checked >= STOP_POLL_S:
            self.checked = now
            try:
                if self.event is None:
                    from distributed import Event
                    self.event = Event(self.name)
                self.value = self.event.is_set()
            except Exception:           # noqa: BLE001 -- no scheduler: play on, nobody stops us
                pass
        return self.value


def _play_game_task(cfg, index, stop_name):
    """On a worker: play one game; its SGF (when asked for) comes back as bytes, not as a file
    on the worker's disk."""
    import dataclasses

    tmp = tempfile.mkdtemp(prefix="gammago-game-") if cfg.sgf_dir else ""
    try:
        res = play_game(dataclasses.replace(cfg, sgf_dir=tmp), index, _RemoteStop(stop_name))
        data = b""
        if res.sgf:
            with open(res.sgf, "rb") as f:
                data = f.read()
            res.sgf = ""
        return res, data
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)


class ClusterGames:
    """The games of a match as Dask tasks; the interface of match.LocalGames (submit, wait,
    result, stop, drain, close), so that run_match's loop is one and the same."""

    def __init__(self, client, cfg):
        from distributed import Event
        self.client, self.cfg = client, cfg
        self.stop_name = f"gammago-match-stop-{uuid.uuid4().hex}"
        self.event = Event(self.stop_name, client=client)
        self.index = {}
        self.stopped = False

    def capacity(self):
        """Games in flight: one for every worker thread (at least one, that waits for a worker)."""
        try:
            return max(1, threads(self.client))
        except Exception as e:          # noqa: BLE001
            raise _lost(self.client, e) from None

    def submit(self, index):
        fut = self.client.submit(_play_game_task, self.cfg, index, self.stop_name, pure=False,
                                 key=f"game-{index + 1}-{self.stop_name[-8:]}")
        self.index[fut] = index
        return fut

    def wait(self, running):
        from distributed import wait
        try:
            done, not_done = wait(list(running), return_when="FIRST_COMPLETED")
        except concurrent.futures.CancelledError as e:
            raise _lost(self.client, e) from None
        return set(done), set(not_done)

    def result(self, fut):
        from distributed import KilledWorker

        index = self.index.pop(fut)
        try:
            res, data = _result(self.client, fut, f"game {index + 1}", killed=True)
        except KilledWorker as e:
            return abandoned_result(self.cfg, index, f"its worker died every time it ran: {e}")
        if data:
            os.makedirs(self.cfg.sgf_dir, exist_ok=True)
            res.sgf = os.path.join(self.cfg.sgf_dir, f"game_{index + 1:04d}.sgf")
            with open(res.sgf, "wb") as f:
                f.write(data)
        return res

    def stop(self):
        if not self.stopped:
            self.stopped = True
            if self.client.status != "running":
                return                  # no scheduler: nothing runs any more
            try:
                self.event.set()
            except Exception:           # noqa: BLE001 -- no scheduler: nothing runs any more
                pass

    def drain(self, running):
        """The results of the games still running after stop() (abandoned within STOP_POLL_S)."""
        out = []
        for fut in running:
            try:
                out.append(self.result(fut))
            except ClusterError:
                pass
        return out

    def close(self):
        self.stop()
