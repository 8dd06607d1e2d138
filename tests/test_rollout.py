"""Gamma rollouts (pyx/rollout/gamma_sampler.pyx, pyx/rollout/gamma_policy.pyx): incremental weights against a
recomputation from scratch, the sampler against the exact gamma proportions (chi-square), and
playouts that end, stay legal and never fill their own eyes; the flat Monte-Carlo move of
pyx/rollout/flat_mc.pyx."""
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st, HealthCheck
from scipy import stats

from gammago.moves import features as F
from gammago.rollout import flat_mc
from gammago.rollout import gamma_policy as rollout
from gammago.go import tactics
from gammago.rollout import tail
from gammago.go.board import Board, parse_vertex
from test_board_cases import from_diagram


def random_table(seed, spread=1.0):
    """A synthetic gamma table: log-normal gammas, absent ids 1 (spread: sd of log gamma)."""
    rng = np.random.default_rng(seed)
    t = np.exp(rng.normal(0.0, spread, F.N_FEATURES))
    for g in range(F.N_GROUPS):
        t[F.GROUP_BASES[g]] = 1.0
    return t


def shipped_or_random():
    try:
        from gammago.moves import gammas
        return gammas.rollout_base()
    except (ValueError, OSError):
        return random_table(7)


def random_position(size, nmoves, seed):
    """A board after nmoves uniform legal non-eye moves (passes when none)."""
    rng = np.random.default_rng(seed)
    b = Board(size)
    for _ in range(nmoves):
        moves = b.legal_moves(include_eyes=False)
        b.play(moves[rng.integers(len(moves))] if moves else "pass")
    return b


def random_game(size, nmoves, seed):
    """The board after each of up to nmoves uniform legal non-eye moves (the same Board, played
    on); the game stops where no such move is left."""
    rng = np.random.default_rng(seed)
    b = Board(size)
    for _ in range(nmoves):
        moves = b.legal_moves(include_eyes=False)
        if not moves:
            return
        b.play(moves[rng.integers(len(moves))])
        yield b


# --- incremental weights -------------------------------------------------------------------

@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(size=st.sampled_from([5, 6, 7, 9, 13]), table_seed=st.integers(0, 1000),
       near_d=st.integers(0, 9),
       picks=st.lists(st.floats(0, 1, exclude_max=True), min_size=1, max_size=250))
def test_incremental_weights_match_recomputation(size, table_seed, near_d, picks):
    """After every move of a random sequence (captures, ko, self-atari, passes), every stored
    weight of the side to move equals its recomputation from move_features."""
    gp = rollout.GammaPolicy(random_table(table_seed, 1.5), near_d=near_d)
    b = Board(size)
    gp.reset(b)
    for x in picks:
        gp.check(b)
        legal = [v for v in b.legal_moves(superko=False)]
        if x < 0.03 or not legal:
            gp.step(b, "pass")
            if b.passes >= 2:
                break
        else:
            gp.step(b, legal[int(x * len(legal))])
    gp.check(b)


@pytest.mark.parametrize("size,games", [(5, 60), (9, 40), (19, 4)])
@pytest.mark.parametrize("uniform", [False, True])
def test_selfcheck_whole_playouts(size, games, uniform):
    """Whole playouts (moves by the gamma policy itself, or uniform ones) checked after every
    move, with the shipped gammas (or a synthetic table) and a very uneven synthetic one."""
    for k, table in enumerate((shipped_or_random(), random_table(size, 3.0))):
        n = rollout.selfcheck(table, size=size, games=games, seed=size + k, uniform=uniform)
        assert n > games * size  # playouts really ran


def _tight_points(b):
    """The empty points whose weight rollout's _weight_tight computes (no opponent string in
    atari next to them, and either a string of the side to move in atari next to them, or at
    most one empty neighbour and no string of the side to move with 3+ liberties next to them),
    with the liberty count of the string the move would make (0: suicide, 1: self-atari) and
    whether it joins a string in atari (an extension when 2+ liberties are left), from the
    Board's own liberty lists."""
    size, W = b.size, b.size + 2
    me = b.to_move
    out = {}
    for p in range(W * W):
        if not (1 <= p // W <= size and 1 <= p % W <= size):
            continue
        v = b.vertex(p)
        if b.color_at(v) != ".":
            continue
        nbrs = [b.vertex(q) for q in (p - W, p + 1, p + W, p - 1)
                if 1 <= q // W <= size and 1 <= q % W <= size]
        stones = [n for n in nbrs if b.color_at(n) != "."]
        empties = [n for n in nbrs if b.color_at(n) == "."]
        own = [n for n in stones if b.color_at(n) == me]
        if any(len(b.liberties(n)) == 1 for n in stones if n not in own):
            continue
        in_atari = any(len(b.liberties(n)) == 1 for n in own)
        if not in_atari and (len(empties) >= 2 or any(len(b.liberties(n)) >= 3 for n in own)):
            continue
        libs = set(empties).union(*(b.liberties(n) for n in own)) - {v}
        out[v] = (len(libs), in_atari)
    return out


def test_tight_points_weighed_without_feat_tactics():
    """The points weighed without feat_tactics (suicides, self-ataris through shared
    liberties, extensions out of atari, eyes, ataris) match move_features in crowded random
    positions; each kind occurs."""
    kinds = {0: 0, 1: 0, 2: 0, "extension": 0}
    for size, nmoves, seed in [(9, 60, 1), (9, 80, 2), (9, 100, 3), (13, 150, 4), (13, 200, 5),
                               (19, 300, 6)]:
        for extra in range(6):
            b = random_position(size, nmoves + extra, seed * 100 + extra)
            gp = rollout.GammaPolicy(random_table(seed, 1.5))
            gp.reset(b)
            gp.check(b)
            probs = gp.probabilities(b)
            for v, (n, in_atari) in _tight_points(b).items():
                kinds[min(n, 2)] += 1
                kinds["extension"] += in_atari and n >= 2
                if n == 0:
                    assert probs[b.point(v)] == 0, f"suicide {v} has a weight"
    assert (kinds[0] >= 5 and kinds[1] >= 20 and kinds[2] >= 20 and
            kinds["extension"] >= 10), kinds


def test_check_detects_stale_weights():
    """The checker is not vacuous: a move the policy was not told about is caught."""
    gp = rollout.GammaPolicy(random_table(3))
    b = Board(9)
    for v in ("E5", "D5", "E4", "D4"):
        b.play(v)
    gp.reset(b)
    gp.check(b)
    gp.step(b, "E6")           # the policy follows this move
    gp.check(b)
    b.play("D6")               # ...but not this one
    b.play("C5")
    with pytest.raises(AssertionError, match="weight"):
        gp.check(b)


# --- the sampler -----------------------------------------------------------------------------

def chi_square_pvalue(counts, probs, n):
    expected = probs * n
    big = expected >= 5
    obs = np.append(counts[big], counts[~big].sum())
    exp = np.append(expected[big], expected[~big].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


@pytest.mark.parametrize("size,nmoves,near_d", [(9, 0, 0), (9, 1, 0), (9, 25, 0), (9, 25, 2),
                                                (19, 40, 0), (19, 40, 8), (7, 30, 0),
                                                (13, 30, 0), (13, 31, 1), (19, 41, 4)])
def test_first_move_frequencies_match_gamma_proportions(size, nmoves, near_d):
    """The first rollout move is drawn with probability (product of its gammas) / (sum over
    legal non-eye moves), distance features included: chi-square over 100,000 draws."""
    # 13x13: steep random distance gammas (the window bounds of far proposals differ)
    table = (random_table(11, 1.0) if size < 13 else random_table(12, 1.5) if size == 13
             else shipped_or_random())
    gp = rollout.GammaPolicy(table, near_d=near_d)
    b = random_position(size, nmoves, seed=nmoves + size)
    n = 100_000
    counts = gp.first_moves(b, n, seed=5)
    probs = gp.probabilities(b)
    assert counts[probs == 0].sum() == 0, "drew a move of weight 0"
    assert counts.sum() == n
    assert chi_square_pvalue(counts, probs, n) > 1e-3


@pytest.mark.parametrize("size,last2,last,seed", [(9, "E5", "A1", 1), (9, "A9", "B8", 2),
                                                   (19, "K10", "T19", 3), (19, "A10", "B1", 4),
                                                   (19, "S3", "T10", 5), (19, "A3", "C19", 6),
                                                   (5, "A1", "E5", 7)])
def test_first_move_frequencies_with_the_last_move_at_an_edge(size, last2, last, seed):
    """Far proposals go through a window of fixed shape around the last move, shifted inside
    the board at an edge (rows and columns beyond the plain window then use its bounds): the
    sampler stays exact with the last move on the first and second lines and in corners, under
    a steep random table whose distance gammas do not fall monotonically."""
    table = random_table(20 + seed, 1.5)
    b = random_position(size, {5: 6, 9: 20, 19: 60}[size], seed=100 + seed)
    for v in (last2, last):
        if b.color_at(v) == "." and b.is_legal(v):
            b.play(v)
    assert b.moves[-1][1].upper() == last, "the position must end with the edge move"
    gp = rollout.GammaPolicy(table)
    n = 100_000
    counts = gp.first_moves(b, n, seed=seed)
    probs = gp.probabilities(b)
    assert counts[probs == 0].sum() == 0, "drew a move of weight 0"
    assert chi_square_pvalue(counts, probs, n) > 1e-3


def test_sampler_catches_a_wrong_distribution():
    """The chi-square test has power: the same draws against uniform proportions fail."""
    gp = rollout.GammaPolicy(random_table(11, 1.0))
    b = random_position(9, 25, seed=34)
    n = 100_000
    counts = gp.first_moves(b, n, seed=5)
    probs = gp.probabilities(b)
    uniform = (probs > 0) / (probs > 0).sum()
    assert chi_square_pvalue(counts, uniform, n) < 1e-6


# --- playouts ----------------------------------------------------------------------------------

@pytest.mark.parametrize("size", [5, 9, 19])
def test_playouts_end_legal_and_never_fill_own_eyes(size):
    """Step by step: every move is legal (simple ko) and never an own true eye; the policy
    passes only when no such move is left; playouts end on two passes well before the cap."""
    gp = rollout.GammaPolicy(shipped_or_random())
    for seed in range(3 if size == 19 else 8):
        b = Board(size)
        gp.reset(b)
        cap = 3 * size * size
        for k in range(cap):
            p = gp.choose(b, seed=seed * 7919 + k)
            colour = b.to_move
            if p == 0:
                assert not b.legal_moves(superko=False, include_eyes=False), "passed with moves left"
                gp.step(b, "pass")
                if b.passes >= 2:
                    break
                continue
            v = b.vertex(p)
            assert b.is_legal(v, superko=False), f"illegal move {v}"
            assert not b.is_eye(v, colour), f"filled own eye {v}"
            gp.step(b, p)
        assert b.passes >= 2, "playout hit the move cap"


def test_playout_returns_final_board_and_result():
    gp = rollout.GammaPolicy(shipped_or_random())
    start = Board(9)
    start.play("E5")
    end, n = gp.playout(start, seed=3)
    assert n > 20 and end.passes == 2
    assert start.color_at("E5") == "b" and len(start.moves) == 1   # the start is untouched
    area = end.area()
    assert all(v in "bw" for v in area.values())   # filled to the eyes: every point owned
    end.check()


def test_evaluate_winrate_and_ownership():
    """Pure MC: a 9x9 position where White owns nearly everything is lost for Black."""
    b = Board(9)
    rows = "ABCDEFGHJ"
    for c in rows:
        b.setup(white=[f"{c}5"])
    b.setup(black=["E8"])
    gp = rollout.GammaPolicy(shipped_or_random())
    res = gp.evaluate(b, 200, seed=1)
    assert res["ownership"].shape == (9, 9)
    assert -1 <= res["ownership"].min() and res["ownership"].max() <= 1
    assert res["black_winrate"] < 0.1
    own = res["ownership"]
    r, c = parse_vertex("E5", 9)
    assert own[r, c] < -0.9                       # the wall lives
    r2, c2 = parse_vertex("E2", 9)
    assert own[r2, c2] < 0                        # the side Black has no stone on is White's
    res2 = rollout.gamma_evaluate(b, 50, shipped_or_random(), seed=2)
    assert 0 <= res2["black_winrate"] <= 1 and res2["moves"] > 0


def test_same_seed_same_playout():
    gp = rollout.GammaPolicy(shipped_or_random())
    a, n1 = gp.playout(Board(9), seed=42)
    b, n2 = gp.playout(Board(9), seed=42)
    assert n1 == n2 and (a.to_array() == b.to_array()).all()


def test_bad_tables_are_refused():
    with pytest.raises(ValueError, match="features need"):
        rollout.GammaPolicy(np.ones(10))
    t = random_table(1)
    t[100] = 0.0
    with pytest.raises(ValueError, match="positive and finite"):
        rollout.GammaPolicy(t)
    t[100] = np.inf
    with pytest.raises(ValueError, match="positive and finite"):
        rollout.GammaPolicy(t)
    with pytest.raises(ValueError):
        rollout.GammaPolicy("/nonexistent/file.gamma")


def test_flat_mc_move():
    gp = rollout.GammaPolicy(shipped_or_random())
    b = Board(5)
    move, rate = flat_mc.flat_mc_move(b, 200, gp, seed=1)
    assert b.is_legal(move) and 0 <= rate <= 1
    move, rate = flat_mc.flat_mc_move(b, 200, "light", seed=1)
    assert b.is_legal(move)
    with pytest.raises(ValueError):
        flat_mc.flat_mc_move(b, 0, gp)


def test_start_position_cache_reused_only_for_the_same_position():
    """Playout starts from the same position copy the side to move's weights (counted in
    stats['cached']); the copied weights equal a recomputation and draw exactly what a fresh
    policy draws, and a start with the same stones but another side to move and last move is
    not served from the cache."""
    gp = rollout.GammaPolicy(random_table(5))
    b = random_position(9, 30, seed=3)
    gp.reset(b)
    assert gp.stats["cached"] == 0
    for v in b.legal_moves(superko=False)[:3]:      # the policy follows some moves...
        gp.step(b.copy(), v)
    gp.reset(b)                                     # ...then starts again from b
    assert gp.stats["cached"] == 1
    gp.check(b)
    gp.step(b, b.legal_moves(superko=False)[0])
    gp.check(b)
    other = random_position(9, 30, seed=3)
    other.play("pass")                              # same stones, other side to move
    gp.reset(other)
    assert gp.stats["cached"] == 1
    gp.reset(other)
    assert gp.stats["cached"] == 2
    gp.check(other)
    cached = gp.first_moves(other, 2000, seed=1)
    assert gp.stats["cached"] == 3
    fresh = rollout.GammaPolicy(random_table(5)).first_moves(other, 2000, seed=1)
    assert (cached == fresh).all()


COLS = "ABCDEFGHJKLMNOPQRST"


def _neighbours(v, size):
    c, r = COLS.index(v[0]), int(v[1:])
    for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        if 0 <= c + dc < size and 1 <= r + dr <= size:
            yield COLS[c + dc] + str(r + dr)


def _closed(white, last, region, black=(), ring=True, size=9):
    """White's last move `last` joins the white stones around the empty `region`. ring: Black
    stones on every other empty neighbour of the white stones, so that White's only liberties
    are in the region (its last eye space)."""
    ws = set(white) | {last}
    bs = set(black)
    if ring:
        bs |= {n for v in ws for n in _neighbours(v, size) if n not in ws and n not in region}
    b = Board(size)
    b.setup(black=sorted(bs), white=list(white))
    b.to_move = "w"
    b.play(last, "w")
    return b


@pytest.mark.parametrize("white,last,region,vital", [
    (["A2", "B2", "C2", "D2"], "D1", ["A1", "B1", "C1"], "B1"),            # straight three
    (["A3", "B2"], "C1", ["A1", "B1", "A2"], "A1"),                        # bent three, corner
    (["A1", "B2", "D2", "C3"], "E1", ["B1", "C1", "D1", "C2"], "C1"),       # pyramid four
    (["A3", "B3", "C2"], "D1", ["A1", "B1", "C1", "A2", "B2"], "B1"),      # bulky five
    (["E3", "D4", "F4", "C5", "G5", "D6", "F6"], "E7",
     ["E4", "D5", "E5", "F5", "E6"], "E5"),                                # crossed five
    (["E3", "D4", "F4", "C5", "G5", "D6", "G6", "E7"], "F7",
     ["E4", "D5", "E5", "F5", "E6", "F6"], "E5"),                          # rabbity six
    (["A2", "B2", "C2", "D2", "E2"], "E1", ["A1", "B1", "C1", "D1"], None),  # straight four
    (["A3", "B3", "C2"], "C1", ["A1", "B1", "A2", "B2"], None),            # square four
    (["A2", "B2", "C2", "D2", "E2", "F2", "G2"], "H1",
     ["A1", "B1", "C1", "D1", "E1", "F1", "G1"], None),                    # seven points
])
def test_nakade_vital_points(white, last, region, vital):
    assert tactics.nakade_point(_closed(white, last, region)) == vital


def test_nakade_needs_a_region_enclosed_by_one_colour():
    three = (["A2", "B2", "C2", "D2"], "D1", ["A1", "B1", "C1"])
    assert tactics.nakade_point(_closed(*three)) == "B1"
    # whether White has liberties elsewhere is not asked
    assert tactics.nakade_point(_closed(*three, ring=False)) == "B1"
    # a black stone touches the region
    assert tactics.nakade_point(_closed(["A2", "B2", "C2"], "D2", ["A1", "B1", "C1"],
                                       black=["D1"])) is None


def test_light_after_hands_the_rest_of_the_playout_to_the_light_policy():
    table = shipped_or_random()
    with pytest.raises(ValueError, match="--rollout-light-after must be >= 0"):
        rollout.GammaPolicy(table, light_after=-1)
    for k in (0, 1, 12):
        gp = rollout.GammaPolicy(table, light_after=k)
        out, n = gp.playout(Board(9), seed=5)
        out.check()
        assert out.passes >= 2 and n > 40
        gamma_moves = min(k, n) if k else n
        assert gp.stats["choose"] == gamma_moves and gp.stats["light"] == n - gamma_moves
    # after a light tail the next playout (the cached start position included) starts exact
    b = random_position(9, 20, seed=4)
    gp = rollout.GammaPolicy(table, light_after=3)
    for s in (1, 2):
        gp.playout(b, seed=s)
    b2 = b.copy()
    gp.reset(b2)
    for s in range(8):
        m = gp.choose(b2, seed=s + 1)
        gp.step(b2, m)
        gp.check(b2)


def _tail_word(**on):
    """The light tail's rules word: its default (gammago.rollout.tail.RULES_DEFAULT) with the rules
    named tail_NAME=True / False turned on / off."""
    word = tail.RULES_DEFAULT
    for key, value in on.items():
        bit = tail.RULES[key[len("tail_"):]]
        word = word | bit if value else word & ~bit
    return word


def _tail_draws(b, last, n=3000, table=None, **on):
    """The light tail's choices for the side to move after `last` (the playout's first move,
    played through the policy so that the tail starts right after it); on: the tail's rules
    turned on or off (_tail_word)."""
    gp = rollout.GammaPolicy(shipped_or_random() if table is None else table, light_after=1,
                             tail=_tail_word(**on))
    b = b.copy()
    gp.reset(b)
    gp.step(b, last)
    drawn = [gp.choose(b, seed=s + 1) for s in range(n)]
    assert gp.stats["light"] == n
    return b, drawn


def test_light_tail_answers_the_last_move():
    # White's last move E5 is a stone in atari: the tail captures it at E4, every time
    b = Board(9)
    b.setup(black=["D5", "F5", "E6"], white=["A9"])
    b.to_move = "w"
    after, drawn = _tail_draws(b, "E5", n=200)
    assert set(drawn) == {after.point("E4")}
    # White's last move E6 puts Black's E5 in atari: the tail extends at E4 (three liberties)
    # or captures White's F5 (in atari next to E5) at F4, one of the two each time
    b = Board(9)
    b.setup(black=["E5", "G5", "F6"], white=["D5", "F5"])
    b.to_move = "w"
    after, drawn = _tail_draws(b, "E6", n=200)
    assert set(drawn) == {after.point("E4"), after.point("F4")}
    # ... but not at E4 when that leaves two stones in atari: then only the capture
    b = Board(9)
    b.setup(black=["E5", "G5", "F6"], white=["D5", "F5", "D4", "E3"])
    b.to_move = "w"
    after, drawn = _tail_draws(b, "E6", n=200)
    assert set(drawn) == {after.point("F4")}


def test_light_tail_draws_uniformly_but_no_self_atari():
    # Black can capture the white stone E5 in atari at E6: the gammas draw the capture far
    # more often than 1 in the number of legal moves; the tail (the last move J5, with three
    # liberties and no stone near, needs no answer) draws every legal point but one equally often, and never A1, which would leave
    # the black string B1 C1 one liberty
    b = Board(9)
    b.setup(black=["D5", "F5", "E4", "B1", "C1"], white=["E5", "A2", "B2", "C2", "D2"])
    b.to_move = "w"
    table = shipped_or_random()
    after = b.copy()
    after.play("J5", "w")
    capture, selfatari = after.point("E6"), after.point("A1")
    legal = [after.point(v) for v in after.legal_moves(include_eyes=False)]
    assert capture in legal and selfatari in legal
    assert rollout.GammaPolicy(table).probabilities(after)[capture] > 4 / len(legal)
    after, drawn = _tail_draws(b, "J5", n=4000, table=table)
    others = [p for p in legal if p != selfatari]
    assert set(drawn) <= set(others) and selfatari not in drawn
    counts = np.array([drawn.count(p) for p in others])
    assert stats.chisquare(counts).pvalue > 1e-3
    assert drawn.count(capture) < 2 * len(drawn) / len(others)     # the gammas: > 4x


# --- Mogo's shapes in the light tail --------------------------------------------------------

# the 8 symmetries of the square as maps of (row step, column step)
SYMMETRIES = [lambda r, c: (r, c), lambda r, c: (-r, c), lambda r, c: (r, -c),
              lambda r, c: (-r, -c), lambda r, c: (c, r), lambda r, c: (-c, r),
              lambda r, c: (c, -r), lambda r, c: (-c, -r)]


def _shape_at(a, row, col, src):
    """Whether shape src (tail.TAIL_SHAPES_SRC) matches the empty point (row, col) of the
    colour array a (0 empty, 1 black, 2 white; off the board: 3) in some symmetry and
    colouring, read cell by cell."""
    n = a.shape[0]

    def colour(r, c):
        return a[r, c] if 0 <= r < n and 0 <= c < n else 3

    for x, o in ((1, 2), (2, 1)):
        allowed = {"X": {x}, "O": {o}, ".": {0}, "?": {0, 1, 2, 3}, "x": {0, o, 3},
                   "o": {0, x, 3}, "#": {3}}
        for sym in SYMMETRIES:
            if all(colour(row + dr, col + dc) in allowed[src[i][j]]
                   for i in range(3) for j in range(3) if (i, j) != (1, 1)
                   for dr, dc in [sym(i - 1, j - 1)]):
                return True
    return False


def test_tail_shape_table_matches_reading_the_board():
    # every empty point of random positions (edges and corners included): the table lookup
    # through the incremental 3x3 code says what reading the 8 neighbours off the board says
    table = tail._tail_shape_codes()
    seen = {True: 0, False: 0}
    for size, nmoves, seed in [(9, 20, 1), (9, 40, 2), (9, 60, 3), (7, 30, 4), (13, 80, 5)]:
        b = random_position(size, nmoves, seed)
        a = b.to_array()
        for row in range(size):
            for col in range(size):
                if a[row, col]:
                    continue
                v = "ABCDEFGHJKLMNOPQRST"[col] + str(row + 1)
                direct = any(_shape_at(a, row, col, s) for s in tail.TAIL_SHAPES_SRC)
                assert table[b.code(v) & 0xFFFF] == direct, (size, seed, v)
                seen[direct] += 1
    assert seen[True] > 50 and seen[False] > 50


def test_light_tail_plays_a_shape_around_the_last_move():
    # Black's F6 against White's E6, with Black's D6 on the other side: around F6, the
    # enclosing hane "XOX / ... / ???" matches E5 and E7, the hane "XO. / ... / ?.?" (colours
    # swapped) F5 and F7, nothing matches G5, G6 or G7; White to move, nothing in atari: the
    # tail picks only among the four, uniformly
    b = Board(9)
    b.setup(black=["D6"], white=["E6"])
    b.to_move = "b"
    after = b.copy()
    after.play("F6", "b")
    shapes = tail.tail_shape_moves(after)
    assert sorted(shapes) == ["E5", "E7", "F5", "F7"]
    after, drawn = _tail_draws(b, "F6", n=2000)
    points = [after.point(v) for v in shapes]
    assert set(drawn) == set(points)
    counts = np.array([drawn.count(p) for p in points])
    assert stats.chisquare(counts).pvalue > 1e-3
    # without the shapes the tail draws any legal point
    gp = rollout.GammaPolicy(shipped_or_random(), light_after=1,
                             tail=_tail_word(tail_shapes=False))
    b2 = b.copy()
    gp.reset(b2)
    gp.step(b2, "F6")
    drawn = {gp.choose(b2, seed=s + 1) for s in range(2000)}
    assert len(drawn) > 30


def _selfatari_by_playing(b, v, c):
    """The move leaves its string one liberty and captures nothing (played on a copy)."""
    t = b.copy()
    return t.play(v, c) == 0 and len(t.liberties(v)) <= 1


def test_tail_shape_moves_are_legal_non_eye_and_no_self_atari():
    # along random games: the tail's shape moves are exactly the empty 8 neighbours of the
    # last move where a shape matches and the mover may play (legal, not its own eye) without
    # leaving its new string one liberty; each of the three refusals occurs
    table = tail._tail_shape_codes()
    refused = {"selfatari": 0, "illegal or eye": 0}
    chosen = 0
    for seed in range(6):
        for b in random_game(9, 70, seed):
            c = b.to_move
            last = b.last_move[1]
            col, row = "ABCDEFGHJ".index(last[0]), int(last[1:]) - 1
            want = []
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    r, k = row + dr, col + dc
                    if (dr, dc) == (0, 0) or not (0 <= r < 9 and 0 <= k < 9):
                        continue
                    v = "ABCDEFGHJ"[k] + str(r + 1)
                    if b.color_at(v) != "." or not table[b.code(v) & 0xFFFF]:
                        continue
                    if not b.is_legal(v, c, superko=False) or b.is_eye(v, c):
                        refused["illegal or eye"] += 1
                    elif _selfatari_by_playing(b, v, c):
                        refused["selfatari"] += 1
                    else:
                        want.append(v)
            got = tail.tail_shape_moves(b)
            assert sorted(got) == sorted(want), (seed, b.moves)
            chosen += len(got)
    assert chosen > 100 and all(refused.values()), refused


# A seki that our own playouts reached (9x9, the tail from the empty board): Black's A1-E1 and
# White's A3-D3 C2-F2 F1 have no liberties but A2 and B2, so whoever fills one is captured; every
# other empty point is an eye.
SEKI = ["_OO_O_OO_",
        "O_OOOOOOO",
        "_O_OOXXO_",
        "OOOXOXOOO",
        "XXOXOXXXX",
        "XXXXXX_X_",
        "OOOOXXXXX",
        "__OOOOXXX",
        "XXXXXOX_X"]


@pytest.mark.parametrize("colour", ["b", "w"])
def test_light_tail_seki_passes_rather_than_break_a_seki(colour):
    # the tail's random draws find no point they permit: with the seki rule it passes (a pass
    # is point 0); without it, it falls back on any legal non-eye point, A2 or B2, and kills
    # one side in every playout that reaches the seki
    rows = [r.replace("_", ".") for r in SEKI]
    b = from_diagram(rows, to_move="w" if colour == "b" else "b")
    for lone in (False, True):
        after, drawn = _tail_draws(b, "pass", n=200, tail_lone=lone, tail_seki=True)
        assert after.to_move == colour
        assert sorted(after.legal_moves(include_eyes=False)) == ["A2", "B2"]
        assert set(drawn) == {0}
        after, drawn = _tail_draws(b, "pass", n=200, tail_lone=lone, tail_seki=False)
        assert set(drawn) == {after.point("A2"), after.point("B2")}
    # with one more empty point, B6, where neither side's move is a self-atari, the tail
    # plays it every time
    rows[3] = "O." + rows[3][2:]
    after, drawn = _tail_draws(from_diagram(rows, to_move=b.to_move), "pass", n=200,
                               tail_seki=True)
    assert set(drawn) == {after.point("B6")}


@pytest.mark.parametrize("colour", ["b", "w"])
def test_gamma_moves_refuse_pass_rather_than_break_a_seki(colour):
    # the gammas to the end in the seki above: with the refusal (TAIL_REFUSE) they pass, as the
    # tail's seki rule does; without it they fill A2 or B2 (weights > 0: self-atari is a
    # feature) and kill one side
    b = from_diagram([r.replace("_", ".") for r in SEKI], to_move="w" if colour == "b" else "b")
    for lone in (False, True):
        drawn = {}
        for refuse in (False, True):
            gp = rollout.GammaPolicy(shipped_or_random(), light_after=0,
                                     tail=_tail_word(tail_lone=lone, tail_seki=True,
                                                     tail_refuse=refuse))
            after = b.copy()
            gp.reset(after)
            gp.step(after, "pass")
            assert after.to_move == colour
            drawn[refuse] = {gp.choose(after, seed=s + 1) for s in range(200)}
            assert gp.stats["light"] == 0 and (gp.stats["refused"] > 0) is refuse
        assert drawn[True] == {0}
        assert drawn[False] == {after.point("A2"), after.point("B2")}


def _neighbours(v, size):
    """The on-board orthogonal neighbours of vertex v, as vertices."""
    row, col = parse_vertex(v, size)
    return ["ABCDEFGHJKLMNOPQRST"[cc] + str(rr + 1)
            for rr, cc in ((row - 1, col), (row + 1, col), (row, col - 1), (row, col + 1))
            if 0 <= rr < size and 0 <= cc < size]


@pytest.mark.parametrize("lone,seed", [(True, 1), (False, 2), (True, 3)])
def test_gamma_moves_refusal_keeps_the_sampler_exact(lone, seed):
    """With TAIL_REFUSE the first move is drawn from the gammas' distribution less the bad
    self-ataris (tactics.bad_selfatari; of a lone stone too only with TAIL_LONE): chi-square
    over 50,000 draws, in a position with such points; the weights stay exact over whole
    playouts (selfcheck)."""
    word = _tail_word(tail_lone=lone, tail_refuse=True)
    table = random_table(30 + seed, 1.0)
    gp = rollout.GammaPolicy(table, light_after=0, tail=word)
    plain = rollout.GammaPolicy(table, light_after=0, tail=_tail_word(tail_lone=lone))
    for k in range(40):
        b = random_position(9, 45 + k, seed=seed * 100 + k)
        c = b.to_move
        refused = [v for v in b.legal_moves(include_eyes=False)
                   if tactics.bad_selfatari(b, v, c)
                   and (lone or any(b.color_at(n) == c for n in _neighbours(v, 9)))]
        if refused:
            break
    assert refused, "no position with a refused point"
    probs, raw = gp.probabilities(b), plain.probabilities(b)
    for v in refused:
        assert probs[b.point(v)] == 0 < raw[b.point(v)]
    kept = raw > 0
    kept[[b.point(v) for v in refused]] = False
    assert probs[kept] == pytest.approx(raw[kept] / raw[kept].sum(), rel=1e-9)
    n = 50_000
    counts = gp.first_moves(b, n, seed=seed)
    assert counts[probs == 0].sum() == 0, "drew a refused move or one of weight 0"
    assert gp.stats["refused"] > 0
    assert chi_square_pvalue(counts, probs, n) > 1e-3
    for size in (9, 19):
        assert rollout.selfcheck(table, size=size, games=3, seed=seed, tail=word) > 0


def test_light_tail_lone_refuses_a_lone_stones_bad_self_atari():
    # White's D5, F5, E6 make Black's E5 a lone stone's self-atari in the open (its one
    # liberty E4), the only self-atari on the board. White's last move is A9, far away. The
    # tail's random draws play E5 now and then with tail_lone off, never with it on.
    b = Board(9)
    b.setup(white=["D5", "F5", "E6"])
    b.to_move = "w"
    off_after, off = _tail_draws(b, "A9", n=3000, tail_lone=False)
    on_after, on = _tail_draws(b, "A9", n=3000, tail_lone=True)
    e5 = off_after.point("E5")
    assert tactics.bad_selfatari(off_after, "E5", "b")
    assert off.count(e5) > 10
    assert e5 not in on and len(set(on)) > 40


# --- the mercy rule ------------------------------------------------------------------------

def _lead(b):
    """Black's lead in captures: White stones Black has taken less Black stones White has."""
    return b.captures("b") - b.captures("w")


@pytest.mark.parametrize("mercy", [0, 3, 10])
def test_mercy_rule_ends_a_playout_once_one_side_leads_in_captures_by_more(mercy):
    from gammago.rollout.playout import light_playout, light_playout_mercy
    ended = full = 0
    for seed in range(40):
        start = random_position(9, 30 + seed, 500 + seed)
        base = _lead(start)
        whole, n = light_playout(start, seed)
        out, m, winner = light_playout_mercy(start, mercy, seed)
        if winner is None:
            # never past the threshold (or past it only where the komi outweighs the stones):
            # the very same playout as without the rule
            full += 1
            assert (out.hash, m) == (whole.hash, n)
            assert abs(_lead(out) - base) <= mercy or 0 < 2 * (_lead(out) - base) <= start.komi
        else:
            # it stops at the move that took the lead past the threshold, counted from the
            # start's own captures, and names the side ahead
            ended += 1
            lead = _lead(out) - base
            assert abs(lead) > mercy and winner == ("b" if lead > 0 else "w")
            assert m < n and out.passes < 2
    assert ended > 5 and full > 5 if mercy == 10 else ended > 20, (ended, full)
    # a threshold no game reaches changes nothing
    start = random_position(9, 40, 7)
    assert light_playout_mercy(start, 10 ** 6, 3)[0].hash == light_playout(start, 3)[0].hash
    with pytest.raises(ValueError, match="mercy"):
        light_playout_mercy(start, -1)


def test_mercy_rule_leaves_a_komi_the_captures_cannot_overturn():
    """Black's lead in captures ends a playout only where the komi could be overcome: twice
    the stones (each stone and its point) and the whole board beat it. With a komi of 100 on
    9x9 no playout is won for Black by the rule, and every playout White won by it with komi
    7.5 White wins again (the same moves up to White's lead; those Black led first play on);
    a reverse komi does the same for White; a komi of 30, which the board could overcome but not
    the stones the rule needs (more than 3), lets Black win by it only with more than 15."""
    from gammago.rollout.playout import light_playout_mercy
    won = {}
    for komi in (7.5, 100.0, -100.0, 30.0):
        won[komi] = {"b": 0, "w": 0, None: 0}
        for seed in range(40):
            start = random_position(9, 30 + seed, 500 + seed)
            start.komi = komi
            out, m, winner = light_playout_mercy(start, 3, seed)
            won[komi][winner] += 1
            if winner is not None:
                lead = _lead(out) - _lead(start)
                assert abs(lead) > 3 and 2 * abs(lead) > (komi if winner == "b" else -komi)
    assert won[7.5]["b"] > 5 and won[7.5]["w"] > 5, won
    assert won[100.0]["b"] == 0 and won[100.0]["w"] >= won[7.5]["w"], won
    assert won[-100.0]["w"] == 0 and won[-100.0]["b"] >= won[7.5]["b"], won
    assert 0 < won[30.0]["b"] < won[7.5]["b"], won
