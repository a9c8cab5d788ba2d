"""The arena on several hosts, on one machine: a run anyone can repeat.

    ./dev hosts [--bot greedy] [--games-per-pair 2] [--time-control 5+0.1] [--concurrency 1]

Starts three "hosts" (:mod:`tools.hosts.host`), each a process tree in a mount namespace of
its own that mounts a fresh tmpfs over the run's ``hosts/`` folder and keeps its var folders
there (``ARENA_VAR_DIR``, the bot store, the bot cache, the sandbox's state, the builds): every
host sees its own files at the same path and none sees another's, as separate machines would.
They share only PostgreSQL and Redis (``DATABASE_URL``, ``REDIS_URL``; the run refuses other
databases and brokers) and a Celery queue of the run's own:

* ``web``: makes the run's account and registers the built-in bots (``manage.py``), then runs
  gunicorn on a free port of 127.0.0.1 and the scheduler (beat and the periodic tasks), as
  compose's ``web`` and ``scheduler`` do;
* ``worker-1``, ``worker-2``: a Celery worker each.

The run checks that each host sees only its own files, then, through the HTTP API of the web
host only, as a user would: gets a token, uploads a copy of a built-in bot, waits until its
check has passed and it has a rating, and organises a rated round robin between it and the
built-in bots. As soon as a worker host plays one of its games, it kills that host (SIGKILL to
all its processes: a machine losing power); the sweeper must queue its games again and the
other host finish them. At the end it prints the times to the check and to the rating, what
became of every game (:func:`tools.chaos.accounting.tally`) and the longest recovery against
the chaos run's target; the exit status is 1 when anything was lost or counted twice, a check
failed, or a target was missed. Use a scratch database: the run's account, bot and tournament
stay there, to be looked at.
"""

from __future__ import annotations

import argparse
import functools
import io
import json
import os
import secrets
import socket
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.db import connection

from arena.bots.services import pack_folder
from arena.games.models import Match
from arena.jobs import startup
from arena.local.management.commands.runarena import SCHEDULER_WORKER
from arena.tournaments.models import Tournament
from tools import ToolError
from tools.chaos.accounting import Recoveries, longest_gap, runs_in_log, tally
from tools.chaos.run import GRACE_S, RECOVERY_TARGET_S, SWEEP, say
from tools.hosts.host import Command, Host, check_unshare, tail

M = Match.Status
#: Seconds a host gets to start (mount its tmpfs, and the web host to answer /healthz).
START_S = 300.0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="./dev hosts",
        description=(
            "Run the web server and two workers each in a mount namespace of its own, on "
            "PostgreSQL and Redis; upload a bot through the API, play a tournament, kill a "
            "worker host during it, and check that its games recover on the other."
        ),
    )
    p.add_argument("--bot", default="greedy", help="the built-in bot whose copy is uploaded")
    p.add_argument(
        "--builtins",
        default="random,greedy",
        help="the built-in bots the web host registers and the tournament plays (random, "
        "the rating anchor, among them)",
    )
    p.add_argument("--variant", default="yinsh", help="of the tournament and the rating waited for")
    p.add_argument("--games-per-pair", type=int, default=2)
    p.add_argument(
        "--time-control",
        default="5+0.1",
        help="of the tournament, the check and the qualification games",
    )
    p.add_argument("--concurrency", type=int, default=1, help="games per worker host")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds in all")
    p.add_argument(
        "--dir",
        type=Path,
        help="the run's folder: the logs and the hosts' shared mount point (default "
        "var/hosts/RUN); it must be reachable by other users (the bots' uids)",
    )
    p.add_argument("--json", type=Path, help="also write the figures to this file")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run with the command line's options (Django set up); 0 when every check passed and every
    target was met. Raises :class:`~tools.ToolError` otherwise."""
    HostsRun(parser().parse_args(argv)).run()
    return 0


def refusal(engine: str, broker: str) -> str:
    """Why the run cannot use this database engine and broker ("" when it can): the hosts
    share only PostgreSQL and Redis; the embedded database and broker are one host's files.

    >>> refusal("django.db.backends.postgresql", "redis://127.0.0.1:6379/0")
    ''
    >>> refusal("django.db.backends.postgresql", "sqla+sqlite:///var/celery-broker.sqlite3")
    'the hosts share the broker: set REDIS_URL to a Redis server'
    """
    if "postgresql" not in engine:
        return (
            "the hosts share the database: set DATABASE_URL to a PostgreSQL database (a "
            "scratch one: the run's account, bot and tournament stay there)"
        )
    if not broker.startswith(("redis://", "rediss://")):
        return "the hosts share the broker: set REDIS_URL to a Redis server"
    return ""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@dataclass
class Api:
    """The arena's HTTP API at ``base``, as any client uses it (a token once it has one)."""

    base: str
    token: str = ""

    def call(self, method: str, path: str, body: Any = None, *, files: Any = None) -> Any:
        headers = {"Accept": "application/json"}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        data = None
        if files is not None:
            data, headers["Content-Type"] = multipart(body or {}, files)
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.base + path, data, headers, method=method)
        try:
            with urllib.request.urlopen(request, timeout=120) as response:
                raw = response.read()
        except urllib.error.HTTPError as e:
            detail = e.read().decode(errors="replace")[:1000]
            raise ToolError(f"{method} {path}: {e.code} {detail}") from None
        except (urllib.error.URLError, OSError) as e:
            raise ToolError(f"{method} {path}: {e}") from None
        return json.loads(raw) if raw else None

    def up(self) -> bool:
        try:
            with urllib.request.urlopen(self.base + "/healthz", timeout=30) as response:
                return int(response.status) == 200
        except (urllib.error.URLError, OSError):
            return False


def multipart(fields: dict[str, str], files: dict[str, tuple[str, bytes]]) -> tuple[bytes, str]:
    """A ``multipart/form-data`` body of text fields and files, and its content type."""
    boundary = uuid.uuid4().hex
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    for name, (filename, data) in files.items():
        head = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"; '
            f'filename="{filename}"\r\nContent-Type: application/octet-stream\r\n\r\n'
        )
        parts.append(head.encode() + data + b"\r\n")
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


@dataclass
class Figures:
    """What the run measured and saw, as ``--json`` writes it."""

    run: str
    private_files: dict[str, list[str]] = field(default_factory=dict)
    seen_outside: list[str] = field(default_factory=list)
    check_s: float | None = None
    rating_s: float | None = None
    tournament: int | None = None
    killed: str = ""
    killed_playing: int = 0
    recovered_on_other_host: int = 0
    extra: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in vars(self).items() if k != "extra"}
        return {**d, **self.extra}


class HostsRun:
    """One run: its options, hosts, account, bot, tournament and figures."""

    def __init__(self, options: argparse.Namespace) -> None:
        self.o = vars(options)
        self.run_id = uuid.uuid4().hex[:6]
        self.figures = Figures(self.run_id)
        self.started = time.monotonic()
        self._role_password = ""
        #: The games the killed host was playing.
        self._left: set[int] = set()

    def run(self) -> None:
        o, run = self.o, self.run_id
        why = refusal(str(settings.DATABASES["default"]["ENGINE"]), str(settings.CELERY_BROKER_URL))
        if why:
            raise ToolError(why)
        builtins = [b.strip() for b in o["builtins"].split(",") if b.strip()]
        if settings.RATING_ANCHOR_BOT not in builtins:
            raise ToolError(f"--builtins must include {settings.RATING_ANCHOR_BOT}, the anchor")
        folder = Path(settings.BUILTIN_BOTS_DIR) / o["bot"]
        if not (folder / "bot.toml").is_file():
            raise ToolError(f"--bot {o['bot']}: no built-in bot {folder}")
        base = (o["dir"] or Path(settings.VAR_DIR) / "hosts" / run).resolve()
        root, logs = base / "hosts", base / "logs"
        for d in (base, root, logs):
            d.mkdir(parents=True, exist_ok=True)
            d.chmod(0o711)
        check_unshare(root)
        queue = f"hosts-{run}"
        port = free_port()
        username, password = f"hosts-{run}", secrets.token_urlsafe(18)
        role = self._worker_role(logs)
        try:
            self._run_hosts(queue, port, root, logs, username, password, builtins, folder, role)
        finally:
            self._drop_role(role)

    def _run_hosts(
        self,
        queue: str,
        port: int,
        root: Path,
        logs: Path,
        username: str,
        password: str,
        builtins: list[str],
        folder: Path,
        role: str,
    ) -> None:
        o, run = self.o, self.run_id
        web, workers = self._hosts(queue, port, root, logs, username, password, builtins, role)
        hosts = [web, *workers]
        say(
            f"hosts run {run}: web on http://127.0.0.1:{port}, {len(workers)} worker hosts x "
            f"{o['concurrency']}, queue {queue}; each host's files under its own {root}; "
            f"logs in {logs}"
        )
        try:
            for h in hosts:
                h.start(logs / f"{h.name}.log")
            for h in hosts:
                h.wait_started(START_S, logs / f"{h.name}.log")
            self._check_private(hosts, root)
            api = Api(f"http://127.0.0.1:{port}")
            self._wait("the web host to answer", lambda: api.up(), hosts, logs)
            say(f"{self._t()} web host up")
            api.token = api.call(
                "POST", "/api/token/", {"username": username, "password": password}
            )["token"]
            for name in builtins:
                self._wait(
                    f"the built-in bot {name} to pass its check",
                    functools.partial(self._active, api, name),
                    hosts,
                    logs,
                )
            say(f"{self._t()} built-in bots {', '.join(builtins)} checked")
            bot = self._upload(api, folder, hosts, logs)
            tournament = self._tournament(api, bot, builtins)
            recoveries = self._play(tournament, web, workers, logs)
        finally:
            for h in hosts:
                h.stop(GRACE_S)
            startup.reap()  # the bots of the host killed (their slots are free); failures logged
        self._report(tournament, recoveries, logs / "scheduler.log", workers)

    # ------------------------------------------------------------------------- set-up

    def _hosts(
        self,
        queue: str,
        port: int,
        root: Path,
        logs: Path,
        username: str,
        password: str,
        builtins: list[str],
        role: str,
    ) -> tuple[Host, list[Host]]:
        """The web host (the account, the built-in bots, the scheduler, gunicorn) and the two
        worker hosts, which connect as the workers' role and have no ``SECRET_KEY``, as
        docs/deployment.md asks of a worker machine."""
        o, run = self.o, self.run_id
        env = self._env(queue, root, o)
        worker_env = {k: v for k, v in env.items() if k != "SECRET_KEY"}
        worker_env["DATABASE_URL"] = self._role_url(role)
        celery = [sys.executable, "-m", "celery", "-A", "arena"]
        common = ["--loglevel", "INFO", "--without-gossip", "--without-mingle"]
        manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py")]
        web = Host(
            "web",
            root,
            dict(
                env, DJANGO_SUPERUSER_PASSWORD=password, ARENA_BUILTIN_BOT_NAMES=",".join(builtins)
            ),
            Path(settings.BASE_DIR),
            setup=[
                Command(
                    [*manage, "createsuperuser", "--noinput", "--username", username]
                    + ["--email", f"{username}@example.org"],
                    logs / "web-setup.log",
                ),
                Command([*manage, "register_builtin_bots"], logs / "web-setup.log"),
            ],
            services=[
                Command(
                    [*celery, *SCHEDULER_WORKER, "--queues", f"{queue}.periodic"]
                    + ["--hostname", f"hosts-{run}-scheduler@%h"]
                    + ["--schedule", str(root / "var" / "celerybeat-schedule"), *common],
                    logs / "scheduler.log",
                ),
                Command(
                    [sys.executable, "-m", "gunicorn", "arena.wsgi", "--preload"]
                    + ["--bind", f"127.0.0.1:{port}", "--workers", "2", "--timeout", "300"]
                    + ["--access-logfile", "-"],
                    logs / "gunicorn.log",
                ),
            ],
        )
        workers = [
            Host(
                f"worker-{i}",
                root,
                worker_env,
                Path(settings.BASE_DIR),
                services=[
                    Command(
                        [*celery, "worker", "--queues", queue]
                        + ["--concurrency", str(o["concurrency"])]
                        + ["--hostname", f"hosts-{run}-worker-{i}@%h", *common],
                        logs / f"worker-{i}.log",
                    )
                ],
            )
            for i in (1, 2)
        ]
        return web, workers

    def _worker_role(self, logs: Path) -> str:
        """Make the run's own workers' role (``manage.py worker_role``), as the site's role
        does in production; its grants go to the log."""
        role = f"hosts_{self.run_id}_worker"
        self._role_password = secrets.token_urlsafe(18)
        out = io.StringIO()
        os.environ["ARENA_HOSTS_WORKER_PASSWORD"] = self._role_password
        try:
            call_command(
                "worker_role", role, "--password-env", "ARENA_HOSTS_WORKER_PASSWORD", stdout=out
            )
        finally:
            del os.environ["ARENA_HOSTS_WORKER_PASSWORD"]
        (logs / "worker-role.log").write_text(out.getvalue())
        return role

    def _role_url(self, role: str) -> str:
        db = settings.DATABASES["default"]
        host, port = db.get("HOST") or "127.0.0.1", db.get("PORT") or 5432
        return f"postgres://{role}:{self._role_password}@{host}:{port}/{db['NAME']}"

    def _drop_role(self, role: str) -> None:
        """The role goes with the run (its grants first): roles belong to the whole cluster."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [role])
            if cursor.fetchone():
                cursor.execute(f'DROP OWNED BY "{role}"')
                cursor.execute(f'DROP ROLE "{role}"')

    def _env(self, queue: str, root: Path, o: dict[str, Any]) -> dict[str, str]:
        """The hosts' environment: this one's database and broker, the run's queue, and every
        folder they write under the host's own var folder."""
        var = root / "var"
        env = dict(
            os.environ,
            ARENA_CELERY_QUEUE=queue,
            ARENA_VAR_DIR=str(var),
            ARENA_BOT_STORE=str(var / "bots"),
            ARENA_BOT_CACHE=str(var / "bot-cache"),
            ARENA_SANDBOX_DIR=str(var / "sandbox"),
            ARENA_BOT_BUILD_DIR=str(var / "builds"),
            ARENA_CACHE_PREFIX=f"hosts-{self.run_id}",
            ARENA_LADDER_INTERVAL="86400",  # the run's games only
            ARENA_CHECK_TIME_CONTROL=o["time_control"],
            ARENA_QUALIFICATION_TIME_CONTROL=o["time_control"],
            ARENA_HTTPS="0",  # plain HTTP on 127.0.0.1, no TLS proxy in front
            ALLOWED_HOSTS="127.0.0.1",
            SECRET_KEY=secrets.token_urlsafe(50),  # the same on every host
            DJANGO_SETTINGS_MODULE="arena.settings",
            PYTHONUNBUFFERED="1",
        )
        return env

    def _check_private(self, hosts: list[Host], root: Path) -> None:
        """Each host sees its own start-up mark in its var folder and no other host's, and this
        process sees nothing of theirs at all (only the empty mount point)."""
        seen = {h.name: h.marks() for h in hosts}
        outside = sorted(p.name for p in root.iterdir())
        self.figures.private_files = seen
        self.figures.seen_outside = outside
        wrong = [f"{name} sees {marks}" for name, marks in seen.items() if marks != [name]]
        if outside:
            wrong.append(f"this process sees {outside} in {root}")
        if wrong:
            raise ToolError(f"the hosts' files are not private: {'; '.join(wrong)}")
        say(f"{self._t()} private files: each host sees only its own under {root}")

    def _active(self, api: Api, name: str) -> bool:
        return self._latest_status(api, name) == "active"

    def _latest_status(self, api: Api, name: str) -> str:
        try:
            versions = api.call("GET", f"/api/bots/{name}/")["versions"]
        except ToolError:
            return ""  # not registered yet
        latest = max(versions, key=lambda v: v["number"], default=None)
        if latest is not None and latest["status"] in ("rejected", "held"):
            raise ToolError(f"the bot {name} was {latest['status']}: {latest['reason']}")
        return str(latest["status"]) if latest else ""

    def _upload(self, api: Api, folder: Path, hosts: list[Host], logs: Path) -> str:
        """Upload a copy of the built-in bot's folder; wait for its check and its rating."""
        name = f"hosts-{self.run_id}-{folder.name}"
        began = time.monotonic()
        version = api.call(
            "POST",
            "/api/bots/",
            {"name": name},
            files={"file": (f"{name}.tar.gz", pack_folder(folder))},
        )
        say(f"{self._t()} uploaded {name} (version {version['id']}, {version['size']} bytes)")
        state: dict[str, Any] = {}

        def checked() -> bool:
            state.update(api.call("GET", f"/api/versions/{version['id']}/"))
            if state["status"] in ("rejected", "held"):
                raise ToolError(
                    f"{name} was {state['status']}: {state['reason']} "
                    f"{json.dumps(state.get('check_report'))[:2000]}"
                )
            return state["status"] == "active"

        self._wait(f"the check of {name}", checked, hosts, logs)
        self.figures.check_s = round(time.monotonic() - began, 1)
        say(f"{self._t()} {name} passed its check in {self.figures.check_s:.1f} s")
        variant = self.o["variant"]

        def rated() -> bool:
            return checked() and any(r["variant"] == variant for r in state["ratings"])

        self._wait(f"a rating of {name} in {variant}", rated, hosts, logs)
        self.figures.rating_s = round(time.monotonic() - began, 1)
        r = next(r for r in state["ratings"] if r["variant"] == variant)
        say(
            f"{self._t()} {name} rated {r['elo']:.0f} ({r['variant']}) "
            f"{self.figures.rating_s:.1f} s after its upload"
        )
        return name

    def _tournament(self, api: Api, bot: str, builtins: list[str]) -> Tournament:
        o = self.o
        made = api.call(
            "POST",
            "/api/tournaments/",
            {
                "name": f"hosts run {self.run_id}",
                "variant": o["variant"],
                "time_control": o["time_control"],
                "games_per_pair": o["games_per_pair"],
                "bots": [bot, *builtins],
            },
        )
        self.figures.tournament = int(made["id"])
        t = Tournament.objects.get(pk=made["id"])
        say(f"{self._t()} tournament {t.pk}: {t.matches.count()} games, {o['time_control']}")
        return t

    # ------------------------------------------------------------------------- the run

    def _wait(self, what: str, done: Callable[[], bool], hosts: list[Host], logs: Path) -> None:
        """Wait until ``done()``; fail when a host exits or the run's time is up."""
        while not done():
            self._check_hosts(hosts, logs)
            if time.monotonic() - self.started > self.o["timeout"]:
                raise ToolError(f"timed out waiting for {what}")
            time.sleep(0.5)

    def _check_hosts(self, hosts: list[Host], logs: Path) -> None:
        for h in hosts:
            if h.popen is not None and not h.running:
                raise ToolError(
                    f"host {h.name} exited ({h.popen.returncode}): {tail(logs / f'{h.name}.log')}"
                )

    def _play(
        self, tournament: Tournament, web: Host, workers: list[Host], logs: Path
    ) -> Recoveries:
        """Until the tournament is over: kill the first worker host seen playing one of its
        games, and keep the clocks on the games it left."""
        recoveries = Recoveries()
        victim: Host | None = None
        next_report = time.monotonic() + 10
        while True:
            self._check_hosts([h for h in (web, *workers) if h is not victim], logs)
            if time.monotonic() - self.started > self.o["timeout"]:
                say(f"stopped after {self.o['timeout']:.0f} s: the tournament is not over")
                break
            recoveries.poll()
            tournament.refresh_from_db(fields=["status"])
            if tournament.status != Tournament.Status.RUNNING:
                say(f"{self._t()} tournament {tournament.status}")
                break
            if victim is None:
                playing = {
                    h.name: tournament.matches.filter(
                        status=M.RUNNING, worker__startswith=f"hosts-{self.run_id}-{h.name}@"
                    ).count()
                    for h in workers
                }
                busiest = max(workers, key=lambda h: playing[h.name])
                if playing[busiest.name]:
                    victim = busiest
                    prefix = f"hosts-{self.run_id}-{victim.name}@"
                    self._left = set(
                        tournament.matches.filter(
                            status=M.RUNNING, worker__startswith=prefix
                        ).values_list("pk", flat=True)
                    )
                    victim.kill()
                    n = recoveries.worker_failed(prefix, "kill")
                    self.figures.killed = victim.name
                    self.figures.killed_playing = n
                    say(f"{self._t()} host {victim.name} killed (SIGKILL), playing {n} games")
            if time.monotonic() >= next_report:
                next_report = time.monotonic() + 10
                counts = tournament.matches.values_list("status", flat=True)
                shown = ", ".join(f"{s} {n}" for s in M.values if (n := list(counts).count(s)))
                say(f"{self._t()} {shown}")
            time.sleep(0.25)
        recoveries.poll()
        if victim is not None:
            survivors = [f"hosts-{self.run_id}-{h.name}@" for h in workers if h is not victim]
            self.figures.recovered_on_other_host = sum(
                1
                for w in Match.objects.filter(pk__in=self._left, status=M.FINISHED).values_list(
                    "worker", flat=True
                )
                if w.startswith(tuple(survivors))
            )
        return recoveries

    # ------------------------------------------------------------------------- the report

    def _report(
        self, tournament: Tournament, r: Recoveries, scheduler_log: Path, workers: list[Host]
    ) -> None:
        f = self.figures
        t = tally(tournament)
        with open(scheduler_log, encoding="utf-8", errors="replace") as log:
            sweeps = runs_in_log(log, SWEEP)
        recovery = r.longest("kill")
        gap = longest_gap(sweeps)
        f.extra = {
            "seconds": round(time.monotonic() - self.started, 1),
            "matches": t.matches,
            "finished": t.finished,
            "aborted": t.aborted,
            "lost": t.lost,
            "counted_twice": t.counted_twice,
            "recovered_games": r.count("kill"),
            "longest_recovery_s": None if recovery is None else round(recovery, 2),
            "sweeps": len(sweeps),
            "longest_sweep_gap_s": None if gap is None else round(gap, 2),
        }
        if self.o["json"]:
            self.o["json"].write_text(json.dumps(f.as_dict(), indent=2) + "\n")
        say(f"--- hosts run over in {f.extra['seconds']:.0f} s; tournament {f.tournament}")
        say(f"check passed {f.check_s} s and rated {f.rating_s} s after the upload")
        say(
            f"matches {t.matches}, finished {t.finished}, aborted {t.aborted}, lost {t.lost}, "
            f"counted twice {t.counted_twice}"
        )
        say(f"{len(sweeps)} sweeps, the longest gap between two {gap or 0:.1f} s")
        missed = []
        if t.lost or t.counted_twice:
            missed.append("lost or counted twice")
        if not f.killed:
            missed.append("no worker host was killed during a game")
        else:
            say(
                f"host {f.killed} killed playing {f.killed_playing} games: "
                f"{f.recovered_on_other_host} finished on the other host; longest recovery "
                f"{recovery or 0:.1f} s (target {RECOVERY_TARGET_S:.0f} s)"
            )
            if recovery is None or recovery > RECOVERY_TARGET_S:
                missed.append("recovery")
            if f.recovered_on_other_host < f.killed_playing:
                missed.append("games of the killed host not finished on the other")
        if missed:
            raise ToolError(f"targets missed: {', '.join(missed)}")
        say("targets met")

    def _t(self) -> str:
        return f"[{time.monotonic() - self.started:6.1f} s]"
