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
        "each tool's version as the bots' PATH finds it, or 'not installed', and what bots may "
        "use from the oldest version the arena promises. docs/runtimes.md says how to add one."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
        parser.add_argument(
            "--check",
            action="store_true",
            help="exit with a non-zero status if a tool is missing, gives no version or is "
            "older than the arena promises",
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
                    version = tool.version or tool.line
                    if tool in report.too_old:
                        version += f" (older than {report.runtime.minimum})"
                    rows.append(
                        (
                            report.runtime.language if first else "",
                            report.runtime.name if first else "",
                            tool.command,
                            version,
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
            self.stdout.write(
                "\nWhat bots may use, from the oldest version promised (docs/runtimes.md):"
            )
            notes = [
                (r.language, f"{r.minimum} or later" if r.minimum else "", r.features)
                for r in (report.runtime for report in reports)
            ]
            widths = [max(len(note[c]) for note in notes) for c in range(2)]
            for language, since, features in notes:
                self.stdout.write(
                    f"{language.ljust(widths[0])}  {since.ljust(widths[1])}  {features}".rstrip()
                )
        problems = [t.command for r in reports for t in r.tools if not t.ok]
        problems += [
            f"{t.command} {t.version} (older than {r.runtime.minimum})"
            for r in reports
            for t in r.too_old
        ]
        if opts["check"] and problems:
            raise CommandError(f"missing, broken or too old: {', '.join(problems)}")
