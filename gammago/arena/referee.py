"""One game of a match between two GTP engines, refereed (play_game): the referee's rules are
those of gammago match (its module docstring and docs/BENCHMARKS.md). It runs where the game is
played: in a thread of `gammago match`, or as a task on a Dask cluster's worker
(gammago/core/cluster.py).
"""
import os
import time

from gammago.go.board import Board
from gammago.go.handicap import fixed_points
from gammago.arena.gtp_process import (COMMAND_TIMEOUT_S, UNTIMED_MOVE_TIMEOUT_S, EngineFailure, GtpProcess,
                                 expand_command)
from gammago.arena.match_record import GameResult
from gammago.go.scoring import score_text


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


def play_game(cfg, index, stop=None, start=()):
    """Play game `index`; returns a GameResult (and writes its SGF when cfg.sgf_dir is set).

    start: moves [(colour, vertex or 'pass')] both engines are told with `play` before the first
    genmove (a given opening, or a position to play on from); the referee checks them first
    (ValueError for an illegal one, before an engine starts) and the game's record begins with
    them. The side to move is then the other of the last one's."""
    e1_black = (index % 2 == 0) or not cfg.alternate
    number = {"b": 1 if e1_black else 2, "w": 2 if e1_black else 1}
    seed = cfg.seed + index
    referee = Board(cfg.size, cfg.komi)
    stones = fixed_points(cfg.size, cfg.handicap) if cfg.handicap else []
    if stones:
        referee.setup(black=stones)
    start = _play_start(referee, start)
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
                if stones:
                    placed = eng.send(f"fixed_handicap {len(stones)}", COMMAND_TIMEOUT_S).upper().split()
                    if sorted(placed) != sorted(stones):
                        raise EngineFailure("error", f"engine{n} placed the handicap stones "
                                                     f"{' '.join(placed)}, not {' '.join(stones)}")
                if cfg.time_per_move and cfg.time_settings_to in ("both", str(n)):
                    eng.send(f"time_settings 0 {cfg.time_per_move:g} 1", COMMAND_TIMEOUT_S)
            except EngineFailure as e:
                forfeit(c, e.reason, e.detail)
                raise
        colour, passes = ("w" if stones else "b"), 0
        for c, vertex in start:                  # on the referee already: told to the engines
            moves.append((c, vertex))
            passes = passes + 1 if vertex == "pass" else 0
            for told in ("b", "w"):
                try:
                    engines[told].send(f"play {c} {vertex}", COMMAND_TIMEOUT_S)
                except EngineFailure as e:
                    forfeit(told, "refused" if e.reason == "error" else e.reason, e.detail)
                    raise
            colour = _other(c)
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
        result = score_text(s)
        detail += f"; Tromp-Taylor {result}"
    res = GameResult(index=index, black=number["b"], white=number["w"], winner=winner,
                     reason=reason, detail=detail, result=result, moves=len(moves),
                     seconds=time.monotonic() - t_start, max_move_s=max_move_s)
    if cfg.sgf_dir and winner != "x":
        from gammago.go.sgf_write import game_sgf
        os.makedirs(cfg.sgf_dir, exist_ok=True)
        path = os.path.join(cfg.sgf_dir, f"game_{index + 1:04d}.sgf")
        comment = (f"gammago match game {index + 1}, seed {seed}: {reason}: {detail}\n"
                   f"Black: engine{number['b']}: {cfg.engines[number['b']]}\n"
                   f"White: engine{number['w']}: {cfg.engines[number['w']]}")
        data = game_sgf(cfg.size, cfg.komi, moves, setup_black=stones,
                        handicap=len(stones) or None, result=result or None,
                        black=cfg.names[number["b"]], white=cfg.names[number["w"]],
                        comment=comment, move_comments=comments,
                        game_comment="refereed by gammago: positional superko, suicide illegal, "
                                     "Tromp-Taylor area score after two passes")
        with open(path, "wb") as f:
            f.write(data)
        res.sgf = path
    return res


def _play_start(referee, start):
    """Play the start moves on the referee's board; returns them as the referee writes them
    (vertices upper case, 'pass'). ValueError names the first that is not legal."""
    played = []
    for k, (c, vertex) in enumerate(start):
        if c not in ("b", "w"):
            raise ValueError(f"start move {k + 1}: colour {c!r} is not b or w")
        try:
            referee.play(vertex, c)
        except ValueError as e:
            raise ValueError(f"start move {k + 1} ({c} {vertex}): {e}") from None
        played.append((c, "pass" if str(vertex).lower() == "pass" else referee.last_move[1]))
    return played


def abandoned_result(cfg, index, detail):
    """A game that was not played to its end: not counted, not recorded (--resume plays it)."""
    e1_black = (index % 2 == 0) or not cfg.alternate
    return GameResult(index=index, black=1 if e1_black else 2, white=2 if e1_black else 1,
                      winner="x", reason="abandoned", detail=detail, result="", moves=0,
                      seconds=0.0, max_move_s={1: 0.0, 2: 0.0})
