# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The search loop (declarations: gammago/search/search_loop.pxd): the workers and their runs. The
Python edge (pyx/search/tree.pyx, Search.prepare and work) starts a search and runs each worker on a
thread of its own."""
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from libc.stdint cimport int64_t, uint64_t
from posix.time cimport clock_gettime, timespec, CLOCK_MONOTONIC
from gammago.go.board cimport board_t
from gammago.rollout.playout cimport policy_t, policy_light
from gammago.core.rng cimport rng_seed
from gammago.core.atomic cimport gg_add64, gg_loadi, gg_storei
from gammago.search.node_pool cimport NODE_LEAF, NODE_EXPANDED
from gammago.search.tree_state cimport ND
from gammago.search.descent cimport descend, expand_node

cdef double now_seconds() noexcept nogil:
    cdef timespec ts
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return ts.tv_sec + ts.tv_nsec * 1e-9

# ---------------------------------------------------------------------------------------------
# The workers
# ---------------------------------------------------------------------------------------------
cdef int _light_make(void* arg, policy_t* pol) noexcept nogil:
    policy_light(pol)
    return 1

cdef void _no_release(void* arg, policy_t* pol) noexcept nogil:
    pass

cdef void maker_light(rollout_maker_t* m) noexcept nogil:
    m.arg = NULL
    m.make = _light_make
    m.release = _no_release

cdef void workers_free(tree_t* t, rollout_maker_t* m) noexcept nogil:
    cdef int i
    if t.workers != NULL:
        for i in range(t.nworkers):
            if t.workers[i].has_pol:
                m.release(m.arg, &t.workers[i].pol)
            free(t.workers[i].b)
        free(t.workers)
    t.workers = NULL
    t.nworkers = 0

cdef int workers_new(tree_t* t, rollout_maker_t* m, int threads,
                     const uint64_t* seeds) noexcept nogil:
    cdef int i
    workers_free(t, m)
    t.workers = <worker_t*>calloc(threads, sizeof(worker_t))
    if t.workers == NULL:
        return 1
    t.nworkers = threads
    for i in range(threads):
        t.workers[i].b = <board_t*>malloc(sizeof(board_t))
        if t.workers[i].b == NULL:
            workers_free(t, m)
            return 1
        rng_seed(&t.workers[i].rng, seeds[i])
        if not m.make(m.arg, &t.workers[i].pol):
            workers_free(t, m)
            return 2
        t.workers[i].has_pol = 1
    return 0

# ---------------------------------------------------------------------------------------------
# A search
# ---------------------------------------------------------------------------------------------
cdef void search_start(tree_t* t, int64_t max_playouts, double seconds,
                       bint no_pass) noexcept nogil:
    # criticality statistics belong to one search (calloc zeroed the workers' counters)
    memset(t.crit, 0, sizeof(t.crit))
    t.root_no_pass = no_pass
    t.stop = 0
    # a tree refused room by a shared budget may find some now (other trees freed theirs)
    if t.pool.top < t.pool.cap:
        t.pool.full = 0
    t.issued = 0
    t.max_playouts = max_playouts
    t.deadline = (now_seconds() + seconds) if seconds > 0 else 0
    # the root is always open
    if ND(t, 0).state != NODE_EXPANDED:
        ND(t, 0).state = NODE_LEAF
        expand_node(t, 0, t.root, 0)

cdef void search_work(tree_t* t, worker_t* w, int64_t n) noexcept nogil:
    cdef int64_t k
    cdef int64_t tick = 0
    while not gg_loadi(&t.stop) and (n < 0 or tick < n):
        if t.max_playouts > 0:
            k = gg_add64(&t.issued, 1)
            if k >= t.max_playouts:
                break
        descend(t, w)
        tick += 1
        if t.deadline > 0 and (tick & 7) == 0 and now_seconds() >= t.deadline:
            gg_storei(&t.stop, 1)
            break
