"""Match state transitions: queue, claim, heartbeat, finish, release, abort, sweep; the ladder.

Every change of a match's status happens here, as an ``UPDATE`` guarded by the status it
expects (and, for a running match, by the claim's attempt number), so that two workers, the
sweeper and a tournament organiser can act at once without a result being lost or counted
twice. Views, tasks and management commands call these functions; tasks are thin wrappers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from arena import worker
from arena.bots.models import BotVersion
from arena.bots.unpack import UnpackError
from arena.games import failures, live, runner
from arena.games.models import Match, MatchRecord, PairStats, RatingState
from arena.games.signals import match_closed
from arena.referee.openings import opening
from arena.referee.outcomes import Failure

if TYPE_CHECKING:
    from arena.referee.match import GameResult

log = logging.getLogger(__name__)

S = Match.Status
#: The counter of a pair (PairStats) each result adds to.
RESULT_FIELD = {"white": "wins", "draw": "draws", "black": "losses"}


# ----------------------------------------------------------------------------- queueing


def dispatch(match_id: int, time_control: str) -> None:
    """Send the match's task once the current transaction has committed.

    The task's soft time limit is the match's budget, its hard limit a little above. If the
    broker cannot be reached the error is logged and the sweeper sends the task again later.
    """
    soft, hard = worker.time_limits(time_control, builds=2)
    worker.send_after_commit(worker.PLAY_MATCH, (match_id,), soft=soft, hard=hard)


def opening_for(variant: str, seed: int) -> str:
    """The opening a match of the site with this seed starts from, as :attr:`Match.opening`
    stores it: ``ARENA_OPENING_PLIES`` ring placements drawn with the seed."""
    return " ".join(opening(variant, seed, settings.OPENING_PLIES))


def create_pair(
    variant: str, white_id: int, black_id: int, *, seed: int, **fields: Any
) -> list[Match]:
    """Two matches from one seed and its opening, the colours reversed in the second (the
    ladder's, a test's or a challenge's pair of games); ``fields`` are the other columns of
    both (kind, status, time control...)."""
    start = opening_for(variant, seed)
    return [
        Match.objects.create(
            variant=variant, white_id=w, black_id=b, seed=seed, opening=start, **fields
        )
        for w, b in ((white_id, black_id), (black_id, white_id))
    ]


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


def play(match_id: int, worker_name: str = "", sidecar: worker.Sidecar = worker.INLINE) -> str:
    """Claim, play and finish a match (what the ``play_match`` task does, with the worker
    process's sidecar): the result is committed before this returns.

    ``sidecar`` beats the claim and publishes the moves while the game is played and its
    result written. Returns what happened. When the machine fails (see :mod:`arena.worker`),
    the match goes back to the queue and :class:`~arena.worker.InfrastructureError` is raised
    (the task then retries); nothing is counted against the bots.
    """
    # Not .first(): its ORDER BY costs more to compile than the query takes to run.
    match = next(
        iter(
            Match.objects.select_related("white__bot", "black__bot", "tournament").filter(
                pk=match_id, status=S.QUEUED
            )
        ),
        None,
    )
    attempt = claim(match_id, worker_name, seen_attempts=match.attempts) if match else None
    if match is None or attempt is None:
        return "not queued"

    def give_back(reason: str) -> None:
        release(match_id, attempt, f"infrastructure failure: {reason}")

    with (
        worker.claimed(give_back, f"match {match_id}"),
        runner.bots_in_use(),
        sidecar.attach(
            f"match {match_id}",
            lambda: beat(match_id, attempt),
            settings.MATCH_HEARTBEAT_S,
            live.Moves(match_id, attempt),
        ) as tended,
    ):
        try:
            config = runner.game_config(
                variant=match.variant,
                white=runner.load_spec(match.white),
                black=runner.load_spec(match.black),
                white_label=match.white.label,
                black_label=match.black.label,
                time_control=match.time_control,
                seed=match.seed,
                event=(
                    match.tournament.name
                    if match.tournament
                    else f"{settings.SITE_NAME} {match.get_kind_display()}"
                ),
                round_=match.round,
                opening=match.opening,
            )
        except UnpackError as e:
            abort(match_id, attempt, f"a bot could not be unpacked: {e}")
            return "aborted"
        except ValueError as e:
            abort(match_id, attempt, f"bad match configuration: {e}")
            return "aborted"
        result = runner.referee().play(
            config, on_played=lambda p: tended.note(live.timed(p)), cancel=tended.cancel
        )
        return keep_result(match_id, attempt, result, match)


def keep_result(match_id: int, attempt: int, result: GameResult, match: Match) -> str:
    """Write a played game's result (:func:`finish`, retried while the database is briefly
    away); a claim that was lost meanwhile writes nothing and clears its live moves."""
    if worker.retrying(lambda: finish(match_id, attempt, result, match=match)):
        return "aborted" if result.aborted else "finished"
    live.clear(match_id, attempt)
    return "lost its claim"


def _result_fields(result: GameResult, now: datetime) -> dict[str, object]:
    aborted = result.aborted
    return {
        "status": S.ABORTED if aborted else S.FINISHED,
        "result": "" if aborted else result.outcome.result.value,
        "termination": result.outcome.termination.value,
        "reason": result.public_reason[:4000],
        "detail": result.reason[:4000] if result.reason != result.public_reason else "",
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
        _closed(match_id, m.tournament_id)
        if not result.aborted:
            _watch_failures(m.variant, m.white_id, m.black_id, result.fault or "")
    return True


def _watch_failures(variant: str, white_id: int, black_id: int, fault: str) -> None:
    """See whether a player now fails often (:func:`arena.games.failures.watch`: a small
    indexed query or two, and a notification the first time), inside the result's
    transaction but in a savepoint of its own: a failure there is logged and never undoes the
    result."""
    try:
        with transaction.atomic():
            failures.watch(variant, white_id, black_id, fault)
    except Exception:
        log.exception("the failure watch failed after a match in %s", variant)


def count_result(variant: str, white_id: int, black_id: int, result: str) -> None:
    """Add one rated result to its pair's counts and to the variant's result counter.

    Called inside the transaction that writes the result; the ratings follow at the next fit
    (:func:`arena.games.ratings.refresh`, every ``RATING_INTERVAL_S``). A version against
    itself teaches the ratings nothing and is not counted.
    """
    if white_id == black_id:
        return
    name = RESULT_FIELD[result]
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
    """RUNNING -> QUEUED after a failure of the machine (ABORTED, not counted, once out of
    attempts). True if the caller should send the task again (a retry, the sweeper)."""
    now = timezone.now()
    with transaction.atomic():
        running = Match.objects.filter(pk=match_id, status=S.RUNNING, attempts=attempt)
        if attempt >= settings.MATCH_MAX_ATTEMPTS:
            gave_up = running.update(
                status=S.ABORTED,
                reason=f"gave up after {attempt} attempts; last: {reason}"[:4000],
                termination=Failure.ABORTED.value,
                finished_at=now,
            )
            if gave_up:
                _closed(match_id, _tournament_of(match_id))
            return False
        # The caller sends the task again (a retry, or the sweeper's dispatch).
        return bool(running.update(status=S.QUEUED, queued_at=now, worker="", reason=reason[:4000]))


def abort(match_id: int, attempt: int, reason: str) -> bool:
    """RUNNING -> ABORTED: the match will not be played (its result would mean nothing)."""
    with transaction.atomic():
        done = Match.objects.filter(pk=match_id, status=S.RUNNING, attempts=attempt).update(
            status=S.ABORTED,
            reason=reason[:4000],
            termination=Failure.ABORTED.value,
            finished_at=timezone.now(),
        )
        if done:
            _closed(match_id, _tournament_of(match_id))
    return bool(done)


def replay(match_ids: Iterable[int]) -> int:
    """ABORTED -> PENDING for these matches (those still aborted), with fresh attempts, so that
    they are played again (an incomplete tournament's missing games); the aborted game's
    record, if any, is dropped. Returns how many."""
    ids = list(
        Match.objects.filter(pk__in=list(match_ids), status=S.ABORTED).values_list("pk", flat=True)
    )
    with transaction.atomic():
        n = Match.objects.filter(pk__in=ids, status=S.ABORTED).update(
            status=S.PENDING,
            attempts=0,
            worker="",
            result="",
            termination="",
            reason="",
            detail="",
            fault="",
            plies=0,
            queued_at=None,
            started_at=None,
            heartbeat_at=None,
            finished_at=None,
        )
        MatchRecord.objects.filter(match_id__in=ids, match__status=S.PENDING).delete()
    return n


def _tournament_of(match_id: int) -> int | None:
    return Match.objects.values_list("tournament_id", flat=True).get(pk=match_id)


def _closed(match_id: int, tournament_id: int | None) -> None:
    """Announce that a match is closed (finished or aborted), inside that transaction: the
    tournaments app releases the next games (:mod:`arena.tournaments.receivers`). Its live
    moves go: its record holds the game now."""
    live.clear(match_id)
    match_closed.send(sender=Match, match_id=match_id, tournament_id=tournament_id)


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
