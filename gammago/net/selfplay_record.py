"""Self-play records: one JSON file a game, written whole or not at all, read back for training.

    DIR/selfplay.json          the run's settings (gammago selfplay; --resume checks them)
    DIR/games/000042.json      game 42: moves, result, and for every move the search's visits
    DIR/sgf/000042.sgf         the same game as SGF, for a GUI (not read back)

A game record (format FORMAT):

    {"format": "gammago-selfplay 1", "game": 42, "size": 9, "komi": 7.0, "seed": 43,
     "build": "...", "settings": {...}, "no_resign": false,
     "moves": [["b", "E5"], ["w", "C4"], ...],
     "search": [{"visits": {"E5": 180, "D5": 40, ...}, "root_visits": 220, "winrate": 0.53,
                 "full": true, "sampled": false}, ...],      # one entry per move, in order
     "end": "passes" | "resign" | "max-moves", "winner": "b" | "w" | "", "result": "B+4",
     "score": 4.0, "would_resign": null | {"color": "w", "ply": 31}, "seconds": 12.3}

`visits` is the policy target (the root's moves and their visits, summing to `root_visits`),
`winrate` the search's win rate for the mover, `full` whether that move was searched at the full
playouts (playout-cap randomization: only those train the policy), `sampled` whether the move
played was drawn in proportion to the visits rather than the most visited (with --gumbel:
whether the survivor of sequential halving was not the most visited). `improved` (with
--gumbel only): {move: probability}, the IMPROVED_TOP most likely moves of Gumbel AlphaZero's
policy target softmax(logit + sigma(completed q)). `pruned` (net-root, moves searched at the
full playouts): {move: visits}, the root's visits after KataGo's policy target pruning (the
exploration's visits taken out; RootSearch.pruned_visits). `score` is Black's
Tromp-Taylor area score less komi when the game ended by passes or at the move limit, the
result the game's (Black's win by resignation: "B+R"). `would_resign` (games played with
resignation off): the first move where the side to move would have resigned, to count the
resignations that would have been wrong.

read_game() refuses a truncated file, another format or a record whose moves do not replay,
naming the path (RecordError); the trainer names it and goes on with the rest.
"""
import json
import os

FORMAT = "gammago-selfplay 1"
SETTINGS = "selfplay.json"
IMPROVED_TOP = 32             # entries of a move's `improved` policy target kept


class RecordError(ValueError):
    """A self-play record that cannot be used: the message names the path and the reason."""


def game_path(out, index):
    return os.path.join(out, "games", f"{index:06d}.json")


def sgf_path(out, index):
    return os.path.join(out, "sgf", f"{index:06d}.sgf")


def write_atomic(path, text):
    """Write text to path through a temporary file and a rename: a reader (or a --resume after a
    kill) sees the whole file or none."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)


def write_game(out, record, sgf_text=None):
    """The game's record (and its SGF), each written whole."""
    if sgf_text is not None:
        write_atomic(sgf_path(out, record["game"]), sgf_text)
    write_atomic(game_path(out, record["game"]), json.dumps(record, separators=(",", ":")) + "\n")


def finished_games(out):
    """Indices of the games recorded under out (whole files only: a temporary file left by a
    kill is not a game)."""
    folder = os.path.join(out, "games")
    if not os.path.isdir(folder):
        return set()
    done = set()
    for name in os.listdir(folder):
        stem, ext = os.path.splitext(name)
        if ext == ".json" and stem.isdigit():
            done.add(int(stem))
    return done


def remove_partial(out):
    """Delete the temporary files a killed run left behind; returns how many."""
    n = 0
    for sub in ("games", "sgf"):
        folder = os.path.join(out, sub)
        if os.path.isdir(folder):
            for name in os.listdir(folder):
                if ".tmp" in name:
                    os.remove(os.path.join(folder, name))
                    n += 1
    return n


def read_game(path):
    """The record at path, checked: format, fields, one search entry per move, every move legal
    on a replay, and a score that matches the final board. Raises RecordError naming the path."""
    from gammago.go.board import Board
    try:
        with open(path) as fh:
            rec = json.load(fh)
    except (OSError, UnicodeDecodeError) as e:
        raise RecordError(f"{path}: unreadable ({e})") from None
    except json.JSONDecodeError as e:
        raise RecordError(f"{path}: not a whole JSON record ({e.msg} at line {e.lineno}); "
                          "truncated?") from None
    if not isinstance(rec, dict) or rec.get("format") != FORMAT:
        got = rec.get("format") if isinstance(rec, dict) else type(rec).__name__
        raise RecordError(f"{path}: format {got!r}, this gammago reads {FORMAT!r}")
    for key in ("size", "komi", "moves", "search", "winner", "end"):
        if key not in rec:
            raise RecordError(f"{path}: no {key!r} field")
    moves, search = rec["moves"], rec["search"]
    if len(moves) != len(search):
        raise RecordError(f"{path}: {len(moves)} moves but {len(search)} search entries")
    try:
        board = Board(int(rec["size"]), float(rec["komi"]))
        for i, (colour, vertex) in enumerate(moves):
            if colour != board.to_move:
                raise ValueError(f"move {i + 1} is {colour}'s, {board.to_move} is to move")
            board.play(vertex, colour)
    except (ValueError, TypeError) as e:
        raise RecordError(f"{path}: does not replay: {e}") from None
    if rec["end"] != "resign" and rec.get("score") is not None \
            and abs(board.score() - float(rec["score"])) > 1e-6:
        raise RecordError(f"{path}: score {rec['score']} but the final board scores {board.score()}")
    if rec["winner"] not in ("b", "w", ""):
        raise RecordError(f"{path}: winner {rec['winner']!r}")
    return rec


def game_files(paths):
    """Every game record under the given run folders, record files or folders of runs, sorted."""
    out = []
    for path in paths:
        if os.path.isfile(path):
            out.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs.sort()
            if os.path.basename(root) == "games":
                out.extend(os.path.join(root, f) for f in sorted(files)
                           if f.endswith(".json") and ".tmp" not in f)
    return out


def read_settings(out):
    path = os.path.join(out, SETTINGS)
    if not os.path.isfile(path):
        return None
    with open(path) as fh:
        return json.load(fh)


def write_settings(out, settings):
    write_atomic(os.path.join(out, SETTINGS), json.dumps(settings, indent=1, sort_keys=True) + "\n")
