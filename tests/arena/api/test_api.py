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
from arena.games import privacy
from arena.games.models import Match, MatchRecord
from arena.ratings import services as ratings
from arena.tournaments.models import Tournament
from tests.arena.conftest import BOTS, make_version, zipped_folder
from tests.arena.games.test_matches import fake_result, queued_match
from tests.arena.tournaments.test_tournaments import finish_one


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
    from arena.jobs import claims

    services.finish(m.pk, claims.claim(Match, m.pk), fake_result())
    ratings.refresh("yinsh")
    return m


@pytest.mark.django_db
def test_a_token_is_obtained_with_username_and_password(user: Any) -> None:
    r = APIClient().post(
        "/api/token/", {"username": "alice", "password": "a-long-password-1"}, format="json"
    )
    assert r.status_code == 200 and len(r.json()["token"]) == 40
    assert "no-store" in r["Cache-Control"]  # as OAuth 2's token responses (RFC 6749, 5.1)
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
        "/api/versions/{id}/activate/",
        "/api/matches/",
        "/api/matches/{id}/",
        "/api/matches/{id}/record/",
        "/api/matches/{id}/transcript/",
        "/api/matches/archives/",
        "/api/matches/archives/{variant}/{month}/",
        "/api/tournaments/",
        "/api/tournaments/{id}/",
        "/api/tournaments/{id}/pause/",
        "/api/tournaments/{id}/resume/",
        "/api/tournaments/{id}/cancel/",
        "/api/tournaments/{id}/replay/",
        "/api/tournaments/{id}/archive/",
        "/api/ratings/",
        "/api/duels/",
        "/api/duels/{id}/",
        "/api/duels/{id}/cancel/",
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
    assert r.status_code == 401
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
    assert own.status_code == 200 and own["Content-Type"] == "application/octet-stream"
    from arena.bots import store

    with store.open(v.sha256) as f:
        assert b"".join(own.streaming_content) == f.read()


@pytest.mark.django_db
def test_an_anonymous_source_download_is_a_401_that_says_how_to_log_in(user: Any) -> None:
    v = make_version(user, "mine")
    r = APIClient().get(f"/api/versions/{v.pk}/source/")
    assert r.status_code == 401
    assert r["WWW-Authenticate"] == "Token"
    assert "log in" in r.json()["detail"]
    bad = APIClient()
    bad.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    r = bad.get(f"/api/versions/{v.pk}/source/")
    assert r.status_code == 401 and r["WWW-Authenticate"] == "Token"


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
    shown = json.loads(c.get(f"/api/matches/{played.pk}/transcript/").content)
    assert shown == privacy.transcript_for(None, played, data.transcript)
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


@pytest.mark.django_db
def test_a_tournament_with_a_bot_that_does_not_play_its_variant_is_refused(user: Any) -> None:
    make_version(user, "t-a")
    make_version(user, "t-b", variants=["yinsh"])
    r = client_for(user).post(
        "/api/tournaments/",
        {"name": "Cup", "variant": "blitz", "bots": ["t-a", "t-b"]},
        format="json",
    )
    assert r.status_code == 400
    assert r.json()["non_field_errors"] == ["not playing Blitz YINSH: t-b v1 plays only YINSH"]
    assert not Tournament.objects.exists() and not Match.objects.exists()


@pytest.mark.django_db
def test_a_version_says_which_variants_it_plays(user: Any) -> None:
    every = make_version(user, "every")
    pawns = make_version(user, "pawns", variants=["yangsh", "yangsh7"])
    c = APIClient()
    assert c.get("/api/bots/pawns/").json()["versions"][0]["variants"] == ["yangsh", "yangsh7"]
    assert c.get(f"/api/versions/{every.pk}/").json()["variants"] == [
        "yinsh",
        "blitz",
        "yangsh",
        "yangsh7",
    ]
    ids = {v["id"] for v in c.get("/api/versions/", {"variant": "yangsh7"}).json()["results"]}
    assert ids == {every.pk, pawns.pk}
    ids = {v["id"] for v in c.get("/api/versions/", {"variant": "yinsh"}).json()["results"]}
    assert ids == {every.pk}
    assert c.get("/api/versions/", {"variant": "chess"}).status_code == 400


# ----------------------------------------------------------------------------- bad input


@pytest.mark.django_db
def test_paging_that_is_not_a_whole_number_in_range_is_refused(played: Match) -> None:
    c = APIClient()
    for query in ("limit=abc", "limit=0", "limit=1001", "offset=-1", "offset=1.5", "limit="):
        r = c.get(f"/api/matches/?{query}")
        assert r.status_code == 400, query
        assert list(r.json()) == [query.split("=")[0], "detail"]
    assert len(c.get("/api/matches/?limit=1000&offset=0").json()["results"]) == 1


@pytest.mark.django_db
def test_list_filters_are_checked(played: Match) -> None:
    c = APIClient()
    for url in (
        "/api/matches/?tournament=abc",
        f"/api/matches/?tournament={2**70}",
        "/api/matches/?status=bogus",
        "/api/matches/?variant=go",
        "/api/versions/?status=bogus",
        "/api/bots/?owner=a%00b",
        f"/api/versions/{played.white_id}/history/?variant=go",
        "/api/ratings/?variant=",
        "/api/ratings/?all=maybe",
    ):
        r = c.get(url)
        assert r.status_code == 400, url
        assert r["Content-Type"] == "application/json" and r.json(), url
    assert c.get("/api/matches/?status=&variant=yinsh").json()["count"] == 1
    assert c.get("/api/bots/?owner=alice").json()["count"] == 1
    assert c.get("/api/versions/?status=active").json()["count"] == 2


@pytest.mark.django_db
def test_a_patch_that_names_nothing_to_change_is_refused(user: Any) -> None:
    # Whatever its encoding: an empty JSON object, an empty form, or a multipart body without
    # a single part (what a client sends for a null body).
    make_version(user, "mine")
    Bot.objects.filter(name="mine").update(description="kept")
    c = client_for(user)
    bodies = [
        c.patch("/api/bots/mine/", {}, format="json"),
        c.patch("/api/bots/mine/", {}, format="multipart"),
        c.generic(
            "PATCH",
            "/api/bots/mine/",
            "--b0\r\nNone--b0--\r\n",
            content_type="multipart/form-data; boundary=b0",
        ),
    ]
    for r in bodies:
        assert r.status_code == 400
        assert r.json()["detail"] == (
            "nothing to change: give description, rated_challenges, rated_tournaments, "
            "scheduled_events, analysis, people or open_ladder"
        )
    assert Bot.objects.get(name="mine").description == "kept"
    r = c.patch("/api/bots/mine/", {"description": "new"}, format="multipart")
    assert r.status_code == 200 and r.json()["description"] == "new"


@pytest.mark.django_db
def test_a_bad_bot_name_or_description_is_refused_by_field(user: Any) -> None:
    make_version(user, "taken")
    c = client_for(user)
    for name in ("Upper", "random", "taken"):
        r = c.post("/api/bots/", {"name": name, "file": bot_file()}, format="multipart")
        assert r.status_code == 400 and list(r.json()) == ["name", "detail"], name
    long = {"name": "fine", "description": "x" * 2001, "file": bot_file()}
    r = c.post("/api/bots/", long, format="multipart")
    assert r.status_code == 400 and list(r.json()) == ["description", "detail"]
    assert list(Bot.objects.values_list("name", flat=True)) == ["taken"]


@pytest.mark.django_db
def test_a_tournament_with_too_many_bots_is_refused(user: Any) -> None:
    bots = [f"b{i}" for i in range(65)]
    body = {"name": "Cup", "variant": "yinsh", "bots": bots}
    r = client_for(user).post("/api/tournaments/", body, format="json")
    assert r.status_code == 400 and "no more than 64" in r.json()["bots"][0]
    assert not Tournament.objects.exists()


@pytest.mark.django_db
def test_downloads_of_a_match_that_does_not_exist_are_404(played: Match) -> None:
    c = APIClient()
    for pk in ("abc", str(2**70), str(played.pk + 1000)):
        for what in ("record", "transcript"):
            r = c.get(f"/api/matches/{pk}/{what}/")
            assert r.status_code == 404 and "detail" in r.json(), (pk, what)


@pytest.mark.django_db
def test_an_unknown_api_url_is_a_json_404() -> None:
    for url in ("/api/bots/Not-A-Name/", "/api/versions/1.5/", "/api/nothing/here/"):
        for method in ("get", "post", "delete"):
            r = getattr(APIClient(), method)(url)
            assert r.status_code == 404 and r.json() == {"detail": "Not found."}, (method, url)


@pytest.mark.django_db
def test_a_request_over_djangos_limits_is_refused_with_a_message(user: Any, settings: Any) -> None:
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 5
    c = client_for(user)
    r = c.post("/api/tournaments/", {"name": "x" * 2000}, format="json")
    assert r.status_code == 400 and "over 1000 bytes" in r.json()["detail"]
    fields = {f"f{i}": "x" for i in range(10)} | {"name": "many", "file": bot_file()}
    r = c.post("/api/bots/", fields, format="multipart")
    assert r.status_code == 400 and r.json() == {"detail": "more than 5 fields"}
    assert not Bot.objects.exists() and not Tournament.objects.exists()


@pytest.mark.django_db
def test_every_operation_documents_its_errors_and_the_shapes_it_returns() -> None:
    from drf_spectacular.generators import SchemaGenerator

    schema = SchemaGenerator().get_schema(request=None, public=True)
    for path, operations in schema["paths"].items():
        for method, op in operations.items():
            where = {p["in"] for p in op.get("parameters", [])}
            codes = set(op["responses"])
            assert "403" in codes, (method, path)
            assert ("404" in codes) == ("path" in where), (method, path)
            assert ("400" in codes) == ("query" in where or "requestBody" in op), (method, path)
            assert ("415" in codes) == ("requestBody" in op), (method, path)
    plain_lists = ("/api/bots/{name}/versions/", "/api/versions/{id}/history/")
    for path in plain_lists:
        ok = schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]
        assert ok["schema"]["type"] == "array", path
    result = schema["components"]["schemas"]["Match"]["properties"]["result"]
    assert "" in str(result) or any("Blank" in str(x) for x in result.get("oneOf", [])), result


@pytest.mark.django_db
def test_the_owner_opts_in_to_rated_tournaments_through_the_api(user: Any, other_user: Any) -> None:
    make_version(user, "mine")
    c = client_for(user)
    assert c.get("/api/bots/mine/").json()["rated_tournaments"] is False
    r = c.patch("/api/bots/mine/", {"rated_tournaments": True}, format="json")
    assert r.status_code == 200 and r.json()["rated_tournaments"] is True
    assert Bot.objects.get(name="mine").rated_tournaments
    r = c.patch("/api/bots/mine/", {"rated_tournaments": "maybe"}, format="json")
    assert r.status_code == 400 and "rated_tournaments" in r.json()
    assert Bot.objects.get(name="mine").rated_tournaments  # unchanged
    r = client_for(other_user).patch("/api/bots/mine/", {"rated_tournaments": False}, format="json")
    assert r.status_code == 403 and Bot.objects.get(name="mine").rated_tournaments


@pytest.mark.django_db
def test_a_rated_tournament_with_bots_not_opted_in_is_refused_by_name(
    user: Any, other_user: Any
) -> None:
    make_version(user, "t-a")
    make_version(other_user, "t-b")
    make_version(other_user, "t-c")
    c = client_for(user)
    body = {"name": "Cup", "variant": "yinsh", "bots": ["t-a", "t-b", "t-c"], "rated": True}
    r = c.post("/api/tournaments/", body, format="json")
    assert r.status_code == 400
    assert r.json()["non_field_errors"] == [
        "a rated tournament may include other people's bots only if their owners accept rated "
        "tournaments; these do not: t-b, t-c (make it unrated, or leave them out)"
    ]
    assert not Tournament.objects.exists() and not Match.objects.exists()
    Bot.objects.filter(name__in=["t-b", "t-c"]).update(rated_tournaments=True)
    r = c.post("/api/tournaments/", body, format="json")
    assert r.status_code == 201 and r.json()["rated"] is True


@pytest.mark.django_db
def test_a_tournament_that_does_not_say_is_rated_only_if_every_bot_accepts(
    user: Any, other_user: Any
) -> None:
    make_version(user, "t-a")
    make_version(user, "t-b")
    make_version(other_user, "t-c")
    c = client_for(user)
    body = {"name": "Mine", "variant": "yinsh", "bots": ["t-a", "t-b"]}
    mine = c.post("/api/tournaments/", body, format="json")
    assert mine.status_code == 201 and mine.json()["rated"] is True
    body = {"name": "Open", "variant": "yinsh", "bots": ["t-a", "t-c"]}
    r = c.post("/api/tournaments/", body, format="json")
    assert r.status_code == 201 and r.json()["rated"] is False
    assert not Match.objects.filter(tournament_id=r.json()["id"], rated=True).exists()


@pytest.mark.django_db
def test_the_uploaded_files_name_is_its_owners_only(user: Any, other_user: Any) -> None:
    v = make_version(user, "mine")
    BotVersion.objects.filter(pk=v.pk).update(filename="alice-secret-draft-2026.zip")
    for who in (None, other_user):
        for url in (f"/api/versions/{v.pk}/", "/api/bots/mine/", "/api/versions/"):
            body = client_for(who).get(url).content.decode()
            assert "alice-secret-draft" not in body, (who, url)
    assert client_for(who).get(f"/api/versions/{v.pk}/").json()["filename"] is None
    own = client_for(user).get(f"/api/versions/{v.pk}/").json()
    assert own["filename"] == "alice-secret-draft-2026.zip"
