"""The engine's settings: EngineConfig (one field and one command-line flag per setting) and
the defaults that depend on the board size, each constant with the measurement behind it.

The tree's own parameters (pw_*, ucb_c, bonus_*, fpu) default to
pyx/tree.pyx's DEFAULTS, the one place they are set; the per-size defaults below (the
expansion threshold, the criticality weight, the widening's base) resolve the fields left at
0 / None for a board size (EngineConfig.tree_params).
"""
import argparse
import dataclasses

from gammago import tree as _tree
from gammago import rules as _rules
from gammago.root_search import ROOT_CHILDREN, ROOT_CPUCT
from gammago.rules import DEFAULT as RULES_DEFAULT

TREE = _tree.DEFAULTS        # the tree's parameters as pyx/tree.pyx sets them

# The trees' memory (--max-memory): every tree of the engine (the rollouts tree, net-root's
# child trees) takes its nodes (24 bytes each) in chunks of 384 KiB from one budget, as it
# grows. 1 M nodes filled halfway through a 5 s move on 2 threads on 9x9 (~240k playouts, ~9
# nodes each, plus the subtree kept from the last move: 2-3.3 M); 2 GB (86 M nodes) leaves room
# for long analysis. BENCHMARKS "The tree's node pool", "Memory".
MAX_MEMORY_MB = 2048         # the default bound: this, or a quarter of the machine's memory
MAX_MEMORY_SHARE = 0.25      # ... when that is less
MIN_MEMORY_MB = 16           # the smallest bound (each of net-root's 21 trees holds a chunk)
NODE_BYTES = _tree.NODE_BYTES
MAX_NODES_LIMIT = 1_000_000_000   # node indices are int32
EXPAND_VISITS_9 = 8          # visits before a leaf is expanded on 9x9 (BENCHMARKS: 8 beat 3 and 40)
EXPAND_VISITS_19 = 40        # ... and on 19x19 (Ray's value); sizes between interpolate
CRIT = 2.0                   # criticality weight in the widening order below CRIT_MAX_SIZE
                             # (--crit; 9x9 self-play at 2,000 playouts: 2 vs 0 +96 Elo, 4 vs 2
                             # -104, 1 vs 2 -42; BENCHMARKS "Search settings")
CRIT_MAX_SIZE = 13           # ... and 0 (rating order) from this board size up: 13x13 net-root
                             # at 1,000 playouts scored crit 2 vs 0 37.5% (-89 Elo, 40 games)
MERCY = {9: 20}              # the rollouts' mercy rule (--mercy) by board size: a rollout ends,
                             # won by the side ahead, once one side has taken more than this many
                             # stones beyond the other since the root; sizes not named: off (0).
                             # 9x9, with the seki rule: see ROLLOUT_TAIL_SEKI_MAX_SIZE
                             # (docs/experiments/mercy.md)
PW_BASE = 10.0               # progressive widening's base (--pw-base) below PW_BASE_MAX_SIZE:
                             # Fuego's 9x9 files at 5,000 playouts 166.3 tests a seed against
                             # 157.4 with 40 (8 seeds; docs/experiments/widening.md)
PW_BASE_MAX_SIZE = 13        # ... and the tree's default (40) from this board size up: on the
                             # 19x19 files (net-root) base 10 passed 231.5 a seed against 244.8
ROLLOUT_SCALE = "capture:save=3,extension:new=3"  # rollouts below ROLLOUT_SCALE_MAX_SIZE:
                             # gammas of these features x3 (capturing to save an own string in
                             # atari, escaping an atari the last move made). MSE of rollout
                             # evaluations against game results -0.0045 on 9x9 games vs GNU Go,
                             # -0.0058 on 19x19 Tygem games; 9x9 self-play 59.5% (+67)
                             # (BENCHMARKS "Rollouts: quality")
ROLLOUT_SCALE_MAX_SIZE = 13  # ... and the trained gammas as they are from this size up: in
                             # 13x13 self-play (net-root, 1,000 playouts, 60 games) the scale
                             # scored 46.7% (-23 Elo, -110 .. +64): no sign of a gain in play
ROLLOUT_TAIL_SHAPES = True   # the light tail plays Mogo's shapes around the last move: 9x9
                             # vs GNU Go 10 at 1 s, N = 10: 90.0% over 300 games (86.5% without);
                             # rollout MSE -0.0056 (BENCHMARKS "Mogo's shapes in the tail")
ROLLOUT_TAIL_LONE_MAX_SIZE = 13  # below this size the light tail's random moves refuse a lone
                             # stone's bad self-atari too (off from here up): 9x9 rollout mse
                             # -0.0085, Fuego's 9x9 files at 5,000 playouts +7.0 tests of 285
                             # (8 seeds), 9x9 self-play at 1 s +15 (-24 .. +54) over 300 games;
                             # 19x19 rollout mse +0.0054 (BENCHMARKS "A lone stone's self-atari
                             # in the tail")
ROLLOUT_TAIL_SEKI_MAX_SIZE = 13  # below this size, when the light tail's random draws find no
                             # move they permit, it takes a point that is no bad self-atari of a
                             # string, or passes (a seki stands), instead of any legal non-eye
                             # point (--rollout-tail-seki); off from this size up, where it was
                             # never played in games (the 19x19 files: 244.5 against 244.75).
                             # 9x9 at 0.2 s a move: self-play +37 (+3 .. +72) over 400 games
                             # alone, +30 (-19 .. +78) over 200 with the mercy rule; the two
                             # against GNU Go 10 86.1% over 400 new openings, 82.3% without;
                             # Fuego's 24 9x9 files -2.5 (s.e. 1.5) a seed
                             # (docs/experiments/tail-seki.md, docs/experiments/mercy.md)
ROLLOUT_LIGHT_AFTER = 5      # gamma rollouts follow the light tail's rules after this many
                             # moves (--rollout-light-after) below ROLLOUT_LIGHT_LARGE_SIZE; vs GNU
                             # Go at 1 s (docs/experiments/light-tail.md), with the tail's
                             # shapes: N = 5 91.4% (280 games), N = 10 90.0% (300), +29 Elo, not
                             # significant, for ~10% fewer instructions in the search (callgrind,
                             # without the shapes); without the shapes N = 10 86.5%, N = 20
                             # 85.0%, N = 5 84.0%, gammas to the end 76.5%
ROLLOUT_LIGHT_LARGE_SIZE = 13  # ... and from this size up:
ROLLOUT_LIGHT_AFTER_LARGE = 10  # 19x19 self-play at 0.5 s a move (net-root, --net-lambda 0),
                             # N = 10 against the gammas to the end: 32-1, +602 Elo (2.5x the playouts
                             # and a better evaluation); 13x13 at 0.5 s: 55.0% (60 games, +35,
                             # not significant) (BENCHMARKS "Net-root: the rollouts' light tail")
AUTO_NET_MIN_SIZE = 9        # --mode auto: net-root from this board size up, rollouts below
                             # (net-root over rollouts at equal time: 19x19 +585 Elo, 13x13
                             # +232 with the first net; 9x9 +156 at 0.5 s with the GPU-trained
                             # net, +0 with the first; BENCHMARKS "Net")
DYNKOMI_STONE = 7.0          # --dynkomi linear: points a handicap stone is worth (Pachi's value)
DYNKOMI_MOVES_19 = 200       # ... moves over which the extra komi shrinks to 0 on 19x19 (Pachi's);
                             # other sizes in proportion to the points (9x9: 45, 13x13: 94)
DYNKOMI_AUTO_MIN_SIZE = 19   # --dynkomi auto (the default): linear on boards this size and up
                             # when the engine takes stones (plays Black in a handicap game),
                             # off otherwise, as Pachi's first default was (dynkomi 200 moves on
                             # 19x19, Black only). Taking 3 stones from GNU Go 10 on 19x19 it
                             # won 17 of 20 against 15 without, by more (median 6.5 against
                             # 4.5); giving 2 on 9x9, 8 of 40 against 13 without; both within
                             # the noise (docs/experiments/dynkomi.md)


# The options retired at RETIRED_AT, each with the value it had by default (the engine plays as
# it did then with it): docs/experiments/ says why each went. A record of a run that names one
# at that value names nothing the engine does not play (retired_dropped).
RETIRED_AT = "c38f670"
RETIRED = {"rollout_power": 1.0, "rollout_nakade": 0.0, "prior_full": False,
           "rollout_tail_2lib": False, "rollout_tail_capture": False,
           "rollout_tail_gammas": None, "rollout_tail_far": None, "rollout_adapt": 0.0,
           "rollout_refuse": None, "rollout_answer": None, "lgrf": False, "rating": "log",
           "score_bonus": 0.0, "net_reply_priors": False}


def retired_dropped(fields):
    """EngineConfig fields as a record of an older run holds them (selfplay --resume), less the
    retired options at their old defaults; a retired option at another value stays, so that a
    comparison with this engine's fields finds it."""
    return {k: v for k, v in fields.items() if not (k in RETIRED and RETIRED[k] == v)}


def default_max_memory():
    """--max-memory's default in MB: MAX_MEMORY_MB, or MAX_MEMORY_SHARE of the physical memory
    when that is less."""
    import os
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return MAX_MEMORY_MB
    return max(MIN_MEMORY_MB, min(MAX_MEMORY_MB, int(phys * MAX_MEMORY_SHARE) >> 20))


def _on_off(group, flag, on, help):
    """An option FLAG {on,off} defaulting to `on`; EngineConfig.from_args makes it the bool
    field of its name."""
    group.add_argument(flag, choices=("on", "off"), default="on" if on else "off", help=help)


@dataclasses.dataclass
class EngineConfig:
    playouts: int = 0              # fixed playouts per move (0: use the clock)
    seed: int = 1                  # seed of the playout generators
    threads: int = 1
    move_time: float = 1.0         # seconds per move when no time settings are given
    max_memory: int = dataclasses.field(default_factory=default_max_memory)
                                   # MB for the nodes of all the engine's trees together
    max_nodes: int = 0             # expert: the same bound in nodes (0: from max_memory)
    margin: float = 1.0            # seconds kept in reserve on every clock
    resign: float = 0.10           # resign below this win rate (0 never)
    pass_dead_removed: bool = False  # after an opponent pass, pass when winning once dead
                                     # stones are removed (else only when winning by Tromp-Taylor)
    rules: str = RULES_DEFAULT     # the rules (gammago/rules.py): a KataGo rule set's name
                                   # (tromp-taylor, chinese, japanese, aga, ...) or its JSON
    reuse: bool = True             # keep the subtree of the moves played since the last search
    ponder: bool = False           # after its own move, search on the opponent's time until the
                                   # next command (Engine.ponder_start)
    early_stop: bool = True        # stop once the best move cannot be overtaken (when the
                                   # time saved can be used later: Clock.bankable)
    rollout: str = "auto"          # rollout policy: light (uniform) | gamma (pyx/rollout, the
                                   # shipped gammas) | auto (gamma when gammas are shipped)
    prior: str = "auto"            # child ratings: gamma (shipped gammas) | cheap | auto (gamma
                                   # when a gamma file is shipped, else cheap)
    rollout_light_after: int | None = None  # gamma rollouts: moves sampled from the gammas
                                   # before the rest of the playout follows the light tail's
                                   # rules (0: all; None: as the --rollout-gammas table says,
                                   # else by board size; rollout_settings_for)
    rollout_tail_shapes: bool = ROLLOUT_TAIL_SHAPES  # the light tail tries Mogo's 3x3 shapes
                                   # around the last move before a random point
    rollout_tail_lone: bool | None = None  # its random moves refuse a lone stone's bad
                                   # self-atari too, not only a string's (None: by board size,
                                   # rollout_tail_lone_for)
    rollout_tail_seki: bool | None = None  # with no random move it permits, the light tail
                                   # passes rather than break a seki (None: by board size,
                                   # rollout_tail_seki_for)
    rollout_scale: str | None = None  # gamma rollouts: features' gammas times factors
                                   # ("capture:save=3,...", gammas.parse_scale; priors: raw;
                                   # None: by board size, rollout_scale_for)
    rollout_gammas: str = ""       # a gamma file the rollouts sample with as it is (train-balance
                                   # writes one); "" = the shipped rollout table, scaled
    # tree parameters (defaults: pyx/tree.pyx DEFAULTS)
    expand_visits: int = 0         # 0: by board size (expand_visits_for)
    pw_init: int = TREE["pw_init"]
    pw_base: float | None = None   # progressive widening's base (None: by board size,
                                   # pw_base_for)
    pw_factor: float = TREE["pw_factor"]
    ucb_c: float = TREE["ucb_c"]
    bonus_weight: float = TREE["bonus_weight"]
    bonus_equiv: float = TREE["bonus_equiv"]
    fpu: float = TREE["fpu"]
    crit: float | None = None      # widening opens the child with the best rating + crit *
                                   # criticality (None: by board size, crit_for)
    mercy: int | None = None       # a rollout ends, won by the side ahead, once one side has taken
                                   # this many stones and one more beyond the other since the root
                                   # (0: never; None: by board size, mercy_for)
    verbose: bool = False
    # the net (gammago/net.py, gammago/root_search.py): --mode picks who decides moves
    mode: str = "auto"             # auto (net-root from AUTO_NET_MIN_SIZE up when the model
                                   # loads, else rollouts) | rollouts | net-root | net-policy |
                                   # gamma-policy
    model: str = ""                # ONNX model ("" = the shipped one)
    net_lambda: float | None = None  # net-root: weight of the net value against rollouts
                                   # (None: what the net's metadata says, net_lambda, else
                                   # ROOT_LAMBDA; Engine._use_net)
                                   # (0 beat 0.5 by +111 Elo in 19x19 self-play)
    net_symmetry: str = "random"   # random (one of 8 per evaluation) | average (of all 8)
    net_children: int = ROOT_CHILDREN  # net-root: root moves searched (the net's best)
    net_cpuct: float = ROOT_CPUCT  # net-root: PUCT exploration weight of the net priors
                                   # at the root
    policy_temperature: float = 0.0  # net-policy / gamma-policy: 0 argmax, T > 0 sample p^(1/T) (--seed)
    dynkomi: str = "auto"          # linear: in handicap games the search counts an extra komi for
                                   # White that shrinks to 0 over the first moves (Engine.extra_komi);
                                   # auto: linear when taking stones on 19x19, else off
    dynkomi_moves: int = 0         # ... over this many moves (0: by board size, dynkomi_moves_for)

    MODES = ("auto", "rollouts", "net-root", "net-policy", "gamma-policy")

    TREE_FIELDS = ("expand_visits", "pw_init", "pw_base", "pw_factor", "ucb_c",
                   "bonus_weight", "bonus_equiv", "fpu", "crit", "mercy")

    @staticmethod
    def add_arguments(p: argparse.ArgumentParser):
        d = EngineConfig()
        g = p.add_argument_group("engine")
        g.add_argument("--playouts", type=int, default=d.playouts,
                       help="fixed playouts per move, reproducible with --seed (0: use the clock)")
        g.add_argument("--seed", type=int, default=d.seed, help="seed of the playout generators")
        g.add_argument("--threads", type=int, default=d.threads, help="search threads")
        g.add_argument("--move-time", type=float, default=d.move_time,
                       help="seconds per move when the controller gives no time settings "
                            "(always thought in full: time saved would be lost)")
        g.add_argument("--max-memory", type=int, default=d.max_memory, metavar="MB",
                       help="memory for the search trees, all of them together (net-root's child "
                            "trees included): taken in chunks of "
                            f"{_tree.NODES_PER_CHUNK * NODE_BYTES >> 10} KiB as they grow, given "
                            "back as they shrink; once it is used up the trees stop growing (said once "
                            f"on stderr) and the search goes on in them (default: {MAX_MEMORY_MB} "
                            "MB or a quarter of the machine's memory, whichever is less; here "
                            f"{d.max_memory}; at least {MIN_MEMORY_MB}). The rest of the process "
                            "(the net, the boards, Python) comes on top")
        g.add_argument("--max-nodes", type=int, default=d.max_nodes, metavar="N",
                       help=f"expert: the bound of --max-memory in nodes ({NODE_BYTES} bytes "
                            "each) instead of MB (0: from --max-memory)")
        g.add_argument("--margin", type=float, default=d.margin,
                       help="seconds kept in reserve on the clock")
        g.add_argument("--resign", type=float, default=d.resign,
                       help="resign below this win rate (0: never)")
        g.add_argument("--pass-dead-removed", action="store_true",
                       help="after an opponent pass, pass when winning with dead stones removed "
                            "(default: only when winning by Tromp-Taylor as the board stands)")
        g.add_argument("--rules", default=d.rules, metavar="RULES",
                       help="the rules: " + ", ".join(_rules.ENGINE_RULES) + " (or another of "
                            "KataGo's rule sets, " + ", ".join(n for n in _rules.RULE_SETS
                                                              if n not in _rules.ENGINE_RULES)
                            + ", or KataGo's JSON rules object). Area rules count the board "
                            "(stones and territory); japanese counts territory and prisoners, "
                            "no points in seki, and the engine neither fills territory nor dame "
                            "to no purpose and passes once the score is settled. chinese and "
                            "aga give White N or N-1 points for N handicap stones and let the "
                            "game end with dead stones on the board (KataGo's friendlyPassOk); "
                            "the controller may change the rules (kgs-rules, kata-set-rules). "
                            "Default %(default)s: area, the controller's komi, dead stones "
                            "captured before a pass (CGOS's count)")
        g.add_argument("--no-reuse", dest="reuse", action="store_false", help="no tree reuse")
        g.add_argument("--ponder", action="store_true",
                       help="after its own move (genmove), search the position with the opponent "
                            "to move until the next command arrives, and keep the subtree of the "
                            "move the opponent plays for the next genmove (off by default; it "
                            "uses the --threads while the opponent thinks)")
        g.add_argument("--no-early-stop", dest="early_stop", action="store_false",
                       help="always think for the whole budget (by default a search stops "
                            "once the best move cannot be overtaken, where the clock keeps the "
                            "time saved: absolute time, main time, a Canadian period with "
                            "stones to come)")
        g.add_argument("--rollout-light-after", type=int, default=d.rollout_light_after,
                       metavar="N",
                       help="gamma rollouts sample their first N moves from the gammas and go on "
                            "with a light tail: capture the last move's string in atari, save an "
                            "own string it put in atari, else a Mogo shape next to the last move "
                            "(--rollout-tail-shapes), else a random move that is no self-atari "
                            "of a string (0: gammas to the end, refusing the bad self-ataris the "
                            "tail's random moves refuse and passing in seki; default: what a "
                            "--rollout-gammas table was trained for, else by board "
                            f"size: {ROLLOUT_LIGHT_AFTER} below {ROLLOUT_LIGHT_LARGE_SIZE}x"
                            f"{ROLLOUT_LIGHT_LARGE_SIZE}, {ROLLOUT_LIGHT_AFTER_LARGE} from there up)")
        _on_off(g, "--rollout-tail-shapes", d.rollout_tail_shapes,
                "the light tail (--rollout-light-after) answers the last move with one "
                "of Mogo's 3x3 shapes (hane, cuts, edge blocks) around it, when one "
                "matches, before it takes a random point (default: %(default)s)")
        g.add_argument("--rollout-tail-lone", choices=("on", "off"), default=None,
                       help="the light tail's random moves refuse a self-atari of a lone stone "
                            "too (one that is neither a killing shape in the opponent's eye "
                            "space nor a snapback), not only of a string that joins others "
                            f"(default by board size: on below {ROLLOUT_TAIL_LONE_MAX_SIZE}x"
                            f"{ROLLOUT_TAIL_LONE_MAX_SIZE}, off from there up)")
        g.add_argument("--rollout-tail-seki", choices=("on", "off"), default=None,
                       help="the light tail (--rollout-light-after), when its random draws find "
                            "no move they permit, takes a point that is no bad self-atari of a "
                            "string of two or more stones, or passes when there is none, so that "
                            "a seki stands to the end of the playout, as in Pachi's and Fuego's "
                            "playouts (off: any legal point that fills no own eye; default by "
                            f"board size: on below {ROLLOUT_TAIL_SEKI_MAX_SIZE}x"
                            f"{ROLLOUT_TAIL_SEKI_MAX_SIZE}, off from there up)")
        g.add_argument("--rollout-scale", default=d.rollout_scale, metavar="PREFIX=F,...",
                       help="gamma rollouts multiply the gammas of the features whose name starts "
                            "with PREFIX by F (e.g. 'capture:save=3,selfatari=5'; '' for the "
                            "trained gammas as they are; default by board size: "
                            f"'{ROLLOUT_SCALE}' below {ROLLOUT_SCALE_MAX_SIZE}x"
                            f"{ROLLOUT_SCALE_MAX_SIZE}, '' from there up); the tree's priors "
                            "keep the raw gammas")
        g.add_argument("--rollout-gammas", default=d.rollout_gammas, metavar="FILE",
                       help="the gamma rollouts sample with the table of FILE as it is (no "
                            "--rollout-scale unless given; `gammago train-balance` writes such "
                            "files; a shipped table by its name, e.g. "
                            "patterns/rollout19.gamma, from any directory); the "
                            "tree's priors keep the shipped gammas")
        g.add_argument("--rollout", choices=("auto", "light", "gamma"), default=d.rollout,
                       help="rollout policy: gamma-weighted (needs the shipped gammas), light "
                            "(uniform), auto (gamma when a gamma file is shipped)")
        g.add_argument("--prior", choices=("auto", "gamma", "cheap"), default=d.prior,
                       help="ratings that order children for progressive widening")
        t = p.add_argument_group("tree")
        t.add_argument("--expand-visits", type=int, default=d.expand_visits,
                       help="visits before a leaf is expanded (0: by board size, "
                            f"{EXPAND_VISITS_9} on 9x9 .. {EXPAND_VISITS_19} on 19x19)")
        t.add_argument("--pw-init", type=int, default=d.pw_init,
                       help="children open at expansion (progressive widening)")
        t.add_argument("--pw-base", type=float, default=d.pw_base,
                       help="widening schedule t_{n+1} = t_n + BASE * FACTOR**n (default: "
                            f"{PW_BASE:g} below {PW_BASE_MAX_SIZE}x{PW_BASE_MAX_SIZE}, "
                            f"{TREE['pw_base']:g} from there up)")
        t.add_argument("--pw-factor", type=float, default=d.pw_factor)
        t.add_argument("--ucb-c", type=float, default=d.ucb_c,
                       help="weight of the UCB1-Tuned exploration term")
        t.add_argument("--bonus-weight", type=float, default=d.bonus_weight,
                       help="rating bonus WEIGHT * sqrt(EQUIV / (N + EQUIV)) * rating")
        t.add_argument("--bonus-equiv", type=float, default=d.bonus_equiv)
        t.add_argument("--fpu", type=float, default=d.fpu,
                       help="value of an unvisited open child (before its rating bonus)")
        t.add_argument("--crit", type=float, default=d.crit,
                       help="progressive widening opens the unopened child with the highest "
                            "rating + CRIT * criticality of its point (Coulom 2009); 0: rating "
                            f"order (default: {CRIT:g} below {CRIT_MAX_SIZE}x{CRIT_MAX_SIZE}, 0 from there up)")
        t.add_argument("--mercy", type=int, default=d.mercy, metavar="N",
                       help="the mercy rule: a rollout ends as won by the side ahead once one side "
                            "has taken more than N stones beyond the other since the position "
                            "searched, where the komi against it could be overcome (Pachi's and "
                            "libego's playouts have one); 0: off (default: "
                            + ", ".join(f"{v} on {k}x{k}" for k, v in sorted(MERCY.items()))
                            + (", " if MERCY else "") + "off on other sizes)")
        g.add_argument("--verbose", action="store_true", help="log search details to stderr")
        n = p.add_argument_group("net")
        n.add_argument("--mode", choices=EngineConfig.MODES, default=d.mode,
                       help="rollouts: UCT with rollouts only; net-root: net priors (PUCT) and net "
                            "values mixed with rollouts at the root; net-policy / gamma-policy: "
                            "the policy's best move, no search; auto (default): net-root on "
                            f"boards of {AUTO_NET_MIN_SIZE}x{AUTO_NET_MIN_SIZE} and up when the "
                            "model loads, rollouts otherwise")
        n.add_argument("--model", default=d.model, help="ONNX net (default: the shipped model)")
        n.add_argument("--net-lambda", type=float, default=d.net_lambda,
                       help="net-root: root child value = (1-L) rollouts + L net (default: what "
                            "the net's card and metadata say it won with, else 0: the rollouts "
                            "alone; the net's value stands in until a child has rollouts)")
        n.add_argument("--net-symmetry", choices=("random", "average"), default=d.net_symmetry,
                       help="one random symmetry per net evaluation, or the average of all 8")
        n.add_argument("--net-children", type=int, default=d.net_children,
                       help="net-root: root moves searched (the net's best)")
        n.add_argument("--net-cpuct", type=float, default=d.net_cpuct,
                       help="net-root: PUCT weight of the net priors at the root")
        n.add_argument("--policy-temperature", type=float, default=d.policy_temperature,
                       help="net-policy / gamma-policy: 0 plays the policy's best move; T > 0 samples "
                            "moves with probability ~ p^(1/T), seeded by --seed")
        g.add_argument("--dynkomi", choices=("auto", "linear", "off"), default=d.dynkomi,
                       help="linear (Pachi's linear dynamic komi): in a handicap game of H stones "
                            f"the search plays against H x {DYNKOMI_STONE:g} points of extra "
                            "komi for White (less the komi White already has), shrinking "
                            "linearly to 0 over the first --dynkomi-moves moves, so that the "
                            "win rates stay informative; no resignation while it applies. "
                            f"auto: linear on {DYNKOMI_AUTO_MIN_SIZE}x{DYNKOMI_AUTO_MIN_SIZE} "
                            "when the engine takes the stones (its last genmove was for Black), "
                            "off otherwise (default: %(default)s)")
        g.add_argument("--dynkomi-moves", type=int, default=d.dynkomi_moves, metavar="N",
                       help=f"--dynkomi linear: moves to reach 0 (0: {DYNKOMI_MOVES_19} on 19x19, "
                            "other sizes in proportion to their points)")

    @classmethod
    def from_args(cls, args):
        kw = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)}
        for f in dataclasses.fields(cls):          # the on/off options of bool fields
            if f.type in (bool, bool | None) and isinstance(kw.get(f.name), str):
                kw[f.name] = kw[f.name] == "on"
        cfg = cls(**kw)
        cfg.validate()
        return cfg

    def validate(self):
        checks = [
            (self.playouts >= 0, f"--playouts must be >= 0, not {self.playouts}"),
            (self.threads >= 1, f"--threads must be >= 1, not {self.threads}"),
            (self.move_time > 0, f"--move-time must be > 0, not {self.move_time}"),
            (self.max_nodes == 0 or 1000 <= self.max_nodes <= MAX_NODES_LIMIT,
             f"--max-nodes must be 0 or in [1000, {MAX_NODES_LIMIT}], not {self.max_nodes}"),
            (MIN_MEMORY_MB <= self.max_memory <= MAX_NODES_LIMIT * NODE_BYTES >> 20,
             f"--max-memory must be in [{MIN_MEMORY_MB}, {MAX_NODES_LIMIT * NODE_BYTES >> 20}] "
             f"MB, not {self.max_memory}"),
            (0 <= self.resign < 1, f"--resign must be in [0, 1), not {self.resign}"),
            (self.margin >= 0, f"--margin must be >= 0, not {self.margin}"),
            (self.rollout in ("auto", "light", "gamma"), f"--rollout must be auto, light or gamma, not {self.rollout!r}"),
            (self.prior in ("auto", "gamma", "cheap"), f"--prior must be auto, gamma or cheap, not {self.prior!r}"),
            (self.expand_visits >= 0, f"--expand-visits must be >= 0, not {self.expand_visits}"),
            (self.pw_init >= 1, f"--pw-init must be >= 1, not {self.pw_init}"),
            (self.pw_base is None or 0 <= self.pw_base < float("inf"),
             f"--pw-base must be a finite number >= 0, not {self.pw_base}"),
            (self.pw_factor >= 1, f"--pw-factor must be >= 1, not {self.pw_factor}"),
            (self.crit is None or 0 <= self.crit < float("inf"),
             f"--crit must be a finite number >= 0, not {self.crit}"),
            (self.mercy is None or self.mercy >= 0, f"--mercy must be >= 0, not {self.mercy}"),
            (self.mode in self.MODES, f"--mode must be one of {', '.join(self.MODES)}, not {self.mode!r}"),
            (self.net_lambda is None or 0 <= self.net_lambda <= 1,
             f"--net-lambda must be in [0, 1], not {self.net_lambda}"),
            (self.net_children >= 1, f"--net-children must be >= 1, not {self.net_children}"),
            (self.net_cpuct >= 0, f"--net-cpuct must be >= 0, not {self.net_cpuct}"),
            (self.policy_temperature >= 0,
             f"--policy-temperature must be >= 0, not {self.policy_temperature}"),
            (self.dynkomi in ("auto", "linear", "off"),
             f"--dynkomi must be auto, linear or off, not {self.dynkomi!r}"),
            (self.dynkomi_moves >= 0, f"--dynkomi-moves must be >= 0, not {self.dynkomi_moves}"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ValueError(msg)
        if self.rollout_light_after is not None:     # the rollouts' own check, in one place
            from gammago.rollout import check_settings
            check_settings(self.rollout_light_after)
        try:
            _rules.playable(self.rules)
        except ValueError as e:
            raise ValueError(f"--rules: {e}") from None
        from gammago import gammas
        try:
            if self.rollout_scale is not None:
                gammas.parse_scale(self.rollout_scale)
        except ValueError as e:
            raise ValueError(f"--rollout-scale: {e}") from None

    def node_budget(self):
        """Nodes all the trees may hold together: --max-nodes, else --max-memory in whole chunks."""
        if self.max_nodes:
            return self.max_nodes
        chunks = max(1, (self.max_memory << 20) // _tree.CHUNK_BYTES)
        return min(MAX_NODES_LIMIT, chunks * _tree.NODES_PER_CHUNK)

    def tree_params(self, size=19):
        """The tree's parameters for a board size (expand_visits 0, crit and pw_base None
        resolved by the size)."""
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


def rollout_gammas(table, size, scale=None):
    """The gamma table the rollouts sample with on a board of `size`: the trained table with
    the features named by `scale` (--rollout-scale; None: rollout_scale_for(size)) multiplied.
    (A power on the gammas, --rollout-power, was retired: docs/experiments/rollout-power.md.)"""
    from gammago import gammas
    if scale is None:
        scale = rollout_scale_for(size)
    if scale:
        table = gammas.scale(table, scale)
    return table


def rollout_scale_for(size):
    """--rollout-scale unset: the rollout scale for a board size."""
    return ROLLOUT_SCALE if size < ROLLOUT_SCALE_MAX_SIZE else ""


def rollout_tail_lone_for(size):
    """--rollout-tail-lone unset: whether the light tail refuses lone bad self-ataris on a board
    size."""
    return size < ROLLOUT_TAIL_LONE_MAX_SIZE


def rollout_tail_seki_for(size):
    """--rollout-tail-seki unset: whether the light tail lets a seki stand on a board size."""
    return size < ROLLOUT_TAIL_SEKI_MAX_SIZE


def rollout_refuse_for(light_after):
    """Whether the gamma moves refuse the bad self-ataris the tail's random moves refuse (and
    pass rather than break a seki), for rollouts that play light_after gamma moves (0: to the
    end) before the light tail: where the gammas play to the end, +39 (+5 .. +73) over 400 9x9
    games at equal playouts against the same rollouts without it; before a light tail it changed
    nothing (docs/experiments/gammas-to-the-end.md; the option, --rollout-refuse, stands at
    c38f670)."""
    return light_after == 0


def rollout_tail_for(size, cfg=None, table_settings=None):
    """The light tail's rules word (gammago.tail.rules) on a board size: the rules cfg's
    --rollout-tail-* options turn on (the defaults when cfg is None), the lone-stone and seki
    rules by size where they are unset (rollout_tail_lone_for, rollout_tail_seki_for), and the
    gamma moves' refusal where they play to the end (rollout_refuse_for, on the number of gamma
    moves rollout_settings_for resolves)."""
    from gammago import tail
    if cfg is None:
        cfg = EngineConfig()
    lone = rollout_tail_lone_for(size) if cfg.rollout_tail_lone is None else cfg.rollout_tail_lone
    seki = rollout_tail_seki_for(size) if cfg.rollout_tail_seki is None else cfg.rollout_tail_seki
    settings = rollout_settings_for(size, cfg, table_settings)
    on = {"shapes": cfg.rollout_tail_shapes, "lone": lone, "seki": seki,
          "refuse": rollout_refuse_for(settings["rollout_light_after"])}
    return tail.rules(*(name for name, v in on.items() if v))


def rollout_settings_for(size, cfg=None, table_settings=None):
    """The rollout settings a table may name (gammago.gammas.ROLLOUT_SETTINGS' fields:
    rollout_light_after) on a board size, each from the
    first that sets it: cfg's option, the --rollout-gammas table's settings line
    (table_settings, Gammas.settings), the default (by size for the light tail's start)."""
    if cfg is None:
        cfg = EngineConfig()
    table_settings = table_settings or {}
    default = {"rollout_light_after": rollout_light_after_for(size)}
    out = {}
    for field, d in default.items():
        v = getattr(cfg, field)
        out[field] = v if v is not None else table_settings.get(field, d)
    return out


def rollout_plan(size, cfg=None, table_settings=None):
    """How the engine's gamma rollouts play on a board size, past their table: the keyword
    arguments of Search.use_gamma_rollouts and rollout.GammaPolicy (light_after, tail) from
    cfg's options (the defaults when cfg is None), the table's
    settings line (rollout_settings_for) and the rules by size (rollout_tail_for). The engine
    plays it and `gammago bench` times it, so the two cannot drift apart."""
    if cfg is None:
        cfg = EngineConfig()
    settings = rollout_settings_for(size, cfg, table_settings)
    return {"light_after": settings["rollout_light_after"],
            "tail": rollout_tail_for(size, cfg, table_settings)}


def rollout_light_after_for(size):
    """--rollout-light-after unset: the gamma moves of a rollout for a board size."""
    return ROLLOUT_LIGHT_AFTER if size < ROLLOUT_LIGHT_LARGE_SIZE else ROLLOUT_LIGHT_AFTER_LARGE


def crit_for(size):
    """--crit unset: the criticality weight for a board size."""
    return CRIT if size < CRIT_MAX_SIZE else 0.0


def mercy_for(size):
    """--mercy unset: the rollouts' mercy threshold for a board size (0: off)."""
    return MERCY.get(size, 0)


def pw_base_for(size):
    """--pw-base unset: progressive widening's base for a board size."""
    return PW_BASE if size < PW_BASE_MAX_SIZE else float(TREE["pw_base"])


def dynkomi_moves_for(size):
    """--dynkomi-moves 0: the moves over which the extra komi shrinks to 0 on a board size."""
    return max(1, round(DYNKOMI_MOVES_19 * size * size / 361))


def expand_visits_for(size):
    """--expand-visits 0: the expansion threshold for a board size."""
    size = min(max(size, 9), 19)
    return round(EXPAND_VISITS_9 + (EXPAND_VISITS_19 - EXPAND_VISITS_9) * (size - 9) / 10)
