"""Per-user rate limits on the actions that cost the arena work: uploads, tests, challenges,
tournaments. One check, in the services, so the site's forms and the API share the limits.

A rate is ``"N/period"`` (``20/hour``; the period is ``s``, ``m``, ``h`` or ``d`` by its first
letter, as in Django REST framework), read from ``THROTTLE_RATES`` (``ARENA_THROTTLE_*``); an
empty rate means no limit. A service calls :func:`limited` around its work: the check comes
first and raises :class:`Throttled` (nothing is done); only work that succeeded is counted, so
a refused or mistaken request costs nothing. :class:`Throttled` is a refusal
(:class:`arena.core.errors.Refused`): the API answers it with 429 and ``Retry-After``, a form
shows its message on a page sent with 429.

The same limits hold for what is counted by something other than a user: the requests for a
password reset by address and by email (:func:`check_key`, :func:`record_key`, keyed by any
string), and the pages an address asks for without a login (:func:`hit`).

The counts live in Django's cache: per process with the default (local memory), shared by
every process with ``REDIS_URL`` (the Redis cache). Operators (staff) are not limited.

Leaf module: Django and :mod:`arena.core` only, no app.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import time
from collections.abc import Iterator
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.cache import cache

from arena.core.errors import Refused

__all__ = [
    "ACTIONS",
    "Rate",
    "Throttled",
    "check",
    "check_key",
    "duration",
    "hit",
    "limited",
    "parse_rate",
    "record",
    "record_key",
]

#: The limited actions: scope -> what one of them is called in a message.
ACTIONS = {
    "upload": "uploads",
    "test": "tests",
    "challenge": "challenges",
    "tournament": "tournaments",
    "trial": "trials",
    "analysis": "analysis requests",
    "notify_test": "test notifications",
    "verify_email": "verification emails",
    "password_reset": "password reset requests",
    "pages": "page requests",
}

_PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_PERIOD_NAMES = {1: "second", 60: "minute", 3600: "hour", 86400: "day"}


@dataclass(frozen=True)
class Rate:
    """At most ``count`` actions in any ``seconds`` seconds."""

    count: int
    seconds: int

    def __str__(self) -> str:
        return f"{self.count} per {_PERIOD_NAMES.get(self.seconds, f'{self.seconds} s')}"


def parse_rate(text: str | None) -> Rate | None:
    """A rate from ``"N/period"``; None for no limit (empty or ``off``). Raises ValueError.

    >>> parse_rate("20/hour"), parse_rate("5/m"), parse_rate(""), parse_rate("off")
    (Rate(count=20, seconds=3600), Rate(count=5, seconds=60), None, None)
    >>> parse_rate("lots")
    Traceback (most recent call last):
    ...
    ValueError: 'lots': a rate is N/period, such as 20/hour (period: second, minute, hour, day)
    """
    if text is None or text.strip().lower() in ("", "off", "none"):
        return None
    count, _, period = text.strip().partition("/")
    seconds = _PERIODS.get(period.strip()[:1].lower())
    if not count.strip().isdigit() or seconds is None:
        raise ValueError(
            f"{text!r}: a rate is N/period, such as 20/hour (period: second, minute, hour, day)"
        )
    return Rate(int(count), seconds)


class Throttled(Refused):
    """Too many actions of one kind: ``wait`` seconds until the next one is allowed (429,
    with ``Retry-After``)."""

    status = 429

    def __init__(self, scope: str, rate: Rate, wait: float) -> None:
        self.scope = scope
        self.rate = rate
        self.wait = max(1, math.ceil(wait))
        super().__init__(
            f"too many {ACTIONS.get(scope, scope)}: at most {rate}; "
            f"try again in {duration(self.wait)}"
        )

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.wait)}


def duration(seconds: int) -> str:
    """A wait in words, rounded up.

    >>> duration(1), duration(90), duration(7200)
    ('1 second', '2 minutes', '2 hours')
    """
    for unit, name in ((3600, "hour"), (60, "minute")):
        if seconds >= unit * 1.5 or seconds == unit:
            n = math.ceil(seconds / unit)
            return f"{n} {name}{'s' if n != 1 else ''}"
    return f"{seconds} second{'s' if seconds != 1 else ''}"


def _rate(scope: str) -> Rate | None:
    return parse_rate(settings.THROTTLE_RATES.get(scope))


def _exempt(user: User | AnonymousUser) -> bool:
    return bool(user.is_staff)


def _key(scope: str, user: User | AnonymousUser) -> str:
    return f"throttle:{scope}:{user.pk}"


def _subject_key(scope: str, subject: str) -> str:
    # Hashed: an address or an email may hold characters a cache key may not.
    digest = hashlib.sha256(subject.encode()).hexdigest()[:32]
    return f"throttle:{scope}:by:{digest}"


def _history(key: str, rate: Rate, now: float) -> list[float]:
    """The times of the actions still inside the window, newest first."""
    return [t for t in cache.get(key, []) if t > now - rate.seconds]


def check(user: User | AnonymousUser, scope: str) -> None:
    """Raise :class:`Throttled` when ``user`` has used up the rate of ``scope``."""
    if _exempt(user):
        return
    _check(_key(scope, user), scope)


def record(user: User | AnonymousUser, scope: str) -> None:
    """Count one action of ``scope`` by ``user``."""
    if _exempt(user):
        return
    _record(_key(scope, user), scope)


def check_key(subject: str, scope: str) -> None:
    """Raise :class:`Throttled` when ``subject`` (an address, an email: any string) has used
    up the rate of ``scope``."""
    _check(_subject_key(scope, subject), scope)


def record_key(subject: str, scope: str) -> None:
    """Count one action of ``scope`` by ``subject``."""
    _record(_subject_key(scope, subject), scope)


def _check(key: str, scope: str) -> None:
    rate = _rate(scope)
    if rate is None:
        return
    now = time.time()
    history = _history(key, rate, now)
    if len(history) >= rate.count:
        # Allowed again when the oldest action that counts leaves the window (a rate of 0:
        # after a whole period, to ask again).
        oldest = history[rate.count - 1] if rate.count else now
        raise Throttled(scope, rate, oldest + rate.seconds - now)


def _record(key: str, scope: str) -> None:
    rate = _rate(scope)
    if rate is None:
        return
    now = time.time()
    history = [now, *_history(key, rate, now)][: rate.count]
    cache.set(key, history, rate.seconds)


def hit(subject: str, scope: str) -> None:
    """Count one request of ``subject``, or raise :class:`Throttled` (not counting it) when
    ``subject`` has used up the rate of ``scope``: the check and the count at once, for limits
    on requests rather than on work."""
    key = _subject_key(scope, subject)
    _check(key, scope)
    _record(key, scope)


@contextlib.contextmanager
def limited(user: User | AnonymousUser, scope: str) -> Iterator[None]:
    """Check the rate before the work and count the work once it succeeded."""
    check(user, scope)
    yield
    record(user, scope)
