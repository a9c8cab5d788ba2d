"""``/api/trials/``: start a trial, follow it, read its game and log, publish it; only its owner
sees it; bad requests get a clear 400 and store nothing."""

from __future__ import annotations

from typing import Any

import pytest

from arena.admission import trials
from arena.admission.models import Trial
from arena.bots.models import Bot
from tests.arena.api.test_api import bot_file, client_for
from tests.arena.conftest import BOTS, make_version


@pytest.mark.django_db
def test_a_trial_through_the_api(user: Any, other_user: Any, anchor: Any) -> None:
    api = client_for(user)
    assert client_for().post("/api/trials/", {"file": bot_file()}).status_code == 401
    greedy = make_version(other_user, "greedy", folder=BOTS / "greedy")
    r = api.post(
        "/api/trials/",
        {"file": bot_file(), "variant": "blitz", "colour": "black", "opponent": "greedy"},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    body = r.json()
    assert body["status"] == "queued" and body["opponent"] == greedy.pk
    assert body["url"].endswith(f"/api/trials/{body['id']}/") and body["record"] == ""
    assert trials.run(body["id"]) == "played"
    done = api.get(f"/api/trials/{body['id']}/").json()
    assert done["status"] == "played" and done["record"].startswith("[")
    assert done["score"] in ("1", "0", "½") and done["transcript"]["players"]
    assert [t["id"] for t in api.get("/api/trials/").json()["results"]] == [body["id"]]
    # Nobody else sees it, or publishes it.
    other = client_for(other_user)
    assert other.get(f"/api/trials/{body['id']}/").status_code == 404
    assert other.get("/api/trials/").json()["results"] == []
    assert other.post(f"/api/trials/{body['id']}/publish/", {"name": "x"}).status_code == 404
    r = api.post(f"/api/trials/{body['id']}/publish/", {"name": "tried"}, format="json")
    assert r.status_code == 201 and r.json()["label"] == "tried v1"
    assert Bot.objects.get(name="tried").owner == user


@pytest.mark.django_db
def test_bad_trial_requests_are_400s_that_store_nothing(user: Any, anchor: Any) -> None:
    api = client_for(user)
    for fields, key in (
        ({"variant": "chess"}, "variant"),
        ({"colour": "red"}, "colour"),
        ({"opponent": "nobody"}, "opponent"),
        ({"bot": "nobody"}, "bot"),
    ):
        r = api.post("/api/trials/", {"file": bot_file(), **fields}, format="multipart")
        assert r.status_code == 400 and key in r.json(), (fields, r.content)
    r = api.post("/api/trials/", {"variant": "yinsh"}, format="multipart")
    assert r.status_code == 400 and "file" in r.json()
    queued = api.post("/api/trials/", {"file": bot_file()}, format="multipart").json()
    r = api.post(f"/api/trials/{queued['id']}/publish/", {"name": "early"}, format="json")
    assert r.status_code == 409 and "waiting for a worker" in r.json()["detail"]
    assert Trial.objects.count() == 1 and not Bot.objects.filter(name="early").exists()
