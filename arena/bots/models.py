"""Bots and their versions.

A :class:`Bot` is a name and an owner. Each upload makes a :class:`BotVersion`: a program that
never changes (its bytes are kept in the bot store under their SHA-256), checked once, then
rated on its own. At most one version of a bot is active (plays ladder games) at a time.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.urls import reverse
from django.utils import timezone

import engine
from arena.jobs import limits
from arena.jobs.models import ClaimedWork
from arena.referee.conformance import plan
from arena.referee.jsontypes import JSONObject

log = logging.getLogger(__name__)

if TYPE_CHECKING:

    class Variant(models.TextChoices):
        """Its members are the engine's variants, known only when it runs: look one up by
        value (``Variant("yinsh")``)."""

else:
    #: The games, as the engine defines them (all of them: YINSH, Blitz, Yangsh, Yangsh with
    #: seven pawns): ``Variant.YINSH == "yinsh"``, labelled with the variant's title.
    Variant = models.TextChoices(
        "Variant", [(name.upper(), (name, v.title)) for name, v in engine.VARIANTS.items()]
    )


#: A bot's name: part of its URLs, so it never changes. The one definition of the rule, for
#: the model, the forms, the API and the error messages.
NAME_MIN_LENGTH = 2
NAME_MAX_LENGTH = 40
NAME_PATTERN = rf"^[a-z0-9][a-z0-9_-]{{{NAME_MIN_LENGTH - 1},{NAME_MAX_LENGTH - 1}}}$"
NAME_RULE = (
    f"{NAME_MIN_LENGTH} to {NAME_MAX_LENGTH} characters: lower-case letters, digits, - and _, "
    "starting with a letter or a digit"
)
#: The longest description a bot may have.
DESCRIPTION_MAX_LENGTH = 2000
#: How the reason of a version rejected for its build begins.
BUILD_FAILED = "the build failed"


class Bot(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active", "active"
        WITHDRAWN = "withdrawn", "withdrawn"

    class Kind(models.TextChoices):
        #: Uploaded: built and run in the arena's sandbox.
        UPLOAD = "upload", "runs in the arena's sandbox"
        #: Its program runs on its owner's machine; a client relays its lines over HTTP.
        REMOTE = "remote", "runs on its owner's machine"
        #: A person's seat at the board: each user who plays a bot in the browser has one,
        #: named after them, which the site lists nowhere as a bot (arena.games.people).
        PERSON = "person", "a person in the browser"

    #: The kinds whose moves arrive over HTTP (arena.games.remote).
    OVER_HTTP = (Kind.REMOTE, Kind.PERSON)

    name = models.SlugField(
        max_length=NAME_MAX_LENGTH,
        unique=True,
        help_text=f"{NAME_RULE}; part of the bot's URLs, so it cannot change.",
    )
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, models.PROTECT, related_name="bots")
    description = models.TextField(blank=True, max_length=DESCRIPTION_MAX_LENGTH)
    #: Built-in bots only (set by the system, never through an upload): the referee may run them
    #: at a lower sandbox level than uploads need.
    trusted = models.BooleanField(default=False)
    status = models.CharField(max_length=12, choices=Status.choices, default=Status.ACTIVE)
    #: Whether its owner lets challengers ask for rated games (arena.duels): a challenge is
    #: rated only when the challenger asks for it and this is set.
    rated_challenges = models.BooleanField(
        default=False,
        help_text="Let challengers play rated games against this bot (when they ask for it).",
    )
    #: Whether its owner lets other people's rated tournaments include it
    #: (arena.tournaments): its owner's own tournaments may, and built-in bots (``trusted``)
    #: always accept (:meth:`accepts_rated_tournaments`). The database's default too, for code
    #: that does not know the column yet (an upgrade).
    rated_tournaments = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Let other people include this bot in rated tournaments.",
    )
    #: Whether the bot enters scheduled (recurring) tournaments (arena.tournaments.schedules):
    #: each event takes every opted-in active bot that plays its variant. Built-in bots follow
    #: the same setting (off unless an operator turns it on).
    scheduled_events = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Enter this bot in the arena's scheduled (recurring) tournaments.",
    )
    #: Whether its owner lets other people ask it for moves on the analysis board
    #: (arena.analysis): its active version then answers anyone's request, and the ``info``
    #: it sends with the action is shown to the asker (never its standard error). The
    #: built-in ``search`` always answers.
    analysis = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Let others ask this bot for moves on the analysis board (they see its info).",
    )
    #: Where its moves come from; set when the bot is registered, it never changes. A remote
    #: bot's and a person's moves arrive over HTTP (arena.games.remote): their versions have no
    #: archive and no check, and they never join the ladder (the sandbox's limits cannot apply);
    #: remote bots play on the open ladder instead.
    kind = models.CharField(
        max_length=8, choices=Kind.choices, default=Kind.UPLOAD, db_default=Kind.UPLOAD
    )
    #: Whether its owner lets logged-in visitors play it in the browser (arena.games.people):
    #: their games are not rated. Built-in bots are registered with it on.
    people = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Let logged-in visitors play this bot in their browser (unrated games).",
    )
    #: Whether the sandboxed bot plays on the open ladder too (arena.games.ladder), where it
    #: meets remote bots, rated in the open ladder's space only. A remote bot plays there
    #: whenever its client is connected, whatever this says.
    open_ladder = models.BooleanField(
        default=False,
        db_default=False,
        help_text="Play on the open ladder too, against remote bots (rated there only).",
    )
    #: When a remote bot's client last asked for work (:func:`arena.games.remote.pending`,
    #: written every ``REMOTE_SEEN_WRITE_S`` at most): the open ladder pairs it only while
    #: this is recent (``REMOTE_SEEN_S``).
    seen_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    #: What its owner says yes or no to (the edit page's boxes, the API's fields).
    CHOICES = (
        "rated_challenges",
        "rated_tournaments",
        "scheduled_events",
        "analysis",
        "people",
        "open_ladder",
    )

    class Meta:
        ordering = ["name"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=["active", "withdrawn"]), name="bot_status_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    def get_absolute_url(self) -> str:
        if self.person:
            return reverse("person", args=[self.owner.get_username()])
        return reverse("bot", args=[self.name])

    @property
    def remote(self) -> bool:
        """Whether its moves arrive over HTTP (a remote bot or a person), not from the sandbox."""
        return self.kind != Bot.Kind.UPLOAD

    @property
    def person(self) -> bool:
        """Whether it is a person's seat (:attr:`Kind.PERSON`)."""
        return self.kind == Bot.Kind.PERSON

    def accepts_rated_tournaments(self, organiser_id: int | None) -> bool:
        """Whether a rated tournament organised by the user ``organiser_id`` may include the
        bot: its owner's own, a built-in bot, or one whose owner accepts rated tournaments;
        never a bot that plays over HTTP (the ratings are the sandbox's)."""
        if self.remote:
            return False
        return self.trusted or self.rated_tournaments or self.owner_id == organiser_id

    @property
    def active_version(self) -> BotVersion | None:
        return self.versions.filter(status=BotVersion.Status.ACTIVE).first()

    def standing(self, *, playing: bool, newest: str | None) -> str:
        """Where the bot stands, as a list of bots says it: ``withdrawn``; ``active`` when a
        version of it plays (``playing``); else what became of its newest version (``newest``,
        a :class:`VersionStatus` value): ``rejected``, ``waiting for its check``..."""
        if self.status == self.Status.WITHDRAWN:
            return self.get_status_display()
        if playing:
            return VersionStatus.ACTIVE.label
        return VersionStatus(newest).label if newest is not None else "no version"


def every_variant() -> str:
    """The variants a version plays unless its manifest names some: all of the engine's, as
    :attr:`BotVersion.variants` stores them."""
    return ",".join(engine.VARIANTS)


def playing(variant: str) -> Q:
    """The versions that declare ``variant``: a filter on :attr:`BotVersion.variants` (a
    comma-joined list) that works with plain ``LIKE`` on SQLite and PostgreSQL alike."""
    return (
        Q(variants=variant)
        | Q(variants__startswith=f"{variant},")
        | Q(variants__endswith=f",{variant}")
        | Q(variants__contains=f",{variant},")
    )


def variant_names(variants: str) -> list[str]:
    """The names in a stored list of variants (:attr:`BotVersion.variants`)."""
    return [v for v in variants.split(",") if v]


def describe_variants(variants: str) -> str:
    """A stored list of variants as a page says it: ``every variant``, or their titles
    (``YINSH, Blitz YINSH``)."""
    names = variant_names(variants)
    if set(names) >= set(engine.VARIANTS):
        return "every variant"
    return ", ".join(variant_title(v) for v in names)


def variant_title(name: str) -> str:
    """A variant's title (``Blitz YINSH``); an unknown name as it is."""
    known = engine.VARIANTS.get(name)
    return known.title if known is not None else name


class VersionStatus(models.TextChoices):
    """Where a version stands: checked, playing, retired, refused, or held for an operator."""

    PENDING = "pending", "waiting for its check"
    CHECKING = "checking", "being checked"
    ACTIVE = "active", "active"
    RETIRED = "retired", "retired"
    REJECTED = "rejected", "rejected"
    #: The machine could not run its check, attempt after attempt: an operator must look.
    HELD = "held", "waiting for the arena"


def check_limits() -> tuple[int, int]:
    """(soft, hard) time limits of a check task: the build, the conformance games and the
    qualification games at the qualification time control, as many as a bot that declares
    every variant plays (the task is sent before the upload is unpacked)."""
    every = list(engine.VARIANTS)
    check_soft, _ = limits.time_limits(
        settings.CHECK_TIME_CONTROL, games=len(plan(every, settings.CHECK_GAMES)), builds=1
    )
    games_soft, _ = limits.time_limits(
        settings.QUALIFICATION_TIME_CONTROL,
        games=len(plan(every, settings.QUALIFICATION_GAMES, each_colour=True)),
    )
    soft = check_soft + games_soft
    return soft, soft + 30


class BotVersion(ClaimedWork):
    """An uploaded program. Its check (:mod:`arena.admission`) is claimed work: the claim's
    columns (attempts, worker, queued_at, started_at, heartbeat_at) are its check's."""

    Status = VersionStatus
    QUEUED = Status.PENDING
    RUNNING = Status.CHECKING
    TASK = "arena.admission.tasks.check_version"
    NOUN = "check of version"

    class Kind(models.TextChoices):
        FILE = "file", "single file"
        ZIP = "zip", "zip archive"
        TARGZ = "tar.gz", "tar.gz archive"
        #: A remote bot's version: no file (``sha256``, ``filename`` empty, ``size`` 0).
        REMOTE = "remote", "remote (runs on its owner's machine)"

    bot = models.ForeignKey(Bot, models.CASCADE, related_name="versions")
    number = models.PositiveIntegerField()
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    #: SHA-256 of the uploaded bytes: the name of the file in the bot store.
    sha256 = models.CharField(max_length=64)
    kind = models.CharField(max_length=8, choices=Kind.choices)
    #: The uploaded file's name, made safe (a single-file bot runs under this name).
    filename = models.CharField(max_length=100)
    size = models.PositiveIntegerField()
    #: Bytes of its built folder, measured by its check (0: no build, or not built yet): what
    #: its build keeps on each worker, counted in its owner's storage with ``size``. The
    #: database's default too, for code that does not know the column yet (an upgrade).
    built_size = models.PositiveBigIntegerField(default=0, db_default=0)
    uploaded_at = models.DateTimeField(auto_now_add=True)

    #: When its check ended (its verdict, or held for an operator).
    checked_at = models.DateTimeField(null=True, blank=True)
    #: Why the version was rejected, in a sentence.
    reason = models.TextField(blank=True)
    #: What the check said, line by line (shown to the owner only).
    report: models.JSONField[list[str], list[str]] = models.JSONField(default=list, blank=True)
    #: The transcript of the failing game (owner only).
    transcript: models.JSONField[JSONObject | None, JSONObject | None] = models.JSONField(
        null=True, blank=True
    )
    stderr_tail = models.TextField(blank=True)
    #: From the manifest, once unpacked: the name and command the bot declares.
    declared_name = models.CharField(max_length=64, blank=True)
    declared_version = models.CharField(max_length=64, blank=True)
    command = models.CharField(max_length=500, blank=True)
    #: The variants the version plays, comma-joined in the engine's order (``yinsh,blitz``):
    #: its manifest's ``variants``, every variant when it names none. The ladder and the
    #: tournaments pair it only in these (filter with :func:`playing`).
    variants = models.CharField(max_length=100, default=every_variant)

    class Meta:
        ordering = ["bot", "-number"]
        constraints = [
            models.UniqueConstraint(fields=["bot", "number"], name="version_number_unique"),
            models.UniqueConstraint(
                fields=["bot"], condition=Q(status="active"), name="one_active_version_per_bot"
            ),
            models.CheckConstraint(
                condition=Q(status__in=VersionStatus.values),
                name="version_status_valid",
            ),
            models.CheckConstraint(condition=Q(number__gte=1), name="version_number_positive"),
        ]
        indexes = [models.Index(fields=["status"], name="version_status_idx")]

    def __str__(self) -> str:
        return f"{self.bot.name} v{self.number}"

    @property
    def label(self) -> str:
        """How the version is named in records and tables: ``greedy v2``; a person's seat by
        its person's user name."""
        if self.bot.person:
            return self.bot.owner.get_username()
        return f"{self.bot.name} v{self.number}"

    def get_absolute_url(self) -> str:
        if self.bot.person:
            return self.bot.get_absolute_url()
        return reverse("bot", args=[self.bot.name]) + f"#v{self.number}"

    def time_limits(self) -> tuple[int, int]:
        return check_limits()

    @classmethod
    def give_up(cls, pk: int, attempt: int, reason: str) -> bool:
        """HELD for an operator, never rejected (the machine's failure is not the bot's): told
        in the log and on the admin's versions page; the operator checks it again once the
        machine is mended (:func:`arena.bots.services.recheck`)."""
        done = cls.objects.filter(pk=pk, status=VersionStatus.CHECKING, attempts=attempt).update(
            status=VersionStatus.HELD,
            checked_at=timezone.now(),
            reason=f"the arena could not run the check ({attempt} attempts; last: {reason})"[:4000],
        )
        if done:
            log.error(
                "version %s: its check could not run after %s attempts (last: %s); the version "
                "is held until an operator checks it again",
                pk,
                attempt,
                reason,
            )
        return bool(done)

    @property
    def build_failed(self) -> bool:
        """Rejected because its build failed: ``stderr_tail`` is then the build's output."""
        return self.status == VersionStatus.REJECTED and self.reason.startswith(BUILD_FAILED)

    @property
    def variant_names(self) -> list[str]:
        """The variants it plays, by name (``["yinsh", "blitz"]``)."""
        return variant_names(self.variants)

    @property
    def variant_titles(self) -> list[str]:
        """The variants it plays, by title (``["YINSH", "Blitz YINSH"]``)."""
        return [variant_title(v) for v in self.variant_names]

    @property
    def variants_text(self) -> str:
        """What it plays, as a page says it: ``every variant`` or the titles."""
        return describe_variants(self.variants)

    def plays(self, variant: str) -> bool:
        """Whether the version declares ``variant``."""
        return variant in self.variant_names

    @property
    def is_final(self) -> bool:
        """Whether its check is over (active, retired or rejected)."""
        return self.status in (self.Status.ACTIVE, self.Status.RETIRED, self.Status.REJECTED)


#: The kinds of an uploaded file: a version's kinds but ``remote`` (a trial's, arena.admission).
UPLOAD_KINDS = [(v, label) for v, label in BotVersion.Kind.choices if v != BotVersion.Kind.REMOTE]


class StoredFile(models.Model):
    """A file of the bot store kept in the database (:class:`arena.bots.storage.DatabaseStorage`,
    the default): an upload under its name ``ab/<sha256>``, its bytes in
    :class:`StoredFileChunk` rows. A worker reads them through the database it needs anyway, so
    no machine shares a folder with another. Written once, in one transaction with its chunks:
    the store's names are content hashes."""

    name = models.CharField(max_length=100, primary_key=True)
    size = models.BigIntegerField()
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.name


class StoredFileChunk(models.Model):
    """One piece of a stored file's bytes (1 MiB but the last): a file is written and read a
    piece at a time, so neither end holds a whole upload (and the driver's copies of it) in
    memory."""

    file = models.ForeignKey(StoredFile, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    data = models.BinaryField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["file", "index"], name="stored_chunk_once"),
        ]
