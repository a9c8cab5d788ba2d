"""Operators' view of matches, records and ratings."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from arena.games import ratings
from arena.games.models import Match, MatchRecord, PairStats, Rating, RatingPoint, RatingState


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


@admin.register(PairStats)
class PairStatsAdmin(admin.ModelAdmin):
    list_display = ("variant", "white", "black", "wins", "draws", "losses")
    list_filter = ("variant",)
    list_select_related = ("white__bot", "black__bot")
    raw_id_fields = ("white", "black")


@admin.register(RatingState)
class RatingStateAdmin(admin.ModelAdmin):
    list_display = ("variant", "results", "fitted", "fitted_at", "fit_seconds", "white_advantage")
    actions = ["refit"]

    @admin.action(description="Recompute these ratings from the matches")
    def refit(self, request: HttpRequest, queryset: QuerySet[RatingState]) -> None:
        for state in queryset:
            ratings.recompute(state.variant)
        self.message_user(request, "ratings recomputed")


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = ("variant", "rank", "version", "elo", "error", "games", "provisional", "points")
    list_filter = ("variant",)
    list_select_related = ("version__bot",)
    search_fields = ("version__bot__name",)

    @admin.display(boolean=True, description="provisional")
    def provisional(self, obj: Rating) -> bool:
        return obj.provisional


@admin.register(RatingPoint)
class RatingPointAdmin(admin.ModelAdmin):
    list_display = ("version", "variant", "at", "elo", "error", "games")
    list_filter = ("variant",)
    list_select_related = ("version__bot",)
    raw_id_fields = ("version",)
