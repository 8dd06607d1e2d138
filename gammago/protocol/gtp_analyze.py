"""GTP's streaming analysis: lz-analyze (Leela Zero's `info move ...` lines, as Sabaki and
Lizzie read them), analyze (Sabaki's: the same line with scoreLead), kata-analyze (KataGo's,
with ownership), each with its genmove_analyze, and cgos-genmove_analyze (CGOS's JSON analysis
with the move); the lines' formats.

lz-analyze and kata-analyze stream until any input line arrives, an empty one included (Leela
Zero stops its analysis as soon as input is pending; KataGo on any command or raw newline): an
empty or comment line is then consumed, a command is answered next. A streaming answer writes
its `=` only with its first line, so an engine error before that answers `? message`.

AnalysisCommands holds the commands; gammago.protocol.gtp.Gtp, which lists them in its command table,
is built on it and gives it the engine, the output (`out` under `_write_lock`), the input lines
(`_lines`, `_pending`), `_reply`, `_vertex` and `_ponder_start`.
"""
import json
import logging
import queue
import threading

from gammago.go.board import format_vertex
from gammago.protocol.gtp_syntax import GtpError, _color, _error_text, _int, _nargs, _preprocess

log = logging.getLogger("gammago")

DEFAULT_ANALYZE_CS = 100          # lz-analyze / kata-analyze interval (centiseconds) when none is given
NO_INTERVAL_S = 1e9               # interval 0: no periodic output, only the final one
STREAMING = ("lz-analyze", "lz-genmove_analyze", "kata-analyze", "kata-genmove_analyze",
             "analyze", "genmove_analyze", "cgos-genmove_analyze")   # they write their own answer
CGOS_MOVES = 10                   # cgos-genmove_analyze: candidate moves reported
OWNERSHIP_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


# --- the lines ---------------------------------------------------------------------------------
def _move_score(d, score, stdev=None):
    """A candidate's (score, spread): its own (the engine's score_mean and score_stdev, points for
    the side the analysis is for) where the search has one, else the root's (score, stdev)."""
    if d.get("score_mean") is not None:
        return float(d["score_mean"]), d.get("score_stdev", stdev)
    return score, stdev


def info_line(infos, score=None, key="scoreLead"):
    """Leela Zero's analysis line: all candidates on one line, each `info move ...`,
    winrate / prior / lcb as integers in 1/10000; with each candidate's score (its own, or the
    root's `score`: points for the side the analysis is for) as `key`: Sabaki's `analyze` reads
    scoreLead, Lizzie's lz-analyze scoreMean; none when no candidate and no root has one."""
    def per10k(x):
        return max(0, min(10000, int(round(float(x) * 10000))))
    parts = []
    for d in infos:
        pv = " ".join(d.get("pv") or [d["move"]])
        mine, _ = _move_score(d, score)
        lead = "" if mine is None else f"{key} {mine:.2f} "
        parts.append(f"info move {d['move']} visits {int(d['visits'])} winrate {per10k(d['winrate'])} "
                     f"{lead}prior {per10k(d.get('prior', 0.0))} "
                     f"lcb {per10k(d.get('lcb', d['winrate']))} order {int(d['order'])} pv {pv}")
    return " ".join(parts)


def kata_info_line(infos, score=None, ownership=None, root=None, pv_visits=False,
                   pv_edge_visits=False, score_stdev=None, ownership_stdev=None):
    """KataGo's kata-analyze line: `info move ... winrate 0.4799 scoreMean -0.1 scoreStdev 30.2
    scoreLead -0.1 prior 0.0779 lcb 0.4416 order 0 pv ...` for each candidate (floats in 0..1;
    scoreMean and scoreLead, the same number as in KataGo, in points for the side the analysis
    is for: the candidate's own where it has one, else the root's score, omitted when neither
    is known; scoreStdev likewise, the spread of the playouts' scores), with `pvVisits`
    and / or `pvEdgeVisits` (each candidate's "pv_visits") when asked; then `rootInfo visits N
    winrate W [scoreMean S scoreStdev D scoreLead S] currentPlayer B|W` when root (a dict of
    those) is given; then `ownership` and one number per point when given (row by row from the
    top, as kata_ownership orders them), and `ownershipStdev` and its numbers likewise."""
    def score_part(score, stdev):
        if score is None:
            return ""
        spread = "" if stdev is None else f"scoreStdev {stdev:.2f} "
        return f"scoreMean {score:.2f} {spread}scoreLead {score:.2f} "
    parts = []
    for d in infos:
        pv = " ".join(d.get("pv") or [d["move"]])
        text = (f"info move {d['move']} visits {int(d['visits'])} "
                f"winrate {_unit(d['winrate'])} {score_part(*_move_score(d, score, score_stdev))}"
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
                     f"{score_part(score, score_stdev)}currentPlayer {root['currentPlayer']}")
    if ownership is not None:
        parts.append("ownership " + " ".join(f"{float(v):.4f}" for v in ownership))
    if ownership_stdev is not None:
        parts.append("ownershipStdev " + " ".join(f"{float(v):.4f}" for v in ownership_stdev))
    return " ".join(parts)


def _root_score(engine, color):
    """(score, spread) of the search, points for color over the komi: the mean of every
    playout's final count (Engine.root_score, the candidates' visit-weighted mean), else the
    ownership's sum; (None, None) before any playout."""
    c = 1 if color == "b" else 2
    got = engine.root_score(c)
    if got is not None:
        return got
    owner = engine.ownership()
    if owner is None:
        return None, None
    sign = 1.0 if color == "b" else -1.0
    return sign * (float(owner.sum()) - engine.board.komi), engine.score_stdev()


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
        mine, _ = _move_score(d, score)
        if mine is not None:
            m["score"] = round(float(mine), 2)
        m["prior"] = round(float(d.get("prior", 0.0)), 4)
        pv = list(d.get("pv") or [d["move"]])[1:]
        if pv:
            m["pv"] = " ".join(pv)
        moves.append(m)
    out["moves"] = moves
    if ownership is not None:
        out["ownership"] = encode_ownership(kata_ownership(ownership, color))
    return out


# --- the commands ------------------------------------------------------------------------------
class AnalysisCommands:
    """The streaming analysis commands of the GTP front end (gammago.protocol.gtp.Gtp is built on it)."""

    _stream_cid = None                  # the streaming answer under way: its id,
    _stream_open = False                # ... and whether its `=` line is out

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
            score, stdev = _root_score(engine, color)
            if style == "lz":
                self._stream_line(info_line(infos, score, key="scoreMean"))
                return
            owner = engine.ownership()
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
                                             score_stdev=stdev,
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
            score = _root_score(engine, color)[0] if owner is not None else None
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
