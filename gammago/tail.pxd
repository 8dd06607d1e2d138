# The light tail of the gamma rollouts (implementation: pyx/tail.pyx).
from gammago.board cimport board_t
from gammago.rng cimport rng_t

# the tail's move for b.to_move: capture the last move's string in atari, or save a string of
# the mover that the last move put in atari; else (shapes) one of Mogo's 3x3 shapes around the
# last move; else a random legal point that fills no own eye and is no bad self-atari of 2+
# stones
cdef int tail_choose(board_t* b, rng_t* r, int shapes) noexcept nogil
