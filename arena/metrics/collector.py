"""The arena's facts for Prometheus, read at scrape time from the database and the broker.

The database is the record of every host's work: matches and checks (never deleted, so their
grouped counts are Prometheus counters; trials are left out, as the oldest are deleted), the
sweeper's recoveries (:class:`arena.jobs.models.Recovery`), the periodic tasks' last runs
(:class:`arena.jobs.models.PeriodicRun`) and the workers' heartbeats
(:class:`arena.jobs.models.WorkerBeat`). Each family is one aggregate query; the broker is
asked how many messages wait in the task queue and in the periodic queue.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, QuerySet, Sum
from django.utils import timezone
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from arena.bots.models import BotVersion, VersionStatus
from arena.games.models import Match
from arena.jobs import claims
from arena.jobs.models import PeriodicRun, Recovery, WorkerBeat

__all__ = ["CHECK_BUCKETS", "FORGET_WORKER_AFTER_S", "GAME_BUCKETS", "ArenaCollector"]

#: Upper bounds (seconds) of the buckets of game and check durations.
GAME_BUCKETS = (1.0, 5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
CHECK_BUCKETS = (5.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0, 1800.0, 3600.0)
#: A worker silent this long is left out (its host is gone for good: a replaced container);
#: until then its silence shows, and alerts.
FORGET_WORKER_AFTER_S = 24 * 3600

#: What a finished check's status says of it (a version accepted may be retired since).
_CHECK_OUTCOMES = {
    VersionStatus.ACTIVE: "accepted",
    VersionStatus.RETIRED: "accepted",
    VersionStatus.REJECTED: "rejected",
    VersionStatus.HELD: "held",
}


class ArenaCollector(Collector):
    """Every family of the arena's own metrics (docs/deployment.md lists them)."""

    def collect(self) -> Iterator[Metric]:
        now = timezone.now()
        yield from self.queues()
        yield self.work()
        yield from self.games()
        yield from self.checks()
        yield self.recoveries()
        yield from self.periodic(now)
        yield from self.workers(now)

    def queues(self) -> Iterator[Metric]:
        waiting = GaugeMetricFamily(
            "arena_queue_messages",
            "Messages waiting in the broker (not those workers hold), by queue.",
            labels=["queue"],
        )
        up = 1
        for queue in (settings.CELERY_TASK_DEFAULT_QUEUE, settings.PERIODIC_QUEUE):
            n = claims.waiting_messages(queue)
            if n is None:
                up = 0
            else:
                waiting.add_metric([queue], n)
        yield waiting
        yield GaugeMetricFamily(
            "arena_broker_up", "1 when the broker answered how many messages wait, else 0.", up
        )

    def work(self) -> Metric:
        family = GaugeMetricFamily(
            "arena_work",
            "Work in the database waiting for a worker (queued) or held by one (running), "
            "by kind (games.match, bots.botversion: a check, admission.trial, analysis.analysis).",
            labels=["kind", "state"],
        )
        for model in claims.kinds():
            counts = dict(
                model.objects.filter(status__in=[model.QUEUED, model.RUNNING])
                .order_by()
                .values_list("status")
                .annotate(n=Count("pk"))
            )
            kind = model._meta.label_lower
            family.add_metric([kind, "queued"], counts.get(model.QUEUED, 0))
            family.add_metric([kind, "running"], counts.get(model.RUNNING, 0))
        return family

    def games(self) -> Iterator[Metric]:
        matches = Match.objects.order_by()
        started = CounterMetricFamily(
            "arena_games_started",
            "Games a worker started, by kind of match.",
            labels=["kind"],
        )
        for kind, n in (
            matches.filter(started_at__isnull=False).values_list("kind").annotate(n=Count("pk"))
        ):
            started.add_metric([kind], n)
        yield started
        finished = CounterMetricFamily(
            "arena_games_finished",
            "Games finished, by kind of match, outcome (white, black, draw; aborted: the arena "
            "gave up on it) and ending (a rule's, a bot's failure, or aborted).",
            labels=["kind", "outcome", "ending"],
        )
        for kind, status, result, ending, n in (
            matches.filter(status__in=[Match.Status.FINISHED, Match.Status.ABORTED])
            .values_list("kind", "status", "result", "termination")
            .annotate(n=Count("pk"))
        ):
            finished.add_metric([kind, result or status, ending or "none"], n)
        yield finished
        yield histogram(
            HistogramMetricFamily(
                "arena_game_duration_seconds",
                "Wall-clock time of finished games, by kind of match.",
                labels=["kind"],
            ),
            matches.filter(status=Match.Status.FINISHED, duration_s__isnull=False),
            F("duration_s"),
            GAME_BUCKETS,
            by="kind",
        )

    def checks(self) -> Iterator[Metric]:
        # A remote bot's or a person's version has nothing to check.
        versions = BotVersion.objects.exclude(kind=BotVersion.Kind.REMOTE).order_by()
        yield CounterMetricFamily(
            "arena_checks_started",
            "Checks of bot versions a worker started (a version checked again counts once).",
            versions.filter(started_at__isnull=False).count(),
        )
        outcomes = dict.fromkeys(sorted(set(_CHECK_OUTCOMES.values())), 0)
        for status, n in (
            versions.filter(checked_at__isnull=False, status__in=list(_CHECK_OUTCOMES))
            .values_list("status")
            .annotate(n=Count("pk"))
        ):
            outcomes[_CHECK_OUTCOMES[status]] += n
        finished = CounterMetricFamily(
            "arena_checks_finished",
            "Checks finished, by outcome: accepted, rejected (the bot failed it), held (the "
            "arena could not run it, attempt after attempt: an operator must look).",
            labels=["outcome"],
        )
        for outcome, n in outcomes.items():
            finished.add_metric([outcome], n)
        yield finished
        yield histogram(
            HistogramMetricFamily(
                "arena_check_duration_seconds",
                "Wall-clock time of finished checks (build, conformance and qualification "
                "games), from their last claim.",
            ),
            versions.filter(
                checked_at__isnull=False, started_at__isnull=False, checked_at__gte=F("started_at")
            ),
            ExpressionWrapper(F("checked_at") - F("started_at"), output_field=DurationField()),
            CHECK_BUCKETS,
            duration=True,
        )

    def recoveries(self) -> Metric:
        family = CounterMetricFamily(
            "arena_recoveries",
            "Work the sweeper (or a restarted worker) recovered, by kind of work and action: "
            "requeued (its worker died), given_up (out of attempts), resent (a lost message).",
            labels=["kind", "action"],
        )
        for kind, action, n in (
            Recovery.objects.order_by().values_list("kind", "action").annotate(n=Sum("count"))
        ):
            family.add_metric([kind, action], n)
        return family

    def periodic(self, now: datetime) -> Iterator[Metric]:
        since = GaugeMetricFamily(
            "arena_periodic_seconds_since_finished",
            "Seconds since each periodic task last finished a run (+Inf: never).",
            labels=["task"],
        )
        interval = GaugeMetricFamily(
            "arena_periodic_interval_seconds",
            "How often each periodic task is meant to run.",
            labels=["task"],
        )
        finished = dict(PeriodicRun.objects.values_list("name", "finished_at"))
        for entry in settings.CELERY_BEAT_SCHEDULE.values():
            task = entry["task"]
            last = finished.get(task)
            since.add_metric(
                [task], (now - last).total_seconds() if last is not None else float("inf")
            )
            interval.add_metric([task], entry["schedule"])
        yield since
        yield interval

    def workers(self, now: datetime) -> Iterator[Metric]:
        since = GaugeMetricFamily(
            "arena_worker_seconds_since_beat",
            "Seconds since each worker's last heartbeat (a worker that stopped cleanly is "
            "gone; one that died shows here for a day).",
            labels=["worker"],
        )
        slots = GaugeMetricFamily(
            "arena_worker_concurrency", "Tasks each worker runs at once.", labels=["worker"]
        )
        live = 0
        alive_within = 3 * settings.WORKER_ALIVE_EVERY_S
        for hostname, seen, concurrency in WorkerBeat.objects.filter(
            seen_at__gte=now - timedelta(seconds=FORGET_WORKER_AFTER_S)
        ).values_list("hostname", "seen_at", "concurrency"):
            age = max(0.0, (now - seen).total_seconds())
            since.add_metric([hostname], age)
            slots.add_metric([hostname], concurrency)
            live += age <= alive_within
        yield since
        yield slots
        yield GaugeMetricFamily(
            "arena_workers_live",
            "Workers whose heartbeat is at most three intervals (ARENA_WORKER_ALIVE_EVERY) old.",
            live,
        )


def histogram(
    family: HistogramMetricFamily,
    rows: QuerySet[Any],
    value: Any,
    buckets: Sequence[float],
    *,
    by: str | None = None,
    duration: bool = False,
) -> HistogramMetricFamily:
    """Fill ``family`` from one aggregate query over ``rows``: how many have ``value`` (an
    expression: seconds, or a duration when ``duration``) at most each bucket's bound, their
    sum and count; grouped by the field ``by`` (its label) if given."""

    def bound(seconds: float) -> float | timedelta:
        return timedelta(seconds=seconds) if duration else seconds

    counts = {f"le{i}": Count("pk", filter=Q(_value__lte=bound(b))) for i, b in enumerate(buckets)}
    annotated = rows.annotate(_value=value)
    groups: list[dict[str, Any]]
    if by is None:
        groups = [annotated.aggregate(**counts, _sum=Sum("_value"), _count=Count("pk"))]
    else:
        groups = list(
            annotated.values(by).annotate(**counts, _sum=Sum("_value"), _count=Count("pk"))
        )
    for group in groups:
        total = group["_sum"]
        if isinstance(total, timedelta):
            total = total.total_seconds()
        family.add_metric(
            [group[by]] if by is not None else [],
            [(floatToGoString(b), group[f"le{i}"]) for i, b in enumerate(buckets)]
            + [("+Inf", group["_count"])],
            float(total or 0.0),
        )
    return family
