"""The analysis board: ask bots for their action in a position, and read their answers.

:func:`ask` checks the request (a logged-in user, a known variant, a history the rules accept
that does not end the game, bots that answer on the board) and queues one
:class:`~arena.analysis.models.Analysis` per bot; a worker runs :func:`run` (the ``analyse``
task): it claims the request and asks the bot's version in the sandbox on a clock of
``ANALYSIS_MOVE_MS`` (:func:`arena.referee.analysis.analyse`, the referee's own game loop). The
asker polls :func:`answers`.

Which bots answer (:func:`available`): the built-in ``search`` (``ANALYSIS_BUILTIN_BOT``)
always, and every active bot whose owner opted in (:attr:`arena.bots.models.Bot.analysis`),
through its active version, in the variants it plays. What the asker reads of an answer is
the action, the bot's ``info`` (its owner opted in knowing that) and, when the bot failed,
the referee's reason in public words: never the bot's standard error.

As everywhere, what the bot did is its answer (a timeout, a crash, an illegal action shown as
such); what the machine did never is: the request goes back to the queue, and is ABORTED once
out of attempts. One that no worker answered within ``ANALYSIS_DEADLINE_S`` is EXPIRED
(:func:`expire`, run whenever answers are read), so the board never waits forever.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Case, IntegerField, Q, QuerySet, Value, When
from django.utils import timezone

import engine
from arena.analysis.models import Analysis
from arena.bots.models import Bot, BotVersion, playing, variant_title
from arena.core import throttles
from arena.core.errors import Refused
from arena.games import privacy, runner
from arena.jobs import claims, policy
from arena.jobs.sidecar import INLINE, Sidecar
from arena.referee import TimeControl
from arena.referee.analysis import analyse, position
from arena.referee.redaction import info_text, public_text, strip_json_paths

__all__ = [
    "AnalysisError",
    "answer_json",
    "answers",
    "ask",
    "available",
    "expire",
    "run",
]

S = Analysis.Status
Viewer = User | AnonymousUser


class AnalysisError(Refused):
    """A request the board cannot answer as asked; the message says why (``field``: the input
    it is about)."""

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.field = field


def available(variant: str | None = None) -> QuerySet[BotVersion]:
    """The versions that answer on the board: the active version of the built-in
    ``ANALYSIS_BUILTIN_BOT`` and of every active bot whose owner opted in (that play
    ``variant``), the built-in one first, then by name. Never a remote bot's: it has no
    program here for the sandbox to run."""
    builtin = Q(bot__name=settings.ANALYSIS_BUILTIN_BOT, bot__trusted=True)
    versions = BotVersion.objects.filter(
        builtin | Q(bot__analysis=True, bot__kind=Bot.Kind.UPLOAD),
        status=BotVersion.Status.ACTIVE,
        bot__status=Bot.Status.ACTIVE,
    )
    if variant:
        versions = versions.filter(playing(variant))
    first = Case(When(builtin, then=Value(0)), default=Value(1), output_field=IntegerField())
    return versions.select_related("bot").order_by(first, "bot__name")


def _history(history: str | Sequence[str]) -> list[str]:
    """The history as a list of actions (a string is split at spaces)."""
    actions = history.split() if isinstance(history, str) else [str(a) for a in history]
    return [a.strip() for a in actions if a.strip()]


def ask(
    user: Viewer, variant: str, history: str | Sequence[str], bots: Iterable[str]
) -> list[Analysis]:
    """Queue the question "your action here?" for each bot named in ``bots`` (by name), in the
    position ``history`` reaches in ``variant``. Returns the requests, in the order asked.

    Raises ``PermissionDenied`` for an anonymous user, :class:`AnalysisError` for a bad request
    (nothing is queued) and :class:`~arena.core.throttles.Throttled` past the user's rate
    (``THROTTLE_RATES["analysis"]``: one request counts once, whatever its number of bots).
    """
    if not user.is_authenticated:
        raise PermissionDenied("log in to ask bots on the analysis board")
    if variant not in engine.VARIANTS:
        known = ", ".join(engine.VARIANTS)
        raise AnalysisError(f"there is no variant {variant!r} (one of {known})", field="variant")
    actions = _history(history)
    if len(actions) > settings.MATCH_MAX_ACTIONS:
        raise AnalysisError(
            f"a history of {len(actions)} actions is longer than any game may be", field="history"
        )
    try:
        position(variant, actions)
    except ValueError as e:
        raise AnalysisError(f"this position cannot be analysed: {e}", field="history") from None
    names = list(dict.fromkeys(str(b) for b in bots))
    if not names:
        raise AnalysisError("choose at least one bot to ask", field="bots")
    if len(names) > settings.ANALYSIS_MAX_BOTS:
        raise AnalysisError(f"ask at most {settings.ANALYSIS_MAX_BOTS} bots at once", field="bots")
    found = {v.bot.name: v for v in available(variant).filter(bot__name__in=names)}
    missing = [n for n in names if n not in found]
    if missing:
        raise AnalysisError(
            f"{', '.join(repr(n) for n in missing)} cannot be asked: the board asks "
            f"{settings.ANALYSIS_BUILTIN_BOT} and the bots whose owners allow it, in a variant "
            f"they play ({variant_title(variant)} here)",
            field="bots",
        )
    with throttles.limited(user, "analysis"), transaction.atomic():
        now = timezone.now()
        made = []
        for name in names:
            version = found[name]
            analysis = Analysis.objects.create(
                owner_id=user.pk,
                version=version,
                bot_label=version.label,
                variant=variant,
                history=" ".join(actions),
                created_at=now,
                queued_at=now,
            )
            claims.dispatch(analysis)
            made.append(analysis)
        _forget_old(user.pk)
    return made


def _forget_old(owner_id: int) -> None:
    """Keep an owner's latest ``ANALYSES_KEPT`` finished requests."""
    done = Analysis.objects.filter(owner_id=owner_id).exclude(status__in=[S.QUEUED, S.RUNNING])
    old = done.order_by("-pk").values_list("pk", flat=True)[settings.ANALYSES_KEPT :]
    Analysis.objects.filter(pk__in=list(old)).delete()


def expire(now: datetime | None = None) -> int:
    """End the requests still waiting or thinking ``ANALYSIS_DEADLINE_S`` after they were
    made (no worker took them in time, or the one that did died): EXPIRED, with a reason that
    blames the arena, not the bot. Returns how many."""
    now = now or timezone.now()
    late = now - timedelta(seconds=settings.ANALYSIS_DEADLINE_S)
    return Analysis.objects.filter(status__in=[S.QUEUED, S.RUNNING], created_at__lt=late).update(
        status=S.EXPIRED,
        finished_at=now,
        reason=f"no answer within {settings.ANALYSIS_DEADLINE_S} s: the arena is busy, "
        "try again later",
    )


def answers(user: Viewer, ids: Iterable[int]) -> list[Analysis]:
    """The requests ``ids`` of ``user`` (their own only: another's are not found), oldest
    first, with those past their deadline expired first."""
    if not user.is_authenticated:
        raise PermissionDenied("log in to read the analysis board's answers")
    expire()
    return list(Analysis.objects.filter(owner_id=user.pk, pk__in=list(ids)).order_by("pk"))


def answer_json(analysis: Analysis) -> dict[str, Any]:
    """What the board shows of a request: the bot, the status, its action and info, or why it
    gave none (the referee's public words: never the bot's standard error)."""
    return {
        "id": analysis.pk,
        "bot": analysis.version.bot.name if analysis.version else "",
        "version": analysis.bot_label,
        "variant": analysis.variant,
        "ply": len(analysis.actions),
        "status": analysis.status,
        "status_text": analysis.get_status_display(),
        "done": analysis.done,
        "action": analysis.action,
        "info": analysis.info,
        "info_text": _info_text(analysis.info),
        "think_ms": analysis.think_ms,
        "termination": analysis.termination,
        "reason": analysis.reason,
    }


def _info_text(info: Any) -> str:
    return info_text(info) if info is not None else ""


# ----------------------------------------------------------------------------- in a worker


def run(analysis_id: int, worker_name: str = "", sidecar: Sidecar = INLINE) -> str:
    """Claim a queued request and ask its bot (what the ``analyse`` task does). Returns its
    new status, "not queued" or "lost its claim"; raises
    :class:`~arena.jobs.policy.InfrastructureError` after giving it back when the machine
    failed."""
    attempt = claims.claim(Analysis, analysis_id, worker_name)
    if attempt is None:
        return "not queued"
    analysis = Analysis.objects.select_related("version__bot").get(pk=analysis_id)
    with runner.working_on(Analysis, analysis_id, attempt, f"analysis {analysis_id}", sidecar):
        fields = _answer(analysis)
        fields["finished_at"] = timezone.now()
        if policy.retrying(lambda: claims.held(Analysis, analysis_id, attempt).update(**fields)):
            return str(fields["status"])
        return "lost its claim"


def _answer(analysis: Analysis) -> dict[str, object]:
    """Ask the bot; the fields to write."""
    version = analysis.version
    if version is None:
        return {"status": S.ABORTED, "reason": "its bot was deleted"}
    spec = runner.load_spec(version)
    answer = analyse(
        runner.referee(),
        spec,
        analysis.variant,
        analysis.actions,
        TimeControl(settings.ANALYSIS_MOVE_MS, 0),
        seed=analysis.pk,
        name=version.label,
    )
    roots = privacy.server_roots()
    if not answer.ok:
        return {
            "status": S.FAILED,
            "termination": answer.termination,
            "reason": public_text(answer.reason, roots)[:4000],
        }
    return {
        "status": S.ANSWERED,
        "action": answer.action[:80],
        "info": strip_json_paths(answer.info, roots) if answer.info is not None else None,
        "think_ms": answer.ms,
        "reason": answer.reason,
    }
