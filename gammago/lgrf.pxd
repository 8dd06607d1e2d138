# LGRF-2 for the rollouts (implementation: pyx/lgrf.pyx).
from libc.stdint cimport int64_t, int16_t, uint8_t
from gammago.board cimport board_t
from gammago.playout cimport policy_t
from gammago.rollout cimport gamma_policy_t

# LGRF-2 (Baier & Drake, "The Power of Forgetting", IEEE TCIAIG 2010): a policy_t that wraps a
# worker's rollout policy. Reply tables (shared by the tree's threads, owned by tree_t):
#   r1[(c-1)*npts + prev]                 the reply of colour c to the previous move prev
#   r2[((c-1)*npts + prev2)*npts + prev]  ... to the previous two moves prev2, prev
# PASS (0) means no entry; keys and replies are never PASS. Before asking the inner policy,
# choose() plays the r2 reply, else the r1 reply, when it is empty, legal (simple ko, no suicide),
# not an own true eye and no self-atari, unless the last move is in atari or put a string of the
# side to move in atari (then the policy answers: it rates captures and escapes). played() passes every move to the inner policy; for the gamma policy
# a move the inner policy did not choose is announced first by gamma_policy_premove, so its
# incremental weights stay exact.
ctypedef struct lgrf_t:
    policy_t inner
    gamma_policy_t* gamma    # inner.ctx when the inner policy is the gamma policy, else NULL
    int16_t* r1              # the tree's tables (refreshed at every descent)
    int16_t* r2
    int npts
    int64_t hits1            # rollout moves taken from r1 / r2, and all rollout moves chosen
    int64_t hits2
    int64_t moves
    int check                # debug: verify every move chosen (and the gamma weights)
    int64_t bad              # ... moves that were illegal, occupied or own eyes / weight errors

# index in the 1-move reply table (2 x n): colour c's reply to prev
cdef inline int64_t lgrf_lg1(int n, int c, int prev) noexcept nogil:
    return (c - 1) * <int64_t>n + prev

# index in the 2-move reply table (2 x n x n): colour c's reply to prev2 then prev
cdef inline int64_t lgrf_lg2(int n, int c, int prev2, int prev) noexcept nogil:
    return ((c - 1) * <int64_t>n + prev2) * n + prev

# make `wrapper` the LGRF policy around `inner` (gamma: inner's context when it is the gamma
# policy, else NULL); the reply tables are set by the tree before each descent (g.r1, g.r2)
cdef void lgrf_wrap(lgrf_t* g, policy_t* wrapper, policy_t* inner, gamma_policy_t* gamma) noexcept nogil
# learn from one playout's moves mv[0..nmv) (colours col) from index start on: the winner's
# replies are stored, the loser's forgotten; res2: 2 Black won, 0 White won, 1 jigo (no update)
cdef void lgrf_update(int16_t* r1, int16_t* r2, int n, const int16_t* mv, const uint8_t* col,
                      int nmv, int start, int res2) noexcept nogil
