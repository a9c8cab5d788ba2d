"""Operators' view of matches and records, of each variant's fit, which can be recomputed
from the matches here (the other rating tables are :mod:`arena.ratings.admin`'s), and of the
ladder's seasons, which are opened and closed here (:mod:`arena.games.seasons`)."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from arena.games import recount, seasons
from arena.games.models import Match, MatchRecord, Season, SeasonEntry
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
    list_display = (
        "variant",
        "ladder",
        "results",
        "fitted",
        "fitted_at",
        "fit_seconds",
        "white_advantage",
    )
    actions = ["refit"]

    @admin.action(description="Recompute these ratings from the matches")
    def refit(self, request: HttpRequest, queryset: QuerySet[RatingState]) -> None:
        for state in queryset:
            recount.recompute(state.variant)
        self.message_user(request, "ratings recomputed")


class SeasonOpenForm(forms.ModelForm):
    """Opening a season: what :func:`arena.games.seasons.check` refuses is shown on the form."""

    class Meta:
        model = Season
        fields = ("variant", "name", "division_size", "movers", "ends_on")
        help_texts = {
            "division_size": "Bots per division; the last division takes the rest.",
            "movers": "Bots of each division that go up, and as many that go down, at the end.",
            "ends_on": "Its last day (UTC); empty: it runs until it is closed.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        defaults = seasons.new_season("")
        self.fields["division_size"].initial = defaults.division_size
        self.fields["movers"].initial = defaults.movers

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if not self.errors:
            try:
                seasons.check(
                    seasons.new_season(
                        data["variant"],
                        division_size=data["division_size"],
                        movers=data["movers"],
                        name=data.get("name", ""),
                        ends_on=data.get("ends_on"),
                    )
                )
            except seasons.SeasonError as e:
                raise forms.ValidationError(str(e)) from None
        return data


class SeasonEntryInline(admin.TabularInline):
    model = SeasonEntry
    extra = 0
    can_delete = False
    fields = (
        "division",
        "bot",
        "seed",
        "joined_at",
        "rank",
        "version",
        "wins",
        "draws",
        "losses",
        "tiebreak",
        "elo",
        "move",
    )
    readonly_fields = fields
    ordering = ("division", "rank", "seed")

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Season)
class SeasonAdmin(admin.ModelAdmin):
    """Add opens a season (its bots placed in divisions); the action closes one. Only its name
    and end date change afterwards."""

    list_display = (
        "__str__",
        "variant",
        "number",
        "status",
        "division_size",
        "movers",
        "opened_at",
        "ends_on",
        "closed_at",
    )
    list_filter = ("status", "variant")
    actions = ["close"]
    inlines = [SeasonEntryInline]

    def get_form(
        self, request: HttpRequest, obj: Season | None = None, change: bool = False, **kwargs: Any
    ) -> type[forms.ModelForm]:
        if obj is None:
            kwargs["form"] = SeasonOpenForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_readonly_fields(self, request: HttpRequest, obj: Season | None = None) -> list[str]:
        if obj is None:
            return []
        fixed = ["variant", "number", "status", "division_size", "movers", "previous"]
        return [*fixed, "opened_at", "closed_at"]

    def get_inlines(self, request: HttpRequest, obj: Season | None) -> list[type[Any]]:
        return [SeasonEntryInline] if obj is not None else []

    def save_model(self, request: HttpRequest, obj: Season, form: Any, change: bool) -> None:
        if change:
            obj.save(update_fields=["name", "ends_on"])
        else:
            seasons.start(obj)

    @admin.action(description="Close the selected seasons (their standings are kept)")
    def close(self, request: HttpRequest, queryset: QuerySet[Season]) -> None:
        for season in queryset:
            try:
                seasons.close_season(season)
            except seasons.SeasonError as e:
                self.message_user(request, str(e), messages.WARNING)
            else:
                self.message_user(request, f"{season.title} is closed.")
