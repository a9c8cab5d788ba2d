"""``manage.py runarena`` on a fresh machine: embedded defaults, games start, Ctrl-C stops all.

The command runs as a subprocess in an empty var/ folder of its own (its own SQLite database
and broker), exactly as a newcomer would start it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
DEADLINE_S = 600  # generous: nothing here measures speed


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get_json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=10) as r:
        return json.load(r)


@pytest.fixture
def fresh_var() -> Iterator[Path]:
    var = Path(tempfile.mkdtemp(prefix="arena-fresh-"))
    os.chmod(var, 0o755)  # the sandbox's staging area must be reachable by the bots' uids
    try:
        yield var / "var"
    finally:
        shutil.rmtree(var, ignore_errors=True)


def processes_in_group(pgid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.getpgid(int(entry.name)) == pgid:
                    out.append(int(entry.name))
            except ProcessLookupError:
                pass
    return out


@pytest.mark.slow
def test_runarena_plays_games_and_stops_cleanly_on_ctrl_c(fresh_var: Path) -> None:
    port = free_port()
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("DATABASE_URL", "REDIS_URL", "ARENA_", "CELERY_"))
    }
    env.update(
        ARENA_VAR_DIR=str(fresh_var),
        ARENA_LADDER_TIME_CONTROL="5+0.1",
        ARENA_LADDER_INTERVAL="3",
        # The test reads the API every second until a game is over: no throttle on it.
        ARENA_THROTTLE_ANON="",
        PYTHONUNBUFFERED="1",
    )
    log = fresh_var.parent / "runarena.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [
                sys.executable,
                "manage.py",
                "runarena",
                "--addr",
                f"127.0.0.1:{port}",
                "--concurrency",
                "2",
            ],
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + DEADLINE_S
        finished: list[Any] = []
        while not finished:
            assert proc.poll() is None, log.read_text()[-5000:]
            assert time.monotonic() < deadline, log.read_text()[-5000:]
            time.sleep(1)
            try:
                page = get_json(f"{base}/api/matches/?kind=ladder&status=finished")
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                continue
            finished = page["results"]
        assert (fresh_var / "arena.sqlite3").is_file()
        assert (fresh_var / "celery-broker.sqlite3").is_file()
        match = finished[0]
        with urllib.request.urlopen(base + f"/matches/{match['id']}/record.txt") as r:
            assert b"[Result" in r.read()
        bots = get_json(f"{base}/api/bots/")["results"]
        assert {"random", "greedy", "search"} <= {b["name"] for b in bots}
    finally:
        # Ctrl-C: SIGINT to the command's process group, as a terminal sends it.
        os.killpg(proc.pid, signal.SIGINT)
        try:
            code = proc.wait(timeout=120)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            pytest.fail("runarena did not stop within 120 s:\n" + log.read_text()[-5000:])
    text = log.read_text()
    assert code == 0, text[-5000:]
    assert "stopped" in text
    pids = [
        int(line.rsplit("pid ", 1)[1].rstrip(")"))
        for line in text.splitlines()
        if line.startswith("started ") and "(pid " in line
    ]
    assert len(pids) == 3
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or processes_in_group(pid) == []
