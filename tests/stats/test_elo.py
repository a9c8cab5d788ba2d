"""The one Elo estimate: hand-computed figures, fishtest's formulas, and the edge cases."""

import math

import pytest
from scipy.stats import norm

from arena.stats.elo import (
    elo_of_score,
    expected_score,
    pentanomial_estimate,
    trinomial_estimate,
)


def test_expected_score_and_elo_are_inverses():
    for elo in (-600, -35.5, 0, 5, 191, 800):
        assert elo_of_score(expected_score(elo)) == pytest.approx(elo)


def test_three_wins_and_a_loss_by_hand():
    e = trinomial_estimate(3, 0, 1)
    mean, var = 0.75, (3 * 0.25**2 + 0.75**2) / 4
    stderr = math.sqrt(var / 4)
    assert e.score == mean and e.elo == pytest.approx(elo_of_score(mean))
    assert e.los == pytest.approx(norm.cdf((mean - 0.5) / stderr))
    assert round(100 * e.los, 1) == 87.6  # not cutechess's decisive-games-only 84.1
    assert e.low == pytest.approx(elo_of_score(mean - 1.959964 * stderr)) and e.high == math.inf


def test_draws_count_as_half_points():
    assert trinomial_estimate(3, 2, 1).score == pytest.approx(4 / 6)
    assert trinomial_estimate(3, 2, 1).los != trinomial_estimate(3, 0, 1).los
    assert trinomial_estimate(0, 6, 0).los == 0.5 and trinomial_estimate(0, 6, 0).elo == 0


def fishtest_get_elo(results):
    """fishtest's ``get_elo`` (server/fishtest/stats/stat_util.py), restated: ``results`` are
    frequencies from the worst outcome to the best, 3 for games, 5 for pairs, none empty."""
    count, n = len(results), sum(results)
    games = n * (count - 1) / 2
    mu = sum(r * i / 2 for i, r in enumerate(results)) / games
    var = sum(r * (i / 2 - (count - 1) / 2 * mu) ** 2 for i, r in enumerate(results)) / games
    sd = math.sqrt(var / games)
    lo, hi = mu + norm.ppf(0.025) * sd, mu + norm.ppf(0.975) * sd
    return elo_of_score(mu), (elo_of_score(hi) - elo_of_score(lo)) / 2, norm.cdf((mu - 0.5) / sd)


@pytest.mark.parametrize(
    "counts", [(30, 20, 10), (7, 3, 9), (1, 1, 1), (2, 5, 10, 20, 15), (9, 11, 30, 12, 8)]
)
def test_the_figures_are_fishtests(counts):
    if len(counts) == 3:
        wins, draws, losses = counts
        e = trinomial_estimate(wins, draws, losses)
        elo, half, los = fishtest_get_elo((losses, draws, wins))
    else:
        e = pentanomial_estimate(counts)
        elo, half, los = fishtest_get_elo(counts)
    assert e.elo == pytest.approx(elo)
    assert (e.high - e.low) / 2 == pytest.approx(half)
    assert e.los == pytest.approx(los)


def test_the_pentanomial_estimate_by_hand():
    # Pairs scoring 0.25, 0.5, 0.75, 1 (normalised) 5, 10, 20 and 15 times.
    e = pentanomial_estimate((0, 5, 10, 20, 15))
    mean = (5 * 0.25 + 10 * 0.5 + 20 * 0.75 + 15 * 1.0) / 50  # 0.725
    var = (5 * 0.25**2 + 10 * 0.5**2 + 20 * 0.75**2 + 15 * 1.0) / 50 - mean**2  # 0.055625
    stderr = math.sqrt(var / 50)
    assert e.score == pytest.approx(0.725)
    assert e.elo == pytest.approx(-400 * math.log10(1 / 0.725 - 1))  # 168.4
    assert e.low == pytest.approx(elo_of_score(mean - 1.959964 * stderr))
    assert e.high == pytest.approx(elo_of_score(mean + 1.959964 * stderr))
    assert e.los == pytest.approx(0.5 * (1 + math.erf((mean - 0.5) / stderr / math.sqrt(2))))


def test_the_other_side_sees_the_mirror_image():
    e, mirror = trinomial_estimate(30, 5, 10), trinomial_estimate(10, 5, 30)
    assert mirror.elo == pytest.approx(-e.elo) and mirror.los == pytest.approx(1 - e.los)
    assert (mirror.low, mirror.high) == (pytest.approx(-e.high), pytest.approx(-e.low))


def test_symmetric_results_are_even():
    e = pentanomial_estimate((3, 7, 20, 7, 3))
    assert e.elo == 0 and e.los == pytest.approx(0.5) and e.low == pytest.approx(-e.high)
    assert trinomial_estimate(10, 5, 10).elo == 0


def test_a_perfect_score_is_infinite_and_nothing_played_says_nothing():
    perfect = trinomial_estimate(3, 0, 0)
    assert perfect.elo == math.inf and perfect.los == 1.0
    assert trinomial_estimate(0, 0, 3).elo == -math.inf and trinomial_estimate(0, 0, 3).los == 0
    nothing = trinomial_estimate(0, 0, 0)
    assert math.isnan(nothing.elo) and math.isnan(nothing.score) and nothing.los == 0.5


@pytest.mark.parametrize("counts", [(1, 2), (1, -1, 0), (1, 0.5, 0), (True, 0, 0)])
def test_counts_are_checked(counts):
    with pytest.raises(ValueError, match="count"):
        if len(counts) == 3:
            trinomial_estimate(*counts)
        else:
            pentanomial_estimate(counts)
