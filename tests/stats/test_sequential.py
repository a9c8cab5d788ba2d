"""Sequential tests on game pairs: hand-computed figures, the stopping rule and a simulation."""

import math
import random

import numpy as np
import pytest
from scipy.optimize import minimize

from arena.stats.elo import expected_score, pentanomial_estimate
from arena.stats.sequential import (
    Verdict,
    bounds,
    llr_pentanomial,
    llr_trinomial,
    pentanomial,
    sprt,
    verdict,
)


def test_bounds_are_the_logs_of_the_error_rates():
    lower, upper = bounds(0.05, 0.10)
    assert lower == pytest.approx(math.log(0.10 / 0.95))
    assert upper == pytest.approx(math.log(0.90 / 0.05))


def normal_approximation(counts, elo0, elo1):
    scores = [i / (len(counts) - 1) for i in range(len(counts))]
    n = sum(counts)
    mean = sum(a * c for a, c in zip(scores, counts, strict=True)) / n
    var = sum(c * (a - mean) ** 2 for a, c in zip(scores, counts, strict=True)) / n
    s0, s1 = expected_score(elo0), expected_score(elo1)
    return n * (s1 - s0) * (2 * mean - s0 - s1) / (2 * var)


def test_llr_agrees_with_the_normal_approximation_near_the_bounds():
    # Mean score 0.5025, between s0 = 0.5 and s1 = 0.5072: the two methods agree closely.
    counts = (30, 80, 180, 81, 29)
    assert llr_pentanomial(counts, 0, 5) == pytest.approx(
        normal_approximation(counts, 0, 5), rel=0.02
    )
    assert llr_trinomial(300, 205, 295, 0, 5) == pytest.approx(
        normal_approximation((295, 205, 300), 0, 5), rel=0.02
    )


def test_llr_is_the_ratio_of_the_constrained_maximum_likelihoods():
    """Checked against a generic optimiser maximising the likelihood under the mean constraint."""
    counts = (2, 5, 10, 20, 15)
    scores = np.array([0, 0.25, 0.5, 0.75, 1])
    q = np.array(counts) / sum(counts)

    def best(mean):
        res = minimize(
            lambda p: -np.sum(q * np.log(p)),
            np.full(5, 0.2),
            constraints=[
                {"type": "eq", "fun": lambda p: p.sum() - 1},
                {"type": "eq", "fun": lambda p: p @ scores - mean},
            ],
            bounds=[(1e-9, 1)] * 5,
            method="SLSQP",
            options={"ftol": 1e-14, "maxiter": 500},
        )
        return res.x

    p0, p1 = best(expected_score(0)), best(expected_score(30))
    expected = sum(counts) * np.sum(q * np.log(p1 / p0))
    assert llr_pentanomial(counts, 0, 30) == pytest.approx(expected, rel=1e-4)


def test_a_few_pairs_far_from_the_bounds_are_weak_evidence():
    # One drawn pair must not come near a bound, whatever the variance of one sample.
    assert abs(llr_pentanomial((0, 0, 1, 0, 0), 0, 5)) < 0.1
    assert abs(llr_pentanomial((0, 0, 2, 0, 0), 0, 50)) < 1


def test_a_sample_with_every_pair_won_gets_a_finite_ratio():
    llr = llr_pentanomial((0, 0, 0, 0, 12), 0, 5)
    assert math.isfinite(llr) and llr > 0
    assert pentanomial_estimate((0, 0, 0, 0, 12)).elo == math.inf


def test_nothing_played_says_nothing():
    result = sprt((0, 0, 0, 0, 0))
    assert result.llr == 0 and result.verdict is Verdict.NONE and result.pairs == 0
    assert math.isnan(result.estimate.elo) and result.estimate.los == 0.5


def test_the_verdict_follows_the_bounds():
    lower, upper = bounds()
    assert verdict(upper) is Verdict.H1
    assert verdict(lower) is Verdict.H0
    assert verdict((lower + upper) / 2) is Verdict.NONE


def test_pentanomial_counts_pairs_by_points():
    assert pentanomial([0, 0.5, 1, 1, 1.5, 2, 2, 2]) == (1, 1, 2, 1, 3)
    with pytest.raises(ValueError, match=r"0\.75"):
        pentanomial([0.75])


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: sprt((1, 2, 3)), "expected 5 counts"),
        (lambda: sprt((1, 2, 3, 4, -1)), "at least 0"),
        (lambda: sprt((1, 2, 3, 4, 5), elo0=5, elo1=0), "elo0 must be below elo1"),
        (lambda: sprt((1, 2, 3, 4, 5), alpha=0), "alpha"),
        (lambda: sprt((1, 2, 3, 4, 5), beta=0.7), "beta"),
    ],
)
def test_bad_input_is_refused_clearly(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def play_pair(rng: random.Random, elo: float, draw_rate: float) -> float:
    """Two games between players ``elo`` apart: the candidate's points in the pair."""
    p_win = expected_score(elo)
    points = 0.0
    for _ in range(2):
        if rng.random() < draw_rate:
            points += 0.5
        elif rng.random() < p_win:
            points += 1.0
    return points


def run_test(seed: int, elo: float, elo0: float, elo1: float, max_pairs: int = 5000) -> Verdict:
    rng = random.Random(seed)
    counts = [0, 0, 0, 0, 0]
    for _ in range(max_pairs):
        counts[int(play_pair(rng, elo, 0.2) * 2)] += 1
        result = sprt(counts, elo0, elo1)
        if result.verdict is not Verdict.NONE:
            return result.verdict
    return Verdict.NONE


def test_a_much_stronger_candidate_is_accepted_almost_always():
    verdicts = [run_test(seed, elo=100, elo0=0, elo1=20) for seed in range(100)]
    assert verdicts.count(Verdict.H1) >= 95


def test_a_weaker_candidate_is_rejected_almost_always():
    verdicts = [run_test(seed, elo=-50, elo0=0, elo1=20) for seed in range(100)]
    assert verdicts.count(Verdict.H0) >= 95


def test_false_positives_stay_near_alpha():
    # An equal candidate (H0 true): H1 should be accepted about alpha = 5% of the time.
    verdicts = [run_test(seed, elo=0, elo0=0, elo1=40) for seed in range(200)]
    assert verdicts.count(Verdict.NONE) == 0
    assert verdicts.count(Verdict.H1) <= 20
