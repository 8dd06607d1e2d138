# Large spatial patterns (implementation: pyx/moves/spatial.pyx): the ONE code that hashes the
# shape around a candidate point for harvest (train-mm's dictionary), training, prediction and
# play (the tree's gamma prior).
#
# A pattern of size s holds the points at gridcular distance d = dx + dy + max(dx, dy) <= s
# from the candidate (Pachi's measure: the rings of d = 2, 3, 4 are the 12-point diamond; each
# larger size adds one ring, up to d = 10, 72 points). Each point is one of empty, own stone,
# opponent stone (from the mover's view, so the colour swap is built in) or off the board, and
# the pattern's hash is the XOR of one 64-bit Zobrist key per (point, colour), empty keyed 0,
# made canonical over the 8 symmetries (the smallest of the 8 hashes, each accumulated in one
# pass over the points, ring by ring) and tagged with its size. Sizes SPATIAL_MIN..SPATIAL_MAX
# are hashed; a dictionary maps the kept hashes to ids 1..n, and a candidate's pattern is the
# LARGEST size whose hash the dictionary holds (Coulom's and Pachi's rule).
from libc.stdint cimport uint64_t, int32_t, uint8_t
from gammago.go.board cimport board_t

cdef enum:
    SPATIAL_MIN = 4          # the smallest size hashed: d <= 4, the 12-point diamond
    SPATIAL_MAX = 10         # the largest
    SPATIAL_NSIZES = 7       # SPATIAL_MAX - SPATIAL_MIN + 1
    SPATIAL_NPTS = 72        # points at d = 2..SPATIAL_MAX (the candidate itself is empty)
    SPATIAL_MAXDICT = 65536  # dictionary ids 1..n, n <= this (they share the diamond's slot
                             # in features.pxd's G_PAT12 group)

# An open-addressing hash table: hash -> dictionary id (keys[i] == 0: an empty slot)
ctypedef struct spatial_dict_t:
    uint64_t* keys
    int32_t* ids
    uint8_t* sizes           # per id (index 0 unused): its pattern size
    uint64_t mask            # slots - 1 (a power of two, at least twice n)
    int n

# the canonical hash of each size SPATIAL_MIN + k into out[k] (k = 0..SPATIAL_NSIZES-1) of the
# pattern around the point p for the mover c
cdef void spatial_hashes(const board_t* b, int p, int c, uint64_t* out) noexcept nogil
# the dictionary id of a hash, 0 when it holds none
cdef int spatial_lookup(const spatial_dict_t* d, uint64_t h) noexcept nogil
# the id of the largest pattern around p (for c) that the dictionary holds, 0 when none; sizes
# above set_largest's for the board's size are neither hashed nor looked up
cdef int spatial_match(const spatial_dict_t* d, const board_t* b, int p, int c) noexcept nogil

cdef class SpatialDict:
    cdef spatial_dict_t d
    cdef public object hashes      # numpy uint64 [n]: the hash of id i + 1
    cdef public object sizes_of    # numpy uint8 [n + 1]: the size of id i (0 for id 0)
    cdef public str checksum
