"""SGF records as training positions for the net (`gammago train-net --data`), torch-free.

A few positions are sampled from each game, so that no game's result dominates the value
targets, about `games` games across the whole corpus (files, directories, tar archives read in
place), each game from its own random stream (game_rng: the same sample for any number of
reading processes). Games are split train / held-out by a hash of their name (a held-out game
whose moves repeat a training game's is named and left out); the name is the path as given
(`DATA/archive.tar.gz:member`, `DATA/dir/game.sgf`), so the same split needs `--data` written
the same way (the models' cards give the commands). The positions come as the trainer's
dataset (gammago.net.selfplay_positions's layout without the sparse policy targets): {which}_x packed
planes (gammago.net.planes, the function the engine calls), _move, _value (+1 when the side to move
won), _vmask, _ply, _plies, _game, _names for which in (train, heldout).
"""
import multiprocessing
import os
import sys
import tarfile
import zlib

import numpy as np
from tqdm import tqdm

from gammago.net import planes as P
from gammago.go.board import Board, format_vertex
from gammago.net.selfplay_positions import policy_index
from gammago.go.sgf import iter_sources, moves_digest, split_repeats

SIZE = 19                       # the corpus is 19x19; the net itself is size-free
NPLANES = P.PLANES


def iter_sgf_sources(paths):
    """(name, bytes) of every game under paths: .sgf files (each game of a collection as
    `name#N`), directories, tar archives (read in place), as gammago.go.sgf.iter_sources reads
    them; a source that cannot be read is (name, SgfError), which read_game raises."""
    for path in paths:
        if not (os.path.isdir(path) or os.path.isfile(path)):
            raise SystemExit(f"gammago train-net: {path}: no such file or directory")
    yield from iter_sources(paths)


def read_game(data, size=SIZE):
    """sgfmill game -> (winner 'b'/'w', [(colour, vertex)]) or raise ValueError."""
    from sgfmill import sgf
    if isinstance(data, Exception):
        raise data
    game = sgf.Sgf_game.from_bytes(data)
    if game.get_size() != size:
        raise ValueError(f"size {game.get_size()}")
    winner = game.get_winner()
    if winner not in ("b", "w"):
        raise ValueError("no winner")
    root = game.get_root()
    if root.has_setup_stones():
        raise ValueError("setup stones")
    moves = []
    for node in game.get_main_sequence()[1:]:
        colour, move = node.get_move()
        if colour is not None:
            moves.append((colour, format_vertex(move)))
    return winner, moves


def is_heldout(name, permille):
    return zlib.crc32(name.encode()) % 1000 < permille


def positions_of_game(winner, moves, picks, size=SIZE):
    """Replay and return (planes list, move index list, value list) at the move numbers picked
    (in increasing order). The value is +1 when the side to move at that position (the colour of
    the move played there) won the game, -1 when it lost."""
    board = Board(size, 7.5)
    out_planes, out_moves, out_values = [], [], []
    picks = sorted(set(picks))
    j = 0
    for i, (colour, vertex) in enumerate(moves):
        if j < len(picks) and picks[j] == i:
            board.to_move = colour
            x = P.planes(board)
            out_planes.append(np.packbits(x.astype(bool).ravel()))
            out_moves.append(policy_index(board, vertex))
            out_values.append(1 if colour == winner else -1)
            j += 1
            if j == len(picks):
                break
        board.play(vertex, colour)
    return out_planes, out_moves, out_values


def game_rng(seed, name):
    """The random stream of one game (its sampling and its picks): the same whatever the number of
    workers and whichever games come before it."""
    return np.random.default_rng([seed, zlib.crc32(name.encode())])


def read_share(paths, wid, workers, p_train, permille, per_game, value_per_game, seed, size=SIZE,
               counter=None):
    """Read the games whose index in the corpus is wid modulo workers. Returns the sampled
    positions as arrays, each position with its game's index in the corpus (`src`), the games'
    names and lengths, and the skip messages."""
    xs, ms, vs, vm, srcs, plies, held = [], [], [], [], [], [], []
    games = {}                     # src -> (name, length, heldout, digest of the moves)
    skipped = []
    seen = 0
    for i, (name, data) in enumerate(iter_sgf_sources(paths)):
        if i % workers != wid:
            continue
        seen += 1
        if counter is not None and seen % 16 == 0:
            with counter.get_lock():
                counter.value += 16
        rng = game_rng(seed, name)
        is_held = is_heldout(name, permille)
        if not is_held and rng.random() >= p_train:
            continue
        try:
            winner, moves = read_game(data, size)
        except Exception as e:  # noqa: BLE001 (sgfmill raises several kinds)
            skipped.append(f"train-net: skipping {name}: {e}")
            continue
        if len(moves) < 2:
            continue
        k = min(per_game, len(moves))
        picks = np.sort(rng.choice(len(moves), size=k, replace=False))
        try:
            x, m, v = positions_of_game(winner, moves, picks, size)
        except ValueError as e:
            skipped.append(f"train-net: skipping {name}: {e}")
            continue
        mask = np.ones(len(picks), np.int8)
        if value_per_game and len(picks) > value_per_game:   # the value learns from a few of them
            mask[:] = 0
            mask[rng.choice(len(picks), size=value_per_game, replace=False)] = 1
        games[i] = (name, len(moves), is_held, moves_digest(size, moves))
        xs.extend(x)
        ms.extend(m)
        vs.extend(v)
        vm.append(mask)
        srcs.extend([i] * len(x))
        plies.extend(picks.tolist())
        held.extend([is_held] * len(x))
    return {"x": np.stack(xs) if xs else np.zeros((0, (NPLANES * size * size + 7) // 8), np.uint8),
            "move": np.array(ms, np.int16), "value": np.array(vs, np.int8),
            "vmask": np.concatenate(vm) if vm else np.zeros(0, np.int8),
            "src": np.array(srcs, np.int64), "ply": np.array(plies, np.int16),
            "held": np.array(held, bool), "games": games, "skipped": skipped, "seen": seen}


def _share_to_queue(job, queue, counter):
    try:
        queue.put((job[1], read_share(*job, counter=counter)))
    except BaseException as e:  # noqa: BLE001 (the parent reports it)
        queue.put((job[1], f"{type(e).__name__}: {e}"))


def build_dataset(paths, games, per_game, heldout_games, seed, total_games_hint, workers=1, value_per_game=0,
                  size=SIZE):
    """Sample about `games` training games and `heldout_games` held-out games across the whole
    corpus; per_game positions from each (value targets on value_per_game of them, 0 = all).
    Each game draws from its own random stream (game_rng), so the sample is the same for any
    number of workers. Returns dict of numpy arrays, games in corpus order."""
    # at least 1 per mille when any game is to be held out; none at all when none is asked for
    permille = max(1, round(1000 * heldout_games / total_games_hint)) if heldout_games > 0 else 0
    p_train = min(1.0, games / (total_games_hint * (1 - permille / 1000)))
    jobs = [(paths, w, workers, p_train, permille, per_game, value_per_game, seed, size)
            for w in range(workers)]
    counter = multiprocessing.Value("q", 0)
    bar = tqdm(total=total_games_hint, desc="reading games", unit="game", mininterval=2)
    if workers == 1:
        shares = [read_share(*jobs[0], counter=counter)]
    else:   # forked processes: nothing of this module is pickled, only the shares they send back
        ctx = multiprocessing.get_context("fork")
        queue = ctx.Queue()
        procs = [ctx.Process(target=_share_to_queue, args=(job, queue, counter), daemon=True) for job in jobs]
        for pr in procs:
            pr.start()
        got = {}
        while len(got) < workers:
            try:
                wid, share = queue.get(timeout=2)
            except Exception:  # noqa: BLE001 (queue.Empty: nothing yet)
                dead = [pr for pr in procs if pr.exitcode not in (None, 0)]
                if dead:
                    raise SystemExit(f"gammago train-net: a reading process died (exit code {dead[0].exitcode})")
            else:
                if isinstance(share, str):
                    raise SystemExit(f"gammago train-net: reading process {wid} failed: {share}")
                got[wid] = share
            bar.n = min(total_games_hint, counter.value)
            bar.refresh()
        for pr in procs:
            pr.join()
        shares = [got[w] for w in range(workers)]
    bar.n = min(total_games_hint, counter.value)
    bar.close()
    skipped = [msg for sh in shares for msg in sh["skipped"]]
    for msg in skipped:
        print(msg, file=sys.stderr)
    allgames = {}
    for sh in shares:
        allgames.update(sh["games"])
    cat = {k: np.concatenate([sh[k] for sh in shares]) for k in ("x", "move", "value", "vmask", "src", "ply", "held")}
    # a held-out game whose moves repeat a training game's (or an earlier held-out game's) is
    # left out: a corpus may file one game twice, under names the hash sends to both sides
    trained = {}                                           # digest -> its first training game
    for s, (name, _, held, d) in sorted(allgames.items()):
        if not held:
            trained.setdefault(d, name)
    held_srcs = [s for s in sorted(allgames) if allgames[s][2]]
    kept, twins = split_repeats([(allgames[s][0], allgames[s][3]) for s in held_srcs], trained)
    for name, twin in twins[:10]:
        print(f"train-net: not evaluated: held-out {name} repeats the moves of {twin}", file=sys.stderr)
    if len(twins) > 10:
        print(f"train-net: not evaluated: {len(twins) - 10} more held-out games that repeat another game's "
              "moves", file=sys.stderr)
    repeats = sorted(set(held_srcs) - {held_srcs[i] for i in kept})
    if repeats:
        keep = ~np.isin(cat["src"], repeats)
        cat = {k: v[keep] for k, v in cat.items()}
    order = np.argsort(cat["src"], kind="stable")      # corpus order, whatever the workers
    out = {"seen": sum(sh["seen"] for sh in shares), "skipped": len(skipped), "repeats": len(repeats),
           "size": np.int64(size)}
    for which, held in (("train", False), ("heldout", True)):
        sel = order[cat["held"][order] == held]
        srcs = cat["src"][sel]
        game_src = np.unique(srcs)                                   # sorted: corpus order
        gid = np.searchsorted(game_src, srcs).astype(np.int32)
        out[f"{which}_x"] = cat["x"][sel] if len(sel) else np.zeros((0, cat["x"].shape[1]), np.uint8)
        out[f"{which}_move"] = cat["move"][sel]
        out[f"{which}_value"] = cat["value"][sel]
        out[f"{which}_vmask"] = cat["vmask"][sel]
        out[f"{which}_game"] = gid
        out[f"{which}_ply"] = cat["ply"][sel]                          # moves played before the position
        out[f"{which}_plies"] = np.array([allgames[s][1] for s in srcs], np.int16)   # moves in its game
        out[f"{which}_names"] = np.array([allgames[s][0] for s in game_src])
    return out


def as_sparse_targets(data, k):
    """A dataset of SGF moves with its move targets also as self-play's sparse distributions
    (the move played with probability 1), so that it can be mixed with self-play positions."""
    out = dict(data)
    for which in ("train", "heldout"):
        move = data[f"{which}_move"]
        pidx = np.zeros((len(move), k), np.int16)
        pprob = np.zeros((len(move), k), np.float16)
        pidx[:, 0] = np.maximum(move, 0)
        pprob[:, 0] = move >= 0
        out[f"{which}_pidx"], out[f"{which}_pprob"] = pidx, pprob
    return out


def merge_datasets(a, b):
    """Self-play positions (a) and SGF records of the same board size (b) in one dataset."""
    if data_size(a) != data_size(b):
        raise SystemExit(f"gammago train-net: cannot mix {data_size(a)}x{data_size(a)} self-play positions with "
                         f"{data_size(b)}x{data_size(b)} records")
    b = as_sparse_targets(b, a["train_pidx"].shape[1])
    out = {"size": np.int64(data_size(a))}
    for which in ("train", "heldout"):
        for key in ("x", "move", "pidx", "pprob", "value", "vmask", "ply", "plies", "names"):
            out[f"{which}_{key}"] = np.concatenate([a[f"{which}_{key}"], b[f"{which}_{key}"]])
        out[f"{which}_game"] = np.concatenate([a[f"{which}_game"],
                                               b[f"{which}_game"] + len(a[f"{which}_names"])])
    return out


def write_heldout_tar(names, out, limit=0):
    """Copy the held-out records (names 'archive:member' or file paths) into the tar `out`."""
    names = [str(n) for n in names]
    if limit and len(names) > limit:      # evenly spread over the corpus, not just its start
        names = [names[i * len(names) // limit] for i in range(limit)]
    by_archive = {}
    for n in names:
        archive, sep, member = n.rpartition(":") if ".tar" in n else ("", "", n)
        by_archive.setdefault(archive, set()).add(member)
    with tarfile.open(out, "w") as tout:
        for archive, members in sorted(by_archive.items()):
            if not archive:
                for m in sorted(members):
                    tout.add(m, arcname=os.path.basename(m))
                continue
            with tarfile.open(archive, "r:*") as tin:
                for m in tin:
                    if m.name in members:
                        tout.addfile(m, tin.extractfile(m))
    print(f"train-net: wrote {len(names)} held-out records to {out}", file=sys.stderr)


def data_size(data):
    """The board size of a dataset: 'size' where it says (self-play), else the corpus' 19."""
    return int(data["size"]) if "size" in data else SIZE
