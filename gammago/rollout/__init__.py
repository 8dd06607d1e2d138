"""rollout: the playouts behind the policy seam (playout.pxd's policy_t): the playout loop and
the light policy (playout), the gamma policy (gamma_sampler, and gamma_policy from Python), the
light tail (tail), simulation balancing's gradient playouts (balance), the flat Monte-Carlo
player (flat_mc), and the rollouts' settings by board size (settings).

Layer 4: may import gammago.moves and below."""
