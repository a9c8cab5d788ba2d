"""Periodic work on real workers: with a backlog of slow matches on the only match worker,
the scheduler's own worker keeps running the sweeper at its interval, and drops none of its
messages as expired."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.games.models import Match
from tests.arena.conftest import QUEUE, TEST_BOTS, make_version, wait_for
from tools.chaos.accounting import longest_gap, runs_in_log

ROOT = Path(__file__).resolve().parents[3]
S = Match.Status


@pytest.fixture
def scheduler(worker_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[[], str]]:
    """``celery worker --beat`` on this run's periodic queue, as runarena and compose start
    it, sweeping every second; yields a function returning its log (whole)."""
    from arena.local.management.commands.runarena import SCHEDULER_WORKER

    env = dict(worker_env, ARENA_SWEEP_INTERVAL="1", ARENA_LADDER_INTERVAL="3600")
    log = tmp_path / "scheduler.log"
    argv = [sys.executable, "-m", "celery", "-A", "arena", *SCHEDULER_WORKER]
    argv += ["--queues", f"{QUEUE}.periodic", "--schedule", str(tmp_path / "beat-schedule")]
    argv += ["--loglevel", "INFO", "--without-gossip", "--without-mingle"]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv, env=env, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, start_new_session=True
        )

    def tail() -> str:
        if proc.poll() is not None:
            pytest.fail(f"the scheduler exited ({proc.returncode}):\n{log.read_text()[-6000:]}")
        return log.read_text(errors="replace")

    try:
        yield tail
    finally:
        proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=60)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


SWEEP = "arena.jobs.tasks.sweep"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_the_sweeper_keeps_its_interval_behind_a_backlog_of_slow_matches(
    worker: Callable[[], str], scheduler: Callable[[], str], user: Any, anchor: Any
) -> None:
    from arena.games import services

    slow = make_version(user, "slow", folder=TEST_BOTS / "protocol" / "slow")
    # Each game lasts its whole 8 s clock: the slow bot thinks for a minute and loses on time.
    made = [
        Match.objects.create(
            variant="yinsh",
            kind=Match.Kind.LADDER,
            status=S.PENDING,
            white=slow,
            black=anchor,
            time_control="8+0",
            seed=n,
        )
        for n in range(5)
    ]
    assert services.queue_pending(m.pk for m in made) == 5

    def log() -> str:
        return scheduler()[-6000:] + worker()

    def sweeps() -> int:
        return len(runs_in_log(scheduler().splitlines(), SWEEP))

    wait_for("the first slow game", lambda: Match.objects.filter(status=S.RUNNING).exists(), log)
    before = sweeps()
    wait_for("five more sweeps", lambda: sweeps() >= before + 5, log)
    # All that while the match worker was busy: the backlog is still there.
    left = Match.objects.filter(pk__in=[m.pk for m in made], status__in=(S.QUEUED, S.RUNNING))
    assert left.count() >= 2
    assert "Discarding revoked task" not in scheduler()
    wait_for(
        "the backlog",
        lambda: Match.objects.filter(pk__in=[m.pk for m in made], status=S.FINISHED).count() == 5,
        log,
    )
    gap = longest_gap(runs_in_log(scheduler().splitlines(), SWEEP)[before:])
    assert gap is not None and gap < 10, gap  # every second, with room for a busy machine
    assert "Discarding revoked task" not in scheduler()
