"""A worker keeps its database connection from game to game (``CELERY_DB_REUSE_MAX`` and
``arena.celery.tidy_connections``): Celery's Django fix-up alone opens a new one for every
task, about 10 ms of each game on PostgreSQL."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from arena.games.models import Match
from arena.jobs import claims
from tests.arena.conftest import make_version, wait_for
from tests.arena.games.test_matches import queued_match

GAMES = 8


def sessions_opened() -> int:
    """How many sessions PostgreSQL has opened on this database so far."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_force_next_flush()")
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return int(cursor.fetchone()[0])


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_plays_game_after_game_on_the_same_database_connection(
    worker: Callable[[], str], user: Any
) -> None:
    if connection.vendor != "postgresql":
        pytest.skip("counts PostgreSQL's sessions (SQLite's connections are files opened)")
    white, black = make_version(user, "white-bot"), make_version(user, "black-bot")
    matches = [queued_match(white, black, seed=i) for i in range(GAMES)]
    wait_for("the worker to be ready", lambda: " ready." in worker(), worker)
    before = sessions_opened()
    for m in matches:
        claims.dispatch(m)
    done = Match.objects.filter(pk__in=[m.pk for m in matches], status=Match.Status.FINISHED)
    wait_for(f"{GAMES} games", lambda: done.count() == GAMES, worker)
    # The worker's process, its live moves' writer, now and then a heartbeat: a few sessions,
    # not one or more a game.
    assert sessions_opened() - before <= 3, worker()


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_whose_sessions_were_ended_plays_its_next_game_at_once(
    worker: Callable[[], str], user: Any
) -> None:
    """A kept connection the server has ended (a restart) is found out before the next task
    uses it (``CONN_HEALTH_CHECKS``): the game is played, not retried ten seconds later."""
    if connection.vendor != "postgresql":
        pytest.skip("ends the worker's PostgreSQL sessions")
    white, black = make_version(user, "white-bot"), make_version(user, "black-bot")
    first, second = (queued_match(white, black, seed=i) for i in range(2))
    finished = Match.objects.filter(status=Match.Status.FINISHED)
    claims.dispatch(first)
    wait_for("the first game", lambda: finished.filter(pk=first.pk).exists(), worker)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        assert cursor.fetchone()[0] >= 1  # the worker's kept connection
    claims.dispatch(second)
    wait_for("the second game", lambda: finished.filter(pk=second.pk).exists(), worker)
    log = worker()
    assert "Retry in" not in log and "OperationalError" not in log, log
