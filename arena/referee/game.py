"""What a game is: its configuration and clock (:class:`GameConfig`, :class:`TimeControl`), and
what the referee returns (:class:`GameResult`) and tells watchers while it plays
(:class:`Played`)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import engine
from arena.referee.bots import BotSpec
from arena.referee.outcomes import Failure

__all__ = ["GameConfig", "GameResult", "Played", "TimeControl"]

_TC = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(?:\+\s*(\d+(?:\.\d*)?|\.\d+)\s*)?$")


@dataclass(frozen=True)
class TimeControl:
    """A game clock: ``initial_ms`` for the game, ``increment_ms`` added per turn.

    Written cutechess-style in seconds::

        >>> TimeControl.parse("10+0.1")
        TimeControl(initial_ms=10000, increment_ms=100)
        >>> str(TimeControl.parse("60+1")), str(TimeControl.parse("0.5"))
        ('60+1', '0.5+0')
    """

    initial_ms: int
    increment_ms: int

    def __post_init__(self) -> None:
        if self.initial_ms <= 0 or self.increment_ms < 0:
            raise ValueError(
                f"a time control needs initial time > 0 and increment >= 0, not "
                f"{self.initial_ms} ms + {self.increment_ms} ms"
            )

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Read ``SECONDS[+INCREMENT]``: ``60+1``, ``10+0.1``, ``0.5``. Raises ValueError."""
        m = _TC.match(text or "")
        if not m:
            raise ValueError(
                f"bad time control {text!r}: write seconds and an optional increment in "
                'seconds, like "60+1", "10+0.1" or "0.5"'
            )
        initial = round(float(m.group(1)) * 1000)
        increment = round(float(m.group(2) or 0) * 1000)
        if initial <= 0:
            raise ValueError(f"bad time control {text!r}: the initial time must be above zero")
        return cls(initial, increment)

    def __str__(self) -> str:
        return f"{_seconds(self.initial_ms)}+{_seconds(self.increment_ms)}"


def _seconds(ms: int) -> str:
    return f"{ms / 1000:.3f}".rstrip("0").rstrip(".")


@dataclass(frozen=True)
class GameConfig:
    """One game to play: the variant, the two bots, the clock, the seed given to the bots.

    ``opening`` actions are played before the bots take over (they see them in ``history``);
    ``headers`` are extra record headers such as Event, Site or Round.
    """

    variant: str
    white: BotSpec
    black: BotSpec
    time: TimeControl
    seed: int = 0
    opening: tuple[str, ...] = ()
    headers: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Played:
    """One action as the referee played it, for whoever watches the game: public facts, and
    the ``info`` the bot sent with it, which is its owner's (never its standard error).

    Attributes:
        ply: the action's number in the game, the opening's included (1 for the first).
        color: who played it (``"white"``, ``"black"``).
        action: the action in the engine's notation (``"e3-e5"``, ``"pass"``).
        think_ms: the wall time the bot took to answer, None for a forced pass (not asked).
        clocks_ms: white's and black's clocks once the action is played, as the referee keeps
            them (the increment included when the turn passed).
        turn: who acts next, or ``""`` when the game is over.
        info: the bot's ``info`` with the action, as text to read (``""`` without one): its
            owner's alone, whoever else watches.
    """

    ply: int
    color: str
    action: str
    think_ms: float | None
    clocks_ms: tuple[int, int]
    turn: str
    info: str = ""


@dataclass
class GameResult:
    """How a game went.

    Attributes:
        outcome: the result and its termination: an ``engine.Termination`` when the rules ended
            the game, else a :class:`~arena.referee.outcomes.Failure` (``aborted`` for a
            cancelled game, whose result counts for nothing).
        reason: one human line, e.g. ``black ran out of time (...)``; a failure's reason gives
            the bot's details too (exit code, sandbox violation, protocol error, the last lines
            of its standard error), which are its owner's.
        public_reason: what happened, for everyone: the reason without the failing bot's
            details (``black exited at ply 8``); the reason itself when nothing failed.
        fault: ``"white"`` or ``"black"``, the bot whose failure ended the game, else None.
        record: the game record (its headers: White, Black, Date, TimeControl, Variant, Result,
            Termination and the configured extras).
        transcript: JSON-able details of the game (docs/protocol.md, "Transcript").
        duration_s: wall time of the whole game, start-up and shut-down included.
    """

    outcome: engine.Outcome
    reason: str
    fault: str | None
    record: engine.Record
    transcript: dict[str, Any]
    duration_s: float
    public_reason: str = ""

    def __post_init__(self) -> None:
        if not self.public_reason:
            self.public_reason = self.reason

    def record_text(self, *, long: bool = True) -> str:
        """The record file's text, moves in the long (default) or short notation."""
        return self.record.to_text(long=long)

    @property
    def aborted(self) -> bool:
        return self.outcome.termination == Failure.ABORTED
