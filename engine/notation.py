"""The official YINSH notation: turns, whole games in the long and the short form.

A turn is everything one player does in a row, parts separated by ``;``: removals forced on it by
the opponent's move, its own move (or ring placement), and the removals its move caused::

    >>> from engine.state import State
    >>> moves = "1.e3 2.a5 3.b5 4.c6 5.d6 6.e4 7.h7 8.g2 9.g3 10.g8 11.h7-g7"
    >>> s = replay(moves)
    >>> write_moves(s.history)
    '1.e3 2.a5 3.b5 4.c6 5.d6 6.e4 7.h7 8.g2 9.g3 10.g8 11.h7-g7'

In the long form a removal names its row and its ring (``xg5-g9xa5``); the short form names the
ring only (``xa5``) unless more than one row could be meant, and then it names the row too.
Moves are numbered by each player's turns, odd for White and even for Black.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from engine.actions import Action, IllegalAction, InvalidAction, Kind
from engine.state import Color, State
from engine.variants import Variant


class NotationError(ValueError):
    """A game text that cannot be read: names the token, the move number and the position."""

    def __init__(self, message: str, *, token: str = "", number: int = 0, position: str = ""):
        where = f"move {number}" if number else "moves"
        text = f"{where}: {message}"
        if token:
            text = f"{where}, {token!r}: {message}"
        if position:
            text += f" (position: {position})"
        super().__init__(text)
        self.token = token
        self.number = number
        self.position = position


_NUMBER = re.compile(r"^(\d+)\.(.*)$")
_PLACE = re.compile(r"^[a-z]\d{1,2}$")
_MOVE = re.compile(r"^[a-z]\d{1,2}-[a-z]\d{1,2}$")
_REMOVAL = re.compile(r"^x(?:([a-z]\d{1,2})-([a-z]\d{1,2}))?(?:x?([a-z]\d{1,2}))?$")


@dataclass
class Moves:
    """What a line of moves holds: the actions, and who resigned at the end, if anyone."""

    state: State
    resigned: Color | None = None


def split_turns(actions: Iterable[Action], variant: str | Variant = "yinsh") -> list[list[Action]]:
    """Group a game's actions into turns (each turn is one player's actions in a row)."""
    s = State(variant)
    turns: list[list[Action]] = []
    player = None
    for a in actions:
        if s.turn != player or not turns:
            turns.append([])
            player = s.turn
        s.push(a)
        turns[-1].append(a)
    return turns


def write_moves(
    actions: Sequence[Action], variant: str | Variant = "yinsh", *, long: bool = True
) -> str:
    """The official notation of a game's actions, in the long (default) or short form.

    The actions must be a legal game from the start (use :func:`replay` to check one).
    """
    s = State(variant)
    out: list[str] = []
    number = 0
    parts: list[str] = []
    player = None
    row: Action | None = None  # a row removed, waiting for its ring
    named = True
    for a in actions:
        if s.turn != player:
            if parts:
                out.append(f"{number}.{';'.join(parts)}")
            number += 1
            parts = []
            player = s.turn
        kind = a.kind
        if kind == Kind.REMOVE_ROW:
            row, named = a, long or _needs_row(s, a)
        elif kind == Kind.REMOVE_RING and row is not None:
            parts.append(f"x{row.a}-{row.b}x{a.a}" if named else f"x{a.a}")
            row = None
        else:
            parts.append(str(a))
        s.push(a)
    if row is not None:
        # A game cut short between a row and its ring (a forfeit): the row stands alone.
        parts.append(str(row))
    if parts:
        out.append(f"{number}.{';'.join(parts)}")
    return " ".join(out)


def _needs_row(s: State, row: Action) -> bool:
    """Whether the short form must name this row: the reader could not tell which one it is."""
    candidates = s.legal_actions()
    if len(candidates) == 1:
        return False
    return not (_disjoint(candidates) and row == _default_row(candidates))


def _disjoint(rows: Sequence[Action]) -> bool:
    seen = 0
    for r in rows:
        mask = r.data[1]
        if seen & mask:
            return False
        seen |= mask
    return True


def _default_row(rows: Sequence[Action]) -> Action:
    return min(rows, key=str)


def tokens(text: str) -> list[str]:
    """The move tokens of a line of moves, lower-cased, as the readers number them.

    ``23. i8-f5`` (a space after the number) is one token; ``...`` is skipped::

        >>> tokens("1.E3 2. a5 ... 3.b5")
        ['1.e3', '2.a5', '3.b5']
    """
    words = text.lower().split()
    out: list[str] = []
    i = 0
    while i < len(words):
        w = words[i]
        if w in ("...", "…"):
            i += 1
            continue
        # "23. i8-f5" (a space after the number) reads as "23.i8-f5".
        if re.fullmatch(r"\d+\.", w) and i + 1 < len(words):
            w += words[i + 1]
            i += 1
        out.append(w)
        i += 1
    return out


def replay(text: str, variant: str | Variant = "yinsh") -> State:
    """Play a line of moves (long or short form) from the start; return the final position.

    Raises :class:`NotationError` naming the first token that cannot be read or played. A
    final ``resign`` token (used by some sites) is refused here: see :func:`read_moves`.
    """
    moves = read_moves(text, variant)
    if moves.resigned is not None:
        words = tokens(text)  # the resignation is the last one
        raise NotationError(
            "a resignation is not a move",
            token=words[-1],
            number=len(words),
            position=moves.state.describe(),
        )
    return moves.state


def read_moves(text: str, variant: str | Variant = "yinsh", *, unfinished: bool = False) -> Moves:
    """Read a line of moves in either form; a final ``resign`` means the player to act resigned.

    With ``unfinished``, the last turn may stop part-way (a game ended by a forfeit, such as a
    player running out of time before removing its ring).
    """
    s = State(variant)
    words = tokens(text)
    resigned: Color | None = None
    for k, token in enumerate(words):
        number = k + 1
        m = _NUMBER.match(token)
        body = token
        if m:
            given = int(m.group(1))
            body = m.group(2)
            if given != number:
                raise NotationError(
                    f"expected move number {number}",
                    token=token,
                    number=number,
                    position=s.describe(),
                )
        if body == "resign":
            if k != len(words) - 1:
                raise NotationError(
                    "moves after a resignation", token=token, number=number, position=s.describe()
                )
            if s.is_over():
                raise NotationError(
                    "the game is already over", token=token, number=number, position=s.describe()
                )
            resigned = s.turn
            break
        _play_turn(s, body, token, number, partial=unfinished and k == len(words) - 1)
    return Moves(s, resigned)


def play_turn(state: State, text: str) -> list[Action]:
    """Play one whole turn written in the notation, at the start of that player's turn.

    ``text`` is a turn as in a game record, with or without its number (``24.xg5-g9xa5;d3-b3``
    or ``i8-f5;xa5``); the short form is read as in :func:`read_moves`. All or nothing: on
    an error the state is left as it was and :class:`NotationError` says why. Returns the
    actions played::

        >>> s = replay("1.e3 2.a5 3.b5 4.c6 5.d6 6.e4 7.h7 8.g2 9.g3 10.g8")
        >>> play_turn(s, "11.h7-g7")
        [Action.parse('h7-g7')]
    """
    number = len(split_turns(state.history, state.variant)) + 1
    if state.history and not state.is_over():
        last = state.pop()
        mover = state.turn
        state.push(last)
        if mover == state.turn:
            raise NotationError(
                f"{state.turn.label} is in the middle of a turn", position=state.describe()
            )
    token = text.strip().lower()
    body = token
    m = _NUMBER.match(token)
    if m:
        body = m.group(2)
        if int(m.group(1)) != number:
            raise NotationError(
                f"expected move number {number}",
                token=text,
                number=number,
                position=state.describe(),
            )
    done = len(state.history)
    try:
        _play_turn(state, body, text, number)
    except NotationError:
        while len(state.history) > done:
            state.pop()
        raise
    return state.history[done:]


def _play_turn(s: State, body: str, token: str, number: int, partial: bool = False) -> None:
    if s.is_over():
        raise NotationError(
            "the game is already over", token=token, number=number, position=s.describe()
        )
    player = s.turn
    expected = Color.WHITE if number % 2 else Color.BLACK
    if player != expected:
        raise NotationError(
            f"it is {player.label}'s turn, but odd numbers are White's and even Black's",
            token=token,
            number=number,
            position=s.describe(),
        )
    if not body:
        raise NotationError("an empty move", token=token, number=number, position=s.describe())
    for part in body.split(";"):
        if s.is_over() or s.turn != player:
            raise NotationError(
                f"{part!r} comes after {player.label}'s turn has ended",
                token=token,
                number=number,
                position=s.describe(),
            )
        try:
            _play_part(s, part)
        except (InvalidAction, IllegalAction, _Ambiguous) as e:
            raise NotationError(
                str(e).split("; position:")[0].split(" (position")[0],
                token=token,
                number=number,
                position=s.describe(),
            ) from None
    if not partial and not s.is_over() and s.turn == player:
        raise NotationError(
            f"the turn is incomplete: {player.label} must still {s.next.value.replace('-', ' a ')}",
            token=token,
            number=number,
            position=s.describe(),
        )


class _Ambiguous(ValueError):
    pass


def _play_part(s: State, part: str) -> None:
    if part == "pass" or _PLACE.match(part) or _MOVE.match(part):
        s.play(part)
        return
    m = _REMOVAL.match(part)
    if not m:
        raise InvalidAction(f"{part!r} is not a placement, a move or a removal")
    a, b, ring = m.groups()
    if a is None and ring is None:
        raise InvalidAction(f"{part!r} names neither a row nor a ring")
    if a is not None:
        s.play(Action.parse(f"x{a}-{b}"))
    else:
        rows = s.legal_actions() if s.next.value == "remove-row" else []
        if not rows:
            raise IllegalAction(f"x{ring}: {s.turn.label} has no row to remove")
        if len(rows) > 1 and not _disjoint(rows):
            names = ", ".join(sorted(str(r)[1:] for r in rows))
            raise _Ambiguous(
                f"x{ring} is ambiguous: rows {names} are all possible; name the row, "
                f"as in x{str(rows[0])[1:]}x{ring}"
            )
        s.play(_default_row(rows))
    if ring is not None:
        s.play(Action.parse(f"x{ring}"))
