"""Operators' view of tournaments."""

from __future__ import annotations

from django.contrib import admin

from arena.tournaments.models import Bye, Entry, Schedule, Tournament


class EntryInline(admin.TabularInline):
    model = Entry
    extra = 0
    raw_id_fields = ("version",)


class ByeInline(admin.TabularInline):
    model = Bye
    extra = 0
    raw_id_fields = ("entry",)


@admin.register(Tournament)
class TournamentAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "organiser",
        "format",
        "variant",
        "time_control",
        "games_per_pair",
        "status",
        "created_at",
    )
    list_filter = ("status", "format", "variant")
    search_fields = ("name", "organiser__username")
    raw_id_fields = ("organiser",)
    inlines = [EntryInline, ByeInline]


@admin.register(Schedule)
class ScheduleAdmin(admin.ModelAdmin):
    list_display = (
        "name",
        "organiser",
        "format",
        "variant",
        "time_control",
        "rated",
        "next_start",
        "interval_days",
        "status",
        "last_tournament",
    )
    list_filter = ("status", "format", "variant")
    search_fields = ("name", "organiser__username")
    raw_id_fields = ("organiser", "last_tournament", "tournaments")
