"""The seasons' pages: the list, a season's divisions and standings, its CSV file, and the
division and season history on a bot's page."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client

from arena.games import seasons
from arena.games.models import Season
from tests.arena.games.test_seasons import play, players


def text(url: str) -> str:
    """The page's words, tags left out and spaces squeezed."""
    r = Client().get(url)
    assert r.status_code == 200, url
    return " ".join(re.sub(r"<[^>]+>", " ", r.content.decode()).split())


@pytest.mark.django_db
def test_the_seasons_pages_follow_a_season_from_its_opening_to_its_archive(
    django_user_model: Any,
) -> None:
    assert "No season yet" in text("/seasons/")
    b = players(django_user_model, 4)
    season = seasons.open_season("yinsh", division_size=2, movers=1)
    play(b[3], b[2], "white", 2)
    play(b[0], b[1], "draw")

    listed = text("/seasons/")
    assert "YINSH season 1 YINSH open 4 2" in listed
    page = text(f"/seasons/{season.pk}/")
    assert "4 bots in 2 divisions of 2 (the last takes the rest)" in page
    assert "Divisions made by rating" in page and "Standings so far" in page
    assert "Division 1" in page and "Division 2" in page
    assert "1 b03 v1 owner03 2 2 2 0 0 100.0% 0.00 1850 ↑ go up" in page
    assert "2 b02 v1 owner02 0 2 0 0 2 0.0% 0.00 1900 stay" in page
    assert "1 b00 v1 owner00 0.5 1 0 1 0 50.0% 0.25 2000 stay" in page
    assert "2 b01 v1 owner01 0.5 1 0 1 0 50.0% 0.25 1950 ↓ go down" in page

    bot = text("/bots/b03/")
    assert (
        "In YINSH season 1 : division 2 of 2, rank 1 of 2 with 2 points from 2 games: it would "
        "go up if the season closed now." in bot
    )
    assert "Seasons" not in bot.split("Versions")[1]  # no history yet
    assert "YINSH season 1 is under way" in text("/leaderboard/yinsh/")
    assert "under way" not in text("/leaderboard/blitz/")

    csv = Client().get(f"/seasons/{season.pk}/standings.csv")
    assert csv["Content-Type"] == "text/csv; charset=utf-8"
    assert 'filename="season-yinsh-1.csv"' in csv["Content-Disposition"]
    assert csv.content.decode().splitlines()[3] == "2,1,b03,1,owner03,2,2,0,0,2,0.00,1850,up"

    seasons.close_season(season)
    page = text(f"/seasons/{season.pk}/")
    assert "The final standings" in page and "closed" in page
    assert "1 b03 v1 owner03 2 2 2 0 0 100.0% 0.00 1850 ↑ promoted" in page
    assert "2 b01 v1 owner01 0.5 1 0 1 0 50.0% 0.25 1950 ↓ relegated" in page
    bot = text("/bots/b03/")
    assert "In YINSH season 1" not in bot
    history = bot.split("Seasons")[-1]
    assert "YINSH season 1 2 1 v1 2 2 ↑ promoted" in history
    assert "YINSH season 1 1 2 v1 0.5 1 ↓ relegated" in text("/bots/b01/")

    second = seasons.open_season("yinsh", division_size=2, movers=1)
    page = text(f"/seasons/{second.pk}/")
    assert "Divisions from YINSH season 2" not in page
    assert "Divisions from YINSH season 1 , promotions and relegations applied" in page
    assert "next: YINSH season 2" in text(f"/seasons/{season.pk}/")
    listed = text("/seasons/")
    assert listed.index("YINSH season 2") < listed.index("YINSH season 1")
    assert "In YINSH season 2 : division 1 of 2" in text("/bots/b03/")


@pytest.mark.django_db
def test_a_season_that_does_not_exist_is_a_404() -> None:
    assert Client().get("/seasons/99/").status_code == 404
    assert Client().get("/seasons/99/standings.csv").status_code == 404
    assert not Season.objects.exists()
