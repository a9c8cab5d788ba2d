"""The signed-in user's own page: their bots and versions, tests, challenges and notifications."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.db.models import Q
from django.http import HttpResponse
from django.shortcuts import render

from arena.bots import services as bots
from arena.duels import services as duels
from arena.duels.models import Duel
from arena.notifications import services as notifications
from arena.web.views import AuthenticatedHttpRequest

#: Latest tests, challenges and notifications shown (the full lists are a link away).
LATEST = 10


def duels_involving(user_id: int) -> Q:
    """The tests and challenges that are the user's, as every "mine" list means it: those they
    started and those played by one of their bots (a challenge of their bot by someone else).
    The rule of :func:`arena.duels.services.duels_of`, as a filter on :class:`Duel`."""
    return (
        Q(created_by_id=user_id)
        | Q(candidate__bot__owner_id=user_id)
        | Q(opponent__bot__owner_id=user_id)
    )


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
