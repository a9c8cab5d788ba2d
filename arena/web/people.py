"""People at the board: play a bot in the browser, and a person's page with their games
(:mod:`arena.games.people`). The game itself is played on its match page, whose play panel
(arena/static/arena/play.js) is the person's client."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_POST

from arena.bots.models import Bot
from arena.games import people
from arena.web import forms
from arena.web.refusals import OnForm

__all__ = ["person", "play"]


class AuthenticatedHttpRequest(HttpRequest):
    user: User


def play_form(bot: Bot, data: object = None) -> forms.PlayForm:
    """The form that starts a game against ``bot``, for its active version's variants."""
    version = bot.active_version
    variants = version.variant_names if version is not None else []
    return forms.PlayForm(data, variants=list(variants))


@login_required
@require_POST
def play(request: AuthenticatedHttpRequest, name: str) -> HttpResponse:
    """Start a game against the bot and go to its page, where the person plays it."""
    bot = get_object_or_404(Bot.objects.select_related("owner"), name=name)
    if not people.can_play(request.user, bot):
        raise PermissionDenied
    form = play_form(bot, request.POST)
    on_form = OnForm(form)
    if form.is_valid():
        with on_form:
            match = people.start(
                request.user,
                bot,
                variant=form.cleaned_data["variant"],
                time_control=form.cleaned_data["time_control"],
                colour=form.cleaned_data["colour"],
            )
            return redirect(match)
    context = {"bot": bot, "form": form, "playing": people.open_game(request.user)}
    return render(request, "web/play.html", context, status=on_form.status)


def person(request: HttpRequest, username: str) -> HttpResponse:
    """A person's games against bots, newest first."""
    user = get_object_or_404(get_user_model(), username=username)
    games = people.games_of(user).select_related("white__bot__owner", "black__bot__owner")
    page = Paginator(games, 50).get_page(request.GET.get("page"))
    return render(request, "web/person.html", {"person": user, "page": page})
