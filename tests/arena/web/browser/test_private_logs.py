"""A match page as a bot's owner and as a visitor see it: the owner reads its bot's standard
error and ``info`` there; a visitor reads neither."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.db import transaction
from playwright.sync_api import expect

import engine
from arena.games import services as games
from arena.games.models import Match
from tests.arena.conftest import TEST_BOTS, make_version
from tests.arena.games.test_matches import queued_match
from tests.browser import assert_fits_the_screen

#: What the diary bot (tests/data/bots/honest/diary) writes to its stderr and its info.
DIARY = "DIARY-MARKER-5e2b"


@pytest.fixture
def played(user: Any, other_user: Any) -> Match:
    """Alice's diary (white) against Bob's quitter (black, which crashes): a real game."""
    white = make_version(user, "diary", folder=TEST_BOTS / "honest" / "diary")
    black = make_version(other_user, "quitter", folder=TEST_BOTS / "protocol" / "exits_midgame")
    m = queued_match(white, black)
    assert games.play(m.pk) == "finished"
    return m


@pytest.mark.django_db(transaction=True)
def test_the_owner_reads_its_bots_stderr_and_info_on_the_match_page(
    page: Any, site: str, user: Any, log_in: Any, played: Match
) -> None:
    log_in(user)
    page.goto(f"{site}/matches/{played.pk}/")
    log = page.locator("#log-white")
    expect(log.get_by_role("heading", name="White's log")).to_be_visible()
    stderr = log.locator("pre.stderr")
    expect(stderr).to_be_visible()
    expect(stderr).to_contain_text(f"{DIARY} starting in")
    expect(log.locator("table.log-moves")).to_contain_text(DIARY)
    expect(page.locator("#log-black")).to_have_count(0)
    assert "giving up after three actions" not in page.content()
    expect(page.locator(".yinsh-replay svg").first).to_be_visible()
    assert_fits_the_screen(page)


@pytest.mark.django_db(transaction=True)
def test_a_visitor_reads_what_happened_but_no_bots_logs(
    page: Any, site: str, played: Match
) -> None:
    page.goto(f"{site}/matches/{played.pk}/")
    expect(page.locator("td.reason")).to_contain_text("black exited at ply")
    expect(page.locator("section.bot-log")).to_have_count(0)
    expect(page.locator(".yinsh-replay svg").first).to_be_visible()
    assert DIARY not in page.content()
    assert "giving up after three actions" not in page.content()
    assert_fits_the_screen(page)


def replay_at(page: Any, ply: int) -> Any:
    """The match page's replay, once it shows ``ply``."""
    widget = page.locator(".yinsh-replay")
    expect(widget).to_have_attribute("data-replay-state", "ready")
    expect(widget.locator(".yr-slider")).to_have_value(str(ply))
    return widget


@pytest.mark.django_db(transaction=True)
def test_the_owners_panel_beside_the_board_follows_the_ply_shown(
    page: Any, site: str, user: Any, log_in: Any, played: Match, screen: str
) -> None:
    actions = [str(a) for a in engine.Record.parse(played.data.record).actions]
    log_in(user)
    page.goto(f"{site}/matches/{played.pk}/#ply=1")
    widget = replay_at(page, 1)
    panel = widget.locator(".yr-log")
    expect(panel.locator(".yr-log-title")).to_have_text("White's log, ply 1 (" + actions[0] + ")")
    expect(panel.locator(".yr-log-stderr")).to_have_text(
        re.compile(rf"^{DIARY} plays {actions[0]} from \S+\n?$")
    )
    expect(panel.locator(".yr-log-info")).to_contain_text(f"note: {DIARY}")
    expect(panel.locator(".yr-log-think")).to_have_text(re.compile(r"^\d+(\.\d+)? m?s$"))
    widget.press("ArrowRight")  # black's ply: not this owner's bot
    replay_at(page, 2)
    expect(panel).to_contain_text("not your bot")
    expect(panel.locator(".yr-log-stderr")).to_have_count(0)
    page.get_by_role("button", name="Next ply (Right arrow)").click()
    replay_at(page, 3)
    expect(panel.locator(".yr-log-stderr")).to_contain_text(f"{DIARY} plays {actions[2]} ")
    widget.press("Home")
    replay_at(page, 0)
    expect(panel).to_contain_text("Step to a ply")
    board = widget.locator(".yr-board").bounding_box()
    box = panel.bounding_box()
    assert board is not None and box is not None
    if screen == "phone":
        assert box["y"] >= board["y"] + board["height"]  # under the board
    else:
        assert box["x"] >= board["x"] + board["width"]  # beside it
    widget.press("ArrowRight")
    replay_at(page, 1)
    font = panel.locator(".yr-log-stderr").evaluate(
        "(e) => parseFloat(getComputedStyle(e).fontSize)"
    )
    assert font >= 12  # readable on a phone
    assert_fits_the_screen(page)


@pytest.mark.django_db(transaction=True)
def test_a_visitor_gets_no_log_panel_beside_the_board(page: Any, site: str, played: Match) -> None:
    page.goto(f"{site}/matches/{played.pk}/#ply=1")
    widget = replay_at(page, 1)
    expect(widget.locator(".yr-board")).to_be_visible()
    expect(widget.locator(".yr-log")).to_have_count(0)
    assert DIARY not in widget.inner_text()


@pytest.mark.django_db(transaction=True)
def test_a_live_games_info_reaches_its_owners_panel_as_it_arrives_and_no_visitors(
    page: Any, site: str, user: Any, other_user: Any, log_in: Any
) -> None:
    from tests.arena.games.test_live import play_some, running_match

    mine = make_version(user, "live-white")
    theirs = make_version(other_user, "live-black")
    m, attempt = running_match((mine, theirs))
    play_some(m, attempt, 2, info=True)
    log_in(user)
    page.goto(f"{site}/matches/{m.pk}/")
    widget = page.locator(".yinsh-replay")
    panel = widget.locator(".yr-log")
    # The latest ply on the board is black's (not the owner's); the owner steps back to white's.
    expect(widget.locator(".yr-slider")).to_have_value("2")
    widget.get_by_role("button", name=re.compile("Previous")).click()
    expect(panel.locator(".yr-log-info")).to_contain_text("SECRET-white-1")
    # Moves played after the page opened reach it with their info (the same game, written
    # again with three more plies: the same seed plays the same first two).
    from arena.games.models import LiveMove

    with transaction.atomic():
        LiveMove.objects.filter(match=m).delete()
        more = play_some(m, attempt, 5, info=True)
    assert [p.color for p in more] == ["white", "black", "white", "black", "white"]
    widget.get_by_role("button", name=re.compile("Last")).click()
    expect(panel.locator(".yr-log-info")).to_contain_text("SECRET-white-5", timeout=20_000)
    assert "SECRET-black" not in page.content()
    # A visitor sees no panel and no info.
    page.context.clear_cookies()
    page.goto(f"{site}/matches/{m.pk}/")
    expect(widget.locator(".yr-slider")).to_have_value("5")
    expect(panel).to_have_count(0)
    assert "SECRET-" not in page.content()
