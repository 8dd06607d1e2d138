"""GTP's game setup: the board size and a new game (boardsize, clear_board), komi, the
handicap stones (fixed_handicap, place_free_handicap, set_free_handicap), a game loaded from
or printed as SGF (loadsgf, printsgf), and the rules (kgs-rules, kata-get-rules,
kata-set-rules, kata-set-rule).

SetupCommands holds the commands; gammago.protocol.gtp.Gtp, which lists them in its command
table, is built on it and gives it the engine and the setup of the game it keeps for printsgf
(`setup_black`, `setup_white`, `handicap`).
"""
from gammago.go import handicap
from gammago.go import rules as _rules
from gammago.go.board import Board, format_vertex, parse_vertex
from gammago.protocol.gtp_syntax import GtpError, _float, _int, _nargs


class SetupCommands:
    """The game-setup commands of the GTP front end (see the module docstring)."""

    # --- board, komi, handicap ---
    def _forget_setup(self):
        """A new game: no setup stones, no handicap."""
        self.setup_black, self.setup_white = [], []
        self.handicap = 0

    def cmd_boardsize(self, args):
        _nargs(args, 1, usage="boardsize SIZE")
        size = _int(args[0], "boardsize")
        try:
            self.engine.new_game(size, self.engine.board.komi)
        except ValueError:
            raise GtpError("unacceptable size") from None
        self._forget_setup()
        return ""

    def cmd_clear_board(self, args):
        self.engine.new_game(self.engine.board.size, self.engine.board.komi)
        self._forget_setup()
        return ""

    def cmd_komi(self, args):
        _nargs(args, 1, usage="komi KOMI")
        self.engine.set_komi(_float(args[0], "komi"))
        return ""

    def _board_empty(self):
        b = self.engine.board
        return not b.moves and not b.stones("b") and not b.stones("w")

    def _set_handicap(self, vertices):
        self.engine.setup_stones(list(vertices), [])
        self.engine.board.to_move = "w"
        self.setup_black, self.setup_white = list(vertices), []
        self.handicap = len(vertices)

    def cmd_fixed_handicap(self, args):
        _nargs(args, 1, usage="fixed_handicap NUMBER_OF_STONES")
        n = _int(args[0], "number of stones")
        if not self._board_empty():
            raise GtpError("board not empty")
        try:
            vertices = handicap.fixed_points(self.engine.board.size, n)
        except ValueError as e:
            raise GtpError(str(e)) from None
        self._set_handicap(vertices)
        return " ".join(vertices)

    def cmd_place_free_handicap(self, args):
        _nargs(args, 1, usage="place_free_handicap NUMBER_OF_STONES")
        n = _int(args[0], "number of stones")
        size = self.engine.board.size
        if not self._board_empty():
            raise GtpError("board not empty")
        if n < 2 or n > size * size - 1:
            raise GtpError(f"invalid number of stones: {n} (2 to {size * size - 1})")
        vertices = list(self.engine.place_free_handicap(n))
        self.setup_black, self.setup_white = list(vertices), []
        self.handicap = len(vertices)
        return " ".join(vertices)

    def cmd_set_free_handicap(self, args):
        size = self.engine.board.size
        if not self._board_empty():
            raise GtpError("board not empty")
        if len(args) < 2 or len(args) > size * size - 1:
            raise GtpError(f"bad vertex list: {len(args)} stones (2 to {size * size - 1})")
        seen = []
        for a in args:
            try:
                rc = parse_vertex(a, size)
            except ValueError:
                raise GtpError(f"invalid vertex {a!r}") from None
            if rc is None:
                raise GtpError("bad vertex list: pass is not a handicap stone")
            v = format_vertex(rc)
            if v in seen:
                raise GtpError(f"bad vertex list: {v} given twice")
            seen.append(v)
        scratch = Board(size, self.engine.board.komi)
        try:
            scratch.setup(seen, [])
        except ValueError as e:
            raise GtpError(f"bad vertex list: {e}") from None
        self._set_handicap(seen)
        return ""

    # --- the game in SGF ---
    def cmd_loadsgf(self, args):
        _nargs(args, 1, 2, usage="loadsgf FILENAME [MOVE_NUMBER]")
        from gammago.go.sgf import SgfError, parse_game
        path = args[0]
        upto = None
        if len(args) == 2:
            n = _int(args[1], "move number")
            if n < 1:
                raise GtpError(f"syntax error: move number must be >= 1, not {n}")
            upto = n - 1          # the position before move n
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as e:
            raise GtpError(f"cannot load file {path}: {e.strerror or e}") from None
        try:
            game = parse_game(path, data, setup_in_game=True)
            # checks every move before touching the engine
            black, white, to_move, moves = game.position(upto)
        except SgfError as e:
            raise GtpError(f"cannot load file {e}") from None
        eng = self.engine
        eng.new_game(game.size, game.komi)
        if black or white:
            eng.setup_stones(black, white)
        eng.board.to_move = to_move
        for colour, vertex in moves:
            eng.play(colour, vertex)
        self.setup_black, self.setup_white = list(black), list(white)
        self.handicap = game.handicap
        return ""

    def cmd_printsgf(self, args):
        _nargs(args, 0, 1, usage="printsgf [FILENAME]")
        from gammago.go.sgf_write import game_sgf
        b = self.engine.board
        data = game_sgf(b.size, b.komi, list(b.moves), self.setup_black, self.setup_white,
                        black=None, white=None, handicap=self.handicap or None, to_move=b.to_move
                        if not b.moves else None)
        if args:
            try:
                with open(args[0], "wb") as f:
                    f.write(data)
            except OSError as e:
                raise GtpError(f"cannot write {args[0]}: {e.strerror or e}") from None
            return ""
        text = data.decode("utf-8", "replace").strip()
        return "\n".join(l for l in text.split("\n") if l.strip())

    # --- rules ---
    def _set_rules(self, value):
        try:
            self.engine.set_rules(value)
        except ValueError as e:
            raise GtpError(str(e)) from None
        return ""

    def cmd_kgs_rules(self, args):
        """kgs-rules RULES (kgsGtp sends it when the engine lists it): chinese (KGS's:
        positional superko), aga, japanese, new_zealand, or another rule set's name;
        `? unknown rules NAME` otherwise, the rules unchanged."""
        _nargs(args, 1, usage="kgs-rules chinese|aga|japanese|new_zealand")
        name = args[0].lower()
        return self._set_rules(_rules.KGS_RULES.get(name, name))

    def cmd_kata_get_rules(self, args):
        """kata-get-rules: KataGo's JSON rules object of the rules in force."""
        _nargs(args, 0, usage="kata-get-rules")
        return self.engine.rules.json()

    def cmd_kata_set_rules(self, args):
        """kata-set-rules RULES: a rule set's name or KataGo's JSON rules object (the board is
        kept); unknown or unplayable rules answer `?` and change nothing."""
        if not args:
            raise GtpError("syntax error: usage: kata-set-rules RULES")
        return self._set_rules(" ".join(args))

    def cmd_kata_set_rule(self, args):
        """kata-set-rule FIELD VALUE: one field of the rules in force changed."""
        _nargs(args, 2, usage="kata-set-rule FIELD VALUE")
        try:
            rules = _rules.with_field(self.engine.rules, args[0], args[1])
        except ValueError as e:
            raise GtpError(str(e)) from None
        return self._set_rules(rules)
