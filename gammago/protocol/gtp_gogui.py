"""GoGui's side of GTP: gogui-analyze_commands (the commands GoGui offers in its Analyze
menu), the graphics commands it draws on the board (gammago-analyze: win rates as labels, the
best line, ownership; gammago-ownership; gammago-criticality), and gogui-interrupt (listed so
that GoGui sends `# interrupt`, which gammago.protocol.gtp's reader acts on).

GoGuiCommands holds the commands; gammago.protocol.gtp.Gtp, which lists them in its command
table, is built on it and gives it the engine.
"""
import threading

from gammago.go.board import format_vertex
from gammago.protocol.gtp_analyze import NO_INTERVAL_S
from gammago.protocol.gtp_syntax import GtpError, _color, _float, _nargs

GFX_ANALYZE_S = (1, 5)            # gammago-analyze durations offered to GoGui
GFX_LABELS = 8                    # how many candidate moves gammago-analyze labels
GFX_MAP_S = 1                     # gammago-ownership / gammago-criticality: default seconds
GFX_MIN_INFLUENCE = 0.2           # gammago-analyze shows ownership from this size up


class GoGuiCommands:
    """GoGui's analyze and graphics commands (see the module docstring)."""

    def cmd_gogui_interrupt(self, args):
        """Listed so that GoGui knows the engine stops a command on a `# interrupt` line (read
        while the command runs: the move under way then plays the best move found so far)."""
        return ""

    def cmd_gogui_analyze_commands(self, args):
        cmds = ["string/Show board/showboard",
                "string/Final score/final_score",
                "plist/Final status: dead/final_status_list dead",
                "plist/Final status: alive/final_status_list alive",
                "plist/Final status: seki/final_status_list seki",
                "string/Print SGF/printsgf"]
        cmds += [f"gfx/Analyze {s} s/gammago-analyze {s}" for s in GFX_ANALYZE_S]   # side to move
        cmds += [f"gfx/Ownership/gammago-ownership {GFX_MAP_S}",
                 f"gfx/Criticality/gammago-criticality {GFX_MAP_S}"]
        return "\n".join(cmds)

    def _gfx_args(self, args, command):
        _nargs(args, 0, 2, usage=f"{command} [SECONDS] [COLOR]")
        seconds = _float(args[0], "seconds") if args else float(GFX_MAP_S)
        if seconds <= 0:
            raise GtpError("syntax error: seconds must be > 0")
        color = _color(args[1]) if len(args) == 2 else self.engine.board.to_move
        return seconds, color

    def _search_for(self, seconds, color):
        """Analyse for `seconds`; the last report (lz-analyze dicts, best first)."""
        stop = threading.Event()
        last = []
        timer = threading.Timer(seconds, stop.set)
        timer.start()
        try:
            self.engine.analyze(color, NO_INTERVAL_S, stop, lambda infos: last.append(infos))
        finally:
            timer.cancel()
        return last[-1] if last else []

    def _influence(self, grid, least=0.0):
        """GoGui `INFLUENCE point value ...` of a [row][col] grid (row 0 = line 1), the points
        with |value| >= least; '' when there are none."""
        n = self.engine.board.size
        vals = [f"{format_vertex((row, col))} {float(grid[row][col]):.2f}"
                for row in range(n) for col in range(n) if abs(float(grid[row][col])) >= least
                and float(grid[row][col]) != 0.0]
        return "INFLUENCE " + " ".join(vals) if vals else ""

    def cmd_gammago_ownership(self, args):
        """gammago-ownership [SECONDS] [COLOR]: search, then GoGui gfx: the rollouts' mean final
        ownership of every point as influence (+1 Black .. -1 White), the score estimate as
        text."""
        seconds, color = self._gfx_args(args, "gammago-ownership")
        self._search_for(seconds, color)
        owner = self.engine.ownership()
        if owner is None:
            return ""
        lines = [self._influence(owner)]
        score = float(owner.sum()) - self.engine.board.komi
        lead = f"B+{score:.1f}" if score >= 0 else f"W+{-score:.1f}"
        lines.append(f"TEXT ownership after {self.engine.search.playouts} playouts, score "
                     f"estimate {lead}")
        return "\n".join(l for l in lines if l)

    def cmd_gammago_criticality(self, args):
        """gammago-criticality [SECONDS] [COLOR]: a search of the rollouts, then GoGui gfx: the
        criticality of every point (Coulom 2009: how much owning it goes with winning) as
        influence, scaled so that the most critical point shows 1."""
        seconds, color = self._gfx_args(args, "gammago-criticality")
        crit = self.engine.criticality(color, seconds)
        top = float(crit.max()) if crit.size else 0.0
        if top <= 0:
            return "TEXT criticality: none measured (too few playouts)"
        lines = [self._influence(crit / top, least=0.01)]
        row, col = divmod(int(crit.argmax()), crit.shape[1])
        lines.append(f"TEXT criticality, 1 = {top:.3f} (at {format_vertex((row, col))})")
        return "\n".join(l for l in lines if l)

    def cmd_gammago_analyze(self, args):
        """gammago-analyze SECONDS [COLOR]: search, then GoGui gfx: win rates as labels, the
        best line as a variation, ownership as influence."""
        _nargs(args, 1, 2, usage="gammago-analyze SECONDS [COLOR]")
        seconds = _float(args[0], "seconds")
        if seconds <= 0:
            raise GtpError("syntax error: seconds must be > 0")
        color = _color(args[1]) if len(args) == 2 else self.engine.board.to_move
        infos = self._search_for(seconds, color)
        lines = []
        if infos:
            labels = " ".join(f"{d['move']} {round(100 * d['winrate'])}"
                              for d in infos[:GFX_LABELS] if d["move"] != "pass")
            if labels:
                lines.append("LABEL " + labels)
            pv, c, var = infos[0].get("pv") or [infos[0]["move"]], color, []
            for m in pv:
                var.append(f"{c} {m}")
                c = "w" if c == "b" else "b"
            lines.append("VAR " + " ".join(var))
            best = infos[0]
            lines.append(f"TEXT {color.upper()} best {best['move']} winrate "
                         f"{100 * best['winrate']:.1f}% visits {best['visits']}")
        owner = getattr(self.engine, "last_owner", None)
        if owner is not None:
            influence = self._influence(owner, least=GFX_MIN_INFLUENCE)
            if influence:
                lines.append(influence)
        return "\n".join(lines)
