# The search tree's node storage (implementation: pyx/search/node_pool.pyx): a pool of nodes in chunks
# taken as the tree grows, from a budget trees may share; the children of a node are one
# contiguous block (by index), sorted by prior rating, so progressive widening opens a prefix
# of the block. What the nodes mean to a search is gammago/search/tree_state.pxd's.
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t, uint64_t

cdef enum:
    NODE_LEAF = 0        # not expanded (yet)
    NODE_EXPANDING = 1   # a thread is expanding it; the others treat it as a leaf
    NODE_EXPANDED = 2
    NODE_NOROOM = 3      # expansion failed: the pool is full

ctypedef struct node_t:
    int32_t visits       # descents through this node (in-flight ones count: the virtual loss)
    int32_t wins2        # 2 x wins (a jigo is 1) for the player who moved INTO this node
    float score          # sum of the playouts' final area differences (Black - White, no komi)
    float score_sq       # ... and of their squares: a node's mean score and its spread
    int32_t first        # pool index of the first child (valid when state == NODE_EXPANDED)
    float rating         # prior rating in [0, 1]: log-scaled, 1 for the best sibling (descent)
    int16_t move         # the move leading here (PASS = 0)
    int16_t nchildren
    int16_t nopen        # children open to selection (a prefix of the rating-sorted block)
    uint8_t state        # NODE_*
    uint8_t widening     # criticality widening: 1 while a thread picks the next child to open

# The pool grows in chunks of CHUNK_NODES nodes, malloc'd as the tree reaches them (node index
# i lives in chunk i >> CHUNK_BITS) and drawn from a budget_t that several trees may share (the
# engine's --max-memory), so the memory reserved never passes the budget. Each chunk carries
# the marks the in-place compaction of subtree reuse needs (pool_keep_subtree), so reuse takes
# no memory of its own.
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

ctypedef struct pool_t:
    chunk_t** chunks         # chunk k holds nodes k * CHUNK_NODES ..; NULL until reached
    budget_t* budget         # where chunks are drawn from (shared, or the pool's own)
    int32_t nchunks          # chunks held (atomic)
    int32_t cap              # nodes the tree may use (at most alloc)
    int32_t alloc            # nodes the chunk table can address (the pool's size at creation)
    int32_t top              # next free index (atomic)
    int full                 # set once an expansion was refused for want of room
    int fail_allocs          # test hook: this many allocations of the pool fail (Search.fail_allocs)

cdef inline node_t* pool_node(pool_t* p, int32_t i) noexcept nogil:
    """Node i of the pool (its chunk must exist: indices come from pool_alloc)."""
    return &p.chunks[i >> CHUNK_BITS].nodes[i & CHUNK_MASK]

cdef inline void node_init(node_t* n, int move, float rating) noexcept nogil:
    n.visits = 0
    n.wins2 = 0
    n.score = 0
    n.score_sq = 0
    n.first = -1
    n.rating = rating
    n.move = move
    n.nchildren = 0
    n.nopen = 0
    n.state = NODE_LEAF
    n.widening = 0

cdef inline int64_t chunks_for_nodes(int64_t nodes) noexcept nogil:
    """Chunks that hold `nodes` nodes (at least 1)."""
    cdef int64_t k = (nodes + CHUNK_MASK) >> CHUNK_BITS
    return k if k > 1 else 1

# a budget of `chunks` chunks, owned by its caller (refs 1); MemoryError when none is left
cdef budget_t* budget_new(int64_t chunks) except NULL
# drop one owner of b (GIL held); the last frees it
cdef void budget_drop(budget_t* b) noexcept
# a pool of at most max_nodes nodes drawing from `shared` (one more owner of it), or from a
# budget of its own when shared is NULL; its first chunk always held, whatever the budget says,
# and the root (node 0) alone in it. MemoryError when there is no memory for it
cdef int pool_init(pool_t* p, int32_t max_nodes, budget_t* shared) except -1
# every chunk back to the budget, the chunk table freed, the budget dropped (GIL held)
cdef void pool_free(pool_t* p) noexcept
# n contiguous nodes (their chunks made); -1 (and p.full set) when the pool has no room
cdef int32_t pool_alloc(pool_t* p, int n) noexcept nogil
# an empty tree (the root alone); the chunks but the first go back to the budget
cdef void pool_clear(pool_t* p) noexcept nogil
# the subtree of src's node r copied into dst (cleared) with r at index 0, as much of it as
# dst's cap and budget take (a node whose children do not fit becomes a leaf): the nodes used
cdef int32_t pool_copy_subtree(pool_t* src, int32_t r, pool_t* dst) noexcept nogil
# node r made the root in place, everything else dropped: 1; 2 when a chunk below the new top
# is missing (then r is copied over the root and its subtree stays where it is). No thread may
# be in the tree.
cdef int pool_keep_subtree(pool_t* p, int32_t r) noexcept nogil
