"""Minorization-Maximization for generalized Bradley-Terry models (Coulom 2007, after Hunter).

Each position j is a competition between teams of features: the legal moves, each a team with
one feature per group, of strength s_t = prod gamma[teams[t]]. The move played wins with
probability s_win / E_j, E_j = sum of the strengths of all candidates. MM raises the
likelihood (with Coulom's prior: one virtual win and one virtual loss against a gamma of 1 for
every feature) one group at a time:

    gamma_i <- (W_i + 1) / (sum_j C_ij / E_j + 2 / (1 + gamma_i))

W_i: wins of feature i; C_ij: the summed strength of i's teammates over the candidates of j
that contain i. Features of one group never share a team, which is what makes the group-wise
update a true minorization.

Data: `cand` is a scipy.sparse CSR matrix (positions x teams) of how many candidates of each
position have that team (duplicates summed or repeated), `teams` the teams' feature ids: an
int array (teams x groups) of global ids, or a `Teams` (one compact column per group), and
`winners` the team index of the move played in each position.
"""
import time

import numpy as np
import scipy.sparse as sp

# Stop when a sweep over all groups improves the mean log-posterior per position less than this
TOL = 1e-5
MAX_ITER = 100
TEAM_SLICE = 1 << 20     # teams per slice of the per-team arithmetic (bounds its temporaries)


def small_uint(n):
    """The smallest unsigned dtype that holds 0..n-1."""
    for dt in (np.uint8, np.uint16, np.uint32):
        if n <= np.iinfo(dt).max + 1:
            return dt
    return np.uint64


class Teams:
    """Teams by column: global id of team t's feature in column k = bases[k] + columns[k][t],
    each column in the smallest unsigned dtype that holds its local ids (a team of 13 groups
    takes 15 bytes rather than 52 as int32 ids)."""

    def __init__(self, columns, bases):
        self.columns = [np.ascontiguousarray(c) for c in columns]
        self.bases = [int(b) for b in bases]
        if len({len(c) for c in self.columns}) > 1:
            raise ValueError("team columns of different lengths")

    @classmethod
    def from_ids(cls, ids):
        """From an int array (teams x groups) of global ids: each column based at its minimum."""
        ids = np.asarray(ids)
        columns, bases = [], []
        for k in range(ids.shape[1]):
            col = ids[:, k]
            lo = int(col.min()) if len(col) else 0
            hi = int(col.max()) if len(col) else 0
            columns.append((col - lo).astype(small_uint(hi - lo + 1)))
            bases.append(lo)
        return cls(columns, bases)

    def __len__(self):
        return len(self.columns[0]) if self.columns else 0

    @property
    def nbytes(self):
        return sum(c.nbytes for c in self.columns)

    def cover(self, k, lo, hi):
        """Re-base column k so that its table slice covers the global ids lo..hi-1 too."""
        base, col = self.bases[k], self.columns[k]
        lo, hi = min(lo, base), max(hi, base + _span(col))
        if lo < base or small_uint(hi - lo) != col.dtype:
            self.columns[k] = (col.astype(np.int64) + (base - lo)).astype(small_uint(hi - lo))
            self.bases[k] = lo
        return self.bases[k], hi - lo

    def table(self, k, gamma):
        """Column k's slice of the gamma table, indexed by its local ids."""
        return gamma[self.bases[k]: self.bases[k] + _span(self.columns[k])]

    def ids(self, k, rows=slice(None)):
        """Global ids of column k (of the given rows), int64."""
        return self.columns[k][rows].astype(np.int64) + self.bases[k]

    def strengths(self, gamma, rows=slice(None)):
        """s_t = prod_k gamma[team t's id in column k] (of the given rows), float64."""
        s = None
        for k, col in enumerate(self.columns):
            g = self.table(k, gamma)[col[rows]]
            if s is None:
                s = g
            else:
                s *= g
        return s


def _span(col):
    return int(col.max()) + 1 if len(col) else 0


def _as_teams(teams):
    return teams if isinstance(teams, Teams) else Teams.from_ids(teams)


def team_strengths(gamma, teams):
    """s_t = prod_k gamma[teams[t, k]]."""
    return _as_teams(teams).strengths(np.asarray(gamma, dtype=np.float64))


def log_likelihood(gamma, teams, cand, winners, s=None):
    """Sum over positions of log(s_winner / E_j)."""
    if s is None:
        s = team_strengths(gamma, teams)
    E = cand @ s.astype(cand.dtype, copy=False)
    return float(np.sum(np.log(s[winners])) - np.sum(np.log(E.astype(np.float64))))


def log_prior(gamma, ids):
    """Coulom's prior: one virtual win and one virtual loss against gamma 1 per feature."""
    g = gamma[ids]
    return float(np.sum(np.log(g) - 2 * np.log1p(g)))


def row_blocks(m, n):
    """m (CSR) as n blocks of consecutive rows that share its arrays (views, no copy)."""
    rows = m.shape[0]
    out = []
    for b in range(n):
        r0, r1 = rows * b // n, rows * (b + 1) // n
        lo, hi = int(m.indptr[r0]), int(m.indptr[r1])
        # set by hand: the constructor would copy a view of less than half its array (prune)
        b = sp.csr_matrix((r1 - r0, m.shape[1]), dtype=m.dtype)
        b.data, b.indices, b.indptr = m.data[lo:hi], m.indices[lo:hi], m.indptr[r0:r1 + 1] - lo
        out.append(b)
    return out


class _Product:
    """m @ x with the rows shared out among threads (scipy lets go of the GIL in the product);
    each row is summed whole by one thread, so the result does not depend on their number."""

    def __init__(self, m, pool):
        self.m, self.pool = m, pool
        self.blocks = row_blocks(m, pool._max_workers) if pool else [m]

    def __matmul__(self, x):
        if len(self.blocks) == 1:
            return self.blocks[0] @ x
        return np.concatenate(list(self.pool.map(lambda b: b @ x, self.blocks)))


def _slices(n):
    return [slice(a, min(a + TEAM_SLICE, n)) for a in range(0, n, TEAM_SLICE)] or [slice(0, 0)]


def fit(teams, cand, winners, nfeat, groups, fixed=None, gamma0=None, max_iter=MAX_ITER,
        tol=TOL, progress=None, log=None, candT=None, threads=1):
    """MM over the groups until the log-posterior per position improves less than tol.

    groups: list of int arrays, the feature ids each group update covers (ids that are also in
    `fixed` stay put). candT: cand's transpose as CSR if the caller has it (else made here).
    threads: how many threads share the matrix products (the same gammas for any number).
    Returns (gamma float64[nfeat], history) where history is a list of dicts {iteration,
    log_likelihood (mean per position), log_posterior (mean), seconds}.
    progress: optional callable(iteration, history_entry) called after every sweep."""
    teams = _as_teams(teams)
    teams = Teams(list(teams.columns), teams.bases)   # cover() below re-bases our copy only
    winners = np.asarray(winners)
    if not sp.isspmatrix_csr(cand):
        cand = sp.csr_matrix(cand)
    npos = cand.shape[0]
    if npos == 0:
        raise ValueError("no positions to train on")
    if len(teams) != cand.shape[1]:
        raise ValueError(f"{len(teams)} teams but the candidate matrix has {cand.shape[1]} columns")
    gamma = np.ones(nfeat) if gamma0 is None else np.array(gamma0, dtype=np.float64)
    fixed = np.zeros(nfeat, dtype=bool) if fixed is None else np.asarray(fixed, dtype=bool)
    groups = [np.asarray(ids, dtype=np.int64) for ids in groups]
    groups = [ids[~fixed[ids]] for ids in groups]
    col_of = []                      # for each group: the team column that holds its features
    for ids in groups:
        member = np.zeros(nfeat, dtype=bool)
        member[ids] = True
        cols = [k for k, col in enumerate(teams.columns)
                if len(col) and member[teams.bases[k]: teams.bases[k] + _span(col)][col].any()]
        if len(cols) > 1:
            raise ValueError("a group's features appear in more than one team column")
        col_of.append(cols[0] if cols else None)
    spans = [_span(col) for col in teams.columns]
    for ids, col in zip(groups, col_of):
        if col is not None and len(ids):
            _, spans[col] = teams.cover(col, int(ids.min()), int(ids.max()) + 1)
    trained = np.concatenate(groups) if groups else np.zeros(0, dtype=np.int64)
    wins = np.zeros(nfeat)
    for k in range(len(teams.columns)):
        wins += np.bincount(teams.ids(k, winners), minlength=nfeat)
    if candT is None:
        candT = cand.T.tocsr()       # the transpose as CSR: a fast, cache-friendly matvec
    pool = None
    if threads > 1:
        from concurrent.futures import ThreadPoolExecutor
        pool = ThreadPoolExecutor(threads)
    try:
        return _sweeps(teams, spans, col_of, groups, wins, trained, gamma, _Product(cand, pool),
                       _Product(candT, pool), winners, pool, max_iter, tol, progress)
    finally:
        if pool is not None:
            pool.shutdown()


def _sweeps(teams, spans, col_of, groups, wins, trained, gamma, C, CT, winners, pool,
            max_iter, tol, progress):
    """fit's loop: sweeps over the groups, C and CT the products by cand and its transpose."""
    cand = C.m
    npos, dt, nteams = cand.shape[0], cand.dtype, len(teams)
    parts = _slices(nteams)
    each = (lambda fn: list(pool.map(fn, parts))) if pool else (lambda fn: [fn(p) for p in parts])
    s32 = np.empty(nteams, dtype=dt)   # the strengths as the matrices take them
    history = []
    s = teams.strengths(gamma)
    prev = log_likelihood(gamma, teams, cand, winners, s) + log_prior(gamma, trained)
    for it in range(1, max_iter + 1):
        t0 = time.perf_counter()
        for ids, col in zip(groups, col_of):
            if col is None or len(ids) == 0:
                continue
            s32[:] = s
            E = C @ s32
            A = CT @ (1.0 / E).astype(dt, copy=False)
            fc, base, width = teams.columns[col], teams.bases[col], spans[col]
            g_col = gamma[base: base + width]                # a view: the column's gammas

            def denominator(part):                           # sum of A_t * s_t / gamma_i
                f = fc[part]
                return np.bincount(f, weights=A[part] * (s[part] / g_col[f]), minlength=width)

            denom = np.sum(each(denominator), axis=0)        # in slice order: reproducible
            local = ids - base
            old = g_col[local]
            new = (wins[ids] + 1.0) / (denom[local] + 2.0 / (1.0 + old))
            ratio = np.ones(width)
            ratio[local] = new / old
            gamma[ids] = new

            def rescale(part):
                s[part] *= ratio[fc[part]]

            each(rescale)
        s = teams.strengths(gamma)     # no drift from the running products
        ll = log_likelihood(gamma, teams, cand, winners, s)
        lp = ll + log_prior(gamma, trained)
        entry = {"iteration": it, "log_likelihood": ll / npos, "log_posterior": lp / npos,
                 "seconds": time.perf_counter() - t0}
        history.append(entry)
        if progress is not None:
            progress(it, entry)
        if (lp - prev) / npos < tol:
            break
        prev = lp
    return gamma, history


def candidates_matrix(offsets, team_index, counts=None, nteams=None):
    """CSR (positions x teams) from per-position runs: position j's candidates are
    team_index[offsets[j]:offsets[j+1]] (with counts, default 1). Arrays already in the
    matrix's dtypes (int32 or int64 indices, float32 counts) are taken without a copy."""
    offsets = np.asarray(offsets)
    team_index = np.asarray(team_index)
    n = len(team_index)
    data = np.ones(n, dtype=np.float32) if counts is None else \
        np.asarray(counts).astype(np.float32, copy=False)
    if nteams is None:
        nteams = int(team_index.max()) + 1 if n else 0
    idx_dtype = np.int32 if max(n, nteams) < 2**31 else np.int64
    return sp.csr_matrix((data, team_index.astype(idx_dtype, copy=False),
                          offsets.astype(idx_dtype, copy=False)),
                         shape=(len(offsets) - 1, nteams), copy=False)
