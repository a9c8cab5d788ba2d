"""The tournaments' migrations: an arena upgraded in place keeps its tournaments as they were."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from arena.referee import formats
from arena.referee.schedule import round_robin
from tests.arena.conftest import make_version
from tests.arena.tournaments.test_tournaments import finish_one

BEFORE_FORMATS = [("tournaments", "0004_status_incomplete"), ("games", "0012_live_move_info")]


@pytest.mark.django_db(transaction=True)
def test_tournaments_made_before_formats_are_round_robins_that_play_on_as_before(
    user: Any,
) -> None:
    entrants = [make_version(user, f"old-{i}") for i in range(3)]
    executor = MigrationExecutor(connection)
    executor.migrate(BEFORE_FORMATS)
    old = executor.loader.project_state(BEFORE_FORMATS).apps
    Tournament = old.get_model("tournaments", "Tournament")
    t = Tournament.objects.create(
        name="Old cup",
        organiser_id=user.pk,
        variant="blitz",
        time_control="5+0.1",
        games_per_pair=2,
    )
    for i, v in enumerate(entrants):
        old.get_model("tournaments", "Entry").objects.create(
            tournament=t, version_id=v.pk, seed=i + 1
        )
    Match = old.get_model("games", "Match")
    for p in round_robin(3, 2):  # as the tournaments made them: all at once, in this order
        Match.objects.create(
            variant="blitz",
            kind="tournament",
            status="queued" if p.number <= 2 else "pending",
            white_id=entrants[p.white].pk,
            black_id=entrants[p.black].pk,
            time_control="5+0.1",
            tournament=t,
            round=p.round,
        )

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())

    from arena.games.models import Match as Current
    from arena.tournaments import services
    from arena.tournaments.models import Tournament as Now

    kept = Now.objects.get(pk=t.pk)
    assert (kept.format, kept.rounds, kept.max_tiebreaks) == ("round-robin", None, 2)
    assert set(kept.matches.values_list("tiebreak", flat=True)) == {0}
    # Its matches are the games its format makes, in that order.
    event = services.event(kept)
    fresh = formats.Event(services.spec_of(kept))
    fresh.advance()
    assert [(g.round, g.white, g.black) for g in event.games] == [
        (g.round, g.white, g.black) for g in fresh.games
    ]
    # It plays on as before: every game released in turn, then finished.
    while (
        m := kept.matches.filter(status=Current.Status.QUEUED).order_by("pk").first()
    ) is not None:
        finish_one(m, "white")
    kept.refresh_from_db()
    assert kept.status == Now.Status.FINISHED and kept.matches.count() == 6
    assert [s.points for s in services.standings(kept)] == [2.0, 2.0, 2.0]
