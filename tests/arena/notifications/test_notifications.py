"""Notifications: settings, the rows notify() writes, delivery by email and to a real webhook
server (retries, refusal of private addresses), the settings page and API, the events wired
to checks and tournaments, and a check's notice through a real Celery worker."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from rest_framework.test import APIClient

from arena.bots import services as bots
from arena.bots.models import BotVersion
from arena.games.models import Match
from arena.notifications import services, webhook
from arena.notifications.models import Delivery, Event, Notification, NotificationSettings
from tests.arena.conftest import BOTS, make_version, packed, upload, verified_address, wait_for
from tests.arena.tournaments.test_tournaments import finish_one, start


class Hook:
    """A real HTTP server on 127.0.0.1 that records the JSON POSTed to it and answers with
    the statuses queued in ``answers`` (then 204)."""

    def __init__(self) -> None:
        self.received: list[dict[str, Any]] = []
        self.answers: list[int] = []
        hook = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                size = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(size))
                status = hook.answers.pop(0) if hook.answers else 204
                if status < 300:
                    hook.received.append(
                        {"path": self.path, "type": self.headers["Content-Type"], **body}
                    )
                self.send_response(status)
                self.end_headers()
                if status >= 300:
                    self.wfile.write(b"try later")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hook?key=1"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def hook() -> Iterator[Hook]:
    h = Hook()
    yield h
    h.close()


@pytest.fixture
def locmem(settings: Any) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def with_webhook(
    user: Any, url: str, *, email: bool = False, events: list[str] | None = None
) -> None:
    NotificationSettings.objects.update_or_create(
        user=user,
        defaults={
            "email": email,
            "webhook": True,
            "webhook_url": url,
            "events": events if events is not None else [e.value for e in Event],
        },
    )


# ----------------------------------------------------------------------------- notify()


def told(n: Notification | None) -> Notification:
    """The notification, its deliveries written as the scheduler's fan-out task does."""
    assert n is not None
    services.fan_out(n.pk)
    return n


@pytest.mark.django_db
def test_notify_writes_the_notification_and_its_fan_out_one_delivery_per_chosen_channel(
    user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    verified_address(user, "alice@example.org")
    with_webhook(user, "https://hooks.example.org/x", email=True)
    with django_capture_on_commit_callbacks() as sent:
        n = services.notify(user, Event.CHECK_FINISHED, "subject", "text", "/bots/x/")
    assert n is not None
    assert n.url == "http://127.0.0.1:8000/bots/x/"
    assert not n.deliveries.exists()  # the caller (a match worker) reads no settings
    assert len(sent) == 1  # the fan-out task, once committed
    with django_capture_on_commit_callbacks() as sent:
        assert services.fan_out(n.pk) == 2
    channels = sorted((d.channel, d.target, d.status) for d in n.deliveries.all())
    assert channels == [
        ("email", "alice@example.org", "pending"),
        ("webhook", "https://hooks.example.org/x", "pending"),
    ]
    assert len(sent) == 2  # one task per delivery, once committed
    assert services.fan_out(n.pk) == 0  # a second run of the task writes nothing more
    assert n.deliveries.count() == 2


def channels_of(n: Notification | None) -> list[str]:
    return sorted(d.channel for d in told(n).deliveries.all())


@pytest.mark.django_db
def test_notify_respects_the_events_chosen_and_the_defaults(user: Any) -> None:
    assert channels_of(services.notify(user, Event.CHECK_FINISHED, "s", "t")) == []  # no address
    verified_address(user, "alice@example.org")
    n = services.notify(user.pk, Event.TOURNAMENT_FINISHED, "s", "t")
    assert channels_of(n) == ["email"]
    with_webhook(user, "https://hooks.example.org/x", events=["check_finished"])
    assert channels_of(services.notify(user, Event.TOURNAMENT_FINISHED, "s", "t")) == []
    assert channels_of(services.notify(user, Event.CHECK_FINISHED, "s", "t")) == ["webhook"]
    assert services.notify(user, Event.TEST, "s", "t") is not None  # always
    with pytest.raises(ValueError, match="unknown event"):
        services.notify(user, "party", "s", "t")


@pytest.mark.django_db
def test_every_event_reaches_the_inbox_whatever_the_channels(
    user: Any, django_capture_on_commit_callbacks: Any
) -> None:
    """A user without email or webhook, or who unticked an event, still finds it listed."""
    with django_capture_on_commit_callbacks() as sent:
        n = services.notify(user, Event.CHECK_FINISHED, "walker v1 passed", "t", "/bots/w/")
    assert n is not None and n.read_at is None and channels_of(n) == []
    assert len(sent) == 1  # the fan-out, which finds nothing to send
    verified_address(user, "alice@example.org")
    with_webhook(user, "https://hooks.example.org/x", email=True, events=["check_finished"])
    unticked = services.notify(user, Event.VERSION_FAILING, "walker v1 fails", "t")
    assert channels_of(unticked) == []
    assert [x.subject for x in services.inbox(user)] == ["walker v1 fails", "walker v1 passed"]
    assert services.unread_count(user) == 2


@pytest.mark.django_db
def test_a_test_notification_with_no_channel_writes_nothing(user: Any) -> None:
    """The settings page's test button tries the channels: with none, nothing is written."""
    assert services.notify(user, Event.TEST, "s", "t") is None
    assert not Notification.objects.exists()


@pytest.mark.django_db
def test_mark_read_marks_the_users_own_and_only_once(user: Any, other_user: Any) -> None:
    a = services.notify(user, Event.CHECK_FINISHED, "a", "t")
    b = services.notify(user, Event.CHECK_FINISHED, "b", "t")
    theirs = services.notify(other_user, Event.CHECK_FINISHED, "bob's", "t")
    assert a is not None and b is not None and theirs is not None
    assert services.mark_read(user, [a.pk, theirs.pk]) == 1
    assert services.mark_read(user, [a.pk]) == 0  # read already
    theirs.refresh_from_db()
    assert theirs.read_at is None and services.unread_count(other_user) == 1
    assert services.mark_read(user) == 1
    assert services.unread_count(user) == 0
    assert services.opened(user, theirs.pk) is None
    theirs.refresh_from_db()
    assert theirs.read_at is None


# ----------------------------------------------------------------------------- delivery


@pytest.mark.django_db
def test_an_email_goes_through_djangos_mail(user: Any, locmem: None) -> None:
    verified_address(user, "alice@example.org")
    n = told(
        services.notify(user, Event.CHECK_FINISHED, "walker v2 passed", "It is active.", "/x/")
    )
    (d,) = n.deliveries.all()
    assert services.deliver(d.pk) == "sent"
    (m,) = mail.outbox
    assert m.to == ["alice@example.org"]
    assert "walker v2 passed" in m.subject
    assert "It is active." in m.body and "http://127.0.0.1:8000/x/" in m.body
    d.refresh_from_db()
    assert (d.status, d.attempts, d.sent_at is not None) == ("sent", 1, True)
    assert services.deliver(d.pk) == "nothing to do"  # sent once
    assert len(mail.outbox) == 1


@pytest.mark.django_db
def test_a_webhook_gets_discord_and_slack_keys_and_the_fields(
    user: Any, hook: Hook, settings: Any
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = True
    with_webhook(user, hook.url)
    n = told(
        services.notify(
            user,
            Event.VERSION_FAILING,
            "v2 fails",
            "It crashed.",
            "/bots/b/",
            data={"variant": "x"},
        )
    )
    (d,) = n.deliveries.all()
    assert services.deliver(d.pk) == "sent"
    (body,) = hook.received
    assert body["path"] == "/hook?key=1" and body["type"] == "application/json"
    assert "v2 fails" in body["content"] and "It crashed." in body["content"]
    assert body["text"] == body["content"]
    assert body["event"] == "version_failing"
    assert body["subject"] == "v2 fails" and body["message"] == "It crashed."
    assert body["url"] == "http://127.0.0.1:8000/bots/b/"
    assert body["data"] == {"variant": "x", "notification": n.pk}


@pytest.mark.django_db
def test_a_webhook_that_answers_500_is_tried_again_then_sent(
    user: Any, hook: Hook, settings: Any
) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = True
    with_webhook(user, hook.url)
    hook.answers = [500]
    n = services.notify(user, Event.TEST, "s", "t")
    assert n is not None
    (d,) = n.deliveries.all()
    assert services.deliver(d.pk) == "retry"
    d.refresh_from_db()
    assert (d.status, d.attempts) == ("pending", 1)
    assert "500" in d.last_error and "try later" in d.last_error
    assert hook.received == []
    assert services.deliver(d.pk) == "sent"
    d.refresh_from_db()
    assert (d.status, d.attempts) == ("sent", 2)
    assert len(hook.received) == 1


@pytest.mark.django_db
def test_a_delivery_is_given_up_after_its_attempts(user: Any, hook: Hook, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = True
    settings.NOTIFY_ATTEMPTS = 2
    with_webhook(user, hook.url)
    hook.answers = [503, 503, 503]
    n = services.notify(user, Event.TEST, "s", "t")
    assert n is not None
    (d,) = n.deliveries.all()
    assert services.deliver(d.pk) == "retry"
    assert services.deliver(d.pk) == "failed"
    assert services.deliver(d.pk) == "nothing to do"
    d.refresh_from_db()
    assert (d.status, d.attempts) == ("failed", 2)


@pytest.mark.django_db
def test_private_addresses_are_refused_unless_allowed(user: Any, hook: Hook, settings: Any) -> None:
    settings.WEBHOOK_ALLOW_PRIVATE = False
    for url in (
        hook.url,
        "http://10.1.2.3/x",
        "http://192.168.0.1/x",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/x",
        "http://localhost/x",
        "http://0.0.0.0/x",
    ):
        with pytest.raises(webhook.WebhookError, match="not a public address"):
            webhook.check_url(url)
    for url, why in (
        ("ftp://example.org/x", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("http://user:pw@example.org/", "user name or password"),
        ("http:///x", "no host"),
    ):
        with pytest.raises(webhook.WebhookError, match=why):
            webhook.check_url(url, resolve=False)
    # Even a URL stored before (or a name resolving elsewhere later) is checked when sent.
    with_webhook(user, hook.url.replace("127.0.0.1", "localhost"))
    n = services.notify(user, Event.TEST, "s", "t")
    assert n is not None
    (d,) = n.deliveries.all()
    assert services.deliver(d.pk) == "retry"
    d.refresh_from_db()
    assert "not a public address" in d.last_error
    assert hook.received == []
    settings.WEBHOOK_ALLOW_PRIVATE = True
    assert webhook.check_url(hook.url)[1] == "127.0.0.1"
    assert services.deliver(d.pk) == "sent"


# ----------------------------------------------------------------------------- settings


@pytest.mark.django_db
def test_update_settings_refuses_a_private_webhook_and_saves_nothing(user: Any) -> None:
    choices = services.Choices(
        email=True, webhook=True, webhook_url="http://127.0.0.1:9/x", events=["check_finished"]
    )
    with pytest.raises(webhook.WebhookError):
        services.update_settings(user, choices, email_address="a@example.org")
    assert not NotificationSettings.objects.filter(user=user).exists()
    user.refresh_from_db()
    assert user.email == ""
    with pytest.raises(webhook.WebhookError, match="give a webhook URL"):
        services.update_settings(user, services.Choices(True, True, "", []))


@pytest.mark.django_db
def test_the_settings_page_saves_choices_and_sends_a_test(
    user: Any, client: Client, settings: Any, locmem: None
) -> None:
    assert client.get("/accounts/notifications/").status_code == 302  # log in first
    client.force_login(user)
    page = client.get("/accounts/notifications/").content.decode()
    assert "Send a test notification" in page
    r = client.post(
        "/accounts/notifications/",
        {
            "email_address": "alice@example.org",
            "email": "on",
            "webhook_url": "http://127.0.0.1:8/hook",
            "webhook": "on",
            "events": ["check_finished", "version_failing"],
        },
    )
    assert r.status_code == 200
    assert "not a public address" in r.content.decode()
    assert not NotificationSettings.objects.filter(user=user).exists()
    r = client.post(
        "/accounts/notifications/",
        {
            "email_address": "alice@example.org",
            "email": "on",
            "events": ["check_finished", "version_failing"],
        },
    )
    assert r.status_code == 302
    prefs = NotificationSettings.objects.get(user=user)
    assert (prefs.email, prefs.webhook) == (True, False)
    assert prefs.events == ["check_finished", "version_failing"]
    user.refresh_from_db()
    assert user.email == "alice@example.org"
    # The new address gets nothing but its verification link until the link is followed.
    page = client.get("/accounts/notifications/").content.decode()
    assert "Not verified:" in page
    r = client.post("/accounts/notifications/test/", follow=True)
    assert "Nothing to send" in r.content.decode()
    (link,) = Delivery.objects.filter(notification__event="verify_email")
    assert services.deliver(link.pk) == "sent"
    url = next(w for w in mail.outbox[-1].body.split() if "/accounts/email/verify/" in w)
    client.post(url.removeprefix("http://127.0.0.1:8000"))
    assert "Verified." in client.get("/accounts/notifications/").content.decode()
    r = client.post("/accounts/notifications/test/", follow=True)
    assert "A test notification is on its way (email)" in r.content.decode()
    assert Notification.objects.filter(user=user, event="test").count() == 1
    page = client.get("/accounts/notifications/").content.decode()
    assert "Test notification" in page and "waiting to be sent" in page


@pytest.mark.django_db
def test_the_test_button_says_when_nothing_is_on(user: Any, client: Client) -> None:
    client.force_login(user)
    r = client.post("/accounts/notifications/test/", follow=True)
    assert "Nothing to send" in r.content.decode()
    assert not Notification.objects.exists()


@pytest.mark.django_db
def test_the_settings_api(user: Any, settings: Any) -> None:
    anonymous = APIClient()
    assert anonymous.get("/api/notifications/settings/").status_code in (401, 403)
    api = APIClient()
    api.force_authenticate(user)
    body = api.get("/api/notifications/settings/").json()
    assert body == {
        "email": True,
        "email_address": "",
        "email_verified": False,
        "webhook": False,
        "webhook_url": "",
        "events": [
            "check_finished",
            "test_finished",
            "tournament_finished",
            "tournament_started",
            "schedule_skipped",
            "version_failing",
        ],
    }
    r = api.patch(
        "/api/notifications/settings/",
        {"webhook": True, "webhook_url": "http://192.168.1.1/x"},
        format="json",
    )
    assert r.status_code == 400 and "not a public address" in r.json()["webhook_url"][0]
    r = api.patch("/api/notifications/settings/", {"events": ["nonsense"]}, format="json")
    assert r.status_code == 400
    settings.WEBHOOK_ALLOW_PRIVATE = True
    r = api.patch(
        "/api/notifications/settings/",
        {"webhook": True, "webhook_url": "http://192.168.1.1/x", "events": ["test_finished"]},
        format="json",
    )
    assert r.status_code == 200, r.content
    assert r.json()["events"] == ["test_finished"] and r.json()["email"] is True
    r = api.post("/api/notifications/test/")
    assert r.status_code == 202 and r.json() == {"sent": True, "channels": ["webhook"]}


# ----------------------------------------------------------------------------- the events


@pytest.mark.django_db
def test_a_finished_tournament_tells_its_organiser_and_entrants_once_each(
    user: Any, other_user: Any
) -> None:
    verified_address(user, "alice@example.org")
    verified_address(other_user, "bob@example.org")
    entrants = [make_version(user, "a-bot"), make_version(user, "b-bot")]
    entrants.append(make_version(other_user, "c-bot"))
    t = start(user, entrants, games_per_pair=1)
    for m in t.matches.order_by("pk"):
        m.refresh_from_db()
        if m.status == Match.Status.PENDING:
            Match.objects.filter(pk=m.pk).update(status=Match.Status.QUEUED)
        finish_one(m)
    t.refresh_from_db()
    assert t.status == "finished"
    told = Notification.objects.filter(event="tournament_finished")
    assert sorted(n.user.username for n in told) == ["alice", "bob"]
    n = told.get(user=user)
    assert "Spring cup" in n.subject and "won with" in n.text
    assert n.url.endswith(f"/tournaments/{t.pk}/")
    assert len(n.data["standings"]) == 3


@pytest.fixture
def private_webhooks_for_the_worker(worker_env: dict[str, str]) -> None:
    """The worker may post to the test's own server on 127.0.0.1."""
    worker_env["ARENA_WEBHOOK_ALLOW_PRIVATE"] = "1"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_finished_check_reaches_the_owners_webhook_through_a_real_worker(
    private_webhooks_for_the_worker: None,
    worker: Callable[[], str],
    user: Any,
    hook: Hook,
) -> None:
    with_webhook(user, hook.url, events=["check_finished"])
    version = bots.create_bot(user, "hooked", upload(packed(BOTS / "random"), "hooked.tar.gz"))
    wait_for("the check's webhook", lambda: bool(hook.received), worker)
    version.refresh_from_db()
    assert version.status == BotVersion.Status.ACTIVE, (version.reason, version.report)
    (body,) = hook.received
    assert body["event"] == "check_finished"
    assert body["subject"] == "hooked v1 passed its check"
    assert body["data"]["status"] == "active" and body["data"]["bot"] == "hooked"
    assert body["url"].endswith("/bots/hooked/#v1")
    wait_for(
        "the delivery marked sent",
        lambda: Delivery.objects.filter(status=Delivery.Status.SENT).count() == 1,
        worker,
    )


@pytest.fixture
def quick_retries_for_the_worker(worker_env: dict[str, str]) -> None:
    """The worker may post to the test's own server, and tries again after a second."""
    worker_env["ARENA_WEBHOOK_ALLOW_PRIVATE"] = "1"
    worker_env["ARENA_NOTIFY_RETRY_DELAY"] = "1"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_delivery_task_retries_after_a_500_in_a_real_worker(
    quick_retries_for_the_worker: None,
    worker: Callable[[], str],
    user: Any,
    hook: Hook,
) -> None:
    with_webhook(user, hook.url)
    hook.answers = [500]
    n = services.send_test(user)
    assert n is not None
    wait_for("the second try", lambda: bool(hook.received), worker)
    wait_for(
        "the delivery marked sent",
        lambda: n.deliveries.filter(status=Delivery.Status.SENT, attempts=2).exists(),
        worker,
    )
    assert hook.received[0]["event"] == "test"
    assert "500" in n.deliveries.get().last_error


def test_the_delivery_task_is_registered_acknowledged_late_and_takes_an_id() -> None:
    import inspect

    from django.conf import settings

    from arena.celery import app as celery_app
    from arena.notifications import tasks

    assert services.DELIVER in celery_app.tasks
    assert tasks.deliver.name == services.DELIVER
    assert tasks.deliver.acks_late is True
    assert list(inspect.signature(tasks.deliver.run).parameters)[-1] == "delivery_id"
    assert settings.NOTIFY_TASK_SECONDS + 10 < settings.CELERY_VISIBILITY_TIMEOUT
