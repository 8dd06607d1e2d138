"""What the engine needs from a search: SearchProtocol.

Two searches meet it: gammago.search.tree.Search (pyx/search/tree.pyx: UCT with progressive widening, gamma
priors and rollouts) and gammago.search.net_root.RootSearch (the net's priors at the root, one
tree.Search per root child). gammago.engine.engine drives either through these calls alone.

A search is configured (configure, use_gammas, use_gamma_rollouts: kept until changed), given
a root (set_root), then run: prepare() once, then work(i) on each of `threads` threads until
the playout cap, the deadline or stop(); run() does all three. Results are read after or during
a run: children(), pv(), score(), child_scores(), ownership() and the counters.
"""
from typing import Protocol, runtime_checkable

AVOID_MAX_DEPTH = 255     # a tree keeps each avoided move's depth in a byte


def avoid_entries(avoid):
    """set_avoid's (colour, point, until) triples as a search keeps them: one depth a move (the
    deepest given, at most AVOID_MAX_DEPTH), sorted. Raises ValueError on a bad colour, point or
    depth."""
    deepest = {}
    for c, p, until in avoid:
        c, p, until = int(c), int(p), int(until)
        if c not in (1, 2) or p < 0 or until < 1:
            raise ValueError(f"avoid: bad entry (colour {c}, point {p}, until {until})")
        deepest[c, p] = max(deepest.get((c, p), 0), min(until, AVOID_MAX_DEPTH))
    return tuple(sorted((c, p, until) for (c, p), until in deepest.items()))


@runtime_checkable
class SearchProtocol(Protocol):
    # --- configuration (kept across searches) ---
    def configure(self, **params):
        """Set tree parameters (names as in gammago.search.tree.DEFAULTS)."""

    def use_gammas(self, table):
        """Rate children by a gamma table (None: the cheap built-in rating)."""

    def use_gamma_rollouts(self, table, light_after=0, tail=1):
        """Roll out with the gamma policy of a table (None: light rollouts) for light_after
        moves (0: to the end), then the light tail of the rules word tail (gammago.rollout.tail.rules)."""

    # --- the root ---
    def set_root(self, board, moves=None):
        """Search from board; moves: the points played since the last root, to keep the work
        below them (None: start afresh). Returns the visits kept at the new root."""

    def clear(self):
        """Forget the tree (the next search starts afresh)."""

    def set_avoid(self, avoid=(), base=0):
        """Keep moves out of the search: (colour, point, until) triples, the point not a move of
        colour in the first `until` plies (lz-analyze's avoid and allow); `base` plies lie above
        the root. Applies to nodes made from now on: set_root(board, None) after a change."""

    @property
    def avoid(self):
        """set_avoid's triples, sorted, and its base."""

    # --- running ---
    def prepare(self, threads=1, max_playouts=0, seconds=0.0, no_pass=False, seed=None):
        """Get ready for `threads` workers: stop after max_playouts in all (0: no cap) or
        `seconds` (0: no limit); no_pass: the root may not pass."""

    def work(self, i):
        """Run worker i until the search ends (called on its own thread)."""

    def stop(self):
        """End the search: every worker returns soon."""

    def run(self, threads=1, max_playouts=0, seconds=0.0, no_pass=False, seed=None):
        """prepare, work on `threads` threads, join; returns the seconds taken."""

    # --- results ---
    @property
    def playouts(self):
        """Playouts of the current search."""

    @property
    def root_visits(self):
        """Visits of the root (kept ones included)."""

    @property
    def nodes(self):
        """Nodes the search holds now."""

    @property
    def full(self):
        """True once the search ran out of memory for new nodes."""

    def children(self, path=()):
        """[(point, visits, win rate for the mover, rating)] of the node reached by path."""

    def pv(self, path=(), maxlen=20):
        """The most visited line from the node reached by path (path included)."""

    def score(self, path=()):
        """(mean, standard deviation) of the final area difference (Black - White, no komi) over
        the playouts through the node reached by path; None when it has none."""

    def child_scores(self, path=()):
        """{point: (mean, standard deviation)} of the children of the node reached by path, each
        over the playouts through that child, as score() gives them."""

    @property
    def owned(self):
        """Playouts of the current search played to the end (not ended by the mercy rule):
        those that ownership() counts."""

    def ownership(self):
        """Mean final ownership over this search's playouts, +1 Black .. -1 White, [row, col]
        (row 0 = line 1); before any search it may raise ValueError."""

    def ownership_stdev(self):
        """The standard deviation of each point's final owner (+1, -1, 0) over the same
        playouts, laid out as ownership(); before any search it may raise ValueError."""

    def score_stdev(self):
        """The standard deviation of the playouts' final area difference (the same playouts);
        before any search it may raise ValueError."""
