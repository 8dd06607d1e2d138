"""KataGo's JSON analysis queries (the `gammago analysis` command's input), read and checked:
parse_query turns one query into its jobs, one a turn of analyzeTurns, or refuses it with a
QueryError (KataGo's {"id", "error", "field"} answer) naming the field. A field the engine
takes but does not compute, or does not know, comes back as a warning (field, message) and the
query goes on.

The rules (gammago/go/rules.py) are the query's: parse_rules reads KataGo's names, shorthands
and rules objects; rules the engine does not play (a button, a tax on all eyes) get a warning.
"""
import dataclasses
import math
import threading

from gammago.go.board import Board, format_vertex, parse_color, parse_vertex
from gammago.go import rules as _rules
from gammago.go.rules import RULE_SETS, RulesError

PERSPECTIVES = ("BLACK", "WHITE", "SIDETOMOVE")   # reportAnalysisWinratesAs
PV_LEN = 15                 # moves of a pv after the first (KataGo's analysisPVLen default; the
                            # engine's lines are at most this long)
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

