"""``manage.py runarena`` on a fresh machine: embedded defaults, games start, Ctrl-C stops all.

The command runs as a subprocess in an empty var/ folder of its own (its own SQLite database
and broker), exactly as a newcomer would start it.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import signal
import socket
import sqlite3
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
from django.core.management import call_command

from arena.local.management.commands import runarena

ROOT = Path(__file__).resolve().parents[3]
DEADLINE_S = 600  # generous: nothing here measures speed

#: A process of the arena opening the broker and declaring its queues, as a worker does when
#: it starts. Several of them declare in each broker file at once: at the time the file ``go``
#: names, in the first file, then every 0.1 s in the next.
DECLARE = """
import sys, time
from pathlib import Path
from arena.celery import app as celery_app
go, names, files = Path(sys.argv[1]), sys.argv[2].split(","), sys.argv[3:]
print("ready", flush=True)
while not go.exists():
    time.sleep(0.001)
start = float(go.read_text())
for i, f in enumerate(files):
    time.sleep(max(0.0, start + 0.1 * i - time.time()))
    with celery_app.connection_for_write(f"sqla+sqlite:///{f}") as conn:
        for name in names:
            conn.default_channel.queue_declare(queue=name)
"""


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


def queues_in(broker: Path) -> set[str]:
    with sqlite3.connect(broker) as db:
        return {name for (name,) in db.execute("SELECT name FROM kombu_queue")}


@pytest.fixture
def embedded_broker(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """This process's Celery app set as for the embedded broker (no transport options; the
    suite's PostgreSQL leg sets Redis's), and an environment that sets the processes it
    starts so too."""
    from arena.celery import app as celery_app

    monkeypatch.setitem(celery_app.conf, "broker_transport_options", {})
    env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "ARENA_CELERY_BROKER_URL")}
    return dict(env, DJANGO_SETTINGS_MODULE="arena.settings")


def test_processes_starting_at_once_on_new_broker_files_all_start_once_they_are_prepared(
    tmp_path: Path, embedded_broker: dict[str, str]
) -> None:
    """kombu makes the embedded broker's tables and a queue's row on first use, with no lock
    between processes: four processes declaring the same queues at once in a new file fail in
    about half of the files (``UNIQUE constraint failed: kombu_queue.name``, ``table
    kombu_queue already exists``). On files prepared by :func:`runarena.declare_queues` all of
    them start."""
    names = ["arena-x.periodic", "arena-x"]
    files = [tmp_path / f"broker-{i}.sqlite3" for i in range(12)]
    for f in files:
        runarena.declare_queues(names, f"sqla+sqlite:///{f}")
    go = tmp_path / "go"
    argv = [sys.executable, "-c", DECLARE, str(go), ",".join(names), *map(str, files)]
    env = embedded_broker
    procs = [
        subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for _ in range(4)
    ]
    try:
        for p in procs:
            assert p.stdout is not None and p.stdout.readline() == b"ready\n"
        (tmp_path / "go.new").write_text(str(time.time() + 0.2))
        (tmp_path / "go.new").rename(go)
        for p in procs:
            _, err = p.communicate(timeout=DEADLINE_S)
            assert p.returncode == 0, err.decode()[-3000:]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    for f in files:
        assert queues_in(f) == set(names)


@pytest.mark.django_db
def test_runarena_declares_the_queues_before_it_starts_anything(
    settings: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, embedded_broker: Any
) -> None:
    broker = tmp_path / "broker.sqlite3"
    settings.CELERY_BROKER_URL = f"sqla+sqlite:///{broker}"
    settings.CELERY_TASK_DEFAULT_QUEUE, settings.PERIODIC_QUEUE = "arena-y", "arena-y.periodic"
    settings.REMOTE_QUEUE = "arena-y.remote"
    settings.VAR_DIR = tmp_path / "var"
    settings.SANDBOX_STATE_DIR = tmp_path / "sandbox"
    settings.BUILTIN_BOTS = []
    seen: list[set[str]] = []
    started: list[list[tuple[str, list[str]]]] = []

    def run(self: Any, commands: list[tuple[str, list[str]]], addr: str) -> None:
        seen.append(queues_in(broker))
        started.append(commands)

    # Where the command starts its processes: look at the broker then, start nothing.
    monkeypatch.setattr(runarena.Command, "_run", run)
    call_command("runarena", stdout=io.StringIO())
    assert seen == [{"arena-y", "arena-y.periodic", "arena-y.remote"}]
    # The games of remote bots have a worker of their own, in threads, on their queue only.
    remote = dict(started[0])["remote"]
    assert remote[remote.index("--queues") + 1] == "arena-y.remote"
    assert remote[remote.index("--pool") + 1] == "threads"
    assert remote[remote.index("--concurrency") + 1] == str(settings.REMOTE_CONCURRENCY)


@pytest.mark.worker
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
    assert len(pids) == 4  # the worker, the remote games' worker, the scheduler, the site
    for pid in pids:
        assert not Path(f"/proc/{pid}").exists() or processes_in_group(pid) == []
