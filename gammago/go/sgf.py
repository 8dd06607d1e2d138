"""SGF game records in, replayable games out.

Sources are .sgf files, directories (searched recursively for .sgf files and archives) and
tar archives (.tar, .tar.gz/.tgz, .tar.bz2, .tar.xz), whose .sgf members are read in memory.
A file that holds a collection of games (several game trees, as GoGui, Sabaki and
`gammago match`'s records write) gives each of them, named `file.sgf#N` (N from 1). A record
that cannot be parsed, or whose moves are illegal, is reported with its name (the path,
`archive.tar.xz:member` or `file.sgf#N`) and the problem; the batch goes on.

    for item in iter_games(["games/", "kgs.tar.xz"], max_games=100):
        if isinstance(item, GameError):
            print(item)                      # name: problem
            continue
        board = item.board()                 # setup stones placed, komi set
        for colour, vertex in item.moves:    # ('b', 'D4'), ('w', 'pass'), ...
            board.play(vertex, colour)

Vertices are GTP text made by gammago.go.board.format_vertex (the one place that converts).
"""
import hashlib
import os
import sys
import tarfile
from dataclasses import dataclass, field

from sgfmill import sgf as sgfmill_sgf
from sgfmill import sgf_grammar

from gammago.go.board import SIZES, Board, format_vertex

ARCHIVE_SUFFIXES = (".tar", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".txz")


class SgfError(ValueError):
    """A record that cannot be used; str() is 'name: problem'."""

    def __init__(self, name, problem):
        super().__init__(f"{name}: {problem}")
        self.name = name
        self.problem = problem


@dataclass
class GameError:
    """What iter_games yields for a bad record (when errors='yield')."""
    name: str
    problem: str

    def __str__(self):
        return f"{self.name}: {self.problem}"


@dataclass
class Game:
    name: str
    size: int
    komi: float
    handicap: int
    setup_black: list = field(default_factory=list)   # vertices
    setup_white: list = field(default_factory=list)
    moves: list = field(default_factory=list)         # [(colour 'b'/'w', vertex or 'pass')]
    result: str = None                                # RE as written, or None
    players: tuple = ("", "")                         # PB and PW as written ('' if absent)
    to_move: str = "b"                                # who moves first after the setup
    setups: dict = field(default_factory=dict)        # setup nodes after the first move
                                                      # (parse_game(setup_in_game=True)):
                                                      # {moves before them: [(AB, AW, AE, PL)]}

    @property
    def winner(self):
        """'b', 'w' or None, from RE."""
        if self.result and self.result[:2].upper() in ("B+", "W+"):
            return self.result[0].lower()
        return None

    def board(self):
        """A new Board with the setup stones placed, komi set, first mover to move."""
        b = Board(self.size, self.komi)
        try:
            b.setup(black=self.setup_black, white=self.setup_white)
        except ValueError as e:
            raise SgfError(self.name, f"bad setup stones: {e}") from None
        b.to_move = self.to_move
        return b

    def replay(self, upto=None):
        """The Board after the first `upto` moves (all when None); SgfError names an illegal
        move (occupied, suicide, ko, or a repeated position)."""
        if self.setups:
            raise SgfError(self.name, "setup stones inside the game: use position()")
        b = self.board()
        for i, (colour, vertex) in enumerate(self.moves[:upto]):
            try:
                b.play(vertex, colour)
            except ValueError as e:
                reason = getattr(e, "reason", str(e))
                raise SgfError(self.name, f"move {i + 1} ({colour} {vertex}) is illegal: {reason}") from None
        return b

    def position(self, upto=None):
        """The position before move `upto` + 1 as a record states it, for loading (GTP
        `loadsgf`): (black stones, white stones, colour to move, moves), where the moves, played
        in turn on a board holding those stones, end in the position. Usually the stones are
        the record's setup and the moves all its moves. A setup node after the first move
        (stones added with AB/AW, removed with AE), or a move of the record that positional
        superko forbids (the record is a fact, and other programs do not check superko),
        starts the board afresh from the stones there: the history before that point (its ko
        and superko) is not kept. SgfError names a move that is illegal otherwise (occupied,
        suicide, simple ko) or a setup stone that is not placeable."""
        moves = self.moves if upto is None else self.moves[:upto]
        b = self.board()
        start, first, to_move = 0, (list(self.setup_black), list(self.setup_white)), self.to_move

        def afresh(black, white, colour):
            fresh = Board(self.size, self.komi)
            try:
                fresh.setup(black=black, white=white)
            except ValueError as e:
                raise SgfError(self.name, f"bad setup stones: {e}") from None
            fresh.to_move = colour
            return fresh

        for i in range(len(moves) + 1):
            for add_b, add_w, empty, pl in self.setups.get(i, ()):
                black, white = _apply_setup(b.stones("b"), b.stones("w"), add_b, add_w, empty)
                colour = pl or (moves[i][0] if i < len(moves) else b.to_move)
                b = afresh(black, white, colour)
                start, first, to_move = i, (black, white), colour
            if i == len(moves):
                break
            colour, vertex = moves[i]
            try:
                b.play(vertex, colour)
            except ValueError as e:
                reason = getattr(e, "reason", str(e))
                if not b.is_legal(vertex, colour, superko=False):
                    raise SgfError(self.name, f"move {i + 1} ({colour} {vertex}) is illegal: "
                                              f"{reason}") from None
                # superko alone forbids it: play it on a board without the history
                fresh = afresh(b.stones("b"), b.stones("w"), colour)
                fresh.play(vertex, colour)
                b = afresh(fresh.stones("b"), fresh.stones("w"), fresh.to_move)
                start, first, to_move = i + 1, (b.stones("b"), b.stones("w")), b.to_move
        return first[0], first[1], to_move, list(moves[start:])


def _apply_setup(black, white, add_b, add_w, empty):
    """The stones after a setup node: AE empties points, AB and AW place stones (over whatever
    stood there); sorted vertex lists."""
    gone = set(empty) | set(add_b) | set(add_w)
    return (sorted({v for v in black if v not in gone} | set(add_b)),
            sorted({v for v in white if v not in gone} | set(add_w)))


def _node_setup(node):
    black, white, empty = node.get_setup_stones()
    return ([format_vertex(rc) for rc in sorted(black)], [format_vertex(rc) for rc in sorted(white)],
            [format_vertex(rc) for rc in sorted(empty)])


def parse_game(name, data, setup_in_game=False):
    """Parse one SGF record (bytes) into a Game; SgfError says what is wrong.

    Setup nodes (AB/AW/AE) before the first move join the root's setup. One after the first
    move makes the record a position, not a game of moves: SgfError, unless setup_in_game,
    where it goes into Game.setups for Game.position (GTP loadsgf)."""
    try:
        g = sgfmill_sgf.Sgf_game.from_bytes(data)
    except ValueError as e:
        raise SgfError(name, f"not a readable SGF record ({e})") from None
    try:
        size = g.get_size()
    except ValueError as e:
        raise SgfError(name, f"bad SZ: {e}") from None
    if size not in SIZES:
        raise SgfError(name, f"board size {size} is not supported ({SIZES[0]} to {SIZES[-1]})")
    root = g.get_root()
    try:
        komi = g.get_komi()
    except ValueError:
        komi = 0.0
    try:
        handicap = g.get_handicap() or 0
    except ValueError as e:
        raise SgfError(name, f"bad HA: {e}") from None
    try:
        result = root.get("RE") if root.has_property("RE") else None
    except ValueError:
        result = None
    players = []
    for prop in ("PB", "PW"):
        try:
            players.append(root.get(prop) if root.has_property(prop) else "")
        except ValueError:
            players.append("")
    try:
        black, white, empty = root.get_setup_stones()
    except ValueError as e:
        raise SgfError(name, "bad setup stones: "
                             f"{str(e) or 'a point off the board or unreadable'}") from None
    game = Game(name=name, size=size, komi=float(komi), handicap=int(handicap),
                setup_black=[format_vertex(rc) for rc in sorted(black)],
                setup_white=[format_vertex(rc) for rc in sorted(white)], result=result,
                players=tuple(players))
    if root.has_property("PL"):
        try:
            game.to_move = root.get("PL")
        except ValueError:
            pass
    try:
        nodes = g.get_main_sequence()
    except ValueError as e:
        raise SgfError(name, f"bad game tree: {e}") from None
    for i, node in enumerate(nodes):
        if i and node.has_setup_stones():
            try:
                add_b, add_w, empty = _node_setup(node)
                pl = node.get("PL") if node.has_property("PL") else None
            except ValueError as e:
                raise SgfError(name, f"bad setup stones in node {i}: "
                                     f"{str(e) or 'a point off the board or unreadable'}") from None
            if game.moves and not setup_in_game:
                raise SgfError(name, f"setup stones inside the game (node {i}) are not supported")
            if game.moves:
                game.setups.setdefault(len(game.moves), []).append((add_b, add_w, empty, pl))
            else:
                game.setup_black, game.setup_white = _apply_setup(
                    game.setup_black, game.setup_white, add_b, add_w, empty)
                if pl:
                    game.to_move = pl
        try:
            colour, move = node.get_move()
        except ValueError as e:
            raise SgfError(name, f"bad move in node {i}: {e}") from None
        if colour is None:
            continue
        if move is not None and not (0 <= move[0] < size and 0 <= move[1] < size):
            raise SgfError(name, f"move {len(game.moves) + 1} is off the board")
        game.moves.append((colour, format_vertex(move)))
    if game.moves and not root.has_property("PL"):
        game.to_move = game.moves[0][0]
    elif not game.moves and handicap >= 2 and not root.has_property("PL"):
        game.to_move = "w"
    return game


def _is_archive(path):
    return str(path).lower().endswith(ARCHIVE_SUFFIXES)


def split_collection(name, data):
    """Yield (name, bytes) for each game tree of one SGF file's bytes: the file itself when it
    holds one, else `name#N` for the N-th. A file with more than one tree that does not parse
    as a whole gives (name, SgfError): its first game alone would pass for all of it."""
    if data.count(b"(;") > 1:          # more than one tree, or variations: look closer
        try:
            trees = sgf_grammar.parse_sgf_collection(data)
        except ValueError as e:
            try:
                sgf_grammar.parse_sgf_game(data)
            except ValueError:
                yield name, data        # not even its first game parses: parse_game says why
                return
            yield name, SgfError(name, f"its first game reads but the rest does not ({e})")
            return
        if len(trees) > 1:
            for i, tree in enumerate(trees, 1):
                yield f"{name}#{i}", sgf_grammar.serialise_game_tree(tree)
            return
    yield name, data


def iter_sources(paths):
    """Yield (name, bytes) for every SGF record in the given files, directories and archives,
    or (name, SgfError) for a source that cannot be read."""
    for path in paths:
        path = os.fspath(path)
        if os.path.isdir(path):
            for root, dirs, files in os.walk(path):
                dirs.sort()
                for f in sorted(files):
                    full = os.path.join(root, f)
                    if f.lower().endswith(".sgf") or _is_archive(f):
                        yield from iter_sources([full])
        elif _is_archive(path):
            try:
                tf = tarfile.open(path, "r:*")
            except (OSError, tarfile.TarError) as e:
                yield path, SgfError(path, f"cannot open archive: {e}")
                continue
            with tf:
                try:
                    for member in tf:
                        if not member.isfile() or not member.name.lower().endswith(".sgf"):
                            continue
                        name = f"{path}:{member.name}"
                        try:
                            data = tf.extractfile(member).read()
                        except (OSError, tarfile.TarError) as e:
                            yield name, SgfError(name, f"cannot read member: {e}")
                            continue
                        yield from split_collection(name, data)
                except (OSError, EOFError, tarfile.TarError) as e:
                    yield path, SgfError(path, f"archive is damaged: {e}")
        else:
            try:
                with open(path, "rb") as f:
                    data = f.read()
            except OSError as e:
                yield path, SgfError(path, f"cannot read: {e.strerror or e}")
                continue
            yield from split_collection(path, data)


def moves_digest(size, moves, setup_black=(), setup_white=()):
    """An 8-byte digest of what makes two records the same game: the board size, the setup
    stones and the moves [(colour, vertex)] (not the names, the players or the comments)."""
    text = repr((size, sorted(setup_black), sorted(setup_white), list(moves)))
    return hashlib.blake2b(text.encode(), digest_size=8).digest()


def split_repeats(held, trained):
    """Held-out games [(name, digest)] in corpus order, and {digest: name} of the training
    games -> (the indices kept, [(name, its twin's name)] for each held-out game whose moves
    repeat a training game's or an earlier held-out game's). A corpus may file one game twice,
    under names the held-out split sends to different sides. The games kept are given by their
    index in `held`."""
    kept, repeats, first = [], [], {}
    for i, (name, digest) in enumerate(held):
        twin = trained.get(digest) or first.get(digest)
        if twin is None:
            first[digest] = name
            kept.append(i)
        else:
            repeats.append((name, twin))
    return kept, repeats


def check_moves(game):
    """SgfError if a move of the game is illegal (occupied, suicide, ko, superko)."""
    game.replay()


def iter_games(paths, max_games=None, errors="report", check=True):
    """Games from files, directories and archives, in order.

    errors: 'report' prints 'name: problem' on stderr and goes on; 'yield' yields a GameError
    in the game's place; 'raise' raises the SgfError. check=True also replays each game to
    catch illegal moves. max_games counts good games."""
    n = 0
    for name, data in iter_sources(paths):
        if max_games is not None and n >= max_games:
            return
        try:
            if isinstance(data, SgfError):
                raise data
            game = parse_game(name, data)
            if check:
                check_moves(game)
        except SgfError as e:
            if errors == "raise":
                raise
            if errors == "yield":
                yield GameError(e.name or name, e.problem)
            else:
                print(f"skipped {e.name or name}: {e.problem}", file=sys.stderr)
            continue
        n += 1
        yield game
