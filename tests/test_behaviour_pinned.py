"""The engine's choices pinned: at fixed playouts and seed on one thread the search is
deterministic, so the move it plays and the visits of its top root children are fixed numbers.
A change that means to keep behaviour (a refactor, a speed-up) must leave them as they are;
a change that means to alter play updates them, and says so.

Two settings: UCT with rollouts (--mode rollouts, pinned on 9x9) and the default a user gets on
9x9 and up (--mode auto: net-root, the net's priors at the root, a UCT tree per root child;
pinned on 9x9 and 19x19). Each scenario plays two moves in one engine, so the second search
starts from the subtree kept from the first (tree reuse)."""
import os

import pytest

from gammago import shipped_dir
from gammago.engine.engine import Engine, EngineConfig

SHIPPED_MODEL = shipped_dir("models") / "gammago-net-b6c64.onnx"
TOP = 4          # root children pinned per search (visits, best first)
EXPECTED_GAME = ("D6 D7 C7 E7 G7 G6 E6 F4 F6 G5 H7 F7 D8 C4 C5 B4 D4 D3 C3 C2 E3 D2 E4 F3 E2 F2 "
                 "F1 G1 E1 G3 D1 B2 C1 B5 B6 A6 A7 A5 B1 B8 B7 F8 G8 F9 E9 F5 G9 H6 J6 E5",
                 ['B8', 'D7', 'E7', 'F7', 'F8', 'F9'], "B+17.5")

# (size, --mode, playouts, moves before the first genmove, colour to move, the reply between the
#  two genmoves, expected [(move, [(child, visits)...]) for each genmove]); --mode auto plays
#  net-root on these sizes
SCENARIOS = {
    "9x9 rollouts, empty board": (
        9, "rollouts", 3000, [], "b", "E5",
        [('D6', [('D6', 807), ('D3', 415), ('G6', 280), ('F4', 279)]),
         ('D5', [('D5', 687), ('D4', 429), ('F7', 375), ('E6', 267)])]),
    "9x9 rollouts, opening": (
        9, "rollouts", 3000, [("b", "E5"), ("w", "C4"), ("b", "D3"), ("w", "G5")], "b", "C6",
        [('F6', [('F6', 756), ('F3', 640), ('F4', 400), ('F7', 187)]),
         ('B5', [('B5', 502), ('D6', 424), ('D4', 405), ('D7', 273)])]),
    "9x9 net-root, empty board": (
        9, "auto", 3000, [], "b", "E5",
        [('E7', [('E7', 560), ('D4', 512), ('E5', 248), ('F5', 240)]),
         ('C6', [('C6', 576), ('D5', 488), ('D6', 320), ('F5', 272)])]),
    "19x19 net-root, empty board": (
        19, "auto", 800, [], "b", "Q16",
        [('Q17', [('Q17', 128), ('C4', 128), ('D4', 128), ('R4', 64)]),
         ('P16', [('P16', 352), ('R17', 99), ('R16', 88), ('D17', 48)])]),
    "19x19 net-root, corner approach": (
        19, "auto", 800, [("b", "Q16"), ("w", "D4"), ("b", "Q4"), ("w", "D16"), ("b", "C14")], "w",
        "C12",
        [('F17', [('F17', 512), ('D11', 96), ('G17', 48), ('C12', 48)]),
         ('C10', [('C10', 240), ('O3', 128), ('C7', 80), ('C6', 48)])]),
}


def play_scenario(size, mode, playouts, setup, colour, reply):
    e = Engine(EngineConfig(playouts=playouts, seed=1, threads=1, mode=mode))
    e.new_game(size, 7.5)
    for c, v in setup:
        e.play(c, v)
    out = []
    other = "w" if colour == "b" else "b"
    for turn in range(2):
        move = e.genmove(colour)
        out.append((move, [(d["move"], d["visits"]) for d in e.last_infos[:TOP]]))
        if turn == 0:
            e.play(other, reply if reply != move else "pass")
    return e, out


@pytest.mark.parametrize("name", SCENARIOS)
def test_moves_and_root_visits_are_pinned(name):
    size, mode, playouts, setup, colour, reply, expected = SCENARIOS[name]
    if mode == "auto" and not os.path.isfile(SHIPPED_MODEL):
        pytest.skip("the shipped net is not here")
    e, got = play_scenario(size, mode, playouts, setup, colour, reply)
    assert e.mode == ("rollouts" if mode == "rollouts" else "net-root")
    assert got == expected


def test_self_play_and_its_final_score_are_pinned():
    """A short 9x9 self-play game at fixed playouts, then the dead stones and the score
    (final_status_list / final_score: a flat Monte-Carlo search on the position)."""
    e = Engine(EngineConfig(playouts=300, seed=2, threads=1, mode="rollouts"))
    e.new_game(9, 7.5)
    moves = []
    for i in range(50):
        m = e.genmove("bw"[i % 2])
        moves.append(m)
        if m == "resign" or moves[-2:] == ["pass", "pass"]:
            break
    got = (" ".join(moves), e.final_status_list("dead"), e.final_score())
    assert got == EXPECTED_GAME
