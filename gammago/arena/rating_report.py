"""What `gammago compare` shows and keeps of its ratings: the rating list and the pairings'
W-L-D as one markdown table (printed, and table.md), ratings.json (the settings, the players
and their builds, the fit, every pairing), and ratings.png (each rating with its 95% interval).
The fit itself: gammago.arena.ratings.
"""
import datetime
import math
import os
import textwrap

from gammago.arena.match_record import write_json
from gammago.arena.ratings import PRIOR_DRAWS, fit_ratings, tally


def _elo(x):
    return "+inf" if x == math.inf else "-inf" if x == -math.inf else f"{x:+.0f}"


def _settings_line(settings, players, played):
    untimed = [p.name for p in players if not p.timed]
    if settings["time_per_move"]:
        budget = f"{settings['time_per_move']:g} s a move"
        if untimed:
            budget += f" ({', '.join(untimed)} untimed, at its own pace)"
    elif settings["playouts"]:
        budget = f"{settings['playouts']} playouts a move for the gammago players"
    else:
        budget = "each player at its own settings"
    return (f"{settings['size']}x{settings['size']}, komi {settings['komi']:g}, {budget}; "
            f"{settings['games']} games a pairing planned, {played} played")


def rating_lines(fit, lost):
    """The rating list, best first, as markdown rows."""
    interval = "95% interval (" + ("bootstrap" if fit.method == "bootstrap" else "fit") + ")"
    rows = [f"| rank | player | Elo | {interval} | games | score | forfeits lost |",
            "| ---: | --- | ---: | --- | ---: | ---: | --- |"]
    order = sorted(fit.players, key=lambda p: -fit.ratings[p])
    for k, p in enumerate(order, 1):
        lo, hi = fit.interval[p]
        span = "anchor" if p == fit.anchor else f"{_elo(lo)} .. {_elo(hi)}"
        forfeits = ", ".join(f"{v} {r}" for r, v in sorted(lost.get(p, {}).items())) or "-"
        score = fit.score[p] / fit.games[p] if fit.games[p] else 0.0
        rows.append(f"| {k} | {p} | {_elo(fit.ratings[p])} | {span} | {fit.games[p]} | "
                    f"{100 * score:.1f}% | {forfeits} |")
    return rows


def pairing_lines(names, wdl):
    """The cross table: each row's W-L-D against each column's player."""
    rows = ["| W-L-D | " + " | ".join(names) + " |",
            "| --- |" + " --- |" * len(names)]
    for a in names:
        cells = []
        for b in names:
            if a == b:
                cells.append("")
            elif (a, b) in wdl:
                w, d, l = wdl[(a, b)]
                cells.append(f"{w}-{l}-{d}")
            elif (b, a) in wdl:
                w, d, l = wdl[(b, a)]
                cells.append(f"{l}-{w}-{d}")
            else:
                cells.append("")
        rows.append(f"| {a} | " + " | ".join(cells) + " |")
    return rows


def plot(path, fit, title):
    """ratings.png: the players, best at the top, each rating with its interval."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    order = sorted(fit.players, key=lambda p: fit.ratings[p])
    r = [fit.ratings[p] for p in order]
    lo = [fit.ratings[p] - fit.interval[p][0] for p in order]
    hi = [fit.interval[p][1] - fit.ratings[p] for p in order]
    fig, ax = plt.subplots(figsize=(8, 1.5 + 0.5 * len(order)))
    ax.errorbar(r, range(len(order)), xerr=[lo, hi], fmt="o", capsize=4)
    ax.set_yticks(range(len(order)))
    ax.set_yticklabels([f"{p} (anchor)" if p == fit.anchor else p for p in order])
    ax.axvline(fit.ratings[fit.anchor], color="grey", lw=0.8, ls=":")
    ax.set_xlabel(f"Elo (Bradley-Terry fit; 95% interval: {fit.method})")
    ax.grid(axis="x", alpha=0.3)
    ax.set_title(textwrap.fill(title, 100), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def write(out, players, pairings, games, lost, anchor, settings, finished, wall_s,
          method="bootstrap", samples=1000, seed=1):
    """Fit the ratings of `games` [(a, b, a's score)], write ratings.json, table.md and
    ratings.png under `out`; returns the table's text. `lost`: {player: {reason: forfeits}};
    `anchor`: (name, rating). With too few games for a fit (a player without a game) the
    pairings alone are shown."""
    from gammago import build
    names = [p.name for p in players]
    wdl = tally(games, names)
    here = build()
    commit = here.split(" ", 1)[1] if " " in here else ""
    date = datetime.date.today().isoformat()
    head = _settings_line(settings, players, len(games))
    try:
        fit = fit_ratings(games, names, anchor=anchor[0], anchor_rating=anchor[1],
                          method=method, samples=samples, seed=seed)
        why = ""
    except ValueError as e:
        fit, why = None, str(e)
    lines = [f"gammago compare ({commit or 'no commit'}, {date}): {head}"
             + ("" if finished else " (not complete)"), ""]
    if fit:
        lines += rating_lines(fit, lost)
        note = (f"Bradley-Terry maximum likelihood over all {len(games)} games, draws half a "
                f"win, {fit.anchor} fixed at {_elo(fit.ratings[fit.anchor])}")
        if fit.prior:
            note += f"; prior: {fit.prior}"
        lines += ["", note + "."]
    else:
        lines += [f"no rating list yet: {why}"]
    lines += [""] + pairing_lines(names, wdl)
    text = "\n".join(lines)
    with open(os.path.join(out, "table.md"), "w") as f:
        f.write(text + "\n")
    record = {
        "finished": finished, "commit": commit, "date": date, "wall_s": wall_s,
        "settings": settings,
        "players": [{"name": p.name, "given": p.given, "command": p.command, "timed": p.timed,
                     "engine": p.engine, "build": p.build} for p in players],
        "anchor": {"name": anchor[0], "rating": anchor[1]},
        "pairings": [{"players": [p.a, p.b], "record": p.record,
                      "wins": wdl.get((p.a, p.b), [0, 0, 0])[0],
                      "draws": wdl.get((p.a, p.b), [0, 0, 0])[1],
                      "losses": wdl.get((p.a, p.b), [0, 0, 0])[2]} for p in pairings],
        "forfeits_lost": lost,
    }
    if fit:
        record["fit"] = {"method": fit.method, "prior": fit.prior, "prior_draws": PRIOR_DRAWS
                         if fit.prior else 0, "bootstrap_samples": samples}
        record["ratings"] = {p: {"elo": fit.ratings[p], "low": fit.interval[p][0],
                                 "high": fit.interval[p][1], "se": fit.se[p],
                                 "games": fit.games[p], "score": fit.score[p],
                                 "intervals": {k: list(v[p]) for k, v in fit.intervals.items()}}
                             for p in fit.players}
        plot(os.path.join(out, "ratings.png"), fit,
             f"gammago compare ({commit or 'no commit'}, {date}): {head}")
    write_json(os.path.join(out, "ratings.json"), record)
    return text
