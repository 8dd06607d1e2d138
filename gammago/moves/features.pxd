# Move features: the ONE definition used by MM training (gammago/moves/mm.py, train-mm), prediction
# (gammago predict) and play (pyx/rollout). Implementation: pyx/moves/features.pyx.
#
# A move (point p, or PASS, for colour c) has exactly one feature id per group. Ids are global:
# group g owns the ids FB_g .. FB_g + FN_g - 1, and the id FB_g + 0 of every group means "absent"
# (its gamma is always 1.0, never trained). So a move's strength is the product
#     gamma[ids[0]] * gamma[ids[1]] * ... * gamma[ids[NGROUPS - 1]]
# with no branch (team_gamma below). Levels inside each group (local id = id - FB_g):
#
#   G_PASS       1 pass when the opponent just passed, 2 any other pass
#   G_CAPTURE    1 + 3*kind + sizeclass; kind 0: captures the string of the last move (it played
#                into atari), 1: captures a string next to one of the mover's strings in atari
#                (saves it), 2: the capture is in the 3x3 around the last move, 3: other;
#                sizeclass by the stones captured: 0: 1, 1: 2-3, 2: 4+
#   G_EXTENSION  escape from atari by extension (the move is the last liberty of a mover's string
#                and leaves the joined string at least 2 liberties): 1 + 2*old + (libs >= 3);
#                old = 0 when the last move touches the string in atari (a new atari)
#   G_SELFATARI  the move's own string is left with one liberty (and it captures nothing):
#                1 string of 1-2 stones, 2 larger
#   G_ATARI      the move takes an opponent string to one liberty: 1 + 2*(ko on the board) +
#                (largest such string has 2+ stones)
#   G_DIST1      distance to the last move, d = |dx|+|dy|+max(|dx|,|dy|): d = 2..17 -> d - 1,
#                beyond -> 17; absent when the last move was a pass or there is none; the
#                point itself (its stone was captured since) counts as d = 2
#   G_DIST2      the same for the move before the last one
#   G_EDGE       where the move is relative to the edges: its line a = 1, 2, 3, 4, 5+ (distance to
#                the nearest edge) together with b = a..7+, its line counted from the nearest
#                edge of the other axis (so 4/4 is a star point in a corner, 3/4 a komoku,
#                3/7+ the third line on a side): 1 + EDGE_START[a] + (b - a), 25 levels
#   G_LADDER     read by pyx/tactics (tac_atari_works, tac_escape_fails): 1 the move puts an
#                opponent string in atari and it cannot escape (a working ladder), 2 the move
#                extends a string of the mover out of atari and it is still captured (an escape
#                into a working ladder), 3 such an extension that gets away
#   G_RACE       read by pyx/tactics (tac_saves_2lib): 1 the move saves a string of the mover
#                with two liberties that the opponent, to move, would capture
#   G_NAKADE     1 the move is the vital point of a killable eye shape next to the last move
#                (tac_nakade_point)
#   G_PAT12      the 12-point diamond: the 3x3 code (colours seen from the mover, atari bits)
#                and the 4 points two steps away orthogonally (BORDER beyond the edge),
#                canonical over the 8 symmetries (the smallest 28-bit code), hashed into
#                PAT12_BUCKETS buckets: 1 + bucket; PAT12_RARE for the buckets a gamma file
#                merged into its default (training only; move_features never writes it).
#                A table with a spatial dictionary (gammago/moves/spatial.pxd) gives this slot
#                to its large patterns instead: 1 + ... the dictionary id of the largest
#                pattern around the point that the dictionary holds (d <= 4 of its sizes is
#                the diamond, colours only), PAT12_RARE when it holds none; the table names
#                them spatial:ID (gammago/moves/gammas.py). move_features_d computes that
#   G_PAT3       the 3x3 pattern: 1 + index of the canonical code (8 symmetries, colours seen
#                from the mover, with the 4 atari bits), PAT3_RARE for the patterns a gamma file
#                merged into its default (training only; move_features never writes it).
from libc.stdint cimport int32_t, int16_t, uint16_t, uint32_t
from gammago.go.board cimport board_t
from gammago.moves.spatial cimport spatial_dict_t

cdef enum:
    FEATURES_VERSION = 4   # bump whenever a definition above changes: gamma files check it
    NGROUPS = 13
    G_PASS = 0
    G_CAPTURE = 1
    G_EXTENSION = 2
    G_SELFATARI = 3
    G_ATARI = 4
    G_DIST1 = 5
    G_DIST2 = 6
    G_EDGE = 7
    G_LADDER = 8
    G_RACE = 9
    G_NAKADE = 10
    G_PAT12 = 11
    G_PAT3 = 12
    # group sizes (local ids 0..FN_g - 1, 0 = absent)
    FN_PASS = 3
    FN_CAPTURE = 13
    FN_EXTENSION = 5
    FN_SELFATARI = 3
    FN_ATARI = 5
    FN_DIST = 18
    FN_EDGE = 26
    FN_LADDER = 4
    FN_RACE = 2
    FN_NAKADE = 2
    PAT12_BITS = 16
    PAT12_BUCKETS = 65536  # 1 << PAT12_BITS
    FN_PAT12 = 65538       # absent + the buckets + the merged default PAT12_RARE
    PAT12_RARE = 65537
    NPAT3 = 7455           # canonical 3x3 patterns (checked when the module loads)
    FN_PAT3 = 7457         # absent + NPAT3 + the merged default PAT3_RARE
    # group bases (global id of each group's "absent" entry)
    FB_PASS = 0
    FB_CAPTURE = 3
    FB_EXTENSION = 16
    FB_SELFATARI = 21
    FB_ATARI = 24
    FB_DIST1 = 29
    FB_DIST2 = 47
    FB_EDGE = 65
    FB_LADDER = 91
    FB_RACE = 95
    FB_NAKADE = 97
    FB_PAT12 = 99
    FB_PAT3 = 65637
    PAT3_RARE = 7456       # local id of the merged default pattern
    NFEAT = 73094          # FB_PAT3 + FN_PAT3: the length of a gamma table
    # the groups read by the tactical reader (G_LADDER, G_RACE, G_NAKADE) and the diamond
    # G_PAT12 are not weighed in the rollouts: for every candidate of every rollout move they
    # would cost more than the rollouts can pay, and the diamond is not kept incrementally (the
    # tree's gamma prior, training and prediction use them all)

# A gamma table is a plain array of NFEAT doubles (absent ids hold 1.0); gammago.moves.gammas loads one
# from a file into a numpy float64 array whose buffer can be passed as `const double*`.
ctypedef const double* gamma_table_t

# All NGROUPS global ids of move p (a point or PASS) for colour c on b, into out[0..NGROUPS-1].
# p must be an empty point (legality is not checked here). Returns NGROUPS.
cdef int move_features(const board_t* b, int p, int c, int32_t* out) noexcept nogil
# the same with the groups the rollouts do not weigh (G_LADDER, G_RACE, G_NAKADE, G_PAT12) left
# absent, at no cost: what a table that holds them at 1 sees (the rollouts' gammas)
# the same with the G_PAT12 slot read through a spatial dictionary (d NULL: the diamond, as
# move_features)
cdef int move_features_d(const board_t* b, int p, int c, const spatial_dict_t* d,
                         int32_t* out) noexcept nogil
# the dictionary of a gamma table (gammago.moves.gammas marks the table's G_PAT12 "absent" entry
# with its tag, register_dict), or NULL for a table without one
cdef const spatial_dict_t* table_dict(const double* gamma) noexcept nogil
cdef int rollout_features(const board_t* b, int p, int c, int32_t* out) noexcept nogil

# The parts, for incremental users (the rollout recomputes only what a move changed):
cdef int feat_pat3(const board_t* b, int p, int c) noexcept nogil          # global id, G_PAT3
cdef int feat_pat12(const board_t* b, int p, int c) noexcept nogil         # global id, G_PAT12
cdef void feat_tactics(const board_t* b, int p, int c, int32_t* out) noexcept nogil
# writes out[G_LADDER], out[G_RACE], out[G_NAKADE] (tactical reading; see above)
cdef void feat_reading(const board_t* b, int p, int c, int32_t* out) noexcept nogil
                                    # writes out[G_CAPTURE], out[G_EXTENSION], out[G_SELFATARI], out[G_ATARI]
cdef int feat_dist(const board_t* b, int p, int q, int base) noexcept nogil  # base = FB_DIST1 or FB_DIST2; q = b.last / b.last2
cdef int feat_edge(const board_t* b, int p) noexcept nogil                   # global id, G_EDGE
# code (absolute colours, as in board_t.code) -> local G_PAT3 id, for colour c to move; the
# table behind it (pat3_table()) is indexed by the code seen from Black (code_swap for White)
cdef const uint16_t* pat3_table() noexcept nogil

# Every move legal for c on b (simple ko, as board_is_legal) and then PASS, as points in
# moves[0..n-1] and their ids in feats[i*NGROUPS .. i*NGROUPS+NGROUPS-1]; returns n.
# moves needs room for b.nempty + 1 entries, feats for NGROUPS times that.
cdef int position_features(const board_t* b, int c, int16_t* moves, int32_t* feats) noexcept nogil
cdef int position_features_d(const board_t* b, int c, const spatial_dict_t* d, int16_t* moves,
                             int32_t* feats) noexcept nogil

cdef inline double team_gamma(gamma_table_t gamma, const int32_t* ids) noexcept nogil:
    cdef double s = gamma[ids[0]]
    cdef int g
    for g in range(1, NGROUPS):
        s *= gamma[ids[g]]
    return s
