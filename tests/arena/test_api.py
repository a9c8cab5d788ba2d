"""The REST API: token auth, the OpenAPI schema, and every endpoint."""

from __future__ import annotations

import io
import json
import zipfile
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from arena.bots.models import Bot, BotVersion
from arena.games import ratings
from arena.games.models import Match, MatchRecord
from arena.tournaments.models import Tournament
from tests.arena.conftest import BOTS, make_version, zipped_folder
from tests.arena.test_matches import fake_result, queued_match
from tests.arena.test_tournaments import finish_one


def client_for(user: Any | None = None) -> APIClient:
    c = APIClient()
    if user is not None:
        from rest_framework.authtoken.models import Token

        token, _ = Token.objects.get_or_create(user=user)
        c.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    return c


def bot_file(name: str = "bot.zip") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, zipped_folder(BOTS / "random"), "application/zip")


@pytest.fixture
def played(user: Any, anchor: Any) -> Match:
    """A finished rated match between alice's bot and the anchor, ratings fitted."""
    v = make_version(user, "alpha")
    m = queued_match(v, anchor)
    from arena.games import services

    services.finish(m.pk, services.claim(m.pk), fake_result())
    ratings.refresh("yinsh")
    return m


@pytest.mark.django_db
def test_a_token_is_obtained_with_username_and_password(user: Any) -> None:
    r = APIClient().post(
        "/api/token/", {"username": "alice", "password": "a-long-password-1"}, format="json"
    )
    assert r.status_code == 200 and len(r.json()["token"]) == 40
    bad = APIClient().post("/api/token/", {"username": "alice", "password": "x"}, format="json")
    assert bad.status_code == 400


@pytest.mark.django_db
def test_the_schema_is_valid_openapi_and_lists_every_endpoint() -> None:
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.validation import validate_schema

    schema = SchemaGenerator().get_schema(request=None, public=True)
    validate_schema(schema)
    paths = set(schema["paths"])
    for p in (
        "/api/bots/",
        "/api/bots/{name}/",
        "/api/bots/{name}/versions/",
        "/api/versions/{id}/",
        "/api/versions/{id}/source/",
        "/api/versions/{id}/history/",
        "/api/matches/",
        "/api/matches/{id}/",
        "/api/matches/{id}/record/",
        "/api/matches/{id}/transcript/",
        "/api/tournaments/",
        "/api/tournaments/{id}/",
        "/api/tournaments/{id}/pause/",
        "/api/tournaments/{id}/resume/",
        "/api/tournaments/{id}/cancel/",
        "/api/tournaments/{id}/archive/",
        "/api/ratings/",
        "/api/token/",
    ):
        assert p in paths, p
    r = APIClient().get("/api/schema/")
    assert r.status_code == 200 and b"openapi" in r.content
    assert APIClient().get("/api/docs/").status_code == 200


# ----------------------------------------------------------------------------- bots


@pytest.mark.django_db
def test_uploading_a_bot_needs_a_token(user: Any) -> None:
    r = APIClient().post("/api/bots/", {"name": "x1", "file": bot_file()}, format="multipart")
    assert r.status_code in (401, 403)
    assert not Bot.objects.exists()


@pytest.mark.django_db
def test_upload_list_retrieve_update_and_delete_a_bot(user: Any) -> None:
    c = client_for(user)
    r = c.post(
        "/api/bots/",
        {"name": "mybot", "description": "hi", "file": bot_file()},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    assert r.json()["status"] == "pending" and r.json()["label"] == "mybot v1"
    assert r.json()["check_report"] == {"lines": [], "transcript": None, "stderr_tail": ""}
    listed = c.get("/api/bots/").json()
    assert [b["name"] for b in listed["results"]] == ["mybot"]
    detail = c.get("/api/bots/mybot/").json()
    assert detail["owner"] == "alice" and detail["versions"][0]["number"] == 1
    assert c.patch("/api/bots/mybot/", {"description": "new"}, format="json").status_code == 200
    assert Bot.objects.get(name="mybot").description == "new"
    r2 = c.post("/api/bots/mybot/versions/", {"file": bot_file("v2.zip")}, format="multipart")
    assert r2.status_code == 201 and r2.json()["number"] == 2
    assert [v["number"] for v in c.get("/api/bots/mybot/versions/").json()] == [2, 1]
    assert c.delete("/api/bots/mybot/").status_code == 204
    assert not Bot.objects.filter(name="mybot").exists()


@pytest.mark.django_db
def test_a_refused_upload_says_why(user: Any) -> None:
    bad = SimpleUploadedFile("bot.zip", b"not a zip")
    r = client_for(user).post("/api/bots/", {"name": "b1", "file": bad}, format="multipart")
    assert r.status_code == 400 and "not a zip archive" in r.json()["file"][0]
    assert not Bot.objects.exists()


@pytest.mark.django_db
def test_others_cannot_change_delete_or_download_a_bot(user: Any, other_user: Any) -> None:
    v = make_version(user, "mine")
    c = client_for(other_user)
    assert c.patch("/api/bots/mine/", {"description": "x"}, format="json").status_code == 403
    assert c.delete("/api/bots/mine/").status_code == 403
    r = c.post("/api/bots/mine/versions/", {"file": bot_file()}, format="multipart")
    assert r.status_code == 403
    assert c.get(f"/api/versions/{v.pk}/source/").status_code == 403
    seen = c.get(f"/api/versions/{v.pk}/").json()
    assert seen["check_report"] is None and seen["source_url"] is None
    assert Bot.objects.get(name="mine").description == ""
    assert BotVersion.objects.filter(bot__name="mine").count() == 1
    own = client_for(user).get(f"/api/versions/{v.pk}/source/")
    assert own.status_code == 200
    from arena.bots import store

    assert b"".join(own.streaming_content) == store.path(v.sha256).read_bytes()


# ----------------------------------------------------------------------------- matches, ratings


@pytest.mark.django_db
def test_matches_and_their_downloads(played: Match) -> None:
    c = APIClient()
    listed = c.get("/api/matches/", {"bot": "alpha"}).json()
    assert [m["id"] for m in listed["results"]] == [played.pk]
    detail = c.get(f"/api/matches/{played.pk}/").json()
    assert detail["score"] == "1-0" and detail["termination"] == "time"
    data = MatchRecord.objects.get(match=played)
    assert c.get(f"/api/matches/{played.pk}/record/").content.decode() == data.record
    short = c.get(f"/api/matches/{played.pk}/record/", {"notation": "short"})
    assert short.content.decode() == data.record_short
    assert json.loads(c.get(f"/api/matches/{played.pk}/transcript/").content) == data.transcript
    assert c.get(detail["downloads"]["record"]).content.decode() == data.record
    assert c.get("/api/matches/", {"status": "queued"}).json()["results"] == []


@pytest.mark.django_db
def test_the_leaderboard_and_a_versions_history(played: Match, anchor: Any) -> None:
    rows = APIClient().get("/api/ratings/", {"variant": "yinsh"}).json()["results"]
    assert {r["bot"] for r in rows} == {"alpha", "random"}
    random_row = next(r for r in rows if r["bot"] == "random")
    assert random_row["elo"] == 1000 and random_row["error"] == 0
    assert APIClient().get("/api/ratings/", {"variant": "go"}).status_code == 400
    history = APIClient().get(f"/api/versions/{played.white_id}/history/").json()
    assert history[0]["variant"] == "yinsh" and history[0]["games"] == 1


# ----------------------------------------------------------------------------- tournaments


@pytest.mark.django_db
def test_tournaments_through_the_api(user: Any, other_user: Any) -> None:
    for name in ("t-a", "t-b", "t-c"):
        make_version(user, name)
    c = client_for(user)
    r = c.post(
        "/api/tournaments/",
        {
            "name": "Cup",
            "variant": "blitz",
            "time_control": "5+0.1",
            "games_per_pair": 2,
            "bots": ["t-a", "t-b", "t-c"],
        },
        format="json",
    )
    assert r.status_code == 201, r.content
    tid = r.json()["id"]
    detail = c.get(f"/api/tournaments/{tid}/").json()
    assert detail["progress"]["total"] == 6 and len(detail["standings"]) == 3
    assert len(detail["crosstable"]) == 3
    assert client_for(other_user).post(f"/api/tournaments/{tid}/pause/").status_code == 403
    assert c.post(f"/api/tournaments/{tid}/pause/").json()["status"] == "paused"
    assert c.post(f"/api/tournaments/{tid}/pause/").status_code == 409
    assert c.post(f"/api/tournaments/{tid}/resume/").json()["status"] == "running"
    m = Match.objects.filter(tournament_id=tid, status="queued").first()
    finish_one(m)
    archive = c.get(f"/api/tournaments/{tid}/archive/")
    assert archive["Content-Type"] == "application/zip"
    with zipfile.ZipFile(io.BytesIO(archive.content)) as zf:
        (name,) = [n for n in zf.namelist() if "/records/" in n]
        assert zf.read(name).decode() == MatchRecord.objects.get(match=m).record
    assert c.post(f"/api/tournaments/{tid}/cancel/").json()["status"] == "cancelled"
    assert [t["id"] for t in APIClient().get("/api/tournaments/").json()["results"]] == [tid]


@pytest.mark.django_db
def test_a_tournament_with_an_unknown_bot_is_refused(user: Any) -> None:
    make_version(user, "t-a")
    r = client_for(user).post(
        "/api/tournaments/",
        {"name": "Cup", "variant": "yinsh", "bots": ["t-a", "ghost"]},
        format="json",
    )
    assert r.status_code == 400 and "ghost" in json.dumps(r.json())
    assert not Tournament.objects.exists()
