"""The end of a game: when to resign, when to pass, the clean-up phase
(kgs-genmove_cleanup), and the status of the stones and the score with the dead ones off
(final_score, final_status_list).

After each search the engine's move goes through GameEnd._override: it resigns when the best
win rate is under --resign (never with dynamic komi in force, before move N*N/4, or on fewer
than RESIGN_MIN_VISITS root visits); under territory scoring it plays or passes as
_territory_move says; under area scoring it passes as _should_pass says, which keeps playing
while the board as it stands would be counted with dead stones of the opponent's or open
regions on it (a server's count without dead-stone removal). The status of the stones comes
from the last search's ownership, or from a status search of their own on the rollouts-only
tree (_status_owner).

GameEnd is a base of gammago.engine.engine.Engine; it reads the engine's `board`, `config`,
`rules`, `handicap`, `search`, `last_owner`, extra_komi() and _side_search().
"""
from gammago.go import scoring

RESIGN_MIN_VISITS = 200      # never resign on fewer root visits than this
STATUS_PLAYOUTS = {9: 3000, 13: 2000, 19: 1500}   # playouts behind final_status_list / final_score
SETTLE_MARGIN = 2.0          # area rules without dead-stone removal: the game is not over while
                             # the count as the board stands and the search's expected score
                             # (its ownership) differ by more points than this
PLAY_ON_SLACK = 0.03         # ... and the engine plays on there with its best move other than a
                             # pass when the search rates it this close to the pass
TERRITORY_SLACK = 0.03       # territory rules: a move the search rates this close to its best
                             # takes the place of an idle best move (scoring.idle_point)


class GameEnd:
    """Resigning, passing, the clean-up phase and dead-stone scoring (see the module
    docstring)."""

    def _override(self, c, infos, cleanup, allow_resign):
        """The move c plays after a search whose root moves are `infos` (best first): resign
        when hopeless (see the module docstring); under territory rules, but in the clean-up
        phase, what _territory_move says; else a pass when _should_pass says so, else the best
        move, and where that is a pass _should_pass refused, the best other move (always in the
        clean-up phase, else when the search rates it within PLAY_ON_SLACK of the pass)."""
        if not infos:
            return "pass"
        best = infos[0]
        n = self.board.size
        if (allow_resign and self.config.resign > 0 and best["winrate"] < self.config.resign
                and not self.extra_komi()
                and len(self.board.moves) >= n * n // 4 and self.search.root_visits >= RESIGN_MIN_VISITS):
            return "resign"
        if self.rules.territory and not cleanup:
            return self._territory_move(c, infos)
        if self._should_pass(c, best, cleanup):
            return "pass"
        if best["move"] == "pass":
            # a pass refused (clean-up, or dead stones of the opponent or unsettled points
            # left on a board counted as it stands)
            other = [d for d in infos if d["move"] != "pass"]
            if other and (cleanup or other[0]["winrate"] >= best["winrate"] - PLAY_ON_SLACK):
                return other[0]["move"]
            return "pass"
        return best["move"]

    def _territory_move(self, c, infos):
        """Under territory scoring: the search's best move, unless it is idle (fills own or
        the opponent's settled territory, or dame: scoring.idle_point), which costs a point or
        gains none by territory; then the most visited move the search rates within
        TERRITORY_SLACK of it that is not idle, else a pass when the territory count with the
        dead stones off wins (else the best move all the same). A pass after the opponent's
        once that count wins, and as soon as the score is settled (scoring.territory_settled)
        and won. Dead stones stay on the board: they come off by agreement, as prisoners."""
        b = self.board
        sign = 1 if c == 1 else -1
        best = infos[0]
        if best["move"] == "pass":
            return "pass"
        owner = self.last_owner
        if owner is None:
            if not b.passes:
                return best["move"]
            owner = self._status_owner()
        dead, seki = self._dead_strings(owner)
        winning = sign * self._score_with(dead, seki) > 0
        if winning and (b.passes or scoring.territory_settled(b, owner, dead)):
            return "pass"
        if not scoring.idle_point(b, owner, dead, best["move"]):
            return best["move"]
        for d in infos[1:]:
            if d["winrate"] < best["winrate"] - TERRITORY_SLACK:
                continue
            if d["move"] == "pass":
                if winning:
                    return "pass"
            elif not scoring.idle_point(b, owner, dead, d["move"]):
                return d["move"]
        return "pass" if winning else best["move"]

    def _should_pass(self, c, best, cleanup):
        """Whether c passes under area scoring, `best` the search's best root move. In the
        clean-up phase: once no stone of the opponent judged dead is left and the best move is
        a pass, the opponent passed or the board is settled. Else: never while the board as it
        stands would count a dead stone of the opponent's or an open region (unless dead stones
        may stay: _friendly); when the best move is a pass; after the opponent's pass, when the
        count wins; otherwise when only dame are left and c wins even if the opponent takes
        them all."""
        b = self.board
        sign = 1 if c == 1 else -1
        if cleanup:
            # pass only once no dead opponent stone is left and the game is over
            dead, _ = self._dead_strings(self.last_owner)
            opp = "w" if c == 1 else "b"
            if any(b.color_at(v) == opp for v in dead):
                return False
            return best["move"] == "pass" or b.passes > 0 or scoring.settled(b)
        if best["move"] == "pass" or b.passes > 0:
            if not self._friendly() and (self._dead_opponent_left(c) or self._unsettled()):
                # the count is the board as it stands: a dead stone of the opponent's left on
                # it would count for the opponent, an open region for nobody (the server's
                # count without dead-stone removal, CGOS's): capture and close them first
                return False
        if best["move"] == "pass":
            return True
        if b.passes > 0:   # the opponent passed: passing ends the game
            if sign * self._area_now() > 0:
                return True
            if self._friendly() and sign * self._score_dead_removed(self.last_owner) > 0:
                return True
            return False
        # settled: only dame left and we win by Tromp-Taylor even if the opponent takes them all
        bonus = self.rules.handicap_bonus(self.handicap)
        return scoring.settled(b) and sign * (scoring.score_dame_lost(b, c) - bonus) > 0

    def _unsettled(self):
        """Whether the count as the board stands and the last search's expected score (its
        ownership's sum less the komi) differ by more than SETTLE_MARGIN points: dead stones
        or open regions are left that the rollouts settle (False without ownership)."""
        owner = self.last_owner
        if owner is None:
            return False
        b = self.board
        return abs((float(owner.sum()) - b.komi) - b.score()) > SETTLE_MARGIN

    def _dead_opponent_left(self, c):
        """Whether a stone of c's opponent that the last search's ownership (a status search
        without one) judges dead is on the board."""
        dead, _ = self._dead_strings(self.last_owner)
        opp = "w" if c == 1 else "b"
        return any(self.board.color_at(v) == opp for v in dead)

    def _area_now(self):
        """The area count as the board stands (Black - White - komi - White's handicap bonus)."""
        return self.board.score() - self.rules.handicap_bonus(self.handicap)

    def _friendly(self):
        """Whether dead stones may stay on the board when the game ends by two passes (they
        are taken off by agreement): --pass-dead-removed, or the rules' friendlyPassOk."""
        return self.config.pass_dead_removed or self.rules.friendlyPassOk

    def _status_owner(self):
        """Ownership from a fresh search of STATUS_PLAYOUTS playouts on the current position,
        always on the rollouts-only tree (tree.Search), also when the net-root search plays."""
        b = self.board
        n = STATUS_PLAYOUTS.get(b.size, 2000)
        # Nobody may pass before the rollout: after an opponent pass, passing can win as the
        # board stands, and a playout ended by two passes leaves dead stones on the board. So
        # the root may not pass, and no node below it is expanded (flat Monte-Carlo on the
        # root's moves; rollouts play on until no move is left, the mercy rule off: a playout
        # that ends early leaves its owners unsettled).
        with self._side_search(b) as search:
            search.configure(expand_visits=1 << 30, mercy=0)
            search.run(self.config.threads, n, 0, True, self.config.seed)
        owner = search.ownership()
        search.clear()
        return owner

    def _dead_strings(self, owner=None):
        """(dead vertices, seki vertices) from ownership +1 Black .. -1 White (a fresh status
        search when None)."""
        if owner is None:
            owner = self._status_owner()
        return scoring.dead_and_seki(self.board, owner)

    def _score_dead_removed(self, owner=None):
        """The area score (as _score_with) with the stones `owner` judges dead taken off."""
        dead, _ = self._dead_strings(owner)
        return scoring.score_without(self.board, dead) - self.rules.handicap_bonus(self.handicap)

    def _score_with(self, dead, seki):
        """The final score (Black - White - komi - White's handicap bonus) under the rules with
        the `dead` stones off: area (the board's count) or territory (territory + prisoners,
        no points in seki under tax SEKI)."""
        bonus = self.rules.handicap_bonus(self.handicap)
        if self.rules.territory:
            return scoring.territory_score(self.board, dead, seki, self.rules.tax, bonus)
        return scoring.score_without(self.board, dead) - bonus

    def final_score(self):
        """GTP final_score: the score with the dead stones off ("B+3.5", "W+0.5", "0"), their
        status from a fresh status search."""
        dead, seki = self._dead_strings()
        return scoring.score_text(self._score_with(dead, seki))

    def final_status_list(self, status):
        """GTP final_status_list: the vertices of the stones whose status (alive, dead or seki)
        is `status`, from a fresh status search."""
        status = str(status).lower()
        if status not in ("alive", "dead", "seki"):
            raise ValueError(f"final_status_list: unknown status {status!r}")
        b = self.board
        dead, seki = self._dead_strings()
        if status == "dead":
            return sorted(dead)
        if status == "seki":
            return sorted(seki)
        gone = set(dead) | set(seki)
        return sorted(v for col in ("b", "w") for v in b.stones(col) if v not in gone)
