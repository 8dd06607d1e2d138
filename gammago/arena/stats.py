"""Match statistics from one side's wins, draws and losses: a draw counts half a win.

The 95% interval of the score is Wilson's; Elo = -400 log10(1/score - 1) with the interval
mapped through the same function; SPRT: the log-likelihood ratio of H1 (Elo = elo1) against
H0 (Elo = elo0) for the game outcomes (Bernoulli, draws as half a win and half a loss),
stopping when it leaves [ln(beta/(1-alpha)), ln((1-beta)/alpha)].
"""
import math

Z95 = 1.959963984540054             # two-sided 95% normal quantile


def wilson_interval(successes, n, z=Z95):
    """Wilson score interval of a proportion (successes may be fractional: draws count half)."""
    if n <= 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    lo = 0.0 if successes <= 0 else max(0.0, centre - half)      # exact at the ends
    hi = 1.0 if successes >= n else min(1.0, centre + half)
    return lo, hi


def elo_from_score(score):
    """Elo difference of an expected score (logistic model); +-inf at 1 and 0."""
    if score <= 0:
        return -math.inf
    if score >= 1:
        return math.inf
    return -400.0 * math.log10(1.0 / score - 1.0)


def score_from_elo(elo):
    return 1.0 / (1.0 + 10.0 ** (-elo / 400.0))


def elo_interval(wins, draws, losses, z=Z95):
    """(Elo, low, high): the point estimate and the Wilson interval mapped to Elo."""
    n = wins + draws + losses
    x = wins + 0.5 * draws
    if n == 0:
        return 0.0, -math.inf, math.inf
    lo, hi = wilson_interval(x, n, z)
    return elo_from_score(x / n), elo_from_score(lo), elo_from_score(hi)


def sprt_llr(wins, draws, losses, elo0, elo1):
    """Log-likelihood ratio of H1 (elo1) against H0 (elo0); draws are half a win, half a loss."""
    p0, p1 = score_from_elo(elo0), score_from_elo(elo1)
    x = wins + 0.5 * draws
    y = losses + 0.5 * draws
    return x * math.log(p1 / p0) + y * math.log((1 - p1) / (1 - p0))


def sprt_bounds(alpha=0.05, beta=0.05):
    """(lower, upper): accept H0 at or below lower, H1 at or above upper."""
    return math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha)
