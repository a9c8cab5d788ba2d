"""What one worker of the remote queue costs while remote bots think: its CPU, memory, threads
and database load with many games waiting on slow clients.

    ./dev bench remote [--games 32] [--think 30] [--window 20]

Registers twice ``--games`` remote bots and a game between each two (both sides remote, so no
sandboxed bot runs: what is measured is the waiting), starts a real Celery worker on the
remote queue in ``--games`` threads (``-P threads``, as ``runarena`` and the compose file start
it), and plays every game with a client of its own in this process that answers ``hello`` at
once and each ``request`` after ``--think`` seconds (its first legal action). Once every game
waits on a request, it stops looking for new lines and measures, over ``--window`` seconds,
the worker process's CPU (all its threads) and resident memory, its threads, and on
PostgreSQL the database's commits per second (``pg_stat_database``: use a database of the
run's own) and the connections the worker holds (``pg_stat_activity``). Then it ends the games
(their claims taken away, so that the worker aborts them at its next heartbeat), stops the
worker and removes what it made. It uses the configured database and broker.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import threading
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.contrib.auth.models import User
from django.db import connection
from django.db.models import F

from arena.bots import services as bots
from arena.bots.models import Bot
from arena.games import remote, services
from arena.games.models import Match, RemoteGame, RemoteLine
from tools import ToolError
from tools.bench.worker import Worker

#: The names of the bots and the user it makes (and removes).
PREFIX = "benchremote-"


@dataclass
class _Due:
    bot: Bot
    game: int
    seq: int
    line: str
    at: float


class Clients:
    """Every game's client, in one thread: it answers what the games ask, late by ``think``
    seconds for a request, while :attr:`looking` (else it only sends the answers it owes)."""

    def __init__(self, think: float) -> None:
        self.think = think
        self.looking = threading.Event()
        self.looking.set()
        self.stop = threading.Event()
        self.asked: set[int] = set()  # the games that were sent a request
        self.answers = 0
        self._seen: set[int] = set()
        self._due: list[_Due] = []
        self._bots: dict[int, Bot] = {}
        self._thread = threading.Thread(target=self._run, name="clients", daemon=True)

    def __enter__(self) -> Clients:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self._thread.join(30)

    def _run(self) -> None:
        try:
            while not self.stop.wait(0.2):
                if self.looking.is_set():
                    self._look()
                now = time.monotonic()
                for due in [d for d in self._due if d.at <= now]:
                    self._due.remove(due)
                    try:
                        remote.answer(due.bot, due.game, due.seq, due.line)
                        self.answers += 1
                    except remote.RemoteError:
                        pass  # the game ended meanwhile
        finally:
            connection.close()

    def _look(self) -> None:
        games = RemoteGame.objects.filter(closed_at__isnull=True, bot__name__startswith=PREFIX)
        for game in games.select_related("bot"):
            line = RemoteLine.objects.filter(game=game, answer__isnull=True).order_by("-pk").first()
            if line is None or line.pk in self._seen:
                continue
            self._seen.add(line.pk)
            message = json.loads(line.line)
            if message["type"] == "hello":
                answer, delay = json.dumps({"type": "ready", "name": "slow"}), 0.0
            elif message["type"] == "request":
                answer = json.dumps({"type": "action", "action": message["actions"][0]})
                delay = self.think
                self.asked.add(game.pk)
            else:
                continue
            self._due.append(_Due(game.bot, game.pk, line.pk, answer, time.monotonic() + delay))


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _commits() -> int | None:
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()"
        )
        row = cursor.fetchone()
    return int(row[0]) if row else None


def _connections() -> int | None:
    if connection.vendor != "postgresql":
        return None
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid()"
        )
        row = cursor.fetchone()
    return int(row[0]) if row else None


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./dev bench remote",
        description="Measure one remote worker while many remote bots think.",
    )
    parser.add_argument("--games", type=int, default=32)
    parser.add_argument("--think", type=float, default=30.0, help="seconds per answer")
    parser.add_argument("--window", type=float, default=20.0, help="seconds measured")
    o = parser.parse_args(argv)
    if o.games < 1 or o.think <= 0 or o.window <= 0:
        raise ToolError("--games, --think and --window: more than 0")
    if o.window >= o.think:
        raise ToolError("--window must be shorter than --think (the games must wait throughout)")
    print(
        f"database {settings.DATABASES['default']['ENGINE']}, broker "
        f"{str(settings.CELERY_BROKER_URL).split('://')[0]}; {o.games} games, a "
        f"{o.think:g} s answer to each request"
    )
    queue = f"bench-remote-{uuid.uuid4().hex[:8]}"
    settings.REMOTE_QUEUE = f"{queue}.remote"
    settings.THROTTLE_RATES = dict.fromkeys(settings.THROTTLE_RATES, "")
    owner, _ = User.objects.get_or_create(username=f"{PREFIX}owner")
    versions = [bots.create_remote_bot(owner, f"{PREFIX}{i}") for i in range(2 * o.games)]
    matches = [
        Match.objects.create(
            variant="yinsh",
            kind=Match.Kind.CHALLENGE,
            white=versions[2 * i],
            black=versions[2 * i + 1],
            time_control=f"{int(o.think * 20)}+0",
            seed=i,
            rated=False,
        )
        for i in range(o.games)
    ]
    ids = [m.pk for m in matches]
    try:
        with (
            Worker(
                queue,
                o.games,
                Path(tempfile.mkdtemp(prefix="bench-remote-")) / "worker.log",
                consume=f"{queue}.remote",
                pool="threads",
            ) as worker,
            Clients(o.think) as clients,
        ):
            services.queue_pending(ids)
            deadline = time.monotonic() + 300 + o.think
            while len(clients.asked) < o.games:
                worker.check()
                if time.monotonic() > deadline:
                    raise ToolError(f"only {len(clients.asked)} games started within the time")
                time.sleep(0.5)
            clients.looking.clear()
            time.sleep(0.5)
            cpu0, commits0, t0 = _cpu_seconds(worker.pid), _commits(), time.monotonic()
            time.sleep(o.window)
            cpu1, commits1, t1 = _cpu_seconds(worker.pid), _commits(), time.monotonic()
            held = _connections()
            threads = len(os.listdir(f"/proc/{worker.pid}/task"))
            rss = _rss_mib(worker.pid)
            elapsed = t1 - t0
            running = Match.objects.filter(pk__in=ids, status=Match.Status.RUNNING).count()
            print(f"{running} games waiting on their clients throughout {elapsed:.1f} s")
            print(
                f"the worker: {100 * (cpu1 - cpu0) / elapsed:.1f}% of a core, "
                f"{rss:.0f} MiB resident, {threads} threads"
            )
            if commits0 is not None and commits1 is not None:
                print(
                    f"the database: {(commits1 - commits0) / elapsed:.0f} commits/s, "
                    f"{held} connections held (the worker's, and this benchmark's clients')"
                )
            # End the games: their claims taken away, the worker aborts them at its next beat.
            Match.objects.filter(pk__in=ids).update(attempts=F("attempts") + 1)
            still = RemoteGame.objects.filter(match_id__in=ids, closed_at__isnull=True)
            deadline = time.monotonic() + 120
            while still.exists() and time.monotonic() < deadline:
                worker.check()
                time.sleep(0.5)
    finally:
        Match.objects.filter(pk__in=ids).delete()
        Bot.objects.filter(name__startswith=PREFIX).delete()
        User.objects.filter(username=f"{PREFIX}owner").delete()
    return 0
