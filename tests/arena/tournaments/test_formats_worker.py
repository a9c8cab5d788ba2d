"""Every tournament format played to its end by a real Celery worker: the rounds a Swiss and a
knockout make as games end come from the worker's own transactions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import engine
from arena.games.models import Match, MatchRecord
from arena.notifications.models import Notification
from arena.tournaments import services
from arena.tournaments.models import Tournament
from tests.arena.conftest import BOTS, make_version, wait_for

#: Each format, with what it is given; all played at once by one worker.
FORMATS: list[tuple[str, dict[str, Any]]] = [
    ("round-robin", {"games_per_pair": 1}),
    ("double-round-robin", {"games_per_pair": 1}),
    ("swiss", {"games_per_pair": 1, "rounds": 2}),
    ("gauntlet", {"games_per_pair": 2}),
    ("knockout", {"games_per_pair": 2}),
]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_every_format_is_played_to_its_end_by_a_real_worker(
    worker: Callable[[], str], user: Any
) -> None:
    versions = [
        make_version(user, "w-random"),
        make_version(user, "w-greedy", folder=BOTS / "greedy"),
        make_version(user, "w-random-2"),
        make_version(user, "w-greedy-2", folder=BOTS / "greedy"),
    ]
    made = {
        fmt: services.create(
            user,
            name=f"Worker {fmt}",
            variant="blitz",
            time_control="2+0.05",
            bots=[v.bot for v in (versions if fmt == "swiss" else versions[:3])],
            format=fmt,
            **kw,
        )
        for fmt, kw in FORMATS
    }
    ids = [t.pk for t in made.values()]
    wait_for(
        "every tournament",
        lambda: not Tournament.objects.filter(pk__in=ids, status="running").exists(),
        worker,
    )
    for fmt, t in made.items():
        t.refresh_from_db()
        matches = list(t.matches.order_by("pk"))
        assert t.status == "finished", (fmt, [(m.pk, m.status, m.reason) for m in matches])
        assert {m.status for m in matches} == {Match.Status.FINISHED}
        for m in matches:  # each record names the game's round, tie-breaks as "1.1"
            record = engine.Record.parse(MatchRecord.objects.get(match=m).record)
            assert record.headers["Round"] == m.round_label
            assert record.headers["Event"] == t.name
        table = services.standings(t)
        assert sum(s.games for s in table) == 2 * len(matches)
        ev = services.event(t)
        assert ev.finished and [(g.round, g.tiebreak) for g in ev.games] == [
            (m.round, m.tiebreak) for m in matches
        ]
        note = Notification.objects.filter(user=user, data__tournament=t.pk).get()
        assert note.data["format"] == fmt and note.data["winner"] is not None
    swiss = made["swiss"]
    assert set(swiss.matches.values_list("round", flat=True)) == {1, 2}  # made as it went
    assert swiss.matches.count() == 4
    knockout = services.bracket(made["knockout"])
    assert knockout is not None and knockout.champion is not None
    assert made["knockout"].byes.count() == 1  # three bots: the top seed's bye
    gauntlet = services.gauntlet(made["gauntlet"], services.standings(made["gauntlet"]))
    assert gauntlet is not None and [s.score.games for s in gauntlet.scores] == [2, 2]
