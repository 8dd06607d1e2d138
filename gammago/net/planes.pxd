# The net's input planes (see pyx/net/planes.pyx and models/README.md for the spec and its version).
from gammago.go.board cimport board_t

cdef enum:
    NPLANES = 20
    PLANE_VERSION = 1
    HISTORY = 8          # last moves shown, one plane each

# Fill out[NPLANES * size * size] (plane-major, row 0 = line 1) for the side to move of b.
# recent[k] is the point of the move k+1 plies ago (PASS = 0 for a pass or "none"), k < nrecent.
cdef void planes_fill(const board_t* b, const int* recent, int nrecent, float* out) noexcept nogil
