"""The `gammago gtp` command: the Go Text Protocol (GTP v2) front end of the engine.

One command per line on stdin, one response per command on stdout:
    [id] command_name [arguments]          ->   =[id] result          or   ?[id] error message
                                                (blank line)                (blank line)
The full GTP v2 set, plus printsgf, list_stones, cputime, kgs-time_settings,
kgs-genmove_cleanup, lz-analyze / lz-genmove_analyze (Leela Zero's analysis output, as Sabaki
and Lizzie read it), gogui-analyze_commands and gammago-analyze (GoGui graphics).

Every command that fails answers `?` and leaves the game as it was. The engine (gammago/engine.py,
interface in ENGINE_API.md) owns the game; this module only parses, checks and formats.
stdout belongs to the protocol: anything else (logs, warnings, stray prints) goes to stderr.
"""
import logging
import os
import queue
import sys
import threading
import time

from gammago.board import Board, parse_color, parse_vertex, format_vertex

log = logging.getLogger("gammago")

PROTOCOL_VERSION = 2
DEFAULT_ANALYZE_CS = 100          # lz-analyze interval (centiseconds) when none is given
NO_INTERVAL_S = 1e9               # interval 0: no periodic output, only the final one
GFX_ANALYZE_S = (1, 5)            # gammago-analyze durations offered to GoGui
GFX_LABELS = 8                    # how many candidate moves gammago-analyze labels
STATUSES = ("alive", "dead", "seki")


class GtpError(Exception):
    """A failed command: the message becomes the `? message` reply."""


# --- handicap placement (GTP v2 spec, section 4.1.1) -----------------------------------------
def fixed_handicap_vertices(size, n):
    """The GTP spec's fixed handicap points: boards 7x7 and up, at most 4 stones on 7x7 and even
    sizes, 9 on odd sizes from 9x9; the 3rd line below 13x13, the 4th from 13x13."""
    if size < 7:
        raise GtpError(f"invalid handicap: no fixed handicap on {size}x{size} (7x7 and up)")
    most = 9 if size % 2 and size >= 9 else 4
    if n < 2 or n > most:
        raise GtpError(f"invalid number of stones: {n} (2 to {most} on {size}x{size})")
    e = 3 if size >= 13 else 2
    lo, mid, hi = e, size // 2, size - 1 - e
    corners = [(lo, lo), (hi, hi), (hi, lo), (lo, hi)]      # D4 Q16 D16 Q4 (row, col)
    sides = [(mid, lo), (mid, hi)]                           # D10 Q10
    tops = [(lo, mid), (hi, mid)]                            # K4 K16
    centre = [(mid, mid)]
    layout = {2: corners[:2], 3: corners[:3], 4: corners, 5: corners + centre,
              6: corners + sides, 7: corners + sides + centre, 8: corners + sides + tops,
              9: corners + sides + tops + centre}[n]
    return [format_vertex(rc) for rc in layout]


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


def info_line(infos):
    """Leela Zero's analysis line: all candidates on one line, each `info move ...`,
    winrate / prior / lcb as integers in 1/10000."""
    def per10k(x):
        return max(0, min(10000, int(round(float(x) * 10000))))
    parts = []
    for d in infos:
        pv = " ".join(d.get("pv") or [d["move"]])
        parts.append(f"info move {d['move']} visits {int(d['visits'])} winrate {per10k(d['winrate'])} "
                     f"prior {per10k(d.get('prior', 0.0))} lcb {per10k(d.get('lcb', d['winrate']))} "
                     f"order {int(d['order'])} pv {pv}")
    return " ".join(parts)


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
            "time_settings": self.cmd_time_settings,
            "time_left": self.cmd_time_left,
            "kgs-time_settings": self.cmd_kgs_time_settings,
            "kgs-genmove_cleanup": self.cmd_kgs_genmove_cleanup,
            "cputime": self.cmd_cputime,
            "lz-analyze": self.cmd_lz_analyze,
            "lz-genmove_analyze": self.cmd_lz_genmove_analyze,
            "gogui-analyze_commands": self.cmd_gogui_analyze_commands,
            "gammago-analyze": self.cmd_gammago_analyze,
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
                    self._lines.put(raw)
            except (OSError, ValueError) as e:      # closed or broken input
                log.warning("gtp: input ends: %s", e)
            finally:
                self._lines.put(None)

        threading.Thread(target=reader, name="gtp-reader", daemon=True).start()
        while not self.quit:
            raw = self._next_line()
            if raw is None:
                break
            reply = self.execute(raw)
            if reply is not None:
                self._write(reply)
        return 0

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
        try:
            if name in ("lz-analyze", "lz-genmove_analyze"):
                handler(args, cid)
                return ""
            result = handler(args)
        except GtpError as e:
            return self._reply(False, cid, str(e))
        except Exception as e:      # an engine bug: say so, keep serving
            log.exception("gtp: %s failed", line)
            return self._reply(False, cid, f"internal error: {type(e).__name__}: {e}")
        return self._reply(True, cid, "" if result is None else result)

    # --- administrative ---
    def cmd_protocol_version(self, args):
        return str(PROTOCOL_VERSION)

    def cmd_name(self, args):
        return self.engine.name

    def cmd_version(self, args):
        return self.version_text or self.engine.version

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
        vertices = fixed_handicap_vertices(self.engine.board.size, n)
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
            game = parse_game(path, data)
            replayed = game.replay(upto)          # checks every move before touching the engine
        except SgfError as e:
            raise GtpError(f"cannot load file {e}") from None
        moves = game.moves[:upto] if upto is not None else game.moves
        eng = self.engine
        eng.new_game(game.size, game.komi)
        if game.setup_black or game.setup_white:
            eng.setup_stones(game.setup_black, game.setup_white)
        eng.board.to_move = game.to_move
        for colour, vertex in moves:
            eng.play(colour, vertex)
        eng.board.to_move = replayed.to_move
        self.setup_black, self.setup_white = list(game.setup_black), list(game.setup_white)
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
        return self.engine.genmove(_color(args[0]))

    def cmd_kgs_genmove_cleanup(self, args):
        _nargs(args, 1, usage="kgs-genmove_cleanup COLOR")
        return self.engine.genmove(_color(args[0]), cleanup=True)

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

    def cmd_cputime(self, args):
        return f"{time.process_time():.3f}"

    # --- analysis ---
    def _analyze_args(self, args, command, need_color):
        """[color] [interval_centiseconds] [interval N] -> (color, seconds)."""
        args = list(args)
        color = self.engine.board.to_move
        if args and args[0].lower() in ("b", "w", "black", "white"):
            color = _color(args.pop(0))
        elif need_color:
            raise GtpError(f"syntax error: usage: {command} COLOR [INTERVAL]")
        cs = DEFAULT_ANALYZE_CS
        if args and args[0].isdigit():
            cs = int(args.pop(0))
        while args:
            key = args.pop(0).lower()
            if key == "interval" and args and args[0].isdigit():
                cs = int(args.pop(0))
            else:
                raise GtpError(f"syntax error: {command}: unsupported argument {key!r} "
                               "(COLOR and INTERVAL only)")
        return color, (cs / 100.0 if cs > 0 else NO_INTERVAL_S)

    def _emit(self, infos):
        line = info_line(infos)
        if line:
            self._write(line + "\n")

    def cmd_lz_analyze(self, args, cid):
        """Search and print `info` lines every interval until the next command arrives; the
        response ends with a blank line, then that command is answered."""
        color, interval = self._analyze_args(args, "lz-analyze", need_color=False)
        self._write("=" + (cid or "") + "\n")
        stop = threading.Event()
        failed = []

        def work():
            try:
                self.engine.analyze(color, interval, stop, self._emit)
            except Exception as e:       # keep the protocol alive
                log.exception("gtp: lz-analyze failed")
                failed.append(e)

        worker = threading.Thread(target=work, name="gtp-analyze", daemon=True)
        worker.start()
        while worker.is_alive():
            try:
                nxt = self._lines.get(timeout=0.05)
            except queue.Empty:
                continue
            if nxt is not None and not _preprocess(nxt):
                continue                  # empty lines and comments do not stop the analysis
            self._pending.append(nxt)
            break
        stop.set()
        worker.join()
        self._write("\n")

    def cmd_lz_genmove_analyze(self, args, cid):
        color, interval = self._analyze_args(args, "lz-genmove_analyze", need_color=True)
        self._write("=" + (cid or "") + "\n")
        try:
            move = self.engine.genmove_analyze(color, interval, self._emit)
        except Exception:
            log.exception("gtp: lz-genmove_analyze failed")
            self._write("\n")
            return
        self._write(f"play {move}\n\n")

    def cmd_gogui_analyze_commands(self, args):
        cmds = ["string/Show board/showboard",
                "string/Final score/final_score",
                "plist/Final status: dead/final_status_list dead",
                "plist/Final status: alive/final_status_list alive",
                "plist/Final status: seki/final_status_list seki",
                "string/Print SGF/printsgf"]
        cmds += [f"gfx/Analyze {s} s/gammago-analyze {s}" for s in GFX_ANALYZE_S]   # side to move
        return "\n".join(cmds)

    def cmd_gammago_analyze(self, args):
        """gammago-analyze SECONDS [COLOR]: search, then GoGui gfx: win rates as labels, the
        best line as a variation, ownership as influence."""
        _nargs(args, 1, 2, usage="gammago-analyze SECONDS [COLOR]")
        seconds = _float(args[0], "seconds")
        if seconds <= 0:
            raise GtpError("syntax error: seconds must be > 0")
        color = _color(args[1]) if len(args) == 2 else self.engine.board.to_move
        stop = threading.Event()
        last = []
        timer = threading.Timer(seconds, stop.set)
        timer.start()
        try:
            self.engine.analyze(color, NO_INTERVAL_S, stop, lambda infos: last.append(infos))
        finally:
            timer.cancel()
        infos = last[-1] if last else []
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
            b = self.engine.board
            vals = []
            for row in range(b.size):
                for col in range(b.size):
                    o = float(owner[row][col])
                    if abs(o) >= 0.2:
                        vals.append(f"{format_vertex((row, col))} {o:.2f}")
            if vals:
                lines.append("INFLUENCE " + " ".join(vals))
        return "\n".join(lines)


# --- the command -----------------------------------------------------------------------------
def add_arguments(parser):
    from gammago.engine import EngineConfig
    EngineConfig.add_arguments(parser)
    parser.add_argument("--quiet", action="store_true",
                        help="log only warnings and errors to stderr (default: one line a move)")
    parser.add_argument("--gtp-version", default="", metavar="TEXT",
                        help="answer the GTP `version` command with TEXT (Lizzie 0.7 reads it as a "
                             "Leela Zero version and warns below 0.15: give 0.17)")
    parser.epilog = ("Speaks GTP v2 on stdin/stdout; logs go to stderr. "
                     "GUI command lines: docs/GUI.md.")


def main(args):
    from gammago.engine import Engine, EngineConfig
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
