"""A worker's pool process writes each result while its next game starts
(``arena.WriteBehind``): in order, one waiting at most, every one written before the
process exits, and never where the caller holds a transaction."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.db import connections

from arena.games import services
from arena.games.models import Match
from arena.worker import WriteBehind, write_behind
from tests.arena.conftest import make_version, wait_for
from tests.arena.test_matches import queued_match

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def behind() -> Iterator[WriteBehind]:
    """A thread of its own (not the process's)."""
    thread = WriteBehind()
    thread.start()
    yield thread
    assert thread.drain(30)


def test_writes_are_made_in_order_and_a_third_waits_for_the_first(
    behind: WriteBehind,
) -> None:
    done: list[int] = []
    first_may_end = threading.Event()

    def write(n: int) -> Callable[[], None]:
        def go() -> None:
            if n == 1:
                first_may_end.wait(10)
            done.append(n)

        return go

    behind.submit(write(1), "one")  # taken by the thread, which is held in it
    behind.submit(write(2), "two")  # waits
    third = threading.Thread(target=behind.submit, args=(write(3), "three"))
    third.start()
    third.join(0.3)
    assert third.is_alive()  # a caller with a result waiting behind another waits
    assert not behind.drain(0.1)
    first_may_end.set()
    third.join(10)
    assert behind.drain(10)
    assert done == [1, 2, 3]


def test_a_write_that_fails_is_logged_and_the_next_is_made(
    behind: WriteBehind, caplog: pytest.LogCaptureFixture
) -> None:
    done: list[str] = []

    def fails() -> None:
        raise RuntimeError("the database said no")

    behind.submit(fails, "match 7")
    behind.submit(lambda: done.append("next"), "match 8")
    assert behind.drain(10)
    assert done == ["next"]
    assert "match 7: the result was not written" in caplog.text


@pytest.mark.django_db
def test_outside_a_pool_process_or_inside_a_transaction_the_caller_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert not write_behind(lambda: None, "match 1")  # not a pool process
    monkeypatch.setattr(WriteBehind, "enabled", True)
    assert not write_behind(lambda: None, "match 1")  # the test's transaction


@pytest.mark.django_db(transaction=True)
def test_a_pool_process_plays_and_its_thread_writes_the_result(
    monkeypatch: pytest.MonkeyPatch, user: Any
) -> None:
    m = queued_match(make_version(user, "w"), make_version(user, "b"))
    monkeypatch.setattr(WriteBehind, "enabled", True)
    assert services.play(m.pk, "pool@host") == "finished (its result written behind)"
    current = WriteBehind.existing()
    assert current is not None and current.drain(30)
    current.submit(connections.close_all, "its connection")  # before the database is dropped
    assert current.drain(30)
    m.refresh_from_db()
    assert m.status == Match.Status.FINISHED and m.plies > 0


#: A pool process's last moments: a result still being written when Celery tells it to stop.
EXITING_WITH_A_RESULT_UNWRITTEN = """
import os, sys, time
import django
django.setup()
from celery import signals
from arena import worker
import arena.celery  # connects the pool process's signals

signals.worker_process_init.send(sender=None)
def slow_write():
    time.sleep(1.0)
    open(sys.argv[1], "w").write("written")
assert worker.write_behind(slow_write, "match 1")
signals.worker_process_shutdown.send(sender=None, pid=os.getpid(), exitcode=0)
os._exit(0)
"""


def test_a_pool_process_writes_what_it_holds_before_it_exits(tmp_path: Path) -> None:
    out = tmp_path / "result"
    env = dict(os.environ, DJANGO_SETTINGS_MODULE="arena.settings")
    subprocess.run(
        [sys.executable, "-c", EXITING_WITH_A_RESULT_UNWRITTEN, str(out)],
        env=env,
        cwd=ROOT,
        check=True,
        timeout=120,
    )
    assert out.read_text() == "written"


@pytest.mark.django_db(transaction=True)
def test_a_real_workers_results_are_written_behind_its_games(
    worker: Callable[[], str], user: Any
) -> None:
    white, black = make_version(user, "w"), make_version(user, "b")
    matches = [queued_match(white, black, seed=i) for i in range(3)]
    for m in matches:
        services.dispatch(m.pk, m.time_control)
    finished = Match.objects.filter(pk__in=[m.pk for m in matches], status="finished")
    wait_for("three games", lambda: finished.count() == 3, worker)
    wait_for("the tasks' ends", lambda: worker().count("written behind") == 3, worker)
