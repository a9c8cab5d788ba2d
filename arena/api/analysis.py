"""The API of the analysis board (``/api/analysis/``): ask bots for their action in a position,
read their answers, list the bots that answer. Logged-in users only; each reads only their own
requests (docs/replay.md, "The analysis board")."""

from __future__ import annotations

import re
from typing import Any, TypedDict

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers, status
from rest_framework import views as drf_views
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response

from arena.analysis import services as analysis
from arena.analysis.models import Analysis
from arena.api.serializers import InputSerializer, StrictCharField
from arena.bots.models import NAME_MAX_LENGTH, Variant


class AnswerSerializer(serializers.Serializer[dict[str, Any]]):
    """One bot's answer (or why it gave none)."""

    id = serializers.IntegerField()
    bot = serializers.CharField(help_text="The bot asked (empty once it was deleted).")
    version = serializers.CharField(help_text="The version asked: ``search v3``.")
    variant = serializers.CharField()
    ply = serializers.IntegerField(help_text="How many actions the history holds.")
    status = serializers.ChoiceField(choices=Analysis.Status.choices)
    status_text = serializers.CharField()
    done = serializers.BooleanField(help_text="Whether it will change no more.")
    action = serializers.CharField(help_text="The bot's action (answered), else empty.")
    info = serializers.JSONField(
        allow_null=True, help_text="The info the bot sent with its action, if any."
    )
    info_text = serializers.CharField(help_text="The info as a person reads it.")
    think_ms = serializers.FloatField(allow_null=True)
    termination = serializers.CharField(
        help_text="How the bot failed (failed): time, crash, illegal-move, protocol-error..."
    )
    reason = serializers.CharField(
        help_text="Why it gave no action, in public words (never the bot's standard error)."
    )


class AnswersSerializer(serializers.Serializer[dict[str, Any]]):
    answers = AnswerSerializer(many=True)


class AnalysisBotSerializer(serializers.Serializer[dict[str, Any]]):
    name = serializers.CharField()
    version = serializers.CharField(help_text="Its active version, which answers: ``search v3``.")
    builtin = serializers.BooleanField()


class AnalysisBotsSerializer(serializers.Serializer[dict[str, Any]]):
    bots = AnalysisBotSerializer(many=True)
    max_bots = serializers.IntegerField(help_text="How many bots one request may ask.")


class AskData(TypedDict):
    variant: str
    history: list[str]
    bots: list[str]


class AskSerializer(InputSerializer[AskData]):
    variant = serializers.ChoiceField(choices=Variant.choices)
    history = serializers.ListField(
        child=StrictCharField(max_length=40),
        allow_empty=True,
        max_length=settings.MATCH_MAX_ACTIONS,
        help_text="The actions that reach the position, in the official notation.",
    )
    bots = serializers.ListField(
        child=StrictCharField(max_length=NAME_MAX_LENGTH),
        allow_empty=False,
        help_text="The names of the bots to ask (see /api/analysis/bots/).",
    )


_ID = re.compile(r"[0-9]{1,11}")


def _ids(text: str) -> list[int]:
    ids = [part.strip() for part in text.split(",") if part.strip()]
    if not ids or len(ids) > 100 or not all(_ID.fullmatch(i) for i in ids):
        raise ValidationError({"ids": ["give the requests' ids, comma-separated (at most 100)"]})
    return [int(i) for i in ids]


@extend_schema(tags=["analysis"])
class AnalysisView(drf_views.APIView):
    """Ask bots for their action in a position (POST), and read their answers (GET)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("ids", str, required=True, description="Request ids: 12,13")],
        responses={200: AnswersSerializer},
    )
    def get(self, request: Request) -> Response:
        """Your requests ``ids`` with their answers so far (another user's are left out)."""
        found = analysis.answers(request.user, _ids(str(request.query_params.get("ids", ""))))
        return Response({"answers": [analysis.answer_json(a) for a in found]})

    @extend_schema(request=AskSerializer, responses={201: AnswersSerializer})
    def post(self, request: Request) -> Response:
        """Ask each bot named for its action in the position the history reaches; each answers
        within a few seconds (poll GET with the ids returned)."""
        v = AskSerializer(data=request.data).checked()
        made = analysis.ask(request.user, v["variant"], v["history"], v["bots"])
        body = {"answers": [analysis.answer_json(a) for a in made]}
        return Response(body, status=status.HTTP_201_CREATED)


@extend_schema(tags=["analysis"])
class AnalysisBotsView(drf_views.APIView):
    """The bots that answer on the analysis board."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("variant", str, description="Only those that play it.")],
        responses={200: AnalysisBotsSerializer},
    )
    def get(self, request: Request) -> Response:
        """The built-in search bot and every bot whose owner opted in, each through its active
        version (those that play ``variant`` when given)."""
        variant = str(request.query_params.get("variant", ""))
        if variant and variant not in Variant.values:
            raise ValidationError({"variant": [f"there is no variant {variant!r}"]})
        bots = [
            {
                "name": v.bot.name,
                "version": v.label,
                "builtin": v.bot.name == settings.ANALYSIS_BUILTIN_BOT and v.bot.trusted,
            }
            for v in analysis.available(variant or None)
        ]
        return Response({"bots": bots, "max_bots": settings.ANALYSIS_MAX_BOTS})
