"""The API of scheduled (recurring) tournaments (``/api/schedules/``): list, read, create
(organisers), change, pause or resume (``status``) and delete (its organiser)."""

from __future__ import annotations

from datetime import datetime
from typing import TypedDict

from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.exceptions import PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from arena.api.serializers import InputSerializer, StrictBooleanField, StrictCharField, _absolute
from arena.bots.models import Variant
from arena.tournaments import limits, schedules
from arena.tournaments import services as tournaments
from arena.tournaments.models import Schedule, Tournament


class ScheduleSerializer(serializers.ModelSerializer):
    organiser = serializers.CharField(source="organiser.username", read_only=True)
    entrants = serializers.SerializerMethodField()
    tournaments = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = Schedule
        fields = (
            "id",
            "url",
            "name",
            "organiser",
            "variant",
            "format",
            "time_control",
            "games_per_pair",
            "rounds",
            "rated",
            "next_start",
            "interval_days",
            "status",
            "last_tournament",
            "tournaments",
            "entrants",
            "created_at",
        )
        read_only_fields = fields

    @extend_schema_field(
        serializers.ListField(
            child=serializers.CharField(),
            help_text="The bots an event would take now (opted in, playing the variant; a "
            "rated event only those that accept rated tournaments).",
        )
    )
    def get_entrants(self, obj: Schedule) -> list[str]:
        return [b.name for b in schedules.entrants(obj)]

    @extend_schema_field(
        serializers.ListField(
            child=serializers.IntegerField(), help_text="The tournaments it started (ids)."
        )
    )
    def get_tournaments(self, obj: Schedule) -> list[int]:
        return list(obj.tournaments.order_by("id").values_list("pk", flat=True))

    @extend_schema_field(serializers.URLField())
    def get_url(self, obj: Schedule) -> str:
        return _absolute(self, reverse("api-schedule-detail", args=[obj.pk]))


class ScheduleCreate(TypedDict):
    name: str
    variant: str
    format: str
    time_control: str
    games_per_pair: int
    rounds: int | None
    rated: bool
    first_start: datetime
    interval_days: int


class ScheduleCreateSerializer(InputSerializer[ScheduleCreate]):
    name = StrictCharField(max_length=limits.NAME_MAX_LENGTH)
    variant = serializers.ChoiceField(choices=Variant.choices)
    format = serializers.ChoiceField(
        choices=Tournament.Format.choices, default=Tournament.Format.ROUND_ROBIN
    )
    time_control = StrictCharField(
        max_length=limits.TIME_CONTROL_MAX_LENGTH, default=limits.DEFAULT_TIME_CONTROL
    )
    games_per_pair = serializers.IntegerField(
        min_value=1, max_value=limits.MAX_GAMES_PER_PAIR, default=limits.DEFAULT_GAMES_PER_PAIR
    )
    rounds = serializers.IntegerField(
        min_value=1,
        max_value=limits.MAX_ENTRANTS,
        default=None,
        allow_null=True,
        help_text="A Swiss's rounds (null: its usual length for the bots that enter).",
    )
    rated = StrictBooleanField(
        default=False,
        help_text="Count the games in the ratings: a rated event takes only the opted-in bots "
        "that accept rated tournaments.",
    )
    first_start = serializers.DateTimeField(help_text="When the first event starts.")
    interval_days = serializers.IntegerField(
        min_value=limits.MIN_INTERVAL_DAYS,
        max_value=limits.MAX_INTERVAL_DAYS,
        help_text="Days between events (7: weekly).",
    )


class ScheduleUpdate(TypedDict, total=False):
    name: str
    status: str
    next_start: datetime
    interval_days: int


class ScheduleUpdateSerializer(InputSerializer[ScheduleUpdate]):
    name = StrictCharField(max_length=limits.NAME_MAX_LENGTH, required=False)
    status = serializers.ChoiceField(
        choices=Schedule.Status.choices, required=False, help_text="Pause or resume."
    )
    next_start = serializers.DateTimeField(required=False)
    interval_days = serializers.IntegerField(
        min_value=limits.MIN_INTERVAL_DAYS, max_value=limits.MAX_INTERVAL_DAYS, required=False
    )

    def validate(self, attrs: dict[str, object]) -> dict[str, object]:
        if not attrs:
            raise serializers.ValidationError(
                "nothing to change: give name, status, next_start or interval_days"
            )
        return attrs


@extend_schema(tags=["tournaments"])
class ScheduleViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Scheduled (recurring) tournaments of every opted-in bot (``scheduled_events``)."""

    serializer_class = ScheduleSerializer

    def get_queryset(self) -> QuerySet[Schedule]:
        return Schedule.objects.select_related("organiser").order_by("next_start", "id")

    @extend_schema(request=ScheduleCreateSerializer, responses={201: ScheduleSerializer})
    def create(self, request: Request) -> Response:
        """Schedule a recurring tournament (organisers)."""
        if not tournaments.can_organise(request.user):
            raise PermissionDenied("you may not organise tournaments")
        v = ScheduleCreateSerializer(data=request.data).checked()
        s = schedules.create(
            request.user,
            name=v["name"],
            variant=v["variant"],
            format=v["format"],
            time_control=v["time_control"],
            games_per_pair=v["games_per_pair"],
            rounds=v["rounds"],
            rated=v["rated"],
            first_start=v["first_start"],
            interval_days=v["interval_days"],
        )
        body = ScheduleSerializer(s, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=ScheduleUpdateSerializer, responses=ScheduleSerializer)
    def partial_update(self, request: Request, pk: str) -> Response:
        """Rename, move the next start, change the interval, pause or resume (its
        organiser)."""
        s = self.get_object()
        if not schedules.can_manage(request.user, s):
            raise PermissionDenied("only the schedule's organiser may change it")
        v = ScheduleUpdateSerializer(data=request.data).checked()
        wanted = v.get("status")
        schedules.update(
            request.user,
            s,
            name=v.get("name"),
            interval_days=v.get("interval_days"),
            next_start=v.get("next_start"),
        )
        if wanted == Schedule.Status.PAUSED:
            schedules.pause(request.user, s)
        elif wanted == Schedule.Status.ACTIVE:
            schedules.resume(request.user, s)
        s.refresh_from_db()
        return Response(ScheduleSerializer(s, context=self.get_serializer_context()).data)

    def update(self, request: Request, *args: object, **kwargs: str) -> Response:
        return self.partial_update(request, kwargs["pk"])

    def destroy(self, request: Request, pk: str) -> Response:
        """Delete the schedule (its organiser); the tournaments it started stay."""
        s = self.get_object()
        if not schedules.can_manage(request.user, s):
            raise PermissionDenied("only the schedule's organiser may delete it")
        schedules.delete(request.user, s)
        return Response(status=status.HTTP_204_NO_CONTENT)
