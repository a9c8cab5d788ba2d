"""A worker killed with SIGKILL in the middle of a game, on real workers: when it starts again
it queues its match again at once (not waiting for the heartbeat to go stale) and reaps the
bots it left frozen on the host; the match is then played to the end, counted once.

The test looks only at the bots of the worker it started (another arena on the host may be
playing games under the same slot uids meanwhile)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.games.models import Match
from arena.ratings.models import PairStats
from arena.referee.sandbox.procfs import real_uid
from tests.arena.conftest import (
    DEADLINE_S,
    QUEUE,
    TEST_BOTS,
    adopting_orphans,
    bots_started_here,
    make_version,
)

ROOT = Path(__file__).resolve().parents[3]
S = Match.Status


class Worker:
    """One real Celery worker under a fixed name, which can be killed and started again."""

    def __init__(self, env: dict[str, str], log: Path, name: str) -> None:
        self.env, self.log, self.name = env, log, name
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        argv = [sys.executable, "-m", "celery", "-A", "arena", "worker", "--queues", QUEUE]
        argv += ["--concurrency", "1", "--loglevel", "INFO", "--hostname", self.name]
        argv += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                argv,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
                start_new_session=True,
            )

    def kill(self) -> None:
        assert self.proc is not None
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=60)
        self.kill()

    def text(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture
def restartable(worker_env: dict[str, str], tmp_path: Path) -> Iterator[Worker]:
    # Only the start-up can queue the match again: its heartbeat stays fresh for an hour.
    env = dict(worker_env, ARENA_MATCH_STALE_AFTER="3600")
    w = Worker(env, tmp_path / "worker.log", f"restartable-{uuid.uuid4().hex[:6]}@%h")
    # The killed worker's bots stay this process's descendants.
    with adopting_orphans():
        try:
            yield w
        finally:
            w.stop()


def until(what: str, done: Any, worker: Worker) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not done():
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}:\n{worker.text()[-6000:]}")
        time.sleep(0.2)


def alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` still running as the uid they ran as (not ended, not a zombie)."""
    return {pid for pid in pids if real_uid(pid) is not None}


def frozen(pid: int) -> bool:
    """Whether the process is frozen by its cgroup (v1 freezer or v2)."""
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines()
    except OSError:
        return False
    for line in lines:
        _, controllers, path = line.split(":", 2)
        try:
            if controllers == "freezer":
                state = Path("/sys/fs/cgroup/freezer", path.lstrip("/"), "freezer.state")
                return state.read_text().strip() == "FROZEN"
            if controllers == "":
                events = Path("/sys/fs/cgroup", path.lstrip("/"), "cgroup.events")
                if events.exists():
                    return "frozen 1" in events.read_text()
        except OSError:
            return False
    return False


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_killed_worker_takes_its_match_back_and_reaps_its_bots_when_it_starts_again(
    restartable: Worker, user: Any, anchor: Any
) -> None:
    from arena.games import services

    slow = make_version(user, "slow", folder=TEST_BOTS / "protocol" / "slow")
    m = Match.objects.create(
        variant="yinsh",
        kind=Match.Kind.LADDER,
        status=S.PENDING,
        white=anchor,
        black=slow,
        time_control="10+0",
        seed=3,
    )
    services.queue_pending([m.pk])
    restartable.start()
    # The random bot (white) has moved and is frozen while the slow one thinks: 10 s, then it
    # loses on time (ample to see it and kill the worker; each attempt costs as much).
    until(
        "the slow bot's turn",
        lambda: any(frozen(pid) for pid in bots_started_here()),
        restartable,
    )
    left = bots_started_here()
    restartable.kill()
    assert alive(left), "the killed worker's bots outlived it"

    restartable.start()
    until(
        "the match queued again or claimed again",
        lambda: (
            Match.objects.filter(pk=m.pk, attempts=2).exists()
            or Match.objects.filter(pk=m.pk, status=S.QUEUED).exists()
        ),
        restartable,
    )
    # The match is queued (committed) a moment before the worker logs that it did so.
    until(
        "the restart's log line",
        lambda: f"restarted: queued [('games.match', {m.pk})] again" in restartable.text(),
        restartable,
    )
    # Reaped at the start, before the match was sent again (not by the next game's sandbox).
    assert not alive(left), "the dead worker's bots were not reaped"
    until(
        "the match played again",
        lambda: Match.objects.filter(pk=m.pk, status=S.FINISHED).exists(),
        restartable,
    )
    m.refresh_from_db()
    assert m.attempts == 2 and m.termination == "time"
    assert sum(p.wins + p.draws + p.losses for p in PairStats.objects.all()) == 1
