"""Match state transitions: queue, claim, heartbeat, finish, release, abort, sweep; the ladder.

Every change of a match's status happens here, as an ``UPDATE`` guarded by the status it
expects (and, for a running match, by the claim's attempt number), so that two workers, the
sweeper and a tournament organiser can act at once without a result being lost or counted
twice. Views, tasks and management commands call these functions; tasks are thin wrappers.
"""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, TypeVar

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import IntegrityError, OperationalError, transaction
from django.db.models import F, Q
from django.utils import timezone

from arena.bots.models import BotVersion
from arena.bots.unpack import StoredFileError, UnpackError
from arena.games import runner
from arena.games.models import Match, MatchRecord, PairStats, Rating, RatingState
from arena.referee.match import RefereeError
from arena.referee.sandbox import SandboxUnavailable, SlotsExhausted

if TYPE_CHECKING:
    from arena.referee.match import GameResult

log = logging.getLogger(__name__)
T = TypeVar("T")

S = Match.Status
_IN_FLIGHT = (S.QUEUED, S.RUNNING)
_RESULT_FIELD = {"white": "wins", "draw": "draws", "black": "losses"}


class InfrastructureError(RuntimeError):
    """The worker or its surroundings failed (sandbox, bot store, database): try again later.

    A misbehaving bot is never one: it loses the game.
    """


# ----------------------------------------------------------------------------- queueing


def dispatch(match_id: int, time_control: str) -> None:
    """Send the match's task once the current transaction has committed.

    The task's soft time limit is the match's budget, its hard limit a little above. If the
    broker cannot be reached the error is logged and the sweeper sends the task again later.
    """
    from arena.games import tasks

    soft, hard = runner.time_limits(time_control)

    def send() -> None:
        tasks.play_match.apply_async((match_id,), soft_time_limit=soft, time_limit=hard)

    transaction.on_commit(send, robust=True)


def queue_pending(match_ids: Iterable[int]) -> int:
    """PENDING -> QUEUED for these matches (those still pending); returns how many."""
    now = timezone.now()
    queued = 0
    for pk, tc in Match.objects.filter(pk__in=list(match_ids), status=S.PENDING).values_list(
        "pk", "time_control"
    ):
        if Match.objects.filter(pk=pk, status=S.PENDING).update(status=S.QUEUED, queued_at=now):
            dispatch(pk, tc)
            queued += 1
    return queued


# ----------------------------------------------------------------------------- the worker side


def claim(match_id: int, worker: str = "", *, seen_attempts: int | None = None) -> int | None:
    """Take a queued match for this worker: QUEUED -> RUNNING. Returns the attempt number,
    or None when the match is not queued (another worker has it, or it was cancelled).

    One guarded ``UPDATE``: of two workers claiming at once, exactly one changes the row.
    ``seen_attempts`` is the match's attempt count as the caller read it (saves a query).
    """
    seen = seen_attempts
    if seen is None:
        seen = (
            Match.objects.filter(pk=match_id, status=S.QUEUED)
            .values_list("attempts", flat=True)
            .first()
        )
        if seen is None:
            return None
    now = timezone.now()
    taken = Match.objects.filter(pk=match_id, status=S.QUEUED, attempts=seen).update(
        status=S.RUNNING,
        started_at=now,
        heartbeat_at=now,
        worker=worker[:200],
        attempts=seen + 1,
    )
    return seen + 1 if taken else None


def beat(match_id: int, attempt: int) -> bool:
    """Write the heartbeat; False when this claim no longer owns the match."""
    return (
        Match.objects.filter(pk=match_id, status=S.RUNNING, attempts=attempt).update(
            heartbeat_at=timezone.now()
        )
        == 1
    )


def play(match_id: int, worker: str = "") -> str:
    """Claim, play and finish a match (what the ``play_match`` task does).

    Returns what happened. Raises :class:`InfrastructureError` after putting the match back in
    the queue when the failure was not the bots' (the task then retries).
    """
    match = (
        Match.objects.select_related("white__bot", "black__bot", "tournament")
        .filter(pk=match_id, status=S.QUEUED)
        .first()
    )
    attempt = claim(match_id, worker, seen_attempts=match.attempts) if match else None
    if match is None or attempt is None:
        return "not queued"
    try:
        white = runner.load_spec(match.white)
        black = runner.load_spec(match.black)
        config = runner.game_config(
            variant=match.variant,
            white=white,
            black=black,
            white_label=match.white.label,
            black_label=match.black.label,
            time_control=match.time_control,
            seed=match.seed,
            event=match.tournament.name if match.tournament else f"{settings.SITE_NAME} ladder",
            round_=match.round,
        )
    except UnpackError as e:
        abort(match_id, attempt, f"a bot could not be unpacked: {e}")
        return "aborted"
    except ValueError as e:
        abort(match_id, attempt, f"bad match configuration: {e}")
        return "aborted"
    except (StoredFileError, OSError) as e:
        release(match_id, attempt, str(e))
        raise InfrastructureError(str(e)) from e

    with runner.Heartbeat(lambda: beat(match_id, attempt), settings.MATCH_HEARTBEAT_S) as hb:
        try:
            result = runner.referee().play(config, cancel=hb.cancel)
        except SoftTimeLimitExceeded:
            abort(match_id, attempt, "the match went over its time budget")
            return "aborted"
        except (RefereeError, SandboxUnavailable, SlotsExhausted, OSError) as e:
            release(match_id, attempt, str(e))
            raise InfrastructureError(f"{type(e).__name__}: {e}") from e
    if _retrying(lambda: finish(match_id, attempt, result, match=match)):
        return "aborted" if result.aborted else "finished"
    return "lost its claim"


def _retrying(write: Callable[[], T], tries: int = 5) -> T:
    """Run a database write, trying again a few times if the database is briefly away (a game
    already played is worth a few seconds' wait)."""
    for i in range(tries):
        try:
            return write()
        except OperationalError:
            if i == tries - 1:
                raise
            time.sleep(0.5 * 2**i)
    raise AssertionError("unreachable")


def _result_fields(result: GameResult, now: datetime) -> dict[str, object]:
    aborted = result.aborted
    return {
        "status": S.ABORTED if aborted else S.FINISHED,
        "result": "" if aborted else result.outcome.result.value,
        "termination": result.outcome.termination.value,
        "reason": result.reason[:4000],
        "fault": result.fault or "",
        "plies": len(result.record.actions),
        "duration_s": round(result.duration_s, 3),
        "finished_at": now,
    }


def _store_record(match_id: int, result: GameResult) -> None:
    # The primary key is the match: a second record for the same match is an IntegrityError,
    # whatever happened to the status guard.
    MatchRecord.objects.create(
        match_id=match_id,
        record=result.record.to_text(long=True),
        record_short=result.record.to_text(long=False),
        transcript=result.transcript,
    )


def finish(match_id: int, attempt: int, result: GameResult, *, match: Match | None = None) -> bool:
    """RUNNING -> FINISHED (or ABORTED), with the record, the statistics and the rating
    counts, in one transaction guarded by the claim. False when the claim was lost: nothing
    is written. ``match`` is the match as the caller loaded it (saves a query)."""
    now = timezone.now()
    with transaction.atomic():
        done = Match.objects.filter(pk=match_id, status=S.RUNNING, attempts=attempt).update(
            **_result_fields(result, now)
        )
        if not done:
            log.info("match %s: claim %s lost, result discarded", match_id, attempt)
            return False
        _store_record(match_id, result)
        m = match or Match.objects.only("variant", "white", "black", "rated", "tournament").get(
            pk=match_id
        )
        if not result.aborted and m.rated:
            count_result(m.variant, m.white_id, m.black_id, result.outcome.result.value)
        if m.tournament_id:
            from arena.tournaments import services as tournaments

            tournaments.match_done(m.tournament_id)
    return True


def count_result(variant: str, white_id: int, black_id: int, result: str) -> None:
    """Add one rated result to its pair's counts and to the variant's result counter.

    Called inside the transaction that writes the result. A version against itself teaches
    the ratings nothing and is not counted.
    """
    if white_id == black_id:
        return
    name = _RESULT_FIELD[result]
    pair = PairStats.objects.filter(variant=variant, white_id=white_id, black_id=black_id)
    if not pair.update(**{name: F(name) + 1}):
        try:
            with transaction.atomic():
                PairStats.objects.create(
                    variant=variant, white_id=white_id, black_id=black_id, **{name: 1}
                )
        except IntegrityError:  # created by another worker meanwhile
            pair.update(**{name: F(name) + 1})
    state = RatingState.objects.filter(variant=variant)
    if not state.update(results=F("results") + 1):
        try:
            with transaction.atomic():
                RatingState.objects.create(variant=variant, results=1)
        except IntegrityError:
            state.update(results=F("results") + 1)


def release(match_id: int, attempt: int, reason: str) -> bool:
    """RUNNING -> QUEUED after an infrastructure failure (ABORTED once out of attempts)."""
    return _requeue_or_abort(match_id, attempt, f"infrastructure failure: {reason}")


def _requeue_or_abort(match_id: int, attempt: int, reason: str) -> bool:
    now = timezone.now()
    with transaction.atomic():
        running = Match.objects.filter(pk=match_id, status=S.RUNNING, attempts=attempt)
        if attempt >= settings.MATCH_MAX_ATTEMPTS:
            gave_up = running.update(
                status=S.ABORTED,
                reason=f"gave up after {attempt} attempts; last: {reason}"[:4000],
                termination="aborted",
                finished_at=now,
            )
            if gave_up:
                _tournament_hook(match_id)
            return False
        # The caller sends the task again (a retry, or the sweeper's dispatch).
        return bool(running.update(status=S.QUEUED, queued_at=now, worker="", reason=reason[:4000]))


def abort(match_id: int, attempt: int, reason: str) -> bool:
    """RUNNING -> ABORTED: the match will not be played (its result would mean nothing)."""
    with transaction.atomic():
        done = Match.objects.filter(pk=match_id, status=S.RUNNING, attempts=attempt).update(
            status=S.ABORTED,
            reason=reason[:4000],
            termination="aborted",
            finished_at=timezone.now(),
        )
        if done:
            _tournament_hook(match_id)
    return bool(done)


def _tournament_hook(match_id: int) -> None:
    tid = Match.objects.values_list("tournament_id", flat=True).get(pk=match_id)
    if tid:
        from arena.tournaments import services as tournaments

        tournaments.match_done(tid)


# ----------------------------------------------------------------------------- the sweeper


@dataclass
class SweepReport:
    requeued: list[int] = field(default_factory=list)
    aborted: list[int] = field(default_factory=list)
    resent: list[int] = field(default_factory=list)
    checks_requeued: list[int] = field(default_factory=list)
    checks_rejected: list[int] = field(default_factory=list)
    checks_resent: list[int] = field(default_factory=list)

    def __bool__(self) -> bool:
        return any(vars(self).values())


def sweep(now: datetime | None = None) -> SweepReport:
    """Recover the work of dead workers and lost messages.

    * a RUNNING match whose heartbeat is older than ``MATCH_STALE_AFTER_S`` goes back to the
      queue, or is aborted after ``MATCH_MAX_ATTEMPTS`` claims;
    * a QUEUED match nobody claimed for ``MATCH_RESEND_AFTER_S`` has its task sent again (the
      claim makes a duplicate harmless);
    * the same for bot versions being checked (see :func:`arena.bots.services.sweep_checks`).
    """
    from arena.bots import services as bots

    now = now or timezone.now()
    report = SweepReport()
    stale = now - timedelta(seconds=settings.MATCH_STALE_AFTER_S)
    for pk, attempt in Match.objects.filter(status=S.RUNNING, heartbeat_at__lt=stale).values_list(
        "pk", "attempts"
    ):
        with transaction.atomic():
            if _requeue_or_abort(pk, attempt, "its worker stopped answering (heartbeat lost)"):
                dispatch(pk, Match.objects.values_list("time_control", flat=True).get(pk=pk))
                report.requeued.append(pk)
            elif Match.objects.filter(pk=pk, status=S.ABORTED).exists():
                report.aborted.append(pk)
    old = now - timedelta(seconds=settings.MATCH_RESEND_AFTER_S)
    for pk, tc in Match.objects.filter(status=S.QUEUED, queued_at__lt=old).values_list(
        "pk", "time_control"
    ):
        with transaction.atomic():
            if Match.objects.filter(pk=pk, status=S.QUEUED, queued_at__lt=old).update(
                queued_at=now
            ):
                dispatch(pk, tc)
                report.resent.append(pk)
    bots.sweep_checks(now, report)
    if report:
        log.info("sweep: %s", report)
    return report


def resend_queued() -> int:
    """Send the task of every queued match and pending check again (at start-up, when the
    broker may have lost messages: a duplicate is a no-op). Returns how many were sent."""
    from arena.bots.services import dispatch_check

    n = 0
    with transaction.atomic():
        for pk, tc in Match.objects.filter(status=S.QUEUED).values_list("pk", "time_control"):
            dispatch(pk, tc)
            n += 1
        for pk in BotVersion.objects.filter(status=BotVersion.Status.PENDING).values_list(
            "pk", flat=True
        ):
            dispatch_check(pk)
            n += 1
    return n


# ----------------------------------------------------------------------------- the ladder


def schedule_ladder(rng: random.Random | None = None) -> list[Match]:
    """Top up every ladder variant's queue to ``LADDER_QUEUE_DEPTH`` matches in flight."""
    rng = rng or random.Random()
    created: list[Match] = []
    for variant in settings.LADDER_VARIANTS:
        created += schedule_variant(variant, rng=rng)
    return created


def schedule_variant(
    variant: str, *, rng: random.Random | None = None, depth: int | None = None
) -> list[Match]:
    """Queue ladder matches in one variant until ``depth`` are queued or running.

    The player with the fewest games (counting its games in flight) plays first; its opponent
    is the one whose rating is closest, weighed against how many games that one has (another
    version of the same bot only when nobody else is there). Colours alternate per pair.
    """
    rng = rng or random.Random()
    depth = settings.LADDER_QUEUE_DEPTH if depth is None else depth
    tc = settings.LADDER_TIME_CONTROL
    created: list[Match] = []
    with transaction.atomic():
        flying = Match.objects.filter(
            kind=Match.Kind.LADDER, variant=variant, status__in=_IN_FLIGHT
        )
        room = depth - flying.count()
        if room <= 0:
            return []
        players = dict(
            BotVersion.objects.filter(
                status=BotVersion.Status.ACTIVE, bot__status="active"
            ).values_list("pk", "bot_id")
        )
        if len(players) < 2:
            return []
        elo: dict[int, float] = {}
        games: Counter[int] = Counter()
        for vid, e, g in Rating.objects.filter(variant=variant, version__in=players).values_list(
            "version_id", "elo", "games"
        ):
            elo[vid] = e
            games[vid] = g
        default_elo = sum(elo.values()) / len(elo) if elo else settings.RATING_ANCHOR_ELO
        busy: Counter[int] = Counter()
        colours: Counter[tuple[int, int]] = Counter()
        for w, b in flying.values_list("white_id", "black_id"):
            busy[w] += 1
            busy[b] += 1
            colours[w, b] += 1
        for _ in range(room):
            load = {v: games[v] + busy[v] for v in players}
            lightest = min(load.values())
            a = rng.choice(sorted(v for v in players if load[v] == lightest))
            others = [v for v in players if v != a and players[v] != players[a]] or [
                v for v in players if v != a
            ]
            scale = max(1.0, sum(load.values()) / len(load))
            ea = elo.get(a, default_elo)
            # Rating distance (200 Elo counts as much as an average load) plus load; ties at
            # random.
            scored = [
                (abs(ea - elo.get(v, default_elo)) / 200 + load[v] / scale, rng.random(), v)
                for v in others
            ]
            b = min(scored)[2]
            white, black = _colours(variant, a, b, colours)
            m = Match.objects.create(
                variant=variant,
                kind=Match.Kind.LADDER,
                status=S.QUEUED,
                queued_at=timezone.now(),
                white_id=white,
                black_id=black,
                time_control=tc,
                seed=rng.randrange(2**31),
            )
            dispatch(m.pk, tc)
            busy[a] += 1
            busy[b] += 1
            colours[white, black] += 1
            created.append(m)
    return created


def _colours(variant: str, a: int, b: int, in_flight: Counter[tuple[int, int]]) -> tuple[int, int]:
    """(white, black) for a and b: whoever had white less often in this pair gets it."""
    played = dict.fromkeys([(a, b), (b, a)], 0)
    for w, bl, wins, draws, losses in PairStats.objects.filter(
        Q(white_id=a, black_id=b) | Q(white_id=b, black_id=a), variant=variant
    ).values_list("white_id", "black_id", "wins", "draws", "losses"):
        played[w, bl] = wins + draws + losses
    ab = played[a, b] + in_flight[a, b]
    ba = played[b, a] + in_flight[b, a]
    if ab != ba:
        return (a, b) if ab < ba else (b, a)
    # Even so far: the one who had black in their latest game takes white.
    last = (
        Match.objects.filter(Q(white_id=a, black_id=b) | Q(white_id=b, black_id=a))
        .filter(variant=variant)
        .order_by("-pk")
        .values_list("white_id", flat=True)
        .first()
    )
    return (b, a) if last == a else (a, b)


# ----------------------------------------------------------------------------- qualification


def record_qualification(
    version: BotVersion, games: list[tuple[BotVersion, BotVersion, GameResult]]
) -> list[Match]:
    """Store the qualification games of a version that passed its check, as finished rated
    matches (inside the check's closing transaction). Games against itself are not kept."""
    now = timezone.now()
    out = []
    for white, black, result in games:
        if white.pk == black.pk or result.aborted:
            continue
        m = Match.objects.create(
            variant=result.record.variant.name,
            kind=Match.Kind.QUALIFICATION,
            white=white,
            black=black,
            time_control=settings.QUALIFICATION_TIME_CONTROL,
            seed=int(result.transcript.get("seed", 0)),
            attempts=1,
            started_at=now,
            **_result_fields(result, now),
        )
        _store_record(m.pk, result)
        count_result(m.variant, white.pk, black.pk, m.result)
        out.append(m)
    return out
