"""A chaos run anyone can repeat: a tournament on real workers while they fail.

    ./dev chaos [--workers 2] [--concurrency 2] [--every 20]
        [--restart-redis "COMMAND"] [--restart-postgres "COMMAND"]

Makes a round robin between copies of the built-in bots (``search``, ``greedy``, ``random``),
starts the scheduler and the workers as ``runarena`` and compose do (on a queue of the run's
own), and every ``--every`` seconds does the next fault of ``--faults`` in turn:

* ``kill``: SIGKILL to a worker (its whole process group, the pool with it), the one playing
  the most games; it starts again ``--restart-after`` seconds later under the same name;
* ``freeze``: SIGSTOP to a worker, SIGCONT ``--freeze-for`` seconds later;
* ``redis``: runs ``--restart-redis`` (a Redis restarted without its data loses the queue);
* ``postgres``: runs ``--restart-postgres``.

A fault whose command was not given, or that does not apply (no Redis broker, not
PostgreSQL), is left out (its turn passes without a fault), and the run says so. When the
tournament is over it prints how many matches finished, were aborted, lost or counted twice,
the longest recovery of a failed worker's games, the longest wait of the queued games after a
broker restart, and the longest gap between two sweeps, each against its target; the exit
status is 1 when a target was missed. Use a scratch database: the run's bots and tournament
stay there, to be looked at.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.db import DatabaseError, InterfaceError, connections

from arena.bots import services as bots
from arena.bots.models import BotVersion
from arena.celery import app as celery_app
from arena.games.models import Match
from arena.jobs import startup
from arena.local.management.commands.runarena import SCHEDULER_WORKER
from arena.tournaments import services as tournaments
from arena.tournaments.models import Tournament
from tools import ToolError
from tools.chaos.accounting import Recoveries, longest_gap, runs_in_log, tally

SWEEP = "arena.jobs.tasks.sweep"
FAULTS = ("kill", "freeze", "redis", "postgres")
#: Targets (docs/benchmarks.md): a failed worker's games queued again within this many
#: seconds, the queued games sent again within this many after a broker restart.
RECOVERY_TARGET_S = 20.0
BROKER_TARGET_S = 60.0
#: Seconds the workers get to stop at the end before they are killed.
GRACE_S = 10.0


@dataclass
class Worker:
    """A Celery worker process of the run, started in a session (process group) of its own."""

    name: str
    argv: list[str]
    log: Path
    popen: subprocess.Popen[bytes] | None = None
    restart_at: float | None = None
    thaw_at: float | None = None

    def start(self, env: dict[str, str]) -> None:
        with self.log.open("ab") as out:
            self.popen = subprocess.Popen(
                self.argv,
                env=env,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=settings.BASE_DIR,
                start_new_session=True,
            )
        self.restart_at = None

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    @property
    def available(self) -> bool:
        """Running and not frozen: a candidate for the next fault."""
        return self.running and self.thaw_at is None

    def signal(self, sig: int) -> None:
        if self.popen is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, sig)

    def kill(self) -> None:
        self.signal(signal.SIGKILL)
        if self.popen is not None:
            self.popen.wait()
        self.popen = None


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="./dev chaos",
        description=(
            "Play a tournament on real workers while killing and freezing them and restarting "
            "Redis and PostgreSQL; print what became of every match and how long recovery took."
        ),
    )
    p.add_argument("--entrants", type=int, default=6, help="bots in the round robin")
    p.add_argument("--games-per-pair", type=int, default=6)
    p.add_argument("--time-control", default="10+0.1")
    p.add_argument("--variant", default="yinsh")
    p.add_argument("--workers", type=int, default=2, help="match worker processes")
    p.add_argument("--concurrency", type=int, default=2, help="games per worker")
    p.add_argument("--every", type=float, default=20.0, help="seconds between faults")
    p.add_argument(
        "--faults",
        default="kill,freeze,kill,redis,kill,postgres",
        help=f"the cycle of faults, from {', '.join(FAULTS)}",
    )
    p.add_argument("--restart-after", type=float, default=30.0)
    p.add_argument("--freeze-for", type=float, default=30.0)
    p.add_argument("--restart-redis", default="", help="a shell command")
    p.add_argument("--restart-postgres", default="", help="a shell command")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds in all")
    p.add_argument("--logs", type=Path, help="the workers' logs (default var/chaos/RUN)")
    p.add_argument("--json", type=Path, help="also write the figures to this file")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run a chaos run with the command line's options (Django set up); 0 when every target
    was met. Raises :class:`~tools.ToolError` when one was missed or the run could not go on."""
    ChaosRun(parser().parse_args(argv)).run()
    return 0


def say(line: str) -> None:
    print(line, flush=True)


class ChaosRun:
    """One run: its options, its tournament, its workers, its report."""

    def __init__(self, options: argparse.Namespace) -> None:
        self.o = vars(options)

    def run(self) -> None:
        o = self.o
        cycle = self._cycle(o)
        run = uuid.uuid4().hex[:6]
        queue = f"chaos-{run}"
        logs = o["logs"] or Path(settings.VAR_DIR) / "chaos" / run
        logs.mkdir(parents=True, exist_ok=True)
        # This process queues the tournament's first games: on the run's queue.
        celery_app.conf.task_default_queue = queue
        tournament = self._tournament(run, o)
        total = Match.objects.filter(tournament=tournament).count()
        say(
            f"chaos run {run}: tournament {tournament.pk} ({total} games, "
            f"{o['time_control']}), {o['workers']} workers x {o['concurrency']}, faults "
            f"{' '.join(f or '(none)' for f in cycle) or 'none'} every {o['every']:.0f} s; "
            f"logs in {logs}"
        )

        env = dict(
            os.environ,
            ARENA_CELERY_QUEUE=queue,
            ARENA_BOT_STORE=str(settings.BOT_STORE_DIR),
            ARENA_LADDER_INTERVAL="86400",  # the tournament's games only
            DJANGO_SETTINGS_MODULE="arena.settings",
            PYTHONUNBUFFERED="1",
        )
        celery = [sys.executable, "-m", "celery", "-A", "arena"]
        common = ["--loglevel", "INFO", "--without-gossip", "--without-mingle"]
        scheduler = Worker(
            "scheduler",
            [*celery, *SCHEDULER_WORKER, "--queues", f"{queue}.periodic"]
            + ["--hostname", f"chaos-{run}-scheduler@%h", "--schedule", str(logs / "beat")]
            + common,
            logs / "scheduler.log",
        )
        workers = [
            Worker(
                f"chaos-{run}-{i}",
                [*celery, "worker", "--queues", queue, "--concurrency", str(o["concurrency"])]
                + ["--hostname", f"chaos-{run}-{i}@%h", *common],
                logs / f"worker-{i}.log",
            )
            for i in range(1, o["workers"] + 1)
        ]
        for w in [scheduler, *workers]:
            w.start(env)
        started = time.monotonic()
        try:
            counts = self._loop(tournament, scheduler, workers, cycle, env, o, started)
        finally:
            self._stop([scheduler, *workers])
            self._reap()
        self._report(tournament, counts, time.monotonic() - started, o, logs / "scheduler.log")

    # ------------------------------------------------------------------------- set-up

    def _cycle(self, o: dict[str, Any]) -> list[str | None]:
        """The faults in turn; one left out keeps its turn, without a fault (None), so that
        the others come as often as on a machine where it applies."""
        asked = [f.strip() for f in o["faults"].split(",") if f.strip()]
        unknown = sorted(set(asked) - set(FAULTS))
        if unknown:
            raise ToolError(f"unknown faults {', '.join(unknown)}: choose from {FAULTS}")
        left_out = {}
        broker = str(settings.CELERY_BROKER_URL)
        engine = str(settings.DATABASES["default"]["ENGINE"])
        if "redis" in asked:
            if not broker.startswith(("redis://", "rediss://")):
                left_out["redis"] = "the broker is not Redis"
            elif not o["restart_redis"]:
                left_out["redis"] = "no --restart-redis command"
        if "postgres" in asked:
            if "postgresql" not in engine:
                left_out["postgres"] = "the database is not PostgreSQL"
            elif not o["restart_postgres"]:
                left_out["postgres"] = "no --restart-postgres command"
        for fault, why in left_out.items():
            say(f"fault {fault} left out: {why}")
        return [None if f in left_out else f for f in asked]

    def _tournament(self, run: str, o: dict[str, Any]) -> Tournament:
        """Copies of the built-in bots (trusted, active at once: their code is the arena's
        own) in a rated round robin organised by the run's own staff account."""
        user_model = get_user_model()
        organiser, created = user_model.objects.get_or_create(
            username="chaos-run", defaults={"is_staff": True, "is_superuser": True}
        )
        if created:
            organiser.set_unusable_password()
            organiser.save(update_fields=["password"])
        names = ("search", "greedy", "random")
        entrants = []
        for i in range(o["entrants"]):
            name = names[i % len(names)]
            copy = bots.builtin_copy(f"chaos-{run}-{name}-{i + 1}", name, BotVersion.Status.ACTIVE)
            entrants.append(copy.bot)
        return tournaments.create(
            organiser,
            name=f"chaos run {run}",
            variant=o["variant"],
            time_control=o["time_control"],
            games_per_pair=o["games_per_pair"],
            bots=entrants,
        )

    # ------------------------------------------------------------------------- the run

    def _loop(
        self,
        tournament: Tournament,
        scheduler: Worker,
        workers: list[Worker],
        cycle: list[str | None],
        env: dict[str, str],
        o: dict[str, Any],
        started: float,
    ) -> dict[str, Any]:
        recoveries = Recoveries()
        done: dict[str, int] = {f: 0 for f in FAULTS}
        unplanned: list[str] = []
        outages: list[float] = []
        next_fault: float | None = None  # set when the first game starts
        next_report = started + 10
        step = 0
        while True:
            now = time.monotonic()
            if now - started > o["timeout"]:
                say(f"stopped after {o['timeout']:.0f} s: the tournament is not over")
                break
            for w in [scheduler, *workers]:
                if w.popen is not None and not w.running:
                    # Exited by itself: recorded, and started again as a supervisor would.
                    unplanned.append(f"{w.name} exited ({w.popen.returncode})")
                    say(f"{self._t(started)} {unplanned[-1]}; starting it again")
                    w.start(env)
                if w.restart_at is not None and now >= w.restart_at:
                    w.start(env)
                    say(f"{self._t(started)} {w.name} started again")
                if w.thaw_at is not None and now >= w.thaw_at:
                    w.signal(signal.SIGCONT)
                    w.thaw_at = None
                    say(f"{self._t(started)} {w.name} thawed (SIGCONT)")
            try:
                recoveries.poll()
                if now >= next_report:
                    next_report = now + 10
                    self._progress(tournament, started)
                tournament.refresh_from_db(fields=["status"])
                if tournament.status != Tournament.Status.RUNNING:
                    say(f"{self._t(started)} tournament {tournament.status}")
                    break
                if (
                    next_fault is None
                    and tournament.matches.exclude(
                        status__in=(Match.Status.PENDING, Match.Status.QUEUED)
                    ).exists()
                ):
                    next_fault = now + o["every"]
                if any(cycle) and next_fault is not None and now >= next_fault:
                    fault = cycle[step % len(cycle)]
                    if fault is None:  # left out: its turn passes
                        step += 1
                        next_fault = now + o["every"]
                    # A worker's fault waits for a worker playing games.
                    elif self._fault(fault, workers, recoveries, o, started, outages):
                        done[fault] += 1
                        step += 1
                        next_fault = time.monotonic() + o["every"]
            except (DatabaseError, InterfaceError) as e:
                # The database restarting (a fault of ours): wait for it like the workers do.
                say(f"{self._t(started)} database unavailable: {e}".splitlines()[0])
                connections.close_all()
                time.sleep(1)
            time.sleep(0.25)
        with contextlib.suppress(DatabaseError, InterfaceError):
            recoveries.poll()
        return {
            "faults": done,
            "unplanned": unplanned,
            "recoveries": recoveries,
            "outages": outages,
        }

    def _fault(
        self,
        fault: str,
        workers: list[Worker],
        recoveries: Recoveries,
        o: dict[str, Any],
        started: float,
        outages: list[float],
    ) -> bool:
        """Do ``fault``; False when it cannot be done now: a worker's fault waits for a
        worker (running, not frozen) that is playing games. The sweeper recovers the games
        even when no worker is left."""
        t = self._t(started)
        if fault in ("kill", "freeze"):
            candidates = [w for w in workers if w.available]
            if not candidates:
                return False
            playing = {
                w.name: Match.objects.filter(
                    status=Match.Status.RUNNING, worker__startswith=f"{w.name}@"
                ).count()
                for w in candidates
            }
            victim = max(candidates, key=lambda w: playing[w.name])
            if not playing[victim.name]:
                return False
            if fault == "kill":
                victim.kill()
                victim.restart_at = time.monotonic() + o["restart_after"]
            else:
                victim.signal(signal.SIGSTOP)
                victim.thaw_at = time.monotonic() + o["freeze_for"]
            n = recoveries.worker_failed(f"{victim.name}@", fault)
            what = "killed (SIGKILL)" if fault == "kill" else "frozen (SIGSTOP)"
            say(f"{t} {victim.name} {what}, playing {n} games")
            return True
        command = o["restart_redis"] if fault == "redis" else o["restart_postgres"]
        began = time.monotonic()
        finished = subprocess.run(
            command, shell=True, capture_output=True, text=True, timeout=300, check=False
        )
        took = time.monotonic() - began
        if finished.returncode != 0:
            raise ToolError(
                f"{shlex.quote(command)} failed ({finished.returncode}): "
                f"{(finished.stderr or finished.stdout).strip()[-500:]}"
            )
        outages.append(took)
        connections.close_all()
        name = "Redis" if fault == "redis" else "PostgreSQL"
        if fault == "redis":
            n = recoveries.broker_restarted(fault)
            say(f"{t} {name} restarted in {took:.1f} s; {n} games were queued")
        else:
            say(f"{t} {name} restarted in {took:.1f} s")
        return True

    def _progress(self, tournament: Tournament, started: float) -> None:
        p = tournaments.progress(tournament)
        counts = {s: getattr(p, s) for s in Match.Status.values}
        shown = ", ".join(f"{s} {n}" for s, n in counts.items() if n)
        say(f"{self._t(started)} {shown}")

    def _stop(self, everyone: list[Worker]) -> None:
        for w in everyone:
            w.signal(signal.SIGCONT)
            w.signal(signal.SIGTERM)
        deadline = time.monotonic() + GRACE_S
        for w in everyone:
            if w.popen is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    w.popen.wait(timeout=max(0.1, deadline - time.monotonic()))
            w.kill()

    def _reap(self) -> None:
        """The bots of the workers killed last (none started again to reap them) go too."""
        startup.reap()  # a failure is logged

    @staticmethod
    def _t(started: float) -> str:
        return f"[{time.monotonic() - started:6.1f} s]"

    # ------------------------------------------------------------------------- the report

    def _report(
        self,
        tournament: Tournament,
        counts: dict[str, Any],
        seconds: float,
        o: dict[str, Any],
        scheduler_log: Path,
    ) -> None:
        t = tally(tournament)
        r: Recoveries = counts["recoveries"]
        faults = counts["faults"]
        with open(scheduler_log, encoding="utf-8", errors="replace") as f:
            sweeps = runs_in_log(f, SWEEP)
        interval = float(settings.SWEEP_INTERVAL_S)
        figures = {
            "seconds": round(seconds, 1),
            "tournament": tournament.pk,
            "matches": t.matches,
            "finished": t.finished,
            "aborted": t.aborted,
            "lost": t.lost,
            "not_closed": t.unclosed,
            "without_record": t.without_record,
            "not_counted": t.not_counted,
            "counted_twice": t.counted_twice,
            "faults": faults,
            "longest_outage_s": _rounded(max(counts["outages"], default=None)),
            "unplanned_exits": counts["unplanned"],
            "recovered_games": r.count("kill", "freeze"),
            "longest_recovery_s": _rounded(r.longest("kill", "freeze")),
            "longest_recovery_after_kill_s": _rounded(r.longest("kill")),
            "longest_recovery_after_freeze_s": _rounded(r.longest("freeze")),
            "broker_waiting_games": r.count("redis"),
            "longest_broker_wait_s": _rounded(r.longest("redis")),
            "sweeps": len(sweeps),
            "sweep_interval_s": interval,
            "longest_sweep_gap_s": _rounded(longest_gap(sweeps)),
        }
        if o["json"]:
            o["json"].write_text(json.dumps(figures, indent=2) + "\n")
        w = say
        w(f"--- chaos run over in {seconds:.0f} s; tournament {tournament.pk}")
        w(
            f"matches {t.matches}, finished {t.finished}, aborted {t.aborted}, lost {t.lost} "
            f"(not closed {t.unclosed}, finished without a record {t.without_record}, "
            f"results not counted {t.not_counted}), counted twice {t.counted_twice}"
        )
        outage = figures["longest_outage_s"]
        w(
            f"faults: {faults['kill']} workers killed, {faults['freeze']} frozen, "
            f"{faults['redis']} Redis restarts, {faults['postgres']} PostgreSQL restarts"
            + (f" (the longest took {outage:.1f} s)" if outage is not None else "")
        )
        for line in counts["unplanned"]:
            w(f"unplanned: {line}")
        missed = []
        if t.lost or t.counted_twice:
            missed.append("lost or counted twice")
        recovery = figures["longest_recovery_s"]
        if recovery is None:
            w("longest recovery of a failed worker's games: none to recover")
        else:
            by_fault = ", ".join(
                f"{label} {t:.1f} s"
                for label, t in (
                    ("after a kill", figures["longest_recovery_after_kill_s"]),
                    ("after a freeze", figures["longest_recovery_after_freeze_s"]),
                )
                if t is not None
            )
            w(
                f"longest recovery of a failed worker's games: {recovery:.1f} s over "
                f"{figures['recovered_games']} games ({by_fault}; target "
                f"{RECOVERY_TARGET_S:.0f} s)"
            )
            if recovery > RECOVERY_TARGET_S:
                missed.append("recovery")
        broker = figures["longest_broker_wait_s"]
        if broker is not None:
            w(
                f"longest wait of a queued game after a broker restart: {broker:.1f} s over "
                f"{figures['broker_waiting_games']} games (target {BROKER_TARGET_S:.0f} s)"
            )
            if broker > BROKER_TARGET_S:
                missed.append("broker recovery")
        gap = figures["longest_sweep_gap_s"]
        if not figures["sweeps"] or gap is None:
            missed.append("sweeps")
            w("the sweeper never ran")
        else:
            w(
                f"longest gap between sweeps: {gap:.1f} s over {figures['sweeps']} sweeps "
                f"(interval {interval:.0f} s, target {2 * interval:.0f} s)"
            )
            if gap > 2 * interval:
                missed.append("sweep gap")
        if counts["unplanned"]:
            missed.append("unplanned exits")
        if missed:
            raise ToolError(f"targets missed: {', '.join(missed)}")
        w("targets met")


def _rounded(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds, 2)
