"""Bot state transitions: upload, new version, edit, withdraw, making an older version active
again, checking again; the built-in bots.

The web process (views, API, the ``uploadbot`` command) calls :func:`create_bot` and
:func:`add_version`, which check the upload's size and type, store its bytes by hash and
create a PENDING version; nothing is unpacked there. A worker runs the check
(:mod:`arena.admission`: unpack safely, the protocol conformance check, a few games
against the built-in ``random`` bot); then the version is ACTIVE (and the previous one
RETIRED) or REJECTED with a reason, or, when the machine could not run the check, PENDING
again and finally HELD for an operator, never rejected.
"""

from __future__ import annotations

import gzip
import io
import logging
import os
import re
import tarfile
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AnonymousUser, User
from django.core.exceptions import PermissionDenied
from django.core.files import File
from django.db import IntegrityError, transaction
from django.db.models import Max, ProtectedError, Sum
from django.http import Http404
from django.utils import timezone

import engine
from arena.bots import store
from arena.bots.models import NAME_PATTERN, NAME_RULE, Bot, BotVersion, every_variant
from arena.bots.signals import bot_withdrawn, versions_retired
from arena.bots.unpack import FILE, TARGZ, UploadError, detect_kind, safe_filename
from arena.core import throttles
from arena.core.errors import Refused
from arena.jobs import claims

log = logging.getLogger(__name__)
V = BotVersion.Status
NAME_RE = re.compile(NAME_PATTERN)

__all__ = [
    "ActivationError",
    "QuotaExceeded",
    "UploadError",
    "activate",
    "add_version",
    "can_manage",
    "check_build_quota",
    "create_bot",
    "delete_bot",
    "lock_storage",
    "recheck",
    "register_builtin_bots",
    "storage_quota",
    "storage_used",
    "update_bot",
]


# ----------------------------------------------------------------------------- permissions


def can_manage(user: User | AnonymousUser, bot: Bot) -> bool:
    """Whether ``user`` may change the bot, upload versions, delete it or read its source."""
    return bool(user.is_authenticated and (user.pk == bot.owner_id or user.is_superuser))


def plays_for(user: User | AnonymousUser, bot: Bot) -> bool:
    """Whether ``user`` may play a remote bot's games (its client's API, the match page's
    play panel): who may manage it, but a person's seat only its person (staff included)."""
    if not can_manage(user, bot):
        return False
    return not bot.person or user.pk == bot.owner_id


def _require_manager(user: User | AnonymousUser, bot: Bot) -> None:
    if not can_manage(user, bot):
        raise PermissionDenied(f"only the owner of {bot.name} may do this")


# ----------------------------------------------------------------------------- uploads


@dataclass(frozen=True)
class StoredUpload:
    sha256: str
    size: int
    kind: str
    filename: str


def _chunks(upload: IO[bytes]) -> Iterable[bytes]:
    chunks = getattr(upload, "chunks", None)
    if chunks is not None:
        yield from chunks()
        return
    while block := upload.read(1 << 20):
        yield block


def store_upload(upload: IO[bytes], filename: str) -> StoredUpload:
    """Check an upload's size and type and keep its bytes in the bot store.

    Raises :class:`UploadError` with a message for the uploader; nothing is stored then.
    """
    limit = settings.BOT_UPLOAD_MAX_BYTES
    size = getattr(upload, "size", None)
    if size is not None and size > limit:
        raise UploadError(f"the file is {size} bytes; at most {limit} bytes are accepted")
    upload.seek(0)
    head = upload.read(16)
    upload.seek(0)
    kind = detect_kind(head, filename)
    counted = 0

    def limited() -> Iterable[bytes]:
        nonlocal counted
        for chunk in _chunks(upload):
            counted += len(chunk)
            if counted > limit:
                raise UploadError(f"the file is over {limit} bytes")
            yield chunk

    sha256, size = store.put(limited())
    return StoredUpload(sha256, size, kind, safe_filename(filename))


class QuotaExceeded(UploadError):
    """An upload, or a version's build, that would take its owner over their storage quota.
    The message is for the owner; ``public`` says the same without their figures."""

    def __init__(self, message: str, public: str = "") -> None:
        super().__init__(message)
        self.public = public or message


def storage_used(user: User | AnonymousUser) -> int:
    """Bytes of every version of the user's bots (withdrawn bots' too: their files stay): its
    upload, and what its build keeps on a worker (``built_size``, measured by its check)."""
    if not user.is_authenticated:
        return 0
    totals = BotVersion.objects.filter(bot__owner_id=user.pk).aggregate(
        uploads=Sum("size"), builds=Sum("built_size")
    )
    return int(totals["uploads"] or 0) + int(totals["builds"] or 0)


def storage_quota(user: User | AnonymousUser) -> int | None:
    """The most bytes the user's uploads may hold (``ARENA_BOT_QUOTA_MB``), or None: no quota
    (quota 0, or an operator while ``ARENA_BOT_QUOTA_EXEMPT_STAFF`` is on)."""
    quota = settings.BOT_QUOTA_MB
    if quota <= 0 or (settings.BOT_QUOTA_EXEMPT_STAFF and user.is_staff):
        return None
    return int(quota * 1024 * 1024)


def _megabytes(n: int) -> str:
    """
    >>> _megabytes(2_202_009), _megabytes(0)
    ('2.1 MB', '0.0 MB')
    """
    return f"{n / (1024 * 1024):.1f} MB"


def check_quota(user: User | AnonymousUser, size: int) -> None:
    """Raise :class:`QuotaExceeded` when ``size`` more bytes do not fit in the user's quota;
    the message says what they use and what they may."""
    quota = storage_quota(user)
    if quota is None:
        return
    used = storage_used(user)
    if used + size > quota:
        raise QuotaExceeded(
            f"storage quota: {_room(used, quota)}, and this file ({_megabytes(size)}) does "
            f"not fit; {_MAKE_ROOM}"
        )


_MAKE_ROOM = "delete a bot that never played, or ask an operator for more room"


def _room(used: int, quota: int) -> str:
    return f"your bots' uploads and builds use {_megabytes(used)} of your {_megabytes(quota)}"


def check_build_quota(version: BotVersion, built_size: int) -> None:
    """Raise :class:`QuotaExceeded` when the version's built bot (``built_size`` bytes) does
    not fit in its owner's quota beside everything else they keep (its own earlier build, if
    it was checked before, aside); the message is for the owner. Inside a transaction, lock
    the owner's storage first (:func:`lock_storage`) so that checks at once cannot pass
    together."""
    owner = version.bot.owner
    quota = storage_quota(owner)
    if quota is None:
        return
    earlier = BotVersion.objects.filter(pk=version.pk).values_list("built_size", flat=True)
    used = storage_used(owner) - sum(earlier)
    if used + built_size > quota:
        built = f"the built bot ({_megabytes(built_size)}) does not fit in"
        raise QuotaExceeded(
            f"{built} your storage quota: {_room(used, quota)}; {_MAKE_ROOM}",
            public=f"{built} its owner's storage quota",
        )


def lock_storage(owner_id: int) -> None:
    """In a transaction: hold the user's row, whose storage is about to grow, so that uploads
    and checks at once meet the quota one at a time (PostgreSQL; SQLite serialises
    transactions)."""
    User.objects.select_for_update().filter(pk=owner_id).first()


def _declared_size(upload: IO[bytes]) -> int:
    """The upload's size as it says (checked again while it is stored)."""
    size = getattr(upload, "size", None)
    if size is not None:
        return int(size)
    upload.seek(0, os.SEEK_END)
    end = upload.tell()
    upload.seek(0)
    return end


def _reserve(user: User, size: int) -> None:
    """In the transaction that creates a version: the quota check again, with the stored
    size and the user's row locked, so that uploads at once cannot pass it together."""
    if storage_quota(user) is not None:
        lock_storage(user.pk)
        check_quota(user, size)


#: The names of people's seats (:func:`seat_of`), which no bot may take.
SEAT_NAME_RE = re.compile(r"person-[0-9]+")


def validate_name(name: str) -> str:
    """A bot name (:data:`~arena.bots.models.NAME_RULE`), not one of the built-in bots'."""
    if not NAME_RE.match(name or ""):
        raise UploadError(f"{name!r} cannot be a bot name: a name is {NAME_RULE}")
    if name in settings.BUILTIN_BOTS or name == settings.RATING_ANCHOR_BOT:
        raise UploadError(f"{name!r} is the name of a built-in bot")
    if SEAT_NAME_RE.fullmatch(name):
        raise UploadError(f"{name!r} cannot be a bot name: person-<number> names people's seats")
    return name


def create_bot(
    owner: User | AnonymousUser,
    name: str,
    upload: IO[bytes],
    *,
    filename: str = "",
    description: str = "",
) -> BotVersion:
    """Create a bot and its first version from an upload (PENDING; its check is queued).

    Raises :class:`UploadError` (:class:`QuotaExceeded` over the owner's storage quota) or
    :class:`~arena.core.throttles.Throttled` (too many uploads); nothing is stored then."""
    if not owner.is_authenticated:
        raise PermissionDenied("log in to upload a bot")
    with throttles.limited(owner, "upload"):
        validate_name(name)
        if Bot.objects.filter(name=name).exists():
            raise UploadError(f"a bot called {name!r} exists already")
        check_quota(owner, _declared_size(upload))
        stored = store_upload(upload, filename or getattr(upload, "name", "") or "bot")
        try:
            with transaction.atomic():
                bot = Bot.objects.create(name=name, owner=owner, description=description.strip())
                _reserve(bot.owner, stored.size)
                version = _new_version(bot, stored)
        except IntegrityError:
            raise UploadError(f"a bot called {name!r} exists already") from None
    return version


def add_version(
    user: User | AnonymousUser, bot: Bot, upload: IO[bytes], *, filename: str = ""
) -> BotVersion:
    """Upload a new version of a bot (owner only). PENDING; its check is queued."""
    _require_manager(user, bot)
    if bot.status != Bot.Status.ACTIVE:
        raise UploadError(f"{bot.name} was withdrawn")
    with throttles.limited(user, "upload"):
        # The room is the owner's (an operator may upload for them).
        check_quota(bot.owner, _declared_size(upload))
        stored = store_upload(upload, filename or getattr(upload, "name", "") or "bot")
        with transaction.atomic():
            _reserve(bot.owner, stored.size)
            version = _new_version(bot, stored)
    return version


def _new_version(bot: Bot, stored: StoredUpload) -> BotVersion:
    # Lock the bot row so that two uploads at once get different numbers (PostgreSQL; SQLite
    # transactions are already serialised); the unique constraint backs this up.
    Bot.objects.select_for_update().filter(pk=bot.pk).first()
    last = bot.versions.aggregate(n=Max("number"))["n"] or 0
    version = BotVersion.objects.create(
        bot=bot,
        number=last + 1,
        sha256=stored.sha256,
        kind=stored.kind,
        filename=stored.filename,
        size=stored.size,
        queued_at=timezone.now(),
    )
    claims.dispatch(version)
    return version


def remote_variants(variants: Iterable[str] | None) -> str:
    """A remote bot's variants as :attr:`BotVersion.variants` stores them (every variant when
    none are named); :class:`UploadError` names an unknown one."""
    names = list(variants or [])
    unknown = [v for v in names if v not in engine.VARIANTS]
    if unknown:
        raise UploadError(
            f"unknown variant {unknown[0]!r}; the variants are {', '.join(engine.VARIANTS)}"
        )
    if not names:
        return every_variant()
    return ",".join(v for v in engine.VARIANTS if v in names)


def create_remote_bot(
    owner: User | AnonymousUser,
    name: str,
    *,
    variants: Iterable[str] | None = None,
    description: str = "",
) -> BotVersion:
    """Register a remote bot, one whose program runs on its owner's machine and plays over
    HTTP (:mod:`arena.games.remote`), with its first version: active at once (there is no
    upload to check). It plays tests and challenges, never the ladder."""
    if not owner.is_authenticated:
        raise PermissionDenied("log in to register a bot")
    with throttles.limited(owner, "upload"):
        validate_name(name)
        stored = remote_variants(variants)
        if Bot.objects.filter(name=name).exists():
            raise UploadError(f"a bot called {name!r} exists already")
        try:
            with transaction.atomic():
                bot = Bot.objects.create(
                    name=name,
                    owner=owner,
                    description=description.strip(),
                    kind=Bot.Kind.REMOTE,
                )
                version = _new_remote_version(bot, stored)
        except IntegrityError:
            raise UploadError(f"a bot called {name!r} exists already") from None
    return version


def seat_of(user: User) -> BotVersion:
    """The version that plays ``user``'s side when they play a bot in the browser
    (:mod:`arena.games.people`): the active version of their seat, a bot of kind
    :attr:`Bot.Kind.PERSON` named ``person-<user id>`` that plays every variant, made the first
    time. The site lists it nowhere as a bot; its games show the user's name."""
    name = f"person-{user.pk}"
    with transaction.atomic():
        bot, _ = Bot.objects.get_or_create(
            name=name, defaults={"owner": user, "kind": Bot.Kind.PERSON}
        )
        if bot.owner_id != user.pk or bot.kind != Bot.Kind.PERSON:
            raise UploadError(f"the name {name!r} is taken by another bot")
        version = bot.versions.filter(status=V.ACTIVE).first()
        if version is None:
            version = _new_remote_version(bot, every_variant())
    return version


def add_remote_version(
    user: User | AnonymousUser, bot: Bot, *, variants: Iterable[str] | None = None
) -> BotVersion:
    """A new version of a remote bot (owner only), when its owner changed its program: active
    at once, the previous one retired (its games and rating stay its own). ``variants`` as
    the previous version's when not given."""
    _require_manager(user, bot)
    if not bot.remote:
        raise UploadError(f"{bot.name} is not a remote bot: upload its new version")
    if bot.status != Bot.Status.ACTIVE:
        raise UploadError(f"{bot.name} was withdrawn")
    with throttles.limited(user, "upload"):
        if variants is None:
            last = bot.versions.order_by("-number").values_list("variants", flat=True).first()
            stored = last or every_variant()
        else:
            stored = remote_variants(variants)
        with transaction.atomic():
            version = _new_remote_version(bot, stored)
    return version


def _new_remote_version(bot: Bot, variants: str) -> BotVersion:
    who = "a remote bot" if bot.kind == Bot.Kind.REMOTE else "a person"
    Bot.objects.select_for_update().filter(pk=bot.pk).first()
    last = bot.versions.aggregate(n=Max("number"))["n"] or 0
    version = BotVersion.objects.create(
        bot=bot,
        number=last + 1,
        status=V.RETIRED,
        sha256="",
        kind=BotVersion.Kind.REMOTE,
        filename="",
        size=0,
        variants=variants,
        declared_name=bot.name,
        checked_at=timezone.now(),
        report=[f"{who}: nothing to check"],
    )
    retire_active(bot.pk, keep=version.pk)
    BotVersion.objects.filter(pk=version.pk).update(status=V.ACTIVE)
    version.status = V.ACTIVE
    return version


def update_bot(
    user: User | AnonymousUser, bot: Bot, *, description: str | None = None, **choices: bool
) -> Bot:
    """Change a bot's description and its owner's choices (:attr:`Bot.CHOICES`: whether it
    accepts rated challenges and other people's rated tournaments, enters scheduled
    tournaments, answers on the analysis board, lets people play it, plays on the open ladder),
    those given (owner only); the name never changes. Only a sandboxed bot chooses the open
    ladder: a remote bot always plays there."""
    _require_manager(user, bot)
    unknown = set(choices) - set(Bot.CHOICES)
    if unknown:
        raise TypeError(f"not a choice of a bot's owner: {', '.join(sorted(unknown))}")
    if "open_ladder" in choices and bot.kind != Bot.Kind.UPLOAD:
        raise UploadError(
            f"{bot.name} is not a sandboxed bot: a remote bot plays on the open ladder "
            "whenever its client is connected, and a person's seat never does"
        )
    fields = list(choices)
    if description is not None:
        bot.description = description.strip()
        fields.append("description")
    for name, value in choices.items():
        setattr(bot, name, value)
    if fields:
        bot.save(update_fields=fields)
    return bot


def delete_bot(user: User | AnonymousUser, bot: Bot) -> str:
    """Delete a bot that never played (owner only); one that did is withdrawn instead: its
    versions are retired and keep their games and ratings. Returns "deleted" or "withdrawn".

    Whether it played is the database's answer: matches and tournament entries protect the
    versions they name. The apps above hear of a withdrawal through :data:`bot_withdrawn`
    (the games app cancels the bot's ladder matches still waiting).
    """
    _require_manager(user, bot)
    with transaction.atomic():
        try:
            with transaction.atomic():
                bot.delete()
            return "deleted"
        except ProtectedError:
            pass
        versions = list(bot.versions.values_list("pk", flat=True))
        Bot.objects.filter(pk=bot.pk).update(status=Bot.Status.WITHDRAWN)
        bot.versions.filter(status=V.ACTIVE).update(status=V.RETIRED)
        bot.versions.filter(status__in=[V.PENDING, V.CHECKING, V.HELD]).update(
            status=V.REJECTED, reason="the bot was withdrawn by its owner"
        )
        bot_withdrawn.send(sender=Bot, bot_id=bot.pk, version_ids=versions)
    return "withdrawn"


class ActivationError(Refused, ValueError):
    """A version that cannot be made the active one; the message says why (409: the
    version's state, not the request, is in the way)."""

    status = 409


def retire_active(bot_id: int, *, keep: int) -> list[int]:
    """ACTIVE -> RETIRED for the bot's active version other than ``keep`` (there is at most
    one); the apps above hear of it through :data:`versions_retired` (the games app cancels
    its ladder matches still waiting). Returns the versions retired."""
    active = BotVersion.objects.filter(bot_id=bot_id, status=V.ACTIVE).exclude(pk=keep)
    retired = list(active.values_list("pk", flat=True))
    if retired and active.filter(pk__in=retired).update(status=V.RETIRED):
        versions_retired.send(sender=Bot, bot_id=bot_id, version_ids=retired)
    return retired


def activate(user: User | AnonymousUser, version: BotVersion) -> BotVersion:
    """Make a retired version the bot's active one again (owner only): the version active
    until now is retired, keeping its games and rating, as a version that passes its check
    does. Only a version that passed its check (now retired) of a bot not withdrawn can be
    activated; anything else raises :class:`ActivationError` and changes nothing. Activating
    the active version does nothing. Returns the version as it is now.
    """
    bot = version.bot
    _require_manager(user, bot)
    try:
        with transaction.atomic():
            # One change of a bot's active version at a time (PostgreSQL; SQLite serialises
            # transactions), backed by the one-active-version-per-bot constraint.
            locked = Bot.objects.select_for_update().filter(pk=bot.pk).first()
            if locked is None or locked.status != Bot.Status.ACTIVE:
                raise ActivationError(f"{bot.name} was withdrawn: none of its versions can play")
            current = BotVersion.objects.get(pk=version.pk)
            if current.status == V.ACTIVE:
                return current
            if current.status != V.RETIRED:
                raise ActivationError(
                    f"{current.label} is {current.get_status_display()}: only a version that "
                    "passed its check (a retired one) can be made active"
                )
            retire_active(bot.pk, keep=current.pk)
            if not BotVersion.objects.filter(pk=current.pk, status=V.RETIRED).update(
                status=V.ACTIVE
            ):
                raise ActivationError(f"{current.label} changed meanwhile; try again")
    except IntegrityError:
        raise ActivationError(
            f"another version of {bot.name} became active meanwhile; try again"
        ) from None
    return BotVersion.objects.select_related("bot").get(pk=version.pk)


def source_file(user: User | AnonymousUser, version: BotVersion) -> File[Any]:
    """The stored upload of a version, open for its owner to download."""
    _require_manager(user, version.bot)
    if version.kind == BotVersion.Kind.REMOTE:
        raise Http404("a remote bot's version has no file")
    return store.open(version.sha256)


def source_filename(version: BotVersion) -> str:
    if version.kind == FILE:
        return version.filename
    stem = re.sub(r"(\.tar\.gz|\.tgz|\.zip)$", "", version.filename) or version.bot.name
    return f"{stem}.{version.kind}" if version.kind != TARGZ else f"{stem}.tar.gz"


# ----------------------------------------------------------------------------- the check
#
# The check itself (unpacking, the protocol check, the qualification games) and its verdict
# are :mod:`arena.admission`'s; its claim is :mod:`arena.jobs.claims`'.


def recheck(version_ids: Iterable[int]) -> int:
    """Check rejected or held versions again (an operator's action, e.g. after a worker
    problem was mended). Returns how many were queued."""
    n = 0
    for pk in version_ids:
        with transaction.atomic():
            if BotVersion.objects.filter(pk=pk, status__in=[V.REJECTED, V.HELD]).update(
                status=V.PENDING, queued_at=timezone.now(), attempts=0, reason=""
            ):
                claims.dispatch(BotVersion.objects.get(pk=pk))
                n += 1
    return n


# ----------------------------------------------------------------------------- built-in bots


_SKIP = {"__pycache__", ".git", ".mypy_cache", ".pytest_cache"}


def pack_folder(folder: Path) -> bytes:
    """A bot folder as a .tar.gz whose bytes depend on the files only (sorted names, no
    times, no owners), so that the same folder always has the same hash."""
    buf = io.BytesIO()
    with (
        gzip.GzipFile(fileobj=buf, mode="wb", mtime=0, compresslevel=9) as gz,
        tarfile.open(fileobj=gz, mode="w", format=tarfile.GNU_FORMAT) as tar,
    ):
        for path in sorted(_files(folder), key=lambda p: p.relative_to(folder).as_posix()):
            rel = path.relative_to(folder).as_posix()
            info = tarfile.TarInfo(rel)
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            if path.is_dir():
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
                continue
            data = path.read_bytes()
            info.size = len(data)
            info.mode = 0o755 if os.access(path, os.X_OK) else 0o644
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _files(folder: Path) -> list[Path]:
    out = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP)
        base = Path(dirpath)
        out += [base / d for d in dirnames]
        out += [base / f for f in filenames if not f.endswith((".pyc", ".pyo"))]
    return [p for p in out if not p.is_symlink()]


def system_user() -> User:
    """The user that owns the built-in bots (made on first use; it cannot log in)."""
    user_model = get_user_model()
    user, created = user_model.objects.get_or_create(username=settings.SYSTEM_USERNAME)
    if created:
        user.set_unusable_password()
        user.save(update_fields=["password"])
    return user


def register_builtin_bots(
    folder: Path | None = None, names: Iterable[str] | None = None
) -> list[BotVersion]:
    """Register the built-in bots (trusted, owned by the system user, people may play them) from
    ``bots/``: a new version whenever a bot's files changed. They are checked like any upload.
    Those of ``BUILTIN_OPEN_LADDER`` are registered on the open ladder too (when first
    registered: an operator may change it). Returns the new versions."""
    folder = Path(folder or settings.BUILTIN_BOTS_DIR)
    owner = system_user()
    created = []
    for name in names if names is not None else settings.BUILTIN_BOTS:
        path = folder / name
        manifest = path / "bot.toml"
        if not manifest.is_file():
            log.warning("built-in bot %s: no %s", name, manifest)
            continue
        data = pack_folder(path)
        stored = store.put_bytes(data)
        with transaction.atomic():
            bot = Bot.objects.filter(name=name).first()
            if bot is None:
                try:
                    description = str(tomllib.loads(manifest.read_text()).get("description", ""))
                except (tomllib.TOMLDecodeError, UnicodeDecodeError):
                    description = ""
                bot = Bot.objects.create(
                    name=name,
                    owner=owner,
                    trusted=True,
                    description=description,
                    people=True,
                    open_ladder=name in settings.BUILTIN_OPEN_LADDER,
                )
            elif bot.owner_id != owner.pk or not bot.trusted:
                log.error("built-in bot %s: the name belongs to another user; skipped", name)
                continue
            latest = bot.versions.order_by("-number").first()
            if latest is not None and latest.sha256 == stored[0]:
                continue
            created.append(
                _new_version(bot, StoredUpload(stored[0], stored[1], TARGZ, f"{name}.tar.gz"))
            )
    return created


def builtin_copy(bot_name: str, builtin: str, status: str) -> BotVersion:
    """A new version of the bot ``bot_name`` (made for the system user, trusted, if new) with
    the files of the built-in bot ``builtin``, set directly to ``status`` without a check: for
    the arena's own measurements (benchmarks, chaos runs), whose players are its own code."""
    sha, size = store.put_bytes(pack_folder(Path(settings.BUILTIN_BOTS_DIR) / builtin))
    bot, _ = Bot.objects.get_or_create(
        name=bot_name, defaults={"owner": system_user(), "trusted": True}
    )
    return BotVersion.objects.create(
        bot=bot,
        number=bot.versions.count() + 1,
        status=status,
        sha256=sha,
        kind=TARGZ,
        filename=f"{builtin}.tar.gz",
        size=size,
    )


# ----------------------------------------------------------------------------- reading


@dataclass(frozen=True)
class OwnedBot:
    """One of a user's bots and its versions, newest first."""

    bot: Bot
    versions: list[BotVersion]


def bots_of(user: User) -> list[OwnedBot]:
    """The user's bots by name, each with its versions (two queries)."""
    bots = list(Bot.objects.filter(owner=user).exclude(kind=Bot.Kind.PERSON).order_by("name"))
    by_bot: dict[int, list[BotVersion]] = {b.pk: [] for b in bots}
    for v in BotVersion.objects.filter(bot__in=bots).order_by("bot_id", "-number"):
        by_bot[v.bot_id].append(v)
    return [OwnedBot(b, by_bot[b.pk]) for b in bots]
