"""What a first-time visitor reads: pages and API answers that say what they mean, once."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from arena.bots.models import BotVersion
from arena.games.models import Match
from arena.tournaments import services as tournaments
from tests.arena.conftest import make_version
from tests.arena.test_tournaments import finish_one, start


def bot_row(page: str, name: str) -> str:
    start_at = page.index(f'href="/bots/{name}/"')
    return page[start_at : page.index("</tr>", start_at)]


@pytest.mark.django_db
def test_the_bot_list_calls_a_bot_active_only_when_a_version_plays(user: Any) -> None:
    make_version(user, "refused", status=BotVersion.Status.REJECTED)
    make_version(user, "waiting", status=BotVersion.Status.PENDING)
    make_version(user, "playing")
    page = Client().get("/bots/").content.decode()
    assert "<td>rejected</td>" in bot_row(page, "refused")
    assert ">active<" not in bot_row(page, "refused")
    assert "<td>waiting for its check</td>" in bot_row(page, "waiting")
    assert "<td>active</td>" in bot_row(page, "playing")


@pytest.mark.django_db
def test_tournament_progress_counts_finished_games_and_cancelled_apart(
    user: Any, settings: Any
) -> None:
    entrants = [make_version(user, f"cup-{i}") for i in range(3)]
    t = start(user, entrants, games_per_pair=2)
    finish_one(t.matches.filter(status=Match.Status.QUEUED).first())
    assert tournaments.cancel(user, t)
    progress = tournaments.progress(t)
    assert (progress.total, progress.finished, progress.cancelled) == (6, 1, 5)
    assert progress.done == 1 and round(progress.percent) == 17
    page = Client().get(f"/tournaments/{t.pk}/").content.decode()
    assert "1 of 6 games finished" in page and "5 cancelled" in page
    assert "6 of 6" not in page
    assert 'aria-valuenow="1"' in page
