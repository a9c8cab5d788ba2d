"""The API of trials (``/api/trials/``): try an upload in one game, follow it, read the game and
the bot's log, publish it. Each user sees only their own trials."""

from __future__ import annotations

from typing import TypedDict

from django.core.files.uploadedfile import UploadedFile
from django.db.models import QuerySet
from django.urls import reverse
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import mixins, permissions, serializers, status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from arena.admission import trials
from arena.admission.models import Colour, Trial
from arena.api.serializers import (
    DetailSerializer,
    InputSerializer,
    StrictCharField,
    VersionSerializer,
    _absolute,
)
from arena.bots.models import NAME_MAX_LENGTH, Bot, BotVersion, Variant
from arena.referee.jsontypes import JSON


class TrialSerializer(serializers.ModelSerializer):
    url = serializers.SerializerMethodField()
    page = serializers.SerializerMethodField()
    bot: serializers.SlugRelatedField[Bot] = serializers.SlugRelatedField(
        slug_field="name",
        read_only=True,
        allow_null=True,
        help_text="Your bot it would be a new version of (null: a new bot).",
    )
    score = serializers.CharField(
        read_only=True, help_text="The upload's score: 1, ½ or 0 (empty until it played)."
    )
    reason = serializers.SerializerMethodField(
        help_text="What ended the game, or why it could not play."
    )
    report = serializers.SerializerMethodField(help_text="What the worker did, line by line.")
    stderr_tail = serializers.SerializerMethodField(
        help_text="The end of the upload's standard error, or of its build's output."
    )
    transcript = serializers.SerializerMethodField(
        help_text="The game's transcript with the upload's own log (the opponent's left out)."
    )

    class Meta:
        model = Trial
        fields = (
            "id",
            "url",
            "page",
            "status",
            "filename",
            "bot",
            "variant",
            "colour",
            "opponent",
            "opponent_label",
            "time_control",
            "created_at",
            "finished_at",
            "result",
            "score",
            "termination",
            "fault",
            "reason",
            "report",
            "record",
            "stderr_tail",
            "transcript",
        )
        read_only_fields = fields

    @extend_schema_field(serializers.URLField())
    def get_url(self, obj: Trial) -> str:
        return _absolute(self, reverse("api-trial-detail", args=[obj.pk]))

    @extend_schema_field(serializers.URLField())
    def get_page(self, obj: Trial) -> str:
        return _absolute(self, obj.get_absolute_url())

    def get_reason(self, obj: Trial) -> str:
        return trials.reason_for(obj)

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_report(self, obj: Trial) -> list[str]:
        return trials.logs(obj)[0]

    def get_stderr_tail(self, obj: Trial) -> str:
        return trials.logs(obj)[1]

    @extend_schema_field(serializers.JSONField(allow_null=True))
    def get_transcript(self, obj: Trial) -> JSON:
        return obj.transcript


class TrialCreate(TypedDict, total=False):
    file: UploadedFile
    variant: str
    colour: str
    opponent: str
    bot: str


class TrialCreateSerializer(InputSerializer[TrialCreate]):
    file = serializers.FileField(
        help_text="A .zip or .tar.gz of a folder with bot.toml, or one executable file."
    )
    variant = serializers.ChoiceField(choices=Variant.choices, default="yinsh")
    colour = serializers.ChoiceField(
        choices=Colour.choices, default=Colour.WHITE, help_text="The colour the upload plays."
    )
    opponent = StrictCharField(
        required=False,
        max_length=NAME_MAX_LENGTH,
        help_text="The name of the bot whose active version it plays (default: random).",
    )
    bot = StrictCharField(
        required=False,
        max_length=NAME_MAX_LENGTH,
        help_text="Your bot it would be a new version of (publishing then adds a version).",
    )


class PublishSerializer(InputSerializer[dict[str, str]]):
    name = StrictCharField(
        required=False,
        allow_blank=True,
        max_length=NAME_MAX_LENGTH,
        help_text="The new bot's name (not needed when the trial names its bot).",
    )


def _opponent(name: str | None) -> BotVersion | None:
    if not name:
        return None
    version = trials.opponents().filter(bot__name=name).first()
    if version is None:
        raise ValidationError({"opponent": [f"{name!r} is no active bot"]})
    return version


def _bot(name: str | None) -> Bot | None:
    if not name:
        return None
    bot = Bot.objects.filter(name=name).first()
    if bot is None:
        raise ValidationError({"bot": [f"there is no bot {name!r}"]})
    return bot


class TrialViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Trials: an upload's one game in the sandbox before it is published, against random or
    any active bot. Unrated and unlisted; only their owner sees them."""

    serializer_class = TrialSerializer
    permission_classes = [permissions.IsAuthenticated]

    def get_queryset(self) -> QuerySet[Trial]:
        return trials.visible(self.request.user).filter(owner_id=self.request.user.pk)

    @extend_schema(
        request={"multipart/form-data": TrialCreateSerializer},
        responses={201: TrialSerializer},
    )
    def create(self, request: Request) -> Response:
        """Upload a bot to try: its game is queued for a worker (follow ``url``)."""
        v = TrialCreateSerializer(data=request.data).checked()
        f = v["file"]
        trial = trials.create(
            request.user,
            f,
            filename=f.name or "",
            variant=v.get("variant", "yinsh"),
            colour=v.get("colour", Colour.WHITE),
            opponent=_opponent(v.get("opponent")),
            bot=_bot(v.get("bot")),
        )
        body = TrialSerializer(trial, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        request=PublishSerializer, responses={201: VersionSerializer, 409: DetailSerializer}
    )
    @action(detail=True, methods=["post"])
    def publish(self, request: Request, pk: str) -> Response:
        """Publish the trial's upload: a new version of its bot, or a new bot called ``name``.
        It is checked as every upload is."""
        trial = self.get_object()
        v = PublishSerializer(data=request.data).checked()
        version = trials.publish(request.user, trial, name=v.get("name", ""))
        body = VersionSerializer(version, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)
