"""Ratings: maximum likelihood on the Elo scale, checked by simulation and a generic optimiser."""

import math
import random

import numpy as np
import pytest
from scipy.optimize import minimize

from arena.stats import rating
from arena.stats.rating import fit, fit_counts

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


# ----------------------------------------------------------------------------- at scale


def reference_fit(
    pairs: list[tuple[str, str, float, float]],
    *,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    white_advantage: bool = True,
    prior_draws: float = 1.0,
) -> dict[str, tuple[float, float]]:
    """The textbook fit, written out densely: Newton's method on the whole Hessian, the
    intervals from its inverse. Small cases only (memory grows with the square)."""
    # Players numbered as they first appear (without an anchor, the first is the one held
    # still while fitting, which the weak prior is centred on).
    index: dict[str, int] = {}
    for w, b, _, _ in pairs:
        index.setdefault(w, len(index))
        index.setdefault(b, len(index))
    if anchor is not None:
        index.setdefault(anchor, len(index))
    n = len(index)
    rows = [(index[w], index[b], g, p) for w, b, g, p in pairs]
    for i, j in {(min(a, b), max(a, b)) for a, b, _, _ in rows}:
        rows += [(i, j, prior_draws / 2, prior_draws / 4), (j, i, prior_draws / 2, prior_draws / 4)]
    ref = index[anchor] if anchor is not None else 0
    size = n + (1 if white_advantage else 0)
    free = [k for k in range(size) if k != ref]
    ridge = 1.0 / (1000 * K) ** 2
    x = np.zeros(size)

    def derivatives(x):
        grad, hess = np.zeros(size), np.zeros((size, size))
        for i, j, g, p in rows:
            d = x[i] - x[j] + (x[n] if white_advantage else 0.0)
            e = 1 / (1 + math.exp(-d))
            r, w = p - g * e, g * e * (1 - e)
            touched = [(i, 1.0), (j, -1.0)] + ([(n, 1.0)] if white_advantage else [])
            for a, sa in touched:
                grad[a] += sa * r
                for b, sb in touched:
                    hess[a, b] -= sa * sb * w
        for k in range(n):
            grad[k] -= ridge * (x[k] - x[ref])
            hess[k, k] -= ridge
        return grad, hess

    for _ in range(100):
        grad, hess = derivatives(x)
        step = np.linalg.solve(-hess[np.ix_(free, free)], grad[free])
        x[free] += step
        if np.max(np.abs(step)) < 1e-12:
            break
    _, hess = derivatives(x)
    cov = np.zeros((size, size))
    cov[np.ix_(free, free)] = np.linalg.inv(-hess[np.ix_(free, free)])
    cov = cov[:n, :n]
    if anchor is None:
        centre = np.eye(n) - 1.0 / n
        cov = centre @ cov @ centre
    elo = x[:n] / K
    elo = elo - (elo[ref] if anchor is not None else elo.mean()) + anchor_elo
    errors = 1.959963984540054 * np.sqrt(np.diag(cov)) / K
    return {name: (elo[i], errors[i]) for name, i in index.items()}


def random_pairs(players: int, pairs: int, seed: int, reach: int = 5):
    """Pair counts among players of spread strengths who meet near neighbours (a ladder)."""
    rng = random.Random(seed)
    strength = sorted(rng.gauss(0, 300) for _ in range(players))
    out = []
    for _ in range(pairs):
        i = rng.randrange(players)
        j = min(players - 1, max(0, i + rng.choice([-1, 1]) * rng.randint(1, reach)))
        if i == j:
            continue
        n = rng.randint(1, 6)
        p = sum(rng.random() < expected(strength[i], strength[j], 30) for _ in range(n))
        out.append((f"p{i}", f"p{j}", float(n), float(p)))
    return out


CASES = [
    pytest.param({"anchor": "p0", "anchor_elo": 1000}, id="anchored"),
    pytest.param({"anchor": None, "anchor_elo": 1500}, id="mean-held"),
    pytest.param({"anchor": "p3", "white_advantage": False}, id="no-advantage"),
    pytest.param({"anchor": "p0", "prior_draws": 0.0}, id="no-prior"),
]


@pytest.mark.parametrize("options", CASES)
@pytest.mark.parametrize(
    ("dense_component", "memory"),
    [
        pytest.param(200, 256 * 2**20, id="banded"),
        pytest.param(200, 1, id="sparse-lu-dense-intervals"),
        pytest.param(0, 1, id="sparse-lu-column-solves"),
    ],
)
def test_the_sparse_fit_equals_the_dense_reference(
    options: dict, dense_component: int, memory: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rating, "DENSE_COMPONENT", dense_component)
    monkeypatch.setattr(rating, "INTERVAL_MEMORY", memory)
    pairs = random_pairs(40, 300, seed=11)
    # and a second group that never met the first (a separate component)
    pairs += [("q1", "q2", 5.0, 3.0), ("q2", "q3", 4.0, 1.5), ("q3", "q1", 6.0, 2.0)]
    expected_fit = reference_fit(pairs, **options)
    ours = {r.name: r for r in fit_counts(pairs, **options).ratings}
    assert set(ours) == set(expected_fit)
    for name, (elo, error) in expected_fit.items():
        assert ours[name].elo == pytest.approx(elo, abs=1e-6), name
        assert ours[name].error == pytest.approx(error, rel=1e-6, abs=1e-9), name


def test_the_band_gives_the_exact_inverse_diagonal(monkeypatch: pytest.MonkeyPatch) -> None:
    """Selected inversion within the band, component by component, against a dense inverse."""
    from scipy import sparse

    monkeypatch.setattr(rating, "DENSE_COMPONENT", 0)
    rng = np.random.default_rng(3)
    size, reach = 300, 6
    rows, cols = [], []
    for i in range(size):
        for j in range(i + 1, min(size, i + reach)):
            if rng.random() < 0.5 and i != 150:  # two components: 0..150 and 151..299
                rows.append(i)
                cols.append(j)
    order = rng.permutation(size)  # scatter the band: the ordering must find it again
    weights = rng.random(len(rows)) + 0.1
    a = sparse.coo_matrix((weights, (order[rows], order[cols])), shape=(size, size)).toarray()
    a = a + a.T
    a = np.diag(a.sum(axis=1) + 0.01) - a
    assert np.diag(rating._inverse_diagonal(sparse.csc_matrix(a))) == pytest.approx(
        np.diag(np.diag(np.linalg.inv(a))), rel=1e-9
    )


def test_players_who_never_met_do_not_move_each_other() -> None:
    """Without a shared first-player advantage, adding or changing a group of players who
    never met the anchor's group leaves that group's ratings and intervals as they were."""
    group = random_pairs(30, 200, seed=4)
    other = [
        (w.replace("p", "q"), b.replace("p", "q"), n, p) for w, b, n, p in random_pairs(20, 90, 5)
    ]
    changed = [(w, b, n, n - p) for w, b, n, p in other]
    options: dict = {"anchor": "p0", "anchor_elo": 1000, "white_advantage": False}
    alone = {r.name: r for r in fit_counts(group, **options).ratings}
    for extra in (other, changed):
        together = {r.name: r for r in fit_counts(group + extra, **options).ratings}
        for name, r in alone.items():
            assert together[name].elo == pytest.approx(r.elo, abs=1e-9)
            assert together[name].error == pytest.approx(r.error, abs=1e-9)
    assert {r.name: r.elo for r in fit_counts(group + other, **options).ratings}["q1"] != (
        {r.name: r.elo for r in fit_counts(group + changed, **options).ratings}["q1"]
    )


@pytest.mark.parametrize("start_from", ["answer", "shifted", "far", "some"])
def test_a_warm_start_converges_to_the_same_answer(start_from: str) -> None:
    pairs = random_pairs(60, 500, seed=8)
    cold = fit_counts(pairs, anchor="p0", anchor_elo=1000)
    answer = {r.name: r.elo for r in cold.ratings}
    rng = random.Random(2)
    start = {
        "answer": answer,
        "shifted": {k: v + rng.gauss(0, 40) for k, v in answer.items()},
        "far": {k: 1000 + 3000 * rng.random() for k in answer},
        "some": {k: v for k, v in answer.items() if rng.random() < 0.5},
    }[start_from]
    warm = fit_counts(
        pairs, anchor="p0", anchor_elo=1000, start=start, start_advantage=cold.white_advantage
    )
    assert warm.white_advantage == pytest.approx(cold.white_advantage, abs=1e-6)
    for a, b in zip(cold.ratings, warm.ratings, strict=True):
        assert (a.name, a.games, a.score) == (b.name, b.games, b.score)
        assert a.elo == pytest.approx(b.elo, abs=1e-6)
        assert a.error == pytest.approx(b.error, rel=1e-6)
    if start_from == "answer":
        assert warm.iterations <= 2 < cold.iterations


def test_one_player_alone_lands_where_the_full_fit_puts_it() -> None:
    """With every opponent held at its fitted rating, the one-player step returns the full
    fit's rating: the full fit is a fixed point of the step after each result."""
    pairs = random_pairs(30, 250, seed=6)
    full = fit_counts(pairs, anchor="p0", anchor_elo=1000)
    elo = {r.name: r.elo for r in full.ratings}
    for player in ("p5", "p17", "p29"):
        against: dict[str, list[float]] = {}
        for w, b, n, p in pairs:
            if player in (w, b) and w != b:
                row = against.setdefault(b if w == player else w, [0.0, 0.0, 0.0, 0.0])
                k = 0 if w == player else 2
                row[k] += n
                row[k + 1] += p if w == player else n - p
        moved, error = rating.fit_one(
            [(elo[o], *r) for o, r in against.items()],
            elo=1500.0,
            white_advantage=full.white_advantage,
            centre=1000,
        )
        assert moved == pytest.approx(elo[player], abs=1e-6)
        assert 0 < error < {r.name: r.error for r in full.ratings}[player]


def test_one_player_step_refuses_bad_counts() -> None:
    with pytest.raises(ValueError):
        rating.fit_one([(1000.0, 2, 3, 0, 0)], elo=1000.0)
    assert rating.fit_one([], elo=1234.0) == (1234.0, math.inf)
