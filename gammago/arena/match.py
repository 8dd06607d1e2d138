"""The `gammago match` command: N games between two GTP engines, refereed, with honest error bars.

    gammago match --engine1 "gammago --playouts 2000" --engine2 gnugo:10 --games 100 \\
                  --size 9 --komi 7 --parallel 2 --sgf-dir games/

Engines are GTP command lines (split like a shell would). Three conveniences:
  * a leading word `gammago` runs this gammago with the current Python (`python -m gammago gtp`),
  * `gnugo:LEVEL` is GNU Go 3.8 as the referee's rules want it (`/usr/games/gnugo --mode gtp
    --chinese-rules --capture-all-dead --positional-superko --level LEVEL --seed {seed}`),
  * `{seed}` in a command becomes the game's seed (--seed + game number), so that GNU Go, which
    plays the same game every time for a given seed, varies from game to game.

The referee (policy, also in docs/BENCHMARKS.md):
  * every move is replayed on gammago's own Board: an illegal move (occupied, suicide, ko,
    positional superko, off the board, unreadable) loses the game at once;
  * a genmove that takes longer than --move-timeout, an engine that crashes or answers a command
    with an error, and an engine that refuses its opponent's (legal) move lose the game;
  * the game ends at two passes in a row, a resignation, or --max-moves moves; it is then scored
    by Tromp-Taylor area scoring as the board stands: no dead-stone agreement, so engines must
    capture dead stones before passing (GNU Go does with --capture-all-dead, gammago does);
  * engine1 takes Black in even-numbered games and White in odd ones (--engine1/--engine2), or
    keeps its colour (--black/--white).

The record (--json FILE) is rewritten after every game, atomically, so a match stopped in any way
(Ctrl-C, a killed process, a rebooted machine) keeps every finished game; the same command with
--resume continues it, playing only the missing games (a larger --games extends a finished match).
It refuses a record made with other settings (engines, size, komi, handicap, seed, time, SPRT).
Its paths are as given (--sgf-dir, the engine commands: relative ones stay relative), and the
build a gammago engine runs is named as its command names the directory, else relative to the
working directory (gtp_process.recorded_build), never by the absolute path the engine reports.

With --handicap N, Black gets the spec's fixed layout of N stones (both engines are sent
`fixed_handicap N` and must answer those points) and White moves first.

One game and its referee: gammago/arena/referee.py; the settings, the results, their table and the
record: gammago/arena/match_record.py.

With --scheduler ADDRESS the games are tasks on a Dask cluster's workers (gammago/core/cluster.py,
docs/CLUSTER.md): the engine command lines run there; the loop below, the record, --resume and
the SPRT are the same, and so are the games (each game's seed is --seed + its number).

Statistics are from engine1's side (gammago/arena/stats.py: Wilson interval, Elo, SPRT). The engines
run as gammago.arena.gtp_process.GtpProcess, which also expands the shorthands above.
"""
import concurrent.futures
import os
import signal
import sys
import threading
import time

from gammago.arena import cluster_games
from gammago.core import cluster
from gammago.arena.gtp_process import (UNTIMED_MOVE_TIMEOUT_S, EngineFailure, engine_identity,
                                 expand_command, recorded_build, wrong_build)
from gammago.arena.match_record import (MatchConfig, check_counts, format_table, read_record, summarize,
                                   write_record)
from gammago.arena.referee import play_game
from gammago.arena.stats import sprt_bounds

# --- the match ------------------------------------------------------------------------------
class LocalGames:
    """The games of a match in threads of this process, --parallel at a time. run_match drives
    this or gammago.core.cluster_games.ClusterGames (the same interface) with one loop."""

    def __init__(self, cfg):
        self.cfg = cfg
        self.event = threading.Event()
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=cfg.parallel)

    @property
    def stopped(self):
        return self.event.is_set()

    def capacity(self):
        return self.cfg.parallel

    def submit(self, index):
        return self.pool.submit(play_game, self.cfg, index, self.event)

    def wait(self, running):
        return concurrent.futures.wait(running, return_when=concurrent.futures.FIRST_COMPLETED)

    def result(self, fut):
        return fut.result()

    def stop(self):
        """Start no more games; the running ones end at their next move, abandoned."""
        self.event.set()

    def drain(self, running):
        out = []
        for fut in running:
            try:
                out.append(fut.result())
            except Exception:
                pass
        return out

    def close(self):
        self.pool.shutdown(wait=True)


def run_match(cfg, progress=True, on_result=None, done=(), games=None):
    """Play the match; returns (results, summary). SPRT stops early; Ctrl-C stops cleanly.
    `done`: games already played (a resumed match); only the other indices below cfg.games are
    played, and the statistics count all of them. on_result(results, summary) after every
    finished game (not an abandoned one). `games`: where they are played (LocalGames(cfg) by
    default; gammago.core.cluster_games.ClusterGames on a Dask cluster)."""
    from tqdm import tqdm
    results = [r for r in done if r.winner != "x"]
    todo = sorted(set(range(cfg.games)) - {r.index for r in results})
    games = games if games is not None else LocalGames(cfg)
    lo, hi = sprt_bounds(cfg.alpha, cfg.beta)

    def decides(s):          # the SPRT's LLR has left its interval
        return not lo < s["llr"] < hi

    decided = None
    if cfg.sprt and results and decides(summarize(results, cfg)):
        decided = len(results)
        games.stop()
    bar = tqdm(total=max(cfg.games, len(results)), initial=len(results), desc="match",
               unit="game", disable=not progress, file=sys.stderr)
    running = set()
    try:
        while True:
            capacity = games.capacity()
            while not games.stopped and todo and len(running) < capacity:
                running.add(games.submit(todo.pop(0)))
            if not running:
                break
            done_now, running = games.wait(running)
            for fut in done_now:
                r = games.result(fut)
                results.append(r)
                if r.winner == "x":
                    continue
                s = summarize(results, cfg)
                if on_result:
                    on_result(results, s)
                bar.update(1)
                t = s["engine1"]
                post = {"e1": f"{t['wins']}-{t['losses']}-{t['draws']}"}
                if cfg.sprt:
                    post["LLR"] = f"{s['llr']:.2f}"
                    if decided is None and decides(s):
                        decided = s["games"]
                        games.stop()
                bar.set_postfix(post)
    except KeyboardInterrupt:
        games.stop()
        print("\ninterrupted: stopping the games in progress", file=sys.stderr)
        results.extend(games.drain(running))
    finally:
        games.stop()
        games.close()
        bar.close()
    results.sort(key=lambda r: r.index)
    summary = summarize(results, cfg)
    if decided:
        summary["sprt_decided_after"] = decided
    return results, summary


# --- the command -----------------------------------------------------------------------------
def add_arguments(p):
    g = p.add_argument_group("engines (GTP command lines; 'gammago ARGS', 'gnugo:LEVEL', {seed})")
    g.add_argument("--engine1", help="first engine (colours alternate, engine1 Black in game 1)")
    g.add_argument("--engine2", help="second engine")
    g.add_argument("--black", help="engine that always plays Black (instead of --engine1)")
    g.add_argument("--white", help="engine that always plays White (instead of --engine2)")
    g.add_argument("--name1", help="label of engine1 (default: its GTP name and version)")
    g.add_argument("--name2", help="label of engine2")
    p.add_argument("--games", type=int, default=10, help="games to play (SPRT: at most)")
    p.add_argument("--size", type=int, default=9, help="board size (5 to 19)")
    p.add_argument("--komi", type=float, default=7.0)
    p.add_argument("--handicap", type=int, default=0, metavar="N",
                   help="Black gets N stones (GTP fixed_handicap, the spec's layout; 2 to 9 on odd "
                        "sizes from 9x9, 2 to 4 on 7x7 and even sizes) and White moves first; give "
                        "--komi too (0.5 is usual); --black/--white keep the colours fixed")
    p.add_argument("--parallel", type=int, default=1, help="games played at the same time")
    p.add_argument("--seed", type=int, default=1, help="game k gets seed SEED+k ({seed} in commands)")
    p.add_argument("--time-per-move", type=float, default=0.0, metavar="S",
                   help="send 'time_settings 0 S 1' (S s byo-yomi a move); a genmove over S + 1 s "
                        "loses (see --move-timeout)")
    p.add_argument("--time-settings-to", choices=("both", "1", "2", "none"), default="both",
                   help="which engines get time_settings (GNU Go lowers its level under time "
                        "pressure: give it none to keep --level fixed); an engine without them "
                        f"may take up to {UNTIMED_MOVE_TIMEOUT_S:g} s a move")
    p.add_argument("--move-timeout", type=float, default=0.0, metavar="S",
                   help="a genmove taking longer loses on time (default: --time-per-move + 1 for "
                        f"engines given time settings, else {UNTIMED_MOVE_TIMEOUT_S:g} s)")
    p.add_argument("--max-moves", type=int, default=0,
                   help="stop and score a game after this many moves (default 4*size*size)")
    p.add_argument("--sgf-dir", default="", help="save every game as DIR/game_NNNN.sgf")
    p.add_argument("--sprt", default="", metavar="ELO0,ELO1",
                   help="sequential test of H0: Elo=ELO0 against H1: Elo=ELO1; stops early")
    p.add_argument("--alpha", type=float, default=0.05, help="SPRT false-positive rate")
    p.add_argument("--beta", type=float, default=0.05, help="SPRT false-negative rate")
    p.add_argument("--json", default="", metavar="FILE",
                   help="write the summary and every game here (after every game)")
    p.add_argument("--resume", action="store_true",
                   help="continue the match recorded in --json FILE: keep its games, play the "
                        "missing ones up to --games (start afresh if FILE does not exist)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    cluster.add_arguments(p)


def config_from_args(args):
    """MatchConfig from parsed arguments; ValueError names the bad option."""
    if args.black or args.white:
        if not (args.black and args.white) or args.engine1 or args.engine2:
            raise ValueError("give --black and --white together, or --engine1 and --engine2")
        e1, e2, alternate = args.black, args.white, False
    else:
        if not (args.engine1 and args.engine2):
            raise ValueError("give --engine1 and --engine2 (or --black and --white)")
        e1, e2, alternate = args.engine1, args.engine2, True
    if args.resume and not args.json:
        raise ValueError("--resume needs --json FILE (the record to continue)")
    check_counts(args.games, args.size, args.parallel)
    if args.handicap:
        from gammago.go.handicap import fixed_points
        try:
            fixed_points(args.size, args.handicap)
        except ValueError as e:
            raise ValueError(f"--handicap {args.handicap} on {args.size}x{args.size}: {e}") from None
    if args.time_per_move < 0 or args.move_timeout < 0:
        raise ValueError("--time-per-move and --move-timeout must not be negative")
    if not (0 < args.alpha < 0.5 and 0 < args.beta < 0.5):
        raise ValueError("--alpha and --beta must be in (0, 0.5)")
    sprt = None
    if args.sprt:
        try:
            elo0, elo1 = (float(x) for x in args.sprt.split(","))
        except ValueError:
            raise ValueError(f"--sprt wants ELO0,ELO1 (e.g. 0,50), not {args.sprt!r}") from None
        if elo0 == elo1:
            raise ValueError("--sprt: ELO0 and ELO1 must differ")
        sprt = (elo0, elo1)
    for k, cmd in ((1, e1), (2, e2)):
        expand_command(cmd, 0)          # ValueError for an unusable command line
        if "gnugo" in cmd and "{seed}" not in cmd and "--seed" not in cmd and not cmd.startswith("gnugo:"):
            print(f"warning: engine{k} looks like GNU Go without --seed {{seed}}: it will play the "
                  "same game every time", file=sys.stderr)
    return MatchConfig(engines={1: e1, 2: e2}, names={1: args.name1 or "", 2: args.name2 or ""},
                       games=args.games, size=args.size, komi=args.komi,
                       handicap=args.handicap, parallel=args.parallel,
                       alternate=alternate, seed=args.seed, time_per_move=args.time_per_move,
                       time_settings_to=args.time_settings_to, move_timeout=args.move_timeout,
                       max_moves=args.max_moves, sgf_dir=args.sgf_dir, sprt=sprt,
                       alpha=args.alpha, beta=args.beta)


def main(args):
    try:
        cfg = config_from_args(args)
    except ValueError as e:
        print(f"gammago match: {e}", file=sys.stderr)
        return 2
    done, wall_before = [], 0.0
    if args.resume and os.path.exists(args.json):
        try:
            done, names, wall_before = read_record(args.json, cfg)
        except ValueError as e:
            print(f"gammago match: {e}", file=sys.stderr)
            return 2
        for k in (1, 2):
            cfg.names[k] = cfg.names[k] or names.get(k, "")
        print(f"resuming {args.json}: {len(done)} games recorded, "
              f"{len(set(range(cfg.games)) - {r.index for r in done})} to play", file=sys.stderr)
    client, rc = cluster.connect_from_args(args, "match")
    if rc:
        return rc
    try:
        return _play(args, cfg, done, wall_before, client)
    except cluster.ClusterError as e:
        print(f"gammago match: {e}" + ("\nthe record keeps every finished game: the same command "
                                       "with --resume continues it" if args.json else ""),
              file=sys.stderr)
        return 1
    finally:
        if client is not None:
            cluster.close(client, lost=client.status != "running")


def _play(args, cfg, done, wall_before, client):
    for k in (1, 2):
        try:
            if client is None:
                name, build = engine_identity(cfg.engines[k], cfg.seed)
            else:               # the engine must run where the games are played
                name, build = cluster.call(client, engine_identity, cfg.engines[k], cfg.seed,
                                           what=f"starting engine{k}")
        except EngineFailure as e:
            print(f"gammago match: engine{k} does not answer GTP"
                  + (" on a worker" if client else "") + f": {e}", file=sys.stderr)
            return 2
        why = wrong_build(cfg.engines[k], build)
        if why:
            print(f"gammago match: engine{k}: {why}", file=sys.stderr)
            return 2
        cfg.names[k] = cfg.names[k] or name
        cfg.builds[k] = recorded_build(build, cfg.engines[k])
    if cfg.names[1] == cfg.names[2]:
        cfg.names = {1: cfg.names[1] + " (1)", 2: cfg.names[2] + " (2)"}
    for k in (1, 2):
        print(f"engine{k}: {cfg.names[k]}: {cfg.engines[k]}"
              + (f"\n         runs {cfg.builds[k]}" if cfg.builds[k] else ""), file=sys.stderr)
    # Ctrl-C, and SIGTERM (also when started in the background, where SIGINT is ignored), stop
    # the match cleanly: the games in progress are abandoned, the table of the rest printed
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, interrupt)

    def checkpoint(results, s):
        s["wall_s"] = round(wall_before + time.monotonic() - t0, 1)
        write_record(args.json, cfg, results, s, finished=False)

    t0 = time.monotonic()
    games = cluster_games.ClusterGames(client, cfg) if client is not None else None
    results, summary = run_match(cfg, progress=not args.quiet,
                                 on_result=checkpoint if args.json else None, done=done, games=games)
    summary["wall_s"] = round(wall_before + time.monotonic() - t0, 1)
    print(format_table(summary, cfg))
    print(f"({summary['wall_s']:.0f} s; longest genmove: engine1 "
          f"{max((r.max_move_s[1] for r in results), default=0):.2f} s, engine2 "
          f"{max((r.max_move_s[2] for r in results), default=0):.2f} s"
          + (f"; SGF in {cfg.sgf_dir}" if cfg.sgf_dir else "") + ")")
    if args.json:
        finished = not summary["abandoned"] and (summary["games"] >= cfg.games
                                                 or "sprt_decided_after" in summary)
        write_record(args.json, cfg, results, summary, finished)
        if not finished:
            print("the match is not complete: the same command with --resume continues it",
                  file=sys.stderr)
    return 0
