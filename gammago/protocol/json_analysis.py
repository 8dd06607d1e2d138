"""The `gammago analysis` command: KataGo's JSON analysis engine on stdin/stdout.

One JSON query a line in, one JSON answer a line out (KataGo's docs/Analysis_Engine.md), as
KaTrain's KataGoEngine speaks it:

    {"id":"q1","moves":[["B","E5"],["W","C4"]],"rules":"chinese","komi":7,"boardXSize":9,
     "boardYSize":9,"analyzeTurns":[2],"maxVisits":500,"includeOwnership":true}
 -> {"id":"q1","turnNumber":2,"isDuringSearch":false,"moveInfos":[{"move":"D5","visits":..,
     "winrate":..,"scoreLead":..,"prior":..,"lcb":..,"order":0,"pv":[..]},..],
     "rootInfo":{..},"ownership":[..]}

Each turn of analyzeTurns is a job; jobs wait in one queue, highest priority first (ties: the
earlier first), and --workers engines take them, each an Engine of its own with its share of
--threads; answers go out as jobs finish, in any order. A job searches with Engine.analyze until
a watcher stops it: maxVisits (or maxPlayouts) playouts of its own search, maxTime seconds, or
a terminate; a job on the game of its worker's last one searches on from that tree. The
actions terminate, terminate_all, query_version and clear_cache are answered at once. A bad
line or query answers {"id":..,"error":..,"field":..} and the engine goes on; a field it
ignores gets a warning.

A field this engine does not compute is left out (utility, scoreSelfplay, per-move ownership,
hashes), except the per-move scores: the tree keeps no score per move, so each move's scoreLead,
scoreMean and scoreStdev are the root's, as kata-analyze gives them (KaTrain needs the keys).
The rules (gammago/go/rules.py) are the query's: its worker's Engine plays them (territory scoring
counts territory and prisoners; the search keeps its area-scored rollouts with Pachi's parity
komi); rules the engine does not play (a button, a tax on all eyes) get a warning.

stdout belongs to the protocol: logs and stray prints go to stderr.
"""
import dataclasses
import heapq
import itertools
import json
import logging
import math
import sys
import threading
import time

import gammago
from gammago.go.board import Board, format_vertex, parse_color, parse_vertex
from gammago.go import rules as _rules
from gammago.protocol.gtp_analyze import kata_ownership
from gammago.go.rules import RULE_SETS, RulesError  # noqa: F401  (KataGo's sets, by name)

log = logging.getLogger("gammago")

# --- constants ----------------------------------------------------------------------------
PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")   # reportAnalysisWinratesAs
PV_LEN = 15                 # moves of a pv after the first (KataGo's analysisPVLen default; the
                            # engine's lines are at most this long)
NO_REPORTS_S = 1e9          # the analysis interval when no reportDuringSearchEvery is asked
WATCH_MIN_S = 0.0005        # how often the watcher looks at a search near its visit limit ...
WATCH_MAX_S = 0.01          # ... and far from it
KOMI_LIMIT = 150            # |komi| KataGo takes
PRIORITY_LIMIT = 1 << 62    # |priority| (Python ints have no bound; a JSON reader's may)

# Query fields: what each is (the checks are in parse_query); every other field gets KataGo's
# "Unexpected or unused field" warning.
NOT_COMPUTED = {            # KataGo fields this engine takes but does nothing for
    "includeMovesOwnership": "no ownership per move: the tree keeps it at the root only",
    "includeMovesOwnershipStdev": "no ownership per move: the tree keeps it at the root only",
    "includeNoResultValue": "no no-result value: area scoring has no no-result",
    "rootPolicyTemperature": "not a setting of this engine's search",
    "rootFpuReductionMax": "not a setting of this engine's search",
    "humanProfile": "no human-like model",
}
SETTINGS = ("reportAnalysisWinratesAs", "maxVisits", "maxPlayouts", "maxTime", "analysisPVLen")


class QueryError(ValueError):
    """A query refused: KataGo's {"id", "error", "field"} answer."""

    def __init__(self, field, message):
        super().__init__(message)
        self.field = field


# --- rules ----------------------------------------------------------------------------------
def parse_rules(value):
    """KataGo's rules (a name or shorthand, any case, or a JSON object of ko / scoring / tax /
    suicide / hasButton / whiteHandicapBonus / friendlyPassOk) -> (rules.Rules, warnings): the
    warnings name what the engine does not play (rules.Rules.unsupported). Raises QueryError
    for unknown rules."""
    if not isinstance(value, (str, dict)):
        raise QueryError("rules", "rules must be a string or a JSON object")
    try:
        rules = _rules.parse(value)
    except RulesError as e:
        known = ", ".join(RULE_SETS)
        raise QueryError("rules", f"{e} (known: {known} and their shorthands)") from None
    unlike = rules.unsupported()
    if not unlike:
        return rules, []
    return rules, [f"rules {rules.name}: this engine plays without {' or '.join(unlike)}"]


def default_komi(rules):
    """KataGo's komi when a query names none: 6.5 under territory scoring, 7.0 with a button,
    7.5 otherwise."""
    if rules.territory:
        return 6.5
    return 7.0 if rules.hasButton else 7.5


def handicap_bonus(rules, black, white):
    """Points White gets for handicap stones (KataGo's whiteHandicapBonus): N, N-1 or 0 for N
    black setup stones (at least 2) on a board with no white setup stone."""
    return rules.handicap_bonus(len(black) if not white else 0)


# --- parsing a query -----------------------------------------------------------------------
@dataclasses.dataclass
class Job:
    """One turn of one query: the position, what to report, the limits, its state."""
    id: str
    turn: int
    priority: int
    size: int
    komi: float                    # komi plus the handicap bonus: what the search counts
    black: tuple                   # setup stones (vertices)
    white: tuple
    initial: str                   # the side to move before the first move, "b" / "w"
    moves: tuple                   # ((colour "b"/"w", vertex), ...) before this turn
    to_move: str                   # the side to move at this turn
    perspective: str               # reportAnalysisWinratesAs
    rules: _rules.Rules = _rules.Rules()   # what the worker's engine plays (bonus in the komi)
    max_visits: int = 0            # playouts of its own search (0: no limit of its own) ...
    max_playouts: int = 0          # ... the same (overrideSettings' maxPlayouts)
    max_time: float = 0.0
    report_every: float = 0.0      # reportDuringSearchEvery (0: final answer only)
    pv_len: int = PV_LEN
    ownership: bool = False
    ownership_stdev: bool = False
    policy: bool = False
    pv_visits: bool = False
    avoid: tuple = ()              # ((colour "b"/"w", vertices, until), ...)
    allow: tuple = ()              # the same, every other board point kept out
    seq: int = 0                   # arrival order (ties of priority)
    state: str = "queued"          # queued | running | done | cancelled
    stop: threading.Event = dataclasses.field(default_factory=threading.Event)

    def position_key(self):
        return (self.size, self.komi, self.black, self.white, self.initial, self.rules)


def _vertex(text, size, field):
    """A location (GTP text, any case, or KataGo's "(x,y)" with y from the top) -> GTP text."""
    if isinstance(text, str) and text.strip().startswith("("):
        try:
            x, y = (int(s) for s in text.strip()[1:-1].split(","))
        except ValueError:
            raise QueryError(field, f"invalid location {text!r}") from None
        if not (0 <= x < size and 0 <= y < size) or not text.strip().endswith(")"):
            raise QueryError(field, f"location {text!r} is off the {size}x{size} board")
        return format_vertex((size - 1 - y, x))
    try:
        return format_vertex(parse_vertex(text, size))
    except ValueError as e:
        raise QueryError(field, str(e)) from None


def _player(text, field):
    try:
        return "b" if parse_color(text) == 1 else "w"
    except ValueError:
        raise QueryError(field, f"invalid player {text!r} (B or W)") from None


def _stones(value, size, field):
    """[[player, location], ...] -> [(colour, vertex)]."""
    if not isinstance(value, list):
        raise QueryError(field, f"{field} must be a list of [player, location] pairs")
    out = []
    for item in value:
        if not (isinstance(item, list) and len(item) == 2):
            raise QueryError(field, f"{field}: {item!r} is not a [player, location] pair")
        out.append((_player(item[0], field), _vertex(item[1], size, field)))
    return out


def _int(value, field, lo, hi=None):
    v = value
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or v < lo or (hi is not None and v > hi):
        bound = f"from {lo}" if hi is None else f"in [{lo}, {hi}]"
        raise QueryError(field, f"{field} must be an integer {bound}, not {value!r}")
    return v


def _number(value, field, positive=True):
    v = value
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
            or (positive and v <= 0):
        raise QueryError(field, f"{field} must be a {'positive ' if positive else ''}number, "
                                f"not {v!r}")
    return float(v)


def _bool(value, field):
    if not isinstance(value, bool):
        raise QueryError(field, f"{field} must be true or false, not {value!r}")
    return value


def _move_limits(field, lists, size):
    """avoidMoves / allowMoves: [{"player", "moves", "untilDepth"}] -> ((colour, vertices,
    until), ...)."""
    if not isinstance(lists, list):
        raise QueryError(field, f"{field} must be a list of objects")
    out = []
    for d in lists:
        if not isinstance(d, dict) or set(d) != {"player", "moves", "untilDepth"}:
            raise QueryError(field, f"{field}: each entry needs exactly player, moves and "
                                    f"untilDepth, not {d!r}")
        until = _int(d["untilDepth"], field, 1)
        if not isinstance(d["moves"], list):
            raise QueryError(field, f"{field}: moves must be a list of locations")
        out.append((_player(d["player"], field),
                    tuple(_vertex(v, size, field) for v in d["moves"]), until))
    return tuple(out)


def _replay(size, komi, black, white, initial, moves):
    """Check the position on a board: setup stones that fit, legal moves (positional superko,
    no suicide). Raises QueryError."""
    board = Board(size, komi)
    try:
        board.setup(black, white)
    except ValueError as e:
        raise QueryError("initialStones", f"initialStones: {e}") from None
    board.to_move = initial
    for i, (c, v) in enumerate(moves):
        try:
            board.play(v, c)
        except ValueError as e:
            reason = getattr(e, "reason", str(e))
            raise QueryError("moves", f"Illegal move {i}: {c.upper()} {v} ({reason})") from None


def _position(q, warnings):
    """The game of a query: {size, komi (with the handicap bonus), black, white, initial},
    and its moves [(colour, vertex)], checked on a board."""
    for field in ("moves", "rules", "boardXSize", "boardYSize"):
        if field not in q:
            raise QueryError(field, f"{field} is required")
    size = _int(q["boardXSize"], "boardXSize", 1)
    if _int(q["boardYSize"], "boardYSize", 1) != size:
        raise QueryError("boardYSize", f"non-square boards are not supported ({size}x"
                                       f"{q['boardYSize']}): boardXSize must equal boardYSize")
    try:
        Board(size)
    except ValueError as e:
        raise QueryError("boardXSize", str(e)) from None
    rules, told = parse_rules(q["rules"])
    warnings += [("rules", w) for w in told]
    stones = _stones(q.get("initialStones", []), size, "initialStones")
    black = tuple(v for c, v in stones if c == "b")
    white = tuple(v for c, v in stones if c == "w")
    moves = _stones(q["moves"], size, "moves")
    if "initialPlayer" in q:
        initial = _player(q["initialPlayer"], "initialPlayer")
    else:
        initial = moves[0][0] if moves else "b"
    komi = default_komi(rules)
    if "komi" in q:
        komi = _number(q["komi"], "komi", positive=False)
        if abs(komi) > KOMI_LIMIT or (2 * komi) != int(2 * komi):
            raise QueryError("komi", f"komi must be an integer or half-integer in "
                                     f"[-{KOMI_LIMIT}, {KOMI_LIMIT}], not {q['komi']!r}")
    if "whiteHandicapBonus" in q:
        if q["whiteHandicapBonus"] not in _rules.RULE_VALUES["whiteHandicapBonus"]:
            raise QueryError("whiteHandicapBonus", "whiteHandicapBonus must be 0, N or N-1")
        rules = dataclasses.replace(rules, whiteHandicapBonus=q["whiteHandicapBonus"])
    komi += handicap_bonus(rules, black, white)
    _replay(size, komi, black, white, initial, moves)
    # the handicap bonus is in the komi: the engine plays the rules without it
    rules = dataclasses.replace(_rules.played(rules), whiteHandicapBonus="0")
    return dict(size=size, komi=komi, black=black, white=white, initial=initial,
                rules=rules), moves


def _turns(q, n):
    """[(turn, priority)] of analyzeTurns (default: the last) and priority / priorities."""
    turns = [n]
    if "analyzeTurns" in q:
        turns = q["analyzeTurns"]
        if not isinstance(turns, list) or not turns:
            raise QueryError("analyzeTurns", "analyzeTurns must be a non-empty list of turns")
        turns = [_int(t, "analyzeTurns", 0, n) for t in turns]
    priorities = [0] * len(turns)
    if "priority" in q:
        priorities = [_int(q["priority"], "priority", -PRIORITY_LIMIT, PRIORITY_LIMIT)] * len(turns)
    if "priorities" in q:
        p = q["priorities"]
        if not isinstance(p, list) or len(p) != len(turns):
            raise QueryError("priorities", "priorities must be a list as long as analyzeTurns")
        priorities = [_int(x, "priorities", -PRIORITY_LIMIT, PRIORITY_LIMIT) for x in p]
    return list(zip(turns, priorities))


def _settings(q, defaults, warnings):
    """The search's limits and the answers' perspective and pv length: the query's maxVisits
    and analysisPVLen, its overrideSettings, else the command line's; a job with no limit
    searches --move-time seconds."""
    settings = {"perspective": defaults["perspective"], "max_visits": defaults["max_visits"],
                "max_playouts": 0, "max_time": 0.0, "pv_len": PV_LEN}
    if "maxVisits" in q:
        settings["max_visits"] = _int(q["maxVisits"], "maxVisits", 1)
    over = q.get("overrideSettings", {})
    if not isinstance(over, dict):
        raise QueryError("overrideSettings", "overrideSettings must be a JSON object")
    ignored = sorted(k for k in over if k not in SETTINGS)
    if ignored:
        warnings.append(("overrideSettings", "settings this engine does not have, ignored: "
                                             + ", ".join(ignored)))
    try:
        if "reportAnalysisWinratesAs" in over:
            v = over["reportAnalysisWinratesAs"]
            if not isinstance(v, str) or v.upper() not in PERSPECTIVES:
                raise QueryError("overrideSettings", "reportAnalysisWinratesAs must be one of "
                                                     f"{', '.join(PERSPECTIVES)}, not {v!r}")
            settings["perspective"] = v.upper()
        for key, name in (("maxVisits", "max_visits"), ("maxPlayouts", "max_playouts")):
            if key in over and key not in q:          # the query's own maxVisits comes first
                settings[name] = _int(over[key], key, 1)
        if "maxTime" in over:
            settings["max_time"] = _number(over["maxTime"], "maxTime")
        if "analysisPVLen" in over and "analysisPVLen" not in q:
            settings["pv_len"] = min(_int(over["analysisPVLen"], "analysisPVLen", 0), PV_LEN)
    except QueryError as e:
        raise QueryError("overrideSettings", str(e)) from None
    if "analysisPVLen" in q:
        settings["pv_len"] = min(_int(q["analysisPVLen"], "analysisPVLen", 0), PV_LEN)
    if not (settings["max_visits"] or settings["max_playouts"] or settings["max_time"]):
        settings["max_time"] = defaults["max_time"]
    return settings


def _reports(q, size):
    """What the answers hold beside the moves, and the moves kept out of the search."""
    out = {name: _bool(q[field], field) if field in q else False
           for field, name in (("includeOwnership", "ownership"),
                               ("includeOwnershipStdev", "ownership_stdev"),
                               ("includePolicy", "policy"), ("includePVVisits", "pv_visits"))}
    out["report_every"] = (_number(q["reportDuringSearchEvery"], "reportDuringSearchEvery")
                           if "reportDuringSearchEvery" in q else 0.0)
    out["avoid"] = _move_limits("avoidMoves", q["avoidMoves"], size) if "avoidMoves" in q else ()
    out["allow"] = _move_limits("allowMoves", q["allowMoves"], size) if "allowMoves" in q else ()
    if len(out["allow"]) > 1:
        raise QueryError("allowMoves", "allowMoves takes one entry")
    return out


KNOWN_FIELDS = {"id", "moves", "initialStones", "initialPlayer", "rules", "komi",
                "whiteHandicapBonus", "boardXSize", "boardYSize", "analyzeTurns", "maxVisits",
                "analysisPVLen", "includeOwnership", "includeOwnershipStdev", "includePolicy",
                "includePVVisits", "avoidMoves", "allowMoves", "overrideSettings",
                "reportDuringSearchEvery", "priority", "priorities"}


def parse_query(q, defaults, seq):
    """A query (a dict) -> (jobs, warnings [(field, message)]); QueryError when refused.
    defaults: {"max_visits", "max_time", "perspective"} from the command line; seq: a counter
    of arrival (next() gives each job its number)."""
    warnings = []
    game, moves = _position(q, warnings)
    turns = _turns(q, len(moves))
    settings = _settings(q, defaults, warnings)
    reports = _reports(q, game["size"])
    for field in q:
        if field in NOT_COMPUTED:
            if q[field] not in (False, None):
                warnings.append((field, f"ignored: {NOT_COMPUTED[field]}"))
        elif field not in KNOWN_FIELDS:
            warnings.append((field, "Unexpected or unused field"))
    jobs = []
    for turn, priority in turns:
        before = tuple(moves[:turn])
        to_move = game["initial"] if not before else ("w" if before[-1][0] == "b" else "b")
        jobs.append(Job(id=q["id"], turn=turn, priority=priority, moves=before, to_move=to_move,
                        seq=next(seq), **game, **settings, **reports))
    return jobs, warnings


# --- answers ------------------------------------------------------------------------------
def policy_of(engine, size):
    """The prior of every point (row by row from the top-left, A19 on 19x19) and of a pass,
    -1 where the side to move may not play: the net's where the engine runs one, else the
    gammas' move probabilities; None when it has neither."""
    board = engine.board
    legal = set(board.legal_moves()) | {"pass"}
    if engine.net is not None and engine.mode in ("net-root", "net-policy"):
        probs = engine.net.priors(board, include_pass=True)
    else:
        from gammago.moves import features
        from gammago.moves import gammas
        try:
            table = gammas.load_default(size)
        except (OSError, ValueError):
            return None
        vertices, feats = features.legal_features(board)
        strength = table.strength(feats)
        keep = [(v, s) for v, s in zip(vertices, strength) if v in legal]
        total = sum(s for _, s in keep) or 1.0
        probs = {v: float(s) / total for v, s in keep}
    out = [-1.0] * (size * size + 1)
    for v, p in probs.items():
        if v not in legal:
            continue
        if v == "pass":
            out[-1] = float(p)
        else:
            row, col = parse_vertex(v, size)
            out[(size - 1 - row) * size + col] = float(p)
    return out


def perspective_color(job):
    """The colour the answer's win rates, scores and ownership are for."""
    return {"BLACK": "b", "WHITE": "w"}.get(job.perspective, job.to_move)


def build_answer(job, engine, infos, during, policy=None):
    """The answer dict of a job from the current search of its engine (infos: Engine.analyze's
    candidates, win rates for the side to move)."""
    color = perspective_color(job)
    flip = color != job.to_move
    owner = engine.ownership() if engine.search.owned else None   # none counted: no figures
    score = None
    if owner is not None:
        score = float(owner.sum()) - engine.board.komi
        score = score if color == "b" else -score
    stdev = engine.score_stdev()
    if stdev is not None and not math.isfinite(stdev):
        stdev = None
    moves = []
    for d in infos:
        winrate, lcb = float(d["winrate"]), float(d.get("lcb", d["winrate"]))
        if flip:
            winrate, lcb = 1.0 - winrate, 1.0 - lcb
        pv = list(d.get("pv") or [d["move"]])[:job.pv_len + 1]
        m = {"move": d["move"], "visits": int(d["visits"]), "winrate": winrate}
        if score is not None:
            m["scoreLead"] = m["scoreMean"] = score      # the root's: no score per move
            if stdev is not None:
                m["scoreStdev"] = float(stdev)
        m.update(prior=float(d.get("prior", 0.0)), lcb=lcb, order=int(d["order"]), pv=pv)
        if job.pv_visits:
            m["pvVisits"] = engine.pv_visits(pv)
        moves.append(m)
    visits = sum(m["visits"] for m in moves)
    root = {"visits": int(engine.search.root_visits),
            "winrate": sum(m["visits"] * m["winrate"] for m in moves) / visits if visits else 0.5}
    if score is not None:
        root["scoreLead"] = score
        if stdev is not None:
            root["scoreStdev"] = float(stdev)
    root["currentPlayer"] = job.to_move.upper()
    out = {"id": job.id, "turnNumber": job.turn, "isDuringSearch": bool(during),
           "moveInfos": moves, "rootInfo": root}
    if job.ownership and owner is not None:
        out["ownership"] = kata_ownership(owner, color)
    if job.ownership_stdev:
        spread = engine.ownership_stdev()
        if spread is not None:
            out["ownershipStdev"] = kata_ownership(spread, "b")
    if policy is not None:
        out["policy"] = policy
    return out


def no_results(job):
    """The answer of a job terminated before any search."""
    return {"id": job.id, "turnNumber": job.turn, "isDuringSearch": False, "noResults": True}


# --- the server ---------------------------------------------------------------------------
class Worker:
    """One Engine and the position it holds (for tree reuse between jobs)."""

    def __init__(self, engine):
        self.engine = engine
        self.key = None          # the position_key of the game on its board
        self.moves = ()          # the moves played on it
        self.job = None          # the job it runs (None: idle)
        self.clear = False       # clear_cache arrived while it ran a job


class AnalysisServer:
    """The analysis engine on top of Engines: handle(line) answers a line (actions at once,
    queries queued), the workers answer jobs as they finish; serve() reads a stream to its end
    and waits for the queued jobs."""

    def __init__(self, engines, out=None, max_visits=0, max_time=1.0, perspective="SIDETOMOVE"):
        self.out = out if out is not None else sys.stdout
        self.defaults = {"max_visits": max_visits, "max_time": max_time,
                         "perspective": perspective}
        self.workers = [Worker(e) for e in engines]
        self._lock = threading.Condition()
        self._write_lock = threading.Lock()
        self._heap = []                  # (-priority, seq, job)
        self._jobs = []                  # queued and running jobs (terminate looks here)
        self._seq = itertools.count()
        self._closing = False
        self._threads = [threading.Thread(target=self._work, args=(w,), daemon=True,
                                          name=f"analysis-{i}")
                         for i, w in enumerate(self.workers)]
        for t in self._threads:
            t.start()

    # --- output ---
    def send(self, obj):
        text = json.dumps(obj, separators=(",", ":"))
        with self._write_lock:
            try:
                self.out.write(text + "\n")
                self.out.flush()
            except (BrokenPipeError, ValueError):     # the reader is gone
                self._closing = True

    def _error(self, message, qid=None, field=None):
        obj = {"error": message}
        if field is not None:
            obj["field"] = field
        if qid is not None:
            obj["id"] = qid
        self.send(obj)

    # --- input ---
    def handle(self, line):
        """Answer one input line: an action at once, a query's errors and warnings at once and
        its jobs queued."""
        line = line.strip()
        if not line:
            return
        try:
            q = json.loads(line)
        except ValueError as e:
            self._error(f"Could not parse input line as json request: {e}")
            return
        if not isinstance(q, dict):
            self._error("Request line was valid json but was not an object")
            return
        qid = q.get("id")
        if not isinstance(qid, str):
            self._error("Request must have a string id field", qid, "id")
            return
        if "action" in q:
            self._action(q)
            return
        try:
            jobs, warnings = parse_query(q, self.defaults, self._seq)
        except QueryError as e:
            self._error(str(e), qid, e.field)
            return
        for field, message in warnings:
            self.send({"id": qid, "field": field, "warning": message})
        with self._lock:
            for job in jobs:
                heapq.heappush(self._heap, (-job.priority, job.seq, job))
                self._jobs.append(job)
            self._lock.notify_all()

    def _action(self, q):
        action = q["action"]
        if action == "query_version":
            build = gammago.build().split()
            self.send(dict(q, version=gammago.__version__,
                           git_hash=build[1] if len(build) > 1 else "<omitted>"))
        elif action == "clear_cache":
            with self._lock:
                for w in self.workers:
                    if w.job is None:
                        w.engine.clear_cache()
                        w.key, w.moves = None, ()
                    else:
                        w.clear = True
            self.send(q)
        elif action in ("terminate", "terminate_all"):
            self._terminate(q, action == "terminate")
        else:
            self._error(f"unknown action {action!r} (query_version, clear_cache, terminate, "
                        "terminate_all)", q["id"], "action")

    def _terminate(self, q, one):
        if one and not isinstance(q.get("terminateId"), str):
            self._error("terminate needs a string terminateId", q["id"], "terminateId")
            return
        turns = q.get("turnNumbers")
        if turns is not None and (not isinstance(turns, list) or
                                  not all(isinstance(t, int) and not isinstance(t, bool)
                                          for t in turns)):
            self._error("turnNumbers must be a list of integers", q["id"], "turnNumbers")
            return
        unstarted = []
        with self._lock:
            for job in self._jobs:
                if (one and job.id != q["terminateId"]) or (turns is not None
                                                           and job.turn not in turns):
                    continue
                job.stop.set()
                if job.state == "queued":
                    job.state = "cancelled"
                    unstarted.append(job)
            self._jobs = [j for j in self._jobs if j.state != "cancelled"]
            self._lock.notify_all()
        self.send(q)
        for job in unstarted:
            self.send(no_results(job))

    def serve(self, inp=None):
        """Answer the lines of inp (default: stdin) until it ends; then finish the queued jobs
        and stop the workers (as KataGo does when its input closes)."""
        if inp is None:
            inp = iter(lambda: sys.stdin.buffer.readline().decode("utf-8", "replace"), "")
        for line in inp:
            if self._closing:
                break
            self.handle(line)
        self.close(wait=not self._closing)
        return 0

    def close(self, wait=True):
        """Stop the workers: after the queued jobs (wait) or now, the running ones terminated."""
        with self._lock:
            self._closing = True
            if not wait:
                for job in self._jobs:
                    job.stop.set()
            self._lock.notify_all()
        for t in self._threads:
            t.join()

    # --- the workers ---
    def _work(self, worker):
        while True:
            with self._lock:
                while not self._heap and not self._closing:
                    self._lock.wait()
                if not self._heap:
                    return
                _, _, job = heapq.heappop(self._heap)
                if job.state == "cancelled":
                    continue
                if self._closing and job.stop.is_set():
                    job.state = "cancelled"
                    self._jobs.remove(job)
                    continue
                job.state = "running"
                worker.job = job
                clear, worker.clear = worker.clear, False
            try:
                if clear:
                    worker.engine.clear_cache()
                    worker.key, worker.moves = None, ()
                self._run(worker, job)
            except Exception as e:          # keep the engine answering the other queries
                log.exception("analysis: query %s turn %d failed", job.id, job.turn)
                worker.key, worker.moves = None, ()
                self._error(f"internal error: {type(e).__name__}: {e}", job.id)
            finally:
                with self._lock:
                    job.state = "done"
                    worker.job = None
                    if job in self._jobs:
                        self._jobs.remove(job)

    def _set_position(self, worker, job):
        """Put the job's position on the worker's engine: the moves since the last job when it
        extends that game (the tree keeps their subtree), else a new game."""
        engine = worker.engine
        if not self._extends(worker, job):
            engine.set_rules(job.rules)
            engine.new_game(job.size, job.komi)
            if job.black or job.white:
                engine.setup_stones(list(job.black), list(job.white))
            engine.board.to_move = job.initial
            worker.key, worker.moves = job.position_key(), ()
        for c, v in job.moves[len(worker.moves):]:
            engine.play(c, v)
        worker.moves = job.moves

    @staticmethod
    def _extends(worker, job):
        """Whether the job's moves continue the game on the worker's board, the new ones
        alternating from the side to move there (the tree's subtree follows points, not
        colours)."""
        old = worker.moves
        if worker.key != job.position_key() or job.moves[:len(old)] != old:
            return False
        expected = worker.engine.board.to_move
        for c, _ in job.moves[len(old):]:
            if c != expected:
                return False
            expected = "w" if c == "b" else "b"
        return True

    def _avoid(self, engine, job):
        """avoidMoves and allowMoves as Engine.analyze takes them: (colour, point, until)."""
        board, out = engine.board, []
        for c, vertices, until in job.avoid:
            out += [(parse_color(c), board.point(v), until) for v in vertices]
        n = board.size
        every = [format_vertex((r, k)) for r in range(n) for k in range(n)]
        for c, vertices, until in job.allow:
            allowed = set(vertices)
            out += [(parse_color(c), board.point(v), until) for v in every if v not in allowed]
        return out

    def _run(self, worker, job):
        engine = worker.engine
        self._set_position(worker, job)
        policy = policy_of(engine, job.size) if job.policy else None
        avoid = self._avoid(engine, job)
        if job.stop.is_set():
            self.send(no_results(job))
            return
        latest = []
        halt = threading.Event()

        def emit(infos):
            latest[:] = [infos]
            if job.report_every and infos and not engine.search.stopped and not halt.is_set():
                self.send(build_answer(job, engine, infos, True, policy))

        done = threading.Event()
        watcher = threading.Thread(target=self._watch, args=(engine, job, halt, done),
                                   daemon=True, name="analysis-watch")
        watcher.start()
        try:
            engine.analyze(job.to_move, job.report_every or NO_REPORTS_S, halt, emit, avoid)
        finally:
            done.set()
            watcher.join()
        infos = latest[0] if latest else []
        if not infos:                  # terminated (or out of time) before any playout
            self.send(no_results(job))
            return
        self.send(build_answer(job, engine, infos, False, policy))

    def _watch(self, engine, job, halt, done):
        """Stop the job's search at its limits or when it is terminated. maxVisits and
        maxPlayouts both count the playouts of this search: the visits a tree kept from the
        last job come on top, and the ownership and the score (this search's playouts alone)
        rest on as many playouts as asked. Looks often enough near the limit not to run far
        past it."""
        cap = min((n for n in (job.max_visits, job.max_playouts) if n), default=0)
        t0 = time.perf_counter()
        started = None
        wait = WATCH_MIN_S
        while not done.wait(wait):
            s = engine.search
            now = time.perf_counter()
            over = job.stop.is_set() or bool(job.max_time and now - t0 >= job.max_time)
            wait = WATCH_MAX_S
            if cap and not s.stopped:    # this job's search runs (a stopped one: the last job's)
                started = started or now
                playouts = s.playouts
                over = over or playouts >= cap
                rate = playouts / max(now - started, 1e-3)
                if rate > 0:
                    wait = min(WATCH_MAX_S, max(WATCH_MIN_S, 0.5 * (cap - playouts) / rate))
            if over:
                halt.set()
                s.stop()
                wait = WATCH_MAX_S


# --- the command -----------------------------------------------------------------------------
def add_arguments(parser):
    from gammago.engine.settings import EngineConfig
    EngineConfig.add_arguments(parser)
    g = parser.add_argument_group("analysis")
    g.add_argument("--workers", type=int, default=0, metavar="N",
                   help="positions analysed at once (KataGo's numAnalysisThreads), one engine "
                        "each, --threads shared among them, at least one each (default: as "
                        "many as --threads)")
    g.add_argument("--report-winrates-as", choices=PERSPECTIVES, default="SIDETOMOVE",
                   type=str.upper,
                   help="whose win rates, scores and ownership the answers give, unless a query's "
                        "overrideSettings says (KataGo's reportAnalysisWinratesAs; default: "
                        "%(default)s; KaTrain asks for BLACK)")
    g.add_argument("--quiet", action="store_true", help="log only warnings and errors to stderr")
    parser.epilog = ("KataGo's JSON analysis protocol on stdin/stdout (one query a line); "
                     "--playouts N: the visits of a query that gives no maxVisits (0: "
                     "--move-time seconds instead); logs go to stderr. KaTrain: docs/GUI.md.")


def worker_configs(config, workers):
    """The EngineConfig of each of `workers` engines: --threads shared out (at least one each),
    the memory bound shared out, each its own seed."""
    from gammago.engine.settings import MIN_MEMORY_MB
    from gammago.core.seeds import derive
    out = []
    for i in range(workers):
        threads = max(1, config.threads // workers + (i < config.threads % workers))
        out.append(dataclasses.replace(
            config, threads=threads, seed=derive(config.seed, i), ponder=False,
            max_memory=max(MIN_MEMORY_MB, config.max_memory // workers),
            max_nodes=max(1000, config.max_nodes // workers) if config.max_nodes else 0))
    return out


def main(args):
    from gammago.engine.settings import EngineConfig
    from gammago.engine.engine import Engine
    level = logging.WARNING if args.quiet else (logging.DEBUG if getattr(args, "verbose", False)
                                                else logging.INFO)
    logging.basicConfig(stream=sys.stderr, level=level, format="%(name)s: %(message)s")
    workers = args.workers or args.threads
    try:
        if workers < 1:
            raise ValueError(f"--workers must be >= 1, not {args.workers}")
        config = EngineConfig.from_args(args)
        engines = [Engine(c) for c in worker_configs(config, workers)]
    except ValueError as e:
        print(f"gammago analysis: {e}", file=sys.stderr)
        return 2
    out = sys.stdout
    sys.stdout = sys.stderr        # stdout is the protocol's
    log.info("gammago %s analysis engine ready: %d worker(s), %s", gammago.__version__, workers,
             ", ".join(f"{c.config.threads} thread(s)" for c in engines))
    try:
        server = AnalysisServer(engines, out, max_visits=config.playouts,
                                max_time=config.move_time, perspective=args.report_winrates_as)
        return server.serve()
    except BrokenPipeError:
        return 0
    finally:
        sys.stdout = out
