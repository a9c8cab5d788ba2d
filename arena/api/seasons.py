"""The API of the ladder's seasons (``/api/seasons/``): the list, a season's divisions and
standings, and its CSV file. Read only: operators open and close seasons (``manage.py season``,
the admin)."""

from __future__ import annotations

from typing import TypedDict

from django.db.models import QuerySet
from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, viewsets
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from arena.api.serializers import FilterSerializer, _absolute
from arena.bots.models import Variant
from arena.games import seasons
from arena.games.models import Season, SeasonEntry


class SeasonSerializer(serializers.ModelSerializer):
    title = serializers.CharField(
        read_only=True, help_text='Its name, or "<Variant> season <number>".'
    )
    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()
    standings_csv = serializers.SerializerMethodField(
        help_text="Its standings as a CSV file, a row per bot, division by division."
    )
    number = serializers.IntegerField(
        read_only=True, help_text="Its number among the seasons of its variant."
    )
    division_size = serializers.IntegerField(
        read_only=True, help_text="Bots per division when it opened; the last took the rest."
    )
    movers = serializers.IntegerField(
        read_only=True,
        help_text="Bots of each division that go up (not from the first), and as many that go "
        "down (not from the last), when it closes.",
    )
    previous: serializers.PrimaryKeyRelatedField[Season] = serializers.PrimaryKeyRelatedField(
        read_only=True,
        allow_null=True,
        help_text="The season its divisions came from (null: they were made by rating).",
    )
    ends_on = serializers.DateField(
        read_only=True,
        allow_null=True,
        help_text="Its last day (UTC); null: it runs until an operator closes it.",
    )

    class Meta:
        model = Season
        fields: tuple[str, ...] = (
            "id",
            "url",
            "page",
            "standings_csv",
            "variant",
            "number",
            "name",
            "title",
            "status",
            "division_size",
            "movers",
            "previous",
            "opened_at",
            "ends_on",
            "closed_at",
        )
        read_only_fields: tuple[str, ...] = fields

    @extend_schema_field(serializers.URLField())
    def get_url(self, obj: Season) -> str:
        return _absolute(self, reverse("api-season-detail", args=[obj.pk]))

    @extend_schema_field(serializers.URLField())
    def get_page(self, obj: Season) -> str:
        return _absolute(self, reverse("season", args=[obj.pk]))

    @extend_schema_field(serializers.URLField())
    def get_standings_csv(self, obj: Season) -> str:
        return _absolute(self, reverse("api-season-standings", args=[obj.pk]))


class SeasonStandingSerializer(serializers.Serializer):
    """A bot's line in its division's standings (:class:`arena.games.seasons.Row`)."""

    rank = serializers.IntegerField(read_only=True)
    bot = serializers.CharField(source="bot.name", read_only=True)
    owner = serializers.CharField(source="bot.owner.username", read_only=True)
    version = serializers.IntegerField(
        source="version.number",
        read_only=True,
        allow_null=True,
        help_text="Its version's number (when the season closed, or now): its active one, else "
        "its newest that passed its check.",
    )
    version_id = serializers.IntegerField(source="version.pk", read_only=True, allow_null=True)
    games = serializers.IntegerField(read_only=True)
    wins = serializers.IntegerField(read_only=True)
    draws = serializers.IntegerField(read_only=True)
    losses = serializers.IntegerField(read_only=True)
    points = serializers.FloatField(read_only=True, help_text="A win 1, a draw 0.5.")
    sonneborn_berger = serializers.FloatField(
        source="tiebreak", read_only=True, help_text="The first tie-break, within the division."
    )
    elo = serializers.FloatField(
        read_only=True,
        allow_null=True,
        help_text="Its version's rating in the variant (when the season closed, or now).",
    )
    move = serializers.ChoiceField(
        choices=SeasonEntry.Move.choices,
        read_only=True,
        help_text="Where it went when the season closed; for an open season, where it would "
        "go if the season closed now.",
    )


class SeasonDivisionSerializer(serializers.Serializer):
    number = serializers.IntegerField(read_only=True, help_text="1 is the top division.")
    standings = SeasonStandingSerializer(source="rows", many=True, read_only=True)


class SeasonDetailSerializer(SeasonSerializer):
    divisions = serializers.SerializerMethodField(
        help_text="Each division's standings, the top one first: so far for an open season "
        "(the ladder's games since it opened between two bots of the division), frozen for a "
        "closed one."
    )

    class Meta(SeasonSerializer.Meta):
        fields = (*SeasonSerializer.Meta.fields, "divisions")
        read_only_fields = fields

    @extend_schema_field(SeasonDivisionSerializer(many=True))
    def get_divisions(self, obj: Season) -> object:
        return SeasonDivisionSerializer(seasons.standings(obj), many=True).data


class SeasonFilter(TypedDict, total=False):
    variant: str
    status: str


class SeasonFilterSerializer(FilterSerializer[SeasonFilter]):
    variant = serializers.ChoiceField(choices=Variant.choices, required=False, allow_blank=True)
    status = serializers.ChoiceField(
        choices=Season.Status.choices, required=False, allow_blank=True
    )


@extend_schema(tags=["seasons"])
class SeasonViewSet(viewsets.ReadOnlyModelViewSet):
    """The ladder's seasons: each variant's divisions, their standings, promotions and
    relegations. Newest first by ``id``."""

    def get_serializer_class(self) -> type[serializers.BaseSerializer[Season]]:
        return SeasonDetailSerializer if self.action != "list" else SeasonSerializer

    @extend_schema(parameters=[SeasonFilterSerializer])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Season]:
        qs = Season.objects.order_by("-id")
        if self.action == "list":
            p = SeasonFilterSerializer.parse(self.request)
            if p.get("variant"):
                qs = qs.filter(variant=p["variant"])
            if p.get("status"):
                qs = qs.filter(status=p["status"])
        return qs

    @extend_schema(responses={(200, "text/csv"): OpenApiTypes.STR})
    @action(detail=True, methods=["get"], url_path="standings", url_name="standings")
    def standings(self, request: Request, pk: str) -> HttpResponse:
        """The season's standings as a CSV file, a row per bot, division by division: frozen for
        a closed season, as they are now for an open one."""
        return seasons.standings_csv(self.get_object()).response()
