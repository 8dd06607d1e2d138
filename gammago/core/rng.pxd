# A small seeded generator for nogil code: xorshift64* (Marsaglia / Vigna), one state per thread.
from libc.stdint cimport uint64_t, uint32_t

ctypedef struct rng_t:
    uint64_t s

cdef inline void rng_seed(rng_t* r, uint64_t seed) noexcept nogil:
    # splitmix64 of the seed, so that nearby seeds give unrelated streams; never zero
    cdef uint64_t z = seed + 0x9E3779B97F4A7C15ULL
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    z = z ^ (z >> 31)
    r.s = z if z else 0x2545F4914F6CDD1DULL

cdef inline uint64_t rng_next(rng_t* r) noexcept nogil:
    r.s ^= r.s >> 12
    r.s ^= r.s << 25
    r.s ^= r.s >> 27
    return r.s * 0x2545F4914F6CDD1DULL

cdef inline uint32_t rng_below(rng_t* r, uint32_t n) noexcept nogil:
    # uniform in [0, n) by multiply-shift (Lemire); the bias is below n / 2**32
    return <uint32_t>(((rng_next(r) >> 32) * <uint64_t>n) >> 32)

cdef inline double rng_unit(rng_t* r) noexcept nogil:
    # uniform in [0, 1) with 53 bits
    return (rng_next(r) >> 11) * (1.0 / 9007199254740992.0)
