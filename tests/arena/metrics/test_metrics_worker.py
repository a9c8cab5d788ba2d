"""What real workers write for the metrics: a worker's heartbeat from its main process (gone
when it stops), and the record of a periodic task it ran; then scraped as Prometheus would."""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from arena.jobs import tasks
from arena.jobs.models import PeriodicRun, WorkerBeat
from arena.referee.sandbox.procfs import proc_table
from tests.arena.conftest import QUEUE, wait_for
from tests.arena.metrics.conftest import Samples, value

SWEEP = "arena.jobs.tasks.sweep"


@pytest.fixture
def worker_env(worker_env: dict[str, str]) -> dict[str, str]:
    return dict(worker_env, ARENA_WORKER_ALIVE_EVERY="0.5")


def started_here(hostname: str) -> int:
    """The pid of the worker this test started (a child of this process) called
    ``hostname``."""
    name = hostname.partition("@")[0].encode()
    found = [
        pid
        for pid, entry in proc_table().items()
        if entry.ppid == os.getpid() and name in Path(f"/proc/{pid}/cmdline").read_bytes()
    ]
    assert len(found) == 1, found
    return found[0]


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_beats_runs_a_periodic_task_on_record_and_is_gone_when_it_stops(
    worker: Callable[[], str], scrape: Callable[[], Samples], settings: Any
) -> None:
    settings.WORKER_ALIVE_EVERY_S = 3600  # this scrape's "live": a beat within three hours
    wait_for("the worker's heartbeat", WorkerBeat.objects.exists, worker)
    beat = WorkerBeat.objects.get()
    assert beat.hostname.startswith("e2e-")
    assert beat.concurrency == 1
    assert beat.started_at <= beat.seen_at
    wait_for("its next heartbeat", lambda: WorkerBeat.objects.get().seen_at > beat.seen_at, worker)

    tasks.sweep.apply_async(queue=QUEUE)
    wait_for(
        "the sweep's run on record",
        PeriodicRun.objects.filter(name=SWEEP, finished_at__isnull=False).exists,
        worker,
    )

    samples = scrape()
    assert value(samples, "arena_workers_live") == 1
    assert value(samples, "arena_worker_concurrency", worker=beat.hostname) == 1
    assert 0 <= value(samples, "arena_worker_seconds_since_beat", worker=beat.hostname) < 3600
    assert 0 <= value(samples, "arena_periodic_seconds_since_finished", task=SWEEP) < 3600

    # A warm shutdown (SIGTERM) removes its heartbeat.
    os.kill(started_here(beat.hostname), signal.SIGTERM)
    wait_for("its heartbeat removed", lambda: not WorkerBeat.objects.exists(), lambda: "")
    assert value(scrape(), "arena_workers_live") == 0
