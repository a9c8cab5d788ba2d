"""Register the built-in bots from bots/ (a new version when their files changed)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from arena.bots import services


class Command(BaseCommand):
    help = "Register the built-in bots (random, greedy, search) from bots/; they are checked."

    def handle(self, *args: object, **options: Any) -> None:
        created = services.register_builtin_bots()
        for v in created:
            self.stdout.write(f"registered {v.label}; its check is queued")
        if not created:
            self.stdout.write("the built-in bots are up to date")
