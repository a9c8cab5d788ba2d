"""Pages of scheduled (recurring) tournaments: the list of schedules with the organiser's form
to add one, a schedule's page with its past tournaments, and its pause, resume and delete
buttons. The tournaments page lists the upcoming events
(:mod:`arena.web.templatetags.schedules`)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from arena.bots.models import Variant
from arena.tournaments import limits, schedules
from arena.tournaments import services as tournaments
from arena.tournaments.models import Schedule, Tournament
from arena.web.refusals import OnForm


class AuthenticatedHttpRequest(HttpRequest):
    user: User


class ScheduleForm(forms.Form):
    name = forms.CharField(max_length=limits.NAME_MAX_LENGTH)
    variant = forms.ChoiceField(choices=Variant.choices)
    format = forms.ChoiceField(choices=Tournament.Format.choices)
    time_control = forms.CharField(
        initial=limits.DEFAULT_TIME_CONTROL,
        max_length=limits.TIME_CONTROL_MAX_LENGTH,
        help_text='Seconds per game and increment per turn, e.g. "60+1" or "10+0.1".',
    )
    games_per_pair = forms.IntegerField(
        label="Games per pairing",
        min_value=1,
        max_value=limits.MAX_GAMES_PER_PAIR,
        initial=limits.DEFAULT_GAMES_PER_PAIR,
        help_text="Round robins: the games each pair plays; the other formats: the games of "
        "each mini-match (a knockout's even).",
    )
    rounds = forms.IntegerField(
        required=False,
        min_value=1,
        help_text="A Swiss only: its rounds (empty: its usual length for the bots that enter).",
    )
    rated = forms.BooleanField(
        required=False,
        help_text="Count the games in the ratings: a rated event takes only the opted-in bots "
        "that accept rated tournaments.",
    )
    first_start = forms.DateTimeField(
        label=f"First event ({settings.TIME_ZONE})",
        widget=forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M"),
    )
    interval_days = forms.IntegerField(
        label="Every (days)",
        min_value=limits.MIN_INTERVAL_DAYS,
        max_value=limits.MAX_INTERVAL_DAYS,
        initial=7,
        help_text="7: weekly. Events missed while the arena was down are skipped.",
    )


def schedule_list(request: HttpRequest) -> HttpResponse:
    """Every schedule, the organiser's form to add one."""
    organiser = tournaments.can_organise(request.user)
    form = ScheduleForm(request.POST or None) if organiser else None
    on_form = OnForm(form) if form is not None else None
    if request.method == "POST":
        if form is None or on_form is None:
            raise PermissionDenied("you may not organise tournaments")
        if form.is_valid():
            data: dict[str, Any] = form.cleaned_data
            with on_form:
                s = schedules.create(
                    request.user,
                    name=data["name"],
                    variant=data["variant"],
                    time_control=data["time_control"],
                    games_per_pair=data["games_per_pair"],
                    first_start=data["first_start"],
                    interval_days=data["interval_days"],
                    format=data["format"],
                    rounds=data["rounds"],
                    rated=data["rated"],
                )
                messages.success(request, f"{s.name} is scheduled.")
                return redirect(s)
    rows = Schedule.objects.select_related("organiser", "last_tournament")
    return render(
        request,
        "web/schedule_list.html",
        {"rows": rows, "form": form},
        status=on_form.status if on_form is not None else 200,
    )


def schedule_detail(request: HttpRequest, pk: int) -> HttpResponse:
    s = get_object_or_404(Schedule.objects.select_related("organiser"), pk=pk)
    return render(
        request,
        "web/schedule_detail.html",
        {
            "s": s,
            "entrants": schedules.entrants(s),
            "past": s.tournaments.order_by("-id")[:100],
            "control": schedules.can_manage(request.user, s),
        },
    )


#: What the organiser is told after each action on a schedule.
SCHEDULE_ACTION_DONE = {
    "pause": "{name} is paused: no event starts until it is resumed.",
    "resume": "{name} is active again.",
}


@login_required
@require_POST
def schedule_action(request: AuthenticatedHttpRequest, pk: int, action: str) -> HttpResponse:
    s = get_object_or_404(Schedule, pk=pk)
    if action == "delete":
        schedules.delete(request.user, s)
        messages.success(request, f"{s.name} is deleted; the tournaments it started stay.")
        return redirect("schedules")
    if action == "pause":
        done = schedules.pause(request.user, s)
    elif action == "resume":
        done = schedules.resume(request.user, s)
    else:
        raise Http404
    if done:
        messages.success(request, SCHEDULE_ACTION_DONE[action].format(name=s.name))
    else:
        messages.warning(request, f"{s.name} cannot {action} now (it is {s.status}).")
    return redirect(s)
