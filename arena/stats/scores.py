"""From results to points, scores and a round robin's standings and cross-table.

One way from a game's result to points (:func:`points`: a win 1, a draw 1/2, a loss 0), one
tally of wins, draws and losses (:class:`Score`), and one way from a list of results to the
standings (:func:`standings`: points, then the Sonneborn-Berger score, then wins), the
cross-table (:func:`cross_table`) and their text (:func:`standings_text`). The local
``manage.py tournament`` and the site's tournaments, the tests and challenges, head-to-head and
``manage.py match`` all count with them.

A result is the winner's colour or a draw (``"white"``, ``"black"``, ``"draw"``: the values of
:class:`engine.Result`, which are strings, as are the site's).

    >>> table = standings(
    ...     ["ann", "bob", "cy"],
    ...     [("ann", "bob", "white", 2), ("bob", "cy", "draw", 1), ("cy", "ann", "black", 1)],
    ... )
    >>> [(s.rank, s.player, s.points, s.games, s.tiebreak) for s in table]
    [(1, 'ann', 3.0, 3, 1.0), (2, 'bob', 0.5, 3, 0.25), (3, 'cy', 0.5, 2, 0.25)]
    >>> for s, cells in cross_table(table):
    ...     print(f"{s.player:4}", cells)
    ann  ['x', '2/2', '1/1']
    bob  ['0/2', 'x', '0.5/1']
    cy   ['0/1', '0.5/1', 'x']
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

P = TypeVar("P", bound=Hashable)

#: White's points by result.
WHITE_POINTS = {"white": 1.0, "draw": 0.5, "black": 0.0}


def points(result: str, side: str = "white") -> float:
    """The points ``side`` (``"white"`` or ``"black"``) scored in a game that ended in
    ``result``.

    >>> points("white"), points("draw"), points("white", "black"), points("black", "black")
    (1.0, 0.5, 0.0, 1.0)
    """
    try:
        white = WHITE_POINTS[result]
    except KeyError:
        raise ValueError(f"a result is white, black or draw, not {result!r}") from None
    if side == "white":
        return white
    if side == "black":
        return 1.0 - white
    raise ValueError(f"a side is white or black, not {side!r}")


def format_points(x: float) -> str:
    """Points as the tables show them: ``2``, ``1.5``, ``0.5``.

    >>> format_points(2.0), format_points(1.5)
    ('2', '1.5')
    """
    return f"{x:g}"


@dataclass
class Score:
    """One side's wins, draws and losses, and so its games and points.

    >>> s = Score()
    >>> s.add("white", "black", 2)
    >>> s.add("draw", "white")
    >>> s, s.games, s.points
    (Score(wins=0, draws=1, losses=2), 3, 0.5)
    """

    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + self.draws / 2

    @property
    def percent(self) -> float:
        """The points in per cent of the games (0 without games)."""
        return 100.0 * self.points / self.games if self.games else 0.0

    def add(self, result: str, side: str = "white", n: int = 1) -> None:
        """Count ``n`` games that ended in ``result``, played as ``side``."""
        mine = points(result, side)
        if mine == 1.0:
            self.wins += n
        elif mine == 0.0:
            self.losses += n
        else:
            self.draws += n


@dataclass(kw_only=True)
class Standing(Score, Generic[P]):
    """A player's row of a round robin's standings: its score, its Sonneborn-Berger tie-break,
    its rank (from 1), its ``seed`` (its place in the list of players, the last tie-break) and
    its score against each opponent it played (``against``)."""

    player: P
    seed: int
    tiebreak: float = 0.0
    rank: int = 0
    against: dict[P, Score] = field(default_factory=dict)


def standings(players: Sequence[P], results: Iterable[tuple[P, P, str, int]]) -> list[Standing[P]]:
    """The standings of ``players`` after ``results``, best first: most points, then the highest
    Sonneborn-Berger score, then most wins, then the earlier in ``players``.

    A result is ``(white, black, result, games)``: ``games`` games of white against black
    ended in ``result``; the same pairing may come several times. A player's Sonneborn-Berger
    score adds up, over its opponents, its share of the points against each (points over games)
    times that opponent's points.
    """
    rows = {p: Standing(player=p, seed=i) for i, p in enumerate(players)}
    for white, black, result, n in results:
        for me, other, side in ((white, black, "white"), (black, white, "black")):
            if me not in rows:
                raise ValueError(f"{me!r} played but is not one of the players")
            rows[me].add(result, side, n)
            rows[me].against.setdefault(other, Score()).add(result, side, n)
    for s in rows.values():
        s.tiebreak = sum(
            score.points / score.games * rows[other].points
            for other, score in s.against.items()
            if score.games
        )
    table = sorted(rows.values(), key=lambda s: (-s.points, -s.tiebreak, -s.wins, s.seed))
    for rank, s in enumerate(table, 1):
        s.rank = rank
    return table


def cross_table(table: Sequence[Standing[P]]) -> list[tuple[Standing[P], list[str]]]:
    """Each standing with its row of cells against the others, rows and columns in the order
    of ``table``: ``"1.5/2"`` (points/games), ``""`` when they have not played, ``"x"`` on the
    diagonal."""
    out = []
    for s in table:
        cells = []
        for other in table:
            if other is s:
                cells.append("x")
                continue
            score = s.against.get(other.player)
            if score is None or not score.games:
                cells.append("")
            else:
                cells.append(f"{format_points(score.points)}/{score.games}")
        out.append((s, cells))
    return out


def standings_text(table: Sequence[Standing[P]], label: Callable[[P], str] = str) -> str:
    """The standings as plain text, a line per row (``label`` names a player).

    >>> print(standings_text(standings(["ann", "bob"], [("ann", "bob", "draw", 2)])))
      #  bot                             points  games    +    =    -
      1  ann                                  1      2    0    2    0
      2  bob                                  1      2    0    2    0
    """
    width = max([30, *(len(label(s.player)) for s in table)])
    lines = [f"{'#':>3}  {'bot':<{width}} {'points':>7} {'games':>6} {'+':>4} {'=':>4} {'-':>4}"]
    for s in table:
        lines.append(
            f"{s.rank:>3}  {label(s.player):<{width}} {format_points(s.points):>7} "
            f"{s.games:>6} {s.wins:>4} {s.draws:>4} {s.losses:>4}"
        )
    return "\n".join(lines)
