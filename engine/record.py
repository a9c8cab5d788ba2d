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

A file may hold many games one after another, as a PGN file does (:func:`read_records`,
:func:`write_records`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from engine.actions import Action
from engine.notation import NotationError, read_moves, tokens, write_moves
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
    """A record file that cannot be read.

    The message starts with where: ``line 12: ...``, and in a file of several games
    ``game 3, line 40: ...``. ``game`` and ``line`` hold the same numbers (0 where unknown).
    """

    def __init__(self, message: str, *, line: int = 0, game: int = 0) -> None:
        parts = (f"game {game}" if game else "", f"line {line}" if line else "")
        where = ", ".join(p for p in parts if p)
        super().__init__(f"{where}: {message}" if where else message)
        self.line = line
        self.game = game


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

        Checks every move, and that the result and termination agree with the moves. Blank
        lines and ``#`` comments may stand anywhere; a header after the moves is an error (a
        file holding several games is read by :func:`read_records`).
        """
        (game,) = _split(text.split("\n"), many=False)
        return game.read(default_variant)


def read_records(text: str | Iterable[str], *, default_variant: str = "yinsh") -> Iterator[Record]:
    """The games of a file holding one or many, one after another as in a PGN file.

    ``text`` is the file's text or its lines (an open file). Each game is its header lines,
    then its moves; blank lines separate games. A header that follows moves starts the next
    game, and so does a group of header lines (lines without a blank one between them) that
    repeats a header of the game before, which is how a game without moves ends: every
    written game has a Variant header. A file :meth:`Record.parse` reads is one game here.
    Games are read one at a time; a :class:`RecordError` names the game's number and the line::

        >>> games = list(read_records('[Variant "blitz"]\\n\\n1.e3\\n\\n[Variant "yinsh"]\\n'))
        >>> [(r.variant.name, len(r.actions)) for r in games]
        [('blitz', 1), ('yinsh', 0)]
        >>> list(read_records(write_records(games))) == games
        True
    """
    lines = text.split("\n") if isinstance(text, str) else text
    for game in _split(lines, many=True):
        yield game.read(default_variant)


def write_records(records: Iterable[Record], *, long: bool = True) -> str:
    """The text of a file holding ``records`` one after another, a blank line between two;
    :func:`read_records` reads them back."""
    return "\n".join(r.to_text(long=long) for r in records)


@dataclass
class _Game:
    """One game's lines as a file holds them: numbered headers and lines of moves.

    ``number`` is the game's in a file of many (0 for a file of one), ``start`` its first line.
    """

    number: int
    start: int = 0
    headers: dict[str, tuple[int, str]] = field(default_factory=dict)
    body: list[tuple[int, str]] = field(default_factory=list)

    def error(self, message: str, line: int) -> RecordError:
        return RecordError(message, line=line, game=self.number)

    def add_headers(self, group: list[tuple[int, str, str]]) -> None:
        for n, name, value in group:
            if name in self.headers:
                raise self.error(f"header {name} given twice", n)
            self.headers[name] = (n, value)

    def line_of(self, header: str) -> int:
        """The line of a header, or the game's first line if it has none."""
        return self.headers[header][0] if header in self.headers else self.start

    def read(self, default_variant: str) -> Record:
        """The record these lines hold, every move and the ending checked."""
        headers = {name: value for name, (_, value) in self.headers.items()}
        try:
            v = variant(headers.pop("Variant", default_variant))
        except ValueError as e:
            raise self.error(str(e), self.line_of("Variant")) from None
        score = headers.pop("Result", "*")
        at_result = self.line_of("Result")
        if score != "*" and score not in _SCORES:
            raise self.error(f"Result must be 1-0, 0-1, 1/2-1/2 or *, not {score!r}", at_result)
        term_text = headers.pop("Termination", None)
        at_term = self.line_of("Termination")
        termination: Termination | Forfeit | None = None
        if term_text is not None:
            try:
                termination = ending(term_text)
            except ValueError:
                known = ", ".join(t.value for t in Termination)
                raise self.error(
                    f"bad Termination {term_text!r}: one of the rules' ({known}), or a "
                    "lower-case word such as time or crash for a game decided off the board",
                    at_term,
                ) from None
        forfeit = termination is not None and not termination.by_rules
        moves_text = " ".join(line for _, line in self.body)
        try:
            moves = read_moves(moves_text, v, unfinished=forfeit)
        except NotationError as e:
            raise self.error(str(e), self._line_of_move(e.number)) from None
        s = moves.state
        outcome = s.outcome
        if moves.resigned is not None:
            if termination not in (None, Termination.RESIGNATION):
                raise self.error(
                    f"the moves end in a resignation, but Termination is {term_text}",
                    at_term,
                )
            termination = Termination.RESIGNATION
            winner = moves.resigned.other
            outcome = Outcome(Result(winner.label), termination)
        elif forfeit:
            if s.is_over():
                raise self.error(
                    f"Termination {term_text} but the moves end the game by "
                    f"{s.outcome.termination.value if s.outcome else ''}",
                    at_term,
                )
            if score == "*":
                raise self.error(f"Termination {term_text} needs a Result", at_term)
            assert termination is not None
            outcome = Outcome(_SCORES[score], termination)
        elif termination is not None and (
            not s.is_over() or (outcome and outcome.termination is not termination)
        ):
            reached = outcome.termination.value if outcome else "an unfinished game"
            raise self.error(f"Termination {term_text}, but the moves reach {reached}", at_term)
        if score != "*" and (outcome is None or outcome.result.score != score):
            reached = outcome.result.score if outcome else "an unfinished game (*)"
            raise self.error(f"Result {score}, but the moves give {reached}", at_result)
        return Record(v, list(s.history), outcome, headers)

    def _line_of_move(self, number: int) -> int:
        """The line holding the ``number``-th move token (the first line of moves for 0)."""
        if not self.body:
            return self.start
        for i, (n, _) in enumerate(self.body):
            if len(tokens(" ".join(line for _, line in self.body[: i + 1]))) >= number:
                return n
        return self.body[-1][0]


def _split(lines: Iterable[str], *, many: bool) -> Iterator[_Game]:
    """The games in a file's lines: exactly one unless ``many`` (see :func:`read_records`).

    Lines end at "\n" only: splitlines() would also break a header value at a form feed or
    a Unicode line separator, which the writer leaves as they are.
    """
    game = _Game(1 if many else 0)
    group: list[tuple[int, str, str]] = []  # header lines not yet given to a game
    # A blank line after the last gives the last group of headers to its game.
    for n, raw in enumerate(itertools.chain(lines, [""]), 1):
        line = raw.strip()
        if line.startswith("#"):
            continue
        if line.startswith("["):
            if game.body and not many:
                raise game.error(f"a header after the moves: {line!r}", n)
            if game.body:  # the next game begins
                yield game
                game = _Game(game.number + 1)
            m = _HEADER.match(line)
            if not m:
                raise game.error(f'not a header line like [Name "value"]: {line!r}', n)
            group.append((n, m.group(1), _unescape(m.group(2))))
            continue
        if group:
            if many and any(name in game.headers for _, name, _ in group):
                yield game
                game = _Game(game.number + 1)
            game.start = game.start or group[0][0]
            game.add_headers(group)
            group = []
        if line:
            game.start = game.start or n
            game.body.append((n, line))
    if game.start or not many:
        yield game


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
