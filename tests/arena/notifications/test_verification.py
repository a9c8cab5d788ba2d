"""Email addresses are verified before mail goes to them: a signed, expiring link is mailed to
a new address, and nothing else is until it is followed; changing the address makes it
unverified again; test notifications and verification links are limited (429 with
Retry-After)."""

from __future__ import annotations

import doctest
import time
from typing import Any

import pytest
from django.core import mail, signing
from django.test import Client
from rest_framework.test import APIClient

import arena.notifications.verification
from arena.notifications import services, verification
from arena.notifications.models import Delivery, Notification, NotificationSettings

pytestmark = pytest.mark.django_db

SITE = "http://127.0.0.1:8000"


@pytest.fixture(autouse=True)
def locmem(settings: Any) -> None:
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"


def api(user: Any) -> APIClient:
    c = APIClient()
    c.force_authenticate(user)
    return c


def deliver_all() -> None:
    """Send every pending delivery, as the worker's task does."""
    for d in Delivery.objects.filter(status=Delivery.Status.PENDING).order_by("pk"):
        assert services.deliver(d.pk) == "sent"


def link_in(message: Any) -> str:
    """The site path of the verification link in a mail."""
    url = next(w for w in message.body.split() if w.startswith(f"{SITE}/accounts/email/verify/"))
    return url.removeprefix(SITE)


def test_an_unverified_address_gets_its_verification_link_and_nothing_else(user: Any) -> None:
    c = api(user)
    r = c.patch("/api/notifications/settings/", {"email_address": "a@example.org"}, format="json")
    assert r.status_code == 200 and r.json()["email_verified"] is False
    for _ in range(25):
        r = c.post("/api/notifications/test/")
        assert r.status_code == 202 and r.json() == {"sent": False, "channels": []}
    deliver_all()
    (m,) = mail.outbox
    assert m.to == ["a@example.org"] and "Verify your email address" in m.subject
    assert "alice" in m.body
    # The link is in the mail only: not on the settings page, which lists the notification.
    web = Client()
    web.force_login(user)
    settings_page = web.get("/accounts/notifications/").content.decode()
    assert "Verify your email address" in settings_page and "Not verified:" in settings_page
    assert "/accounts/email/verify/" not in settings_page
    assert "/accounts/email/verify/" not in str(Notification.objects.values())
    # Following the link verifies the address: mail goes to it from then on.
    page = Client().get(link_in(m))
    assert page.status_code == 200 and "Verify my address" in page.content.decode()
    assert not services.is_verified(user)  # opening the link (a mail scanner) verifies nothing
    done = Client().post(link_in(m))
    assert done.status_code == 200 and "a@example.org is verified" in done.content.decode()
    user.refresh_from_db()
    assert services.is_verified(user)
    assert c.get("/api/notifications/settings/").json()["email_verified"] is True
    r = c.post("/api/notifications/test/")
    assert r.json() == {"sent": True, "channels": ["email"]}
    deliver_all()
    assert [x.subject for x in mail.outbox][1:] == ["[YINSH bot arena] Test notification"]


def test_changing_the_address_makes_it_unverified_and_old_links_stop_working(user: Any) -> None:
    c = api(user)
    c.patch("/api/notifications/settings/", {"email_address": "a@example.org"}, format="json")
    deliver_all()
    first = link_in(mail.outbox[0])
    Client().post(first)
    user.refresh_from_db()
    assert services.is_verified(user)
    r = c.patch("/api/notifications/settings/", {"email_address": "b@example.org"}, format="json")
    assert r.json()["email_verified"] is False
    user.refresh_from_db()
    assert not services.is_verified(user)
    # The first link was for a: it verifies nothing now, and says why.
    again = Client().post(first)
    assert again.status_code == 200
    assert "an address the account no longer has" in again.content.decode()
    assert not services.is_verified(user)
    # Back to a: verified again (the address a link was last followed for), with no new link.
    c.patch("/api/notifications/settings/", {"email_address": "a@example.org"}, format="json")
    user.refresh_from_db()
    assert services.is_verified(user)
    deliver_all()
    assert [m.to for m in mail.outbox] == [["a@example.org"], ["b@example.org"]]


def test_a_damaged_or_expired_link_is_refused_and_changes_nothing(user: Any, settings: Any) -> None:
    user.email = "a@example.org"
    user.save(update_fields=["email"])
    token = verification.make_token(user.pk, "a@example.org")
    r = Client().post(f"/accounts/email/verify/{token[:-2]}xx/")
    assert r.status_code == 200 and "This verification link is not valid" in r.content.decode()

    class Old(signing.TimestampSigner):
        def timestamp(self) -> str:
            return signing.b62_encode(int(time.time()) - 4 * 86400)

    settings.EMAIL_VERIFY_DAYS = 3
    old = Old(salt=verification.SALT).sign_object({"user": user.pk, "email": "a@example.org"})
    r = Client().post(f"/accounts/email/verify/{old}/")
    assert "more than 3 days old" in r.content.decode()
    assert not services.is_verified(user)
    assert not NotificationSettings.objects.filter(user=user).exists()
    Client().post(f"/accounts/email/verify/{token}/")
    assert services.is_verified(user)


def test_test_notifications_are_limited_with_retry_after(user: Any, settings: Any) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "notify_test": "3/hour"}
    user.email = "a@example.org"
    user.save(update_fields=["email"])
    NotificationSettings.objects.create(user=user, verified_email="a@example.org")
    c = api(user)
    for _ in range(3):
        assert c.post("/api/notifications/test/").json()["sent"] is True
    r = c.post("/api/notifications/test/")
    assert r.status_code == 429
    assert r.json()["detail"].startswith("too many test notifications: at most 3 per hour")
    assert 1 <= int(r["Retry-After"]) <= 3600
    # The site's button says the same on a page sent with 429.
    web = Client()
    web.force_login(user)
    page = web.post("/accounts/notifications/test/")
    assert page.status_code == 429 and "Too many test notifications" in page.content.decode()
    assert "Retry-After" in page
    assert Notification.objects.filter(event="test").count() == 3
    deliver_all()
    assert len(mail.outbox) == 3


def test_verification_links_are_limited_per_user_and_per_address(
    user: Any, other_user: Any, settings: Any
) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "verify_email": "2/hour"}
    c = api(user)
    c.patch("/api/notifications/settings/", {"email_address": "a@example.org"}, format="json")
    r = c.post("/api/notifications/verify/")
    assert r.status_code == 202 and r.json() == {"sent": True}
    r = c.post("/api/notifications/verify/")
    assert r.status_code == 429
    assert r.json()["detail"].startswith("too many verification emails: at most 2 per hour")
    assert "Retry-After" in r
    # A change of address over the rate is saved, without a link (asked for again later).
    r = c.patch("/api/notifications/settings/", {"email_address": "b@example.org"}, format="json")
    assert r.status_code == 200 and r.json()["email_address"] == "b@example.org"
    # Another account cannot send more to an address that had its share.
    other = api(other_user)
    other.patch("/api/notifications/settings/", {"email_address": "a@example.org"}, format="json")
    r = other.post("/api/notifications/verify/")
    assert r.status_code == 429
    deliver_all()
    assert [m.to for m in mail.outbox] == [["a@example.org"]] * 2


def test_a_verified_address_needs_no_new_link(user: Any) -> None:
    user.email = "a@example.org"
    user.save(update_fields=["email"])
    NotificationSettings.objects.create(user=user, verified_email="a@example.org")
    assert api(user).post("/api/notifications/verify/").json() == {"sent": False}
    assert not Notification.objects.exists()


def test_sign_up_with_an_address_mails_its_verification_link(db: Any) -> None:
    c = Client()
    r = c.post(
        "/accounts/signup/",
        {
            "username": "carol",
            "email": "carol@example.org",
            "password1": "a-long-password-7",
            "password2": "a-long-password-7",
        },
        follow=True,
    )
    assert r.status_code == 200
    assert "A link to verify carol@example.org is on its way" in r.content.decode()
    deliver_all()
    (m,) = mail.outbox
    assert m.to == ["carol@example.org"]
    c.post(link_in(m))
    page = c.get("/accounts/notifications/").content.decode()
    assert "Verified." in page


def test_every_address_already_there_starts_unverified(user: Any) -> None:
    """The migration adds the verified address empty: an address set before it (here, one set
    directly, as the old code did) gets no mail until it is verified."""
    user.email = "old@example.org"
    user.save(update_fields=["email"])
    NotificationSettings.objects.create(user=user)
    assert not services.is_verified(user)
    n = services.notify(user, "check_finished", "s", "t")
    assert (
        n is not None and services.fan_out(n.pk) == 0 and not n.deliveries.exists()
    )  # in the inbox, not by email


def test_the_module_examples_hold() -> None:
    failures, tried = doctest.testmod(arena.notifications.verification)
    assert tried and not failures
