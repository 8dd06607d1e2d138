# The gamma sampler (implementation: pyx/rollout/gamma_sampler.pyx; its Python edge, GammaPolicy, is
# pyx/rollout/gamma_policy.pyx): a playout policy behind policy_t that plays each move with probability
# proportional to the product of the gammas of its features (the features of
# gammago/moves/features.pxd, the same code as training), kept up to date incrementally.
#
# Weights. For colour c and empty point p, base[c][p] is the product of the gammas of every
# feature group except the two distance groups (0 for an illegal move, simple ko, or c's own
# true eye). The distance factor f(p) = g1(d(p, last)) * g2(d(p, last2)) changes for most points
# every move, so it is never stored: the near set A (points within Coulom distance near_d of the
# last or second-last move) gets its full weights base * f computed explicitly each move; a point
# outside A is proposed from row r with weight base * bound[r] (bound[r]: the largest distance
# factor of a far point in row r, from tables by the rows of the last two moves) and accepted with
# probability f / bound[r]; a proposal that lands in A fails. Exact, O(|A| + rows) a move. In
# the rows near the last move a window of columns around it gets its own bound and the rest of
# the row a much smaller one (fw1 / fo1), which cuts rejected proposals by about 30%.
#
# Laziness. A colour's base weights are brought up to date only when it is to move: each move
# marks the points whose features it may have changed (for both colours), and choose() flushes
# the list of the side to move. gamma_policy_check() compares every stored weight with a
# from-scratch recomputation (move_features).
#
# Pass: the policy passes only when no point has a positive weight (the trained pass feature is
# for real games, not playouts).
from libc.stdint cimport int16_t, uint8_t, uint16_t, uint32_t, uint64_t
from gammago.go.board cimport board_t, MAX_PTS, MAX_W, MAX_SIZE
from gammago.rollout.playout cimport policy_t
from gammago.core.rng cimport rng_t

cdef enum:
    DX_W = 2 * MAX_SIZE - 1  # signed row / column offsets -(MAX_SIZE-1) .. MAX_SIZE-1
    DX_C = (MAX_SIZE - 1) * DX_W + MAX_SIZE - 1   # the index of offset (0, 0)
    NEAR_MAX_OFFS = 512      # offsets of a near set (Coulom distance <= near_d, near_d <= 17)
    GP_MAX_ATTEMPTS = 1000   # rejection attempts before an exact O(points) draw

ctypedef struct gamma_policy_t:
    const double* gamma      # the gamma table (NFEAT doubles); owned by the caller
    const uint16_t* pat3     # features' pat3_table()
    int near_d               # Coulom radius of the near set
    # board geometry (set when a board of another size arrives)
    double gd1[MAX_SIZE * MAX_SIZE]   # gamma of G_DIST1 by |drow| * MAX_SIZE + |dcol| (feat_dist)
    double gd2[MAX_SIZE * MAX_SIZE]   # the same for G_DIST2
    # the same gammas by signed offset: gx1[DX_C + dpos[p] - dpos[q]] = gd1[_dindex(p, q)]
    # (dpos[p] = row * DX_W + col), read without abs() or branches; ones: the factor of a
    # distance group whose move was a pass
    double gx1[DX_W * DX_W]
    double gx2[DX_W * DX_W]
    double ones[DX_W * DX_W]
    int16_t dpos[MAX_PTS]
    double mf1               # max of gd1 outside the near set: bound of a far point's factor
    double mf2
    double fm1[MAX_SIZE]     # max of gd1 over the far pairs |drow| = dy apart: a row's bound
    double fm2[MAX_SIZE]
    double rowprop[MAX_W]    # scratch of _sample: cumulative far proposal mass by row
    # the window: in the rows within WIN_ROWS of the last move, the far points within WIN_COLS
    # columns of it are proposed with the bound fw1[|drow|], the other far points of the row
    # with the (much smaller) bound fo1[|drow|] instead of one bound fm1[|drow|] for the row
    double fw1[MAX_SIZE]
    double fo1[MAX_SIZE]
    double winmass[MAX_W]    # scratch of _sample: base weight inside the window, by row
    int size
    int W
    int noffs
    int off_dr[NEAR_MAX_OFFS]
    int off_dc[NEAR_MAX_OFFS]
    int off_idx[NEAR_MAX_OFFS]   # |dr| * MAX_SIZE + |dc|: the offset's index in gd1 / gd2
    double fr1[MAX_W][MAX_W]     # fr1[r1][r]: bound of far factors in row r, last move in row r1
    double fr2[MAX_W][MAX_W]
    uint8_t rowof[MAX_PTS]
    uint8_t colof[MAX_PTS]
    double edge_g[MAX_PTS]   # gamma of the G_EDGE feature of each point
    # per colour (index BLACK / WHITE)
    double w[3][MAX_PTS]     # base weights (valid for colour c once flushed at c's turn)
    double rowsum[3][MAX_W]
    double rowerr[3][MAX_W]  # bound on the rounding error of rowsum (kept incrementally)
    uint32_t rowdirty[3]
    int full[3]              # 1: recompute every point at c's next turn
    int kostate[3]           # (b.ko != 0) when c's weights were last brought up to date
    uint8_t flags[3][MAX_PTS]    # bit 0: in dirty list, 1: in L list, 2: in K list
    int16_t dlist[3][MAX_PTS]    # points to recompute at c's next turn
    int nd[3]
    int16_t llist[3][MAX_PTS]    # points whose weight used the last move (capture near/of it, new-atari extension)
    int nl[3]
    int16_t klist[3][MAX_PTS]    # points whose weight has an atari feature (depends on "ko on the board")
    int nk[3]
    # what choose() saw of its move before it was played (played() needs the old board)
    int chosen
    int chosen_n
    int pre_minlibs          # fewest liberties of a mover's string next to the move, before it
    int pre_ko
    int ncapst
    int16_t capst[4]         # one stone of each string the move captures
    int ncapstones           # stones it captures
    # near set scratch
    int nnear
    int16_t near[MAX_PTS]
    double wnear[MAX_PTS]
    uint32_t stamp[MAX_PTS]
    uint32_t curstamp
    uint32_t gstamp[MAX_PTS] # scratch marks for string walks
    uint32_t curg
    # the start-position cache: the side to move's weights right after the full recomputation
    # at a playout start, reused when the next start is the same position (the K playouts of
    # one Monte-Carlo evaluation); keyed by everything a base weight depends on
    int cache_ok
    int cache_c
    int cache_size
    int cache_ko
    int cache_last
    int cache_last2
    int cache_nempty
    uint64_t cache_hash
    int cache_nl
    int cache_nk
    int cache_kostate
    double cache_w[MAX_PTS]
    double cache_rowsum[MAX_W]
    double cache_rowerr[MAX_W]
    uint8_t cache_flags[MAX_PTS]
    int16_t cache_llist[MAX_PTS]
    int16_t cache_klist[MAX_PTS]
    # light_after: once this many moves of the playout were played (nplayed counts them from
    # setboard), the rest follow the light tail's rules (tail_choose in pyx/rollout/tail.pyx), not
    # the gammas; 0: gammas to the end
    int light_after
    # tail: the light tail's optional rules, TAIL_* bits (gammago/rollout/tail.pxd): Mogo's shapes
    # around the last move, the random moves' refusal of a lone stone's bad self-atari, the
    # seki rule; TAIL_REFUSE: the gamma moves before the tail refuse what the random moves
    # refuse
    int tail
    int nplayed
    # statistics
    long n_refused
    long n_light
    long n_cached
    long n_choose
    long n_attempts
    long n_recompute
    long n_full
    long n_fallback
    long n_slow

# --- the C API (nogil) ---
# a policy for the gamma table `gamma` (NFEAT doubles, all positive and finite, kept alive by the
# caller); near_d <= 0 picks the default. NULL when out of memory.
cdef gamma_policy_t* gamma_policy_new(const double* gamma, int near_d) noexcept nogil
cdef void gamma_policy_free(gamma_policy_t* g) noexcept nogil
# fill the policy seam with g (g stays owned by the caller)
cdef void policy_gamma(policy_t* pol, gamma_policy_t* g) noexcept nogil
# the policy seam's three functions for a gamma_policy_t ctx (policy_gamma puts them there;
# choose records its move itself, see gamma_policy_premove)
cdef void gamma_policy_setboard(void* ctx, board_t* b) noexcept nogil
cdef int gamma_policy_choose(void* ctx, board_t* b, rng_t* r) noexcept nogil
cdef void gamma_policy_played(void* ctx, board_t* b, int m) noexcept nogil
# what a tree's workers' gamma policies are made with (rollout_make_gamma's arg): the table
# (kept alive by the caller) and the gamma_policy_t fields of the same names
ctypedef struct gamma_maker_t:
    const double* gamma
    int light_after
    int tail
# for tree_state.pxd's rollout_maker_t: arg is a gamma_maker_t*; make allocates a
# gamma_policy_t into pol.ctx (returns 0 when out of memory), release frees it
cdef int rollout_make_gamma(void* arg, policy_t* pol) noexcept nogil
cdef void rollout_release_gamma(void* arg, policy_t* pol) noexcept nogil
# record a move before it is played (choose() does this itself; callers that play their own
# moves through played() call it first, or the next turn recomputes everything)
cdef void gamma_policy_premove(gamma_policy_t* g, const board_t* b, int m) noexcept nogil
# compare every weight of the side to move with a recomputation; 0 when all agree, else 1 and
# a message in msg
cdef int gamma_policy_check(gamma_policy_t* g, board_t* b, char* msg, int msglen) noexcept nogil
