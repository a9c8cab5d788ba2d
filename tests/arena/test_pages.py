"""The pages a visitor expects: my bots, password reset, match filters, a tournament's games,
head-to-head, the leaderboard's LOS table and the rating charts' bands."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from arena.bots import services as bot_services
from arena.bots.models import BotVersion
from arena.duels import services as duels
from arena.duels.models import Duel
from arena.notifications import services as notifications
from tests.arena.conftest import make_version

pytestmark = pytest.mark.django_db


def logged_in(user: Any) -> Client:
    c = Client()
    c.force_login(user)
    return c


# ----------------------------------------------------------------------------- my bots


@pytest.fixture
def alices_world(user: Any, other_user: Any) -> dict[str, Any]:
    """alice: ``mybot`` v1 (rejected) and v2 (active), a test, a challenge of bob's bot and a
    notification; bob: ``rival`` and ``sparring``, his own test and a challenge of alice's bot."""
    user.email = "alice@example.org"
    user.save(update_fields=["email"])
    old = make_version(user, "mybot", status=BotVersion.Status.REJECTED)
    new = make_version(user, "mybot")
    rival = make_version(other_user, "rival")
    sparring = make_version(other_user, "sparring")
    return {
        "old": old,
        "new": new,
        "test": duels.start_test(user, new, rival, variant="yinsh", games=2),
        "challenge": duels.start_challenge(user, new, rival, variant="yinsh", games=2),
        "bobs_test": duels.start_test(other_user, rival, sparring, variant="yinsh", games=2),
        "bobs_challenge": duels.start_challenge(other_user, rival, new, variant="yinsh", games=2),
        "note": notifications.notify(user, "test", "Hello alice", "text", "/bots/mybot/"),
    }


def test_bots_of_lists_only_the_users_bots_with_every_version_newest_first(
    user: Any, alices_world: dict[str, Any]
) -> None:
    owned = bot_services.bots_of(user)
    assert [o.bot.name for o in owned] == ["mybot"]
    assert [(v.number, v.status) for v in owned[0].versions] == [(2, "active"), (1, "rejected")]


def test_duels_of_are_those_the_user_started_or_their_bots_play(
    user: Any, other_user: Any, alices_world: dict[str, Any]
) -> None:
    w = alices_world
    assert duels.duels_of(user, Duel.Kind.TEST) == [w["test"]]
    assert duels.duels_of(user, Duel.Kind.CHALLENGE) == [w["bobs_challenge"], w["challenge"]]
    assert duels.duels_of(other_user, Duel.Kind.TEST) == [w["bobs_test"], w["test"]]
    assert duels.duels_of(user, Duel.Kind.CHALLENGE, limit=1) == [w["bobs_challenge"]]


def test_recent_notifications_are_the_users_own(
    user: Any, other_user: Any, alices_world: dict[str, Any]
) -> None:
    assert notifications.recent(user) == [alices_world["note"]]
    assert notifications.recent(other_user) == []


def test_my_bots_page_shows_versions_statuses_tests_challenges_and_notifications(
    user: Any, alices_world: dict[str, Any]
) -> None:
    r = logged_in(user).get("/accounts/bots/")
    assert r.status_code == 200
    page = r.content.decode()
    for text in ("mybot", "rejected", "active", "Hello alice", "rival v1"):
        assert text in page, text
    for duel in ("test", "challenge", "bobs_challenge"):
        assert alices_world[duel].get_absolute_url() in page, duel
    assert alices_world["bobs_test"].get_absolute_url() not in page


def test_my_bots_is_linked_from_the_header_when_signed_in_only(user: Any) -> None:
    assert 'href="/accounts/bots/"' in logged_in(user).get("/").content.decode()
    assert 'href="/accounts/bots/"' not in Client().get("/").content.decode()


def test_my_bots_asks_a_visitor_to_log_in(user: Any) -> None:
    r = Client().get("/accounts/bots/")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")


def test_my_bots_of_a_user_without_bots_says_how_to_start(user: Any) -> None:
    page = logged_in(user).get("/accounts/bots/").content.decode()
    assert "You have no bots yet" in page and 'href="/upload/"' in page


# ----------------------------------------------------------------------------- password reset


@pytest.fixture
def mailbox(settings: Any) -> list[Any]:
    from django.core import mail

    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.SITE_URL = "https://arena.example.org"
    mail.outbox = []
    return mail.outbox


def test_a_password_is_reset_through_the_link_sent_by_email(user: Any, mailbox: list[Any]) -> None:
    user.email = "alice@example.org"
    user.save(update_fields=["email"])
    c = Client()
    assert 'href="/accounts/password/reset/"' in c.get("/accounts/login/").content.decode()
    assert c.get("/accounts/password/reset/").status_code == 200
    r = c.post("/accounts/password/reset/", {"email": "alice@example.org"})
    assert r.status_code == 302 and r["Location"] == "/accounts/password/reset/sent/"
    assert "Check your email" in c.get(r["Location"]).content.decode()
    assert len(mailbox) == 1 and mailbox[0].to == ["alice@example.org"]
    assert "alice" in mailbox[0].body
    link = next(w for w in mailbox[0].body.split() if w.startswith("https://"))
    assert link.startswith("https://arena.example.org/accounts/password/reset/")
    path = link.removeprefix("https://arena.example.org")
    r = c.get(path)  # Django swaps the token for a session marker and redirects
    assert r.status_code == 302
    form_url = r["Location"]
    assert "Choose a new password" in c.get(form_url).content.decode()
    new = "another-long-password-9"
    r = c.post(form_url, {"new_password1": new, "new_password2": new})
    assert r.status_code == 302 and r["Location"] == "/accounts/password/reset/done/"
    assert "Password changed" in c.get(r["Location"]).content.decode()
    user.refresh_from_db()
    assert user.check_password(new)
    assert Client().login(username="alice", password=new)
    # The link works once.
    page = Client().get(path, follow=True).content.decode()
    assert "This link does not work" in page


def test_a_reset_for_an_unknown_address_sends_nothing_and_says_the_same(
    user: Any, mailbox: list[Any]
) -> None:
    r = Client().post("/accounts/password/reset/", {"email": "nobody@example.org"})
    assert r.status_code == 302 and r["Location"] == "/accounts/password/reset/sent/"
    assert mailbox == []


def test_a_bad_address_is_refused_with_a_form_error_and_sends_nothing(
    user: Any, mailbox: list[Any]
) -> None:
    r = Client().post("/accounts/password/reset/", {"email": "not an address"})
    assert r.status_code == 200 and "Enter a valid email address" in r.content.decode()
    assert mailbox == []


def test_new_passwords_that_differ_change_nothing(user: Any, mailbox: list[Any]) -> None:
    user.email = "alice@example.org"
    user.save(update_fields=["email"])
    c = Client()
    c.post("/accounts/password/reset/", {"email": "alice@example.org"})
    link = next(w for w in mailbox[0].body.split() if w.startswith("https://"))
    form_url = c.get(link.removeprefix("https://arena.example.org"))["Location"]
    r = c.post(form_url, {"new_password1": "one-long-pass-77", "new_password2": "other-pass-88"})
    assert r.status_code == 200 and "match" in r.content.decode()
    user.refresh_from_db()
    assert user.check_password("a-long-password-1")


def test_sign_up_takes_an_optional_email_address_for_resets(db: Any) -> None:
    from django.contrib.auth.models import User

    pw = "a-long-password-3"
    Client().post(
        "/accounts/signup/",
        {"username": "carol", "email": "carol@example.org", "password1": pw, "password2": pw},
    )
    Client().post("/accounts/signup/", {"username": "dave", "password1": pw, "password2": pw})
    assert dict(User.objects.values_list("username", "email")) == {
        "carol": "carol@example.org",
        "dave": "",
    }
