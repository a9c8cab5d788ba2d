"""Match state transitions: queue, play, finish, abort, play again; qualification games.

A match is claimed work (:class:`~arena.jobs.models.ClaimedWork`): its claim, heartbeat,
release and sweep are :mod:`arena.jobs.claims`'. Every other change of its status happens
here, as an ``UPDATE`` guarded by the status it expects (and, for a running match, by the
claim's attempt number), so that two workers, the sweeper and a tournament organiser can act
at once without a result being lost or counted twice. Views, tasks and management commands
call these functions; tasks are thin wrappers.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

import engine
from arena.bots.models import BotVersion
from arena.bots.unpack import UnpackError
from arena.games import live, reliability, remote, runner
from arena.games.models import Match, MatchRecord, closed
from arena.jobs import claims, policy
from arena.jobs.sidecar import INLINE, Sidecar
from arena.ratings import services as ratings
from arena.referee.openings import opening
from arena.referee.outcomes import Failure

if TYPE_CHECKING:
    from arena.referee import GameResult
    from arena.referee.match import Transport

log = logging.getLogger(__name__)

S = Match.Status


# ----------------------------------------------------------------------------- queueing


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
    for m in Match.objects.filter(pk__in=list(match_ids), status=S.PENDING).only("time_control"):
        if Match.objects.filter(pk=m.pk, status=S.PENDING).update(status=S.QUEUED, queued_at=now):
            claims.dispatch(m)
            queued += 1
    return queued


# ----------------------------------------------------------------------------- the worker side


def play(match_id: int, worker_name: str = "", sidecar: Sidecar = INLINE) -> str:
    """Claim, play and finish a match (what the ``play_match`` task does, with the worker
    process's sidecar): the result is committed before this returns.

    ``sidecar`` beats the claim and publishes the moves while the game is played and its
    result written. Returns what happened. When the machine fails (see :mod:`arena.jobs.policy`),
    the match goes back to the queue and :class:`~arena.jobs.policy.InfrastructureError` is raised
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
    attempt = (
        claims.claim(Match, match_id, worker_name, seen_attempts=match.attempts) if match else None
    )
    if match is None or attempt is None:
        return "not queued"

    with runner.working_on(
        Match,
        match_id,
        attempt,
        f"match {match_id}",
        sidecar,
        publish=live.Moves(match_id, attempt),
        released="infrastructure failure: ",
    ) as tended:
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
                round_=match.round_label,
                opening=match.opening,
            )
        except UnpackError as e:
            abort(match_id, attempt, f"a bot could not be unpacked: {e}")
            return "aborted"
        except ValueError as e:
            abort(match_id, attempt, f"bad match configuration: {e}")
            return "aborted"
        referee = runner.referee()
        connected: dict[engine.Color, Transport] = {
            color: remote.RemoteTransport(
                match,
                attempt,
                color.label,
                version.bot_id,
                line_limit=referee.line_limit_bytes,
                cancel=tended.cancel,
            )
            for color, version in (
                (engine.Color.WHITE, match.white),
                (engine.Color.BLACK, match.black),
            )
            if version.bot.remote
        }
        result = referee.play(
            config,
            on_played=lambda p: tended.note(live.timed(p)),
            cancel=tended.cancel,
            connected=connected,
            overhead_ms=dict.fromkeys(connected, settings.REMOTE_LATENCY_MS),
        )
        return keep_result(match_id, attempt, result, match)


def keep_result(match_id: int, attempt: int, result: GameResult, match: Match) -> str:
    """Write a played game's result (:func:`finish`, retried while the database is briefly
    away); a claim that was lost meanwhile writes nothing and clears its live moves."""
    if policy.retrying(lambda: finish(match_id, attempt, result, match=match)):
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
        m = match or Match.objects.only(
            "variant", "white", "black", "rated", "tournament", "kind"
        ).get(pk=match_id)
        if not result.aborted and m.rated:
            ratings.count_result(
                m.variant,
                m.white_id,
                m.black_id,
                result.outcome.result.value,
                ladder=m.rating_space,
            )
        closed(match_id)
        # A person's closed page is no bot's failure: games against people are not watched.
        if not result.aborted and m.kind != Match.Kind.PERSON:
            _watch_failures(m.variant, m.white_id, m.black_id, result.fault or "")
    return True


def _watch_failures(variant: str, white_id: int, black_id: int, fault: str) -> None:
    """See whether a player now fails often (:func:`arena.games.reliability.watch`: a small
    indexed query or two, and a notification the first time), inside the result's
    transaction but in a savepoint of its own: a failure there is logged and never undoes the
    result."""
    try:
        with transaction.atomic():
            reliability.watch(variant, white_id, black_id, fault)
    except Exception:
        log.exception("the failure watch failed after a match in %s", variant)


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
            closed(match_id)
    return bool(done)


def play_again(match_ids: Iterable[int]) -> int:
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
        ratings.count_result(m.variant, white.pk, black.pk, m.result)
        out.append(m)
    return out
