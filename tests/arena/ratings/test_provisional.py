"""Provisional ratings: one definition (``Rating.provisional``), shown on every page that shows
a rating and in the API."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

from arena.ratings.models import Rating
from tests.arena.conftest import make_version
from tests.arena.ratings.test_ladder_and_ratings import rate


@pytest.fixture
def rated(user: Any, other_user: Any, settings: Any) -> tuple[Any, Any]:
    """``settled`` with 25 games, ``newcomer`` with 5 (the threshold is 20)."""
    settings.RATING_PROVISIONAL_GAMES = 20
    settings.LADDER_VARIANTS = ["yinsh"]
    settled = make_version(user, "settled")
    newcomer = make_version(other_user, "newcomer")
    rate(settled, "yinsh", 1400, 25, rank=1)
    rate(newcomer, "yinsh", 1300, 5, rank=2)
    return settled, newcomer


@pytest.mark.django_db
def test_a_rating_from_fewer_games_than_the_setting_is_provisional(
    rated: tuple[Any, Any], settings: Any
) -> None:
    settled, newcomer = rated
    assert not Rating.objects.get(version=settled).provisional
    assert Rating.objects.get(version=newcomer).provisional
    settings.RATING_PROVISIONAL_GAMES = 25
    assert not Rating.objects.get(version=settled).provisional  # 25 games: enough
    settings.RATING_PROVISIONAL_GAMES = 26
    assert Rating.objects.get(version=settled).provisional


def _rows_saying_provisional(html: str) -> list[str]:
    return [row for row in html.split("<tr") if "provisional</small>" in row]


@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/leaderboard/yinsh/", "/"])
def test_the_leaderboard_and_home_page_mark_provisional_ratings(
    rated: tuple[Any, Any], url: str
) -> None:
    html = Client().get(url).content.decode()
    rows = _rows_saying_provisional(html)
    assert len(rows) == 1 and "newcomer" in rows[0]


@pytest.mark.django_db
def test_the_bot_page_marks_a_provisional_rating_and_its_chart_legend(
    rated: tuple[Any, Any],
) -> None:
    from django.utils import timezone

    from arena.ratings.models import RatingPoint

    settled, newcomer = rated
    for v in (settled, newcomer):
        RatingPoint.objects.create(variant="yinsh", version=v, at=timezone.now(), elo=1300, games=5)
    page = Client().get("/bots/newcomer/").content.decode()
    assert len(_rows_saying_provisional(page)) == 1
    assert "newcomer v1 (provisional)" in page  # the chart's legend
    page = Client().get("/bots/settled/").content.decode()
    assert "provisional" not in page


@pytest.mark.django_db
def test_the_api_says_which_ratings_are_provisional(rated: tuple[Any, Any]) -> None:
    board = APIClient().get("/api/ratings/?variant=yinsh").json()["results"]
    assert {(r["bot"], r["provisional"]) for r in board} == {
        ("settled", False),
        ("newcomer", True),
    }
    version = APIClient().get(f"/api/versions/{rated[1].pk}/").json()
    assert version["ratings"][0]["provisional"] is True
    bot = APIClient().get("/api/bots/settled/").json()
    assert bot["versions"][0]["ratings"][0]["provisional"] is False


@pytest.mark.django_db
def test_the_admins_ratings_list_marks_provisional_ones(
    rated: tuple[Any, Any], admin_client: Any
) -> None:
    page = admin_client.get("/admin/ratings/rating/").content.decode()
    assert "provisional" in page and page.count('alt="True"') == 1
