"""`gammago selfplay`: the engine plays itself and records what its search thought of every move,
the data the net's trainer learns from (expert iteration: search -> games -> a net that predicts
the search's choices and the games' results -> a stronger search).

    gammago selfplay --size 9 --games 400 --out selfplay/9x9-g1 --playouts 800 --parallel 2

Each game is the engine as it plays (`--mode`, `--model`, `--playouts` or `--move-time` and every
other option of `gammago gtp`), with exploration where it makes the data better:
  * Dirichlet noise on net-root's root priors (--noise-alpha, --noise-share; AlphaZero's), on
    the moves searched at the full playouts;
  * for the first --random-moves moves of a game, the move played is drawn in proportion to the
    root's visits (temperature 1) rather than the most visited;
  * playout-cap randomization (KataGo; --full-share below 1): a share of the moves is searched
    at the full playouts and kept as policy targets, the rest at --cheap-playouts, without noise
    (every position still carries the game's result for the value);
  * Gumbel root selection (--gumbel M; Gumbel AlphaZero's, net-root only): M root moves drawn
    by Gumbel noise on the net's logits are searched by sequential halving over --playouts, the
    survivor is played, and each move records softmax(logit + sigma(completed q)) beside the
    visits, the policy target that improves on the net's with few root visits (the trainer's
    --policy-target improved); it replaces the Dirichlet noise and the moves drawn by visits;
  * forced playouts (--forced-playouts K; KataGo's, net-root only): every root child gets at
    least sqrt(K * P * N) of the N root batches of a noisy search, and every move records the
    root's visits with KataGo's policy target pruning (`pruned`, the trainer's --policy-target
    pruned; recorded with or without forced playouts), from which the first moves are drawn;
  * resignation as the engine resigns, except in --no-resign-share of the games, played out to
    the end, which also count the resignations that would have been wrong.

Records: gammago/net/selfplay_record.py (one JSON file a game, written whole; an SGF beside it).
--resume plays only the games missing from --out (a killed run leaves no partial game), after
checking that the settings are the run's. --parallel N plays N games at once in processes of
their own (one search thread each unless --threads says otherwise); --scheduler ADDRESS sends
the games to a Dask cluster's workers (docs/CLUSTER.md), one task a game.
"""
import concurrent.futures
import dataclasses
import logging
import multiprocessing
import os
import sys
import time

import numpy as np

from gammago.net import selfplay_record as R
from gammago.core.seeds import derive

log = logging.getLogger("gammago")

SELFPLAY_STRIDE = 104_729     # game i's seed: derive(--seed, i, SELFPLAY_STRIDE)
NOISE_ALPHA_19 = 0.03         # AlphaZero's Dirichlet alpha on 19x19; other sizes in proportion
                              # to the points (0.134 on 9x9), as KataGo scales it by the moves
NOISE_SHARE = 0.25            # AlphaZero's noise weight
NO_RESIGN_SHARE = 0.1         # games played out with resignation off (AlphaGo Zero's 10%)
RANDOM_MOVES_SHARE = 0.1      # the first 10% of the board's points are drawn by visits (8 on
                              # 9x9, 36 on 19x19; Leela Zero draws 30 on 19x19)
MAX_MOVES_FACTOR = 3          # a game ends undecided after 3 * size^2 moves (scored as it stands)


def default_noise_alpha(size):
    return NOISE_ALPHA_19 * 361 / (size * size)


@dataclasses.dataclass
class SelfplayConfig:
    size: int
    komi: float
    games: int
    out: str
    engine: dict                     # EngineConfig's fields
    random_moves: int
    noise_alpha: float
    noise_share: float
    no_resign_share: float
    full_share: float
    cheap_playouts: int
    max_moves: int
    sgf: bool = True
    gumbel: int = 0                  # Gumbel root selection's candidates (0: PUCT)
    forced: float = 0.0              # forced playouts' k (0: off)

    def settings(self):
        """What --resume compares: everything but the number of games and the folder (and
        gumbel and forced when off, so that runs recorded before they existed still resume)."""
        d = dataclasses.asdict(self)
        for k in ("games", "out"):
            d.pop(k)
        for k in ("gumbel", "forced"):
            if not d[k]:
                d.pop(k)
        return d


# --- one game --------------------------------------------------------------------------------
_ENGINE = {}          # per process: the engine of the last game, kept when the settings match


def _engine_for(engine_fields, seed):
    from gammago.engine.settings import EngineConfig
    from gammago.engine.engine import Engine
    key = repr(sorted(engine_fields.items()))
    eng = _ENGINE.get(key)
    if eng is None:
        _ENGINE.clear()
        eng = Engine(EngineConfig(**engine_fields))
        _ENGINE[key] = eng
    eng.config.seed = seed
    return eng


def _draw_by_visits(visits, rng):
    """A root move drawn in proportion to its visits ({move: visits}; pass only when nothing
    else was searched)."""
    moves = [(m, v) for m, v in visits.items() if m != "pass" and v > 0]
    if not moves:
        return None
    v = np.array([x for _, x in moves], np.float64)
    return moves[int(rng.choice(len(moves), p=v / v.sum()))][0]


def play_game(cfg, index, stop=None):
    """Play self-play game `index` of cfg and write its record; returns a summary dict. stop: an
    event-like object; when set, the game is abandoned and nothing is written."""
    from gammago import build
    from gammago.core.builds import recorded_build
    from gammago.go.sgf_write import game_sgf
    seed = derive(cfg.engine.get("seed", 1), index, SELFPLAY_STRIDE)
    rng = np.random.default_rng(seed)
    eng = _engine_for(cfg.engine, seed)
    eng.new_game(cfg.size, cfg.komi)
    if eng.net is not None:
        eng.net.reseed(seed)          # the game repeats with its seed, whatever came before it
    board = eng.board
    n = cfg.size
    full_playouts = cfg.engine.get("playouts", 0)
    no_resign = bool(rng.random() < cfg.no_resign_share)
    resign_at = cfg.engine.get("resign", 0.10)
    moves, search, would_resign = [], [], None
    end, t0 = "max-moves", time.perf_counter()
    playouts = 0
    for ply in range(cfg.max_moves):
        if stop is not None and stop.is_set():
            return None
        colour = board.to_move
        full = cfg.full_share >= 1 or bool(rng.random() < cfg.full_share)
        if full_playouts:
            eng.config.playouts = full_playouts if full else cfg.cheap_playouts
        use_gumbel = full and cfg.gumbel > 1
        gumbel = eng.set_root_gumbel(cfg.gumbel if use_gumbel else 0, rng) and use_gumbel
        noisy = full and cfg.noise_share > 0 and not gumbel
        eng.set_root_noise(cfg.noise_alpha, cfg.noise_share if noisy else 0.0, rng)
        if cfg.forced:
            eng.set_root_forced(cfg.forced if noisy else 0.0)
        move = eng.decide(colour, allow_resign=not no_resign)
        infos = eng.last_infos
        root = int(eng.search.root_visits)
        playouts += int(eng.search.playouts)
        best = infos[0]["winrate"] if infos else 0.5
        if (no_resign and would_resign is None and resign_at > 0 and best < resign_at
                and ply >= n * n // 4 and root >= 200):
            would_resign = {"color": colour, "ply": ply}
        if move == "resign":
            end = "resign"
            break
        visits = {d["move"]: int(d["visits"]) for d in infos}
        pruned = {}
        if full and move not in ("pass", "resign"):
            pruned = {m: v for m, v in eng.root_pruned_visits(board).items() if v > 0}
        sampled, improved = False, None
        if gumbel and move not in ("pass", "resign"):
            chosen, improved = eng.search.gumbel_choice(board), eng.search.improved_policy(board)
            if chosen is not None:
                sampled = chosen != move
                move = chosen
        elif ply < cfg.random_moves and move != "pass":
            drawn = _draw_by_visits(pruned if cfg.forced and pruned else visits, rng)
            if drawn is not None:
                sampled = drawn != move
                move = drawn
        entry = {"visits": visits, "root_visits": sum(visits.values()), "winrate": round(best, 4),
                 "full": full, "sampled": sampled}
        if pruned:
            entry["pruned"] = pruned
        if improved:
            top = sorted(improved.items(), key=lambda kv: -kv[1])[:R.IMPROVED_TOP]
            entry["improved"] = {m: round(p, 5) for m, p in top if p >= 1e-5}
        search.append(entry)
        moves.append([colour, move])
        board.play(move, colour)
        if board.passes >= 2:
            end = "passes"
            break
    if end == "resign":
        winner = "w" if colour == "b" else "b"
        score, result = None, f"{winner.upper()}+R"
    else:
        score = board.score()
        winner = "b" if score > 0 else "w" if score < 0 else ""
        result = f"{winner.upper()}+{abs(score):g}" if winner else "0"
    rec = {"format": R.FORMAT, "game": index, "size": n, "komi": cfg.komi, "seed": seed,
           "build": recorded_build(build()), "settings": cfg.settings(), "no_resign": no_resign,
           "moves": moves, "search": search, "end": end, "winner": winner, "result": result,
           "score": score, "would_resign": would_resign,
           "seconds": round(time.perf_counter() - t0, 3), "playouts": playouts}
    sgf = None
    if cfg.sgf:
        comments = {i: f"winrate {s['winrate']:.3f}, {s['root_visits']} visits"
                    + (", drawn by visits" if s["sampled"] else "") for i, s in enumerate(search)}
        sgf = game_sgf(n, cfg.komi, [tuple(m) for m in moves], result=result,
                       black="gammago", white="gammago", move_comments=comments,
                       game_comment=f"gammago selfplay game {index}, seed {seed}").decode()
    R.write_game(cfg.out, rec, sgf)
    return summary_of(rec)


def summary_of(rec):
    wr = rec.get("would_resign")
    return {"game": rec["game"], "moves": len(rec["moves"]), "winner": rec["winner"], "end": rec["end"],
            "no_resign": rec["no_resign"], "seconds": rec["seconds"],
            "positions": sum(1 for s in rec["search"] if s["full"]),
            "would_resign": wr["color"] if wr else None}


# --- the run ---------------------------------------------------------------------------------
class _Never:
    def is_set(self):
        return False


def _play_task(cfg, index):
    """A game in a worker process (local pool or Dask): logs kept quiet."""
    logging.getLogger("gammago").setLevel(logging.WARNING)
    return play_game(cfg, index)


def run(cfg, parallel=1, client=None, resume=False, progress=True):
    """Play the games of cfg missing from cfg.out; returns (summaries of the games played now,
    summaries of every game in the run)."""
    os.makedirs(cfg.out, exist_ok=True)
    old = R.read_settings(cfg.out)
    if old is not None and isinstance(old.get("engine"), dict):   # options retired since
        from gammago.core.retired import retired_dropped
        old = dict(old, engine=retired_dropped(old["engine"]))
    done = R.finished_games(cfg.out)
    if (old is not None or done) and not resume:
        raise ValueError(f"{cfg.out} holds a self-play run ({len(done)} games): --resume to go "
                         "on with it, or another --out")
    settings = _jsonable(cfg.settings())
    if old is not None and old != settings:
        diff = sorted(k for k in set(old) | set(settings) if old.get(k) != settings.get(k))
        raise ValueError(f"{cfg.out} was played with other settings ({', '.join(diff)}): "
                         "--resume needs the same ones")
    removed = R.remove_partial(cfg.out)
    if removed:
        log.warning("%s: removed %d partial file(s) of a stopped run", cfg.out, removed)
    R.write_settings(cfg.out, cfg.settings())
    todo = [i for i in range(cfg.games) if i not in done]
    from tqdm import tqdm
    bar = tqdm(total=cfg.games, initial=cfg.games - len(todo), desc="self-play", unit="game",
               disable=not progress, mininterval=1)
    played = []
    t0 = time.perf_counter()
    moves = 0

    def book(s):
        nonlocal moves
        played.append(s)
        moves += s["moves"]
        dt = max(1e-9, time.perf_counter() - t0)
        bar.update(1)
        bar.set_postfix(moves_s=f"{moves / dt:.1f}", games_h=f"{3600 * len(played) / dt:.0f}",
                        refresh=False)

    try:
        if client is not None:
            from gammago.core import cluster
            for _, s in cluster.map_unordered(client, _play_task, [(cfg, i) for i in todo],
                                              what="self-play game {i}"):
                book(s)
        elif parallel <= 1:
            stop = _Never()
            for i in todo:
                book(play_game(cfg, i, stop))
        else:
            ctx = multiprocessing.get_context("spawn")
            with concurrent.futures.ProcessPoolExecutor(parallel, mp_context=ctx) as pool:
                futs = [pool.submit(_play_task, cfg, i) for i in todo]
                try:
                    for f in concurrent.futures.as_completed(futs):
                        book(f.result())
                except BaseException:
                    for f in futs:
                        f.cancel()
                    raise
    finally:
        bar.close()
    every = [summary_of(R.read_game(R.game_path(cfg.out, i))) for i in sorted(R.finished_games(cfg.out))]
    return played, every, time.perf_counter() - t0


def _jsonable(d):
    import json
    return json.loads(json.dumps(d))


def format_summary(played, every, seconds, parallel):
    """The run's closing lines: games, moves, positions, results, resignations, throughput."""
    lines = []
    n = len(every)
    if not n:
        return "self-play: no games"
    bw = sum(s["winner"] == "b" for s in every)
    ww = sum(s["winner"] == "w" for s in every)
    res = sum(s["end"] == "resign" for s in every)
    mv = sum(s["moves"] for s in every)
    pos = sum(s["positions"] for s in every)
    lines.append(f"self-play: {n} games ({len(played)} played now), {mv} moves "
                 f"({mv / n:.1f} a game), {pos} policy positions")
    lines.append(f"  results: Black {bw}, White {ww}, draws {n - bw - ww}; "
                 f"resigned {res} ({100 * res / n:.0f}%)")
    nr = [s for s in every if s["no_resign"]]
    would = [s for s in nr if s["would_resign"]]
    wrong = [s for s in would if s["winner"] == s["would_resign"]]
    if nr:
        share = f"{100 * len(wrong) / len(would):.0f}%" if would else "n/a"
        lines.append(f"  played out without resignation: {len(nr)} games; {len(would)} would have "
                     f"resigned, {len(wrong)} of them wrongly (they won): {share}")
    if played and seconds > 0:
        pm = sum(s["moves"] for s in played)
        pp = sum(s["positions"] for s in played)
        lines.append(f"  throughput: {3600 * len(played) / seconds:.0f} games/h, "
                     f"{3600 * pm / seconds:.0f} positions/h ({3600 * pp / seconds:.0f} policy "
                     f"positions/h), {pm / seconds:.1f} moves/s over {seconds:.0f} s, "
                     f"{parallel} at a time")
    return "\n".join(lines)


# --- the command ---------------------------------------------------------------------------
def add_arguments(p):
    from gammago.engine.settings import EngineConfig
    from gammago.core import cluster
    s = p.add_argument_group("self-play")
    s.add_argument("--size", type=int, default=9, help="board size (default 9)")
    s.add_argument("--komi", type=float, default=7.5, help="komi (default 7.5: no draws)")
    s.add_argument("--games", type=int, required=True, help="games in the run (--resume: in all)")
    s.add_argument("--out", required=True, help="folder of the run's records")
    s.add_argument("--resume", action="store_true", help="play only the games missing from --out")
    s.add_argument("--parallel", type=int, default=1, help="games at once, each in its own process")
    s.add_argument("--random-moves", type=int, default=None,
                   help="the first N moves are drawn in proportion to the visits (default: a "
                        "tenth of the board's points, 8 on 9x9)")
    s.add_argument("--noise-alpha", type=float, default=None,
                   help="Dirichlet alpha of the root noise (default 0.03 * 361 / points)")
    s.add_argument("--noise-share", type=float, default=NOISE_SHARE,
                   help=f"weight of the root noise in the priors (default {NOISE_SHARE}; 0 off)")
    s.add_argument("--no-resign-share", type=float, default=NO_RESIGN_SHARE,
                   help=f"share of the games played out with resignation off (default {NO_RESIGN_SHARE})")
    s.add_argument("--full-share", type=float, default=1.0,
                   help="playout-cap randomization: the share of the moves searched at the full "
                        "--playouts and kept as policy targets (default 1: every move)")
    s.add_argument("--cheap-playouts", type=int, default=0,
                   help="the playouts of the other moves (default: a quarter of --playouts)")
    s.add_argument("--max-moves", type=int, default=0,
                   help=f"a game stops after this many moves (default {MAX_MOVES_FACTOR} * size^2)")
    s.add_argument("--gumbel", type=int, default=0, metavar="M",
                   help="Gumbel root selection over M root moves by sequential halving (net-root "
                        "and --playouts; replaces the root noise and the moves drawn by visits; "
                        "records the completed-Q policy target; default 0: off)")
    s.add_argument("--forced-playouts", type=float, default=0.0, metavar="K",
                   help="forced playouts (KataGo): each root child of a noisy search gets at "
                        "least sqrt(K * prior * root batches) batches, the moves drawn by visits "
                        "are drawn from the pruned visits (net-root; KataGo's K is 2; default 0: off)")
    s.add_argument("--no-sgf", action="store_true", help="write no SGF beside each record")
    cluster.add_arguments(p)
    EngineConfig.add_arguments(p)


def config_from_args(args):
    from gammago.go.board import SIZES
    from gammago.engine.settings import EngineConfig
    if args.size not in SIZES:
        raise ValueError(f"--size must be {SIZES.start}..{SIZES.stop - 1}, not {args.size}")
    if args.games < 1:
        raise ValueError(f"--games must be >= 1, not {args.games}")
    if not 0 < args.full_share <= 1:
        raise ValueError(f"--full-share must be in (0, 1], not {args.full_share}")
    for name in ("noise_share", "no_resign_share"):
        v = getattr(args, name)
        if not 0 <= v <= 1:
            raise ValueError(f"--{name.replace('_', '-')} must be in [0, 1], not {v}")
    eng = EngineConfig.from_args(args)
    eng.ponder = False
    fields = dataclasses.asdict(eng)
    cheap = args.cheap_playouts or max(1, eng.playouts // 4)
    if args.full_share < 1 and not eng.playouts:
        raise ValueError("--full-share below 1 needs --playouts (the cheap searches' playouts)")
    if args.gumbel < 0 or args.gumbel == 1:
        raise ValueError(f"--gumbel must be 0 (off) or at least 2 candidates, not {args.gumbel}")
    if not args.forced_playouts >= 0:
        raise ValueError(f"--forced-playouts must be >= 0, not {args.forced_playouts}")
    if args.forced_playouts and args.gumbel:
        raise ValueError("--forced-playouts and --gumbel do not go together (Gumbel's halving "
                         "decides every root child's playouts)")
    if args.gumbel and not eng.playouts:
        raise ValueError("--gumbel needs --playouts (sequential halving shares out a budget of playouts)")
    n = args.size
    return SelfplayConfig(
        size=n, komi=args.komi, games=args.games, out=args.out, engine=fields,
        random_moves=args.random_moves if args.random_moves is not None else round(RANDOM_MOVES_SHARE * n * n),
        noise_alpha=args.noise_alpha if args.noise_alpha is not None else round(default_noise_alpha(n), 4),
        noise_share=args.noise_share, no_resign_share=args.no_resign_share,
        full_share=args.full_share, cheap_playouts=cheap if args.full_share < 1 else 0,
        max_moves=args.max_moves or MAX_MOVES_FACTOR * n * n, sgf=not args.no_sgf,
        gumbel=args.gumbel, forced=args.forced_playouts)


def main(args):
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(name)s: %(message)s")
    try:
        cfg = config_from_args(args)
    except ValueError as e:
        print(f"gammago selfplay: {e}", file=sys.stderr)
        return 2
    from gammago.core import cluster
    client, rc = cluster.connect_from_args(args, "selfplay")
    if rc:
        return rc
    try:
        played, every, seconds = run(cfg, parallel=args.parallel, client=client, resume=args.resume)
    except (ValueError, R.RecordError) as e:
        print(f"gammago selfplay: {e}", file=sys.stderr)
        return 2
    finally:
        if client is not None:
            from gammago.core import cluster
            cluster.close(client)
    print(format_summary(played, every, seconds, args.parallel if client is None else "cluster"))
    return 0
