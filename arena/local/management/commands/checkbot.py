"""``manage.py checkbot BOT``: the conformance check, as a readable report."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.local import cli
from arena.referee.conformance import check_bot


class Command(BaseCommand):
    help = (
        "Check that a bot speaks the protocol: ready in time with a name, legal answers, whole "
        "games against the random bot in both colours and in every variant its bot.toml "
        "declares, a clean exit after end. Exits with a non-zero status if any check fails."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("bot", metavar="BOT", help="a bot folder or executable file")
        parser.add_argument(
            "--variant",
            default=None,
            help="check one variant (yinsh, blitz, yangsh, yangsh7); default: every variant "
            "the bot declares",
        )
        parser.add_argument(
            "--games",
            type=int,
            default=2,
            help="games to play at least (default 2); at least one per variant checked",
        )
        parser.add_argument("--time", default="60+1", help="clock of the games (60+1)")
        parser.add_argument(
            "--no-sandbox",
            action="store_true",
            help="run the bot as a plain process (only for a bot you trust)",
        )

    def handle(self, *args: object, **opts: Any) -> None:
        no_sandbox = opts["no_sandbox"]
        spec = cli.load_bot(opts["bot"], no_sandbox=no_sandbox)
        variants = spec.variants
        if opts["variant"] is not None:
            variant = cli.variant_name(opts["variant"])
            cli.require_variant(variant, spec)
            variants = (variant,)
        tc = cli.time_control(opts["time"])
        box = cli.make_sandbox(no_sandbox=no_sandbox)
        try:
            self.stdout.write(cli.describe_sandbox(box, no_sandbox=no_sandbox))
            spec = cli.build_bot(spec, cli.builder(box), self.stdout.write)
            self.stdout.write(f"Variants: {', '.join(variants)}")
            report = check_bot(spec, sandbox=box, variants=variants, games=opts["games"], time=tc)
        finally:
            box.close()
        for line in report.lines:
            self.stdout.write(line)
        if not report.ok:
            if report.stderr_tail.strip():
                self.stdout.write("\nThe end of the bot's standard error:")
                self.stdout.write(report.stderr_tail.rstrip()[-2000:])
            raise CommandError(f"{spec.name} does not conform")
