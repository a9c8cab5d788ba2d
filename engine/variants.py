"""The games the engine plays, as configuration: one code path serves them all.

>>> variant("yinsh")
variant('yinsh')
>>> variant("Blitz").rows_to_win
1
>>> sorted(VARIANTS)
['blitz', 'yangsh', 'yangsh7', 'yinsh']
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.geometry import HEX, SQUARE8, Board


@dataclass(frozen=True)
class Variant:
    """A game: its board, the rings each player has, the markers in the pool, the rows to win.

    ``no_placement`` lists the points where a ring may not be placed (Yangsh's corners).
    """

    name: str
    board: Board = field(repr=False)
    rings: int = field(repr=False)
    markers: int = field(repr=False)
    rows_to_win: int = field(repr=False)
    no_placement: frozenset[str] = field(default=frozenset(), repr=False)
    title: str = field(default="", repr=False)

    def __repr__(self) -> str:
        return f"variant({self.name!r})"


YINSH = Variant("yinsh", HEX, rings=5, markers=51, rows_to_win=3, title="YINSH")
BLITZ = Variant("blitz", HEX, rings=5, markers=51, rows_to_win=1, title="Blitz YINSH")
_CORNERS = frozenset({"a1", "a8", "h1", "h8"})
YANGSH = Variant(
    "yangsh", SQUARE8, rings=5, markers=45, rows_to_win=3, no_placement=_CORNERS, title="Yangsh"
)
YANGSH7 = Variant(
    "yangsh7",
    SQUARE8,
    rings=7,
    markers=45,
    rows_to_win=5,
    no_placement=_CORNERS,
    title="Yangsh (7 pawns)",
)

VARIANTS: dict[str, Variant] = {v.name: v for v in (YINSH, BLITZ, YANGSH, YANGSH7)}


def variant(name: str | Variant) -> Variant:
    """Find a variant by name (case-insensitive); a :class:`Variant` is returned as it is."""
    if isinstance(name, Variant):
        return name
    try:
        return VARIANTS[name.strip().lower()]
    except KeyError:
        known = ", ".join(sorted(VARIANTS))
        raise ValueError(f"unknown variant {name!r} (known: {known})") from None
