"""Players without search: the net's policy alone (--mode net-policy), the gammas alone
(--mode gamma-policy). Each picks the policy's favourite legal move, or with a temperature T > 0
a move sampled with probability ~ p^(1/T) from a seeded generator, so a seeded player repeats its
games; neither fills its own eye, and both pass when the opponent passed and passing wins now."""
import numpy as np


def _pass_or_first(board, ranked):
    """First legal move of `ranked` (vertices, best first) that does not fill an own eye; pass
    when none is left or when the opponent passed and passing wins by area now."""
    me = board.to_move
    if board.passes > 0 and (board.score() > 0) == (me == "b") and board.score() != 0:
        return "pass"
    no_eyes = set(board.legal_moves(include_eyes=False))
    for v in ranked:
        if v in no_eyes:
            return v
    return "pass"


def ranked_by_policy(weights, temperature=0.0, rng=None):
    """Indices of `weights` (non-negative) best first. temperature 0: by weight (ties keep their
    order). temperature T > 0: a random order drawn without replacement with probability
    proportional to weight ** (1/T) (T = 1: as the policy says; smaller: closer to argmax), from
    `rng` (a numpy Generator), so a seeded player repeats its games."""
    w = np.asarray(weights, dtype=np.float64)
    if temperature < 0:
        raise ValueError(f"policy temperature must be >= 0, not {temperature}")
    if temperature == 0 or len(w) <= 1:
        return np.argsort(-w, kind="stable")
    if rng is None:
        raise ValueError("a policy temperature > 0 needs a random generator (seed)")
    pos = w > 0
    logw = np.where(pos, np.log(np.where(pos, w, 1.0)) / temperature, -np.inf)
    # Gumbel top-k: sorting log-weight + Gumbel noise draws an order without replacement
    keys = logw + rng.gumbel(size=len(w))      # -inf stays -inf: zero weights come last
    return np.argsort(-keys, kind="stable")


def net_policy_move(net, board, temperature=0.0, rng=None):
    """The net's favourite legal move (no search); with a temperature, a move sampled from
    its policy (see ranked_by_policy)."""
    pri = net.priors(board, include_pass=False)
    moves = list(pri)
    order = ranked_by_policy([pri[m] for m in moves], temperature, rng)
    return _pass_or_first(board, [moves[i] for i in order])


def gamma_policy_move(board, gammas=None, temperature=0.0, rng=None):
    """The move with the highest gamma strength (no search); with a temperature, a move sampled
    from the gammas' move probabilities (see ranked_by_policy). gammas default: the shipped file."""
    from gammago.moves import gammas as gammas_mod
    table = gammas or gammas_mod.load_default(board.size)
    vertices, feats = table.legal_features(board)       # through its spatial dictionary, if any
    strength = table.strength(feats)
    order = ranked_by_policy(strength, temperature, rng)
    return _pass_or_first(board, [vertices[i] for i in order if vertices[i] != "pass"])
