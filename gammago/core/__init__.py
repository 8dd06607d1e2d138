"""core: what every layer uses and no layer owns: the seeded xorshift generator (rng.pxd) and
the one rule that derives seeds from --seed (seeds), the atomics threads share the tree by
(atomic.pxd), the retired options and their old defaults (retired), and work spread over a Dask
cluster (cluster).

Layer 0: imports nothing of gammago but the package root."""
