"""The likelihood of superiority (LOS) between the bots at the top of a leaderboard.

For each two of the top versions, the chance that the row's version is the stronger one, from
their games against each other: the rated results that the pair counts (:class:`PairStats`)
already hold, both colours added up, through the one estimate every page uses
(:func:`arena.stats.trinomial_estimate`: draws count as half points), so that the same games
show the same LOS here and on the head-to-head page. Two versions that never played each other
have no LOS.
"""

from __future__ import annotations

from dataclasses import dataclass

from arena import stats
from arena.ratings import services as ratings
from arena.ratings.models import Ladder, PairStats, Rating

#: How many of the top versions a leaderboard's table compares.
TOP = 10


@dataclass(frozen=True)
class Cell:
    """The row version's results against the column's, and its LOS (None without a game)."""

    wins: int
    draws: int
    losses: int

    @property
    def los(self) -> float | None:
        if self.wins + self.draws + self.losses == 0:
            return None
        return stats.trinomial_estimate(self.wins, self.draws, self.losses).los


@dataclass(frozen=True)
class LosTable:
    """The top versions, best first, and ``cells[i][j]``: row ``i`` against column ``j``
    (None on the diagonal)."""

    rows: list[Rating]
    cells: list[list[Cell | None]]

    @property
    def lines(self) -> list[tuple[Rating, list[Cell | None]]]:
        """Each row with its cells."""
        return list(zip(self.rows, self.cells, strict=True))


def table(
    variant: str,
    *,
    ladder: Ladder = Ladder.SANDBOX,
    top: int = TOP,
    include_retired: bool = False,
) -> LosTable:
    """The LOS table of the variant's leaderboard's first ``top`` versions on the ladder (two
    queries)."""
    rows = list(ratings.leaderboard(variant, ladder=ladder, include_retired=include_retired)[:top])
    ids = [r.version_id for r in rows]
    counts: dict[tuple[int, int], list[int]] = {}
    for white, black, wins, draws, losses in PairStats.objects.filter(
        ladder=ladder, variant=variant, white__in=ids, black__in=ids
    ).values_list("white_id", "black_id", "wins", "draws", "losses"):
        for me, other, won, lost in ((white, black, wins, losses), (black, white, losses, wins)):
            c = counts.setdefault((me, other), [0, 0, 0])
            c[0] += won
            c[1] += draws
            c[2] += lost
    cells: list[list[Cell | None]] = [
        [None if i == j else Cell(*counts.get((a, b), [0, 0, 0])) for j, b in enumerate(ids)]
        for i, a in enumerate(ids)
    ]
    return LosTable(rows, cells)
