"""How the referee ends a game off the board: the one list of its endings.

The engine knows the rules' endings only (``engine.Termination``: ``rows``, ``pool-exhausted``,
``no-moves``, ``resignation``). Everything else that ends a game is the referee's doing, a
:class:`Failure`: a bot ran out of time, crashed, played an illegal move, broke the protocol,
was stopped by the sandbox, or never started; or the referee aborted the game. A
:class:`Failure` is what ``GameResult.outcome.termination`` holds then (an ``engine.Ending``),
and its value is the token written in the record (``[Termination "time"]``), the transcript and
the site's tables. ``engine.Record`` reads such a token back as an ``engine.Forfeit`` that keeps
it, equal to the member::

    >>> import engine
    >>> Failure.TIME.value, Failure.TIME.by_rules, Failure.TIME == engine.Forfeit("time")
    ('time', False, True)
    >>> Failure("sandbox-violation")
    <Failure.SANDBOX: 'sandbox-violation'>
"""

from __future__ import annotations

import enum

__all__ = ["COUNTED", "Failure"]


class Failure(enum.StrEnum):
    """How the referee ended a game off the board (docs/protocol.md lists when)."""

    TIME = "time"
    """The bot's clock ran out (no answer in time, or one that came too late)."""
    CRASH = "crash"
    """The bot exited, died of a signal, or closed its output."""
    ILLEGAL_MOVE = "illegal-move"
    """The bot played an action that is not legal."""
    PROTOCOL = "protocol-error"
    """The bot broke the protocol (not JSON, a wrong message, a line over the limit...)."""
    SANDBOX = "sandbox-violation"
    """The sandbox stopped the bot (memory, processes, CPU time, file size, system call)."""
    NO_START = "no-start"
    """The bot did not answer ``hello`` with ``ready`` in time."""
    ABORTED = "aborted"
    """The referee cancelled the game: it counts for nothing (not a bot's failure)."""

    @property
    def by_rules(self) -> bool:
        """Never: the moves did not decide the game."""
        return False

    @property
    def label(self) -> str:
        """The failure in a word or two, as pages and reports say it.

        >>> Failure.ILLEGAL_MOVE.label, Failure.SANDBOX.label
        ('illegal move', 'sandbox violation')
        """
        return _LABELS[self]

    @property
    def counted_as(self) -> Failure | None:
        """The kind a bot's page counts this failure under: a bot that never started crashed
        at its start; an aborted game is no bot's failure (None).

        >>> Failure.NO_START.counted_as, Failure.ABORTED.counted_as
        (<Failure.CRASH: 'crash'>, None)
        """
        if self is Failure.ABORTED:
            return None
        return Failure.CRASH if self is Failure.NO_START else self


_LABELS = {
    Failure.TIME: "time",
    Failure.CRASH: "crash",
    Failure.ILLEGAL_MOVE: "illegal move",
    Failure.PROTOCOL: "protocol error",
    Failure.SANDBOX: "sandbox violation",
    Failure.NO_START: "no start",
    Failure.ABORTED: "aborted",
}

#: The kinds of a bot's failure a page counts, in the order it shows them.
COUNTED = (Failure.CRASH, Failure.TIME, Failure.ILLEGAL_MOVE, Failure.PROTOCOL, Failure.SANDBOX)
