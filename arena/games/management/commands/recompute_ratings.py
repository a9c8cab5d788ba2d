"""Recompute every rating from the finished matches (the counts, then the fit)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from arena.games import ratings
from arena.games.models import Variant


class Command(BaseCommand):
    help = "Rebuild the per-pair counts from the matches and fit the ratings again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--variant", choices=Variant.values, help="only this variant")

    def handle(self, *args: object, **options: Any) -> None:
        for r in ratings.recompute(options["variant"]):
            self.stdout.write(
                f"{r.variant}: {r.players} versions, {r.pairs} pairs, {r.results} results, "
                f"fitted in {r.seconds:.2f} s"
            )
