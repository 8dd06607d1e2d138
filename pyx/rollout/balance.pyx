# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""Simulation balancing (Silver & Tesauro 2009; Huang, Coulom & Lin, "Monte-Carlo Simulation
Balancing in Practice", 2010): gamma playouts that also return the gradient of the
log-probability of the moves they played with respect to the log-gammas.

A playout plays every move with probability proportional to the product of the gammas of its
rollout features (features.pxd: rollout_features), as the rollouts do with the gammas to the end
(pyx/rollout/gamma_sampler.pyx; pass only when no point has a positive weight; with TAIL_REFUSE in the
rules word, none of the bad self-ataris it refuses). After its first light_after moves a playout may
go on with the light tail's rules (tail_choose: moves outside the gradient), as the engine's
rollouts do. This module recomputes every weight at every move,
which is slow but simple: it serves training, not play. For a move a
chosen among the candidates b with probabilities pi(b),

    d log pi(a) / d theta_k = phi_k(a) - sum_b pi(b) phi_k(b)

where theta_k = log gamma_k and phi_k counts feature k in a move. The playout sums this over all
its moves (both colours share the gammas) into a trace; the gradient of V = P(Black wins) is
E[(z - baseline) * trace] (the likelihood-ratio estimate; an independent baseline lowers its
variance and keeps it unbiased). `param` maps each feature id to the index of the parameter that
holds it (rare patterns share their group's default; -1: not trained)."""
from libc.stdlib cimport malloc, free
from libc.string cimport memset
from libc.stdint cimport int16_t, int32_t, uint8_t, uint64_t
import numpy as np

from gammago.go.board cimport (board_t, Board, board_copy, board_play, board_is_legal, board_is_eye,
                            board_score, PASS, EMPTY, MAX_PTS)
from gammago.moves.features cimport rollout_features, team_gamma, NGROUPS, NFEAT
from gammago.core.rng cimport rng_t, rng_seed, rng_unit
from gammago.rollout.tail cimport tail_choose, tail_refused, TAIL_REFUSE
from gammago.rollout.gamma_policy import check_settings


cdef inline void _trace_add(const int32_t* f, const int32_t* param, double x, double* trace,
                            uint8_t* mark, int32_t* touched, int* ntouched) noexcept nogil:
    """Add x to the trace entry of every trained parameter among the move's features f,
    listing each in touched the first time."""
    cdef int g, pid
    for g in range(NGROUPS):
        pid = param[f[g]]
        if pid >= 0:
            if not mark[pid]:
                mark[pid] = 1
                touched[ntouched[0]] = pid
                ntouched[0] += 1
            trace[pid] += x


cdef double _playout(board_t* b, const double* gamma, const int32_t* param, rng_t* r,
                     int light_after, int tail, double* trace, uint8_t* mark, int32_t* touched,
                     int* ntouched, double* w, int32_t* ids, int16_t* pts) noexcept nogil:
    """Play b out with the gammas, adding every move's d log pi / d theta into trace (only the
    parameters marked in mark / listed in touched are non-zero; trace NULL: no gradient).
    light_after > 0: after that many moves the light tail plays (pyx/rollout/tail.pyx, with the rules
    of the rules word `tail`, as the engine's rollouts do); its moves add nothing to the trace,
    they do not depend on the gammas. Returns Black's result: 1 a win, 0.5 a jigo, 0 a loss."""
    cdef int maxmoves = 3 * b.size * b.size, nmoves = 0, c, i, j, k, n, p
    cdef double total, u, s
    cdef int32_t* f
    while b.npass < 2 and nmoves < maxmoves:
        c = b.to_move
        if light_after > 0 and nmoves >= light_after:
            p = tail_choose(b, r, tail)
            board_play(b, p, c)
            nmoves += 1
            continue
        n = 0
        total = 0
        for i in range(b.nempty):
            p = b.empty[i]
            if board_is_legal(b, p, c) and not board_is_eye(b, p, c) and not (
                    tail & TAIL_REFUSE and tail_refused(b, p, c, tail)):
                f = ids + n * NGROUPS
                rollout_features(b, p, c, f)
                w[n] = team_gamma(gamma, f)
                if w[n] > 0:
                    total += w[n]
                    pts[n] = <int16_t>p
                    n += 1
        if n == 0:
            board_play(b, PASS, c)
            nmoves += 1
            continue
        u = rng_unit(r) * total
        k = n - 1
        s = 0
        for j in range(n):
            s += w[j]
            if u < s:
                k = j
                break
        if trace == NULL:
            board_play(b, pts[k], c)
            nmoves += 1
            continue
        # phi(a) - sum_b pi(b) phi(b), into the trace
        for j in range(n):
            _trace_add(ids + j * NGROUPS, param, -w[j] / total, trace, mark, touched, ntouched)
        _trace_add(ids + k * NGROUPS, param, 1.0, trace, mark, touched, ntouched)
        board_play(b, pts[k], c)
        nmoves += 1
    s = board_score(b)
    return 1.0 if s > 0 else (0.0 if s < 0 else 0.5)


cdef int _tail(Board board, int light_after, tail) except -1:
    """The light tail's rules word: `tail` when given, else the engine's default for the
    board's size (gammago.rollout.settings.rollout_tail_for); with light_after, checked as the rollouts'
    settings are (rollout.check_settings)."""
    if tail is None:
        from gammago.rollout.settings import rollout_tail_for
        tail = rollout_tail_for(board.b.size)
    check_settings(light_after, tail)
    return tail


def gradient(Board board not None, const double[::1] gammas not None,
             const int32_t[::1] param not None, int nparams, int playouts,
             double baseline, unsigned long long seed=1, int light_after=0, tail=None):
    """`playouts` gamma playouts from `board` (the side to move is its to_move), to the end or,
    with light_after > 0, that many moves and then the light tail (its rules: the rules word
    `tail`, or the engine's default for the board's size when None).
    Returns (grad, mean_z): grad[k] = mean over the playouts of (z - baseline) * trace_k, an
    estimate of d P(Black wins) / d theta_k (theta = log gammas, parameter k as `param` maps
    them); mean_z the playouts' Black score. Releases the GIL while it plays."""
    if gammas.shape[0] != NFEAT or param.shape[0] != NFEAT:
        raise ValueError(f"gammas and param need {NFEAT} entries")
    if playouts < 1 or nparams < 1:
        raise ValueError("playouts and nparams must be >= 1")
    if np.asarray(param).max() >= nparams:
        raise ValueError(f"param holds an index not below nparams {nparams}")
    grad = np.zeros(nparams, dtype=np.float64)
    cdef double[::1] gv = grad
    cdef double* gr = &gv[0]
    cdef const double* gp = &gammas[0]
    cdef const int32_t* pp = &param[0]
    cdef int np_ = nparams
    cdef board_t* b = <board_t*>malloc(sizeof(board_t))
    cdef double* trace = <double*>malloc(nparams * sizeof(double))
    cdef uint8_t* mark = <uint8_t*>malloc(nparams)
    cdef int32_t* touched = <int32_t*>malloc(nparams * sizeof(int32_t))
    cdef double* w = <double*>malloc(MAX_PTS * sizeof(double))
    cdef int32_t* ids = <int32_t*>malloc(MAX_PTS * NGROUPS * sizeof(int32_t))
    cdef int16_t* pts = <int16_t*>malloc(MAX_PTS * sizeof(int16_t))
    cdef int i, t, ntouched, pid, n = playouts
    cdef double z, zsum = 0, base = baseline
    cdef rng_t r
    cdef int rules = _tail(board, light_after, tail)
    try:
        if not (b and trace and mark and touched and w and ids and pts):
            raise MemoryError()
        memset(trace, 0, nparams * sizeof(double))
        memset(mark, 0, nparams)
        rng_seed(&r, seed)
        with nogil:
            for i in range(n):
                board_copy(b, board.b)
                ntouched = 0
                z = _playout(b, gp, pp, &r, light_after, rules, trace, mark, touched,
                             &ntouched, w, ids, pts)
                zsum += z
                for t in range(ntouched):
                    pid = touched[t]
                    gr[pid] += (z - base) * trace[pid]
                    trace[pid] = 0
                    mark[pid] = 0
            for pid in range(np_):
                gr[pid] /= n
    finally:
        free(b)
        free(trace)
        free(mark)
        free(touched)
        free(w)
        free(ids)
        free(pts)
    return grad, zsum / n


def value(Board board not None, const double[::1] gammas not None, int playouts,
          unsigned long long seed=1, int light_after=0, tail=None):
    """Black's mean score over `playouts` playouts of this module's policy from `board` (the
    light tail after light_after moves when > 0, its rules as in gradient),
    without the gradient (the baseline and the fitted value of simulation balancing)."""
    if gammas.shape[0] != NFEAT:
        raise ValueError(f"gammas need {NFEAT} entries")
    if playouts < 1:
        raise ValueError("playouts must be >= 1")
    cdef const double* gp = &gammas[0]
    cdef board_t* b = <board_t*>malloc(sizeof(board_t))
    cdef double* w = <double*>malloc(MAX_PTS * sizeof(double))
    cdef int32_t* ids = <int32_t*>malloc(MAX_PTS * NGROUPS * sizeof(int32_t))
    cdef int16_t* pts = <int16_t*>malloc(MAX_PTS * sizeof(int16_t))
    cdef int i, n = playouts
    cdef double zsum = 0
    cdef rng_t r
    cdef int rules = _tail(board, light_after, tail)
    try:
        if not (b and w and ids and pts):
            raise MemoryError()
        rng_seed(&r, seed)
        with nogil:
            for i in range(n):
                board_copy(b, board.b)
                zsum += _playout(b, gp, NULL, &r, light_after, rules, NULL, NULL, NULL, NULL,
                                 w, ids, pts)
    finally:
        free(b)
        free(w)
        free(ids)
        free(pts)
    return zsum / n
