"""search: UCT, split by role as Pachi's uct/: the node pool (node_pool), priors (prior), which
child a descent takes (selection), one playout down and back (descent), the workers' loop
(search_loop), their shared state (tree_state.pxd), the tree from Python (tree.Search), the net at
the root with one tree a root child (net_root.RootSearch), and the protocol the engine drives
both by (protocol.SearchProtocol).

Layer 5: may import gammago.rollout and below."""
