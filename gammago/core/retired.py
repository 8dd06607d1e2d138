"""The engine options retired at RETIRED_AT, each with the value it had by default (the engine
plays as it did then with it); docs/notebook/experiments/ says why each went, and the code of that
commit still plays them. A record of an older run that names one at that value names nothing
the engine does not play (retired_dropped)."""

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
