"""Trials: try an upload in one game before publishing it (:class:`~arena.admission.models.Trial`).

:func:`create` keeps the upload in the bot store and queues the trial; a worker runs
:func:`run` (the ``run_trial`` task): it claims the trial, unpacks and builds the upload as a
check would, and plays one game against the chosen opponent's active version (the built-in
``random`` by default) in the sandbox. Nothing is rated, no version is made; the owner reads the
game with the upload's log (the opponent's log is not kept) and may :func:`publish` the same
upload as a new bot or a new version of one.

As everywhere, what the bot did decides what is shown (a failed build, a crash, a lost game);
what the machine did never does: the trial is given back to the queue, and ABORTED once out of
attempts.
"""

from __future__ import annotations

import logging
from threading import Event
from typing import IO

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.core.files import File
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

import engine
from arena.admission.models import Colour, Trial
from arena.bots import services as bots
from arena.bots import store
from arena.bots.models import BUILD_FAILED, Bot, BotVersion, playing, variant_title
from arena.bots.unpack import UnpackError
from arena.core import throttles
from arena.core.errors import Refused
from arena.games import privacy, runner
from arena.jobs import claims, policy
from arena.jobs.policy import InfrastructureError
from arena.jobs.sidecar import INLINE, Sidecar
from arena.ratings.services import anchor_version_id
from arena.referee import redaction
from arena.referee.build import BuildFailed
from arena.referee.conformance import name_the_players

__all__ = [
    "NoOpponent",
    "NotPlayed",
    "TrialError",
    "create",
    "default_opponent",
    "logs",
    "opponents",
    "publish",
    "reason_for",
    "run",
    "visible",
]

log = logging.getLogger(__name__)
V = BotVersion.Status
T = Trial.Status


class TrialError(Refused):
    """A trial that cannot be made as asked; the message says why (``field``: the input it is
    about)."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


class NoOpponent(TrialError):
    """The arena has no opponent ready (its built-in bots are not checked yet): not the
    request's fault, try again soon."""

    status = 503


class NotPlayed(TrialError):
    """A trial that has not played its game cannot be published."""

    status = 409


Viewer = User | AnonymousUser


def visible(user: Viewer) -> QuerySet[Trial]:
    """The trials ``user`` may see: their own (an operator's too: every one)."""
    if not user.is_authenticated:
        return Trial.objects.none()
    trials = Trial.objects.select_related("opponent__bot", "bot")
    if user.is_staff or user.is_superuser:
        return trials
    return trials.filter(owner_id=user.pk)


def opponents(variant: str | None = None) -> QuerySet[BotVersion]:
    """The versions a trial may play: the active version of every active bot (that plays
    ``variant``)."""
    versions = BotVersion.objects.filter(status=V.ACTIVE, bot__status=Bot.Status.ACTIVE)
    if variant:
        versions = versions.filter(playing(variant))
    return versions.select_related("bot").order_by("bot__name")


def default_opponent() -> BotVersion | None:
    """The rating anchor's active version (the built-in ``random``), if there is one."""
    anchor = anchor_version_id()
    if anchor is None:
        return None
    return opponents().filter(pk=anchor).first()


def create(
    user: Viewer,
    upload: IO[bytes],
    *,
    filename: str = "",
    variant: str = "yinsh",
    colour: str = Colour.WHITE,
    opponent: BotVersion | None = None,
    bot: Bot | None = None,
) -> Trial:
    """Keep the upload and queue its trial: one game in ``variant`` as ``colour`` against
    ``opponent`` (the rating anchor by default). ``bot``: the bot it would be a new version of
    (its owner's only).

    Raises :class:`TrialError`, :class:`~arena.bots.unpack.UploadError` (a file that is too
    large, say) or :class:`~arena.core.throttles.Throttled`; nothing is stored then.
    """
    if not user.is_authenticated:
        raise PermissionDenied("log in to try a bot")
    if variant not in engine.VARIANTS:
        known = ", ".join(engine.VARIANTS)
        raise TrialError(f"there is no variant {variant!r} (one of {known})", field="variant")
    if colour not in Colour.values:
        raise TrialError(f"the colour is white or black, not {colour!r}", field="colour")
    if bot is not None and not bots.can_manage(user, bot):
        raise PermissionDenied(f"{bot.name} is not yours")
    opponent = opponent or default_opponent()
    if opponent is None:
        raise NoOpponent("the arena has no opponent ready yet; try again in a minute")
    if not opponents(variant).filter(pk=opponent.pk).exists():
        raise TrialError(
            f"{opponent.label} cannot be the opponent: a trial plays the active version of an "
            f"active bot that plays {variant_title(variant)}",
            field="opponent",
        )
    with throttles.limited(user, "trial"):
        stored = bots.store_upload(upload, filename or getattr(upload, "name", "") or "bot")
        with transaction.atomic():
            trial = Trial.objects.create(
                owner_id=user.pk,
                bot=bot,
                sha256=stored.sha256,
                kind=stored.kind,
                filename=stored.filename,
                size=stored.size,
                variant=variant,
                colour=colour,
                opponent=opponent,
                opponent_label=opponent.label,
                time_control=settings.TRIAL_TIME_CONTROL,
                queued_at=timezone.now(),
            )
            _forget_old(user.pk)
            claims.dispatch(trial)
    return trial


def _forget_old(owner_id: int) -> None:
    """Keep an owner's latest ``TRIALS_KEPT`` finished trials (their uploads stay in the store,
    as every upload does)."""
    done = Trial.objects.filter(owner_id=owner_id).exclude(status__in=[T.QUEUED, T.RUNNING])
    old = done.order_by("-pk").values_list("pk", flat=True)[settings.TRIALS_KEPT :]
    Trial.objects.filter(pk__in=list(old)).delete()


def publish(user: Viewer, trial: Trial, *, name: str = "", description: str = "") -> BotVersion:
    """Publish a trial's upload: a new version of its bot, or a new bot called ``name``. The
    version is checked as every upload is (the trial was no check)."""
    if not user.is_authenticated or trial.owner_id != user.pk:
        raise PermissionDenied("only the trial's owner may publish it")
    if trial.status != T.PLAYED:
        raise NotPlayed(f"trial {trial.pk} cannot be published: it is {trial.get_status_display()}")
    with store.open(trial.sha256) as f:
        upload = File(f, name=trial.filename)
        if trial.bot is not None and trial.bot.status == Bot.Status.ACTIVE:
            return bots.add_version(user, trial.bot, upload, filename=trial.filename)
        return bots.create_bot(user, name, upload, filename=trial.filename, description=description)


# ----------------------------------------------------------------------------- in a worker


def run(trial_id: int, worker_name: str = "", sidecar: Sidecar = INLINE) -> str:
    """Claim a queued trial and play it (what the ``run_trial`` task does). Returns its new
    status, "not queued" or "lost its claim"; raises
    :class:`~arena.jobs.policy.InfrastructureError` after giving it back when the machine
    failed."""
    attempt = claims.claim(Trial, trial_id, worker_name)
    if attempt is None:
        return "not queued"
    trial = Trial.objects.select_related("opponent__bot").get(pk=trial_id)
    with runner.working_on(Trial, trial_id, attempt, f"trial {trial_id}", sidecar) as tended:
        fields = _play(trial, tended.cancel)
        if fields is None:
            return "lost its claim"
        fields["finished_at"] = timezone.now()
        if policy.retrying(lambda: claims.held(Trial, trial_id, attempt).update(**fields)):
            return str(fields["status"])
        return "lost its claim"


def _failed(lines: list[str], reason: str, stderr_tail: str = "") -> dict[str, object]:
    return {
        "status": T.FAILED,
        "report": lines,
        "reason": reason[:4000],
        "stderr_tail": stderr_tail[-8000:],
    }


def _play(trial: Trial, cancel: Event) -> dict[str, object] | None:
    """Unpack, build, play; the fields to write. None when cancelled."""
    lines: list[str] = []
    try:
        spec = runner.unpack_upload(trial.sha256, trial.kind, trial.filename)
    except UnpackError as e:
        return _failed(lines, f"the upload cannot be used: {e}")
    lines.append(f"unpacked: {spec.name} (command: {' '.join(spec.command)})")
    if trial.variant not in spec.variants:
        return _failed(
            lines, f"the bot does not play {trial.variant_title} (its bot.toml's variants)"
        )
    if spec.needs_build:
        lines.append(f"build: {spec.build}")
        try:
            built = runner.build(spec)
        except BuildFailed as e:
            lines.append(f"FAIL the build: {e.reason} (its output is below)")
            return _failed(lines, f"{BUILD_FAILED}: {e.reason}", e.log)
        spec = built.spec
        lines.append(
            "build: done, from this worker's cache"
            if built.cached
            else f"build: done in {built.seconds:.1f} s"
        )
    if trial.opponent is None:
        return {"status": T.ABORTED, "report": lines, "reason": "its opponent was deleted"}
    other = runner.load_spec(trial.opponent)
    mine = trial.colour
    me = f"{spec.name or 'your bot'} (trial)"
    names = {"white": me, "black": trial.opponent_label}
    if mine == Colour.BLACK:
        names = {"white": trial.opponent_label, "black": me}
    config = runner.game_config(
        variant=trial.variant,
        white=spec if mine == Colour.WHITE else other,
        black=other if mine == Colour.WHITE else spec,
        white_label=names["white"],
        black_label=names["black"],
        time_control=trial.time_control,
        seed=trial.pk,
        event=f"{settings.SITE_NAME} trial",
    )
    result = runner.referee().play(config, cancel=cancel)
    if result.aborted:
        if cancel.is_set():
            return None
        raise InfrastructureError(f"the trial's game was aborted: {result.reason}")
    # The opponent's failure is told in public words: its standard error is its owner's.
    said = result.reason if result.fault in ("", mine) else result.public_reason
    reason = name_the_players(said, names)
    lines.append(
        f"the game ({trial.variant_title}, as {mine}, against {trial.opponent_label}): "
        f"{result.outcome.result.score}, {reason}"
    )
    player = result.transcript.get("players", {})
    own = player.get(mine, {}) if isinstance(player, dict) else {}
    return {
        "status": T.PLAYED,
        "report": lines,
        "reason": reason[:4000],
        "result": result.outcome.result.value,
        "termination": result.outcome.termination.value,
        "fault": result.fault or "",
        "record": result.record.to_text(long=True),
        "transcript": privacy.own_side(result.transcript, spec.digest),
        "stderr_tail": str(own.get("stderr_tail", "") if isinstance(own, dict) else "")[-8000:],
    }


# ----------------------------------------------------------------------------- for its owner


def reason_for(trial: Trial) -> str:
    """The trial's reason for its owner, without the server's paths."""
    return redaction.strip_paths(trial.reason, privacy.server_roots())


def logs(trial: Trial) -> tuple[list[str], str]:
    """The trial's report lines and stderr tail for its owner, without the server's paths."""
    roots = privacy.server_roots()
    return (
        [redaction.strip_paths(str(line), roots) for line in trial.report or []],
        redaction.strip_paths(trial.stderr_tail, roots),
    )
