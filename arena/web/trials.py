"""Pages of trials (:mod:`arena.admission.trials`): the form that starts one with the owner's
trials below it, and a trial's page: its status while it waits, then the game on the board with
the bot's log, and the button that publishes the upload. Only the owner (and the operators) see
a trial; anyone else is told there is none."""

from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

import engine
from arena.admission import trials
from arena.admission.models import Trial
from arena.bots import services as bots
from arena.bots.unpack import UploadError
from arena.core.errors import Refused
from arena.games.replay import replay_frames
from arena.referee.redaction import player_logs
from arena.web import events, forms
from arena.web.pages import turns
from arena.web.refusals import OnForm


class AuthenticatedHttpRequest(HttpRequest):
    user: User


def _trial(request: HttpRequest, pk: int) -> Trial:
    trial = trials.visible(request.user).filter(pk=pk).first()
    if trial is None:
        raise Http404(f"you have no trial {pk}")
    return trial


@login_required
def trial_list(request: AuthenticatedHttpRequest) -> HttpResponse:
    """The form that starts a trial (``?bot=NAME`` chooses the bot it would be a version of),
    and the user's trials."""
    initial = {"bot": request.GET.get("bot", "")}
    form = forms.TrialForm(
        request.POST or None, request.FILES or None, user=request.user, initial=initial
    )
    on_form = OnForm(form, by_field=True)
    if request.method == "POST" and form.is_valid():
        f = form.cleaned_data["file"]
        with on_form:
            trial = trials.create(
                request.user,
                f,
                filename=f.name,
                variant=form.cleaned_data["variant"],
                colour=form.cleaned_data["colour"],
                opponent=form.cleaned_data["opponent"],
                bot=form.cleaned_data["bot"],
            )
            return redirect(trial)
    mine = trials.visible(request.user).filter(owner=request.user)
    context = {"form": form, "trials": mine[:50]}
    return render(request, "web/trials.html", context, status=on_form.status)


def trial_detail(request: HttpRequest, pk: int) -> HttpResponse:
    trial = _trial(request, pk)
    report, stderr = trials.logs(trial)
    context = {
        "trial": trial,
        "reason": trials.reason_for(trial),
        "report": report,
        "stderr": stderr,
        "turns": turns(trial.record) if trial.record else [],
        "logs": player_logs(trial.transcript, {trial.colour}) if trial.transcript else [],
        "can_publish": trial.owner_id == request.user.pk and trial.status == Trial.Status.PLAYED,
        "publish_as": trial.bot if trial.bot and bots.can_manage(request.user, trial.bot) else None,
        # A trial under way: the page listens for its end (arena/static/arena/site.js).
        "events_url": None if trial.done else events.changes_url(request, "trial", trial.pk),
    }
    return render(request, "web/trial_detail.html", context)


def trial_status(request: HttpRequest, pk: int) -> JsonResponse:
    """A trial's status (never cached), for scripts; its page listens to its stream instead."""
    trial = _trial(request, pk)
    response = JsonResponse({"status": trial.status, "done": trial.done})
    response["Cache-Control"] = "no-store"
    return response


def trial_replay(request: HttpRequest, pk: int) -> JsonResponse:
    """The board replay's data of a played trial, with the bot's own log."""
    trial = _trial(request, pk)
    if not trial.record:
        raise Http404("the trial has no game yet")
    return JsonResponse(
        replay_frames(engine.Record.parse(trial.record), trial.transcript, logs=(trial.colour,))
    )


def trial_record(request: HttpRequest, pk: int) -> HttpResponse:
    """The trial's game record (long notation), as a file."""
    trial = _trial(request, pk)
    if not trial.record:
        raise Http404("the trial has no game yet")
    response = HttpResponse(trial.record, content_type="text/plain; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="trial-{trial.pk}.txt"'
    return response


@login_required
@require_POST
def trial_publish(request: AuthenticatedHttpRequest, pk: int) -> HttpResponse:
    """Publish the trial's upload: a new version of its bot, or a new bot named in the form."""
    trial = _trial(request, pk)
    if trial.owner_id != request.user.pk:
        raise PermissionDenied
    try:
        version = trials.publish(request.user, trial, name=request.POST.get("name", "").strip())
    except (UploadError, Refused) as e:
        messages.error(request, f"It was not published: {e}")
        return redirect(trial)
    messages.success(request, f"{version.label} was uploaded; its check is queued.")
    return redirect(version.bot)
