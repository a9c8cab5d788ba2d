"""Operators' view of the pair counts, the ratings and their history."""

from __future__ import annotations

from django.contrib import admin

from arena.ratings.models import PairStats, Rating, RatingPoint


@admin.register(PairStats)
class PairStatsAdmin(admin.ModelAdmin):
    list_display = ("ladder", "variant", "white", "black", "wins", "draws", "losses")
    list_filter = ("ladder", "variant")
    list_select_related = ("white__bot", "black__bot")
    raw_id_fields = ("white", "black")


@admin.register(Rating)
class RatingAdmin(admin.ModelAdmin):
    list_display = (
        "ladder",
        "variant",
        "rank",
        "version",
        "elo",
        "error",
        "games",
        "provisional",
        "points",
    )
    list_filter = ("ladder", "variant")
    list_select_related = ("version__bot",)
    search_fields = ("version__bot__name",)

    @admin.display(boolean=True, description="provisional")
    def provisional(self, obj: Rating) -> bool:
        return obj.provisional


@admin.register(RatingPoint)
class RatingPointAdmin(admin.ModelAdmin):
    list_display = ("version", "ladder", "variant", "at", "elo", "error", "games")
    list_filter = ("ladder", "variant")
    list_select_related = ("version__bot",)
    raw_id_fields = ("version",)
