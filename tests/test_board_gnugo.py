"""The board against something we did not write: GNU Go 3.8 over GTP.

Seeded random games (random legal moves that do not fill the mover's own true eye, until two
passes or MAX_MOVES) are played move by move on gammago's Board and in
`gnugo --mode gtp --chinese-rules --positional-superko`. After EVERY move we compare
  * the whole board (GNU Go `list_stones black` / `list_stones white`), and
  * the legality of every empty point for the side to move (GNU Go `all_legal COLOR`),
and at the end of each game
  * the prisoners (`captures`),
  * the Tromp-Taylor area score and owner of every point, recomputed here in plain Python from
    GNU Go's stone lists (gammago's score() and area() must match it exactly), and
  * GNU Go's own `final_score` (Chinese area scoring), but only at final positions where area
    scoring is unambiguous: GNU Go's `final_status_list dead` is empty. If GNU Go believes some
    stones are dead it removes them before counting, and Tromp-Taylor (which never removes
    stones) legitimately differs; those games are skipped for this one check and counted.

How GNU Go handles superko (read from its source, engine/board.c and interface/play_gtp.c of
GNU Go 3.8, and checked by test_gnugo_superko_triple_ko below):
  * GTP `is_legal`, `all_legal` and `play` all go through is_allowed_move(), which applies the
    simple-ko rule, the suicide rule and, with --positional-superko, is_superko_violation(): the
    stone hash after the move (captures done, ko marker removed) is compared with the position
    before every move in its history and with the current position. That is exactly gammago's
    rule (hist[0..nmoves], positional, stones only), so superko points must agree too.
    (The older GNU Go 3.6 `all_legal` used is_legal(), simple ko only: we require is_legal and
    all_legal to agree, see test_gnugo_all_legal_agrees_with_is_legal.)
  * GNU Go keeps only MAX_MOVE_HISTORY = 500 moves: at the 501st move it folds the oldest 51
    into its initial position and forgets their hashes, so after that it may allow a repetition
    of a forgotten position that gammago forbids. Games are therefore capped at MAX_MOVES = 500.

Random uniform play rarely produces superko situations, so half of the games use a capture
bias (with probability CAPTURE_BIAS a capturing move is preferred when one exists); that gives
many more ko fights, and the test asserts that ko and superko points were actually compared.

Runtime: about 40 s for the whole file on the 2-core development machine (two GNU Go processes
side by side, ~28 s of CPU); 19x19 dominates, mostly GNU Go answering `all_legal`.
"""
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from gammago.go.board import Board
from gammago.arena.gtp_process import GtpProcess

pytestmark = pytest.mark.gnugo

GNUGO_ARGS = ["--mode", "gtp", "--chinese-rules", "--positional-superko"]
KOMI = 7.5
MAX_MOVES = 500          # GNU Go forgets positions beyond its 500-move history (see above)
CAPTURE_BIAS = 0.5       # for odd seeds: chance of preferring a capture when one exists
WORKERS = 2              # GNU Go processes run side by side (the machine has 2 cores)

# (size, number of games): at least 100 on 9x9 and 50 on 19x19; small boards add cheap ko fights
GAME_SETS = [(9, 100), (19, 50), (5, 150), (7, 60)]


# ---------------------------------------------------------------------------------------------
# Reference computations in plain Python (independent of gammago's C code)
# ---------------------------------------------------------------------------------------------
COLUMNS = "ABCDEFGHJKLMNOPQRST"


def tromp_taylor(size, black, white):
    """(score Black minus White before komi, {vertex: 'b'/'w'/'.'}) from stone lists."""
    colour = {}
    for v in black:
        colour[v.upper()] = "b"
    for v in white:
        colour[v.upper()] = "w"
    verts = [f"{COLUMNS[c]}{r + 1}" for r in range(size) for c in range(size)]
    pos = {v: (int(v[1:]) - 1, COLUMNS.index(v[0])) for v in verts}

    def nbrs(v):
        r, c = pos[v]
        for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1)):
            rr, cc = r + dr, c + dc
            if 0 <= rr < size and 0 <= cc < size:
                yield f"{COLUMNS[cc]}{rr + 1}"

    owner = {}
    for v in verts:
        if v in colour:
            owner[v] = colour[v]
    for v in verts:
        if v in owner:
            continue
        region, reach, stack = [v], set(), [v]
        owner[v] = "?"
        while stack:
            q = stack.pop()
            for n in nbrs(q):
                if n in colour:
                    reach.add(colour[n])
                elif n not in owner:
                    owner[n] = "?"
                    region.append(n)
                    stack.append(n)
        mark = reach.pop() if len(reach) == 1 else "."
        for q in region:
            owner[q] = mark
    score = sum(1 for o in owner.values() if o == "b") - sum(1 for o in owner.values() if o == "w")
    return score, owner


def parse_gnugo_score(text):
    """'B+12.5' -> 12.5, 'W+3.5' -> -3.5, '0' -> 0.0"""
    t = text.strip()
    if t in ("0", "Draw"):
        return 0.0
    side, _, value = t.partition("+")
    return float(value) if side == "B" else -float(value)


# ---------------------------------------------------------------------------------------------
# A random game on gammago's board, recorded move by move
# ---------------------------------------------------------------------------------------------
def capturing(board, moves):
    out = []
    for m in moves:
        if board.play(m):
            out.append(m)
        board.undo()
    return out


def random_game(size, seed):
    """Play one seeded random game on gammago's Board; return its record."""
    rng = random.Random(seed * 1000 + size)
    bias = CAPTURE_BIAS if seed % 2 else 0.0
    b = Board(size, KOMI)
    snaps = [(frozenset(), frozenset(), "b", frozenset(b.legal_moves()))]
    nko = nsuperko = ncapt = 0
    while b.passes < 2 and len(b.moves) < MAX_MOVES:
        cands = b.legal_moves(include_eyes=False)
        if bias and cands and rng.random() < bias:
            cands = capturing(b, cands) or cands
        ncapt += b.play(rng.choice(cands) if cands else "pass")
        legal = frozenset(b.legal_moves())
        if b.ko is not None:
            nko += 1
        nsuperko += len(set(b.legal_moves(superko=False)) - legal)
        snaps.append((frozenset(b.stones("b")), frozenset(b.stones("w")), b.to_move, legal))
    area = b.area()
    return {
        "size": size, "seed": seed, "moves": list(b.moves), "snaps": snaps,
        "score": b.score(), "area": {v: o for v, o in area.items()},
        "captures": (b.captures("b"), b.captures("w")),
        "nko": nko, "nsuperko": nsuperko, "ncaptured": ncapt,
    }


# ---------------------------------------------------------------------------------------------
# The same game in GNU Go, and the comparison
# ---------------------------------------------------------------------------------------------
def gnugo_commands(game):
    cmds = [f"boardsize {game['size']}", "clear_board", f"komi {KOMI}", "all_legal black"]
    for colour, vertex in game["moves"]:
        nxt = "white" if colour == "b" else "black"
        cmds += [f"play {colour} {vertex}", "list_stones black", "list_stones white",
                 f"all_legal {nxt}"]
    cmds += ["captures black", "captures white", "final_score", "final_status_list dead"]
    return cmds


def replay(size, moves, upto):
    b = Board(size, KOMI)
    for colour, vertex in moves[:upto]:
        b.play(vertex, colour)
    return b


def gnugo_showboard(gnugo_path, size, moves, upto):
    with GtpProcess([gnugo_path] + GNUGO_ARGS, "gnugo") as g:
        g.pipeline([f"boardsize {size}", "clear_board", f"komi {KOMI}"]
                   + [f"play {c} {v}" for c, v in moves[:upto]])
        return g.send("showboard")


def describe(gnugo_path, game, upto, what):
    moves = game["moves"]
    b = replay(game["size"], moves, upto)
    listing = " ".join(f"{c.upper()} {v}" for c, v in moves[:upto])
    return (f"{game['size']}x{game['size']} game seed {game['seed']}, after move {upto} "
            f"of {len(moves)}: {what}\n"
            f"gammago:\n{b.showboard()}\nGNU Go:\n{gnugo_showboard(gnugo_path, game['size'], moves, upto)}\n"
            f"moves: {listing}")


def compare(gnugo_path, game, replies):
    """Return None if GNU Go agrees everywhere, else a description of the first disagreement."""
    it = iter(replies)
    for _ in range(3):
        ok, text = next(it)
        if not ok:
            return f"GNU Go setup failed: {text}"
    size = game["size"]
    b = Board(size, KOMI)   # replayed alongside, only to name the reason of a legality mismatch
    for i, snap in enumerate(game["snaps"]):
        black, white, to_move, legal = snap
        if i > 0:
            colour, vertex = game["moves"][i - 1]
            ok, text = next(it)
            if not ok:
                return describe(gnugo_path, game, i - 1,
                                f"GNU Go refuses {colour.upper()} {vertex} ({text}), "
                                f"gammago played it")
            b.play(vertex, colour)
            (okb, gb), (okw, gw) = next(it), next(it)
            gb, gw = frozenset(gb.split()), frozenset(gw.split())
            if (gb, gw) != (black, white):
                return describe(gnugo_path, game, i,
                                f"boards differ: black only in gammago {sorted(black - gb)}, "
                                f"only in GNU Go {sorted(gb - black)}; white only in gammago "
                                f"{sorted(white - gw)}, only in GNU Go {sorted(gw - white)}")
        ok, text = next(it)
        gl = frozenset(text.split())
        if not ok or gl != legal:
            extra = {v: b.check_move(v) for v in sorted(gl - legal)}
            return describe(gnugo_path, game, i,
                            f"legal moves for {to_move} differ: GNU Go allows, gammago forbids "
                            f"{extra}; gammago allows, GNU Go forbids {sorted(legal - gl)}")
    (_, cb), (_, cw), (_, fs), (_, dead) = next(it), next(it), next(it), next(it)
    n = len(game["moves"])
    if (int(cb), int(cw)) != game["captures"]:
        return describe(gnugo_path, game, n, f"captures: GNU Go B {cb} W {cw}, gammago "
                                             f"{game['captures']}")
    black, white = game["snaps"][-1][0], game["snaps"][-1][1]
    tt, owner = tromp_taylor(size, black, white)
    if game["score"] != tt - KOMI or game["area"] != owner:
        bad = sorted(v for v in owner if game["area"].get(v) != owner[v])
        return describe(gnugo_path, game, n, f"Tromp-Taylor: gammago {game['score']}, "
                                             f"recomputed {tt - KOMI}; owners differ at {bad}")
    game["gnugo_score_compared"] = not dead.split()
    if not dead.split() and parse_gnugo_score(fs) != game["score"]:
        return describe(gnugo_path, game, n, f"GNU Go final_score {fs} (no dead stones), "
                                             f"gammago {game['score']}")
    return None


def run_games(gnugo_path, size, ngames):
    """Generate and check ngames games with WORKERS GNU Go processes; return (failures, games)."""
    local = threading.local()
    clients = []
    lock = threading.Lock()

    def work(seed):
        if not hasattr(local, "g"):
            local.g = GtpProcess([gnugo_path] + GNUGO_ARGS, "gnugo")
            with lock:
                clients.append(local.g)
        game = random_game(size, seed)
        replies = local.g.pipeline(gnugo_commands(game))
        return game, replies

    try:
        with ThreadPoolExecutor(WORKERS) as pool:
            results = list(pool.map(work, range(ngames)))
    finally:
        for g in clients:
            g.close()
    failures = []
    for game, replies in results:
        msg = compare(gnugo_path, game, replies)
        if msg:
            failures.append(msg)
    return failures, [g for g, _ in results]


@pytest.mark.parametrize("size,ngames", GAME_SETS, ids=[f"{s}x{s}-{n}games" for s, n in GAME_SETS])
def test_random_games_match_gnugo(gnugo_path, size, ngames):
    failures, games = run_games(gnugo_path, size, ngames)
    assert not failures, f"{len(failures)} of {ngames} games disagree with GNU Go; first:\n" + failures[0]
    # the comparison must have covered what it claims to cover
    nmoves = sum(len(g["moves"]) for g in games)
    assert sum(g["ncaptured"] for g in games) > ngames, "random games made too few captures"
    assert sum(g["nko"] for g in games) >= 5, "random games made too few ko positions"
    if size in (5, 9):
        # positions where simple ko allows a move that positional superko forbids
        assert sum(g["nsuperko"] for g in games) >= 3, "no superko points were compared"
    compared = sum(1 for g in games if g.get("gnugo_score_compared"))
    assert compared >= ngames // 2, f"GNU Go's final_score compared in only {compared} games"
    assert nmoves > ngames * size * size // 2


# ---------------------------------------------------------------------------------------------
# How GNU Go answers superko questions
# ---------------------------------------------------------------------------------------------
# Three kos on a 19x19 board. In each, the point pair (A, B): Black stones left of A, above and
# below it; White stones above and below B and right of it. K1 and K3 start with a White stone
# on A (Black may capture at B), K2 with a Black stone on B (White may capture at A).
TRIPLE_KO_SETUP_BLACK = ["D4", "E3", "E5", "D10", "E9", "E11", "D16", "E15", "E17", "F10"]
TRIPLE_KO_SETUP_WHITE = ["F3", "F5", "G4", "F9", "F11", "G10", "F15", "F17", "G16", "E4", "E16"]
# every move captures one stone of a ko; the sixth would recreate the starting position
TRIPLE_KO_CYCLE = [("b", "F4"), ("w", "E10"), ("b", "F16"), ("w", "E4"), ("b", "F10"), ("w", "E16")]


def triple_ko_setup_moves():
    """The set-up stones as played moves (so GNU Go and gammago share the same history)."""
    moves = []
    for i in range(max(len(TRIPLE_KO_SETUP_BLACK), len(TRIPLE_KO_SETUP_WHITE))):
        if i < len(TRIPLE_KO_SETUP_BLACK):
            moves.append(("b", TRIPLE_KO_SETUP_BLACK[i]))
        if i < len(TRIPLE_KO_SETUP_WHITE):
            moves.append(("w", TRIPLE_KO_SETUP_WHITE[i]))
    return moves


def test_gnugo_superko_triple_ko(gnugo_path):
    """The sixth capture of a triple-ko cycle is legal under simple ko and forbidden under
    positional superko: gammago and GNU Go (is_legal, all_legal, play) agree, and GNU Go without
    --positional-superko allows it (so the refusal really is its superko rule)."""
    b = Board(19, KOMI)
    moves = triple_ko_setup_moves() + TRIPLE_KO_CYCLE[:5]
    for colour, vertex in moves:
        b.play(vertex, colour)
    b.check()
    last_colour, last = TRIPLE_KO_CYCLE[5]
    assert b.to_move == last_colour
    assert b.check_move(last) == "superko"
    assert b.check_move(last, superko=False) is None
    assert last not in b.legal_moves()

    base = ["boardsize 19", "clear_board", f"komi {KOMI}"] + [f"play {c} {v}" for c, v in moves]
    for args, expect in ((GNUGO_ARGS, False), (["--mode", "gtp", "--chinese-rules"], True)):
        with GtpProcess([gnugo_path] + args, "gnugo") as g:
            replies = g.pipeline(base + [f"is_legal {last_colour} {last}", f"all_legal {last_colour}",
                                         "list_stones black", "list_stones white"])
            assert all(ok for ok, _ in replies), replies
            is_legal, all_legal = replies[-4][1], replies[-3][1].split()
            assert frozenset(replies[-2][1].split()) == frozenset(b.stones("b"))
            assert frozenset(replies[-1][1].split()) == frozenset(b.stones("w"))
            assert is_legal == ("1" if expect else "0"), (args, is_legal)
            assert (last in all_legal) == expect, (args, all_legal)
            if not expect:
                # apart from the superko point, GNU Go's legal set is gammago's
                assert frozenset(all_legal) == frozenset(b.legal_moves())
                ok, text = g.pipeline([f"play {last_colour} {last}"])[0]
                assert not ok and "illegal" in text


def test_gnugo_all_legal_agrees_with_is_legal(gnugo_path):
    """The main test relies on `all_legal`; check it against `is_legal` point by point on a few
    games with ko fights, including positions with superko points."""
    # seeds chosen (by running random_game) for their superko points, plus one plain game
    games = [random_game(9, seed) for seed in (1, 26, 71)] + [random_game(5, seed) for seed in (37, 99)]
    assert sum(g["nsuperko"] for g in games) >= 5
    with GtpProcess([gnugo_path] + GNUGO_ARGS, "gnugo") as g:
        for game in games:
            size = game["size"]
            points = [f"{COLUMNS[c]}{r + 1}" for r in range(size) for c in range(size)]
            cmds = [f"boardsize {size}", "clear_board", f"komi {KOMI}"]
            for i, (colour, vertex) in enumerate(game["moves"]):
                cmds.append(f"play {colour} {vertex}")
                nxt = "white" if colour == "b" else "black"
                cmds.append(f"all_legal {nxt}")
                cmds += [f"is_legal {nxt} {p}" for p in points]
            replies = g.pipeline(cmds)
            assert all(ok for ok, _ in replies)
            k = 3
            for i in range(len(game["moves"])):
                k += 1
                all_legal = frozenset(replies[k][1].split())
                singles = frozenset(p for p, (_, t) in zip(points, replies[k + 1:k + 1 + len(points)])
                                    if t == "1")
                assert all_legal == singles, (size, game["seed"], i)
                assert all_legal == game["snaps"][i + 1][3]
                k += 1 + len(points)
