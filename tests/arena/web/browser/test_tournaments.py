"""Organising a tournament in any format, and reading a knockout's bracket, at desktop and
phone width."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from arena.games.models import Match
from arena.tournaments import services
from arena.tournaments.models import Tournament
from tests.arena.conftest import make_version
from tests.arena.tournaments.test_tournaments import finish_one
from tests.browser import accessibility_violations, assert_fits_the_screen


@pytest.mark.django_db(transaction=True)
def test_the_form_shows_only_the_chosen_formats_fields(
    page: Any, site: str, user: Any, log_in: Any
) -> None:
    for name in ("alpha", "bravo", "charlie"):
        make_version(user, name)
    log_in(user)
    page.goto(f"{site}/tournaments/new/")
    rounds, seed = page.locator('input[name="rounds"]'), page.locator('select[name="seed"]')
    expect(rounds).to_be_hidden()  # a round robin: neither a Swiss's nor a gauntlet's fields
    expect(seed).to_be_hidden()
    expect(rounds).to_be_disabled()  # hidden fields are neither required nor sent
    page.get_by_label("Format").select_option("swiss")
    expect(rounds).to_be_visible()
    expect(seed).to_be_hidden()
    page.get_by_label("Format").select_option("gauntlet")
    expect(rounds).to_be_hidden()
    expect(seed).to_be_visible()
    assert_fits_the_screen(page)
    page.get_by_label("Name").fill("Gauntlet of charlie")
    seed.select_option(label="charlie")
    for name in ("alpha", "bravo", "charlie"):
        page.get_by_label(name, exact=False).first.check()
    page.get_by_role("button", name="Start the tournament").click()
    page.wait_for_url("**/tournaments/*/")
    t = Tournament.objects.get()
    assert t.format == "gauntlet" and t.entries.get(seed=1).version.bot.name == "charlie"
    expect(page.get_by_role("heading", name="The seed against each")).to_be_visible()


@pytest.mark.django_db(transaction=True)
def test_a_knockouts_bracket_reads_on_the_screen_with_its_champion(
    page: Any, site: str, user: Any, screen: str
) -> None:
    bots = [make_version(user, f"{'long-' * 6}{i}").bot for i in range(6)]
    t = services.create(
        user,
        name="Knockout",
        variant="blitz",
        time_control="5+0.1",
        games_per_pair=2,
        bots=bots,
        format="knockout",
    )
    while (m := t.matches.filter(status=Match.Status.QUEUED).first()) is not None:
        finish_one(m, "white" if m.pk % 3 else "black")
    page.goto(f"{site}/tournaments/{t.pk}/")
    expect(page.get_by_text("Champion:")).to_be_visible()
    rounds = page.locator(".bracket-round")
    expect(rounds).to_have_count(3)
    for name in ("Quarter-finals", "Semi-finals", "Final"):
        expect(page.get_by_role("heading", name=name, exact=True)).to_be_visible()
    assert_fits_the_screen(page)
    first, last = rounds.first.bounding_box(), rounds.last.bounding_box()
    assert first is not None and last is not None
    if screen == "phone":  # the rounds one under another
        assert last["y"] > first["y"] and abs(last["x"] - first["x"]) < 1
    else:  # side by side, the final last
        assert last["x"] > first["x"]
    assert accessibility_violations(page) == []
