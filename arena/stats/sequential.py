"""Is version A stronger than version B? Sequential tests on game pairs, as engine testers run them.

Two versions play games in colour-reversed pairs: both games of a pair start from the same
opening, each version moving first once. Opening and first-move advantages then cancel inside a
pair, and the pair is the unit of the statistics (the *pentanomial* model of fishtest and
fastchess): a pair scores 0, 0.5, 1, 1.5 or 2 points for the candidate, and ``counts[i]`` is the
number of pairs in which it scored ``i / 2``. Scores below are normalised to [0, 1] (a pair's
score is ``i / 4``).

* The Elo estimate, its 95% interval and the likelihood of superiority are the ones every page
  shows (:func:`arena.stats.elo.pentanomial_estimate`).
* The sequential probability ratio test (SPRT) weighs H0 "the candidate is ``elo0`` Elo stronger"
  against H1 "it is ``elo1`` Elo stronger" (logistic Elo), as the generalised SPRT of fishtest
  does, with the exact maximum-likelihood ratio rather than its normal approximation
  ``N * (s1 - s0) * (2 * s - s0 - s1) / (2 * sigma ** 2)`` (``s`` is the mean score, ``sigma``
  the standard deviation of one pair's score, ``N`` the number of pairs; the two agree when the
  mean score lies near ``s0`` and ``s1``; the approximation overstates the evidence of a few
  pairs far from them). With ``s0`` and ``s1`` the expected scores at ``elo0`` and ``elo1``,
  and ``q`` the observed frequencies of the outcomes, the ratio is ``N * sum(q * ln(p1 / p0))``
  where ``p0`` (``p1``) is the most likely distribution of the outcomes whose mean score is
  ``s0`` (``s1``). So that a small sample where some outcome has not happened yet (every pair
  won, say) still allows such a distribution, every empty count is replaced by 0.001 first, as
  fishtest does. The test stops when the ratio leaves ``(ln(beta / (1 - alpha)), ln((1 - beta)
  / alpha))``: below, H0 is accepted; above, H1 is.

The defaults, ``elo0=0, elo1=5, alpha=beta=0.05``, are OpenBench's usual bounds for a quick
"is the new version better?" test; fishtest's gainer bounds are narrower (``[0, 2]``) and need
many more games. However strong the candidate, a pair carries only so much evidence between two
hypotheses 5 Elo apart: such a test needs a couple of hundred pairs at least. Wider bounds
(``[0, 50]``, say) settle a large difference in a few dozen pairs.

The per-game (trinomial: wins, draws, losses) ratio comes from the same method with a game as
the unit. It ignores the pairing, so it weighs the evidence less well when openings matter.

    >>> result = sprt((0, 12, 78, 120, 90))
    >>> result.pairs, round(result.estimate.elo, 1), result.verdict
    (300, 181.7, <Verdict.H1: 'H1'>)
    >>> round(result.llr, 2), round(result.lower, 2), round(result.upper, 2)
    (4.29, -2.94, 2.94)
    >>> sprt((25, 30, 40, 5, 0)).verdict, sprt((100, 120, 160, 20, 0)).verdict
    (<Verdict.NONE: ''>, <Verdict.H0: 'H0'>)
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from arena.stats.elo import (
    GAME_SCORES,
    PAIR_SCORES,
    Estimate,
    check_counts,
    expected_score,
    pentanomial_estimate,
)

#: The points a pair of games gives the candidate, by index of the pentanomial counts.
PAIR_POINTS = (0.0, 0.5, 1.0, 1.5, 2.0)
#: Every empty count counts as this many for the log-likelihood ratio (fishtest's value).
EPSILON = 1e-3

DEFAULT_ELO0 = 0.0
DEFAULT_ELO1 = 5.0
DEFAULT_ALPHA = 0.05
DEFAULT_BETA = 0.05


class Verdict(enum.Enum):
    """What a sequential test concluded so far."""

    NONE = ""  # still undecided
    H0 = "H0"  # the candidate is not ``elo1`` stronger: accepted when the ratio falls below
    H1 = "H1"  # the candidate is at least about ``elo1`` stronger: accepted above


@dataclass(frozen=True)
class SprtResult:
    """The state of a pentanomial SPRT after the pairs counted so far."""

    counts: tuple[int, int, int, int, int]
    elo0: float
    elo1: float
    alpha: float
    beta: float
    llr: float
    lower: float
    upper: float
    verdict: Verdict
    estimate: Estimate

    @property
    def pairs(self) -> int:
        return sum(self.counts)


def bounds(alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA) -> tuple[float, float]:
    """The log-likelihood ratio's stopping bounds ``(ln(beta/(1-alpha)), ln((1-beta)/alpha))``.

    ``alpha`` is the chance of accepting H1 when H0 holds, ``beta`` of accepting H0 when H1 does.

    >>> [round(b, 3) for b in bounds(0.05, 0.05)]
    [-2.944, 2.944]
    """
    _check_error_rates(alpha, beta)
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def pentanomial(pair_points: Iterable[float]) -> tuple[int, int, int, int, int]:
    """Counts of pairs by the points the candidate scored in them (0, 0.5, 1, 1.5 or 2).

    >>> pentanomial([2, 1, 1.5, 1, 0])
    (1, 0, 2, 1, 1)
    """
    counts = [0, 0, 0, 0, 0]
    for points in pair_points:
        index = points * 2
        if index not in (0, 1, 2, 3, 4):
            raise ValueError(f"a pair scores 0, 0.5, 1, 1.5 or 2 points, not {points!r}")
        counts[int(index)] += 1
    return counts[0], counts[1], counts[2], counts[3], counts[4]


def llr_pentanomial(
    counts: Sequence[int], elo0: float = DEFAULT_ELO0, elo1: float = DEFAULT_ELO1
) -> float:
    """The log-likelihood ratio of H1 (``elo1``) against H0 (``elo0``) for pentanomial counts.

    >>> round(llr_pentanomial((0, 5, 10, 20, 15), 0, 5), 3)
    0.714
    >>> llr_pentanomial((0, 0, 0, 0, 0))
    0.0
    """
    return _llr(PAIR_SCORES, check_counts(counts, 5), elo0, elo1)


def llr_trinomial(
    wins: int, draws: int, losses: int, elo0: float = DEFAULT_ELO0, elo1: float = DEFAULT_ELO1
) -> float:
    """The log-likelihood ratio from single games, ignoring the pairing (the same method).

    >>> round(llr_trinomial(30, 0, 10, 0, 5), 3)
    0.284
    """
    return _llr(GAME_SCORES, check_counts((wins, draws, losses), 3), elo0, elo1)


def verdict(llr: float, alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA) -> Verdict:
    """H1 once the ratio reaches the upper bound, H0 once it reaches the lower one, else NONE.

    >>> verdict(3.0), verdict(-3.0), verdict(0.5)
    (<Verdict.H1: 'H1'>, <Verdict.H0: 'H0'>, <Verdict.NONE: ''>)
    """
    lower, upper = bounds(alpha, beta)
    if llr >= upper:
        return Verdict.H1
    if llr <= lower:
        return Verdict.H0
    return Verdict.NONE


def sprt(
    counts: Sequence[int],
    elo0: float = DEFAULT_ELO0,
    elo1: float = DEFAULT_ELO1,
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
) -> SprtResult:
    """The whole picture of a pentanomial SPRT: ratio, bounds, verdict and Elo estimate."""
    checked = check_counts(counts, 5)
    if not elo0 < elo1:
        raise ValueError(f"elo0 must be below elo1, not {elo0} and {elo1}")
    lower, upper = bounds(alpha, beta)
    llr = llr_pentanomial(checked, elo0, elo1)
    return SprtResult(
        counts=(checked[0], checked[1], checked[2], checked[3], checked[4]),
        elo0=elo0,
        elo1=elo1,
        alpha=alpha,
        beta=beta,
        llr=llr,
        lower=lower,
        upper=upper,
        verdict=verdict(llr, alpha, beta),
        estimate=pentanomial_estimate(checked),
    )


def _check_error_rates(alpha: float, beta: float) -> None:
    for name, value in (("alpha", alpha), ("beta", beta)):
        if not 0.0 < value < 0.5:
            raise ValueError(f"{name} must be between 0 and 0.5, not {value}")


def _llr(scores: Sequence[float], counts: Sequence[int], elo0: float, elo1: float) -> float:
    n = sum(counts)
    if n == 0:
        return 0.0
    weights = [max(float(c), EPSILON) for c in counts]
    total = sum(weights)
    observed = [w / total for w in weights]
    p0 = _closest_distribution(scores, observed, expected_score(elo0))
    p1 = _closest_distribution(scores, observed, expected_score(elo1))
    return n * sum(q * math.log(a / b) for q, a, b in zip(observed, p1, p0, strict=True))


def _closest_distribution(
    scores: Sequence[float], observed: Sequence[float], mean: float
) -> list[float]:
    """The most likely distribution of the outcomes given ``observed`` frequencies, among those
    whose mean score is ``mean``.

    By Lagrange's method it is ``observed[i] / (1 + theta * (scores[i] - mean))`` for the
    ``theta`` at which these sum to one, that is the root of the decreasing function
    ``f(theta) = sum(observed[i] * d[i] / (1 + theta * d[i]))`` with ``d[i] = scores[i] - mean``
    between the two values where a denominator vanishes. Every observed frequency is positive
    (the empty counts are regularised) and ``0 < mean < 1``, so the root exists and is unique.
    """
    d = [a - mean for a in scores]
    lo, hi = -1.0 / max(d), -1.0 / min(d)

    # Newton's method from theta = 0 (the observed distribution), kept inside the bracket
    # (lo, hi) by bisection: f is +inf at lo, -inf at hi and decreasing in between.
    theta = 0.0
    for _ in range(100):
        terms = [x / (1.0 + theta * x) for x in d]
        value = sum(q * t for q, t in zip(observed, terms, strict=True))
        if value > 0:
            lo = theta
        else:
            hi = theta
        slope = -sum(q * t * t for q, t in zip(observed, terms, strict=True))
        step = theta - value / slope
        if abs(step - theta) < 1e-15 or value == 0:
            break
        theta = step if lo < step < hi else (lo + hi) / 2.0
    return [q / (1.0 + theta * x) for q, x in zip(observed, d, strict=True)]
