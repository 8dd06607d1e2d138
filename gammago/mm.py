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
position have that team (duplicates summed), `teams` an int array (teams x groups) of global
feature ids, `winners` the team index of the move played in each position.
"""
import math
import time

import numpy as np
import scipy.sparse as sp

# Stop when a sweep over all groups improves the mean log-posterior per position less than this
TOL = 1e-5
MAX_ITER = 100


def team_strengths(gamma, teams):
    """s_t = prod_k gamma[teams[t, k]]."""
    s = gamma[teams[:, 0]].copy()
    for k in range(1, teams.shape[1]):
        s *= gamma[teams[:, k]]
    return s


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


def fit(teams, cand, winners, nfeat, groups, fixed=None, gamma0=None, max_iter=MAX_ITER,
        tol=TOL, progress=None, log=None):
    """MM over the groups until the log-posterior per position improves less than tol.

    groups: list of int arrays, the feature ids each group update covers (ids that are also in
    `fixed` stay put). Returns (gamma float64[nfeat], history) where history is a list of dicts
    {iteration, log_likelihood (mean per position), log_posterior (mean), seconds}.
    progress: optional callable(iteration, history_entry) called after every sweep."""
    teams = np.ascontiguousarray(teams)
    winners = np.asarray(winners)
    if not sp.isspmatrix_csr(cand):
        cand = sp.csr_matrix(cand)
    npos = cand.shape[0]
    if npos == 0:
        raise ValueError("no positions to train on")
    if teams.shape[0] != cand.shape[1]:
        raise ValueError(f"{teams.shape[0]} teams but the candidate matrix has {cand.shape[1]} columns")
    gamma = np.ones(nfeat) if gamma0 is None else np.array(gamma0, dtype=np.float64)
    fixed = np.zeros(nfeat, dtype=bool) if fixed is None else np.asarray(fixed, dtype=bool)
    groups = [np.asarray(ids, dtype=np.int64) for ids in groups]
    groups = [ids[~fixed[ids]] for ids in groups]
    col_of = []                      # for each group: the team column that holds its features
    for ids in groups:
        member = np.zeros(nfeat, dtype=bool)
        member[ids] = True
        cols = [k for k in range(teams.shape[1]) if member[teams[:, k]].any()]
        if len(cols) > 1:
            raise ValueError("a group's features appear in more than one team column")
        col_of.append(cols[0] if cols else None)
    trained = np.concatenate(groups) if groups else np.zeros(0, dtype=np.int64)
    wins = np.bincount(teams[winners].ravel(), minlength=nfeat).astype(np.float64)
    candT = cand.T.tocsr()           # the transpose as CSR: a fast, cache-friendly matvec
    dt = cand.dtype
    history = []
    s = team_strengths(gamma, teams)
    prev = log_likelihood(gamma, teams, cand, winners, s) + log_prior(gamma, trained)
    for it in range(1, max_iter + 1):
        t0 = time.perf_counter()
        for ids, col in zip(groups, col_of):
            if col is None or len(ids) == 0:
                continue
            E = cand @ s.astype(dt, copy=False)
            A = candT @ (1.0 / E).astype(dt, copy=False)
            fc = teams[:, col]
            mates = s / gamma[fc]
            denom = np.bincount(fc, weights=A.astype(np.float64) * mates, minlength=nfeat)
            old = gamma[ids]
            new = (wins[ids] + 1.0) / (denom[ids] + 2.0 / (1.0 + old))
            ratio = np.ones(nfeat)
            ratio[ids] = new / old
            gamma[ids] = new
            s *= ratio[fc]
        s = team_strengths(gamma, teams)     # no drift from the running products
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
    team_index[offsets[j]:offsets[j+1]] (with counts, default 1)."""
    offsets = np.asarray(offsets, dtype=np.int64)
    team_index = np.asarray(team_index)
    n = len(team_index)
    data = np.ones(n, dtype=np.float32) if counts is None else np.asarray(counts, dtype=np.float32)
    if nteams is None:
        nteams = int(team_index.max()) + 1 if n else 0
    idx_dtype = np.int32 if max(n, nteams) < 2**31 else np.int64
    return sp.csr_matrix((data, team_index.astype(idx_dtype, copy=False),
                          offsets.astype(idx_dtype, copy=False)),
                         shape=(len(offsets) - 1, nteams))
