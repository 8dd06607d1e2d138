# One playout of the search (implementation: pyx/search/descent.pyx): walk from the root by the
# selection (gammago/search/selection.pxd), expand a leaf with enough visits, roll out with the
# worker's policy, score, back up.
from libc.stdint cimport int32_t
from gammago.go.board cimport board_t
from gammago.search.tree_state cimport tree_t, worker_t

# give node idx (whose position is b, `depth` plies below the root) its children: every legal
# move (positional superko) that does not fill an own eye and is not avoided there
# (Search.set_avoid), plus PASS (unless avoided while another move is left), sorted by prior
# rating; its first params_t.pw_init open. 1 on success; 0 when another thread expands it or
# the pool has no room (the node is then NODE_NOROOM)
cdef int expand_node(tree_t* t, int32_t idx, const board_t* b, int depth) noexcept nogil
# one playout by worker w: descend from the root (the visit added on the way down is the
# virtual loss), expand, roll out, add the result along the path and to w's ownership and
# criticality counts
cdef void descend(tree_t* t, worker_t* w) noexcept nogil
