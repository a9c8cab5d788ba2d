"""The one sweeper: recovers the work of dead workers and of lost broker messages.

It runs as the periodic ``sweep`` task and when a worker starts (with
:func:`recover_worker`, which takes back at once the matches of that worker's previous life),
and :func:`resend_queued` runs when ``runarena`` starts on the embedded broker, which can lose
the messages a killed worker had taken. For matches and bot checks alike:

* a RUNNING match (a CHECKING version) whose heartbeat is older than ``MATCH_STALE_AFTER_S``
  goes back to the queue; after ``MATCH_MAX_ATTEMPTS`` claims a match is aborted (not
  counted) and a version is held for an operator (never rejected: a dead worker is not the
  bot's fault);
* a QUEUED match (a PENDING version) nobody claimed for ``MATCH_RESEND_AFTER_S`` has its task
  sent again (the claim makes a duplicate harmless); after only ``BROKER_RESEND_AFTER_S`` when
  the broker holds fewer messages than there is queued work (it lost them).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from arena import worker
from arena.bots import services as bots
from arena.bots.models import BotVersion
from arena.games import services
from arena.games.models import Match

log = logging.getLogger(__name__)
S = Match.Status
V = BotVersion.Status


@dataclass
class SweepReport:
    requeued: list[int] = field(default_factory=list)
    aborted: list[int] = field(default_factory=list)
    resent: list[int] = field(default_factory=list)
    checks_requeued: list[int] = field(default_factory=list)
    checks_held: list[int] = field(default_factory=list)
    checks_resent: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return any(vars(self).values())


def sweep(now: datetime | None = None) -> SweepReport:
    """Recover the matches and the checks of dead workers, and resend lost messages."""
    now = now or timezone.now()
    report = SweepReport()
    resend_after = _resend_after()
    _sweep_matches(now, report, resend_after)
    _sweep_checks(now, report, resend_after)
    if report:
        log.info("sweep: %s", report)
    return report


def _sweep_matches(now: datetime, report: SweepReport, resend_after: float) -> None:
    stale = now - timedelta(seconds=settings.MATCH_STALE_AFTER_S)
    for pk, attempt in Match.objects.filter(status=S.RUNNING, heartbeat_at__lt=stale).values_list(
        "pk", "attempts"
    ):
        with transaction.atomic():
            if services.release(pk, attempt, "its worker stopped answering (heartbeat lost)"):
                tc = Match.objects.values_list("time_control", flat=True).get(pk=pk)
                services.dispatch(pk, tc)
                report.requeued.append(pk)
            elif Match.objects.filter(pk=pk, status=S.ABORTED).exists():
                report.aborted.append(pk)
    old = now - timedelta(seconds=resend_after)
    for pk, tc in Match.objects.filter(status=S.QUEUED, queued_at__lt=old).values_list(
        "pk", "time_control"
    ):
        with transaction.atomic():
            if Match.objects.filter(pk=pk, status=S.QUEUED, queued_at__lt=old).update(
                queued_at=now
            ):
                services.dispatch(pk, tc)
                report.resent.append(pk)


def _sweep_checks(now: datetime, report: SweepReport, resend_after: float) -> None:
    stale = now - timedelta(seconds=settings.MATCH_STALE_AFTER_S)
    for pk, attempt in BotVersion.objects.filter(
        status=V.CHECKING, heartbeat_at__lt=stale
    ).values_list("pk", "check_attempts"):
        with transaction.atomic():
            if bots.requeue_check(pk, attempt, "its worker stopped answering"):
                bots.dispatch_check(pk)
                report.checks_requeued.append(pk)
            elif BotVersion.objects.filter(pk=pk, status=V.HELD).exists():
                report.checks_held.append(pk)
    old = now - timedelta(seconds=resend_after)
    for pk in BotVersion.objects.filter(status=V.PENDING, check_queued_at__lt=old).values_list(
        "pk", flat=True
    ):
        with transaction.atomic():
            if BotVersion.objects.filter(pk=pk, status=V.PENDING, check_queued_at__lt=old).update(
                check_queued_at=now
            ):
                bots.dispatch_check(pk)
                report.checks_resent.append(pk)


def _resend_after() -> float:
    """After how many seconds unclaimed work is sent again: ``MATCH_RESEND_AFTER_S``, or
    only ``BROKER_RESEND_AFTER_S`` when the broker holds fewer messages than there is queued
    work (it lost some: a Redis restarted without its data, a killed worker's messages on the
    embedded broker). Duplicates are harmless (the claims), and once sent again the broker
    holds enough messages, so this does not repeat."""
    waiting = Match.objects.filter(status=S.QUEUED).count()
    waiting += BotVersion.objects.filter(status=V.PENDING).count()
    if waiting:
        present = worker.waiting_messages()
        if present is not None and present < waiting:
            log.info("the broker holds %d messages for %d queued tasks", present, waiting)
            return min(settings.BROKER_RESEND_AFTER_S, settings.MATCH_RESEND_AFTER_S)
    return settings.MATCH_RESEND_AFTER_S


def recover_worker(hostname: str, since: datetime) -> list[int]:
    """At a worker's start: the matches still RUNNING under its name with a heartbeat from
    before ``since`` (its start) were claimed by its previous life, which died; queue them
    again at once, without waiting for their heartbeat to go stale. Returns their ids."""
    requeued = []
    for pk, attempt, tc in Match.objects.filter(
        status=S.RUNNING, worker=hostname[:200], heartbeat_at__lt=since
    ).values_list("pk", "attempts", "time_control"):
        with transaction.atomic():
            if services.release(pk, attempt, "its worker was restarted"):
                services.dispatch(pk, tc)
                requeued.append(pk)
    if requeued:
        log.info("%s restarted: queued its matches %s again", hostname, requeued)
    return requeued


def resend_queued() -> int:
    """Send the task of every queued match and pending check again (at start-up, when the
    broker may have lost messages: a duplicate is a no-op). Returns how many were sent."""
    n = 0
    with transaction.atomic():
        for pk, tc in Match.objects.filter(status=S.QUEUED).values_list("pk", "time_control"):
            services.dispatch(pk, tc)
            n += 1
        for pk in BotVersion.objects.filter(status=V.PENDING).values_list("pk", flat=True):
            bots.dispatch_check(pk)
            n += 1
    return n
