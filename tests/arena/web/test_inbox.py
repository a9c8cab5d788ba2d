"""The inbox: every notification of a user, listed on the site and by the API whatever their
email and webhook settings, read and unread, with the unread count in the header."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from arena.notifications import services
from arena.notifications.models import Event, Notification
from tests.arena.api.test_api import client_for

pytestmark = pytest.mark.django_db


def logged_in(user: Any) -> Client:
    c = Client()
    c.force_login(user)
    return c


def told(user: Any, subject: str, url: str = "/bots/x/") -> Notification:
    """A notification to ``user``, who has neither email nor webhook."""
    n = services.notify(user, Event.CHECK_FINISHED, subject, f"{subject}: the text.", url)
    assert n is not None
    return n


def unread_in_header(page: str) -> str:
    """The header's inbox link (its text holds the unread count)."""
    start = page.index('id="inbox-link"')
    return page[start : page.index("</a>", start)]


# ----------------------------------------------------------------------------- the page


def test_a_user_without_email_or_webhook_reads_their_notifications_on_the_site(
    user: Any,
) -> None:
    assert not user.email
    told(user, "walker v1 passed its check")
    told(user, "walker v2 was rejected")
    page = logged_in(user).get("/accounts/inbox/").content.decode()
    first, second = page.index("walker v2 was rejected"), page.index("walker v1 passed its check")
    assert first < second  # newest first
    assert "walker v2 was rejected: the text." in page
    assert page.count('class="unread"') == 2


def test_the_inbox_needs_a_login_and_shows_only_the_users_own(user: Any, other_user: Any) -> None:
    r = Client().get("/accounts/inbox/")
    assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")
    told(other_user, "the secret bot of bob passed")
    told(user, "the bot of alice passed")
    page = logged_in(user).get("/accounts/inbox/").content.decode()
    assert "the bot of alice passed" in page and "the secret bot of bob passed" not in page


def test_the_inbox_is_paginated(user: Any) -> None:
    for k in range(55):
        told(user, f"notice number {k:02}")
    c = logged_in(user)
    first = c.get("/accounts/inbox/").content.decode()
    assert "notice number 54" in first and "notice number 05" in first
    assert "notice number 04" not in first and "page 1 of 2" in first
    second = c.get("/accounts/inbox/?page=2").content.decode()
    assert "notice number 04" in second and "notice number 00" in second


def test_opening_a_notification_marks_it_read_and_goes_to_its_page(user: Any) -> None:
    n = told(user, "walker v1 passed its check", "/bots/walker/#v1")
    other = told(user, "no page", "")
    c = logged_in(user)
    assert ">2<" in unread_in_header(c.get("/").content.decode())
    r = c.post(f"/accounts/inbox/{n.pk}/")
    assert r.status_code == 302 and r["Location"] == "/bots/walker/#v1"
    n.refresh_from_db()
    assert n.read_at is not None
    assert ">1<" in unread_in_header(c.get("/").content.decode())
    r = c.post(f"/accounts/inbox/{other.pk}/")
    assert r.status_code == 302 and r["Location"] == f"/accounts/inbox/#n{other.pk}"
    page = c.get("/").content.decode()
    assert "badge" not in unread_in_header(page)  # nothing unread: no count


def test_following_a_notifications_address_goes_to_its_page_and_leaves_it_unread(
    user: Any,
) -> None:
    n = told(user, "walker v1 passed its check", "/bots/walker/#v1")
    c = logged_in(user)
    r = c.get(f"/accounts/inbox/{n.pk}/")
    assert r.status_code == 302 and r["Location"] == "/bots/walker/#v1"
    n.refresh_from_db()
    assert n.read_at is None  # a GET changes nothing: a browser may fetch links ahead
    assert services.unread_count(user) == 1


def test_the_inbox_opens_a_notification_with_a_form_that_posts(user: Any) -> None:
    n = told(user, "walker v1 passed its check", "/bots/walker/#v1")
    page = logged_in(user).get("/accounts/inbox/").content.decode()
    row = page[page.index(f'id="n{n.pk}"') :]
    row = row[: row.index("</tr>")]
    assert f'<form method="post" action="/accounts/inbox/{n.pk}/"' in row
    assert "csrfmiddlewaretoken" in row and "walker v1 passed its check</button>" in row


def test_mark_all_read_is_a_post_and_touches_only_the_users_own(user: Any, other_user: Any) -> None:
    told(user, "one")
    told(user, "two")
    theirs = told(other_user, "bob's")
    c = logged_in(user)
    assert c.get("/accounts/inbox/read/").status_code == 405
    r = c.post("/accounts/inbox/read/", follow=True)
    assert "2 notifications marked read" in r.content.decode()
    assert services.unread_count(user) == 0
    theirs.refresh_from_db()
    assert theirs.read_at is None
    assert c.get(f"/accounts/inbox/{theirs.pk}/").status_code == 404
    assert c.post(f"/accounts/inbox/{theirs.pk}/").status_code == 404
    theirs.refresh_from_db()
    assert theirs.read_at is None


def test_the_header_shows_no_inbox_to_visitors(user: Any) -> None:
    told(user, "one")
    page = Client().get("/").content.decode()
    assert 'id="inbox-link"' not in page


def test_the_unread_count_is_one_query(user: Any, django_assert_num_queries: Any) -> None:
    for k in range(3):
        told(user, f"n{k}")
    with django_assert_num_queries(1):
        assert services.unread_count(user) == 3


# ----------------------------------------------------------------------------- the API


def test_the_api_lists_the_users_notifications_newest_first_paginated(
    user: Any, other_user: Any
) -> None:
    assert client_for().get("/api/notifications/").status_code == 401
    older = told(user, "older")
    newer = told(user, "newer", "")
    told(other_user, "bob's")
    body = client_for(user).get("/api/notifications/", {"limit": 1}).json()
    assert body["count"] == 2 and body["next"] is not None
    (first,) = body["results"]
    assert first["id"] == newer.pk and first["subject"] == "newer"
    assert first["event"] == "check_finished" and first["read"] is False
    assert first["read_at"] is None and first["url"] == ""
    second = client_for(user).get(body["next"]).json()["results"][0]
    assert second["id"] == older.pk and second["url"] == "http://127.0.0.1:8000/bots/x/"
    assert second["text"] == "older: the text."


def test_the_api_marks_read_some_or_all_and_never_anothers(user: Any, other_user: Any) -> None:
    assert client_for().post("/api/notifications/read/", {}, format="json").status_code == 401
    a, b, c = told(user, "a"), told(user, "b"), told(user, "c")
    theirs = told(other_user, "bob's")
    api = client_for(user)
    r = api.post("/api/notifications/read/", {"ids": [a.pk, theirs.pk]}, format="json")
    assert r.status_code == 200 and r.json() == {"marked": 1, "unread": 2}
    theirs.refresh_from_db()
    assert theirs.read_at is None
    listed = {n["id"]: n["read"] for n in api.get("/api/notifications/").json()["results"]}
    assert listed == {a.pk: True, b.pk: False, c.pk: False}
    r = api.post("/api/notifications/read/", {}, format="json")
    assert r.json() == {"marked": 2, "unread": 0}
    theirs.refresh_from_db()
    assert theirs.read_at is None
    bad = api.post("/api/notifications/read/", {"ids": ["x"]}, format="json")
    assert bad.status_code == 400 and "ids" in bad.json()


def test_verification_links_are_not_in_the_inbox(user: Any) -> None:
    user.email = "alice@example.org"
    user.save(update_fields=["email"])
    assert services.send_verification(user) is not None
    assert services.unread_count(user) == 0
    assert client_for(user).get("/api/notifications/").json()["count"] == 0
    assert (
        "Verify your email address" not in logged_in(user).get("/accounts/inbox/").content.decode()
    )
