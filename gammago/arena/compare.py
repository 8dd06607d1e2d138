"""The `gammago compare` command: a round robin (or a gauntlet) among GTP players, refereed as
`gammago match` referees, and one rating list from all its games.

    gammago compare --player rollouts="gammago --mode rollouts" \\
                    --player policy="gammago --mode net-policy" \\
                    --player net-root="gammago --mode net-root" --player gnugo=gnugo:10 \\
                    --anchor gnugo=0 --size 9 --time-per-move 1 --games 50 --out cmp/

A player is NAME=COMMAND: any engine command line `gammago match` takes (`gammago ARGS`,
`gnugo:LEVEL`, a program with its arguments, {seed} for the game's seed), or NAME=--OPTIONS,
which is `gammago --OPTIONS`. A command that starts with the word gammago gets `--seed {seed}`
when it names no seed, and under --playouts N (equal playouts) `--playouts N` when it names no
playouts; other commands run as given. Under --time-per-move S (equal time) every player is sent
`time_settings 0 S 1` but the --untimed ones (by default the gnugo:LEVEL players: GNU Go lowers
its level under time pressure), which play at their own pace.

Every pairing (every two players; with --gauntlet NAMES every other player against each named
one) plays --games games, colours alternating (the pairing's first player, in --player order,
Black in even-numbered games), game k with seed --seed + k. Each game is
gammago.arena.referee.play_game, under the rules of `gammago match` (its forfeits: a player that
crashes, hangs or plays an illegal move loses that game, and the run goes on). The games of all
pairings share --parallel threads (or a Dask cluster's workers, --scheduler), interleaved so that
a stopped run has played every pairing about as far.

Before any game each player is started once, told the board size, komi and time settings, and
asked its name and build (`gammago-build`, checked against a PYTHONPATH its command names, as in
`gammago match`): one that does not start, or refuses, is named with the last line of its stderr.

Under --out DIR (gammago.arena.rating_report writes the last three):
    pairings/A_vs_B.json   each pairing's record, `gammago match --json`'s (rewritten after
                           every game; --resume plays only the missing games, and a larger
                           --games or a new player adds games to a finished comparison)
    sgf/A_vs_B/game_NNNN.sgf
    ratings.json           the settings, the players, the ratings and intervals, the pairings
    table.md               the rating list and the pairings' W-L-D (also printed)
    ratings.png            the ratings with their 95% intervals
The ratings: gammago.arena.ratings (a Bradley-Terry fit over all the games, draws half a win, the
--anchor held at its rating).
"""
import dataclasses
import json
import os
import re
import shlex
import signal
import sys
import threading
import time

from gammago.arena import cluster_games
from gammago.core import cluster
from gammago.arena.gtp_process import (COMMAND_TIMEOUT_S, UNTIMED_MOVE_TIMEOUT_S, EngineFailure,
                                 GtpProcess, ask_identity, expand_command, recorded_build,
                                 wrong_build)
from gammago.arena.match_record import MatchConfig, check_counts, read_record, summarize, write_record

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._+-]*\Z")     # a player's name: also a file name
STDERR_WAIT_S = 2.0              # how long a failed player's stderr may take to be read to its end
FORFEITS = ("illegal", "timeout", "crash", "error", "refused")


@dataclasses.dataclass
class Player:
    name: str
    given: str                 # the command as given
    command: str               # as played (gammago settings, --seed {seed}, --playouts added)
    timed: bool                # sent time_settings under --time-per-move
    engine: str = ""           # its GTP name and version
    build: str = ""            # a gammago's `gammago-build` as recorded (recorded_build), "" for others


@dataclasses.dataclass
class Pairing:
    a: str                     # engine1 of the match: Black in even-numbered games
    b: str
    cfg: MatchConfig
    record: str                # its `gammago match --json` record
    results: list = dataclasses.field(default_factory=list)
    games: object = None       # match.LocalGames or cluster_games.ClusterGames while playing

    @property
    def label(self):
        return f"{self.a}_vs_{self.b}"

    def counted(self):
        return sorted((r for r in self.results if r.winner != "x"), key=lambda r: r.index)


# --- players and pairings ---------------------------------------------------------------------
def _has_option(words, option):
    return any(w == option or w.startswith(option + "=") for w in words)


def player_command(given, playouts=0):
    """The command a player's engine runs as (see the module doc); ValueError if unusable."""
    command = given.strip()
    if command.startswith("-"):
        command = "gammago " + command
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise ValueError(f"cannot split {given!r} like a shell: {e}") from None
    if words and words[0] == "gammago":
        if not _has_option(words, "--seed"):
            command += " --seed {seed}"
        if playouts and not _has_option(words, "--playouts"):
            command += f" --playouts {playouts}"
    expand_command(command, 0)
    return command


def parse_players(specs, playouts=0, untimed="auto"):
    """[Player] from the --player NAME=COMMAND texts; ValueError names what is wrong."""
    players = []
    for spec in specs or ():
        name, eq, given = spec.partition("=")
        name = name.strip()
        if not eq or not given.strip():
            raise ValueError(f"--player wants NAME=COMMAND, not {spec!r}")
        if not NAME.match(name):
            raise ValueError(f"player name {name!r}: letters, digits and . _ + - only, "
                             "starting with a letter or digit")
        if any(p.name == name for p in players):
            raise ValueError(f"player {name!r} is given twice")
        try:
            command = player_command(given, playouts)
        except ValueError as e:
            raise ValueError(f"player {name}: {e}") from None
        players.append(Player(name=name, given=given.strip(), command=command, timed=True))
    if len(players) < 2:
        raise ValueError(f"a comparison needs two or more players (--player NAME=COMMAND), "
                         f"not {len(players)}")
    names = [p.name for p in players]
    if untimed == "auto":
        off = {p.name for p in players if p.given.startswith("gnugo:")}
    elif untimed == "none":
        off = set()
    else:
        off = {w.strip() for w in untimed.split(",") if w.strip()}
        unknown = sorted(off - set(names))
        if unknown:
            raise ValueError(f"--untimed {', '.join(unknown)}: not a player ({', '.join(names)})")
    for p in players:
        p.timed = p.name not in off
    return players


def parse_anchor(text, names, gauntlet):
    """(name, rating) of --anchor NAME[=ELO]; by default the first gauntlet player, else the
    first player, at 0."""
    if not text:
        return (gauntlet[0] if gauntlet else names[0]), 0.0
    name, eq, value = text.partition("=")
    name = name.strip()
    if name not in names:
        raise ValueError(f"--anchor {name!r} is not a player ({', '.join(names)})")
    try:
        return name, float(value) if eq else 0.0
    except ValueError:
        raise ValueError(f"--anchor wants NAME=ELO (e.g. gnugo=0), not {text!r}") from None


def pairs_of(names, gauntlet=()):
    """The pairings as (first, second) in --player order: all of them, or with a gauntlet each
    other player against each gauntlet player."""
    if not gauntlet:
        return [(a, b) for k, a in enumerate(names) for b in names[k + 1:]]
    return [(a, b) for k, a in enumerate(names) for b in names[k + 1:]
            if (a in gauntlet) != (b in gauntlet)]


# --- before any game: every player starts and answers ------------------------------------------
def identify(command, seed, size, komi, time_per_move):
    """Start a player's engine and ask what a game will: {'engine', 'build'}, or {'error',
    'stderr'} (the last line it wrote there) when it does not start or refuses. Runs where the
    games will (here, or on a cluster's worker)."""
    try:
        proc = GtpProcess(expand_command(command, seed), command)
    except EngineFailure as e:
        return {"error": e.detail.split(": ", 1)[-1], "stderr": ""}
    try:
        engine, build = ask_identity(proc)
        proc.send(f"boardsize {size}", COMMAND_TIMEOUT_S)
        proc.send("clear_board", COMMAND_TIMEOUT_S)
        proc.send(f"komi {komi:g}", COMMAND_TIMEOUT_S)
        if time_per_move:
            proc.send(f"time_settings 0 {time_per_move:g} 1", COMMAND_TIMEOUT_S)
        return {"engine": engine, "build": build}
    except EngineFailure as e:
        proc.kill()
        deadline = time.monotonic() + STDERR_WAIT_S       # let the reader reach the end
        while not proc.proc.stderr.closed and time.monotonic() < deadline:
            time.sleep(0.02)
        tail = [line for line in proc.stderr_tail if line.strip()]
        what = e.detail.split("; stderr: ")[0]           # the tail comes apart, its last line
        if what.startswith(command):
            what = what[len(command):].strip()
        return {"error": what, "stderr": tail[-1].strip() if tail else ""}
    finally:
        proc.close()


def _finished(path):
    """Whether the match record at path says it is finished (None: no readable record)."""
    try:
        with open(path) as f:
            return json.load(f).get("finished")
    except (OSError, ValueError, AttributeError):
        return None


def check_players(players, settings, client=None):
    """Fill in each player's engine and build; ValueError for the first that fails."""
    for p in players:
        args = (p.command, settings["seed"], settings["size"], settings["komi"],
                settings["time_per_move"] if p.timed else 0.0)
        if client is None:
            got = identify(*args)
        else:
            got = cluster.call(client, identify, *args, what=f"starting player {p.name}")
        if "error" in got:
            raise ValueError(f"player {p.name} ({p.command}) does not start"
                             + (" on a worker" if client is not None else "") + f": {got['error']}"
                             + (f"\n  the last line of its stderr: {got['stderr']}"
                                if got["stderr"] else ""))
        why = wrong_build(p.command, got["build"])
        if why:
            raise ValueError(f"player {p.name}: {why}")
        p.engine, p.build = got["engine"], recorded_build(got["build"], p.command)


def make_pairings(players, pairs, settings, out):
    """Pairing objects, each with the MatchConfig of `gammago match` for its two players."""
    by_name = {p.name: p for p in players}
    pairings = []
    for a, b in pairs:
        pa, pb = by_name[a], by_name[b]
        timed = {1: pa.timed or not settings["time_per_move"],     # untimed means nothing
                 2: pb.timed or not settings["time_per_move"]}     # without time settings
        to = ("both" if all(timed.values()) else "1" if timed[1] else "2" if timed[2] else "none")
        label = f"{a}_vs_{b}"
        cfg = MatchConfig(engines={1: pa.command, 2: pb.command}, names={1: a, 2: b},
                          games=settings["games"], size=settings["size"], komi=settings["komi"],
                          parallel=settings["parallel"], alternate=True, seed=settings["seed"],
                          time_per_move=settings["time_per_move"], time_settings_to=to,
                          move_timeout=settings["move_timeout"], max_moves=settings["max_moves"],
                          sgf_dir=os.path.join(out, "sgf", label),
                          builds={1: pa.build, 2: pb.build})
        pairings.append(Pairing(a=a, b=b, cfg=cfg,
                                record=os.path.join(out, "pairings", label + ".json")))
    return pairings


# --- the games of all pairings in one loop ------------------------------------------------------
def run_pairings(pairings, client=None, progress=True, on_result=None):
    """Play the missing games of every pairing (Pairing.results holds those already played);
    on_result(pairing) after each finished game; Ctrl-C stops cleanly (the games in progress
    are abandoned: not recorded, --resume plays them). Returns whether every game was played."""
    from tqdm import tqdm

    from gammago.arena.match import LocalGames
    todo = []
    for k in range(max(p.cfg.games for p in pairings)):      # interleaved: game k of each
        for p in pairings:
            if k < p.cfg.games and k not in {r.index for r in p.counted()}:
                todo.append((p, k))
    for p in pairings:
        p.games = cluster_games.ClusterGames(client, p.cfg) if client is not None else LocalGames(p.cfg)
    first = pairings[0].games
    played = sum(len(p.counted()) for p in pairings)
    bar = tqdm(total=played + len(todo), initial=played, desc="compare", unit="game",
               disable=not progress, file=sys.stderr)
    running = {}
    stopped = False
    try:
        while True:
            capacity = first.capacity()
            while not stopped and todo and len(running) < capacity:
                p, k = todo.pop(0)
                running[p.games.submit(k)] = p
            if not running:
                break
            done_now, _ = first.wait(set(running))
            for fut in done_now:
                p = running.pop(fut)
                r = p.games.result(fut)
                p.results.append(r)
                if r.winner == "x":
                    continue
                if on_result:
                    on_result(p)
                bar.update(1)
                t = summarize(p.results, p.cfg)["engine1"]
                bar.set_postfix({"last": f"{p.a}-{p.b} {t['wins']}-{t['losses']}-{t['draws']}"})
    except KeyboardInterrupt:
        stopped = True
        for p in pairings:
            p.games.stop()
        print("\ninterrupted: stopping the games in progress", file=sys.stderr)
        for fut, p in running.items():
            p.results.extend(p.games.drain([fut]))
    finally:
        for p in pairings:
            p.games.stop()
            p.games.close()
            p.games = None
        bar.close()
    return not todo and all(len(p.counted()) >= p.cfg.games for p in pairings)


def outcomes(pairings):
    """[(a, b, a's score)] of every counted game: draws 0.5; a forfeit is a loss."""
    games = []
    for p in pairings:
        for r in p.counted():
            w = r.winner_engine
            games.append((p.a, p.b, 1.0 if w == 1 else 0.0 if w == 2 else 0.5))
    return games


def forfeits_lost(pairings):
    """{player: {reason: games lost by forfeit}}."""
    lost = {}
    for p in pairings:
        for r in p.counted():
            if r.reason in FORFEITS:
                loser = p.cfg.names[r.white if r.winner == "b" else r.black]
                lost.setdefault(loser, {}).setdefault(r.reason, 0)
                lost[loser][r.reason] += 1
    return lost


# --- the command -------------------------------------------------------------------------------
def add_arguments(p):
    g = p.add_argument_group("players")
    g.add_argument("--player", action="append", default=[], metavar="NAME=COMMAND",
                   help="a player: NAME=COMMAND (any `gammago match` engine: 'gammago ARGS', "
                        "'gnugo:LEVEL', a program and its arguments, {seed}) or NAME=--OPTIONS "
                        "(gammago with those options); give two or more")
    g.add_argument("--anchor", default="", metavar="NAME=ELO",
                   help="the player whose rating is fixed (default: the first --gauntlet "
                        "player, else the first player, at 0)")
    g.add_argument("--gauntlet", default="", metavar="NAMES",
                   help="comma-separated players that every other player meets (and none "
                        "other): a gauntlet instead of the round robin")
    p.add_argument("--games", type=int, default=10, help="games of each pairing (default 10)")
    p.add_argument("--size", type=int, default=9, help="board size (5 to 19)")
    p.add_argument("--komi", type=float, default=7.0)
    b = p.add_argument_group("equal time or equal playouts")
    b.add_argument("--time-per-move", type=float, default=0.0, metavar="S",
                   help="send every timed player 'time_settings 0 S 1' (S s a move)")
    b.add_argument("--playouts", type=int, default=0, metavar="N",
                   help="gammago players get --playouts N (those that name none)")
    b.add_argument("--untimed", default="auto", metavar="NAMES",
                   help="comma-separated players not sent time settings (they play at their own "
                        "pace, up to --move-timeout); 'auto' (default): the gnugo:LEVEL players, "
                        "which keep their level; 'none': every player is timed")
    p.add_argument("--move-timeout", type=float, default=0.0, metavar="S",
                   help="a genmove taking longer loses on time (default: --time-per-move + 1 for "
                        f"timed players, else {UNTIMED_MOVE_TIMEOUT_S:g} s)")
    p.add_argument("--max-moves", type=int, default=0,
                   help="stop and score a game after this many moves (default 4*size*size)")
    p.add_argument("--parallel", type=int, default=1, help="games played at the same time")
    p.add_argument("--seed", type=int, default=1,
                   help="game k of every pairing gets seed SEED+k ({seed} in commands)")
    p.add_argument("--out", default="", metavar="DIR",
                   help="where the records, the SGF files, ratings.json, table.md and "
                        "ratings.png go (needed)")
    p.add_argument("--resume", action="store_true",
                   help="continue the comparison recorded in --out: keep its games, play the "
                        "missing ones (start afresh if it holds none)")
    p.add_argument("--interval", choices=("bootstrap", "fit"), default="bootstrap",
                   help="the ratings' 95%% intervals: a bootstrap over each pairing's games "
                        "(default), or the fit's own (its curvature)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                   help="bootstrap resamples (default 1000)")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    cluster.add_arguments(p)


def settings_from_args(args):
    """(players, pairs, anchor, settings) from parsed arguments; ValueError names the bad
    option. Nothing is started."""
    if not args.out:
        raise ValueError("--out DIR is needed: the records, the table and the plot go there")
    check_counts(args.games, args.size, args.parallel)
    if args.time_per_move < 0 or args.move_timeout < 0 or args.playouts < 0:
        raise ValueError("--time-per-move, --playouts and --move-timeout must not be negative")
    if args.time_per_move and args.playouts:
        raise ValueError("give --time-per-move (equal time) or --playouts (equal playouts), "
                         "not both")
    if args.bootstrap < 0:
        raise ValueError(f"--bootstrap must be >= 0, not {args.bootstrap}")
    players = parse_players(args.player, args.playouts, args.untimed)
    names = [p.name for p in players]
    gauntlet = [w.strip() for w in args.gauntlet.split(",") if w.strip()]
    unknown = [g for g in gauntlet if g not in names]
    if unknown:
        raise ValueError(f"--gauntlet {', '.join(unknown)}: not a player ({', '.join(names)})")
    if gauntlet and len(set(gauntlet)) == len(names):
        raise ValueError("--gauntlet names every player: nobody is left to meet them")
    anchor = parse_anchor(args.anchor, names, gauntlet)
    for p in players:
        if ("gnugo" in p.command and "{seed}" not in p.command and "--seed" not in p.command
                and not p.command.startswith("gnugo:")):
            print(f"warning: player {p.name} looks like GNU Go without --seed {{seed}}: it will "
                  "play the same game every time", file=sys.stderr)
    settings = dict(games=args.games, size=args.size, komi=args.komi,
                    time_per_move=args.time_per_move, playouts=args.playouts,
                    move_timeout=args.move_timeout, max_moves=args.max_moves,
                    parallel=args.parallel, seed=args.seed)
    return players, pairs_of(names, gauntlet), anchor, settings


def main(args):
    try:
        players, pairs, anchor, settings = settings_from_args(args)
        records = os.path.join(args.out, "pairings")
        if (not args.resume and os.path.isdir(records)
                and any(f.endswith(".json") for f in os.listdir(records))):
            raise ValueError(f"{args.out} already holds a comparison's records: give --resume to "
                             "continue it, or another --out")
    except ValueError as e:
        print(f"gammago compare: {e}", file=sys.stderr)
        return 2
    client, rc = cluster.connect_from_args(args, "compare")
    if rc:
        return rc
    try:
        return _compare(args, players, pairs, anchor, settings, client)
    except ValueError as e:
        print(f"gammago compare: {e}", file=sys.stderr)
        return 2
    except cluster.ClusterError as e:
        print(f"gammago compare: {e}\nthe records keep every finished game: the same command "
              "with --resume continues it", file=sys.stderr)
        return 1
    finally:
        if client is not None:
            cluster.close(client, lost=client.status != "running")


def _compare(args, players, pairs, anchor, settings, client):
    from gammago.arena import rating_report
    check_players(players, settings, client)
    for p in players:
        print(f"{p.name}: {p.engine}: {p.command}"
              + ("" if p.timed or not settings["time_per_move"] else " (untimed)")
              + (f"\n    runs {p.build}" if p.build else ""), file=sys.stderr)
    pairings = make_pairings(players, pairs, settings, args.out)
    wall_before = 0.0
    if args.resume:
        for p in pairings:                 # every record is read before any game is played
            if os.path.exists(p.record):
                p.results, _, wall = read_record(p.record, p.cfg)
                wall_before = max(wall_before, wall)
    played = sum(len(p.counted()) for p in pairings)
    todo = sum(max(0, p.cfg.games - len(p.counted())) for p in pairings)
    print(f"{len(players)} players, {len(pairings)} pairing{'s' if len(pairings) > 1 else ''} "
          f"of {settings['games']} games"
          + (f": resuming {args.out}, {played} games recorded, {todo} to play" if args.resume
             else ""), file=sys.stderr)
    os.makedirs(os.path.join(args.out, "pairings"), exist_ok=True)
    t0 = time.monotonic()

    def wall():
        return round(wall_before + time.monotonic() - t0, 1)

    def record(p, finished=False):
        s = summarize(p.results, p.cfg)
        s["wall_s"] = wall()
        write_record(p.record, p.cfg, p.results, s, finished)

    # Ctrl-C, and SIGTERM (also in the background, where SIGINT is ignored), stop cleanly
    def interrupt(signum, frame):
        raise KeyboardInterrupt
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, interrupt)
    kept = {p.label: (len(p.results), _finished(p.record)) for p in pairings}
    complete = run_pairings(pairings, client, progress=not args.quiet, on_result=record)
    for p in pairings:
        finished = len(p.counted()) >= p.cfg.games
        if kept[p.label] != (len(p.results), finished):     # (one this run left alone stays)
            record(p, finished)
    text = rating_report.write(args.out, players, pairings, outcomes(pairings),
                               forfeits_lost(pairings), anchor, settings, complete, wall(),
                               method=args.interval, samples=args.bootstrap, seed=args.seed)
    print(text)
    if not complete:
        print("the comparison is not complete: the same command with --resume continues it",
              file=sys.stderr)
    return 0
