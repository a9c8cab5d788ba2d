"""A visitor follows a season from the list to its divisions, and on to a bot's division."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from arena.games import seasons
from tests.arena.games.test_seasons import play, players


@pytest.mark.django_db(transaction=True)
def test_a_visitor_goes_from_the_seasons_to_a_division_and_a_bots_place_in_it(
    page: Any, site: str, django_user_model: Any
) -> None:
    b = players(django_user_model, 4)
    season = seasons.open_season("yinsh", division_size=2, movers=1, name="Spring")
    play(b[3], b[2], "white", 2)
    page.goto(f"{site}/leaderboard/yinsh/")
    page.get_by_role("link", name="Its divisions and standings").click()
    expect(page.get_by_role("heading", name="Spring")).to_be_visible()
    bottom = page.locator("table").nth(1)
    expect(page.get_by_role("heading", name="Division 2")).to_be_visible()
    expect(bottom.locator("tbody tr").first).to_contain_text("b03 v1")
    expect(bottom.locator("tbody tr").first).to_contain_text("go up")
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the standings (CSV)").click()
    assert download.value.suggested_filename == "season-yinsh-1.csv"
    bottom.get_by_role("link", name="b03 v1").click()
    expect(page.get_by_text("division 2 of 2, rank 1 of 2")).to_be_visible()
    seasons.close_season(season)
    page.goto(f"{site}/seasons/")
    expect(page.get_by_role("cell", name="closed")).to_be_visible()
