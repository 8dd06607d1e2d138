# Prior ratings of candidate moves (implementation: pyx/search/prior.pyx), for the tree's prior_t hook
# (gammago/search/tree_state.pxd): out[i] >= 0 for moves[i] (PASS included), played by c on b.
from libc.stdint cimport int16_t
from gammago.go.board cimport board_t

# captures, escapes, self-atari, nearness to the last move and the edge, by hand-set factors
cdef void prior_cheap(void* ctx, const board_t* b, int c, const int16_t* moves, int n,
                      float* out) noexcept nogil
# the product of the move's feature gammas; ctx is the gamma table (const double*, NFEAT)
cdef void prior_gamma(void* ctx, const board_t* b, int c, const int16_t* moves, int n,
                      float* out) noexcept nogil
# the same for a table whose groups the rollouts do not weigh are all 1 (rollout_features)
cdef void prior_gamma_rollout(void* ctx, const board_t* b, int c, const int16_t* moves, int n,
                              float* out) noexcept nogil
# on top of any rating: an escape from atari that is still captured is rated down 4 decades,
# an atari whose string then dies (a working ladder) up 4 times (read by pyx/tactics)
cdef void prior_ladders(const board_t* b, int c, const int16_t* moves, int n, float* r) noexcept nogil
