"""REST API views. Thin like the pages: check the input, call a service, serialize."""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.models import User
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.db.models import Prefetch, QuerySet
from django.http import (
    FileResponse,
    HttpRequest,
    HttpResponse,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404
from django.utils.decorators import method_decorator
from django.views.decorators.cache import never_cache
from django.views.decorators.csrf import csrf_exempt
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, mixins, permissions, serializers, status, viewsets
from rest_framework import views as drf_views
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.decorators import action
from rest_framework.exceptions import (
    APIException,
    NotAuthenticated,
    NotFound,
    ParseError,
    PermissionDenied,
    ValidationError,
)
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings

from arena.api import serializers as s
from arena.api.parsers import FormParser, JSONParser
from arena.bots import services as bots
from arena.bots.models import Bot, BotVersion, Variant, playing
from arena.core.errors import Refused
from arena.games import downloads, filters, reliability
from arena.games.models import Match, MatchRecord
from arena.notifications import services as notifications
from arena.notifications.models import Notification
from arena.ratings import services as ratings
from arena.ratings.models import Ladder, Rating
from arena.web import logins


class IsOwnerOrReadOnly(permissions.BasePermission):
    """Anyone reads; only the bot's owner changes or deletes it."""

    def has_object_permission(
        self, request: Request, view: drf_views.APIView, obj: Bot | BotVersion
    ) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        bot = obj if isinstance(obj, Bot) else obj.bot
        return bots.can_manage(request.user, bot)


def _versions() -> QuerySet[BotVersion]:
    return BotVersion.objects.select_related("bot").prefetch_related("ratings")


@extend_schema(tags=["bots"])
class BotViewSet(
    mixins.ListModelMixin,
    mixins.RetrieveModelMixin,
    mixins.UpdateModelMixin,
    mixins.DestroyModelMixin,
    viewsets.GenericViewSet,
):
    """Bots and their versions. Creating one uploads its first version."""

    lookup_field = "name"
    lookup_value_regex = r"[a-z0-9][a-z0-9_-]*"
    permission_classes = [permissions.IsAuthenticatedOrReadOnly, IsOwnerOrReadOnly]
    parser_classes = [MultiPartParser, FormParser, JSONParser]
    serializer_class = s.BotSerializer
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    @extend_schema(parameters=[s.BotFilterSerializer])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Bot]:
        qs = Bot.objects.select_related("owner").prefetch_related(
            Prefetch("versions", queryset=_versions().order_by("-number"))
        )
        if self.action == "list":
            qs = qs.exclude(kind=Bot.Kind.PERSON)  # people's seats are not bots to list
            owner = s.BotFilterSerializer.parse(self.request).get("owner")
            if owner:
                qs = qs.filter(owner__username=owner)
        return qs.order_by("name")

    def get_serializer_class(self) -> type[serializers.BaseSerializer[Bot]]:
        if self.action == "partial_update":
            return s.BotUpdateSerializer
        return s.BotSerializer

    @extend_schema(
        request={
            "multipart/form-data": s.BotCreateSerializer,
            "application/json": s.RemoteBotCreateSerializer,
        },
        responses={201: s.VersionSerializer},
    )
    def create(self, request: Request) -> Response:
        """Upload a new bot (its first version; the check runs in a worker), or register a
        remote bot (``"remote": true``, no file: its program runs on its owner's machine and
        plays over ``/api/remote/``; its first version is active at once)."""
        if isinstance(request.data, dict) and "remote" in request.data:
            given = s.RemoteBotCreateSerializer(data=request.data).checked()
            version = bots.create_remote_bot(
                request.user,
                given["name"],
                variants=given["variants"],
                description=given["description"],
            )
            body = s.VersionSerializer(version, context=self.get_serializer_context()).data
            return Response(body, status=status.HTTP_201_CREATED)
        data = s.BotCreateSerializer(data=request.data).checked()
        f = data["file"]
        version = bots.create_bot(
            request.user, data["name"], f, filename=f.name or "", description=data["description"]
        )
        body = s.VersionSerializer(version, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(request=s.BotUpdateSerializer, responses=s.BotSerializer)
    def partial_update(self, request: Request, name: str) -> Response:
        """Change the description, whether the bot accepts rated challenges and other
        people's rated tournaments, whether it enters scheduled tournaments, answers on the
        analysis board, lets people play it and plays on the open ladder (owner only)."""
        bot = self.get_object()
        data = s.BotUpdateSerializer(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        bots.update_bot(request.user, bot, **data.validated_data)
        return Response(s.BotSerializer(bot, context=self.get_serializer_context()).data)

    def update(self, request: Request, *args: object, **kwargs: str) -> Response:
        return self.partial_update(request, kwargs["name"])

    def destroy(self, request: Request, name: str) -> Response:
        """Delete the bot (owner only); one that has played is withdrawn instead."""
        bot = self.get_object()
        bots.delete_bot(request.user, bot)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(methods=["GET"], responses=s.VersionSerializer(many=True), request=None)
    @extend_schema(
        methods=["POST"],
        request={
            "multipart/form-data": s.VersionCreateSerializer,
            "application/json": s.RemoteVersionCreateSerializer,
        },
        responses={201: s.VersionSerializer},
    )
    @action(detail=True, methods=["get", "post"], url_path="versions", pagination_class=None)
    def versions(self, request: Request, name: str) -> Response:
        """The bot's versions; POST uploads a new version (owner only), or for a remote bot
        starts a new one (no file; active at once, the previous one retired)."""
        bot = self.get_object()
        ctx = self.get_serializer_context()
        if request.method == "GET":
            qs = _versions().filter(bot=bot).order_by("-number")
            return Response(s.VersionSerializer(qs, many=True, context=ctx).data)
        if bot.remote:
            given = s.RemoteVersionCreateSerializer(data=request.data).checked()
            version = bots.add_remote_version(request.user, bot, variants=given["variants"])
            return Response(s.VersionSerializer(version, context=ctx).data, status=201)
        f = s.VersionCreateSerializer(data=request.data).checked()["file"]
        version = bots.add_version(request.user, bot, f, filename=f.name or "")
        return Response(s.VersionSerializer(version, context=ctx).data, status=201)


@extend_schema(tags=["bots"])
class VersionViewSet(viewsets.ReadOnlyModelViewSet):
    """Bot versions: status, ratings, and (to the owner) the check report and the source."""

    serializer_class = s.VersionSerializer

    def get_serializer_class(self) -> type[serializers.BaseSerializer[BotVersion]]:
        return s.VersionDetailSerializer if self.action == "retrieve" else s.VersionSerializer

    @extend_schema(parameters=[s.VersionFilterSerializer])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[BotVersion]:
        qs = _versions().order_by("-pk")
        if self.action == "list":
            p = s.VersionFilterSerializer.parse(self.request)
            if p.get("status"):
                qs = qs.filter(status=p["status"])
            if p.get("variant"):
                qs = qs.filter(playing(p["variant"]))
        return qs

    @extend_schema(responses={(200, "application/octet-stream"): OpenApiTypes.BINARY})
    @action(detail=True, methods=["get"], url_path="source", url_name="source")
    def source(self, request: Request, pk: str) -> FileResponse:
        """Download the uploaded file (owner only)."""
        version = self.get_object()
        if not request.user.is_authenticated:
            raise NotAuthenticated("log in (a token or the session) to download a source")
        if not bots.can_manage(request.user, version.bot):
            raise PermissionDenied("only the bot's owner may download its source")
        return FileResponse(
            bots.source_file(request.user, version),
            as_attachment=True,
            filename=bots.source_filename(version),
            content_type="application/octet-stream",  # as documented, whatever the file's kind
        )

    @extend_schema(
        request=None,
        responses={200: s.VersionSerializer, 409: s.DetailSerializer},
    )
    @action(detail=True, methods=["post"], permission_classes=[permissions.IsAuthenticated])
    def activate(self, request: Request, pk: str) -> Response:
        """Make this retired version its bot's active one again (owner only); the version
        active until now is retired. 409 when the version cannot play: not checked, rejected,
        or its bot withdrawn."""
        version = bots.activate(request.user, self.get_object())
        return Response(s.VersionSerializer(version, context=self.get_serializer_context()).data)

    @extend_schema(
        request=None,
        responses={200: s.VersionDetailSerializer, 409: s.DetailSerializer},
    )
    @action(detail=True, methods=["post"], permission_classes=[permissions.IsAuthenticated])
    def resume(self, request: Request, pk: str) -> Response:
        """Put the version back on the ladder where it is paused for failing often (owner
        only): its verdict starts again from its next games. 409 when it is not paused."""
        version = self.get_object()
        reliability.resume(request.user, version)
        body = s.VersionDetailSerializer(version, context=self.get_serializer_context()).data
        return Response(body)

    @extend_schema(
        responses=s.RatingPointSerializer(many=True), parameters=[s.HistoryFilterSerializer]
    )
    @action(detail=True, methods=["get"], url_path="history", pagination_class=None)
    def history(self, request: Request, pk: str) -> Response:
        """The version's rating history on the ladder, or the open ladder (one point per fit
        that changed its games)."""
        version = self.get_object()
        query = s.HistoryFilterSerializer.parse(request)
        qs = version.rating_history.filter(ladder=query["ladder"]).order_by("at")
        variant = query.get("variant")
        if variant:
            qs = qs.filter(variant=variant)
        return Response(s.RatingPointSerializer(qs, many=True).data)


@extend_schema(tags=["matches"])
class MatchViewSet(viewsets.ReadOnlyModelViewSet):
    """Matches: ladder, tournament, qualification, test and challenge games, with their
    downloads. Newest first by ``id``, the order the games were made in."""

    serializer_class = s.MatchSerializer

    @extend_schema(parameters=[s.MatchFilterSerializer])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Match]:
        qs = Match.objects.select_related("white__bot", "black__bot").order_by("-id")
        if self.action != "list":
            return qs
        p = dict(s.MatchFilterSerializer.parse(self.request))
        p["version_id"] = p.pop("version", None)
        return filters.matches(filters.MatchFilter.of(p))

    def _data(self) -> MatchRecord:
        return get_object_or_404(
            MatchRecord.objects.select_related("match__white__bot", "match__black__bot"),
            match=self.get_object(),
        )

    @extend_schema(
        parameters=[OpenApiParameter("notation", str, enum=["long", "short"], default="long")],
        responses={(200, "text/plain"): OpenApiTypes.STR},
    )
    @action(detail=True, methods=["get"], url_path="record")
    def record(self, request: Request, pk: str) -> HttpResponse:
        """The game record file in the official notation (long or short form)."""
        notation = request.query_params.get("notation", "long")
        if notation not in ("long", "short"):
            raise ValidationError({"notation": ["long or short"]})
        return downloads.record(self._data(), long=notation == "long").response()

    @extend_schema(responses={(200, "application/json"): OpenApiTypes.OBJECT})
    @action(detail=True, methods=["get"], url_path="transcript")
    def transcript(self, request: Request, pk: str) -> HttpResponse:
        """The JSON transcript of the game: the stderr, ``info`` and failure details of a
        colour only to that bot's owner (and staff); no server path to anyone."""
        return downloads.transcript(self._data(), request.user).response()

    @extend_schema(responses={200: s.LadderMonthSerializer(many=True)})
    @action(detail=False, methods=["get"], url_path="archives", pagination_class=None)
    def archives(self, request: Request) -> Response:
        """The ladder's archives: the months with finished ladder games of each variant,
        newest first, with their numbers of games and their files."""
        months = downloads.ladder_months()
        return Response(
            s.LadderMonthSerializer(months, many=True, context={"request": request}).data
        )

    @extend_schema(
        parameters=[
            OpenApiParameter("variant", str, OpenApiParameter.PATH, enum=Variant.values),
            OpenApiParameter("month", str, OpenApiParameter.PATH, description="YYYY-MM"),
        ],
        responses={(200, "text/plain"): OpenApiTypes.STR},
    )
    @action(
        detail=False,
        methods=["get"],
        url_path=r"archives/(?P<variant>[^/.]+)/(?P<month>[^/.]+)",
    )
    def archive(self, request: Request, variant: str, month: str) -> StreamingHttpResponse:
        """A month's finished ladder games of a variant in one file: each game's record (its
        headers, then its moves), a blank line between two, by match number.
        ``python -m engine replay`` checks every game."""
        found = downloads.ladder_month(variant, month)
        if found is None:
            raise NotFound(f"no ladder games of {variant!r} in {month!r}")
        return found.download().response()


@extend_schema(tags=["ratings"])
class RatingViewSet(mixins.ListModelMixin, viewsets.GenericViewSet):
    """The leaderboard of a variant on the ladder (``ladder=sandbox``) or the open ladder
    (``ladder=open``): Elo ratings with 95% intervals, best first."""

    serializer_class = s.LeaderboardRowSerializer

    @extend_schema(parameters=[s.RatingFilterSerializer])
    def list(self, request: Request, *args: object, **kwargs: object) -> Response:
        return super().list(request, *args, **kwargs)

    def get_queryset(self) -> QuerySet[Rating]:
        p = s.RatingFilterSerializer.parse(self.request)
        return ratings.leaderboard(
            p["variant"], ladder=Ladder(p["ladder"]), include_retired=p["all"]
        )


@extend_schema(tags=["notifications"])
class NotificationSettingsView(drf_views.APIView):
    """Your notification settings: which events, by email and by webhook (docs/notifications.md)."""

    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [JSONParser]  # JSON only, as docs/notifications.md says

    def _body(self, user: User) -> dict[str, object]:
        prefs = notifications.settings_of(user)
        return {
            "email": prefs.email,
            "email_address": user.email,
            "email_verified": notifications.is_verified(user),
            "webhook": prefs.webhook,
            "webhook_url": prefs.webhook_url,
            "events": list(prefs.events),
        }

    @extend_schema(responses=s.NotificationSettingsSerializer)
    def get(self, request: Request) -> Response:
        assert isinstance(request.user, User)
        return Response(self._body(request.user))

    def _save(self, request: Request, *, partial: bool) -> Response:
        user = request.user
        assert isinstance(user, User)
        data = s.NotificationSettingsSerializer(data=request.data, partial=partial)
        data.is_valid(raise_exception=True)
        v = {**self._body(user), **data.validated_data}
        choices = notifications.Choices(
            email=bool(v["email"]),
            webhook=bool(v["webhook"]),
            webhook_url=str(v["webhook_url"]),
            events=[str(e) for e in v["events"]],
        )
        notifications.update_settings(user, choices, email_address=str(v["email_address"]))
        return Response(self._body(user))

    @extend_schema(
        request=s.NotificationSettingsSerializer, responses=s.NotificationSettingsSerializer
    )
    def put(self, request: Request) -> Response:
        """Replace your settings (every field)."""
        return self._save(request, partial=False)

    @extend_schema(
        request=s.NotificationSettingsSerializer, responses=s.NotificationSettingsSerializer
    )
    def patch(self, request: Request) -> Response:
        """Change some of your settings."""
        return self._save(request, partial=True)


@extend_schema(tags=["notifications"])
class NotificationTestView(drf_views.APIView):
    """Send yourself a test notification on every channel that is on."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None, responses={202: s.NotificationTestSerializer})
    def post(self, request: Request) -> Response:
        assert isinstance(request.user, User)
        n = notifications.send_test(request.user)
        channels = [d.channel for d in n.deliveries.all()] if n is not None else []
        return Response({"sent": n is not None, "channels": channels}, status=202)


@extend_schema(tags=["notifications"])
class NotificationVerifyView(drf_views.APIView):
    """Mail the link that verifies your email address to it again (docs/notifications.md)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=None, responses={202: s.NotificationVerifySerializer})
    def post(self, request: Request) -> Response:
        assert isinstance(request.user, User)
        n = notifications.send_verification(request.user)
        return Response({"sent": n is not None}, status=202)


@extend_schema(tags=["notifications"])
class NotificationListView(generics.ListAPIView):
    """Your notifications, newest first, read and unread: every event, whatever your email
    and webhook settings (docs/notifications.md, "The inbox")."""

    permission_classes = [permissions.IsAuthenticated]
    serializer_class = s.NotificationSerializer

    def get_queryset(self) -> QuerySet[Notification]:
        user = self.request.user
        assert isinstance(user, User)  # IsAuthenticated
        return notifications.inbox(user)


@extend_schema(tags=["notifications"])
class NotificationReadView(drf_views.APIView):
    """Mark your notifications read: those whose ids are given, or all of them."""

    permission_classes = [permissions.IsAuthenticated]
    parser_classes = [JSONParser]

    @extend_schema(
        request=s.NotificationReadSerializer, responses={200: s.NotificationReadResultSerializer}
    )
    def post(self, request: Request) -> Response:
        user = request.user
        assert isinstance(user, User)  # IsAuthenticated
        v = s.NotificationReadSerializer(data=request.data).checked()
        marked = notifications.mark_read(user, v.get("ids"))
        return Response({"marked": marked, "unread": notifications.unread_count(user)})


@method_decorator(never_cache, name="dispatch")  # as OAuth 2's token responses (RFC 6749, 5.1)
class TokenView(ObtainAuthToken):
    """A token for a username and password (DRF's view), its JSON read by the API's parser;
    no cache keeps the answer. Failed logins count against the login limits
    (:mod:`arena.web.logins`): over them, a 429 that says when to try again."""

    parser_classes = [FormParser, MultiPartParser, JSONParser]

    def post(self, request: Request, *args: object, **kwargs: object) -> Response:
        try:
            return super().post(request, *args, **kwargs)
        except ValidationError:
            # django-axes marks the request it refused (or whose failure reached a limit).
            if getattr(request, "axes_locked_out", False):
                raise logins.locked(request) from None
            raise


@csrf_exempt
def not_found(request: HttpRequest, *args: object, **kwargs: object) -> JsonResponse:
    """Any other URL under /api/: a 404 in JSON like the API's own, not the site's HTML page
    (a name or id that does not fit its URL pattern ends here)."""
    return JsonResponse({"detail": "Not found."}, status=404)


def exception_handler(exc: Exception, context: dict[str, object]) -> Response | None:
    """DRF's handler, and a 400 that says why for the limits Django enforces while reading a
    request (instead of its bare HTML "Bad Request" page). Every error body has a ``detail``:
    a refusal by field (``{"name": [...]}``) gets one that sums its messages up. A service's
    refusal (:class:`~arena.core.errors.Refused`) is answered with its status, its words and
    its headers (a limit on actions: 429 and Retry-After), the API's one place for them."""
    refused = exc if isinstance(exc, Refused) else None
    if isinstance(exc, RequestDataTooBig):
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        exc = ParseError(f"the request is over {limit} bytes, not counting uploaded files")
    elif isinstance(exc, TooManyFieldsSent):
        exc = ParseError(f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FIELDS} fields")
    elif isinstance(exc, TooManyFilesSent):
        exc = ParseError(f"more than {settings.DATA_UPLOAD_MAX_NUMBER_FILES} files")
    elif refused is not None:
        exc = _api_error(refused)
    response = drf_views.exception_handler(exc, context)
    if response is not None:
        if refused is not None:
            for name, value in refused.headers().items():
                response[name] = value
        if isinstance(response.data, list):
            response.data = {"detail": _summary(response.data)}
        elif isinstance(response.data, dict) and "detail" not in response.data:
            response.data = {**response.data, "detail": _summary(response.data)}
    return response


def _api_error(refused: Refused) -> APIException:
    """A refusal as DRF's error of its status: a 400 under its field's name
    (``non_field_errors`` for the request as a whole), as a serializer refuses input; any
    other status with its message as ``detail``."""
    if refused.status == status.HTTP_400_BAD_REQUEST:
        key = refused.field or api_settings.NON_FIELD_ERRORS_KEY
        return ValidationError({key: [str(refused)]})
    error = APIException(str(refused))
    error.status_code = refused.status
    return error


def _summary(errors: object, field: str = "") -> str:
    """A refusal's messages in one line: ``name: too long; file: not a zip archive``."""
    if isinstance(errors, dict):
        where = f"{field}." if field else ""
        return "; ".join(_summary(v, f"{where}{k}") for k, v in errors.items())
    if isinstance(errors, list):
        return "; ".join(_summary(v, field) for v in errors)
    if field and field != "non_field_errors":
        return f"{field}: {errors}"
    return str(errors)
