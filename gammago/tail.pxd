# The light tail of the gamma rollouts (implementation: pyx/tail.pyx).
from gammago.board cimport board_t
from gammago.rng cimport rng_t

cdef enum:
    TAIL_2LIB_DEFAULT = 0      # the tail's 2-liberty rule is off unless a caller says otherwise
    TAIL_CAPTURE_DEFAULT = 0   # its capture-anywhere rule is off unless a caller says otherwise
    TAIL_LONE_DEFAULT = 0      # its random moves may be a lone stone's self-atari unless told

# the tail's move for b.to_move: capture the last move's string in atari, or save a string of
# the mover that the last move put in atari; else (twolib) atari the last move's string when it
# has two liberties, or give a string of the mover with two liberties next to it a third; else
# (shapes) one of Mogo's 3x3 shapes around the last move; else (capture) capture a string in
# atari anywhere; else a random legal point that fills no own eye and is no bad self-atari of
# 2+ stones (lone: nor of a lone stone)
cdef int tail_choose(board_t* b, rng_t* r, int shapes, int twolib, int capture,
                     int lone) noexcept nogil
