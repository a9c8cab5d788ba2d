"""What a chaos run measures: every match of its tournament accounted for, and how long the
work of a failed worker or of a restarted broker waited.

The chaos run (:mod:`tools.chaos.run`, ``./dev chaos``) plays a tournament on real workers while
it kills them, freezes them and restarts the database and the broker (see docs/benchmarks.md,
"Chaos run"); these are the counts it prints at the end and the clocks it keeps meanwhile, read
from the database, and the gaps between sweeps, read from the scheduler's log.
"""

from __future__ import annotations

import itertools
import re
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db.models import QuerySet

from arena.games.models import Match
from arena.ratings.models import PairStats
from arena.ratings.services import RESULT_FIELD
from arena.tournaments.models import Entry, Tournament
from arena.tournaments.services import progress

M = Match.Status


@dataclass(frozen=True)
class Tally:
    """What became of a tournament's matches.

    ``lost`` is every way a result can go missing: a match never closed, a finished match
    without its record, a result missing from its pair's counts. ``counted_twice`` is a result
    counted more often than it was played.
    """

    matches: int
    finished: int
    aborted: int
    unclosed: int
    without_record: int
    not_counted: int
    counted_twice: int

    @property
    def lost(self) -> int:
        return self.unclosed + self.without_record + self.not_counted


def tally(tournament: Tournament) -> Tally:
    """Count the tournament's matches by fate, and check the rating counts of its entrants'
    pairs against their finished rated matches (all of them, the tournament's and any other),
    result by result."""
    counts = progress(tournament)
    without_record = Match.objects.filter(
        tournament=tournament, status=M.FINISHED, data__isnull=True
    ).count()
    versions = list(Entry.objects.filter(tournament=tournament).values_list("version", flat=True))
    played: Counter[tuple[int, int, str]] = Counter()
    for white, black, result in Match.objects.filter(
        variant=tournament.variant,
        status=M.FINISHED,
        rated=True,
        white__in=versions,
        black__in=versions,
    ).values_list("white", "black", "result"):
        if white != black:  # a version against itself is not counted (ratings.count_result)
            played[white, black, RESULT_FIELD[result]] += 1
    counted: Counter[tuple[int, int, str]] = Counter()
    for pair in PairStats.objects.filter(
        variant=tournament.variant, white__in=versions, black__in=versions
    ):
        for name in RESULT_FIELD.values():
            counted[pair.white_id, pair.black_id, name] += getattr(pair, name)
    keys = played.keys() | counted.keys()
    return Tally(
        matches=counts.total,
        finished=counts.finished,
        aborted=counts.aborted,
        unclosed=counts.pending + counts.queued + counts.running,
        without_record=without_record,
        not_counted=sum(max(0, played[k] - counted[k]) for k in keys),
        counted_twice=sum(max(0, counted[k] - played[k]) for k in keys),
    )


@dataclass
class _Waiting:
    match_id: int
    attempt: int
    status: str
    heartbeat: datetime | None
    since: float
    fault: str


@dataclass
class Recoveries:
    """Clocks on the work a fault left behind, from the fault to the moment that work was
    taken up again.

    :meth:`worker_failed` starts one for each match the failed worker was playing: it has
    recovered once it is queued again, claimed again, or closed, or once its heartbeat moves
    again (the worker was frozen, and thawed before the sweeper took the game from it).
    :meth:`broker_restarted` starts one for each queued match: it has recovered once a worker
    claimed it (its message was sent again) or it was closed. :meth:`poll` stops the clocks
    that are done.
    """

    clock: Callable[[], float] = time.monotonic
    waiting: list[_Waiting] = field(default_factory=list)
    #: Seconds each recovery took, by kind of fault.
    took: dict[str, list[float]] = field(default_factory=dict)

    def worker_failed(self, worker_prefix: str, fault: str) -> int:
        """Start the clocks of the matches RUNNING on the worker whose Celery name starts with
        ``worker_prefix`` (``name@``); returns how many."""
        return self._start(
            Match.objects.filter(status=M.RUNNING, worker__startswith=worker_prefix), fault
        )

    def broker_restarted(self, fault: str) -> int:
        """Start the clocks of the QUEUED matches; returns how many."""
        return self._start(Match.objects.filter(status=M.QUEUED), fault)

    def _start(self, matches: QuerySet[Match], fault: str) -> int:
        now = self.clock()
        new = [
            _Waiting(pk, attempt, status, heartbeat, now, fault)
            for pk, attempt, status, heartbeat in matches.values_list(
                "pk", "attempts", "status", "heartbeat_at"
            )
        ]
        self.waiting.extend(new)
        return len(new)

    def poll(self) -> None:
        """Stop the clocks of the matches that moved on."""
        if not self.waiting:
            return
        now = self.clock()
        state = {
            pk: rest
            for pk, *rest in Match.objects.filter(
                pk__in={w.match_id for w in self.waiting}
            ).values_list("pk", "status", "attempts", "heartbeat_at")
        }
        still = []
        for w in self.waiting:
            now_is = tuple(state.get(w.match_id, ()))
            if now_is == (w.status, w.attempt, w.heartbeat):
                still.append(w)
            else:
                self.took.setdefault(w.fault, []).append(now - w.since)
        self.waiting = still

    def longest(self, *faults: str) -> float | None:
        """The longest recovery after these kinds of fault (all if none given), counting the
        clocks still running; None when there was nothing to recover."""
        now = self.clock()
        times = [t for f, ts in self.took.items() if not faults or f in faults for t in ts]
        times += [now - w.since for w in self.waiting if not faults or w.fault in faults]
        return max(times) if times else None

    def count(self, *faults: str) -> int:
        done = sum(len(ts) for f, ts in self.took.items() if not faults or f in faults)
        return done + sum(1 for w in self.waiting if not faults or w.fault in faults)


#: A Celery worker's log line for a task it received, as the arena's logging writes it
#: (``2026-11-27 07:00:00,123 INFO celery.worker.strategy: Task a.sweep[<id>] received``).
_RECEIVED = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) .*?Task (\S+)\[[^\]]*\] received")


def runs_in_log(lines: Iterable[str], task: str) -> list[datetime]:
    """When a worker received the task ``task``, from its log's lines (the scheduler's worker
    logs each periodic task it takes).

    >>> line = "2026-11-27 07:00:00,250 INFO celery.worker.strategy: Task a.sweep[1f] received"
    >>> runs_in_log([line, line.replace("sweep", "ladder")], "a.sweep")
    [datetime.datetime(2026, 11, 27, 7, 0, 0, 250000)]
    """
    out = []
    for line in lines:
        m = _RECEIVED.match(line)
        if m and m.group(2) == task:
            out.append(datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S,%f"))
    return out


def longest_gap(times: list[datetime]) -> float | None:
    """The longest time between two of ``times`` in seconds (None with fewer than two)."""
    gaps = [(b - a).total_seconds() for a, b in itertools.pairwise(sorted(times))]
    return max(gaps, default=None)
