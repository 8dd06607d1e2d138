"""What `gammago review` writes of a reviewed game: the record with a comment on every move
reviewed (SGF, through sgfmill), the win rate and score graph (PNG, matplotlib's Agg), and the
summary's lines. gammago.engine.review searches the positions and calls these.

A review is a list of moves, each a dict (review.move_reviews): its number (from 1), colour,
vertex, the mover's win rate and score before the move (the position's value, the engine's
choice's) and after it, the points and win rate it lost, the engine's choice, and `mark`: None,
"DO", "BM1" or "BM2".
"""
import os

from sgfmill import sgf as sgfmill_sgf

COLOUR = {"b": "Black", "w": "White"}
MARK_TEXT = {"DO": "doubtful move", "BM1": "bad move", "BM2": "very bad move"}


def lead_text(score_black):
    """A score from Black's view as a lead: 'B+3.5', 'W+0.5', 'even'."""
    if score_black is None:
        return "?"
    if abs(score_black) < 0.05:
        return "even"
    return f"{'B' if score_black > 0 else 'W'}+{abs(score_black):.1f}"


def _pct(w):
    return "?" if w is None else f"{100 * w:.1f}%"


def _pts(s):
    return "?" if s is None else f"{s:+.1f}"


def move_comment(m, engine_name="gammago"):
    """The C text of a reviewed move."""
    mover = COLOUR[m["colour"]]
    lines = []
    if m["after_winrate"] is not None:
        black_wr = m["after_winrate"] if m["colour"] == "b" else 1 - m["after_winrate"]
        black_sc = m["after_score"] if m["colour"] == "b" else -m["after_score"]
        lines.append(f"Move {m['number']} {m['colour'].upper()} {m['vertex']}: Black {_pct(black_wr)} "
                     f"to win, {lead_text(black_sc)}; for {mover}: {_pct(m['after_winrate'])}, "
                     f"{_pts(m['after_score'])} points")
    else:
        lines.append(f"Move {m['number']} {m['colour'].upper()} {m['vertex']}")
    same = " (the move played)" if m["best"] == m["vertex"] else ""
    lines.append(f"{engine_name}: {m['best']}{same}, {mover} {_pct(m['before_winrate'])}, "
                 f"{_pts(m['before_score'])} points ({m['playouts']} playouts)")
    if m["lost"] is not None:
        lines.append(f"Lost: {m['lost']:.1f} points, {100 * m['lost_winrate']:.1f}% win rate")
    if m["mark"]:
        lines.append(f"{MARK_TEXT[m['mark']][0].upper()}{MARK_TEXT[m['mark']][1:]}: "
                     f"{m['lost']:.1f} points lost; {engine_name} plays {m['best']}")
    return "\n".join(lines)


def write_sgf(path, data, moves, searched_by, stopped=None):
    """The record `data` (its SGF bytes) with each reviewed move's comment (an earlier comment
    kept above it), BM / DO on the marked moves, and a root comment saying what reviewed it;
    stopped: (move number, text) for the move the review stopped at (an illegal move), noted on
    its node. Written whole (a temporary file and a rename)."""
    game = sgfmill_sgf.Sgf_game.from_bytes(data)
    root = game.get_root()
    note = f"Reviewed by {searched_by}."
    if stopped:
        note += f" The review stops at move {stopped[0]}: {stopped[1]}."
    _add_comment(root, note)
    by_number = {m["number"]: m for m in moves}
    number = 0
    for node in game.get_main_sequence():
        colour, _ = node.get_move()
        if colour is None:
            continue
        number += 1
        m = by_number.get(number)
        if m is not None:
            _add_comment(node, move_comment(m, searched_by.split(" ")[0]))
            for prop in ("BM", "DO", "TE", "IT"):
                if node.has_property(prop):
                    node.unset(prop)
            if m["mark"] == "DO":
                node.set("DO", True)
            elif m["mark"] in ("BM1", "BM2"):
                node.set("BM", int(m["mark"][2]))
        elif stopped and number == stopped[0]:
            _add_comment(node, f"Not reviewed: {stopped[1]}")
    _write_atomic(path, game.serialise())


def _add_comment(node, text):
    old = node.get("C") if node.has_property("C") else ""
    node.set("C", f"{old}\n\n{text}" if old else text)


def _write_atomic(path, data):
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def write_png(path, title, positions, moves):
    """Two panels over the move number: Black's win rate and Black's score (the value of each
    position reviewed, 0 the start), the marked moves dotted; written whole."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    xs, wr, sc = [], [], []
    for p in positions:
        if p.get("winrate") is None:
            continue
        black = p["colour"] == "b"
        xs.append(p["k"])
        wr.append(100 * (p["winrate"] if black else 1 - p["winrate"]))
        sc.append(p["score"] if black else -p["score"])
    fig, (ax1, ax2) = plt.subplots(2, 1, sharex=True, figsize=(9, 5.5))
    ax1.plot(xs, wr, color="black", lw=1.2)
    ax1.axhline(50, color="grey", lw=0.6, ls="--")
    ax1.set_ylim(0, 100)
    ax1.set_ylabel("Black's win rate (%)")
    ax1.set_title(title, fontsize=10)
    ax2.plot(xs, sc, color="tab:blue", lw=1.2)
    ax2.axhline(0, color="grey", lw=0.6, ls="--")
    ax2.set_ylabel("Black's score (points)")
    ax2.set_xlabel("move")
    at = {x: (w, s) for x, w, s in zip(xs, wr, sc)}
    for m in moves:
        if m["mark"] and m["number"] in at:
            colour = "red" if m["mark"] != "DO" else "orange"
            ax1.plot(m["number"], at[m["number"]][0], "o", ms=4, color=colour)
            ax2.plot(m["number"], at[m["number"]][1], "o", ms=4, color=colour)
    fig.tight_layout()
    tmp = f"{path}.tmp.png"
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)


def phase_of(number, size):
    """'opening', 'middle' or 'endgame' for move `number` (from 1) on a size x size board:
    the opening to move size^2 / 8 (45 on 19x19, 10 on 9x9), the endgame after size^2 / 2
    (180 on 19x19, 40 on 9x9)."""
    opening, endgame = phase_limits(size)
    return "opening" if number <= opening else "endgame" if number > endgame else "middle"


def phase_limits(size):
    """(last move of the opening, last move of the middle game) on a size x size board."""
    return round(size * size / 8), round(size * size / 2)


def summary_lines(name, header, moves, size, top, engine_name="gammago"):
    """The summary of one game: each side's mean points lost per move by phase (a move that
    gained counts as 0 lost) and the `top` moves that lost most."""
    opening, endgame = phase_limits(size)
    phases = (("opening", f"1-{opening}"), ("middle", f"{opening + 1}-{endgame}"),
              ("endgame", f"{endgame + 1}-"))
    lines = [f"{name}: {header}"]
    head = "  points lost a move".ljust(22) + "".join(f"{p} {r}".rjust(20) for p, r in phases) \
        + "all".rjust(16)
    lines.append(head)
    for colour in ("b", "w"):
        row = f"  {COLOUR[colour]}".ljust(22)
        cells = []
        for phase, _ in phases + (("all", ""),):
            lost = [max(0.0, m["lost"]) for m in moves if m["colour"] == colour
                    and m["lost"] is not None
                    and (phase == "all" or phase_of(m["number"], size) == phase)]
            cells.append((f"{sum(lost) / len(lost):.2f} ({len(lost)})" if lost else "-"))
        row += "".join(c.rjust(20) for c in cells[:-1]) + cells[-1].rjust(16)
        lines.append(row)
    worst = sorted((m for m in moves if m["lost"] is not None), key=lambda m: -m["lost"])[:top]
    if worst:
        lines.append("  worst moves:")
        for m in worst:
            mark = f"  {m['mark']}" if m["mark"] else ""
            lines.append(f"    move {m['number']:3d} {m['colour'].upper()} {m['vertex']:>4}  lost "
                         f"{m['lost']:5.1f} points ({-100 * m['lost_winrate']:+.1f}% win rate)  "
                         f"{engine_name}: {m['best']}{mark}")
    return lines
