"""The arena's statistics: plain Python on NumPy and SciPy, no Django.

Every page, task and command takes its figures from here, so that two pages never show two
numbers for the same games:

* :mod:`arena.stats.elo`: the Elo difference a match score implies, its 95% interval, the score
  and the likelihood of superiority (LOS), from games (wins, draws, losses) or from
  colour-reversed pairs (pentanomial counts), as fishtest's ``get_elo``;
* :mod:`arena.stats.sequential`: the sequential probability ratio test on pairs of games;
* :mod:`arena.stats.rating`: ratings fitted to every result at once (maximum likelihood on the
  Elo scale, as Ordo and BayesElo do);
* :mod:`arena.stats.scores`: a result's points, and a round robin's standings and
  cross-table.

    >>> from arena import stats
    >>> e = stats.trinomial_estimate(3, 0, 1)
    >>> round(e.elo), f"{e.los:.1%}"
    (191, '87.6%')
    >>> stats.sprt((0, 12, 78, 120, 90)).verdict
    <Verdict.H1: 'H1'>
    >>> stats.points("draw"), stats.points("white", "black")
    (0.5, 0.0)
"""

from arena.stats.elo import (
    Estimate,
    elo_of_score,
    expected_score,
    pentanomial_estimate,
    trinomial_estimate,
)
from arena.stats.rating import (
    ELO_SCALE,
    ArrayFit,
    Rating,
    RatingFit,
    fit,
    fit_arrays,
    fit_counts,
    fit_one,
)
from arena.stats.scores import (
    Score,
    Standing,
    cross_table,
    format_points,
    points,
    standings,
    standings_text,
)
from arena.stats.sequential import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_ELO0,
    DEFAULT_ELO1,
    SprtResult,
    Verdict,
    bounds,
    llr_pentanomial,
    llr_trinomial,
    pentanomial,
    sprt,
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
    "Score",
    "SprtResult",
    "Standing",
    "Verdict",
    "bounds",
    "cross_table",
    "elo_of_score",
    "expected_score",
    "fit",
    "fit_arrays",
    "fit_counts",
    "fit_one",
    "format_points",
    "llr_pentanomial",
    "llr_trinomial",
    "pentanomial",
    "pentanomial_estimate",
    "points",
    "sprt",
    "standings",
    "standings_text",
    "trinomial_estimate",
    "verdict",
]
