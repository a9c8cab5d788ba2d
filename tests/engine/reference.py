"""A second, deliberately naive implementation of the rules, written from the rule texts.

It shares no code with ``engine/`` and none of its ideas: points are ``(column, number)`` tuples,
the board is a set of them, pieces live in dicts and sets, and every action is a notation token
(``e5``, ``a2-h9``, ``xc2-c6``, ``xa5``, ``pass``). It is slow on purpose: each rule is written
the plainest way, so that when the two implementations disagree, this one is easy to check by hand
against the rulebook. The tests use it to cross-check the engine's legal actions and positions over
random games, and ``tests/engine/perft_tables.py`` uses it to count the move-count tables.

Rule references in comments are to the YINSH rulebook (sections D to J), the Yangsh rules and
RULINGS.md.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

WHITE, BLACK = "white", "black"


def other(color: str) -> str:
    return BLACK if color == WHITE else WHITE


@dataclass(frozen=True)
class Rules:
    """One game's constants, copied from the rule texts (not from engine/variants.py)."""

    name: str
    board: frozenset[tuple[int, int]]
    directions: tuple[tuple[int, int], ...]  # every direction a ring may move in
    row_axes: tuple[tuple[int, int], ...]  # one direction per line, for finding rows
    rings: int
    markers: int
    rows_to_win: int
    no_placement: frozenset[tuple[int, int]]


def _hex_board() -> frozenset[tuple[int, int]]:
    # The 85 intersections: a2-5, b1-7, c1-8, d1-9, e1-10, f2-10, g2-11, h3-11, i4-11, j5-11, k7-10.
    spans = {
        "a": (2, 5),
        "b": (1, 7),
        "c": (1, 8),
        "d": (1, 9),
        "e": (1, 10),
        "f": (2, 10),
        "g": (2, 11),
        "h": (3, 11),
        "i": (4, 11),
        "j": (5, 11),
        "k": (7, 10),
    }
    return frozenset(
        (ord(letter) - ord("a"), n) for letter, (lo, hi) in spans.items() for n in range(lo, hi + 1)
    )


def _square_board() -> frozenset[tuple[int, int]]:
    # A chessboard, a1 to h8.
    return frozenset((c, n) for c in range(8) for n in range(1, 9))


# YINSH: lines run along a column, along equal numbers, and along the diagonal where letter index
# minus number is constant (e2, f3, g4): six ring directions.
_HEX_AXES = ((0, 1), (1, 0), (1, 1))
# Yangsh: like a chess queen, eight directions; rows along ranks, files and both diagonals.
_SQUARE_AXES = ((0, 1), (1, 0), (1, 1), (1, -1))


def _both_ways(axes: tuple[tuple[int, int], ...]) -> tuple[tuple[int, int], ...]:
    return tuple(d for dc, dn in axes for d in ((dc, dn), (-dc, -dn)))


_CORNERS = frozenset({(0, 1), (0, 8), (7, 1), (7, 8)})

RULES = {
    "yinsh": Rules("yinsh", _hex_board(), _both_ways(_HEX_AXES), _HEX_AXES, 5, 51, 3, frozenset()),
    "blitz": Rules("blitz", _hex_board(), _both_ways(_HEX_AXES), _HEX_AXES, 5, 51, 1, frozenset()),
    "yangsh": Rules(
        "yangsh", _square_board(), _both_ways(_SQUARE_AXES), _SQUARE_AXES, 5, 45, 3, _CORNERS
    ),
    "yangsh7": Rules(
        "yangsh7", _square_board(), _both_ways(_SQUARE_AXES), _SQUARE_AXES, 7, 45, 5, _CORNERS
    ),
}


def name(p: tuple[int, int]) -> str:
    return f"{chr(ord('a') + p[0])}{p[1]}"


def point(text: str) -> tuple[int, int]:
    return (ord(text[0]) - ord("a"), int(text[1:]))


def ordered(p: tuple[int, int], q: tuple[int, int]) -> tuple[tuple[int, int], tuple[int, int]]:
    """The two ends of a row in notation order: letter first, then number."""
    return (p, q) if p <= q else (q, p)


class Game:
    """A game of one of the variants, played with notation tokens."""

    def __init__(self, variant: str = "yinsh") -> None:
        self.rules = RULES[variant]
        self.rings: dict[str, set[tuple[int, int]]] = {WHITE: set(), BLACK: set()}
        self.markers: dict[tuple[int, int], str] = {}
        self.removed = {WHITE: 0, BLACK: 0}
        self.pool = self.rules.markers
        self.to_act = WHITE
        self.step = "place"  # place, move, remove-row, remove-ring, over
        self.has_moved = False  # the player to act moved its ring this turn
        self.passes = 0  # passes in a row
        self.result: tuple[str, str] | None = None  # (white|black|draw, how)

    # -------------------------------------------------------------------------- set-ups

    @classmethod
    def setup(
        cls,
        variant: str,
        to_act: str,
        white_rings: list[str],
        black_rings: list[str],
        white_markers: list[str],
        black_markers: list[str],
        removed: tuple[int, int] | None = None,
    ) -> Game:
        """A position at the start of ``to_act``'s turn (its rows are removed first)."""
        g = cls(variant)
        g.rings = {WHITE: {point(p) for p in white_rings}, BLACK: {point(p) for p in black_rings}}
        g.markers = {point(p): WHITE for p in white_markers}
        g.markers.update({point(p): BLACK for p in black_markers})
        if removed is None:
            removed = (g.rules.rings - len(white_rings), g.rules.rings - len(black_rings))
        g.removed = {WHITE: removed[0], BLACK: removed[1]}
        g.pool = g.rules.markers - len(g.markers)
        g._start_turn(to_act)
        return g

    @classmethod
    def from_json(cls, data: dict) -> Game:
        """A position in the engine's JSON form (read here from the documented fields only)."""
        g = cls(data["variant"])
        g.rings = {c: {point(p) for p in data["rings"][c]} for c in (WHITE, BLACK)}
        g.markers = {point(p): c for c in (WHITE, BLACK) for p in data["markers"][c]}
        g.removed = dict(data["removed"])
        g.pool = data["pool"]
        g.to_act = data["turn"]
        g.step = data["next"]
        g.has_moved = data["moved"]
        g.passes = data["passes"]
        if data["result"] is not None:
            g.result = (data["result"], data["termination"])
        return g

    def copy(self) -> Game:
        return copy.deepcopy(self)

    # -------------------------------------------------------------------------- looking

    def snapshot(self) -> dict:
        """Everything about the position, with points as names, for comparing with the engine."""
        return {
            "variant": self.rules.name,
            "turn": self.to_act,
            "next": self.step,
            "moved": self.has_moved,
            "white rings": sorted(name(p) for p in self.rings[WHITE]),
            "black rings": sorted(name(p) for p in self.rings[BLACK]),
            "white markers": sorted(name(p) for p, c in self.markers.items() if c == WHITE),
            "black markers": sorted(name(p) for p, c in self.markers.items() if c == BLACK),
            "removed": (self.removed[WHITE], self.removed[BLACK]),
            "pool": self.pool,
            "passes": self.passes,
            "result": self.result,
        }

    def occupied(self, p: tuple[int, int]) -> bool:
        return p in self.markers or p in self.rings[WHITE] or p in self.rings[BLACK]

    def is_ring(self, p: tuple[int, int]) -> bool:
        return p in self.rings[WHITE] or p in self.rings[BLACK]

    def rows(self, color: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """Every five adjacent points on a line that all hold a marker of ``color`` (G1, G4)."""
        found = []
        for p in self.rules.board:
            for dc, dn in self.rules.row_axes:
                five = [(p[0] + k * dc, p[1] + k * dn) for k in range(5)]
                if all(self.markers.get(q) == color for q in five):
                    found.append(ordered(five[0], five[4]))
        return found

    def row_points(self, ends: tuple[tuple[int, int], tuple[int, int]]) -> list[tuple[int, int]]:
        (c1, n1), (c2, n2) = ends
        dc = (c2 - c1) // 4
        dn = (n2 - n1) // 4
        return [(c1 + k * dc, n1 + k * dn) for k in range(5)]

    def ring_moves(self, color: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
        """Section E: straight lines, over vacant spaces, then over one run of markers at most,
        stopping on the first vacant space after the markers; never over or onto a ring, never
        onto a marker."""
        moves = []
        for start in self.rings[color]:
            for dc, dn in self.rules.directions:
                p = start
                jumped = False
                while True:
                    p = (p[0] + dc, p[1] + dn)
                    if p not in self.rules.board or self.is_ring(p):
                        break
                    if p in self.markers:
                        jumped = True
                        continue
                    moves.append((start, p))
                    if jumped:
                        break
        return moves

    def legal(self) -> list[str]:
        """The tokens the player to act may play."""
        if self.step == "place":
            return [
                name(p)
                for p in self.rules.board
                if not self.occupied(p) and p not in self.rules.no_placement
            ]
        if self.step == "move":
            moves = [f"{name(a)}-{name(b)}" for a, b in self.ring_moves(self.to_act)]
            return moves or ["pass"]  # ruling 1
        if self.step == "remove-row":
            return [f"x{name(a)}-{name(b)}" for a, b in self.rows(self.to_act)]
        if self.step == "remove-ring":
            return [f"x{name(p)}" for p in self.rings[self.to_act]]
        return []

    # -------------------------------------------------------------------------- playing

    def play(self, token: str) -> None:
        """Apply a token; raises ``ValueError`` if it is not in :meth:`legal`."""
        if token not in self.legal():
            raise ValueError(f"{token} is not legal here")
        self.apply(token)

    def apply(self, token: str) -> None:
        """Apply a token known to be legal."""
        me = self.to_act
        if self.step == "place":
            # D: rings are placed one at a time, in turn; after the last one White moves first.
            self.rings[me].add(point(token))
            placed = len(self.rings[WHITE]) + len(self.rings[BLACK])
            if placed == 2 * self.rules.rings:
                self._start_turn(WHITE)
            else:
                self.to_act = other(me)
        elif self.step == "move":
            if token == "pass":
                # Ruling 1; both players passing in succession ends the game, scored as H3.
                self.passes += 1
                if self.passes == 2:
                    self._count(why="no-moves")
                else:
                    self._end_turn()
                return
            a, b = (point(t) for t in token.split("-"))
            # E1-E3: a marker from the pool goes into the ring, the ring moves, the marker stays.
            self.pool -= 1
            self.markers[a] = me
            self.rings[me].remove(a)
            self.rings[me].add(b)
            # F2-F3: every marker jumped is flipped, not the one put in the ring.
            dc = (b[0] > a[0]) - (b[0] < a[0])
            dn = (b[1] > a[1]) - (b[1] < a[1])
            p = (a[0] + dc, a[1] + dn)
            while p != b:
                if p in self.markers:
                    self.markers[p] = other(self.markers[p])
                p = (p[0] + dc, p[1] + dn)
            self.has_moved = True
            self.passes = 0
            if self.rows(me):  # G2, G7: the mover deals with its own rows first
                self.step = "remove-row"
            else:
                self._end_turn()
        elif self.step == "remove-row":
            a, b = (point(t) for t in token[1:].split("-"))
            for p in self.row_points((a, b)):
                del self.markers[p]
            self.pool += 5  # G2: back to the pool
            self.step = "remove-ring"
        elif self.step == "remove-ring":
            self.rings[me].remove(point(token[1:]))
            self.removed[me] += 1
            if self.removed[me] == self.rules.rows_to_win:  # H1, H2, J
                self.result = (me, "rows")
                self.step = "over"
            elif self.rows(me):  # G5 and ruling 3: every row still complete goes too
                self.step = "remove-row"
            elif self.has_moved:
                self._end_turn()
            else:  # G6: rows made by the opponent come off before the move
                self._before_move()

    def _end_turn(self) -> None:
        self._start_turn(other(self.to_act))

    def _start_turn(self, color: str) -> None:
        self.to_act = color
        self.has_moved = False
        if self.rows(color):  # G6, G7: rows the opponent made for this player
            self.step = "remove-row"
        else:
            self._before_move()

    def _before_move(self) -> None:
        # H3 and ruling 2: the game ends when a player must start a move and the pool is empty.
        if self.pool == 0:
            self._count(why="pool-exhausted")
        else:
            self.step = "move"

    def _count(self, why: str) -> None:
        w, b = self.removed[WHITE], self.removed[BLACK]
        self.result = (WHITE if w > b else BLACK if b > w else "draw", why)
        self.step = "over"


def perft(game: Game, depth: int) -> int:
    """The number of action sequences of length ``depth`` (each action is one ply)."""
    if depth == 0:
        return 1
    total = 0
    for token in game.legal():
        if depth == 1:
            total += 1
            continue
        child = game.copy()
        child.apply(token)
        total += perft(child, depth - 1)
    return total
