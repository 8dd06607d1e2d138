# The search loop (implementation: pyx/search/search_loop.pyx): the workers of a search, each with its
# board, seeded generator and rollout policy, running descents nogil until a playout cap, a
# deadline or a stop.
from libc.stdint cimport int64_t, uint64_t
from gammago.search.tree_state cimport tree_t, worker_t, rollout_maker_t

# seconds on the monotonic clock (tree_t.deadline's)
cdef double now_seconds() noexcept nogil
# the light (uniform) rollouts as a rollout maker (nothing to make or release)
cdef void maker_light(rollout_maker_t* m) noexcept nogil
# `threads` workers for t (its old ones released first), worker i seeded with seeds[i] and
# given a rollout policy by m: 0; 1 out of memory, 2 a policy could not be made (then none
# is left held)
cdef int workers_new(tree_t* t, rollout_maker_t* m, int threads,
                     const uint64_t* seeds) noexcept nogil
# the workers released (their policies through m, which made them)
cdef void workers_free(tree_t* t, rollout_maker_t* m) noexcept nogil
# a new search on t's workers: criticality zeroed, the stop cleared, max_playouts in all
# (0: no cap) or `seconds` from now (0: no limit), the root may not pass (no_pass), the
# root expanded
cdef void search_start(tree_t* t, int64_t max_playouts, double seconds, bint no_pass) noexcept nogil
# run worker w until the search ends, or for at most n playouts (n >= 0)
cdef void search_work(tree_t* t, worker_t* w, int64_t n) noexcept nogil
