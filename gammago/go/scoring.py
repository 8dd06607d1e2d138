"""Dead stones and the score at the end of a game: by area on the board's own Tromp-Taylor
count, by territory (Japanese rules) as territory plus prisoners.

The engine judges life and death from ownership: the mean final owner of every point over the
playouts of a search, +1 Black .. -1 White ([row][col], row 0 = line 1). A string is dead when
the other colour owns its points on average beyond DEAD_OWNERSHIP, in seki when it is owned
by neither that much and its one or two liberties are owned by nobody; pass-alive strings
(Benson) are always alive. The score with the dead stones removed is the board's area count
(Board.score) of the position without them; the territory score counts the empty regions only
one colour borders, none next to a string in seki, and the prisoners, the dead stones among
them (territory_score). Under territory rules a move is idle when it can change no count
(idle_point: inside settled territory, own or the opponent's, or in dame), and the score is
settled when every region is settled territory or dame (territory_settled).
"""
import numpy as np

from gammago.go.board import Board, format_vertex, parse_vertex

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
    # seki with eyes: a living string of two liberties, one of them owned by nobody and shared
    # with an opponent's living string of two liberties or fewer (filling it would put the
    # filler in atari), e.g. one eye each and a shared liberty
    gone = set(dead) | set(seki)
    for col in ("b", "w"):
        for v in board.stones(col):
            if v in gone or alive_pa.get(v) == col:
                continue
            libs = board.liberties(v)
            if len(libs) != 2:
                continue
            for x in libs:
                if abs(_owner_at(owner, board, x)) >= SEKI_OWNERSHIP:
                    continue
                if any(board.color_at(y) not in (".", col) and y not in dead
                       and len(board.liberties(y)) <= 2 for y in _adjacent(board, x)):
                    string = board.string(v)
                    seki.extend(string)
                    gone.update(string)
                    break
    return dead, seki


def _adjacent(board, vertex):
    r, c = parse_vertex(vertex, board.size)
    return [format_vertex((y, x)) for y, x in _neighbours(r, c, board.size)]


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


# --- territory scoring (Japanese rules) ------------------------------------------------------
SETTLED_OWNERSHIP = 0.8      # territory counts as settled where its owner holds it this much
BUSY_LIBERTIES = 2           # a move next to a string with this few liberties is never idle


def _neighbours(r, c, n):
    return [(y, x) for y, x in ((r - 1, c), (r + 1, c), (r, c - 1), (r, c + 1))
            if 0 <= y < n and 0 <= x < n]


def empty_regions(a):
    """The empty regions of an array board (0 empty, 1 Black, 2 White; [row][col]): a list of
    (points [(row, col)], colours bordering it {1, 2}, stones bordering it [(row, col)])."""
    n = len(a)
    seen = set()
    out = []
    for r0 in range(n):
        for c0 in range(n):
            if a[r0][c0] != 0 or (r0, c0) in seen:
                continue
            points, colours, border, stack = [], set(), set(), [(r0, c0)]
            seen.add((r0, c0))
            while stack:
                r, c = stack.pop()
                points.append((r, c))
                for y, x in _neighbours(r, c, n):
                    v = a[y][x]
                    if v == 0:
                        if (y, x) not in seen:
                            seen.add((y, x))
                            stack.append((y, x))
                    else:
                        colours.add(int(v))
                        border.add((y, x))
            out.append((points, colours, sorted(border)))
    return out


def _without(board, dead):
    """(array board with the `dead` stones taken off, {1: dead black, 2: dead white})."""
    a = board.to_array().copy()
    removed = {1: 0, 2: 0}
    for v in set(dead):
        r, c = parse_vertex(v, board.size)
        if a[r, c]:
            removed[int(a[r, c])] += 1
            a[r, c] = 0
    return a, removed


def territory_counts(board, dead, seki=(), tax="SEKI"):
    """Japanese counting of `board` with the `dead` stones taken off: {colour: (territory,
    prisoners)} for 1 Black and 2 White. Prisoners: the stones captured in the game and the
    dead stones taken off at the end. Territory: the empty points of a region that only one
    colour's stones border; with tax SEKI (no points in seki) not a region that a string in
    seki (`seki`, vertices) borders."""
    a, removed = _without(board, dead)
    seki_points = {parse_vertex(v, board.size) for v in seki}
    terr = {1: 0, 2: 0}
    for points, colours, border in empty_regions(a):
        if len(colours) != 1:
            continue
        if tax == "SEKI" and any(p in seki_points for p in border):
            continue
        terr[next(iter(colours))] += len(points)
    prisoners = {1: board.captures("b") + removed[2], 2: board.captures("w") + removed[1]}
    return {col: (terr[col], prisoners[col]) for col in (1, 2)}


def territory_score(board, dead, seki=(), tax="SEKI", bonus=0.0):
    """Japanese score (Black - White - komi - bonus): territory plus prisoners
    (territory_counts), no points in seki under tax SEKI; bonus: White's handicap points."""
    counts = territory_counts(board, dead, seki, tax)
    black, white = (sum(counts[col]) for col in (1, 2))
    return black - white - board.komi - bonus


def _fresh(board):
    """The (row, col) of the last move, None after a pass or before any move: a territory
    that the last move entered is not settled (an invasion gets its answer, which costs
    nothing by territory once the invader is a prisoner)."""
    last = board.last_move
    if not last or last[1] == "pass":
        return None
    return parse_vertex(last[1], board.size)


def territory_settled(board, owner, dead):
    """Whether the territory count can no longer change with sensible play: with the dead
    stones taken off, every string has more than one liberty, and every empty region is
    either one colour's territory, owned by it beyond SETTLED_OWNERSHIP at every point and not
    entered by the last move, or dame (each of its points next to stones of both colours). An
    empty board is not settled."""
    fresh = _fresh(board)
    a, _ = _without(board, dead)
    if not a.any():
        return False
    n = board.size
    gone = set(dead)
    for col in ("b", "w"):
        for v in board.stones(col):
            if v not in gone and len(board.liberties(v)) < 2 and \
                    not _gains_liberty(board, v, gone):
                return False
    for points, colours, _ in empty_regions(a):
        if len(colours) == 1:
            sign = 1 if 1 in colours else -1
            if fresh in points or any(sign * owner[r][c] < SETTLED_OWNERSHIP
                                      for r, c in points):
                return False
        elif not all({int(a[y][x]) for y, x in _neighbours(r, c, n)} >= {1, 2}
                     for r, c in points):
            return False
    return True


def _gains_liberty(board, vertex, gone):
    """Whether the string at vertex touches a stone in `gone` (taking dead stones off gives it
    liberties: a string in atari next to dead stones is not short of them)."""
    n = board.size
    for v in board.string(vertex):
        r, c = parse_vertex(v, n)
        for y, x in _neighbours(r, c, n):
            if format_vertex((y, x)) in gone:
                return True
    return False


def idle_point(board, owner, dead, vertex):
    """Whether a move at `vertex` can change no territory count: it is no pass, it touches no
    string with BUSY_LIBERTIES or fewer liberties (no fight, no shortage of liberties), and,
    with the dead stones taken off, it lies in one colour's territory owned by it beyond
    SETTLED_OWNERSHIP (its own or the opponent's: a stone there only fills a point or becomes
    a prisoner) and not entered by the last move, or in dame (a region each of whose points
    touches both colours)."""
    if vertex == "pass":
        return False
    n = board.size
    a, _ = _without(board, dead)
    r0, c0 = parse_vertex(vertex, n)
    if a[r0][c0] != 0:
        return False
    gone = set(dead)
    for y, x in _neighbours(r0, c0, n):
        v = format_vertex((y, x))
        if a[y][x] and v not in gone and len(board.liberties(v)) <= BUSY_LIBERTIES:
            return False
    for points, colours, _ in empty_regions(a):
        if (r0, c0) not in points:
            continue
        if len(colours) == 1:
            sign = 1 if 1 in colours else -1
            return _fresh(board) not in points and all(
                sign * owner[r][c] >= SETTLED_OWNERSHIP for r, c in points)
        return all({int(a[y][x]) for y, x in _neighbours(r, c, n)} >= {1, 2}
                   for r, c in points)
    return False
