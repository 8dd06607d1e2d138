# Atomic loads, stores, adds and compare-and-swaps for the nogil code that threads share (the
# search tree: pyx/search/node_pool, selection, descent, search_loop, tree), inlined where they
# are used (gcc's __atomic builtins). Adds are relaxed (counters; a float's add is a
# compare-and-swap loop); the state bytes, the opened children and the chunk table are
# published with release and read with acquire.
from libc.stdint cimport int64_t, int32_t, int16_t, uint8_t

cdef extern from *:
    """
    #include <stdint.h>
    static inline int32_t gg_add32(int32_t* p, int32_t v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
    static inline int64_t gg_add64(int64_t* p, int64_t v) { return __atomic_fetch_add(p, v, __ATOMIC_RELAXED); }
    static inline void gg_addf(float* p, float v) { float cur, next;
        __atomic_load(p, &cur, __ATOMIC_RELAXED);
        do { next = cur + v; } while (!__atomic_compare_exchange(p, &cur, &next, 1,
                                                                  __ATOMIC_RELAXED, __ATOMIC_RELAXED)); }
    static inline int gg_cas8(uint8_t* p, uint8_t expect, uint8_t want) {
        return __atomic_compare_exchange_n(p, &expect, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); }
    static inline uint8_t gg_load8(uint8_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void gg_store8(uint8_t* p, uint8_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline int gg_loadi(int* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    static inline void gg_storei(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    static inline int16_t gg_load16(int16_t* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void gg_store16(int16_t* p, int16_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline void* gg_loadp(void** p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline int gg_casp(void** p, void* want) { void* expect = 0;
        return __atomic_compare_exchange_n(p, &expect, want, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE); }
    """
    int32_t gg_add32(int32_t* p, int32_t v) nogil
    int64_t gg_add64(int64_t* p, int64_t v) nogil
    void gg_addf(float* p, float v) nogil
    int gg_cas8(uint8_t* p, uint8_t expect, uint8_t want) nogil
    uint8_t gg_load8(uint8_t* p) nogil
    void gg_store8(uint8_t* p, uint8_t v) nogil
    int gg_loadi(int* p) nogil
    void gg_storei(int* p, int v) nogil
    int16_t gg_load16(int16_t* p) nogil
    void gg_store16(int16_t* p, int16_t v) nogil
    void* gg_loadp(void** p) nogil
    int gg_casp(void** p, void* want) nogil
