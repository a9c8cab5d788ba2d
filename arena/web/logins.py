"""Limits on guessing passwords, with django-axes: the site's login form, ``POST /api/token/``
and the admin's login all authenticate through Django, where axes counts the failures.

Failures are kept in the database (axes' ``AccessAttempt``), so that every web process sees
the same counts, on SQLite as on PostgreSQL. A username tried from one address is locked after
``ARENA_LOGIN_FAILURES_PER_ACCOUNT`` failures; an address after
``ARENA_LOGIN_FAILURES_PER_ADDRESS`` failures at any usernames (a guesser going through many
accounts); both for ``ARENA_LOGIN_COOL_OFF_MINUTES`` after the last failure that counted. A
login refused while locked, even with the right password, is not counted: the time to wait
does not grow. Another address can still log in to that account (no one can lock a user out
of their own account from elsewhere). A login that succeeds forgets the failures of that
username from that address, and only those: logging in to one's own account does not forgive
guesses at others.

The refusal says when to try again: on the login form (429), in the API's JSON (429 with
``detail`` and ``Retry-After``). Operators unlock with axes' commands (``manage.py
axes_reset_username NAME``, ``axes_reset_ip ADDRESS``, ``axes_reset``): docs/deployment.md.
"""

from __future__ import annotations

import math
from datetime import datetime, timedelta
from typing import Any

from axes.handlers.database import AxesDatabaseHandler  # type: ignore[import-untyped]  # ships no types
from axes.helpers import get_client_username  # type: ignore[import-untyped]  # ships no types
from axes.models import AccessAttempt  # type: ignore[import-untyped]  # ships no types
from django.conf import settings
from django.contrib.auth.forms import AuthenticationForm
from django.db.models import QuerySet, Sum
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone

from arena.core.errors import Refused
from arena.core.throttles import duration

__all__ = [
    "Attempts",
    "LoginLocked",
    "cool_off",
    "failure_limit",
    "locked",
    "lockout_response",
    "username",
]

#: The longest username Django's user model takes; a longer one is cut to it (it cannot be an
#: account's, and axes' table takes no more than 255 characters).
USERNAME_MAX_LENGTH = 150


def cool_off(request: HttpRequest | None = None) -> timedelta:
    """How long a lock lasts after the last failure that counted (``AXES_COOLOFF_TIME``)."""
    return timedelta(minutes=settings.LOGIN_COOL_OFF_MINUTES)


def failure_limit(request: HttpRequest, credentials: dict[str, Any] | None) -> int:
    """The failures of a username from one address that lock it (``AXES_FAILURE_LIMIT``)."""
    return int(settings.LOGIN_FAILURES_PER_ACCOUNT)


def username(request: HttpRequest, credentials: dict[str, Any] | None) -> str | None:
    """The username a login tried (``AXES_USERNAME_CALLABLE``), at most as long as one can be."""
    value = (credentials or {}).get("username")
    if value is None:
        data = getattr(request, "data", None) or request.POST
        value = data.get("username")
    return None if value is None else str(value)[:USERNAME_MAX_LENGTH]


class LoginLocked(Refused):
    """Too many failed logins: ``wait`` seconds until the next try is heard (429, with
    ``Retry-After``)."""

    status = 429

    def __init__(self, wait: float) -> None:
        self.wait = max(1, math.ceil(wait))
        super().__init__(
            "too many failed logins from your address: logins are refused for now; "
            f"try again in {duration(self.wait)}"
        )

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.wait)}


class Attempts(AxesDatabaseHandler):
    """Axes' database handler with a limit of its own for each of its two counts (the
    username from this address; the address), where axes has one for both."""

    def _counts(self, request: HttpRequest, credentials: dict[str, Any] | None) -> list[int]:
        # One query set per AXES_LOCKOUT_PARAMETERS entry: [username + address, address].
        return [
            qs.aggregate(n=Sum("failures_since_start"))["n"] or 0
            for qs in self.get_user_attempts(request, credentials)
        ]

    def get_failures(self, request: HttpRequest, credentials: dict[str, Any] | None = None) -> int:
        """The failures that count against the account limit (``AXES_FAILURE_LIMIT``): the
        username's from this address, or the whole limit once the address used up its own."""
        account, by_address = self._counts(request, credentials)
        if by_address >= settings.LOGIN_FAILURES_PER_ADDRESS:
            return max(account, settings.LOGIN_FAILURES_PER_ACCOUNT)
        return int(account)

    def reset_user_attempts(
        self, request: HttpRequest, credentials: dict[str, Any] | None = None
    ) -> int:
        """After a login that succeeded: forget that username's failures from this address
        (axes would forget every failure of the address, at any account)."""
        count, _ = AccessAttempt.objects.filter(
            username=get_client_username(request, credentials),
            ip_address=request.axes_ip_address,  # type: ignore[attr-defined]  # set by axes
        ).delete()
        return count

    def wait(self, request: HttpRequest, credentials: dict[str, Any] | None) -> float:
        """Seconds until this login would be heard again (0: it would be now)."""
        combination, by_address = self.get_user_attempts(request, credentials)
        limits = [settings.LOGIN_FAILURES_PER_ACCOUNT, settings.LOGIN_FAILURES_PER_ADDRESS]
        now = timezone.now()
        return max(
            (_until_under(qs, limit) - now).total_seconds()
            for qs, limit in zip([combination, by_address], limits, strict=True)
        )


def _until_under(attempts: QuerySet[AccessAttempt], limit: int) -> datetime:
    """When the failures of ``attempts`` (still within the cool-off) fall below ``limit``: the
    time the newest rows that add up to it leave the cool-off (now if they never do)."""
    total = 0
    for failures, at in attempts.order_by("-attempt_time").values_list(
        "failures_since_start", "attempt_time"
    ):
        total += failures
        if total >= limit:
            return at + cool_off()
    return timezone.now()


def locked(request: HttpRequest, credentials: dict[str, Any] | None = None) -> LoginLocked:
    """The refusal of a login refused by the limits, saying how long to wait."""
    handler = Attempts()
    return LoginLocked(handler.wait(request, credentials))


def lockout_response(
    request: HttpRequest, response: HttpResponse | None, credentials: dict[str, Any] | None
) -> HttpResponse:
    """The answer to a login refused by the limits (``AXES_LOCKOUT_CALLABLE``): the API's
    JSON, or the login form again with the refusal above it; 429 with ``Retry-After``."""
    refusal = locked(request, credentials)
    if request.path.startswith("/api/"):
        answer: HttpResponse = JsonResponse({"detail": str(refusal)}, status=refusal.status)
    else:
        form = AuthenticationForm(request, initial={"username": username(request, credentials)})
        context = {
            "form": form,
            "next": request.POST.get("next", ""),
            "refused": str(refusal).capitalize() + ".",
        }
        answer = render(request, "registration/login.html", context, status=refusal.status)
    for name, value in refusal.headers().items():
        answer[name] = value
    return answer
