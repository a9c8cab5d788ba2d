"""Forms of the site. They check the shape of the input; the services decide the rest."""

from __future__ import annotations

from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.forms import UserCreationForm
from django.db.models import OuterRef, Subquery

from arena import stats
from arena.admission import trials
from arena.admission.models import Colour
from arena.bots import services as bot_services
from arena.bots.models import (
    DESCRIPTION_MAX_LENGTH,
    NAME_MAX_LENGTH,
    NAME_PATTERN,
    NAME_RULE,
    Bot,
    BotVersion,
    Variant,
    describe_variants,
    every_variant,
)
from arena.duels import services as duels
from arena.games import people
from arena.games.filters import TERMINATIONS
from arena.games.models import Match
from arena.notifications.models import CHOOSABLE
from arena.tournaments import limits
from arena.tournaments.models import Tournament
from arena.web import usernames


class SignUpForm(UserCreationForm):
    class Meta(UserCreationForm.Meta):  # type: ignore[name-defined]  # django-stubs omit this Meta
        fields = ("username", "email")
        help_texts = {
            "email": "Optional: for resetting a forgotten password, and notifications. A link "
            "is mailed to it to verify it first."
        }

    def clean_username(self) -> str:
        """Django's checks (a name taken in another case too: then no name comes back), and
        no name that looks like an existing user's (:mod:`arena.web.usernames`)."""
        name = super().clean_username()
        like = usernames.too_like(name) if name else None
        if like is not None and like != name:
            raise forms.ValidationError(
                f"This name is too like an existing name ({like}); choose another."
            )
        return name


class BotFileField(forms.FileField):
    """The upload: a .zip or .tar.gz folder with bot.toml, or a single executable file."""

    def __init__(self, **kwargs: Any) -> None:  # forms.FileField's options, passed on
        kwargs.setdefault(
            "help_text",
            "A .zip or .tar.gz of a folder with bot.toml, or one executable file (a script "
            f"starting with #!). At most {settings.BOT_UPLOAD_MAX_BYTES // (1024 * 1024)} MiB.",
        )
        super().__init__(**kwargs)


class BotUploadForm(forms.Form):
    name = forms.CharField(
        max_length=NAME_MAX_LENGTH,
        help_text=f"{NAME_RULE}. It cannot be changed later.",
        error_messages={"max_length": f"A name is {NAME_RULE}."},
    )
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        max_length=DESCRIPTION_MAX_LENGTH,
    )
    file = BotFileField()

    def clean_name(self) -> str:
        """The name as :func:`arena.bots.services.validate_name` checks it, whose refusal says
        what a name may be."""
        name: str = self.cleaned_data["name"]
        try:
            return bot_services.validate_name(name)
        except bot_services.UploadError as e:
            raise forms.ValidationError(str(e)) from None


class RemoteBotForm(forms.Form):
    """A bot that runs on its owner's machine and plays over HTTP (no file to upload)."""

    name = forms.CharField(
        max_length=NAME_MAX_LENGTH,
        help_text=f"{NAME_RULE}. It cannot be changed later.",
        error_messages={"max_length": f"A name is {NAME_RULE}."},
    )
    description = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 3}),
        required=False,
        max_length=DESCRIPTION_MAX_LENGTH,
    )
    variants = forms.MultipleChoiceField(
        choices=Variant.choices,
        widget=forms.CheckboxSelectMultiple,
        required=False,
        help_text="The variants it plays (every variant when none is ticked).",
    )

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        try:
            return bot_services.validate_name(name)
        except bot_services.UploadError as e:
            raise forms.ValidationError(str(e)) from None


class PlayForm(forms.Form):
    """A person's game against a bot (arena.games.people): the variants its active version
    plays, the offered time controls, a colour."""

    variant = forms.ChoiceField(choices=())
    time_control = forms.ChoiceField(choices=(), label="Time")
    colour = forms.ChoiceField(
        choices=[("random", "random"), ("white", "white"), ("black", "black")],
        label="Your colour",
        initial="random",
    )

    def __init__(self, *args: Any, variants: list[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        field = self.fields["variant"]
        assert isinstance(field, forms.ChoiceField)
        field.choices = [(v, Variant(v).label) for v in variants]
        tc = self.fields["time_control"]
        assert isinstance(tc, forms.ChoiceField)
        tc.choices = people.time_controls()


class VersionUploadForm(forms.Form):
    file = BotFileField()


class BotEditForm(forms.ModelForm):
    class Meta:
        model = Bot
        fields = ("description", *Bot.CHOICES)
        widgets = {"description": forms.Textarea(attrs={"rows": 4})}
        labels = {
            "rated_challenges": "Accept rated challenges",
            "rated_tournaments": "Accept rated tournaments",
            "scheduled_events": "Enter scheduled tournaments",
            "analysis": "Answer on the analysis board",
            "people": "Let people play it",
            "open_ladder": "Play on the open ladder",
        }
        help_texts = {
            "rated_tournaments": "Let other people include this bot in rated tournaments (your "
            "own tournaments may always be rated; built-in bots always accept).",
            "scheduled_events": "Enter this bot in the arena's recurring tournaments (each "
            "event takes every opted-in bot that plays its variant; a rated event only those "
            "that accept rated tournaments).",
            "analysis": "Others may ask this bot for moves on the analysis board: its active "
            "version answers, and they see the info it sends with its action (never its "
            "standard error).",
            "people": "Logged-in visitors may play its active version in their browser, from "
            "its page (unrated games, listed on its page under “Against people”).",
            "open_ladder": "Play on the open ladder too, against remote bots (programs on "
            "their owners' machines): those games count in the open ladder's ratings only.",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.remote:
            # Its program is not on the arena: the analysis board cannot ask it.
            del self.fields["analysis"]
            # A remote bot always plays on the open ladder (while its client is connected).
            del self.fields["open_ladder"]


class BotChoiceField(forms.ModelMultipleChoiceField):
    """The bots of a tournament, each labelled with its owner, what it plays, and whether a
    rated tournament of the organiser (``organiser_id``) may include it."""

    organiser_id: int | None = None

    def label_from_instance(self, obj: Bot) -> str:
        plays = describe_variants(getattr(obj, "active_variants", None) or every_variant())
        only = "" if plays == "every variant" else f"; plays only {plays}"
        rated = (
            "rated or unrated"
            if obj.accepts_rated_tournaments(self.organiser_id)
            else "unrated only"
        )
        return f"{obj.name} ({obj.owner.username}{only}; {rated})"


class ModeForm(forms.Form):
    """A form with modes: the field ``MODE_FIELD`` chooses one of ``MODES``, and the fields of
    each mode (``MODES[mode]``) count only in that mode; those of the others are ignored,
    whatever they hold. The page puts each mode's fields in a fieldset of its own
    (:meth:`sections`), which ``arena/static/arena/site.js`` hides but for the chosen mode's."""

    MODE_FIELD = "mode"
    #: The modes' values and labels (the legends of their fieldsets).
    MODE_CHOICES: list[tuple[str, str]] = []
    #: The fields of each mode, by the mode's value.
    MODES: dict[str, tuple[str, ...]] = {}

    def sections(self) -> list[tuple[str, str, list[forms.BoundField]]]:
        """The fields as the page groups them, in their order: (mode, legend, fields), mode
        "" for runs of fields common to every mode."""
        by_mode = {name: mode for mode, names in self.MODES.items() for name in names}
        labels = dict(self.MODE_CHOICES)
        out: list[tuple[str, str, list[forms.BoundField]]] = []
        for name in self.fields:
            mode = by_mode.get(name, "")
            if not out or out[-1][0] != mode:
                out.append((mode, labels.get(mode, ""), []))
            out[-1][2].append(self[name])
        return out

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        mode = data.get(self.MODE_FIELD)
        for other, names in self.MODES.items():
            if mode is None or other == mode:
                continue
            for name in names:  # the other mode's fields: neither checked nor used
                self.errors.pop(name, None)
                data[name] = None
        return data


class TournamentForm(ModeForm):
    """A tournament: its format (the fields of a Swiss and of a gauntlet are the chosen
    format's only), entrants, variant and time control."""

    MODE_FIELD = "format"
    MODE_CHOICES = Tournament.Format.choices
    MODES = {"swiss": ("rounds",), "gauntlet": ("seed",)}

    name = forms.CharField(max_length=limits.NAME_MAX_LENGTH)
    variant = forms.ChoiceField(choices=Variant.choices)
    time_control = forms.CharField(
        initial=limits.DEFAULT_TIME_CONTROL,
        max_length=limits.TIME_CONTROL_MAX_LENGTH,
        help_text='Seconds per game and increment per turn, e.g. "60+1" or "10+0.1".',
    )
    format = forms.ChoiceField(
        choices=MODE_CHOICES,
        initial=Tournament.Format.ROUND_ROBIN,
        required=False,  # left out: a round robin
        help_text="Round robin: every bot plays every other (a double round robin twice as "
        "many games). Swiss: a few rounds, in each bots with equal points meet. Gauntlet: one "
        "bot plays each of the others. Knockout: a bracket seeded by rating; the loser of a "
        "pairing is out.",
    )
    games_per_pair = forms.IntegerField(
        min_value=1,
        max_value=limits.MAX_GAMES_PER_PAIR,
        initial=limits.DEFAULT_GAMES_PER_PAIR,
        label="Games per pairing",
        help_text="The games two bots play when they meet, colours alternating; two games "
        "in a row share an opening. An even number gives each bot white equally often (a "
        "knockout's must be even).",
    )
    rounds = forms.IntegerField(
        required=False,
        min_value=1,
        help_text="Empty: ⌈log2(bots)⌉, the rounds a knockout of as many bots takes. At most "
        "half the bots, rounded up (with four bots or fewer, each meets every other), so that "
        "no two bots ever meet twice.",
    )
    seed = forms.ModelChoiceField(
        queryset=Bot.objects.none(),
        required=False,
        empty_label="the first of the bots below",
        label="Gauntlet's seed",
        help_text="The bot that plays each of the others; it must be one of the bots chosen.",
    )
    bots = BotChoiceField(
        queryset=Bot.objects.none(),
        widget=forms.CheckboxSelectMultiple,
        help_text="Each bot plays with its active version, which must play the variant. "
        "“Unrated only”: its owner does not accept rated tournaments.",
    )
    rated = forms.BooleanField(
        required=False,
        initial=True,
        help_text="Count the games in the ratings: only with bots marked “rated or unrated” "
        "(yours, the built-in ones, and those whose owners accept rated tournaments).",
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:  # forms.Form's, passed on
        super().__init__(*args, **kwargs)
        field = self.fields["bots"]
        assert isinstance(field, BotChoiceField)
        field.organiser_id = user.pk
        active = BotVersion.objects.filter(bot=OuterRef("pk"), status=BotVersion.Status.ACTIVE)
        field.queryset = (
            Bot.objects.filter(status=Bot.Status.ACTIVE, versions__status=BotVersion.Status.ACTIVE)
            .exclude(kind=Bot.Kind.PERSON)
            .select_related("owner")
            .annotate(active_variants=Subquery(active.values("variants")[:1]))
            .order_by("name")
            .distinct()
        )
        seed = self.fields["seed"]
        assert isinstance(seed, forms.ModelChoiceField)
        seed.queryset = field.queryset

    def clean_format(self) -> str:
        return str(self.cleaned_data.get("format") or Tournament.Format.ROUND_ROBIN)


class NotificationSettingsForm(forms.Form):
    """What the user is told, and where (the services check the webhook URL)."""

    email_address = forms.EmailField(
        required=False,
        label="Email address",
        help_text="Your account's address; email is sent to it only once it is verified (a "
        "link is mailed to it when it changes).",
    )
    email = forms.BooleanField(required=False, label="Send me email")
    webhook = forms.BooleanField(required=False, label="Post to my webhook")
    webhook_url = forms.URLField(
        required=False,
        max_length=500,
        assume_scheme="https",
        label="Webhook URL",
        help_text="A Discord or Slack webhook, or any http(s) endpoint that takes a JSON POST.",
    )
    events = forms.MultipleChoiceField(
        required=False,
        choices=[(e.value, e.label) for e in CHOOSABLE],
        widget=forms.CheckboxSelectMultiple,
        label="Tell me when",
    )


# ----------------------------------------------------------------------------- tests, challenges


class VersionChoiceField(forms.ModelChoiceField):
    def label_from_instance(self, obj: BotVersion) -> str:
        state = "" if obj.status == BotVersion.Status.ACTIVE else f", {obj.get_status_display()}"
        return f"{obj.label} ({obj.bot.owner.username}{state}; plays {obj.variants_text})"


def checked_versions() -> Any:
    """Versions that may play tests and challenges, by bot and newest first."""
    return duels.playable_versions().select_related("bot__owner").order_by("bot__name", "-number")


class DuelForm(forms.Form):
    candidate = VersionChoiceField(queryset=BotVersion.objects.none())
    opponent = VersionChoiceField(queryset=BotVersion.objects.none())
    variant = forms.ChoiceField(choices=Variant.choices)
    time_control = forms.CharField(
        max_length=limits.TIME_CONTROL_MAX_LENGTH,
        help_text='Seconds per game and increment per turn, e.g. "10+0.1".',
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:  # forms.Form's, passed on
        super().__init__(*args, **kwargs)
        self.fields["time_control"].initial = settings.DUEL_TIME_CONTROL
        mine = self.fields["candidate"]
        assert isinstance(mine, forms.ModelChoiceField)
        mine.queryset = checked_versions().filter(bot__owner=user)


class TestForm(DuelForm, ModeForm):
    """A test of one's own version: a sequential test (SPRT) or a fixed number of games.

    Each mode has its own fields (:data:`MODES`); those of the mode not chosen are ignored,
    whatever they hold. The page hides them when JavaScript runs (``arena/static/arena/site.js``).
    """

    MODES = {"sprt": ("elo0", "elo1", "alpha", "beta", "max_games"), "games": ("games",)}
    MODE_CHOICES = [("sprt", "until a verdict (SPRT)"), ("games", "a fixed number of games")]

    mode = forms.ChoiceField(
        choices=MODE_CHOICES,
        initial="sprt",
        widget=forms.RadioSelect,
    )
    elo0 = forms.FloatField(
        required=False,
        initial=stats.DEFAULT_ELO0,
        label="elo0",
        help_text="H0: the candidate is this many Elo stronger (or less).",
    )
    elo1 = forms.FloatField(
        required=False,
        initial=stats.DEFAULT_ELO1,
        label="elo1",
        help_text="H1: it is at least this many Elo stronger. Wider bounds decide sooner.",
    )
    alpha = forms.FloatField(
        required=False, initial=stats.DEFAULT_ALPHA, help_text="False positive rate."
    )
    beta = forms.FloatField(
        required=False, initial=stats.DEFAULT_BETA, help_text="False negative rate."
    )
    max_games = forms.IntegerField(
        required=False,
        min_value=2,
        label="Game budget",
        help_text="The test stops without a verdict after this many games.",
    )
    games = forms.IntegerField(
        required=False,
        min_value=2,
        initial=100,
        help_text="With a fixed number of games: an even number.",
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:  # forms.Form's, passed on
        super().__init__(*args, user=user, **kwargs)
        self.fields["max_games"].initial = settings.DUEL_MAX_GAMES
        self.fields["max_games"].help_text += f" At most {settings.DUEL_MAX_GAMES}."
        other = self.fields["opponent"]
        assert isinstance(other, forms.ModelChoiceField)
        other.queryset = checked_versions()
        other.help_text = "Another version of yours, or any checked version of another bot."

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        mode = data.get("mode")
        if mode == "games" and data.get("games") is None and "games" not in self.errors:
            self.add_error("games", "Say how many games.")
        return data


class ChallengeForm(DuelForm):
    """A challenge of someone else's bot with one's own version: a number of games."""

    games = forms.IntegerField(min_value=2, initial=10, help_text="An even number.")
    rated = forms.BooleanField(
        required=False,
        help_text="Count the games in the ratings; only if the bot's owner accepts rated "
        "challenges.",
    )

    def __init__(self, *args: Any, user: Any, bot: Bot, **kwargs: Any) -> None:  # Form's
        super().__init__(*args, user=user, **kwargs)
        self.fields["games"].help_text += f" At most {settings.CHALLENGE_MAX_GAMES}."
        other = self.fields["opponent"]
        assert isinstance(other, forms.ModelChoiceField)
        other.queryset = checked_versions().filter(bot=bot)
        other.label = "Against"
        mine = self.fields["candidate"]
        mine.label = "Your version"


class MatchFilterForm(forms.Form):
    """The match list's filters (all optional); what a value names is checked by
    :func:`arena.games.filters.matches`."""

    variant = forms.ChoiceField(choices=[("", "all variants"), *Variant.choices], required=False)
    status = forms.ChoiceField(choices=[("", "any status"), *Match.Status.choices], required=False)
    kind = forms.ChoiceField(choices=[("", "any kind"), *Match.Kind.choices], required=False)
    termination = forms.ChoiceField(
        choices=[("", "any ending"), *((t, t) for t in TERMINATIONS)], required=False
    )
    bot = forms.RegexField(
        regex=NAME_PATTERN,
        max_length=NAME_MAX_LENGTH,
        required=False,
        error_messages={"invalid": f"A bot name is {NAME_RULE}."},
    )
    version = forms.IntegerField(min_value=1, max_value=2**31 - 1, required=False)
    tournament = forms.IntegerField(min_value=1, max_value=2**63 - 1, required=False)


class BotNameField(forms.RegexField):
    """A bot, by its name (the bot itself once clean)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(
            regex=NAME_PATTERN,
            max_length=NAME_MAX_LENGTH,
            error_messages={"invalid": f"A bot name is {NAME_RULE}."},
            **kwargs,
        )

    def clean(self, value: Any) -> Bot:
        name = super().clean(value)
        bot = Bot.objects.filter(name=name).first()
        if bot is None:
            raise forms.ValidationError(f"There is no bot named {name!r}.")
        return bot


class HeadToHeadForm(forms.Form):
    a = BotNameField(label="bot")
    b = BotNameField(label="against")
    variant = forms.ChoiceField(choices=[("", "every variant"), *Variant.choices], required=False)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("a") is not None and data.get("a") == data.get("b"):
            raise forms.ValidationError("Choose two different bots.")
        return data


class TrialForm(forms.Form):
    """A trial: an upload, the game it plays, and the bot it would be a new version of."""

    file = BotFileField()
    variant = forms.ChoiceField(choices=Variant.choices, initial="yinsh")
    colour = forms.ChoiceField(
        choices=Colour.choices, initial=Colour.WHITE, help_text="The colour your bot plays."
    )
    opponent = VersionChoiceField(
        queryset=BotVersion.objects.none(),
        required=False,
        empty_label="random (the built-in bot)",
        help_text="Any active bot; its log is not shown to you, and nothing is rated.",
    )
    bot = forms.ModelChoiceField(
        queryset=Bot.objects.none(),
        required=False,
        to_field_name="name",
        empty_label="a new bot",
        label="As a version of",
        help_text="Publishing it later makes a new version of this bot.",
    )

    def __init__(self, *args: Any, user: Any, **kwargs: Any) -> None:  # forms.Form's, passed on
        super().__init__(*args, **kwargs)
        opponent = self.fields["opponent"]
        assert isinstance(opponent, forms.ModelChoiceField)
        opponent.queryset = trials.opponents().select_related("bot__owner")
        bot = self.fields["bot"]
        assert isinstance(bot, forms.ModelChoiceField)
        bot.queryset = Bot.objects.filter(
            owner=user, status=Bot.Status.ACTIVE, kind=Bot.Kind.UPLOAD
        ).order_by("name")
