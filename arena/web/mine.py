"""The signed-in user's own page: their bots and versions, tests, challenges and notifications."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpResponse
from django.shortcuts import render

from arena.bots import services as bots
from arena.duels import services as duels
from arena.duels.models import Duel
from arena.notifications import services as notifications
from arena.web.views import AuthenticatedHttpRequest

#: Latest tests, challenges and notifications shown (the full lists are a link away).
LATEST = 10


@login_required
def my_bots(request: AuthenticatedHttpRequest) -> HttpResponse:
    user = request.user
    return render(
        request,
        "web/my_bots.html",
        {
            "owned": bots.bots_of(user),
            "tests": duels.duels_of(user, Duel.Kind.TEST, limit=LATEST),
            "challenges": duels.duels_of(user, Duel.Kind.CHALLENGE, limit=LATEST),
            "notifications": notifications.recent(user, limit=LATEST),
        },
    )
