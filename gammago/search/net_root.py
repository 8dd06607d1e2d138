"""Net at the root, rollouts below: RootSearch, PUCT over the net's best root moves with one
UCT tree (gammago.search.tree.Search) per root child. It meets the engine's search protocol
(gammago.search.protocol.SearchProtocol), as tree.Search does, so gammago.engine.engine drives either."""
import math
import threading
import time

import numpy as np

from gammago.search import prior
from gammago.search.protocol import avoid_entries
from gammago.core.seeds import ROOT_CHILD_STRIDE, derive

ROOT_CHILDREN = 20      # root moves searched: the net's top moves
ROOT_BATCH = 16         # playouts per visit of a root child before the root selects again
ROOT_CPUCT = 1.5        # PUCT exploration weight at the root
GUMBEL_VISIT = 50       # Gumbel root: sigma(q) = (GUMBEL_VISIT + max visits) * GUMBEL_SCALE * q,
GUMBEL_SCALE = 0.1      # with visits counted in root batches (mctx's c_visit and c_scale)
FORCED_K = 2.0          # forced playouts' k (KataGo): n_forced(a) = sqrt(k * P(a) * N) root batches
ROOT_LAMBDA = 0.0       # weight of the net's value in a root child's value (--net-lambda): at 0
                        # it only stands in for a child that no rollout has reached yet
                        # (docs/notebook/experiments/net-root-settings.md)


class RootSearch:
    """Net at the root, rollouts below (AlphaGo's mix, on our UCT tree).

    The root's candidate moves are the net's ROOT_CHILDREN best (its priors renormalised over
    them); each root child gets its own gammago.search.tree.Search, whose descents keep the cheap/gamma
    move ordering and rollouts. The root picks the child to search next by PUCT,
        Q(a) + c_puct * P(a) * sqrt(N) / (1 + n(a)),   Q(a) = (1 - lambda) * rollouts(a) + lambda * net(a)
    with net(a) the net's value of the position after a (one batched evaluation per search),
    rollouts(a) the child tree's win rate, both for the player at the root (0..1). lambda is
    0 by default (ROOT_LAMBDA): the shipped net's value is too weak to mix in, and serves only
    as Q(a) for a child without rollouts.

    It meets gammago.search.protocol.SearchProtocol, as tree.Search does, so gammago.engine.engine drives
    either the same way.

    The child trees are kept between moves (set_root): after our move and the reply, each new
    root child's tree starts as the old tree's subtree for that line (tree.Search.graft).
    Every search thread runs the root loop (work) on its own worker of the child trees.

    The child trees share one node budget: each may grow into what the others leave, so the
    child the search favours gets the nodes it needs (a fixed split gave each of 20 children
    1/20 of the pool, and the favourite's tree filled up within a few thousand playouts on
    19x19). The engine's make_search gives every tree the same tree.NodeBudget (--max-memory):
    a tree takes memory in chunks as it grows, from that one budget, so the memory of all the
    trees together never passes it. `max_nodes` (0: none) is a cap in nodes on top of that, set
    on a tree when a batch starts on it while no other batch runs there (tree.Search.limit_nodes
    is for between runs), so trees growing at once can pass it by about what their batches add.
    """

    def __init__(self, net, make_search, lam=ROOT_LAMBDA, children=ROOT_CHILDREN, batch=ROOT_BATCH,
                 c_puct=ROOT_CPUCT, max_nodes=0):
        if not 0.0 <= lam <= 1.0:
            raise ValueError(f"net lambda must be in [0, 1], not {lam}")
        self.net, self.make_search, self.lam = net, make_search, float(lam)
        self.nchildren, self.batch, self.c_puct = int(children), int(batch), float(c_puct)
        self.max_nodes = int(max_nodes)   # 0: each tree keeps its own pool
        self.ladders = True       # the ladder reader adjusts the net's priors, as the trees'
        self.board = None
        self.kids = []            # [{'move', 'point', 'prior', 'net', 'search'}]
        self._stop = False
        self._calls = []
        self._old = None          # (old root child's tree, moves below it) for _expand to graft
        self._done = 0
        self._avoid, self._avoid_base = (), 0   # set_avoid: (colour, point, until) triples
        self._noise = None        # set_noise: (alpha, share, generator) for self-play
        self._gumbel = None       # set_gumbel: (candidates, generator) for self-play
        self._logits = {}         # with _gumbel: {vertex: log prior} of every legal root move
        self._halving = None      # with _gumbel: sequential halving's state in this search
        self._forced = 0.0        # set_forced: forced playouts' k for self-play (0: off)

    # configuration calls of tree.Search (tree parameters, child ordering, rollout policy):
    # remembered and passed on to every child tree, present and future
    def _configure(self, name, args, kw):
        self._calls = [c for c in self._calls if c[0] != name] + [(name, args, kw)]
        for k in self.kids:
            getattr(k["search"], name)(*args, **kw)

    def configure(self, **params):
        self._configure("configure", (), params)

    def use_gammas(self, *args, **kw):
        self._configure("use_gammas", args, kw)

    def use_gamma_rollouts(self, *args, **kw):
        """Every child tree's rollouts (tree.Search.use_gamma_rollouts, the same arguments)."""
        self._configure("use_gamma_rollouts", args, kw)

    def set_avoid(self, avoid=(), base=0):
        """tree.Search.set_avoid for the whole search: the root's moves leave out those avoided
        at ply base + 1, and every child tree (whose root is one ply deeper) the rest."""
        avoid = avoid_entries(avoid)
        self._avoid, self._avoid_base = avoid, int(base)
        self._configure("set_avoid", (avoid,), {"base": int(base) + 1})

    @property
    def avoid(self):
        """set_avoid's triples (sorted) and base."""
        return self._avoid, (self._avoid_base if self._avoid else 0)

    def set_root(self, board, moves=None):
        """Search from board. moves: the points played since the last root (as tree.Search
        takes them), to keep the work below them; None starts afresh. The same root (no moves)
        keeps every child tree. After moves, the first of them names the old root child whose
        tree holds the new position; each new root child's tree starts as that tree's subtree
        below the rest of the moves and the child (tree.Search.graft), when it has one. Returns
        the visits kept at the new root."""
        old_board, kids = self.board, self.kids
        self.board = board.copy()
        self.kids, self._old = [], None
        if moves is None or old_board is None or old_board.size != board.size:
            return 0
        moves = tuple(moves)
        if not moves:
            self.kids = kids
            return self.root_visits
        for k in kids:
            if k["point"] == moves[0]:
                # the old tree keeps only the new position's subtree (in place, no memory
                # taken), so the grafts below draw on what the rest of it gave back
                old = k["search"]
                old.set_root(board, moves[1:])
                self._old = (old, ())
                return sum(v for _, v, _, _ in old.children())
        return 0

    def clear(self):
        self.kids, self._old = [], None

    def set_noise(self, alpha=0.0, share=0.0, rng=None):
        """Dirichlet noise on the root's priors (AlphaZero's exploration for self-play):
        P(a) <- (1 - share) * P(a) + share * Dir(alpha), drawn afresh at every new root, over
        every legal move before the net's best ROOT_CHILDREN are taken, so that a move the net
        ranks low can come among them. share 0 (the default) turns it off; rng: a numpy
        Generator (the draws of one self-play game)."""
        if not (alpha >= 0 and 0 <= share <= 1):
            raise ValueError(f"root noise: alpha {alpha} must be >= 0 and share {share} in [0, 1]")
        self._noise = (float(alpha), float(share), rng or np.random.default_rng()) \
            if share > 0 and alpha > 0 else None

    def set_gumbel(self, m=0, rng=None):
        """Gumbel root selection for self-play (Danihelka et al., "Policy improvement by
        planning with Gumbel", ICLR 2022), from the next search on; m < 2 turns it off.

        At each new root, Gumbel(0, 1) noise g(a) is drawn for every root child; the m children
        with the highest g(a) + logit(a) are searched by sequential halving over the search's
        --playouts (each round shares its part of the budget equally among the survivors, then
        keeps the better half by g(a) + logit(a) + sigma(q(a))); gumbel_choice() is the
        survivor with the highest of that score, the move to play, and improved_policy()
        softmax(logit + sigma(completed q)), the policy target. The Gumbel draws stand in for
        Dirichlet noise (set_noise is not needed with it). Without --playouts (a search by
        time) the root selects by PUCT as usual."""
        self._gumbel = (int(m), rng or np.random.default_rng()) if m and m > 1 else None

    def set_forced(self, k=0.0):
        """Forced playouts for self-play (KataGo, Wu 2019, "Accelerating self-play learning in
        Go", section 3.1), from the next search on; k 0 turns them off. Every root child a gets
        at least n_forced(a) = sqrt(k * P(a) * N) of the N root batches before PUCT chooses (P
        with the noise in it, so a move the noise raised is looked at enough to be judged);
        pruned_visits() takes what they added out of the policy target again."""
        if not k >= 0:
            raise ValueError(f"forced playouts: k must be >= 0, not {k}")
        self._forced = float(k)

    def _n_forced(self, kid, batches, factor):
        """Root batches a child is owed by forced playouts with factor k, out of `batches`."""
        return math.sqrt(factor * kid["prior"] * batches)

    def _puct(self, kid, sq, n):
        """PUCT value of root child kid with n visits, sq = sqrt(root visits + 1)."""
        return self.q(kid) + self.c_puct * kid["prior"] * sq / (1 + n)

    def _is_root(self, board):
        """Whether board is the position searched (the engine may decide a move without a
        search, after a pass: then the last search's state is another position's)."""
        return board.hash == self.board.hash and board.to_move == self.board.to_move

    def pruned_visits(self, board=None):
        """{vertex: visits} of the root children with KataGo's policy target pruning: from each
        child other than the most visited one, up to its n_forced playouts (k = the forced
        playouts' k, FORCED_K when they are off, where PUCT's own first batch of every child
        plays their part) are taken away as long as its PUCT value stays below the most visited
        child's, computed with the final totals; a child left with at most one batch is dropped
        (its visits were exploration, not the search's opinion). {} when `board` (when given)
        is not the searched position."""
        if not self.kids or (board is not None and not self._is_root(board)):
            return {}
        total = sum(k["visits"] for k in self.kids)
        best = max(self.kids, key=lambda k: k["visits"])
        sq = math.sqrt(total + 1)
        top = self._puct(best, sq, best["visits"])
        factor = self._forced or FORCED_K
        out = {}
        for k in self.kids:
            n = k["visits"]
            if k is not best and n > 0:
                gap = top - self.q(k)
                if gap > 0:
                    cap = self.batch * self._n_forced(k, total / self.batch, factor)
                    need = self.c_puct * k["prior"] * sq / gap - 1   # PUCT(k, n') < top for n' > need
                    n2 = max(n - cap, math.floor(need) + 1, 0)
                    if n2 < n:
                        n = int(math.ceil(n2)) if n2 > self.batch else 0
            out[k["move"]] = n
        return out

    def _expand(self, no_pass):
        b = self.board
        pri = self.net.priors(b, include_pass=not no_pass)
        if self.ladders and pri:
            # the trees' ladder reading on the net's priors too: an escape that is still
            # captured drops out of the root's moves, an atari that starts a ladder that
            # fails is lowered, one that kills is raised (prior.ladder_factors)
            vs = list(pri)
            pri = {v: pri[v] * f for v, f in zip(vs, prior.ladder_factors(b, vs))}
        if self._avoid:
            c = 1 if b.to_move == "b" else 2
            banned = {p for col, p, until in self._avoid
                      if col == c and until > self._avoid_base}
            pri = {v: x for v, x in pri.items() if b.point(v) not in banned}
        if self._gumbel is not None:
            self._logits = {v: math.log(max(x, 1e-12)) for v, x in pri.items()}
        if self._noise is not None and len(pri) > 1:
            alpha, share, rng = self._noise
            total = sum(pri.values()) or 1.0
            eta = rng.dirichlet([alpha] * len(pri))
            pri = {v: (1 - share) * x / total + share * float(e) for (v, x), e in zip(pri.items(), eta)}
        moves = sorted(pri, key=pri.get, reverse=True)[:self.nchildren]
        if not moves:
            moves = ["pass"]
            pri = {"pass": 1.0}
        total = sum(pri[m] for m in moves) or 1.0
        values = self.net.child_values(b, moves)
        self.kids = []
        old, self._old = self._old, None
        for m in moves:
            child = b.copy()
            child.play(m)
            s = self.make_search()
            for name, args, kw in self._calls:
                getattr(s, name)(*args, **kw)
            s.set_root(child, None)
            k = {"move": m, "point": b.point(m), "prior": pri[m] / total,
                 "net": (values[m] + 1) / 2, "search": s, "visits": 0, "pending": 0, "rate": None}
            if old is not None:
                if self.max_nodes:
                    s.limit_nodes(self.max_nodes - self.nodes)
                k["visits"] = s.graft(old[0], old[1] + (k["point"],))
                k["rate"] = self._rollout_rate(k)
            self.kids.append(k)
        if self._gumbel is not None:
            g = self._gumbel[1].gumbel(size=len(self.kids))
            for k, x in zip(self.kids, g):
                k["g"] = float(x)
                k["logit"] = self._logits.get(k["move"], math.log(max(k["prior"], 1e-12)))

    def prepare(self, threads=1, max_playouts=0, seconds=0.0, no_pass=False, seed=None):
        if self.board is None:
            raise ValueError("set_root() first")
        self.threads = max(1, threads)
        self.max_playouts = max_playouts
        self.deadline = time.perf_counter() + seconds if seconds > 0 else 0.0
        self.seed = 1 if seed is None else int(seed)
        # stopped (from the last search) until the counters are this search's: a thread that
        # watches a running search (the analysis command's) reads playouts only while not
        # stopped, and the expansion below takes a while
        self._stop = True
        self._done = 0
        if not self.kids or (no_pass and any(k["move"] == "pass" for k in self.kids)):
            self._expand(no_pass)
        # every child tree gets one worker per thread for the whole search (work_batch)
        for j, k in enumerate(self.kids):
            k["search"].prepare(self.threads, 0, 0, False, derive(self.seed, j, ROOT_CHILD_STRIDE))
            k["pending"] = 0
            k["new"] = 0          # playouts of this search (sequential halving's budget)
        self._halving = None
        if self._gumbel is not None and max_playouts > 0 and "g" in self.kids[0]:
            m = min(self._gumbel[0], len(self.kids))
            alive = sorted(self.kids, key=lambda k: k["g"] + k["logit"], reverse=True)[:m]
            rounds = max(1, math.ceil(math.log2(m)))
            self._halving = {"alive": alive, "rounds": rounds, "target": 0}
            self._halving["target"] = self._round_share(len(alive))
        self._lock = threading.Lock()
        self._stop = False

    def _rollout_rate(self, k):
        """Win rate of the rollouts below root child k for the player at the root: the mean of
        every playout through its tree's root, the ones kept from the last move's tree (graft)
        included. An average over that root's children left out the playouts a kept line had
        before it was expanded: up to expand_visits of them (40 on 19x19), nearly all of a
        lightly searched line's. None before the first."""
        return k["search"].root_winrate

    def q(self, k):
        """Mixed value of root child k; its rollout rate is read after each of its batches
        (_rollout_rate), so a selection sees the whole batches of the other threads only."""
        r = k["rate"]
        return k["net"] if r is None else (1 - self.lam) * r + self.lam * k["net"]

    def _round_share(self, alive):
        """Playouts a survivor gets in a round of sequential halving among `alive` children."""
        share = self.max_playouts // (self._halving["rounds"] * alive)
        return max(self.batch, share - share % self.batch)

    def _sigma(self):
        """(completed q by root child, v_mix, scale): Gumbel's monotone transform of the
        values, sigma(q) = scale * (q - lo) / (hi - lo) over the children's completed values
        (a child without visits takes v_mix, the prior-weighted value of those with them)."""
        seen = [k for k in self.kids if k["visits"] > 0]
        w = sum(k["prior"] for k in seen)
        v_mix = sum(k["prior"] * self.q(k) for k in seen) / w if w > 0 else 0.5
        q = {k["move"]: (self.q(k) if k["visits"] > 0 else v_mix) for k in self.kids}
        lo, hi = min(q.values(), default=0.0), max(q.values(), default=1.0)
        span = hi - lo if hi > lo else 1.0
        max_n = max((k["visits"] for k in self.kids), default=0) / self.batch
        scale = (GUMBEL_VISIT + max_n) * GUMBEL_SCALE
        return {m: (x - lo) / span for m, x in q.items()}, (v_mix - lo) / span, scale

    def _gumbel_score(self, k, qhat, scale):
        return k["g"] + k["logit"] + scale * qhat[k["move"]]

    def _select_halving(self):
        """Sequential halving: the survivor furthest behind this round's share; when every
        survivor has it, the better half by g + logit + sigma(q) goes on (two stay to the end,
        sharing what is left of the budget)."""
        h = self._halving
        while True:
            behind = [k for k in h["alive"] if k["new"] + k["pending"] < h["target"]]
            if behind:
                return min(behind, key=lambda k: k["new"] + k["pending"])
            if len(h["alive"]) > 2:
                qhat, _, scale = self._sigma()
                h["alive"] = sorted(h["alive"], key=lambda k: self._gumbel_score(k, qhat, scale),
                                    reverse=True)[:(len(h["alive"]) + 1) // 2]
            h["target"] += self._round_share(len(h["alive"]))

    def _halved(self, board):
        """Whether the last search ran sequential halving, from `board` when one is given
        (_is_root)."""
        if self._halving is None:
            return False
        return board is None or self._is_root(board)

    def gumbel_choice(self, board=None):
        """With set_gumbel: the move to play, the survivor of sequential halving with the highest
        g + logit + sigma(q); None when the last search did not run sequential halving (from
        `board`, when one is given)."""
        if not self._halved(board):
            return None
        qhat, _, scale = self._sigma()
        return max(self._halving["alive"], key=lambda k: self._gumbel_score(k, qhat, scale))["move"]

    def improved_policy(self, board=None):
        """With set_gumbel: {vertex: probability} over every legal root move, softmax(logit +
        sigma(completed q)), Gumbel AlphaZero's policy target (a move outside the root children
        takes v_mix); None as gumbel_choice(board) is."""
        if not self._halved(board):
            return None
        qhat, vmix, scale = self._sigma()
        z = {v: lg + scale * qhat.get(v, vmix) for v, lg in self._logits.items()}
        top = max(z.values())
        e = {v: math.exp(x - top) for v, x in z.items()}
        tot = sum(e.values())
        return {v: x / tot for v, x in e.items()}

    def _select(self):
        """PUCT over the root children, counting the playouts other threads are running; with
        set_forced, a child short of its forced playouts first (the one furthest short);
        sequential halving instead with set_gumbel and --playouts."""
        if self._halving is not None:
            return self._select_halving()
        total = sum(k["visits"] + k["pending"] for k in self.kids)
        if self._forced:
            batches = total / self.batch
            short = {id(k): (k["visits"] + k["pending"]) / self.batch
                     - self._n_forced(k, batches, self._forced) for k in self.kids}
            behind = min(self.kids, key=lambda k: short[id(k)])
            if short[id(behind)] < 0:
                return behind
        sq = math.sqrt(total + 1)
        return max(self.kids, key=lambda k: self._puct(k, sq, k["visits"] + k["pending"]))

    def work(self, i):
        """Worker i's root loop: pick a child by PUCT, run a batch of playouts on worker i of
        its tree (nogil), book the result. Every thread runs this loop; two threads may run
        the same child's tree at once (its own virtual loss keeps them apart)."""
        if i >= self.threads:
            return
        while True:
            with self._lock:
                if self._stop:
                    break
                if self.max_playouts:
                    left = self.max_playouts - self._done - sum(o["pending"] for o in self.kids)
                else:
                    left = self.batch
                if left <= 0 or (self.deadline and time.perf_counter() >= self.deadline):
                    break
                k = self._select()
                n = min(self.batch, left)
                s = k["search"]
                if self.max_nodes and not k["pending"]:
                    # what the others leave; only while no other thread runs this tree
                    # (tree.Search.limit_nodes is for between runs): a tree that is busy keeps
                    # the cap it was given when its running batch started
                    s.limit_nodes(self.max_nodes - self.nodes + s.nodes)
                k["pending"] += n
            got = s.work_batch(i, n)
            with self._lock:
                k["pending"] -= n
                k["visits"] += got
                k["new"] += got
                self._done += got
                if got:
                    k["rate"] = self._rollout_rate(k)
        self._stop = True

    def run(self, threads=1, max_playouts=0, seconds=0.0, no_pass=False, seed=None):
        t0 = time.perf_counter()
        self.prepare(threads, max_playouts, seconds, no_pass, seed)
        workers = [threading.Thread(target=self.work, args=(i,)) for i in range(1, self.threads)]
        for w in workers:
            w.start()
        self.work(0)
        for w in workers:
            w.join()
        return time.perf_counter() - t0

    def stop(self):
        self._stop = True

    @property
    def stopped(self):
        return self._stop

    # --- results, as tree.Search gives them ---
    @property
    def playouts(self):
        """Playouts of the current search (not those kept from earlier ones)."""
        return self._done

    @property
    def root_visits(self):
        return sum(k["visits"] for k in self.kids)

    @property
    def nodes(self):
        return sum(k["search"].nodes for k in self.kids)

    @property
    def capacity(self):
        return self.max_nodes or sum(k["search"].capacity for k in self.kids)

    @property
    def full(self):
        return any(k["search"].full for k in self.kids)

    @property
    def max_depth(self):
        return 1 + max((k["search"].max_depth for k in self.kids), default=0)

    def children(self, path=()):
        """Root: [(point, visits, mixed win rate for the mover, net prior)] in prior order;
        deeper paths are answered by the child's own tree."""
        if not path:
            return [(k["point"], k["visits"], self.q(k), k["prior"]) for k in self.kids]
        for k in self.kids:
            if k["point"] == path[0]:
                return k["search"].children(tuple(path[1:]))
        return []

    def pv(self, path=(), maxlen=20):
        if not path:
            if not self.kids:
                return []
            best = max(self.kids, key=lambda k: k["visits"])
            path = (best["point"],)
        for k in self.kids:
            if k["point"] == path[0]:
                return [path[0]] + list(k["search"].pv(tuple(path[1:]), maxlen - 1))
        return list(path)

    def score(self, path=()):
        """(mean, standard deviation) of the final area difference over the playouts through the
        node reached by path; at the root, every child tree's playouts pooled, each tree's own
        root (its grafted playouts too) weighed by its playouts; None without a playout."""
        if path:
            k = self._kid(path[0])
            return None if k is None else k["search"].score(tuple(path[1:]))
        n, s1, s2 = 0, 0.0, 0.0
        for k in self.kids:
            got = k["search"].score()
            visits = k["search"].root_visits
            if got is not None and visits > 0:
                mean, sd = got
                n += visits
                s1 += visits * mean
                s2 += visits * (sd * sd + mean * mean)
        if not n:
            return None
        mean = s1 / n
        return (mean, math.sqrt(max(s2 / n - mean * mean, 0.0)))

    def child_scores(self, path=()):
        """{point: (mean, standard deviation)}: at the root, each child's from its own tree
        (tree.Search.score); deeper, that child's tree answers."""
        if path:
            k = self._kid(path[0])
            return {} if k is None else k["search"].child_scores(tuple(path[1:]))
        out = {}
        for k in self.kids:
            got = k["search"].score()
            if got is not None:
                out[k["point"]] = got
        return out

    def _kid(self, point):
        return next((k for k in self.kids if k["point"] == point), None)

    @property
    def owned(self):
        """The playouts of every child tree that were played out (tree.Search.owned)."""
        return sum(k["search"].owned for k in self.kids)

    def ownership(self):
        """Mean final ownership over this search's played-out playouts (every child tree's)."""
        if self.board is None:
            raise ValueError("no position searched yet")
        n = self.board.size
        acc, tot = np.zeros((n, n)), 0
        for k in self.kids:
            got = k["search"].owned
            if got:
                acc = acc + got * k["search"].ownership()
                tot += got
        return acc / tot if tot else acc

    def _pooled(self, stat):
        """(playouts, pooled mean, pooled standard deviation) of a statistic of the child
        trees' playouts, from each tree's (mean, standard deviation) of it: stat(search)."""
        n, s1, s2 = 0, 0.0, 0.0
        for k in self.kids:
            got = k["search"].owned
            if got:
                mean, sd = stat(k["search"])
                s1 = s1 + got * mean
                s2 = s2 + got * (sd * sd + mean * mean)
                n += got
        if not n:
            return 0, s1, s1
        mean = s1 / n
        return n, mean, np.sqrt(np.maximum(s2 / n - mean * mean, 0.0))

    def ownership_stdev(self):
        """The standard deviation of each point's final owner over the same playouts as
        ownership() (every child tree's, pooled)."""
        if self.board is None:
            raise ValueError("no position searched yet")
        n, _, sd = self._pooled(lambda s: (s.ownership(), s.ownership_stdev()))
        size = self.board.size
        return sd if n else np.zeros((size, size))

    def score_stdev(self):
        """The standard deviation of the final area difference over the same playouts (every
        child tree's, pooled)."""
        if self.board is None:
            raise ValueError("no position searched yet")
        n, _, sd = self._pooled(lambda s: (float(s.ownership().sum()), s.score_stdev()))
        return float(sd) if n else 0.0
