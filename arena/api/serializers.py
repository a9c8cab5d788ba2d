"""Serializers of the REST API: what each resource looks like in JSON."""

from __future__ import annotations

from typing import Any, Generic, TypedDict, TypeVar, cast

from django.core.files.uploadedfile import UploadedFile
from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.request import Request

from arena.bots import services as bots
from arena.bots.models import (
    DESCRIPTION_MAX_LENGTH,
    NAME_MAX_LENGTH,
    NAME_RULE,
    Bot,
    BotVersion,
    Variant,
)
from arena.games import privacy
from arena.games.downloads import LadderMonth
from arena.games.filters import TERMINATIONS
from arena.games.models import Match
from arena.games.reliability import VariantFailures
from arena.notifications.models import CHOOSABLE, Notification
from arena.ratings.models import Ladder, Rating, RatingPoint
from arena.referee.jsontypes import JSONObject
from arena.web import pages


def _absolute(serializer: serializers.BaseSerializer, path: str) -> str:
    """``path`` as a full URL when the serializer has the request in its context."""
    request: Request | None = serializer.context.get("request")
    return request.build_absolute_uri(path) if request is not None else path


Data = TypeVar("Data")


# A serializer of input; Data is the shape of what it validates. (Comments, not docstrings:
# the API's schema shows a serializer's docstring as the description of its component.)
class InputSerializer(serializers.Serializer, Generic[Data]):
    def checked(self) -> Data:
        """The validated data (a 400 says what is wrong)."""
        self.is_valid(raise_exception=True)
        # The subclass's fields make the validated data what Data describes.
        return cast(Data, self.validated_data)


PROVISIONAL_HELP = "Fitted from fewer games than the arena trusts (ARENA_RATING_PROVISIONAL_GAMES)."


class StrictCharField(serializers.CharField):
    """Text: a JSON string (not a number or a boolean, which DRF's CharField turns into text)."""

    def to_internal_value(self, data: object) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return str(super().to_internal_value(data))


class StrictBooleanField(serializers.BooleanField):
    """true or false: a JSON boolean, or the words in a query string or a form (not 0, 1, "yes"
    or "on", which DRF's BooleanField also takes)."""

    def to_internal_value(self, data: object) -> bool:
        if isinstance(data, bool):
            return data
        if isinstance(data, str) and data in ("true", "false"):
            return data == "true"
        self.fail("invalid", input=data)
        raise AssertionError  # fail() raises


#: What the ``ladder`` of a rating, or of a filter, says.
LADDER_HELP = "sandbox: the ladder; open: the open ladder, where remote bots play."


class RatingBriefSerializer(serializers.ModelSerializer):
    provisional = serializers.BooleanField(read_only=True, help_text=PROVISIONAL_HELP)
    ladder = serializers.CharField(read_only=True, help_text=LADDER_HELP)

    class Meta:
        model = Rating
        fields = ("ladder", "variant", "elo", "error", "games", "points", "rank", "provisional")


class CheckReport(TypedDict):
    lines: list[str]
    transcript: JSONObject | None
    stderr_tail: str


class VersionSerializer(serializers.ModelSerializer):
    bot: serializers.SlugRelatedField[Bot] = serializers.SlugRelatedField(
        slug_field="name", read_only=True
    )
    # DRF's metaclass takes declared fields out of the class, so this never hides Field.label.
    label = serializers.CharField(read_only=True)  # type: ignore[assignment]  # a field, see above
    variants = serializers.ListField(
        child=serializers.CharField(),
        source="variant_names",
        read_only=True,
        help_text="The variants the version plays (its bot.toml's, every variant by default); "
        "the ladder and tournaments pair it only in these.",
    )
    ratings = RatingBriefSerializer(many=True, read_only=True)
    check_report = serializers.SerializerMethodField(
        help_text="The check's lines, failing game transcript and stderr tail (owner only)."
    )
    source_url = serializers.SerializerMethodField(
        help_text="The uploaded file (owner only; null for a remote version, which has none)."
    )
    filename = serializers.SerializerMethodField(
        help_text="The uploaded file's name (owner only: it may say more than the owner meant)."
    )
    reason = serializers.SerializerMethodField(
        help_text="Why the version was rejected: what happened to everyone; the bot's own "
        "words (its standard error) to its owner only."
    )

    class Meta:
        model = BotVersion
        fields: tuple[str, ...] = (
            "id",
            "bot",
            "number",
            "label",
            "status",
            "kind",
            "filename",
            "size",
            "sha256",
            "uploaded_at",
            "checked_at",
            "reason",
            "declared_name",
            "declared_version",
            "variants",
            "ratings",
            "check_report",
            "source_url",
        )
        read_only_fields = fields

    def _owner(self, obj: BotVersion) -> bool:
        request: Request | None = self.context.get("request")
        return request is not None and bots.can_manage(request.user, obj.bot)

    @extend_schema_field(
        {
            "type": "object",
            "nullable": True,
            "properties": {
                "lines": {"type": "array", "items": {"type": "string"}},
                "transcript": {"type": "object", "nullable": True},
                "stderr_tail": {"type": "string"},
            },
        }
    )
    def get_check_report(self, obj: BotVersion) -> CheckReport | None:
        if not self._owner(obj):
            return None
        transcript = obj.transcript
        if transcript is not None:
            shown = privacy.check_transcript(transcript)
            transcript = shown if isinstance(shown, dict) else None
        logs = privacy.check_logs(obj)
        return {"lines": logs.lines, "transcript": transcript, "stderr_tail": logs.stderr_tail}

    def get_reason(self, obj: BotVersion) -> str:
        request: Request | None = self.context.get("request")
        return privacy.version_reason_for(request.user if request else None, obj)

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_filename(self, obj: BotVersion) -> str | None:
        return obj.filename if self._owner(obj) else None

    @extend_schema_field(serializers.URLField(allow_null=True))
    def get_source_url(self, obj: BotVersion) -> str | None:
        if obj.kind == BotVersion.Kind.REMOTE or not self._owner(obj):
            return None
        return _absolute(self, reverse("api-version-source", args=[obj.pk]))


class BotSerializer(serializers.ModelSerializer):
    owner = serializers.CharField(source="owner.username", read_only=True)
    versions = VersionSerializer(many=True, read_only=True)
    url = serializers.HyperlinkedIdentityField(view_name="api-bot-detail", lookup_field="name")

    class Meta:
        model = Bot
        fields = (
            "url",
            "name",
            "owner",
            "description",
            "status",
            "trusted",
            "remote",
            *Bot.CHOICES,
            "created_at",
            "versions",
        )
        read_only_fields = (
            "url",
            "name",
            "owner",
            "status",
            "trusted",
            "remote",
            "created_at",
            "versions",
        )


class BotCreate(TypedDict):
    name: str
    description: str
    file: UploadedFile


class BotCreateSerializer(InputSerializer[BotCreate]):
    name = serializers.CharField(
        max_length=NAME_MAX_LENGTH,
        help_text=NAME_RULE,
        # Checked in full by bots.validate_name, whose refusal says what a name may be.
        error_messages={"max_length": f"a name is {NAME_RULE}"},
    )
    description = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        max_length=DESCRIPTION_MAX_LENGTH,
    )
    file = serializers.FileField(
        help_text="A .zip or .tar.gz of a folder with bot.toml, or one executable file."
    )

    def validate_name(self, value: str) -> str:
        return _new_name(value)


def _new_name(value: str) -> str:
    """A new bot's name, checked: its form, and that no bot has it."""
    try:
        bots.validate_name(value)
    except bots.UploadError as e:
        raise serializers.ValidationError(str(e)) from None
    if Bot.objects.filter(name=value).exists():
        raise serializers.ValidationError(f"a bot called {value!r} exists already")
    return value


class RemoteBotCreate(TypedDict):
    name: str
    description: str
    remote: bool
    variants: list[str]


class RemoteBotCreateSerializer(InputSerializer[RemoteBotCreate]):
    """A remote bot: one whose program runs on its owner's machine (no file)."""

    name = serializers.CharField(
        max_length=NAME_MAX_LENGTH,
        help_text=NAME_RULE,
        error_messages={"max_length": f"a name is {NAME_RULE}"},
    )
    description = serializers.CharField(
        required=False, allow_blank=True, default="", max_length=DESCRIPTION_MAX_LENGTH
    )
    remote = StrictBooleanField(help_text="true: the bot runs on its owner's machine.")
    variants = serializers.ListField(
        child=StrictCharField(),
        required=False,
        default=list,
        max_length=20,
        help_text="The variants it plays (every variant when empty).",
    )

    def validate_name(self, value: str) -> str:
        return _new_name(value)

    def validate_remote(self, value: bool) -> bool:
        if not value:
            raise serializers.ValidationError("a bot without a file is a remote one: true")
        return value


class RemoteVersionCreate(TypedDict):
    variants: list[str] | None


class RemoteVersionCreateSerializer(InputSerializer[RemoteVersionCreate]):
    """A remote bot's new version: no file; its variants, the previous version's by default."""

    variants = serializers.ListField(
        child=StrictCharField(),
        required=False,
        default=None,
        allow_null=True,
        max_length=20,
        help_text="The variants it plays (the previous version's when not given).",
    )


class VersionCreate(TypedDict):
    file: UploadedFile


class VersionCreateSerializer(InputSerializer[VersionCreate]):
    file = serializers.FileField(
        help_text="A .zip or .tar.gz of a folder with bot.toml, or one executable file."
    )


class BotUpdateSerializer(serializers.ModelSerializer):
    description = StrictCharField(
        required=False, allow_blank=True, max_length=DESCRIPTION_MAX_LENGTH
    )
    rated_challenges = StrictBooleanField(
        required=False, help_text="Accept rated challenges (when the challenger asks)."
    )
    rated_tournaments = StrictBooleanField(
        required=False,
        help_text="Let other people include the bot in rated tournaments (its owner's own may "
        "always be rated; built-in bots always accept).",
    )
    scheduled_events = StrictBooleanField(
        required=False,
        help_text="Enter the bot in scheduled (recurring) tournaments of the variants it plays.",
    )
    analysis = StrictBooleanField(
        required=False,
        help_text="Let others ask the bot for moves on the analysis board (they see the info it "
        "sends with its action, never its standard error).",
    )
    people = StrictBooleanField(
        required=False,
        help_text="Let logged-in visitors play the bot in their browser (unrated games).",
    )
    open_ladder = StrictBooleanField(
        required=False,
        help_text="Play on the open ladder too, against remote bots (rated there only); a "
        "sandboxed bot's choice: a remote bot always plays there.",
    )

    class Meta:
        model = Bot
        fields = ("description", *Bot.CHOICES)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        # A change that names no field is a mistake (a null body, a form that lost its fields).
        if not attrs:
            raise serializers.ValidationError(
                "nothing to change: give description, rated_challenges, rated_tournaments, "
                "scheduled_events, analysis, people or open_ladder"
            )
        return attrs


class MatchSerializer(serializers.ModelSerializer):
    white = serializers.CharField(source="white.label", read_only=True)
    black = serializers.CharField(source="black.label", read_only=True)
    white_version = serializers.IntegerField(source="white_id", read_only=True)
    black_version = serializers.IntegerField(source="black_id", read_only=True)
    result = serializers.ChoiceField(
        choices=Match.Result.choices,
        allow_blank=True,
        read_only=True,
        help_text="Empty until finished.",
    )
    score = serializers.CharField(read_only=True)
    opening = serializers.ListField(
        child=serializers.CharField(),
        source="opening_actions",
        read_only=True,
        help_text="The ring placements played before the bots took over (empty: the game "
        "started from the empty board). With the seed, all a re-run needs.",
    )
    reason = serializers.SerializerMethodField(
        help_text="What ended the game. The bot's own words (its standard error) only to the "
        "owner of the bot at fault (and staff)."
    )
    downloads = serializers.SerializerMethodField()

    class Meta:
        model = Match
        fields = (
            "id",
            "variant",
            "kind",
            "status",
            "white",
            "black",
            "white_version",
            "black_version",
            "time_control",
            "seed",
            "opening",
            "rated",
            "tournament",
            "round",
            "duel",
            "result",
            "score",
            "termination",
            "reason",
            "fault",
            "plies",
            "duration_s",
            "created_at",
            "started_at",
            "finished_at",
            "downloads",
        )
        read_only_fields = fields

    def get_reason(self, obj: Match) -> str:
        request: Request | None = self.context.get("request")
        return privacy.reason_for(request.user if request else None, obj)

    @extend_schema_field(
        {
            "type": "object",
            "nullable": True,
            "properties": {
                "record": {"type": "string", "format": "uri"},
                "record_short": {"type": "string", "format": "uri"},
                "transcript": {"type": "string", "format": "uri"},
            },
        }
    )
    def get_downloads(self, obj: Match) -> dict[str, str] | None:
        if obj.status not in (Match.Status.FINISHED, Match.Status.ABORTED):
            return None
        return {
            "record": _absolute(self, reverse("match-record", args=[obj.pk])),
            "record_short": _absolute(self, reverse("match-record-short", args=[obj.pk])),
            "transcript": _absolute(self, reverse("match-transcript", args=[obj.pk])),
        }


class LadderMonthSerializer(serializers.Serializer):
    """A month of finished ladder games of one variant: one file to download."""

    variant = serializers.ChoiceField(choices=Variant.choices, read_only=True)
    month = serializers.CharField(read_only=True, help_text="YYYY-MM (UTC, when games finished).")
    games = serializers.IntegerField(read_only=True)
    download = serializers.SerializerMethodField(
        help_text="The file: every game's record, one after another, by match number."
    )

    @extend_schema_field({"type": "string", "format": "uri"})
    def get_download(self, obj: LadderMonth) -> str:
        return _absolute(self, reverse("api-match-archive", args=[obj.variant, obj.month]))


class LeaderboardRowSerializer(serializers.ModelSerializer):
    bot = serializers.CharField(source="version.bot.name")
    version = serializers.IntegerField(source="version.number")
    version_id = serializers.IntegerField()
    owner = serializers.CharField(source="version.bot.owner.username")
    kind = serializers.CharField(
        source="version.bot.kind",
        help_text="upload: runs in the sandbox; remote: runs on its owner's machine.",
    )
    score = serializers.FloatField(source="percent", help_text="Points scored, in percent.")
    provisional = serializers.BooleanField(read_only=True, help_text=PROVISIONAL_HELP)

    class Meta:
        model = Rating
        fields = (
            "rank",
            "bot",
            "version",
            "version_id",
            "owner",
            "kind",
            "elo",
            "error",
            "games",
            "points",
            "score",
            "provisional",
        )


class RatingPointSerializer(serializers.ModelSerializer):
    ladder = serializers.CharField(read_only=True, help_text=LADDER_HELP)

    class Meta:
        model = RatingPoint
        fields = ("ladder", "variant", "at", "elo", "error", "games")


class DetailSerializer(serializers.Serializer):
    """Why an action could not be done (e.g. a 409)."""

    detail = serializers.CharField()


# ----------------------------------------------------------------------------- query parameters
# The filters of the lists: validated (a 400 names what is wrong) and documented from one place.


# A list's query parameters.
class FilterSerializer(InputSerializer[Data]):
    @classmethod
    def parse(cls, request: Request) -> Data:
        """The request's query parameters, checked (a 400 says what is wrong). A plain dict
        (the last value of each), so that a blank value is checked like any other."""
        return cls(data=request.query_params.dict()).checked()


class BotFilter(TypedDict, total=False):
    owner: str


class BotFilterSerializer(FilterSerializer[BotFilter]):
    owner = serializers.CharField(required=False, allow_blank=True, help_text="A user name.")


class VersionFilter(TypedDict, total=False):
    status: str
    variant: str


class VersionFilterSerializer(FilterSerializer[VersionFilter]):
    status = serializers.ChoiceField(
        choices=BotVersion.Status.choices, required=False, allow_blank=True
    )
    variant = serializers.ChoiceField(
        choices=Variant.choices,
        required=False,
        allow_blank=True,
        help_text="Only the versions that play this variant.",
    )


class MatchFilter(TypedDict, total=False):
    variant: str
    status: str
    kind: str
    termination: str
    bot: str
    version: int
    tournament: int
    duel: int


class MatchFilterSerializer(FilterSerializer[MatchFilter]):
    variant = serializers.ChoiceField(choices=Variant.choices, required=False, allow_blank=True)
    status = serializers.ChoiceField(choices=Match.Status.choices, required=False, allow_blank=True)
    kind = serializers.ChoiceField(choices=Match.Kind.choices, required=False, allow_blank=True)
    termination = serializers.ChoiceField(
        choices=TERMINATIONS, required=False, allow_blank=True, help_text="How the game ended."
    )
    bot = serializers.CharField(required=False, allow_blank=True, help_text="A bot's name.")
    version = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=2**63 - 1,
        help_text="A version's id (a match's white_version or black_version).",
    )
    tournament = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1)
    duel = serializers.IntegerField(
        required=False, min_value=1, max_value=2**63 - 1, help_text="A test or a challenge."
    )


class RatingFilter(TypedDict):
    variant: str
    ladder: str
    all: bool


class RatingFilterSerializer(FilterSerializer[RatingFilter]):
    variant = serializers.ChoiceField(choices=Variant.choices, default=Variant("yinsh"))
    ladder = serializers.ChoiceField(
        choices=Ladder.choices, default=Ladder.SANDBOX, help_text=LADDER_HELP
    )
    all = serializers.BooleanField(default=False, help_text="Include retired versions.")


class HistoryFilter(TypedDict, total=False):
    variant: str
    ladder: str


class HistoryFilterSerializer(FilterSerializer[HistoryFilter]):
    variant = serializers.ChoiceField(choices=Variant.choices, required=False, allow_blank=True)
    ladder = serializers.ChoiceField(
        choices=Ladder.choices, default=Ladder.SANDBOX, help_text=LADDER_HELP
    )


class FailureReasonSerializer(serializers.Serializer):
    kind = serializers.CharField(
        help_text="crash, time, illegal-move, protocol-error or sandbox-violation"
    )
    text = serializers.CharField(help_text="The reason in public words, shared by similar ones.")
    count = serializers.IntegerField(help_text="Among the version's latest failures.")
    matches = serializers.ListField(
        child=serializers.IntegerField(), help_text="Example matches, latest first."
    )
    example = serializers.CharField(
        allow_null=True, help_text="The latest one's full reason (owner only)."
    )


class ThinkTimesSerializer(serializers.Serializer):
    moves = serializers.IntegerField()
    games = serializers.IntegerField()
    p50 = serializers.FloatField()
    p90 = serializers.FloatField()
    p99 = serializers.FloatField()
    max = serializers.FloatField()


class VariantFailuresSerializer(serializers.Serializer):
    variant = serializers.CharField()
    games = serializers.IntegerField(
        help_text="Finished games (ladder, tournaments, qualification)."
    )
    failures = serializers.DictField(
        child=serializers.IntegerField(), help_text="Games lost by its own failure, by kind."
    )
    rate = serializers.FloatField(help_text="Share of its games lost by its own failure.")
    recent_games = serializers.IntegerField(
        help_text="Its latest games (at most 50, or ARENA_FAILING_MIN_GAMES if more) finished "
        "since its owner last resumed it: what the verdict looks at (0 when its whole record "
        "cannot make it failing)."
    )
    recent_failures = serializers.IntegerField(help_text="Its own failures among those.")
    failing = serializers.BooleanField(
        help_text="At ARENA_FAILING_RATE of its recent games, over at least "
        "ARENA_FAILING_MIN_GAMES."
    )
    paused = serializers.BooleanField(
        help_text="Left out of the ladder in this variant until its owner resumes it "
        "(POST /api/versions/<id>/resume/) or its recent games are good again."
    )
    reasons = FailureReasonSerializer(many=True)
    think_ms = ThinkTimesSerializer(allow_null=True, help_text="Its latest games' think times.")


class VersionDetailSerializer(VersionSerializer):
    failures = serializers.SerializerMethodField(
        help_text="Per variant: games, failures by kind, the commonest reasons with example "
        "matches, think-time percentiles in ms, the recent counts, failing and paused."
    )
    paused = serializers.SerializerMethodField(
        help_text="The variants the ladder pauses it in for failing often (its owner may "
        "resume it: POST /api/versions/<id>/resume/)."
    )

    class Meta(VersionSerializer.Meta):
        fields = (*VersionSerializer.Meta.fields, "paused", "failures")
        read_only_fields = fields

    def _failures(self, obj: BotVersion) -> list[VariantFailures]:
        # Computed once per version for both fields.
        cache: dict[int, list[VariantFailures]] = self.context.setdefault("_failures", {})
        if obj.pk not in cache:
            request: Request | None = self.context.get("request")
            cache[obj.pk] = pages.version_failures(obj, request.user if request else None)
        return cache[obj.pk]

    @extend_schema_field(VariantFailuresSerializer(many=True))
    def get_failures(self, obj: BotVersion) -> list[JSONObject]:
        return pages.failures_json(self._failures(obj))

    @extend_schema_field(serializers.ListField(child=serializers.CharField()))
    def get_paused(self, obj: BotVersion) -> list[str]:
        return [row.variant for row in self._failures(obj) if row.paused]


class NotificationSettingsSerializer(serializers.Serializer):
    email = serializers.BooleanField(help_text="Send email (to email_address, when set).")
    email_address = serializers.EmailField(
        allow_blank=True,
        help_text="The account's address. A new one is sent a verification link, and gets no "
        "other mail until the link is followed.",
    )
    email_verified = serializers.BooleanField(
        read_only=True, help_text="Whether email_address is verified."
    )
    webhook = serializers.BooleanField(help_text="POST JSON to webhook_url.")
    webhook_url = serializers.URLField(
        allow_blank=True, max_length=500, help_text="An http(s) URL at a public address."
    )
    events = serializers.ListField(
        child=serializers.ChoiceField(choices=[(e.value, e.label) for e in CHOOSABLE]),
        help_text="The events to be told about.",
    )


class NotificationTestSerializer(serializers.Serializer):
    sent = serializers.BooleanField(help_text="False when no channel is on.")
    channels = serializers.ListField(child=serializers.CharField())


class NotificationVerifySerializer(serializers.Serializer):
    sent = serializers.BooleanField(
        help_text="False when there is no address, or it is verified already."
    )


class NotificationSerializer(serializers.ModelSerializer):
    read = serializers.SerializerMethodField(help_text="Whether it was opened or marked read.")

    class Meta:
        model = Notification
        fields = ("id", "event", "subject", "text", "url", "data", "created_at", "read", "read_at")
        read_only_fields = fields

    def get_read(self, obj: Notification) -> bool:
        return obj.read_at is not None


class NotificationReadInput(TypedDict, total=False):
    ids: list[int]


class NotificationReadSerializer(InputSerializer[NotificationReadInput]):
    ids = serializers.ListField(
        child=serializers.IntegerField(min_value=1, max_value=2**63 - 1),
        required=False,
        max_length=1000,
        help_text="The notifications to mark read (yours; others are ignored). Without it: all.",
    )


class NotificationReadResultSerializer(serializers.Serializer):
    marked = serializers.IntegerField(help_text="How many were unread and are now read.")
    unread = serializers.IntegerField(help_text="How many of yours are still unread.")
