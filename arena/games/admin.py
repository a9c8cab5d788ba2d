"""Operators' view of matches and records, and of each variant's fit, which can be recomputed
from the matches here (the other rating tables are :mod:`arena.ratings.admin`'s)."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from arena.games import recount
from arena.games.models import Match, MatchRecord
from arena.ratings.models import RatingState


class MatchRecordInline(admin.StackedInline):
    model = MatchRecord
    extra = 0
    can_delete = False
    readonly_fields = ("record", "record_short", "transcript")


@admin.register(Match)
class MatchAdmin(admin.ModelAdmin):
    list_display = (
        "id",
        "variant",
        "kind",
        "status",
        "white",
        "black",
        "result",
        "termination",
        "attempts",
        "worker",
        "finished_at",
    )
    list_filter = ("status", "kind", "variant", "termination")
    search_fields = ("white__bot__name", "black__bot__name", "worker", "reason")
    list_select_related = ("white__bot", "black__bot")
    raw_id_fields = ("white", "black", "tournament")
    readonly_fields = ("created_at", "queued_at", "started_at", "heartbeat_at", "finished_at")
    inlines = [MatchRecordInline]


@admin.register(RatingState)
class RatingStateAdmin(admin.ModelAdmin):
    list_display = ("variant", "results", "fitted", "fitted_at", "fit_seconds", "white_advantage")
    actions = ["refit"]

    @admin.action(description="Recompute these ratings from the matches")
    def refit(self, request: HttpRequest, queryset: QuerySet[RatingState]) -> None:
        for state in queryset:
            recount.recompute(state.variant)
        self.message_user(request, "ratings recomputed")
