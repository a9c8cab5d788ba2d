"""PostgreSQL going away under the arena's long-lived processes (found by the chaos run):
a worker frozen inside a transaction must not hold its rows for ever, and the scheduler must
find the database again after a restart."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.db import connection

from arena.games.models import Match
from arena.jobs import claims, policy
from arena.jobs.sidecar import INLINE, ThreadSidecar
from tests.arena.conftest import make_version
from tests.arena.games.test_matches import queued_match

ROOT = Path(__file__).resolve().parents[3]
M = Match.Status

pytestmark = pytest.mark.skipif(
    os.environ.get("DATABASE_URL", "").split(":", 1)[0] not in ("postgres", "postgresql"),
    reason="PostgreSQL's sessions and row locks (the suite's PostgreSQL run has them)",
)

#: A worker's process, stopped in the middle of a result's transaction: it has written the
#: match's row and holds its lock when it freezes (here: it sleeps, which the server sees the
#: same way, as a session idle in a transaction).
FROZEN_IN_A_TRANSACTION = """
import sys, time
import django
django.setup()
from django.db import transaction
from arena.games.models import Match
with transaction.atomic():
    Match.objects.filter(pk=int(sys.argv[1])).update(plies=1)
    print("locked", flush=True)
    time.sleep(600)
"""


def _server(settings_dict: dict[str, Any]) -> psycopg.Connection[Any]:
    return psycopg.connect(
        host=settings_dict["HOST"] or "127.0.0.1",
        port=settings_dict["PORT"] or 5432,
        user=settings_dict["USER"],
        password=settings_dict["PASSWORD"] or None,
        dbname=settings_dict["NAME"],
        autocommit=True,
    )


@pytest.mark.django_db(transaction=True)
def test_a_worker_frozen_inside_a_transaction_does_not_keep_its_games_from_the_sweeper(
    user: Any, worker_env: dict[str, str]
) -> None:
    white, black = make_version(user, "w"), make_version(user, "b")
    m = queued_match(white, black)
    attempt = claims.claim(Match, m.pk, "frozen@host")
    assert attempt == 1
    env = dict(worker_env, ARENA_DB_IDLE_TRANSACTION_TIMEOUT="2")
    frozen = subprocess.Popen(
        [sys.executable, "-c", FROZEN_IN_A_TRANSACTION, str(m.pk)],
        env=env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert frozen.stdout is not None and frozen.stdout.readline().strip() == "locked"
        with connection.cursor() as cursor:
            # Without a limit on the frozen session, this would wait as long as it sleeps.
            cursor.execute("SET lock_timeout = '60s'")
        assert claims.release(Match, m.pk, attempt, "its worker stopped answering")
        m.refresh_from_db()
        assert m.status == M.QUEUED
        assert m.plies == 0  # the frozen transaction was ended by the server, not committed
    finally:
        with connection.cursor() as cursor:
            cursor.execute("RESET lock_timeout")
        frozen.kill()
        frozen.wait()


def test_the_limit_on_idle_transactions_leaves_room_for_the_longest_honest_one() -> None:
    """The rating refresh's write (the longest transaction) runs statements all along; the
    limit only ends sessions that stopped talking. It is below the heartbeat's staleness, so
    the sweeper never waits for a frozen worker's locks."""
    from django.conf import settings

    options = settings.DATABASES["default"].get("OPTIONS", {})
    assert "idle_in_transaction_session_timeout" in options.get("options", "")
    assert 0 < settings.DB_IDLE_TRANSACTION_TIMEOUT_S < settings.MATCH_STALE_AFTER_S


@pytest.mark.django_db
def test_a_game_played_inside_the_callers_transaction_keeps_its_claim(user: Any) -> None:
    """A caller holding a transaction (a test, a check run by hand in a shell) holds its claim
    where no other session can see it, nor take it: the inline sidecar beats it on the caller's
    own session (a thread's, on a session of its own, would not find the claim and would
    abort the game as lost)."""

    white, black = make_version(user, "w"), make_version(user, "b")
    m = queued_match(white, black)
    attempt = claims.claim(Match, m.pk, "here@host")
    assert attempt == 1
    with INLINE.attach("match", lambda: claims.beat(Match, m.pk, attempt), 0.0) as tended:
        tended.note("an action")
        assert not tended.cancel.is_set()
    m.refresh_from_db()
    assert m.status == M.RUNNING and m.attempts == 1


def _sessions(server: psycopg.Connection[Any], database: str) -> int:
    row = server.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = %s", [database]
    ).fetchone()
    assert row is not None
    return int(row[0])


@pytest.mark.django_db(transaction=True)
def test_the_sidecar_keeps_one_session_from_game_to_game_and_lets_go_of_it(user: Any) -> None:
    """One session for a worker process's sidecar, kept from game to game, closed when it is
    idle or stopped (a test database is dropped only when no session is left on it)."""
    from arena.games import live
    from arena.referee.game import Played

    sidecar = ThreadSidecar()
    sidecar.TICK_S, sidecar.IDLE_CLOSE_S = 0.01, 0.5
    white, black = make_version(user, "w"), make_version(user, "b")
    name = connection.settings_dict["NAME"]

    def wait_for_sessions(n: int) -> None:
        for _ in range(200):
            if _sessions(server, name) == n:
                return
            threading.Event().wait(0.05)
        assert _sessions(server, name) == n

    def game(seed: int) -> None:
        m = queued_match(white, black, seed=seed)
        attempt = claims.claim(Match, m.pk, "here@host")
        assert attempt is not None
        moves = live.Moves(m.pk, attempt)
        with sidecar.attach("match", lambda: claims.beat(Match, m.pk, attempt), 0.01, moves) as t:
            t.note(live.timed(Played(1, "white", "a5", 10, (9990, 10000), "black")))
            for _ in range(200):
                if live.LiveMove.objects.filter(match=m).exists():
                    break
                threading.Event().wait(0.05)
            assert not t.cancel.is_set()
        assert live.LiveMove.objects.filter(match=m).count() == 1

    try:
        with _server(connection.settings_dict) as server:
            before = _sessions(server, name)
            for seed in range(3):
                game(seed)
                assert _sessions(server, name) == before + 1  # the same one, game after game
            wait_for_sessions(before)  # idle: it lets go
            game(3)
            sidecar.stop()
            wait_for_sessions(before)
    finally:
        sidecar.stop()


@pytest.mark.django_db(transaction=True)
def test_the_sidecar_opens_a_new_session_after_the_server_ended_its_own(
    caplog: pytest.LogCaptureFixture,
) -> None:

    sidecar = ThreadSidecar()
    sidecar.TICK_S = 0.01
    sessions: list[int] = []
    seen = threading.Condition()

    def beat() -> bool:
        with connection.cursor() as cursor:  # the sidecar thread's own connection
            cursor.execute("SELECT pg_backend_pid()")
            pid = cursor.fetchone()[0]
        with seen:
            sessions.append(pid)
            seen.notify_all()
        return True

    try:
        with sidecar.attach("match", beat, 0.01) as tended:
            with seen:
                assert seen.wait_for(lambda: sessions, timeout=30)
            first = sessions[0]
            with _server(connection.settings_dict) as server:  # as a restart does
                server.execute("SELECT pg_terminate_backend(%s)", [first])
            with seen:
                assert seen.wait_for(lambda: sessions[-1] != first, timeout=30)
            assert not tended.cancel.is_set()
    finally:
        sidecar.stop()
    assert "match: heartbeat failed" in caplog.text


@pytest.mark.django_db(transaction=True)
def test_a_results_write_finds_the_database_again_after_its_session_ended(user: Any) -> None:
    """A game played while the server restarted is kept: ``policy.retrying`` opens a new
    connection for its next try instead of trying again on the one the server ended."""

    m = queued_match(make_version(user, "w"), make_version(user, "b"))
    attempt = claims.claim(Match, m.pk, "here@host")
    assert attempt is not None
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    with _server(connection.settings_dict) as server:
        server.execute("SELECT pg_terminate_backend(%s)", [pid])
    assert policy.retrying(lambda: claims.beat(Match, m.pk, attempt), tries=2)
