"""What the arena costs a game at the ladder's time control, with the built-in bots.

    ./dev bench ladder [--games 20] [--concurrency 1] [--bots greedy search] [--time 10+0.1]

Plays ``--games`` games between copies of two built-in bots (colours alternating) through the
full path: the matches queued, a real Celery worker process (``--concurrency`` pool processes)
claiming, playing and finishing them. Then it splits each game's time:

* the task's run time, from the worker's log (``Task ... succeeded in``): claim, bots loaded,
  the game, the result's transaction;
* the bots' own time, from each game's transcript: their start (until the later ``ready``) and
  their thinking (the wall time of every request, from its writing to the answer's end);
* the delivery gap between one task's end and the next one's receipt (one pool process only:
  with several, the gaps overlap the other processes' games).

The arena's overhead per game is the rest: the run time and the gap less the bots' own time
(the sandbox's launch, the referee's work between the moves, the bots' exit, the database, the
broker). It prints the overhead in milliseconds and as a share of a game's wall time, games per
minute, and the worker's Python processes (its bots left out) with their largest resident
memory. It uses the configured database and broker (set DATABASE_URL / REDIS_URL to measure
PostgreSQL and Redis) and removes what it made.

For the capacity table of docs/deployment.md it also counts, on PostgreSQL, the connections the
worker's processes hold to the database (the most seen at once) and the database's commits and
rows written per game (``pg_stat_database``: use a database of the run's own, nothing else may
write there meanwhile), and with Redis the commands and bytes the Redis server handled per game
(``INFO stats``: the whole server's, so give it a Redis of its own).
"""

from __future__ import annotations

import argparse
import itertools
import re
import statistics
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection, transaction

from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion
from arena.celery import app as celery_app
from arena.games.models import Match, MatchRecord
from arena.jobs import claims
from tools import ToolError
from tools.bench.worker import Worker

#: The names of the bots it makes (and removes).
PREFIX = "benchladder-"

_LINE = re.compile(
    r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*?Task \S+\[([0-9a-f-]+)\] "
    r"(received|succeeded in ([0-9.]+)s)"
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="./dev bench ladder",
        description="Measure the arena's overhead per game at the ladder's time control.",
    )
    parser.add_argument("--games", type=int, default=20)
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--bots", nargs=2, default=["greedy", "search"], metavar="BOT")
    parser.add_argument("--time", default=settings.LADDER_TIME_CONTROL)
    parser.add_argument("--variant", default="yinsh")
    o = parser.parse_args(argv)
    if o.games < 2:
        raise ToolError("--games: at least 2")
    print(
        f"database {settings.DATABASES['default']['ENGINE']}, broker "
        f"{str(settings.CELERY_BROKER_URL).split(':', 1)[0]}, {o.games} games "
        f"{' vs '.join(o.bots)} at {o.time}, {o.variant}, concurrency {o.concurrency}"
    )
    try:
        versions = [
            bots.builtin_copy(f"{PREFIX}{i}-{name}", name, BotVersion.Status.RETIRED)
            for i, name in enumerate(o.bots)
        ]
        report = _play(versions, o.games, o.concurrency, o.time, o.variant)
    finally:
        _remove()
    print(report.text())
    return 0


@dataclass
class Tasks:
    """What the worker's log says of its tasks: when each was received, when it ended and how
    long it ran (seconds)."""

    received: dict[str, datetime] = field(default_factory=dict)
    ended: dict[str, datetime] = field(default_factory=dict)
    runtime: dict[str, float] = field(default_factory=dict)

    @classmethod
    def read(cls, lines: Iterable[str]) -> Tasks:
        """From a worker's log (the arena's logging format).

        >>> log = [
        ...     "2026-11-27 08:00:00,000 INFO celery.worker.strategy: Task a.b[1f] received",
        ...     "2026-11-27 08:00:04,500 INFO celery.app.trace: Task a.b[1f] succeeded in 4.25s",
        ... ]
        >>> t = Tasks.read(log)
        >>> t.runtime, t.ended["1f"].second
        ({'1f': 4.25}, 4)
        """
        tasks = cls()
        for line in lines:
            m = _LINE.match(line)
            if m is None:
                continue
            at = datetime.strptime(m[1], "%Y-%m-%d %H:%M:%S,%f")
            if m[3] == "received":
                tasks.received[m[2]] = at
            else:
                tasks.ended[m[2]] = at
                tasks.runtime[m[2]] = float(m[4])
        return tasks

    def gaps(self) -> list[float]:
        """Seconds between each task's end and the next task's receipt (one pool process)."""
        order = sorted(self.received, key=lambda k: self.received[k])
        return [
            (self.received[b] - self.ended[a]).total_seconds()
            for a, b in itertools.pairwise(order)
            if a in self.ended
        ]


@dataclass
class Report:
    games: int
    concurrency: int
    runtime_s: list[float]
    bots_s: list[float]
    gaps_s: list[float]
    span_s: float
    processes: int
    rss_mib: dict[str, float]
    traffic: dict[str, float] = field(default_factory=dict)
    connections: int | None = None

    def text(self) -> str:
        runtime, own = statistics.mean(self.runtime_s), statistics.mean(self.bots_s)
        gap = statistics.mean(self.gaps_s) if self.concurrency == 1 and self.gaps_s else 0.0
        overhead = runtime - own + gap
        wall = runtime + gap
        lines = [
            f"a game: {wall * 1000:.0f} ms of wall time on average (task {runtime * 1000:.0f} ms"
            + (f", delivery gap {gap * 1000:.0f} ms" if self.concurrency == 1 else "")
            + f"), the bots' own start and thinking {own * 1000:.0f} ms",
            f"the arena's overhead: {overhead * 1000:.0f} ms a game, "
            f"{100 * overhead / wall:.2f}% of its wall time"
            + ("" if self.concurrency == 1 else " (delivery gaps overlap other games: left out)"),
            f"throughput: {(self.games - 1) / self.span_s * 60:.1f} games/min "
            f"with {self.concurrency} pool process(es)",
            f"the worker's Python processes (bots left out): {self.processes}; largest resident "
            "memory: " + ", ".join(f"{k} {v:.0f} MiB" for k, v in sorted(self.rss_mib.items())),
        ]
        if self.connections is not None:
            lines.append(
                f"database connections held by the worker: at most {self.connections} at once"
            )
        if self.traffic:
            lines.append(
                "per game: "
                + ", ".join(f"{v / self.games:.1f} {k}" for k, v in self.traffic.items())
            )
        return "\n".join(lines)


def _play(versions: list[BotVersion], n: int, c: int, tc: str, variant: str) -> Report:
    queue = f"bench-{uuid.uuid4().hex[:8]}"
    celery_app.conf.task_default_queue = queue
    with transaction.atomic():
        ids = []
        for i in range(n):
            white, black = versions if i % 2 == 0 else versions[::-1]
            m = Match.objects.create(
                variant=variant,
                kind=Match.Kind.LADDER,
                status=Match.Status.QUEUED,
                white=white,
                black=black,
                time_control=tc,
                seed=i,
                rated=False,
            )
            claims.dispatch(m)
            ids.append(m.pk)
    with tempfile.TemporaryDirectory(prefix="bench-ladder-") as tmp:
        log = Path(tmp) / "worker.log"
        before = _traffic()
        with Worker(queue, c, log, loglevel="INFO") as worker:
            sampler = _Sampler(worker.pid)
            sampler.start()
            worker.play(ids)
            sampler.stop()
        after = _traffic()
        tasks = Tasks.read(log.read_text(errors="replace").splitlines())
    aborted = Match.objects.filter(pk__in=ids, status="aborted").count()
    if aborted:
        raise ToolError(f"{aborted} of the games were aborted: see the worker's log")
    if len(tasks.runtime) != n:
        raise ToolError(f"the worker's log names {len(tasks.runtime)} finished tasks, not {n}")
    ends = sorted(tasks.ended.values())
    return Report(
        games=n,
        concurrency=c,
        runtime_s=list(tasks.runtime.values()),
        bots_s=[
            _bots_own_time(t)
            for t in MatchRecord.objects.filter(match__in=ids).values_list("transcript", flat=True)
        ],
        gaps_s=tasks.gaps(),
        span_s=(ends[-1] - ends[0]).total_seconds(),
        processes=sampler.most,
        rss_mib=sampler.rss_mib,
        traffic={k: after[k] - before[k] for k in before},
        connections=sampler.connections,
    )


def _postgres() -> bool:
    return bool(connection.vendor == "postgresql")


def _traffic() -> dict[str, float]:
    """The database's and the broker's counters so far (what each has; nothing on SQLite and
    the file broker). The database's statistics reach ``pg_stat_database`` when a backend's
    transaction ends or it goes idle (within a second): the worker has stopped by now."""
    counts: dict[str, float] = {}
    if _postgres():
        time.sleep(1.5)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT xact_commit, tup_inserted, tup_updated, tup_deleted"
                " FROM pg_stat_database WHERE datname = current_database()"
            )
            row = cursor.fetchone()
        assert row is not None
        commits, inserted, updated, deleted = (float(v) for v in row)
        counts["database commits"] = commits
        counts["rows written (inserted, updated, deleted)"] = inserted + updated + deleted
    broker = str(settings.CELERY_BROKER_URL)
    if broker.startswith(("redis://", "rediss://")):
        import redis

        stats = redis.Redis.from_url(broker).info("stats")
        counts["Redis commands"] = float(stats["total_commands_processed"])
        counts["Redis bytes in and out"] = float(
            stats["total_net_input_bytes"] + stats["total_net_output_bytes"]
        )
    return counts


def _bots_own_time(transcript: Any) -> float:
    """Seconds of a game that were the bots' own: their start (until the later ``ready``) and
    the wall time of every request they answered."""
    start = max((p.get("ready") or {}).get("ms") or 0.0 for p in transcript["players"].values())
    thinking = sum(m.get("ms", 0.0) for m in transcript["moves"])
    return float(start + thinking) / 1000.0


class _Sampler(threading.Thread):
    """Counts the worker's Python processes (those of its session running Celery: the main
    process and its pool, never the bots) and keeps the largest resident memory of each kind;
    on PostgreSQL, the most connections to the database at once other than this process's."""

    def __init__(self, session: int) -> None:
        super().__init__(daemon=True)
        self.session = session
        self.most = 0
        self.rss_mib: dict[str, float] = {}
        self.connections: int | None = None
        self._mine: int | None = None
        if _postgres():
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_backend_pid()")
                row = cursor.fetchone()
            self._mine = int(row[0]) if row else None
        self._done = threading.Event()

    def stop(self) -> None:
        self._done.set()
        self.join()

    def run(self) -> None:
        try:
            while not self._done.wait(0.5):
                self._sample()
            # A last look while the worker still runs: a short run may end between two looks,
            # and the pool's connections stay open until the worker stops.
            self._sample()
        finally:
            connection.close()  # this thread's own, if it opened one

    def _count_connections(self) -> None:
        if self._mine is None:
            return
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid NOT IN (pg_backend_pid(), %s)",
                [self._mine],
            )
            row = cursor.fetchone()
        seen = int(row[0]) if row else 0
        self.connections = max(self.connections or 0, seen)

    def _sample(self) -> None:
        self._count_connections()
        seen = 0
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                stat = (proc / "stat").read_text()
                cmdline = (proc / "cmdline").read_bytes()
                status = (proc / "status").read_text()
            except OSError:
                continue
            fields = stat.rsplit(")", 1)[1].split()
            if int(fields[3]) != self.session or b"celery" not in cmdline:
                continue
            seen += 1
            kind = "main process" if int(proc.name) == self.session else "pool process"
            rss = next(
                (
                    int(line.split()[1]) / 1024
                    for line in status.splitlines()
                    if line.startswith("VmRSS:")
                ),
                0.0,
            )
            self.rss_mib[kind] = max(self.rss_mib.get(kind, 0.0), rss)
        self.most = max(self.most, seen)


def _remove() -> None:
    with transaction.atomic():
        versions = BotVersion.objects.filter(bot__name__startswith=PREFIX)
        Match.objects.filter(white__in=versions).delete()
        Match.objects.filter(black__in=versions).delete()
        Bot.objects.filter(name__startswith=PREFIX).delete()
