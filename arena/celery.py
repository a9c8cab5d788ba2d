"""The Celery application: ``celery -A arena worker`` / ``celery -A arena beat``."""

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from celery import Celery, bootsteps, signals
from kombu.transport import TRANSPORT_ALIASES

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "arena.settings")

# The embedded broker (sqla+sqlite:///var/celery-broker.sqlite3) polls more often: arena.broker.
TRANSPORT_ALIASES["sqla"] = "arena.broker:Transport"

app = Celery("arena")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class Alive(bootsteps.StartStopStep):
    """The worker's heartbeat, from its main process's own event loop every
    ``ARENA_WORKER_ALIVE_EVERY`` seconds (15): a row in the database
    (:mod:`arena.jobs.workers`, what the metrics show of each worker, from every host alike;
    removed when the worker stops), and, when ``ARENA_WORKER_ALIVE_FILE`` names one, a file
    it touches and removes when it stops. A container's health check is then a look at the
    file's age (``find FILE -newermt '90 seconds ago'``), not a Python process and a round
    trip through the broker each time, which a loaded or slow machine cannot always start and
    finish within the check's timeout. A worker whose loop is stuck stops beating."""

    requires = ("celery.worker.components:Timer",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.path: Path | None = None
        self.timer_ref: Any = None
        self.hostname = ""
        self.concurrency = 0
        self.started: datetime | None = None

    def start(self, parent: Any) -> None:
        from django.conf import settings
        from django.utils import timezone

        if settings.WORKER_ALIVE_FILE:
            self.path = Path(settings.WORKER_ALIVE_FILE)
        self.hostname = str(parent.hostname or "")
        self.concurrency = int(parent.concurrency or 0)
        self.started = timezone.now()
        self.touch()
        self.timer_ref = parent.timer.call_repeatedly(
            settings.WORKER_ALIVE_EVERY_S, self.touch, priority=10
        )

    def stop(self, parent: Any) -> None:
        from arena.jobs import workers

        if self.timer_ref is not None:
            self.timer_ref.cancel()
            self.timer_ref = None
        if self.path is not None:
            self.path.unlink(missing_ok=True)
        if self.started is not None and self.hostname:
            workers.stopped(self.hostname)

    def touch(self) -> None:
        from django.db import close_old_connections

        from arena.jobs import workers

        assert self.started is not None
        if self.path is not None:
            self.path.touch()
        if self.hostname:
            # The main process keeps its connection between beats: one the database dropped
            # (a restart) is closed here, and the beat opens a new one.
            close_old_connections()
            workers.beat(self.hostname, self.started, self.concurrency)


app.steps["worker"].add(Alive)


@signals.task_prerun.connect
@signals.task_postrun.connect
def tidy_connections(task: Any = None, **kwargs: Any) -> None:
    """Around every task a worker runs, close its database connections that are unusable or
    older than ``CONN_MAX_AGE``, as Django does around a web request (``CELERY_DB_REUSE_MAX``
    keeps Celery from closing them all). Not around a task run eagerly: its caller may be in
    a transaction."""
    if task is not None and getattr(task.request, "is_eager", False):
        return
    from django.db import close_old_connections

    close_old_connections()
