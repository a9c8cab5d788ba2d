"""``/api/analysis/``: ask bots for their action in a position and read the answers; logged-in
users only, each reading their own; bad requests are clear 400s that queue nothing; the throttle
is a 429 that says why; ``PATCH /api/bots/<name>/`` opts a bot in."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from arena.analysis import services as analysis
from arena.analysis.models import Analysis
from arena.bots.models import Bot
from tests.arena.api.test_api import client_for
from tests.arena.conftest import BOTS, TEST_BOTS, make_version

HISTORY = ["e5", "f6", "d4", "g7", "c3", "h8", "e7", "f4", "d6", "g5", "e5-e6"]


@pytest.fixture
def search(system_user: Any) -> Any:
    return make_version(system_user, "search", folder=BOTS / "search", trusted=True)


@pytest.mark.django_db
def test_ask_then_read_the_answers(user: Any, other_user: Any, search: Any) -> None:
    api = client_for(user)
    bots = api.get("/api/analysis/bots/?variant=yinsh").json()
    assert bots == {
        "bots": [{"name": "search", "version": "search v1", "builtin": True}],
        "max_bots": 4,
    }
    r = api.post(
        "/api/analysis/",
        {"variant": "yinsh", "history": HISTORY, "bots": ["search"]},
        format="json",
    )
    assert r.status_code == 201, r.content
    (asked,) = r.json()["answers"]
    assert asked["status"] == "queued" and not asked["done"] and asked["ply"] == len(HISTORY)
    assert analysis.run(asked["id"]) == "answered"
    (read,) = api.get(f"/api/analysis/?ids={asked['id']}").json()["answers"]
    assert read["done"] and read["action"] and read["info"]["depth"] >= 1
    # Another user does not see it.
    assert client_for(other_user).get(f"/api/analysis/?ids={asked['id']}").json() == {"answers": []}


@pytest.mark.django_db
def test_anonymous_visitors_are_refused(search: Any) -> None:
    anon = client_for()
    assert anon.get("/api/analysis/bots/").status_code == 401
    assert anon.get("/api/analysis/?ids=1").status_code == 401
    body = {"variant": "yinsh", "history": [], "bots": ["search"]}
    assert anon.post("/api/analysis/", body, format="json").status_code == 401
    assert not Analysis.objects.exists()


@pytest.mark.django_db
def test_a_session_must_send_its_csrf_token(user: Any, search: Any) -> None:
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    body = {"variant": "yinsh", "history": [], "bots": ["search"]}
    r = browser.post("/api/analysis/", body, content_type="application/json")
    assert r.status_code == 403 and "CSRF" in r.json()["detail"]
    assert not Analysis.objects.exists()


@pytest.mark.django_db
def test_bad_requests_are_400s_that_queue_nothing(user: Any, search: Any) -> None:
    api = client_for(user)
    for body, field, words in (
        ({"variant": "chess", "history": [], "bots": ["search"]}, "variant", "chess"),
        ({"variant": "yinsh", "history": ["e5", "e5"], "bots": ["search"]}, "history", "action 2"),
        ({"variant": "yinsh", "history": "e5", "bots": ["search"]}, "history", "list"),
        ({"variant": "yinsh", "history": [5], "bots": ["search"]}, "history", "valid string"),
        ({"variant": "yinsh", "history": [], "bots": []}, "bots", "empty"),
        ({"variant": "yinsh", "history": [], "bots": ["nobody"]}, "bots", "cannot be asked"),
    ):
        r = api.post("/api/analysis/", body, format="json")
        assert r.status_code == 400, (body, r.content)
        assert field in r.json() and words in str(r.json()), (body, r.json())
    assert api.get("/api/analysis/?ids=x").status_code == 400
    assert api.get("/api/analysis/?ids=1,²").status_code == 400
    assert api.get("/api/analysis/").status_code == 400
    assert api.get("/api/analysis/bots/?variant=chess").status_code == 400
    assert not Analysis.objects.exists()


@pytest.mark.django_db
def test_the_throttle_is_a_429_that_says_why(user: Any, search: Any, settings: Any) -> None:
    settings.THROTTLE_RATES = {**settings.THROTTLE_RATES, "analysis": "1/minute"}
    api = client_for(user)
    body = {"variant": "yinsh", "history": [], "bots": ["search"]}
    assert api.post("/api/analysis/", body, format="json").status_code == 201
    r = api.post("/api/analysis/", body, format="json")
    assert r.status_code == 429 and "Retry-After" in r.headers
    assert "too many analysis requests" in r.json()["detail"]
    assert Analysis.objects.count() == 1


@pytest.mark.django_db
def test_the_owner_opts_a_bot_in_through_the_api(user: Any, other_user: Any, search: Any) -> None:
    make_version(user, "mine", folder=TEST_BOTS / "honest" / "diary")
    api = client_for(user)
    assert api.get("/api/bots/mine/").json()["analysis"] is False
    names = [b["name"] for b in api.get("/api/analysis/bots/").json()["bots"]]
    assert names == ["search"]
    r = client_for(other_user).patch("/api/bots/mine/", {"analysis": True}, format="json")
    assert r.status_code == 403 and not Bot.objects.get(name="mine").analysis
    r = api.patch("/api/bots/mine/", {"analysis": True}, format="json")
    assert r.status_code == 200 and r.json()["analysis"] is True
    names = [b["name"] for b in client_for(other_user).get("/api/analysis/bots/").json()["bots"]]
    assert names == ["search", "mine"]
