"""End to end with a real Celery worker process: upload -> checked -> rated -> downloaded.

The worker is ``celery -A arena worker`` started as a subprocess (not eager mode), with this
test's database, broker, queue and bot store passed in its environment. The test database is
one the worker can see: a SQLite file (the settings give tests a file, not memory) or the
PostgreSQL test database; ``transaction=True`` makes every write visible to it at once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

import engine
from arena.bots import services as bots
from arena.bots.models import BotVersion
from arena.games import ladder
from arena.games.models import Match, MatchRecord
from arena.ratings.models import Rating
from arena.ratings.tasks import refresh_ratings
from tests.arena.conftest import BOTS, make_version, wait_for, zipped_folder


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_upload_check_rate_and_download_through_a_real_worker(
    worker: Callable[[], str], user: Any, settings: Any
) -> None:
    settings.LADDER_TIME_CONTROL = "5+0.1"
    # The built-in anchor bot and a user's upload (through the API) are both checked by the
    # worker.
    (anchor,) = bots.register_builtin_bots(names=["random"])
    from rest_framework.authtoken.models import Token

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    from django.core.files.uploadedfile import SimpleUploadedFile

    r = api.post(
        "/api/bots/",
        {"name": "e2e-greedy", "file": SimpleUploadedFile("g.zip", zipped_folder(BOTS / "greedy"))},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    mine = BotVersion.objects.get(pk=r.json()["id"])

    def checked() -> bool:
        statuses = set(
            BotVersion.objects.filter(pk__in=[anchor.pk, mine.pk]).values_list("status", flat=True)
        )
        assert "rejected" not in statuses, [
            (v.label, v.reason, v.report) for v in BotVersion.objects.all()
        ]
        return statuses == {"active"}

    wait_for("both checks", checked, worker)
    mine.refresh_from_db()
    assert mine.report[-1].startswith("passed")

    # The ladder schedules a pair of matches; the worker plays them.
    match, reverse = ladder.schedule_variant("blitz", depth=1)
    wait_for(
        "the ladder matches",
        lambda: (
            Match.objects.filter(
                pk__in=[match.pk, reverse.pk], status__in=("finished", "aborted")
            ).count()
            == 2
        ),
        worker,
    )
    match.refresh_from_db()
    assert match.status == "finished", (match.reason, worker())
    assert match.worker.startswith("e2e-")

    # The worker fits the ratings (the periodic task, sent by hand here).
    refresh_ratings.apply_async()
    wait_for(
        "the ratings",
        lambda: Rating.objects.filter(variant="blitz", version=mine).exists(),
        worker,
    )
    anchor_rating = Rating.objects.get(variant="blitz", version=anchor)
    assert anchor_rating.elo == settings.RATING_ANCHOR_ELO
    assert Rating.objects.get(variant="blitz", version=mine).games >= 1

    # Everyone can download the record; it is the referee's record, byte for byte.
    data = MatchRecord.objects.get(match=match)
    text = Client().get(f"/matches/{match.pk}/record.txt").content.decode()
    assert text == data.record
    record = engine.Record.parse(text)
    assert record.outcome is not None and record.outcome.result.value == match.result
    assert (
        record.to_text(long=False)
        == Client().get(f"/matches/{match.pk}/record.short.txt").content.decode()
    )
    assert record.headers["White"] in (mine.label, anchor.label)


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_ladder_plays_colour_reversed_pairs_from_one_opening_through_a_real_worker(
    worker: Callable[[], str], user: Any, other_user: Any, settings: Any
) -> None:
    settings.LADDER_TIME_CONTROL = "5+0.1"
    settings.OPENING_PLIES = 4
    a = make_version(user, "pair-a")
    b = make_version(other_user, "pair-b", folder=BOTS / "greedy")
    made = ladder.schedule_variant("yinsh", depth=3)
    assert len(made) == 4  # two pairings, not split: one over the depth
    ids = [m.pk for m in made]
    wait_for(
        "the ladder pairs",
        lambda: Match.objects.filter(pk__in=ids, status__in=("finished", "aborted")).count() == 4,
        worker,
    )
    played = list(Match.objects.filter(pk__in=ids).order_by("pk"))
    assert all(m.status == "finished" for m in played), [(m.pk, m.reason) for m in played]
    openings = []
    for first, second in (played[0:2], played[2:4]):
        assert (first.white_id, first.black_id) == (second.black_id, second.white_id)
        assert {first.white_id, first.black_id} == {a.pk, b.pk}
        assert first.seed == second.seed and first.opening == second.opening
        for m in (first, second):
            data = MatchRecord.objects.get(match=m)
            record = engine.Record.parse(data.record)
            assert record.headers["Opening"] == m.opening
            assert [str(x) for x in record.actions[:4]] == m.opening.split()
            assert data.transcript["opening"] == m.opening.split()
            assert data.transcript["seed"] == m.seed
        openings.append(first.opening)
    assert openings[0] != openings[1]  # each pairing its own opening
