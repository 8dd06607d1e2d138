"""The engine: owns the game, decides moves, manages the clock (interface: ENGINE_API.md).

A move is decided in four short steps, each a method below:
  1. budget   - how long to think (Clock.budget) or how many playouts (--playouts)
  2. search   - UCT on the tree of pyx/tree.pyx, reusing the subtree of the moves since the
                last search, threads working nogil while this thread watches the clock and
                stops early once the best move can no longer be overtaken (where the clock
                keeps the time saved: Clock.bankable)
  3. choose   - the most visited root move
  4. override - resign when hopeless (never before move N*N/4), pass when the game is settled
Every tunable is a named constant below or an EngineConfig field with a command-line flag.
"""
import argparse
import dataclasses
import logging
import math
import threading
import time

import numpy as np

from gammago.board import Board, parse_color, format_vertex
from gammago import tree as _tree
from gammago import net as _net
from gammago import players
from gammago.root_search import ROOT_CHILDREN, ROOT_CPUCT, ROOT_LAMBDA, RootSearch

log = logging.getLogger("gammago")

# --- constants ----------------------------------------------------------------------------
MIN_MOVES_LEFT = 15          # a game always has at least this many own moves left (clock)
MOVES_LEFT_PER_EMPTY = 0.35  # own moves still to come per empty point (clock)
MIN_BUDGET_S = 0.05          # the shortest think we ever plan
MARGIN_SHARE = 0.15          # never keep more than this share of a byo-yomi period in reserve
                             # (a search overruns its budget by ~10 ms: BENCHMARKS "Strength")
POLL_S = 0.01                # how often the watching thread looks at the search
EARLY_STOP_AFTER = 0.1       # consider stopping early only after this share of the budget
RESIGN_MIN_VISITS = 200      # never resign on fewer root visits than this
DEAD_OWNERSHIP = 0.5         # a string is dead when the other colour owns its points this much
SEKI_OWNERSHIP = 0.3         # ... and in seki when its liberties are owned by nobody this much
STATUS_PLAYOUTS = {9: 3000, 13: 2000, 19: 1500}   # playouts behind final_status_list / final_score
MAX_REUSE_MOVES = 8          # moves since the last search root that tree reuse follows
# The trees' memory (--max-memory): every tree of the engine (the rollouts tree, net-root's
# child trees) takes its nodes (32 bytes each) in chunks of 512 KiB from one budget, as it
# grows. 1 M nodes filled halfway through a 5 s move on 2 threads on 9x9 (~240k playouts, ~9
# nodes each, plus the subtree kept from the last move: 2-3.3 M); 2 GB (64 M nodes) leaves room
# for long analysis. BENCHMARKS "The tree's node pool", "Memory".
MAX_MEMORY_MB = 2048         # the default bound: this, or a quarter of the machine's memory
MAX_MEMORY_SHARE = 0.25      # ... when that is less
MIN_MEMORY_MB = 16           # the smallest bound (each of net-root's 21 trees holds 512 KiB)
NODE_BYTES = 32
MAX_NODES_LIMIT = 1_000_000_000   # node indices are int32
EXPAND_VISITS_9 = 8          # visits before a leaf is expanded on 9x9 (BENCHMARKS: 8 beat 3 and 40)
EXPAND_VISITS_19 = 40        # ... and on 19x19 (Ray's value); sizes between interpolate
RAVE = False                 # RAVE/AMAF in the tree by default (--rave; BENCHMARKS "Search")
RAVE_EQUIV = 1000.0          # RAVE schedule beta = na / (na + n + n * na / RAVE_EQUIV)
LGRF = False                 # Last-Good-Reply-with-Forgetting in the rollouts (--lgrf; BENCHMARKS)
CRIT = 2.0                   # criticality weight in the widening order below CRIT_MAX_SIZE
                             # (--crit; 9x9 self-play at 2,000 playouts: 2 vs 0 +96 Elo, 4 vs 2
                             # -104, 1 vs 2 -42; BENCHMARKS "Search settings")
CRIT_PROBE = 1e-6            # criticality weight that gathers it without changing the order
CRIT_MAX_SIZE = 13           # ... and 0 (rating order) from this board size up: 13x13 net-root
                             # at 1,000 playouts scored crit 2 vs 0 37.5% (-89 Elo, 40 games)
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
PRIOR_FULL = False           # --prior-full: the tree's gamma prior is the rollouts' table
                             # (patterns/rollout19.gamma: no diamond, no read groups; ladders
                             # reach the prior through the reader's adjustment), not the full
                             # prediction gammas. The diamond lifts move prediction from 31.0%
                             # to 33.5% but rates rare tactical shapes low: in two test
                             # positions a capture that decides the game fell level with a
                             # quiet move (BENCHMARKS "Tactics"); 9x9 self-play with the full
                             # gammas as prior against version 3's, 2,000 playouts: 51.0%
ROLLOUT_NAKADE = 0.0         # --rollout-nakade: off. 9x9 self-play at 2,000 playouts, 1 vs 0:
                             # 53.8% over 200 games (+26, not significant), for ~9% more
                             # instructions a playout (BENCHMARKS "Rollouts: quality")
ROLLOUT_LIGHT_AFTER = 5      # gamma rollouts follow the light tail's rules after this many
                             # moves (--rollout-light-after) below ROLLOUT_LIGHT_LARGE_SIZE; vs GNU
                             # Go at 1 s (BENCHMARKS "Rollouts: quality"), with the tail's
                             # shapes: N = 5 91.4% (280 games), N = 10 90.0% (300), +29 Elo, not
                             # significant, for ~10% fewer instructions in the search (callgrind,
                             # without the shapes); without the shapes N = 10 86.5%, N = 20
                             # 85.0%, N = 5 84.0%, gammas to the end 76.5%
ROLLOUT_LIGHT_LARGE_SIZE = 13  # ... and from this size up:
ROLLOUT_LIGHT_AFTER_LARGE = 10  # 19x19 self-play at 0.5 s a move (net-root, --net-lambda 0),
                             # N = 10 against the gammas to the end: 32-1, +602 Elo (2.5x the playouts
                             # and a better evaluation); 13x13 at 0.5 s: 55.0% (60 games, +35,
                             # not significant) (BENCHMARKS "Net-root: the rollouts' light tail")
ROLLOUT_POWER = 1.0          # rollouts sample with gamma ** P; flat MC found no P < 1 better
                             # (0.3 worse; BENCHMARKS "Rollouts: quality")
AUTO_NET_MIN_SIZE = 13       # --mode auto: net-root from this board size up, rollouts below
                             # (net-root over rollouts at equal time: 19x19 +585 Elo, 13x13
                             # +232, 9x9 +0; vs GNU Go on 9x9 60.0% against 71.5-75.5%;
                             # BENCHMARKS "Net")
DYNKOMI_STONE = 7.0          # --dynkomi linear: points a handicap stone is worth (Pachi's value)
DYNKOMI_MOVES_19 = 200       # ... moves over which the extra komi shrinks to 0 on 19x19 (Pachi's);
                             # other sizes in proportion to the points (9x9: 45, 13x13: 94)
_PRIOR_WARNED = False        # the "no gammas" warning is given once per process


def default_max_memory():
    """--max-memory's default in MB: MAX_MEMORY_MB, or MAX_MEMORY_SHARE of the physical memory
    when that is less."""
    import os
    try:
        phys = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return MAX_MEMORY_MB
    return max(MIN_MEMORY_MB, min(MAX_MEMORY_MB, int(phys * MAX_MEMORY_SHARE) >> 20))


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
    reuse: bool = True             # keep the subtree of the moves played since the last search
    ponder: bool = False           # after its own move, search on the opponent's time until the
                                   # next command (Engine.ponder_start)
    early_stop: bool = True        # stop once the best move cannot be overtaken (when the
                                   # time saved can be used later: Clock.bankable)
    rollout: str = "auto"          # rollout policy: light (uniform) | gamma (pyx/rollout, the
                                   # shipped gammas) | auto (gamma when gammas are shipped)
    prior: str = "auto"            # child ratings: gamma (shipped gammas) | cheap | auto (gamma
                                   # when a gamma file is shipped, else cheap)
    rollout_power: float = ROLLOUT_POWER  # gamma rollouts use gamma ** this (priors: raw gammas)
    rollout_nakade: float = ROLLOUT_NAKADE  # gamma rollouts play the vital point of a
                                   # killable eye shape the last move closed with this probability
    rollout_light_after: int | None = None  # gamma rollouts: moves sampled from the gammas
                                   # before the rest of the playout follows the light tail's
                                   # rules (0: all; None: by board size, rollout_light_after_for)
    prior_full: bool = PRIOR_FULL  # the gamma prior is the full prediction table (diamond,
                                   # read groups), not the rollouts' table
    rollout_tail_shapes: bool = ROLLOUT_TAIL_SHAPES  # the light tail tries Mogo's 3x3 shapes
                                   # around the last move before a random point
    rollout_scale: str | None = None  # gamma rollouts: features' gammas times factors
                                   # ("capture:save=3,...", gammas.parse_scale; priors: raw;
                                   # None: by board size, rollout_scale_for)
    # tree parameters (pyx/tree.pyx DEFAULTS)
    expand_visits: int = 0         # 0: by board size (expand_visits_for)
    pw_init: int = 1
    pw_base: float = 40.0
    pw_factor: float = 1.4
    ucb_c: float = 1.0
    bonus_weight: float = 0.35
    bonus_equiv: float = 1000.0
    fpu: float = 1.0
    rave: bool = RAVE              # blend AMAF values (all moves as first) into selection
    rave_equiv: float = RAVE_EQUIV
    lgrf: bool = LGRF              # rollouts try the last good reply (LGRF-2) before the policy
    crit: float | None = None      # widening opens the child with the best rating + crit *
                                   # criticality (None: by board size, crit_for)
    rating: str = "log"            # prior -> rating in [0, 1]: log (log-scaled, 4 decades below
                                   # the best sibling), max (prior / best sibling's), share
                                   # (prior / siblings' sum); log beat max by +288 Elo (BENCHMARKS)
    verbose: bool = False
    # the net (gammago/net.py): --mode picks who decides moves
    mode: str = "auto"             # auto (net-root from AUTO_NET_MIN_SIZE up when the model
                                   # loads, else rollouts) | rollouts | net-root | net-policy |
                                   # gamma-policy
    model: str = ""                # ONNX model ("" = the shipped one)
    net_lambda: float = ROOT_LAMBDA  # net-root: weight of the net value against rollouts
                                   # (0 beat 0.5 by +111 Elo in 19x19 self-play)
    net_symmetry: str = "random"   # random (one of 8 per evaluation) | average (of all 8)
    net_children: int = ROOT_CHILDREN  # net-root: root moves searched (the net's best)
    net_cpuct: float = ROOT_CPUCT  # net-root: PUCT exploration weight of the net priors
                                   # at the root
    net_reply_priors: bool = False  # net-root: the net's policy (not the gammas) orders and rates
                                   # the replies to each root move (the root children's children)
    policy_temperature: float = 0.0  # net-policy / gamma-policy: 0 argmax, T > 0 sample p^(1/T) (--seed)
    dynkomi: str = "off"           # linear: in handicap games the search counts an extra komi for
                                   # White that shrinks to 0 over the first moves (Engine.extra_komi)
    dynkomi_moves: int = 0         # ... over this many moves (0: by board size, dynkomi_moves_for)

    MODES = ("auto", "rollouts", "net-root", "net-policy", "gamma-policy")

    TREE_FIELDS = ("expand_visits", "pw_init", "pw_base", "pw_factor", "ucb_c",
                   "bonus_weight", "bonus_equiv", "fpu", "rating", "rave", "rave_equiv", "lgrf", "crit")

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
                            "trees included): taken in chunks of 512 KiB as they grow, given back "
                            "as they shrink; once it is used up the trees stop growing (said once "
                            f"on stderr) and the search goes on in them (default: {MAX_MEMORY_MB} "
                            "MB or a quarter of the machine's memory, whichever is less; here "
                            f"{d.max_memory}; at least {MIN_MEMORY_MB}). The rest of the process "
                            "(the net, the boards, Python) comes on top")
        g.add_argument("--max-nodes", type=int, default=d.max_nodes, metavar="N",
                       help="expert: the bound of --max-memory in nodes (32 bytes each) instead "
                            "of MB (0: from --max-memory)")
        g.add_argument("--margin", type=float, default=d.margin,
                       help="seconds kept in reserve on the clock")
        g.add_argument("--resign", type=float, default=d.resign,
                       help="resign below this win rate (0: never)")
        g.add_argument("--pass-dead-removed", action="store_true",
                       help="after an opponent pass, pass when winning with dead stones removed "
                            "(default: only when winning by Tromp-Taylor as the board stands)")
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
        g.add_argument("--rollout-power", type=float, default=d.rollout_power,
                       help="gamma rollouts sample moves by gamma ** P (below 1: flatter); "
                            "the tree's priors keep the raw gammas")
        g.add_argument("--rollout-nakade", type=float, default=d.rollout_nakade, metavar="P",
                       help="gamma rollouts play the vital point of a killable eye shape (three, "
                            "pyramid four, bulky or crossed five, rabbity six) that the last move "
                            "closed with probability P (0: never)")
        g.add_argument("--rollout-light-after", type=int, default=d.rollout_light_after,
                       metavar="N",
                       help="gamma rollouts sample their first N moves from the gammas and go on "
                            "with a light tail: capture the last move's string in atari, save an "
                            "own string it put in atari, else a Mogo shape next to the last move "
                            "(--rollout-tail-shapes), else a random move that is no self-atari "
                            "of a string (0: gammas to the end; default by board "
                            f"size: {ROLLOUT_LIGHT_AFTER} below {ROLLOUT_LIGHT_LARGE_SIZE}x"
                            f"{ROLLOUT_LIGHT_LARGE_SIZE}, {ROLLOUT_LIGHT_AFTER_LARGE} from there up)")
        g.add_argument("--rollout-tail-shapes", choices=("on", "off"),
                       default="on" if d.rollout_tail_shapes else "off",
                       help="the light tail (--rollout-light-after) answers the last move with one "
                            "of Mogo's 3x3 shapes (hane, cuts, edge blocks) around it, when one "
                            "matches, before it takes a random point (default: %(default)s)")
        g.add_argument("--rollout-scale", default=d.rollout_scale, metavar="PREFIX=F,...",
                       help="gamma rollouts multiply the gammas of the features whose name starts "
                            "with PREFIX by F (e.g. 'capture:save=3,selfatari=5'; '' for the "
                            "trained gammas as they are; default by board size: "
                            f"'{ROLLOUT_SCALE}' below {ROLLOUT_SCALE_MAX_SIZE}x"
                            f"{ROLLOUT_SCALE_MAX_SIZE}, '' from there up); the tree's priors "
                            "keep the raw gammas")
        g.add_argument("--rollout", choices=("auto", "light", "gamma"), default=d.rollout,
                       help="rollout policy: gamma-weighted (needs the shipped gammas), light "
                            "(uniform), auto (gamma when a gamma file is shipped)")
        g.add_argument("--prior", choices=("auto", "gamma", "cheap"), default=d.prior,
                       help="ratings that order children for progressive widening")
        g.add_argument("--prior-full", choices=("on", "off"),
                       default="on" if d.prior_full else "off",
                       help="the gamma prior uses the full prediction gammas (12-point diamonds "
                            "and the tactical reader's groups), which predict strong moves "
                            "better but rate rare tactical shapes low; off: the rollouts' "
                            "gammas (default off)")
        t = p.add_argument_group("tree")
        t.add_argument("--expand-visits", type=int, default=d.expand_visits,
                       help="visits before a leaf is expanded (0: by board size, "
                            f"{EXPAND_VISITS_9} on 9x9 .. {EXPAND_VISITS_19} on 19x19)")
        t.add_argument("--pw-init", type=int, default=d.pw_init,
                       help="children open at expansion (progressive widening)")
        t.add_argument("--pw-base", type=float, default=d.pw_base,
                       help="widening schedule t_{n+1} = t_n + BASE * FACTOR**n")
        t.add_argument("--pw-factor", type=float, default=d.pw_factor)
        t.add_argument("--ucb-c", type=float, default=d.ucb_c,
                       help="weight of the UCB1-Tuned exploration term")
        t.add_argument("--bonus-weight", type=float, default=d.bonus_weight,
                       help="rating bonus WEIGHT * sqrt(EQUIV / (N + EQUIV)) * rating")
        t.add_argument("--bonus-equiv", type=float, default=d.bonus_equiv)
        t.add_argument("--fpu", type=float, default=d.fpu,
                       help="value of an unvisited open child (before its rating bonus)")
        t.add_argument("--rave", choices=("on", "off"), default="on" if d.rave else "off",
                       help="RAVE: AMAF statistics blended with the UCT value")
        t.add_argument("--rave-equiv", type=float, default=d.rave_equiv,
                       help="RAVE schedule beta = na / (na + n + n * na / EQUIV)")
        t.add_argument("--lgrf", choices=("on", "off"), default="on" if d.lgrf else "off",
                       help="rollouts play the last good reply to the previous move(s) "
                            "(Last-Good-Reply-with-Forgetting, LGRF-2) before the policy's move")
        t.add_argument("--crit", type=float, default=d.crit,
                       help="progressive widening opens the unopened child with the highest "
                            "rating + CRIT * criticality of its point (Coulom 2009); 0: rating "
                            f"order (default: {CRIT:g} below {CRIT_MAX_SIZE}x{CRIT_MAX_SIZE}, 0 from there up)")
        t.add_argument("--rating", choices=("max", "share", "log"), default=d.rating,
                       help="how a child's prior becomes the rating in the bonus: prior / best "
                            "sibling's, prior / sum of the siblings', or log-scaled")
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
                       help="net-root: root child value = (1-L) rollouts + L net (default 0: the "
                            "rollouts alone; the net's value stands in until a child has rollouts)")
        n.add_argument("--net-symmetry", choices=("random", "average"), default=d.net_symmetry,
                       help="one random symmetry per net evaluation, or the average of all 8")
        n.add_argument("--net-children", type=int, default=d.net_children,
                       help="net-root: root moves searched (the net's best)")
        n.add_argument("--net-cpuct", type=float, default=d.net_cpuct,
                       help="net-root: PUCT weight of the net priors at the root")
        n.add_argument("--net-reply-priors", action=argparse.BooleanOptionalAction,
                       default=d.net_reply_priors,
                       help="net-root: the net's policy (from the evaluation of each root move "
                            "that gives its value) orders and rates the replies to it in its tree, "
                            "instead of the gammas")
        n.add_argument("--policy-temperature", type=float, default=d.policy_temperature,
                       help="net-policy / gamma-policy: 0 plays the policy's best move; T > 0 samples "
                            "moves with probability ~ p^(1/T), seeded by --seed")
        g.add_argument("--dynkomi", choices=("linear", "off"), default=d.dynkomi,
                       help="linear (Pachi's linear dynamic komi): in a handicap game of H stones "
                            f"the search plays against H x {DYNKOMI_STONE:g} points of extra "
                            "komi for White (less the komi White already has), shrinking "
                            "linearly to 0 over the first --dynkomi-moves moves, so that the "
                            "win rates stay informative; no resignation while it applies "
                            "(default: %(default)s)")
        g.add_argument("--dynkomi-moves", type=int, default=d.dynkomi_moves, metavar="N",
                       help=f"--dynkomi linear: moves to reach 0 (0: {DYNKOMI_MOVES_19} on 19x19, "
                            "other sizes in proportion to their points)")

    @classmethod
    def from_args(cls, args):
        kw = {f.name: getattr(args, f.name) for f in dataclasses.fields(cls) if hasattr(args, f.name)}
        for k in ("rave", "lgrf", "rollout_tail_shapes", "prior_full"):
            if isinstance(kw.get(k), str):
                kw[k] = kw[k] == "on"
        cfg = cls(**kw)
        cfg.validate()
        return cfg

    def validate(self):
        checks = [
            (self.playouts >= 0, f"--playouts must be >= 0, not {self.playouts}"),
            (0 <= self.rollout_power < float("inf"), f"--rollout-power must be a finite number >= 0, not {self.rollout_power}"),
            (0 <= self.rollout_nakade <= 1, f"--rollout-nakade must be in [0, 1], not {self.rollout_nakade}"),
            (self.rollout_light_after is None or self.rollout_light_after >= 0,
             f"--rollout-light-after must be >= 0, not {self.rollout_light_after}"),
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
            (self.pw_factor >= 1, f"--pw-factor must be >= 1, not {self.pw_factor}"),
            (self.rave_equiv > 0, f"--rave-equiv must be > 0, not {self.rave_equiv}"),
            (self.crit is None or 0 <= self.crit < float("inf"),
             f"--crit must be a finite number >= 0, not {self.crit}"),
            (self.rating in ("max", "share", "log"), f"--rating must be max, share or log, not {self.rating!r}"),
            (self.mode in self.MODES, f"--mode must be one of {', '.join(self.MODES)}, not {self.mode!r}"),
            (0 <= self.net_lambda <= 1, f"--net-lambda must be in [0, 1], not {self.net_lambda}"),
            (self.net_children >= 1, f"--net-children must be >= 1, not {self.net_children}"),
            (self.net_cpuct >= 0, f"--net-cpuct must be >= 0, not {self.net_cpuct}"),
            (self.policy_temperature >= 0,
             f"--policy-temperature must be >= 0, not {self.policy_temperature}"),
            (self.dynkomi in ("linear", "off"), f"--dynkomi must be linear or off, not {self.dynkomi!r}"),
            (self.dynkomi_moves >= 0, f"--dynkomi-moves must be >= 0, not {self.dynkomi_moves}"),
        ]
        for ok, msg in checks:
            if not ok:
                raise ValueError(msg)
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
        """The tree's parameters for a board size (expand_visits 0 and crit None resolved by
        the size)."""
        p = {k: getattr(self, k) for k in self.TREE_FIELDS}
        if not p["expand_visits"]:
            p["expand_visits"] = expand_visits_for(size)
        if p["crit"] is None:
            p["crit"] = crit_for(size)
        return p


def rollout_gammas(table, size, power=ROLLOUT_POWER, scale=None):
    """The gamma table the rollouts sample with on a board of `size`: the trained table raised
    to `power` (--rollout-power), then the features named by `scale` (--rollout-scale; None:
    rollout_scale_for(size)) multiplied."""
    from gammago import gammas
    if scale is None:
        scale = rollout_scale_for(size)
    if power != 1.0:
        table = gammas.soften(table, power)
    if scale:
        table = gammas.scale(table, scale)
    return table


def rollout_scale_for(size):
    """--rollout-scale unset: the rollout scale for a board size."""
    return ROLLOUT_SCALE if size < ROLLOUT_SCALE_MAX_SIZE else ""


def rollout_light_after_for(size):
    """--rollout-light-after unset: the gamma moves of a rollout for a board size."""
    return ROLLOUT_LIGHT_AFTER if size < ROLLOUT_LIGHT_LARGE_SIZE else ROLLOUT_LIGHT_AFTER_LARGE


def crit_for(size):
    """--crit unset: the criticality weight for a board size."""
    return CRIT if size < CRIT_MAX_SIZE else 0.0


def dynkomi_moves_for(size):
    """--dynkomi-moves 0: the moves over which the extra komi shrinks to 0 on a board size."""
    return max(1, round(DYNKOMI_MOVES_19 * size * size / 361))


def expand_visits_for(size):
    """--expand-visits 0: the expansion threshold for a board size."""
    size = min(max(size, 9), 19)
    return round(EXPAND_VISITS_9 + (EXPAND_VISITS_19 - EXPAND_VISITS_9) * (size - 9) / 10)


# --- the clock ------------------------------------------------------------------------------
class Clock:
    """One side's clock: kind none | absolute | canadian | byoyomi (Japanese)."""

    def __init__(self):
        self.set("none")

    def set(self, kind, main=0.0, byo=0.0, stones=0, periods=0):
        self.kind = kind
        self.main, self.byo, self.stones, self.periods = float(main), float(byo), int(stones), int(periods)
        self.main_left = self.main
        self.byo_left = self.byo          # seconds left in the current period (canadian/byoyomi)
        self.stones_left = self.stones    # canadian: stones still to play in this period
        self.periods_left = self.periods  # byoyomi: periods left
        self.in_byo = self.main <= 0 and kind in ("canadian", "byoyomi")

    def time_left(self, seconds, stones):
        """GTP time_left: stones 0 = in main time; else in byo-yomi (canadian: stones to play in
        the period; Japanese byo-yomi as KGS sends it: periods left)."""
        if self.kind == "none":
            return
        if stones == 0 or self.kind == "absolute":
            self.main_left = seconds
            self.in_byo = False
        else:
            self.in_byo = True
            self.main_left = 0.0
            self.byo_left = seconds
            if self.kind == "canadian":
                self.stones_left = stones
            else:
                self.periods_left = stones

    def bankable(self, budget):
        """How much of this move's budget (seconds) is time that, if not used now, can be used
        on a later move: early stop may end the search only within it (Engine._run_search).
          none      (--move-time, or no time limit): 0, every move gets the same time anyway
          absolute  all of it: what is saved stays on the clock
          canadian  in a period: all of it while other stones of the period are to come (they
                    share its time), 0 for its last stone (the period restarts full); in main
                    time: all of it, but for the part past the main time left when the budget
                    spills into a one-stone period
          byoyomi   (Japanese, KGS `byoyomi`): 0 in the periods (each restarts full after a
                    move); in main time only the main time left (the budget past it is paid by
                    a period, which restarts full)"""
        if self.kind == "none":
            return 0.0
        if self.kind == "absolute":
            return budget
        if self.in_byo:
            if self.kind == "canadian" and self.stones_left > 1:
                return budget
            return 0.0
        if self.kind == "canadian" and self.stones > 1:
            return budget
        return min(budget, max(0.0, self.main_left))

    def budget(self, empty_points, margin, default):
        """Seconds to think on this move (the reserve already taken off)."""
        if self.kind == "none":
            return default
        moves_left = max(MIN_MOVES_LEFT, MOVES_LEFT_PER_EMPTY * empty_points)
        per_stone = {"canadian": self.byo / max(1, self.stones), "byoyomi": self.byo}.get(self.kind, 0.0)
        if self.in_byo and self.kind != "absolute":
            left = self.byo_left / max(1, self.stones_left) if self.kind == "canadian" else self.byo_left
            return max(MIN_BUDGET_S, left - min(margin, MARGIN_SHARE * left))
        t = self.main_left / moves_left
        if per_stone > 0:
            # main time, then byo-yomi: never plan less than a byo-yomi move's worth
            return max(MIN_BUDGET_S, t, per_stone - min(margin, MARGIN_SHARE * per_stone))
        return max(MIN_BUDGET_S, min(t, self.main_left - min(margin, MARGIN_SHARE * self.main_left)))

    def spend(self, seconds):
        """Keep our own account of the clock between time_left commands."""
        if self.kind == "none":
            return
        if not self.in_byo:
            self.main_left -= seconds
            if self.main_left >= 0 or self.kind == "absolute":
                return
            seconds = -self.main_left
            self.main_left = 0.0
            self.in_byo = True
            self.byo_left = self.byo
            self.stones_left = self.stones
        if self.kind == "canadian":
            self.byo_left -= seconds
            self.stones_left -= 1
            if self.stones_left <= 0:
                self.byo_left = self.byo
                self.stones_left = self.stones
        elif self.kind == "byoyomi":
            if seconds > self.byo_left:
                self.periods_left -= 1
            self.byo_left = self.byo


# --- the engine ------------------------------------------------------------------------------
class Engine:
    name = "gammago"

    def __init__(self, config=None):
        from gammago import __version__
        self.version = __version__
        self.config = config or EngineConfig()
        self.config.validate()
        self.clocks = {1: Clock(), 2: Clock()}
        # one memory budget for every tree of the engine (--max-memory)
        self.nodes = self.config.node_budget()
        self.budget = _tree.NodeBudget(self.nodes)
        self._full_said = False
        self.search = _tree.Search(self.nodes, seed=self.config.seed, budget=self.budget,
                                   **self.config.tree_params())
        self._tree_search = self.search   # rollouts-only search (--mode auto switches by size)
        self._root_search = None          # net-root search, once the net is loaded
        self._net_failed = None           # --mode auto: why the net did not load
        self.net = None
        # --policy-temperature > 0: one seeded stream of policy draws per engine
        self._policy_rng = np.random.default_rng(self.config.seed)
        if self.config.mode in ("net-root", "net-policy"):
            self._use_net()
        self.last_owner = None      # ownership of the last search, +1 Black .. -1 White
        self.last_infos = []
        self._ponder = None         # (thread, stop event) while pondering
        self.pondered = 0           # playouts of the last pondering
        self.new_game(19, 7.5)

    def _use_net(self):
        """Load the net (NetError, a ValueError, names the file and the problem); in net-root
        mode the search becomes gammago.root_search.RootSearch: PUCT on net priors at the root, one UCT
        tree per root child below it (--mode auto keeps it for the boards that use it)."""
        cfg = self.config
        self.net = _net.load(cfg.model or None, symmetry=cfg.net_symmetry, seed=cfg.seed,
                             threads=cfg.threads)
        if cfg.mode in ("net-root", "auto"):
            # the child trees draw on the engine's one budget, each allowed all of it
            self._root_search = RootSearch(
                self.net, lambda: _tree.Search(self.nodes, seed=cfg.seed, budget=self.budget,
                                               **cfg.tree_params(self.board.size)),
                lam=cfg.net_lambda, children=cfg.net_children, c_puct=cfg.net_cpuct,
                reply_priors=cfg.net_reply_priors,
                max_nodes=self.nodes)
            if cfg.mode == "net-root":
                self.search = self._root_search

    def _policy_move(self, c, emit=None):
        """--mode net-policy / gamma-policy: the policy's favourite legal move, no search."""
        b = self.board.copy()
        b.to_move = c
        t = self.config.policy_temperature
        rng = self._policy_rng if t > 0 else None
        if self.config.mode == "net-policy":
            move = players.net_policy_move(self.net, b, t, rng)
        else:
            move = players.gamma_policy_move(b, temperature=t, rng=rng)
        if emit is not None:
            emit([])
        return move

    @property
    def mode(self):
        """The mode deciding moves now (--mode auto resolved for the board size)."""
        if self.config.mode != "auto":
            return self.config.mode
        return "net-root" if self.search is self._root_search else "rollouts"

    def _auto_search(self, size):
        """--mode auto: net-root from AUTO_NET_MIN_SIZE up (the net loaded on first need). A
        --model that does not load is refused (NetError names the file and the problem); when
        the shipped model does not load, that is said once and the engine plays rollouts only."""
        want_net = size >= AUTO_NET_MIN_SIZE and self._net_failed is None
        if want_net and self._root_search is None:
            try:
                self._use_net()
            except ValueError as exc:
                if self.config.model:
                    raise
                self._net_failed = str(exc)
                log.warning("--mode auto: %s; rollouts only", exc)
                want_net = False
        new = self._root_search if want_net else self._tree_search
        if new is not self.search:
            log.info("mode %s on %dx%d", "net-root" if want_net else "rollouts", size, size)
        self.search = new

    # --- pondering ---
    def ponder_start(self):
        """--ponder: search the current position, the side to move (the opponent, after our
        genmove) to play, on a background thread until ponder_stop(). The tree is kept as after
        any search: when the opponent's move comes, the next search keeps its subtree (_root).
        Not in the policy modes, not once the game is over (two passes), not twice at once."""
        if (not self.config.ponder or self._ponder is not None
                or self.config.mode in ("net-policy", "gamma-policy") or self.board.passes >= 2):
            return False
        c = parse_color(self.board.to_move)
        stop = threading.Event()

        def run():
            try:
                self._run_search(c, budget=None, no_pass=False, stop=stop, ponder=True)
            except Exception:          # pondering must never take the engine down
                log.exception("pondering failed")

        th = threading.Thread(target=run, name="gammago-ponder", daemon=True)
        self._ponder = (th, stop)
        th.start()
        return True

    def ponder_stop(self):
        """End pondering, if under way (every command that reads or changes the game calls it
        first); returns the playouts it ran."""
        if self._ponder is None:
            return 0
        th, stop = self._ponder
        t0 = time.perf_counter()
        stop.set()
        th.join()
        self._ponder = None
        self.pondered = self.search.playouts
        log.info("pondered: %d playouts (%d root visits, %d nodes), stopped in %.0f ms",
                 self.pondered, self.search.root_visits, self.search.nodes,
                 1000 * (time.perf_counter() - t0))
        return self.pondered

    @property
    def pondering(self):
        return self._ponder is not None

    # --- game state ---
    def new_game(self, size, komi):
        self.ponder_stop()
        board = Board(int(size), float(komi))   # ValueError for a bad size, state kept
        if self.config.mode == "auto":
            self._auto_search(board.size)
        self.board = board
        self.handicap = 0               # handicap stones of this game (setup_stones)
        # the rollouts-only tree is kept ready for the size even when the net-root search plays:
        # final_status_list and final_score run on it (_status_owner)
        for s in self._searches():
            if hasattr(s, "configure"):
                s.configure(**self.config.tree_params(self.board.size))
        self._set_prior(int(size))
        self._forget()

    def _set_prior(self, size):
        """Gammas order the children (--prior) and drive the rollouts (--rollout) when a gamma
        file is shipped; otherwise the cheap rating and light rollouts."""
        cfg = self.config
        table = None
        if cfg.prior != "cheap" or cfg.rollout != "light":
            from gammago import gammas
            try:
                table = gammas.load_default(size).table
            except (OSError, ValueError) as exc:
                for flag in ("prior", "rollout"):
                    if getattr(cfg, flag) == "gamma":
                        raise ValueError(f"--{flag} gamma: {exc}")
                global _PRIOR_WARNED
                if not _PRIOR_WARNED:
                    log.warning("no gammas (%s): cheap child ratings and light rollouts", exc)
                    _PRIOR_WARNED = True
        rollout_table = None
        if table is not None and cfg.rollout != "light":
            from gammago import gammas
            rollout_table = rollout_gammas(gammas.rollout_base(size), size, cfg.rollout_power,
                                           cfg.rollout_scale)
        light_after = cfg.rollout_light_after
        if light_after is None:
            light_after = rollout_light_after_for(size)
        prior_table = None
        if table is not None and cfg.prior != "cheap":
            prior_table = table if cfg.prior_full else gammas.rollout_base(size)
        for s in self._searches():
            s.use_gammas(prior_table)
            s.use_gamma_rollouts(rollout_table, cfg.rollout_nakade, light_after,
                                 cfg.rollout_tail_shapes)

    def _searches(self):
        """The search that plays, and the rollouts-only tree when that is another one."""
        return [self.search] + ([self._tree_search] if self._tree_search is not self.search else [])

    def _forget(self):
        self._tree_moves = None
        self.last_owner = None
        self.last_infos = []

    def set_komi(self, komi):
        self.ponder_stop()
        self.board.komi = float(komi)
        self._forget()

    def play(self, color, vertex):
        self.ponder_stop()
        self.board.play(vertex, parse_color(color))

    def undo(self):
        self.ponder_stop()
        self.board.undo()
        self._forget()

    def setup_stones(self, black, white):
        self.ponder_stop()
        b = self.board.copy()
        b.setup(black, white)
        self.board = b
        self._forget()
        # black stones alone on an empty board: a handicap (for --dynkomi)
        self.handicap = len(black) if len(black) >= 2 and not white and not b.moves \
            and len(b.stones("b")) == len(black) else 0

    def extra_komi(self):
        """--dynkomi linear, as Pachi's uct/dynkomi.c: in a game of H >= 2 handicap stones the
        search counts H * DYNKOMI_STONE + 0.5 - komi more komi for White at the first move,
        shrinking linearly to 0 at move --dynkomi-moves; 0 otherwise. Scores, passing and
        final_score keep the real komi."""
        if self.config.dynkomi != "linear" or self.handicap < 2:
            return 0.0
        n = self.config.dynkomi_moves or dynkomi_moves_for(self.board.size)
        played = len(self.board.moves)
        if played >= n:
            return 0.0
        base = max(0.0, self.handicap * DYNKOMI_STONE + 0.5 - self.board.komi)
        return base * (n - played) / n

    def place_free_handicap(self, n):
        size = self.board.size
        n = int(n)
        if self.board.moves or self.board.stones("b") or self.board.stones("w"):
            raise ValueError("board not empty")
        if n < 2 or n > size * size - 1:
            raise ValueError(f"invalid number of handicap stones {n}")
        pts = _handicap_points(size, n)
        self.setup_stones(pts, [])
        self.board.to_move = "w"
        return pts

    # --- clock ---
    def time_settings(self, main_s, byo_s, byo_stones):
        main_s, byo_s, byo_stones = float(main_s), float(byo_s), int(byo_stones)
        if main_s < 0 or byo_s < 0 or byo_stones < 0:
            raise ValueError("time_settings: negative value")
        for c in self.clocks.values():
            if byo_s > 0 and byo_stones == 0:
                c.set("none")                      # GTP: no time limit
            elif byo_s == 0:
                c.set("absolute", main_s)
            else:
                c.set("canadian", main_s, byo_s, byo_stones)

    def kgs_time_settings(self, kind, *values):
        kind = str(kind).lower()
        need = {"none": 0, "absolute": 1, "byoyomi": 3, "canadian": 3}
        if kind not in need:
            raise ValueError(f"kgs-time_settings: unknown kind {kind!r}")
        try:
            vals = [float(v) for v in values]
        except ValueError:
            raise ValueError(f"kgs-time_settings: bad value in {' '.join(map(str, values))}")
        if len(vals) != need[kind] or any(v < 0 for v in vals):
            raise ValueError(f"kgs-time_settings {kind} needs {need[kind]} non-negative values")
        for c in self.clocks.values():
            if kind == "none":
                c.set("none")
            elif kind == "absolute":
                c.set("absolute", vals[0])
            elif kind == "byoyomi":
                c.set("byoyomi", vals[0], vals[1], 1, int(vals[2]))
            else:
                c.set("canadian", vals[0], vals[1], int(vals[2]))

    def time_left(self, color, seconds, stones):
        self.clocks[parse_color(color)].time_left(float(seconds), int(stones))

    # --- moves ---
    def genmove(self, color, cleanup=False):
        move = self._decide(color, cleanup=cleanup)
        if move != "resign":
            self.board.play(move, parse_color(color))
        return move

    def reg_genmove(self, color):
        return self._decide(color, allow_resign=False, spend_clock=False)

    def genmove_analyze(self, color, interval_s, emit):
        move = self._decide(color, emit=emit, interval_s=interval_s)
        if move != "resign":
            self.board.play(move, parse_color(color))
        return move

    def analyze(self, color, interval_s, stop, emit):
        self.ponder_stop()
        c = parse_color(color)
        self._run_search(c, budget=None, no_pass=False, emit=emit, interval_s=interval_s, stop=stop)
        emit(self._infos(c))

    def ownership(self):
        """Mean final ownership over the playouts of the current (or last) search, +1 Black ..
        -1 White, [row][col] with row 0 = line 1; None before any search."""
        try:
            return self.search.ownership()
        except (ValueError, AttributeError):
            return self.last_owner

    def criticality(self, color, seconds):
        """Criticality of each point ([row][col], row 0 = line 1; tree.Search.criticality) from
        a search of `seconds` on the rollouts-only tree with `color` to move. The tree gathers
        it only with a criticality weight > 0: with --crit 0 (the default from 13x13 up) it
        searches with CRIT_PROBE, which leaves the widening order the rating order but for ties."""
        self.ponder_stop()
        c = parse_color(color)
        b = self.board.copy()
        b.to_move = c
        search = self._tree_search
        search.set_root(b, None)
        if search is self.search:
            self._tree_moves = None
        kept = dict(search.params)
        if kept["crit"] <= 0:
            search.configure(crit=CRIT_PROBE)
        try:
            search.run(self.config.threads, 0, float(seconds), False, self.config.seed)
        finally:
            search.configure(**kept)
        crit = search.criticality()
        search.clear()
        return crit

    def _decide(self, color, cleanup=False, allow_resign=True, emit=None, interval_s=1.0,
                spend_clock=True):
        t0 = time.perf_counter()
        pondered = self.pondering
        self.ponder_stop()
        c = parse_color(color)
        if self.config.mode in ("net-policy", "gamma-policy"):
            return self._policy_move(c, emit)
        clock = self.clocks[c]
        empty = int((self.board.to_array() == 0).sum())
        budget = clock.budget(empty, self.config.margin, self.config.move_time)
        if pondered:
            # the time pondering took to stop is this move's (the clock runs since the command)
            budget = max(MIN_BUDGET_S, budget - (time.perf_counter() - t0))
        self.last_budget = budget       # seconds the search of this move may take (tests read it)
        self._run_search(c, budget=budget, no_pass=cleanup, emit=emit, interval_s=interval_s,
                         early_stop_s=self.early_stop_window(clock, budget))
        infos = self._infos(c)
        move = self._override(c, infos, cleanup, allow_resign)
        if emit is not None:
            emit(infos)
        took = time.perf_counter() - t0
        if spend_clock:
            clock.spend(took)
        best = infos[0] if infos else None
        extra = self.extra_komi()
        log.info("%s %s: winrate %.3f%s, %d playouts (%d root visits, %d nodes%s), %.2f of %.2f s",
                 "B" if c == 1 else "W", move, best["winrate"] if best else float("nan"),
                 f" (extra komi {extra:.1f})" if extra else "",
                 self.search.playouts, self.search.root_visits, self.search.nodes,
                 ", POOL FULL" if self.search.full else "", took, budget)
        return move

    # --- search ---
    def _root(self, c):
        """The position to search (the board, with c to move) and reuse the old subtree."""
        b = self.board
        extra = self.extra_komi()
        if extra:
            b = b.copy()
            b.komi += extra            # the search plays against it (--dynkomi)
        if b.to_move != ("b" if c == 1 else "w"):
            b = b.copy() if b is self.board else b
            b.to_move = c
            self.search.set_root(b, None)
            self._tree_moves = None
            return b
        moves = list(b.moves)
        keep = None
        old = self._tree_moves
        if self.config.reuse and old is not None and moves[:len(old)] == old \
                and len(moves) - len(old) <= MAX_REUSE_MOVES:
            keep = [b.point(v) for _, v in moves[len(old):]]
        self.search.set_root(b, keep)
        self._tree_moves = moves
        return b

    def early_stop_window(self, clock, budget):
        """Seconds from the start of a search of `budget` seconds during which it may stop early
        (once the best move can no longer be overtaken): the part of the budget whose saving the
        clock keeps for later moves (Clock.bankable); 0 with --no-early-stop or --playouts."""
        if not self.config.early_stop or self.config.playouts:
            return 0.0
        return clock.bankable(budget)

    def _run_search(self, c, budget, no_pass, emit=None, interval_s=1.0, stop=None,
                    early_stop_s=0.0, ponder=False):
        """Search from the current position for c. budget: seconds (None: until stop is set);
        early_stop_s: within this many seconds of the start, stop once the best move can no
        longer be overtaken in the budget (early_stop_window); ponder: stop when the trees
        are full (pondering on would only spend CPU)."""
        cfg = self.config
        self._root(c)
        fixed = cfg.playouts if budget is not None else 0
        seconds = budget if (budget is not None and not fixed) else 0
        seed = cfg.seed * 1_000_003 + len(self.board.moves)
        self.search.prepare(cfg.threads, fixed, seconds, no_pass, seed)
        workers = [threading.Thread(target=self.search.work, args=(i,), daemon=True)
                   for i in range(cfg.threads)]
        t0 = time.perf_counter()
        for w in workers:
            w.start()
        next_emit = t0 + interval_s
        warned = False
        try:
            while any(w.is_alive() for w in workers):
                workers[0].join(POLL_S)
                now = time.perf_counter()
                if stop is not None and stop.is_set():
                    self.search.stop()
                if emit is not None and now >= next_emit:
                    emit(self._infos(c))
                    next_emit = now + interval_s
                if self.search.full and not warned:
                    self._say_full()
                    warned = True
                if ponder and self.search.full:
                    self.search.stop()
                if (seconds and now - t0 < early_stop_s
                        and self._settled_early(now - t0, seconds)):
                    self.search.stop()
        finally:
            self.search.stop()
            for w in workers:
                w.join()
        self.last_owner = self.search.ownership()

    def _say_full(self):
        """The trees used up their memory: a warning the first time, a log line after."""
        text = ("the search trees hold their whole --max-memory (%d MB, %d nodes): they stop "
                "growing, the search goes on in them")
        args = (self.budget.used_bytes >> 20, self.budget.used_nodes)
        if not self._full_said:
            log.warning(text, *args)
            self._full_said = True
        else:
            log.debug(text, *args)

    def _settled_early(self, elapsed, seconds):
        """True when the runner-up cannot catch the best move in the time left."""
        if elapsed < EARLY_STOP_AFTER * seconds:
            return False
        visits = sorted((ch[1] for ch in self.search.children()), reverse=True)
        if len(visits) < 2:
            return True
        rate = self.search.playouts / max(elapsed, 1e-3)
        return visits[0] - visits[1] > rate * (seconds - elapsed)

    def _infos(self, c):
        """Root moves best first as lz-analyze dicts (winrate for c)."""
        b = self.board
        kids = self.search.children()
        total_rating = sum(ch[3] for ch in kids) or 1.0
        out = []
        for move, visits, winrate, rating in kids:
            if visits <= 0:
                continue
            n = visits
            lcb = max(0.0, winrate - 1.96 * math.sqrt(max(winrate * (1 - winrate), 1e-4) / n))
            out.append({"move": b.vertex(move), "visits": visits, "winrate": winrate,
                        "prior": rating / total_rating, "lcb": lcb, "order": 0,
                        "pv": [b.vertex(p) for p in self.search.pv((move,), 16)]})
        out.sort(key=lambda d: (-d["visits"], -d["winrate"]))
        for i, d in enumerate(out):
            d["order"] = i
        self.last_infos = out
        return out

    # --- resignation and passing ---
    def _override(self, c, infos, cleanup, allow_resign):
        if not infos:
            return "pass"
        best = infos[0]
        n = self.board.size
        if (allow_resign and self.config.resign > 0 and best["winrate"] < self.config.resign
                and not self.extra_komi()
                and len(self.board.moves) >= n * n // 4 and self.search.root_visits >= RESIGN_MIN_VISITS):
            return "resign"
        if self._should_pass(c, best, cleanup):
            return "pass"
        if best["move"] == "pass" and cleanup:
            other = [d for d in infos if d["move"] != "pass"]
            return other[0]["move"] if other else "pass"
        return best["move"]

    def _should_pass(self, c, best, cleanup):
        b = self.board
        sign = 1 if c == 1 else -1
        if cleanup:
            # pass only once no dead opponent stone is left and the game is over
            dead, _ = self._dead_strings(self.last_owner)
            opp = "w" if c == 1 else "b"
            if any(b.color_at(v) == opp for v in dead):
                return False
            return best["move"] == "pass" or b.passes > 0 or self._settled()
        if best["move"] == "pass":
            return True
        if b.passes > 0:   # the opponent passed: passing ends the game
            if sign * b.score() > 0:
                return True
            if self.config.pass_dead_removed and sign * self._score_dead_removed(self.last_owner) > 0:
                return True
            return False
        # settled: only dame left and we win by Tromp-Taylor even if the opponent takes them all
        return self._settled() and sign * self._score_dame_lost(c) > 0

    def _settled(self):
        """Every point is pass-alive (Benson) for one side or a dame (an empty point that
        touches both colours' areas)."""
        b = self.board
        alive = b.pass_alive()
        area = b.area()
        for v, owner in area.items():
            if v in alive:
                continue
            if owner != "." or b.color_at(v) != ".":
                return False
        return True

    def _score_dame_lost(self, c):
        """Tromp-Taylor score with every neutral point given to the opponent of c."""
        area = self.board.area()
        dame = sum(1 for o in area.values() if o == ".")
        return self.board.score() + (dame if c == 2 else -dame)

    # --- life and death, scoring ---
    def _status_owner(self):
        """Ownership from a fresh search of STATUS_PLAYOUTS playouts on the current position,
        always on the rollouts-only tree (tree.Search), also when the net-root search plays."""
        self.ponder_stop()
        b = self.board
        n = STATUS_PLAYOUTS.get(b.size, 2000)
        search = self._tree_search
        search.set_root(b, None)
        if search is self.search:
            self._tree_moves = None
        # Nobody may pass before the rollout: after an opponent pass, passing can win as the
        # board stands, and a playout ended by two passes leaves dead stones on the board. So
        # the root may not pass, and no node below it is expanded (flat Monte-Carlo on the
        # root's moves; rollouts play on until no move is left).
        kept = dict(search.params)
        search.configure(expand_visits=1 << 30)
        try:
            search.run(self.config.threads, n, 0, True, self.config.seed)
        finally:
            search.configure(**kept)
        owner = search.ownership()
        search.clear()
        return owner

    def _dead_strings(self, owner=None):
        """(dead vertices, seki vertices) from ownership +1 Black .. -1 White."""
        b = self.board
        if owner is None:
            owner = self._status_owner()
        alive_pa = b.pass_alive()
        dead, seki, seen = [], [], set()
        for col in ("b", "w"):
            sign = 1 if col == "b" else -1
            for v in b.stones(col):
                if v in seen:
                    continue
                string = b.string(v)
                seen.update(string)
                if alive_pa.get(v) == col:
                    continue
                own = sign * float(np.mean([owner[_rc(b, s)] for s in string]))
                if own < -DEAD_OWNERSHIP:
                    dead.extend(string)
                elif own < DEAD_OWNERSHIP:
                    libs = b.liberties(v)
                    if len(libs) <= 2 and all(abs(owner[_rc(b, x)]) < SEKI_OWNERSHIP for x in libs):
                        seki.extend(string)
        return dead, seki

    def _score_dead_removed(self, owner=None):
        b = self.board
        dead, _ = self._dead_strings(owner)
        grid = b.to_array().astype(np.int8)
        for v in dead:
            grid[_rc(b, v)] = 0
        return _area_score(grid, b.komi)

    def final_score(self):
        s = self._score_dead_removed()
        if s == 0:
            return "0"
        return f"B+{s:g}" if s > 0 else f"W+{-s:g}"

    def final_status_list(self, status):
        status = str(status).lower()
        if status not in ("alive", "dead", "seki"):
            raise ValueError(f"final_status_list: unknown status {status!r}")
        b = self.board
        dead, seki = self._dead_strings()
        if status == "dead":
            return sorted(dead)
        if status == "seki":
            return sorted(seki)
        gone = set(dead) | set(seki)
        return sorted(v for col in ("b", "w") for v in b.stones(col) if v not in gone)


# --- helpers ---------------------------------------------------------------------------------
def _rc(board, vertex):
    p = board.point(vertex)
    W = board.size + 2
    return p // W - 1, p % W - 1


def _area_score(grid, komi):
    """Tromp-Taylor area score of a colour grid (0 empty, 1 B, 2 W): Black - White - komi."""
    n = grid.shape[0]
    score = int((grid == 1).sum()) - int((grid == 2).sum())
    seen = np.zeros_like(grid, dtype=bool)
    for r0 in range(n):
        for c0 in range(n):
            if grid[r0, c0] or seen[r0, c0]:
                continue
            stack, region, reach = [(r0, c0)], 0, 0
            seen[r0, c0] = True
            while stack:
                r, c = stack.pop()
                region += 1
                for rr, cc in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                    if 0 <= rr < n and 0 <= cc < n:
                        g = grid[rr, cc]
                        if g == 0 and not seen[rr, cc]:
                            seen[rr, cc] = True
                            stack.append((rr, cc))
                        elif g:
                            reach |= int(g)
            if reach == 1:
                score += region
            elif reach == 2:
                score -= region
    return score - komi


def _handicap_points(size, n):
    """Star points first (GTP fixed-handicap layout), then points far from every stone."""
    e = 2 if size < 13 else 3
    lo, mid, hi = e, size // 2, size - 1 - e
    stars = [(lo, hi), (hi, lo), (lo, lo), (hi, hi)]
    if size % 2 and size >= 9:
        stars += [(mid, lo), (mid, hi), (lo, mid), (hi, mid)]
    if n <= len(stars) + (1 if size % 2 and size >= 9 else 0):
        if size % 2 and size >= 9 and n in (5, 7, 9):
            chosen = stars[:n - 1] + [(mid, mid)]
        else:
            chosen = stars[:n]
    else:
        chosen = list(stars) + ([(mid, mid)] if size % 2 and size >= 9 else [])
        while len(chosen) < n:
            best, bestd = None, -1
            for r in range(size):
                for c in range(size):
                    if (r, c) in chosen:
                        continue
                    d = min(abs(r - r2) + abs(c - c2) for r2, c2 in chosen)
                    if d > bestd:
                        best, bestd = (r, c), d
            chosen.append(best)
    return [format_vertex(rc) for rc in chosen]
