"""A position evaluation for YINSH and its variants, shared by the greedy and search bots.

Scores are from one player's point of view, in "marker" units: a ring removed is worth
:data:`RING`, a complete row waiting to be removed nearly as much, four markers of one colour
in a line of five with no enemy marker (a threat) :data:`FOUR`, three :data:`THREE`, one more
marker on the board :data:`MARKER`. Lines are counted with bit-parallel arithmetic on the
engine's bitsets (a few microseconds a position).

    >>> import engine
    >>> s = engine.State("yinsh")
    >>> evaluate(s, 0)
    0.0
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing and functools would cost a bot's start-up more than this module
if TYPE_CHECKING:
    from typing import Any

__all__ = ["FOUR", "MARKER", "PENDING_ROW", "RING", "THREE", "WIN", "evaluate", "line_counts"]

WIN = 1_000_000.0
RING = 1000.0
PENDING_ROW = 700.0
FOUR = 40.0
THREE = 8.0
MARKER = 3.0
CENTRE = 1.0


class _Tables:
    def __init__(self, geo: Any) -> None:
        # For each line axis: its bit shift and the bitset of points where a run of 5 starts.
        starts: dict[int, int] = {}
        for (i, axis), _mask in geo.rows.items():
            starts[axis] = starts.get(axis, 0) | (1 << i)
        self.axes = tuple(
            (geo.shifts[axis], starts.get(axis, 0)) for axis in range(len(geo.shifts))
        )
        # How central each point is: the points a ring there sees on an empty board.
        self.centre = {1 << i: sum(len(ray) for ray in geo.rays[i]) for i in geo.points}
        top = max(self.centre.values())
        self.centre = {bit: c / top for bit, c in self.centre.items()}


_TABLES: dict[Any, _Tables] = {}


def _tables(geo: Any) -> _Tables:
    tables = _TABLES.get(geo)
    if tables is None:
        tables = _TABLES[geo] = _Tables(geo)
    return tables


def line_counts(mine: int, theirs: int, geo: Any) -> tuple[int, int]:
    """Lines of five with no marker of ``theirs``: how many hold 4+ and exactly 3 of ``mine``.

    >>> import engine
    >>> g = engine.State("yinsh").geometry
    >>> line_counts(g.bits_of(["e4", "e5", "e6", "e7"]), 0, g)
    (2, 2)
    """
    fours = threes = 0
    for s, starts in _tables(geo).axes:
        x1, x2, x3, x4 = mine >> s, mine >> (2 * s), mine >> (3 * s), mine >> (4 * s)
        valid = starts & ~(
            theirs | theirs >> s | theirs >> (2 * s) | theirs >> (3 * s) | theirs >> (4 * s)
        )
        if not valid:
            continue
        t = mine ^ x1
        ones_a = t ^ x2
        twos_a = (mine & x1) | (x2 & t)
        ones = ones_a ^ x3 ^ x4
        carry = (ones_a & x3) | (x4 & (ones_a ^ x3))
        twos = twos_a ^ carry
        four = twos_a & carry
        fours += (four & valid).bit_count()
        threes += (twos & ones & ~four & valid).bit_count()
    return fours, threes


def evaluate(state: Any, me: int) -> float:
    """How good ``state`` is for player ``me`` (0 white, 1 black); won games are +-:data:`WIN`."""
    outcome = state.outcome
    if outcome is not None:
        winner = outcome.winner
        if winner is None:
            return 0.0
        return WIN if winner == me else -WIN
    opp = 1 - me
    removed = state.removed
    score = RING * (removed[me] - removed[opp])
    markers = state.markers
    mm, om = markers[me], markers[opp]
    geo = state.geometry
    if mm | om:
        if geo.has_row(mm):
            score += PENDING_ROW
        if geo.has_row(om):
            score -= PENDING_ROW
        score += MARKER * (mm.bit_count() - om.bit_count())
        f1, t1 = line_counts(mm, om, geo)
        f2, t2 = line_counts(om, mm, geo)
        score += FOUR * (f1 - f2) + THREE * (t1 - t2)
    rings = state.rings
    centre = _tables(geo).centre
    score += CENTRE * (_centrality(rings[me], centre) - _centrality(rings[opp], centre))
    return score


def _centrality(bits: int, centre: dict[int, float]) -> float:
    total = 0.0
    while bits:
        low = bits & -bits
        total += centre[low]
        bits ^= low
    return total
