"""Move features: symmetry and colour invariance, and each tactical feature against a brute-force
recomputation by playing the move on a copy of the board."""
import random

import numpy as np
import pytest

from gammago.moves import features as F
from gammago.go.board import Board, parse_vertex, format_vertex

G = {name: g for g, name in enumerate(F.GROUP_NAMES)}
BASE = dict(zip(F.GROUP_NAMES, F.GROUP_BASES))


def random_game(size, n, seed):
    """n random legal moves (no own-eye filling) from the empty board: [(colour, vertex)]."""
    rnd = random.Random(seed)
    b = Board(size)
    moves = []
    for _ in range(n):
        cands = b.legal_moves(include_eyes=False)
        if not cands:
            break
        v = rnd.choice(cands)
        moves.append((b.to_move, v))
        b.play(v)
    return moves


def transform(vertex, size, s):
    if vertex == "pass":
        return vertex
    r, c = parse_vertex(vertex, size)
    if s & 4:
        r, c = c, r
    if s & 1:
        r = size - 1 - r
    if s & 2:
        c = size - 1 - c
    return format_vertex((r, c))


def replay(size, moves, s=0, swap=False):
    b = Board(size)
    for colour, v in moves:
        if swap:
            colour = "w" if colour == "b" else "b"
        b.play(transform(v, size, s), colour)
    return b


@pytest.mark.parametrize("size,seed", [(9, 1), (13, 2), (19, 3)])
def test_symmetry_and_colour_swap(size, seed):
    moves = random_game(size, {9: 70, 13: 140, 19: 200}[size], seed)
    for upto in (1, 2, len(moves) // 2, len(moves) - 1, len(moves)):
        ref = replay(size, moves[:upto])
        vs, ids = F.legal_features(ref)
        ref_map = dict(zip(vs, map(tuple, ids)))
        for s in range(8):
            for swap in (False, True):
                b = replay(size, moves[:upto], s, swap)
                vs2, ids2 = F.legal_features(b)
                got = dict(zip(vs2, map(tuple, ids2)))
                assert len(got) == len(ref_map)
                for v, f in ref_map.items():
                    assert got[transform(v, size, s)] == f, (upto, s, swap, v)


def test_pattern_table_is_canonical():
    # a code and the colour-swapped code seen by the other side give one id
    b = Board(9)
    for v in ("C3", "D4", "D3", "E4", "C4"):
        b.play(v)
    for v in b.legal_moves():
        code = b.code(v)
        assert 1 <= F.pat3_id(code, "b") <= F.N_PAT3
    codes = F.pat3_codes()
    assert len(set(codes[1:F.N_PAT3 + 1].tolist())) == F.N_PAT3
    # each canonical code maps to its own id
    for i in (1, 2, 100, F.N_PAT3):
        assert F.pat3_id(int(codes[i]), "b") == i


def _libs_after(b, v, colour):
    c = b.copy()
    captured = c.play(v, colour)
    return captured, len(c.liberties(v)), len(c.string(v)), c


@pytest.mark.parametrize("seed", [11, 12])
def test_liberties_after_match_brute_force(seed):
    """libs_after (feat_tactics' count, and the light tail's test for extensions and
    self-ataris) against playing the move on a copy, up to each kmax."""
    size = 9
    moves = random_game(size, 150, seed)
    seen = set()
    for upto in range(20, len(moves), 2):
        b = replay(size, moves[:upto])
        for colour in ("b", "w"):
            for v in b.legal_moves(colour, superko=False):
                if v == "pass":
                    continue
                libs = _libs_after(b, v, colour)[1]
                seen.add(min(libs, 4))
                for kmax in (1, 2, 3, 4):
                    assert F.liberties_after(b, v, colour, kmax) == min(libs, kmax), (v, colour, kmax)
    assert seen == {1, 2, 3, 4}
    with pytest.raises(ValueError):
        F.liberties_after(b, "pass")
    with pytest.raises(ValueError):
        F.liberties_after(b, v, kmax=5)


def _neighbours(b, v):
    r, c = parse_vertex(v, b.size)
    for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        if 0 <= r + dr < b.size and 0 <= c + dc < b.size:
            yield format_vertex((r + dr, c + dc))


def _dist(b, v, w):
    if w is None or w == "pass":
        return None
    r1, c1 = parse_vertex(v, b.size)
    r2, c2 = parse_vertex(w, b.size)
    dx, dy = abs(c1 - c2), abs(r1 - r2)
    return dx + dy + max(dx, dy)


@pytest.mark.parametrize("seed", [5, 6, 7, 8])
def test_features_match_brute_force(seed):
    size = 9
    moves = random_game(size, 120, seed)
    checked = {"capture": 0, "extension": 0, "selfatari": 0, "atari": 0}
    for upto in range(10, len(moves), 3):
        b = replay(size, moves[:upto])
        me = b.to_move
        opp = "w" if me == "b" else "b"
        last = b.moves[-1][1] if b.moves else None
        last2 = b.moves[-2][1] if len(b.moves) > 1 else None
        vs, ids = F.legal_features(b)
        for v, f in zip(vs, ids):
            names = [F.level_name(int(x)) for x in f]
            if v == "pass":
                assert f[G["pass"]] == BASE["pass"] + 2
                assert all(f[g] == F.GROUP_BASES[g] for g in range(1, F.N_GROUPS))
                continue
            assert f[G["pass"]] == BASE["pass"]
            before_opp = {}
            before_own = {}
            for n in _neighbours(b, v):
                col = b.color_at(n)
                if col == opp:
                    before_opp[tuple(b.string(n))] = len(b.liberties(n))
                elif col == me:
                    before_own[tuple(b.string(n))] = len(b.liberties(n))
            ncap, libs, strsize, after = _libs_after(b, v, me)
            # capture: present iff stones were captured, size class right
            cap = f[G["capture"]] - BASE["capture"]
            if ncap:
                checked["capture"] += 1
                assert cap > 0, names
                assert (cap - 1) % 3 == (0 if ncap == 1 else 1 if ncap <= 3 else 2)
                kind = (cap - 1) // 3
                captured_strings = [s for s, n in before_opp.items() if n == 1]
                if kind == 0:
                    assert any(last in s for s in captured_strings)
                else:
                    assert not any(last in s for s in captured_strings)
            else:
                assert cap == 0, names
            # self-atari: one liberty left and nothing captured
            sa = f[G["selfatari"]] - BASE["selfatari"]
            if libs == 1 and ncap == 0:
                checked["selfatari"] += 1
                assert sa == (1 if strsize <= 2 else 2), names
            else:
                assert sa == 0, names
            # extension: an own neighbour string was in atari and the joined string has 2+ libs
            ext = f[G["extension"]] - BASE["extension"]
            if any(n == 1 for n in before_own.values()) and libs >= 2:
                checked["extension"] += 1
                assert ext > 0 and ((ext - 1) % 2 == (1 if libs >= 3 else 0)), names
            else:
                assert ext == 0, names
            # atari: some opponent neighbour string is left with exactly one liberty
            at = f[G["atari"]] - BASE["atari"]
            put = [s for s, n in before_opp.items() if n == 2]
            if put:
                checked["atari"] += 1
                for s in put:
                    assert len(after.liberties(s[0])) == 1
                assert at == 1 + (2 if b.ko else 0) + (1 if max(map(len, put)) >= 2 else 0), names
            else:
                assert at == 0, names
            # distances and edge
            for key, w in (("dist1", last), ("dist2", last2)):
                d = _dist(b, v, w)
                want = 0 if d is None else (max(d, 2) - 1 if d <= 17 else 17)
                assert f[G[key]] - BASE[key] == want
            r, c = parse_vertex(v, size)
            lr, lc = min(r, size - 1 - r) + 1, min(c, size - 1 - c) + 1
            a, b2 = min(lr, lc), max(lr, lc)
            assert F.level_name(int(f[G["edge"]])) == \
                f"edge:{min(a, 5)}{'+' if a >= 5 else ''}/{min(b2, 7)}{'+' if b2 >= 7 else ''}"
            assert 1 <= f[G["pat3"]] - BASE["pat3"] <= F.N_PAT3
    # the random games exercised every tactical feature
    assert all(n > 0 for n in checked.values()), checked


def test_pass_after_pass_and_move_ids():
    b = Board(9)
    b.play("E5")
    assert F.move_ids(b, "pass")[G["pass"]] == BASE["pass"] + 2
    b.play("pass")
    assert F.move_ids(b, "pass")[G["pass"]] == BASE["pass"] + 1
    ids = F.move_ids(b, "D4")
    assert ids[G["dist1"]] == BASE["dist1"]          # the last move was a pass
    assert ids[G["dist2"]] == BASE["dist2"] + 2      # D4 to E5: 1 + 1 + 1 = 3
    with pytest.raises(ValueError):
        F.move_ids(b, "E5")


def test_keys_roundtrip_and_names():
    b = replay(9, random_game(9, 40, 4))
    _, ids = F.legal_features(b)
    assert np.array_equal(F.decode_keys(F.encode_ids(ids)), ids)
    names = [F.level_name(i) for i in range(F.N_FEATURES)]
    assert len(set(names)) == F.N_FEATURES


def test_extract_game_matches_legal_features():
    moves = random_game(9, 60, 9)
    board = Board(9)
    keys, counts, offs, win, mvn = F.extract_game(board, moves)
    assert len(offs) == len(moves) + 1 and board.moves == [] and list(mvn) == list(range(len(moves)))
    b = Board(9)
    for i, (colour, v) in enumerate(moves):
        vs, ids = F.legal_features(b, colour)
        got = F.decode_keys(keys[offs[i]:offs[i + 1]])
        cnt = counts[offs[i]:offs[i + 1]]
        expanded = [tuple(t) for t, c in zip(got, cnt) for _ in range(c)]
        assert sorted(expanded) == sorted(map(tuple, ids))
        assert len(set(map(tuple, got))) == len(got)
        assert tuple(got[win[i]]) == tuple(ids[vs.index(v)])
        b.play(v, colour)
    with pytest.raises(ValueError, match="move 3 .* occupied"):
        F.extract_game(Board(9), [("b", "E5"), ("w", "D5"), ("b", "E5")])


@pytest.mark.benchmark
def test_position_features_speed():
    """A few microseconds per move at most: a timing, so a benchmark (`pytest -m benchmark`) run
    on a quiet machine, not part of the suite."""
    b = replay(19, random_game(19, 150, 10))
    per_call, n = F.bench_position(b, 200)
    assert per_call / n < 5e-6, per_call / n


def test_ids_stay_in_their_groups_on_real_games():
    """Every id written while replaying real games lies inside its group (a packed key that
    overflowed a field would land in the next group)."""
    from pathlib import Path
    from gammago.go import sgf
    lo = np.array(F.GROUP_BASES)
    hi = lo + np.array(F.GROUP_SIZES)
    games = list(sgf.iter_games(sorted((Path(__file__).parent / "data").glob("*.sgf"))))
    games.append(sgf.Game("random", 9, 7.5, 0, moves=random_game(9, 200, 12)))
    for g in games:
        keys, counts, offs, win, mvn = F.extract_game(g.board(), g.moves)
        ids = F.decode_keys(keys)
        assert ((ids >= lo) & (ids < hi)).all(), g.name
        assert np.array_equal(F.encode_ids(ids), keys)


def test_distance_to_a_captured_stone():
    # Black captures White's A1 with A2; for White, A1 (its own last-but-one move, now empty)
    # is at distance 0 from that move: it counts as 2 (move_ids does not check legality)
    b = Board(9)
    for v, c in (("B1", "b"), ("A1", "w"), ("A2", "b")):   # A2 captures A1
        b.play(v, c)
    # now White to move; last2 = A1 (captured, empty)
    ids = F.move_ids(b, "A1", "w")
    assert ids[G["dist2"]] == BASE["dist2"] + 1


def test_the_diamond_sees_two_steps_away():
    """pat12 tells apart positions whose 3x3 around the move is the same but whose points two
    steps away differ (a stone, the edge); pat3 does not."""
    empty = Board(9)
    north = Board(9)
    north.setup(black=["E7"])
    edge = Board(9)
    ids = [F.move_ids(b, v, "b") for b, v in ((empty, "E5"), (north, "E5"), (edge, "E2"))]
    assert ids[0][G["pat3"]] == ids[1][G["pat3"]] == ids[2][G["pat3"]]
    assert len({i[G["pat12"]] for i in ids}) == 3
    assert all(F.level_name(i[G["pat12"]]).startswith("pat12:") for i in ids)
