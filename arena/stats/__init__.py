"""The arena's statistics: plain Python on NumPy and SciPy, no Django.

* :mod:`arena.stats.rating`: ratings fitted to every result at once (maximum likelihood on the
  Elo scale, as Ordo and BayesElo do), from the arena's counts or a local tournament's games.
* :mod:`arena.stats.sequential`: the sequential probability ratio test on game pairs, and the
  Elo estimates of a match (per pair and per game).

Every page and command imports what it needs from here::

    >>> from arena import stats
    >>> result = stats.sprt((0, 12, 78, 120, 90))
    >>> result.verdict
    <Verdict.H1: 'H1'>
"""

from arena.stats.rating import (
    ELO_SCALE,
    ArrayFit,
    Rating,
    RatingFit,
    elo_diff,
    fit,
    fit_arrays,
    fit_counts,
    fit_one,
    likelihood_of_superiority,
)
from arena.stats.sequential import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_ELO0,
    DEFAULT_ELO1,
    Estimate,
    SprtResult,
    Verdict,
    bounds,
    elo_of_score,
    expected_score,
    llr_pentanomial,
    llr_trinomial,
    pentanomial,
    pentanomial_estimate,
    sprt,
    trinomial_estimate,
    verdict,
)

__all__ = [
    "DEFAULT_ALPHA",
    "DEFAULT_BETA",
    "DEFAULT_ELO0",
    "DEFAULT_ELO1",
    "ELO_SCALE",
    "ArrayFit",
    "Estimate",
    "Rating",
    "RatingFit",
    "SprtResult",
    "Verdict",
    "bounds",
    "elo_diff",
    "elo_of_score",
    "expected_score",
    "fit",
    "fit_arrays",
    "fit_counts",
    "fit_one",
    "likelihood_of_superiority",
    "llr_pentanomial",
    "llr_trinomial",
    "pentanomial",
    "pentanomial_estimate",
    "sprt",
    "trinomial_estimate",
    "verdict",
]
