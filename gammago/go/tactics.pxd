# The tactical reader (implementation: pyx/go/tactics.pyx): every tactical question the engine asks
# is answered here, once, for the MM features (training and play), the tree's priors and the
# rollouts. One file per idea would be Pachi's layout (tactics/1lib.c, 2lib.c, ladder.c,
# selfatari.c, nakade.c); here they are the sections of one module:
#   liberties  - how many liberties a move leaves its string (libs_after): no reading
#   self-atari - one definition, and the exceptions that make a self-atari good: a killing
#                shape inside the opponent's eye (nakade) and a snapback
#   capture    - reading of strings with 1 or 2 liberties by play and undo on the board
#                (board_try_play / board_undo: no malloc, no copy of the board per ply):
#                can this string be captured, can it be saved, and by which move; a ladder
#                is the case where the defender keeps getting two liberties; a net (geta)
#                the case where it gets three and the attacker takes one back (read one
#                level deep, by tac_capture and tac_net only)
#   eyes       - the vital point of a killable eye shape (nakade), false eyes
#
# Reading plays on the board it is given and undoes every move before it returns, so the board
# is the same, byte for byte, afterwards; the board must not be in use by another thread
# meanwhile (each search worker and rollout has its own). Each thread reads with its own
# scratch (journal and undo stack), allocated once for the thread.
from libc.stdint cimport int16_t
from gammago.go.board cimport board_t

cdef enum:
    TAC_YES = 1
    TAC_NO = 0
    TAC_UNKNOWN = -1          # the node budget ran out before an answer was read
    TAC_BUDGET = 200          # reading nodes per question (attack and defence nodes alike)

# --- liberties ---
# The heads of c's and of the opponent's strings next to the empty point p (each once) and p's
# empty neighbours; returns the number of empty neighbours (libs[0..]).
cdef int tac_neighbours(const board_t* b, int p, int c, int16_t* libs, int16_t* own,
                        int* nown, int16_t* opp, int* nopp) noexcept nogil
# liberties of c's string at p after c plays p, counted up to kmax (<= 4), given p's
# neighbours (tac_neighbours) and the opponent strings in atari next to p (capd: the move
# captures them, and their stones next to the new string become liberties)
cdef int tac_join_libs(const board_t* b, int p, int c, const int16_t* own, int nown,
                       const int16_t* capd, int ncapd, int16_t* libs, int nlib, int kmax) noexcept nogil
# liberties of c's string at p after c plays the empty point p, counted up to kmax (<= 4)
cdef int libs_after(const board_t* b, int p, int c, int kmax) noexcept nogil

# --- self-atari ---
# c playing the empty point p leaves its string one liberty (or none) and captures nothing
cdef bint tac_selfatari(const board_t* b, int p, int c) noexcept nogil
# a self-atari that is no good: tac_selfatari, unless the string it makes is a killing shape
# filling the opponent's eye space but for its last liberty (nakade: the capture leaves one
# eye), or a single stone whose capture can be taken back at once with more stones (snapback)
cdef bint tac_bad_selfatari(const board_t* b, int p, int c) noexcept nogil

# --- capture reading (strings of 1 or 2 liberties) ---
# The string at stone s; its opponent moves first. TAC_YES (and the first move in *move when
# move is not NULL) when the opponent captures it whatever its owner answers (by the ladder
# reading, or for a string of two liberties by a net), TAC_NO when the owner saves it (a
# string of 3+ liberties is not read: TAC_NO), TAC_UNKNOWN out of budget.
cdef int tac_capture(const board_t* b, int s, int budget, int* move) noexcept nogil
# The string at stone s; its owner moves first. TAC_YES (and the saving move) when some move
# leaves it uncapturable, TAC_NO when it dies whatever it plays, TAC_UNKNOWN out of budget.
cdef int tac_save(const board_t* b, int s, int budget, int* move) noexcept nogil
# c plays p and puts an opponent string next to p in atari: TAC_YES when one of them then dies
# whatever it does (a working ladder), TAC_NO when none is left in atari or all escape
cdef int tac_atari_works(const board_t* b, int p, int c, int budget) noexcept nogil
# c plays the empty p next to a liberty of an opponent string of two liberties, not on one and
# not next to any opponent string of one or two: TAC_YES when that string then dies whatever
# it does (a net, geta), TAC_NO when it gets out, TAC_UNKNOWN out of budget
cdef int tac_net(const board_t* b, int p, int c, int budget) noexcept nogil
# c plays p next to its own string(s) in atari: TAC_YES when the string at p is then still
# captured (an escape into a working ladder), TAC_NO when it gets away or p is no such escape
cdef int tac_escape_fails(const board_t* b, int p, int c, int budget) noexcept nogil

# c plays p next to its own string(s) of two liberties: TAC_YES when one of them could be
# captured (the opponent to move) before the move and none of them can after it
cdef int tac_saves_2lib(const board_t* b, int p, int c, int budget) noexcept nogil

# --- eyes ---
# the vital point of a killable eye shape (straight / bent three, pyramid four, crossed / bulky
# five, rabbity six) in an empty region touching `last` that stones of last's colour alone
# enclose; PASS when there is none
cdef int tac_nakade_point(const board_t* b, int last) noexcept nogil
# the empty point p has only c's stones (or the edge) as orthogonal neighbours, but the opponent
# holds enough of its diagonals (2 in the middle, 1 on the edge) that it is no true eye
cdef bint tac_false_eye(const board_t* b, int p, int c) noexcept nogil
