"""Large spatial patterns (gammago/moves/spatial.pxd): the hash is the same under the 8
symmetries and the colour swap, the off-board points count, the dictionary finds the largest
pattern, and a table with a dictionary round-trips through its file."""
import random

import numpy as np
import pytest

from gammago.moves import spatial as S
from gammago.go.board import Board, format_vertex

from test_features import transform as _transform      # one of the 8 symmetries, on a vertex


def _random_stones(size, n, seed):
    """The stones after n random moves, and the empty points (shuffled)."""
    rnd = random.Random(seed)
    b = Board(size)
    for _ in range(n):
        b.play(rnd.choice(b.legal_moves(include_eyes=False)))
    empty = [format_vertex((r, c)) for r in range(size) for c in range(size)
             if b.color_at(format_vertex((r, c))) == "."]
    rnd.shuffle(empty)
    return b.stones("b"), b.stones("w"), empty


def _board(size, black, white, to_move="b"):
    b = Board(size)
    b.setup(black=black, white=white)
    b.to_move = to_move
    return b


def test_points_and_sizes():
    assert len(S.POINTS) == 72
    assert S.SIZES == tuple(range(4, 11))
    # the rings d = 2, 3, 4 are the 12-point diamond
    assert sorted(p for p in S.POINTS if S.gridcular(*p) <= 4) == sorted(
        [(1, 0), (-1, 0), (0, 1), (0, -1), (1, 1), (1, -1), (-1, 1), (-1, -1),
         (2, 0), (-2, 0), (0, 2), (0, -2)])


@pytest.mark.parametrize("seed", range(4))
def test_hash_symmetric_and_colour_swapped(seed):
    size = 19
    black, white, empty = _random_stones(size, 90, seed)
    base = _board(size, black, white)
    for v in empty[:40]:
        h = S.hashes_at(base, v)
        assert len(set(h)) == len(h)                       # each size its own hash
        assert [x & 0xF for x in h] == list(S.SIZES)       # the size in the low bits
        for s in range(1, 8):
            t = _board(size, [_transform(x, size, s) for x in black],
                       [_transform(x, size, s) for x in white])
            assert S.hashes_at(t, _transform(v, size, s)) == h, (v, s)
        # colours swapped and the other side to move: the mover sees the same shape
        sw = _board(size, white, black, "w")
        assert S.hashes_at(sw, v) == h
        # the same stones for the other mover: another pattern (unless it is symmetric in colour)
        if S.hashes_at(base, v, "w") == h:
            assert not black and not white


def test_hash_from_scratch_equals_replayed():
    """The hash after a game's moves equals the hash of the same stones set up from scratch."""
    b = Board(19)
    rnd = random.Random(3)
    for _ in range(60):
        mv = rnd.choice(b.legal_moves(include_eyes=False))
        b.play(mv)
    black, white = b.stones("b"), b.stones("w")
    fresh = _board(19, black, white, b.to_move)
    for v in b.legal_moves()[:30]:
        assert S.hashes_at(b, v) == S.hashes_at(fresh, v)


def test_off_board_points_are_hashed():
    """An edge pattern differs from the same stones mid-board; a corner from a side."""
    mid = _board(19, ["K10"], ["L11"])
    edge = _board(19, ["K2"], ["L3"])
    hm, he = S.hashes_at(mid, "K9"), S.hashes_at(edge, "K1")
    assert all(a != b for a, b in zip(hm, he))
    # an empty board: the 4-4 point and the centre differ from size 6 on (d = 5 reaches the
    # edge from the 4-4 point only at ... the first line is 3 steps away: d = 6)
    empty = Board(19)
    c, star = S.hashes_at(empty, "K10"), S.hashes_at(empty, "D4")
    assert c[0] == star[0]          # d <= 4 does not reach the edge from D4
    assert c[-1] != star[-1]
    # every star point's pattern is the same (symmetry)
    assert len({tuple(S.hashes_at(empty, v)) for v in ("D4", "Q4", "D16", "Q16")}) == 1


def test_dictionary_largest_match():
    b = _board(19, ["D4", "Q16"], ["C6"])
    h = S.hashes_at(b, "D5")
    d = S.SpatialDict([h[0], h[3], 12345 << 4 | 5], [4, 7, 5])
    assert d.match(b, "D5") == (2, 7)            # the largest held: size 7
    assert d.lookup(h[0]) == 1
    assert d.match(b, "K10") == (0, 0)
    assert d.checksum == S.SpatialDict([h[0], h[3], 12345 << 4 | 5], [4, 7, 5]).checksum
    with pytest.raises(ValueError):
        S.SpatialDict([h[0], h[0]], [4, 4])


def test_largest_size_caps_the_match_on_one_board_size():
    """set_largest(board, s): spatial_match looks up sizes up to s on boards of that size only
    (through the table's lookup as through SpatialDict.match); the hashes are unchanged."""
    b = _board(19, ["D4", "Q16"], ["C6"])
    h = S.hashes_at(b, "D5")
    d = S.SpatialDict([h[0], h[3]], [4, 7])
    b9 = _board(9, ["D4", "F6"], ["C6"])
    h9 = S.hashes_at(b9, "D5")
    d9 = S.SpatialDict([h9[1], h9[5]], [5, 9])
    assert S.largest(19) == S.largest(9) == max(S.SIZES)
    try:
        S.set_largest(19, 6)
        assert S.largest(19) == 6 and S.largest(9) == max(S.SIZES)
        assert d.match(b, "D5") == (1, 4)          # size 7 is above the cap
        assert S.hashes_at(b, "D5") == h
        assert d9.match(b9, "D5") == (2, 9)        # 9x9 keeps every size
        S.set_largest(9, 8)
        assert d9.match(b9, "D5") == (1, 5)
        with pytest.raises(ValueError, match="largest pattern size 11"):
            S.set_largest(9, 11)
        with pytest.raises(ValueError, match="board size 4"):
            S.set_largest(4, 6)
        with pytest.raises(ValueError, match="board size 25"):
            S.largest(25)
    finally:
        S.set_largest(19, None)
        S.set_largest(9, None)
    assert d.match(b, "D5") == (2, 7)


def test_counter_prunes_and_counts():
    c = S.HashCounter(1024)
    c.add(np.arange(1, 101, dtype=np.uint64).repeat(5))
    h, k = c.items(5)
    assert sorted(h.tolist()) == list(range(1, 101)) and set(k.tolist()) == {5}
    c.add(np.arange(1000, 3000, dtype=np.uint64))       # forces prunes of the singletons
    assert c.prunes >= 1
    h, k = c.items(5)
    assert sorted(h.tolist()) == list(range(1, 101))


def test_harvest_game_hashes_the_played_moves():
    moves = [("b", "D4"), ("w", "Q16"), ("b", "pass"), ("w", "C3")]
    out = S.harvest_game(Board(19), moves)
    assert out.shape == (3, len(S.SIZES))
    b = Board(19)
    assert out[0].tolist() == S.hashes_at(b, "D4")
    b.play("D4", "b")
    b.play("Q16", "w")
    b.play("pass", "b")
    assert out[2].tolist() == S.hashes_at(b, "C3", "w")


# ---------------------------------------------------------------------------------------------
# train-mm harvests a dictionary and trains a table; predict reads it back
# ---------------------------------------------------------------------------------------------
from pathlib import Path  # noqa: E402

from gammago import cli  # noqa: E402
from gammago.moves import features as F, gammas as G  # noqa: E402

DATA = Path(__file__).parent / "data"
GAMES = sorted(str(p) for p in DATA.glob("*.sgf"))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    out = tmp_path_factory.mktemp("spatial") / "tiny.gamma"
    rc = cli.main(["train-mm", *GAMES, "--out", str(out), "--holdout", "0.3", "--workers", "1",
                   "--spatial-min-count", "2", "--min-pattern-count", "1", "--seed", "1"])
    assert rc == 0
    return out


def test_train_mm_harvests_and_predict_reports_sizes(tiny, capsys):
    g = G.load(tiny)
    assert g.dictionary is not None and len(g.dictionary) > 50
    text = tiny.read_text()
    assert text.startswith(f"gammago-gammas 2 ") and "[dictionary]" in text
    assert "spatial dictionary:" in text and "pat12:" not in text
    # the large patterns are weighed: not all at the default
    base = F.GROUP_BASES[F.GROUP_NAMES.index("pat12")]
    assert np.std(np.log(g.table[base + 1: base + 1 + len(g.dictionary)])) > 0.05
    capsys.readouterr()
    assert cli.main(["predict", *GAMES, "--gammas", str(tiny), "--workers", "1", "--json"]) == 0
    import json
    out = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    rows = {r["moves"]: r for r in out["by_move_number"]}
    assert list(rows) == ["1-30", "31-60", "61-90", "91-150", "151-300", "all"]
    sizes = rows["all"]["sizes"]
    assert set(sizes) == {"none", *map(str, S.SIZES)}
    assert abs(sum(sizes.values()) - 1) < 1e-9
    assert sizes["10"] > 0                  # the openings of the training games match large
    assert out["spatial_patterns"] == len(g.dictionary)
    # the table's dictionary is found from the table alone (a copy too)
    gm = G.load(tiny)
    assert F.find_dict(gm.table.copy()).checksum == g.dictionary.checksum


def test_old_tables_still_load_without_a_dictionary():
    for name in ("gammas19.gamma", "rollout19.gamma"):
        g = G.load(G.PATTERNS_DIR / name)
        assert g.dictionary is None and F.find_dict(g.table) is None


def _rewrite(src, dst, fn):
    lines = src.read_text().splitlines()
    dst.write_text("\n".join(fn(lines)) + "\n")
    return dst


def test_mismatched_or_truncated_dictionary_is_refused(tiny, tmp_path):
    at = tiny.read_text().splitlines().index("[dictionary]")
    # a pattern of the dictionary changed: the checksum no longer matches
    bad = _rewrite(tiny, tmp_path / "altered.gamma",
                   lambda ls: ls[:at + 1] + [f"{int(ls[at + 1], 16) ^ 0x10:016x}"] + ls[at + 2:])
    with pytest.raises(G.GammaFileError, match="does not match") as e:
        G.load(bad)
    assert str(bad) in str(e.value)
    # truncated
    cut = _rewrite(tiny, tmp_path / "cut.gamma", lambda ls: ls[:-3])
    with pytest.raises(G.GammaFileError, match="truncated") as e:
        G.load(cut)
    assert str(cut) in str(e.value)
    # another table's dictionary: the header's checksum is the other's
    other = _rewrite(tiny, tmp_path / "other.gamma",
                     lambda ls: [ls[0].rsplit(":", 1)[0] + ":0123456789abcdef"] + ls[1:])
    with pytest.raises(G.GammaFileError, match="does not match"):
        G.load(other)
    # another set of pattern sizes
    sizes = _rewrite(tiny, tmp_path / "sizes.gamma",
                     lambda ls: [ls[0].replace("spatial=4-10", "spatial=3-12")] + ls[1:])
    with pytest.raises(G.GammaFileError, match="pattern sizes"):
        G.load(sizes)


# ---------------------------------------------------------------------------------------------
# The shipped table, and the tree's prior under it
# ---------------------------------------------------------------------------------------------
SHIPPED = G.PATTERNS_DIR / "spatial19.gamma"


def test_shipped_spatial_table_loads():
    g = G.load(SHIPPED)
    assert g.dictionary is not None and len(g.dictionary) > 10000
    assert F.find_dict(g.table) is g.dictionary
    sizes = g.dictionary.sizes_of[1:]
    assert set(np.unique(sizes)) == set(S.SIZES)


def test_tree_prior_ranks_a_joseki_move_above_the_first_line():
    """A real opening (tests/data/tygem-330628647.sgf after 6 moves: Black's 3-4 point at R16,
    White's low approach at P17): the tree's prior under the shipped spatial table puts the
    played answer Q15 (hand-checked: Shusaku's kosumi, a standard joseki reply) above every
    first-line move and among its first five (it is second; rollout19.gamma, the engine's prior
    table, puts it 17th and gammas19.gamma 24th)."""
    from gammago.go import sgf
    from gammago.search import prior
    path = DATA / "tygem-330628647.sgf"
    game = sgf.parse_game(str(path), path.read_bytes())
    b = game.board()
    for colour, vertex in game.moves[:6]:
        b.play(vertex, colour)
    assert game.moves[6] == ("b", "Q15")
    g = G.load(SHIPPED)
    legal = [v for v in b.legal_moves() if v != "pass"]
    r = dict(zip(legal, prior.gamma_ratings(b, g, legal)))
    first_line = [v for v in legal if v[0] in "AT" or v[1:] in ("1", "19")]
    assert r["Q15"] > max(r[v] for v in first_line)
    rank = sorted(legal, key=lambda v: -r[v]).index("Q15")
    assert rank < 5, rank


def test_the_engine_takes_the_spatial_table_as_its_prior_when_set():
    """--set prior_gammas=spatial19.gamma: the engine's tree rates its root children with the
    spatial table (Shusaku's kosumi among the five best rated in the opening above, where the
    default table has it far down); --set prior_largest caps the sizes it looks up."""
    from gammago.engine.engine import Engine
    from gammago.go import sgf
    from engine_args import engine_config
    path = DATA / "tygem-330628647.sgf"
    game = sgf.parse_game(str(path), path.read_bytes())
    ranks = {}
    for name, flags in (("spatial", ["--set", "prior_gammas=spatial19.gamma"]), ("default", [])):
        e = Engine(engine_config(["--mode", "rollouts", "--playouts", "50", "--seed", "1"] + flags))
        e.new_game(19, game.komi)
        for colour, vertex in game.moves[:6]:
            e.play(colour, vertex)
        e.decide("b")
        kids = sorted(e.search.children(), key=lambda ch: -ch[3])
        ranks[name] = [e.board.vertex(ch[0]) for ch in kids].index("Q15")
    assert ranks["spatial"] < 5 < ranks["default"], ranks
    assert S.largest(19) == max(S.SIZES)
    try:
        e = Engine(engine_config(["--mode", "rollouts", "--playouts", "50",
                                  "--set", "prior_gammas=spatial19.gamma",
                                  "--set", "prior_largest=6"]))
        e.new_game(13, 7.5)
        e.decide("b")
        assert S.largest(13) == 6
    finally:
        S.set_largest(13, None)
        S.set_largest(19, None)


@pytest.mark.parametrize("bad", ["missing", "truncated"])
def test_a_prior_table_that_does_not_load_is_refused_and_the_engine_says_what_it_uses(
        bad, tmp_path, caplog):
    """--set prior_gammas=FILE that is missing or truncated: refused with its path and the
    reason, once, and the tree's priors keep the rollouts' table, which the log names."""
    import logging
    from gammago.engine.engine import Engine
    from engine_args import engine_config
    path = tmp_path / "bad.gamma"
    if bad == "truncated":
        path.write_bytes(SHIPPED.read_bytes()[:3000])
    with caplog.at_level(logging.WARNING):
        e = Engine(engine_config(["--mode", "rollouts", "--playouts", "30",
                                  "--set", f"prior_gammas={path}"]))
        e.new_game(9, 7.0)
        assert e.decide("b") is not None
        e.new_game(19, 7.5)
    told = [r.getMessage() for r in caplog.records if "prior_gammas refused" in r.getMessage()]
    assert len(told) == 1, told
    assert str(path) in told[0] and "rollout19.gamma instead" in told[0]
    if bad == "truncated":
        assert "dictionary" in told[0]
