"""A match page as a bot's owner and as a visitor see it: the owner reads its bot's standard
error and ``info`` there; a visitor reads neither."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

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
