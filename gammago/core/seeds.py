"""Seeds: one rule derives the seed of each part of a search from the one above it.

--seed S seeds the engine; the search of move m is seeded derive(S, m), the generator of its
worker thread i derive(that, i), and so on down: nearby results are fine, because every
generator hashes its seed (splitmix64 in gammago/core/rng.pxd) before use.
"""
SEED_STRIDE = 1_000_003      # derive(seed, k) = seed * SEED_STRIDE + k (mod 2**64)
ROOT_CHILD_STRIDE = 7919     # net-root's child trees: derive(seed, j, ROOT_CHILD_STRIDE), the
                             # value they always had, so net-root games at a fixed seed repeat
MASK64 = (1 << 64) - 1


def derive(seed, k, stride=SEED_STRIDE):
    """The seed of part k (a move, a thread, a child tree) of what `seed` seeds."""
    return (int(seed) * stride + int(k)) & MASK64
