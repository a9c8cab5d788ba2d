"""A rate on the site's pages per address for visitors without a login: over it, a 429 page
with Retry-After; logged-in users, the API (which has its own), static files and the pages the
site's scripts poll (a live game's feed) are not counted."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from tests.arena.conftest import make_version
from tests.arena.games.test_matches import queued_match

pytestmark = pytest.mark.django_db

HERE, ELSEWHERE = "203.0.113.7", "198.51.100.9"


@pytest.fixture(autouse=True)
def pages_rate(settings: Any) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "pages": "5/hour"}


def test_an_address_over_the_rate_gets_a_429_page_saying_when_to_come_back() -> None:
    c = Client(REMOTE_ADDR=HERE)
    for path in ("/", "/bots/", "/matches/", "/no-such-page/", "/accounts/login/"):
        assert c.get(path).status_code != 429
    r = c.get("/")
    assert r.status_code == 429
    page = r.content.decode()
    assert "Too many page requests: at most 5 per hour; try again in" in page
    assert 1 <= int(r["Retry-After"]) <= 3600
    assert c.post("/accounts/login/", {"username": "x", "password": "y"}).status_code == 429
    # Another address is not affected.
    assert Client(REMOTE_ADDR=ELSEWHERE).get("/").status_code == 200


def test_logged_in_users_and_the_api_are_not_counted(user: Any) -> None:
    c = Client(REMOTE_ADDR=HERE)
    c.force_login(user)
    for _ in range(8):
        assert c.get("/").status_code == 200
    anonymous = Client(REMOTE_ADDR=HERE)
    for _ in range(8):
        assert anonymous.get("/api/bots/").status_code == 200
    assert anonymous.get("/").status_code == 200


def test_the_live_feed_the_pages_poll_and_static_files_are_not_counted(user: Any) -> None:
    m = queued_match(make_version(user, "white-bot"), make_version(user, "black-bot"))
    c = Client(REMOTE_ADDR=HERE)
    for _ in range(5):
        assert c.get(f"/matches/{m.pk}/").status_code == 200
    assert c.get(f"/matches/{m.pk}/").status_code == 429
    for _ in range(10):  # a watcher's page goes on polling the feed
        r = c.get(f"/matches/{m.pk}/live.json")
        assert r.status_code == 200 and r.json()["status"] == "queued"
    assert c.get("/static/arena/site.css").status_code != 429
    assert c.get("/healthz").status_code == 200


def test_the_address_behind_a_proxy_is_counted_not_what_the_client_writes(
    settings: Any,
) -> None:
    settings.PROXY_COUNT = 1
    for n in range(5):
        c = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=f"192.0.2.{n}, {HERE}")
        assert c.get("/").status_code == 200
    c = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=f"192.0.2.99, {HERE}")
    assert c.get("/").status_code == 429
    c = Client(REMOTE_ADDR="10.0.0.2", HTTP_X_FORWARDED_FOR=ELSEWHERE)
    assert c.get("/").status_code == 200
