"""Which search plays each board size, and with what: --mode auto's choice between net-root
and the rollouts-only tree (from AUTO_NET_MIN_SIZE up), the net that plays a size
(gammago.net.runtime.choose_model, each net loaded once) and the weight of its value at the
root (net_lambda), and the gamma tables of the tree's prior and of its rollouts for the size
(--prior, --rollout, --rollout-gammas).

SearchChoice is a base of gammago.engine.engine.Engine; the engine's new_game calls
_auto_search or _use_net and _set_prior for the new board size. It reads and sets the engine's
`search`, `_tree_search`, `_root_search`, `net`, `_nets`, `_net_choice`, `_net_failed` and
`_rollout_loaded`, `_prior_loaded`, and calls its _switch_search.
"""
import logging
import os

from gammago.net import runtime as _net
from gammago.search import tree as _tree
from gammago.engine.settings import AUTO_NET_MIN_SIZE, rollout_gammas, rollout_plan
from gammago.search.net_root import ROOT_LAMBDA, RootSearch

log = logging.getLogger("gammago")

_PRIOR_WARNED = False        # the "no gammas" warning is given once per process


class SearchChoice:
    """The search, net and gamma tables of each board size (see the module docstring)."""

    def _net_for(self, size):
        """The net that plays `size` (gammago.net.runtime.choose_model: --model when it covers the size,
        else the shipped net trained for it, else the default), loaded once; the log says which
        and why when it changes. NetError (a ValueError) names a file that does not load."""
        cfg = self.config
        if size not in self._net_choice:     # it opens the models to read their metadata
            self._net_choice[size] = _net.choose_model(size, cfg.model or None)
        path, why = self._net_choice[size]
        net = self._nets.get(path)
        if net is None:
            net = _net.load(path, symmetry=cfg.net_symmetry, seed=cfg.seed, threads=cfg.threads)
            self._nets[path] = net
        if net is not self.net:
            log.info("net %s for %dx%d: %s", os.path.basename(path), size, size, why)
        return net

    def net_lambda(self):
        """The weight of the net's value at net-root's root: --net-lambda when given, else the
        net_lambda its metadata names (a net trained by self-play carries the value it won with
        in games: models/README.md), else ROOT_LAMBDA (0)."""
        if self.config.net_lambda is not None:
            return self.config.net_lambda
        text = (self.net.metadata if self.net is not None else {}).get("net_lambda")
        try:
            lam = float(text) if text not in (None, "") else ROOT_LAMBDA
        except ValueError:
            lam = -1.0
        if not 0 <= lam <= 1:
            raise _net.NetError(f"{self.net.path}: metadata net_lambda {text!r} is not in [0, 1]")
        return lam

    def _use_net(self, size):
        """Load the net for `size` (_net_for); in net-root mode the search becomes
        gammago.search.net_root.RootSearch: PUCT on net priors at the root, one UCT tree per root
        child below it (--mode auto keeps it for the boards that use it)."""
        cfg = self.config
        self.net = self._net_for(size)
        lam = self.net_lambda()
        if self._root_search is not None:
            self._root_search.net = self.net
            self._root_search.lam = lam
            return
        if cfg.mode in ("net-root", "auto"):
            # the child trees draw on the engine's one budget, each allowed all of it
            self._root_search = RootSearch(
                self.net, lambda: _tree.Search(self.nodes, seed=cfg.seed, budget=self.budget,
                                               **cfg.tree_params(self.board.size)),
                lam=lam, children=cfg.net_children, c_puct=cfg.net_cpuct,
                max_nodes=self.nodes)
            if cfg.mode == "net-root":
                self.search = self._root_search

    @property
    def mode(self):
        """The mode deciding moves now (--mode auto resolved for the board size)."""
        if self.config.mode != "auto":
            return self.config.mode
        return "net-root" if self.search is self._root_search else "rollouts"

    def _auto_search(self, size):
        """--mode auto: net-root from AUTO_NET_MIN_SIZE up (the net loaded on first need). A
        --model that does not load is refused (NetError names the file and the problem); when
        the shipped model does not load, that is said once and the engine plays rollouts only."""
        want_net = size >= AUTO_NET_MIN_SIZE and self._net_failed is None
        if want_net:
            try:
                self._use_net(size)
            except ValueError as exc:
                if self.config.model:
                    raise
                self._net_failed = str(exc)
                log.warning("--mode auto: %s; rollouts only", exc)
                want_net = False
        new = self._root_search if want_net else self._tree_search
        if new is not self.search:
            log.info("mode %s on %dx%d", "net-root" if want_net else "rollouts", size, size)
        self._switch_search(new)

    def _searches(self):
        """The search that plays, and the rollouts-only tree when that is another one."""
        return [self.search] + ([self._tree_search] if self._tree_search is not self.search else [])

    def _set_prior(self, size):
        """Gammas order the children (--prior) and drive the rollouts (--rollout) when a gamma
        file is shipped; otherwise the cheap rating and light rollouts."""
        cfg = self.config
        table = None
        if cfg.prior != "cheap" or cfg.rollout != "light":
            from gammago.moves import gammas
            try:
                table = gammas.load_default(size).table
            except (OSError, ValueError) as exc:
                for flag in ("prior", "rollout"):
                    if getattr(cfg, flag) == "gamma":
                        raise ValueError(f"--{flag} gamma: {exc}")
                global _PRIOR_WARNED
                if not _PRIOR_WARNED:
                    log.warning("no gammas (%s): cheap child ratings and light rollouts", exc)
                    _PRIOR_WARNED = True
        rollout_table = None
        table_settings = None
        if table is not None and cfg.rollout != "light":
            from gammago.moves import gammas
            # --rollout-gammas FILE is the rollouts' table as it is: no scale unless given,
            # and played with the settings it names where the options leave them unset
            if cfg.rollout_gammas:
                loaded = self._rollout_file()
                base, scale = loaded.table, cfg.rollout_scale or ""
                table_settings = loaded.settings_on(size)
            else:
                base, scale = gammas.rollout_base(size), cfg.rollout_scale
            rollout_table = rollout_gammas(base, size, scale)
        plan = rollout_plan(size, cfg, table_settings)
        prior_table = None
        if table is not None and cfg.prior != "cheap":
            chosen = self._prior_file() if cfg.prior_gammas else None
            if chosen is None:
                prior_table = gammas.rollout_base(size)
            else:
                prior_table = chosen.table
                if chosen.dictionary is not None:
                    from gammago.moves import spatial
                    spatial.set_largest(size, cfg.prior_largest)     # None: every size
        for s in self._searches():
            s.use_gammas(prior_table)
            s.use_gamma_rollouts(rollout_table, **plan)

    def _prior_file(self):
        """--set prior_gammas=FILE's Gammas, loaded once; a shipped table by its name from any
        directory (gammas.find). A file that does not load is refused with its path and the
        reason, once, and the tree's priors keep the rollouts' table (None)."""
        if self._prior_loaded is None:
            from gammago.moves import gammas
            try:
                self._prior_loaded = gammas.load(gammas.find(self.config.prior_gammas))
                log.info("tree priors from %s", self._prior_loaded.path)
            except (OSError, ValueError) as exc:
                self._prior_loaded = False
                log.warning("prior_gammas refused: %s; the tree's priors use %s instead", exc,
                            gammas.load_rollout_base(self.board.size).path.name)
        return self._prior_loaded or None

    def _rollout_file(self):
        """--rollout-gammas FILE, loaded once (a file that does not load raises GammaFileError,
        which names it); a shipped table by its name from any directory (gammas.find). The log
        says which of the settings it names the engine takes and which its options override."""
        if self._rollout_loaded is None:
            from gammago.moves import gammas
            loaded = gammas.load(gammas.find(self.config.rollout_gammas))
            if loaded.settings:
                taken = {k: v for k, v in loaded.settings.items()
                         if getattr(self.config, k) is None}
                given = {k: getattr(self.config, k) for k in loaded.settings
                         if getattr(self.config, k) is not None}
                n = loaded.settings_size
                if taken:
                    log.info("rollouts: %s's settings%s: %s", loaded.path,
                             f" for {n}x{n}" if n else "", gammas.settings_options(taken))
                if any(v != loaded.settings[k] for k, v in given.items()):
                    log.warning("rollouts: %s was trained for %s; playing with %s as given",
                                loaded.path, gammas.settings_options(loaded.settings),
                                gammas.settings_options(given))
            self._rollout_loaded = loaded
        return self._rollout_loaded
