"""What a match keeps: its settings (MatchConfig), each game's result (GameResult), the table of
the results from engine1's side (summarize, format_table) and the JSON record (--json), which is
rewritten after every game and read back by --resume.
"""
import collections
import dataclasses
import json
import math
import os

from gammago.arena.stats import elo_interval, sprt_bounds, sprt_llr, wilson_interval


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
    handicap: int = 0          # fixed handicap stones for Black (GTP fixed_handicap), White first
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
    builds: dict = dataclasses.field(default_factory=dict)  # {k: gtp_process.recorded_build, "" if none}


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


def check_counts(games, size, parallel):
    """ValueError naming the option when --games, --size or --parallel of a match (or of a
    comparison's pairings) is out of range."""
    from gammago.go.board import SIZES
    if games < 1:
        raise ValueError(f"--games must be >= 1, not {games}")
    if size not in SIZES:
        raise ValueError(f"--size must be {SIZES[0]} to {SIZES[-1]}, not {size}")
    if parallel < 1:
        raise ValueError(f"--parallel must be >= 1, not {parallel}")


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
             + (f", {cfg.handicap} handicap stones" if cfg.handicap else "")
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


# --- the record: written after every game, read back by --resume --------------------------------
# what defines a match: a record may be continued only under the same values (--games,
# --parallel, --sgf-dir and the labels may change)
RESUME_FIELDS = ("engines", "size", "komi", "handicap", "alternate", "seed", "time_per_move",
                 "time_settings_to", "move_timeout", "max_moves", "sprt", "alpha", "beta")


def _jsonable(x):
    return json.loads(json.dumps(x, default=str))


def write_json(path, data):
    """Replace the JSON file at path atomically (a temporary file, then a rename): a run killed at
    any moment leaves the last complete record (match and regress records)."""
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(data, f, indent=1, default=str)
        f.write("\n")
    os.replace(tmp, path)


def write_record(path, cfg, results, summary, finished):
    """The match as JSON (config, summary, every game), replaced atomically: a match killed at any
    moment leaves the record of its last finished game."""
    write_json(path, {"config": dataclasses.asdict(cfg), "finished": finished, "summary": summary,
                      "games": [dataclasses.asdict(r) for r in sorted(results, key=lambda r: r.index)
                                if r.winner != "x"]})


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
    defaults = {"handicap": 0}            # records written before the field existed
    for k in RESUME_FIELDS:
        if old.get(k, defaults.get(k)) != now[k]:
            raise ValueError(f"{path}: recorded with {k} = {old.get(k)!r}, now {now[k]!r}: "
                             "a match resumes only with the same settings")
    names = {int(k): v for k, v in old.get("names", {}).items()}
    return games, names, float(data.get("summary", {}).get("wall_s", 0.0))
