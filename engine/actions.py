"""Actions, the unit a player chooses: place a ring, move a ring, remove a row, remove a ring, pass.

Tokens are those of the official notation, one action each::

    >>> Action.parse("e5"), Action.parse("A2-H9"), Action.parse("xc2-c6"), Action.parse("xa5")
    (Action.parse('e5'), Action.parse('a2-h9'), Action.parse('xc2-c6'), Action.parse('xa5'))
    >>> str(Action.parse("xc6-c2"))  # a row is written with its ends in notation order
    'xc2-c6'
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass, field
from typing import Any


class Kind(enum.IntEnum):
    """What an action does."""

    PLACE = 0
    MOVE = 1
    REMOVE_ROW = 2
    REMOVE_RING = 3
    PASS = 4


class InvalidAction(ValueError):
    """A token that is not an action at all (syntax), or names a point off the board."""


class IllegalAction(ValueError):
    """A well-formed action that the rules do not allow in the position."""


_POINT = r"([a-z])(\d{1,2})"
_TOKEN = re.compile(rf"^(x)?{_POINT}(?:-{_POINT})?$")


def point_key(name: str) -> tuple[str, int]:
    """Notation order of points: letter first, then number (``c2`` < ``c10`` < ``d1``)."""
    return name[0], int(name[1:])


@dataclass(frozen=True, slots=True)
class Action:
    """One action. ``a`` and ``b`` are point names (``b`` only for moves and rows).

    Compare and hash by value. Actions returned by :meth:`engine.State.legal_actions` carry
    precomputed data for their board, so that pushing them is fast; that data takes no part in
    equality.
    """

    kind: Kind
    a: str = ""
    b: str = ""
    data: Any = field(default=None, compare=False, hash=False, repr=False)

    def __str__(self) -> str:
        kind = self.kind
        if kind == Kind.PLACE:
            return self.a
        if kind == Kind.MOVE:
            return f"{self.a}-{self.b}"
        if kind == Kind.REMOVE_ROW:
            return f"x{self.a}-{self.b}"
        if kind == Kind.REMOVE_RING:
            return f"x{self.a}"
        return "pass"

    def __repr__(self) -> str:
        return f"Action.parse({str(self)!r})"

    def __reduce__(self) -> tuple[type[Action], tuple[Kind, str, str]]:
        # Pickled by value, without the board's precomputed data (the tables of the variant):
        # pushing it looks that up again.
        return Action, (self.kind, self.a, self.b)

    @staticmethod
    def parse(token: str) -> Action:
        """Read one action token, in lower or upper case. Raises :class:`InvalidAction`.

        Only the syntax is checked here; whether the points exist and the action is legal is the
        position's business (:meth:`engine.State.parse_action`).
        """
        text = token.strip().lower()
        if text == "pass":
            return PASS
        m = _TOKEN.match(text)
        if not m:
            raise InvalidAction(f"not an action: {token!r}")
        x, c1, n1, c2, n2 = m.groups()
        a = f"{c1}{int(n1)}"
        if c2 is None:
            return Action(Kind.REMOVE_RING if x else Kind.PLACE, a)
        b = f"{c2}{int(n2)}"
        if x:
            if point_key(b) < point_key(a):
                a, b = b, a
            return Action(Kind.REMOVE_ROW, a, b)
        return Action(Kind.MOVE, a, b)


PASS = Action(Kind.PASS)
