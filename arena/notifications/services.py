"""Telling users what happened: :func:`notify` writes the notification (the user's inbox,
:func:`inbox`) and sends the :func:`fan_out` task after the transaction commits, which writes
its deliveries as the user's settings say and sends them; :func:`deliver` sends one. Both tasks
run in the scheduler's worker (the periodic queue), never in a match worker, which may not read
the settings, addresses and webhook URLs they use. :func:`mark_read` and :func:`opened` mark inbox
entries read; :func:`unread_count` is the header's count.

Any app above this one calls :func:`notify`; it never blocks: the request or the task that
calls it only writes a row, and Celery tasks send the email or posts the webhook, retrying
with a growing pause (:mod:`arena.notifications.tasks`). A delivery is sent at least once: a
worker that dies between sending and writing SENT sends it again.

Email goes only to a verified address (:func:`is_verified`): the account's address, once the
link mailed to it by :func:`send_verification` was followed (:func:`confirm_email`). Until then
that link is the only mail it gets, and no more of them than the ``verify_email`` rate allows.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.core.mail import send_mail
from django.db import transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from arena.core import throttles
from arena.jobs import claims
from arena.notifications import verification, webhook
from arena.notifications.models import (
    CHANNEL_ONLY,
    NOT_IN_INBOX,
    Delivery,
    Event,
    Notification,
    NotificationSettings,
)
from arena.referee.jsontypes import JSONObject

log = logging.getLogger(__name__)

__all__ = [
    "DELIVER",
    "Event",
    "confirm_email",
    "deliver",
    "fan_out",
    "inbox",
    "is_verified",
    "mark_read",
    "notify",
    "opened",
    "send_test",
    "send_verification",
    "settings_of",
    "unread_count",
    "update_settings",
]

#: The delivery task, by name (services never import their tasks). It and :data:`FAN_OUT` go
#: to the periodic queue: the scheduler, on a trusted host, reads addresses and webhook URLs;
#: the match workers may not (:mod:`arena.jobs.roles`).
DELIVER = "arena.notifications.tasks.deliver"
#: The task that writes and sends a notification's deliveries (:func:`fan_out`).
FAN_OUT = "arena.notifications.tasks.fan_out"
#: Soft time limit of the fan-out task (its hard limit is 10 s more).
FAN_OUT_SECONDS = 60
#: What :func:`deliver` returns.
SENT, RETRY, FAILED, NOTHING = "sent", "retry", "failed", "nothing to do"


def absolute(url: str) -> str:
    """A site path as a full URL (``ARENA_SITE_URL``); a full URL as it is."""
    if not url or "://" in url:
        return url
    return settings.SITE_URL.rstrip("/") + "/" + url.lstrip("/")


def settings_of(user: User | int) -> NotificationSettings:
    """The user's settings (the defaults when they never saved any)."""
    user_id = user if isinstance(user, int) else user.pk
    found = NotificationSettings.objects.filter(user_id=user_id).first()
    return found or NotificationSettings.defaults(user_id)


def notify(
    user: User | int,
    event: str,
    subject: str,
    text: str,
    url: str = "",
    *,
    data: JSONObject | None = None,
) -> Notification | None:
    """Tell ``user`` (a user or its primary key) about ``event`` (an :class:`Event` value).

    Writes a :class:`Notification`, which the user's inbox lists whatever their settings, and
    sends the :func:`fan_out` task once the current transaction commits (at once outside
    one): the scheduler, not this process, reads the user's settings and address and writes
    and sends the deliveries. So a match worker, which tells owners about their checks and
    games, needs no right to read them (:mod:`arena.jobs.roles`). ``url``: the page it is
    about (a site path such as ``/bots/x/`` is made a full URL); ``data``: extra JSON for
    webhooks. Returns the notification; None only for a test notification
    (:data:`CHANNEL_ONLY`, sent by the site) that has no channel to go on, which is not
    written. Never raises for the user's settings, never waits for a send.
    """
    if event not in Event.values:
        raise ValueError(f"unknown event {event!r}; known: {', '.join(Event.values)}")
    user_id = user if isinstance(user, int) else user.pk
    if event in CHANNEL_ONLY:
        targets = _targets(user_id, event)
        if not targets:
            return None
        return _send(user_id, event, subject, text, url, data, targets)
    with transaction.atomic():
        n = _write(user_id, event, subject, text, url, data)
        claims.send_after_commit(
            FAN_OUT,
            (n.pk,),
            soft=FAN_OUT_SECONDS,
            hard=FAN_OUT_SECONDS + 10,
            queue=settings.PERIODIC_QUEUE,
        )
    return n


def _targets(user_id: int, event: str) -> list[tuple[str, str]]:
    """Where the user wants ``event`` sent: (channel, where) for email when their account has
    a verified address, and for the webhook when on and set."""
    prefs = settings_of(user_id)
    targets: list[tuple[str, str]] = []
    if prefs.wants(event):
        address = (
            get_user_model().objects.filter(pk=user_id).values_list("email", flat=True).first()
            or ""
        )
        if prefs.email and prefs.verified(address):
            targets.append((Delivery.Channel.EMAIL, address))
        if prefs.webhook and prefs.webhook_url:
            targets.append((Delivery.Channel.WEBHOOK, prefs.webhook_url))
    return targets


def fan_out(notification_id: int) -> int:
    """Write one :class:`Delivery` per channel the notification's user chose for its event
    (their settings as they are now), and send each after the transaction commits (the
    scheduler's task, sent by :func:`notify`). Returns how many were written: none when the
    notification has deliveries already (this task ran before) or is gone."""
    with transaction.atomic():
        n = Notification.objects.select_for_update().filter(pk=notification_id).first()
        if n is None or n.deliveries.exists():
            return 0
        targets = _targets(n.user_id, n.event)
        _deliver_after_commit(n, targets)
    return len(targets)


def _write(
    user_id: int, event: str, subject: str, text: str, url: str, data: JSONObject | None
) -> Notification:
    return Notification.objects.create(
        user_id=user_id,
        event=event,
        subject=subject[:200],
        text=text,
        url=absolute(url)[:500],
        data=data or {},
    )


def _deliver_after_commit(n: Notification, targets: list[tuple[str, str]]) -> None:
    for channel, target in targets:
        d = Delivery.objects.create(notification=n, channel=channel, target=target)
        soft = settings.NOTIFY_TASK_SECONDS
        claims.send_after_commit(
            DELIVER, (d.pk,), soft=soft, hard=soft + 10, queue=settings.PERIODIC_QUEUE
        )


def _send(
    user_id: int,
    event: str,
    subject: str,
    text: str,
    url: str,
    data: JSONObject | None,
    targets: list[tuple[str, str]],
) -> Notification:
    """Write the notification and its deliveries (one per target: channel, where), and send
    each after the transaction commits."""
    with transaction.atomic():
        n = _write(user_id, event, subject, text, url, data)
        _deliver_after_commit(n, targets)
    return n


def deliver(delivery_id: int) -> str:
    """Send one pending delivery. Returns "sent", "retry" (it failed; try again later),
    "failed" (it failed ``ARENA_NOTIFY_ATTEMPTS`` times: given up) or "nothing to do" (not
    pending: sent or given up already)."""
    d = (
        Delivery.objects.select_related("notification")
        .filter(pk=delivery_id, status=Delivery.Status.PENDING)
        .first()
    )
    if d is None:
        return NOTHING
    n = d.notification
    try:
        if d.channel == Delivery.Channel.EMAIL:
            _email(d.target, n)
        else:
            body = webhook.payload(
                n.event, n.subject, n.text, n.url, {**n.data, "notification": n.pk}
            )
            webhook.post(d.target, body)
    except Exception as e:  # the endpoint's or the mail server's failure: counted, retried
        error = f"{type(e).__name__}: {e}"[:2000]
        attempts = d.attempts + 1
        final = attempts >= settings.NOTIFY_ATTEMPTS
        Delivery.objects.filter(pk=d.pk, status=Delivery.Status.PENDING).update(
            attempts=F("attempts") + 1,
            last_error=error,
            status=Delivery.Status.FAILED if final else Delivery.Status.PENDING,
        )
        log.info("delivery %s (%s) failed, attempt %s: %s", d.pk, d.channel, attempts, error)
        return FAILED if final else RETRY
    Delivery.objects.filter(pk=d.pk, status=Delivery.Status.PENDING).update(
        status=Delivery.Status.SENT, attempts=F("attempts") + 1, sent_at=timezone.now()
    )
    return SENT


def _email(address: str, n: Notification) -> None:
    url = n.url
    if n.event == Event.VERIFY_EMAIL:
        token = verification.make_token(n.user_id, address)
        url = absolute(verification.PATH.format(token=token))
    body = n.text + (f"\n\n{url}" if url else "")
    body += f"\n\n-- \n{settings.SITE_NAME}. Choose what you are told: " + absolute(
        "/accounts/notifications/"
    )
    send_mail(
        f"[{settings.SITE_NAME}] {n.subject}",
        body,
        settings.DEFAULT_FROM_EMAIL,
        [address],
        fail_silently=False,
    )


@dataclass(frozen=True)
class Choices:
    """What a user chose on the settings page or through the API."""

    email: bool
    webhook: bool
    webhook_url: str
    events: list[str]


def update_settings(
    user: User, choices: Choices, *, email_address: str | None = None
) -> NotificationSettings:
    """Save a user's choices (and their account's email address, when given). A webhook URL
    must be one :func:`webhook.check_url` accepts
    (:class:`~arena.notifications.webhook.WebhookError` otherwise, and nothing is saved); the
    webhook cannot be on without one; events must be known (:class:`ValueError`)."""
    url = choices.webhook_url.strip()
    if url:
        webhook.check_url(url)
    if choices.webhook and not url:
        raise webhook.WebhookError("give a webhook URL to turn the webhook on")
    unknown = [e for e in choices.events if e not in Event.values or e == Event.TEST]
    if unknown:
        raise ValueError(f"unknown events: {', '.join(unknown)}")
    changed = email_address is not None and email_address.strip() != user.email
    if changed:
        assert email_address is not None
        user.email = email_address.strip()
        user.save(update_fields=["email"])
    prefs, _ = NotificationSettings.objects.update_or_create(
        user=user,
        defaults={
            "email": choices.email,
            "webhook": choices.webhook,
            "webhook_url": url,
            "events": [e.value for e in Event if e.value in choices.events],
        },
    )
    if changed and user.email:
        try:
            send_verification(user)
        except throttles.Throttled as e:  # the address is saved; the user asks again later
            log.info("no verification link for user %s now: %s", user.pk, e)
    return prefs


def is_verified(user: User) -> bool:
    """Whether the account's email address is verified (an empty one never is)."""
    return settings_of(user).verified(user.email)


def send_verification(user: User) -> Notification | None:
    """Mail the account's address a link that verifies it (:mod:`.verification`). None when
    there is no address or it is verified already. At most the ``verify_email`` rate, per user
    and per address (:class:`~arena.core.throttles.Throttled` beyond: nothing is sent)."""
    address = user.email
    if not address or is_verified(user):
        return None
    by_address = f"email:{address.casefold()}"
    throttles.check(user, "verify_email")
    throttles.check_key(by_address, "verify_email")
    days = settings.EMAIL_VERIFY_DAYS
    text = (
        f"Someone, probably you, gave this address to the account {user.username} at "
        f"{settings.SITE_NAME}. Follow the link below within {days} days to verify it; "
        "until then no other mail is sent to it. If it was not you, ignore this message."
    )
    # The link is made when the mail is sent (_email), so that it is kept nowhere else: not
    # in the notification, which the settings page lists.
    n = _send(
        user.pk,
        Event.VERIFY_EMAIL,
        "Verify your email address",
        text,
        "",
        {},
        [(Delivery.Channel.EMAIL, address)],
    )
    throttles.record(user, "verify_email")
    throttles.record_key(by_address, "verify_email")
    return n


def confirm_email(token: str) -> User:
    """Mark the address a verification link names as verified, and return its user. Raises
    :class:`~.verification.VerificationError` when the link is damaged or expired, or the
    account's address is no longer the one it was sent to (nothing changes)."""
    user_id, address = verification.read_token(token)
    user = get_user_model().objects.filter(pk=user_id).first()
    if user is None or user.email != address:
        raise verification.VerificationError(
            "this verification link is for an address the account no longer has"
        )
    NotificationSettings.objects.update_or_create(user=user, defaults={"verified_email": address})
    return user


def send_test(user: User) -> Notification | None:
    """The settings page's button: a test notification on every channel the user chose. At
    most the ``notify_test`` rate (:class:`~arena.core.throttles.Throttled` beyond); only a
    notification that went somewhere counts."""
    throttles.check(user, "notify_test")
    n = notify(
        user,
        Event.TEST,
        "Test notification",
        f"This is a test notification for {user.username}: your settings work.",
        "/accounts/notifications/",
        data={"test": True},
    )
    if n is not None:
        throttles.record(user, "notify_test")
    return n


def inbox(user: User | int) -> QuerySet[Notification]:
    """The user's inbox, newest first: every notification written for them, whatever their
    channels and the events they chose for them, but the verification links
    (:data:`~arena.notifications.models.NOT_IN_INBOX`)."""
    user_id = user if isinstance(user, int) else user.pk
    return (
        Notification.objects.filter(user_id=user_id).exclude(event__in=NOT_IN_INBOX).order_by("-id")
    )


def recent(user: User, *, limit: int = 20) -> list[Notification]:
    """The latest entries of the user's inbox, newest first."""
    return list(inbox(user)[:limit])


def unread_count(user: User | int) -> int:
    """How many entries of the user's inbox are unread (one ``COUNT`` over an index of the
    unread rows)."""
    return inbox(user).filter(read_at__isnull=True).count()


def mark_read(user: User | int, ids: Iterable[int] | None = None) -> int:
    """Mark the user's unread notifications read: those of ``ids`` (others' ids, and ids of
    none, are ignored), or all of them. Returns how many were marked."""
    rows = inbox(user).filter(read_at__isnull=True)
    if ids is not None:
        rows = rows.filter(pk__in=list(ids))
    return rows.update(read_at=timezone.now())


def opened(user: User | int, pk: int) -> Notification | None:
    """The user's notification ``pk``, marked read (it was opened); None when the user has no
    such notification (another user's is none of theirs)."""
    n = inbox(user).filter(pk=pk).first()
    if n is not None and n.read_at is None:
        mark_read(user, [n.pk])
        n.refresh_from_db(fields=["read_at"])
    return n
