"""A worker's liveness file (``arena.celery.Alive``), which the compose file's health check of
the worker looks at: a real worker touches it from its event loop, and the check's own command
says healthy while the file is fresh and unhealthy once it is stale."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from tests.arena.conftest import wait_for

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def alive_file(tmp_path: Path) -> Path:
    return tmp_path / "alive"


@pytest.fixture
def worker_env(worker_env: dict[str, str], alive_file: Path) -> dict[str, str]:
    return dict(worker_env, ARENA_WORKER_ALIVE_FILE=str(alive_file), ARENA_WORKER_ALIVE_EVERY="0.5")


def compose_health_check(path: Path) -> Callable[[], int]:
    """The worker's health check command of docker-compose.yml, on ``path``: returns its exit
    status when run."""
    service = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["worker"]
    kind, command = service["healthcheck"]["test"]
    assert kind == "CMD-SHELL"
    assert service["environment"]["ARENA_WORKER_ALIVE_FILE"] in command
    command = command.replace(service["environment"]["ARENA_WORKER_ALIVE_FILE"], str(path))
    command = command.replace("$$", "$")  # compose's escape of a dollar sign
    return lambda: subprocess.run(["sh", "-c", command], check=False).returncode


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_worker_keeps_its_alive_file_fresh_and_the_health_check_reads_it(
    worker: Callable[[], str], alive_file: Path
) -> None:
    check = compose_health_check(alive_file)
    assert check() != 0  # no file yet: not healthy
    wait_for("the alive file", alive_file.exists, worker)
    assert check() == 0
    # Make it look three minutes old, as if the worker's loop had stopped: unhealthy...
    stale = time.time() - 180
    os.utime(alive_file, (stale, stale))
    assert check() != 0
    # ...until the loop touches it again.
    wait_for("a fresh touch", lambda: alive_file.stat().st_mtime > stale + 60, worker)
    assert check() == 0
