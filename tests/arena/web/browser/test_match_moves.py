"""A match page lists the game's moves once: the replay's list, once its script has run."""

from __future__ import annotations

from typing import Any

import pytest

from arena.games import services as games
from arena.games.models import Match
from arena.jobs import claims
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import fake_result, queued_match


@pytest.fixture
def finished(user: Any) -> Match:
    m = queued_match(make_version(user, "first"), make_version(user, "second"))
    assert games.finish(m.pk, claims.claim(Match, m.pk), fake_result(result="black"))
    return m


@pytest.mark.django_db(transaction=True)
def test_the_moves_are_listed_once_and_the_result_said_once(
    page: Any, site: str, finished: Match
) -> None:
    page.goto(f"{site}/matches/{finished.pk}/")
    page.locator(".yinsh-replay svg").first.wait_for()
    assert page.get_by_role("list", name="Moves").count() == 1
    assert page.locator("ol.moves").count() == 0  # the page's own list gave way to the replay's
    result = page.locator("tr", has=page.locator("th", has_text="Result")).locator("td")
    assert result.inner_text() == "0-1 (black wins)"
