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
It refuses a record made with other settings (engines, size, komi, seed, time, SPRT).

With --scheduler ADDRESS the games are tasks on a Dask cluster's workers (gammago/cluster.py,
docs/CLUSTER.md): the engine command lines run there; the loop below, the record, --resume and
the SPRT are the same, and so are the games (each game's seed is --seed + its number).

Statistics are from engine1's side: a draw counts half a win; the 95% interval of the score is
Wilson's; Elo = -400 log10(1/score - 1) with the interval mapped through the same function;
SPRT: log-likelihood ratio of H1 (Elo = elo1) against H0 (Elo = elo0) for the game outcomes
(Bernoulli, draws as half a win and half a loss), stopping when it leaves
[ln(beta/(1-alpha)), ln((1-beta)/alpha)].
"""
import collections
import concurrent.futures
import dataclasses
import json
import math
import os
import queue
import shlex
import signal
import subprocess
import sys
import threading
import time

from gammago import cluster
from gammago.board import Board

# --- constants ----------------------------------------------------------------------------------
GNUGO = "/usr/games/gnugo"
GNUGO_ARGS = "--mode gtp --chinese-rules --capture-all-dead --positional-superko"
Z95 = 1.959963984540054             # two-sided 95% normal quantile
STARTUP_TIMEOUT_S = 60.0             # first answer of a freshly started engine
COMMAND_TIMEOUT_S = 30.0             # any command that is not genmove
UNTIMED_MOVE_TIMEOUT_S = 120.0       # genmove limit when no --time-per-move is given
STDERR_TAIL = 30                     # lines of an engine's stderr kept for crash reports
QUIT_WAIT_S = 3.0                    # how long a quitting engine may take before it is killed


# --- statistics -----------------------------------------------------------------------------------
def wilson_interval(successes, n, z=Z95):
    """Wilson score interval of a proportion (successes may be fractional: draws count half)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)      # exact at the ends
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return lo, hi


def elo_from_score(score):
    """Elo difference of an expected score (logistic model); +-inf at 1 and 0."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo):
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_interval(wins, draws, losses, z=Z95):
    """(Elo, low, high): the point estimate and the Wilson interval mapped to Elo."""
    n = wins + draws + losses
    x = wins + 0.5 * draws
    if n == 0:
        return 0.0, -math.inf, math.inf
    lo, hi = wilson_interval(x, n, z)
    return elo_from_score(x / n), elo_from_score(lo), elo_from_score(hi)


def sprt_llr(wins, draws, losses, elo0, elo1):
    """Log-likelihood ratio of H1 (elo1) against H0 (elo0); draws are half a win, half a loss."""
    p0, p1 = score_from_elo(elo0), score_from_elo(elo1)
    x = wins + 0.5 * draws
    y = losses + 0.5 * draws
    return x * math.log(p1 / p0) + y * math.log((1 - p1) / (1 - p0))


def sprt_bounds(alpha=0.05, beta=0.05):
    """(lower, upper): accept H0 at or below lower, H1 at or above upper."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)


# --- a GTP engine as a subprocess -----------------------------------------------------------
class EngineFailure(Exception):
    """An engine broke a rule of the match: .reason is timeout | crash | error."""

    def __init__(self, reason, detail):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail

    def __reduce__(self):           # pickled back from a cluster's worker
        return EngineFailure, (self.reason, self.detail)


def expand_command(command, seed):
    """The argv of an engine command line (see the module doc for the shorthands)."""
    command = command.strip()
    if command.startswith("gnugo:"):
        level = command.split(":", 1)[1].strip() or "10"
        if not level.isdigit():
            raise ValueError(f"gnugo:LEVEL needs a number, not {level!r}")
        command = f"{GNUGO} {GNUGO_ARGS} --level {level} --seed {{seed}}"
    argv = shlex.split(command.replace("{seed}", str(seed)))
    if not argv:
        raise ValueError("empty engine command")
    if argv[0] == "gammago":
        rest = argv[1:]
        if not rest or rest[0] != "gtp":
            rest = ["gtp"] + rest
        argv = [sys.executable, "-m", "gammago"] + rest
    return argv


class GtpProcess:
    """One engine process: send a command, wait for its answer with a time limit."""

    def __init__(self, argv, label):
        self.label = label
        self.argv = argv
        env = dict(os.environ)     # `python -m gammago` finds this gammago wherever it runs
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH", "")) if p)
        try:
            self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                         stderr=subprocess.PIPE, text=True, bufsize=1,
                                         encoding="utf-8", errors="replace", env=env)
        except OSError as e:
            raise EngineFailure("crash", f"{label}: cannot start {argv[0]}: {e.strerror or e}") from None
        self.lines = queue.Queue()
        self.stderr_tail = collections.deque(maxlen=STDERR_TAIL)
        threading.Thread(target=self._read_out, daemon=True).start()
        threading.Thread(target=self._read_err, daemon=True).start()
        self.started = False

    def _read_out(self):
        try:
            for line in self.proc.stdout:
                self.lines.put(line.rstrip("\r\n"))
        except (OSError, ValueError):
            pass
        finally:
            self.lines.put(None)
            self.proc.stdout.close()

    def _read_err(self):
        try:
            for line in self.proc.stderr:
                self.stderr_tail.append(line.rstrip("\n"))
        except (OSError, ValueError):
            pass
        finally:
            self.proc.stderr.close()

    def _crash(self, what):
        try:
            self.proc.wait(QUIT_WAIT_S)        # let a dying process finish, for its exit code
        except subprocess.TimeoutExpired:
            pass
        tail = " | ".join(list(self.stderr_tail)[-5:])
        rc = self.proc.returncode
        return EngineFailure("crash", f"{self.label} {what} (exit code {rc})" + (f"; stderr: {tail}" if tail else ""))

    def send(self, command, timeout):
        """The answer's text; EngineFailure on an error answer, a timeout or a dead process."""
        if not self.started:
            timeout = max(timeout, STARTUP_TIMEOUT_S)
        try:
            self.proc.stdin.write(command + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            raise self._crash(f"died before '{command}'") from None
        deadline = time.monotonic() + timeout
        answer = None
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                self.kill()
                raise EngineFailure("timeout", f"{self.label} took more than {timeout:g} s on '{command}'")
            try:
                line = self.lines.get(timeout=left)
            except queue.Empty:
                continue
            if line is None:
                raise self._crash(f"died during '{command}'")
            if answer is None:
                if line.startswith("=") or line.startswith("?"):
                    answer = [line]
                continue                    # noise before an answer is ignored
            if line.strip() == "":
                break
            answer.append(line)
        self.started = True
        first = answer[0]
        ok = first[0] == "="
        first = first[1:].lstrip("0123456789")       # no ids are sent, but tolerate them
        text = "\n".join([first.strip()] + answer[1:]).strip()
        if not ok:
            raise EngineFailure("error", f"{self.label} answered '{command}' with: ? {text}")
        return text

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.write("quit\n")
                self.proc.stdin.flush()
                self.proc.wait(QUIT_WAIT_S)
            except (OSError, ValueError, subprocess.TimeoutExpired):
                pass
        self.kill()

    def kill(self):
        if self.proc.poll() is None:
            self.proc.kill()
            try:
                self.proc.wait(QUIT_WAIT_S)
            except subprocess.TimeoutExpired:
                pass
        try:
            self.proc.stdin.close()      # stdout and stderr close in their reader threads at EOF
        except (OSError, ValueError):
            pass


# --- one game -----------------------------------------------------------------------------------
@dataclasses.dataclass
class GameResult:
    index: int
    black: int                 # engine number (1 or 2) playing Black
    white: int
    winner: str                # 'b', 'w' or '' (draw); 'x': abandoned (not counted)
    reason: str                # score | resign | illegal | timeout | crash | error | refused | max-moves | abandoned
    detail: str
    result: str                # SGF RE
    moves: int
    seconds: float
    max_move_s: dict           # engine number -> longest genmove in seconds
    sgf: str = ""

    @property
    def winner_engine(self):
        if self.winner == "b":
            return self.black
        if self.winner == "w":
            return self.white
        return 0


@dataclasses.dataclass
class MatchConfig:
    engines: dict              # {1: command, 2: command}
    names: dict                # {1: label, 2: label}
    games: int = 10
    size: int = 9
    komi: float = 7.0
    parallel: int = 1
    alternate: bool = True
    seed: int = 1
    time_per_move: float = 0.0
    time_settings_to: str = "both"
    move_timeout: float = 0.0
    max_moves: int = 0
    sgf_dir: str = ""
    sprt: tuple = None         # (elo0, elo1)
    alpha: float = 0.05
    beta: float = 0.05


def _other(c):
    return "w" if c == "b" else "b"


def move_limit(cfg, n):
    """Seconds engine n may take on a genmove: --move-timeout (default --time-per-move + 1 s)
    when it was told the time settings; an engine that was not told any (--time-settings-to)
    cannot be held to them and gets UNTIMED_MOVE_TIMEOUT_S (or --move-timeout in an untimed match)."""
    timed = cfg.time_per_move and cfg.time_settings_to in ("both", str(n))
    if timed:
        return cfg.move_timeout or cfg.time_per_move + 1.0
    if not cfg.time_per_move and cfg.move_timeout:
        return cfg.move_timeout
    return UNTIMED_MOVE_TIMEOUT_S


def play_game(cfg, index, stop=None):
    """Play game `index`; returns a GameResult (and writes its SGF when cfg.sgf_dir is set)."""
    e1_black = (index % 2 == 0) or not cfg.alternate
    number = {"b": 1 if e1_black else 2, "w": 2 if e1_black else 1}
    seed = cfg.seed + index
    referee = Board(cfg.size, cfg.komi)
    move_timeout = {n: move_limit(cfg, n) for n in (1, 2)}
    max_moves = cfg.max_moves or 4 * cfg.size * cfg.size
    moves, comments = [], {}
    max_move_s = {1: 0.0, 2: 0.0}
    engines = {}
    t_start = time.monotonic()
    winner, reason, detail, result = "", "", "", ""

    def forfeit(colour, why, text):
        nonlocal winner, reason, detail, result
        winner, reason, detail = _other(colour), why, text
        result = f"{_other(colour).upper()}+{'T' if why == 'timeout' else 'F'}"

    try:
        for c in ("b", "w"):
            n = number[c]
            try:
                engines[c] = GtpProcess(expand_command(cfg.engines[n], seed), f"engine{n} ({cfg.names[n]})")
            except EngineFailure as e:
                forfeit(c, e.reason, e.detail)
                raise
        for c in ("b", "w"):
            eng = engines[c]
            n = number[c]
            try:
                eng.send(f"boardsize {cfg.size}", COMMAND_TIMEOUT_S)
                eng.send("clear_board", COMMAND_TIMEOUT_S)
                eng.send(f"komi {cfg.komi:g}", COMMAND_TIMEOUT_S)
                if cfg.time_per_move and cfg.time_settings_to in ("both", str(n)):
                    eng.send(f"time_settings 0 {cfg.time_per_move:g} 1", COMMAND_TIMEOUT_S)
            except EngineFailure as e:
                forfeit(c, e.reason, e.detail)
                raise
        colour, passes = "b", 0
        while True:
            if stop is not None and stop.is_set():
                winner, reason, detail, result = "x", "abandoned", "match stopped", ""
                break
            if len(moves) >= max_moves:
                reason, detail = "max-moves", f"stopped after {len(moves)} moves"
                break
            eng, n = engines[colour], number[colour]
            t0 = time.monotonic()
            try:
                answer = eng.send(f"genmove {colour}", move_timeout[n])
            except EngineFailure as e:
                forfeit(colour, e.reason, e.detail)
                break
            took = time.monotonic() - t0
            max_move_s[n] = max(max_move_s[n], took)
            move = answer.split()[0].lower() if answer.split() else ""
            if move == "resign":
                winner, reason, detail = _other(colour), "resign", f"engine{n} resigned"
                result = f"{_other(colour).upper()}+R"
                break
            try:
                referee.play(move, colour)
            except ValueError as e:
                forfeit(colour, "illegal", f"engine{n} played {answer!r} as {colour}: {e}")
                comments[len(moves)] = f"illegal move {answer!r}: {e}"
                break
            vertex = "pass" if move == "pass" else referee.last_move[1]
            moves.append((colour, vertex))
            passes = passes + 1 if vertex == "pass" else 0
            if passes >= 2:
                reason, detail = "score", "two passes"
                break
            other = engines[_other(colour)]
            try:
                other.send(f"play {colour} {vertex}", COMMAND_TIMEOUT_S)
            except EngineFailure as e:
                why = "refused" if e.reason == "error" else e.reason
                forfeit(_other(colour), why, e.detail)
                break
            colour = _other(colour)
    except EngineFailure:
        pass
    finally:
        for eng in engines.values():
            eng.close()
    if reason in ("score", "max-moves"):
        s = referee.score()
        winner = "b" if s > 0 else ("w" if s < 0 else "")
        result = f"B+{s:g}" if s > 0 else (f"W+{-s:g}" if s < 0 else "0")
        detail += f"; Tromp-Taylor {result}"
    res = GameResult(index=index, black=number["b"], white=number["w"], winner=winner,
                     reason=reason, detail=detail, result=result, moves=len(moves),
                     seconds=time.monotonic() - t_start, max_move_s=max_move_s)
    if cfg.sgf_dir and winner != "x":
        from gammago.sgf_write import game_sgf
        os.makedirs(cfg.sgf_dir, exist_ok=True)
        path = os.path.join(cfg.sgf_dir, f"game_{index + 1:04d}.sgf")
        comment = (f"gammago match game {index + 1}, seed {seed}: {reason}: {detail}\n"
                   f"Black: engine{number['b']}: {cfg.engines[number['b']]}\n"
                   f"White: engine{number['w']}: {cfg.engines[number['w']]}")
        data = game_sgf(cfg.size, cfg.komi, moves, result=result or None,
                        black=cfg.names[number["b"]], white=cfg.names[number["w"]],
                        comment=comment, move_comments=comments,
                        game_comment="refereed by gammago: positional superko, suicide illegal, "
                                     "Tromp-Taylor area score after two passes")
        with open(path, "wb") as f:
            f.write(data)
        res.sgf = path
    return res


# --- the table ------------------------------------------------------------------------------
@dataclasses.dataclass
class Tally:
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def n(self):
        return self.wins + self.draws + self.losses

    def add(self, outcome):
        if outcome > 0:
            self.wins += 1
        elif outcome < 0:
            self.losses += 1
        else:
            self.draws += 1


def summarize(results, cfg):
    """Counts from engine1's side: overall, per colour, reasons; score, Elo, LLR."""
    counted = [r for r in results if r.winner != "x"]
    total, as_black, as_white = Tally(), Tally(), Tally()
    reasons = collections.Counter()
    forfeits = {1: collections.Counter(), 2: collections.Counter()}
    for r in counted:
        w = r.winner_engine
        outcome = 1 if w == 1 else (-1 if w == 2 else 0)
        total.add(outcome)
        (as_black if r.black == 1 else as_white).add(outcome)
        reasons[r.reason] += 1
        if r.reason in ("illegal", "timeout", "crash", "error", "refused"):
            loser = r.white if r.winner == "b" else r.black
            forfeits[loser][r.reason] += 1
    x = total.wins + 0.5 * total.draws
    s = {"games": total.n, "engine1": dataclasses.asdict(total),
         "engine1_as_black": dataclasses.asdict(as_black),
         "engine1_as_white": dataclasses.asdict(as_white),
         "black_wins": sum(1 for r in counted if r.winner == "b"),
         "white_wins": sum(1 for r in counted if r.winner == "w"),
         "reasons": dict(reasons), "forfeits": {k: dict(v) for k, v in forfeits.items()},
         "abandoned": len(results) - len(counted)}
    if total.n:
        lo, hi = wilson_interval(x, total.n)
        elo, elo_lo, elo_hi = elo_interval(total.wins, total.draws, total.losses)
        s.update(score=x / total.n, score_ci=[lo, hi], elo=elo, elo_ci=[elo_lo, elo_hi])
    if cfg.sprt:
        s["llr"] = sprt_llr(total.wins, total.draws, total.losses, *cfg.sprt)
        s["llr_bounds"] = list(sprt_bounds(cfg.alpha, cfg.beta))
    return s


def _elo_text(e):
    return "+inf" if e == math.inf else ("-inf" if e == -math.inf else f"{e:+.0f}")


def format_table(s, cfg):
    n1, n2 = cfg.names[1], cfg.names[2]
    w = max(len(n1), len(n2), 8)
    t = s["engine1"]
    b, wh = s["engine1_as_black"], s["engine1_as_white"]
    f = s["forfeits"]

    def wld(a, b_, c):
        return f"{a}-{b_}-{c}"

    def forfeit_text(k):
        return ", ".join(f"{v} {r}" for r, v in sorted(f[k].items())) or "-"

    lines = [f"{cfg.games if not cfg.sprt else 'up to ' + str(cfg.games)} games planned, "
             f"{s['games']} played on {cfg.size}x{cfg.size}, komi {cfg.komi:g}"
             + (f", {cfg.time_per_move:g} s a move" if cfg.time_per_move else "")
             + (f" ({s['abandoned']} abandoned)" if s["abandoned"] else ""),
             "",
             f"{'engine':<{w}}  {'wins':>5} {'losses':>6} {'draws':>5}  {'as Black W-L-D':>14}  "
             f"{'as White W-L-D':>14}  forfeits lost",
             f"{n1:<{w}}  {t['wins']:>5} {t['losses']:>6} {t['draws']:>5}  "
             f"{wld(b['wins'], b['losses'], b['draws']):>14}  "
             f"{wld(wh['wins'], wh['losses'], wh['draws']):>14}  {forfeit_text(1)}",
             f"{n2:<{w}}  {t['losses']:>5} {t['wins']:>6} {t['draws']:>5}  "
             f"{wld(wh['losses'], wh['wins'], wh['draws']):>14}  "
             f"{wld(b['losses'], b['wins'], b['draws']):>14}  {forfeit_text(2)}",
             "",
             f"Black won {s['black_wins']}, White won {s['white_wins']}; endings: "
             + ", ".join(f"{v} {k}" for k, v in sorted(s["reasons"].items()))]
    if s["games"]:
        lo, hi = s["score_ci"]
        lines.append(f"{n1} score {100 * s['score']:.1f}% (95% CI {100 * lo:.1f}% .. {100 * hi:.1f}%), "
                     f"Elo {_elo_text(s['elo'])} (95% CI {_elo_text(s['elo_ci'][0])} .. "
                     f"{_elo_text(s['elo_ci'][1])}) against {n2}")
    if cfg.sprt:
        lo, hi = s["llr_bounds"]
        verdict = ("H1 accepted" if s["llr"] >= hi else "H0 accepted" if s["llr"] <= lo
                   else "no decision yet")
        lines.append(f"SPRT elo0={cfg.sprt[0]:g} elo1={cfg.sprt[1]:g} alpha={cfg.alpha:g} "
                     f"beta={cfg.beta:g}: LLR {s['llr']:.3f} in [{lo:.3f}, {hi:.3f}]: {verdict}")
    return "\n".join(lines)


# --- the match ------------------------------------------------------------------------------
def engine_name(command, seed=0):
    """'name version' as the engine reports it over GTP."""
    proc = GtpProcess(expand_command(command, seed), command)
    try:
        name = proc.send("name", STARTUP_TIMEOUT_S)
        version = proc.send("version", COMMAND_TIMEOUT_S)
    finally:
        proc.close()
    return f"{name} {version}".strip()


def abandoned_result(cfg, index, detail):
    """A game that was not played to its end: not counted, not recorded (--resume plays it)."""
    e1_black = (index % 2 == 0) or not cfg.alternate
    return GameResult(index=index, black=1 if e1_black else 2, white=2 if e1_black else 1,
                      winner="x", reason="abandoned", detail=detail, result="", moves=0,
                      seconds=0.0, max_move_s={1: 0.0, 2: 0.0})


class LocalGames:
    """The games of a match in threads of this process, --parallel at a time. run_match drives
    this or gammago.cluster.ClusterGames (the same interface) with one loop."""

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
    default; gammago.cluster.ClusterGames on a Dask cluster)."""
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


# --- the record: written after every game, read back by --resume --------------------------------
# what defines a match: a record may be continued only under the same values (--games,
# --parallel, --sgf-dir and the labels may change)
RESUME_FIELDS = ("engines", "size", "komi", "alternate", "seed", "time_per_move",
                 "time_settings_to", "move_timeout", "max_moves", "sprt", "alpha", "beta")


def _jsonable(x):
    return json.loads(json.dumps(x, default=str))


def write_record(path, cfg, results, summary, finished):
    """The match as JSON (config, summary, every game), replaced atomically: a match killed at any
    moment leaves the record of its last finished game."""
    data = {"config": dataclasses.asdict(cfg), "finished": finished, "summary": summary,
            "games": [dataclasses.asdict(r) for r in sorted(results, key=lambda r: r.index)
                      if r.winner != "x"]}
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, default=str)
    os.replace(tmp, path)


def read_record(path, cfg):
    """(games, names, wall seconds so far) of a record that write_record made of the same match;
    ValueError names the file and what does not fit."""
    try:
        with open(path) as f:
            data = json.load(f)
        old = data["config"]
        games = [GameResult(**{**g, "max_move_s": {int(k): v for k, v in g["max_move_s"].items()}})
                 for g in data["games"]]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
        raise ValueError(f"{path}: not a match record: {type(e).__name__}: {e}") from None
    now = _jsonable(dataclasses.asdict(cfg))
    for k in RESUME_FIELDS:
        if old.get(k) != now[k]:
            raise ValueError(f"{path}: recorded with {k} = {old.get(k)!r}, now {now[k]!r}: "
                             "a match resumes only with the same settings")
    names = {int(k): v for k, v in old.get("names", {}).items()}
    return games, names, float(data.get("summary", {}).get("wall_s", 0.0))


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
    if args.games < 1:
        raise ValueError(f"--games must be >= 1, not {args.games}")
    if not 5 <= args.size <= 19:
        raise ValueError(f"--size must be 5 to 19, not {args.size}")
    if args.parallel < 1:
        raise ValueError(f"--parallel must be >= 1, not {args.parallel}")
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
                       games=args.games, size=args.size, komi=args.komi, parallel=args.parallel,
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
    client = None
    if args.scheduler:
        try:
            client = cluster.connect(args.scheduler, args.connect_timeout,
                                     log=lambda m: print(m, file=sys.stderr))
        except cluster.ClusterError as e:
            print(f"gammago match: {e}", file=sys.stderr)
            return 2
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
        if not cfg.names[k]:
            try:
                if client is None:
                    cfg.names[k] = engine_name(cfg.engines[k], cfg.seed)
                else:           # the engine must run where the games are played
                    cfg.names[k] = cluster.call(client, engine_name, cfg.engines[k], cfg.seed,
                                                what=f"starting engine{k}")
            except EngineFailure as e:
                print(f"gammago match: engine{k} does not answer GTP"
                      + (" on a worker" if client else "") + f": {e}", file=sys.stderr)
                return 2
    if cfg.names[1] == cfg.names[2]:
        cfg.names = {1: cfg.names[1] + " (1)", 2: cfg.names[2] + " (2)"}
    print(f"engine1: {cfg.names[1]}: {cfg.engines[1]}\nengine2: {cfg.names[2]}: {cfg.engines[2]}",
          file=sys.stderr)
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
    games = cluster.ClusterGames(client, cfg) if client is not None else None
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
