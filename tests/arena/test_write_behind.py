"""A worker's pool process writes each result while its next game starts
(``arena.worker.WriteBehind``, by its writer process ``arena.writer``): in order, one waiting
at most, every one written before the process exits, a writer killed costing only its write,
and never where the caller holds a transaction."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from arena.games import services
from arena.games.models import Match, MatchRecord
from arena.worker import WriteBehind, write_behind
from tests.arena import behind_jobs as jobs
from tests.arena.conftest import make_version, wait_for
from tests.arena.test_matches import queued_match

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def behind() -> Iterator[WriteBehind]:
    """A thread of its own (not the process's), and so a writer process of its own."""
    thread = WriteBehind()
    thread.start()
    yield thread
    assert thread.close(30)


def test_writes_are_made_in_order_by_another_process_and_a_third_waits_for_the_first(
    behind: WriteBehind, tmp_path: Path
) -> None:
    out, go = tmp_path / "written", tmp_path / "go"
    behind.submit(jobs.note, (str(out), "1", str(go)), "one")  # held in it until `go`
    behind.submit(jobs.note, (str(out), "2"), "two")  # waits
    third = threading.Thread(target=behind.submit, args=(jobs.note, (str(out), "3"), "three"))
    third.start()
    third.join(0.3)
    assert third.is_alive()  # a caller with a result waiting behind another waits
    assert not behind.drain(0.1)
    go.touch()
    third.join(10)
    assert behind.drain(10)
    assert jobs.lines(out) == ["1", "2", "3"]
    writers = {line.split()[1] for line in out.read_text().splitlines()}
    assert writers == {str(behind.writer_pid)} and behind.writer_pid != os.getpid()


def test_a_write_that_fails_is_logged_and_the_next_is_made(
    behind: WriteBehind, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out = tmp_path / "written"
    behind.submit(jobs.fail, ("the database said no",), "match 7")
    behind.submit(jobs.note, (str(out), "next"), "match 8")
    assert behind.drain(10)
    assert jobs.lines(out) == ["next"]
    assert "match 7: the result was not written" in caplog.text


def test_a_writer_killed_in_a_write_costs_that_write_only(
    behind: WriteBehind, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    out, never = tmp_path / "written", tmp_path / "never"
    behind.submit(jobs.note, (str(out), "lost", str(never)), "match 7")
    wait_for("the write", Path(f"{out}.started").exists, str)  # it waits for `never`
    first = behind.writer_pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    assert behind.drain(10)
    assert "match 7: the result was not written" in caplog.text
    assert "the writer process ended" in caplog.text
    behind.submit(jobs.note, (str(out), "next"), "match 8")  # a new writer makes it
    assert behind.drain(30)
    assert jobs.lines(out) == ["next"]
    assert behind.writer_pid not in (None, first)


def test_a_ctrl_c_to_the_workers_process_group_leaves_the_writer_writing(
    behind: WriteBehind, tmp_path: Path
) -> None:
    out, go = tmp_path / "written", tmp_path / "go"
    behind.submit(jobs.note, (str(out), "kept", str(go)), "match 7")
    wait_for("the write", Path(f"{out}.started").exists, str)
    assert behind.writer_pid is not None
    os.kill(behind.writer_pid, signal.SIGINT)
    go.touch()
    assert behind.drain(30)
    assert jobs.lines(out) == ["kept"]


@pytest.mark.django_db
def test_outside_a_pool_process_or_inside_a_transaction_the_caller_writes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert not write_behind(jobs.fail, ("not called",), "match 1")  # not a pool process
    monkeypatch.setattr(WriteBehind, "enabled", True)
    assert not write_behind(jobs.fail, ("not called",), "match 1")  # the test's transaction


@pytest.mark.django_db(transaction=True)
def test_a_pool_process_plays_and_its_writer_writes_the_result(
    monkeypatch: pytest.MonkeyPatch, user: Any
) -> None:
    m = queued_match(make_version(user, "w"), make_version(user, "b"))
    monkeypatch.setattr(WriteBehind, "enabled", True)
    assert services.play(m.pk, "pool@host") == "finished (its result written behind)"
    current = WriteBehind.existing()
    assert current is not None
    assert current.close(30)  # its connection closed before the database is dropped
    m.refresh_from_db()
    assert m.status == Match.Status.FINISHED and m.plies > 0
    assert MatchRecord.objects.filter(match=m).exists()


#: A pool process's last moments: a result still being written when Celery tells it to stop.
EXITING_WITH_A_RESULT_UNWRITTEN = """
import os, sys
import django
django.setup()
from celery import signals
from arena import worker
import arena.celery  # connects the pool process's signals
from tests.arena import behind_jobs

signals.worker_process_init.send(sender=None)
assert worker.write_behind(behind_jobs.note, (sys.argv[1], "written", "", 1.0), "match 1")
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
    assert jobs.lines(out) == ["written"]


@pytest.mark.worker
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
