"""Evict unused bots from this machine's caches now (workers also do it on their own)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.games import runner


class Command(BaseCommand):
    help = (
        "Remove the unpacked and built bots this machine has not run for "
        "ARENA_BOT_CACHE_IDLE_HOURS, then the least recently used beyond ARENA_BOT_CACHE_MAX_MB; "
        "never one a game is running."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--idle-hours", type=float, help="instead of ARENA_BOT_CACHE_IDLE_HOURS (0: none)"
        )
        parser.add_argument("--max-mb", type=float, help="instead of ARENA_BOT_CACHE_MAX_MB")

    def handle(self, *args: object, **options: Any) -> None:
        what = runner.Eviction.from_settings()
        if options["idle_hours"] is not None:
            if options["idle_hours"] < 0:
                raise CommandError("--idle-hours cannot be negative")
            what = runner.Eviction(what.folders, options["idle_hours"] * 3600, what.max_bytes)
        if options["max_mb"] is not None:
            if options["max_mb"] < 0:
                raise CommandError("--max-mb cannot be negative")
            what = runner.Eviction(what.folders, what.idle_s, int(options["max_mb"] * 2**20))
        report = runner.evict(what)
        if report is None:
            raise CommandError("the caches could not be read (the log says why)")
        self.stdout.write(
            f"removed {len(report.removed)} bots ({report.freed_bytes / 2**20:.1f} MiB); "
            f"{len(report.in_use)} kept because a game is running them; "
            f"{report.left_bytes / 2**20:.1f} MiB left"
        )
