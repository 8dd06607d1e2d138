"""KataGo's JSON analysis answers (the `gammago analysis` command's output), built from an
Engine's search of a job (gammago.protocol.json_query.Job): build_answer for a search, during it
or at its end, no_results for a job terminated before it searched.

Every answer for a search carries the same fields, whatever its visits (KaTrain reads them
without looking): rootInfo's winrate, scoreLead, scoreMean, scoreStdev, visits and
currentPlayer, and each moveInfo's move, order, visits, winrate, scoreLead, scoreMean,
scoreStdev, prior, lcb and pv. The scores:

- the root's: the mean final count minus komi over every playout of the search, with their
  standard deviation (Engine.root_score); before the search has one, its ownership's sum minus
  komi; where no playout was played out (none yet, or the mercy rule ending every one), the
  stones on the board (Black's less White's, minus komi) with a spread of 0, and they are the
  ownership too;
- a move's: its info dict's 'score_mean' and 'score_stdev' where the search gives them (points
  for the side to move, as the dict's win rate), else the root's.

A field this engine does not compute is left out (utility, scoreSelfplay, per-move ownership,
hashes).
"""
import math

import numpy as np

from gammago.go.board import parse_vertex
from gammago.protocol.gtp_analyze import kata_ownership


def policy_of(engine, size):
    """The prior of every point (row by row from the top-left, A19 on 19x19) and of a pass,
    -1 where the side to move may not play: the net's where the engine runs one, else the
    gammas' move probabilities; None when it has neither."""
    board = engine.board
    legal = set(board.legal_moves()) | {"pass"}
    if engine.net is not None and engine.mode in ("net-root", "net-policy"):
        probs = engine.net.priors(board, include_pass=True)
    else:
        from gammago.moves import gammas
        try:
            table = gammas.load_default(size)
        except (OSError, ValueError):
            return None
        vertices, feats = table.legal_features(board)
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


def stones_owner(board):
    """The stones as they stand, +1 Black, -1 White, 0 an empty point, laid out as
    Engine.ownership() ([row][col], row 0 = line 1): what is known of the owners without a
    playout (an area count would give a lone stone the whole board)."""
    a = board.to_array()
    return (a == 1).astype(float) - (a == 2).astype(float)


def root_figures(engine):
    """(ownership, score, score stdev) of the engine's current search, Black's, the score minus
    komi (module docstring): the score every playout's (Engine.root_score) where the engine
    gives one, else the ownership's; the ownership its played-out playouts', else the stones as
    they stand with a spread of 0."""
    owned = engine.search.owned > 0
    owner = engine.ownership() if owned else None
    if owner is None:
        owner, owned = stones_owner(engine.board), False
    score, stdev = float(owner.sum()) - engine.board.komi, (engine.score_stdev() if owned else 0.0)
    got = engine.root_score(1)
    if got is not None and _finite(got[0]):
        score, stdev = float(got[0]), got[1]
    if not _finite(stdev):
        stdev = 0.0
    return owner, score, float(stdev)


def _finite(x):
    return x is not None and math.isfinite(float(x))


def build_answer(job, engine, infos, during, policy=None):
    """The answer dict of a job from the current search of its engine (infos: Engine.analyze's
    candidates, win rates for the side to move; an info's 'score_mean' / 'score_stdev', where
    present, in points for the side to move)."""
    color = perspective_color(job)
    flip = color != job.to_move
    owner, score, stdev = root_figures(engine)
    score = score if color == "b" else -score
    moves = []
    for d in infos:
        winrate, lcb = float(d["winrate"]), float(d.get("lcb", d["winrate"]))
        if flip:
            winrate, lcb = 1.0 - winrate, 1.0 - lcb
        move_score, move_stdev = score, stdev
        if _finite(d.get("score_mean")):
            move_score = float(d["score_mean"]) * (-1.0 if flip else 1.0)
            if _finite(d.get("score_stdev")):
                move_stdev = float(d["score_stdev"])
        pv = list(d.get("pv") or [d["move"]])[:job.pv_len + 1]
        m = {"move": d["move"], "visits": int(d["visits"]), "winrate": winrate,
             "scoreLead": move_score, "scoreMean": move_score, "scoreStdev": move_stdev,
             "prior": float(d.get("prior", 0.0)), "lcb": lcb, "order": int(d["order"]), "pv": pv}
        if job.pv_visits:
            m["pvVisits"] = engine.pv_visits(pv)
        moves.append(m)
    visits = sum(m["visits"] for m in moves)
    root = {"visits": int(engine.search.root_visits),
            "winrate": sum(m["visits"] * m["winrate"] for m in moves) / visits if visits else 0.5,
            "scoreLead": score, "scoreMean": score, "scoreStdev": stdev,
            "currentPlayer": job.to_move.upper()}
    out = {"id": job.id, "turnNumber": job.turn, "isDuringSearch": bool(during),
           "moveInfos": moves, "rootInfo": root}
    if job.ownership:
        out["ownership"] = kata_ownership(owner, color)
    if job.ownership_stdev:
        spread = engine.ownership_stdev() if engine.search.owned else None
        if spread is None:
            spread = np.zeros_like(owner)
        out["ownershipStdev"] = kata_ownership(spread, "b")
    if policy is not None:
        out["policy"] = policy
    return out


def no_results(job):
    """The answer of a job terminated before any search."""
    return {"id": job.id, "turnNumber": job.turn, "isDuringSearch": False, "noResults": True}
