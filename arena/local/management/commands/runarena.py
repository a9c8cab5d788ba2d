"""Run the whole arena on one machine: ``python manage.py runarena``.

Migrates the database, registers the built-in bots, then starts a Celery worker, a worker
in threads for the games of remote bots, the Celery beat scheduler (with its own worker for
the periodic queue) and the web server as child processes, and watches them. Ctrl-C (or SIGTERM)
stops all three: each gets SIGTERM, and whatever is still running after a grace period is
killed with its process group. A game cut short this way is played again later (the sweeper
re-queues it once its heartbeat is stale).

On the embedded defaults nothing else is needed: SQLite and the Celery broker are files in
``var/``. ``DATABASE_URL`` and ``REDIS_URL`` switch to PostgreSQL and Redis.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from types import FrameType
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.bots import services as bots
from arena.celery import app as celery_app
from arena.jobs import claims

#: Seconds the children get to stop after SIGTERM before they are killed.
GRACE_S = 10.0
#: The scheduler: ``celery beat`` inside a worker of its own that consumes only the periodic
#: queue, in threads (the sweeper, the rating refresh and the ladder at once), so that
#: periodic work never waits behind matches.
SCHEDULER_WORKER = ["worker", "--beat", "--pool", "threads", "--concurrency", "3"]


class Command(BaseCommand):
    help = (
        "Run everything locally: migrate, register the built-in bots, start a Celery worker "
        "and beat, and serve the site (http://127.0.0.1:8000). Ctrl-C stops it all."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--addr", default="127.0.0.1:8000", help="where the site listens")
        parser.add_argument(
            "--concurrency",
            type=int,
            default=max(1, min(4, os.cpu_count() or 1)),
            help="games played at once by the worker",
        )
        parser.add_argument("--no-web", action="store_true", help="do not start the web server")
        parser.add_argument("--no-beat", action="store_true", help="do not start the scheduler")
        parser.add_argument("--no-worker", action="store_true", help="do not start a worker")

    def handle(self, *args: object, **options: Any) -> None:
        var = Path(settings.VAR_DIR)
        var.mkdir(parents=True, exist_ok=True)
        self.stdout.write(f"database: {_describe_db()}; broker: {_describe_broker()}")
        call_command("migrate", interactive=False, verbosity=0)
        self.stdout.write("database migrated")
        self._sandbox_report()
        for v in bots.register_builtin_bots():
            self.stdout.write(f"registered built-in bot {v.label}; its check is queued")
        declare_queues(
            [settings.PERIODIC_QUEUE, settings.CELERY_TASK_DEFAULT_QUEUE, settings.REMOTE_QUEUE],
            str(settings.CELERY_BROKER_URL),
        )
        if str(settings.CELERY_BROKER_URL).startswith("sqla+"):
            # The embedded broker loses the messages a killed worker had taken: send the
            # waiting work again (the claims make duplicates harmless).
            n = claims.resend_queued()
            if n:
                self.stdout.write(f"sent {n} waiting task(s) again")

        python = sys.executable
        manage = str(Path(settings.BASE_DIR) / "manage.py")
        commands: list[tuple[str, list[str]]] = []
        if not options["no_worker"]:
            commands.append(
                (
                    "worker",
                    [
                        python,
                        "-m",
                        "celery",
                        "-A",
                        "arena",
                        "worker",
                        "--loglevel",
                        "INFO",
                        "--concurrency",
                        str(options["concurrency"]),
                        "--queues",
                        f"{settings.PERIODIC_QUEUE},{settings.CELERY_TASK_DEFAULT_QUEUE}",
                        "--hostname",
                        "local@%h",
                        "--without-gossip",
                        "--without-mingle",
                    ],
                )
            )
            commands.append(("remote", remote_worker_argv(python)))
        if not options["no_beat"]:
            commands.append(
                (
                    "beat",
                    [
                        python,
                        "-m",
                        "celery",
                        "-A",
                        "arena",
                        *SCHEDULER_WORKER,
                        "--queues",
                        settings.PERIODIC_QUEUE,
                        "--hostname",
                        "scheduler@%h",
                        "--loglevel",
                        "INFO",
                        "--schedule",
                        str(var / "celerybeat-schedule"),
                    ],
                )
            )
        if not options["no_web"]:
            # Django's own server serves the static files from the source (--insecure: also
            # with debug off); a production site collects them for whitenoise instead.
            web = [python, manage, "runserver", options["addr"], "--noreload", "--insecure"]
            commands.append(("web", web))
        self._run(commands, options["addr"])

    def _sandbox_report(self) -> None:
        from arena.referee import sandbox_settings
        from arena.referee.sandbox import ProtectionLevel, probe

        report = probe(sandbox_settings(state_dir=str(settings.SANDBOX_STATE_DIR)))
        self.stdout.write(f"sandbox: protection level {report.level.value}")
        if report.level is not ProtectionLevel.FULL and not settings.ALLOW_UNSANDBOXED:
            self.stdout.write(
                self.style.WARNING(
                    "uploaded bots will be refused at this protection level (the built-in bots "
                    "run); set ARENA_ALLOW_UNSANDBOXED=1 to run them anyway, for development"
                )
            )

    def _run(self, commands: list[tuple[str, list[str]]], addr: str) -> None:
        stopping = False

        def stop(signum: int, frame: FrameType | None) -> None:
            nonlocal stopping
            stopping = True

        previous = {s: signal.signal(s, stop) for s in (signal.SIGINT, signal.SIGTERM)}
        env = dict(os.environ, DJANGO_SETTINGS_MODULE="arena.settings", PYTHONUNBUFFERED="1")
        children: list[tuple[str, subprocess.Popen[bytes]]] = []
        failed = None
        try:
            for name, argv in commands:
                # Their own session, so that the terminal's Ctrl-C reaches this process only
                # and the children are stopped in order.
                children.append((name, subprocess.Popen(argv, env=env, start_new_session=True)))
                self.stdout.write(f"started {name} (pid {children[-1][1].pid})")
            if any(name == "web" for name, _ in commands):
                self.stdout.write(self.style.SUCCESS(f"the arena is at http://{addr}/"))
            self.stdout.write("Ctrl-C stops everything")
            while not stopping:
                for name, child in children:
                    if child.poll() is not None:
                        failed = f"{name} exited with status {child.returncode}"
                        stopping = True
                        break
                time.sleep(0.5)
        finally:
            self._stop(children)
            for s, handler in previous.items():
                signal.signal(s, handler)
        if failed:
            raise CommandError(f"{failed}; everything was stopped")
        self.stdout.write("stopped")

    def _stop(self, children: list[tuple[str, subprocess.Popen[bytes]]]) -> None:
        """SIGTERM to each child (web and beat first), then kill what is left."""
        for name, child in reversed(children):
            if child.poll() is None:
                self.stdout.write(f"stopping {name}")
                child.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + GRACE_S
        for _, child in children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                child.wait(timeout=max(0.1, deadline - time.monotonic()))
        for name, child in children:
            # The child leads its own process group (start_new_session): this stops it and
            # its pool processes, by id.
            try:
                os.killpg(child.pid, signal.SIGKILL)
                if child.poll() is None:
                    self.stdout.write(f"killed {name}")
            except ProcessLookupError:
                pass
            child.wait()


def remote_worker_argv(python: str) -> list[str]:
    """The worker of the games with a remote player (arena.games.remote): the remote queue
    only, in ``REMOTE_CONCURRENCY`` threads, since such a game mostly waits for the network
    (the sandboxed opponent still runs in the sandbox, launched from its thread)."""
    return [
        python,
        "-m",
        "celery",
        "-A",
        "arena",
        "worker",
        "--loglevel",
        "INFO",
        "--pool",
        "threads",
        "--concurrency",
        str(settings.REMOTE_CONCURRENCY),
        "--queues",
        settings.REMOTE_QUEUE,
        "--hostname",
        "remote@%h",
        "--without-gossip",
        "--without-mingle",
    ]


def declare_queues(names: Iterable[str], url: str) -> None:
    """Declare the queues ``names`` on the broker at ``url``, from this one process.

    The embedded broker (kombu's SQLAlchemy transport) makes its tables and a queue's row on
    first use, with no lock between processes: the worker and the scheduler's worker starting
    at once on a new broker file can both try, and one of them dies (``UNIQUE constraint
    failed: kombu_queue.name``). Declared here first, the children only read them. On Redis
    declaring a queue does nothing.
    """
    with celery_app.connection_for_write(url) as conn:
        channel: Any = conn.default_channel  # a kombu virtual channel (SQLAlchemy, Redis)
        for name in names:
            channel.queue_declare(queue=name)


def _describe_db() -> str:
    db = settings.DATABASES["default"]
    engine = str(db["ENGINE"]).rsplit(".", 1)[-1]
    return f"{engine} {db['NAME']}" if engine == "sqlite3" else f"{engine} {db.get('HOST', '')}"


def _describe_broker() -> str:
    url = str(settings.CELERY_BROKER_URL)
    return url if url.startswith("sqla+") else url.split("@")[-1]
