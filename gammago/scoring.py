"""Dead stones and the score at the end of a game, on the board's own Tromp-Taylor count.

The engine judges life and death from ownership: the mean final owner of every point over the
playouts of a search, +1 Black .. -1 White ([row][col], row 0 = line 1). A string is dead when
the other colour owns its points on average beyond DEAD_OWNERSHIP, in seki when it is owned
by neither that much and its one or two liberties are owned by nobody; pass-alive strings
(Benson) are always alive. The score with the dead stones removed is the board's area count
(Board.score) of the position without them.
"""
import numpy as np

from gammago.board import Board, parse_vertex

DEAD_OWNERSHIP = 0.5         # a string is dead when the other colour owns its points this much
SEKI_OWNERSHIP = 0.3         # ... and in seki when its liberties are owned by nobody this much


def _owner_at(owner, board, vertex):
    row, col = parse_vertex(vertex, board.size)
    return owner[row, col]


def dead_and_seki(board, owner):
    """(dead vertices, seki vertices) of `board` from ownership `owner`."""
    alive_pa = board.pass_alive()
    dead, seki, seen = [], [], set()
    for col in ("b", "w"):
        sign = 1 if col == "b" else -1
        for v in board.stones(col):
            if v in seen:
                continue
            string = board.string(v)
            seen.update(string)
            if alive_pa.get(v) == col:
                continue
            own = sign * float(np.mean([_owner_at(owner, board, s) for s in string]))
            if own < -DEAD_OWNERSHIP:
                dead.extend(string)
            elif own < DEAD_OWNERSHIP:
                libs = board.liberties(v)
                if len(libs) <= 2 and all(abs(_owner_at(owner, board, x)) < SEKI_OWNERSHIP
                                          for x in libs):
                    seki.extend(string)
    return dead, seki


def score_without(board, dead):
    """Tromp-Taylor area score (Black - White - komi) of `board` with the `dead` stones taken
    off: the board's count of a board set up with the other stones (removing stones leaves every
    string a liberty, so the setup is always legal)."""
    gone = set(dead)
    rest = Board(board.size, board.komi)
    rest.setup([v for v in board.stones("b") if v not in gone],
               [v for v in board.stones("w") if v not in gone])
    return rest.score()


def score_text(score):
    """A score (Black - White) as GTP final_score and SGF RE write it: B+3.5, W+0.5, 0."""
    if score == 0:
        return "0"
    return f"B+{score:g}" if score > 0 else f"W+{-score:g}"


def settled(board):
    """Every point is pass-alive (Benson) for one side or a dame (an empty point next to stones
    of both colours). An empty board is not settled, nor is open space that reaches both
    colours (area scoring's neutral points that are not next to both)."""
    alive = board.pass_alive()
    a = board.to_array()
    n = board.size
    for v, owner in board.area().items():
        if v in alive:
            continue
        if owner != "." or board.color_at(v) != ".":
            return False
        r, c = parse_vertex(v, n)
        touch = {int(a[y, x]) for y, x in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
                 if 0 <= y < n and 0 <= x < n}
        if not {1, 2} <= touch:
            return False
    return True


def score_dame_lost(board, color):
    """Tromp-Taylor score with every neutral point given to the opponent of color (1 / 2)."""
    dame = sum(1 for o in board.area().values() if o == ".")
    return board.score() + (dame if color == 2 else -dame)
