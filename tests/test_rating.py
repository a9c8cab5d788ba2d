"""Ratings: maximum likelihood on the Elo scale, checked by simulation and a generic optimiser."""

import math
import random

import numpy as np
import pytest
from scipy.optimize import minimize

from arena.rating import elo_diff, fit, fit_counts, likelihood_of_superiority

K = math.log(10) / 400


def expected(a: float, b: float, adv: float = 0.0) -> float:
    return 1 / (1 + 10 ** ((b - a - adv) / 400))


def simulate(
    true: dict[str, float], games_per_pair: int, seed: int, adv: float = 0.0, draw_rate: float = 0.0
):
    rng = random.Random(seed)
    names = sorted(true)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            for g in range(games_per_pair):
                white, black = (a, b) if g % 2 == 0 else (b, a)
                p = expected(true[white], true[black], adv)
                u = rng.random()
                if u < draw_rate:
                    score = 0.5
                elif rng.random() < p:
                    score = 1.0
                else:
                    score = 0.0
                out.append((white, black, score))
    return out


def test_recovers_true_ratings_within_their_intervals():
    true = {"random": 1000.0, "greedy": 1350.0, "search": 1700.0, "mid": 1200.0}
    games = simulate(true, 400, seed=1)
    ratings = {r.name: r for r in fit(games, anchor="random", anchor_elo=1000)}
    assert ratings["random"].elo == 1000 and ratings["random"].error == 0
    for name, value in true.items():
        r = ratings[name]
        # 1.7 times the 95% half-width is about 3.4 standard errors; calibration of the
        # intervals themselves is checked by the coverage test below.
        assert abs(r.elo - value) <= 1.7 * r.error + 1e-9, (name, r)
    assert [r.name for r in fit(games, anchor="random", anchor_elo=1000)][0] == "search"


def test_intervals_cover_the_truth_about_95_percent_of_the_time():
    true = {"a": 0.0, "b": 100.0, "c": 250.0}
    hits = trials = 0
    for seed in range(200):
        games = simulate(true, 30, seed=seed, adv=0)
        ratings = {r.name: r for r in fit(games, anchor="a", white_advantage=False, prior_draws=0)}
        for name in ("b", "c"):
            trials += 1
            hits += abs(ratings[name].elo - true[name]) <= ratings[name].error
    assert 0.91 <= hits / trials <= 0.99, hits / trials


def test_result_does_not_depend_on_the_order_of_games():
    games = simulate({"a": 0, "b": 80, "c": 200, "d": -50}, 20, seed=3, draw_rate=0.2)
    first = fit(games, anchor="a")
    shuffled = games[:]
    random.Random(9).shuffle(shuffled)
    second = fit(shuffled, anchor="a")
    assert [(r.name, round(r.elo, 6), round(r.error, 6)) for r in first] == [
        (r.name, round(r.elo, 6), round(r.error, 6)) for r in second
    ]


def test_matches_a_generic_optimiser_on_the_same_likelihood():
    """An independent check: minimise the same negative log-likelihood with scipy."""
    games = simulate({"a": 0, "b": 120, "c": 300}, 40, seed=5, adv=40, draw_rate=0.1)
    result = fit_counts(
        [(w, b, 1, s) for w, b, s in games], anchor="a", prior_draws=0, white_advantage=True
    )
    names = ["a", "b", "c"]
    index = {n: i for i, n in enumerate(names)}

    def nll(v):
        r = np.array([0.0, v[0], v[1]])
        total = 0.0
        for w, b, s in games:
            d = (r[index[w]] - r[index[b]] + v[2]) * K
            p = 1 / (1 + math.exp(-d))
            total -= s * math.log(p) + (1 - s) * math.log(1 - p)
        # the module's weak prior (sd 1000 Elo around the anchor)
        return total + ((v[0] ** 2 + v[1] ** 2) * K**2) / (2 * (1000 * K) ** 2)

    best = minimize(nll, np.zeros(3), method="BFGS", options={"gtol": 1e-9})
    ours = {r.name: r.elo for r in result.ratings}
    assert ours["b"] == pytest.approx(best.x[0], abs=0.05)
    assert ours["c"] == pytest.approx(best.x[1], abs=0.05)
    assert result.white_advantage == pytest.approx(best.x[2], abs=0.05)


def test_first_player_advantage_is_fitted_not_charged_to_the_bots():
    games = simulate({"a": 0, "b": 0}, 2000, seed=7, adv=60)
    result = fit_counts([(w, b, 1, s) for w, b, s in games], anchor="a")
    assert result.white_advantage == pytest.approx(60, abs=15)
    assert {r.name: r.elo for r in result.ratings}["b"] == pytest.approx(0, abs=20)


def test_a_perfect_score_still_gets_a_finite_rating():
    games = [("a", "b", 1.0), ("b", "a", 0.0)] * 10
    ratings = {r.name: r for r in fit(games, anchor="b")}
    assert math.isfinite(ratings["a"].elo) and ratings["a"].elo > 300
    assert math.isfinite(ratings["a"].error)


def test_draws_count_half_a_point_each():
    games = [("a", "b", 0.5)] * 50 + [("b", "a", 0.5)] * 50
    ratings = {r.name: r for r in fit(games, anchor="a")}
    assert ratings["b"].elo == pytest.approx(0, abs=1e-6)
    assert ratings["a"].score == 50 and ratings["a"].games == 100


def test_more_games_narrow_the_interval():
    few = {r.name: r for r in fit(simulate({"a": 0, "b": 100}, 50, seed=2), anchor="a")}
    many = {r.name: r for r in fit(simulate({"a": 0, "b": 100}, 800, seed=2), anchor="a")}
    assert many["b"].error < few["b"].error / 3


def test_without_an_anchor_the_mean_is_held():
    ratings = fit(simulate({"a": 0, "b": 100, "c": 200}, 50, seed=4), anchor_elo=1500)
    assert sum(r.elo for r in ratings) / 3 == pytest.approx(1500)


def test_players_without_games_and_separate_groups_stay_finite():
    games = [("a", "b", 1.0), ("b", "a", 0.5)] + [("c", "d", 1.0), ("d", "c", 0.0)]
    result = fit_counts([(w, b, 1, s) for w, b, s in games], anchor="a", players=["idle"])
    ratings = {r.name: r for r in result.ratings}
    assert all(math.isfinite(r.elo) for r in ratings.values())
    assert ratings["idle"].games == 0 and ratings["idle"].error == math.inf


def test_bad_input_is_refused():
    with pytest.raises(ValueError):
        fit([("a", "b", 2.0)])
    with pytest.raises(ValueError):
        fit([("a", "a", 1.0)])
    with pytest.raises(ValueError):
        fit_counts([("a", "b", 3, 4)])
    assert fit([]) == []


def test_elo_difference_of_a_match_score():
    diff, err = elo_diff(30, 0, 10)
    assert diff == pytest.approx(190.85, abs=0.01)
    assert 0 < err < 150
    assert elo_diff(10, 0, 30)[0] == pytest.approx(-diff)
    assert elo_diff(5, 10, 5) == (0.0, pytest.approx(elo_diff(5, 10, 5)[1]))
    assert elo_diff(3, 0, 0)[0] == math.inf and math.isnan(elo_diff(3, 0, 0)[1])
    assert likelihood_of_superiority(10, 10) == 0.5
    assert likelihood_of_superiority(20, 5) > 0.99
