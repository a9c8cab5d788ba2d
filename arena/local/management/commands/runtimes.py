"""``manage.py runtimes``: the languages bots can use on this host, with their versions."""

from __future__ import annotations

import json
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from arena.referee.runtimes import RUNTIMES, probe
from arena.referee.sandbox.settings import BOT_PATH


class Command(BaseCommand):
    help = (
        "List the runtimes bots can use on this host (Python, Node.js, Java, C, C++, Rust, Go): "
        "each tool's version as the bots' PATH finds it, or 'not installed'. docs/runtimes.md "
        "says how to add one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
        parser.add_argument(
            "--check",
            action="store_true",
            help="exit with a non-zero status if a tool is missing or gives no version",
        )

    def handle(self, *args: object, **opts: Any) -> None:
        reports = probe(RUNTIMES)
        if opts["json"]:
            data = {"path": BOT_PATH, "runtimes": [r.to_json() for r in reports]}
            self.stdout.write(json.dumps(data, indent=1))
        else:
            rows = [("language", "runtime", "command", "version", "path")]
            for report in reports:
                for i, tool in enumerate(report.tools):
                    first = i == 0
                    rows.append(
                        (
                            report.runtime.language if first else "",
                            report.runtime.name if first else "",
                            tool.command,
                            tool.version or tool.line,
                            tool.path,
                        )
                    )
            widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]))]
            self.stdout.write(f"Runtimes for bots on this host (PATH={BOT_PATH}):\n")
            for row in rows:
                self.stdout.write(
                    "  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)).rstrip()
                )
            ok = sum(r.ok for r in reports)
            self.stdout.write(f"\n{ok} of {len(reports)} runtimes available.")
        missing = [t.command for r in reports for t in r.tools if not t.ok]
        if opts["check"] and missing:
            raise CommandError(f"missing or broken: {', '.join(missing)}")
