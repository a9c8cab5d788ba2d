"""Pages pushed live by their event streams (arena/web/events.py), at desktop and phone width:
a match's board takes the actions as they are written, and a running tournament's page its
games, in the same document (a mark left on ``window`` survives: nothing navigated), without
asking for the live feed again and again."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import transaction
from playwright.sync_api import expect

from arena.games import services as games
from arena.games.models import LiveMove, Match
from arena.jobs import claims
from arena.tournaments import services as tournaments
from tests.arena.conftest import make_version
from tests.arena.games.test_live import play_some, running_match
from tests.arena.games.test_matches import fake_result
from tests.arena.tournaments.test_tournaments import finish_one
from tests.browser import assert_fits_the_screen


@pytest.mark.django_db(transaction=True)
def test_a_live_games_actions_are_pushed_to_its_board(
    page: Any, site: str, user: Any, other_user: Any
) -> None:
    m, attempt = running_match((make_version(user, "pusher"), make_version(other_user, "pushed")))
    play_some(m, attempt, 2)
    feeds: list[str] = []
    page.on("request", lambda r: feeds.append(r.url) if "/live.json" in r.url else None)
    page.goto(f"{site}/matches/{m.pk}/")
    widget = page.locator(".yinsh-replay")
    expect(widget).to_have_attribute("data-live-state", "live")
    expect(widget.locator(".yr-slider")).to_have_value("2")
    page.evaluate("window.__marker = 'still here'")
    for plies in (4, 7):
        # The referee plays on: the same game (same seed), longer.
        with transaction.atomic():
            LiveMove.objects.filter(match=m).delete()
            played = play_some(m, attempt, plies)
        expect(widget).to_have_attribute("data-live-ply", str(plies))
        expect(widget.locator(".yr-slider")).to_have_value(str(plies))
        expect(widget.get_by_role("list", name=re.compile("Moves"))).to_contain_text(
            played[-1].action
        )
    assert_fits_the_screen(page)
    # A stream's lifetime later (a few seconds here: conftest.py), the browser has opened it
    # again and still follows the game.
    with page.expect_response(lambda r: "/live/events" in r.url):
        pass
    with transaction.atomic():
        LiveMove.objects.filter(match=m).delete()
        play_some(m, attempt, 9)
    expect(widget.locator(".yr-slider")).to_have_value("9")
    assert page.evaluate("window.__marker") == "still here"
    assert len(feeds) == 1  # the feed was read once, at the start: the rest was pushed


@pytest.mark.django_db(transaction=True)
def test_a_running_tournaments_page_follows_its_games_without_reloading(
    page: Any, site: str, user: Any
) -> None:
    entrants = [make_version(user, f"entrant-{i}") for i in range(3)]
    t = tournaments.create(
        user,
        name="Pushed cup",
        variant="blitz",
        time_control="5+0.1",
        games_per_pair=1,
        bots=[v.bot for v in entrants],
    )
    page.goto(f"{site}/tournaments/{t.pk}/")
    expect(page.locator("main")).to_contain_text("0 running")
    page.evaluate("window.__marker = 'still here'")
    matches = list(t.matches.filter(status=Match.Status.QUEUED).order_by("pk"))
    attempt = claims.claim(Match, matches[0].pk, "test")
    assert attempt is not None
    expect(page.locator("main")).to_contain_text("1 running")
    assert games.finish(matches[0].pk, attempt, fake_result("blitz"))
    for match in matches[1:]:
        finish_one(match)
    expect(page.locator("main h1 small")).to_have_text("finished")
    expect(page.locator("main")).not_to_have_attribute("data-events", re.compile("."))
    assert page.evaluate("window.__marker") == "still here"
    assert_fits_the_screen(page)


@pytest.mark.django_db(transaction=True)
def test_a_watched_game_that_ends_becomes_a_replay_with_its_analysis_board(
    page: Any, site: str, user: Any, other_user: Any, log_in: Any
) -> None:
    m, attempt = running_match((make_version(user, "ender"), make_version(other_user, "ended")))
    play_some(m, attempt, 2)
    log_in(user)
    page.goto(f"{site}/matches/{m.pk}/")
    widget = page.locator(".yinsh-replay")
    expect(widget).to_have_attribute("data-live-state", "live")
    page.evaluate("window.__marker = 'still here'")
    assert games.finish(m.pk, attempt, fake_result())
    # The page puts the finished game's part in place of the live one, in the same document,
    # and the analysis board under its replay comes with it.
    expect(page.get_by_role("button", name="Analyse")).to_be_visible()
    expect(page.locator(".yinsh-replay")).to_have_attribute("data-replay-state", "ready")
    assert page.evaluate("window.__marker") == "still here"
    assert_fits_the_screen(page)
