"""A game in progress: the position, its legal actions, push and pop, the outcome.

The position changes only through :meth:`State.push` and :meth:`State.pop`. ``push`` trusts its
caller (it is the fast path for search and playouts); :meth:`State.play` parses and validates a
token first, and is what a referee uses for input it does not trust::

    >>> s = State("yinsh")
    >>> len(s.legal_actions())
    85
    >>> s.play("e5")
    Action.parse('e5')
    >>> s.next, s.turn
    (<Phase.PLACE: 'place'>, <Color.BLACK: 1>)
    >>> s.pop()
    Action.parse('e5')
"""

from __future__ import annotations

import enum
import json
import re
from dataclasses import dataclass
from typing import Any, Protocol

from engine.actions import PASS, Action, IllegalAction, InvalidAction, Kind
from engine.geometry import Geometry, geometry
from engine.variants import Variant, variant


class Color(enum.IntEnum):
    """A player. White starts."""

    WHITE = 0
    BLACK = 1

    @property
    def label(self) -> str:
        return "white" if self is Color.WHITE else "black"

    @property
    def other(self) -> Color:
        return Color(1 - self)


class Phase(enum.StrEnum):
    """What the player to act does next."""

    PLACE = "place"
    MOVE = "move"
    REMOVE_ROW = "remove-row"
    REMOVE_RING = "remove-ring"
    OVER = "over"


class Result(enum.StrEnum):
    WHITE = "white"
    BLACK = "black"
    DRAW = "draw"

    @property
    def score(self) -> str:
        """The result as in a record header: ``1-0``, ``0-1`` or ``1/2-1/2``."""
        return {"white": "1-0", "black": "0-1", "draw": "1/2-1/2"}[self.value]


class Termination(enum.StrEnum):
    """How the game itself ended: the rules' three endings, and a resignation.

    A game decided off the board (a player's clock ran out, its program crashed...) ends with a
    :class:`Forfeit` instead, or with an ending a referee defines itself (:class:`Ending`).
    """

    ROWS = "rows"
    POOL_EXHAUSTED = "pool-exhausted"
    NO_MOVES = "no-moves"
    RESIGNATION = "resignation"

    @property
    def by_rules(self) -> bool:
        """Whether the moves themselves reach this ending (not a resignation)."""
        return self is not Termination.RESIGNATION


_TOKEN = re.compile(r"[a-z]+(?:-[a-z]+)*\Z")


class Forfeit(str):
    """A game decided off the board, named by a token the rules do not define.

    The engine knows the rules' endings only (:class:`Termination`); how a referee ends a game
    (``time``, ``crash``, ``illegal-move``...) is its own vocabulary. A record or a position
    that names such an ending is read as a forfeit that keeps the token: a lower-case word, or
    words joined by hyphens. A forfeit equals its token, and so any string enum member with
    the same value::

        >>> Forfeit("time")
        Forfeit('time')
        >>> Forfeit("time") == "time", Forfeit("time").value, Forfeit("time").by_rules
        (True, 'time', False)
        >>> Forfeit("Out of time")
        Traceback (most recent call last):
        ...
        ValueError: a termination is a lower-case word, or words joined by hyphens: not 'Out ...
    """

    __slots__ = ()

    def __new__(cls, token: str) -> Forfeit:
        if not isinstance(token, str) or not _TOKEN.match(token):
            raise ValueError(
                f"a termination is a lower-case word, or words joined by hyphens: not {token!r}"
            )
        if token in Termination.__members__.values():
            raise ValueError(f"{token!r} is an ending of the rules, not a forfeit")
        return super().__new__(cls, token)

    def __repr__(self) -> str:
        return f"Forfeit({str.__str__(self)!r})"

    @property
    def value(self) -> str:
        """The token, as in a record's ``Termination`` header."""
        return str.__str__(self)

    @property
    def by_rules(self) -> bool:
        """Never: the moves did not decide the game."""
        return False


class Ending(Protocol):
    """What :attr:`Outcome.termination` holds: a :class:`Termination`, a :class:`Forfeit`, or a
    referee's own enum member with the same two properties (``value`` is the token)."""

    @property
    def value(self) -> str: ...

    @property
    def by_rules(self) -> bool: ...


def ending(token: str) -> Termination | Forfeit:
    """The ending a record or a position names: one of the rules', else a forfeit.

    >>> ending("rows"), ending("crash")
    (<Termination.ROWS: 'rows'>, Forfeit('crash'))

    Raises ValueError for a token that is not a lower-case word with hyphens.
    """
    try:
        return Termination(token)
    except ValueError:
        return Forfeit(token)


@dataclass(frozen=True)
class Outcome:
    """A finished game: who won (or a draw) and why."""

    result: Result
    termination: Ending

    @property
    def winner(self) -> Color | None:
        if self.result is Result.DRAW:
            return None
        return Color.WHITE if self.result is Result.WHITE else Color.BLACK


# Internal phase numbers (ints are faster to compare than enum members on the hot path).
_PLACE, _MOVE, _REMOVE_ROW, _REMOVE_RING, _OVER = range(5)
_PHASES = (Phase.PLACE, Phase.MOVE, Phase.REMOVE_ROW, Phase.REMOVE_RING, Phase.OVER)
_PHASE_NUMBER = {p: i for i, p in enumerate(_PHASES)}
_COLORS = (Color.WHITE, Color.BLACK)
_KIND_OF_PHASE = {
    _PLACE: Kind.PLACE,
    _MOVE: Kind.MOVE,
    _REMOVE_ROW: Kind.REMOVE_ROW,
    _REMOVE_RING: Kind.REMOVE_RING,
}
_PHASE_WORDS = {
    _PLACE: "place a ring",
    _MOVE: "move a ring",
    _REMOVE_ROW: "remove a row",
    _REMOVE_RING: "remove a ring",
}


class _Tables:
    """Every action a variant can have, made once, with the bitsets pushing it needs."""

    def __init__(self, v: Variant) -> None:
        g = geometry(v.board)
        self.variant = v
        self.geo: Geometry = g
        self.actions: dict[Action, Action] = {}

        def make(kind: Kind, a: str, b: str, *data: int) -> Action:
            act = Action(kind, a, b, (self, *data))
            self.actions[act] = act
            return act

        name = g.names
        self.place: tuple[tuple[int, Action], ...] = tuple(
            (1 << i, make(Kind.PLACE, name[i], "", 1 << i))
            for i in g.points
            if name[i] not in v.no_placement
        )
        self.remove_ring: dict[int, Action] = {
            1 << i: make(Kind.REMOVE_RING, name[i], "", 1 << i) for i in g.points
        }
        # rays[bit of a ring] = per direction, the (bit, move action) of each point in turn.
        self.rays: dict[int, tuple[tuple[tuple[int, Action], ...], ...]] = {}
        for i in g.points:
            self.rays[1 << i] = tuple(
                tuple(
                    (1 << j, make(Kind.MOVE, name[i], name[j], 1 << i, 1 << j, g.between[(i, j)]))
                    for j in ray
                )
                for ray in g.rays[i]
            )
        # rows[axis][bit of the first point] = the row removal starting there.
        self.rows: list[dict[int, Action]] = [{} for _ in g.shifts]
        for (i, axis), mask in g.rows.items():
            last = i + 4 * g.shifts[axis]
            self.rows[axis][1 << i] = make(Kind.REMOVE_ROW, name[i], name[last], mask)


_TABLES: dict[str, _Tables] = {}


def _tables(v: Variant) -> _Tables:
    t = _TABLES.get(v.name)
    if t is None:
        t = _TABLES[v.name] = _Tables(v)
    return t


def _shared_points(*pieces: int) -> int:
    """The points on which two of the given bitsets (rings and markers) both have a piece."""
    seen = shared = 0
    for bits in pieces:
        shared |= seen & bits
        seen |= bits
    return shared


def _points(g: Geometry, bits: int) -> str:
    return ",".join(g.bit_names(bits))


class State:
    """A position and the way it was reached.

    Public attributes (read them, change them only through push/pop):
        variant: the :class:`~engine.variants.Variant`.
        rings, markers: bitsets per colour (index with :class:`Color`); use :meth:`points`.
        removed: rings removed per colour.
        pool: markers left in the pool.
        turn: the colour to act.
        moved: whether the player to act has already moved its ring this turn (its removals
            then end the turn; before the move they come first).
        history: every action pushed, in order.
        outcome: an :class:`Outcome` once the game is over, else ``None``.
    """

    __slots__ = (
        "_g",
        "_phase",
        "_stack",
        "_t",
        "history",
        "markers",
        "moved",
        "outcome",
        "passes",
        "pool",
        "removed",
        "rings",
        "turn",
        "variant",
    )

    def __init__(self, variant_name: str | Variant = "yinsh") -> None:
        v = variant(variant_name)
        self.variant = v
        self._t = _tables(v)
        self._g = self._t.geo
        self.rings = [0, 0]
        self.markers = [0, 0]
        self.removed = [0, 0]
        self.pool = v.markers
        self.turn = Color.WHITE
        self._phase = _PLACE
        self.moved = False
        self.passes = 0
        self.outcome: Outcome | None = None
        self.history: list[Action] = []
        self._stack: list[tuple[Any, ...]] = []

    # ----------------------------------------------------------------------------- inspecting

    @property
    def next(self) -> Phase:
        """What the player to act does next (``Phase.OVER`` once the game has ended)."""
        return _PHASES[self._phase]

    @property
    def geometry(self) -> Geometry:
        return self._g

    def is_over(self) -> bool:
        return self._phase == _OVER

    def points(self, bits: int) -> list[str]:
        """Names of the points in a bitset, e.g. ``state.points(state.rings[Color.WHITE])``."""
        return self._g.bit_names(bits)

    def key(self) -> tuple[Any, ...]:
        """Everything that defines the position (not the history): equal keys, equal positions."""
        return (
            self.variant.name,
            self.rings[0],
            self.rings[1],
            self.markers[0],
            self.markers[1],
            self.removed[0],
            self.removed[1],
            self.pool,
            self.turn,
            self._phase,
            self.moved,
            self.passes,
            self.outcome,
        )

    def rows(self, color: Color | int | None = None) -> list[Action]:
        """The row removals open to a colour (the player to act by default)."""
        c = self.turn if color is None else color
        m = self.markers[c]
        out: list[Action] = []
        for axis, starts in enumerate(self._g.row_starts(m)):
            table = self._t.rows[axis]
            while starts:
                low = starts & -starts
                out.append(table[low])
                starts ^= low
        return out

    def legal_actions(self) -> list[Action]:
        """Every legal action of the player to act, in a fixed (not sorted) order.

        When the player must move a ring and none can move, the only action is ``pass``.
        Empty once the game is over.
        """
        ph = self._phase
        if ph == _MOVE:
            return self._ring_moves() or [PASS]
        if ph == _PLACE:
            occ = self.rings[0] | self.rings[1]
            return [a for b, a in self._t.place if not b & occ]
        if ph == _REMOVE_ROW:
            return self.rows()
        if ph == _REMOVE_RING:
            out = []
            bits = self.rings[self.turn]
            table = self._t.remove_ring
            while bits:
                low = bits & -bits
                out.append(table[low])
                bits ^= low
            return out
        return []

    def _ring_moves(self) -> list[Action]:
        rings = self.rings[0] | self.rings[1]
        markers = self.markers[0] | self.markers[1]
        out: list[Action] = []
        append = out.append
        rays = self._t.rays
        mine = self.rings[self.turn]
        while mine:
            low = mine & -mine
            mine ^= low
            for ray in rays[low]:
                jumped = False
                for bit, act in ray:
                    if bit & markers:
                        jumped = True
                    elif bit & rings:
                        break
                    else:
                        append(act)
                        if jumped:
                            break
        return out

    def is_legal(self, action: Action) -> bool:
        return action in self.legal_actions()

    def parse_action(self, token: str | Action) -> Action:
        """The legal action a token names, with its board data attached.

        Raises :class:`~engine.actions.InvalidAction` for bad syntax or a point off the board, and
        :class:`~engine.actions.IllegalAction` when the rules do not allow it here; both messages
        name the token and the position.
        """
        try:
            action = token if isinstance(token, Action) else Action.parse(token)
        except InvalidAction as e:
            raise InvalidAction(f"{e}; position: {self.describe()}") from None
        if action.kind != Kind.PASS:
            canonical = self._t.actions.get(action)
            if canonical is None:
                if any(p and p not in self._g.index for p in (action.a, action.b)):
                    raise InvalidAction(
                        f"{action} names a point that is not on the {self.variant.title} board; "
                        f"position: {self.describe()}"
                    )
                raise IllegalAction(f"{action} is not legal: {self._why_illegal(action)}")
            action = canonical
        if action not in self.legal_actions():
            raise IllegalAction(f"{action} is not legal: {self._why_illegal(action)}")
        return action

    def _why_illegal(self, action: Action) -> str:
        """Why a well-formed action is not legal here, in words, then the position."""
        where = f"; position: {self.describe()}"
        if self._phase == _OVER:
            return "the game is over" + where
        wanted = _KIND_OF_PHASE.get(self._phase)
        if action.kind == Kind.PASS and self._phase == _MOVE:
            return f"{self.turn.label} has a ring that can move" + where
        if action.kind != wanted:
            return f"{self.turn.label} must {_PHASE_WORDS[self._phase]} now" + where
        g = self._g
        occupied = self.rings[0] | self.rings[1] | self.markers[0] | self.markers[1]
        if action.kind == Kind.PLACE:
            if action.a in self.variant.no_placement:
                return f"no ring may be placed on a corner in {self.variant.title}" + where
            if occupied >> g.index[action.a] & 1:
                return f"{action.a} is taken" + where
        elif action.kind == Kind.MOVE:
            return self._why_not_move(action.a, action.b) + where
        elif action.kind == Kind.REMOVE_ROW:
            return f"{action.a}-{action.b} is not a row of five {self.turn.label} markers" + where
        elif action.kind == Kind.REMOVE_RING:
            return f"there is no {self.turn.label} ring on {action.a}" + where
        return "not allowed by the rules" + where

    def _why_not_move(self, a: str, b: str) -> str:
        g = self._g
        i, j = g.index[a], g.index[b]
        me = self.turn
        if not self.rings[me] >> i & 1:
            return f"there is no {me.label} ring on {a}"
        ray = next((r for r in g.rays[i] if j in r), None)
        if ray is None:
            return f"{a} and {b} are not on one line"
        rings = self.rings[0] | self.rings[1]
        markers = self.markers[0] | self.markers[1]
        jumped = False
        for k in ray:
            if rings >> k & 1:
                return f"the ring on {g.names[k]} is in the way (rings cannot be jumped)"
            if markers >> k & 1:
                if k == j:
                    return f"{b} holds a marker (a ring must land on a vacant space)"
                jumped = True
            elif k == j:
                break
            elif jumped:
                return (
                    f"a ring that jumps markers must stop on the first vacant space after "
                    f"them, {g.names[k]}"
                )
        return "not allowed by the rules"

    # ----------------------------------------------------------------------------- changing

    def play(self, token: str | Action) -> Action:
        """Validate then push an action (a token or an :class:`Action`); return what was pushed."""
        action = self.parse_action(token)
        self.push(action)
        return action

    def push(self, action: Action) -> None:
        """Apply a legal action. Trusts its caller: validate untrusted input with :meth:`play`."""
        d = action.data
        if (d is None or d[0] is not self._t) and action.kind != Kind.PASS:
            action = self._t.actions[action]
            d = action.data
        self._stack.append(
            (
                self.rings[0],
                self.rings[1],
                self.markers[0],
                self.markers[1],
                self.removed[0],
                self.removed[1],
                self.pool,
                self.turn,
                self._phase,
                self.moved,
                self.passes,
                self.outcome,
            )
        )
        self.history.append(action)
        kind = action.kind
        me = self.turn
        if kind == Kind.MOVE:
            src, dst, between = d[1], d[2], d[3]
            m0, m1 = self.markers
            flip = between & (m0 | m1)
            m0 ^= flip
            m1 ^= flip
            if me:
                m1 |= src
            else:
                m0 |= src
            self.markers[0] = m0
            self.markers[1] = m1
            self.rings[me] ^= src | dst
            self.pool -= 1
            self.passes = 0
            self.moved = True
            if self._g.has_row(m1 if me else m0):
                self._phase = _REMOVE_ROW
            else:
                self._begin_turn(1 - me)
        elif kind == Kind.PLACE:
            rings = self.rings
            rings[me] |= d[1]
            if (rings[0] | rings[1]).bit_count() == 2 * self.variant.rings:
                self._begin_turn(0)
            else:
                self.turn = _COLORS[1 - me]
        elif kind == Kind.REMOVE_ROW:
            self.markers[me] &= ~d[1]
            self.pool += 5
            self._phase = _REMOVE_RING
        elif kind == Kind.REMOVE_RING:
            self.rings[me] &= ~d[1]
            removed = self.removed
            removed[me] += 1
            if removed[me] >= self.variant.rows_to_win:
                self._finish(Result.WHITE if me == 0 else Result.BLACK, Termination.ROWS)
            elif self._g.has_row(self.markers[me]):
                self._phase = _REMOVE_ROW
            elif self.moved:
                self._begin_turn(1 - me)
            else:
                self._ready_to_move()
        else:  # pass
            self.passes += 1
            if self.passes >= 2:
                self._finish_by_count(Termination.NO_MOVES)
            else:
                self._begin_turn(1 - me)

    def pop(self) -> Action:
        """Undo the last action and return it."""
        (
            r0,
            r1,
            m0,
            m1,
            e0,
            e1,
            self.pool,
            self.turn,
            self._phase,
            self.moved,
            self.passes,
            self.outcome,
        ) = self._stack.pop()
        self.rings = [r0, r1]
        self.markers = [m0, m1]
        self.removed = [e0, e1]
        return self.history.pop()

    def _begin_turn(self, player: int) -> None:
        self.turn = _COLORS[player]
        self.moved = False
        if self._g.has_row(self.markers[player]):
            self._phase = _REMOVE_ROW
        else:
            self._ready_to_move()

    def _ready_to_move(self) -> None:
        if self.pool <= 0:
            self._finish_by_count(Termination.POOL_EXHAUSTED)
        else:
            self._phase = _MOVE

    def _finish_by_count(self, termination: Termination) -> None:
        w, b = self.removed
        result = Result.WHITE if w > b else Result.BLACK if b > w else Result.DRAW
        self._finish(result, termination)

    def _finish(self, result: Result, termination: Termination) -> None:
        self._phase = _OVER
        self.outcome = Outcome(result, termination)

    def copy(self, *, stack: bool = True) -> State:
        """A copy that shares nothing mutable; ``stack=False`` drops the history (no pop)."""
        c = State.__new__(State)
        c.variant = self.variant
        c._t = self._t
        c._g = self._g
        c.rings = self.rings[:]
        c.markers = self.markers[:]
        c.removed = self.removed[:]
        c.pool = self.pool
        c.turn = self.turn
        c._phase = self._phase
        c.moved = self.moved
        c.passes = self.passes
        c.outcome = self.outcome
        c.history = self.history[:] if stack else []
        c._stack = self._stack[:] if stack else []
        return c

    # ----------------------------------------------------------------------------- set-up

    @classmethod
    def from_setup(
        cls,
        variant_name: str | Variant,
        turn: Color | int,
        white_rings: list[str],
        black_rings: list[str],
        white_markers: list[str] | tuple[str, ...] = (),
        black_markers: list[str] | tuple[str, ...] = (),
        removed: tuple[int, int] | None = None,
    ) -> State:
        """A ring-moving position, at the start of ``turn``'s turn.

        Rings removed default to the variant's rings minus the rings on the board. Rows of the
        player to act are resolved first, as at the start of any turn; a complete row of the
        other colour cannot arise at the start of a turn and is an error.
        """
        s = cls(variant_name)
        v = s.variant
        g = s._g
        try:
            wr, br, wm, bm = (
                g.bits_of(p) for p in (white_rings, black_rings, white_markers, black_markers)
            )
        except KeyError as e:
            raise InvalidAction(f"{e.args[0]!r} is not a point of the {v.title} board") from None
        for name, bits, count in (
            ("white rings", wr, len(white_rings)),
            ("black rings", br, len(black_rings)),
            ("white markers", wm, len(white_markers)),
            ("black markers", bm, len(black_markers)),
        ):
            if bits.bit_count() != count:
                raise ValueError(f"{name} name a point twice")
        shared = _shared_points(wr, br, wm, bm)
        if shared:
            raise ValueError(f"two pieces on {','.join(g.bit_names(shared))}")
        if removed is None:
            removed = (v.rings - wr.bit_count(), v.rings - br.bit_count())
        for label, on_board, gone in (("white", wr, removed[0]), ("black", br, removed[1])):
            if on_board.bit_count() + gone != v.rings or not 0 <= gone < v.rows_to_win:
                count = on_board.bit_count()
                raise ValueError(
                    f"{label} has {count} ring{'s' if count != 1 else ''} on the board and "
                    f"{gone} removed; {v.title} needs {v.rings} in all, fewer than "
                    f"{v.rows_to_win} removed"
                )
        pool = v.markers - (wm | bm).bit_count()
        if pool < 0:
            raise ValueError(f"{(wm | bm).bit_count()} markers, but the pool holds {v.markers}")
        player = Color(turn)
        if g.has_row((bm, wm)[player]):
            raise ValueError(
                f"a complete {player.other.label} row cannot stand on {player.label}'s turn"
            )
        s.rings = [wr, br]
        s.markers = [wm, bm]
        s.removed = list(removed)
        s.pool = pool
        s._begin_turn(player)
        return s

    # ----------------------------------------------------------------------------- text forms

    def describe(self) -> str:
        """One line: ``next=move turn=w wr=.. br=.. wm=.. bm=..`` (and ``result=`` when over)."""
        g = self._g
        parts = [
            f"next={self.next.value}",
            f"turn={'wb'[self.turn]}",
            f"wr={_points(g, self.rings[0])}",
            f"br={_points(g, self.rings[1])}",
            f"wm={_points(g, self.markers[0])}",
            f"bm={_points(g, self.markers[1])}",
        ]
        if self.outcome:
            parts.append(f"result={self.outcome.result.value}")
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"<State {self.variant.name} {self.describe()}>"

    def to_json(self) -> dict[str, Any]:
        """The position as plain JSON data (the format is documented in docs/position-json.md)."""
        g = self._g
        out: dict[str, Any] = {
            "variant": self.variant.name,
            "turn": self.turn.label,
            "next": self.next.value,
            "moved": self.moved,
            "rings": {"white": g.bit_names(self.rings[0]), "black": g.bit_names(self.rings[1])},
            "markers": {
                "white": g.bit_names(self.markers[0]),
                "black": g.bit_names(self.markers[1]),
            },
            "removed": {"white": self.removed[0], "black": self.removed[1]},
            "pool": self.pool,
            "passes": self.passes,
            "result": None,
            "termination": None,
        }
        if self.outcome:
            out["result"] = self.outcome.result.value
            out["termination"] = self.outcome.termination.value
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any] | str) -> State:
        """Read a position written by :meth:`to_json` (no history). Raises ``ValueError``.

        Everything is checked: points on the board, counts, the pool, and that the position is
        one the rules can reach in the phase it claims.
        """
        if isinstance(data, str):
            try:
                data = json.loads(data)
            except json.JSONDecodeError as e:
                raise ValueError(f"position is not JSON: {e}") from None
        if not isinstance(data, dict):
            raise ValueError("position must be a JSON object")
        try:
            s = cls(data["variant"])
            g = s._g
            v = s.variant

            def bits(value: Any, what: str) -> int:
                if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
                    raise ValueError(f"{what} must be a list of points")
                try:
                    b = g.bits_of([p.lower() for p in value])
                except KeyError as e:
                    raise ValueError(f"{what}: {e.args[0]!r} is not on the board") from None
                if b.bit_count() != len(value):
                    raise ValueError(f"{what} names a point twice")
                return b

            turn = {"white": Color.WHITE, "black": Color.BLACK}[data["turn"]]
            phase = Phase(data["next"])
            rings = [
                bits(data["rings"]["white"], "white rings"),
                bits(data["rings"]["black"], "black rings"),
            ]
            markers = [
                bits(data["markers"]["white"], "white markers"),
                bits(data["markers"]["black"], "black markers"),
            ]
            removed = [data["removed"]["white"], data["removed"]["black"]]
            pool = data["pool"]
            moved = data.get("moved", False)
            passes = data.get("passes", 0)
            result, termination = data.get("result"), data.get("termination")
        except KeyError as e:
            raise ValueError(f"position lacks {e.args[0]!r} or has a bad value there") from None
        except (TypeError, AttributeError):
            raise ValueError("position has a value of the wrong type") from None
        for value, what in (
            (removed[0], "removed.white"),
            (removed[1], "removed.black"),
            (pool, "pool"),
            (passes, "passes"),
        ):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValueError(f"{what} must be a whole number >= 0")
        if not isinstance(moved, bool):
            raise ValueError("moved must be true or false")
        shared = _shared_points(rings[0], rings[1], markers[0], markers[1])
        if shared:
            raise ValueError(f"two pieces on {','.join(g.bit_names(shared))}")
        if pool + (markers[0] | markers[1]).bit_count() != v.markers:
            raise ValueError(f"markers on the board plus the pool must be {v.markers}")
        for c in (0, 1):
            if rings[c].bit_count() + removed[c] > v.rings:
                raise ValueError(f"too many {Color(c).label} rings")
            if removed[c] > v.rows_to_win:
                raise ValueError(f"too many {Color(c).label} rings removed")
        placing = phase is Phase.PLACE
        complete = all(rings[c].bit_count() + removed[c] == v.rings for c in (0, 1))
        if placing == complete and phase is not Phase.OVER:
            raise ValueError("rings still to place must match next=place")
        if placing and (markers[0] | markers[1] or any(removed)):
            raise ValueError("no marker is played and no ring removed before all rings are placed")
        if placing and rings[0].bit_count() - rings[1].bit_count() != turn:
            raise ValueError("White places first: the turn does not match the rings placed")
        if phase is not Phase.OVER:
            if max(removed) >= v.rows_to_win:
                raise ValueError("a player has removed the rings to win, so next must be over")
            if passes >= 2:
                raise ValueError("two passes in a row end the game, so next must be over")
            if phase is Phase.MOVE and pool == 0:
                raise ValueError("next=move with an empty pool: the game is over")
        s.rings, s.markers, s.removed = rings, markers, removed
        s.pool, s.turn, s.moved, s.passes = pool, turn, moved, passes
        s._phase = _PHASE_NUMBER[phase]
        if phase is Phase.OVER:
            try:
                s.outcome = Outcome(Result(str(result)), ending(str(termination)))
            except ValueError:
                raise ValueError("a finished position needs a result and a termination") from None
        elif result is not None or termination is not None:
            raise ValueError("result and termination are only for next=over")
        elif phase in (Phase.REMOVE_ROW,) and not g.has_row(markers[turn]):
            raise ValueError("next=remove-row but the player to act has no row")
        elif phase in (Phase.MOVE, Phase.PLACE) and (
            g.has_row(markers[0]) or g.has_row(markers[1])
        ):
            raise ValueError(f"next={phase.value} with a complete row on the board")
        return s


def perft(state: State, depth: int) -> int:
    """Count the action sequences of length ``depth`` from a position (each action is a ply).

    >>> perft(State("yinsh"), 2)
    7140
    """
    if depth <= 0:
        return 1
    actions = state.legal_actions()
    if depth == 1:
        return len(actions)
    total = 0
    for a in actions:
        state.push(a)
        total += perft(state, depth - 1)
        state.pop()
    return total
