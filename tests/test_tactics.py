"""The tactical reader (pyx/tactics) on positions kept as data files, and its invariants: a
read leaves the board exactly as it was; play-and-undo gives the same board as a plain play."""
import random

import pytest

from gammago.moves import features as F
from gammago.go import tactics
from gammago.go.board import Board

from tactics_positions import all_positions
from tool_module import load_tool

POSITIONS = all_positions()


def _answer(pos, b):
    kind = pos.ask[0]
    if kind in ("capture", "save"):
        got, move = getattr(tactics, kind)(b, pos.ask[1])
        return got, move
    if kind in ("atari_works", "escape_fails", "selfatari", "bad_selfatari", "net"):
        return getattr(tactics, kind)(b, pos.ask[1], pos.to_move), None
    if kind == "false_eye":
        return tactics.false_eye(b, pos.ask[1], pos.to_move), None
    if kind == "nakade":
        return tactics.nakade_point(b, pos.last), None
    raise ValueError(f"{pos}: unknown question {kind!r}")


def test_the_positions_cover_every_question():
    kinds = {p.ask[0] for p in POSITIONS}
    assert kinds >= {"capture", "save", "atari_works", "escape_fails", "bad_selfatari",
                     "false_eye", "nakade", "net"}


@pytest.mark.parametrize("pos", POSITIONS, ids=repr)
def test_position(pos):
    b = pos.board()
    before = b.to_array().copy(), b.hash, [b.code(v) for v in _empties(b)]
    got, move = _answer(pos, b)
    if pos.ask[0] == "nakade":
        want = None if pos.expect[0] == "none" else pos.expect[0]
        assert got == want
    else:
        want = {"yes": True, "no": False}[pos.expect[0]]
        assert got is want, f"{pos}: {pos.ask} gave {got} (move {move})"
        if want and len(pos.expect) > 1:
            assert move in pos.expect[1].split("|"), f"{pos}: move {move}"
    after = b.to_array(), b.hash, [b.code(v) for v in _empties(b)]
    assert (before[0] == after[0]).all() and before[1:] == after[1:]


def _empties(b):
    return [v for v, c in b.area().items() if b.color_at(v) == "."]


def _random_position(rng, size, nmoves):
    b = Board(size)
    for _ in range(nmoves):
        legal = b.legal_moves(include_eyes=False)
        if not legal:
            break
        b.play(rng.choice(legal))
    return b


@pytest.mark.parametrize("seed", range(6))
def test_reading_restores_the_board_byte_for_byte(seed):
    rng = random.Random(seed)
    size = rng.choice([5, 7, 9, 13, 19])
    b = _random_position(rng, size, rng.randrange(10, size * size))
    snap = b.snapshot_bytes()
    for v in b.legal_moves():
        if v == "pass":
            continue
        for c in "bw":
            tactics.atari_works(b, v, c)
            tactics.escape_fails(b, v, c)
            tactics.net(b, v, c)
            tactics.bad_selfatari(b, v, c)
            assert b.snapshot_bytes() == snap, (v, c)
    for c in "bw":
        for v in b.stones(c):
            tactics.capture(b, v)
            tactics.save(b, v)
            assert b.snapshot_bytes() == snap, v


def _joins(b, v, c):
    """Does c playing the empty `v` join a string of c?"""
    col, row = "ABCDEFGHJKLMNOPQRST".index(v[0]), int(v[1:])
    for dc, dr in ((1, 0), (-1, 0), (0, 1), (0, -1)):
        if 0 <= col + dc < b.size and 1 <= row + dr <= b.size:
            if b.color_at("ABCDEFGHJKLMNOPQRST"[col + dc] + str(row + dr)) == c:
                return True
    return False


def test_bad_selfatari_is_read_without_playing():
    """A self-atari is judged off the board as it stands (the rollouts ask it of their random
    moves); it must give the answer of playing the move and reading the string it makes:
    killing shapes in the opponent's eye, of a lone stone or of strings it joins, and
    snapbacks."""
    joins = lone = good_joins = good_lone = 0
    for seed in range(200):
        rng = random.Random(500 + seed)
        size = rng.choice([5, 7, 9])
        b = _random_position(rng, size, rng.randrange(10, 3 * size * size))
        for v in b.legal_moves():
            if v == "pass":
                continue
            for c in "bw":
                if not tactics.selfatari(b, v, c):
                    continue
                got = tactics.bad_selfatari(b, v, c)
                assert got == tactics.bad_selfatari_read(b, v, c), (b.showboard(), v, c)
                if _joins(b, v, c):
                    joins += 1
                    good_joins += not got
                else:
                    lone += 1
                    good_lone += not got
    # the killing shapes and snapbacks did come up
    assert joins > 100 and good_joins > 5 and lone > 100 and good_lone > 5, \
        (joins, good_joins, lone, good_lone)


@pytest.mark.parametrize("seed", range(6))
def test_play_and_undo_equals_play(seed):
    """board_try_play writes exactly what board_play writes, and board_undo takes it back."""
    rng = random.Random(100 + seed)
    size = rng.choice([5, 9, 19])
    b = _random_position(rng, size, rng.randrange(5, 2 * size * size))
    snap = b.snapshot_bytes()
    ref = Board(size)
    for v in b.legal_moves():
        after = tactics.undo_roundtrip(b, v)
        assert b.snapshot_bytes() == snap, v
        ref.restore_bytes(snap)
        ref.play(v)
        assert after == ref.snapshot_bytes(), v


def _level(ids, name):
    g = F.GROUP_NAMES.index(name)
    return ids[g] - F.GROUP_BASES[g]


def _reading_levels(b, v, c):
    """The read groups' levels as features.pxd defines them, from the reader's answers."""
    own_atari = any(b.color_at(n) == c and len(b.liberties(n)) == 1 for n in _neighbours(b, v))
    capture = any(b.color_at(n) not in (".", c) and len(b.liberties(n)) == 1
                  for n in _neighbours(b, v))
    ladder = 0
    if own_atari and not capture:
        r = tactics.escape_fails(b, v, c)
        ladder = 2 if r is True else 3 if r is False else 0
    elif tactics.atari_works(b, v, c) is True:
        ladder = 1
    race = 1 if tactics.saves_2lib(b, v, c) is True else 0
    nakade = 1 if b.last_move and b.last_move[1] != "pass" and tactics.nakade_point(b) == v else 0
    return ladder, race, nakade


def _neighbours(b, v):
    col, row = "ABCDEFGHJKLMNOPQRST".index(v[0]), int(v[1:])
    out = []
    for dc, dr in ((0, 1), (1, 0), (0, -1), (-1, 0)):
        if 0 <= col + dc < b.size and 1 <= row + dr <= b.size:
            out.append("ABCDEFGHJKLMNOPQRST"[col + dc] + str(row + dr))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_the_read_feature_groups_are_the_readers_answers(seed):
    """move_features' ladder / race / nakade levels are what pyx/tactics answers, on the
    tactical positions and on random boards; every level occurs."""
    seen = set()
    boards = [p.board() for p in POSITIONS] if seed == 0 else []
    rng = random.Random(seed)
    boards += [_random_position(rng, 9, rng.randrange(20, 70)) for _ in range(12)]
    for b in boards:
        c = b.to_move
        for v in b.legal_moves(superko=False):
            ids = F.move_ids(b, v, c)
            got = (_level(ids, "ladder"), _level(ids, "race"), _level(ids, "nakade"))
            assert got == _reading_levels(b, v, c), (v, c)
            seen.update((name, lv) for name, lv in zip(("ladder", "race", "nakade"), got) if lv)
    if seed == 0:
        assert {("ladder", 1), ("ladder", 2), ("ladder", 3), ("race", 1)} <= seen, seen


# a white stone that black can chase along a ladder to the edge (D5 E4 F4 E5 F5 ...)
LADDER = [". . . . . . . . .",
          ". . . . . . . . .",
          ". . . . . . . . .",
          ". . . . . . . . .",
          ". . . . . . . . .",
          ". . X O . . . . .",
          ". . . X X . . . .",
          ". . . . . . . . .",
          ". . . . . . . . ."]


def test_the_trees_ladder_adjustment():
    """The priors' ladder adjustment (prior.ladder_factors, as the tree and net-root's root apply
    it): an atari that starts a working ladder is raised, one that starts a ladder the opponent
    escapes is lowered, an atari whose string runs out to three liberties is left alone, and an
    escape into a working ladder is lowered most."""
    from gammago.search import prior
    from test_board_cases import from_diagram
    ladder = LADDER
    broken = list(ladder)
    broken[2] = ". . . . . . O . ."       # G7 breaks the ladder D5 E4 F4 E5 ...
    up, futile, plain = prior.ladder_factors(from_diagram(ladder), ["D5", "E4", "A1"])
    assert up > 1.0 and futile == 1.0 and plain == 1.0     # E4 drives D4 out to three liberties
    down, out, plain = prior.ladder_factors(from_diagram(broken), ["D5", "E4", "A1"])
    assert down < 1.0 and out == 1.0 and plain == 1.0
    # after the atari at D5, white's escape at E4: into the working ladder, or out of the broken one
    for diagram, fails in ((ladder, True), (broken, False)):
        board = from_diagram(diagram)
        board.play("D5", "b")
        assert bool(tactics.escape_fails(board, "E4")) == fails
        (escape,) = prior.ladder_factors(board, ["E4"])
        assert (escape < down) if fails else escape == 1.0


@pytest.mark.gnugo
def test_captures_read_agree_with_gnugo_attack(gnugo_path):
    """The capture reader against GNU Go 3.8's `attack` on the strings of one or two liberties of
    real positions (the five 19x19 records of tests/data, every 15th move from move 30, compared
    by tools/tactics_vs_gnugo.py): every capture the reader reads must be one GNU Go finds, and
    it must find most of GNU Go's (GNU Go reads deeper: strings of three liberties, nets in nets,
    ko). A string the reader runs out on counts as one GNU Go captures and the reader misses."""
    import pathlib
    from gammago.go import sgf
    positions = []
    for f in sorted((pathlib.Path(__file__).parent / "data").glob("*.sgf")):
        game = sgf.parse_game(f.name, f.read_bytes())
        positions += [(f.name, 19, game.moves[:k]) for k in range(30, len(game.moves), 15)]
    c, listed = load_tool("tactics_vs_gnugo").compare(positions, tactics.BUDGET, gnugo_path)
    gnugo_yes = c["both_yes"] + c["gnugo_only"] + c["unknown"]
    assert c["both_yes"] + c["gnugo_only"] > 100
    assert c["ours_only"] == 0, listed
    assert c["both_yes"] >= 0.8 * gnugo_yes, (c["both_yes"], gnugo_yes)


@pytest.mark.gnugo
def test_tactics_vs_gnugo_tool(gnugo_path, tmp_path, capsys):
    """tools/tactics_vs_gnugo.py: the counts cover every weak string once, a JSON record is
    written, and a malformed record is named and skipped while the rest go on."""
    import json
    import pathlib
    tool = load_tool("tactics_vs_gnugo")
    data = pathlib.Path(__file__).parent / "data"
    out = tmp_path / "t.json"
    tool.main([str(data / "2001-02-16-7.sgf"), str(data / "tygem-330628647.sgf"),
               str(data / "bad" / "truncated.sgf"), "--games", "3", "--json", str(out),
               "--gnugo", gnugo_path])
    cap = capsys.readouterr()
    assert "truncated.sgf" in cap.err and "skipped" in cap.err
    rec = json.loads(out.read_text())
    c = rec["counts"]
    assert rec["positions"] == 2
    strings = c["both_yes"] + c["both_no"] + c["ours_only"] + c["gnugo_only"] + c["unknown"]
    assert strings > 0 and f"{strings} strings of 1-2 liberties" in cap.out
    saves = sum(v for k, v in c.items() if k.startswith("save_"))
    # asked for every string GNU Go attacks (those the reader ran out on among them)
    assert c["both_yes"] + c["gnugo_only"] <= saves <= c["both_yes"] + c["gnugo_only"] + c["unknown"]
    assert c["ours_only"] == 0
