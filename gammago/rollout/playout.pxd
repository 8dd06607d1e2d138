# The playout policy seam (after Pachi's playout.h): a policy is a context plus three functions,
# and the playout loop knows nothing else about it. Light (uniform) and gamma policies both
# sit behind it.
from libc.stdint cimport uint8_t, int16_t
from gammago.go.board cimport board_t, Board
from gammago.core.rng cimport rng_t

ctypedef struct policy_t:
    void* ctx
    # a playout starts on board b (a private copy the policy may keep pointers into)
    void (*setboard)(void* ctx, board_t* b) noexcept nogil
    # the next move for b.to_move: a legal point, never an own true eye; PASS when none is left
    int (*choose)(void* ctx, board_t* b, rng_t* r) noexcept nogil
    # called after board_play(b, move, ...) so the policy can update what it keeps
    void (*played)(void* ctx, board_t* b, int move) noexcept nogil

cdef void policy_light(policy_t* pol) noexcept nogil
# the light policy's choice for b.to_move (ctx unused): uniform over legal non-eye points, PASS
# when none is left; no state, so any policy may hand a move over to it
cdef int light_choose(void* ctx, board_t* b, rng_t* r) noexcept nogil
cdef int playout_run(board_t* b, policy_t* pol, rng_t* r, int maxmoves) noexcept nogil
# playout_run with a mercy rule (Pachi's, libego's): it also stops once one side has taken more
# than `mercy` stones beyond the other since the root (whose lead, White stones taken less Black
# ones, is `base`), and sets *winner to that side (BLACK or WHITE; 0 when it played out)
cdef int playout_run_mercy(board_t* b, policy_t* pol, rng_t* r, int maxmoves, int mercy,
                           int base, int* winner) noexcept nogil
cdef int playout_default_maxmoves(const board_t* b) noexcept nogil
cdef void mc_evaluate(const board_t* start, policy_t* pol, rng_t* r, int n,
                      double* black_wins, double* owner_black, long* moves, int mercy,
                      long* owned) noexcept nogil

# n playouts with pol from the empty board of `size`, timed around the nogil loop:
# (seconds, total moves). The one timing loop behind every playout bench.
cdef object bench_policy(int size, policy_t* pol, int n, unsigned long long seed)

# n playouts with pol from board: {'black_winrate', 'ownership' (size x size, +1 Black ..
# -1 White, over the playouts played out), 'moves', 'owned' (those playouts)}; mercy > 0: the
# mercy rule (playout_run_mercy). The one Python-facing Monte-Carlo evaluation behind every policy.
cdef object evaluate_policy(Board board, policy_t* pol, int n, unsigned long long seed,
                            int mercy=*)
