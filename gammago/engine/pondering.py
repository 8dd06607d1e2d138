"""Pondering (--ponder): searching on the opponent's time. After our genmove the engine
searches the position for the side to move on a background thread, until the next command
stops it (gammago.protocol.gtp stops it before every command); the tree is kept, so the next
search keeps the subtree of the move the opponent played.

Pondering is a base of gammago.engine.engine.Engine; it reads the engine's `config`, `board`
and `search`, runs its _run_search, and keeps `_ponder` (thread, stop event) and `pondered`
(the playouts of the last pondering).
"""
import logging
import threading
import time

from gammago.go.board import parse_color

log = logging.getLogger("gammago")


class Pondering:
    """Starting and stopping the search on the opponent's time (see the module docstring)."""

    def ponder_start(self):
        """--ponder: search the current position, the side to move (the opponent, after our
        genmove) to play, on a background thread until ponder_stop(). The tree is kept as after
        any search: when the opponent's move comes, the next search keeps its subtree (_root).
        Not in the policy modes, not once the game is over (two passes), not twice at once."""
        if (not self.config.ponder or self._ponder is not None
                or self.config.mode in ("net-policy", "gamma-policy") or self.board.passes >= 2):
            return False
        c = parse_color(self.board.to_move)
        stop = threading.Event()

        def run():
            try:
                self._run_search(c, budget=None, no_pass=False, stop=stop, ponder=True)
            except Exception:          # pondering must never take the engine down
                log.exception("pondering failed")

        th = threading.Thread(target=run, name="gammago-ponder", daemon=True)
        self._ponder = (th, stop)
        th.start()
        return True

    def ponder_stop(self):
        """End pondering, if under way (every command that reads or changes the game calls it
        first); returns the playouts it ran."""
        if self._ponder is None:
            return 0
        th, stop = self._ponder
        t0 = time.perf_counter()
        stop.set()
        th.join()
        self._ponder = None
        self.pondered = self.search.playouts
        log.info("pondered: %d playouts (%d root visits, %d nodes), stopped in %.0f ms",
                 self.pondered, self.search.root_visits, self.search.nodes,
                 1000 * (time.perf_counter() - t0))
        return self.pondered

    @property
    def pondering(self):
        """Whether pondering is under way."""
        return self._ponder is not None
