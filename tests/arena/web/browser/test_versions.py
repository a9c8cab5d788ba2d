"""Versions that stay: the owner makes a retired version active again from the bot page; a
visitor sees which ratings are provisional."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from arena.bots.models import BotVersion
from tests.arena.conftest import make_version
from tests.arena.ratings.test_ladder_and_ratings import rate
from tests.browser import assert_fits_the_screen

V = BotVersion.Status


@pytest.mark.django_db(transaction=True)
def test_the_owner_makes_a_retired_version_active_from_the_bot_page(
    page: Any, site: str, user: Any, log_in: Any
) -> None:
    old = make_version(user, "walker", status=V.RETIRED)
    new = make_version(user, "walker")
    log_in(user)
    page.goto(f"{site}/bots/walker/")
    assert_fits_the_screen(page)
    button = page.get_by_role("button", name="Make v1 the active version")
    expect(button).to_be_visible()
    expect(page.get_by_role("button", name="Make v2 the active version")).to_have_count(0)
    button.click()
    page.wait_for_url(f"{site}/bots/walker/")
    expect(page.get_by_text("walker v1 is the active version")).to_be_visible()
    expect(page.locator("#v1").get_by_text("active", exact=True)).to_be_visible()
    expect(page.get_by_role("button", name="Make v2 the active version")).to_be_visible()
    assert_fits_the_screen(page)
    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.status, new.status) == (V.ACTIVE, V.RETIRED)


@pytest.mark.django_db(transaction=True)
def test_a_visitor_sees_no_activate_button(page: Any, site: str, user: Any) -> None:
    make_version(user, "walker", status=V.RETIRED)
    make_version(user, "walker")
    page.goto(f"{site}/bots/walker/")
    expect(page.get_by_role("button", name="Make v1 the active version")).to_have_count(0)


@pytest.mark.django_db(transaction=True)
def test_a_visitor_sees_provisional_ratings_on_the_leaderboard(
    page: Any, site: str, user: Any, other_user: Any, settings: Any
) -> None:
    settings.RATING_PROVISIONAL_GAMES = 20
    rate(make_version(user, "settled"), "yinsh", 1400, 40, rank=1)
    rate(make_version(other_user, "newcomer"), "yinsh", 1300, 3, rank=2)
    page.goto(f"{site}/leaderboard/yinsh/")
    assert_fits_the_screen(page)
    newcomer = page.get_by_role("row").filter(has_text="newcomer")
    settled = page.get_by_role("row").filter(has_text="settled")
    expect(newcomer.get_by_text("provisional")).to_be_visible()
    expect(settled.get_by_text("provisional")).to_have_count(0)
