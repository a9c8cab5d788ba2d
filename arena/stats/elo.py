"""How much stronger, and how sure: the Elo estimate of a match score, as fishtest's ``get_elo``.

One estimate for every figure the arena shows about two players: the leaderboard's table of
the likelihood of superiority, the head-to-head page, a test's or a challenge's page and its API,
and ``manage.py match``. The unit is a game (the *trinomial* counts: wins, draws, losses) or a
colour-reversed pair of games (the *pentanomial* counts: pairs in which the first player scored
0, 1/2, 1, 3/2 or 2 points). With ``s`` the mean score of a unit, normalised to [0, 1],
``sigma`` the standard deviation of one unit's score and ``N`` the number of units:

* the Elo difference is the logistic Elo of the mean score, ``-400 * log10(1 / s - 1)``;
* its 95% interval maps the interval of the mean score, ``s +- 1.96 * sigma / sqrt(N)``, through
  the same function (so it is not symmetric around the estimate);
* the likelihood of superiority (LOS), the chance that the first player is the stronger, is the
  chance that its true mean score is above one half under the normal approximation of the mean,
  ``Phi((s - 0.5) / (sigma / sqrt(N)))``.

A draw is half a point: it pulls the score towards one half and narrows its spread, so it
counts towards both the estimate and the LOS. (cutechess's LOS, ``Phi((W - L) / sqrt(W + L))``,
uses the decisive games only; for 3 wins and a loss it gives 84.1% where this gives 87.6%.)
Unlike fishtest, an empty count is not replaced by a small one first (the sequential test's
likelihood ratio does that, :mod:`arena.stats.sequential`): a perfect score is an infinite Elo
difference with an LOS of 1, not a large finite one.

    >>> e = trinomial_estimate(3, 0, 1)
    >>> round(e.elo, 1), e.score, round(e.los, 3)
    (190.8, 0.75, 0.876)
    >>> round(e.low, 1), e.high
    (-126.4, inf)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

#: The 97.5% quantile of the standard normal distribution (a two-sided 95% interval).
Z95 = 1.959963984540054
#: The score of a game, normalised, by index of the trinomial counts (wins, draws, losses).
GAME_SCORES = (1.0, 0.5, 0.0)
#: The score of a pair of games, normalised, by index of the pentanomial counts.
PAIR_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)


@dataclass(frozen=True)
class Estimate:
    """An Elo difference with its 95% interval, the mean score and the likelihood of superiority.

    ``elo`` is infinite after a perfect (or a zero) score and NaN when nothing was played (the
    score too; the LOS is then one half); the interval ends are infinite where the score
    interval reaches 0 or 1.
    """

    elo: float
    low: float
    high: float
    score: float
    los: float


def expected_score(elo: float) -> float:
    """The expected score of a player ``elo`` logistic Elo stronger than its opponent.

    >>> expected_score(0), round(expected_score(400), 4)
    (0.5, 0.9091)
    """
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def elo_of_score(score: float) -> float:
    """The logistic Elo difference a mean score implies (the inverse of :func:`expected_score`).

    >>> round(elo_of_score(0.75), 1), elo_of_score(1.0), elo_of_score(0.0)
    (190.8, inf, -inf)
    """
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    return 400.0 * math.log10(score / (1.0 - score))


def trinomial_estimate(wins: int, draws: int, losses: int) -> Estimate:
    """The Elo difference, its 95% interval, the score and the LOS of single games, from the
    first player's side.

    >>> e = trinomial_estimate(30, 0, 10)
    >>> round(e.elo, 1), e.score, round(e.los, 4)
    (190.8, 0.75, 0.9999)
    >>> trinomial_estimate(0, 6, 0).los, trinomial_estimate(4, 0, 0).los
    (0.5, 1.0)
    """
    return _estimate(GAME_SCORES, check_counts((wins, draws, losses), 3))


def pentanomial_estimate(counts: Sequence[int]) -> Estimate:
    """The same from colour-reversed pairs: ``counts[i]`` pairs in which the first player scored
    ``i / 2`` points. Openings and the first move's advantage cancel inside a pair, so its
    interval is narrower than the games' when they matter.

    >>> e = pentanomial_estimate((0, 10, 20, 10, 0))
    >>> e.elo, e.score, round(e.los, 3), round(e.low, 1), round(e.high, 1)
    (0.0, 0.5, 0.5, -38.2, 38.2)
    """
    return _estimate(PAIR_SCORES, check_counts(counts, 5))


def check_counts(counts: Sequence[int], size: int) -> tuple[int, ...]:
    """``counts`` as a tuple, after checking there are ``size`` whole numbers of at least 0."""
    if len(counts) != size:
        raise ValueError(f"expected {size} counts, not {len(counts)}")
    for c in counts:
        if isinstance(c, bool) or not isinstance(c, int) or c < 0:
            raise ValueError(f"a count is a whole number of at least 0, not {c!r}")
    return tuple(counts)


def _estimate(scores: Sequence[float], counts: Sequence[int]) -> Estimate:
    n = sum(counts)
    if n == 0:
        return Estimate(math.nan, -math.inf, math.inf, math.nan, 0.5)
    mean = sum(c * a for a, c in zip(scores, counts, strict=True)) / n
    var = sum(c * (a - mean) ** 2 for a, c in zip(scores, counts, strict=True)) / n
    stderr = math.sqrt(var / n)
    if stderr > 0:
        los = 0.5 * (1.0 + math.erf((mean - 0.5) / stderr / math.sqrt(2.0)))
    else:
        los = 1.0 if mean > 0.5 else 0.0 if mean < 0.5 else 0.5
    return Estimate(
        elo=elo_of_score(mean),
        low=elo_of_score(mean - Z95 * stderr),
        high=elo_of_score(mean + Z95 * stderr),
        score=mean,
        los=los,
    )
