"""Property tests (hypothesis): random legal sequences of moves, passes and undos on every size.

After every step Board.check() recomputes strings, liberties, the Zobrist hash, the empty list
and every 3x3 code from the colours alone and compares them with the incremental ones. On top:
  * undo restores exactly the state before the move (hash, side to move, ko, captures, stones);
  * the hash depends on the stones only: the final stones set up on a fresh board, or played on
    a fresh board in any order, give the same hash;
  * positional superko is exactly "the position after the move occurred before", checked against
    our own list of hashes; simple-ko legality against a plain-Python rule from the colours;
  * the Tromp-Taylor score and owners match a plain-Python flood fill.
"""
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gammago.go.board import Board

COLUMNS = "ABCDEFGHJKLMNOPQRST"
SETTINGS = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])


def points(n):
    return [f"{COLUMNS[c]}{r + 1}" for r in range(n) for c in range(n)]


def neighbours(n, v):
    c, r = COLUMNS.index(v[0]), int(v[1:]) - 1
    for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        if 0 <= r + dr < n and 0 <= c + dc < n:
            yield f"{COLUMNS[c + dc]}{r + dr + 1}"


def colours(b):
    return {v: b.color_at(v) for v in points(b.size)}


def groups(n, col):
    """Plain-Python strings: {vertex: (frozenset stones, frozenset liberties)}."""
    out = {}
    for v, c in col.items():
        if c == "." or v in out:
            continue
        stones, libs, stack = {v}, set(), [v]
        while stack:
            q = stack.pop()
            for w in neighbours(n, q):
                if col[w] == c and w not in stones:
                    stones.add(w)
                    stack.append(w)
                elif col[w] == ".":
                    libs.add(w)
        g = (frozenset(stones), frozenset(libs))
        for s in stones:
            out[s] = g
    return out


def simple_legal(n, col, grp, v, me, ko):
    """Legal under simple ko, from colours alone: empty, not the ko point, not suicide."""
    if col[v] != "." or v == ko:
        return False
    opp = "w" if me == "b" else "b"
    for w in neighbours(n, v):
        if col[w] == ".":
            return True
        _, libs = grp[w]
        if col[w] == me and len(libs) > 1:
            return True
        if col[w] == opp and len(libs) == 1:
            return True
    return False


def tromp_taylor(n, col):
    owner = {v: c for v, c in col.items() if c != "."}
    for v in col:
        if v in owner:
            continue
        region, reach, stack = [v], set(), [v]
        owner[v] = "?"
        while stack:
            q = stack.pop()
            for w in neighbours(n, q):
                if col[w] != ".":
                    reach.add(col[w])
                elif w not in owner:
                    owner[w] = "?"
                    region.append(w)
                    stack.append(w)
        mark = reach.pop() if len(reach) == 1 else "."
        for q in region:
            owner[q] = mark
    return owner


def state(b):
    return (b.hash, b.to_move, list(b.moves), b.ko, b.passes, b.captures("b"), b.captures("w"),
            b.to_array().tobytes())


def capturing_moves(b, legal):
    """Legal moves next to an opponent string in atari (they capture)."""
    opp = "w" if b.to_move == "b" else "b"
    n = b.size
    out = []
    for v in legal:
        for w in neighbours(n, v):
            if b.color_at(w) == opp and b.liberties(w) == [v]:
                out.append(v)
                break
    return out


@st.composite
def sequences(draw, min_size=5, max_size=19, max_steps=160):
    n = draw(st.integers(min_size, max_size))
    steps = draw(st.integers(0, max_steps))
    seed = draw(st.integers(0, 2 ** 32 - 1))
    # how often to pass / undo / prefer captures, so that kos, passes and undo all happen
    p_pass = draw(st.sampled_from([0.0, 0.02, 0.1]))
    p_undo = draw(st.sampled_from([0.0, 0.05, 0.2]))
    p_capture = draw(st.sampled_from([0.0, 0.5, 0.9]))
    return n, steps, seed, p_pass, p_undo, p_capture


def play_sequence(n, steps, seed, p_pass, p_undo, p_capture, check_every_step=True, after_capture=None):
    """Random legal play with undo; checks undo exactness and Board.check() as it goes, and
    calls after_capture(board, history) after every capturing move.
    Returns the board and the list of position hashes since the start (ours, not the board's)."""
    rng = random.Random(seed)
    b = Board(n)
    history = [b.hash]
    stack = []
    for _ in range(steps):
        r = rng.random()
        if r < p_undo and stack:
            before, hist_len = stack.pop()
            b.undo()
            assert state(b) == before
            del history[hist_len:]
        else:
            legal = b.legal_moves(include_eyes=False)
            if rng.random() < p_capture:
                legal = capturing_moves(b, legal) or legal
            move = "pass" if (not legal or r < p_undo + p_pass) else rng.choice(legal)
            stack.append((state(b), len(history)))
            captured = b.play(move)
            assert captured >= 0
            assert b.hash not in history or move == "pass"
            history.append(b.hash)
            if captured and after_capture:
                after_capture(b, history)
        if check_every_step:
            b.check()
    b.check()
    return b, history


@settings(max_examples=100, **SETTINGS)
@given(sequences())
def test_incremental_state_equals_recomputation(seq):
    play_sequence(*seq)


@settings(max_examples=40, **SETTINGS)
@given(sequences(), st.randoms(use_true_random=False))
def test_hash_depends_on_the_stones_only(seq, rnd):
    b, _ = play_sequence(*seq, check_every_step=False)
    black, white = b.stones("b"), b.stones("w")
    # the final stones as setup stones on a fresh board
    s = Board(b.size)
    s.setup(black=black, white=white)
    s.check()
    assert s.hash == b.hash
    assert s.to_array().tolist() == b.to_array().tolist()
    # the final stones played one by one in a random order (no capture can happen: every
    # partial position's strings keep a liberty of the final position)
    stones = [(v, "b") for v in black] + [(v, "w") for v in white]
    rnd.shuffle(stones)
    p = Board(b.size)
    for v, c in stones:
        assert p.play(v, c) == 0
    p.check()
    assert p.hash == b.hash


def verify_against_plain_python(b, history):
    """Strings, liberties, simple-ko legality, positional superko and Tromp-Taylor of the
    current position, each recomputed here without the board's C code. Returns the number of
    superko points seen."""
    n = b.size
    col = colours(b)
    grp = groups(n, col)
    me = b.to_move
    for v, (stones, libs) in grp.items():
        assert b.string(v) == sorted(stones)
        assert b.liberties(v) == sorted(libs)
    # the hash after each simply-legal move, found by playing it on a board that holds the same
    # stones and no history (where it cannot be a superko violation)
    fresh = Board(n)
    fresh.setup(black=b.stones("b"), white=b.stones("w"))
    fresh.to_move = me
    past = set(history)
    nsuperko = 0
    for v in points(n):
        simple = simple_legal(n, col, grp, v, me, b.ko)
        reason = b.check_move(v)
        assert (b.check_move(v, superko=False) is None) == simple, v
        if not simple:
            assert reason in ("occupied", "suicide", "ko"), (v, reason)
            continue
        fresh.play(v)
        after = fresh.hash
        fresh.undo()
        if after in past:
            assert reason == "superko", v
            nsuperko += 1
        else:
            assert reason is None, (v, reason)
    owner = tromp_taylor(n, col)
    assert b.area() == owner
    score = sum(o == "b" for o in owner.values()) - sum(o == "w" for o in owner.values())
    assert b.score() == score - b.komi
    return nsuperko


@settings(max_examples=100, **SETTINGS)
@given(sequences(max_size=9, max_steps=200))
def test_legality_superko_and_score_against_plain_python(seq):
    # checked after every capture (where kos and repetitions arise) and at the end
    b, history = play_sequence(*seq, check_every_step=False,
                               after_capture=verify_against_plain_python)
    verify_against_plain_python(b, history)


def test_superko_points_are_met_by_these_sequences():
    """The plain-Python superko check above is only worth something if random capture-biased
    play on small boards reaches positions with superko points: make sure it does."""
    seen = []
    for seed in range(30):
        play_sequence(5, 200, seed, 0.02, 0.0, 0.9, check_every_step=False,
                      after_capture=lambda b, h: seen.append(verify_against_plain_python(b, h)))
    assert sum(seen) >= 1


@settings(max_examples=30, **SETTINGS)
@given(sequences(max_steps=120), st.integers(1, 40))
def test_copy_is_independent_and_equal(seq, extra):
    b, _ = play_sequence(*seq, check_every_step=False)
    c = b.copy()
    assert state(c) == state(b)
    c.check()
    before = state(b)
    rng = random.Random(extra)
    for _ in range(extra):
        legal = c.legal_moves(include_eyes=False)
        c.play(rng.choice(legal) if legal else "pass")
    c.check()
    assert state(b) == before
    # the copy's undo stack is its own: undoing all its extra moves gives b's state back
    for _ in range(extra):
        c.undo()
    assert state(c) == before


def random_game_to_the_end(n, seed):
    """Uniform random play without filling own eyes until two passes: groups end with eyes."""
    rng = random.Random(seed)
    b = Board(n)
    while b.passes < 2 and len(b.moves) < 4 * n * n:
        legal = b.legal_moves(include_eyes=False)
        b.play(rng.choice(legal) if legal else "pass")
    return b


def attack_pass_alive(b, seed, moves):
    """Benson soundness: whoever owns pass-alive stones passes forever while the other side
    plays `moves` random legal moves (eyes included); no pass-alive stone may ever be taken.
    Returns the number of pass-alive stones checked."""
    alive = b.pass_alive()
    rng = random.Random(seed)
    checked = 0
    for owner in ("b", "w"):
        stones = [v for v, o in alive.items() if o == owner and b.color_at(v) == owner]
        if not stones:
            continue
        checked += len(stones)
        attacker = "w" if owner == "b" else "b"
        a = b.copy()
        for _ in range(moves):
            a.to_move = attacker
            legal = a.legal_moves(attacker)
            a.play(rng.choice(legal) if legal else "pass", attacker)
            a.play("pass", owner)
            lost = [v for v in stones if a.color_at(v) != owner]
            assert not lost, f"pass-alive stones {lost} captured:\n{a.showboard()}"
        a.check()
    return checked


@settings(max_examples=25, **SETTINGS)
@given(st.integers(5, 9), st.integers(0, 2 ** 32 - 1))
def test_pass_alive_stones_cannot_be_captured(n, seed):
    b = random_game_to_the_end(n, seed)
    attack_pass_alive(b, seed, 3 * n * n)


def test_random_games_do_reach_pass_alive_groups():
    """Coverage of the property above: finished random games do contain pass-alive groups."""
    assert sum(attack_pass_alive(random_game_to_the_end(9, s), s, 50) > 0 for s in range(10)) >= 5
