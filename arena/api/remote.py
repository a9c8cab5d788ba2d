"""The API a remote bot's client speaks (``/api/remote/<bot>/...``, docs/protocol.md, "Remote
bots"): ask for work (a long poll), answer a line, forward the program's standard error.

Only the bot's owner (or staff) may use them, with its API token. They are not throttled as
the rest of the API: a client asks once per line its bot answers, and a long poll bounds how
often it asks for work.
"""

from __future__ import annotations

from typing import TypedDict

from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import permissions, serializers
from rest_framework import views as drf_views
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.request import Request
from rest_framework.response import Response

from arena.api.serializers import DetailSerializer, InputSerializer, StrictCharField
from arena.bots import services as bots
from arena.bots.models import Bot
from arena.games import remote


def _remote_bot(request: Request, name: str) -> Bot:
    """The remote bot ``name``, if the requester may play it (its owner or staff)."""
    bot = get_object_or_404(Bot, name=name)
    if not bots.plays_for(request.user, bot):
        raise PermissionDenied(f"only the owner of {bot.name} plays its games")
    if not bot.remote:
        raise NotFound(f"{bot.name} is not a remote bot")
    return bot


class EventsQuery(TypedDict):
    since: int
    wait: int


class EventsQuerySerializer(InputSerializer[EventsQuery]):
    since = serializers.IntegerField(
        min_value=0,
        default=0,
        help_text="The cursor of the previous answer: return at once only for a newer line.",
    )
    wait = serializers.IntegerField(
        min_value=0,
        default=0,
        help_text="Seconds to wait for a new line (a long poll), at most ARENA_REMOTE_WAIT_SECONDS "
        "(25 by default); 0 answers at once.",
    )


class AnswerInput(TypedDict):
    seq: int
    line: str


class AnswerSerializer(InputSerializer[AnswerInput]):
    seq = serializers.IntegerField(min_value=1, help_text="The seq of the line answered.")
    line = StrictCharField(
        allow_blank=True,
        trim_whitespace=False,
        max_length=remote.LINE_LIMIT,
        help_text="The bot's line, as its program wrote it (without the line break).",
    )


class LogInput(TypedDict):
    stderr: str


class LogSerializer(InputSerializer[LogInput]):
    stderr = StrictCharField(
        allow_blank=True,
        trim_whitespace=False,
        max_length=remote.LOG_REQUEST_LIMIT,
        help_text="What the program wrote to its standard error since the last request.",
    )


def _game_id(game: str) -> int:
    """The game's id in the path (any text reaches the view, so that a bad one is this API's
    404, not the site's page)."""
    if not game.isascii() or not game.isdigit() or len(game) > 18:
        raise NotFound(f"no game {game[:40]!r}")
    return int(game)


class RemoteView(drf_views.APIView):
    permission_classes = [permissions.IsAuthenticated]
    throttle_classes: list[type] = []


@extend_schema(tags=["remote bots"])
class EventsView(RemoteView):
    @extend_schema(parameters=[EventsQuerySerializer], responses={200: OpenApiTypes.OBJECT})
    def get(self, request: Request, name: str) -> Response:
        """The bot's open games, each with its line waiting for an answer (``seq`` and
        ``line``, null when none waits), and the cursor to pass as ``since`` next time."""
        bot = _remote_bot(request, name)
        query = EventsQuerySerializer(data=request.query_params).checked()
        wait = min(query["wait"], settings.REMOTE_WAIT_S)
        games, cursor = remote.pending(bot, since=query["since"], wait_s=wait)
        return Response({"cursor": cursor, "games": [g.to_json() for g in games]})


@extend_schema(tags=["remote bots"])
class AnswerView(RemoteView):
    @extend_schema(
        request=AnswerSerializer,
        responses={204: None, 409: DetailSerializer},
        parameters=[OpenApiParameter("game", int, OpenApiParameter.PATH)],
    )
    def post(self, request: Request, name: str, game: str) -> Response:
        """Answer the line ``seq`` of the game: 409 when it no longer waits (answered, or the
        game is over), 404 for a game the bot does not play."""
        bot = _remote_bot(request, name)
        data = AnswerSerializer(data=request.data).checked()
        remote.answer(bot, _game_id(game), data["seq"], data["line"])
        return Response(status=204)


@extend_schema(tags=["remote bots"])
class LogView(RemoteView):
    @extend_schema(
        request=LogSerializer,
        responses={204: None},
        parameters=[OpenApiParameter("game", int, OpenApiParameter.PATH)],
    )
    def post(self, request: Request, name: str, game: str) -> Response:
        """Forward what the program wrote to its standard error: its owner reads it with the
        game's actions, as a sandboxed bot's."""
        bot = _remote_bot(request, name)
        data = LogSerializer(data=request.data).checked()
        remote.add_log(bot, _game_id(game), data["stderr"])
        return Response(status=204)
