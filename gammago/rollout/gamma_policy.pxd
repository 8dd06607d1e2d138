# Gamma rollouts from Python (implementation: pyx/rollout/gamma_policy.pyx): GammaPolicy, the gamma sampler
# (gammago/rollout/gamma_sampler.pxd) for one gamma table.
from gammago.rollout.gamma_sampler cimport gamma_policy_t

cdef class GammaPolicy:
    cdef gamma_policy_t* g   # the sampler's state (gammago/rollout/gamma_sampler.pxd)
    cdef object table        # the numpy array behind g.gamma
    cdef readonly int near_d
