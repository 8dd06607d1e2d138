"""One rating list from the games of many players: a Bradley-Terry fit on the Elo scale.

    fit = fit_ratings([("net", "gnugo", 1.0), ("gnugo", "rollouts", 0.5), ...],
                      anchor="gnugo", anchor_rating=0.0)
    fit.ratings["net"], fit.interval["net"]          # Elo, (low, high) at 95%

The model: player i scores against player j with probability 1 / (1 + 10^(-(r_i - r_j) / 400)),
a draw counting half a win (as in gammago.arena.stats). The ratings are its maximum-likelihood fit over
all the games together (Newton's method on the log-likelihood, which is concave), with the anchor
held at its rating: the model fixes only the differences. For two players the fit is the
pairwise Elo of gammago.arena.stats, elo_from_score(score).

The maximum-likelihood ratings are finite only when no group of players won every game it played
against the others (Zermelo 1929, Ford 1957): a player with 10 wins in 10 games would be +inf.
Then, and only then, the fit adds a prior, PRIOR_DRAWS virtual draws of every other player
against the anchor (BayesElo's virtual draws, given to the anchor alone), and says so
(Fit.prior): the ratings are then finite, pulled towards the anchor's by about as much as one
more game would move them.

The 95% intervals (Fit.interval; both are computed, Fit.intervals):
  * "bootstrap" (the default): the 2.5 and 97.5 percentiles of the ratings fitted again on
    BOOTSTRAP_SAMPLES resamples of the games, each pairing's games drawn with replacement from
    its own (as many as it played); a resample whose fit would be infinite gets the prior;
    when the games themselves needed the prior, the intervals are the fit's (every resample
    of an unbeaten record is unbeaten: the bootstrap would show no spread at all);
  * "fit": the fit's own, rating +- 1.96 standard errors from the inverse of the information
    matrix (the log-likelihood's curvature, the anchor fixed); for two players it is the Wald
    interval of the score's logit, within an Elo or so of stats.elo_interval's Wilson interval
    at 100 games.
The anchor's interval is its rating: the others' are their distance from it.
"""
import dataclasses
import math

import numpy as np

from gammago.arena.stats import Z95

ELO_PER_NAT = 400.0 / math.log(10.0)    # Elo = ELO_PER_NAT * natural-log odds
PRIOR_DRAWS = 1.0                        # virtual draws against the anchor, only when needed
BOOTSTRAP_SAMPLES = 1000
NEWTON_TOL = 1e-10                       # largest score residual (in games) at convergence
NEWTON_MAX_ITER = 100


@dataclasses.dataclass
class Fit:
    players: list              # names, in the order given
    anchor: str
    ratings: dict              # name -> Elo
    se: dict                   # name -> standard error of the fit (0 for the anchor)
    intervals: dict            # "fit" / "bootstrap" -> {name: (low, high)}
    method: str                # which of intervals is Fit.interval
    prior: str                 # "" or why the virtual draws were added
    games: dict                # name -> games played (virtual ones not counted)
    score: dict                # name -> points scored (draws half)

    @property
    def interval(self):
        return self.intervals[self.method]


def tally(games, players):
    """{(a, b): [wins, draws, losses] of a against b} for a before b in `players`; games are
    (a, b, score of a: 1, 0.5 or 0)."""
    order = {p: k for k, p in enumerate(players)}
    t = {}
    for a, b, s in games:
        if a == b or a not in order or b not in order:
            raise ValueError(f"a game of {a!r} against {b!r}: not two of {players}")
        if s not in (0, 0.5, 1):
            raise ValueError(f"a game's score is 1, 0.5 or 0, not {s!r}")
        if order[a] > order[b]:
            a, b, s = b, a, 1 - s
        wdl = t.setdefault((a, b), [0, 0, 0])
        wdl[0 if s == 1 else 1 if s == 0.5 else 2] += 1
    return t


def _matrices(players, t):
    """N[i, j]: games between i and j; S[i, j]: i's points against j."""
    order = {p: k for k, p in enumerate(players)}
    n = len(players)
    N, S = np.zeros((n, n)), np.zeros((n, n))
    for (a, b), (w, d, l) in t.items():
        i, j = order[a], order[b]
        N[i, j] = N[j, i] = w + d + l
        S[i, j] = w + 0.5 * d
        S[j, i] = l + 0.5 * d
    return N, S


def finite(N, S):
    """Whether the maximum-likelihood ratings are finite: every player reaches every other along
    'scored at least half a point against' (the graph of results is strongly connected)."""
    n = len(N)
    scored = S > 0

    def reach(edges):
        seen, todo = {0}, [0]
        while todo:
            i = todo.pop()
            for j in np.nonzero(edges[i])[0]:
                if j not in seen:
                    seen.add(int(j))
                    todo.append(int(j))
        return len(seen) == n
    return reach(scored) and reach(scored.T)


def _with_prior(N, S, a, draws=PRIOR_DRAWS):
    N, S = N.copy(), S.copy()
    for i in range(len(N)):
        if i != a:
            N[i, a] += draws
            N[a, i] += draws
            S[i, a] += draws / 2
            S[a, i] += draws / 2
    return N, S


def _newton(N, S, a):
    """Log-odds ratings (the anchor's 0) maximising the likelihood, and the inverse information
    of the others; the caller makes sure the maximum is finite."""
    n = len(N)
    free = [i for i in range(n) if i != a]
    theta = np.zeros(n)

    def loglik(th):
        d = th[:, None] - th[None, :]
        return float(np.sum(S * -np.logaddexp(0.0, -d)))

    ll = loglik(theta)
    for _ in range(NEWTON_MAX_ITER):
        p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
        grad = (S - N * p).sum(axis=1)[free]
        w = N * p * (1.0 - p)
        info = np.diag(w.sum(axis=1)) - w
        info = info[np.ix_(free, free)]
        if np.max(np.abs(grad), initial=0.0) < NEWTON_TOL:
            break
        step = np.linalg.solve(info, grad)
        t = 1.0
        while t > 1e-12:                 # halve the step until the likelihood rises
            trial = theta.copy()
            trial[free] += t * step
            new = loglik(trial)
            if new >= ll - 1e-12:
                theta, ll = trial, new
                break
            t /= 2
        else:
            break
    p = 1.0 / (1.0 + np.exp(-(theta[:, None] - theta[None, :])))
    w = N * p * (1.0 - p)
    info = (np.diag(w.sum(axis=1)) - w)[np.ix_(free, free)]
    cov = np.zeros((n, n))
    cov[np.ix_(free, free)] = np.linalg.inv(info)
    return theta, cov


def _fit_matrices(N, S, a):
    """(Elo ratings relative to the anchor, their covariance, whether the prior was needed)."""
    prior = not finite(N, S)
    if prior:
        N, S = _with_prior(N, S, a)
    theta, cov = _newton(N, S, a)
    return theta * ELO_PER_NAT, cov * ELO_PER_NAT ** 2, prior


def fit_ratings(games, players, anchor=None, anchor_rating=0.0, method="bootstrap",
                samples=BOOTSTRAP_SAMPLES, seed=1):
    """The Fit of `games` [(a, b, score of a)] among `players` (names; the anchor, default the
    first, is held at anchor_rating). ValueError for fewer than two players, an anchor that is
    not one of them, or a player without a game."""
    players = list(players)
    if len(players) < 2 or len(set(players)) != len(players):
        raise ValueError(f"a rating list needs two or more distinct players, not {players}")
    anchor = players[0] if anchor is None else anchor
    if anchor not in players:
        raise ValueError(f"the anchor {anchor!r} is not one of the players {players}")
    if method not in ("bootstrap", "fit"):
        raise ValueError(f"interval method is 'bootstrap' or 'fit', not {method!r}")
    t = tally(games, players)
    N, S = _matrices(players, t)
    idle = [p for k, p in enumerate(players) if N[k].sum() == 0]
    if idle:
        raise ValueError(f"no games recorded for {', '.join(idle)}: nothing to rate")
    a = players.index(anchor)
    r, cov, prior = _fit_matrices(N, S, a)
    r += anchor_rating
    se = np.sqrt(np.diag(cov))
    intervals = {"fit": {p: (float(r[k] - Z95 * se[k]), float(r[k] + Z95 * se[k]))
                         for k, p in enumerate(players)}}
    if samples > 0:
        intervals["bootstrap"] = _bootstrap(players, t, a, samples, seed, anchor_rating)
    why = ""
    if prior:
        why = (f"{PRIOR_DRAWS:g} virtual draw of every player against {anchor} (some players won "
               "or lost all their games against the rest: the plain fit would be infinite)")
    if method == "bootstrap" and (prior or samples <= 0):
        method = "fit"              # resamples of an unbeaten record are all unbeaten: no spread
    return Fit(players=players, anchor=anchor,
               ratings={p: float(r[k]) for k, p in enumerate(players)},
               se={p: float(se[k]) for k, p in enumerate(players)},
               intervals=intervals, method=method, prior=why,
               games={p: int(N[k].sum()) for k, p in enumerate(players)},
               score={p: float(S[k].sum()) for k, p in enumerate(players)})


def _bootstrap(players, t, a, samples, seed, anchor_rating):
    """Percentile intervals over resamples of each pairing's games (see the module doc)."""
    rng = np.random.default_rng(seed)
    order = {p: k for k, p in enumerate(players)}
    n = len(players)
    draws = np.zeros((samples, n))
    pairs = [(order[x], order[y], np.array(wdl, dtype=float)) for (x, y), wdl in t.items()]
    for s in range(samples):
        N, S = np.zeros((n, n)), np.zeros((n, n))
        for i, j, wdl in pairs:
            m = int(wdl.sum())
            w, d, l = rng.multinomial(m, wdl / m)
            N[i, j] = N[j, i] = m
            S[i, j] = w + 0.5 * d
            S[j, i] = l + 0.5 * d
        draws[s] = _fit_matrices(N, S, a)[0]
    lo, hi = np.percentile(draws, [2.5, 97.5], axis=0) + anchor_rating
    return {p: (float(lo[k]), float(hi[k])) for k, p in enumerate(players)}
