# Which child a descent takes (implementation: pyx/search/selection.pyx): progressive widening opens
# children in rating order, or by rating + criticality; UCB1-Tuned plus the rating bonus picks
# among the open ones. The criticality statistics (Coulom 2009) are gathered here too.
from libc.stdint cimport int32_t, uint8_t
from gammago.go.board cimport board_t
from gammago.search.node_pool cimport node_t
from gammago.search.tree_state cimport tree_t, worker_t

cdef enum:
    CRIT_EVERY = 128     # a worker refreshes tree_t.crit after this many of its playouts
    CRIT_MIN = 256       # playouts (all workers) before criticality is trusted

# the child of nd (expanded) a descent takes: the next children opened as nd's visits pass
# the widening schedule, then the best of the open ones by UCB1-Tuned + the rating bonus
# (at_root with root_no_pass: never PASS). Returns its pool index.
cdef int32_t select_child(tree_t* t, node_t* nd, bint at_root) noexcept nogil
# child k of nd made the best by rating + crit * criticality among children k.. (the next to
# open; an expansion opens its first children so)
cdef void crit_open_next(tree_t* t, node_t* nd, int k) noexcept nogil
# one playout's final owners (owner: board_area's) and result (res2: 2 Black won, 1 jigo, 0
# White won) counted into w's criticality statistics
cdef void crit_gather(worker_t* w, const board_t* b, const uint8_t* owner, int res2) noexcept nogil
# tree_t.crit from the sum of every worker's statistics (left as it is before CRIT_MIN)
cdef void crit_refresh(tree_t* t) noexcept nogil
