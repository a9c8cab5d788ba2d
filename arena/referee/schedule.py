"""Round-robin schedules: who plays whom, in which round, with which colour.

One scheduler for every tournament, the site's and the local command's. A *cycle* is a single
round robin made by the circle method: in each of its rounds every player plays at most once
(with an odd number of players one sits out in turn), and every pair meets once. Colours are
balanced within a cycle (each player has White as often as Black, or once more or less); the
next cycle plays the same games with the colours reversed, so that over two cycles every pair
meets once with each colour and every player is exactly balanced. ``games_per_pair`` cycles are
played one after another, their rounds numbered on::

    >>> [(p.round, p.white, p.black) for p in round_robin(4)]
    [(1, 0, 3), (1, 1, 2), (2, 3, 1), (2, 2, 0), (3, 2, 3), (3, 0, 1)]
    >>> [(p.number, p.round, p.white, p.black) for p in round_robin(3, 2)]
    ... # doctest: +NORMALIZE_WHITESPACE
    [(1, 1, 1, 2), (2, 2, 2, 0), (3, 3, 0, 1),
     (4, 4, 2, 1), (5, 5, 0, 2), (6, 6, 1, 0)]
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["Pairing", "ScheduleError", "circle_rounds", "leg_seeds", "round_robin"]


class ScheduleError(ValueError):
    """A round robin that cannot be scheduled (too few players or games); the message says
    why."""


@dataclass(frozen=True)
class Pairing:
    """One scheduled game: its number (from 1, in the order of play), its round (from 1), the
    indexes of the players with White and Black, and its cycle (from 0)."""

    number: int
    round: int
    white: int
    black: int
    cycle: int = 0

    @property
    def leg(self) -> tuple[int, int, int]:
        """The games that start from one opening share it: the two games of a pair in cycles
        ``2k`` and ``2k + 1``, with the colours reversed (a last, odd cycle's game has its own).

        >>> [p.leg for p in round_robin(2, 3)]
        [(0, 1, 0), (0, 1, 0), (0, 1, 1)]
        """
        return (min(self.white, self.black), max(self.white, self.black), self.cycle // 2)


def circle_rounds(players: int) -> list[list[tuple[int, int]]]:
    """One cycle: each round's pairs of player indexes, White first (the circle method).

    With an odd number of players ``m``, round ``r`` pairs ``r + k`` with ``r - k`` (modulo
    ``m``, for ``k`` from 1 to ``(m - 1) / 2``) and ``r`` sits out: every pair meets once, in
    round ``(a + b) / 2`` modulo ``m``. Of a pair, White is the player the other stands at most
    ``(m - 1) / 2`` places after, so each player has White exactly as often as Black. With an
    even number of players, the last one plays, in each round, the player who would sit out,
    taking White and Black in turn: every player is then one game off balance at most.

    >>> circle_rounds(4)
    [[(0, 3), (1, 2)], [(3, 1), (2, 0)], [(2, 3), (0, 1)]]
    >>> circle_rounds(3)
    [[(1, 2)], [(2, 0)], [(0, 1)]]
    """
    if players < 2:
        raise ScheduleError("a round robin needs at least two players")
    m = players if players % 2 else players - 1  # an odd circle; the last player, if any, apart
    out = []
    for r in range(m):
        pairs = []
        if m < players:
            fixed = players - 1
            pairs.append((r, fixed) if r % 2 == 0 else (fixed, r))
        for k in range(1, (m - 1) // 2 + 1):
            a, b = (r + k) % m, (r - k) % m
            pairs.append((a, b) if (b - a) % m <= (m - 1) // 2 else (b, a))
        out.append(pairs)
    return out


def round_robin(players: int, games_per_pair: int = 1) -> list[Pairing]:
    """Every pair meets ``games_per_pair`` times: that many cycles of :func:`circle_rounds`,
    the colours reversed in every other cycle (so cycles ``2k`` and ``2k + 1`` make the
    colour-reversed pairs of games that share an opening, :attr:`Pairing.leg`). Raises
    :class:`ScheduleError` for fewer than two players or fewer than one game per pair."""
    if games_per_pair < 1:
        raise ScheduleError("a round robin needs at least one game per pair")
    cycle = circle_rounds(players)
    out: list[Pairing] = []
    round_number = 0
    for game in range(games_per_pair):
        for pairs in cycle:
            round_number += 1
            for a, b in pairs:
                white, black = (a, b) if game % 2 == 0 else (b, a)
                out.append(Pairing(len(out) + 1, round_number, white, black, game))
    return out


def leg_seeds(pairings: Sequence[Pairing], draw: Callable[[], int]) -> list[int]:
    """A seed for each pairing: ``draw()`` once per :attr:`~Pairing.leg`, so that both games
    of a colour-reversed pair get the same one (and so the same opening, drawn with it).

    >>> seeds = iter(range(100, 200))
    >>> leg_seeds(round_robin(2, 3), lambda: next(seeds))
    [100, 100, 101]
    """
    drawn: dict[tuple[int, int, int], int] = {}
    out = []
    for p in pairings:
        if p.leg not in drawn:
            drawn[p.leg] = draw()
        out.append(drawn[p.leg])
    return out
