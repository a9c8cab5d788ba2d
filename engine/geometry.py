"""Board geometry: points, lines and rays as tables built once per board.

A point is stored as a bit index ``column * stride + number``. The stride leaves an empty row of
padding between columns, so that for every line axis a single shift moves a bitset one step along
that line and never wraps onto another line::

    >>> HEX.size, SQUARE8.size
    (85, 64)
    >>> g = geometry(HEX)
    >>> g.name(g.index["e5"])
    'e5'
    >>> [g.name(i) for i in g.rays[g.index["a2"]][0]]
    ['a3', 'a4', 'a5']
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

#: Markers in a row.
ROW = 5


@dataclass(frozen=True)
class Board:
    """The shape of a board: its columns, the numbers each one holds, and its line axes.

    ``axes`` are the directions of the lines as (column step, number step); each axis gives two
    ring directions. Columns are lettered from ``a``; numbers start at 1.
    """

    name: str
    columns: tuple[tuple[int, int], ...]
    axes: tuple[tuple[int, int], ...]

    @property
    def size(self) -> int:
        return sum(hi - lo + 1 for lo, hi in self.columns)

    def points(self) -> list[str]:
        """Every point of the board in notation order (letter first, then number)."""
        return [
            f"{chr(ord('a') + c)}{n}"
            for c, (lo, hi) in enumerate(self.columns)
            for n in range(lo, hi + 1)
        ]


#: The YINSH board: 85 intersections; lines run along a column, along equal numbers, and along
#: the diagonal where letter index minus number is constant (e2, f3, g4, ...).
HEX = Board(
    name="hex",
    columns=(
        (2, 5),
        (1, 7),
        (1, 8),
        (1, 9),
        (1, 10),
        (2, 10),
        (2, 11),
        (3, 11),
        (4, 11),
        (5, 11),
        (7, 10),
    ),
    axes=((0, 1), (1, 0), (1, 1)),
)

#: The 8x8 board of Yangsh with chess coordinates; pawns move like a chess queen.
SQUARE8 = Board(
    name="square8",
    columns=tuple((1, 8) for _ in range(8)),
    axes=((0, 1), (1, 0), (1, 1), (1, -1)),
)


class Geometry:
    """Lookup tables for one board. Build it with :func:`geometry`, which caches one per board.

    Attributes:
        stride: bit-index distance between two neighbouring columns.
        index: point name -> bit index; ``names`` is the reverse.
        points: bit indices of every point in notation order.
        mask: the bitset of all points.
        shifts: for each axis, the bit-index step of one move along it (always positive).
        rays: for each point index, one tuple per direction of the indices met going away from it.
        between: ``(a, b) -> bitset`` of the points strictly between two points on a line.
    """

    def __init__(self, board: Board) -> None:
        self.board = board
        self.stride = max(hi for _, hi in board.columns) + 1
        self.index: dict[str, int] = {}
        self.names: dict[int, str] = {}
        coords: dict[tuple[int, int], int] = {}
        for c, (lo, hi) in enumerate(board.columns):
            for n in range(lo, hi + 1):
                i = c * self.stride + n
                name = f"{chr(ord('a') + c)}{n}"
                self.index[name] = i
                self.names[i] = name
                coords[(c, n)] = i
        self.points: tuple[int, ...] = tuple(sorted(self.names))
        self.mask = 0
        for i in self.points:
            self.mask |= 1 << i
        self.shifts: tuple[int, ...] = tuple(dc * self.stride + dn for dc, dn in board.axes)
        directions = [d for dc, dn in board.axes for d in ((dc, dn), (-dc, -dn))]
        self.rays: dict[int, tuple[tuple[int, ...], ...]] = {}
        self.between: dict[tuple[int, int], int] = {}
        for (c, n), i in coords.items():
            rays = []
            for dc, dn in directions:
                ray = []
                k = 1
                while (c + k * dc, n + k * dn) in coords:
                    ray.append(coords[(c + k * dc, n + k * dn)])
                    k += 1
                rays.append(tuple(ray))
                inner = 0
                for j in ray:
                    self.between[(i, j)] = inner
                    inner |= 1 << j
            self.rays[i] = tuple(rays)
        # Every run of ROW points on a line: (first index, axis number) -> bitset.
        self.rows: dict[tuple[int, int], int] = {}
        for i in self.points:
            for axis, s in enumerate(self.shifts):
                run = [i + k * s for k in range(ROW)]
                if all(j in self.names for j in run):
                    # Consecutive indices along a shift are neighbours on the line by construction.
                    self.rows[(i, axis)] = sum(1 << j for j in run)

    def name(self, i: int) -> str:
        """The notation name of the point with bit index ``i``."""
        return self.names[i]

    def bit_names(self, bits: int) -> list[str]:
        """The names of the points in a bitset, in notation order."""
        out = []
        while bits:
            low = bits & -bits
            out.append(self.names[low.bit_length() - 1])
            bits ^= low
        return out

    def bits_of(self, names: list[str] | tuple[str, ...]) -> int:
        """The bitset of some named points (raises ``KeyError`` on an unknown name)."""
        bits = 0
        for name in names:
            bits |= 1 << self.index[name]
        return bits

    def row_starts(self, markers: int) -> list[int]:
        """For each axis, the bitset of the first points of the complete rows in ``markers``.

        A run of six markers gives two starts (either five may be taken), and so on.
        """
        out = []
        for s in self.shifts:
            x = markers & (markers >> s)
            x &= x >> (2 * s)
            out.append(x & (markers >> (4 * s)))
        return out

    def has_row(self, markers: int) -> bool:
        """Whether ``markers`` holds at least one complete row."""
        for s in self.shifts:
            x = markers & (markers >> s)
            x &= x >> (2 * s)
            if x & (markers >> (4 * s)):
                return True
        return False


@functools.cache
def geometry(board: Board) -> Geometry:
    """The (cached) lookup tables of a board."""
    return Geometry(board)
