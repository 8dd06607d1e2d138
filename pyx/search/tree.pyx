# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""UCT search with progressive widening, from Python: Search (its configuration, the root and
subtree reuse, runs on threads, results) and NodeBudget (the memory of one or more trees). The
nogil parts it drives are split as gammago/search/tree_state.pxd maps them: the node storage
(pyx/node_pool), the selection and criticality (pyx/selection), one playout (pyx/descent) and
the workers' loop (pyx/search_loop)."""
from libc.stdlib cimport malloc, free
from libc.string cimport memset
from libc.math cimport sqrt
from libc.stdint cimport int64_t, int32_t, uint64_t
from gammago.go.board cimport board_t, Board, board_copy, MAX_PTS
from gammago.moves.features cimport NFEAT
from gammago.search.prior cimport prior_cheap, prior_gamma, prior_gamma_rollout
from gammago.rollout.gamma_sampler cimport gamma_maker_t, rollout_make_gamma, rollout_release_gamma
from gammago.rollout.tail cimport TAIL_RULES_DEFAULT
from gammago.core.atomic cimport gg_loadi, gg_storei
from gammago.search.node_pool cimport (node_t, chunk_t, budget_t, NODE_EXPANDED, CHUNK_NODES,
                                chunks_for_nodes, budget_new, budget_drop, pool_init, pool_free,
                                pool_clear, pool_copy_subtree, pool_keep_subtree)
from gammago.search.tree_state cimport tree_t, params_t, rollout_maker_t, ND
from gammago.search.search_loop cimport maker_light, workers_new, workers_free, search_start, search_work
from gammago.rollout.tail import rule_names
from gammago.rollout.gamma_policy import check_settings
from gammago.core.seeds import derive

DEFAULTS = dict(expand_visits=40, pw_init=1, pw_base=40.0, pw_factor=1.4, ucb_c=1.0,
                bonus_weight=0.35, bonus_equiv=1000.0, fpu=1.0, crit=0.0, mercy=0)
_SAID = set()       # warnings given once per process (_say_once)


def _say_once(key, text):
    """Log a warning (logger 'gammago', stderr) the first time `key` comes up in the process."""
    import logging
    if key not in _SAID:
        _SAID.add(key)
        logging.getLogger("gammago").warning("tree: %s", text)

CHUNK_BYTES = sizeof(chunk_t)   # memory a chunk of the pool takes (CHUNK_NODES nodes and marks)
NODE_BYTES = sizeof(node_t)     # one node (32 bytes)
NODES_PER_CHUNK = CHUNK_NODES


def chunks_for(long long nodes):
    """Chunks of the pool that hold `nodes` nodes (at least 1)."""
    return chunks_for_nodes(nodes)


cdef object _node_score(node_t* nd):
    """(mean, standard deviation) of a node's playouts' scores; None without a playout. Its
    visits count a descent still in flight, whose score is not in yet: a small lag while threads
    run, none once they stop."""
    cdef double n = nd.visits, m
    if n <= 0:
        return None
    m = nd.score / n
    return (m, sqrt(max(nd.score_sq / n - m * m, 0.0)))


cdef class NodeBudget:
    """The memory of one or more trees: at most `nodes` nodes (rounded up to whole chunks of
    CHUNK_NODES, CHUNK_BYTES each) held by all the trees made with it together (Search(...,
    budget=...)). A tree takes chunks as it grows and gives them back when it is cleared, keeps
    a subtree or is freed; a tree always holds its first chunk, even past the limit."""
    cdef budget_t* b

    def __cinit__(self, long long nodes):
        if nodes < 1:
            raise ValueError(f"a node budget must be positive, not {nodes}")
        self.b = budget_new(chunks_for_nodes(nodes))

    def __dealloc__(self):
        if self.b != NULL:
            budget_drop(self.b)

    @property
    def limit_nodes(self):
        """Nodes the trees may hold together (whole chunks). Set it between runs, while no
        thread is in any of the trees; lowering it takes nothing away, it stops growth."""
        return self.b.limit * CHUNK_NODES

    @limit_nodes.setter
    def limit_nodes(self, long long nodes):
        if nodes < 1:
            raise ValueError(f"a node budget must be positive, not {nodes}")
        self.b.limit = chunks_for_nodes(nodes)

    @property
    def used_nodes(self):
        """Nodes of the chunks the trees hold now."""
        return self.b.used * CHUNK_NODES

    @property
    def used_bytes(self):
        return self.b.used * CHUNK_BYTES

    @property
    def limit_bytes(self):
        return self.b.limit * CHUNK_BYTES


def _unweighed_at_one(table):
    """Does the gamma table hold every group the rollouts do not weigh at 1?"""
    from gammago.moves import features as F
    for g, name in enumerate(F.GROUP_NAMES):
        if name not in F.ROLLOUT_GROUPS:
            lo = F.GROUP_BASES[g]
            if (table[lo:lo + F.GROUP_SIZES[g]] != 1.0).any():
                return False
    return True


def _gamma_table(table):
    """table as a contiguous float64 array of NFEAT positive finite gammas (ValueError if not)."""
    import numpy as np
    a = np.ascontiguousarray(table, dtype=np.float64)
    if a.ndim != 1 or a.shape[0] != NFEAT:
        raise ValueError(f"gamma table must have {NFEAT} entries, not {a.shape}")
    if not np.all(np.isfinite(a)) or (a <= 0).any():
        raise ValueError("gamma table holds a non-positive or non-finite value")
    return a


cdef class Search:
    """A UCT tree over a node pool of at most max_nodes nodes, taken in chunks as the tree
    grows from `budget` (a NodeBudget shared with other trees; None: one of max_nodes for this
    tree alone); its state is gammago/search/tree_state.pxd's."""
    cdef tree_t t
    cdef rollout_maker_t maker
    cdef gamma_maker_t gamma_maker  # the gamma rollouts' table and settings (maker.arg for them)
    cdef public object params
    cdef uint64_t seed
    cdef object _gamma        # the numpy table behind the gamma prior (kept alive here)
    cdef object _rollout_table  # the numpy table behind the gamma rollouts (kept alive here)

    def __cinit__(self, int max_nodes=1000000, seed=1, NodeBudget budget=None, **params):
        if max_nodes < 1000:
            raise ValueError(f"max_nodes must be at least 1000, not {max_nodes}")
        memset(&self.t, 0, sizeof(tree_t))
        pool_init(&self.t.pool, max_nodes, NULL if budget is None else budget.b)
        self.t.root = <board_t*>malloc(sizeof(board_t))
        if self.t.root == NULL:
            raise MemoryError(f"no memory for a tree of {max_nodes} nodes")
        self.t.prior.ctx = NULL
        self.t.prior.rate = prior_cheap
        maker_light(&self.maker)
        self.seed = seed
        self.t.root.size = 0
        self.params = dict(DEFAULTS)
        self.configure(**params)

    def __dealloc__(self):
        workers_free(&self.t, &self.maker)
        pool_free(&self.t.pool)
        free(self.t.root)

    def use_gammas(self, table):
        """Rate children by the product of their feature gammas (a float64 table of NFEAT
        entries, as gammago.moves.gammas loads); None goes back to the cheap built-in rating. The
        ladder reader's adjustment (prior_ladders) applies on top of either: the gammas'
        G_LADDER group is learned from what strong players play (they leave a working ladder
        unplayed until it matters: atari-works gets a gamma below 1), the adjustment says what
        the search should look at first."""
        if table is None:
            self._gamma = None
            self.t.prior.ctx = NULL
            self.t.prior.rate = prior_cheap
            return
        a = _gamma_table(table)
        cdef double[::1] view = a
        self._gamma = a
        self.t.prior.ctx = <void*>&view[0]
        # a table that holds the groups the rollouts do not weigh at 1 (the rollouts' gammas)
        # rates the same without reading them
        self.t.prior.rate = prior_gamma_rollout if _unweighed_at_one(a) else prior_gamma

    def use_gamma_rollouts(self, table, int light_after=0, int tail=TAIL_RULES_DEFAULT):
        """Roll out with the gamma policy of gammago.rollout.gamma_policy (one policy context per worker)
        for a float64 gamma table; None goes back to light (uniform) rollouts. light_after: a
        rollout's moves after its first light_after follow the light tail's rules, not the
        gammas (gamma_policy_t.light_after; 0 never). tail: the light tail's optional rules, a
        rules word (gammago.rollout.tail.rules; gamma_policy_t.tail). The workers made for the last
        rollouts are released."""
        cdef double[::1] view
        check_settings(light_after, tail)
        self.gamma_maker.light_after = light_after
        self.gamma_maker.tail = tail
        if table is None:
            workers_free(&self.t, &self.maker)
            self._rollout_table = None
            self.gamma_maker.gamma = NULL
            maker_light(&self.maker)
            return
        a = _gamma_table(table)
        workers_free(&self.t, &self.maker)
        view = a
        self._rollout_table = a
        self.gamma_maker.gamma = &view[0]
        self.maker.arg = &self.gamma_maker
        self.maker.make = rollout_make_gamma
        self.maker.release = rollout_release_gamma

    @property
    def rollouts(self):
        return "gamma" if self._rollout_table is not None else "light"

    @property
    def light_after(self):
        """The gamma rollouts' moves before their light tail (use_gamma_rollouts; 0 never)."""
        return self.gamma_maker.light_after

    @property
    def tail(self):
        """The gamma rollouts' light tail's rules word (use_gamma_rollouts)."""
        return self.gamma_maker.tail

    @property
    def tail_rules(self):
        """The names of the light tail's rules that are on (gammago.rollout.tail.rule_names)."""
        return rule_names(self.gamma_maker.tail)

    @property
    def prior(self):
        return "gamma" if self._gamma is not None else "cheap"

    def configure(self, **params):
        """Set search parameters (names as in DEFAULTS); ValueError for unknown or bad ones."""
        cdef params_t* prm = &self.t.prm
        cdef int k
        cdef double acc = 0, step
        p = dict(self.params)          # checked in full before any of it is used
        for name, v in params.items():
            if name not in DEFAULTS:
                raise ValueError(f"unknown search parameter {name!r} (known: {', '.join(DEFAULTS)})")
            p[name] = type(DEFAULTS[name])(v)
        if p["expand_visits"] < 1 or p["pw_init"] < 1 or p["pw_base"] < 0 or p["pw_factor"] < 1:
            raise ValueError(f"bad search parameters: {p}")
        if p["crit"] < 0:
            raise ValueError(f"crit must be >= 0, not {p['crit']}")
        if p["mercy"] < 0:
            raise ValueError(f"mercy must be >= 0, not {p['mercy']}")
        self.params = p
        prm.expand_visits = p["expand_visits"]
        prm.pw_init = p["pw_init"]
        prm.pw_base = p["pw_base"]
        prm.pw_factor = p["pw_factor"]
        prm.ucb_c = p["ucb_c"]
        prm.bonus_weight = p["bonus_weight"]
        prm.bonus_equiv = p["bonus_equiv"]
        prm.fpu = p["fpu"]
        prm.crit = p["crit"]
        prm.mercy = p["mercy"]
        # pw[k]: parent visits from which child k (0-based) is open
        step = prm.pw_base
        for k in range(MAX_PTS + 2):
            if k < prm.pw_init:
                self.t.pw[k] = 0
            else:
                acc += step
                step *= prm.pw_factor
                self.t.pw[k] = acc if acc < 1e15 else 1e15

    # --- the root ---
    def set_root(self, Board board, moves=None):
        """Search from board. moves: the points played since the last root (each a point index,
        0 = pass), to keep that subtree; None clears the tree. Returns the visits kept."""
        cdef int32_t node = 0, i, found
        cdef int kept
        cdef node_t* nd
        if moves is not None and self.t.root.size == board.b.size and self.t.pool.top > 1:
            for m in moves:
                nd = ND(&self.t, node)
                found = -1
                if nd.state == NODE_EXPANDED:
                    for i in range(nd.nchildren):
                        if ND(&self.t, nd.first + i).move == m:
                            found = nd.first + i
                            break
                if found < 0:
                    node = -1
                    break
                node = found
        else:
            node = -1
        if node > 0:
            with nogil:
                kept = pool_keep_subtree(&self.t.pool, node)
            if kept == 2:
                _say_once("reuse", "no memory for a compact copy of the kept subtree: it is "
                          "kept in place, the rest of the tree is not reclaimed")
        elif node < 0:
            pool_clear(&self.t.pool)
        board_copy(self.t.root, board.b)
        return ND(&self.t, 0).visits

    def graft(self, Search other, path):
        """Make this tree a copy of the subtree of `other` reached by path (points from other's
        root), at most this tree's node limit of it: the search of a position reached in
        another tree (gammago.search.net_root.RootSearch keeps its child trees' work this way). Call
        set_root with that position first; `other` must not be searching. Returns the visits
        kept (0, and the tree cleared, when path is not in other's tree)."""
        cdef int32_t node
        if other is self:
            raise ValueError("a tree cannot graft from itself (set_root keeps a subtree)")
        node = other._find(path)
        pool_clear(&self.t.pool)
        if node < 0 or (node == 0 and other.t.pool.top <= 1):
            return 0
        with nogil:
            self.t.pool.top = pool_copy_subtree(&other.t.pool, node, &self.t.pool)
        return ND(&self.t, 0).visits

    def set_avoid(self, avoid=(), int base=0):
        """Keep moves out of the tree (lz-analyze's and kata-analyze's avoid and allow):
        `avoid` holds (colour, point, until) triples: point (PASS included) is not a move of
        colour (1 Black, 2 White) in the first `until` plies of the search (1: not as the
        root's move). `base`: plies played before this tree's root (1 for a tree below a root
        move, as gammago.search.net_root.RootSearch keeps). Applies to the nodes expanded from now
        on: start the tree afresh (set_root(board, None)) after a change. () clears it."""
        from gammago.search.protocol import avoid_entries
        cdef int c, p, until
        entries = avoid_entries(avoid)
        for c, p, until in entries:
            if p >= MAX_PTS:
                raise ValueError(f"avoid: bad entry (colour {c}, point {p}, until {until})")
        if base < 0:
            raise ValueError(f"avoid: base must be >= 0, not {base}")
        memset(self.t.avoid, 0, sizeof(self.t.avoid))
        for c, p, until in entries:
            self.t.avoid[c][p] = until
        self.t.avoid_base = base
        self.t.has_avoid = 1 if entries else 0

    @property
    def avoid(self):
        """The (colour, point, until) triples set_avoid keeps out, sorted, and its base."""
        cdef int c, p
        out = []
        if self.t.has_avoid:
            for c in (1, 2):
                for p in range(MAX_PTS):
                    if self.t.avoid[c][p]:
                        out.append((c, p, int(self.t.avoid[c][p])))
        return tuple(out), self.t.avoid_base

    def clear(self):
        pool_clear(&self.t.pool)

    def fail_allocs(self, int n):
        """Test hook: the tree's next n memory allocations fail, as malloc would without memory."""
        self.t.pool.fail_allocs = n

    # --- running ---
    def prepare(self, int threads=1, long max_playouts=0, double seconds=0, bint no_pass=False,
                seed=None):
        """Get ready for a search by `threads` workers (then call work(i) for each i, from as
        many threads): stop after max_playouts in all (0: no cap) or `seconds` (0: no limit)."""
        cdef int i, err
        if self.t.root.size == 0:
            raise ValueError("set_root() first")
        if threads < 1:
            raise ValueError("threads must be >= 1")
        if seed is not None:
            self.seed = seed
        derived = [derive(self.seed, i) for i in range(threads)]
        cdef uint64_t* seeds = <uint64_t*>malloc(threads * sizeof(uint64_t))
        if seeds == NULL:
            raise MemoryError()
        for i in range(threads):
            seeds[i] = derived[i]
        err = workers_new(&self.t, &self.maker, threads, seeds)
        free(seeds)
        if err == 1:
            raise MemoryError()
        if err == 2:
            raise MemoryError("rollout policy could not be created")
        search_start(&self.t, max_playouts, seconds, no_pass)

    def work(self, int i):
        """Run worker i until the search ends (releases the GIL)."""
        if i < 0 or i >= self.t.nworkers:
            raise ValueError(f"no worker {i}")
        with nogil:
            search_work(&self.t, &self.t.workers[i], -1)

    def work_batch(self, int i, long n):
        """Run worker i for n playouts (fewer when the search ends first: its playout cap,
        deadline or stop) and return how many it ran. Threads may run batches of distinct
        workers on one tree at once, as work() does; gammago.search.net_root.RootSearch drives its child
        trees this way, each thread moving between trees without new threads or barriers."""
        cdef int64_t before
        if i < 0 or i >= self.t.nworkers:
            raise ValueError(f"no worker {i}")
        before = self.t.workers[i].playouts
        with nogil:
            search_work(&self.t, &self.t.workers[i], n)
        return self.t.workers[i].playouts - before

    def stop(self):
        gg_storei(&self.t.stop, 1)

    @property
    def stopped(self):
        return bool(gg_loadi(&self.t.stop))

    def run(self, int threads=1, long max_playouts=0, double seconds=0, bint no_pass=False,
            seed=None):
        """prepare + work on `threads` threads + join. Returns seconds taken, prepare's
        included (the deadline counts from there)."""
        import threading, time
        t0 = time.perf_counter()
        self.prepare(threads, max_playouts, seconds, no_pass, seed)
        if threads == 1:
            self.work(0)
        else:
            ts = [threading.Thread(target=self.work, args=(i,)) for i in range(threads)]
            for th in ts:
                th.start()
            for th in ts:
                th.join()
        return time.perf_counter() - t0

    # --- results ---
    @property
    def playouts(self):
        """Playouts finished in the current search."""
        cdef int64_t s = 0
        cdef int i
        for i in range(self.t.nworkers):
            s += self.t.workers[i].playouts
        return s

    @property
    def root_visits(self):
        return ND(&self.t, 0).visits

    @property
    def root_winrate(self):
        """Mean result of every playout through the root, those kept from a reused or grafted
        subtree too, for the player who moved into the root position (the one not to move
        there); None before the first. Unlike an average over the root's children it counts
        the playouts a kept subtree's root had before it was expanded (expand_visits)."""
        cdef node_t* nd = ND(&self.t, 0)
        if nd.visits <= 0:
            return None
        return nd.wins2 * 0.5 / nd.visits

    @property
    def nodes(self):
        return min(self.t.pool.top, self.t.pool.cap, self.t.pool.nchunks * CHUNK_NODES)

    @property
    def capacity(self):
        return self.t.pool.cap

    @property
    def memory(self):
        """Bytes of the chunks this tree holds now."""
        return self.t.pool.nchunks * CHUNK_BYTES

    @staticmethod
    def memory_of_chunks(int n):
        """Bytes of n chunks."""
        return n * CHUNK_BYTES

    def limit_nodes(self, int n):
        """Let the tree grow to at most n nodes (never beyond max_nodes given at creation, never
        below the nodes it has): a cap of its own, beside the budget's for all the trees that
        share it (gammago.search.net_root.RootSearch). Call it between runs, not during one."""
        self.t.pool.cap = max(min(n, self.t.pool.alloc), min(self.t.pool.top, self.t.pool.cap))
        if self.t.pool.top < self.t.pool.cap:
            self.t.pool.full = 0

    @property
    def full(self):
        return bool(self.t.pool.full)

    @property
    def max_depth(self):
        cdef int i, d = 0
        for i in range(self.t.nworkers):
            if self.t.workers[i].maxdepth > d:
                d = self.t.workers[i].maxdepth
        return d

    def children(self, path=()):
        """[(point, visits, winrate for the mover, rating)] of the node reached by the points in
        path from the root, in the pool's order (rating order; with crit > 0 the opened
        children are moved up in the order they were opened); [] if not expanded."""
        cdef int32_t node = self._find(path)
        cdef node_t* nd
        cdef node_t* ch
        cdef int i
        if node < 0:
            return []
        nd = ND(&self.t, node)
        if nd.state != NODE_EXPANDED:
            return []
        out = []
        for i in range(nd.nchildren):
            ch = ND(&self.t, nd.first + i)
            out.append((ch.move, ch.visits, ch.wins2 * 0.5 / ch.visits if ch.visits else 0.0,
                        ch.rating))
        return out

    def score(self, path=()):
        """(mean, standard deviation) of the final area difference (Black - White, no komi) over
        the playouts through the node reached by path from the root (every one of them: those kept
        from a reused or grafted subtree too); None when the node is not in the tree or has no
        playout. The spread is the playouts' own, not the mean's error."""
        cdef int32_t node = self._find(path)
        if node < 0:
            return None
        return _node_score(ND(&self.t, node))

    def child_scores(self, path=()):
        """{point: (mean, standard deviation)} of each child with a playout of the node reached
        by path, as score() gives them; {} if that node is not expanded."""
        cdef int32_t node = self._find(path)
        cdef node_t* nd
        cdef int i
        if node < 0:
            return {}
        nd = ND(&self.t, node)
        if nd.state != NODE_EXPANDED:
            return {}
        out = {}
        for i in range(nd.nchildren):
            got = _node_score(ND(&self.t, nd.first + i))
            if got is not None:
                out[ND(&self.t, nd.first + i).move] = got
        return out

    cdef int32_t _find(self, path):
        cdef int32_t node = 0, i, found
        cdef node_t* nd
        for m in path:
            nd = ND(&self.t, node)
            if nd.state != NODE_EXPANDED:
                return -1
            found = -1
            for i in range(nd.nchildren):
                if ND(&self.t, nd.first + i).move == m:
                    found = nd.first + i
                    break
            if found < 0:
                return -1
            node = found
        return node

    def pv(self, path=(), int maxlen=20):
        """Most-visited line from the node reached by path (path's moves included)."""
        cdef int32_t node = self._find(path)
        cdef node_t* nd
        cdef int i, best, bv
        out = list(path)
        if node < 0:
            return out
        while len(out) < maxlen:
            nd = ND(&self.t, node)
            if nd.state != NODE_EXPANDED:
                break
            best = -1
            bv = 0
            for i in range(nd.nchildren):
                if ND(&self.t, nd.first + i).visits > bv:
                    bv = ND(&self.t, nd.first + i).visits
                    best = nd.first + i
            if best < 0:
                break
            node = best
            out.append(ND(&self.t, node).move)
        return out

    def criticality(self):
        """Criticality of each point over this search's played-out playouts (gathered only with
        crit > 0; zeros before CRIT_MIN of them), as a numpy array [row, col] (row 0 = line 1)."""
        import numpy as np
        cdef int W = self.t.root.W, p
        a = np.zeros(W * W)
        for p in range(W * W):
            a[p] = self.t.crit[p]
        return a.reshape(W, W)[1:W - 1, 1:W - 1]

    @property
    def owned(self):
        """This search's playouts that were played out (not ended by the mercy rule): those
        that ownership() and criticality() count."""
        cdef int64_t n = 0
        cdef int i
        for i in range(self.t.nworkers):
            n += self.t.workers[i].own_n
        return n

    def ownership(self):
        """Mean final ownership over this search's playouts that were played out (owned),
        +1 Black .. -1 White, as a numpy array [row, col] (row 0 = line 1); zeros without one."""
        import numpy as np
        cdef int W = self.t.root.W, n = self.t.root.size, i, p
        cdef int64_t tot = 0
        a = np.zeros(W * W)
        for i in range(self.t.nworkers):
            tot += self.t.workers[i].own_n
            for p in range(W * W):
                a[p] += self.t.workers[i].own[p]
        a = a.reshape(W, W)[1:W - 1, 1:W - 1]
        return a / tot if tot else a

    def ownership_stdev(self):
        """The standard deviation over the same playouts of each point's final owner (+1 Black,
        -1 White, 0 neither), as ownership() lays it out: 0 where every playout agreed, 1 where
        they split evenly between the two sides; zeros without a playout."""
        import numpy as np
        cdef int W = self.t.root.W, i, p
        cdef int64_t tot = 0
        a = np.zeros(W * W)
        none = np.zeros(W * W)
        for i in range(self.t.nworkers):
            tot += self.t.workers[i].own_n
            for p in range(W * W):
                a[p] += self.t.workers[i].own[p]
                none[p] += self.t.workers[i].own_none[p]
        if tot == 0:
            return np.zeros((W - 2, W - 2))
        mean = a / tot
        owned = 1.0 - none / tot             # the mean square: the share owned by either side
        return np.sqrt(np.maximum(owned - mean * mean, 0.0)).reshape(W, W)[1:W - 1, 1:W - 1]

    def score_stdev(self):
        """The standard deviation of the final area difference over the same playouts (0
        without one): how widely the playouts' scores spread around ownership()'s sum."""
        cdef int i, p, W = self.t.root.W
        cdef int64_t tot = 0
        cdef double s = 0, sq = 0, m
        for i in range(self.t.nworkers):
            tot += self.t.workers[i].own_n
            sq += self.t.workers[i].score_sq
            for p in range(W * W):
                s += self.t.workers[i].own[p]
        if tot == 0:
            return 0.0
        m = s / tot
        return sqrt(max(sq / tot - m * m, 0.0))
