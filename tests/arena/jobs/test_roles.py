"""The match workers' PostgreSQL role: every table declared (granted or denied), the
``worker_role`` command on the test database (what it refuses, idempotent, narrowing), and a
real worker connected as that role, without the site's secret key, checking a bot and playing
a tournament, a test and a challenge while the scheduler delivers the notifications.

The role is cluster-wide: each test makes one with a name of its own and drops it at the end,
so that runs on one PostgreSQL server never meet.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from io import StringIO
from pathlib import Path
from typing import Any

import psycopg
import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.db import connection

from arena.bots import services as bots
from arena.bots.models import BotVersion
from arena.duels import services as duels
from arena.duels.models import Duel
from arena.jobs.roles import DENIED, GRANTS
from arena.notifications.models import Delivery, Event, Notification
from arena.tournaments import services as tournaments
from arena.tournaments.models import Tournament
from tests.arena.conftest import (
    BOTS,
    QUEUE,
    celery_worker,
    make_version,
    packed,
    upload,
    verified_address,
    wait_for,
)

postgres_only = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="PostgreSQL roles: set DATABASE_URL to a PostgreSQL server",
)


def test_every_table_is_granted_to_the_workers_or_denied() -> None:
    tables = {m._meta.db_table for m in apps.get_models(include_auto_created=True)}
    undecided = tables - set(GRANTS) - set(DENIED)
    assert not undecided, f"declare them in arena/jobs/roles.py (GRANTS or DENIED): {undecided}"
    assert not set(GRANTS) & set(DENIED)
    assert set(GRANTS) | set(DENIED) <= tables  # no table that is gone


def test_the_workers_never_get_secrets() -> None:
    for table in ("authtoken_token", "django_session", "notifications_notificationsettings"):
        assert table in DENIED
    assert "notifications_delivery" in DENIED
    assert all(t in DENIED for t in tables_named("axes_"))
    user = GRANTS["auth_user"]
    assert not user.privileges and set(user.select_columns) == {"id", "username"}


def tables_named(prefix: str) -> list[str]:
    return [
        m._meta.db_table
        for m in apps.get_models(include_auto_created=True)
        if m._meta.db_table.startswith(prefix)
    ]


@pytest.mark.django_db
@pytest.mark.skipif(connection.vendor == "postgresql", reason="the SQLite refusal")
def test_the_command_refuses_sqlite() -> None:
    with pytest.raises(CommandError, match="PostgreSQL role; this database is sqlite"):
        call_command("worker_role", "arena_worker")


# ----------------------------------------------------------------------------- on PostgreSQL


@pytest.fixture
def role_name() -> Iterator[str]:
    """A role name of this test's own; the role is dropped at the end (its grants first)."""
    name = f"arena_test_worker_{uuid.uuid4().hex[:8]}"
    yield name
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [name])
        if cursor.fetchone():
            cursor.execute(f'DROP OWNED BY "{name}"')
            cursor.execute(f'DROP ROLE "{name}"')


def url_of(role: str, password: str) -> str:
    db = connection.settings_dict
    host = db.get("HOST") or "127.0.0.1"
    port = db.get("PORT") or 5432
    return f"postgres://{role}:{password}@{host}:{port}/{db['NAME']}"


def refused(url: str, query: str) -> bool:
    """Whether the role at ``url`` is refused ``query`` (permission denied)."""
    with psycopg.connect(url, autocommit=True) as conn:
        try:
            conn.execute(query)
        except psycopg.errors.InsufficientPrivilege:
            return True
    return False


def run(*args: str) -> str:
    out = StringIO()
    call_command("worker_role", *args, stdout=out)
    return out.getvalue()


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_the_worker_role_reads_no_secrets_and_the_command_is_idempotent_and_narrows(
    role_name: str, user: Any, tmp_path: Path
) -> None:
    secret = tmp_path / "password"
    secret.write_text("s3cret-for-the-test\n")
    first = run(role_name, "--password-file", str(secret))
    assert f"role {role_name}: LOGIN" in first
    assert "  auth_user: SELECT (id, username)\n" in first
    assert "notifications_notification: INSERT, SELECT (id)" in first
    url = url_of(role_name, "s3cret-for-the-test")

    for query in (
        "SELECT password FROM auth_user",
        "SELECT email FROM auth_user",
        "SELECT last_login FROM auth_user",
        "SELECT * FROM auth_user",
        "SELECT key FROM authtoken_token",
        "SELECT session_data FROM django_session",
        "SELECT webhook_url FROM notifications_notificationsettings",
        "SELECT target FROM notifications_delivery",
        "SELECT text FROM notifications_notification",
        "UPDATE auth_user SET is_staff = true",
        *(f"SELECT * FROM {t}" for t in tables_named("axes_")),
    ):
        assert refused(url, query), query
    with psycopg.connect(url, autocommit=True) as conn:
        names = conn.execute("SELECT id, username FROM auth_user").fetchall()
        assert (user.pk, user.username) in names
        conn.execute("SELECT status FROM games_match")
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            conn.execute("CREATE TABLE public.mine (x int)")

    # Again: the same grants, and --check agrees.
    assert run(role_name) == first
    assert "its grants are the declared ones" in run(role_name, "--check")

    # A privilege given by hand (or left by an older declaration) is taken back.
    with connection.cursor() as cursor:
        cursor.execute(f'GRANT SELECT ON django_session TO "{role_name}"')
        cursor.execute(f'GRANT SELECT (email) ON auth_user TO "{role_name}"')
    assert not refused(url, "SELECT session_data FROM django_session")
    with pytest.raises(CommandError) as e:
        run(role_name, "--check")
    assert "extra: django_session SELECT" in str(e.value)
    assert "extra: auth_user SELECT (email)" in str(e.value)
    assert run(role_name) == first
    assert refused(url, "SELECT session_data FROM django_session")
    assert refused(url, "SELECT email FROM auth_user")


@postgres_only
@pytest.mark.django_db(transaction=True)
def test_the_command_refuses_bad_input_and_privileged_roles(role_name: str) -> None:
    with pytest.raises(CommandError, match="not a role name"):
        run('x"; DROP TABLE auth_user; --')
    with pytest.raises(CommandError, match="WORKER_PW_UNSET_FOR_TEST is unset"):
        run(role_name, "--password-env", "WORKER_PW_UNSET_FOR_TEST")
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_user")
        (me,) = cursor.fetchone()
        cursor.execute(f'CREATE ROLE "{role_name}" CREATEDB')
    with pytest.raises(CommandError, match="the role this command runs as"):
        run(me)
    with pytest.raises(CommandError, match="privileged role"):
        run(role_name)
    with connection.cursor() as cursor:  # nothing was changed
        cursor.execute("SELECT rolcreatedb FROM pg_roles WHERE rolname = %s", [role_name])
        assert cursor.fetchone() == (True,)


# ----------------------------------------------------------------------------- a real worker


def finished(model: Any, pk: int, statuses: tuple[str, ...]) -> Callable[[], bool]:
    return lambda: model.objects.filter(pk=pk, status__in=statuses).exists()


@postgres_only
@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_on_its_own_role_without_the_secret_key_does_every_kind_of_work(
    role_name: str,
    worker_env: dict[str, str],
    tmp_path: Path,
    user: Any,
    other_user: Any,
    anchor: BotVersion,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    password = uuid.uuid4().hex
    monkeypatch.setenv("ARENA_TEST_WORKER_PASSWORD", password)
    run(role_name, "--password-env", "ARENA_TEST_WORKER_PASSWORD")
    verified_address(user, "alice@example.org")
    restricted = dict(worker_env, DATABASE_URL=url_of(role_name, password))
    restricted.pop("SECRET_KEY", None)
    scheduler_env = dict(worker_env)  # the site's own role: the notifications' tasks

    with (
        celery_worker(restricted, tmp_path / "worker.log", [QUEUE]) as tail,
        celery_worker(
            scheduler_env, tmp_path / "scheduler.log", [f"{QUEUE}.periodic"], pool="threads"
        ) as scheduler,
    ):

        def log() -> str:
            """The worker's log; the test fails at once when the role lacked a right."""
            text = tail()
            assert "InsufficientPrivilege" not in text, text
            return text

        # A check: the uploaded version plays its qualification games and becomes active.
        mine = bots.create_bot(user, "walker", upload(packed(BOTS / "greedy"), "walker.tar.gz"))
        wait_for("the check", finished(BotVersion, mine.pk, ("active", "rejected", "held")), log)
        mine.refresh_from_db()
        assert mine.status == BotVersion.Status.ACTIVE, (mine.reason, mine.report, log())

        # Its owner is told: the worker wrote the inbox entry, the scheduler the e-mail.
        wait_for(
            "the check's e-mail",
            lambda: Delivery.objects.filter(
                notification__event=Event.CHECK_FINISHED,
                notification__user=user,
                status=Delivery.Status.SENT,
            ).exists(),
            scheduler,
        )
        assert Notification.objects.filter(user=user, event=Event.CHECK_FINISHED).exists()

        # A tournament, to its end.
        rival = make_version(other_user, "rival", folder=BOTS / "random", trusted=True)
        t = tournaments.create(
            user,
            name="Role cup",
            variant="blitz",
            time_control="5+0.1",
            games_per_pair=1,
            bots=[mine.bot, rival.bot],
        )
        wait_for(
            "the tournament",
            finished(Tournament, t.pk, ("finished", "incomplete", "cancelled")),
            log,
        )
        t.refresh_from_db()
        assert t.status == "finished", (list(t.matches.values_list("status", "reason")), log())

        # A challenge of someone else's bot, and a test against the anchor.
        challenge = duels.start_challenge(
            user, mine, rival, variant="blitz", time_control="5+0.1", games=2
        )
        wait_for("the challenge", finished(Duel, challenge.pk, ("finished", "cancelled")), log)
        test = duels.start_test(
            user, mine, anchor, variant="blitz", time_control="5+0.1", max_games=2
        )
        wait_for("the test", finished(Duel, test.pk, ("finished", "cancelled")), log)
        for duel in (challenge, test):
            duel.refresh_from_db()
            assert duel.status == Duel.Status.FINISHED and duel.played == 2, (duel.counts, log())

        log()
