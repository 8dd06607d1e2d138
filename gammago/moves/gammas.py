"""Gamma files: the trained strength of every move feature (gammago.moves.features), as text.

Format (one feature per line after the header, '#' starts a comment line):

    gammago-gammas 1 features=4 nfeat=73094 npat3=7455
    # free-form comments: data, command, date, held-out accuracy
    capture:last/1      18.25   wins=1234 seen=2345
    pat3:0x00205         1.0314 wins=... seen=...
    pat3:default         0.4120 ...

Feature names are gammago.moves.features.level_name(id); a file is refused, with its path and the
reason, if its version or feature layout differs from the code's, if a line does not parse,
or if a non-pattern feature is missing. Patterns not listed (merged as rare in training) take
the gamma of their group's default (`pat3:default`, `pat12:default`).

A table with large spatial patterns (file version 2, `gammago train-mm` writes them) carries its
pattern dictionary in the same file, bound to the gammas by a checksum in the header:

    gammago-gammas 2 features=4 nfeat=73094 npat3=7455 spatial=4-10 dictionary=N:CHECKSUM
    ...
    spatial:17           3.52   wins=... seen=...
    spatial:default      0.61
    [dictionary]
    5c0a93e1f2d4b7a6     (the hash of spatial:1; its low 4 bits are its size)
    ...

The spatial patterns take the diamond's slot (features.pxd G_PAT12): such a table has no pat12
lines. A table whose dictionary is truncated, altered, of another count or checksum, or whose
gammas name a pattern it does not hold, is refused with its path and the reason. Version 1
tables (no dictionary) load as before.

A rollout table (`gammago train-balance` writes them) may carry the rollout settings it was
trained for, and the board size they were trained on, in a comment line that older readers
skip:

    # rollout-settings for 19x19: --rollout-light-after 10

The engine plays such a table (--rollout-gammas) with those settings where its own options
leave them unset (gammago.engine.settings.rollout_settings_for), on that board size (Gammas.settings_on;
a line without ` for NxN` holds on every size); a line with another option, a bad value or a
board that is not square from 5x5 to 19x19 is refused like any other line. A table that names
a retired setting (RETIRED_SETTINGS: the gamma tail, its far factor, the gamma moves' answers)
is refused with the commit whose code still plays it.
"""
import math
import re
import os
from pathlib import Path

import numpy as np

from gammago.moves import features as F
from gammago.moves import spatial as S
from gammago.go.board import SIZES
from gammago import find_shipped, shipped_dir
from gammago.core.retired import RETIRED_AT

MAGIC = "gammago-gammas"
FILE_VERSION = 1
SPATIAL_VERSION = 2          # a table with a spatial dictionary
DICT_SECTION = "[dictionary]"
PAT12 = F.GROUP_NAMES.index("pat12")
# Where the shipped gammas live and which one the engine loads for a board size: there is a
# 19x19 corpus only, so the 19x19 gammas serve every size.
PATTERNS_DIR = Path(os.environ.get("GAMMAGO_PATTERNS") or shipped_dir("patterns"))
DEFAULT_FILES = {}            # size -> file name; sizes not listed use DEFAULT_FILE
DEFAULT_FILE = "gammas19.gamma"
# The rollouts' own gammas: the same features trained with the groups the rollouts do not weigh
# held at 1 (`train-mm --hold-groups rollout`), so that the groups they do weigh carry what the
# others would have (features.pxd); the engine falls back to DEFAULT_FILE without one
ROLLOUT_FILE = "rollout19.gamma"


SETTINGS_PREFIX = "rollout-settings"
# `rollout-settings: OPTIONS` or `rollout-settings for NxN: OPTIONS` (the board size the table
# was trained on, where the settings hold; on another size the engine leaves them aside)
_SETTINGS_LINE = re.compile(r"rollout-settings(?: for (\d+)x(\d+))?:(.*)")
# the options a settings line may carry: the engine option, its EngineConfig field and the
# reader of its value (ValueError with the reason, worded as the engine's check words it)


def _moves(v):
    try:
        n = int(v)
    except ValueError:
        raise ValueError(f"must be a whole number, not {v!r}") from None
    if n < 0:
        raise ValueError(f"must be >= 0, not {n}")
    return n


ROLLOUT_SETTINGS = {"--rollout-light-after": ("rollout_light_after", _moves)}
# the settings train-balance once wrote (--tail-gammas, --fit-tail-far, --answer) for rollouts
# the engine no longer plays (docs/experiments/gamma-tail.md, gammas-to-the-end.md)
RETIRED_SETTINGS = ("--rollout-tail-gammas", "--rollout-tail-far", "--rollout-answer")


def parse_settings(text):
    """The settings of a `rollout-settings:` line's text (after the prefix): {EngineConfig
    field: value}. ValueError names the option or value it cannot take, with the bounds of
    rollout.check_settings, which the engine applies again as it plays them (gammago.engine.settings
    imports this module, not the reverse)."""
    words = text.split()
    if len(words) % 2:
        raise ValueError(f"rollout settings {text.strip()!r}: every option needs one value")
    out = {}
    for opt, value in zip(words[::2], words[1::2]):
        if opt in RETIRED_SETTINGS:
            raise ValueError(f"rollout settings: {opt} was retired; the table was trained for "
                             f"rollouts that the code of commit {RETIRED_AT} plays")
        if opt not in ROLLOUT_SETTINGS:
            raise ValueError(f"rollout settings: {opt!r} is not one of "
                             f"{', '.join(ROLLOUT_SETTINGS)}")
        field, parse = ROLLOUT_SETTINGS[opt]
        if field in out:
            raise ValueError(f"rollout settings: {opt} given twice")
        try:
            out[field] = parse(value)
        except ValueError as e:
            raise ValueError(f"rollout settings: {opt} {e}") from None
    return out


def settings_options(settings):
    """The engine options of a settings dict (parse_settings' inverse), in ROLLOUT_SETTINGS'
    order: '--rollout-light-after 10'."""
    parts = []
    for opt, (field, _parse) in ROLLOUT_SETTINGS.items():
        if field in settings:
            parts.append(f"{opt} {settings[field]}")
    return " ".join(parts)


def settings_comment(settings, size=None):
    """The comment (for save's comments) that records a table's rollout settings, and the board
    size they were trained for when size is given."""
    text = settings_options(settings)
    parse_settings(text)                              # refuses what load would refuse
    if size is None:
        return f"{SETTINGS_PREFIX}: {text}"
    if size not in SIZES:
        raise ValueError(f"rollout settings: no board size {size!r}")
    return f"{SETTINGS_PREFIX} for {size}x{size}: {text}"


def parse_settings_line(comment):
    """(settings, size) of a comment that starts with SETTINGS_PREFIX (size None when the line
    names none). ValueError says what is wrong."""
    m = _SETTINGS_LINE.fullmatch(comment)
    if m is None:
        raise ValueError(f"not '{SETTINGS_PREFIX}: OPTIONS' or "
                         f"'{SETTINGS_PREFIX} for NxN: OPTIONS'")
    size = None
    if m.group(1) is not None:
        size = int(m.group(1))
        if m.group(1) != m.group(2) or size not in SIZES:
            raise ValueError(f"rollout settings: {m.group(1)}x{m.group(2)} is not a square board "
                             f"from {SIZES[0]}x{SIZES[0]} to {SIZES[-1]}x{SIZES[-1]}")
    return parse_settings(m.group(3)), size


class GammaFileError(ValueError):
    def __init__(self, path, reason):
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


def header_line(dictionary=None):
    if dictionary is None:
        return (f"{MAGIC} {FILE_VERSION} features={F.VERSION} nfeat={F.N_FEATURES} "
                f"npat3={F.N_PAT3}")
    return (f"{MAGIC} {SPATIAL_VERSION} features={F.VERSION} nfeat={F.N_FEATURES} "
            f"npat3={F.N_PAT3} spatial={S.SIZES[0]}-{S.SIZES[-1]} "
            f"dictionary={len(dictionary)}:{dictionary.checksum}")


_NAMES = None
_SPATIAL_NAMES = None
_HEADER2 = re.compile(rf"{MAGIC} {SPATIAL_VERSION} (features=\S+ nfeat=\S+ npat3=\S+) "
                      r"spatial=(\d+)-(\d+) dictionary=(\d+):([0-9a-f]{16})")


def _names():
    global _NAMES
    if _NAMES is None:
        _NAMES = {F.level_name(i): i for i in range(F.N_FEATURES)}
    return _NAMES


def level_name(i, spatial=False):
    """F.level_name, with the G_PAT12 slot named spatial:ID in a table with a dictionary."""
    if spatial:
        base = F.GROUP_BASES[PAT12]
        if base < i < base + F.GROUP_SIZES[PAT12]:
            lv = i - base
            return "spatial:default" if lv == F.GROUP_SIZES[PAT12] - 1 else f"spatial:{lv}"
    return F.level_name(i)


def _spatial_names():
    """The names of a dictionary table: the G_PAT12 slot's names replaced by spatial:ID."""
    global _SPATIAL_NAMES
    if _SPATIAL_NAMES is None:
        base = F.GROUP_BASES[PAT12]
        names = {n: i for n, i in _names().items()
                 if not base < i < base + F.GROUP_SIZES[PAT12]}
        for i in range(base + 1, base + F.GROUP_SIZES[PAT12]):
            names[level_name(i, True)] = i
        _SPATIAL_NAMES = names
    return _SPATIAL_NAMES


def absent_ids():
    return [F.GROUP_BASES[g] for g in range(F.N_GROUPS)]


class Gammas:
    """A gamma table: .table is float64[N_FEATURES] (absent ids 1.0, unlisted patterns the
    default's gamma), ready for features.evaluate_game and the rollouts."""

    def __init__(self, table, path=None, comments=(), listed=None, settings=None,
                 settings_size=None, dictionary=None):
        self.table = np.ascontiguousarray(table, dtype=np.float64)
        self.dictionary = dictionary  # the spatial dictionary (spatial.SpatialDict) or None;
        if dictionary is not None:    # the table names it (features.register_dict)
            self.table[F.GROUP_BASES[PAT12]] = F.register_dict(dictionary)
        self.path = path
        self.comments = list(comments)
        self.listed = listed          # bool mask of ids written in the file
        self.settings = dict(settings or {})  # the rollout settings it was trained for
                                              # (parse_settings; {} when it names none)
        self.settings_size = settings_size    # the board size they hold for (None: any)

    def __repr__(self):
        return f"Gammas({self.path or 'in memory'}, {int(self.listed.sum()) if self.listed is not None else '?'} listed)"

    def settings_on(self, size):
        """The rollout settings that hold on a board size: {} where the settings line names
        another size (size None: whatever the line names)."""
        if size is not None and self.settings_size not in (None, size):
            return {}
        return self.settings

    def legal_features(self, board, color=None):
        """features.legal_features of a board read as this table reads it (the diamond's slot
        through its spatial dictionary, if it has one): (vertices, ids)."""
        return F.legal_features(board, color, dictionary=self.dictionary)

    def strength(self, ids):
        """Product of the gammas of each row of global ids (shape (..., N_GROUPS))."""
        return np.prod(self.table[np.asarray(ids)], axis=-1)


def save(path, table, listed, comments=(), wins=None, seen=None, dictionary=None):
    """Write the gammas of the ids where listed is true (absent ids are never written); with a
    spatial dictionary (spatial.SpatialDict), the G_PAT12 slot as its patterns and the
    dictionary after the gammas (file version 2)."""
    path = Path(path)
    spatial = dictionary is not None
    table = np.asarray(table, dtype=np.float64)
    if len(table) != F.N_FEATURES:
        raise ValueError(f"gamma table has {len(table)} entries, features need {F.N_FEATURES}")
    absent = set(absent_ids())
    lines = [header_line(dictionary)]
    for c in comments:
        for part in str(c).splitlines():
            lines.append(f"# {part}")
    for i in range(F.N_FEATURES):
        if i in absent or not listed[i]:
            continue
        g = table[i]
        if not (g > 0 and math.isfinite(g)):
            raise ValueError(f"gamma of {level_name(i, spatial)} is {g}")
        extra = ""
        if wins is not None:
            extra += f" wins={int(wins[i])}"
        if seen is not None:
            extra += f" seen={int(seen[i])}"
        lines.append(f"{level_name(i, spatial):<20s} {g:.6g}{extra}")
    if spatial:
        lines.append(DICT_SECTION)
        lines.extend(f"{int(h):016x}" for h in dictionary.hashes)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, path)


def load(path):
    """Read a gamma file; GammaFileError (a ValueError) names the path and the problem."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as e:
        raise GammaFileError(path, f"cannot read gamma file: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise GammaFileError(path, "not a gamma file (not text)") from None
    lines = text.splitlines()
    if not lines or not lines[0].startswith(MAGIC + " "):
        raise GammaFileError(path, f"not a gamma file (first line should start with '{MAGIC}')")
    want = header_line()
    dictionary = None
    head = lines[0].strip()
    m = _HEADER2.fullmatch(head)
    if m is not None:
        layout = want.split(" ", 2)[2]
        if m.group(1) != layout or (int(m.group(2)), int(m.group(3))) != (S.SIZES[0], S.SIZES[-1]):
            raise GammaFileError(path, f"made for another feature set or pattern sizes: header "
                                       f"'{head}', this code expects '{layout}' and spatial="
                                       f"{S.SIZES[0]}-{S.SIZES[-1]} (retrain with `gammago "
                                       f"train-mm`)")
        lines, dictionary = _read_dictionary(path, lines, int(m.group(4)), m.group(5))
    elif head != want:
        raise GammaFileError(path, f"made for another feature set or file version: header "
                                   f"'{head}', this code expects '{want}' "
                                   f"(retrain with `gammago train-mm`)")
    spatial = dictionary is not None
    names = _spatial_names() if spatial else _names()
    table = np.ones(F.N_FEATURES, dtype=np.float64)
    listed = np.zeros(F.N_FEATURES, dtype=bool)
    comments = []
    settings = settings_size = None
    for n, line in enumerate(lines[1:], start=2):
        s = line.strip()
        if not s:
            continue
        if s.startswith("#"):
            c = s[1:].strip()
            comments.append(c)
            if c.startswith((SETTINGS_PREFIX + ":", SETTINGS_PREFIX + " for ")):
                if settings is not None:
                    raise GammaFileError(path, f"line {n}: a second {SETTINGS_PREFIX} line")
                try:
                    settings, settings_size = parse_settings_line(c)
                except ValueError as e:
                    raise GammaFileError(path, f"line {n}: {e}") from None
            continue
        parts = s.split()
        if len(parts) < 2 or parts[0] not in names:
            raise GammaFileError(path, f"line {n}: unknown feature {parts[0]!r}")
        try:
            g = float(parts[1])
        except ValueError:
            raise GammaFileError(path, f"line {n}: gamma {parts[1]!r} is not a number") from None
        if not (g > 0 and math.isfinite(g)):
            raise GammaFileError(path, f"line {n}: gamma {parts[1]} must be positive and finite")
        i = names[parts[0]]
        if spatial and F.GROUP_BASES[PAT12] + len(dictionary) < i < \
                F.GROUP_BASES[PAT12] + F.GROUP_SIZES[PAT12] - 1:
            raise GammaFileError(path, f"line {n}: {parts[0]} is not in the table's dictionary "
                                       f"of {len(dictionary)} patterns")
        if i in absent_ids():
            raise GammaFileError(path, f"line {n}: {parts[0]} is fixed at 1 and cannot be listed")
        if listed[i]:
            raise GammaFileError(path, f"line {n}: {parts[0]} listed twice")
        table[i] = g
        listed[i] = True
    pattern_groups = {g: default for g, _n, default in F.PATTERN_GROUPS}
    for g in range(F.N_GROUPS):
        base = F.GROUP_BASES[g]
        if g in pattern_groups:
            default = base + pattern_groups[g]
            if not listed[default]:
                raise GammaFileError(path, f"no gamma for {level_name(default, spatial)}")
            pats = np.arange(base + 1, base + F.GROUP_SIZES[g])
            table[pats[~listed[pats]]] = table[default]
            continue
        for i in range(base + 1, base + F.GROUP_SIZES[g]):
            if not listed[i]:
                raise GammaFileError(path, f"no gamma for {F.level_name(i)}")
    return Gammas(table, path=path, comments=comments, listed=listed, settings=settings,
                  settings_size=settings_size, dictionary=dictionary)


def _read_dictionary(path, lines, n, checksum):
    """(the lines before the dictionary section, the SpatialDict it holds), checked against
    the header's count and checksum."""
    try:
        at = lines.index(DICT_SECTION)
    except ValueError:
        raise GammaFileError(path, f"no {DICT_SECTION} section: the header promises a "
                                   f"dictionary of {n} patterns (truncated?)") from None
    body = [x.strip() for x in lines[at + 1:] if x.strip()]
    if len(body) != n:
        raise GammaFileError(path, f"the dictionary holds {len(body)} patterns, the header says "
                                   f"{n} (truncated?)")
    try:
        hashes = np.array([int(x, 16) for x in body], dtype=np.uint64)
    except ValueError:
        raise GammaFileError(path, "a dictionary line is not a hexadecimal hash") from None
    sizes = (hashes & np.uint64(0xF)).astype(np.uint8)
    try:
        d = S.SpatialDict(hashes, sizes)
    except ValueError as e:
        raise GammaFileError(path, f"bad dictionary: {e}") from None
    if d.checksum != checksum:
        raise GammaFileError(path, f"the dictionary does not match the gammas: its checksum is "
                                   f"{d.checksum}, the header says {checksum}")
    return lines[:at], d


def default_path(size=19):
    """The shipped gamma file the engine uses for a board size."""
    return PATTERNS_DIR / DEFAULT_FILES.get(size, DEFAULT_FILE)


def find(path):
    """A gamma file named on the command line: the path as given when it is there, else a
    bare NAME or patterns/NAME among the shipped tables (PATTERNS_DIR, where `pip install .`
    put them), else the path as given (for load to refuse with its name)."""
    return find_shipped(path, PATTERNS_DIR, "patterns")


_cache = {}


def rollout_path(size=19):
    """The shipped gamma file the rollouts use (it may be missing: see ROLLOUT_FILE)."""
    return PATTERNS_DIR / ROLLOUT_FILE


def load_rollout_default(size=19):
    """The shipped rollout gammas, or None when there is no such file (a file that is there but
    does not load raises GammaFileError)."""
    path = rollout_path(size)
    if not path.exists():
        return None
    if path not in _cache:
        _cache[path] = load(path)
    return _cache[path]


def load_rollout_base(size=19):
    """The Gammas the rollouts start from on a board of `size` (before engine.rollout_gammas
    scales them): the rollout gammas when shipped, else the default gammas."""
    trained = load_rollout_default(size)
    return trained if trained is not None else load_default(size)


def rollout_base(size=19):
    """load_rollout_base's table."""
    return load_rollout_base(size).table


def load_default(size=19):
    """The shipped gammas for a board size (cached per file)."""
    path = default_path(size)
    if path not in _cache:
        if not path.exists():
            raise GammaFileError(path, "the shipped gamma file is missing (train one with "
                                       "`gammago train-mm ... --out " + str(path) + "`)")
        _cache[path] = load(path)
    return _cache[path]


def parse_scale(spec):
    """`--rollout-scale` text -> [(name prefix, factor)]: comma-separated `PREFIX=FACTOR`, where
    PREFIX picks the features whose name starts with it ("selfatari", "capture:save",
    "extension:new/2libs") and FACTOR is a finite number > 0. "" -> []."""
    out = []
    for part in (p.strip() for p in str(spec).split(",")):
        if not part:
            continue
        prefix, eq, factor = part.rpartition("=")
        try:
            f = float(factor)
        except ValueError:
            f = float("nan")
        if not eq or not prefix or not (f > 0 and math.isfinite(f)):
            raise ValueError(f"rollout scale {part!r}: expected PREFIX=FACTOR with a factor > 0 "
                             "(e.g. capture:save=3)")
        if not any(name.startswith(prefix) for name in _names()):
            raise ValueError(f"rollout scale {part!r}: no feature name starts with {prefix!r} "
                             f"(groups: {', '.join(F.GROUP_NAMES)})")
        out.append((prefix, f))
    return out


def scale(table, spec):
    """A copy of a gamma table with the gammas of the features that `spec` (parse_scale's text
    or its list) names multiplied by its factors. Used for rollouts: a factor on a feature
    that only some moves have (self-atari, capture, extension) changes how often the rollouts
    play those moves against the others."""
    items = parse_scale(spec) if isinstance(spec, str) else list(spec)
    table = np.array(getattr(table, "table", table), dtype=np.float64)
    if table.shape != (F.N_FEATURES,):
        raise ValueError(f"gamma table has shape {table.shape}, the features need "
                         f"({F.N_FEATURES},)")
    for prefix, factor in items:
        for name, i in _names().items():
            if name.startswith(prefix):
                table[i] *= factor
    return table
