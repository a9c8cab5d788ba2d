"""Copy the bot store from one storage to another (a folder into the database, the database
into an object store, ...): ``manage.py move_bot_store --from folder:/srv/bot-store --to
default``. Every file's bytes are checked against their hash on the way; the source is never
changed, so the command can be run again (it copies only what the target lacks)."""

from __future__ import annotations

import hashlib
import tempfile
from typing import Any

from django.conf import settings
from django.core.files.storage import Storage, storages
from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.bots import store
from arena.env import bot_storage


def open_storage(value: str) -> Storage:
    """``default`` (the store the settings name) or a value as ``ARENA_BOT_STORAGE`` takes."""
    if value == "default":
        return store.storage()
    try:
        return storages.create_storage(bot_storage(value, settings.BOT_STORE_DIR))
    except ValueError as e:
        raise CommandError(str(e)) from None


class Command(BaseCommand):
    help = (
        "Copy every file of one bot store into another, checking each against its hash. "
        "Stores: default (ARENA_BOT_STORAGE), database, folder, folder:/path, s3://bucket/prefix."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--from", dest="source", required=True, help="the store to copy")
        parser.add_argument("--to", dest="target", default="default", help="where to copy it")
        parser.add_argument(
            "--dry-run", action="store_true", help="only count what would be copied"
        )

    def handle(self, *args: object, **options: Any) -> None:
        if options["source"] == options["target"]:
            raise CommandError("--from and --to name the same store")
        source, target = open_storage(options["source"]), open_storage(options["target"])
        dry_run: bool = options["dry_run"]
        copied = present = 0
        damaged: list[str] = []
        for sha256 in store.hashes(source):
            if target.exists(store.name(sha256)):
                present += 1
                continue
            with tempfile.TemporaryFile() as tmp:
                h = hashlib.sha256()
                with source.open(store.name(sha256), "rb") as f:
                    while block := f.read(1 << 20):
                        h.update(block)
                        tmp.write(block)
                if h.hexdigest() != sha256:
                    damaged.append(sha256)
                    self.stderr.write(f"{store.name(sha256)}: its bytes do not match their hash")
                    continue
                if not dry_run:
                    tmp.seek(0)
                    store.save(sha256, tmp, into=target)
                copied += 1
        verb = "would copy" if dry_run else "copied"
        self.stdout.write(
            f"{verb} {copied} files; {present} already there; {len(damaged)} damaged (not copied)"
        )
        if damaged:
            raise CommandError(f"{len(damaged)} files of the source do not match their hash")
