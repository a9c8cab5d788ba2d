"""Writes for the tests of writing behind (``test_write_behind.py``): functions of a module, as
a worker's writer process is given them, which leave their trace in a file."""

from __future__ import annotations

import os
import time
from pathlib import Path


def note(path: str, text: str, after: str = "", delay: float = 0.0) -> None:
    """Add ``text`` and the writer's process id as a line of ``path``; first wait (at most 30 s)
    until the file ``after`` exists (``path.started`` says it waits), or ``delay`` seconds."""
    Path(f"{path}.started").touch()
    deadline = time.monotonic() + 30
    while after and not Path(after).exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(delay)
    with open(path, "a") as f:
        f.write(f"{text} {os.getpid()}\n")


def fail(message: str) -> None:
    raise RuntimeError(message)


def lines(path: Path) -> list[str]:
    """What :func:`note` wrote, without the process ids."""
    return [line.split()[0] for line in path.read_text().splitlines()] if path.exists() else []
