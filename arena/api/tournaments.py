"""The API of tournaments (``/api/tournaments/``): create in any format, list, follow (standings
with the format's tie-breaks, byes, a knockout's bracket, a gauntlet's scores), pause, resume,
cancel, play the missing games again, download."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypedDict

from django.contrib.auth.models import AnonymousUser, User
from django.http import HttpResponse
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import PermissionDenied, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from arena.api.serializers import DetailSerializer, InputSerializer, StrictCharField, _absolute
from arena.bots.models import Bot, Variant
from arena.games import downloads
from arena.referee.jsontypes import JSONObject
from arena.tournaments import limits
from arena.tournaments import services as tournaments
from arena.tournaments.models import Tournament

#: A tournament's pause, resume or cancel: True if done, False if its status forbids it now.
Transition = Callable[[User | AnonymousUser, Tournament], bool]


class TournamentSerializer(serializers.ModelSerializer):
    organiser = serializers.CharField(source="organiser.username", read_only=True)
    entrants = serializers.SerializerMethodField(help_text="Its bot versions, in seed order.")
    archive = serializers.SerializerMethodField()
    rounds = serializers.SerializerMethodField(
        help_text="The rounds it plays: a Swiss's as asked, the others' as their entrants make "
        "them (a knockout's tie-breaks belong to their round)."
    )
    seed = serializers.SerializerMethodField(
        help_text="A gauntlet's seed, the version that plays all the others; null in the other "
        "formats."
    )

    class Meta:
        model = Tournament
        fields: tuple[str, ...] = (
            "id",
            "name",
            "organiser",
            "format",
            "variant",
            "time_control",
            "games_per_pair",
            "rounds",
            "seed",
            "max_tiebreaks",
            "rated",
            "status",
            "created_at",
            "finished_at",
            "entrants",
            "archive",
        )
        read_only_fields: tuple[str, ...] = fields

    def get_entrants(self, obj: Tournament) -> list[str]:
        return [e.version.label for e in obj.entries.select_related("version__bot")]

    def get_rounds(self, obj: Tournament) -> int:
        return tournaments.spec_of(obj).round_count

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_seed(self, obj: Tournament) -> str | None:
        if obj.format != Tournament.Format.GAUNTLET:
            return None
        return obj.entries.select_related("version__bot").get(seed=1).version.label

    @extend_schema_field(serializers.URLField())
    def get_archive(self, obj: Tournament) -> str:
        return _absolute(self, reverse("tournament-archive", args=[obj.pk]))


class TournamentCreate(TypedDict):
    name: str
    format: str
    variant: str
    time_control: str
    games_per_pair: int
    rounds: int | None
    seed: str | None
    bots: list[str]
    rated: bool | None


class TournamentCreateSerializer(InputSerializer[TournamentCreate]):
    name = StrictCharField(max_length=limits.NAME_MAX_LENGTH)
    format = serializers.ChoiceField(
        choices=Tournament.Format.choices,
        default=Tournament.Format.ROUND_ROBIN,
        help_text="round-robin (every pair meets), double-round-robin (twice as many games), "
        "swiss (rounds of pairings by points), gauntlet (the seed against each other bot), "
        "knockout (a bracket seeded by rating).",
    )
    variant = serializers.ChoiceField(choices=Variant.choices)
    time_control = StrictCharField(
        max_length=limits.TIME_CONTROL_MAX_LENGTH, default=limits.DEFAULT_TIME_CONTROL
    )
    games_per_pair = serializers.IntegerField(
        min_value=1,
        max_value=limits.MAX_GAMES_PER_PAIR,
        default=limits.DEFAULT_GAMES_PER_PAIR,
        help_text="Round robins: the games each pair plays (twice that in a double round "
        "robin); the other formats: the games of each mini-match (even in a knockout).",
    )
    rounds = serializers.IntegerField(
        min_value=1,
        max_value=1000,
        default=None,
        allow_null=True,
        help_text="A Swiss's rounds (only a Swiss takes them): at most half the bots, one more "
        "with an odd number; left out, ⌈log2(bots)⌉.",
    )
    seed = serializers.SlugField(
        default=None,
        allow_null=True,
        help_text="A gauntlet's seed (only a gauntlet takes one): the name of the bot, one of "
        "bots, that plays all the others; left out, the first of bots.",
    )
    bots = serializers.ListField(
        child=serializers.SlugField(),
        min_length=limits.MIN_ENTRANTS,
        max_length=limits.MAX_ENTRANTS,
        help_text="Names of the bots.",
    )
    rated = serializers.BooleanField(
        default=None,
        allow_null=True,
        help_text="Count the games in the ratings. A rated tournament may include another "
        "owner's bot only if it accepts rated tournaments (rated_tournaments; built-in bots "
        "always do): any other is refused by name. Left out: rated when every bot accepts.",
    )


class StandingSerializer(serializers.Serializer):
    rank = serializers.IntegerField()
    bot = serializers.CharField(source="player.version.bot.name")
    version = serializers.IntegerField(source="player.version.number")
    points = serializers.FloatField()
    games = serializers.IntegerField()
    wins = serializers.IntegerField()
    draws = serializers.IntegerField()
    losses = serializers.IntegerField()
    tiebreak = serializers.FloatField(help_text="Sonneborn-Berger (as sonneborn_berger).")
    sonneborn_berger = serializers.FloatField(
        help_text="Over its opponents, its share of the points against each times their points."
    )
    buchholz = serializers.FloatField(help_text="The points of the opponents it met.")
    head_to_head = serializers.FloatField(
        help_text="Its points against those level with it on points, Buchholz and "
        "Sonneborn-Berger (a Swiss's last tie-break but the seed)."
    )
    byes = serializers.IntegerField(help_text="Rounds it sat out (a Swiss's, a knockout's).")
    round_reached = serializers.IntegerField(
        help_text="A knockout's last round it played in, the rounds plus one for the champion "
        "(0 in the other formats)."
    )


class ByeSerializer(serializers.Serializer):
    round = serializers.IntegerField()
    bot = serializers.CharField(source="entry.version.bot.name")
    version = serializers.IntegerField(source="entry.version.number")


class BracketSideSerializer(serializers.Serializer):
    bot = serializers.CharField(source="version.bot.name")
    version = serializers.IntegerField(source="version.number")
    seed = serializers.IntegerField()


class TieSerializer(serializers.Serializer):
    high = BracketSideSerializer(help_text="The higher seed.")
    low = BracketSideSerializer(allow_null=True, help_text="The lower seed; null: a bye.")
    points = serializers.ListField(
        child=serializers.FloatField(), help_text="Each one's points, tie-breaks included."
    )
    games = serializers.IntegerField(help_text="Games made, tie-breaks included.")
    tiebreaks = serializers.IntegerField(help_text="Tie-break mini-matches made.")
    winner = BracketSideSerializer(allow_null=True, help_text="Null until decided.")
    decided_by = serializers.CharField(
        help_text='"bye", "games", "tie-break", "decider" (the higher seed, the tie-breaks '
        'all level), "" while undecided.'
    )


class BracketRoundSerializer(serializers.Serializer):
    number = serializers.IntegerField()
    name = StrictCharField()
    ties = serializers.ListField(
        child=TieSerializer(allow_null=True),
        help_text="In bracket order (the winners of ties 2j and 2j + 1 meet next); null: not "
        "known yet.",
    )


class BracketSerializer(serializers.Serializer):
    rounds = BracketRoundSerializer(many=True)
    champion = BracketSideSerializer(allow_null=True)


class GauntletScoreSerializer(serializers.Serializer):
    bot = serializers.CharField(source="opponent.version.bot.name")
    version = serializers.IntegerField(source="opponent.version.number")
    games = serializers.IntegerField(source="score.games")
    wins = serializers.IntegerField(source="score.wins", help_text="The seed's.")
    draws = serializers.IntegerField(source="score.draws")
    losses = serializers.IntegerField(source="score.losses", help_text="The seed's.")
    points = serializers.FloatField(source="score.points", help_text="The seed's.")


class ProgressSerializer(serializers.Serializer):
    total = serializers.IntegerField()
    done = serializers.IntegerField(
        help_text="Games played to their end (finished); aborted and cancelled ones are apart."
    )
    finished = serializers.IntegerField()
    running = serializers.IntegerField()
    queued = serializers.IntegerField()
    pending = serializers.IntegerField()
    aborted = serializers.IntegerField()
    cancelled = serializers.IntegerField()
    round = serializers.IntegerField(help_text="The last round made (0 before the first).")
    rounds = serializers.IntegerField(help_text="The rounds it plays.")


class TournamentDetailSerializer(TournamentSerializer):
    standings = serializers.SerializerMethodField()
    crosstable = serializers.SerializerMethodField()
    progress = serializers.SerializerMethodField()
    byes = serializers.SerializerMethodField()
    bracket = serializers.SerializerMethodField()
    gauntlet = serializers.SerializerMethodField()

    class Meta(TournamentSerializer.Meta):
        fields = (
            *TournamentSerializer.Meta.fields,
            "progress",
            "standings",
            "crosstable",
            "byes",
            "bracket",
            "gauntlet",
        )
        read_only_fields = fields

    @extend_schema_field(ByeSerializer(many=True))
    def get_byes(self, obj: Tournament) -> list[JSONObject]:
        return list(ByeSerializer(tournaments.byes(obj), many=True).data)

    @extend_schema_field(BracketSerializer(allow_null=True))
    def get_bracket(self, obj: Tournament) -> JSONObject | None:
        """A knockout's bracket, every round of it; null in the other formats."""
        drawn = tournaments.bracket(obj)
        return dict(BracketSerializer(drawn).data) if drawn is not None else None

    @extend_schema_field(GauntletScoreSerializer(many=True, allow_null=True))
    def get_gauntlet(self, obj: Tournament) -> list[JSONObject] | None:
        """A gauntlet's seed against each other bot; null in the other formats."""
        table = tournaments.gauntlet(obj, self._table(obj))
        return list(GauntletScoreSerializer(table.scores, many=True).data) if table else None

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, obj: Tournament) -> dict[str, int]:
        return dict(ProgressSerializer(tournaments.progress(obj)).data)

    @extend_schema_field(StandingSerializer(many=True))
    def get_standings(self, obj: Tournament) -> list[JSONObject]:
        return list(StandingSerializer(self._table(obj), many=True).data)

    @extend_schema_field(
        {
            "type": "array",
            "items": {"type": "array", "items": {"type": "string"}},
            "description": 'Rows in standings order; each cell "points/games", "" or "x".',
        }
    )
    def get_crosstable(self, obj: Tournament) -> list[list[str]]:
        return [cells for _, cells in tournaments.crosstable(self._table(obj))]

    def _table(self, obj: Tournament) -> list[tournaments.Standing]:
        cache: dict[int, list[tournaments.Standing]] = self.context.setdefault("_standings", {})
        if obj.pk not in cache:
            cache[obj.pk] = tournaments.standings(obj)
        return cache[obj.pk]


@extend_schema(tags=["tournaments"])
class TournamentViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Tournaments (round robin, double round robin, Swiss, gauntlet, knockout): create,
    follow, pause, resume, cancel, download."""

    queryset = Tournament.objects.select_related("organiser").order_by("-id")

    def get_serializer_class(self) -> type[serializers.BaseSerializer[Tournament]]:
        return TournamentDetailSerializer if self.action != "list" else TournamentSerializer

    @extend_schema(request=TournamentCreateSerializer, responses={201: TournamentSerializer})
    def create(self, request: Request) -> Response:
        """Create and start a tournament (organisers)."""
        if not tournaments.can_organise(request.user):
            raise PermissionDenied("you may not organise tournaments")
        v = TournamentCreateSerializer(data=request.data).checked()
        names = list(dict.fromkeys(v["bots"]))
        found = {b.name: b for b in Bot.objects.filter(name__in=names)}
        missing = [n for n in names if n not in found]
        if missing:
            raise ValidationError({"bots": [f"no such bot: {', '.join(missing)}"]})
        seed = v["seed"]
        if seed is not None and seed not in found:
            raise ValidationError({"seed": [f"the seed, {seed}, is not one of the bots"]})
        t = tournaments.create(
            request.user,
            name=v["name"],
            variant=v["variant"],
            time_control=v["time_control"],
            games_per_pair=v["games_per_pair"],
            bots=[found[n] for n in names],
            rated=v["rated"],
            format=v["format"],
            rounds=v["rounds"],
            seed=found[seed] if seed is not None else None,
        )
        body = TournamentSerializer(t, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)

    def _act(self, request: Request, act: Transition, done_as: str) -> Response:
        t = self.get_object()
        done = act(request.user, t)
        t.refresh_from_db()
        if not done:
            detail = f"{t.name} cannot be {done_as}: it is {t.get_status_display()}."
            return Response({"detail": detail}, status=status.HTTP_409_CONFLICT)
        return Response(TournamentSerializer(t, context=self.get_serializer_context()).data)

    @extend_schema(request=None, responses={200: TournamentSerializer, 409: DetailSerializer})
    @action(detail=True, methods=["post"], permission_classes=[permissions.IsAuthenticated])
    def pause(self, request: Request, pk: str) -> Response:
        """Pause (organiser): queued games wait, running ones finish."""
        return self._act(request, tournaments.pause, "paused")

    @extend_schema(request=None, responses={200: TournamentSerializer, 409: DetailSerializer})
    @action(detail=True, methods=["post"], permission_classes=[permissions.IsAuthenticated])
    def resume(self, request: Request, pk: str) -> Response:
        """Resume a paused tournament (organiser)."""
        return self._act(request, tournaments.resume, "resumed")

    @extend_schema(request=None, responses={200: TournamentSerializer, 409: DetailSerializer})
    @action(detail=True, methods=["post"], permission_classes=[permissions.IsAuthenticated])
    def cancel(self, request: Request, pk: str) -> Response:
        """Cancel (organiser): every game not finished is cancelled."""
        return self._act(request, tournaments.cancel, "cancelled")

    @extend_schema(request=None, responses={200: TournamentSerializer, 409: DetailSerializer})
    @action(detail=True, methods=["post"], permission_classes=[permissions.IsAuthenticated])
    def replay(self, request: Request, pk: str) -> Response:
        """Play the missing games of an incomplete tournament again (organiser)."""
        return self._act(request, tournaments.play_missing_again, "played again")

    @extend_schema(responses={(200, "application/zip"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"])
    def archive(self, request: Request, pk: str) -> HttpResponse:
        """Every finished game of the tournament in one zip file."""
        t = self.get_object()
        return downloads.Download(
            tournaments.archive(t, request.user), f"tournament-{t.pk}.zip", downloads.ZIP_TYPE
        ).response()
