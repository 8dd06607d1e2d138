"""Self-play's hooks on net-root's root: Dirichlet noise on the root priors, Gumbel root
selection, forced playouts, and the root's visits after policy target pruning
(gammago.engine.selfplay sets them before each move and reads the visits for its training
targets; GTP play never uses them). Each works on gammago.search.net_root.RootSearch and does
nothing where the rollouts-only tree plays the board size.

SelfPlayRoot is a base of gammago.engine.engine.Engine; it reads the engine's `search` (the
search that plays now) and `_root_search` (net-root's, once the net is loaded).
"""


class SelfPlayRoot:
    """Engine methods that only self-play calls (see the module docstring)."""

    def set_root_noise(self, alpha, share, rng=None):
        """Dirichlet noise on net-root's root priors from the next search on (RootSearch.set_noise;
        share 0 turns it off). The rollouts-only tree has no noise: returns False where the
        search that plays this board size is that one."""
        root = self._net_root_search()
        if root is not None:
            root.set_noise(alpha, share, rng)
        return root is not None

    def set_root_gumbel(self, m, rng=None):
        """Gumbel root selection with m candidates on net-root's root from the next search on
        (RootSearch.set_gumbel; m 0 turns it off). Returns False where the search that plays
        this board size is the rollouts-only tree, which has none."""
        root = self._net_root_search()
        if root is not None:
            root.set_gumbel(m, rng)
        return root is not None

    def set_root_forced(self, k):
        """Forced playouts with factor k on net-root's root from the next search on
        (RootSearch.set_forced; k 0 turns them off). Returns False where the search that plays
        this board size is the rollouts-only tree, which has none."""
        root = self._net_root_search()
        if root is not None:
            root.set_forced(k)
        return root is not None

    def root_pruned_visits(self, board):
        """{vertex: visits} of net-root's root children after KataGo's policy target pruning
        (RootSearch.pruned_visits), for the position `board` the last search ran on; {} where
        the search that plays this board size is the rollouts-only tree, or the last search was
        of another position."""
        root = self._net_root_search()
        return root.pruned_visits(board) if root is not None else {}

    def _net_root_search(self):
        """net-root's RootSearch where it is the search that plays this board size, else None."""
        root = self._root_search
        return root if root is not None and self.search is root else None
