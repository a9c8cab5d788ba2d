"""What a user wants to be told, what they were told, and how each message went out.

A :class:`Notification` is one event for one user (a check finished, a tournament finished...),
kept in the user's inbox, read or not (:attr:`Notification.read_at`); each channel it goes out
on (email, webhook) is a :class:`Delivery` with its own status, attempts and last error, sent
by a Celery task (:mod:`arena.notifications.tasks`).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from arena.referee.jsontypes import JSONObject


class Event(models.TextChoices):
    """What a user can be told about (the names are part of the webhook payload)."""

    CHECK_FINISHED = "check_finished", "a check of my bot finished"
    TEST_FINISHED = "test_finished", "a test of my bot finished"
    TOURNAMENT_FINISHED = "tournament_finished", "a tournament I organised or played finished"
    TOURNAMENT_STARTED = "tournament_started", "a scheduled tournament my bot entered started"
    SCHEDULE_SKIPPED = "schedule_skipped", "a tournament I scheduled could not start"
    VERSION_FAILING = "version_failing", "a version of my bot fails often"
    #: The settings page's "send a test notification": always sent, whatever the events chosen.
    TEST = "test", "a test notification"
    #: The link that verifies an email address: by email only, to the address it verifies.
    VERIFY_EMAIL = "verify_email", "a link to verify my email address"


#: The events a user can choose (the test notification and the verification link are always
#: sent).
CHOOSABLE = [e for e in Event if e not in (Event.TEST, Event.VERIFY_EMAIL)]
#: Messages to a channel rather than to the user: written only when there is a channel to
#: send them on (the test notification tries the user's channels; the verification link goes to
#: the address it verifies).
CHANNEL_ONLY = (Event.TEST, Event.VERIFY_EMAIL)
#: Not listed in the inbox: the verification link is for an address, and the link itself is
#: kept nowhere but in the mail.
NOT_IN_INBOX = (Event.VERIFY_EMAIL,)


def every_event() -> list[str]:
    """The events a user is told about until they choose: all of them."""
    return [e.value for e in CHOOSABLE]


class NotificationSettings(models.Model):
    """One user's choices. A user without a row gets the defaults (:meth:`defaults`): email
    (when their account has a verified address) for every event, no webhook.

    ``verified_email`` is the address whose verification link was followed: the account's
    address is verified while it is that one (:meth:`verified`), so that changing it, by any
    means, leaves the new one unverified. No mail but the verification link goes to an
    unverified address.
    """

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL,
        models.CASCADE,
        primary_key=True,
        related_name="notification_settings",
    )
    email = models.BooleanField(default=True, help_text="Send email to the account's address.")
    webhook = models.BooleanField(default=False, help_text="POST JSON to the webhook URL.")
    webhook_url = models.URLField(max_length=500, blank=True)
    verified_email = models.EmailField(
        blank=True, help_text="The address a verification link was followed for."
    )
    #: The events chosen (:class:`Event` values).
    events: models.JSONField[list[str], list[str]] = models.JSONField(default=every_event)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        verbose_name = "notification settings"
        verbose_name_plural = "notification settings"

    def __str__(self) -> str:
        return f"notification settings of user {self.user_id}"

    @classmethod
    def defaults(cls, user_id: int) -> NotificationSettings:
        """The settings of a user who never changed them (not saved)."""
        return cls(user_id=user_id)

    def wants(self, event: str) -> bool:
        return event in (Event.TEST, Event.VERIFY_EMAIL) or event in self.events

    def verified(self, address: str) -> bool:
        """Whether ``address`` (the account's) is the verified one."""
        return bool(address) and address == self.verified_email


class Notification(models.Model):
    """One event told to one user: an entry of their inbox, unread until ``read_at``."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, models.CASCADE, related_name="notifications")
    event = models.CharField(max_length=30, choices=Event.choices)
    subject = models.CharField(max_length=200)
    text = models.TextField()
    #: The page it is about, as a full URL (or empty).
    url = models.CharField(max_length=500, blank=True)
    #: What the event is about, for programs (the webhook's ``data``).
    data: models.JSONField[JSONObject, JSONObject] = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    #: When the user opened it or marked it read (None: unread).
    read_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-id"]
        indexes = [
            models.Index(fields=["user", "-id"], name="notification_user_idx"),
            # The header's unread count on every page: only the unread rows are indexed.
            models.Index(
                fields=["user"],
                condition=Q(read_at__isnull=True),
                name="notification_unread_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.event} for user {self.user_id}: {self.subject}"


class Delivery(models.Model):
    """One notification on one channel: PENDING until it was SENT, or FAILED for good."""

    class Channel(models.TextChoices):
        EMAIL = "email", "email"
        WEBHOOK = "webhook", "webhook"

    class Status(models.TextChoices):
        PENDING = "pending", "waiting to be sent"
        SENT = "sent", "sent"
        FAILED = "failed", "failed"

    notification = models.ForeignKey(Notification, models.CASCADE, related_name="deliveries")
    channel = models.CharField(max_length=10, choices=Channel.choices)
    #: Where it goes: the address or the webhook URL as they were when it was made.
    target = models.CharField(max_length=500)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    attempts = models.PositiveSmallIntegerField(default=0)
    last_error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    sent_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "deliveries"
        ordering = ["-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["pending", "sent", "failed"]),
                name="delivery_status_valid",
            ),
            models.CheckConstraint(
                condition=Q(channel__in=["email", "webhook"]), name="delivery_channel_valid"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.channel} of notification #{self.notification_id}: {self.status}"
