"""A failing version's games through a real Celery worker: the failures are counted, its owner
is warned and told once (the notification delivered by the worker), and each owner, only,
reads its own bot's log on the match pages."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from django.test import Client

from arena.games import ladder, reliability
from arena.games.models import Match
from arena.notifications.models import Delivery, Event, Notification
from tests.arena.conftest import verified_address, wait_for
from tests.arena.web.test_privacy import DIARY, QUITTER, diary, quitter


@pytest.fixture
def worker_env(worker_env: dict[str, str]) -> Iterator[dict[str, str]]:
    """The worker, which runs the failure watch after each game, flags after two games."""
    worker_env["ARENA_FAILING_MIN_GAMES"] = "2"
    yield worker_env


def page(user: Any, url: str) -> str:
    client = Client()
    if user is not None:
        client.force_login(user)
    return client.get(url).content.decode()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_failing_versions_owner_is_warned_told_once_and_alone_reads_its_log(
    worker: Callable[[], str], user: Any, other_user: Any, settings: Any
) -> None:
    settings.LADDER_TIME_CONTROL = "5+0.1"
    settings.FAILING_MIN_GAMES = 2
    verified_address(user, "alice@example.org")
    bad = quitter(user)  # alice's: exits after three actions
    diary(other_user)  # bob's: writes a private marker to stderr and info
    made = ladder.schedule_variant("yinsh", depth=3)
    ids = [m.pk for m in made]
    assert len(ids) == 4
    wait_for(
        "the ladder games",
        lambda: Match.objects.filter(pk__in=ids, status__in=("finished", "aborted")).count() == 4,
        worker,
    )
    played = list(Match.objects.filter(pk__in=ids))
    assert all(m.status == "finished" and m.termination == "crash" for m in played), [
        (m.pk, m.status, m.reason) for m in played
    ]
    assert all((m.white_id if m.fault == "white" else m.black_id) == bad.pk for m in played)

    # Counted, and the owner told once, by the worker.
    (row,) = reliability.version_failures(bad)
    assert (row.games, row.failures["crash"], row.failing) == (4, 4, True)
    wait_for(
        "the failing notice",
        lambda: Delivery.objects.filter(
            notification__event=Event.VERSION_FAILING, status=Delivery.Status.SENT
        ).exists(),
        worker,
    )
    (notice,) = Notification.objects.filter(event=Event.VERSION_FAILING)
    assert notice.user == user and "quitter v1" in notice.subject
    assert "quitter v1" in worker()  # the console mail backend wrote the email

    # The warning is the owner's; the counts are everyone's.
    assert "Failing often" in page(user, "/bots/quitter/")
    visitor = page(None, "/bots/quitter/")
    assert "Failures and think times" in visitor and "Failing often" not in visitor

    # Each owner reads its own bot's log on the match page, nobody else's.
    url = f"/matches/{played[0].pk}/"
    for viewer, sees_diary, sees_quitter in (
        (None, False, False),
        (user, False, True),
        (other_user, True, False),
    ):
        body = page(viewer, url)
        assert (DIARY in body) == sees_diary, viewer
        assert (QUITTER in body) == sees_quitter, viewer
