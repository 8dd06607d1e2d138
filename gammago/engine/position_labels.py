"""Positions sampled from SGF games and labelled by the engine's own search, with their cache.

A label is V*, the win rate for Black of the engine's search of a position (--label-mode:
rollouts, or net-root with the shipped net's priors at the root; --label-playouts playouts, no
early stop, the `gammago gtp` options of --label-engine). Labels are cached in a JSON file (OUT
with .labels.json, gzip where the name ends in .gz) keyed by what a position is (position_key:
the board size, komi, setup stones and the moves that led to it), so that a second run with
other training settings, or another tool (tools/relabel.py, tools/rollout_accuracy.py), does not
search again. `gammago train-balance` trains the rollout gammas on them.
"""
import argparse
import dataclasses
import gzip
import hashlib
import json
import os
import random
import shlex
import sys
from pathlib import Path

from tqdm import tqdm

LABELS_VERSION = 2     # 1 keyed a position by its game's name and move number


def add_label_arguments(p: argparse.ArgumentParser):
    """The options of the search that labels (--label-playouts, --label-mode, --label-engine),
    which tools/relabel.py takes as well."""
    p.add_argument("--label-playouts", type=int, default=10000,
                   help="playouts of the engine search that labels a position "
                        "(default: %(default)s)")
    p.add_argument("--label-mode", choices=("rollouts", "net-root"), default="rollouts",
                   help="the engine search that labels a position: rollouts only, or with the "
                        "net at the root (default: %(default)s)")
    p.add_argument("--label-engine", default="", metavar="OPTIONS",
                   help="further `gammago gtp` options of the search that labels, as one "
                        "string (such as \"--rollout-gammas FILE --rollout-light-after 0\"): "
                        "labels by another engine than the defaults; the mode, playouts, "
                        "seed, threads, resign and early stop are train-balance's own; a "
                        "single flag is given with '=', as --label-engine=--no-reuse "
                        "(default: none)")


def sample_positions(games, per_game, start, seed):
    """[(game index, move number, board)]: up to per_game positions of each game, from move
    `start` to two moves before its end, the same for the same seed."""
    rng = random.Random(seed)
    out = []
    for gi, game in enumerate(games):
        n = len(game.moves)
        cand = list(range(start, n - 1))
        picks = set(rng.sample(cand, min(per_game, len(cand)))) if cand else set()
        b = game.board()
        for i, (colour, vertex) in enumerate(game.moves):
            if i in picks:
                out.append((gi, i, b.copy()))
            b.play(vertex, colour)
    return out


def held_out_names(games, holdout, seed):
    """The names of the games held out of training: a share `holdout` of them (at least one),
    drawn by `seed` (--holdout, --seed; tools/rollout_accuracy.py draws the same)."""
    names = sorted({g.name for g in games})
    return set(random.Random(seed).sample(names, max(1, round(len(names) * holdout))))


def _board_at(game, i):
    b = game.board()
    for colour, vertex in game.moves[:i]:
        b.play(vertex, colour)
    return b


# the settings of the labelling search that train-balance sets itself
_LABEL_OWN = ("--mode", "--playouts", "--seed", "--threads", "--resign", "--no-early-stop",
              "--ponder")


def label_engine_config(options="", mode="rollouts", playouts=10000, seed=1):
    """The EngineConfig of the search that labels: the engine's defaults, changed by the
    `gammago gtp` options in `options` (one string, as --label-engine takes it), with
    train-balance's own mode, playouts and seed, one thread, no resignation, no early stop and
    no pondering. Raises ValueError naming an option that is unknown, has a bad value, or is
    one that train-balance sets itself."""
    from gammago.engine.settings import EngineConfig
    try:
        words = shlex.split(options)
    except ValueError as e:
        raise ValueError(f"--label-engine: {e}") from None
    own = [w.split("=")[0] for w in words if w.split("=")[0] in _LABEL_OWN]
    if own:
        raise ValueError(f"--label-engine: {own[0]} is set by train-balance itself "
                         f"(--label-mode, --label-playouts, --seed)")
    p = argparse.ArgumentParser(prog="--label-engine", add_help=False, exit_on_error=False)
    EngineConfig.add_arguments(p)
    try:
        args, extra = p.parse_known_args(words)
    except (argparse.ArgumentError, SystemExit) as e:
        raise ValueError(f"--label-engine: {e}") from None
    if extra:
        raise ValueError(f"--label-engine: not an option of gammago gtp: {' '.join(extra)}")
    try:
        cfg = EngineConfig.from_args(args)
    except ValueError as e:
        raise ValueError(f"--label-engine: {e}") from None
    return dataclasses.replace(cfg, mode=mode, playouts=playouts, seed=seed, threads=1,
                               early_stop=False, resign=0.0, ponder=False)


def label_engine_options(options=""):
    """--label-engine options as a label cache records them: quoted as shlex would ("" for
    none)."""
    return shlex.join(shlex.split(options))


def label_search(mode, options=""):
    """The label cache's name of a labelling search: its mode, then its --label-engine options
    (label_engine_options), if any. Labels are reused only where it is the same."""
    words = label_engine_options(options)
    return f"{mode} {words}" if words else mode


def _label_worker(args):
    """V* of a list of positions (game, move number) by the engine's search (cfg, an
    EngineConfig: label_engine_config): Black's win rate at the root."""
    size, items, cfg = args
    from gammago.engine.engine import Engine
    e = Engine(cfg)
    out = []
    for game, i in items:
        b = _board_at(game, i)
        e.new_game(size, b.komi)
        e.board = b
        c = b.to_move
        e.reg_genmove(c)
        infos = e.last_infos
        wr = infos[0]["winrate"] if infos else 0.5
        out.append(wr if c == "b" else 1.0 - wr)
    return out


def label_positions(games, positions, size, playouts, threads, seed, mode="rollouts",
                    engine=""):
    """Black's win rate at each of positions by the labelling search (label_engine_config of
    engine, mode, playouts), in threads processes, each chunk of 16 with its own seed."""
    from concurrent.futures import ProcessPoolExecutor
    cfg = label_engine_config(engine, mode, playouts, seed)
    items = [(games[gi], i) for gi, i, _ in positions]
    chunks = [items[i:i + 16] for i in range(0, len(items), 16)]
    labels = []
    with ProcessPoolExecutor(max_workers=max(1, threads)) as pool:
        jobs = [(size, ch, dataclasses.replace(cfg, seed=seed + k))
                for k, ch in enumerate(chunks)]
        bar = tqdm(total=len(positions), desc="label", unit="pos", file=sys.stderr,
                   dynamic_ncols=True)
        for res in pool.map(_label_worker, jobs):
            labels.extend(res)
            bar.update(len(res))
        bar.close()
    return labels


def position_key(game, i):
    """The label cache's key of the position before move i of game: 16 hex digits of a SHA-1
    over the board size, komi, setup stones, first mover and the moves before it, which are
    what the search that labels it sees (the record's path and the game's place in it are
    not)."""
    text = "SZ{} KM{!r} AB{} AW{} PL{};".format(
        game.size, float(game.komi), ",".join(sorted(game.setup_black)),
        ",".join(sorted(game.setup_white)), game.to_move)
    text += ";".join(colour + vertex.lower() for colour, vertex in game.moves[:i])
    return hashlib.sha1(text.encode()).hexdigest()[:16]


def _positions_key(games, positions):
    return [position_key(games[gi], i) for gi, i, _ in positions]


def _read_labels(path):
    """A label cache's text; a name ending in .gz is read through gzip."""
    data = path.read_bytes()
    return (gzip.decompress(data) if path.suffix == ".gz" else data).decode()


def _write_labels(path, text):
    """Write a label cache's text in place of path's (through a temporary file), compressed
    where the name ends in .gz, as _read_labels reads it."""
    data = text.encode()
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)
    os.replace(tmp, path)


def read_label_cache(path, games=()):
    """A label cache: (its playouts, its labelling search (label_search: the mode, and the
    --label-engine options it was made with, if any), {position_key: Black's win rate}, the
    labels it holds by game name and move number alone: {(name, move number): Black's win
    rate}). A cache of version 1 keyed every position by its game's name and move number: those
    that name a position of `games` are keyed by the position (position_key) here, the rest
    are returned aside, to be written back with the cache until a run is given their games.
    Raises ValueError (naming path) on a cache of another version or a malformed one, OSError
    or EOFError (a truncated .gz) where it cannot be read."""
    path = Path(path)
    try:
        d = json.loads(_read_labels(path))
        version = d.get("version")
        ok = (version in (1, LABELS_VERSION) and isinstance(d.get("playouts"), int)
              and len(d["positions"]) == len(d["labels"]))
        if ok and version == 1:
            named = {(name, i): y for (name, i), y in zip(d["positions"], d["labels"])}
            known = {}
        elif ok:
            known = {str(k): y for k, y in zip(d["positions"], d["labels"])}
            aside = d.get("unkeyed", {"positions": [], "labels": []})
            named = {(name, i): y for (name, i), y in zip(aside["positions"], aside["labels"])}
    except (ValueError, TypeError, KeyError, AttributeError) as e:
        raise ValueError(f"{path}: not a label cache of train-balance ({e})") from None
    if not ok:
        raise ValueError(f"{path}: not a label cache of this version (version "
                         f"{d.get('version')!r}, this code reads {LABELS_VERSION} and 1)")
    for game in games:
        for i in range(len(game.moves) + 1):
            y = named.pop((game.name, i), None)
            if y is not None:
                known.setdefault(position_key(game, i), y)
    return (d["playouts"], label_search(d.get("mode", "rollouts"), d.get("engine", "")), known,
            named)


def load_or_label(path, games, positions, size, playouts, threads, seed, mode="rollouts",
                  engine=""):
    """The labels of positions, from the cache at path where it has them (made at the same
    playouts, mode and engine options; a position is keyed by what it is: position_key) and by
    the search for
    the rest, each position once. The cache is written back with every label it held and the
    new ones, so a run on more games labels only what it adds."""
    key = _positions_key(games, positions)
    path = Path(path)
    search = label_search(mode, engine)
    known, named = {}, {}
    if path.exists():
        try:
            made_playouts, made_mode, cached, aside = read_label_cache(path, games)
            if made_playouts == playouts and made_mode == search:
                known, named = cached, aside
            else:
                print(f"train-balance: {path} was made by another search ({made_mode}, "
                      f"{made_playouts} playouts; this run: {search}, "
                      f"{playouts}); labelling again", file=sys.stderr)
        except (OSError, EOFError, ValueError) as e:   # EOFError: a truncated .gz
            print(f"train-balance: cannot read {path} ({e}); labelling again", file=sys.stderr)
    todo, wanted = [], set()          # the first position of each key the cache lacks
    for k, h in enumerate(key):
        if h not in known and h not in wanted:
            wanted.add(h)
            todo.append(k)
    if not todo:
        print(f"train-balance: labels from {path}", file=sys.stderr)
        return [known[h] for h in key]
    if known:
        print(f"train-balance: {sum(h in known for h in key)} labels from {path}, "
              f"{len(todo)} positions to label", file=sys.stderr)
    new = label_positions(games, [positions[k] for k in todo], size, playouts, threads, seed,
                          mode, engine)
    for k, y in zip(todo, new):
        known[key[k]] = y
    record = {"version": LABELS_VERSION, "playouts": playouts, "mode": mode,
              "positions": list(known), "labels": list(known.values())}
    options = label_engine_options(engine)
    if options:
        record["engine"] = options
    if named:
        print(f"train-balance: {len(named)} of the labels in {path} name games not given (a "
              f"cache of version 1 keyed positions by game); kept as they were",
              file=sys.stderr)
        record["unkeyed"] = {"positions": [list(k) for k in named],
                             "labels": list(named.values())}
    _write_labels(path, json.dumps(record))
    return [known[h] for h in key]
