"""Writing SGF game records (with sgfmill): `printsgf` in GTP and every game of `gammago match`.

    data = game_sgf(9, 7.0, [("b", "E5"), ("w", "pass")], result="W+7",
                    black="gammago 0.1.0", white="GNU Go 3.8")
    open("game.sgf", "wb").write(data)

Vertices are GTP text; gammago.go.board.parse_vertex turns them into sgfmill's (row, col) (row 0 is
the bottom line in both).
"""
import datetime

from sgfmill import sgf as sgfmill_sgf

from gammago.go.board import parse_vertex

# The rules every game of ours is played under (DESIGN.md, "Rules"): area scoring,
# suicide illegal, positional superko. SGF has no name for exactly this; Chinese is closest.
RULES = "Chinese"


def _rc(vertex, size):
    rc = parse_vertex(vertex, size)
    if rc is None:
        raise ValueError(f"pass is not a setup stone: {vertex!r}")
    return rc


def game_sgf(size, komi, moves, setup_black=(), setup_white=(), result=None, black=None,
             white=None, handicap=None, to_move=None, comment=None, move_comments=None,
             game_comment=None, date=None):
    """SGF bytes of one game.

    moves: [(colour 'b'/'w', GTP vertex or 'pass')]; setup_black/white: vertices placed before
    the first move; result: an SGF RE value ('B+3.5', 'W+R', 'B+T', 'W+F', '0'); to_move: PL,
    written only when it is not what the moves imply; comment: C of the root node;
    move_comments: {move index (0-based): text} written as C on that move's node;
    game_comment: GC."""
    game = sgfmill_sgf.Sgf_game(size=int(size))
    root = game.get_root()
    from gammago import __version__
    root.set("AP", ("gammago", __version__))
    root.set("KM", float(komi))
    root.set("RU", RULES)
    root.set("DT", (date or datetime.date.today()).isoformat())
    if black:
        root.set("PB", str(black))
    if white:
        root.set("PW", str(white))
    if result is not None:
        root.set("RE", str(result))
    if game_comment:
        root.set("GC", str(game_comment))
    if comment:
        root.set("C", str(comment))
    black_rc = {_rc(v, size) for v in setup_black}
    white_rc = {_rc(v, size) for v in setup_white}
    if black_rc or white_rc:
        root.set_setup_stones(black_rc, white_rc)
    n_handicap = handicap if handicap is not None else (len(black_rc) if black_rc and not white_rc else 0)
    if n_handicap and n_handicap >= 2:
        root.set("HA", int(n_handicap))
    if to_move is not None and (not moves or moves[0][0] != to_move):
        root.set("PL", to_move)
    move_comments = move_comments or {}
    for i, (colour, vertex) in enumerate(moves):
        node = game.extend_main_sequence()
        node.set_move(colour, parse_vertex(vertex, size))
        if i in move_comments:
            node.set("C", str(move_comments[i]))
    return game.serialise()
