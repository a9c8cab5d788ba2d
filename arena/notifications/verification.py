"""The link that verifies an email address: a token naming the user and the address, signed
with the site's secret key (Django's :class:`~django.core.signing.TimestampSigner`) and
working for ``ARENA_EMAIL_VERIFY_DAYS`` days. It proves that whoever follows it read mail sent
to that address; it verifies nothing once the account's address changed.

Leaf module: Django and :mod:`arena.core` only.
"""

from __future__ import annotations

from django.conf import settings
from django.core import signing

from arena.core.errors import Refused

__all__ = ["PATH", "SALT", "VerificationError", "make_token", "read_token"]

#: The site's page that takes a token (arena.web.urls: ``verify-email``).
PATH = "/accounts/email/verify/{token}/"
SALT = "arena.notifications.verify-email"


class VerificationError(Refused):
    """A verification link that does not work: damaged, expired, or for an address the
    account no longer has."""


def make_token(user_id: int, address: str) -> str:
    """A token that verifies ``address`` for the user ``user_id``.

    >>> user, address = read_token(make_token(7, "a@example.org"))
    >>> user, address
    (7, 'a@example.org')
    """
    return signing.TimestampSigner(salt=SALT).sign_object({"user": user_id, "email": address})


def read_token(token: str) -> tuple[int, str]:
    """The user and address a token verifies. Raises :class:`VerificationError` for a token
    that is damaged (or signed with another key) or older than ``ARENA_EMAIL_VERIFY_DAYS``.

    >>> read_token("nonsense")
    Traceback (most recent call last):
    ...
    arena.notifications.verification.VerificationError: this verification link is not valid
    """
    days = settings.EMAIL_VERIFY_DAYS
    try:
        data = signing.TimestampSigner(salt=SALT).unsign_object(token, max_age=days * 86400)
    except signing.SignatureExpired:
        raise VerificationError(
            f"this verification link is more than {days} days old: ask for a new one"
        ) from None
    except signing.BadSignature:
        raise VerificationError("this verification link is not valid") from None
    return int(data["user"]), str(data["email"])
