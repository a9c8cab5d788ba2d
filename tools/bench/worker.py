"""A real Celery worker process for a benchmark: on a queue of the benchmark's own, in a session
of its own, stopped with SIGTERM when the benchmark is done (killed with its session if it has
not stopped a minute later)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import IO

from django.conf import settings

from arena.games.models import Match
from tools import ToolError


class Worker:
    def __init__(
        self,
        queue: str,
        concurrency: int,
        log: Path | None = None,
        *,
        loglevel: str = "WARNING",
        consume: str | None = None,
        pool: str = "prefork",
    ) -> None:
        """A worker whose task queue is ``queue`` (``ARENA_CELERY_QUEUE``), consuming
        ``consume`` (``queue`` itself by default: its remote queue is ``{queue}.remote``) with
        ``concurrency`` processes, or threads with ``pool="threads"``."""
        self.queue = queue
        self.consume = consume or queue
        self.pool = pool
        self.concurrency = concurrency
        self.log = log
        self.loglevel = loglevel
        self._proc: subprocess.Popen[bytes] | None = None
        self._out: IO[bytes] | None = None

    @property
    def pid(self) -> int:
        assert self._proc is not None
        return self._proc.pid

    def __enter__(self) -> Worker:
        env = dict(
            os.environ, ARENA_CELERY_QUEUE=self.queue, DJANGO_SETTINGS_MODULE="arena.settings"
        )
        env["ARENA_BOT_STORE"] = str(settings.BOT_STORE_DIR)
        argv = [sys.executable, "-m", "celery", "-A", "arena", "worker", "--queues", self.consume]
        argv += ["--pool", self.pool, "--concurrency", str(self.concurrency)]
        argv += ["--loglevel", self.loglevel]
        argv += ["--without-gossip", "--without-mingle", "--without-heartbeat"]
        if self.log is not None:
            self._out = self.log.open("wb")
        self._proc = subprocess.Popen(
            argv,
            env=env,
            cwd=settings.BASE_DIR,
            start_new_session=True,
            stdout=self._out,
            stderr=subprocess.STDOUT if self._out is not None else None,
        )
        return self

    def check(self) -> None:
        """Raise :class:`ToolError` if the worker has exited."""
        assert self._proc is not None
        if self._proc.poll() is not None:
            raise ToolError(f"the worker exited ({self._proc.returncode})")

    def play(self, match_ids: list[int], timeout: float = 3600.0) -> None:
        """Wait until every one of these matches is finished or aborted."""
        done = Match.objects.filter(pk__in=match_ids, status__in=["finished", "aborted"])
        deadline = time.monotonic() + timeout
        while done.count() < len(match_ids):
            self.check()
            if time.monotonic() > deadline:
                raise ToolError(f"the worker did not finish within {timeout:.0f} s")
            time.sleep(0.5)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._proc is not None
        self._proc.send_signal(signal.SIGTERM)
        try:
            self._proc.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(self._proc.pid, signal.SIGKILL)
            self._proc.wait()
        if self._out is not None:
            self._out.close()
