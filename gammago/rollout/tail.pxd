# The light tail of the gamma rollouts (implementation: pyx/rollout/tail.pyx).
from gammago.go.board cimport board_t
from gammago.core.rng cimport rng_t

# The tail's optional rules, one bit each of a rules word (gamma_policy_t.tail): a new rule is
# a bit here, its name in RULES and its test in tail_choose (pyx/rollout/tail.pyx), and its option in
# gammago/engine/settings.py (rollout_tail_for); the word goes through everything between unchanged
cdef enum:
    TAIL_SHAPES = 1            # Mogo's 3x3 shapes around the last move
    TAIL_LONE = 2              # the random moves refuse a lone stone's bad self-atari too
    TAIL_SEKI = 4              # no random move permitted: pass (a seki stands), not any legal point
    TAIL_REFUSE = 8            # the gamma moves (pyx/rollout/gamma_sampler.pyx, gamma_policy_choose)
                               # refuse what the tail's random moves refuse (a bad self-atari
                               # of 2+ stones; with TAIL_LONE of a lone stone too) and pass when
                               # nothing else is left, so that a seki stands (tail_choose does not read this bit;
                               # on where the gammas play to the end: config.rollout_tail_for)
    TAIL_RULES_DEFAULT = 1     # TAIL_SHAPES: a caller's rules unless it says otherwise
    TAIL_TRIES = 10            # random draws of the tail before it takes any legal non-eye point

# the tail's move for b.to_move: capture the last move's string in atari, or save a string of
# the mover that the last move put in atari; else (shapes) one of Mogo's 3x3 shapes around the
# last move; else a random legal point that fills no own eye and is no bad self-atari of
# 2+ stones (lone: nor of a lone stone); when ten draws find none, any legal non-eye point (seki:
# one that is no bad self-atari of 2+ stones, or a pass); rules: the TAIL_* bits that are on
cdef int tail_choose(board_t* b, rng_t* r, int rules) noexcept nogil
# a bad self-atari the rules refuse c at the empty point p (of 2+ stones; TAIL_LONE: of a lone
# stone too)
cdef bint tail_refused(const board_t* b, int p, int c, int rules) noexcept nogil
