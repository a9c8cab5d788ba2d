"""``GET /metrics``: the token, and the arena's facts as Prometheus reads them, on the same
database and broker as every other test (SQLite and the embedded broker, or PostgreSQL and
Redis)."""

from __future__ import annotations

import importlib
import math
import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from arena.bots.models import BotVersion
from arena.celery import app as celery_app
from arena.games.models import Match
from arena.jobs import tasks, workers
from arena.jobs.models import PeriodicRun, Recovery, WorkerBeat
from arena.jobs.periodic import periodic
from arena.referee.outcomes import Failure
from tests.arena.conftest import make_version
from tests.arena.metrics.conftest import TOKEN, Samples, names, value

pytestmark = pytest.mark.django_db

S = Match.Status
V = BotVersion.Status


# ----------------------------------------------------------------------------- the token


def test_the_metrics_do_not_exist_without_a_token(client: Client, settings: Any) -> None:
    settings.METRICS_TOKEN = ""
    response = client.get("/metrics", headers={"Authorization": "Bearer "})
    assert response.status_code == 404


@pytest.mark.parametrize(
    "authorization",
    [None, "", "Bearer", "Bearer ", "Bearer wrong", f"Basic {TOKEN}", TOKEN, f"Bearer {TOKEN}x"],
)
def test_the_metrics_refuse_a_missing_or_wrong_token(
    client: Client, metrics_token: str, authorization: str | None
) -> None:
    headers = {"Authorization": authorization} if authorization is not None else {}
    response = client.get("/metrics", headers=headers)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")
    assert b"arena_" not in response.content
    assert "Set-Cookie" not in response


def test_the_metrics_answer_only_get(client: Client, metrics_token: str) -> None:
    response = client.post("/metrics", headers={"Authorization": f"Bearer {metrics_token}"})
    assert response.status_code == 405


def test_a_scraper_is_not_held_to_the_rate_of_pages(
    client: Client, settings: Any, scrape: Callable[[], Samples]
) -> None:
    settings.THROTTLE_RATES = dict(settings.THROTTLE_RATES, pages="2/minute")
    for _ in range(4):
        scrape()


# ----------------------------------------------------------------------------- the facts


def test_games_checks_work_and_recoveries_are_counted_from_the_database(
    user: Any, anchor: BotVersion, scrape: Callable[[], Samples]
) -> None:
    now = timezone.now()
    bot = make_version(user, "mine")

    def match(status: str, **fields: Any) -> Match:
        fields.setdefault("kind", Match.Kind.LADDER)
        return Match.objects.create(
            variant="yinsh", status=status, white=bot, black=anchor, time_control="5+0", **fields
        )

    played = {"started_at": now - timedelta(minutes=5), "finished_at": now, "attempts": 1}
    match(S.FINISHED, result="white", termination="rows", duration_s=12.0, **played)
    match(S.FINISHED, result="black", termination=Failure.TIME, duration_s=40.0, **played)
    match(
        S.FINISHED,
        result="draw",
        termination="pool-exhausted",
        duration_s=700.0,
        kind=Match.Kind.QUALIFICATION,
        **played,
    )
    match(S.ABORTED, termination=Failure.ABORTED, **played)
    match(S.QUEUED)
    match(S.CANCELLED)
    # A worker died holding this one: the sweeper queues it again.
    match(S.RUNNING, started_at=now, heartbeat_at=now - timedelta(hours=1), attempts=1)
    match(S.RUNNING, started_at=now, heartbeat_at=now + timedelta(hours=1), attempts=1)

    def version(status: str, seconds: float | None) -> None:
        v = make_version(user, f"checked-{uuid.uuid4().hex[:6]}", status=status)
        checked = now + timedelta(seconds=seconds) if seconds is not None else None
        BotVersion.objects.filter(pk=v.pk).update(started_at=now, checked_at=checked)

    version(V.ACTIVE, 100)
    version(V.RETIRED, 20)
    version(V.REJECTED, 25)
    version(V.HELD, 700)
    version(V.CHECKING, None)

    tasks.sweep()
    samples = scrape()

    assert value(samples, "arena_games_started_total", kind="ladder") == 5
    assert value(samples, "arena_games_started_total", kind="qualification") == 1
    finished = {
        (s["kind"], s["outcome"], s["ending"]): value(samples, "arena_games_finished_total", **s)
        for s in names(samples, "arena_games_finished_total")
    }
    assert finished == {
        ("ladder", "white", "rows"): 1,
        ("ladder", "black", "time"): 1,
        ("qualification", "draw", "pool-exhausted"): 1,
        ("ladder", "aborted", "aborted"): 1,
    }
    ladder = {"kind": "ladder"}
    buckets = {
        float(s["le"]): value(samples, "arena_game_duration_seconds_bucket", **s)
        for s in names(samples, "arena_game_duration_seconds_bucket")
        if s["kind"] == "ladder"
    }
    assert (buckets[5.0], buckets[15.0], buckets[30.0], buckets[60.0]) == (0, 1, 1, 2)
    assert buckets[math.inf] == 2
    assert value(samples, "arena_game_duration_seconds_sum", **ladder) == 52.0
    assert value(samples, "arena_game_duration_seconds_count", **ladder) == 2
    qualification = {"kind": "qualification"}
    assert value(samples, "arena_game_duration_seconds_count", **qualification) == 1
    assert value(samples, "arena_game_duration_seconds_bucket", le="600.0", **qualification) == 0
    assert value(samples, "arena_game_duration_seconds_bucket", le="1800.0", **qualification) == 1

    assert value(samples, "arena_checks_started_total") == 5
    assert value(samples, "arena_checks_finished_total", outcome="accepted") == 2
    assert value(samples, "arena_checks_finished_total", outcome="rejected") == 1
    assert value(samples, "arena_checks_finished_total", outcome="held") == 1
    assert value(samples, "arena_check_duration_seconds_count") == 4
    assert value(samples, "arena_check_duration_seconds_sum") == 845.0
    assert value(samples, "arena_check_duration_seconds_bucket", le="15.0") == 0
    assert value(samples, "arena_check_duration_seconds_bucket", le="30.0") == 2
    assert value(samples, "arena_check_duration_seconds_bucket", le="120.0") == 3
    assert value(samples, "arena_check_duration_seconds_bucket", le="600.0") == 3
    assert value(samples, "arena_check_duration_seconds_bucket", le="+Inf") == 4

    def work(kind: str, state: str) -> float:
        return value(samples, "arena_work", kind=kind, state=state)

    assert (work("games.match", "queued"), work("games.match", "running")) == (2, 1)
    assert (work("bots.botversion", "queued"), work("bots.botversion", "running")) == (0, 1)
    assert (work("admission.trial", "queued"), work("admission.trial", "running")) == (0, 0)

    assert value(samples, "arena_recoveries_total", kind="games.match", action="requeued") == 1
    assert names(samples, "arena_recoveries_total") == [
        {"kind": "games.match", "action": "requeued"}
    ]


def test_recoveries_add_up_over_sweeps(scrape: Callable[[], Samples]) -> None:
    now = timezone.now()
    Recovery.objects.create(at=now, kind="games.match", action="resent", count=3)
    Recovery.objects.create(at=now, kind="games.match", action="resent", count=2)
    Recovery.objects.create(at=now, kind="bots.botversion", action="given_up", count=1)
    samples = scrape()
    assert value(samples, "arena_recoveries_total", kind="games.match", action="resent") == 5
    assert value(samples, "arena_recoveries_total", kind="bots.botversion", action="given_up") == 1


def test_the_queue_depth_is_the_brokers_count_of_each_queue(
    settings: Any, scrape: Callable[[], Samples]
) -> None:
    queue = f"metrics-test-{uuid.uuid4().hex[:8]}"
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    settings.PERIODIC_QUEUE = f"{queue}.periodic"
    with celery_app.connection_for_write() as conn:
        simple = conn.SimpleQueue(queue)
        try:
            for n in range(3):
                simple.put({"n": n})
            samples = scrape()
            assert value(samples, "arena_queue_messages", queue=queue) == 3
            assert value(samples, "arena_queue_messages", queue=f"{queue}.periodic") == 0
            assert value(samples, "arena_broker_up") == 1
        finally:
            simple.queue.purge()
            simple.close()


def test_each_periodic_task_shows_the_seconds_since_it_last_finished(
    scrape: Callable[[], Samples], settings: Any
) -> None:
    tasks.sweep()
    samples = scrape()
    schedule = {
        entry["task"]: entry["schedule"] for entry in settings.CELERY_BEAT_SCHEDULE.values()
    }
    for task, interval in schedule.items():
        assert value(samples, "arena_periodic_interval_seconds", task=task) == interval
        since = value(samples, "arena_periodic_seconds_since_finished", task=task)
        if task == "arena.jobs.tasks.sweep":
            assert 0 <= since < math.inf
        else:
            assert since == math.inf  # never ran


def test_every_periodic_task_records_its_runs_under_its_own_name(settings: Any) -> None:
    for entry in settings.CELERY_BEAT_SCHEDULE.values():
        module, _, name = entry["task"].rpartition(".")
        task = getattr(importlib.import_module(module), name)
        assert task.name == entry["task"]
        wrapped = task.run.__wrapped__  # what arena.jobs.periodic.periodic wrapped
        assert f"{wrapped.__module__}.{wrapped.__name__}" == entry["task"]


def test_a_failed_run_keeps_the_last_finish() -> None:
    calls = []

    @periodic
    def flaky(fail: bool) -> int:
        calls.append(fail)
        if fail:
            raise RuntimeError("the machine failed")
        return 1

    name = f"{__name__}.flaky"
    assert flaky(False) == 1
    first = PeriodicRun.objects.get(name=name)
    assert first.finished_at is not None and first.finished_at >= first.started_at
    with pytest.raises(RuntimeError):
        flaky(True)
    second = PeriodicRun.objects.get(name=name)
    assert second.started_at > first.started_at
    assert second.finished_at == first.finished_at
    assert calls == [False, True]


def test_workers_show_their_silence_and_the_live_ones_are_counted(
    settings: Any, scrape: Callable[[], Samples]
) -> None:
    settings.WORKER_ALIVE_EVERY_S = 3600  # live: a beat within three hours
    now = timezone.now()
    assert workers.beat("live@host", now, 4)
    for hostname, silent in (("dead@host", timedelta(hours=12)), ("gone@host", timedelta(days=2))):
        WorkerBeat.objects.create(
            hostname=hostname, started_at=now - silent, seen_at=now - silent, concurrency=2
        )
    samples = scrape()
    assert value(samples, "arena_workers_live") == 1
    assert {s["worker"] for s in names(samples, "arena_worker_seconds_since_beat")} == {
        "live@host",
        "dead@host",
    }
    assert value(samples, "arena_worker_seconds_since_beat", worker="dead@host") >= 12 * 3600
    assert value(samples, "arena_worker_concurrency", worker="live@host") == 4
    # Its next beat writes the same row; a worker that stops removes its own.
    assert workers.beat("live@host", now, 4)
    assert WorkerBeat.objects.filter(hostname="live@host").count() == 1
    workers.stopped("live@host")
    assert value(scrape(), "arena_workers_live") == 0
    assert not WorkerBeat.objects.filter(hostname="live@host").exists()


# ----------------------------------------------------------------------------- the web server


def test_request_latency_is_observed_by_route_never_by_raw_path(
    client: Client, scrape: Callable[[], Samples]
) -> None:
    def count(samples: Samples, route: str, status: str) -> float:
        labels = {"method": "GET", "route": route, "status": status}
        return samples.get(
            ("arena_http_request_duration_seconds_count", tuple(sorted(labels.items()))), 0.0
        )

    before = scrape()
    assert client.get("/healthz").status_code == 200
    assert client.get("/no-such-page-12345").status_code == 404
    assert client.get("/bots/no-such-bot-12345/").status_code == 404
    after = scrape()
    assert count(after, "healthz", "2xx") == count(before, "healthz", "2xx") + 1
    assert count(after, "unresolved", "4xx") >= count(before, "unresolved", "4xx") + 1
    routes = {s["route"] for s in names(after, "arena_http_request_duration_seconds_count")}
    assert not any("12345" in route for route in routes)
    assert any(route.startswith("bots/<") for route in routes), routes
