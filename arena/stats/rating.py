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
The fit starts from any point (say the ratings fitted last time, which saves most iterations) and
ends at the same answer. Its memory and time grow with the number of pairs that met, not with the
square of the players: the Hessian is sparse (players meet a few dozen opponents of similar
strength) and is factorised in a narrow band, and the intervals come from the band too
(:func:`fit_arrays`).

    >>> games = [("a", "b", 1.0)] * 30 + [("a", "b", 0.0)] * 10 + [("b", "a", 0.0)] * 30
    >>> games += [("b", "a", 1.0)] * 10
    >>> ratings = {r.name: r for r in fit(games, anchor="b", anchor_elo=1000)}
    >>> round(ratings["a"].elo), ratings["b"].elo, ratings["b"].error
    (1188, 1000.0, 0.0)
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from scipy import sparse  # type: ignore[import-untyped]  # SciPy ships no stubs
from scipy.linalg import cho_solve_banded, cholesky_banded  # type: ignore[import-untyped]  # SciPy ships no stubs
from scipy.sparse.csgraph import (  # type: ignore[import-untyped]  # SciPy ships no stubs
    connected_components,
    reverse_cuthill_mckee,
)
from scipy.sparse.linalg import splu  # type: ignore[import-untyped]  # SciPy ships no stubs

from arena.stats.elo import Z95

_K = math.log(10) / 400  # Elo points -> natural logistic scale
#: Elo points -> the natural logistic scale :func:`fit_arrays` works on.
ELO_SCALE = _K

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
    iterations: int = 0


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
    start: Mapping[str, float] | None = None,
    start_advantage: float = 0.0,
) -> RatingFit:
    """Ratings from aggregated results ``(white, black, games, white's points)``.

    The same pair may appear several times (its counts add up). ``players`` adds players with
    no games (they get the anchor's value and an infinite interval). ``start`` (Elo values,
    say the ratings fitted last time) and ``start_advantage`` are where the fit starts from: a
    good start saves iterations, and the answer is the same from any start.
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
    table = np.array(rows, dtype=np.float64).reshape(-1, 4)
    order = list(names)
    x0 = None
    if start:
        ref_name = anchor if anchor is not None else order[0]
        base = start.get(ref_name, anchor_elo if anchor is not None else 0.0)
        x0 = np.array([(start.get(k, base) - base) * _K for k in order])
    fitted = fit_arrays(
        table[:, 0].astype(np.int64),
        table[:, 1].astype(np.int64),
        table[:, 2],
        table[:, 3],
        n,
        fixed=names[anchor] if anchor is not None else None,
        white_advantage=white_advantage,
        prior_draws=prior_draws,
        start=x0,
        start_advantage=start_advantage,
    )
    elo, errors, played, scored = fitted.elo, fitted.errors, fitted.games, fitted.points
    out = []
    for name, k in names.items():
        out.append(
            Rating(
                name,
                float(elo[k] + anchor_elo),
                float(errors[k]),
                round(played[k]),
                float(scored[k]),
            )
        )
    out.sort(key=lambda r: (-r.elo, r.name))
    return RatingFit(out, fitted.white_advantage, fitted.iterations)


@dataclass(frozen=True)
class ArrayFit:
    """:func:`fit_arrays`' answer, indexed by player: Elo relative to the anchor (or to the
    mean), 95% half-interval (infinite without games), games and points; the first player's
    advantage in Elo and the Newton iterations it took."""

    elo: Floats
    errors: Floats
    games: Floats
    points: Floats
    white_advantage: float
    iterations: int


def fit_arrays(
    wi: Indices,
    bi: Indices,
    games: Floats,
    points: Floats,
    n: int,
    *,
    fixed: int | None = None,
    white_advantage: bool = True,
    prior_draws: float = 1.0,
    start: Floats | None = None,
    start_advantage: float = 0.0,
) -> ArrayFit:
    """The fit itself, on players numbered ``0 .. n-1``: pair ``k`` is ``games[k]`` games of
    ``wi[k]`` (white) against ``bi[k]`` in which white scored ``points[k]``.

    Memory and time grow with the number of pairs, not with the square of the players: the
    Hessian of the ratings is a sparse (weighted Laplacian) matrix, factorised sparsely, and
    the shared first-player advantage is eliminated from it (a Schur complement). Players
    that never met fall apart into connected components, each only held to the anchor by the
    weak prior, so the factorisation never couples them; the intervals are computed one
    component at a time (:func:`_inverse_diagonal`). ``start`` is a starting point on the
    logistic scale relative to the player held still (the ratings of the last fit).
    """
    if n == 0:
        return ArrayFit(np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), 0.0, 0)
    played = _sums(wi, games, n) + _sums(bi, games, n)
    scored = _sums(wi, points, n) + _sums(bi, games - points, n)
    # One row per pair that met and colour: pair k is players u[k] and v[k] (u < v), row k
    # has u as white, row k + len(u) has v as white.
    met, pair = _unique(np.minimum(wi, bi) * n + np.maximum(wi, bi), games > 0)
    u, v = met // n, met % n
    row = pair + len(met) * (wi > bi)
    real = games > 0
    white = np.concatenate([u, v])
    black = np.concatenate([v, u])
    games = _sums(row[real], games[real], 2 * len(met))
    points = _sums(row[real], points[real], 2 * len(met))
    # BayesElo's prior: virtual draws between the two players of every pair that met, split
    # between the two colours so that it says nothing about the first player's advantage.
    if prior_draws > 0:
        games += prior_draws / 2
        points += prior_draws / 4

    # Unknowns, on the logistic scale: a rating per player, then the first-player advantage.
    # One rating is held still while fitting (the anchor, else the first player); the others
    # move relative to it.
    ref = fixed if fixed is not None else 0
    free = np.flatnonzero(np.arange(n) != ref)
    x = np.zeros(n) if start is None else np.asarray(start, dtype=np.float64) - start[ref]
    adv = start_advantage * _K if white_advantage else 0.0
    ridge = 1.0 / (1000 * _K) ** 2  # a weak Gaussian prior (sd 1000 Elo) on every rating
    model = _Model(white, black, games, points, n, ref, free, ridge, white_advantage)

    iterations = 0
    solved = None
    value = model.value(x, adv)
    for iterations in range(1, 101):  # noqa: B007 (the count is reported)
        step_x, step_a, solved = model.newton_step(x, adv)
        # Newton's step, halved while it would lower the likelihood (it never does near the
        # answer; far from it, say from a poor start, it can overshoot).
        scale = 1.0
        while True:
            tried_x, tried_a = x + scale * step_x, adv + scale * step_a
            tried = model.value(tried_x, tried_a)
            if tried >= value - 1e-12 * abs(value) or scale < 1e-6:
                break
            scale /= 2
        x, adv, value = tried_x, tried_a, tried
        biggest = max(np.max(np.abs(step_x), initial=0.0), abs(step_a))
        if scale * biggest < 1e-10:
            break

    # The curvature where the last step started (the last step was below 1e-10).
    variance = model.variance(solved, centred=fixed is None)
    errors = Z95 * np.sqrt(np.maximum(variance, 0.0)) / _K
    errors[(played == 0) & (np.arange(n) != fixed)] = math.inf
    elo = (x - x[ref]) / _K
    if fixed is None:
        elo = elo - elo.mean()
    return ArrayFit(
        elo, errors, played, scored, float(adv / _K) if white_advantage else 0.0, iterations
    )


def fit_one(
    opponents: Iterable[tuple[float, float, float, float, float]],
    *,
    elo: float,
    white_advantage: float = 0.0,
    prior_draws: float = 1.0,
    centre: float = 0.0,
) -> tuple[float, float]:
    """One player's rating with every opponent's held where it is, and its 95% half-interval
    given theirs: the full fit's answer for this one player (a coordinate step of
    :func:`fit_arrays`, starting from ``elo``), cheap enough to run after every result.

    ``opponents``: one row per opponent, ``(opponent's Elo, games as white, points as
    white, games as black, points as black)``. ``centre`` is the Elo the weak prior is
    centred on (the anchor's). The answer is the full fit's when the opponents' ratings are.

    >>> elo, error = fit_one([(1000.0, 20, 15, 20, 15)], elo=1000.0, centre=1000.0)
    >>> round(elo), round(error)
    (1185, 121)
    """
    rows = []
    for o, gw, pw, gb, pb in opponents:
        if gw < 0 or gb < 0 or not 0 <= pw <= gw or not 0 <= pb <= gb:
            raise ValueError(f"bad counts against {o}: {pw}/{gw} as white, {pb}/{gb} as black")
        if gw + gb > 0:
            half = prior_draws / 2
            rows.append((o * _K, gw + half, pw + half / 2, gb + half, pb + half / 2))
    table = np.array(rows, dtype=np.float64).reshape(-1, 5)
    if not len(table):
        return elo, math.inf
    opp, white_games, white_points, black_games, black_points = table.T
    h = white_advantage * _K
    ridge = 1.0 / (1000 * _K) ** 2
    x = elo * _K
    curvature = ridge
    for _ in range(50):
        # as white the difference is x - opp + h; as black, x - opp - h
        ew = 0.5 * (1.0 + np.tanh((x - opp + h) / 2))
        eb = 0.5 * (1.0 + np.tanh((x - opp - h) / 2))
        grad = float((white_points - white_games * ew).sum())
        grad += float((black_points - black_games * eb).sum()) - ridge * (x - centre * _K)
        curvature = ridge + float((white_games * ew * (1 - ew)).sum())
        curvature += float((black_games * eb * (1 - eb)).sum())
        step = max(-2.0, min(2.0, grad / curvature))
        x += step
        if abs(step) < 1e-10:
            break
    return x / _K, Z95 / math.sqrt(curvature) / _K


def _sums(index: Indices, weights: Floats, size: int) -> Floats:
    """``weights`` added up by ``index`` (``size`` sums)."""
    return np.bincount(index, weights, size).astype(np.float64, copy=False)


def _unique(keys: Indices, keep: npt.NDArray[np.bool_]) -> tuple[Indices, Indices]:
    """The distinct ``keys[keep]`` (sorted) and where each key is among them."""
    distinct = np.sort(keys[keep])
    if len(distinct):
        distinct = distinct[np.concatenate([[True], distinct[1:] != distinct[:-1]])]
    where = np.minimum(np.searchsorted(distinct, keys), max(len(distinct) - 1, 0))
    return distinct, where


class _Model:
    """The log-likelihood (plus the weak prior) of a set of pair counts and its derivatives,
    as sparse matrices over the free ratings (every player but the one held still)."""

    def __init__(
        self,
        wi: Indices,
        bi: Indices,
        games: Floats,
        points: Floats,
        n: int,
        ref: int,
        free: Indices,
        ridge: float,
        white_advantage: bool,
    ) -> None:
        self.wi, self.bi, self.games, self.points = wi, bi, games, points
        self.n, self.ref, self.free, self.ridge = n, ref, free, ridge
        self.white_advantage = white_advantage
        # Position of each player among the free ones (-1 for the one held still).
        self.slot = np.full(n, -1, dtype=np.int64)
        self.slot[free] = np.arange(len(free))
        # The Hessian's pattern is fixed: one off-diagonal entry each way per pair of free
        # players that met (both colours add to it: rows k and k + pairs are one pair), and
        # the diagonal. It is laid out once in compressed columns; each iteration only fills
        # in its values.
        m = len(free)
        self.pairs = len(wi) // 2
        su, sv = self.slot[wi[: self.pairs]], self.slot[bi[: self.pairs]]
        self.both = (su >= 0) & (sv >= 0)
        su, sv = su[self.both], sv[self.both]
        rows = np.concatenate([su, sv, np.arange(m)])
        cols = np.concatenate([sv, su, np.arange(m)])
        layout = sparse.coo_matrix(
            (np.arange(1, len(rows) + 1, dtype=np.float64), (rows, cols)), shape=(m, m)
        ).tocsc()
        layout.sort_indices()
        self.layout = layout
        self.order = layout.data.astype(np.int64) - 1  # csc position -> entry
        self.band = _Band.plan(layout)

    def _probabilities(self, x: Floats, adv: float) -> tuple[Floats, Floats]:
        d = x[self.wi] - x[self.bi] + adv
        return d, 0.5 * (1.0 + np.tanh(d / 2))  # the logistic function, without overflow

    def value(self, x: Floats, adv: float) -> float:
        d, _ = self._probabilities(x, adv)
        p, g = self.points, self.games
        loglik = -(p * np.logaddexp(0.0, -d) + (g - p) * np.logaddexp(0.0, d)).sum()
        return float(loglik - self.ridge / 2 * ((x - x[self.ref]) ** 2).sum())

    def _derivatives(
        self, x: Floats, adv: float
    ) -> tuple[Floats, float, sparse.csc_matrix, Floats, float]:
        """Gradient (ratings, advantage) and the negative Hessian in blocks: ``A`` (sparse,
        free ratings), ``c`` (ratings x advantage) and ``h`` (advantage x advantage)."""
        n = self.n
        _, p = self._probabilities(x, adv)
        g = self.points - self.games * p  # d logL / d d
        w = self.games * p * (1.0 - p)  # -d2 logL / d d2
        grad = _sums(self.wi, g, n) - _sums(self.bi, g, n)
        grad -= self.ridge * (x - x[self.ref])
        diagonal = _sums(self.wi, w, n) + _sums(self.bi, w, n) + self.ridge
        off = -(w[: self.pairs] + w[self.pairs :])[self.both]
        values = np.concatenate([off, off, diagonal[self.free]])
        a = sparse.csc_matrix(
            (values[self.order], self.layout.indices, self.layout.indptr),
            shape=self.layout.shape,
        )
        c = (_sums(self.wi, w, n) - _sums(self.bi, w, n))[self.free]
        return grad[self.free], float(g.sum()), a, c, float(w.sum())

    def newton_step(self, x: Floats, adv: float) -> tuple[Floats, float, _Solved]:
        grad, grad_adv, a, c, h = self._derivatives(x, adv)
        solved = _Solved(a, c, h, self.white_advantage, self.band)
        step_free, step_adv = solved.solve(grad, grad_adv)
        step = np.zeros(self.n)
        step[self.free] = step_free
        return step, step_adv, solved

    def variance(self, solved: _Solved | None, *, centred: bool) -> Floats:
        """The variance of every rating (the diagonal of the inverse of the negative Hessian
        ``solved`` factorised): relative to the player held still, or with ``centred`` to
        the mean rating."""
        n = self.n
        var = np.zeros(n)
        if solved is None or not len(self.free):
            return var
        if solved.band is not None:
            var[self.free] = solved.band.inverse_diagonal(solved.factor)
        else:
            var[self.free] = _inverse_diagonal(solved.a)
        if self.white_advantage:
            # The advantage's share (the inverse of the bordered matrix, blockwise).
            var[self.free] += solved.ac**2 / solved.schur
        if centred:
            # cov(r_k - mean) = cov_kk - 2 (cov 1)_k / n + (1' cov 1) / n^2
            ones = np.ones(len(self.free))
            rows = np.zeros(n)
            rows[self.free] = solved.solve(ones, 0.0)[0]
            var = var - 2 * rows / n + rows.sum() / n**2
        return var


class _Band:
    """A symmetric ordering (reverse Cuthill-McKee) that gathers a sparse pattern into a
    narrow band, where a banded Cholesky factorisation (LAPACK's) needs only ``players x
    bandwidth`` numbers: players meet opponents of similar strength, so the band stays narrow
    however many players there are. ``plan`` returns None when it does not."""

    def __init__(
        self, perm: Indices, width: int, lower: npt.NDArray[np.bool_], at: Indices, offset: Indices
    ) -> None:
        self.perm, self.width = perm, width
        self.lower, self.at, self.offset = lower, at, offset

    @classmethod
    def plan(cls, layout: sparse.csc_matrix) -> _Band | None:
        m = layout.shape[0]
        if m == 0:
            return None
        perm = reverse_cuthill_mckee(layout.tocsr(), symmetric_mode=True).astype(np.int64)
        position = np.empty(m, dtype=np.int64)
        position[perm] = np.arange(m)
        rows = position[layout.indices]
        cols = position[np.repeat(np.arange(m), np.diff(layout.indptr))]
        lower = rows >= cols
        width = int(np.max(rows[lower] - cols[lower]))
        if (width + 1) * m * 8 > INTERVAL_MEMORY or width > max(64, m // 4):
            return None
        return cls(perm, width, lower, cols[lower], (rows - cols)[lower])

    def factor(self, a: sparse.csc_matrix) -> Floats:
        """The banded lower Cholesky factor of ``a`` (laid out as the plan's pattern)."""
        ab = np.zeros((self.width + 1, a.shape[0]))
        ab[self.offset, self.at] = a.data[self.lower]
        factor: Floats = cholesky_banded(ab, lower=True, check_finite=False)
        return factor

    def solve(self, factor: Floats, rhs: Floats) -> Floats:
        out = np.empty_like(rhs)
        out[self.perm] = cho_solve_banded((factor, True), rhs[self.perm], check_finite=False)
        return out

    def inverse_diagonal(self, factor: Floats) -> Floats:
        out = np.empty(factor.shape[1])
        out[self.perm] = _banded_inverse_diagonal(factor)
        return out


class _Solved:
    """A factorised negative Hessian ``[[A, c], [c', h]]``: ``A`` sparse (banded Cholesky in
    the band's order, else a sparse LU with a fill-reducing order), the advantage eliminated
    by its Schur complement."""

    def __init__(
        self,
        a: sparse.csc_matrix,
        c: Floats,
        h: float,
        white_advantage: bool,
        band: _Band | None,
    ) -> None:
        self.white_advantage = white_advantage
        self.a, self.band = a, band
        if band is not None:
            self.factor = band.factor(a)
        else:
            self.lu = _factor(a) if a.shape[0] else None
        self.c = c
        if white_advantage:
            self.ac = self._solve_a(c)
            self.schur = h - float(c @ self.ac)

    def _solve_a(self, rhs: Floats) -> Floats:
        if self.band is not None:
            return self.band.solve(self.factor, rhs)
        return self.lu.solve(rhs) if self.lu is not None else np.zeros(0)

    def solve(self, rhs: Floats, rhs_adv: float) -> tuple[Floats, float]:
        y = self._solve_a(rhs)
        if not self.white_advantage:
            return y, 0.0
        step_adv = (rhs_adv - float(self.c @ y)) / self.schur
        return y - self.ac * step_adv, step_adv


def _factor(a: sparse.csc_matrix) -> Any:
    """A sparse LU of a symmetric positive definite matrix (no pivoting needed)."""
    return splu(
        a,
        permc_spec="MMD_AT_PLUS_A",
        diag_pivot_thresh=0.0,
        options={"SymmetricMode": True},
    )


#: Components up to this many players have their covariance inverted densely (a few MB).
DENSE_COMPONENT = 200
#: Memory the intervals of one component may take (bytes), beyond the sparse factor.
INTERVAL_MEMORY = 256 * 2**20


def _inverse_diagonal(a: sparse.csc_matrix) -> Floats:
    """The diagonal of ``A``'s inverse, ``A`` symmetric positive definite and sparse, one
    connected component at a time (the inverse is block diagonal): densely for a small
    component; for a large one by selected inversion within the band a reverse Cuthill-McKee
    order gives it (the Takahashi recurrences, memory ``players x bandwidth``); failing both,
    column blocks of solves with the sparse factor (exact, slower, little memory)."""
    m = a.shape[0]
    out = np.empty(m)
    count, labels = connected_components(a, directed=False)
    members = np.argsort(labels, kind="stable")
    bounds = np.searchsorted(labels[members], np.arange(count + 1))
    for k in range(count):
        idx = members[bounds[k] : bounds[k + 1]]
        sub = a[idx][:, idx]
        size = len(idx)
        if size <= DENSE_COMPONENT:
            out[idx] = np.diag(np.linalg.inv(sub.toarray()))
            continue
        perm = reverse_cuthill_mckee(sub.tocsr(), symmetric_mode=True)
        banded = sub[perm][:, perm].tocoo()
        width = int(np.max(np.abs(banded.row - banded.col)))
        if (width + 1) * size * 8 <= INTERVAL_MEMORY and width <= size // 4:
            ab = np.zeros((width + 1, size))
            low = banded.row >= banded.col
            ab[(banded.row - banded.col)[low], banded.col[low]] = banded.data[low]
            factor = cholesky_banded(ab, lower=True, check_finite=False)
            out[idx[perm]] = _banded_inverse_diagonal(factor)
        elif size * size * 8 <= INTERVAL_MEMORY:
            out[idx] = np.diag(np.linalg.inv(sub.toarray()))
        else:
            lu = _factor(sub.tocsc())
            block = max(1, INTERVAL_MEMORY // (16 * size))
            diag = np.empty(size)
            for first in range(0, size, block):
                cols = np.arange(first, min(size, first + block))
                rhs = np.zeros((size, len(cols)))
                rhs[cols, np.arange(len(cols))] = 1.0
                diag[cols] = lu.solve(rhs)[cols, np.arange(len(cols))]
            out[idx] = diag
    return out


def _banded_inverse_diagonal(factor: Floats) -> Floats:
    """The diagonal of the inverse of a symmetric positive definite band matrix, from its
    banded lower Cholesky factor (LAPACK's layout: ``factor[d, j] = L[j + d, j]``).

    With ``A = L D L'`` (``L`` unit lower triangular), the inverse ``Z`` satisfies ``Z[j, j] =
    1/D[j] - sum_k L[k, j] Z[k, j]`` and ``Z[i, j] = -sum_k L[k, j] Z[i, k]`` (``k`` over the
    band below ``j``), so from the last column back only the band of ``Z`` is ever needed: a
    sliding ``(width+1)``-square window holds it (the Takahashi recurrences).
    """
    width, m = factor.shape[0] - 1, factor.shape[1]
    root = factor[0]
    unit = factor[1:] / root
    inverse_d = 1.0 / root**2
    window = np.zeros((width + 1, width + 1))  # window[p, q] = Z[j + p, j + q]
    out = np.empty(m)
    for j in range(m - 1, -1, -1):
        k = min(width, m - 1 - j)
        window[1:, 1:] = window[:-1, :-1].copy()
        low = unit[:k, j]
        column = -window[1 : k + 1, 1 : k + 1] @ low
        window[1 : k + 1, 0] = column
        window[0, 1 : k + 1] = column
        window[0, 0] = inverse_d[j] - low @ column
        out[j] = window[0, 0]
    return out
