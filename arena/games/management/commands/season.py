"""Open, close and show the ladder's seasons (arena.games.seasons)."""

from __future__ import annotations

import argparse
import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena import stats
from arena.bots.models import Variant
from arena.games import seasons
from arena.games.models import Season


def date(text: str) -> dt.date:
    """A day written YYYY-MM-DD (an argument's type)."""
    try:
        return dt.date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a day as YYYY-MM-DD, not {text!r}") from None


class Command(BaseCommand):
    help = (
        "Seasons of the ladder: open one for a variant (its bots placed in divisions), close it "
        "(promotions and relegations, the standings kept), show them."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        actions = parser.add_subparsers(dest="action", required=True, metavar="open|close|show")
        opening = actions.add_parser("open", help="open a season of a variant")
        opening.add_argument("--variant", required=True, choices=Variant.values)
        opening.add_argument(
            "--division-size", type=int, help="bots per division (ARENA_SEASON_DIVISION_SIZE)"
        )
        opening.add_argument(
            "--movers",
            type=int,
            help="bots of each division that go up, and as many down (ARENA_SEASON_MOVERS)",
        )
        opening.add_argument("--name", default="", help="its name (else '<Variant> season N')")
        opening.add_argument("--ends", type=date, help="its last day, YYYY-MM-DD (UTC)")
        closing = actions.add_parser("close", help="close the open season of a variant")
        closing.add_argument("--variant", required=True, choices=Variant.values)
        showing = actions.add_parser("show", help="list the seasons, or one's standings")
        which = showing.add_mutually_exclusive_group()
        which.add_argument(
            "--variant", choices=Variant.values, help="the variant's open season, else its last"
        )
        which.add_argument("--season", type=int, help="the season with this id")

    def handle(self, *args: object, **options: Any) -> None:
        try:
            if options["action"] == "open":
                season = seasons.open_season(
                    options["variant"],
                    division_size=options["division_size"],
                    movers=options["movers"],
                    name=options["name"],
                    ends_on=options["ends"],
                )
                self.stdout.write(f"opened {self._about(season)}")
                self._standings(season)
            elif options["action"] == "close":
                season = seasons.close_variant(options["variant"])
                self.stdout.write(f"closed {self._about(season)}")
                self._standings(season)
            else:
                self._show(options["variant"], options["season"])
        except seasons.SeasonError as e:
            raise CommandError(str(e)) from None

    def _show(self, variant: str | None, pk: int | None) -> None:
        if pk is not None:
            season = Season.objects.filter(pk=pk).first()
            if season is None:
                raise CommandError(f"there is no season {pk}")
        elif variant is not None:
            season = (
                seasons.open_season_of(variant)
                or Season.objects.filter(variant=variant).order_by("-number").first()
            )
            if season is None:
                raise CommandError(f"no season of {variant} yet")
        else:
            listed = Season.objects.order_by("variant", "-number")
            for s in listed:
                self.stdout.write(self._about(s))
            if not listed:
                self.stdout.write("no season yet")
            return
        self.stdout.write(self._about(season))
        self._standings(season)

    def _about(self, s: Season) -> str:
        bots = s.entries.count()
        ends = f", ends {s.ends_on}" if s.ends_on else ""
        closed = f", closed {s.closed_at:%Y-%m-%d %H:%M}" if s.closed_at else ""
        return (
            f"#{s.pk} {s.title} ({s.variant}): {s.status}, opened {s.opened_at:%Y-%m-%d %H:%M}"
            f"{ends}{closed}; {bots} bots, divisions of {s.division_size}, {s.movers} up and "
            f"down"
        )

    def _standings(self, season: Season) -> None:
        moves = "moves" if not season.is_open else "if it closed now"
        for division in seasons.standings(season):
            self.stdout.write(f"\ndivision {division.number}")
            self.stdout.write(
                f"{'#':>3}  {'bot':<40} {'points':>7} {'games':>6} {'+':>4} {'=':>4} {'-':>4}"
                f" {'Elo':>6}  {moves}"
            )
            for r in division.rows:
                label = f"{r.bot.name} v{r.version.number}" if r.version else r.bot.name
                elo = f"{r.elo:.0f}" if r.elo is not None else "-"
                self.stdout.write(
                    f"{r.rank:>3}  {label:<40} {stats.format_points(r.points):>7} {r.games:>6} "
                    f"{r.wins:>4} {r.draws:>4} {r.losses:>4} {elo:>6}  {r.move_label}"
                )
