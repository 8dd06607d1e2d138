"""The rollouts' settings on a board size: which gamma table they sample with (scaled by size),
how many gamma moves before the light tail, and the tail's rules word. The engine plays
rollout_plan and `gammago bench` times it, so the two cannot drift apart.

A cfg is the engine's settings (gammago.engine.settings.EngineConfig) or anything with its
rollout_* fields; None means the defaults (DEFAULTS, the same values EngineConfig's fields
default to). The measurements behind each constant: the note named, under docs/notebook/.
"""
import types

from gammago.moves import gammas
from gammago.rollout import tail

ROLLOUT_SCALE = "capture:save=3,extension:new=3"   # below 13x13, these features' gammas x3:
                                                   # ataris answered 3x as readily (rollout-scale.md)
ROLLOUT_SCALE_MAX_SIZE = 13  # ... the trained gammas from here up: no gain on 13x13 (same note)
ROLLOUT_TAIL_SHAPES = True   # the tail plays Mogo's 3x3 shapes by the last move (tail-shapes.md)
ROLLOUT_TAIL_LONE_MAX_SIZE = 13  # a lone stone's self-atari refused below: 9x9 only (tail-lone.md)
ROLLOUT_TAIL_SEKI_MAX_SIZE = 13  # the tail lets a seki stand below this size (tail-seki.md)
ROLLOUT_LIGHT_AFTER = 5      # gamma moves before the light tail below 13x13: level with 10, cheaper
ROLLOUT_LIGHT_LARGE_SIZE = 13  # ... (light-tail.md); from this size up:
ROLLOUT_LIGHT_AFTER_LARGE = 10  # ... 10 gamma moves, then the tail (light-tail.md)

# What EngineConfig() holds for the fields read here (None: auto, by size or by the table).
DEFAULTS = types.SimpleNamespace(rollout_light_after=None, rollout_tail_shapes=ROLLOUT_TAIL_SHAPES,
                                 rollout_tail_lone=None, rollout_tail_seki=None)


def rollout_gammas(table, size, scale=None):
    """The gamma table the rollouts sample with on a board of `size`: the trained table with
    the features named by `scale` (rollout_scale; None: rollout_scale_for(size)) multiplied."""
    if scale is None:
        scale = rollout_scale_for(size)
    if scale:
        table = gammas.scale(table, scale)
    return table


def rollout_scale_for(size):
    """rollout_scale auto: the rollout scale for a board size."""
    return ROLLOUT_SCALE if size < ROLLOUT_SCALE_MAX_SIZE else ""


def rollout_tail_lone_for(size):
    """rollout_tail_lone auto: whether the light tail refuses lone bad self-ataris."""
    return size < ROLLOUT_TAIL_LONE_MAX_SIZE


def rollout_tail_seki_for(size):
    """rollout_tail_seki auto: whether the light tail lets a seki stand."""
    return size < ROLLOUT_TAIL_SEKI_MAX_SIZE


def rollout_refuse_for(light_after):
    """Whether the gamma moves refuse the bad self-ataris the tail's random moves refuse (and
    pass rather than break a seki): where they play to the end (light_after 0), where it won;
    before a light tail it changed nothing (gammas-to-the-end.md)."""
    return light_after == 0


def rollout_tail_for(size, cfg=None, table_settings=None):
    """The light tail's rules word (gammago.rollout.tail.rules) on a board size: the rules cfg's
    rollout_tail_* settings turn on (the defaults when cfg is None), the lone-stone and seki
    rules by size where they are auto, and the gamma moves' refusal where they play to the end
    (rollout_refuse_for, on the gamma moves rollout_settings_for resolves)."""
    if cfg is None:
        cfg = DEFAULTS
    lone = rollout_tail_lone_for(size) if cfg.rollout_tail_lone is None else cfg.rollout_tail_lone
    seki = rollout_tail_seki_for(size) if cfg.rollout_tail_seki is None else cfg.rollout_tail_seki
    settings = rollout_settings_for(size, cfg, table_settings)
    on = {"shapes": cfg.rollout_tail_shapes, "lone": lone, "seki": seki,
          "refuse": rollout_refuse_for(settings["rollout_light_after"])}
    return tail.rules(*(name for name, v in on.items() if v))


def rollout_settings_for(size, cfg=None, table_settings=None):
    """The rollout settings a table may name (gammas.ROLLOUT_SETTINGS' fields:
    rollout_light_after) on a board size, each from the first that sets it: cfg's setting,
    the rollout_gammas table's settings line (table_settings, Gammas.settings), the default
    by size."""
    if cfg is None:
        cfg = DEFAULTS
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
    cfg (the defaults when None), the table's settings line and the rules by size. The engine
    plays it and `gammago bench` times it, so the two cannot drift apart."""
    if cfg is None:
        cfg = DEFAULTS
    settings = rollout_settings_for(size, cfg, table_settings)
    return {"light_after": settings["rollout_light_after"],
            "tail": rollout_tail_for(size, cfg, table_settings)}


def rollout_light_after_for(size):
    """rollout_light_after auto: the gamma moves of a rollout for a board size."""
    return ROLLOUT_LIGHT_AFTER if size < ROLLOUT_LIGHT_LARGE_SIZE else ROLLOUT_LIGHT_AFTER_LARGE
