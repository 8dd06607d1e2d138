"""The rules of the game: KataGo's rule sets by name, parsed from a name or a JSON object, and
what each field makes the engine do.

A rule set is KataGo's dictionary (docs/GTP_Extensions.md, kata-get-rules):
    {"ko": "POSITIONAL", "scoring": "AREA", "tax": "NONE", "suicide": false,
     "hasButton": false, "whiteHandicapBonus": "0", "friendlyPassOk": false}
What the engine plays under each field:
  scoring   AREA: the board's Tromp-Taylor count (stones + territory), as before.
            TERRITORY: territory + prisoners (the dead stones removed at the end count as
            prisoners), Japanese style (scoring.territory_score); the search keeps its
            area-scored rollouts with Pachi's parity komi (search_komi_shift) and the engine
            neither fills its own territory, the opponent's nor dame to no purpose, and passes
            once the score is settled (Engine._territory_move).
  tax       NONE or SEKI (no points in seki) under territory scoring; NONE under area scoring
            (tax ALL and a seki tax under area scoring are not supported).
  whiteHandicapBonus  0, N or N-1 points for White in a game with N >= 2 handicap stones:
            added to White's score (final_score) and to the komi the search plays against.
  friendlyPassOk      true: after the opponent's pass the engine passes once it wins with the
            dead stones removed (as --pass-dead-removed), false: only once it wins as the board
            stands (area) -- under territory scoring dead stones always come off by agreement.
  ko, suicide  recorded and reported as set; the engine's own moves always keep positional
            superko and never commit suicide, which is legal under every ko rule and both
            suicide rules (the opponent's moves are checked the same way).
  hasButton  not supported (refused).
"""
import dataclasses
import json

# KataGo's rule sets (cpp/game/rules.cpp, parseRules), by name.
RULE_SETS = {
    "tromp-taylor": dict(ko="POSITIONAL", scoring="AREA", tax="NONE", suicide=True,
                         hasButton=False, whiteHandicapBonus="0", friendlyPassOk=False),
    "chinese": dict(ko="SIMPLE", scoring="AREA", tax="NONE", suicide=False, hasButton=False,
                    whiteHandicapBonus="N", friendlyPassOk=True),
    "chinese-ogs": dict(ko="POSITIONAL", scoring="AREA", tax="NONE", suicide=False,
                        hasButton=False, whiteHandicapBonus="N", friendlyPassOk=True),
    "chinese-kgs": dict(ko="POSITIONAL", scoring="AREA", tax="NONE", suicide=False,
                        hasButton=False, whiteHandicapBonus="N", friendlyPassOk=True),
    "japanese": dict(ko="SIMPLE", scoring="TERRITORY", tax="SEKI", suicide=False,
                     hasButton=False, whiteHandicapBonus="0", friendlyPassOk=False),
    "korean": dict(ko="SIMPLE", scoring="TERRITORY", tax="SEKI", suicide=False,
                   hasButton=False, whiteHandicapBonus="0", friendlyPassOk=False),
    "aga": dict(ko="SITUATIONAL", scoring="AREA", tax="NONE", suicide=False, hasButton=False,
                whiteHandicapBonus="N-1", friendlyPassOk=True),
    "bga": dict(ko="SITUATIONAL", scoring="AREA", tax="NONE", suicide=False, hasButton=False,
                whiteHandicapBonus="N-1", friendlyPassOk=True),
    "new-zealand": dict(ko="SITUATIONAL", scoring="AREA", tax="NONE", suicide=True,
                        hasButton=False, whiteHandicapBonus="0", friendlyPassOk=True),
    "stone-scoring": dict(ko="SIMPLE", scoring="AREA", tax="ALL", suicide=False,
                          hasButton=False, whiteHandicapBonus="0", friendlyPassOk=True),
}
RULE_ALIASES = {
    "tt": "tromp-taylor", "tromp_taylor": "tromp-taylor", "tromp taylor": "tromp-taylor",
    "tromptaylor": "tromp-taylor", "cn": "chinese", "chinese_ogs": "chinese-ogs",
    "chineseogs": "chinese-ogs", "chinese_kgs": "chinese-kgs", "chinesekgs": "chinese-kgs",
    "jp": "japanese", "ko": "korean", "french": "bga", "nz": "new-zealand",
    "new_zealand": "new-zealand", "new zealand": "new-zealand", "newzealand": "new-zealand",
    "stone_scoring": "stone-scoring", "stone scoring": "stone-scoring",
    "stonescoring": "stone-scoring",
}
# kgsGtp's kgs-rules names (chinese | aga | japanese | new_zealand): KGS's Chinese rules are
# KataGo's chinese-kgs (positional superko)
KGS_RULES = {"chinese": "chinese-kgs", "aga": "aga", "japanese": "japanese",
             "new_zealand": "new-zealand"}
RULE_VALUES = {"ko": ("SIMPLE", "POSITIONAL", "SITUATIONAL", "SPIGHT"),
               "scoring": ("AREA", "TERRITORY"), "tax": ("NONE", "SEKI", "ALL"),
               "whiteHandicapBonus": ("0", "N", "N-1")}
RULE_FLAGS = ("suicide", "hasButton", "friendlyPassOk")
FIELDS = ("ko", "scoring", "tax", "suicide", "hasButton", "whiteHandicapBonus", "friendlyPassOk")
ENGINE_RULES = ("tromp-taylor", "chinese", "japanese", "aga")   # --rules' main names
DEFAULT = "tromp-taylor"     # --rules unset: the engine as it always played (area, positional
                             # superko, the controller's komi, dead stones captured before a pass)


class RulesError(ValueError):
    """Rules that are unknown or that the engine does not play."""


@dataclasses.dataclass(frozen=True)
class Rules:
    ko: str = "POSITIONAL"
    scoring: str = "AREA"
    tax: str = "NONE"
    suicide: bool = True
    hasButton: bool = False
    whiteHandicapBonus: str = "0"
    friendlyPassOk: bool = False
    name: str = DEFAULT           # the set's name, or "custom" for a JSON object

    @property
    def territory(self):
        return self.scoring == "TERRITORY"

    def as_dict(self):
        """KataGo's rules object (kata-get-rules): its seven fields."""
        return {f: getattr(self, f) for f in FIELDS}

    def json(self):
        return json.dumps(self.as_dict(), separators=(",", ":"))

    def unsupported(self):
        """What of these rules the engine does not play ([] when it plays them all)."""
        out = []
        if self.hasButton:
            out.append("the button")
        if self.tax == "ALL":
            out.append("the tax on all groups' eyes (stone scoring)")
        elif self.tax == "SEKI" and not self.territory:
            out.append("the seki tax under area scoring")
        return out

    def handicap_bonus(self, stones):
        """Points White gets for `stones` handicap stones (0 below 2)."""
        if stones < 2 or self.whiteHandicapBonus == "0":
            return 0
        return stones if self.whiteHandicapBonus == "N" else stones - 1


def canonical_name(name):
    """A rule set's name from any of KataGo's spellings (any case), or None."""
    text = str(name).strip().lower()
    text = RULE_ALIASES.get(text, text)
    return text if text in RULE_SETS else None


def named(name):
    """The rule set of a name or shorthand; RulesError naming it when unknown."""
    key = canonical_name(name)
    if key is None:
        raise RulesError(f"unknown rules {name}")
    return Rules(name=key, **RULE_SETS[key])


def from_object(obj):
    """A JSON object of KataGo's fields -> Rules. Fields left out default as KataGo's do
    (Tromp-Taylor's, the tax by the scoring); an unknown field or value raises RulesError."""
    if not isinstance(obj, dict):
        raise RulesError("rules must be a name or a JSON object")
    values = dict(RULE_SETS["tromp-taylor"])
    for key, v in obj.items():
        if key == "score":
            key = "scoring"
        if key in RULE_VALUES:
            v = v.upper() if isinstance(v, str) else v
            if v not in RULE_VALUES[key]:
                raise RulesError(f"rules {key} must be one of {', '.join(RULE_VALUES[key])}, "
                                 f"not {obj.get(key, v)!r}")
        elif key in RULE_FLAGS:
            if not isinstance(v, bool):
                raise RulesError(f"rules {key} must be true or false, not {v!r}")
        else:
            raise RulesError(f"unknown rules field {key!r}")
        values[key] = v
    if "tax" not in obj:
        values["tax"] = "SEKI" if values["scoring"] == "TERRITORY" else "NONE"
    return Rules(name="custom", **values)


def parse(value):
    """Rules from a name, a JSON object, or the text of one (kata-set-rules' argument)."""
    if isinstance(value, Rules):
        return value
    if isinstance(value, str) and value.strip().startswith("{"):
        try:
            value = json.loads(value)
        except ValueError as e:
            raise RulesError(f"could not parse rules {value!r}: {e}") from None
    if isinstance(value, dict):
        return from_object(value)
    if isinstance(value, str):
        return named(value)
    raise RulesError("rules must be a name or a JSON object")


def played(rules):
    """The rules as the engine plays them: without a button, with the seki tax under territory
    scoring and none under area scoring where the rules ask for a tax it does not play."""
    if not rules.unsupported():
        return rules
    tax = rules.tax if rules.tax != "ALL" else ("SEKI" if rules.territory else "NONE")
    if tax == "SEKI" and not rules.territory:
        tax = "NONE"
    return dataclasses.replace(rules, hasButton=False, tax=tax)


def playable(value):
    """parse(value), refused (RulesError) where the engine cannot play the rules."""
    rules = parse(value)
    missing = rules.unsupported()
    if missing:
        raise RulesError(f"rules not supported: {', '.join(missing)}")
    return rules


def with_field(rules, key, value):
    """kata-set-rule KEY VALUE: the rules with one field changed (RulesError if bad)."""
    fields = rules.as_dict()
    if key not in fields and key != "score":
        raise RulesError(f"unknown rules field {key!r}")
    if key in RULE_FLAGS:
        text = str(value).strip().lower()
        if text not in ("true", "false", "1", "0"):
            raise RulesError(f"rules {key} must be true or false, not {value!r}")
        value = text in ("true", "1")
    key = "scoring" if key == "score" else key
    if key == "scoring" and isinstance(value, str):
        # the tax that went with the old scoring goes with the new one (seki tax: territory)
        if fields["tax"] == ("SEKI" if rules.territory else "NONE"):
            fields["tax"] = "SEKI" if value.upper() == "TERRITORY" else "NONE"
    fields[key] = value
    return from_object(fields)


def search_komi_shift(rules, komi, size, color):
    """The komi the search plays against minus the real komi, for `color` (1 Black, 2 White)
    to move, under territory scoring: Pachi's pessimistic parity assumption (uct/uct.c,
    uct_genmove_setup). Area and territory counts name the same winner when the integer
    part of the komi plus the board size is even; when it is odd, a win by the last half point
    by area can be a loss by territory, so the search counts one point more komi against the
    side it searches for (Black: +1, White: -1). 0 under area scoring."""
    import math
    if not rules.territory or (int(math.floor(komi)) + size) % 2 == 0:
        return 0.0
    return 1.0 if color == 1 else -1.0
