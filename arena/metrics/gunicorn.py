"""gunicorn's settings for a site whose metrics add up its processes' request latencies
(``gunicorn --config python:arena.metrics.gunicorn``, with ``PROMETHEUS_MULTIPROC_DIR`` set).

prometheus_client's multiprocess mode keeps each process's observations in files in that
folder: they must start empty (a process id of a previous run would be added again), and
the files of a process that died are marked so that its live gauges are dropped. Any other
gunicorn option is still given on the command line or in ``GUNICORN_CMD_ARGS``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from prometheus_client import multiprocess


def on_starting(server: Any) -> None:
    """The master starts: empty the folder of the previous run's files."""
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        for old in Path(folder).glob("*.db"):
            old.unlink()


def child_exit(server: Any, worker: Any) -> None:
    """A web process exited."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(worker.pid)
