"""The seasons' pages: the list, a season's standings by division, and its CSV file."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.db.models import Count, Max
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render

from arena.games import seasons
from arena.games.models import Season

#: Seasons a page of the list shows.
SEASONS_PAGE = 50


def season_list(request: HttpRequest) -> HttpResponse:
    """Every season, the open ones first, then the newest."""
    rows = Season.objects.annotate(
        bots=Count("entries"), divisions=Max("entries__division")
    ).order_by("-status", "-opened_at", "-id")  # "open" after "closed": descending, first
    page = Paginator(rows, SEASONS_PAGE).get_page(request.GET.get("page"))
    return render(request, "web/season_list.html", {"page": page})


def season_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """A season's standings, division by division: so far, or as they were when it closed."""
    season = get_object_or_404(Season.objects.select_related("previous"), pk=pk)
    divisions = seasons.standings(season)
    return render(
        request,
        "web/season_detail.html",
        {
            "season": season,
            "divisions": divisions,
            "bots": sum(len(d.rows) for d in divisions),
            "next": Season.objects.filter(previous=season).order_by("opened_at").first(),
        },
    )


def season_standings(request: HttpRequest, pk: int) -> HttpResponse:
    """The season's standings as a CSV file."""
    season = get_object_or_404(Season, pk=pk)
    return seasons.standings_csv(season).response()
