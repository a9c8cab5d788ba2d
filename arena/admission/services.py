"""The check of an uploaded bot version and its qualification, in one place.

A worker runs :func:`check_version` (the ``check_version`` task): it claims the PENDING
version (a version's check is claimed work, :mod:`arena.jobs.claims`), unpacks it safely, runs
the protocol conformance check, then plays the qualification games against the rating anchor
(the built-in ``random`` bot). The verdict (:func:`close_check`) and the qualification games,
stored as finished rated matches (:func:`arena.games.services.record_qualification`), are
written in one transaction guarded by the claim.

Both the conformance check and the qualification cover every variant the bot declares (its
manifest's ``variants``, every variant by default), whether the ladder plays it or not: the
conformance check at least one game in each (``CHECK_GAMES`` at least), the qualification one
game with each colour in each (``QUALIFICATION_GAMES`` at least). The version then plays on
the ladder and in tournaments only in those variants.

What the bot did decides the verdict; what the machine did never does (see
:mod:`arena.jobs.policy`): the version is queued again, and held for an operator once out of
attempts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from threading import Event

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from arena.bots import services as bots
from arena.bots.models import BUILD_FAILED, Bot, BotVersion, every_variant
from arena.bots.unpack import UnpackError
from arena.games import privacy, runner
from arena.games.services import record_qualification
from arena.jobs import claims, policy
from arena.jobs.policy import InfrastructureError
from arena.jobs.sidecar import INLINE, Sidecar
from arena.notifications.models import Event as Notice
from arena.notifications.services import notify
from arena.ratings.services import anchor_version_id
from arena.referee import GameResult, TimeControl
from arena.referee.bots import BotSpec
from arena.referee.build import BuildFailed
from arena.referee.conformance import check_bot, name_the_players, plan
from arena.referee.jsontypes import JSONObject

V = BotVersion.Status

#: A qualification game: (white, black, what happened).
Game = tuple[BotVersion, BotVersion, GameResult]


@dataclass(frozen=True)
class Verdict:
    """What a check decided: ``accepted`` or not, the lines to show the owner, and the bot as
    its manifest declared it (None when it could not be unpacked)."""

    accepted: bool
    lines: list[str]
    reason: str = ""
    transcript: JSONObject | None = None
    stderr_tail: str = ""
    spec: BotSpec | None = None


@dataclass
class _Outcome:
    verdict: Verdict
    games: list[Game] = field(default_factory=list)


def check_version(version_id: int, worker_name: str = "", sidecar: Sidecar = INLINE) -> str:
    """Claim a pending version and check it (what the ``check_version`` task does, with the
    worker process's sidecar, which beats the claim): the verdict is committed before this
    returns. Returns what happened: "active", "rejected", "not pending" or "lost its claim".

    Raises :class:`~arena.jobs.policy.InfrastructureError` after putting the version back when
    the failure was not the bot's.
    """
    attempt = claims.claim(BotVersion, version_id, worker_name)
    if attempt is None:
        return "not pending"
    version = BotVersion.objects.select_related("bot").get(pk=version_id)
    what = f"check of version {version_id}"
    with runner.working_on(BotVersion, version_id, attempt, what, sidecar) as tended:
        outcome = _run(version, attempt, tended.cancel)
        if outcome is None:
            return "lost its claim"
        if policy.retrying(lambda: _close(version_id, attempt, outcome)):
            return "active" if outcome.verdict.accepted else "rejected"
        return "lost its claim"


def _close(version_id: int, attempt: int, outcome: _Outcome) -> bool:
    with transaction.atomic():
        version = close_check(version_id, attempt, outcome.verdict)
        if version is None:
            return False
        if outcome.verdict.accepted:
            record_qualification(version, outcome.games)
        _tell_owner(version, outcome.verdict)
    return True


class _LostClaim(Exception):
    pass


def close_check(version_id: int, attempt: int, verdict: Verdict) -> BotVersion | None:
    """CHECKING -> ACTIVE (retiring the bot's previous active version; RETIRED if the bot was
    withdrawn meanwhile) or REJECTED, guarded by the claim. Returns the version as it was
    before, or None when the claim was lost (nothing is written then).

    Call it inside the transaction that also stores what the check played, so that both or
    neither are written.
    """
    spec = verdict.spec
    declared = {
        "declared_name": (spec.name if spec else "")[:64],
        "declared_version": (spec.version if spec else "")[:64],
        "command": (" ".join(spec.command) if spec else "")[:500],
        "variants": ",".join(spec.variants) if spec else every_variant(),
    }
    now = timezone.now()
    try:
        with transaction.atomic():
            mine = claims.held(BotVersion, version_id, attempt)
            version = mine.select_related("bot").first()
            if version is None:
                return None
            if not verdict.accepted:
                mine.update(
                    status=V.REJECTED,
                    checked_at=now,
                    reason=verdict.reason[:4000],
                    report=verdict.lines,
                    transcript=verdict.transcript,
                    stderr_tail=verdict.stderr_tail[-8000:],
                    **declared,
                )
                return version
            withdrawn = version.bot.status != Bot.Status.ACTIVE
            if not withdrawn:
                bots.retire_active(version.bot_id, keep=version_id)
            if not mine.update(
                status=V.RETIRED if withdrawn else V.ACTIVE,
                checked_at=now,
                reason="",
                report=verdict.lines,
                transcript=None,
                stderr_tail="",
                **declared,
            ):
                raise _LostClaim()
            return version
    except _LostClaim:
        return None


def _tell_owner(version: BotVersion, verdict: Verdict) -> None:
    """The "check finished" notification (sent once the verdict commits)."""
    if verdict.accepted:
        subject = f"{version.label} passed its check"
        text = f"{version.label} passed its check: it is active and will be rated."
    else:
        subject = f"{version.label} was rejected"
        text = f"{version.label} was rejected: {verdict.reason}"
    notify(
        version.bot.owner_id,
        Notice.CHECK_FINISHED,
        subject,
        text,
        version.get_absolute_url(),
        data={
            "bot": version.bot.name,
            "version": version.number,
            "status": "active" if verdict.accepted else "rejected",
            "reason": "" if verdict.accepted else verdict.reason,
        },
    )


def qualification_plan(spec: BotSpec) -> list[tuple[str, str]]:
    """(variant, the new version's colour) of each qualification game: every variant the bot
    declares (on the ladder or not), each with both colours, so ``QUALIFICATION_GAMES`` is a
    least number, raised when the bot declares more variants."""
    return plan(spec.variants, settings.QUALIFICATION_GAMES, each_colour=True)


def _qualification_opponent(version: BotVersion) -> BotVersion | None:
    """The anchor bot's version the new version plays (None: play itself)."""
    anchor = anchor_version_id()
    if anchor is None or anchor == version.pk:
        others = BotVersion.objects.filter(
            bot__name=settings.RATING_ANCHOR_BOT, bot__trusted=True, status=V.ACTIVE
        ).exclude(pk=version.pk)
        return others.select_related("bot").first()
    return BotVersion.objects.select_related("bot").get(pk=anchor)


def _rejected(
    lines: list[str],
    reason: str,
    spec: BotSpec | None,
    *,
    transcript: JSONObject | None = None,
    stderr_tail: str = "",
) -> _Outcome:
    if transcript is not None and spec is not None:
        transcript = privacy.own_side(transcript, spec.digest)
    return _Outcome(
        Verdict(
            False,
            lines,
            reason=reason,
            transcript=transcript,
            stderr_tail=stderr_tail,
            spec=spec,
        )
    )


def _count_build(version: BotVersion, attempt: int, size: int) -> None:
    """Count what the version's build keeps (``size`` bytes) in its owner's storage: its
    ``built_size``, written at once, so that checks of the owner's versions at once meet the
    quota one at a time. Raises :class:`~arena.bots.services.QuotaExceeded` when it does not
    fit (its ``built_size`` is 0 then), :class:`_LostClaim` when the claim was lost."""
    refused: bots.QuotaExceeded | None = None
    with transaction.atomic():
        bots.lock_storage(version.bot.owner_id)
        try:
            bots.check_build_quota(version, size)
        except bots.QuotaExceeded as e:
            refused, size = e, 0
        if not claims.held(BotVersion, version.pk, attempt).update(built_size=size):
            raise _LostClaim()
    if refused is not None:
        raise refused


def _run(version: BotVersion, attempt: int, cancel: Event) -> _Outcome | None:
    """Unpack, build, check the protocol, play the qualification games. None when cancelled
    or when the claim was lost."""
    lines: list[str] = []
    try:
        spec = runner.unpack_spec(version)
    except UnpackError as e:
        reason = f"the upload cannot be used: {e}"
        return _rejected([reason], reason, None)
    lines.append(f"unpacked: {spec.name} (command: {' '.join(spec.command)})")
    if spec.needs_build:
        lines.append(f"build: {spec.build}")
        try:
            built = runner.build(spec)
        except BuildFailed as e:
            lines.append(f"FAIL the build: {e.reason} (its output is below)")
            return _rejected(lines, f"{BUILD_FAILED}: {e.reason}", spec, stderr_tail=e.log)
        spec = built.spec
        lines.append(
            "build: done, from this worker's cache"
            if built.cached
            else f"build: done in {built.seconds:.1f} s"
        )
        try:
            policy.retrying(lambda: _count_build(version, attempt, built.size))
        except bots.QuotaExceeded as e:
            lines.append(f"FAIL the build: {e} (its output is below)")
            return _rejected(lines, f"{BUILD_FAILED}: {e.public}", spec, stderr_tail=built.log)
        except _LostClaim:
            return None
    report = check_bot(
        spec,
        referee=runner.referee(),
        variants=spec.variants,
        games=settings.CHECK_GAMES,
        time=TimeControl.parse(settings.CHECK_TIME_CONTROL),
        name=version.label,
    )
    lines += list(report.lines)
    if not report.ok:
        # The public words: what failed, not what the bot wrote (its report keeps that).
        reason = "the protocol check failed" + (f": {report.failure}" if report.failure else "")
        return _rejected(
            lines, reason, spec, transcript=report.transcript, stderr_tail=report.stderr_tail
        )
    opponent = _qualification_opponent(version)
    opponent_spec = runner.load_spec(opponent) if opponent is not None else spec
    opponent_label = opponent.label if opponent is not None else version.label
    games: list[Game] = []
    referee = runner.referee()
    for i, (variant, mine) in enumerate(qualification_plan(spec)):
        pair = (spec, opponent_spec) if mine == "white" else (opponent_spec, spec)
        labels = (
            (version.label, opponent_label) if mine == "white" else (opponent_label, version.label)
        )
        config = runner.game_config(
            variant=variant,
            white=pair[0],
            black=pair[1],
            white_label=labels[0],
            black_label=labels[1],
            time_control=settings.QUALIFICATION_TIME_CONTROL,
            seed=version.pk * 100 + i,
            event=f"{settings.SITE_NAME} qualification",
        )
        result = referee.play(config, cancel=cancel)
        if result.aborted:
            if cancel.is_set():
                return None
            raise InfrastructureError(f"qualification game {i + 1} was aborted: {result.reason}")
        names = dict(zip(("white", "black"), labels, strict=True))
        lines.append(
            f"qualification game {i + 1} ({variant}, as {mine}, against {opponent_label}): "
            f"{result.outcome.result.score}, {name_the_players(result.reason, names)}"
        )
        if result.fault == mine:
            player = result.transcript.get("players", {}).get(mine, {})
            return _rejected(
                lines,
                f"qualification game {i + 1} lost by {result.outcome.termination.value}: "
                f"{name_the_players(result.public_reason, names)}",
                spec,
                transcript=result.transcript,
                stderr_tail=str(player.get("stderr_tail", "")),
            )
        me = version
        other = opponent or version
        games.append((me, other, result) if mine == "white" else (other, me, result))
    lines.append("passed: the version is active and will be rated")
    return _Outcome(Verdict(True, lines, spec=spec), games)
