"""Tactical positions as data files (tests/data/tactics/*.txt), read by one parametrised test.

A file holds blocks separated by blank lines. Each block: header lines `key: value`, then the
board, one line per row from the top (the highest line number) down, one character per point
separated by spaces: `X` Black, `O` White, `.` empty. Keys:

    name:     what the position shows
    size:     board size (default: the number of board rows)
    to_move:  b or w (default b)
    last:     the last move's vertex, when the question needs it (nakade)
    ask:      the question and its vertex: capture V | save V | atari_works V | escape_fails V |
              net V | selfatari V | bad_selfatari V | false_eye V | nakade
    expect:   yes / no, optionally followed by the moves that answer it (`yes C3|D4`:
              the reader's move must be one of them); for nakade, the vital point or `none`
    source:   where the position comes from (our own unless said)

Columns are A.. without I, as in GTP.
"""
import pathlib

from test_board_cases import from_diagram

HERE = pathlib.Path(__file__).parent / "data" / "tactics"


class Position:
    def __init__(self, path, line, fields, rows):
        self.path, self.line = path, line
        self.name = fields.get("name", f"{path.name}:{line}")
        self.ask = fields["ask"].split()
        self.expect = fields["expect"].split()
        self.to_move = fields.get("to_move", "b")
        self.last = fields.get("last")
        self.rows = rows
        self.size = int(fields.get("size", len(rows)))
        if len(rows) != self.size or any(len(r) != self.size for r in rows):
            raise ValueError(f"{path}:{line}: the board is not {self.size}x{self.size}")
        bad = {ch for r in rows for ch in r} - set("XO.")
        if bad:
            raise ValueError(f"{path}:{line}: bad points {sorted(bad)}")

    def board(self):
        return from_diagram(["".join(r) for r in self.rows], to_move=self.to_move)

    def __repr__(self):
        return f"{self.path.name}:{self.line} {self.name}"


def load(path):
    path = pathlib.Path(path)
    blocks, cur, start = [], [], 0
    for n, line in enumerate(path.read_text().splitlines() + [""], 1):
        line = line.split("#", 1)[0].rstrip()
        if not line:
            if cur:
                blocks.append((start, cur))
            cur = []
            continue
        if not cur:
            start = n
        cur.append(line)
    out = []
    for start, lines in blocks:
        fields, rows = {}, []
        for line in lines:
            if ":" in line and not rows:
                k, v = line.split(":", 1)
                fields[k.strip()] = v.strip()
            else:
                rows.append(line.split())
        out.append(Position(path, start, fields, rows))
    return out


def all_positions():
    return [p for f in sorted(HERE.glob("*.txt")) for p in load(f)]
