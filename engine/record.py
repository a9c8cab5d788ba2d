"""Game-record files: header lines, then the moves in the official notation.

::

    [Variant "yinsh"]
    [White "random 1.0"]
    [Black "greedy 1.0"]
    [Date "2026.11.22"]
    [TimeControl "60+1"]
    [Result "1-0"]
    [Termination "rows"]

    1.e3 2.a5 3.b5 ...

Headers follow PGN's tag-pair syntax. ``Result`` is ``1-0``, ``0-1``, ``1/2-1/2`` or ``*``;
``Termination`` is a :class:`~engine.state.Termination` value (the rules' endings and
``resignation``), or the token of a game decided off the board (``time``, ``crash``...), read as
a :class:`~engine.state.Forfeit` that keeps it. Reading a record replays it and checks that a
rules ending (rows, pool exhausted, no moves) is what the moves really reach::

    >>> r = Record.parse('[Variant "blitz"]\\n\\n1.e3 2.a5')
    >>> r.variant.name, len(r.actions), r.outcome
    ('blitz', 2, None)
    >>> Record.parse(r.to_text()) == r
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.actions import Action
from engine.notation import NotationError, read_moves, write_moves
from engine.state import Forfeit, Outcome, Result, State, Termination, ending
from engine.variants import Variant, variant

_HEADER = re.compile(r'^\[([A-Za-z][A-Za-z0-9_]*)\s+"((?:[^"\\]|\\.)*)"\]$')
_SCORES = {"1-0": Result.WHITE, "0-1": Result.BLACK, "1/2-1/2": Result.DRAW}
#: The headers written first, in this order; others follow in the order given.
ORDER = (
    "Event",
    "Site",
    "Date",
    "Round",
    "White",
    "Black",
    "Variant",
    "TimeControl",
    "Result",
    "Termination",
)


class RecordError(ValueError):
    """A record file that cannot be read."""


@dataclass
class Record:
    """A game: its variant, its actions, how it ended (``None`` while unfinished), its headers.

    ``headers`` holds every header other than Variant, Result and Termination (those are derived
    from the fields).
    """

    variant: Variant
    actions: list[Action] = field(default_factory=list)
    outcome: Outcome | None = None
    headers: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_state(cls, state: State, outcome: Outcome | None = None, **headers: str) -> Record:
        """The record of a game played on ``state``; ``outcome`` overrides (a forfeit)."""
        return cls(state.variant, list(state.history), outcome or state.outcome, dict(headers))

    def replay(self) -> State:
        """The final position (the moves are legal: records are checked when read)."""
        s = State(self.variant)
        for a in self.actions:
            s.push(a)
        return s

    def to_text(self, *, long: bool = True) -> str:
        """The record file's text, moves in the long (default) or short form."""
        tags = dict(self.headers)
        tags["Variant"] = self.variant.name
        tags["Result"] = self.outcome.result.score if self.outcome else "*"
        if self.outcome:
            tags["Termination"] = self.outcome.termination.value
        names = [k for k in ORDER if k in tags] + [k for k in tags if k not in ORDER]
        lines = [f'[{k} "{_escape(tags[k])}"]' for k in names]
        moves = write_moves(self.actions, self.variant, long=long)
        body = "\n".join(_wrap(moves)) if moves else ""
        return "\n".join(lines) + "\n\n" + body + ("\n" if body else "")

    @classmethod
    def parse(cls, text: str, *, default_variant: str = "yinsh") -> Record:
        """Read a record file, or a bare line of moves. Raises :class:`RecordError`.

        Checks every move, and that the result and termination agree with the moves.
        """
        headers: dict[str, str] = {}
        body: list[str] = []
        # Lines end at "\n" only: splitlines() would also break a header value at a form feed
        # or a Unicode line separator, which the writer leaves as they are.
        for n, raw in enumerate(text.split("\n"), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("["):
                if body:
                    raise RecordError(f"line {n}: a header after the moves: {line!r}")
                m = _HEADER.match(line)
                if not m:
                    raise RecordError(f'line {n}: not a header line like [Name "value"]: {line!r}')
                if m.group(1) in headers:
                    raise RecordError(f"line {n}: header {m.group(1)} given twice")
                headers[m.group(1)] = _unescape(m.group(2))
            else:
                body.append(line)
        try:
            v = variant(headers.pop("Variant", default_variant))
        except ValueError as e:
            raise RecordError(str(e)) from None
        score = headers.pop("Result", "*")
        if score != "*" and score not in _SCORES:
            raise RecordError(f"Result must be 1-0, 0-1, 1/2-1/2 or *, not {score!r}")
        term_text = headers.pop("Termination", None)
        termination: Termination | Forfeit | None = None
        if term_text is not None:
            try:
                termination = ending(term_text)
            except ValueError:
                known = ", ".join(t.value for t in Termination)
                raise RecordError(
                    f"bad Termination {term_text!r}: one of the rules' ({known}), or a "
                    "lower-case word such as time or crash for a game decided off the board"
                ) from None
        forfeit = termination is not None and not termination.by_rules
        moves_text = " ".join(body)
        try:
            moves = read_moves(moves_text, v, unfinished=forfeit)
        except NotationError as e:
            raise RecordError(str(e)) from None
        s = moves.state
        outcome = s.outcome
        if moves.resigned is not None:
            if termination not in (None, Termination.RESIGNATION):
                raise RecordError(f"the moves end in a resignation, but Termination is {term_text}")
            termination = Termination.RESIGNATION
            winner = moves.resigned.other
            outcome = Outcome(Result(winner.label), termination)
        elif forfeit:
            if s.is_over():
                raise RecordError(
                    f"Termination {term_text} but the moves end the game by "
                    f"{s.outcome.termination.value if s.outcome else ''}"
                )
            if score == "*":
                raise RecordError(f"Termination {term_text} needs a Result")
            assert termination is not None
            outcome = Outcome(_SCORES[score], termination)
        elif termination is not None and (
            not s.is_over() or (outcome and outcome.termination is not termination)
        ):
            reached = outcome.termination.value if outcome else "an unfinished game"
            raise RecordError(f"Termination {term_text}, but the moves reach {reached}")
        if score != "*" and (outcome is None or outcome.result.score != score):
            reached = outcome.result.score if outcome else "an unfinished game (*)"
            raise RecordError(f"Result {score}, but the moves give {reached}")
        return cls(v, list(s.history), outcome, headers)


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ")


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)


def _wrap(moves: str, width: int = 100) -> list[str]:
    lines: list[str] = []
    line = ""
    for token in moves.split():
        if line and len(line) + 1 + len(token) > width:
            lines.append(line)
            line = token
        else:
            line = f"{line} {token}" if line else token
    if line:
        lines.append(line)
    return lines
