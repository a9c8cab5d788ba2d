"""Upload a bot (or a new version of one) from the command line, as the site and API do."""

from __future__ import annotations

import io
import re
from pathlib import Path
from typing import IO, Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.core.files import File
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.bots import services
from arena.bots.models import Bot
from arena.bots.unpack import UploadError
from arena.core import throttles


class Command(BaseCommand):
    help = (
        "Upload a bot: a folder with bot.toml, a .zip or .tar.gz of one, or a single executable "
        "file. Makes the bot, or a new version of it when NAME exists (same owner)."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", type=Path, help="the bot folder, archive or file")
        parser.add_argument("--owner", required=True, help="the owner's username")
        parser.add_argument("--name", help="the bot's name (default: from the file name)")
        parser.add_argument("--description", default="")

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
            if bot is None:
                version = services.create_bot(
                    owner, name, upload, filename=filename, description=options["description"]
                )
            else:
                version = services.add_version(owner, bot, upload, filename=filename)
        except (UploadError, PermissionDenied, throttles.Throttled) as e:
            raise CommandError(str(e)) from None
        finally:
            upload.close()
        self.stdout.write(
            f"{version.label} uploaded ({version.size} bytes, sha256 {version.sha256[:12]}); "
            "its check is queued"
        )


def _default_name(path: Path) -> str:
    stem = re.sub(r"(\.tar\.gz|\.tgz|\.zip)$", "", path.name.lower())
    stem = re.sub(r"\.[a-z0-9]+$", "", stem) if path.is_file() else stem
    return re.sub(r"[^a-z0-9_-]+", "-", stem).strip("-")[:40] or "bot"
