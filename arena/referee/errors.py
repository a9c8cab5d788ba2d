"""The one base class for failures of the machine rather than of a bot.

Two kinds of failure run through the arena. What a bot did (it crashed, ran out of time,
played an illegal move, broke the protocol or the sandbox's rules) is a game result, recorded
once. What the machine did (the sandbox could not start, no bot slot was free, a cgroup could
not be made, the bot store lost a file, a worker ran out of its time budget) is an
:class:`InfrastructureError`: the work is put back and tried again elsewhere, and it is never
blamed on a bot. Every such error of the referee, the sandbox, the cgroups and the bot store
derives from this class, so that a worker catches them in one place.
"""

from __future__ import annotations

__all__ = ["InfrastructureError"]


class InfrastructureError(RuntimeError):
    """The worker or its surroundings failed, not a bot: retry the work elsewhere, later."""
