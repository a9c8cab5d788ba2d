"""End to end with a real Celery worker process: upload -> checked -> rated -> downloaded.

The worker is ``celery -A arena worker`` started as a subprocess (not eager mode), with this
test's database, broker, queue and bot store passed in its environment. The test database is
one the worker can see: a SQLite file (the settings give tests a file, not memory) or the
PostgreSQL test database; ``transaction=True`` makes every write visible to it at once.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from django.test import Client
from rest_framework.test import APIClient

import engine
from arena.bots import services as bots
from arena.bots.models import BotVersion
from arena.games import ladder, tasks
from arena.games.models import Match, MatchRecord, Rating
from tests.arena.conftest import BOTS, QUEUE, zipped_folder

#: Generous: the machine is shared with other work. Nothing here measures speed.
DEADLINE_S = 600


@pytest.fixture
def worker(worker_env: dict[str, str], tmp_path: Path) -> Iterator[Callable[[], str]]:
    """A real Celery worker on this test run's queue; yields a function returning its log."""
    log = tmp_path / "worker.log"
    argv = [
        sys.executable,
        "-m",
        "celery",
        "-A",
        "arena",
        "worker",
        "--queues",
        QUEUE,
        "--concurrency",
        "1",
        "--pool",
        "prefork",
        "--loglevel",
        "INFO",
        "--hostname",
        f"e2e-{uuid.uuid4().hex[:6]}@%h",
        "--without-gossip",
        "--without-mingle",
        "--without-heartbeat",
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            env=worker_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[2],
            start_new_session=True,
        )

    def tail() -> str:
        if proc.poll() is not None:
            pytest.fail(f"the worker exited ({proc.returncode}):\n{log.read_text()[-6000:]}")
        return log.read_text(errors="replace")[-6000:]

    try:
        yield tail
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        else:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # any pool process left behind


def wait_for(what: str, done: Callable[[], bool], log: Callable[[], str]) -> None:
    deadline = time.monotonic() + DEADLINE_S
    while not done():
        log()  # fails at once if the worker died
        if time.monotonic() > deadline:
            pytest.fail(f"timed out waiting for {what}; worker log:\n{log()}")
        time.sleep(0.5)


@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_upload_check_rate_and_download_through_a_real_worker(
    worker: Callable[[], str], user: Any, settings: Any
) -> None:
    settings.LADDER_TIME_CONTROL = "5+0.1"
    # The built-in anchor bot and a user's upload (through the API) are both checked by the
    # worker.
    (anchor,) = bots.register_builtin_bots(names=["random"])
    from rest_framework.authtoken.models import Token

    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    from django.core.files.uploadedfile import SimpleUploadedFile

    r = api.post(
        "/api/bots/",
        {"name": "e2e-greedy", "file": SimpleUploadedFile("g.zip", zipped_folder(BOTS / "greedy"))},
        format="multipart",
    )
    assert r.status_code == 201, r.content
    mine = BotVersion.objects.get(pk=r.json()["id"])

    def checked() -> bool:
        statuses = set(
            BotVersion.objects.filter(pk__in=[anchor.pk, mine.pk]).values_list("status", flat=True)
        )
        assert "rejected" not in statuses, [
            (v.label, v.reason, v.report) for v in BotVersion.objects.all()
        ]
        return statuses == {"active"}

    wait_for("both checks", checked, worker)
    mine.refresh_from_db()
    assert mine.report[-1].startswith("passed")

    # The ladder schedules a match; the worker plays it.
    (match,) = ladder.schedule_variant("blitz", depth=1)
    wait_for(
        "the ladder match",
        lambda: Match.objects.get(pk=match.pk).status in ("finished", "aborted"),
        worker,
    )
    match.refresh_from_db()
    assert match.status == "finished", (match.reason, worker())
    assert match.worker.startswith("e2e-")

    # The worker fits the ratings (the periodic task, sent by hand here).
    tasks.refresh_ratings.apply_async()
    wait_for(
        "the ratings",
        lambda: Rating.objects.filter(variant="blitz", version=mine).exists(),
        worker,
    )
    anchor_rating = Rating.objects.get(variant="blitz", version=anchor)
    assert anchor_rating.elo == settings.RATING_ANCHOR_ELO
    assert Rating.objects.get(variant="blitz", version=mine).games >= 1

    # Everyone can download the record; it is the referee's record, byte for byte.
    data = MatchRecord.objects.get(match=match)
    text = Client().get(f"/matches/{match.pk}/record.txt").content.decode()
    assert text == data.record
    record = engine.Record.parse(text)
    assert record.outcome is not None and record.outcome.result.value == match.result
    assert (
        record.to_text(long=False)
        == Client().get(f"/matches/{match.pk}/record.short.txt").content.decode()
    )
    assert record.headers["White"] in (mine.label, anchor.label)
