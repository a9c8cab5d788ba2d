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

__all__ = ["Failure"]


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
