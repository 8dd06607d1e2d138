"""The engine's configuration: EngineConfig, its one parse and check, and the defaults that
depend on the board size.

Two tiers of settings. What a player, a GUI or a server sets is a flag of its own (PLAYER:
--playouts, --threads, --mode, ...). The search's tuning settings are one seam, `--set
KEY=VALUE[,KEY=VALUE]` (repeatable; `gammago gtp --help-all` lists them), KEY the field's name
(dashes or underscores); their old flags (--pw-base 10, --no-reuse) are still read, hidden from
--help. Every field's type, allowed values and one line of meaning are in its metadata, read
here alone: from_args converts, validate checks, settings_help lists.

The tree's own parameters default to pyx/search/tree.pyx's DEFAULTS; `auto` (None, or 0 for
expand_visits and dynkomi_moves) is resolved by the board size below (tree_params,
rollout_plan). The measurements behind each constant: docs/notebook/experiments/ (the note named).
"""
import argparse
import dataclasses
import difflib
import math
import types

from gammago.moves import gammas
from gammago.go import rules as _rules
from gammago.search import tree as _tree
from gammago.core.retired import RETIRED, RETIRED_AT
from gammago.rollout.settings import (  # noqa: F401  (the rollouts' settings, re-read here)
    ROLLOUT_LIGHT_AFTER, ROLLOUT_LIGHT_AFTER_LARGE, ROLLOUT_LIGHT_LARGE_SIZE, ROLLOUT_SCALE,
    ROLLOUT_SCALE_MAX_SIZE, ROLLOUT_TAIL_LONE_MAX_SIZE, ROLLOUT_TAIL_SEKI_MAX_SIZE,
    ROLLOUT_TAIL_SHAPES, rollout_gammas, rollout_light_after_for, rollout_plan, rollout_refuse_for,
    rollout_scale_for, rollout_settings_for, rollout_tail_for, rollout_tail_lone_for,
    rollout_tail_seki_for)
from gammago.search.net_root import ROOT_CHILDREN, ROOT_CPUCT
from gammago.go.rules import DEFAULT as RULES_DEFAULT

TREE = _tree.DEFAULTS        # the tree's parameters as pyx/search/tree.pyx sets them

# The trees' memory (--max-memory): all the trees take nodes in chunks from one budget
# (node-pool-memory.md; docs/BENCHMARKS.md "Memory: one bound for all the trees").
MAX_MEMORY_MB = 2048         # the default bound, room for long analyses ...
MAX_MEMORY_SHARE = 0.25      # ... or this share of the machine's memory when that is less
MIN_MEMORY_MB = 16           # the smallest bound (each of net-root's 21 trees holds a chunk)
NODE_BYTES = _tree.NODE_BYTES
MAX_NODES_LIMIT = 1_000_000_000   # node indices are int32

# Defaults by board size: the value, why, the note.
EXPAND_VISITS_9 = 8          # expansion after 8 visits on 9x9: beat 3 and 40 (search-settings.md)
EXPAND_VISITS_19 = 40        # ... 40 on 19x19 (Ray's value); sizes between interpolate
CRIT = 2.0                   # weight of criticality in widening's order below 13x13 (criticality.md)
CRIT_MAX_SIZE = 13           # ... 0 (rating order alone) from this size up (criticality.md)
MERCY = {9: 20}              # mercy rule by size, others off; with the seki rule (mercy.md)
PW_BASE = 10.0               # widening's base below 13x13: child k+1 opens pw_base*1.4**k visits
                             # after child k (widening.md)
PW_BASE_MAX_SIZE = 13        # ... the tree's 40 from this size up (widening.md)
AUTO_NET_MIN_SIZE = 9        # --mode auto: net-root from here up, rollouts below (net-root-auto.md)
DYNKOMI_STONE = 7.0          # linear dynamic komi: points a handicap stone is worth (Pachi's)
DYNKOMI_MOVES_19 = 200       # ... moves to reach 0 on 19x19 (Pachi's); other sizes by points
DYNKOMI_AUTO_MIN_SIZE = 19   # --dynkomi auto: linear from here up when taking stones (dynkomi.md)

PLAYER, TUNING = "player", "tuning"     # the two tiers of settings
MODES = ("auto", "rollouts", "net-root", "net-policy", "gamma-policy")   # --mode
ON_OFF = {"on": True, "off": False}


def default_max_memory():
    """--max-memory's default in MB: MAX_MEMORY_MB, or MAX_MEMORY_SHARE of the physical memory
    when that is less."""
    import os
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return MAX_MEMORY_MB
    return max(MIN_MEMORY_MB, min(MAX_MEMORY_MB, int(phys * MAX_MEMORY_SHARE) >> 20))


# --- what a setting may hold -----------------------------------------------------------------
def _ge(lo):
    return (lambda v: math.isfinite(v) and v >= lo), f">= {lo:g}"


def _gt(lo):
    return (lambda v: math.isfinite(v) and v > lo), f"> {lo:g}"


def _in(lo, hi, open_hi=False):
    if open_hi:
        return (lambda v: lo <= v < hi), f"in [{lo:g}, {hi:g})"
    return (lambda v: lo <= v <= hi), f"in [{lo:g}, {hi:g}]"


def _finite():
    return math.isfinite, ""


def _rollout_light_after(v):
    from gammago.rollout.gamma_policy import check_settings      # the rollouts' own check, one place
    check_settings(v)


def _setting(default=dataclasses.MISSING, *, help, tier=TUNING, ok=None, choices=None,
             check=None, auto=None, auto_help="", factory=dataclasses.MISSING, **kw):
    """A field of EngineConfig with what its parse and check need: help (one line), tier, ok
    (predicate, rule text), choices, check (a function raising ValueError with the reason),
    auto (what the word `auto` stands for where it is not None: 0) and auto_help (what auto
    resolves to); in kw: what (the values in words), metavar, flag (a switch's old flag and
    the value it sets), names_itself (check's reason names the option)."""
    meta = dict(help=help, tier=tier, ok=ok, choices=choices, check=check, auto=auto,
                auto_help=auto_help, **kw)
    if factory is not dataclasses.MISSING:
        return dataclasses.field(default_factory=factory, metadata=meta)
    return dataclasses.field(default=default, metadata=meta)


def _by_size(fmt, small, max_size, large):
    return f"{fmt.format(small)} below {max_size}x{max_size}, {fmt.format(large)} from there up"


@dataclasses.dataclass(kw_only=True)
class EngineConfig:
    # --- the player's tier: a flag each, in this order in --help (add_arguments) ---
    playouts: int = _setting(0, tier=PLAYER, ok=_ge(0), metavar="N",
                             help="fixed playouts per move, reproducible with --seed (0: use the "
                                  "clock)")
    move_time: float = _setting(1.0, tier=PLAYER, ok=_gt(0), metavar="S",
                                help="seconds per move when the controller gives no time settings")
    threads: int = _setting(1, tier=PLAYER, ok=_ge(1), metavar="N", help="search threads")
    seed: int = _setting(1, tier=PLAYER, metavar="N", help="seed of the playout generators")
    max_memory: int = _setting(
        tier=PLAYER, factory=default_max_memory, metavar="MB",
        ok=_in(MIN_MEMORY_MB, MAX_NODES_LIMIT * NODE_BYTES >> 20),
        help="memory for all the search trees together; once it is used up they stop growing "
             f"(default: {MAX_MEMORY_MB} MB, or a quarter of the machine's memory when that is "
             f"less, here {default_max_memory()}; at least {MIN_MEMORY_MB})")
    resign: float = _setting(0.10, tier=PLAYER, ok=_in(0, 1, open_hi=True), metavar="P",
                             help="resign below this win rate (0: never)")
    ponder: bool = _setting(False, tier=PLAYER,
                            help="after its own move, search on the opponent's time until the "
                                 "next command (it uses the --threads meanwhile)")
    mode: str = _setting("auto", tier=PLAYER, choices=MODES,
                         help="rollouts: UCT with rollouts; net-root: the net's priors and values "
                              "at the root over rollout trees; net-policy / gamma-policy: the "
                              "policy's move, no search; auto: net-root from "
                              f"{AUTO_NET_MIN_SIZE}x{AUTO_NET_MIN_SIZE} up when the net loads")
    model: str = _setting("", tier=PLAYER, metavar="FILE", what="an ONNX file",
                          help="ONNX net (default: the shipped net for the board size)")
    rules: str = _setting(RULES_DEFAULT, tier=PLAYER, check=_rules.playable, metavar="RULES",
                          what="a rule set's name or JSON",
                          help="the rules: " + ", ".join(_rules.ENGINE_RULES) + ", another of "
                               "KataGo's rule sets or its JSON rules object; the controller may "
                               f"change them (kgs-rules, kata-set-rules); {RULES_DEFAULT}: area, "
                               "dead stones captured before a pass")
    dynkomi: str = _setting("auto", tier=PLAYER, choices=("auto", "linear", "off"),
                            help="linear: in a handicap game the search counts "
                                 f"{DYNKOMI_STONE:g} points a stone of extra komi for White, "
                                 "shrinking to 0 over the first moves (dynkomi_moves); auto: "
                                 f"linear on {DYNKOMI_AUTO_MIN_SIZE}x{DYNKOMI_AUTO_MIN_SIZE} when "
                                 "the engine takes the stones, else off")
    verbose: bool = _setting(False, tier=PLAYER, help="log search details to stderr")
    # --- the search's tuning settings: --set KEY=VALUE (and their hidden old flags) ---
    max_nodes: int = _setting(0, what="0, or a whole number",
                              ok=(lambda v: v == 0 or 1000 <= v <= MAX_NODES_LIMIT,
                                  f"in [1000, {MAX_NODES_LIMIT}]"),
                              help=f"the memory bound in nodes ({NODE_BYTES} bytes each) instead "
                                   "of --max-memory (0: from --max-memory)")
    margin: float = _setting(1.0, ok=_ge(0), help="seconds kept in reserve on every clock")
    pass_dead_removed: bool = _setting(
        False, flag=("--pass-dead-removed", True),
        help="after an opponent pass, pass when winning once dead stones are removed (off: only "
             "when winning by Tromp-Taylor as the board stands)")
    reuse: bool = _setting(True, flag=("--no-reuse", False),
                           help="keep the subtree of the moves played since the last search")
    early_stop: bool = _setting(True, flag=("--no-early-stop", False),
                                help="stop once the best move cannot be overtaken (where the "
                                     "clock keeps the time saved)")
    rollout: str = _setting("auto", choices=("auto", "light", "gamma"),
                            help="rollout policy: gamma (the shipped gammas), light (uniform); "
                                 "auto: gamma when gammas are shipped")
    prior: str = _setting("auto", choices=("auto", "gamma", "cheap"),
                          help="the ratings that order children for widening; auto: gamma when "
                               "gammas are shipped")
    rollout_light_after: int | None = _setting(
        None, ok=_ge(0), check=_rollout_light_after, names_itself=True,
        auto_help="what a rollout_gammas table was trained for, else " + _by_size(
            "{}", ROLLOUT_LIGHT_AFTER, ROLLOUT_LIGHT_LARGE_SIZE, ROLLOUT_LIGHT_AFTER_LARGE),
        help="gamma moves of a rollout before the light tail (capture, save, shapes, random "
             "non-self-atari); 0: gammas to the end")
    rollout_tail_shapes: bool = _setting(
        ROLLOUT_TAIL_SHAPES, help="the light tail answers the last move with Mogo's 3x3 shapes")
    rollout_tail_lone: bool | None = _setting(
        None, auto_help=_by_size("{}", "on", ROLLOUT_TAIL_LONE_MAX_SIZE, "off"),
        help="the light tail's random moves refuse a lone stone's bad self-atari too")
    rollout_tail_seki: bool | None = _setting(
        None, auto_help=_by_size("{}", "on", ROLLOUT_TAIL_SEKI_MAX_SIZE, "off"),
        help="the light tail passes rather than break a seki when no other move is permitted")
    rollout_scale: str | None = _setting(
        None, check=gammas.parse_scale, what="PREFIX=F,...",
        auto_help=_by_size("{}", ROLLOUT_SCALE, ROLLOUT_SCALE_MAX_SIZE, "''"),
        help="gamma rollouts multiply the gammas of features PREFIX by F ('PREFIX=F,...'; '': "
             "the trained gammas); the priors keep the raw gammas")
    rollout_gammas: str = _setting(
        "", what="a gamma file", help="a gamma file the rollouts sample with as it is "
                                      "(train-balance writes them); '': the shipped rollout table")
    prior_gammas: str = _setting(
        "", what="a gamma file", help="a gamma file the tree's priors rate children with (a "
                                      "table with a spatial dictionary, e.g. spatial19.gamma, "
                                      "rates its large patterns); '': the rollouts' table")
    # auto on every board: no smaller size won on 9x9 (spatial-prior.md)
    prior_largest: int | None = _setting(
        None, ok=_in(4, 10), auto_help="10, every size",
        help="the largest spatial pattern (gridcular distance 4..10) a prior_gammas table's "
             "dictionary is looked up at")
    expand_visits: int = _setting(
        0, auto=0, ok=_ge(0), help="visits before a leaf is expanded",
        auto_help=f"{EXPAND_VISITS_9} on 9x9 .. {EXPAND_VISITS_19} on 19x19")
    pw_init: int = _setting(TREE["pw_init"], ok=_ge(1), help="children open at expansion")
    pw_base: float | None = _setting(
        None, ok=_ge(0),
        auto_help=_by_size("{:g}", PW_BASE, PW_BASE_MAX_SIZE, TREE["pw_base"]),
        help="progressive widening: child k+1 opens after t_k + pw_base * pw_factor^k visits")
    pw_factor: float = _setting(TREE["pw_factor"], ok=_ge(1), help="progressive widening's factor (see pw_base)")
    ucb_c: float = _setting(TREE["ucb_c"], ok=_ge(0),
                            help="weight of the UCB1-Tuned exploration term")
    bonus_weight: float = _setting(TREE["bonus_weight"], ok=_ge(0),
                                   help="rating bonus: weight * sqrt(equiv / (N + equiv)) * rating")
    bonus_equiv: float = _setting(TREE["bonus_equiv"], ok=_gt(0),
                                  help="the parent visits over which the rating bonus fades")
    fpu: float = _setting(TREE["fpu"], ok=_finite(),
                          help="value of an unvisited open child (before its rating bonus)")
    crit: float | None = _setting(
        None, ok=_ge(0), auto_help=_by_size("{:g}", CRIT, CRIT_MAX_SIZE, 0),
        help="widening opens the child of best rating + crit * criticality (0: rating order)")
    mercy: int | None = _setting(
        None, ok=_ge(0),
        auto_help=", ".join(f"{v} on {k}x{k}" for k, v in sorted(MERCY.items())) + ", else 0",
        help="a rollout ends, won by the side ahead, once one side has taken more stones than "
             "this beyond the other since the root (0: off)")
    net_lambda: float | None = _setting(
        None, ok=_in(0, 1), auto_help="what the net's metadata says, else 0",
        help="net-root: the net's weight in a root child's value, the rollouts' the rest")
    net_symmetry: str = _setting("random", choices=("random", "average"),
                                 help="one random symmetry per net evaluation, or all 8 averaged")
    net_children: int = _setting(ROOT_CHILDREN, ok=_ge(1),
                                 help="net-root: root moves searched (the net's best)")
    net_cpuct: float = _setting(ROOT_CPUCT, ok=_ge(0),
                                help="net-root: PUCT weight of the net's priors at the root")
    policy_temperature: float = _setting(
        0.0, ok=_ge(0), help="net-policy / gamma-policy: 0 plays the policy's best move, T > 0 "
                             "samples moves by p^(1/T) (seeded by --seed)")
    dynkomi_moves: int = _setting(
        0, auto=0, ok=_ge(0),
        auto_help=f"{DYNKOMI_MOVES_19} on 19x19, other sizes in proportion to their points",
        help="--dynkomi linear: moves over which the extra komi shrinks to 0")

    MODES = MODES

    TREE_FIELDS = ("expand_visits", "pw_init", "pw_base", "pw_factor", "ucb_c",
                   "bonus_weight", "bonus_equiv", "fpu", "crit", "mercy")

    # --- the command line ----------------------------------------------------------------------
    @staticmethod
    def add_arguments(p: argparse.ArgumentParser):
        """The player's flags, --set and --help-all; the tuning settings' old flags, hidden."""
        g = p.add_argument_group("engine")
        for f in dataclasses.fields(EngineConfig):
            if f.metadata["tier"] != PLAYER:
                continue
            text = f.metadata["help"].replace("%", "%%")
            if _base_type(f) is bool:
                g.add_argument(_flag(f.name), action="store_true", help=text)
                continue
            choices = f.metadata["choices"]
            g.add_argument(_flag(f.name), type=_flag_value(f.name),
                           default=f.default_factory() if f.default is dataclasses.MISSING
                           else f.default,
                           metavar=f.metadata.get("metavar")
                           or ("{" + ",".join(choices) + "}" if choices else None),
                           help=text if "default" in text
                           else f"{text}; default: {default_text(f)}")
        t = p.add_argument_group("search settings")
        t.add_argument("--set", action="append", default=[], dest="settings",
                       metavar="KEY=VALUE[,KEY=VALUE]",
                       help="a tuning setting of the search (repeatable; a key given twice: the "
                            "later wins; KEY with dashes or underscores); the keys, their "
                            "defaults and meanings: --help-all")
        t.add_argument("--help-all", action=_HelpAll, nargs=0,
                       help="this help and every --set key with its default, then exit")
        for f in dataclasses.fields(EngineConfig):         # the tuning settings' old flags
            if f.metadata["tier"] != TUNING:
                continue
            flag = f.metadata.get("flag")
            if flag:
                p.add_argument(flag[0], dest=f.name, action="store_const", const=flag[1],
                               default=argparse.SUPPRESS, help=argparse.SUPPRESS)
            else:
                p.add_argument(_flag(f.name), dest=f.name, type=_flag_value(f.name),
                               default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    @classmethod
    def from_args(cls, args):
        """The validated EngineConfig of parsed arguments: the flags, then the --set settings in
        the order given. ValueError names the option or key and what it may be."""
        kw = {name: getattr(args, name) for name in FIELDS if hasattr(args, name)}
        for text in getattr(args, "settings", None) or ():
            kw.update(parse_settings(text))
        cfg = cls(**kw)
        cfg.validate()
        return cfg

    # --- the check -----------------------------------------------------------------------------
    def validate(self):
        """ValueError naming the first field whose value it may not hold."""
        for f in dataclasses.fields(self):
            problem = _problem(f, getattr(self, f.name))
            if problem:
                raise ValueError(problem(_flag(f.name)))

    @classmethod
    def settings_help(cls):
        """The --set keys with their defaults, types and meanings, as --help-all lists them."""
        import textwrap
        lines = ["search settings: --set KEY=VALUE[,KEY=VALUE], repeatable (a key given twice: "
                 "the later wins),",
                 "KEY with dashes or underscores; auto: by board size, or as said. The old "
                 "flags (--pw-base 10,",
                 "--no-reuse) are read too; --set wins over them.", ""]
        for f in dataclasses.fields(cls):
            if f.metadata["tier"] != TUNING:
                continue
            lines.append(f"  {f.name} = {default_text(f)}    ({_rule(f)})")
            text = f.metadata["help"]
            if f.metadata["auto_help"]:
                text += f"; auto: {f.metadata['auto_help']}"
            lines += textwrap.wrap(text, 92, initial_indent=" " * 6, subsequent_indent=" " * 6)
        return "\n".join(lines)

    def node_budget(self):
        """Nodes all the trees may hold together: max_nodes, else --max-memory in whole chunks."""
        if self.max_nodes:
            return self.max_nodes
        chunks = max(1, (self.max_memory << 20) // _tree.CHUNK_BYTES)
        return min(MAX_NODES_LIMIT, chunks * _tree.NODES_PER_CHUNK)

    def tree_params(self, size=19):
        """The tree's parameters for a board size (expand_visits, crit, pw_base and mercy left
        at auto resolved by the size)."""
        p = {k: getattr(self, k) for k in self.TREE_FIELDS}
        if not p["expand_visits"]:
            p["expand_visits"] = expand_visits_for(size)
        if p["crit"] is None:
            p["crit"] = crit_for(size)
        if p["pw_base"] is None:
            p["pw_base"] = pw_base_for(size)
        if p["mercy"] is None:
            p["mercy"] = mercy_for(size)
        return p


FIELDS = {f.name: f for f in dataclasses.fields(EngineConfig)}
TUNING_KEYS = tuple(name for name, f in FIELDS.items() if f.metadata["tier"] == TUNING)


def _flag(name):
    return "--" + name.replace("_", "-")


def _base_type(f):
    """int, float, bool or str: the field's type without its None."""
    if isinstance(f.type, types.UnionType):
        return next(t for t in f.type.__args__ if t is not type(None))
    return f.type


def _rule(f):
    """What a field may hold, in words: 'a number >= 0, or auto'."""
    kind = _base_type(f)
    m = f.metadata
    if kind is bool:
        return "on, off or auto" if _has_auto(f) else "on or off"
    if m["choices"]:
        text = "one of " + ", ".join(m["choices"])
    else:
        text = m.get("what") or {int: "a whole number", float: "a number", str: "text"}[kind]
        if m["ok"] and m["ok"][1]:
            text += " " + m["ok"][1]
    return text + (", or auto" if _has_auto(f) else "")


def _has_auto(f):
    """Whether the word `auto` is a value of f (None for an optional field, else its auto)."""
    return isinstance(f.type, types.UnionType) or f.metadata["auto"] is not None


def default_text(f):
    """A field's default as --help-all shows it (and the text --set reads back)."""
    v = f.default_factory() if f.default is dataclasses.MISSING else f.default
    if _has_auto(f) and v == f.metadata["auto"]:
        return "auto"
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, float):
        return f"{v:g}"
    return repr(v) if v == "" else str(v)


def _convert(f, text):
    """A field's value from its text (on/off, auto, numbers); ValueError when it is none."""
    text = text.strip()
    if _has_auto(f) and text == "auto":
        return f.metadata["auto"]
    kind = _base_type(f)
    if kind is bool:
        if text not in ON_OFF:
            raise ValueError(text)
        return ON_OFF[text]
    if kind in (int, float):
        return kind(text)
    if f.metadata["choices"] and text not in f.metadata["choices"]:
        raise ValueError(text)
    return "" if text in ("''", '""') else text          # '' as --help-all shows it


def _problem(f, v):
    """None when field f may hold v, else a function of the option's name that words why not."""
    m = f.metadata
    if _has_auto(f) and v == m["auto"]:
        return None
    if m["check"]:                  # first: a check of its own words its reason
        try:
            m["check"](v)
        except ValueError as e:
            why = str(e)
            return lambda name: why if m.get("names_itself") else f"{name}: {why}"
    if (m["choices"] and v not in m["choices"]) or (m["ok"] and not m["ok"][0](v)):
        return lambda name: f"{name} must be {_rule(f)}, not {v!r}"
    return None


def _flag_value(name):
    """argparse's type for a tuning setting's old flag: the text converted as --set would."""
    f = FIELDS[name]

    def convert(text):
        try:
            return _convert(f, text)
        except ValueError:
            choice = _base_type(f) is bool or f.metadata["choices"]
            what = "invalid choice" if choice else "invalid value"
            raise argparse.ArgumentTypeError(f"{what}: {text!r} ({_rule(f)})") from None
    convert.__name__ = name
    return convert


def parse_setting(key, text):
    """(field, value) of one `--set KEY=VALUE` (KEY with dashes or underscores), converted and
    checked; ValueError names the key and what it may hold."""
    name = key.strip().replace("-", "_")
    given = f"--set {key.strip()}={text}"
    f = FIELDS.get(name)
    if f is None:
        if name in RETIRED:
            raise ValueError(f"{given}: {name} was retired; the code of commit {RETIRED_AT} "
                             "plays it (docs/notebook/experiments/)")
        near = difflib.get_close_matches(name, TUNING_KEYS, n=2)
        raise ValueError(f"{given}: no such setting" + (f" (did you mean {' or '.join(near)}?)"
                         if near else "") + "; the keys: " + ", ".join(TUNING_KEYS)
                         + " (gammago gtp --help-all)")
    if f.metadata["tier"] != TUNING:
        raise ValueError(f"{given}: {name} is an option of its own: give {_flag(name)}")
    try:
        value = _convert(f, text)
    except ValueError:
        raise ValueError(f"{given}: {name} must be {_rule(f)}") from None
    problem = _problem(f, value)
    if problem:
        raise ValueError(f"{given}: {problem(name)}")
    return name, value


def parse_settings(text):
    """{field: value} of one --set argument: KEY=VALUE pairs separated by commas. A value
    may hold commas itself (rollout_scale's PREFIX=F,PREFIX=F): a piece that does not start
    with a key and = goes with the value before it."""
    pairs = []
    for piece in text.split(","):
        key, eq, value = piece.partition("=")
        if pairs and key.strip().replace("-", "_") not in FIELDS and _takes_commas(pairs[-1][0]):
            pairs[-1][1] += "," + piece
        elif not eq:
            raise ValueError(f"--set {text}: expected KEY=VALUE, not {piece!r}")
        else:
            pairs.append([key, value])
    return dict(parse_setting(k, v) for k, v in pairs)


def _takes_commas(key):
    """Whether a --set key's value is text that may hold commas (rollout_scale, a file)."""
    f = FIELDS.get(key.strip().replace("-", "_"))
    return f is not None and _base_type(f) is str and not f.metadata["choices"]


class _HelpAll(argparse.Action):
    """--help-all: the parser's help, then every tuning setting (EngineConfig.settings_help)."""

    def __call__(self, parser, namespace, values, option_string=None):
        parser.print_help()
        print()
        print(EngineConfig.settings_help())
        parser.exit()


# --- the tree and the komi on a board size ---------------------------------------------------
def crit_for(size):
    """crit auto: the criticality weight for a board size."""
    return CRIT if size < CRIT_MAX_SIZE else 0.0


def mercy_for(size):
    """mercy auto: the rollouts' mercy threshold for a board size (0: off)."""
    return MERCY.get(size, 0)


def pw_base_for(size):
    """pw_base auto: progressive widening's base for a board size."""
    return PW_BASE if size < PW_BASE_MAX_SIZE else float(TREE["pw_base"])


def dynkomi_moves_for(size):
    """dynkomi_moves auto: the moves over which the extra komi shrinks to 0 on a board size."""
    return max(1, round(DYNKOMI_MOVES_19 * size * size / 361))


def expand_visits_for(size):
    """expand_visits auto: the expansion threshold for a board size."""
    size = min(max(size, 9), 19)
    return round(EXPAND_VISITS_9 + (EXPAND_VISITS_19 - EXPAND_VISITS_9) * (size - 9) / 10)
