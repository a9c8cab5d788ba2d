"""The seasons through the API: anyone reads them (a visitor and a user alike), nobody writes."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from arena.games import seasons
from arena.games.models import Season
from tests.arena.api.test_api import client_for
from tests.arena.games.test_seasons import play, players


@pytest.fixture
def closed_and_open(django_user_model: Any) -> tuple[Season, Season]:
    """A Yinsh season closed after two games, and a Blitz season open."""
    b = players(django_user_model, 4)
    yinsh = seasons.open_season("yinsh", division_size=2, movers=1, name="Spring")
    play(b[1], b[0], "white")
    play(b[2], b[3], "draw", 2)
    seasons.close_season(yinsh)
    blitz = seasons.open_season("blitz", division_size=4, movers=2)
    return Season.objects.get(pk=yinsh.pk), blitz


@pytest.mark.django_db
def test_the_schema_lists_the_seasons_endpoints() -> None:
    from drf_spectacular.generators import SchemaGenerator
    from drf_spectacular.validation import validate_schema

    schema = SchemaGenerator().get_schema(request=None, public=True)
    validate_schema(schema)
    for path in ("/api/seasons/", "/api/seasons/{id}/", "/api/seasons/{id}/standings/"):
        assert path in schema["paths"], path
        assert set(schema["paths"][path]) == {"get"}, path
    detail = schema["components"]["schemas"]["SeasonDetail"]["properties"]
    assert detail["divisions"]["type"] == "array"
    standing = schema["components"]["schemas"]["SeasonStanding"]["properties"]
    assert {"rank", "bot", "version", "points", "sonneborn_berger", "elo", "move"} <= set(standing)


@pytest.mark.parametrize("who", ["anonymous", "user"])
@pytest.mark.django_db
def test_anyone_reads_the_seasons_and_their_standings(
    closed_and_open: tuple[Season, Season], user: Any, who: str
) -> None:
    yinsh, blitz = closed_and_open
    api = client_for(user if who == "user" else None)
    listed = api.get("/api/seasons/")
    assert listed.status_code == 200
    rows = listed.json()["results"]
    assert [r["id"] for r in rows] == [blitz.pk, yinsh.pk]  # newest first
    first = rows[1]
    assert (first["title"], first["variant"], first["status"], first["number"]) == (
        "Spring",
        "yinsh",
        "closed",
        1,
    )
    assert (first["division_size"], first["movers"], first["previous"]) == (2, 1, None)
    assert first["page"].endswith(f"/seasons/{yinsh.pk}/")
    assert first["url"].endswith(f"/api/seasons/{yinsh.pk}/")
    assert "divisions" not in first

    body = api.get(f"/api/seasons/{yinsh.pk}/").json()
    top, bottom = body["divisions"]
    assert top["number"] == 1 and bottom["number"] == 2
    assert [(s["rank"], s["bot"], s["points"], s["move"]) for s in top["standings"]] == [
        (1, "b01", 1.0, "stay"),
        (2, "b00", 0.0, "down"),
    ]
    winner = top["standings"][0]
    assert (winner["owner"], winner["version"], winner["games"], winner["wins"]) == (
        "owner01",
        1,
        1,
        1,
    )
    assert winner["elo"] == 1950 and winner["sonneborn_berger"] == 0.0
    assert [(s["bot"], s["draws"], s["move"]) for s in bottom["standings"]] == [
        ("b02", 2, "up"),
        ("b03", 2, "stay"),
    ]
    open_one = api.get(f"/api/seasons/{blitz.pk}/").json()
    assert open_one["status"] == "open" and open_one["closed_at"] is None
    assert [len(d["standings"]) for d in open_one["divisions"]] == [4]

    csv = api.get(body["standings_csv"])
    assert csv.status_code == 200 and csv["Content-Type"] == "text/csv; charset=utf-8"
    assert csv.content == Client().get(f"/seasons/{yinsh.pk}/standings.csv").content


@pytest.mark.django_db
def test_the_seasons_are_filtered_by_variant_and_status_and_bad_filters_refused(
    closed_and_open: tuple[Season, Season],
) -> None:
    yinsh, blitz = closed_and_open
    api = client_for()
    assert [r["id"] for r in api.get("/api/seasons/?variant=yinsh").json()["results"]] == [yinsh.pk]
    assert [r["id"] for r in api.get("/api/seasons/?status=open").json()["results"]] == [blitz.pk]
    for query, field in (("status=over", "status"), ("variant=chess", "variant")):
        r = api.get(f"/api/seasons/?{query}")
        assert r.status_code == 400 and field in r.json(), query
    missing = api.get("/api/seasons/999/")
    assert missing.status_code == 404 and "detail" in missing.json()
    assert api.get("/api/seasons/999/standings/").status_code == 404


@pytest.mark.django_db
def test_nobody_opens_changes_or_deletes_a_season_through_the_api(
    closed_and_open: tuple[Season, Season], user: Any
) -> None:
    yinsh, _ = closed_and_open
    body = {"variant": "yangsh", "division_size": 2}
    assert client_for().post("/api/seasons/", body, format="json").status_code == 401
    mine = client_for(user)
    assert mine.post("/api/seasons/", body, format="json").status_code == 405
    assert mine.patch(f"/api/seasons/{yinsh.pk}/", {"name": "x"}).status_code == 405
    assert mine.delete(f"/api/seasons/{yinsh.pk}/").status_code == 405
    assert Season.objects.count() == 2
    assert Season.objects.get(pk=yinsh.pk).name == "Spring"
