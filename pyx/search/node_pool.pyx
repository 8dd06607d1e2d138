# cython: language_level=3, boundscheck=False, wraparound=False, cdivision=True, initializedcheck=False
"""The search tree's node storage (declarations: gammago/search/node_pool.pxd): chunks drawn from a
budget as the tree grows, and subtree reuse in place (or by copy into another tree). Threads
share a pool: a chunk is published by compare-and-swap, the next free index moves by an atomic
add."""
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset
from libc.stdint cimport int64_t, int32_t, uint64_t
from gammago.go.board cimport PASS
from gammago.core.atomic cimport gg_add32, gg_add64, gg_loadi, gg_storei, gg_loadp, gg_casp

cdef extern from *:
    int popcount64 "__builtin_popcountll"(unsigned long long) nogil
    int ctz64 "__builtin_ctzll"(unsigned long long) nogil

# ---------------------------------------------------------------------------------------------
# Budgets and chunks
# ---------------------------------------------------------------------------------------------
cdef budget_t* budget_new(int64_t chunks) except NULL:
    cdef budget_t* b = <budget_t*>calloc(1, sizeof(budget_t))
    if b == NULL:
        raise MemoryError()
    b.limit = chunks
    b.refs = 1
    return b

cdef void budget_drop(budget_t* b) noexcept:
    b.refs -= 1
    if b.refs == 0:
        free(b)

cdef inline bint _fail_alloc(pool_t* t) noexcept nogil:
    """Test hook (Search.fail_allocs): True while allocations of the pool are to fail."""
    if t.fail_allocs > 0:
        t.fail_allocs -= 1
        return 1
    return 0

cdef int _chunk_ensure(pool_t* t, int32_t k) noexcept nogil:
    """Make chunk k exist: drawn from the budget and malloc'd by whichever thread gets there
    first (a compare-and-swap publishes it). 0 when the table, the budget or malloc says no."""
    cdef chunk_t* c
    if k >= (t.alloc + CHUNK_MASK) >> CHUNK_BITS:
        return 0
    if gg_loadp(<void**>&t.chunks[k]) != NULL:
        return 1
    if gg_add64(&t.budget.used, 1) >= t.budget.limit:
        gg_add64(&t.budget.used, -1)
        return 0
    c = NULL if _fail_alloc(t) else <chunk_t*>malloc(sizeof(chunk_t))
    if c == NULL:
        gg_add64(&t.budget.used, -1)
        return 0
    if gg_casp(<void**>&t.chunks[k], <void*>c):
        gg_add32(&t.nchunks, 1)
    else:                        # another thread made it meanwhile
        free(c)
        gg_add64(&t.budget.used, -1)
    return 1

cdef void _chunks_release(pool_t* t, int32_t from_k) noexcept nogil:
    """Free chunks from_k.. and give them back to the budget (no thread may be in the tree)."""
    cdef int32_t k
    for k in range(from_k, (t.alloc + CHUNK_MASK) >> CHUNK_BITS):
        if t.chunks[k] != NULL:
            free(t.chunks[k])
            t.chunks[k] = NULL
            t.nchunks -= 1
            gg_add64(&t.budget.used, -1)

# ---------------------------------------------------------------------------------------------
# The pool
# ---------------------------------------------------------------------------------------------
cdef int pool_init(pool_t* t, int32_t max_nodes, budget_t* shared) except -1:
    memset(t, 0, sizeof(pool_t))
    if shared == NULL:
        t.budget = budget_new(chunks_for_nodes(max_nodes))
    else:
        t.budget = shared
        t.budget.refs += 1
    t.cap = max_nodes
    t.alloc = max_nodes
    t.chunks = <chunk_t**>calloc(chunks_for_nodes(max_nodes), sizeof(chunk_t*))
    if t.chunks == NULL:
        raise MemoryError(f"no memory for a tree of {max_nodes} nodes")
    # the first chunk (the root's) is always held, whatever the budget says
    t.chunks[0] = <chunk_t*>malloc(sizeof(chunk_t))
    if t.chunks[0] == NULL:
        raise MemoryError("no memory for the first chunk of a tree")
    t.nchunks = 1
    t.budget.used += 1
    pool_clear(t)
    return 0

cdef void pool_free(pool_t* t) noexcept:
    if t.chunks != NULL:
        _chunks_release(t, 0)
        free(t.chunks)
        t.chunks = NULL
    if t.budget != NULL:
        budget_drop(t.budget)
        t.budget = NULL

cdef int32_t pool_alloc(pool_t* t, int n) noexcept nogil:
    cdef int32_t first
    if gg_loadi(&t.full):
        return -1
    first = gg_add32(&t.top, n)
    if (first + n > t.cap or not _chunk_ensure(t, first >> CHUNK_BITS)
            or not _chunk_ensure(t, (first + n - 1) >> CHUNK_BITS)):
        gg_storei(&t.full, 1)
        return -1
    return first

cdef void pool_clear(pool_t* t) noexcept nogil:
    _chunks_release(t, 1)
    t.top = 1
    t.full = 0
    node_init(pool_node(t, 0), PASS, 1.0)

# ---------------------------------------------------------------------------------------------
# Subtree reuse
# ---------------------------------------------------------------------------------------------
cdef inline void _as_leaf(node_t* nd) noexcept nogil:
    """A node kept without its children (expanded again when next visited)."""
    nd.state = NODE_LEAF
    nd.first = -1
    nd.nchildren = 0
    nd.nopen = 0

cdef int32_t pool_copy_subtree(pool_t* src, int32_t r, pool_t* dst) noexcept nogil:
    """Children blocks are kept contiguous, in breadth-first order; a node keeps its statistics
    when it becomes a leaf."""
    cdef int32_t top = 1, i = 0, n, k
    cdef node_t* d
    pool_node(dst, 0)[0] = pool_node(src, r)[0]
    while i < top:
        d = pool_node(dst, i)
        n = d.nchildren
        if (d.state == NODE_EXPANDED and top + n <= dst.cap
                and _chunk_ensure(dst, top >> CHUNK_BITS)
                and _chunk_ensure(dst, (top + n - 1) >> CHUNK_BITS)):
            for k in range(n):
                pool_node(dst, top + k)[0] = pool_node(src, d.first + k)[0]
            d.first = top
            top += n
        else:
            _as_leaf(d)
        d.widening = 0
        i += 1
    return top

cdef inline void _mark(pool_t* t, int32_t i) noexcept nogil:
    t.chunks[i >> CHUNK_BITS].live[(i & CHUNK_MASK) >> 6] |= (<uint64_t>1) << (i & 63)

cdef inline int32_t _next_marked(pool_t* t, int32_t i, int32_t end) noexcept nogil:
    """The first marked node at index >= i (end when none before end)."""
    cdef chunk_t* c
    cdef uint64_t word
    while i < end:
        c = t.chunks[i >> CHUNK_BITS]
        if c == NULL:
            i = ((i >> CHUNK_BITS) + 1) << CHUNK_BITS
            continue
        word = c.live[(i & CHUNK_MASK) >> 6] >> (i & 63)
        if word == 0:
            i = (i | 63) + 1
            continue
        return i + ctz64(word)
    return end

cdef inline int32_t _new_index(pool_t* t, int32_t i) noexcept nogil:
    """Where marked node i goes: the marked nodes before it (chunk_t.rank and the word's bits)."""
    cdef chunk_t* c = t.chunks[i >> CHUNK_BITS]
    cdef int w = (i & CHUNK_MASK) >> 6
    return c.rank[w] + popcount64(c.live[w] & (((<uint64_t>1) << (i & 63)) - 1))

cdef int pool_keep_subtree(pool_t* t, int32_t r) noexcept nogil:
    """Mark r's subtree (a node's children always lie above it in the pool, so one upward sweep
    finds them all), then slide the marked nodes down in order (each block of children stays
    contiguous; r, the lowest, lands at 0), and give the chunks no longer needed back to the
    budget. Takes no memory."""
    cdef int32_t end = t.top, i, j, n, k, nk
    cdef int32_t kept = 0
    cdef int w
    cdef node_t tmp
    cdef node_t* nd
    if end > t.cap:
        end = t.cap
    nk = (end + CHUNK_MASK) >> CHUNK_BITS
    for k in range(nk):
        if t.chunks[k] != NULL:
            memset(t.chunks[k].live, 0, sizeof(t.chunks[k].live))
    _mark(t, r)
    i = _next_marked(t, r, end)
    while i < end:
        nd = pool_node(t, i)
        if nd.state == NODE_EXPANDED:
            for j in range(nd.first, nd.first + nd.nchildren):
                _mark(t, j)
        i = _next_marked(t, i + 1, end)
    for k in range(nk):
        if t.chunks[k] != NULL:
            for w in range(CHUNK_WORDS):
                t.chunks[k].rank[w] = kept
                kept += popcount64(t.chunks[k].live[w])
    for k in range(((kept - 1) >> CHUNK_BITS) + 1):
        if t.chunks[k] == NULL:
            tmp = pool_node(t, r)[0]
            pool_node(t, 0)[0] = tmp
            nd = pool_node(t, 0)
            if nd.state != NODE_EXPANDED:
                _as_leaf(nd)
            nd.widening = 0
            return 2
    i = _next_marked(t, r, end)
    while i < end:
        tmp = pool_node(t, i)[0]
        if tmp.state == NODE_EXPANDED:
            tmp.first = _new_index(t, tmp.first)
        else:
            _as_leaf(&tmp)
        tmp.widening = 0
        pool_node(t, _new_index(t, i))[0] = tmp
        i = _next_marked(t, i + 1, end)
    t.top = kept
    t.full = 0
    _chunks_release(t, ((kept - 1) >> CHUNK_BITS) + 1)
    return 1
