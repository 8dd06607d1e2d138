"""Handicap stones: the GTP spec's fixed layout (GTP v2, section 4.1.1), which free placement
also starts from.

Star points lie on the 3rd line below 13x13 and on the 4th from 13x13 up; the fixed layout
exists from 7x7 up, with at most 4 stones on 7x7 and even sizes and 9 on odd sizes from 9x9.
"""
from gammago.go.board import format_vertex


def _layouts(size):
    """{stones: [(row, col)]} of the spec's fixed layout on a board of `size` ({} below 7x7)."""
    if size < 7:
        return {}
    e = 3 if size >= 13 else 2
    lo, mid, hi = e, size // 2, size - 1 - e
    corners = [(lo, lo), (hi, hi), (hi, lo), (lo, hi)]      # D4 Q16 D16 Q4 (row, col)
    sides = [(mid, lo), (mid, hi)]                           # D10 Q10
    tops = [(lo, mid), (hi, mid)]                            # K4 K16
    centre = [(mid, mid)]
    out = {2: corners[:2], 3: corners[:3], 4: corners}
    if size % 2 and size >= 9:
        out.update({5: corners + centre, 6: corners + sides, 7: corners + sides + centre,
                    8: corners + sides + tops, 9: corners + sides + tops + centre})
    return out


def fixed_points(size, n):
    """The spec's fixed handicap vertices; ValueError (the message GTP answers) when the spec
    has no layout for n stones on this size."""
    layouts = _layouts(size)
    if not layouts:
        raise ValueError(f"invalid handicap: no fixed handicap on {size}x{size} (7x7 and up)")
    if n not in layouts:
        raise ValueError(f"invalid number of stones: {n} (2 to {max(layouts)} on {size}x{size})")
    return [format_vertex(rc) for rc in layouts[n]]


def free_points(size, n):
    """n handicap vertices (2 .. size*size - 1): the fixed layout where the spec has one;
    beyond it (or below 7x7) the largest layout there is, then each further stone on the point
    farthest (Manhattan distance) from those placed (the centre first on an empty board)."""
    if not 2 <= n <= size * size - 1:
        raise ValueError(f"invalid number of handicap stones {n}")
    layouts = _layouts(size)
    if n in layouts:
        return [format_vertex(rc) for rc in layouts[n]]
    chosen = list(layouts[max(layouts)]) if layouts else [(size // 2, size // 2)]
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
