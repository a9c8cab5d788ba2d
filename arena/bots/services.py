"""Bot state transitions: upload, new version, check, edit, withdraw; the built-in bots.

The web process (views, API, the ``uploadbot`` command) calls :func:`create_bot` and
:func:`add_version`, which check the upload's size and type, store its bytes by hash and
create a PENDING version; nothing is unpacked there. A worker runs :func:`check_version`:
unpack safely, the protocol conformance check, a few games against the built-in ``random``
bot; then the version is ACTIVE (and the previous one RETIRED) or REJECTED with a reason.
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
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from threading import Event
from typing import TYPE_CHECKING, Any, BinaryIO

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError, transaction
from django.db.models import F, Max
from django.utils import timezone

from arena.bots import store
from arena.bots.models import Bot, BotVersion
from arena.bots.unpack import (
    FILE,
    TARGZ,
    StoredFileError,
    UnpackError,
    UploadError,
    detect_kind,
    safe_filename,
)
from arena.referee.match import RefereeError, TimeControl
from arena.referee.sandbox import SandboxUnavailable, SlotsExhausted

if TYPE_CHECKING:
    from arena.games.services import SweepReport
    from arena.referee.bots import BotSpec
    from arena.referee.match import GameResult

log = logging.getLogger(__name__)
V = BotVersion.Status
NAME_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{1,39}$")

__all__ = [
    "UploadError",
    "add_version",
    "can_manage",
    "check_version",
    "create_bot",
    "delete_bot",
    "register_builtin_bots",
    "update_bot",
]


# ----------------------------------------------------------------------------- permissions


def can_manage(user: Any, bot: Bot) -> bool:
    """Whether ``user`` may change the bot, upload versions, delete it or read its source."""
    return bool(
        user is not None
        and user.is_authenticated
        and (user.pk == bot.owner_id or user.is_superuser)
    )


def _require_manager(user: Any, bot: Bot) -> None:
    if not can_manage(user, bot):
        raise PermissionDenied(f"only the owner of {bot.name} may do this")


# ----------------------------------------------------------------------------- uploads


@dataclass(frozen=True)
class StoredUpload:
    sha256: str
    size: int
    kind: str
    filename: str


def _chunks(upload: BinaryIO) -> Iterable[bytes]:
    chunks = getattr(upload, "chunks", None)
    if chunks is not None:
        yield from chunks()
        return
    while block := upload.read(1 << 20):
        yield block


def store_upload(upload: BinaryIO, filename: str) -> StoredUpload:
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


def validate_name(name: str) -> str:
    """A bot name: 2 to 40 of a-z, 0-9, - and _, starting with a letter or digit; not one of
    the built-in bots' names."""
    if not NAME_RE.match(name or ""):
        raise UploadError(
            "a bot name is 2 to 40 characters: lower-case letters, digits, - and _, "
            "starting with a letter or a digit"
        )
    if name in settings.BUILTIN_BOTS or name == settings.RATING_ANCHOR_BOT:
        raise UploadError(f"{name!r} is the name of a built-in bot")
    return name


def create_bot(
    owner: Any, name: str, upload: BinaryIO, *, filename: str = "", description: str = ""
) -> BotVersion:
    """Create a bot and its first version from an upload (PENDING; its check is queued)."""
    if not getattr(owner, "is_authenticated", False):
        raise PermissionDenied("log in to upload a bot")
    validate_name(name)
    if Bot.objects.filter(name=name).exists():
        raise UploadError(f"a bot called {name!r} exists already")
    stored = store_upload(upload, filename or getattr(upload, "name", "") or "bot")
    try:
        with transaction.atomic():
            bot = Bot.objects.create(name=name, owner=owner, description=description.strip())
            return _new_version(bot, stored)
    except IntegrityError:
        raise UploadError(f"a bot called {name!r} exists already") from None


def add_version(user: Any, bot: Bot, upload: BinaryIO, *, filename: str = "") -> BotVersion:
    """Upload a new version of a bot (owner only). PENDING; its check is queued."""
    _require_manager(user, bot)
    if bot.status != Bot.Status.ACTIVE:
        raise UploadError(f"{bot.name} was withdrawn")
    stored = store_upload(upload, filename or getattr(upload, "name", "") or "bot")
    with transaction.atomic():
        return _new_version(bot, stored)


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
        check_queued_at=timezone.now(),
    )
    dispatch_check(version.pk)
    return version


def update_bot(user: Any, bot: Bot, *, description: str) -> Bot:
    """Change a bot's description (owner only); the name never changes."""
    _require_manager(user, bot)
    bot.description = description.strip()
    bot.save(update_fields=["description"])
    return bot


def delete_bot(user: Any, bot: Bot) -> str:
    """Delete a bot that never played (owner only); one that did is withdrawn instead: its
    versions are retired and keep their games and ratings. Returns "deleted" or "withdrawn"."""
    from arena.games.models import Match

    _require_manager(user, bot)
    with transaction.atomic():
        versions = bot.versions.values_list("pk", flat=True)
        played = (
            Match.objects.filter(white__in=versions).exists()
            or Match.objects.filter(black__in=versions).exists()
        )
        entered = bot.versions.filter(entries__isnull=False).exists()
        if not played and not entered:
            bot.delete()
            return "deleted"
        Bot.objects.filter(pk=bot.pk).update(status=Bot.Status.WITHDRAWN)
        bot.versions.filter(status=V.ACTIVE).update(status=V.RETIRED)
        bot.versions.filter(status__in=[V.PENDING, V.CHECKING]).update(
            status=V.REJECTED, reason="the bot was withdrawn by its owner"
        )
        Match.objects.filter(
            kind=Match.Kind.LADDER,
            status__in=[Match.Status.PENDING, Match.Status.QUEUED],
        ).filter(white__in=versions).update(status=Match.Status.CANCELLED)
        Match.objects.filter(
            kind=Match.Kind.LADDER,
            status__in=[Match.Status.PENDING, Match.Status.QUEUED],
        ).filter(black__in=versions).update(status=Match.Status.CANCELLED)
    return "withdrawn"


def source_path(user: Any, version: BotVersion) -> Path:
    """The stored upload of a version, for its owner to download."""
    _require_manager(user, version.bot)
    return store.path(version.sha256)


def source_filename(version: BotVersion) -> str:
    if version.kind == FILE:
        return version.filename
    stem = re.sub(r"(\.tar\.gz|\.tgz|\.zip)$", "", version.filename) or version.bot.name
    return f"{stem}.{version.kind}" if version.kind != TARGZ else f"{stem}.tar.gz"


# ----------------------------------------------------------------------------- the check


def check_budget() -> tuple[int, int]:
    """(soft, hard) time limits of a check task: the conformance games and the
    qualification games at the qualification time control."""
    from arena.games import runner

    check_soft, _ = runner.time_limits(settings.CHECK_TIME_CONTROL, games=settings.CHECK_GAMES)
    games_soft, _ = runner.time_limits(
        settings.QUALIFICATION_TIME_CONTROL, games=settings.QUALIFICATION_GAMES
    )
    soft = check_soft + games_soft
    return soft, soft + 30


def dispatch_check(version_id: int) -> None:
    """Send the version's check task once the current transaction commits."""
    from arena.bots import tasks

    soft, hard = check_budget()

    def send() -> None:
        tasks.check_version.apply_async((version_id,), soft_time_limit=soft, time_limit=hard)

    transaction.on_commit(send, robust=True)


@dataclass
class CheckOutcome:
    """What a check found; ``accepted`` or not, with the lines to show the owner."""

    accepted: bool
    lines: list[str]
    reason: str = ""
    transcript: dict[str, Any] | None = None
    stderr_tail: str = ""
    spec: BotSpec | None = None
    games: list[tuple[BotVersion, BotVersion, GameResult]] = field(default_factory=list)


def _claim_check(version_id: int) -> int | None:
    now = timezone.now()
    with transaction.atomic():
        if not BotVersion.objects.filter(pk=version_id, status=V.PENDING).update(
            status=V.CHECKING,
            check_started_at=now,
            heartbeat_at=now,
            check_attempts=F("check_attempts") + 1,
        ):
            return None
        return BotVersion.objects.values_list("check_attempts", flat=True).get(pk=version_id)


def _beat_check(version_id: int, attempt: int) -> bool:
    return (
        BotVersion.objects.filter(pk=version_id, status=V.CHECKING, check_attempts=attempt).update(
            heartbeat_at=timezone.now()
        )
        == 1
    )


def _requeue_check(version_id: int, attempt: int, reason: str) -> bool:
    """CHECKING -> PENDING (REJECTED once out of attempts). True if it can be sent again."""
    checking = BotVersion.objects.filter(pk=version_id, status=V.CHECKING, check_attempts=attempt)
    if attempt >= settings.MATCH_MAX_ATTEMPTS:
        checking.update(
            status=V.REJECTED,
            checked_at=timezone.now(),
            reason=f"the check could not be completed after {attempt} attempts ({reason})",
        )
        return False
    return bool(checking.update(status=V.PENDING, check_queued_at=timezone.now()))


def check_version(version_id: int) -> str:
    """Claim a pending version and check it (what the ``check_version`` task does).

    Raises :class:`arena.games.services.InfrastructureError` after putting the version back
    when the failure was not the bot's.
    """
    from arena.games import runner
    from arena.games.services import InfrastructureError, _retrying

    attempt = _claim_check(version_id)
    if attempt is None:
        return "not pending"
    version = BotVersion.objects.select_related("bot").get(pk=version_id)
    with runner.Heartbeat(
        lambda: _beat_check(version_id, attempt), settings.MATCH_HEARTBEAT_S
    ) as hb:
        try:
            outcome = _run_check(version, hb.cancel)
        except (
            RefereeError,
            SandboxUnavailable,
            SlotsExhausted,
            StoredFileError,
            SoftTimeLimitExceeded,
            OSError,
        ) as e:
            _requeue_check(version_id, attempt, f"{type(e).__name__}: {e}")
            raise InfrastructureError(f"{type(e).__name__}: {e}") from e
    if outcome is None:
        return "lost its claim"
    if _retrying(lambda: _close_check(version_id, attempt, outcome)):
        return "active" if outcome.accepted else "rejected"
    return "lost its claim"


def _qualification_opponent(version: BotVersion) -> BotVersion | None:
    """The anchor bot's version the new version plays (None: play itself)."""
    from arena.games.ratings import anchor_version_id

    anchor = anchor_version_id()
    if anchor is None or anchor == version.pk:
        others = BotVersion.objects.filter(
            bot__name=settings.RATING_ANCHOR_BOT, bot__trusted=True, status=V.ACTIVE
        ).exclude(pk=version.pk)
        return others.select_related("bot").first()
    return BotVersion.objects.select_related("bot").get(pk=anchor)


def _run_check(version: BotVersion, cancel: Event) -> CheckOutcome | None:
    """Unpack, check the protocol, play the qualification games. None when cancelled."""
    from arena.games import runner
    from arena.referee.checkbot import check_bot

    lines: list[str] = []
    try:
        spec = runner.load_spec(version)
    except UnpackError as e:
        reason = f"the upload cannot be used: {e}"
        return CheckOutcome(False, [reason], reason=reason)
    lines.append(f"unpacked: {spec.name} (command: {' '.join(spec.command)})")
    report = check_bot(
        spec,
        referee=runner.referee(),
        variant="yinsh",
        games=settings.CHECK_GAMES,
        time=TimeControl.parse(settings.CHECK_TIME_CONTROL),
    )
    lines += list(report.lines)
    if not report.ok:
        failing = [line[4:].strip() for line in report.lines if line.startswith("FAIL")]
        reason = "the protocol check failed" + (f": {failing[0]}" if failing else "")
        return CheckOutcome(
            False,
            lines,
            reason=reason,
            transcript=report.transcript,
            stderr_tail=report.stderr_tail,
            spec=spec,
        )
    opponent = _qualification_opponent(version)
    opponent_spec = runner.load_spec(opponent) if opponent is not None else spec
    opponent_label = opponent.label if opponent is not None else version.label
    games: list[tuple[BotVersion, BotVersion, GameResult]] = []
    variants = settings.LADDER_VARIANTS or ["yinsh"]
    referee = runner.referee()
    for i in range(settings.QUALIFICATION_GAMES):
        variant = variants[i % len(variants)]
        mine = "white" if i % 2 == 0 else "black"
        pair = (spec, opponent_spec) if mine == "white" else (opponent_spec, spec)
        labels = (
            (version.label, opponent_label) if mine == "white" else (opponent_label, version.label)
        )
        config = runner.game_config(
            variant=variant,
            white=pair[0],
            black=pair[1],
            white_label=labels[0],
            black_label=labels[1],
            time_control=settings.QUALIFICATION_TIME_CONTROL,
            seed=version.pk * 100 + i,
            event=f"{settings.SITE_NAME} qualification",
        )
        result = referee.play(config, cancel=cancel)
        if result.aborted:
            if cancel.is_set():
                return None
            raise RefereeError(f"qualification game {i + 1} was aborted: {result.reason}")
        lines.append(
            f"qualification game {i + 1} ({variant}, as {mine}, against {opponent_label}): "
            f"{result.outcome.result.score}, {result.reason}"
        )
        if result.fault == mine:
            player = result.transcript.get("players", {}).get(mine, {})
            return CheckOutcome(
                False,
                lines,
                reason=f"qualification game {i + 1} lost by {result.outcome.termination.value}: "
                f"{result.reason}",
                transcript=result.transcript,
                stderr_tail=str(player.get("stderr_tail", "")),
                spec=spec,
            )
        me = version
        other = opponent or version
        games.append((me, other, result) if mine == "white" else (other, me, result))
    lines.append("passed: the version is active and will be rated")
    return CheckOutcome(True, lines, spec=spec, games=games)


class _LostClaim(Exception):
    pass


def _close_check(version_id: int, attempt: int, outcome: CheckOutcome) -> bool:
    """CHECKING -> ACTIVE (retiring the bot's previous version, storing the qualification
    games) or REJECTED, in one transaction guarded by the claim."""
    from arena.games.services import record_qualification

    now = timezone.now()
    spec = outcome.spec
    declared = {
        "declared_name": (spec.name if spec else "")[:64],
        "declared_version": (spec.version if spec else "")[:64],
        "command": (" ".join(spec.command) if spec else "")[:500],
    }
    try:
        with transaction.atomic():
            mine = BotVersion.objects.filter(
                pk=version_id, status=V.CHECKING, check_attempts=attempt
            )
            version = mine.select_related("bot").first()
            if version is None:
                return False
            if not outcome.accepted:
                mine.update(
                    status=V.REJECTED,
                    checked_at=now,
                    reason=outcome.reason[:4000],
                    report=outcome.lines,
                    transcript=outcome.transcript,
                    stderr_tail=outcome.stderr_tail[-8000:],
                    **declared,
                )
                return True
            withdrawn = version.bot.status != Bot.Status.ACTIVE
            if not withdrawn:
                BotVersion.objects.filter(bot_id=version.bot_id, status=V.ACTIVE).exclude(
                    pk=version_id
                ).update(status=V.RETIRED)
            if not mine.update(
                status=V.RETIRED if withdrawn else V.ACTIVE,
                checked_at=now,
                reason="",
                report=outcome.lines,
                transcript=None,
                stderr_tail="",
                **declared,
            ):
                raise _LostClaim()
            record_qualification(version, outcome.games)
    except _LostClaim:
        return False
    return True


def recheck(version_ids: Iterable[int]) -> int:
    """Check rejected versions again (an operator's action, e.g. after a worker problem was
    fixed). Returns how many were queued."""
    n = 0
    for pk in version_ids:
        with transaction.atomic():
            if BotVersion.objects.filter(pk=pk, status=V.REJECTED).update(
                status=V.PENDING, check_queued_at=timezone.now(), check_attempts=0
            ):
                dispatch_check(pk)
                n += 1
    return n


def sweep_checks(now: datetime, report: SweepReport) -> None:
    """The sweeper's part for checks: re-queue checks of dead workers, resend lost ones."""
    stale = now - timedelta(seconds=settings.MATCH_STALE_AFTER_S)
    for pk, attempt in BotVersion.objects.filter(
        status=V.CHECKING, heartbeat_at__lt=stale
    ).values_list("pk", "check_attempts"):
        with transaction.atomic():
            if _requeue_check(pk, attempt, "its worker stopped answering"):
                dispatch_check(pk)
                report.checks_requeued.append(pk)
            else:
                report.checks_rejected.append(pk)
    old = now - timedelta(seconds=settings.MATCH_RESEND_AFTER_S)
    for pk in BotVersion.objects.filter(status=V.PENDING, check_queued_at__lt=old).values_list(
        "pk", flat=True
    ):
        with transaction.atomic():
            if BotVersion.objects.filter(pk=pk, status=V.PENDING, check_queued_at__lt=old).update(
                check_queued_at=now
            ):
                dispatch_check(pk)
                report.checks_resent.append(pk)


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


def system_user() -> Any:
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
    """Register the built-in bots (trusted, owned by the system user) from ``bots/``: a new
    version whenever a bot's files changed. They are checked like any upload. Returns the new
    versions."""
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
                    name=name, owner=owner, trusted=True, description=description
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
