"""The analysis board under a finished match's replay, in the browser at desktop and phone
width: a logged-in user steps to a position, asks the built-in search bot with the keyboard, and
sees its action in the list and on the board; a visitor sees no analysis controls."""

from __future__ import annotations

import time
from typing import Any

import pytest
from playwright.sync_api import expect

import engine
from arena.analysis import services as analysis
from arena.analysis.models import Analysis
from arena.bots import services as bot_services
from arena.games import services as games
from arena.games.models import Match
from tests.arena.conftest import BOTS, make_version
from tests.arena.games.test_matches import queued_match
from tests.browser import assert_fits_the_screen

#: Generous: the machine is shared. Nothing here measures speed.
DEADLINE_S = 120


@pytest.fixture
def finished(user: Any, other_user: Any) -> Match:
    """A game played to its end between two real bots, and the built-in search bot, active."""
    make_version(bot_services.system_user(), "search", folder=BOTS / "search", trusted=True)
    white = make_version(user, "walker", folder=BOTS / "random")
    black = make_version(other_user, "grabber", folder=BOTS / "greedy")
    m = queued_match(white, black)
    assert games.play(m.pk) == "finished"
    return m


def asked() -> Analysis:
    """The request the page made, once it is in the database."""
    deadline = time.monotonic() + DEADLINE_S
    while not Analysis.objects.exists():
        assert time.monotonic() < deadline, "the page asked nothing"
        time.sleep(0.1)
    return Analysis.objects.get()


@pytest.mark.django_db(transaction=True)
def test_search_answers_at_the_ply_shown_in_the_list_and_on_the_board(
    page: Any, site: str, user: Any, log_in: Any, finished: Match
) -> None:
    log_in(user)
    page.goto(f"{site}/matches/{finished.pk}/#ply=12")
    widget = page.locator(".yinsh-replay")
    expect(widget).to_have_attribute("data-replay-state", "ready")
    board = page.locator("section.analysis")
    expect(board).to_be_visible()
    search = board.get_by_label("search v1 (built-in)")
    expect(search).to_be_checked()
    expect(board.locator(".analysis-where")).to_have_text("after ply 12")
    ask = board.get_by_role("button", name="Analyse")
    ask.focus()
    page.keyboard.press("Enter")
    request = asked()
    assert (
        request.history.split()
        == [str(a) for a in engine.Record.parse(finished.data.record).actions][:12]
    )
    assert analysis.run(request.pk) == "answered"  # what a worker does
    request.refresh_from_db()
    answer = board.locator("li.analysis-answer[data-bot=search]")
    expect(answer.locator("code.analysis-action")).to_have_text(request.action)
    expect(answer.locator(".analysis-info")).to_contain_text("depth")
    mark = widget.locator(f"svg g.analysis-mark[data-action='{request.action}']")
    expect(mark).to_have_count(1)
    expect(board.locator(".analysis-status")).to_have_text("Every bot asked has answered.")
    assert_fits_the_screen(page)
    # Another ply: the answer stays in the list, off the board.
    widget.focus()
    page.keyboard.press("ArrowRight")
    expect(board.locator(".analysis-where")).to_have_text("after ply 13")
    expect(mark).to_have_count(0)


@pytest.mark.django_db(transaction=True)
def test_a_visitor_sees_no_analysis_controls(page: Any, site: str, finished: Match) -> None:
    page.goto(f"{site}/matches/{finished.pk}/")
    expect(page.locator(".yinsh-replay")).to_have_attribute("data-replay-state", "ready")
    expect(page.locator("section.analysis")).to_have_count(0)
    expect(page.get_by_role("button", name="Analyse")).to_have_count(0)
    assert_fits_the_screen(page)
