"""The run on several hosts (tools/hosts/): the web server and two workers each in a mount
namespace of its own, whose files none of the others sees, on PostgreSQL and Redis; a bot
uploaded through the API, checked, rated and playing a tournament while a worker host dies."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings as django_settings

from tests.arena.conftest import RUN_DIR, adopting_orphans, bots_started_here
from tests.conftest import require_root
from tools import ToolError
from tools.hosts import run
from tools.hosts.host import Command, Host

on_postgres_and_redis = pytest.mark.skipif(
    "postgresql" not in django_settings.DATABASES["default"]["ENGINE"]
    or not django_settings.REDIS_URL,
    reason="the hosts share only the database and the broker: needs DATABASE_URL on "
    "PostgreSQL and REDIS_URL",
)


def mounted_anywhere(path: Path) -> list[str]:
    """The processes of this machine (any mount namespace) that have something mounted at
    ``path``."""
    found = []
    for mountinfo in Path("/proc").glob("[0-9]*/mountinfo"):
        try:
            lines = mountinfo.read_text().splitlines()
        except OSError:  # the process ended meanwhile
            continue
        if any(line.split()[4] == str(path) for line in lines):
            found.append(mountinfo.parent.name)
    return found


def test_a_hosts_script_mounts_its_own_tmpfs_and_runs_its_commands_in_turn(
    tmp_path: Path,
) -> None:
    host = Host(
        "web",
        tmp_path / "hosts",
        {},
        tmp_path,
        setup=[Command(["manage.py", "migrate"], tmp_path / "setup.log")],
        services=[
            Command(["celery", "beat"], tmp_path / "beat.log"),
            Command(["gunicorn", "arena.wsgi"], tmp_path / "web.log"),
        ],
    )
    lines = host.script().splitlines()
    assert lines[:2] == ["set -e", f"mount -t tmpfs -o mode=0711 web {tmp_path}/hosts"]
    assert lines[-3:] == [
        f"manage.py migrate >> {tmp_path}/setup.log 2>&1",
        f"celery beat >> {tmp_path}/beat.log 2>&1 &",
        f"exec gunicorn arena.wsgi >> {tmp_path}/web.log 2>&1",
    ]


def test_the_hosts_run_refuses_a_database_or_broker_the_hosts_cannot_share(
    settings: Any, tmp_path: Path
) -> None:
    assert "PostgreSQL" in run.refusal("django.db.backends.sqlite3", "redis://127.0.0.1:6379/0")
    assert "Redis" in run.refusal("django.db.backends.postgresql", "sqla+sqlite:///broker")
    settings.CELERY_BROKER_URL = f"sqla+sqlite:///{tmp_path / 'broker.sqlite3'}"
    with pytest.raises(ToolError, match=r"set (DATABASE_URL|REDIS_URL) to"):
        run.main([f"--dir={tmp_path / 'run'}"])
    assert not list(tmp_path.iterdir())  # nothing made


@pytest.mark.worker
@pytest.mark.slow
@on_postgres_and_redis
@pytest.mark.django_db(transaction=True)
def test_three_hosts_with_private_files_check_rate_and_play_and_recover_a_killed_host(
    worker_env: dict[str, str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    require_root("the hosts are mount namespaces")
    monkeypatch.setenv("DATABASE_URL", worker_env["DATABASE_URL"])  # the test database
    base = RUN_DIR / f"hosts-{uuid.uuid4().hex[:6]}"  # reachable by the bots' uids
    figures = tmp_path / "figures.json"

    def logs() -> str:
        return "\n".join(
            f"== {p.name}\n{p.read_text(errors='replace')[-3000:]}"
            for p in sorted((base / "logs").glob("*.log"))
        )

    with adopting_orphans():
        try:
            run.main([f"--dir={base}", f"--json={figures}", "--timeout=900"])
        except ToolError as e:
            # Timing targets are the benchmark's business (docs/benchmarks.md); every other
            # check is not.
            assert str(e) == "targets missed: recovery", f"{e}\n{logs()}"
        left = bots_started_here()

    got = json.loads(figures.read_text())
    # Each host saw only its own start-up mark at the same path; this process saw nothing
    # there, and nothing is mounted there any more, in any namespace.
    assert got["private_files"] == {h: [h] for h in ("web", "worker-1", "worker-2")}
    assert got["seen_outside"] == []
    assert not list((base / "hosts").iterdir())
    assert mounted_anywhere(base / "hosts") == []
    # The upload was checked, then rated.
    assert 0 < got["check_s"] <= got["rating_s"], got
    # A worker host died during a game; its games finished on the other; nothing was lost
    # or counted twice.
    assert got["killed"] in ("worker-1", "worker-2"), got
    assert got["killed_playing"] >= 1, got
    assert got["recovered_on_other_host"] == got["killed_playing"], (got, logs())
    assert got["matches"] == 6 and got["finished"] + got["aborted"] == 6, got
    assert got["lost"] == 0 and got["counted_twice"] == 0, (got, logs())
    assert got["sweeps"] > 0
    # The bots of the killed host are gone with it.
    assert not left, left
