"""Recompute every rating from the finished matches (the counts, then the fit)."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from arena.bots.models import Variant
from arena.games import recount


class Command(BaseCommand):
    help = "Rebuild the per-pair counts from the matches and fit the ratings again."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--variant", choices=Variant.values, help="only this variant")

    def handle(self, *args: object, **options: Any) -> None:
        for r in recount.recompute(options["variant"]):
            self.stdout.write(
                f"{r.variant}: {r.players} versions, {r.pairs} pairs, {r.results} results, "
                f"fitted in {r.seconds:.2f} s"
            )
