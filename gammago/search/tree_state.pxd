# The state of one UCT search (no .pyx: declarations only), shared by the parts of the search,
# which are split after Pachi's uct/:
#   pyx/node_pool    - the node storage (gammago/search/node_pool.pxd)
#   pyx/selection    - which child a descent takes: progressive widening (in rating order, or
#                      by rating + criticality) and UCB1-Tuned plus a prior-rating bonus over
#                      the children opened so far; the criticality statistics
#   pyx/descent      - one playout: walk from the root by the selection, expand (the children
#                      rated by the prior hook), roll out, back up
#   pyx/search_loop  - the workers running descents nogil until a playout cap, a deadline or a
#                      stop
#   pyx/tree         - the Python edge: Search (configuration, root, runs, results) and
#                      NodeBudget
# Priors and rollouts come in through hooks (prior_t here, policy_t of playout.pxd) so the tree
# works with whatever rating and rollout policy it is given.
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t
from gammago.go.board cimport board_t, MAX_PTS
from gammago.rollout.playout cimport policy_t
from gammago.core.rng cimport rng_t
from gammago.search.node_pool cimport node_t, pool_t, pool_node

cdef enum:
    MAX_DEPTH = 1024     # deepest tree path a descent follows

# Prior ratings of candidate moves: out[i] >= 0 for moves[i] (PASS included), played by c on b.
ctypedef struct prior_t:
    void* ctx
    void (*rate)(void* ctx, const board_t* b, int c, const int16_t* moves, int n,
                 float* out) noexcept nogil

# A rollout policy for one worker thread: make() fills pol (returns 0 on failure), free() undoes it.
ctypedef struct rollout_maker_t:
    void* arg
    int (*make)(void* arg, policy_t* pol) noexcept nogil
    void (*release)(void* arg, policy_t* pol) noexcept nogil

ctypedef struct params_t:
    int expand_visits        # a leaf is expanded once it has this many visits
    int pw_init              # children open at expansion
    double pw_base           # widening schedule t_{n+1} = t_n + pw_base * pw_factor**n
    double pw_factor
    double ucb_c             # weight of the UCB1-Tuned exploration term
    double bonus_weight      # rating bonus bonus_weight * sqrt(bonus_equiv / (N + bonus_equiv)) * rating
    double bonus_equiv
    double fpu               # value of a child never visited (before its rating bonus)
    double crit              # progressive widening opens the unopened child with the highest
                             # rating + crit * criticality of its point (0: rating order)
    int mercy                # a rollout ends, won by the side ahead, once one side has taken more
                             # than this many stones beyond the other since the root (0: never)

ctypedef struct worker_t:
    board_t* b               # the descent board (a copy of the root's, then moves)
    rng_t rng
    policy_t pol
    int has_pol
    int64_t playouts
    int maxdepth
    int32_t path[MAX_DEPTH + 1]
    uint8_t mover[MAX_DEPTH + 1]
    int32_t own[MAX_PTS]     # sum over this worker's playouts: +1 Black owns, -1 White owns
    int64_t own_n            # ... over these: the playouts played out (not ended by the mercy rule)
    int32_t own_none[MAX_PTS]  # ... of which the point was owned by neither side (dame)
    double score_sq          # ... and the sum of their area differences' squares (Black - White,
                             # komi aside; the differences' sum is own's)
    # criticality (Coulom 2009), gathered when params_t.crit > 0: over this worker's playouts,
    # how often Black / White owned each point at the end, 2 x how often the winner owned it
    # (a jigo counts 1 for an owned point), and 2 x Black's wins
    int32_t crit_black[MAX_PTS]
    int32_t crit_white[MAX_PTS]
    int32_t crit_winner2[MAX_PTS]
    int64_t crit_bwins2      # (their count is own_n)

ctypedef struct tree_t:
    pool_t pool              # the nodes (index 0: the root)
    board_t* root            # the position at the root
    params_t prm
    prior_t prior
    double pw[MAX_PTS + 2]   # pw[k]: parent visits from which child k is open
    int root_no_pass         # the root may not choose PASS (cleanup mode)
    int stop                 # set to end the search (read by workers every playout)
    int64_t max_playouts     # 0: no cap
    int64_t issued           # playouts started in this search (atomic)
    double deadline          # monotonic seconds; 0: none
    # criticality of each point over all workers' playouts of this search (params_t.crit):
    # P(the winner owns p) - (P(Black owns p) P(Black wins) + P(White owns p) P(White wins)),
    # clipped at 0; refreshed every CRIT_EVERY playouts of a worker, zero before CRIT_MIN
    # (pyx/selection)
    float crit[MAX_PTS]
    worker_t* workers        # the workers of the current search (search_loop's workers_new)
    int nworkers
    # moves kept out of the tree (Search.set_avoid: lz-analyze's avoid / allow): a move p of
    # colour c is left out of a node's children while its ply is <= avoid[c][p], the ply of the
    # root's children being avoid_base + 1 (PASS = 0 too)
    uint8_t avoid[3][MAX_PTS]
    int has_avoid
    int avoid_base

cdef inline node_t* ND(tree_t* t, int32_t i) noexcept nogil:
    """Node i of the tree (pool_node of its pool)."""
    return pool_node(&t.pool, i)
