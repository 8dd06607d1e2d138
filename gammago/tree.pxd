# The search tree (implementation: pyx/tree.pyx), kept in four parts after Pachi's uct/:
#   storage  - a pool of nodes in chunks taken as the tree grows, from a budget trees may share; the
#              children of a node are one contiguous block (by index), sorted by prior rating, so
#              progressive widening opens a prefix of the block
#   descent  - one playout: walk from the root by the selection policy, expand, roll out, back up
#   policy   - UCB1-Tuned plus a prior-rating bonus, over the children opened so far
#   search   - worker threads running descents nogil until a playout cap, a deadline or a stop
# Priors and rollouts come in through hooks (prior_t here, policy_t of playout.pxd) so the tree
# works with whatever rating and rollout policy it is given.
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t, uint64_t
from gammago.board cimport board_t, MAX_PTS
from gammago.playout cimport policy_t
from gammago.rng cimport rng_t
from gammago.rollout cimport gamma_policy_t

cdef enum:
    NODE_LEAF = 0        # not expanded (yet)
    NODE_EXPANDING = 1   # a thread is expanding it; the others treat it as a leaf
    NODE_EXPANDED = 2
    NODE_NOROOM = 3      # expansion failed: the pool is full
    MAX_DEPTH = 1024     # deepest tree path a descent follows

ctypedef struct node_t:
    int32_t visits       # descents through this node (in-flight ones count: the virtual loss)
    int32_t wins2        # 2 x wins (a jigo is 1) for the player who moved INTO this node
    int32_t first        # pool index of the first child (valid when state == NODE_EXPANDED)
    float rating         # prior rating in [0, 1]: log-scaled, 1 for the best sibling (_rating)
    int16_t move         # the move leading here (PASS = 0)
    int16_t nchildren
    int16_t nopen        # children open to selection (a prefix of the rating-sorted block)
    uint8_t state        # NODE_*
    uint8_t widening     # criticality widening: 1 while a thread picks the next child to open

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

# The pool grows in chunks of CHUNK_NODES nodes, malloc'd as the tree reaches them (node index
# i lives in chunk i >> CHUNK_BITS) and drawn from a budget_t that several trees may share (the
# engine's --max-memory), so the memory reserved never passes the budget. Each chunk carries
# the marks the in-place compaction of subtree reuse needs (_keep_subtree), so reuse takes no
# memory of its own.
cdef enum:
    CHUNK_BITS = 14
    CHUNK_NODES = 16384      # 1 << CHUNK_BITS: 512 KiB of nodes
    CHUNK_MASK = 16383
    CHUNK_WORDS = 256        # CHUNK_NODES / 64

ctypedef struct chunk_t:
    node_t nodes[CHUNK_NODES]
    uint64_t live[CHUNK_WORDS]   # reuse: the nodes of the kept subtree (one bit each)
    int32_t rank[CHUNK_WORDS]    # reuse: kept nodes before each word (their new indices)

ctypedef struct budget_t:
    int64_t limit            # chunks the trees sharing this budget may hold together
    int64_t used             # chunks they hold (atomic)
    int64_t refs             # owners: the NodeBudget object and each tree using it (GIL held)

ctypedef struct tree_t:
    chunk_t** chunks         # chunk k holds nodes k * CHUNK_NODES ..; NULL until reached
    budget_t* budget         # where chunks are drawn from (shared, or the tree's own)
    int32_t nchunks          # chunks held (atomic)
    int32_t cap              # nodes the tree may use (at most alloc)
    int32_t alloc            # nodes the chunk table can address (the pool's size at creation)
    int32_t top              # next free index (atomic)
    int full                 # set once an expansion was refused for want of room
    board_t* root            # the position at the root (index 0 of the pool)
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
    float crit[MAX_PTS]
    worker_t* workers
    int nworkers
    int fail_allocs          # test hook: this many allocations of the tree fail (Search.fail_allocs)
    # moves kept out of the tree (Search.set_avoid: lz-analyze's avoid / allow): a move p of
    # colour c is left out of a node's children while its ply is <= avoid[c][p], the ply of the
    # root's children being avoid_base + 1 (PASS = 0 too)
    uint8_t avoid[3][MAX_PTS]
    int has_avoid
    int avoid_base
