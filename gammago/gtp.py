"""The `gammago gtp` command: the Go Text Protocol (GTP v2) front end of the engine.

One command per line on stdin, one response per command on stdout:
    [id] command_name [arguments]          ->   =[id] result          or   ?[id] error message
                                                (blank line)                (blank line)
The full GTP v2 set, plus printsgf, list_stones, cputime, kgs-time_settings,
kgs-genmove_cleanup, lz-analyze / lz-genmove_analyze (Leela Zero's analysis output, as Sabaki
and Lizzie read it), kata-analyze / kata-genmove_analyze (KataGo's, with ownership),
gogui-analyze_commands and the GoGui graphics commands gammago-analyze, gammago-ownership and
gammago-criticality, and gammago-build (the package directory the engine runs from and its git
commit: `gammago match` shows it).

lz-analyze and kata-analyze stream until any input line arrives, an empty one included (Leela
Zero stops its analysis as soon as input is pending; KataGo on any command or raw newline): an
empty or comment line is then consumed, a command is answered next. A streaming answer writes
its `=` only with its first line, so an engine error before that answers `? message`.
gogui-interrupt: a `# interrupt` line read while a command runs (GoGui's Interrupt) stops the
move under way, which plays the best move found so far.

Every command that fails answers `?` and leaves the game as it was. The engine
(gammago.engine.Engine: its public methods are what this module calls) owns the game; this module
only parses, checks and formats.
stdout belongs to the protocol: anything else (logs, warnings, stray prints) goes to stderr.
"""
import json
import logging
import os
import queue
import select
import sys
import threading
import time

import gammago
from gammago import handicap
from gammago import rules as _rules
from gammago.board import Board, format_vertex, parse_color, parse_vertex
from gammago.scoring import score_text

log = logging.getLogger("gammago")

PROTOCOL_VERSION = 2
DEFAULT_ANALYZE_CS = 100          # lz-analyze / kata-analyze interval (centiseconds) when none is given
NO_INTERVAL_S = 1e9               # interval 0: no periodic output, only the final one
GFX_ANALYZE_S = (1, 5)            # gammago-analyze durations offered to GoGui
GFX_LABELS = 8                    # how many candidate moves gammago-analyze labels
GFX_MAP_S = 1                     # gammago-ownership / gammago-criticality: default seconds
GFX_MIN_INFLUENCE = 0.2           # gammago-analyze shows ownership from this size up
STREAMING = ("lz-analyze", "lz-genmove_analyze", "kata-analyze", "kata-genmove_analyze",
             "analyze", "genmove_analyze", "cgos-genmove_analyze")
CGOS_MOVES = 10                   # cgos-genmove_analyze: candidate moves reported
OWNERSHIP_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
STATUSES = ("alive", "dead", "seki")
INTERRUPT_LINE = "# interrupt"    # GoGui's: stop the command under way (gogui-interrupt)
CONTROLLER_POLL_S = 0.05          # after the input ends: how often to look for a vanished reader


class GtpError(Exception):
    """A failed command: the message becomes the `? message` reply."""


def _error_text(e):
    """The `?` message for an exception: a GtpError's own text, else what failed."""
    if isinstance(e, GtpError):
        return str(e)
    return f"internal error: {type(e).__name__}: {e}"


# --- argument parsing helpers ----------------------------------------------------------------
def _color(text):
    try:
        return "b" if parse_color(text) == 1 else "w"
    except ValueError:
        raise GtpError(f"invalid color {text!r}") from None


def _int(text, what):
    try:
        return int(text)
    except (TypeError, ValueError):
        raise GtpError(f"syntax error: {what} is not an integer: {text!r}") from None


def _float(text, what):
    try:
        v = float(text)
    except (TypeError, ValueError):
        raise GtpError(f"syntax error: {what} is not a number: {text!r}") from None
    if v != v or v in (float("inf"), float("-inf")):
        raise GtpError(f"syntax error: {what} is not a finite number: {text!r}")
    return v


def _nargs(args, lo, hi=None, usage=""):
    hi = lo if hi is None else hi
    if not lo <= len(args) <= hi:
        raise GtpError(f"syntax error: usage: {usage}")


def _preprocess(raw):
    """GTP 2.2: drop control characters but HT and LF, cut comments, HT -> space, strip."""
    line = "".join(ch for ch in raw if ch in "\t\n" or (ord(ch) >= 32 and ord(ch) != 127))
    line = line.split("#", 1)[0].replace("\t", " ")
    return line.strip()


def info_line(infos, score=None):
    """Leela Zero's analysis line: all candidates on one line, each `info move ...`,
    winrate / prior / lcb as integers in 1/10000; with score (points for the side the analysis
    is for), each candidate's `scoreLead` as well, as Sabaki's `analyze` reads it."""
    def per10k(x):
        return max(0, min(10000, int(round(float(x) * 10000))))
    lead = "" if score is None else f"scoreLead {score:.2f} "
    parts = []
    for d in infos:
        pv = " ".join(d.get("pv") or [d["move"]])
        parts.append(f"info move {d['move']} visits {int(d['visits'])} winrate {per10k(d['winrate'])} "
                     f"{lead}prior {per10k(d.get('prior', 0.0))} "
                     f"lcb {per10k(d.get('lcb', d['winrate']))} order {int(d['order'])} pv {pv}")
    return " ".join(parts)


def kata_info_line(infos, score=None, ownership=None, root=None, pv_visits=False,
                   pv_edge_visits=False, score_stdev=None, ownership_stdev=None):
    """KataGo's kata-analyze line: `info move ... winrate 0.4799 scoreMean -0.1 scoreStdev 30.2
    scoreLead -0.1 prior 0.0779 lcb 0.4416 order 0 pv ...` for each candidate (floats in 0..1;
    scoreMean and scoreLead, the same number as in KataGo, in points for the side the analysis
    is for, omitted when score is None; scoreStdev when score_stdev is given), with `pvVisits`
    and / or `pvEdgeVisits` (each candidate's "pv_visits") when asked; then `rootInfo visits N
    winrate W [scoreMean S scoreStdev D scoreLead S] currentPlayer B|W` when root (a dict of
    those) is given; then `ownership` and one number per point when given (row by row from the
    top, as kata_ownership orders them), and `ownershipStdev` and its numbers likewise."""
    if score is None:
        score_part = ""
    else:
        spread = "" if score_stdev is None else f"scoreStdev {score_stdev:.2f} "
        score_part = f"scoreMean {score:.2f} {spread}scoreLead {score:.2f} "
    parts = []
    for d in infos:
        pv = " ".join(d.get("pv") or [d["move"]])
        text = (f"info move {d['move']} visits {int(d['visits'])} "
                f"winrate {_unit(d['winrate'])} {score_part}"
                f"prior {_unit(d.get('prior', 0.0))} lcb {_unit(d.get('lcb', d['winrate']))} "
                f"order {int(d['order'])} pv {pv}")
        seen = " ".join(str(int(n)) for n in d.get("pv_visits", ()))
        if pv_visits:
            text += f" pvVisits {seen}"
        if pv_edge_visits:
            text += f" pvEdgeVisits {seen}"
        parts.append(text)
    if root is not None:
        parts.append(f"rootInfo visits {int(root['visits'])} winrate {_unit(root['winrate'])} "
                     f"{score_part}currentPlayer {root['currentPlayer']}")
    if ownership is not None:
        parts.append("ownership " + " ".join(f"{float(v):.4f}" for v in ownership))
    if ownership_stdev is not None:
        parts.append("ownershipStdev " + " ".join(f"{float(v):.4f}" for v in ownership_stdev))
    return " ".join(parts)


def _unit(x):
    return f"{max(0.0, min(1.0, float(x))):.6f}"


def kata_ownership(owner, color):
    """Ownership +1 Black .. -1 White as [row][col] (row 0 = line 1) -> KataGo's order and sign:
    row by row from the top-left point (A19 on 19x19) to the bottom-right (T1), +1 = owned by
    `color`, the side the analysis is for."""
    sign = 1.0 if color == "b" else -1.0
    n = len(owner)
    return [sign * float(owner[row][col]) for row in range(n - 1, -1, -1) for col in range(n)]


def encode_ownership(values):
    """CGOS's ownership string: one character a point, -1 .. +1 mapped to the 63 characters of
    OWNERSHIP_CHARS (the encoding of CGOS's client, gtpengine.encodeOwnership)."""
    return "".join(OWNERSHIP_CHARS[round(max(0.0, min(1.0, (float(v) + 1) / 2)) * 62)]
                   for v in values)


def cgos_analysis(infos, color, score=None, ownership=None):
    """The analysis CGOS stores with a move (the cgos-genmove_analyze JSON of CGOS's
    "GTP tournament game expansion"): {"winrate", "score", "visits", "moves": [{"move",
    "visits", "winrate", "score", "prior", "pv"}], "ownership"}, win rates and scores for the
    side that moves (`color`), a move's pv the moves after it, ownership KataGo's order
    (kata_ownership) from that side's view, encoded (encode_ownership). None without infos."""
    infos = [d for d in infos if d["visits"] > 0]
    if not infos:
        return None
    visits = sum(int(d["visits"]) for d in infos)
    out = {"winrate": round(sum(d["visits"] * d["winrate"] for d in infos) / visits, 4)}
    if score is not None:
        out["score"] = round(float(score), 2)
    out["visits"] = visits
    moves = []
    for d in infos[:CGOS_MOVES]:
        m = {"move": d["move"], "visits": int(d["visits"]), "winrate": round(float(d["winrate"]), 4)}
        if score is not None:
            m["score"] = out["score"]          # the tree keeps no score per move
        m["prior"] = round(float(d.get("prior", 0.0)), 4)
        pv = list(d.get("pv") or [d["move"]])[1:]
        if pv:
            m["pv"] = " ".join(pv)
        moves.append(m)
    out["moves"] = moves
    if ownership is not None:
        out["ownership"] = encode_ownership(kata_ownership(ownership, color))
    return out


# --- the front end ---------------------------------------------------------------------------
class Gtp:
    """GTP on top of an Engine. `execute(line)` answers one line (tests use it); `serve()` runs
    the loop on streams, with a reader thread so that lz-analyze stops when the next command
    arrives."""

    def __init__(self, engine, out=None):
        self.engine = engine
        self.out = out if out is not None else sys.stdout
        self._write_lock = threading.Lock()
        self._lines = queue.Queue()         # input lines (None: end of input)
        self._pending = []                  # lines taken off the queue but not answered yet
        self._busy = False                  # a command is being answered (serve)
        self.quit = False
        self.setup_black, self.setup_white = [], []   # setup stones of this game (printsgf)
        self.handicap = 0
        self.version_text = ""              # --gtp-version: what `version` answers instead
        self.commands = {
            "protocol_version": self.cmd_protocol_version,
            "name": self.cmd_name,
            "version": self.cmd_version,
            "known_command": self.cmd_known_command,
            "list_commands": self.cmd_list_commands,
            "quit": self.cmd_quit,
            "boardsize": self.cmd_boardsize,
            "clear_board": self.cmd_clear_board,
            "komi": self.cmd_komi,
            "play": self.cmd_play,
            "genmove": self.cmd_genmove,
            "reg_genmove": self.cmd_reg_genmove,
            "undo": self.cmd_undo,
            "showboard": self.cmd_showboard,
            "final_score": self.cmd_final_score,
            "final_status_list": self.cmd_final_status_list,
            "fixed_handicap": self.cmd_fixed_handicap,
            "place_free_handicap": self.cmd_place_free_handicap,
            "set_free_handicap": self.cmd_set_free_handicap,
            "loadsgf": self.cmd_loadsgf,
            "printsgf": self.cmd_printsgf,
            "list_stones": self.cmd_list_stones,
            "is_legal": self.cmd_is_legal,
            "all_legal": self.cmd_all_legal,
            "captures": self.cmd_captures,
            "get_komi": self.cmd_get_komi,
            "kgs-chat": self.cmd_kgs_chat,
            "kgs-game_over": self.cmd_kgs_game_over,
            "time_settings": self.cmd_time_settings,
            "time_left": self.cmd_time_left,
            "kgs-time_settings": self.cmd_kgs_time_settings,
            "kata-time_settings": self.cmd_kata_time_settings,
            "kata-list_time_settings": self.cmd_kata_list_time_settings,
            "kgs-genmove_cleanup": self.cmd_kgs_genmove_cleanup,
            "kgs-rules": self.cmd_kgs_rules,
            "kata-get-rules": self.cmd_kata_get_rules,
            "kata-set-rules": self.cmd_kata_set_rules,
            "kata-set-rule": self.cmd_kata_set_rule,
            "cgos-genmove_analyze": self.cmd_cgos_genmove_analyze,
            "cputime": self.cmd_cputime,
            "gomill-cpu_time": self.cmd_cputime,
            "stop": self.cmd_stop,
            "clear_cache": self.cmd_clear_cache,
            "lz-analyze": self.cmd_lz_analyze,
            "lz-genmove_analyze": self.cmd_lz_genmove_analyze,
            "kata-analyze": self.cmd_kata_analyze,
            "kata-genmove_analyze": self.cmd_kata_genmove_analyze,
            "analyze": self.cmd_analyze,
            "genmove_analyze": self.cmd_genmove_analyze,
            "gogui-analyze_commands": self.cmd_gogui_analyze_commands,
            "gammago-analyze": self.cmd_gammago_analyze,
            "gammago-ownership": self.cmd_gammago_ownership,
            "gammago-criticality": self.cmd_gammago_criticality,
            "gammago-build": self.cmd_gammago_build,
            "gogui-interrupt": self.cmd_gogui_interrupt,
        }
        self._stream_cid = None             # the streaming answer under way: its id,
        self._stream_open = False           # ... and whether its `=` line is out

    # --- I/O ---
    def _write(self, text):
        with self._write_lock:
            self.out.write(text)
            self.out.flush()

    def _next_line(self):
        if self._pending:
            return self._pending.pop(0)
        return self._lines.get()

    def serve(self, inp=None):
        """Answer commands from inp (an iterable of lines; default: the stdin file descriptor)
        until quit or end of input."""

        def lines_of_fd(fd):
            # unbuffered reads: a daemon thread blocked here holds no lock of sys.stdin, so the
            # interpreter can exit at `quit` while the controller keeps our stdin open
            buf = b""
            while True:
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    yield line.decode("utf-8", "replace") + "\n"
            if buf:
                yield buf.decode("utf-8", "replace")

        source = lines_of_fd(sys.stdin.fileno()) if inp is None else inp

        def reader():
            try:
                for raw in source:
                    if self._busy and raw.strip() == INTERRUPT_LINE:
                        self._interrupt()
                    self._lines.put(raw)
            except (OSError, ValueError) as e:      # closed or broken input
                log.warning("gtp: input ends: %s", e)
            finally:
                self._lines.put(None)
            # the input has ended; if the controller is gone too (killed: nobody reads our
            # answers), a move under way, or one queued before the end, would only burn CPU:
            # each is stopped as it starts (commands without a search end by themselves)
            while not served.wait(CONTROLLER_POLL_S):
                if self._busy and self._controller_gone():
                    self._interrupt()

        served = threading.Event()
        threading.Thread(target=reader, name="gtp-reader", daemon=True).start()
        try:
            while not self.quit:
                raw = self._next_line()
                if raw is None:
                    break
                self._busy = True
                try:
                    reply = self.execute(raw)
                finally:
                    self._busy = False
                if reply is not None:
                    self._write(reply)
        finally:
            served.set()
            self._ponder_stop()
        return 0

    def _controller_gone(self):
        """True when nobody reads our answers any more: our output is a pipe whose reading end
        is closed (poll reports an error on it). A file or terminal never is."""
        try:
            fd = self.out.fileno()
        except (AttributeError, OSError, ValueError):
            return False
        poller = select.poll()
        poller.register(fd, 0)              # errors and hang-ups are always reported
        try:
            return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
        except OSError:
            return False

    def _interrupt(self):
        interrupt = getattr(self.engine, "interrupt", None)
        if interrupt is not None:
            interrupt()

    def _ponder_stop(self):
        stop = getattr(self.engine, "ponder_stop", None)
        if stop is not None:
            stop()

    def _ponder_start(self, move):
        start = getattr(self.engine, "ponder_start", None)
        if start is not None and move != "resign":
            start()

    @staticmethod
    def _reply(ok, cid, text=""):
        text = str(text)
        lead = "\n" if text.startswith("\n") else ""      # multi-line: first line left empty
        body = "\n".join(l.rstrip() for l in text.split("\n") if l.strip())   # no blank line inside
        text = lead + body if body else ""
        head = ("=" if ok else "?") + (cid or "")
        return head + (" " + text if text else "") + "\n\n"

    def execute(self, raw):
        """Answer one input line: the full reply text, '' when a streaming command already wrote
        its reply, or None for an empty / comment line."""
        line = _preprocess(raw)
        if not line:
            return None
        words = line.split()
        cid = None
        if words[0].isdigit():
            cid = words.pop(0)
            if not words:
                return self._reply(False, cid, "syntax error: no command after the id")
        name, args = words[0].lower(), words[1:]
        handler = self.commands.get(name)
        if handler is None:
            return self._reply(False, cid, "unknown command")
        self._ponder_stop()      # --ponder: every command ends pondering first
        interrupted = getattr(self.engine, "interrupted", None)
        if interrupted is not None:
            interrupted.clear()  # an interrupt stops the command it arrived during, no later one
        try:
            if name in STREAMING:
                handler(args, cid)
                return ""
            result = handler(args)
        except GtpError as e:
            return self._reply(False, cid, str(e))
        except Exception as e:      # an engine bug: say so, keep serving
            log.exception("gtp: %s failed", line)
            return self._reply(False, cid, _error_text(e))
        return self._reply(True, cid, "" if result is None else result)

    # --- administrative ---
    def cmd_protocol_version(self, args):
        return str(PROTOCOL_VERSION)

    def cmd_name(self, args):
        return self.engine.name

    def cmd_version(self, args):
        return self.version_text or self.engine.version

    def cmd_gammago_build(self, args):
        """The package directory this engine runs from, and its git commit where there is one."""
        _nargs(args, 0, usage="gammago-build")
        return gammago.build()

    def cmd_known_command(self, args):
        _nargs(args, 1, usage="known_command COMMAND")
        return "true" if args[0].lower() in self.commands else "false"

    def cmd_list_commands(self, args):
        return "\n".join(self.commands)

    def cmd_quit(self, args):
        self.quit = True
        return ""

    # --- setup ---
    def _forget_setup(self):
        self.setup_black, self.setup_white = [], []
        self.handicap = 0

    def cmd_boardsize(self, args):
        _nargs(args, 1, usage="boardsize SIZE")
        size = _int(args[0], "boardsize")
        try:
            self.engine.new_game(size, self.engine.board.komi)
        except ValueError:
            raise GtpError("unacceptable size") from None
        self._forget_setup()
        return ""

    def cmd_clear_board(self, args):
        self.engine.new_game(self.engine.board.size, self.engine.board.komi)
        self._forget_setup()
        return ""

    def cmd_komi(self, args):
        _nargs(args, 1, usage="komi KOMI")
        self.engine.set_komi(_float(args[0], "komi"))
        return ""

    def _board_empty(self):
        b = self.engine.board
        return not b.moves and not b.stones("b") and not b.stones("w")

    def _set_handicap(self, vertices):
        self.engine.setup_stones(list(vertices), [])
        self.engine.board.to_move = "w"
        self.setup_black, self.setup_white = list(vertices), []
        self.handicap = len(vertices)

    def cmd_fixed_handicap(self, args):
        _nargs(args, 1, usage="fixed_handicap NUMBER_OF_STONES")
        n = _int(args[0], "number of stones")
        if not self._board_empty():
            raise GtpError("board not empty")
        try:
            vertices = handicap.fixed_points(self.engine.board.size, n)
        except ValueError as e:
            raise GtpError(str(e)) from None
        self._set_handicap(vertices)
        return " ".join(vertices)

    def cmd_place_free_handicap(self, args):
        _nargs(args, 1, usage="place_free_handicap NUMBER_OF_STONES")
        n = _int(args[0], "number of stones")
        size = self.engine.board.size
        if not self._board_empty():
            raise GtpError("board not empty")
        if n < 2 or n > size * size - 1:
            raise GtpError(f"invalid number of stones: {n} (2 to {size * size - 1})")
        vertices = list(self.engine.place_free_handicap(n))
        self.setup_black, self.setup_white = list(vertices), []
        self.handicap = len(vertices)
        return " ".join(vertices)

    def cmd_set_free_handicap(self, args):
        size = self.engine.board.size
        if not self._board_empty():
            raise GtpError("board not empty")
        if len(args) < 2 or len(args) > size * size - 1:
            raise GtpError(f"bad vertex list: {len(args)} stones (2 to {size * size - 1})")
        seen = []
        for a in args:
            try:
                rc = parse_vertex(a, size)
            except ValueError:
                raise GtpError(f"invalid vertex {a!r}") from None
            if rc is None:
                raise GtpError("bad vertex list: pass is not a handicap stone")
            v = format_vertex(rc)
            if v in seen:
                raise GtpError(f"bad vertex list: {v} given twice")
            seen.append(v)
        scratch = Board(size, self.engine.board.komi)
        try:
            scratch.setup(seen, [])
        except ValueError as e:
            raise GtpError(f"bad vertex list: {e}") from None
        self._set_handicap(seen)
        return ""

    def cmd_loadsgf(self, args):
        _nargs(args, 1, 2, usage="loadsgf FILENAME [MOVE_NUMBER]")
        from gammago.sgf import SgfError, parse_game
        path = args[0]
        upto = None
        if len(args) == 2:
            n = _int(args[1], "move number")
            if n < 1:
                raise GtpError(f"syntax error: move number must be >= 1, not {n}")
            upto = n - 1          # the position before move n
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise GtpError(f"cannot load file {path}: {e.strerror or e}") from None
        try:
            game = parse_game(path, data, setup_in_game=True)
            # checks every move before touching the engine
            black, white, to_move, moves = game.position(upto)
        except SgfError as e:
            raise GtpError(f"cannot load file {e}") from None
        eng = self.engine
        eng.new_game(game.size, game.komi)
        if black or white:
            eng.setup_stones(black, white)
        eng.board.to_move = to_move
        for colour, vertex in moves:
            eng.play(colour, vertex)
        self.setup_black, self.setup_white = list(black), list(white)
        self.handicap = game.handicap
        return ""

    # --- moves ---
    def _vertex(self, text):
        try:
            parse_vertex(text, self.engine.board.size)
        except ValueError:
            raise GtpError(f"invalid vertex {text!r}") from None
        return text

    def cmd_play(self, args):
        _nargs(args, 2, usage="play COLOR VERTEX")
        color = _color(args[0])
        vertex = self._vertex(args[1])
        try:
            self.engine.play(color, vertex)
        except ValueError as e:
            log.info("gtp: play %s %s refused: %s", color, vertex, e)
            raise GtpError("illegal move") from None
        return ""

    def cmd_genmove(self, args):
        _nargs(args, 1, usage="genmove COLOR")
        move = self.engine.genmove(_color(args[0]))
        self._ponder_start(move)
        return move

    def cmd_kgs_genmove_cleanup(self, args):
        _nargs(args, 1, usage="kgs-genmove_cleanup COLOR")
        move = self.engine.genmove(_color(args[0]), cleanup=True)
        self._ponder_start(move)
        return move

    def cmd_cgos_genmove_analyze(self, args, cid):
        """cgos-genmove_analyze COLOR: genmove, answered by one line of JSON analysis (the win
        rate, the score, the visits, the candidates with their pv, the ownership:
        cgos_analysis) and `play MOVE`, as CGOS's client passes them to the server."""
        _nargs(args, 1, usage="cgos-genmove_analyze COLOR")
        color = _color(args[0])
        engine = self.engine
        last = []
        self._stream_start(cid)
        try:
            move = engine.genmove_analyze(color, NO_INTERVAL_S, last.append)
            owner = engine.ownership() if last and last[-1] else None
            sign = 1.0 if color == "b" else -1.0
            score = None if owner is None else sign * (float(owner.sum()) - engine.board.komi)
            info = cgos_analysis(last[-1] if last else [], color, score, owner)
        except Exception as e:
            log.exception("gtp: cgos-genmove_analyze failed")
            self._stream_end(e)
            return
        if info is not None:
            self._stream_line(json.dumps(info, separators=(",", ":")))
        self._stream_line(f"play {move}")
        self._stream_end()
        self._ponder_start(move)

    # --- rules ---
    def _set_rules(self, value):
        try:
            self.engine.set_rules(value)
        except ValueError as e:
            raise GtpError(str(e)) from None
        return ""

    def cmd_kgs_rules(self, args):
        """kgs-rules RULES (kgsGtp sends it when the engine lists it): chinese (KGS's:
        positional superko), aga, japanese, new_zealand, or another rule set's name;
        `? unknown rules NAME` otherwise, the rules unchanged."""
        _nargs(args, 1, usage="kgs-rules chinese|aga|japanese|new_zealand")
        name = args[0].lower()
        return self._set_rules(_rules.KGS_RULES.get(name, name))

    def cmd_kata_get_rules(self, args):
        """kata-get-rules: KataGo's JSON rules object of the rules in force."""
        _nargs(args, 0, usage="kata-get-rules")
        return self.engine.rules.json()

    def cmd_kata_set_rules(self, args):
        """kata-set-rules RULES: a rule set's name or KataGo's JSON rules object (the board is
        kept); unknown or unplayable rules answer `?` and change nothing."""
        if not args:
            raise GtpError("syntax error: usage: kata-set-rules RULES")
        return self._set_rules(" ".join(args))

    def cmd_kata_set_rule(self, args):
        """kata-set-rule FIELD VALUE: one field of the rules in force changed."""
        _nargs(args, 2, usage="kata-set-rule FIELD VALUE")
        try:
            rules = _rules.with_field(self.engine.rules, args[0], args[1])
        except ValueError as e:
            raise GtpError(str(e)) from None
        return self._set_rules(rules)

    def cmd_reg_genmove(self, args):
        _nargs(args, 1, usage="reg_genmove COLOR")
        return self.engine.reg_genmove(_color(args[0]))

    def cmd_undo(self, args):
        try:
            self.engine.undo()
        except ValueError:
            raise GtpError("cannot undo") from None
        return ""

    # --- state and scoring ---
    def cmd_showboard(self, args):
        return "\n" + self.engine.board.showboard()

    # --- KGS: chat (kgsGtp sends what players write to the bot, and says the answer back) ---
    CHAT_HELP = "ask me: winrate (or score), version, help"

    def cmd_kgs_chat(self, args):
        """kgs-chat game|private NAME MESSAGE: `winrate` or `score` gets the last search's view
        (the move, its playouts, the win rate and the score it expects), `version` the engine's
        name, version and mode, `help` this list; anything else answers `? unknown chat
        command`, so a "gg" or a "thanks" is not answered with figures."""
        if len(args) < 3 or args[0].lower() not in ("game", "private"):
            raise GtpError("syntax error: usage: kgs-chat game|private NAME MESSAGE")
        word = args[2].lower().strip("!?.,:;")
        engine = self.engine
        if word == "help":
            return self.CHAT_HELP
        if word in ("version", "who"):
            return f"{engine.name} {engine.version} ({engine.mode}); {self.CHAT_HELP}"
        if word not in ("winrate", "score", "status"):
            raise GtpError("unknown chat command")
        infos, c = engine.last_infos, engine.last_infos_color
        if not infos or c is None:
            return "no search yet in this game"
        best = infos[0]
        side = "Black" if c == 1 else "White"
        playouts = sum(d["visits"] for d in infos)
        text = (f"my last search, for {side}: {best['move']} after {playouts:,} playouts, "
                f"win rate {100 * best['winrate']:.1f}% for {side}")
        owner = engine.last_owner
        if owner is not None:
            score = round(float(owner.sum()) - engine.board.komi, 1)
            text += f"; expected score {score_text(score)}"
        return text

    # --- GNU Go's position queries (the same answers as `gnugo --mode gtp`) ---
    def cmd_is_legal(self, args):
        """is_legal COLOR VERTEX: 1 when COLOR may play there now (positional superko and no
        suicide, as `play` judges it; a pass always may), else 0."""
        _nargs(args, 2, usage="is_legal COLOR VERTEX")
        color, vertex = _color(args[0]), self._vertex(args[1])
        return "1" if self.engine.board.is_legal(vertex, color) else "0"

    def cmd_all_legal(self, args):
        """all_legal COLOR: every board point COLOR may play now (no pass)."""
        _nargs(args, 1, usage="all_legal COLOR")
        return " ".join(self.engine.board.legal_moves(_color(args[0])))

    def cmd_captures(self, args):
        """captures COLOR: how many stones COLOR has captured in this game."""
        _nargs(args, 1, usage="captures COLOR")
        return str(self.engine.board.captures(_color(args[0])))

    def cmd_get_komi(self, args):
        _nargs(args, 0, usage="get_komi")
        return f"{self.engine.board.komi:g}"

    def cmd_list_stones(self, args):
        _nargs(args, 1, usage="list_stones COLOR")
        return " ".join(self.engine.board.stones(_color(args[0])))

    def cmd_final_score(self, args):
        return self.engine.final_score()

    def cmd_final_status_list(self, args):
        _nargs(args, 1, usage="final_status_list alive|dead|seki")
        status = args[0].lower()
        if status not in STATUSES:
            raise GtpError(f"syntax error: status must be alive, dead or seki, not {args[0]!r}")
        vertices = set(self.engine.final_status_list(status))
        board = self.engine.board
        lines, seen = [], set()
        for v in sorted(vertices, key=lambda v: board.point(v)):     # one string per line
            if v in seen:
                continue
            string = [s for s in board.string(v) if s in vertices]
            seen.update(string)
            lines.append(" ".join(string))
        return "\n".join(lines)

    def cmd_printsgf(self, args):
        _nargs(args, 0, 1, usage="printsgf [FILENAME]")
        from gammago.sgf_write import game_sgf
        b = self.engine.board
        data = game_sgf(b.size, b.komi, list(b.moves), self.setup_black, self.setup_white,
                        black=None, white=None, handicap=self.handicap or None, to_move=b.to_move
                        if not b.moves else None)
        if args:
            try:
                with open(args[0], "wb") as f:
                    f.write(data)
            except OSError as e:
                raise GtpError(f"cannot write {args[0]}: {e.strerror or e}") from None
            return ""
        text = data.decode("utf-8", "replace").strip()
        return "\n".join(l for l in text.split("\n") if l.strip())

    # --- time ---
    def cmd_time_settings(self, args):
        _nargs(args, 3, usage="time_settings MAIN_TIME BYO_YOMI_TIME BYO_YOMI_STONES")
        main = _float(args[0], "main time")
        byo = _float(args[1], "byo-yomi time")
        stones = _int(args[2], "byo-yomi stones")
        if main < 0 or byo < 0 or stones < 0:
            raise GtpError("syntax error: time settings must not be negative")
        self.engine.time_settings(main, byo, stones)
        return ""

    def cmd_time_left(self, args):
        _nargs(args, 3, usage="time_left COLOR TIME STONES")
        color = _color(args[0])
        seconds = _float(args[1], "time")
        stones = _int(args[2], "stones")
        if stones < 0:
            raise GtpError("syntax error: stones must not be negative")
        self.engine.time_left(color, seconds, stones)
        return ""

    def cmd_kgs_time_settings(self, args):
        usage = "kgs-time_settings none | absolute MAIN | byoyomi MAIN PERIOD PERIODS | canadian MAIN PERIOD STONES"
        if not args:
            raise GtpError(f"syntax error: usage: {usage}")
        kind = args[0].lower()
        need = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
        if kind not in need or len(args) - 1 != need[kind]:
            raise GtpError(f"syntax error: usage: {usage}")
        values = [_float(a, "time value") for a in args[1:]]
        if any(v < 0 for v in values):
            raise GtpError("syntax error: time settings must not be negative")
        try:
            self.engine.kgs_time_settings(kind, *values)
        except ValueError as e:
            raise GtpError(str(e)) from None
        return ""

    def cmd_kata_time_settings(self, args):
        """KataGo's time settings, Fischer ones included (Engine.kata_time_settings)."""
        if not args:
            raise GtpError("syntax error: usage: kata-time_settings KIND [VALUES] (kinds: "
                           + self.cmd_kata_list_time_settings(()) + ")")
        try:
            self.engine.kata_time_settings(args[0], *args[1:])
        except ValueError as e:
            raise GtpError(f"syntax error: {e}") from None
        return ""

    def cmd_kata_list_time_settings(self, args):
        """The kinds kata-time_settings takes."""
        return " ".join(self.engine.KATA_TIME_KINDS)

    def cmd_cputime(self, args):
        """cputime (GoGui) and gomill-cpu_time (gomill's ringmaster): the process's CPU
        seconds, all threads together."""
        return f"{time.process_time():.3f}"

    def cmd_stop(self, args):
        """KataGo's stop: end pondering, if under way (the game and the tree are kept)."""
        _nargs(args, 0, usage="stop")
        self._ponder_stop()
        return ""

    def cmd_kgs_game_over(self, args):
        """kgsGtp's kgs-game_over (sent when a game ends, by resignation too): pondering
        stops and the search trees give their memory back until the next game."""
        _nargs(args, 0, usage="kgs-game_over")
        self.engine.clear_cache()
        return ""

    def cmd_clear_cache(self, args):
        """KataGo's clear_cache: forget the search trees (the next search starts afresh, with
        fresh randomness); the game is kept."""
        _nargs(args, 0, usage="clear_cache")
        self.engine.clear_cache()
        return ""

    # --- analysis ---
    def _analyze_args(self, args, command, need_color, keys=()):
        """[color] [interval_centiseconds] [interval N] [KEY VALUE for KEY in keys]
        [avoid COLOR VERTICES UNTIL]... | [allow COLOR VERTICES UNTIL]
        -> (color, seconds, {key: value}, avoid): avoid as Engine.analyze takes it."""
        args = list(args)
        avoid, allowed = [], False
        color = self.engine.board.to_move
        if args and args[0].lower() in ("b", "w", "black", "white"):
            color = _color(args.pop(0))
        elif need_color:
            raise GtpError(f"syntax error: usage: {command} COLOR [INTERVAL]")
        cs = DEFAULT_ANALYZE_CS
        if args and args[0].isdigit():
            cs = int(args.pop(0))
        extra = {}
        while args:
            key = args.pop(0).lower()
            if key == "interval" and args and args[0].isdigit():
                cs = int(args.pop(0))
            elif key in keys and args:
                extra[key] = args.pop(0).lower()
            elif key in ("avoid", "allow") and len(args) >= 3:
                if allowed or (key == "allow" and avoid):
                    raise GtpError(f"syntax error: {command}: allow is given once, without avoid")
                allowed = key == "allow"
                avoid += self._avoid_entries(command, key, args.pop(0), args.pop(0), args.pop(0))
            else:
                known = ", ".join(("COLOR", "INTERVAL") + tuple(keys) + ("avoid", "allow"))
                raise GtpError(f"syntax error: {command}: unsupported argument {key!r} "
                               f"({known} only)")
        return color, (cs / 100.0 if cs > 0 else NO_INTERVAL_S), extra, avoid

    def _avoid_entries(self, command, key, who, vertices, until):
        """avoid COLOR VERTEX,VERTEX,... UNTIL (those moves of COLOR kept out of the first UNTIL
        plies of the search) or allow COLOR VERTEX,... UNTIL (every board point but those; a
        pass stays allowed) -> [(colour, point, until)] as Engine.analyze takes them."""
        c = 1 if _color(who) == "b" else 2
        depth = _int(until, f"{key} depth")
        if depth < 1:
            raise GtpError(f"syntax error: {command}: {key} depth must be >= 1, not {depth}")
        board = self.engine.board
        points = set()
        for v in vertices.split(","):
            if v.strip():
                points.add(board.point(self._vertex(v.strip())))
        if key == "avoid":
            return [(c, p, depth) for p in sorted(points)]
        n = board.size
        every = {board.point(format_vertex((r, k))) for r in range(n) for k in range(n)}
        return [(c, p, depth) for p in sorted(every - points)]

    # A streaming answer: its `=` line goes out with its first line of output, so an engine
    # error before any output still answers `? message`; one after output began ends the
    # answer (and is logged), the game unchanged.
    def _stream_start(self, cid):
        self._stream_cid, self._stream_open = cid or "", False

    def _stream_line(self, text):
        with self._write_lock:
            if not self._stream_open:
                self.out.write("=" + self._stream_cid + "\n")
                self._stream_open = True
            self.out.write(text + "\n")
            self.out.flush()

    def _stream_end(self, error=None):
        with self._write_lock:
            if error is not None and not self._stream_open:
                self.out.write(self._reply(False, self._stream_cid, _error_text(error)))
            else:
                if not self._stream_open:
                    self.out.write("=" + self._stream_cid + "\n")
                self.out.write("\n")
            self.out.flush()
            self._stream_open = False

    def _until_input(self, run, cid):
        """Run run(stop) on a thread, streaming its output, until any input line arrives or it
        ends by itself; then end the answer (`? message` if run failed before any output)."""
        self._stream_start(cid)
        stop = threading.Event()
        failed = []

        def work():
            try:
                run(stop)
            except Exception as e:       # keep the protocol alive
                log.exception("gtp: analysis failed")
                failed.append(e)

        worker = threading.Thread(target=work, name="gtp-analyze", daemon=True)
        worker.start()
        while worker.is_alive() and not self._pending:
            try:
                nxt = self._lines.get(timeout=0.05)
            except queue.Empty:
                continue
            # any line stops the analysis, as in Leela Zero: an empty or comment line is
            # consumed here, a command (or the end of input) is answered next
            if nxt is None or _preprocess(nxt):
                self._pending.append(nxt)
            break
        stop.set()
        worker.join()
        self._stream_end(failed[0] if failed else None)

    # The analysis commands: lz-analyze (Leela Zero's line), analyze (Sabaki's: the same line
    # with scoreLead) and kata-analyze (KataGo's), each with its genmove_analyze. All take
    # [COLOR] [INTERVAL] [interval N] [minmoves N] [maxmoves N] [avoid ...] [allow ...];
    # kata-analyze takes KataGo's true|false flags as well.
    KATA_FLAGS = ("ownership", "ownershipstdev", "rootinfo", "pvvisits", "pvedgevisits")

    def _analysis_args(self, args, command, need_color, style):
        """-> (color, seconds, emit, avoid): emit(infos) streams the line of style ("lz",
        "sabaki" or "kata") for the arguments' settings."""
        flags = self.KATA_FLAGS if style == "kata" else ()
        color, interval, extra, avoid = self._analyze_args(
            args, command, need_color=need_color, keys=flags + ("minmoves", "maxmoves"))
        for key in flags:
            if extra.get(key, "false") not in ("true", "false"):
                raise GtpError(f"syntax error: {command}: {key} true|false, not {extra[key]!r}")
        ownership, own_stdev, root_info, pv_visits, pv_edge = (extra.get(k) == "true"
                                                               for k in self.KATA_FLAGS)
        minmoves, maxmoves = (_int(extra.get(k, "0"), k) for k in ("minmoves", "maxmoves"))
        if minmoves < 0 or maxmoves < 0:
            raise GtpError(f"syntax error: {command}: minmoves and maxmoves must be >= 0")
        engine = self.engine
        sign = 1.0 if color == "b" else -1.0

        def emit(infos):
            if not infos:
                return
            root = None
            if root_info:
                visits = sum(d["visits"] for d in infos)
                root = {"visits": engine.search.root_visits,
                        "winrate": sum(d["visits"] * d["winrate"] for d in infos) / visits,
                        "currentPlayer": color.upper()}
            if minmoves:
                infos = engine.with_unvisited(infos, minmoves)
            if maxmoves:
                infos = infos[:maxmoves]
            if style == "lz":
                self._stream_line(info_line(infos))
                return
            owner = engine.ownership()
            score = None if owner is None else sign * (float(owner.sum()) - engine.board.komi)
            if style == "sabaki":
                self._stream_line(info_line(infos, score))
                return
            if pv_visits or pv_edge:
                # a tree, not a graph: the visits of the position after each move and of the
                # move itself are the same number
                infos = [dict(d, pv_visits=engine.pv_visits(d.get("pv") or [d["move"]]))
                         for d in infos]
            own = kata_ownership(owner, color) if ownership and owner is not None else None
            spread = engine.ownership_stdev() if own_stdev else None
            spread = kata_ownership(spread, "b") if spread is not None else None
            self._stream_line(kata_info_line(infos, score, own, root=root, pv_visits=pv_visits,
                                             pv_edge_visits=pv_edge,
                                             score_stdev=engine.score_stdev(),
                                             ownership_stdev=spread))

        return color, interval, emit, avoid

    def _analyze_until_input(self, args, cid, command, style):
        """Search and stream analysis lines every interval until the next input line arrives;
        the response ends with a blank line, then that line's command is answered."""
        color, interval, emit, avoid = self._analysis_args(args, command, False, style)
        self._until_input(lambda stop: self.engine.analyze(color, interval, stop, emit, avoid),
                          cid)

    def _genmove_analyze(self, args, cid, command, style):
        """genmove with analysis lines every interval, then `play MOVE`. Like Leela Zero's and
        KataGo's, the search runs its budget: input that arrives meanwhile waits its turn."""
        color, interval, emit, avoid = self._analysis_args(args, command, True, style)
        self._genmove_streaming(cid, color, interval, emit, command, avoid)

    def cmd_lz_analyze(self, args, cid):
        """lz-analyze [COLOR] [INTERVAL] [...]: Leela Zero's `info move ...` lines."""
        self._analyze_until_input(args, cid, "lz-analyze", "lz")

    def cmd_analyze(self, args, cid):
        """analyze [COLOR] [INTERVAL] [...]: Sabaki's analysis command, lz-analyze's line with
        each move's scoreLead."""
        self._analyze_until_input(args, cid, "analyze", "sabaki")

    def cmd_kata_analyze(self, args, cid):
        """kata-analyze [COLOR] [INTERVAL] [ownership|ownershipStdev|rootInfo|pvVisits|
        pvEdgeVisits true] [...]: KataGo's line (kata_info_line)."""
        self._analyze_until_input(args, cid, "kata-analyze", "kata")

    def cmd_lz_genmove_analyze(self, args, cid):
        self._genmove_analyze(args, cid, "lz-genmove_analyze", "lz")

    def cmd_genmove_analyze(self, args, cid):
        self._genmove_analyze(args, cid, "genmove_analyze", "sabaki")

    def cmd_kata_genmove_analyze(self, args, cid):
        self._genmove_analyze(args, cid, "kata-genmove_analyze", "kata")

    def _genmove_streaming(self, cid, color, interval, emit, command, avoid=()):
        """The move with its analysis lines streamed (emit), then `play MOVE`; pondering after.
        avoid: moves kept out of the search (Engine.genmove_analyze)."""
        self._stream_start(cid)
        try:
            move = self.engine.genmove_analyze(color, interval, emit, avoid)
        except Exception as e:
            log.exception("gtp: %s failed", command)
            self._stream_end(e)
            return
        self._stream_line(f"play {move}")
        self._stream_end()
        self._ponder_start(move)

    def cmd_gogui_interrupt(self, args):
        """Listed so that GoGui knows the engine stops a command on a `# interrupt` line (read
        while the command runs: the move under way then plays the best move found so far)."""
        return ""

    def cmd_gogui_analyze_commands(self, args):
        cmds = ["string/Show board/showboard",
                "string/Final score/final_score",
                "plist/Final status: dead/final_status_list dead",
                "plist/Final status: alive/final_status_list alive",
                "plist/Final status: seki/final_status_list seki",
                "string/Print SGF/printsgf"]
        cmds += [f"gfx/Analyze {s} s/gammago-analyze {s}" for s in GFX_ANALYZE_S]   # side to move
        cmds += [f"gfx/Ownership/gammago-ownership {GFX_MAP_S}",
                 f"gfx/Criticality/gammago-criticality {GFX_MAP_S}"]
        return "\n".join(cmds)

    def _gfx_args(self, args, command):
        _nargs(args, 0, 2, usage=f"{command} [SECONDS] [COLOR]")
        seconds = _float(args[0], "seconds") if args else float(GFX_MAP_S)
        if seconds <= 0:
            raise GtpError("syntax error: seconds must be > 0")
        color = _color(args[1]) if len(args) == 2 else self.engine.board.to_move
        return seconds, color

    def _search_for(self, seconds, color):
        """Analyse for `seconds`; the last report (lz-analyze dicts, best first)."""
        stop = threading.Event()
        last = []
        timer = threading.Timer(seconds, stop.set)
        timer.start()
        try:
            self.engine.analyze(color, NO_INTERVAL_S, stop, lambda infos: last.append(infos))
        finally:
            timer.cancel()
        return last[-1] if last else []

    def _influence(self, grid, least=0.0):
        """GoGui `INFLUENCE point value ...` of a [row][col] grid (row 0 = line 1), the points
        with |value| >= least; '' when there are none."""
        n = self.engine.board.size
        vals = [f"{format_vertex((row, col))} {float(grid[row][col]):.2f}"
                for row in range(n) for col in range(n) if abs(float(grid[row][col])) >= least
                and float(grid[row][col]) != 0.0]
        return "INFLUENCE " + " ".join(vals) if vals else ""

    def cmd_gammago_ownership(self, args):
        """gammago-ownership [SECONDS] [COLOR]: search, then GoGui gfx: the rollouts' mean final
        ownership of every point as influence (+1 Black .. -1 White), the score estimate as
        text."""
        seconds, color = self._gfx_args(args, "gammago-ownership")
        self._search_for(seconds, color)
        owner = self.engine.ownership()
        if owner is None:
            return ""
        lines = [self._influence(owner)]
        score = float(owner.sum()) - self.engine.board.komi
        lead = f"B+{score:.1f}" if score >= 0 else f"W+{-score:.1f}"
        lines.append(f"TEXT ownership after {self.engine.search.playouts} playouts, score "
                     f"estimate {lead}")
        return "\n".join(l for l in lines if l)

    def cmd_gammago_criticality(self, args):
        """gammago-criticality [SECONDS] [COLOR]: a search of the rollouts, then GoGui gfx: the
        criticality of every point (Coulom 2009: how much owning it goes with winning) as
        influence, scaled so that the most critical point shows 1."""
        seconds, color = self._gfx_args(args, "gammago-criticality")
        crit = self.engine.criticality(color, seconds)
        top = float(crit.max()) if crit.size else 0.0
        if top <= 0:
            return "TEXT criticality: none measured (too few playouts)"
        lines = [self._influence(crit / top, least=0.01)]
        row, col = divmod(int(crit.argmax()), crit.shape[1])
        lines.append(f"TEXT criticality, 1 = {top:.3f} (at {format_vertex((row, col))})")
        return "\n".join(l for l in lines if l)

    def cmd_gammago_analyze(self, args):
        """gammago-analyze SECONDS [COLOR]: search, then GoGui gfx: win rates as labels, the
        best line as a variation, ownership as influence."""
        _nargs(args, 1, 2, usage="gammago-analyze SECONDS [COLOR]")
        seconds = _float(args[0], "seconds")
        if seconds <= 0:
            raise GtpError("syntax error: seconds must be > 0")
        color = _color(args[1]) if len(args) == 2 else self.engine.board.to_move
        infos = self._search_for(seconds, color)
        lines = []
        if infos:
            labels = " ".join(f"{d['move']} {round(100 * d['winrate'])}"
                              for d in infos[:GFX_LABELS] if d["move"] != "pass")
            if labels:
                lines.append("LABEL " + labels)
            pv, c, var = infos[0].get("pv") or [infos[0]["move"]], color, []
            for m in pv:
                var.append(f"{c} {m}")
                c = "w" if c == "b" else "b"
            lines.append("VAR " + " ".join(var))
            best = infos[0]
            lines.append(f"TEXT {color.upper()} best {best['move']} winrate "
                         f"{100 * best['winrate']:.1f}% visits {best['visits']}")
        owner = getattr(self.engine, "last_owner", None)
        if owner is not None:
            influence = self._influence(owner, least=GFX_MIN_INFLUENCE)
            if influence:
                lines.append(influence)
        return "\n".join(lines)


# --- the command -----------------------------------------------------------------------------
def add_arguments(parser):
    from gammago.config import EngineConfig
    EngineConfig.add_arguments(parser)
    parser.add_argument("--quiet", action="store_true",
                        help="log only warnings and errors to stderr (default: one line a move)")
    parser.add_argument("--gtp-version", default="", metavar="TEXT",
                        help="answer the GTP `version` command with TEXT (Lizzie 0.7 reads it as a "
                             "Leela Zero version and warns below 0.15: give 0.17)")
    parser.epilog = ("Speaks GTP v2 on stdin/stdout; logs go to stderr. "
                     "GUI command lines: docs/GUI.md.")


def main(args):
    from gammago.config import EngineConfig
    from gammago.engine import Engine
    level = logging.WARNING if args.quiet else (logging.DEBUG if getattr(args, "verbose", False)
                                                else logging.INFO)
    logging.basicConfig(stream=sys.stderr, level=level, format="%(name)s: %(message)s")
    try:
        config = EngineConfig.from_args(args)
        engine = Engine(config)
    except ValueError as e:
        print(f"gammago gtp: {e}", file=sys.stderr)
        return 2
    # stdout is the protocol's: keep the real one, send every stray print to stderr
    out = sys.stdout
    sys.stdout = sys.stderr
    log.info("gammago %s ready (GTP v2)", engine.version)
    try:
        gtp = Gtp(engine, out)
        if args.gtp_version:
            gtp.version_text = args.gtp_version
        return gtp.serve()
    except BrokenPipeError:
        return 0
    finally:
        sys.stdout = out
