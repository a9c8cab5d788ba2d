"""The one claim of every kind of work (:class:`~arena.jobs.models.ClaimedWork`): send, claim,
beat, give back, and the sweeper that recovers the work of dead workers and lost messages.

Every change here is an ``UPDATE`` guarded by the status it expects and, for work a worker
holds, by the claim's attempt number: of two workers claiming at once exactly one changes the
row, and a worker whose claim was given to another writes nothing.

The sweeper runs as the periodic ``sweep`` task and when a worker starts
(:func:`recover_worker` takes back at once the work of that worker's previous life);
:func:`resend_queued` runs when ``runarena`` starts on the embedded broker, which can lose the
messages a killed worker had taken. For every kind of work:

* RUNNING work whose heartbeat is older than ``MATCH_STALE_AFTER_S`` goes back to the queue;
  after ``MATCH_MAX_ATTEMPTS`` claims it is given up (a match aborted, not counted; a version
  held for an operator, never rejected: a dead worker is not the bot's fault);
* QUEUED work nobody claimed for ``MATCH_RESEND_AFTER_S`` has its task sent again (the claim
  makes a duplicate harmless); after only ``BROKER_RESEND_AFTER_S`` when the broker holds fewer
  messages than there is queued work (it lost them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, TypeVar

from celery import current_app
from django.apps import apps
from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from kombu.exceptions import ChannelError
from kombu.exceptions import OperationalError as KombuOperationalError

from arena.jobs.models import ClaimedWork, Recovery

__all__ = [
    "Swept",
    "beat",
    "claim",
    "dispatch",
    "kinds",
    "recover_worker",
    "release",
    "resend_queued",
    "send_after_commit",
    "sweep",
    "waiting_messages",
]

log = logging.getLogger(__name__)
W = TypeVar("W", bound=ClaimedWork)


def kinds() -> list[type[ClaimedWork]]:
    """Every kind of claimed work the installed apps define."""
    return [m for m in apps.get_models() if issubclass(m, ClaimedWork)]


# ----------------------------------------------------------------------------- sending


def send_after_commit(
    name: str, args: tuple[int, ...], *, soft: int, hard: int, queue: str | None = None
) -> None:
    """Send the task called ``name`` with these arguments (primary keys) once the current
    transaction commits (at once outside one), with these soft and hard time limits, to
    ``queue`` (the match queue when None).

    If the broker cannot be reached the error is logged (``robust``) and the sweeper sends
    the task again later: the claims make a duplicate harmless.
    """

    def send() -> None:
        if queue:
            current_app.send_task(
                name, args=args, soft_time_limit=soft, time_limit=hard, queue=queue
            )
        else:  # Celery's routing: a queue given as None is not the default queue
            current_app.send_task(name, args=args, soft_time_limit=soft, time_limit=hard)

    transaction.on_commit(send, robust=True)


def dispatch(work: ClaimedWork) -> None:
    """Send the work's task once the current transaction commits, with its time limits, to
    its queue."""
    soft, hard = work.time_limits()
    send_after_commit(work.TASK, (work.pk,), soft=soft, hard=hard, queue=work.queue())


def waiting_messages(queue: str | None = None) -> int | None:
    """How many messages wait in a queue of the broker (not those workers hold): the task
    queue unless another is named; None when the broker cannot be asked. A queue the broker
    does not know holds none (a Redis that restarted without its data)."""
    queue = queue or current_app.conf.task_default_queue
    try:
        with current_app.connection_for_read() as conn:
            channel: Any = conn.default_channel  # a kombu virtual channel (Redis, SQLAlchemy)
            return int(channel.queue_declare(queue=queue, passive=True)[1])
    except ChannelError:
        return 0
    except (OSError, KombuOperationalError) as e:
        log.warning("cannot count the broker's messages: %s", e)
        return None


# ----------------------------------------------------------------------------- the claim


def claim(
    model: type[ClaimedWork], pk: int, worker: str = "", *, seen_attempts: int | None = None
) -> int | None:
    """QUEUED -> RUNNING for this worker. Returns the claim's attempt number, or None when the
    work is not queued (another worker has it, or it was cancelled).

    ``seen_attempts`` is the work's attempt count as the caller read it (saves a query).
    """
    seen = seen_attempts
    if seen is None:
        seen = next(
            iter(
                model.objects.filter(pk=pk, status=model.QUEUED).values_list("attempts", flat=True)
            ),
            None,
        )
        if seen is None:
            return None
    now = timezone.now()
    taken = model.objects.filter(pk=pk, status=model.QUEUED, attempts=seen).update(
        status=model.RUNNING,
        started_at=now,
        heartbeat_at=now,
        worker=worker[:200],
        attempts=seen + 1,
    )
    return seen + 1 if taken else None


def held(model: type[W], pk: int, attempt: int) -> QuerySet[W]:
    """The work, as a query, while this claim holds it."""
    return model.objects.filter(pk=pk, status=model.RUNNING, attempts=attempt)


def beat(model: type[ClaimedWork], pk: int, attempt: int) -> bool:
    """Write the heartbeat; False when this claim no longer holds the work."""
    return held(model, pk, attempt).update(heartbeat_at=timezone.now()) == 1


def release(model: type[ClaimedWork], pk: int, attempt: int, reason: str) -> bool:
    """RUNNING -> QUEUED after a failure of the machine, or given up once out of attempts.
    True if the work is queued again: the caller sends its task again (the task's retry, or
    the sweeper's :func:`dispatch`)."""
    with transaction.atomic():
        if attempt >= settings.MATCH_MAX_ATTEMPTS:
            model.give_up(pk, attempt, reason)
            return False
        return bool(
            held(model, pk, attempt).update(
                status=model.QUEUED, queued_at=timezone.now(), worker="", **model.released(reason)
            )
        )


# ----------------------------------------------------------------------------- the sweeper


@dataclass
class Swept:
    """What the sweeper did to one kind of work: ids queued again, given up, sent again."""

    requeued: list[int] = field(default_factory=list)
    given_up: list[int] = field(default_factory=list)
    resent: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.requeued or self.given_up or self.resent)


def sweep(now: datetime | None = None) -> dict[str, Swept]:
    """Recover the work of dead workers and resend lost messages, every kind of work alike.
    Returns what was done, by kind (the model's label: ``games.match``, ``bots.botversion``)."""
    now = now or timezone.now()
    resend_after = _resend_after()
    report = {}
    for model in kinds():
        swept = report[model._meta.label_lower] = Swept()
        _recover_stale(model, now, swept)
        _resend_unclaimed(model, now - timedelta(seconds=resend_after), now, swept)
    if any(report.values()):
        log.info("sweep: %s", {k: vars(v) for k, v in report.items() if v})
        _count_recoveries(
            now,
            [
                (kind, action, len(ids))
                for kind, swept in report.items()
                for action, ids in (
                    (Recovery.Action.REQUEUED, swept.requeued),
                    (Recovery.Action.GIVEN_UP, swept.given_up),
                    (Recovery.Action.RESENT, swept.resent),
                )
                if ids
            ],
        )
    return report


def _count_recoveries(now: datetime, counts: list[tuple[str, str, int]]) -> None:
    """Keep what was recovered, for the metrics: one statement, only when something was."""
    Recovery.objects.bulk_create(
        [Recovery(at=now, kind=kind, action=action, count=n) for kind, action, n in counts]
    )


def _recover_stale(model: type[ClaimedWork], now: datetime, swept: Swept) -> None:
    stale = now - timedelta(seconds=settings.MATCH_STALE_AFTER_S)
    for pk, attempt in model.objects.filter(
        status=model.RUNNING, heartbeat_at__lt=stale
    ).values_list("pk", "attempts"):
        with transaction.atomic():
            if release(model, pk, attempt, "its worker stopped answering (heartbeat lost)"):
                dispatch(model.objects.get(pk=pk))
                swept.requeued.append(pk)
            elif not held(model, pk, attempt).exists():
                swept.given_up.append(pk)


def _resend_unclaimed(model: type[ClaimedWork], old: datetime, now: datetime, swept: Swept) -> None:
    for work in model.objects.filter(status=model.QUEUED, queued_at__lt=old):
        with transaction.atomic():
            if model.objects.filter(pk=work.pk, status=model.QUEUED, queued_at__lt=old).update(
                queued_at=now
            ):
                dispatch(work)
                swept.resent.append(work.pk)


def _resend_after() -> float:
    """After how many seconds unclaimed work is sent again: ``MATCH_RESEND_AFTER_S``, or
    only ``BROKER_RESEND_AFTER_S`` when the broker holds fewer messages than there is queued
    work (it lost some: a Redis restarted without its data, a killed worker's messages on the
    embedded broker). Duplicates are harmless (the claims), and once sent again the broker
    holds enough messages, so this does not repeat."""
    waiting = sum([model.objects.filter(status=model.QUEUED).count() for model in kinds()])
    if waiting:
        present = waiting_messages()
        if present is not None and present < waiting:
            log.info("the broker holds %d messages for %d queued tasks", present, waiting)
            return min(settings.BROKER_RESEND_AFTER_S, settings.MATCH_RESEND_AFTER_S)
    return settings.MATCH_RESEND_AFTER_S


def recover_worker(hostname: str, since: datetime) -> list[tuple[str, int]]:
    """At a worker's start: the work still RUNNING under its name with a heartbeat from before
    ``since`` (its start) was claimed by its previous life, which died; queue it again at once,
    without waiting for its heartbeat to go stale. Returns (kind, id) of each."""
    requeued = []
    for model in kinds():
        for pk, attempt in model.objects.filter(
            status=model.RUNNING, worker=hostname[:200], heartbeat_at__lt=since
        ).values_list("pk", "attempts"):
            with transaction.atomic():
                if release(model, pk, attempt, "its worker was restarted"):
                    dispatch(model.objects.get(pk=pk))
                    requeued.append((model._meta.label_lower, pk))
    if requeued:
        log.info("%s restarted: queued %s again", hostname, requeued)
        kinds_requeued = [kind for kind, _ in requeued]
        _count_recoveries(
            timezone.now(),
            [
                (kind, Recovery.Action.REQUEUED, kinds_requeued.count(kind))
                for kind in sorted(set(kinds_requeued))
            ],
        )
    return requeued


def resend_queued() -> int:
    """Send the task of all queued work again (at start-up, when the broker may have lost
    messages: a duplicate is a no-op). Returns how many were sent."""
    n = 0
    with transaction.atomic():
        for model in kinds():
            for work in model.objects.filter(status=model.QUEUED):
                dispatch(work)
                n += 1
    return n
