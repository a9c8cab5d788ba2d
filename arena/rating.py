"""Ratings on the Elo scale for programs that never change.

A bot version is the same program in every game it plays, so its strength is one number fitted
to all of its results at once, not a running estimate that depends on the order of the games.
This module fits the Bradley-Terry model on the Elo scale by maximum likelihood, the way Ordo
and BayesElo do:

* the expected score of ``a`` against ``b`` is ``1 / (1 + 10 ** ((Rb - Ra - h) / 400))`` where
  ``h`` is the first player's advantage, fitted together with the ratings (it is 0 with
  ``white_advantage=False``);
* a draw counts as half a point for each side;
* ``prior_draws`` virtual draws are added between every pair that played (BayesElo's prior), so
  that a bot that won every game still gets a finite rating, and a weak Gaussian prior keeps
  groups of bots that never met the anchor at a finite distance from it;
* one bot (the anchor) is held at a fixed value and every interval is relative to it; without an
  anchor the mean rating is held at ``anchor_elo``;
* the 95% interval of each rating comes from the curvature of the likelihood (the inverse of the
  Fisher information), like Ordo's and BayesElo's.

The result is a pure function of the set of results: recomputable at any time, order-independent.

    >>> games = [("a", "b", 1.0)] * 30 + [("a", "b", 0.0)] * 10 + [("b", "a", 0.0)] * 30
    >>> games += [("b", "a", 1.0)] * 10
    >>> ratings = {r.name: r for r in fit(games, anchor="b", anchor_elo=1000)}
    >>> round(ratings["a"].elo), ratings["b"].elo, ratings["b"].error
    (1188, 1000.0, 0.0)
    >>> round(elo_diff(30, 0, 10)[0])
    191
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

_K = math.log(10) / 400  # Elo points -> natural logistic scale
_Z95 = 1.959963984540054

Floats = npt.NDArray[np.float64]
Indices = npt.NDArray[np.int64]


@dataclass(frozen=True)
class Rating:
    """One player's fitted rating, its 95% half-interval, games played and points scored."""

    name: str
    elo: float
    error: float
    games: int
    score: float

    @property
    def percent(self) -> float:
        return 100.0 * self.score / self.games if self.games else 0.0


@dataclass(frozen=True)
class RatingFit:
    """Every player's rating (strongest first) and the fitted first-player advantage in Elo."""

    ratings: list[Rating]
    white_advantage: float


def fit(
    results: Iterable[tuple[str, str, float]],
    *,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    white_advantage: bool = True,
    prior_draws: float = 1.0,
) -> list[Rating]:
    """Ratings from individual results ``(white, black, white's score 1 / 0.5 / 0)``."""
    counts: dict[tuple[str, str], list[float]] = {}
    for white, black, score in results:
        if score not in (0, 0.5, 1):
            raise ValueError(f"a score is 1, 0.5 or 0, not {score!r}")
        if white == black:
            raise ValueError(f"{white!r} cannot play itself")
        c = counts.setdefault((white, black), [0.0, 0.0])
        c[0] += 1
        c[1] += score
    return fit_counts(
        ((w, b, n, p) for (w, b), (n, p) in counts.items()),
        anchor=anchor,
        anchor_elo=anchor_elo,
        white_advantage=white_advantage,
        prior_draws=prior_draws,
    ).ratings


def fit_counts(
    pairs: Iterable[tuple[str, str, float, float]],
    *,
    anchor: str | None = None,
    anchor_elo: float = 0.0,
    white_advantage: bool = True,
    prior_draws: float = 1.0,
    players: Iterable[str] = (),
) -> RatingFit:
    """Ratings from aggregated results ``(white, black, games, white's points)``.

    The same pair may appear several times (its counts add up). ``players`` adds players with
    no games (they get the anchor's value and an infinite interval).
    """
    names: dict[str, int] = {}
    rows: list[tuple[int, int, float, float]] = []
    for white, black, n_games, n_points in pairs:
        if n_games < 0 or not 0 <= n_points <= n_games:
            raise ValueError(
                f"bad counts for {white} vs {black}: {n_points} points in {n_games} games"
            )
        if n_games == 0:
            continue
        i = names.setdefault(white, len(names))
        j = names.setdefault(black, len(names))
        rows.append((i, j, float(n_games), float(n_points)))
    for p in players:
        names.setdefault(p, len(names))
    if anchor is not None:
        names.setdefault(anchor, len(names))
    n = len(names)
    if n == 0:
        return RatingFit([], 0.0)

    wi = np.array([r[0] for r in rows], dtype=np.int64)
    bi = np.array([r[1] for r in rows], dtype=np.int64)
    games = np.array([r[2] for r in rows])
    points = np.array([r[3] for r in rows])
    # BayesElo's prior: virtual draws between the two players of every pair that met, split
    # between the two colours so that it says nothing about the first player's advantage.
    if prior_draws > 0 and rows:
        lo, hi = np.minimum(wi, bi), np.maximum(wi, bi)
        met = np.unique(lo * n + hi)
        a, b = met // n, met % n
        half = prior_draws / 2
        wi = np.concatenate([wi, a, b])
        bi = np.concatenate([bi, b, a])
        games = np.concatenate([games, np.full(len(met), half), np.full(len(met), half)])
        points = np.concatenate([points, np.full(len(met), half / 2), np.full(len(met), half / 2)])

    fixed = names[anchor] if anchor is not None else None
    # Unknowns, on the logistic scale: a rating per player, then the first-player advantage.
    # One rating is held still while fitting (the anchor, else the first player); the others
    # move relative to it.
    ref = fixed if fixed is not None else 0
    size = n + (1 if white_advantage else 0)
    free = np.array([k for k in range(size) if k != ref], dtype=np.int64)
    x = np.zeros(size)
    ridge = 1.0 / (1000 * _K) ** 2  # a weak Gaussian prior (sd 1000 Elo) on every rating
    diag = np.arange(n)
    for _ in range(100):
        grad, hess = _derivatives(x, wi, bi, games, points, n, white_advantage)
        grad[:n] -= ridge * (x[:n] - x[ref])
        hess[diag, diag] -= ridge
        step = np.linalg.solve(-hess[np.ix_(free, free)], grad[free])
        x[free] += step
        if step.size == 0 or np.max(np.abs(step)) < 1e-10:
            break

    _, hess = _derivatives(x, wi, bi, games, points, n, white_advantage)
    hess[diag, diag] -= ridge
    cov = np.zeros((size, size))
    if free.size:
        cov[np.ix_(free, free)] = np.linalg.inv(-hess[np.ix_(free, free)])
    cov = cov[:n, :n]
    if fixed is None:
        # Relative to the mean rating instead of to the player held still.
        centre = np.eye(n) - 1.0 / n
        cov = centre @ cov @ centre
    errors = _Z95 * np.sqrt(np.maximum(np.diag(cov), 0.0)) / _K

    elo = x[:n] / _K
    if fixed is not None:
        elo = elo - elo[fixed] + anchor_elo
    else:
        elo = elo - elo.mean() + anchor_elo
    played = np.zeros(n)
    scored = np.zeros(n)
    real = len(rows)
    np.add.at(played, wi[:real], games[:real])
    np.add.at(played, bi[:real], games[:real])
    np.add.at(scored, wi[:real], points[:real])
    np.add.at(scored, bi[:real], games[:real] - points[:real])
    out = []
    for name, k in names.items():
        err = float(errors[k]) if played[k] > 0 or k == fixed else math.inf
        out.append(Rating(name, float(elo[k]), err, round(played[k]), float(scored[k])))
    out.sort(key=lambda r: (-r.elo, r.name))
    advantage = float(x[n] / _K) if white_advantage else 0.0
    return RatingFit(out, advantage)


def _derivatives(
    x: Floats,
    wi: Indices,
    bi: Indices,
    games: Floats,
    points: Floats,
    n: int,
    white_advantage: bool,
) -> tuple[Floats, Floats]:
    """Gradient and Hessian of the log-likelihood (logistic scale)."""
    size = len(x)
    adv = x[n] if white_advantage else 0.0
    d = x[wi] - x[bi] + adv
    p = 1.0 / (1.0 + np.exp(-d))
    g = points - games * p  # d logL / d d
    w = games * p * (1.0 - p)  # -d2 logL / d d2
    grad = np.zeros(size)
    np.add.at(grad, wi, g)
    np.add.at(grad, bi, -g)
    hess = np.zeros((size, size))
    np.add.at(hess, (wi, wi), -w)
    np.add.at(hess, (bi, bi), -w)
    np.add.at(hess, (wi, bi), w)
    np.add.at(hess, (bi, wi), w)
    if white_advantage:
        grad[n] = g.sum()
        hess[n, n] = -w.sum()
        col_w = np.zeros(n)
        np.add.at(col_w, wi, -w)
        np.add.at(col_w, bi, w)
        hess[n, :n] = col_w
        hess[:n, n] = col_w
    return grad, hess


def elo_diff(wins: int, draws: int, losses: int) -> tuple[float, float]:
    """The Elo difference a match score implies, and its 95% error (as cutechess prints them).

    A perfect or a zero score gives an infinite difference and a NaN error.
    """
    n = wins + draws + losses
    if n == 0:
        return 0.0, math.nan
    s = (wins + draws / 2) / n
    if s <= 0 or s >= 1:
        return (math.inf if s >= 1 else -math.inf), math.nan
    diff = -400 * math.log10(1 / s - 1)
    var = (wins * (1 - s) ** 2 + draws * (0.5 - s) ** 2 + losses * s**2) / n
    stderr = math.sqrt(var / n)
    slope = 400 / (math.log(10) * s * (1 - s))
    return diff, _Z95 * stderr * slope


def likelihood_of_superiority(wins: int, losses: int) -> float:
    """The chance that the first player is the stronger, from decisive games (cutechess's LOS)."""
    if wins + losses == 0:
        return 0.5
    return 0.5 * (1 + math.erf((wins - losses) / math.sqrt(2 * (wins + losses))))
