"""How long claimed work may take: a task's soft time limit is its work's budget (what the clocks
and the move cap allow), its hard limit a little above, both below the broker's visibility
timeout."""

from __future__ import annotations

from django.conf import settings

from arena.referee import TimeControl

__all__ = ["MOVE_OVERHEAD_MS", "budget_seconds", "match_time_control", "time_limits"]

#: The referee's allowance per request (not charged to the bot's clock).
MOVE_OVERHEAD_MS = 50


def budget_seconds(time_control: str, *, games: int = 1) -> float:
    """The most wall time ``games`` games at this time control can take, with start-up and
    shut-down, given the move cap ``MATCH_MAX_ACTIONS``: what a task's soft time limit is.

    >>> round(budget_seconds("10+0.1"))
    142
    """
    tc = TimeControl.parse(time_control)
    actions = settings.MATCH_MAX_ACTIONS
    per_game = (
        2 * tc.initial_ms / 1000
        + actions * (tc.increment_ms + MOVE_OVERHEAD_MS) / 1000
        + 2 * (settings.BOT_STARTUP_SECONDS + settings.BOT_EXIT_SECONDS)
        + 10.0  # unpacking, database writes
    )
    return per_game * games


def time_limits(time_control: str, *, games: int = 1, builds: int = 0) -> tuple[int, int]:
    """A task's (soft, hard) time limits in seconds: the budget, and a little above it.

    ``builds``: how many bots the task may have to build first (a worker builds a version
    the first time it runs it), each within ``BOT_BUILD_SECONDS``.
    """
    soft = int(budget_seconds(time_control, games=games)) + 1
    soft += builds * settings.BOT_BUILD_SECONDS
    return soft, soft + 30


def match_time_control(text: str) -> str:
    """A time control for a match of the site, normalised (``"10+0.1"``). Raises
    ``ValueError`` when it cannot be read, or when a game could outlast the broker's
    visibility timeout (its task would then be delivered twice)."""
    tc = TimeControl.parse(text)
    _, hard = time_limits(str(tc), builds=2)
    if hard >= settings.CELERY_VISIBILITY_TIMEOUT:
        raise ValueError(
            f"time control {tc} is too long: a game could take {hard} s, more than the "
            f"{settings.CELERY_VISIBILITY_TIMEOUT} s a task may run"
        )
    return str(tc)
