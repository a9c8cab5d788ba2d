"""The Celery application: ``celery -A arena worker`` / ``celery -A arena beat``."""

import os
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
    """Touches the file ``ARENA_WORKER_ALIVE_FILE`` names every ``ARENA_WORKER_ALIVE_EVERY``
    seconds (15) from the worker's own event loop, and removes it when the worker stops: a
    container's health check is then a look at the file's age (``find FILE -newermt '90
    seconds ago'``), not a Python process and a round trip through the broker each time,
    which a loaded or slow machine cannot always start and finish within the check's
    timeout. A worker whose loop is stuck stops touching it."""

    requires = ("celery.worker.components:Timer",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.path: Path | None = None
        self.timer_ref: Any = None

    def start(self, parent: Any) -> None:
        from django.conf import settings

        if not settings.WORKER_ALIVE_FILE:
            return
        self.path = Path(settings.WORKER_ALIVE_FILE)
        self.touch()
        self.timer_ref = parent.timer.call_repeatedly(
            settings.WORKER_ALIVE_EVERY_S, self.touch, priority=10
        )

    def stop(self, parent: Any) -> None:
        if self.timer_ref is not None:
            self.timer_ref.cancel()
            self.timer_ref = None
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    def touch(self) -> None:
        assert self.path is not None
        self.path.touch()


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
