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

The analysis commands, which stream their answer while the search runs (lz-analyze, analyze,
kata-analyze, their genmove_analyze, cgos-genmove_analyze), are gammago.protocol.gtp_analyze's;
the game's setup (board size, komi, handicap, loadsgf / printsgf, the rules) is
gammago.protocol.gtp_setup's; GoGui's analyze and graphics commands are
gammago.protocol.gtp_gogui's. Gtp is built on the three and lists all their commands.

gogui-interrupt: a `# interrupt` line read while a command runs (GoGui's Interrupt) stops the
move under way, which plays the best move found so far.

Every command that fails answers `?` and leaves the game as it was. The engine
(gammago.engine.engine.Engine: its public methods are what this module calls) owns the game; this module
only parses, checks and formats.
stdout belongs to the protocol: anything else (logs, warnings, stray prints) goes to stderr.
"""
import logging
import os
import queue
import select
import sys
import threading
import time

import gammago
from gammago.go.board import parse_vertex
from gammago.protocol.gtp_analyze import STREAMING, AnalysisCommands
from gammago.protocol.gtp_gogui import GoGuiCommands
from gammago.protocol.gtp_setup import SetupCommands
from gammago.protocol.gtp_syntax import GtpError, _color, _error_text, _float, _int, _nargs, _preprocess
from gammago.go.scoring import score_text

log = logging.getLogger("gammago")

PROTOCOL_VERSION = 2
STATUSES = ("alive", "dead", "seki")
INTERRUPT_LINE = "# interrupt"    # GoGui's: stop the command under way (gogui-interrupt)
CONTROLLER_POLL_S = 0.05          # after the input ends: how often to look for a vanished reader


# --- the front end ---------------------------------------------------------------------------
class Gtp(AnalysisCommands, SetupCommands, GoGuiCommands):
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


# --- the command -----------------------------------------------------------------------------
def add_arguments(parser):
    from gammago.engine.settings import EngineConfig
    EngineConfig.add_arguments(parser)
    parser.add_argument("--quiet", action="store_true",
                        help="log only warnings and errors to stderr (default: one line a move)")
    parser.add_argument("--gtp-version", default="", metavar="TEXT",
                        help="answer the GTP `version` command with TEXT (Lizzie 0.7 reads it as a "
                             "Leela Zero version and warns below 0.15: give 0.17)")
    parser.epilog = ("Speaks GTP v2 on stdin/stdout; logs go to stderr. "
                     "GUI command lines: docs/GUI.md.")


def main(args):
    from gammago.engine.settings import EngineConfig
    from gammago.engine.engine import Engine
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

