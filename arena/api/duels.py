"""The API of tests and challenges (``/api/duels/``): start, list, follow, cancel."""

from __future__ import annotations

import math
from typing import TypedDict

from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from arena import stats
from arena.api.serializers import (
    DetailSerializer,
    FilterSerializer,
    InputSerializer,
    StrictBooleanField,
    StrictCharField,
    _absolute,
)
from arena.bots.models import BotVersion, Variant
from arena.duels import services as duels
from arena.duels.models import Duel
from arena.tournaments import limits


def _finite(x: float) -> float | None:
    """JSON has no infinity or NaN: an unbounded or unknown figure is null."""
    return x if math.isfinite(x) else None


def _estimate_schema(description: str) -> dict[str, object]:
    """The schema of an Elo estimate (:func:`_estimate`)."""
    keys = ["elo", "low", "high", "los", "score"]
    return {
        "type": "object",
        "description": description,
        "properties": {k: {"type": "number", "nullable": True} for k in keys},
        "required": keys,
    }


class DuelSerializer(serializers.ModelSerializer):
    created_by = serializers.CharField(source="created_by.username", read_only=True)
    candidate_label = serializers.CharField(source="candidate.label", read_only=True)
    opponent_label = serializers.CharField(source="opponent.label", read_only=True)
    pentanomial = serializers.SerializerMethodField()
    pairs = serializers.IntegerField(read_only=True, help_text="Pairs counted.")
    played = serializers.IntegerField(read_only=True, help_text="Games counted.")
    points = serializers.FloatField(read_only=True, help_text="The candidate's points.")
    bounds = serializers.SerializerMethodField()
    elo = serializers.SerializerMethodField()
    game_elo = serializers.SerializerMethodField()
    number = serializers.IntegerField(
        read_only=True,
        help_text='The number users see among duels of its kind ("Test #3"); links use the id.',
    )
    url = serializers.SerializerMethodField()

    class Meta:
        model = Duel
        fields = (
            "id",
            "kind",
            "number",
            "url",
            "variant",
            "time_control",
            "created_by",
            "candidate",
            "candidate_label",
            "opponent",
            "opponent_label",
            "elo0",
            "elo1",
            "alpha",
            "beta",
            "games",
            "max_games",
            "rated",
            "status",
            "verdict",
            "wins",
            "draws",
            "losses",
            "pentanomial",
            "pairs",
            "played",
            "points",
            "llr",
            "bounds",
            "elo",
            "game_elo",
            "created_at",
            "finished_at",
        )
        read_only_fields = fields

    @extend_schema_field(
        serializers.ListField(
            child=serializers.IntegerField(),
            min_length=5,
            max_length=5,
            help_text="Pairs in which the candidate scored 0, 1/2, 1, 3/2 and 2 points.",
        )
    )
    def get_pentanomial(self, obj: Duel) -> list[int]:
        return list(obj.counts)

    @extend_schema_field(
        serializers.ListField(
            child=serializers.FloatField(),
            min_length=2,
            max_length=2,
            allow_null=True,
            help_text="The LLR's lower and upper bounds (null for a fixed number of games).",
        )
    )
    def get_bounds(self, obj: Duel) -> list[float] | None:
        b = obj.bounds
        return list(b) if b is not None else None

    @extend_schema_field(
        _estimate_schema(
            "From the pairs: the Elo difference with its 95% interval, the likelihood of "
            "superiority and the mean score (null where unbounded or unknown)."
        )
    )
    def get_elo(self, obj: Duel) -> dict[str, float | None]:
        return _estimate(obj.pentanomial)

    @extend_schema_field(
        _estimate_schema("The same from single games, ignoring the pairs (trinomial).")
    )
    def get_game_elo(self, obj: Duel) -> dict[str, float | None]:
        return _estimate(obj.trinomial)

    @extend_schema_field(serializers.URLField())
    def get_url(self, obj: Duel) -> str:
        return _absolute(self, reverse("api-duel-detail", args=[obj.pk]))


def _estimate(e: stats.Estimate) -> dict[str, float | None]:
    return {
        "elo": _finite(e.elo),
        "low": _finite(e.low),
        "high": _finite(e.high),
        "los": _finite(e.los),
        "score": _finite(e.score),
    }


class DuelCreate(TypedDict, total=False):
    kind: str
    candidate: int
    opponent: int
    variant: str
    time_control: str
    elo0: float
    elo1: float
    alpha: float
    beta: float
    games: int
    max_games: int
    rated: bool


_MAX_ID = 2**63 - 1


class DuelCreateSerializer(InputSerializer[DuelCreate]):
    kind = serializers.ChoiceField(choices=Duel.Kind.choices)
    candidate = serializers.IntegerField(
        min_value=1, max_value=_MAX_ID, help_text="Your version's id."
    )
    opponent = serializers.IntegerField(
        min_value=1, max_value=_MAX_ID, help_text="The opponent version's id."
    )
    variant = serializers.ChoiceField(choices=Variant.choices)
    time_control = StrictCharField(max_length=limits.TIME_CONTROL_MAX_LENGTH, required=False)
    elo0 = serializers.FloatField(
        required=False, min_value=-1000, max_value=1000, help_text="A test's H0 (default 0)."
    )
    elo1 = serializers.FloatField(
        required=False, min_value=-1000, max_value=1000, help_text="A test's H1 (default 5)."
    )
    alpha = serializers.FloatField(required=False, min_value=0, max_value=0.5)
    beta = serializers.FloatField(required=False, min_value=0, max_value=0.5)
    games = serializers.IntegerField(
        required=False,
        min_value=2,
        max_value=100_000,
        help_text="A fixed, even number of games (required for a challenge; a test without it "
        "runs until the SPRT's verdict).",
    )
    max_games = serializers.IntegerField(
        required=False, min_value=2, max_value=100_000, help_text="A test's game budget."
    )
    rated = StrictBooleanField(
        default=False, help_text="A challenge asks for rated games (its bot must accept them)."
    )


class DuelFilter(TypedDict, total=False):
    kind: str
    status: str
    mine: bool


class DuelFilterSerializer(FilterSerializer[DuelFilter]):
    kind = serializers.ChoiceField(choices=Duel.Kind.choices, required=False, allow_blank=True)
    status = serializers.ChoiceField(choices=Duel.Status.choices, required=False, allow_blank=True)
    mine = StrictBooleanField(
        required=False,
        help_text="Only yours: the ones you started and the ones your bots play (a challenge "
        "of your bot by someone else).",
    )


def _version(pk: int, field: str) -> BotVersion:
    version = BotVersion.objects.select_related("bot").filter(pk=pk).first()
    if version is None:
        raise ValidationError({field: [f"no version {pk}"]})
    return version


@extend_schema(tags=["tests and challenges"])
class DuelViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Tests (your version against another, SPRT or a number of games) and challenges (your
    version against someone else's bot)."""

    serializer_class = DuelSerializer

    @extend_schema(parameters=[DuelFilterSerializer])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Duel]:
        qs = Duel.objects.select_related("created_by", "candidate__bot", "opponent__bot").order_by(
            "-id"
        )
        if self.action != "list":
            return qs
        p = DuelFilterSerializer.parse(self.request)
        for field in ("kind", "status"):
            if p.get(field):
                qs = qs.filter(**{field: p[field]})
        if p.get("mine"):
            user = self.request.user
            qs = qs.filter(duels.involving(user.pk)) if user.is_authenticated else qs.none()
        return qs

    @extend_schema(request=DuelCreateSerializer, responses={201: DuelSerializer})
    def create(self, request: Request) -> Response:
        """Start a test or a challenge (logged in; the candidate must be your version)."""
        v = DuelCreateSerializer(data=request.data).checked()
        candidate = _version(v["candidate"], "candidate")
        opponent = _version(v["opponent"], "opponent")
        if v["kind"] == Duel.Kind.TEST:
            duel = duels.start_test(
                request.user,
                candidate,
                opponent,
                variant=v["variant"],
                time_control=v.get("time_control"),
                elo0=v.get("elo0", stats.DEFAULT_ELO0),
                elo1=v.get("elo1", stats.DEFAULT_ELO1),
                alpha=v.get("alpha", stats.DEFAULT_ALPHA),
                beta=v.get("beta", stats.DEFAULT_BETA),
                games=v.get("games"),
                max_games=v.get("max_games"),
            )
        else:
            if "games" not in v:
                raise ValidationError({"games": ["a challenge needs a number of games"]})
            duel = duels.start_challenge(
                request.user,
                candidate,
                opponent,
                variant=v["variant"],
                time_control=v.get("time_control"),
                games=v["games"],
                rated=v.get("rated", False),
            )
        body = DuelSerializer(duel, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=None, responses={200: DuelSerializer, 409: DetailSerializer})
    @action(detail=True, methods=["post"], permission_classes=[permissions.IsAuthenticated])
    def cancel(self, request: Request, pk: str) -> Response:
        """Cancel (its creator): games not played are not; 409 when it is already over."""
        duel = self.get_object()
        done = duels.cancel(request.user, duel)
        duel.refresh_from_db()
        if not done:
            detail = f"{duel.title} cannot be cancelled: it is {duel.get_status_display()}."
            return Response({"detail": detail}, status=status.HTTP_409_CONFLICT)
        return Response(DuelSerializer(duel, context=self.get_serializer_context()).data)
