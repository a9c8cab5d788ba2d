"""Upload a bot (or a new version of one) from the command line, as the site and API do; or,
with ``--trial``, try it in one game first, as the site's trials do."""

from __future__ import annotations

import io
import re
import time
from pathlib import Path
from typing import IO, Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.admission import trials
from arena.admission.models import Colour, Trial
from arena.bots import services
from arena.bots.models import Bot, Variant
from arena.bots.unpack import UploadError
from arena.core import throttles


class Command(BaseCommand):
    help = (
        "Upload a bot: a folder with bot.toml, a .zip or .tar.gz of one, or a single executable "
        "file. Makes the bot, or a new version of it when NAME exists (same owner); with "
        "--trial, plays it in one unrated game instead (as the site's trials)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the bot folder, archive or file")
        parser.add_argument("--owner", required=True, help="the owner's username")
        parser.add_argument("--name", help="the bot's name (default: from the file name)")
        parser.add_argument("--description", default="")
        trial = parser.add_argument_group(
            "trial", "play one unrated game first; nothing is published (--trial)"
        )
        trial.add_argument(
            "--trial", action="store_true", help="try the bot in one game instead of uploading it"
        )
        trial.add_argument("--variant", choices=Variant.values, default="yinsh")
        trial.add_argument("--colour", choices=Colour.values, default=Colour.WHITE)
        trial.add_argument(
            "--opponent", help="the bot whose active version it plays (default: random)"
        )
        trial.add_argument(
            "--wait",
            type=float,
            default=0,
            metavar="SECONDS",
            help="wait this long for a worker to play it, then print the game",
        )

    def handle(self, *args: object, **options: Any) -> None:
        path: Path = options["path"]
        if not path.exists():
            raise CommandError(f"{path}: no such file or folder")
        try:
            owner = get_user_model().objects.get(username=options["owner"])
        except get_user_model().DoesNotExist:
            raise CommandError(f"no user {options['owner']!r} (create it first)") from None
        name = options["name"] or _default_name(path)
        if path.is_dir():
            upload: IO[bytes] = io.BytesIO(services.pack_folder(path))
            filename = f"{path.name}.tar.gz"
        else:
            upload = File(path.open("rb"), name=path.name)
            filename = path.name
        try:
            bot = Bot.objects.filter(name=name).first()
            if options["trial"]:
                self._trial(owner, upload, filename, bot, options)
                return
            if bot is None:
                version = services.create_bot(
                    owner, name, upload, filename=filename, description=options["description"]
                )
            else:
                version = services.add_version(owner, bot, upload, filename=filename)
        except (UploadError, trials.TrialError, PermissionDenied, throttles.Throttled) as e:
            raise CommandError(str(e)) from None
        finally:
            upload.close()
        self.stdout.write(
            f"{version.label} uploaded ({version.size} bytes, sha256 {version.sha256[:12]}); "
            "its check is queued"
        )

    def _trial(
        self, owner: Any, upload: IO[bytes], filename: str, bot: Bot | None, options: Any
    ) -> None:
        opponent = None
        if options["opponent"]:
            opponent = trials.opponents().filter(bot__name=options["opponent"]).first()
            if opponent is None:
                raise CommandError(f"{options['opponent']!r} is no active bot")
        if bot is not None and bot.owner_id != owner.pk:
            bot = None  # a name taken by someone else: a new bot of another name, if published
        trial = trials.create(
            owner,
            upload,
            filename=filename,
            variant=options["variant"],
            colour=options["colour"],
            opponent=opponent,
            bot=bot,
        )
        self.stdout.write(
            f"trial #{trial.pk} queued: {trial.variant_title}, as {trial.colour}, "
            f"against {trial.opponent_label} (its page: {trial.get_absolute_url()})"
        )
        deadline = time.monotonic() + options["wait"]
        while not trial.done and time.monotonic() < deadline:
            time.sleep(0.5)
            trial.refresh_from_db()
        if not trial.done:
            if options["wait"]:
                raise CommandError(f"trial #{trial.pk} is still {trial.get_status_display()}")
            return
        report, stderr = trials.logs(trial)
        for line in report:
            self.stdout.write(line)
        if trial.status != Trial.Status.PLAYED:
            raise CommandError(f"trial #{trial.pk} could not play: {trials.reason_for(trial)}")
        self.stdout.write(trial.record)
        if stderr:
            self.stdout.write("standard error (the last lines):\n" + stderr)


def _default_name(path: Path) -> str:
    stem = re.sub(r"(\.tar\.gz|\.tgz|\.zip)$", "", path.name.lower())
    stem = re.sub(r"\.[a-z0-9]+$", "", stem) if path.is_file() else stem
    return re.sub(r"[^a-z0-9_-]+", "-", stem).strip("-")[:40] or "bot"
